"""Where the process that holds an on-disk database answers.

An embedded on-disk database is open in one process at a time, and opening
it replays the store's whole log (about a second at 100,000 chunks, 12-16
s at a million: docs/SCALING.md). ``fastnotebook serve`` writes its address
beside the database it holds (``<database folder>.serve.json``) and removes
it when it stops; ``fastnotebook search`` asks that process instead of
opening the database itself. A file left by a process that is gone (killed)
names a process that no longer runs and is ignored.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from fastnotebook.app.database.location import local_path

__all__ = ["address_file", "announce", "holder_url", "withdraw"]


def address_file(database_url: str) -> Path | None:
    """The file beside an on-disk database that names its holder (None for
    other databases)."""
    path = local_path(database_url)
    return None if path is None else path.with_name(path.name + ".serve.json")


def announce(database_url: str, url: str) -> Path | None:
    """Name this process, answering at ``url``, as the holder of the
    database at ``database_url``; the file written (None: not an on-disk
    database)."""
    path = address_file(database_url)
    if path is None:
        return None
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps({"url": url, "pid": os.getpid()}), encoding="utf-8")
    partial.replace(path)  # whole or absent, never half written
    return path


def withdraw(path: Path | None) -> None:
    """Remove ``path`` if it still names this process."""
    if path is not None and _holder(path) == (_url(path), os.getpid()):
        path.unlink(missing_ok=True)


def holder_url(database_url: str) -> str | None:
    """The address of the running process that holds the database at
    ``database_url``, if any."""
    path = address_file(database_url)
    if path is None:
        return None
    url, pid = _holder(path)
    if url is None or pid is None or not _running(pid):
        return None
    return url


def _holder(path: Path) -> tuple[str | None, int | None]:
    try:
        named = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    if not isinstance(named, dict):
        return None, None
    url, pid = named.get("url"), named.get("pid")
    valid_pid = isinstance(pid, int) and not isinstance(pid, bool) and pid > 0
    return (url if isinstance(url, str) else None), (pid if valid_pid else None)


def _url(path: Path) -> str | None:
    return _holder(path)[0]


def _running(pid: int) -> bool:
    if sys.platform == "win32":
        # There ``os.kill`` ends the process whatever the signal: a holder
        # that is gone refuses the connection instead.
        return True
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True  # another user's process
    except (OSError, OverflowError):  # no such process, or no such number
        return False
    return True
