"""Resuming a large record: its finished model batches, kept below the record.

A record of many chunks (a 20 MB file is thousands) takes many model calls,
and until its last chunk has a vector nothing of it is written: its chunks
replace the old ones in one transaction (``writer``), so that ``search``
only ever sees whole records. For such a record each finished batch is also
written, in a small transaction of its own, to ``embedding_staging``: one
row per batch (``embedding_staging:[record, first chunk]``) holding the
batch's vectors flattened, the record, and the staging key -- a digest of
what the vectors depend on: the text's hash, the model, the chunking and the
rebuild epoch. A run that is killed or interrupted keeps these rows; the next
one, for a record whose key is the same, loads them and sends only the
missing chunks to the model. Rows of another key (the text, model or
chunking changed since) are deleted when the record is loaded. The
transaction that writes the whole record deletes its staging rows
(``CLEAR``), so a record is staged or written, never both; deleting a record
deletes its staging rows (schema events).

Records with fewer chunks than a few model batches never use this: their
writes are those of a run without staging.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from fastnotebook._core import encode_vector_rows
from fastnotebook.app.database import Database, RecordID
from fastnotebook.app.database.encoded import Encoded, encode_value
from fastnotebook.app.pipeline.provider import Vector
from fastnotebook.app.pipeline.state import Settings

__all__ = ["CLEAR", "Restored", "load", "records", "save_batch", "staging_key"]

# The statement that the writer adds to the transaction of a group that holds
# staged records (parameter ``$staged``: their ids).
CLEAR = "DELETE embedding_staging WHERE record IN $staged RETURN NONE;"

_SAVE = """
INSERT INTO embedding_staging
    (SELECT id, embedding AS vectors, $record AS record, $key AS key, $start AS start,
        $width AS width FROM $rows)
    ON DUPLICATE KEY UPDATE vectors = $input.vectors, key = $input.key, width = $input.width
    RETURN NONE;
"""


def staging_key(content_hash: str, settings: Settings, epoch: int) -> str:
    """What a record's vectors depend on, as one short string."""
    parts = "\0".join([content_hash, settings.model, settings.chunking, str(epoch)])
    return hashlib.sha256(parts.encode("utf-8", "surrogatepass")).hexdigest()[:32]


async def records(db: Database) -> set[str]:
    """The records that have staging rows (an empty table costs nothing)."""
    rows = await db.query("SELECT record FROM embedding_staging GROUP BY record;")
    return {str(row["record"]) for row in rows or []}


async def save_batch(
    db: Database, record: RecordID, key: str, start: int, vectors: Sequence[Vector]
) -> None:
    """Keep the vectors of chunks ``start, start + 1, ...`` of ``record``."""
    matrix = np.asarray(vectors, dtype=np.float64)
    if matrix.ndim != 2 or not matrix.size:
        raise ValueError(f"{record}: no vectors, or vectors of different dimensions")
    row_id = RecordID("embedding_staging", [record, start])
    rows = Encoded(encode_vector_rows([encode_value(row_id)], matrix.reshape(1, -1)))
    await db.query_all(
        _SAVE,
        {"rows": rows, "record": record, "key": key, "start": start, "width": matrix.shape[1]},
    )


Restored = dict[int, list[float]]  # chunk index -> vector


async def load(db: Database, wanted: Sequence[tuple[RecordID, str, int]]) -> dict[str, Restored]:
    """The staged vectors of each ``(record, key, chunk count)`` in
    ``wanted``, by record; rows of another key, or that do not fit the
    record's chunks, are deleted."""
    if not wanted:
        return {}
    expect = {str(record): (key, count) for record, key, count in wanted}
    rows: list[dict[str, Any]] = list(
        await db.query(
            "SELECT id, record, key, start, width, vectors FROM embedding_staging "
            "WHERE record IN $ids;",
            {"ids": [record for record, _, _ in wanted]},
        )
        or []
    )
    restored: dict[str, Restored] = {}
    stale: list[Any] = []
    for row in rows:
        record = str(row["record"])
        key, count = expect[record]
        flat, width, start = row.get("vectors") or [], row.get("width"), row.get("start")
        if (
            row.get("key") != key
            or not isinstance(width, int)
            or not isinstance(start, int)
            or width <= 0
            or not flat
            or len(flat) % width
            or start < 0
            or start + len(flat) // width > count
        ):
            stale.append(row["id"])
            continue
        vectors = restored.setdefault(record, {})
        for n in range(len(flat) // width):
            vectors[start + n] = [float(v) for v in flat[n * width : (n + 1) * width]]
    if stale:
        await db.query_all("DELETE $stale RETURN NONE;", {"stale": stale})
    return restored
