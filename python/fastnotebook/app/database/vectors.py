"""Writing vectors: a source's chunks, and the embeddings of insights and notes.

Both functions write in one transaction with ``RETURN NONE`` (the SDK would
otherwise decode every written row back in Python), and record the dimension
of the vectors on the first write; the HNSW indexes are defined on request
(``ensure_vector_indexes``, ``embed --vector-index``), as they cost many
times the write (docs/SCALING.md).
Chunk rows are checked here and encoded by the core
(``fastnotebook._core.encode_chunk_rows``): the chunk table leaves typing
to its writers (see the schema's migration 3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fastnotebook._core import encode_chunk_rows
from fastnotebook.app.database.connection import get_database
from fastnotebook.app.database.encoded import Encoded, encode_value
from fastnotebook.app.database.record_id import RecordID, ensure_record_id
from fastnotebook.app.database.schema import VECTOR_TABLES, record_vector_dimension
from fastnotebook.errors import InvalidInputError, NotFoundError

__all__ = ["replace_source_chunks", "set_embeddings"]


def _vectors(embeddings: Sequence[Sequence[float]]) -> tuple[list[list[float]], int]:
    """The vectors as lists of floats (numpy rows too), and their one dimension."""
    try:
        vectors = [
            list(map(float, v.tolist() if hasattr(v, "tolist") else v))  # numpy rows too
            for v in embeddings
        ]
    except (TypeError, ValueError) as e:
        raise InvalidInputError(f"embeddings must be sequences of numbers: {e}") from e
    dimensions = {len(v) for v in vectors}
    if len(dimensions) > 1 or 0 in dimensions:
        raise InvalidInputError(f"embeddings of mixed or zero dimension: {sorted(dimensions)}")
    return vectors, dimensions.pop() if dimensions else 0


async def replace_source_chunks(
    source_id: str | RecordID,
    chunks: Sequence[str],
    embeddings: Sequence[Sequence[float]],
) -> int:
    """Make ``chunks`` (in reading order) with their ``embeddings`` the
    source's only chunks, atomically: readers see the old chunks or the new
    ones, never a mix. Returns the number of chunks written."""
    if len(chunks) != len(embeddings):
        raise InvalidInputError(f"{len(chunks)} chunks but {len(embeddings)} embeddings")
    source = ensure_record_id(source_id)
    if source.table_name != "source":
        raise InvalidInputError(f"{source} is not a source id")
    for i, text in enumerate(chunks):
        if not isinstance(text, str):
            raise InvalidInputError(f"chunk {i}'s content is {type(text).__name__}, not a string")
    vectors, dimension = _vectors(embeddings)
    db = await get_database()
    if not await db.query("SELECT VALUE id FROM $source;", {"source": source}):
        raise NotFoundError(f"source {source} not found")
    if dimension:
        await record_vector_dimension(dimension, db)
    try:
        data = encode_chunk_rows(
            [encode_value(source)],
            [len(chunks)],
            list(chunks),
            np.asarray(vectors, dtype=np.float64).reshape(len(vectors), dimension),
        )
    except ValueError as e:  # a non-finite number; a lone surrogate
        raise InvalidInputError(f"cannot store these chunks: {e}") from e
    await db.query_all(
        "BEGIN TRANSACTION;\n"
        "DELETE source_embedding WHERE source = $source RETURN NONE;\n"
        "INSERT INTO source_embedding $rows RETURN NONE;\n"
        "COMMIT TRANSACTION;",
        {"source": source, "rows": Encoded(data)},
    )
    return len(chunks)


async def set_embeddings(vectors: Mapping[str, Sequence[float]]) -> None:
    """Store the embeddings of existing insights and notes, by record id, in
    one transaction."""
    if not vectors:
        return
    ids = [ensure_record_id(i) for i in vectors]
    for rid in ids:
        if rid.table_name not in VECTOR_TABLES or rid.table_name == "source_embedding":
            raise InvalidInputError(f"{rid} is not an insight or a note")
    values, dimension = _vectors(list(vectors.values()))
    db = await get_database()
    await record_vector_dimension(dimension, db)
    rows: list[dict[str, Any]] = [
        {"id": rid, "embedding": v} for rid, v in zip(ids, values, strict=True)
    ]
    await db.query_all(
        "BEGIN TRANSACTION;\n"
        "FOR $row IN $rows { UPDATE $row.id SET embedding = $row.embedding RETURN NONE; };\n"
        "COMMIT TRANSACTION;",
        {"rows": rows},
    )
