"""The vector indexes of an embedding run, set up the same way by the local
pipeline, the Ray engine and a note vault's import: ``ensure_vector_dimension``
before the first vectors of a model are written."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from loguru import logger

from fastnotebook.app.database import (
    Database,
    drop_vector_indexes,
    ensure_vector_indexes,
    record_vector_dimension,
    vector_dimension,
)
from fastnotebook.app.database.vector_cache import vector_snapshot
from fastnotebook.errors import ConfigurationError

__all__ = ["RunVectors", "ensure_vector_dimension", "mixed_dimensions", "other_dimensions"]

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
    db: Database, dimension: int, refuse: Refusal | None = None, index: bool = True
) -> bool:
    """Prepare the store for vectors of ``dimension`` before they are
    written: record the dimension and, with ``index``, define the vector
    indexes (indexes already defined for it stay, and stay current). If the
    stored vectors have another dimension (the model changed), ``refuse``
    gives the error to raise; without it the indexes go, to be defined again
    once no vector of another dimension is left.

    Returns whether the dimension is recorded; False: it waits for the last
    vector of another dimension to be replaced (call again, or
    ``ensure_vector_indexes``, when the run is over)."""
    existing = await vector_dimension(db)
    if existing == dimension:
        if index:
            await ensure_vector_indexes(dimension, db)
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
    if index:
        await ensure_vector_indexes(dimension, db)
    else:
        await record_vector_dimension(dimension, db)
    return True


class RunVectors:
    """One embed run's side of the vector dimension and indexes, the same
    for the local pipeline and the Ray engine: ``before_write`` with each
    group's dimension, ``finish`` once every group is written.

    The run records the dimension, and at its end brings the exact-search
    cache up to date from the writer's journal (no vector is read back: see
    ``vector_journal``), so that the first search is as fast as the next.
    With ``index`` it defines the HNSW
    indexes at its end, over every stored vector (also when it wrote none,
    so that an up-to-date store gains them). Built after the load, the index
    costs what it costs live (about 10 ms a vector on the embedded engine)
    and finds more of the exact neighbours (docs/SCALING.md); meanwhile
    search is exact, or the database's full scan. Indexes that exist stay,
    and every write keeps them current.
    """

    def __init__(self, db: Database, refuse: Refusal | None, index: bool) -> None:
        self.db, self.refuse, self.index = db, refuse, index
        self.dimension: int | None = None
        self.deferred = False
        # Writes in flight together wait for the first to prepare the store.
        self.preparing = asyncio.Lock()

    async def before_write(self, dimension: int) -> None:
        async with self.preparing:
            if self.dimension == dimension:
                return
            self.deferred = not await ensure_vector_dimension(
                self.db, dimension, self.refuse, index=False
            )
            self.dimension = dimension

    async def finish(self) -> None:
        """Record the dimension if that had to wait for the last vector of
        the previous model; then define the indexes if asked."""
        dimension = self.dimension
        if dimension is not None and self.deferred:
            if await other_dimensions(self.db, dimension):
                logger.warning(
                    "Vector dimension not recorded yet: some records still hold vectors of "
                    "the previous model; run embed again"
                )
                return
            await ensure_vector_dimension(self.db, dimension, self.refuse, index=False)
            self.deferred = False
        if dimension is not None:
            await vector_snapshot(self.db, dimension, read=False)
        if self.index:
            dimension = dimension or await vector_dimension(self.db)
            if dimension is not None:
                await ensure_vector_indexes(dimension, self.db)
