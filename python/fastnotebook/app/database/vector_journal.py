"""The changes the bulk writer made to the stored vectors, kept beside the
exact-search cache so that the first search after a run does not read every
vector back from the database.

Each transaction of the writer that changes vectors sets the change token
(``schema.VECTOR_CHANGES``) to a token of its own choosing and reads, in the
same transaction, the token it replaces and the number of vectors stored
before it. After the commit it appends one ``Delta`` to ``journal.bin`` in
the cache folder: that transition (``prev`` to ``next``), the rows it
removed and the rows it added (their ids, chosen by the writer, and their
vectors). A snapshot of the vectors as of ``prev`` plus the delta is exactly
the store as of ``next``.

``vector_cache`` replays the journal backwards from the database's current
token to the saved snapshot's token, or to a delta written on an empty
store. Any gap (another writer, a process killed between a commit and its
append, a torn last record) makes the replay fail, and the snapshot is read
from the database as before: the journal is never the source of truth.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from loguru import logger

__all__ = ["JOURNAL", "Delta", "append_delta", "chain", "clear_journal", "read_journal"]

JOURNAL = "journal.bin"

# A record: the header's length (4 bytes, little endian), the header (JSON),
# then the added vectors as little-endian float32, row by row.
_LENGTH = struct.Struct("<I")


@dataclass(frozen=True)
class Delta:
    """One committed transaction's change to a vector table."""

    prev: str
    next: str
    rows_before: int  # vectors stored (all tables) before the transaction
    table: str
    removed: list[str]
    added_ids: list[str]
    added: npt.NDArray[np.float32]  # (len(added_ids), dimension)

    @property
    def dimension(self) -> int:
        return int(self.added.shape[1])


def _encode(delta: Delta) -> bytes:
    matrix = np.ascontiguousarray(delta.added, dtype="<f4")
    header = json.dumps(
        {
            "prev": delta.prev,
            "next": delta.next,
            "rows_before": delta.rows_before,
            "table": delta.table,
            "removed": delta.removed,
            "added_ids": delta.added_ids,
            "shape": list(matrix.shape),
        },
        ensure_ascii=False,
    ).encode("utf-8", "surrogatepass")
    return _LENGTH.pack(len(header)) + header + matrix.tobytes()


def append_delta(folder: Path, delta: Delta) -> None:
    """Append ``delta`` to the journal in ``folder`` with one write (a
    failure is logged: the next search then reads the database)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / JOURNAL, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, _encode(delta))
        finally:
            os.close(fd)
    except OSError as e:
        logger.warning("Could not record the written vectors in {}: {}", folder, e)


def _records(data: bytes) -> Iterator[Delta]:
    at = 0
    while at + _LENGTH.size <= len(data):
        (size,) = _LENGTH.unpack_from(data, at)
        start = at + _LENGTH.size
        try:
            header = json.loads(data[start : start + size].decode("utf-8", "surrogatepass"))
            rows, dimension = (int(n) for n in header["shape"])
            body = rows * dimension * 4
            if start + size + body > len(data):
                return  # torn by a crash: what follows is unknown
            added = np.frombuffer(data, "<f4", rows * dimension, start + size)
            yield Delta(
                prev=str(header["prev"]),
                next=str(header["next"]),
                rows_before=int(header["rows_before"]),
                table=str(header["table"]),
                removed=[str(i) for i in header["removed"]],
                added_ids=[str(i) for i in header["added_ids"]],
                added=added.astype(np.float32).reshape(rows, dimension),
            )
        except (ValueError, KeyError, TypeError):
            return
        at = start + size + body


def read_journal(folder: Path) -> list[Delta]:
    """The complete records of the journal in ``folder``, in append order."""
    try:
        data = (folder / JOURNAL).read_bytes()
    except OSError:
        return []
    return list(_records(data))


def clear_journal(folder: Path) -> None:
    (folder / JOURNAL).unlink(missing_ok=True)


def chain(deltas: list[Delta], token: str, base: str | None) -> tuple[bool, list[Delta]] | None:
    """The deltas that lead to ``token``, oldest first, from ``base`` (the
    saved snapshot's token; None: no snapshot), or from a delta written on
    an empty store: ``(from_empty, deltas)``. None if there is a gap."""
    by_next = {d.next: d for d in deltas}
    found: list[Delta] = []
    current = token
    for _ in range(len(deltas) + 1):
        if current == base:
            return False, found[::-1]
        delta = by_next.get(current)
        if delta is None:
            return None
        found.append(delta)
        if delta.rows_before == 0:
            return True, found[::-1]
        current = delta.prev
    return None
