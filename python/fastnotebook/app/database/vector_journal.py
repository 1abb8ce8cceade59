"""The changes the bulk writer made to the stored vectors, kept beside the
exact-search cache so that the first search after a run does not read every
vector back from the database.

The store's vectors are as of the tokens of its change counters
(``schema.VECTOR_COUNTERS``: the one every other writer's events update,
and one per lane of the bulk writer, which keeps up to one transaction in
flight per lane). Each transaction of the writer that changes vectors sets
its lane's token to one of its own choosing and reads, in the same
transaction, the tokens it saw (``before``) and the number of vectors
stored then. After the commit it appends one ``Delta`` to ``journal.bin``
in the cache folder: its lane's transition (``prev`` to ``next``), the rows
it removed and the rows it added (their ids, chosen by the writer, and
their vectors). Transactions in flight together write rows of different
records, so their deltas apply in either order; one that starts after
another has committed is appended after it.

``vector_cache`` replays the journal forward, in append order, from the
saved snapshot's tokens (or from the tokens a delta saw on an empty store)
and uses the result only if it reaches every current token. Any gap
(another writer, a process killed between a commit and its append, a torn
last record) leaves a token unreached, and the snapshot is read from the
database as before: the journal is never the source of truth.
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

__all__ = [
    "JOURNAL",
    "Delta",
    "append_delta",
    "chain",
    "clear_journal",
    "read_journal",
    "split_tokens",
]

JOURNAL = "journal.bin"

# A record: the header's length (4 bytes, little endian), the header (JSON),
# then the added vectors as little-endian float32, row by row.
_LENGTH = struct.Struct("<I")


@dataclass(frozen=True)
class Delta:
    """One committed transaction's change to a vector table."""

    before: tuple[str, ...]  # the counters' tokens it saw (VECTOR_COUNTERS order)
    lane: int  # the counter it advanced: an index into ``before``
    next: str  # that counter's token after it
    rows_before: int  # vectors stored (all tables) as of ``before``
    table: str
    removed: list[str]
    added_ids: list[str]
    added: npt.NDArray[np.float32]  # (len(added_ids), dimension)

    @property
    def prev(self) -> str:
        return self.before[self.lane]

    @property
    def dimension(self) -> int:
        return int(self.added.shape[1])


def split_tokens(token: str) -> tuple[str, ...]:
    """The counters' tokens in the store's token (``schema.VECTOR_TOKEN``)."""
    return tuple(token.split("|"))


def _encode(delta: Delta) -> bytes:
    matrix = np.ascontiguousarray(delta.added, dtype="<f4")
    header = json.dumps(
        {
            "before": list(delta.before),
            "lane": delta.lane,
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
            if not 0 <= int(header["lane"]) < len(header["before"]):
                return
            body = rows * dimension * 4
            if start + size + body > len(data):
                return  # torn by a crash: what follows is unknown
            added = np.frombuffer(data, "<f4", rows * dimension, start + size)
            yield Delta(
                before=tuple(str(t) for t in header["before"]),
                lane=int(header["lane"]),
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
    """The deltas that lead to ``token`` (``schema.VECTOR_TOKEN``) from ``base`` (the
    saved snapshot's token; None: no snapshot), or from the tokens a delta
    saw on an empty store, in an order they can be applied in:
    ``(from_empty, deltas)``. None if no start leads there (a gap, or
    another writer)."""
    target = split_tokens(token)
    starts = [(False, split_tokens(base))] if base is not None else []
    starts += [(True, d.before) for d in deltas if d.rows_before == 0]
    for from_empty, start in starts:
        steps = _follow(deltas, start, target)
        if steps is not None:
            return from_empty, steps
    return None


def _follow(
    deltas: list[Delta], start: tuple[str, ...], target: tuple[str, ...]
) -> list[Delta] | None:
    if len(start) != len(target):
        return None  # a token of another format
    state = list(start)
    seen = [{t} for t in start]  # each counter's tokens so far
    steps: list[Delta] = []
    pending = [d for d in deltas if len(d.before) == len(target)]
    progress = True
    while progress:
        # Tokens are random: a delta applies once its lane is at the token
        # it was written from and every token it saw has been passed (a
        # transaction that began after another committed comes after it,
        # whatever the order of their appends), and only up to the target
        # (a transaction that committed after ``token`` was read may be
        # appended already).
        progress, waiting = False, []
        for delta in pending:
            lane = delta.lane
            if (
                state[lane] == delta.prev
                and state[lane] != target[lane]
                and all(t in known for t, known in zip(delta.before, seen, strict=True))
            ):
                state[lane] = delta.next
                seen[lane].add(delta.next)
                steps.append(delta)
                progress = True
            else:
                waiting.append(delta)
        pending = waiting
    return steps if tuple(state) == target else None
