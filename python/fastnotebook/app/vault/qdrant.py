"""A stored vault as Qdrant points: JSON Lines, and loading them into Qdrant.

``qdrant_export(out_dir)`` writes three files, one JSON object a line:

- ``chunks.jsonl``: a point per chunk, ``{"id", "vector", "payload"}``;
- ``notes.jsonl``: a point per note (``vector`` null, or with
  ``note_vectors="centroid"`` the normalised mean of its chunks' vectors);
- ``edges.jsonl``: a record per edge (``vector`` null; Qdrant keeps them as
  points without vectors).

Point ids are UUIDs derived from the chunk, note or edge id (UUID 5), so a
second export of the same store gives the same ids and a load upserts.
Every payload is checked against the JSON Schemas shipped in
``fastnotebook/notes/schemas`` when ``jsonschema`` is installed (the
``qdrant`` extra). ``load_export`` (needs ``qdrant-client``) creates the
collections and the payload indexes of ``PAYLOAD_INDEXES`` and upserts.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from fastnotebook.app.database import Database, get_database
from fastnotebook.app.vault.store import CHUNK, EDGE, NOTE
from fastnotebook.errors import InvalidInputError

__all__ = [
    "COLLECTIONS",
    "PAYLOAD_INDEXES",
    "VECTOR_NAME",
    "QdrantExportReport",
    "load_export",
    "load_schemas",
    "point_id",
    "qdrant_export",
    "read_points",
]

# file stem -> the payload indexes a user should create (field, Qdrant schema type).
PAYLOAD_INDEXES: dict[str, tuple[tuple[str, str], ...]] = {
    "chunks": (("note_id", "keyword"), ("chunk_index", "integer")),
    "notes": (("note_id", "keyword"),),
    "edges": (
        ("kind", "keyword"),
        ("scope", "keyword"),
        ("source_id", "keyword"),
        ("target_id", "keyword"),
        ("note_id", "keyword"),
    ),
}
COLLECTIONS = ("chunks", "notes", "edges")
VECTOR_NAME = "text"  # the named vector of chunk and note points in Qdrant
_NAMESPACE = uuid.UUID("6f1c7a52-3d0e-5b7e-9a51-0f6a3c2b9d10")
_SCHEMA_FILES = {"chunks": "chunk", "notes": "note", "edges": "edge"}

NoteVectors = Literal["none", "centroid"]


def point_id(kind: str, key: str) -> str:
    """The Qdrant id of a chunk, note or edge: a UUID 5 of ``kind:key``."""
    return str(uuid.uuid5(_NAMESPACE, f"{kind}:{key}"))


@dataclass
class QdrantExportReport:
    out_dir: str
    counts: dict[str, int] = field(default_factory=dict)
    dimension: int | None = None
    validated: bool = False


def load_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schemas of the three payloads, by file stem (chunks, notes, edges)."""
    folder = resources.files("fastnotebook.notes").joinpath("schemas")
    schemas: dict[str, dict[str, Any]] = {}
    names = {p.name: p for p in folder.iterdir() if p.name.endswith(".json")}
    for stem, name in _SCHEMA_FILES.items():
        match = next((names[n] for n in sorted(names) if n.startswith(name)), None)
        if match is None:
            raise InvalidInputError(f"no JSON Schema for the {stem} payload in {folder}")
        schemas[stem] = json.loads(match.read_text(encoding="utf-8"))
    return schemas


def _validators() -> dict[str, Any] | None:
    try:
        jsonschema: Any = importlib.import_module("jsonschema")
    except ModuleNotFoundError:
        return None
    return {
        stem: jsonschema.Draft202012Validator(schema) for stem, schema in load_schemas().items()
    }


_FRONTMATTER_KEYS = ("title", "type", "tags", "aliases", "created", "updated")


def _note_fields(row: dict[str, Any]) -> dict[str, Any]:
    """The front matter fields of a note's payload: the parsed front matter,
    then the note's own fields (which win over same-named front matter)."""
    fields = {
        str(k): v
        for k, v in (row.get("frontmatter") or {}).items()
        if str(k) not in ("id", "note_id")
    }
    fields.update(
        {
            "note_id": row["note_id"],
            "title": row["title"],
            "path": row["path"],
            "type": row.get("type"),
            "tags": list(row.get("tags") or []),
            "aliases": list(row.get("aliases") or []),
            "created": row.get("created"),
            "updated": row.get("updated"),
        }
    )
    return fields


def _centroid(vectors: list[list[float]]) -> list[float] | None:
    if not vectors:
        return None
    dimension = len(vectors[0])
    mean = [sum(v[i] for v in vectors) / len(vectors) for i in range(dimension)]
    norm = math.sqrt(sum(x * x for x in mean))
    return [x / norm for x in mean] if norm > 0 else mean


async def _collect(
    db: Database, note_vectors: NoteVectors, batch: int
) -> dict[str, list[dict[str, Any]]]:
    """Every point, by file stem."""
    ids = [str(i) for i in await db.query(f"SELECT VALUE note_id FROM {NOTE} ORDER BY note_id;")]
    out: dict[str, list[dict[str, Any]]] = {"chunks": [], "notes": [], "edges": []}
    for start in range(0, len(ids), batch):
        part = ids[start : start + batch]
        notes = await db.query(
            "SELECT note_id, path, raw, frontmatter, title, type, tags, aliases, created, "
            f"updated, hash, hash_fulltext FROM {NOTE} WHERE note_id IN $ids ORDER BY note_id;",
            {"ids": part},
        )
        chunks = await db.query(
            "SELECT note_id, chunk_id, index, text, char_start, char_end, start_line, end_line, "
            "token_count, section_title, section_path, prev_id, next_id, wikilinks, references, "
            "embedding "
            f"FROM {CHUNK} WHERE note_id IN $ids ORDER BY note_id, index;",
            {"ids": part},
        )
        edges = await db.query(
            "SELECT id, kind, source_id, target_id, scope, note_id, status "
            f"FROM {EDGE} WHERE note_id IN $ids ORDER BY id;",
            {"ids": part},
        )
        by_note: dict[str, list[dict[str, Any]]] = {}
        for chunk in chunks or []:
            by_note.setdefault(chunk["note_id"], []).append(chunk)
        for note in notes or []:
            fields = _note_fields(note)
            own = by_note.get(note["note_id"], [])
            for chunk in own:
                payload = {
                    **fields,
                    "note_title": note["title"],
                    "chunk_id": chunk["chunk_id"],
                    "chunk_index": int(chunk["index"]),
                    "char_start": int(chunk["char_start"]),
                    "char_end": int(chunk["char_end"]),
                    "start_line": int(chunk["start_line"]),
                    "end_line": int(chunk["end_line"]),
                    "token_count": int(chunk["token_count"]),
                    "section_title": chunk.get("section_title"),
                    "section_path": list(chunk.get("section_path") or []),
                    "neighbors": {"prev": chunk.get("prev_id"), "next": chunk.get("next_id")},
                    "wikilinks": list(chunk.get("wikilinks") or []),
                    "references": [
                        {"kind": r["kind"], "target_id": r["target_id"]}
                        for r in chunk.get("references") or []
                    ],
                    "text": chunk["text"],
                }
                out["chunks"].append(
                    {
                        "id": point_id("chunk", chunk["chunk_id"]),
                        "vector": chunk.get("embedding"),
                        "payload": payload,
                    }
                )
            references: list[dict[str, str]] = []
            seen: set[tuple[str, str]] = set()
            for chunk in own:
                for r in chunk.get("references") or []:
                    key = (r["kind"], r["target_id"])
                    if key not in seen:
                        seen.add(key)
                        references.append({"kind": r["kind"], "target_id": r["target_id"]})
            vectors = [c["embedding"] for c in own if c.get("embedding")]
            out["notes"].append(
                {
                    "id": point_id("note", note["note_id"]),
                    "vector": _centroid(vectors) if note_vectors == "centroid" else None,
                    "payload": {
                        **fields,
                        "hash": note["hash"],
                        "hash_fulltext": note["hash_fulltext"],
                        "chunk_count": len(own),
                        "fulltext": note["raw"],
                        "references": references,
                    },
                }
            )
        for edge in edges or []:
            owner, ordinal = edge["id"].id if hasattr(edge["id"], "id") else edge["id"]
            out["edges"].append(
                {
                    "id": point_id("edge", f"{owner}\x00{ordinal}"),
                    "vector": None,
                    "payload": {
                        "kind": edge["kind"],
                        "source_id": edge["source_id"],
                        "target_id": edge["target_id"],
                        "scope": edge["scope"],
                        "note_id": edge["note_id"],
                        "status": edge["status"],
                    },
                }
            )
    return out


async def qdrant_export(
    out_dir: str | os.PathLike[str],
    db: Database | None = None,
    note_vectors: NoteVectors = "centroid",
    batch: int = 200,
) -> QdrantExportReport:
    """Write ``chunks.jsonl``, ``notes.jsonl`` and ``edges.jsonl`` under ``out_dir``."""
    if note_vectors not in ("none", "centroid"):
        raise InvalidInputError(f"note_vectors must be 'none' or 'centroid', got {note_vectors!r}")
    db = db or await get_database()
    out = Path(out_dir).expanduser()
    if out.exists() and not out.is_dir():
        raise InvalidInputError(f"{out} is a file, not a folder to export into")
    points = await _collect(db, note_vectors, batch)
    validators = _validators()
    report = QdrantExportReport(str(out), validated=validators is not None)
    dimensions = {len(p["vector"]) for p in points["chunks"] if p["vector"]}
    report.dimension = dimensions.pop() if len(dimensions) == 1 else None
    if validators is not None:
        for stem, items in points.items():
            for point in items:
                errors = sorted(validators[stem].iter_errors(point["payload"]), key=str)
                if errors:
                    raise InvalidInputError(
                        f"{stem} payload of {point['payload'].get('note_id')} does not match "
                        f"its schema: {errors[0].message}"
                    )
    out.mkdir(parents=True, exist_ok=True)
    for stem, items in points.items():
        with (out / f"{stem}.jsonl").open("w", encoding="utf-8", newline="\n") as handle:
            for point in items:
                handle.write(json.dumps(point, ensure_ascii=False) + "\n")
        report.counts[stem] = len(items)
    return report


def read_points(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """The points of one exported ``.jsonl`` file."""
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as e:
                    raise InvalidInputError(f"{path}:{number}: not JSON: {e}") from e


def load_export(
    client: Any, out_dir: str | os.PathLike[str], prefix: str = "vault", batch: int = 256
) -> dict[str, int]:
    """Load an export into Qdrant through ``client`` (a ``QdrantClient``):
    collections ``{prefix}_chunks``, ``{prefix}_notes`` (cosine vectors of
    the export's dimension; notes without vectors if the export has none)
    and ``{prefix}_edges`` (no vectors), then the payload indexes of
    ``PAYLOAD_INDEXES``. Returns the points loaded per collection."""
    from qdrant_client import models

    folder = Path(out_dir)
    loaded: dict[str, int] = {}
    for stem in COLLECTIONS:
        points = list(read_points(folder / f"{stem}.jsonl"))
        dimensions = {len(p["vector"]) for p in points if p.get("vector")}
        if len(dimensions) > 1:
            raise InvalidInputError(f"{stem}.jsonl mixes vector sizes {sorted(dimensions)}")
        name = f"{prefix}_{stem}"
        if client.collection_exists(name):
            client.delete_collection(name)
        vectors: Any = (
            {
                VECTOR_NAME: models.VectorParams(
                    size=dimensions.pop(), distance=models.Distance.COSINE
                )
            }
            if dimensions
            else {}
        )
        client.create_collection(name, vectors_config=vectors)
        for field_name, kind in PAYLOAD_INDEXES[stem]:
            client.create_payload_index(name, field_name=field_name, field_schema=kind)
        for start in range(0, len(points), batch):
            client.upsert(
                name,
                points=[
                    models.PointStruct(
                        id=p["id"],
                        vector={VECTOR_NAME: p["vector"]} if p.get("vector") else {},
                        payload=p["payload"],
                    )
                    for p in points[start : start + batch]
                ],
            )
        loaded[name] = len(points)
    return loaded
