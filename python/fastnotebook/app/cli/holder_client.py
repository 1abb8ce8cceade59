"""``fastnotebook search`` through the process that holds the database.

When ``fastnotebook serve`` holds the on-disk database
(``fastnotebook.app.database.holder``), ``search`` sends it the query
(``POST /search``) and prints its answer: the database is not opened again,
which costs more than the search itself once the store is large, and would
fail while the server holds it. A holder that does not answer is left
alone: the search runs here.

The request is written on a socket: the server is this package's own, on
this machine, and ``http.client`` (with ``email`` and ``ssl``) would take
longer to import than the server takes to answer.
"""

from __future__ import annotations

import json
import socket

from fastnotebook.app.cli.errors import CliError
from fastnotebook.app.database.holder import holder_url

TYPE_CHECKING = False  # as typing's, without importing it

if TYPE_CHECKING:
    from typing import Any, TypeGuard

__all__ = ["ask_holder"]

# A search that must read every vector back first (a stale cache) takes
# minutes at a million rows.
_TIMEOUT_S = 900.0


# The holders (database, address) that gave no answer to this process.
_SILENT: set[tuple[str, str]] = set()


class _Unreadable(Exception):
    """Not an HTTP response this client reads: not the holder's answer."""


def ask_holder(database_url: str, body: dict[str, Any]) -> dict[str, Any] | None:
    """The answer to ``body`` (``search_answer``'s shape) of the process
    that holds the database at ``database_url``, or None when no running
    process holds it or it does not answer. ``CliError`` with its message
    when it refuses the search."""
    url = holder_url(database_url)
    if url is None or (database_url, url) in _SILENT:
        return None
    try:
        status, payload = _post(url, "/search", json.dumps(body).encode("utf-8"))
        answer = json.loads(payload)
    except (OSError, ValueError, RecursionError, _Unreadable):
        answer = None
    else:
        if status != 200:
            detail = answer.get("detail") if isinstance(answer, dict) else None
            if detail:
                raise CliError(f"the server holding the database ({url}): {detail}")
            answer = None  # not the API's answer: some other program
    if not _is_answer(answer):
        # Asked again in this process (the command line after the route),
        # it would only make the wait twice as long.
        _SILENT.add((database_url, url))
        return None
    return answer


def _is_answer(answer: object) -> TypeGuard[dict[str, Any]]:
    """``answer`` has the shape that ``search_answer`` gives."""
    return (
        isinstance(answer, dict)
        and isinstance(answer.get("hits"), list)
        and all(isinstance(hit, dict) for hit in answer["hits"])
        and isinstance(answer.get("paths"), dict)
        and "vault" in answer
    )


def _post(url: str, path: str, body: bytes) -> tuple[int, bytes]:
    """POST ``body`` (JSON) to ``url`` + ``path``: the status and the body
    of the response."""
    # ``serve`` names itself ``http://host:port``.
    netloc = url.removeprefix("http://")
    host, _, port = netloc.rpartition(":")
    if netloc == url or not host or not port.isdigit():
        raise _Unreadable(url)
    request = (
        f"POST {path} HTTP/1.1\r\nHost: {netloc}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode("ascii") + body
    with socket.create_connection((host.strip("[]"), int(port)), timeout=_TIMEOUT_S) as conn:
        conn.sendall(request)
        received = b""
        while part := conn.recv(1 << 16):
            received += part
            if _complete(received):  # a server that keeps the connection open
                break
    return _response(received)


def _complete(received: bytes) -> bool:
    """The head and as many bytes of body as its ``Content-Length`` says
    have arrived."""
    parts = _parts(received)
    if parts is None:
        return False
    length = parts[1].get(b"content-length", b"")
    return length.isdigit() and len(parts[2]) >= int(length)


def _response(raw: bytes) -> tuple[int, bytes]:
    """The status and body of a whole response; ``_Unreadable`` unless it
    is complete and plain (a ``Content-Length``, no chunked transfer)."""
    parts = _parts(raw)
    fields = [] if parts is None else parts[0].split(b" ", 2)
    if parts is None or len(fields) < 2 or not fields[0].startswith(b"HTTP/1."):
        raise _Unreadable("not an HTTP/1 response")
    _, headers, body = parts
    length = headers.get(b"content-length")
    if headers.get(b"transfer-encoding") or length is None or int(length) != len(body):
        raise _Unreadable("an incomplete or chunked response")
    return int(fields[1]), body


def _parts(raw: bytes) -> tuple[bytes, dict[bytes, bytes], bytes] | None:
    """The status line, the headers (names in lower case) and the body so
    far of a response; None before its head has ended."""
    head, blank, body = raw.partition(b"\r\n\r\n")
    if not blank:
        return None
    status_line, *lines = head.split(b"\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(b":")
        headers[name.strip().lower()] = value.strip()
    return status_line, headers, body
