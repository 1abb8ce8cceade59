"""The pipeline's database writes: each a single transaction with ``RETURN NONE``.

A group of finished records is written at once: for sources, their old
chunks are deleted and the new ones inserted; for insights and notes, the
pooled vector is set on the record; and for each record its state row (see
``fastnotebook.app.pipeline.state``) is written alongside. One transaction per
group means a record is always either entirely old (old chunks, old state)
or entirely new, whatever kills the process, and many records share one
round trip. Records deleted while the run was working are left alone. For a
record whose finished batches were kept while it was embedded
(``Finished.staged``, see ``fastnotebook.app.pipeline.staging``) the same
transaction deletes them.

A group is encoded first (``prepare``), so that a caller can encode the
next group while a transaction runs, and then written (``execute``). The
rows go to the engine as CBOR that the Rust core encodes from the vectors
(``fastnotebook.app.database.encoded``), and they are inserted as given:
the filtering ``SELECT ... FROM $rows`` that skips deleted records runs
only when a record of the group is gone. Where the time goes, and the
engine's floor these writes are measured against: docs/SCALING.md.

The chunk rows get their ids from the writer, and a transaction that
changes vectors sets its lane's change token (``LANES``: a caller keeps up
to one transaction in flight on each) to one of the writer's own and
returns the tokens it saw, the rows it deleted and the records still
there: for an on-disk database the writer then appends what it changed to
the exact-search cache's journal (``fastnotebook.app.database.vector_journal``),
so that the first search after a run reads no vector back.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fastnotebook._core import encode_chunk_rows, encode_vector_rows
from fastnotebook.app.database import Database, RecordID
from fastnotebook.app.database.encoded import Encoded, encode_value
from fastnotebook.app.database.schema import (
    COUNTED,
    TEXT_DIGEST,
    VECTOR_COUNTERS,
    VECTOR_LANES,
    VECTOR_ROWS,
    VECTOR_TOKEN,
    defines_only,
)
from fastnotebook.app.database.vector_cache import cache_folder
from fastnotebook.app.database.vector_journal import Delta, append_delta, split_tokens
from fastnotebook.app.pipeline.provider import Vector
from fastnotebook.app.pipeline.staging import CLEAR
from fastnotebook.app.pipeline.state import Kind, Settings, state_id
from fastnotebook.errors import DatabaseOperationError

__all__ = ["LANES", "Finished", "Prepared", "execute", "lanes_for", "prepare", "write_group"]


@dataclass
class Finished:
    """A record ready to be written: its chunks and their vectors (sources),
    or its one vector (insights and notes; None when its text is empty)."""

    id: RecordID
    kind: Kind
    content_hash: str
    size: int
    chunks: list[str]
    vectors: list[Vector]
    epoch: int
    path: str | None = None  # a source's file, for the failure report
    staged: bool = False  # it has rows in embedding_staging (see ``staging``)

    @property
    def rows(self) -> int:
        return max(1, len(self.chunks))


_WRITTEN = "fastnotebook_written"
CHUNKS = "source_embedding"

# The per-row events that keep the vector change counter (see the schema's
# VECTOR_CHANGES) stand aside for this transaction, which updates its lane's
# counter once (see the schema's VECTOR_LANES): added rows minus the rows it
# deletes. On a store without that lane the events count as for any writer.
_COUNT = """UPDATE $lane SET changes += 1, token = $next_token,
        rows += {added} - array::len($gone) RETURN NONE;"""

# The records of the group that still exist. A record is read whole, text
# included, so its small digest row (kept by events in the transaction that
# writes or deletes the record, see the schema's TEXT_DIGEST) is asked: all
# of them in one SELECT (half the engine's time of one lookup per record),
# and only when some are missing, each record that lacks one.
_LIVE = f"""LET $found = SELECT VALUE record FROM
    array::map($ids, |$id| type::thing("{TEXT_DIGEST}", [$id]));
LET $live = IF array::len($found) = array::len($ids) {{ $ids }} ELSE {{
    array::filter($ids,
        |$id| record::exists(type::thing("{TEXT_DIGEST}", [$id])) OR record::exists($id))
}};"""

# The state rows of the live records; filtered (an IN over the group for
# each row) only when a record is gone. (A bare SELECT as a block's last
# statement gives NONE in SurrealDB 2.0: hence the parentheses.)
_STATES = """INSERT INTO embedding_state
    (IF array::len($live) = array::len($ids) { $states }
     ELSE { (SELECT * FROM $states WHERE record IN $live) })
    ON DUPLICATE KEY UPDATE content_hash = $input.content_hash, model = $input.model,
    chunking = $input.chunking, epoch = $input.epoch, chunks = $input.chunks RETURN NONE;"""

# The last statement before COMMIT returns what the journal needs (the live
# records only when some are gone: decoding a record id costs the SDK more
# than the engine's whole share of it).
_SOURCES = f"""
BEGIN TRANSACTION;
LET ${COUNTED} = record::exists($lane);
LET $before = {VECTOR_TOKEN};
LET $rows_before = {VECTOR_ROWS};
{_LIVE}
LET $gone = SELECT VALUE id FROM source_embedding WHERE source IN $live;
IF array::len($gone) > 0 {{ DELETE $gone RETURN NONE; }};
IF array::len($live) = array::len($ids) {{
    INSERT INTO source_embedding $rows RETURN NONE;
    IF $count > 0 OR array::len($gone) > 0 {{ {_COUNT.format(added="$count")} }};
}} ELSE {{
    LET $kept = SELECT * FROM $rows WHERE source IN $live;
    INSERT INTO source_embedding $kept RETURN NONE;
    {_COUNT.format(added="array::len($kept)")}
}};
{_STATES}
{{ {_WRITTEN}: ${COUNTED}, before: $before, rows: $rows_before, gone: $gone,
    live: IF array::len($live) = array::len($ids) {{ true }} ELSE {{ $live }} }};
COMMIT TRANSACTION;
"""

_POOLED = f"""
BEGIN TRANSACTION;
{_LIVE}
FOR $row IN $rows {{ UPDATE $row.id SET embedding = $row.embedding RETURN NONE; }};
FOR $id IN $cleared {{ UPDATE $id SET embedding = NONE RETURN NONE; }};
{_STATES}
COMMIT TRANSACTION;
"""


def _state(item: Finished, settings: Settings) -> dict[str, Any]:
    return {
        "id": state_id(item.id),
        "record": item.id,
        "kind": item.kind,
        "content_hash": item.content_hash,
        "model": settings.model,
        "chunking": settings.chunking,
        "epoch": item.epoch,
        "chunks": len(item.chunks),
    }


def _matrix(vectors: list[Any]) -> np.ndarray[Any, Any]:
    """The vectors as one (rows x dimension) float64 array: the values as
    the model gave them (the encoder narrows each one to float32 when that
    is exact)."""
    if not vectors:
        return np.empty((0, 0), dtype=np.float64)
    matrix = np.asarray(vectors, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError("vectors of different dimensions")
    return matrix


@dataclass
class Prepared:
    """A group's transaction with its rows encoded (``prepare``), and for
    chunk rows what the journal needs: each row's record (``owners``), id
    and vector."""

    sql: str
    params: dict[str, Any]
    owners: list[RecordID] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    vectors: np.ndarray[Any, Any] | None = None


def _chunk_keys(rows: int) -> list[str]:
    # Random like the engine's own ids, and chosen here so that the writer
    # knows what it wrote.
    digits = os.urandom(10 * rows).hex()
    return [digits[20 * i : 20 * (i + 1)] for i in range(rows)]


def _chunk_id(key: str) -> str:
    """``str(RecordID(CHUNKS, key))`` for a key of ``_chunk_keys``: a key of
    hex digits is written as it is unless it is all digits (then escaped)."""
    return f"{CHUNKS}:{key}" if not key.isdigit() else str(RecordID(CHUNKS, key))


def _chunk_rows(group: Sequence[Finished]) -> Prepared:
    for item in group:
        if len(item.chunks) != len(item.vectors):
            raise ValueError(f"{item.id}: {len(item.chunks)} chunks, {len(item.vectors)} vectors")
    matrix = _matrix([v for item in group for v in item.vectors])
    keys = _chunk_keys(len(matrix))
    data = encode_chunk_rows(
        [encode_value(item.id) for item in group],
        [len(item.chunks) for item in group],
        [text for item in group for text in item.chunks],
        matrix,
        (CHUNKS, keys),
    )
    return Prepared(
        _SOURCES,
        {
            "ids": [item.id for item in group],
            "rows": Encoded(data),
            "count": len(keys),
            "next_token": uuid.uuid4(),
        },
        owners=[item.id for item in group for _ in item.chunks],
        ids=[_chunk_id(key) for key in keys],
        vectors=matrix,
    )


def prepare(group: Sequence[Finished], settings: Settings) -> Prepared:
    """The transaction that writes ``group`` (records of one kind), its rows
    encoded. ``DatabaseOperationError`` if they cannot be: vectors of mixed
    dimensions or with non-finite values, or text that is not Unicode."""
    try:
        write = _statement(group)
    except ValueError as e:  # UnicodeEncodeError included
        raise DatabaseOperationError(f"cannot encode the rows: {e}") from e
    write.params["states"] = [_state(item, settings) for item in group]
    staged = [item.id for item in group if item.staged]
    if staged:
        # The same transaction deletes the records' staged batches.
        write.sql = write.sql.replace("COMMIT TRANSACTION;", f"{CLEAR}\nCOMMIT TRANSACTION;")
        write.params["staged"] = staged
    return write


def _statement(group: Sequence[Finished]) -> Prepared:
    if group[0].kind == "source":
        return _chunk_rows(group)
    pooled = [item for item in group if item.vectors]
    rows = Encoded(
        encode_vector_rows(
            [encode_value(item.id) for item in pooled],
            _matrix([item.vectors[0] for item in pooled]),
        )
    )
    cleared = [item.id for item in group if not item.vectors]
    ids = [item.id for item in group]
    return Prepared(_POOLED, {"ids": ids, "rows": rows, "cleared": cleared})


def _journal(db: Database, write: Prepared, lane: int, results: list[Any]) -> None:
    """Append what a committed chunk transaction changed to the journal of
    ``db``'s exact-search cache (on-disk databases only)."""
    folder = cache_folder(db)
    written = next((r for r in reversed(results) if isinstance(r, dict) and _WRITTEN in r), None)
    if folder is None or written is None or write.vectors is None:
        return
    if written[_WRITTEN] is not True or written["before"] is None:
        return  # no lane or no change counter (someone else's schema): events counted
    # `live`: true when every record of the group was written, else those that were.
    complete = written["live"] is True
    live = set() if complete else {str(i) for i in written["live"]}
    gone = [str(i) for i in written["gone"]]
    if complete and not write.ids and not gone:
        return  # the transaction left the token as it was
    keep = [complete or str(owner) in live for owner in write.owners]
    vectors = np.asarray(write.vectors, dtype=np.float32)
    if vectors.ndim != 2 or not len(vectors):
        vectors = np.zeros((0, 0), dtype=np.float32)
    append_delta(
        folder,
        Delta(
            before=split_tokens(str(written["before"])),
            lane=VECTOR_COUNTERS.index(VECTOR_LANES[lane]),
            next=str(write.params["next_token"]),
            rows_before=int(written["rows"] or 0),
            table=CHUNKS,
            removed=gone,
            added_ids=[i for i, k in zip(write.ids, keep, strict=True) if k],
            added=vectors[np.asarray(keep, dtype=bool)] if len(vectors) else vectors,
        ),
    )


# The bulk writer's lanes (``schema.VECTOR_LANES``): one transaction in
# flight on each at most.
LANES = tuple(RecordID(*lane.split(":")) for lane in VECTOR_LANES)


async def lanes_for(db: Database) -> int:
    """How many transactions of chunk rows may be in flight at once on
    ``db``: one per lane (``LANES``) on a store with fastnotebook's lanes
    and nothing on ``source_embedding`` but its ``source`` index and its
    change-counting event, which write keys of their own rows only;
    otherwise one (Open Notebook's schema, full-text or HNSW indexes)."""
    safe = await defines_only(
        db,
        CHUNKS,
        indexes={"source_embedding_by_source"},
        events={"source_embedding_vectors_changed"},
        fields=False,
    )
    if not safe:
        return 1
    lanes = await db.query(
        f"RETURN array::all([{', '.join(f'record::exists({lane})' for lane in VECTOR_LANES)}]);"
    )
    return len(LANES) if lanes is True else 1


async def execute(db: Database, write: Prepared, lane: int = 0) -> None:
    """Run a prepared transaction on ``LANES[lane]``, which no other
    transaction may use meanwhile. ``DatabaseOperationError`` if it fails."""
    results = await db.query_all(write.sql, {**write.params, "lane": LANES[lane]})
    _journal(db, write, lane, results)


async def write_group(db: Database, group: Sequence[Finished], settings: Settings) -> None:
    """Write ``group`` in one transaction, on the first lane.
    ``DatabaseOperationError`` if it fails, or if its rows cannot be encoded
    (the caller then writes the records one by one, so that a bad one fails
    alone)."""
    await execute(db, prepare(group, settings))
