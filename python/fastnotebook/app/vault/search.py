"""Vector search over the chunks of a stored vault.

A hit is one chunk: its note (id, title, path), section path, text, score
(cosine similarity) and neighbours (the previous and next chunk ids, from
the ``prev``/``next`` edges). With ``expand_links`` each hit also lists the
notes one hop away on the graph: the notes its chunk links to and the notes
that link to its note.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from fastnotebook.app.database import Database, get_database, hnsw_nearest
from fastnotebook.app.vault.store import CHUNK, EDGE, NOTE, chunk_rid, note_rid
from fastnotebook.errors import InvalidInputError

__all__ = ["LinkedNote", "NoteHit", "search_notes"]


@dataclass(frozen=True)
class LinkedNote:
    note_id: str
    title: str
    path: str
    direction: str  # "out": the hit links to it; "in": it links to the hit's note


@dataclass
class NoteHit:
    chunk_id: str
    note_id: str
    title: str
    path: str
    section_title: str | None
    section_path: list[str]
    score: float
    text: str
    neighbours: dict[str, str | None]
    linked: list[LinkedNote] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


async def _query_vector(query: str | list[float]) -> list[float]:
    if isinstance(query, str):
        if not query.strip():
            raise InvalidInputError("the query is empty: give the words to search for")
        from fastnotebook.embedding import generate_embedding

        return [float(x) for x in await generate_embedding(query)]
    if not query:
        raise InvalidInputError("the query embedding is empty")
    return [float(x) for x in query]


async def _has_index(db: Database) -> bool:
    info = await db.query(f"INFO FOR TABLE {CHUNK};")
    return f"{CHUNK}_embedding_hnsw" in ((info or {}).get("indexes") or {})


async def search_notes(
    query: str | list[float],
    k: int = 5,
    db: Database | None = None,
    expand_links: bool = False,
) -> list[NoteHit]:
    """The ``k`` chunks most similar to ``query`` (text, embedded with the
    configured model, or a vector), best first."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidInputError(f"k must be a positive integer, got {k!r}")
    db = db or await get_database()
    vector = await _query_vector(query)
    dimensions = await db.query(
        f"RETURN array::distinct(SELECT VALUE array::len(embedding) FROM {CHUNK} "
        "WHERE embedding != NONE);"
    )
    if dimensions and len(vector) not in dimensions:
        raise InvalidInputError(
            f"the query has dimension {len(vector)} but the stored vectors have "
            f"{', '.join(map(str, sorted(dimensions)))}"
        )
    select = (
        "SELECT chunk_id, note_id, note.title AS title, note.path AS path, section_title, "
        "section_path, text, prev_id, next_id, "
        f"vector::similarity::cosine(embedding, $query) AS score FROM {CHUNK}"
    )
    if await _has_index(db):
        # The index finds candidates; they are ranked by the exact score.
        sql = f"{select} WHERE {hnsw_nearest(4 * k)};"
    else:
        sql = f"{select} WHERE embedding != NONE ORDER BY score DESC LIMIT {k};"
    rows = await db.query(sql, {"query": vector})
    rows = sorted(rows or [], key=lambda r: (-float(r["score"]), r["chunk_id"]))[:k]
    hits = []
    for row in rows:
        neighbours = await db.query(
            "RETURN {"
            f"prev: $chunk->({EDGE} WHERE kind = 'prev')->{CHUNK}.chunk_id, "
            f"next: $chunk->({EDGE} WHERE kind = 'next')->{CHUNK}.chunk_id"
            "};",
            {"chunk": chunk_rid(row["chunk_id"])},
        )
        prev, nxt = (neighbours or {}).get("prev") or [], (neighbours or {}).get("next") or []
        hit = NoteHit(
            chunk_id=row["chunk_id"],
            note_id=row["note_id"],
            title=row.get("title") or "",
            path=row.get("path") or "",
            section_title=row.get("section_title"),
            section_path=list(row.get("section_path") or []),
            score=float(row["score"]),
            text=row["text"],
            neighbours={"prev": prev[0] if prev else None, "next": nxt[0] if nxt else None},
        )
        if expand_links:
            hit.linked = await _one_hop(db, row["chunk_id"], row["note_id"])
        hits.append(hit)
    return hits


async def _one_hop(db: Database, chunk_id: str, note_id: str) -> list[LinkedNote]:
    """Notes the chunk links to, then notes linking to its note (by graph)."""
    found = await db.query_all(
        f"SELECT note_id, title, path FROM $chunk->({EDGE} WHERE kind = 'references' "
        f"AND status = 'ok')->{NOTE};"
        f"SELECT note_id, title, path FROM array::distinct($note<-({EDGE} WHERE "
        f"kind = 'references' AND status = 'ok')<-{CHUNK}.note);",
        {"chunk": chunk_rid(chunk_id), "note": note_rid(note_id)},
    )
    linked: list[LinkedNote] = []
    seen: set[tuple[str, str]] = set()
    for direction, rows in zip(("out", "in"), found, strict=True):
        for row in sorted(rows or [], key=lambda r: str(r["note_id"])):
            key = (direction, row["note_id"])
            if row["note_id"] == note_id or key in seen:
                continue
            seen.add(key)
            linked.append(LinkedNote(row["note_id"], row["title"], row["path"], direction))
    return linked
