"""Full-text and vector search over sources, insights and notes.

Both return ranked hits as dicts, best first, one per item: a source (found
by its title, text or chunks), an insight, or a note.

``vector_search`` has two ways to find the nearest vectors:

- ``exact``: the core's cosine top-k (``fastnotebook._core.cosine_top_k``)
  over a snapshot of the stored vectors kept in memory and beside an on-disk
  database (``fastnotebook.app.database.vector_cache``); its results equal a
  brute-force cosine search bit for bit. A snapshot is used only while the
  database's change token is the one it was read with, and the hits are read
  back from the database, so a stale snapshot is never used: it is read
  again (a full read of the vectors).
- ``ann``: the database's HNSW index (approximate; the hits are scored by the
  database's own cosine), or, with no index, the database's full scan.

``auto`` (the default) uses the snapshot when it is current and the store
holds at most ``EXACT_MAX_ROWS`` vectors; reads a stale one again when the
store holds at most ``REBUILD_MAX_ROWS``; and otherwise asks the index. Both
figures come from ``benches/bench_search.py`` (docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from loguru import logger

from fastnotebook.app.database.connection import Database, get_database
from fastnotebook.app.database.record_id import ensure_record_id, parse_record_ids
from fastnotebook.app.database.schema import hnsw_nearest
from fastnotebook.app.database.vector_cache import (
    StoreChanges,
    VectorSnapshot,
    read_snapshot,
    store_changes,
    vector_snapshot,
)
from fastnotebook.errors import DatabaseOperationError, InvalidInputError

__all__ = ["EXACT_MAX_ROWS", "REBUILD_MAX_ROWS", "SEARCH_MODES", "text_search", "vector_search"]

SearchMode = Literal["auto", "exact", "ann"]
SEARCH_MODES: tuple[SearchMode, ...] = ("auto", "exact", "ann")

# From benches/bench_search.py (docs/performance.md): the core's exact search
# (with the rows' sketches) over 384-dimension vectors takes about 4 ms at
# 10,000 rows, 28 ms at 100,000 and 0.3 s at 1,000,000 (p50, 2 cores at a
# load average of 7), where HNSW answers in about 47 ms at 10,000; above this
# many vectors ``auto`` asks the HNSW index, whose cost grows with log(rows).
EXACT_MAX_ROWS = 100_000
# Reading the vectors out of the engine costs about 1-3 ms a vector on that
# machine: up to this many, ``auto`` reads a stale snapshot again rather
# than answer from the approximate index.
REBUILD_MAX_ROWS = 2_000

Hit = dict[str, Any]

# (flag, statement): each statement yields id, parent_id, title, content, score.
_TEXT_QUERIES = (
    (
        "source",
        "SELECT id, id AS parent_id, title, search::highlight('`', '`', 0) AS content, "
        "search::score(0) AS score FROM source WHERE title @0@ $keyword",
    ),
    (
        "source",
        "SELECT id, id AS parent_id, title, search::highlight('`', '`', 0) AS content, "
        "search::score(0) AS score FROM source WHERE full_text @0@ $keyword",
    ),
    (
        "source",
        "SELECT source AS id, source AS parent_id, source.title AS title, "
        "search::highlight('`', '`', 0) AS content, search::score(0) AS score "
        "FROM source_embedding WHERE content @0@ $keyword",
    ),
    (
        "source",
        "SELECT id, source AS parent_id, insight_type + ' - ' + (source.title ?? '') AS title, "
        "search::highlight('`', '`', 0) AS content, search::score(0) AS score "
        "FROM source_insight WHERE content @0@ $keyword",
    ),
    (
        "note",
        "SELECT id, id AS parent_id, title, search::highlight('`', '`', 0) AS content, "
        "search::score(0) AS score FROM note WHERE title @0@ $keyword",
    ),
    (
        "note",
        "SELECT id, id AS parent_id, title, search::highlight('`', '`', 0) AS content, "
        "search::score(0) AS score FROM note WHERE content @0@ $keyword",
    ),
)


def _rank(rows: list[Hit], results: int, score: str) -> list[Hit]:
    """One hit per id with its best ``score`` (the rows' "score", renamed) and
    every matching text, best first (ties by id: the order is deterministic)."""
    best: dict[str, Hit] = {}
    for row in rows:
        hit = best.get(row["id"])
        if hit is None:
            best[row["id"]] = hit = {
                "id": row["id"],
                "parent_id": row["parent_id"],
                "title": row.get("title"),
                score: row["score"],
                "matches": [],
            }
        hit[score] = max(hit[score], row["score"])
        if row.get("content") is not None and row["content"] not in hit["matches"]:
            hit["matches"].append(row["content"])
    return sorted(best.values(), key=lambda h: (-h[score], h["id"]))[:results]


def _check(results: int, source: bool, note: bool) -> None:
    if isinstance(results, bool) or not isinstance(results, int) or results < 1:
        raise InvalidInputError(f"results must be a positive integer, not {results!r}")
    if not (source or note):
        raise InvalidInputError("search at least sources or notes")


async def text_search(
    keyword: str, results: int, source: bool = True, note: bool = True
) -> list[Hit]:
    """BM25 keyword search: hits with ``id``, ``parent_id``, ``title``,
    ``relevance`` and ``matches`` (highlighted with backquotes)."""
    if not keyword or not keyword.strip():
        raise InvalidInputError("Search keyword cannot be empty")
    _check(results, source, note)
    wanted = {"source": source, "note": note}
    statements = [sql for flag, sql in _TEXT_QUERIES if wanted[flag]]
    db = await get_database()
    try:
        found = await db.query_all(";\n".join(statements) + ";", {"keyword": keyword})
    except DatabaseOperationError as e:
        if "index" not in str(e).lower():
            raise
        raise DatabaseOperationError(
            f"{e} (text search needs the full-text indexes: open the database with "
            "DatabaseSettings.full_text_search on, or run schema.ensure_search_indexes)"
        ) from e
    rows: list[Hit] = parse_record_ids([row for result in found for row in result or []])
    return _rank(rows, results, "relevance")


async def vector_search(
    keyword_or_embedding: str | Sequence[float],
    results: int,
    source: bool = True,
    note: bool = True,
    minimum_score: float = 0.2,
    mode: SearchMode = "auto",
) -> list[Hit]:
    """Semantic search: hits with ``id``, ``parent_id``, ``title``,
    ``similarity`` (cosine, at least ``minimum_score``) and ``matches`` (the
    matching texts; a source's hit gathers its matching chunks).

    A string is embedded with the configured model
    (``fastnotebook.embedding.generate_embedding``); a vector is used as is.
    ``mode`` is ``"exact"`` (every stored vector compared, in the core),
    ``"ann"`` (the database's approximate HNSW index) or ``"auto"`` (exact
    while that is faster; see the module's documentation).
    """
    if mode not in SEARCH_MODES:
        raise InvalidInputError(f"mode must be one of {', '.join(SEARCH_MODES)}, not {mode!r}")
    if isinstance(keyword_or_embedding, str):
        if not keyword_or_embedding.strip():
            raise InvalidInputError("Search keyword cannot be empty")
        from fastnotebook.embedding import generate_embedding

        query = await generate_embedding(keyword_or_embedding)
    else:
        query = [float(x) for x in keyword_or_embedding]
        if not query:
            raise InvalidInputError("the query embedding is empty")
    _check(results, source, note)
    db = await get_database()
    changes = await store_changes(db)
    dimension = changes.dimension
    if dimension is not None and dimension != len(query):
        raise InvalidInputError(
            f"the query has dimension {len(query)} but the stored vectors have {dimension}"
        )
    # Chunks are grouped by source afterwards: fetch more of them.
    limits = {"source_embedding": 4 * results, "source_insight": results, "note": results}
    tables = [t for t in limits if (note if t == "note" else source)]
    snapshot = await _exact_snapshot(db, mode, changes, len(query))
    if snapshot is not None:
        rows = await _exact_rows(db, snapshot, query, {t: limits[t] for t in tables})
        if rows is not None:
            return _rank([r for r in rows if r["score"] >= minimum_score], results, "similarity")
    return await _index_search(db, query, changes.indexed, tables, limits, minimum_score, results)


async def _exact_snapshot(
    db: Database, mode: SearchMode, changes: StoreChanges, dimension: int
) -> VectorSnapshot | None:
    """The snapshot to search exactly, or None to ask the database."""
    if mode == "ann":
        return None
    if mode == "exact":
        return await vector_snapshot(db, dimension, changes)
    # auto. Without a change token (a schema managed elsewhere) nothing tells
    # a stale snapshot: the database answers.
    if changes.token is None:
        return None
    current = await vector_snapshot(db, dimension, changes, read=False)
    rows = current.rows if current is not None else changes.rows
    if rows > EXACT_MAX_ROWS:
        return None
    if current is not None:
        return current
    if rows <= REBUILD_MAX_ROWS or not changes.indexed:
        # Without an index the database would scan every vector anyway.
        return await vector_snapshot(db, dimension, changes)
    return None


_HIT_FIELDS = {
    "source_embedding": "id AS row, source AS id, source AS parent_id, source.title AS title",
    "source_insight": "id AS row, id, source AS parent_id, "
    "insight_type + ' - ' + (source.title ?? '') AS title",
    "note": "id AS row, id, id AS parent_id, title",
}


async def _exact_rows(
    db: Database, snapshot: VectorSnapshot, query: list[float], limits: dict[str, int]
) -> list[Hit] | None:
    """The nearest rows of each table by the core's exact search, read back
    from the database with their score. A hit the database no longer has
    means the snapshot is stale: it is read again once; None if it is still
    not current (the caller then asks the database)."""
    vector = np.asarray(query, dtype=np.float32)
    for attempt in range(2):
        found = {t: snapshot.tables[t].top_k(vector, k) for t, k in limits.items()}
        wanted = [t for t in limits if found[t]]
        if not wanted:
            return []
        params: dict[str, Any] = {
            f"ids_{t}": [ensure_record_id(rid) for rid, _ in found[t]] for t in wanted
        }
        statements = ";\n".join(f"SELECT {_HIT_FIELDS[t]}, content FROM $ids_{t}" for t in wanted)
        answers = await db.query_all(statements + ";", params)
        rows: list[Hit] = []
        complete = True
        for table, answer in zip(wanted, answers, strict=True):
            by_row = {str(r["row"]): r for r in answer or []}
            for rid, score in found[table]:
                row = by_row.get(rid)
                if row is None:
                    complete = False
                    break
                rows.append(
                    {
                        **parse_record_ids({k: v for k, v in row.items() if k != "row"}),
                        "score": score,
                    }
                )
        if complete:
            return rows
        if attempt == 0:
            logger.info("The vector snapshot is stale (a hit was deleted): reading it again")
            snapshot = await read_snapshot(db, snapshot.dimension)
    return None


async def _index_search(
    db: Database,
    query: list[float],
    indexed: bool,
    tables: list[str],
    limits: dict[str, int],
    minimum_score: float,
    results: int,
) -> list[Hit]:
    """The database's search: its HNSW index, or its full scan without one."""
    fields = {
        "source_embedding": "source AS id, source AS parent_id, source.title AS title",
        "source_insight": "id, source AS parent_id, "
        "insight_type + ' - ' + (source.title ?? '') AS title",
        "note": "id, id AS parent_id, title",
    }
    statements = []
    for table in tables:
        select = (
            f"SELECT {fields[table]}, content, "
            f"vector::similarity::cosine(embedding, $query) AS score FROM {table}"
        )
        if not indexed:
            # No index (or someone else's schema): scan the vectors of the right size.
            statements.append(
                f"{select} WHERE embedding != NONE AND array::len(embedding) = $dim "
                f"ORDER BY score DESC LIMIT {limits[table]}"
            )
        else:
            k = limits[table]
            statements.append(f"{select} WHERE {hnsw_nearest(k)}")
    found = await db.query_all(";\n".join(statements) + ";", {"query": query, "dim": len(query)})
    rows: list[Hit] = parse_record_ids(
        [row for result in found for row in result or [] if row["score"] >= minimum_score]
    )
    return _rank(rows, results, "similarity")
