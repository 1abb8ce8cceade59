"""Full-text and vector search over sources, insights and notes.

Both return ranked hits as dicts, best first, one per item: a source (found
by its title, text or chunks), an insight, or a note. ``vector_search`` ranks
by the cosine similarity it computes itself: an approximate (HNSW) index
finds the candidates but does not return them strictly in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastnotebook.app.database.connection import get_database
from fastnotebook.app.database.record_id import parse_record_ids
from fastnotebook.app.database.schema import vector_dimension
from fastnotebook.errors import DatabaseOperationError, InvalidInputError

__all__ = ["text_search", "vector_search"]

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
) -> list[Hit]:
    """Semantic search: hits with ``id``, ``parent_id``, ``title``,
    ``similarity`` (cosine, at least ``minimum_score``) and ``matches`` (the
    matching texts; a source's hit gathers its matching chunks).

    A string is embedded with the configured model
    (``fastnotebook.embedding.generate_embedding``); a vector is used as is.
    """
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
    dimension = await vector_dimension(db)
    if dimension is not None and dimension != len(query):
        raise InvalidInputError(
            f"the query has dimension {len(query)} but the stored vectors have {dimension}"
        )
    # Chunks are grouped by source afterwards: fetch more of them.
    limits = {"source_embedding": 4 * results, "source_insight": results, "note": results}
    fields = {
        "source_embedding": "source AS id, source AS parent_id, source.title AS title",
        "source_insight": "id, source AS parent_id, "
        "insight_type + ' - ' + (source.title ?? '') AS title",
        "note": "id, id AS parent_id, title",
    }
    tables = [t for t in limits if (note if t == "note" else source)]
    statements = []
    for table in tables:
        select = (
            f"SELECT {fields[table]}, content, "
            f"vector::similarity::cosine(embedding, $query) AS score FROM {table}"
        )
        if dimension is None:
            # No index yet (or someone else's schema): scan the vectors of the right size.
            statements.append(
                f"{select} WHERE embedding != NONE AND array::len(embedding) = $dim "
                f"ORDER BY score DESC LIMIT {limits[table]}"
            )
        else:
            k = limits[table]
            statements.append(f"{select} WHERE embedding <|{k},{max(40, 2 * k)}|> $query")
    found = await db.query_all(";\n".join(statements) + ";", {"query": query, "dim": len(query)})
    rows: list[Hit] = parse_record_ids(
        [row for result in found for row in result or [] if row["score"] >= minimum_score]
    )
    return _rank(rows, results, "similarity")
