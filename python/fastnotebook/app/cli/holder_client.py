"""``fastnotebook search`` through the process that holds the database.

When ``fastnotebook serve`` holds the on-disk database
(``fastnotebook.app.database.holder``), ``search`` sends it the query
(``POST /search``) and prints its answer: the database is not opened again,
which costs more than the search itself once the store is large, and would
fail while the server holds it. A holder that does not answer is left
alone: the search runs here.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from fastnotebook.app.cli.errors import CliError
from fastnotebook.app.database.holder import holder_url
from fastnotebook.app.database.settings import DatabaseSettings

__all__ = ["ask_holder"]

# A search that must read every vector back first (a stale cache) takes
# minutes at a million rows.
_TIMEOUT_S = 900.0
# The holder is on this machine: no proxy between.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def ask_holder(settings: DatabaseSettings, body: dict[str, Any]) -> dict[str, Any] | None:
    """The holder's answer to ``body`` (``search_answer``'s shape), or None
    when no running process holds the database or it does not answer.
    ``CliError`` with its message when it refuses the search."""
    url = holder_url(settings)
    if url is None:
        return None
    request = urllib.request.Request(
        f"{url}/search",
        data=json.dumps(body).encode("utf-8"),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with _OPENER.open(request, timeout=_TIMEOUT_S) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as e:
        detail = _detail(e)
        if detail is None:  # not the API's answer: some other program
            return None
        raise CliError(f"the server holding the database ({url}): {detail}") from None
    except (urllib.error.URLError, OSError, ValueError):
        return None
    return answer if isinstance(answer, dict) and "hits" in answer else None


def _detail(error: urllib.error.HTTPError) -> str | None:
    """The API's message in an error response (``{"detail": ...}``)."""
    try:
        detail = json.loads(error.read()).get("detail")
    except (OSError, ValueError, AttributeError):
        return None
    return str(detail) if detail else None
