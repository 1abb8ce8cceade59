"""The vector indexes of an embedding run, set up the same way by the local
pipeline, the Ray engine and a note vault's import: ``ensure_vector_dimension``
before the first vectors of a model are written."""

from __future__ import annotations

from collections.abc import Callable

from loguru import logger

from fastnotebook.app.database import (
    Database,
    drop_vector_indexes,
    ensure_vector_indexes,
    vector_dimension,
)
from fastnotebook.errors import ConfigurationError

__all__ = ["ensure_vector_dimension", "mixed_dimensions", "other_dimensions"]

#: Turns (the stored dimension, the model's) into the error to raise.
Refusal = Callable[[int, int], Exception]


def mixed_dimensions(existing: int, dimension: int) -> Exception:
    """The refusal of a run that re-embeds only some kinds of records: the
    others would keep vectors of the previous dimension."""
    return ConfigurationError(
        f"the stored vectors have dimension {existing} and the model gives "
        f"{dimension}: re-embed sources, insights and notes together"
    )


async def other_dimensions(db: Database, dimension: int) -> bool:
    """Whether any stored vector has another dimension than ``dimension``."""
    found = await db.query_all(
        "SELECT VALUE id FROM source_embedding WHERE array::len(embedding) != $d LIMIT 1;"
        "SELECT VALUE id FROM source_insight WHERE embedding != NONE "
        "AND array::len(embedding) != $d LIMIT 1;"
        "SELECT VALUE id FROM note WHERE embedding != NONE "
        "AND array::len(embedding) != $d LIMIT 1;",
        {"d": dimension},
    )
    return any(found)


async def ensure_vector_dimension(
    db: Database, dimension: int, refuse: Refusal | None = None
) -> bool:
    """Vector indexes for ``dimension`` before vectors of that dimension are
    written. If the stored indexes have another dimension (the model changed),
    ``refuse`` gives the error to raise; without it the indexes go, to be
    defined again once no vector of another dimension is left.

    Returns whether the indexes of ``dimension`` are defined; False: they wait
    for the last vector of another dimension to be replaced (call again, or
    ``ensure_vector_indexes``, when the run is over)."""
    existing = await vector_dimension(db)
    if existing == dimension:
        return True
    if existing is not None:
        if refuse is not None:
            raise refuse(existing, dimension)
        logger.warning(
            "The model's vectors have dimension {} (stored: {}): vector indexes are "
            "rebuilt when every record is re-embedded",
            dimension,
            existing,
        )
        await drop_vector_indexes(db)
    if await other_dimensions(db, dimension):
        return False
    await ensure_vector_indexes(dimension, db)
    return True
