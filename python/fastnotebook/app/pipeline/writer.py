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

The rows go to the engine as CBOR that the Rust core encodes from the
vectors (``fastnotebook.app.database.encoded``), and they are inserted as
given: the filtering ``SELECT ... FROM $rows`` that skips deleted records
runs only when a record of the group is gone. Where the time goes, and the
engine's floor these writes are measured against: docs/SCALING.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fastnotebook._core import encode_chunk_rows, encode_vector_rows
from fastnotebook.app.database import Database, RecordID
from fastnotebook.app.database.encoded import Encoded, encode_value
from fastnotebook.app.database.schema import COUNTED, VECTOR_CHANGES
from fastnotebook.app.pipeline.staging import CLEAR
from fastnotebook.app.pipeline.state import Kind, Settings, state_id
from fastnotebook.errors import DatabaseOperationError

__all__ = ["Finished", "write_group"]


@dataclass
class Finished:
    """A record ready to be written: its chunks and their vectors (sources),
    or its one vector (insights and notes; None when its text is empty)."""

    id: RecordID
    kind: Kind
    content_hash: str
    size: int
    chunks: list[str]
    vectors: list[list[float]]
    epoch: int
    path: str | None = None  # a source's file, for the failure report
    staged: bool = False  # it has rows in embedding_staging (see ``staging``)

    @property
    def rows(self) -> int:
        return max(1, len(self.chunks))


# The per-row events that keep the vector change counter (see the schema's
# VECTOR_CHANGES) stand aside for this transaction, which updates the
# counter once: added rows minus the rows it deletes.
_COUNT = f"""UPDATE {VECTOR_CHANGES} SET changes += 1, token = rand::uuid(),
        rows += {{added}} - $gone RETURN NONE;"""

_SOURCES = f"""
BEGIN TRANSACTION;
LET ${COUNTED} = true;
LET $live = array::filter($ids, |$id| record::exists($id));
LET $gone = (SELECT count() FROM source_embedding WHERE source IN $live GROUP ALL)[0].count ?? 0;
DELETE source_embedding WHERE source IN $live RETURN NONE;
IF array::len($live) = array::len($ids) {{
    INSERT INTO source_embedding $rows RETURN NONE;
    IF $count > 0 OR $gone > 0 {{ {_COUNT.format(added="$count")} }};
}} ELSE {{
    LET $kept = SELECT * FROM $rows WHERE source IN $live;
    INSERT INTO source_embedding $kept RETURN NONE;
    {_COUNT.format(added="array::len($kept)")}
}};
INSERT INTO embedding_state (SELECT * FROM $states WHERE record IN $live)
    ON DUPLICATE KEY UPDATE content_hash = $input.content_hash, model = $input.model,
    chunking = $input.chunking, epoch = $input.epoch, chunks = $input.chunks RETURN NONE;
COMMIT TRANSACTION;
"""

_POOLED = """
BEGIN TRANSACTION;
LET $live = array::filter($ids, |$id| record::exists($id));
FOR $row IN $rows { UPDATE $row.id SET embedding = $row.embedding RETURN NONE; };
FOR $id IN $cleared { UPDATE $id SET embedding = NONE RETURN NONE; };
INSERT INTO embedding_state (SELECT * FROM $states WHERE record IN $live)
    ON DUPLICATE KEY UPDATE content_hash = $input.content_hash, model = $input.model,
    chunking = $input.chunking, epoch = $input.epoch, chunks = $input.chunks RETURN NONE;
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


def _chunk_rows(group: Sequence[Finished]) -> Encoded:
    for item in group:
        if len(item.chunks) != len(item.vectors):
            raise ValueError(f"{item.id}: {len(item.chunks)} chunks, {len(item.vectors)} vectors")
    data = encode_chunk_rows(
        [encode_value(item.id) for item in group],
        [len(item.chunks) for item in group],
        [text for item in group for text in item.chunks],
        _matrix([v for item in group for v in item.vectors]),
    )
    return Encoded(data)


def statement(group: Sequence[Finished], settings: Settings) -> tuple[str, dict[str, Any]]:
    """The transaction that writes ``group`` (records of one kind) and its
    parameters. ``ValueError`` (or ``UnicodeEncodeError``) if the rows cannot
    be encoded: vectors of mixed dimensions or with non-finite values."""
    sql, params = _statement(group, settings)
    staged = [item.id for item in group if item.staged]
    if staged:
        # The same transaction deletes the records' staged batches.
        sql = sql.replace("COMMIT TRANSACTION;", f"{CLEAR}\nCOMMIT TRANSACTION;")
        params["staged"] = staged
    return sql, params


def _statement(group: Sequence[Finished], settings: Settings) -> tuple[str, dict[str, Any]]:
    kind = group[0].kind
    ids = [item.id for item in group]
    states = [_state(item, settings) for item in group]
    if kind == "source":
        rows = _chunk_rows(group)
        count = sum(len(item.chunks) for item in group)
        return _SOURCES, {"ids": ids, "rows": rows, "count": count, "states": states}
    pooled = [item for item in group if item.vectors]
    rows = Encoded(
        encode_vector_rows(
            [encode_value(item.id) for item in pooled],
            _matrix([item.vectors[0] for item in pooled]),
        )
    )
    cleared = [item.id for item in group if not item.vectors]
    return _POOLED, {"ids": ids, "rows": rows, "cleared": cleared, "states": states}


async def write_group(db: Database, group: Sequence[Finished], settings: Settings) -> None:
    """Write ``group`` in one transaction. ``DatabaseOperationError`` if it
    fails, or if its rows cannot be encoded (the caller then writes the
    records one by one, so that a bad one fails alone)."""
    try:
        sql, params = statement(group, settings)
    except ValueError as e:  # UnicodeEncodeError included
        raise DatabaseOperationError(f"cannot encode the rows: {e}") from e
    await db.query_all(sql, params)
