"""A vault in the embedded SurrealDB: notes, chunks, vectors and graph edges.

Tables (defined on first use by ``ensure_vault_schema``, idempotent):

- ``vault_note``: one row per note, id ``vault_note:⟨note id⟩``: the whole
  file (``raw``), its front matter text and fields, ``hash`` (per the hash
  mode), ``hash_fulltext``, the fingerprint of the note's own edges
  (``edges_hash``) and of the settings it was chunked with (``config``).
- ``vault_chunk``: one row per chunk, id ``vault_chunk:⟨note id#cNN⟩``: the
  full chunk record, ``embed_hash`` (SHA-256 of ``embed_text``) and its
  vector (``embedding``, with the model that made it in ``embed_model``).
- ``vault_edge``: a graph relation (``RELATE``) per edge, with ``kind``,
  ``source_id``, ``target_id``, ``scope``, ``note_id`` (the owner) and
  ``status``. Its ``in`` is a chunk or a note; its ``out`` a chunk, a note,
  or ``vault_missing:⟨raw target⟩`` for an unresolved link.

An import parses the whole vault (``read_vault``), compares each note with
its row (full-text hash, edge set, settings) and rewrites only the notes
that differ: note row, chunks, vectors and edges together in one
transaction, so a reader (or a process killed at any point) sees a note
entirely old or entirely new. Vectors are computed before that
transaction; a chunk whose ``embed_text`` is unchanged keeps its vector.
Notes whose files are gone are removed last (with their edges). Every
transaction is idempotent, so running the import again after a crash
finishes the work without doubling anything.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from loguru import logger

from fastnotebook import embedding
from fastnotebook.app.database import Database, RecordID, get_database
from fastnotebook.app.pipeline import faults
from fastnotebook.app.pipeline.progress import Progress, StageClock
from fastnotebook.app.pipeline.stages import model_settings
from fastnotebook.app.pipeline.vector_index import ensure_vector_dimension
from fastnotebook.errors import InvalidInputError
from fastnotebook.notes import (
    Edge,
    Note,
    NoteChunk,
    NoteError,
    NotesConfig,
    VaultParse,
    edges_of_note,
    read_vault,
)

__all__ = [
    "EdgeRow",
    "NotesImportReport",
    "backlinks",
    "chunk_neighbours",
    "config_fingerprint",
    "edges_fingerprint",
    "embed_missing",
    "ensure_vault_schema",
    "import_vault",
    "linked_notes",
    "note_edges",
    "stored_vault_root",
    "unresolved_links",
]

NOTE, CHUNK, EDGE, MISSING = "vault_note", "vault_chunk", "vault_edge", "vault_missing"
META = "fastnotebook_meta:vault"

SCHEMA = f"""
DEFINE TABLE IF NOT EXISTS {NOTE} SCHEMAFULL;
DEFINE FIELD IF NOT EXISTS note_id ON {NOTE} TYPE string;
DEFINE FIELD IF NOT EXISTS path ON {NOTE} TYPE string;
DEFINE FIELD IF NOT EXISTS raw ON {NOTE} TYPE string;
DEFINE FIELD IF NOT EXISTS frontmatter_text ON {NOTE} TYPE string;
DEFINE FIELD IF NOT EXISTS frontmatter ON {NOTE} FLEXIBLE TYPE object;
DEFINE FIELD IF NOT EXISTS title ON {NOTE} TYPE string;
DEFINE FIELD IF NOT EXISTS type ON {NOTE} TYPE option<string>;
DEFINE FIELD IF NOT EXISTS tags ON {NOTE} TYPE array<string>;
DEFINE FIELD IF NOT EXISTS aliases ON {NOTE} TYPE array<string>;
DEFINE FIELD IF NOT EXISTS created ON {NOTE} TYPE option<string>;
DEFINE FIELD IF NOT EXISTS updated ON {NOTE} TYPE option<string>;
DEFINE FIELD IF NOT EXISTS links ON {NOTE} TYPE int;
DEFINE FIELD IF NOT EXISTS chunk_count ON {NOTE} TYPE int;
DEFINE FIELD IF NOT EXISTS hash ON {NOTE} TYPE string;
DEFINE FIELD IF NOT EXISTS hash_fulltext ON {NOTE} TYPE string;
DEFINE FIELD IF NOT EXISTS edges_hash ON {NOTE} TYPE string;
DEFINE FIELD IF NOT EXISTS config ON {NOTE} TYPE string;
DEFINE INDEX IF NOT EXISTS {NOTE}_by_path ON {NOTE} FIELDS path;

DEFINE TABLE IF NOT EXISTS {CHUNK} SCHEMAFULL;
DEFINE FIELD IF NOT EXISTS note ON {CHUNK} TYPE record<{NOTE}>;
DEFINE FIELD IF NOT EXISTS note_id ON {CHUNK} TYPE string;
DEFINE FIELD IF NOT EXISTS chunk_id ON {CHUNK} TYPE string;
DEFINE FIELD IF NOT EXISTS index ON {CHUNK} TYPE int;
DEFINE FIELD IF NOT EXISTS text ON {CHUNK} TYPE string;
DEFINE FIELD IF NOT EXISTS char_start ON {CHUNK} TYPE int;
DEFINE FIELD IF NOT EXISTS char_end ON {CHUNK} TYPE int;
DEFINE FIELD IF NOT EXISTS start_line ON {CHUNK} TYPE int;
DEFINE FIELD IF NOT EXISTS end_line ON {CHUNK} TYPE int;
DEFINE FIELD IF NOT EXISTS section_title ON {CHUNK} TYPE option<string>;
DEFINE FIELD IF NOT EXISTS section_path ON {CHUNK} TYPE array<string>;
DEFINE FIELD IF NOT EXISTS prev_id ON {CHUNK} TYPE option<string>;
DEFINE FIELD IF NOT EXISTS next_id ON {CHUNK} TYPE option<string>;
DEFINE FIELD IF NOT EXISTS token_count ON {CHUNK} TYPE int;
DEFINE FIELD IF NOT EXISTS char_count ON {CHUNK} TYPE int;
DEFINE FIELD IF NOT EXISTS embed_text ON {CHUNK} TYPE string;
DEFINE FIELD IF NOT EXISTS embed_hash ON {CHUNK} TYPE string;
DEFINE FIELD IF NOT EXISTS wikilinks ON {CHUNK} TYPE array<string>;
DEFINE FIELD IF NOT EXISTS references ON {CHUNK} FLEXIBLE TYPE array<object>;
DEFINE FIELD IF NOT EXISTS metadata ON {CHUNK} FLEXIBLE TYPE object;
DEFINE FIELD IF NOT EXISTS embedding ON {CHUNK} TYPE option<array<float>>;
DEFINE FIELD IF NOT EXISTS embed_model ON {CHUNK} TYPE option<string>;
DEFINE INDEX IF NOT EXISTS {CHUNK}_by_note ON {CHUNK} FIELDS note_id;

DEFINE TABLE IF NOT EXISTS {EDGE} TYPE RELATION
    IN {CHUNK} | {NOTE} OUT {CHUNK} | {NOTE} | {MISSING} SCHEMAFULL;
DEFINE FIELD IF NOT EXISTS kind ON {EDGE} TYPE string
    ASSERT $value IN ["belongs_to", "prev", "next", "references", "backlink"];
DEFINE FIELD IF NOT EXISTS source_id ON {EDGE} TYPE string;
DEFINE FIELD IF NOT EXISTS target_id ON {EDGE} TYPE string;
DEFINE FIELD IF NOT EXISTS scope ON {EDGE} TYPE string ASSERT $value IN ["chunk", "note"];
DEFINE FIELD IF NOT EXISTS note_id ON {EDGE} TYPE string;
DEFINE FIELD IF NOT EXISTS status ON {EDGE} TYPE string ASSERT $value IN ["ok", "unresolved"];
DEFINE INDEX IF NOT EXISTS {EDGE}_by_note ON {EDGE} FIELDS note_id;
DEFINE INDEX IF NOT EXISTS {EDGE}_by_kind ON {EDGE} FIELDS kind;
DEFINE INDEX IF NOT EXISTS {EDGE}_by_status ON {EDGE} FIELDS status;
DEFINE INDEX IF NOT EXISTS {EDGE}_by_target ON {EDGE} FIELDS target_id;
"""

# One transaction: the notes of a group replace their previous rows. The
# note rows are upserted, never deleted, so that the edges of other notes
# that point to them stay (deleting a record deletes its relations).
_WRITE = f"""
BEGIN TRANSACTION;
DELETE {EDGE} WHERE note_id IN $ids RETURN NONE;
DELETE {CHUNK} WHERE note_id IN $ids RETURN NONE;
FOR $n IN $notes {{ UPSERT $n.id CONTENT $n.row RETURN NONE; }};
INSERT INTO {CHUNK} $chunks RETURN NONE;
INSERT RELATION INTO {EDGE} $edges RETURN NONE;
UPSERT {META} SET root = $root, config = $config RETURN NONE;
COMMIT TRANSACTION;
"""

_REMOVE = f"""
BEGIN TRANSACTION;
DELETE {EDGE} WHERE note_id IN $ids RETURN NONE;
DELETE {CHUNK} WHERE note_id IN $ids RETURN NONE;
DELETE {NOTE} WHERE note_id IN $ids RETURN NONE;
COMMIT TRANSACTION;
"""

# Vectors of chunks that already exist, set only if the chunk still has the
# text they were computed from.
_SET_VECTORS = """
BEGIN TRANSACTION;
FOR $row IN $rows {
    UPDATE $row.id SET embedding = $row.embedding, embed_model = $model
        WHERE embed_hash = $row.embed_hash RETURN NONE;
};
COMMIT TRANSACTION;
"""


@dataclass
class NotesImportReport:
    """What ``import_vault`` did."""

    root: str
    notes: int = 0  # notes in the vault (parsed)
    added: int = 0
    changed: int = 0  # content changed (per hash mode)
    rewritten: int = 0  # same content hash, other bytes, links or settings
    repaired: int = 0  # unchanged, but its stored rows were not complete (or --rewrite)
    unchanged: int = 0
    removed: int = 0
    chunks_written: int = 0
    edges_written: int = 0
    embedded: int = 0  # chunk vectors computed by the model
    reused: int = 0  # chunk vectors kept (same embed_text)
    missing_vectors: int = 0  # chunks still without a vector (--no-embed)
    bytes: int = 0
    errors: list[NoteError] = field(default_factory=list)
    #: Notes read from a file that is not UTF-8 (decoded; see ``read_vault``).
    warnings: list[NoteError] = field(default_factory=list)
    removed_ids: list[str] = field(default_factory=list)
    written_ids: list[str] = field(default_factory=list)
    model: str | None = None
    seconds: float = 0.0
    clock: StageClock = field(default_factory=StageClock)

    def as_dict(self) -> dict[str, Any]:
        data = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name not in ("clock", "errors", "warnings")
        }
        data["errors"] = [{"path": e.path, "message": e.message} for e in self.errors]
        data["warnings"] = [{"path": e.path, "message": e.message} for e in self.warnings]
        data["stages"] = dict(self.clock.seconds)
        return data


@dataclass(frozen=True)
class EdgeRow:
    """An edge as stored (see the module)."""

    kind: str
    source_id: str
    target_id: str
    scope: str
    note_id: str
    status: str


def config_fingerprint(config: NotesConfig) -> str:
    """The settings that decide a note's chunks and edges, as a stable string."""
    data = asdict(config)
    data["sizes"] = {k: list(v) for k, v in sorted(config.sizes.items())}
    data["suggestion_headings"] = list(config.suggestion_headings)
    return json.dumps(data, sort_keys=True, ensure_ascii=False)


def _edge_tuple(edge: Edge) -> list[str]:
    return [edge.kind, edge.source_id, edge.target_id, edge.scope, edge.note_id, edge.status]


def edges_fingerprint(edges: Sequence[Edge]) -> str:
    """SHA-256 of a note's own edges, in order (their statuses included)."""
    text = json.dumps([_edge_tuple(e) for e in edges], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


async def ensure_vault_schema(db: Database | None = None) -> None:
    """Define the vault tables, fields and indexes (idempotent)."""
    db = db or await get_database()
    await db.query_all(f"BEGIN TRANSACTION;\n{SCHEMA}\nCOMMIT TRANSACTION;")


async def has_vault(db: Database) -> bool:
    """Whether a vault was ever imported into this database."""
    return bool(await db.query(f"RETURN record::exists({META});"))


async def stored_vault_root(db: Database | None = None) -> str | None:
    """The folder of the vault last imported into this database (None: none)."""
    db = db or await get_database()
    return await db.query(f"RETURN (SELECT VALUE root FROM ONLY {META});")  # type: ignore[no-any-return]


def note_rid(note_id: str) -> RecordID:
    return RecordID(NOTE, note_id)


def chunk_rid(chunk_id: str) -> RecordID:
    return RecordID(CHUNK, chunk_id)


def _note_row(note: Note, chunks: int, edges_hash: str, config: str) -> dict[str, Any]:
    return {
        "note_id": note.id,
        "path": note.path,
        "raw": note.raw,
        "frontmatter_text": note.frontmatter_text,
        "frontmatter": note.frontmatter,
        "title": note.title,
        "type": note.type,
        "tags": list(note.tags),
        "aliases": list(note.aliases),
        "created": note.created,
        "updated": note.updated,
        "links": len(note.links),
        "chunk_count": chunks,
        "hash": note.hash,
        "hash_fulltext": note.hash_fulltext,
        "edges_hash": edges_hash,
        "config": config,
    }


def _chunk_row(chunk: NoteChunk, vector: list[float] | None, model: str | None) -> dict[str, Any]:
    return {
        "id": chunk_rid(chunk.id),
        "note": note_rid(chunk.note_id),
        "note_id": chunk.note_id,
        "chunk_id": chunk.id,
        "index": chunk.index,
        "text": chunk.text,
        "char_start": chunk.char_start,
        "char_end": chunk.char_end,
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "section_title": chunk.section_title,
        "section_path": list(chunk.section_path),
        "prev_id": chunk.prev_id,
        "next_id": chunk.next_id,
        "token_count": chunk.token_count,
        "char_count": chunk.char_count,
        "embed_text": chunk.embed_text,
        "embed_hash": _sha256(chunk.embed_text),
        "wikilinks": list(chunk.wikilinks),
        "references": [dict(r) for r in chunk.references],
        "metadata": dict(chunk.metadata),
        "embedding": vector,
        "embed_model": model if vector is not None else None,
    }


def _edge_row(edge: Edge, ordinal: int, chunk_ids: set[str]) -> dict[str, Any]:
    source = CHUNK if edge.source_id in chunk_ids else NOTE
    if edge.status == "unresolved":
        target = MISSING
    else:
        target = CHUNK if edge.target_id in chunk_ids else NOTE
    return {
        "id": [edge.note_id, ordinal],
        "in": RecordID(source, edge.source_id),
        "out": RecordID(target, edge.target_id),
        "kind": edge.kind,
        "source_id": edge.source_id,
        "target_id": edge.target_id,
        "scope": edge.scope,
        "note_id": edge.note_id,
        "status": edge.status,
    }


@dataclass
class _Pending:
    """A note to write and what it needs."""

    note: Note
    chunks: list[NoteChunk]
    edges: list[Edge]
    edges_hash: str
    vectors: list[list[float] | None]
    models: list[str | None]  # the model of each vector


def _groups(pending: Sequence[_Pending], max_rows: int, max_notes: int) -> Iterator[list[_Pending]]:
    group: list[_Pending] = []
    rows = 0
    for item in pending:
        size = 1 + len(item.chunks) + len(item.edges)
        if group and (rows + size > max_rows or len(group) >= max_notes):
            yield group
            group, rows = [], 0
        group.append(item)
        rows += size
    if group:
        yield group


async def _model_name() -> str:
    """The model's name as the pipeline's runs record it (``model_settings``)."""
    return (await model_settings()).model


async def _vectors_for(texts: list[str], clock: StageClock) -> list[list[float]]:
    with clock.measure("model"):
        vectors = await embedding.generate_embeddings(texts)
    if len(vectors) != len(texts):
        raise RuntimeError(f"the model returned {len(vectors)} vectors for {len(texts)} texts")
    return [list(map(float, v)) for v in vectors]


def _another_model(existing: int, dimension: int) -> Exception:
    return InvalidInputError(
        f"the database's vectors have dimension {existing}, the model gives {dimension}: "
        "use another --data-dir for another model"
    )


async def _ensure_dimension(db: Database, dimension: int) -> None:
    """The HNSW index of the chunk vectors, with the database's vector dimension."""
    await ensure_vector_dimension(db, dimension, refuse=_another_model)
    await db.query(
        f"DEFINE INDEX IF NOT EXISTS {CHUNK}_embedding_hnsw ON TABLE {CHUNK} FIELDS embedding "
        f"HNSW DIMENSION {dimension} DIST COSINE;"
    )


async def import_vault(
    root: str | os.PathLike[str],
    db: Database | None = None,
    config: NotesConfig | None = None,
    embed: bool = True,
    progress: bool = False,
    stream: Any = None,
    replace: bool = False,
    rewrite: bool = False,
    write_rows: int = 2000,
    write_notes: int = 64,
    encoding: str | None = None,
) -> NotesImportReport:
    """Bring the store in line with the vault at ``root`` (see the module).

    ``embed=False`` stores chunks without vectors; a later import with
    ``embed=True`` (or ``embed_missing``, run by ``fastnotebook embed``)
    computes the missing ones. A database holds one vault: importing a
    different folder raises ``InvalidInputError`` unless ``replace``.
    A note whose stored chunk or edge rows are not as many as its file
    gives is rewritten (``repaired``); ``rewrite`` rewrites every note.
    ``encoding`` decodes the files that are not UTF-8 (default: detected).
    """
    started = time.perf_counter()
    config = config or NotesConfig()
    folder = Path(root).expanduser()
    if not folder.exists():
        raise InvalidInputError(f"no vault at {folder}: the folder does not exist")
    if not folder.is_dir():
        raise InvalidInputError(f"{folder} is a file, not a vault folder")
    folder = folder.resolve()
    db = db or await get_database()
    report = NotesImportReport(root=str(folder))
    with report.clock.measure("parse"):
        vault = await asyncio.to_thread(read_vault, folder, config, encoding)
    report.errors = list(vault.errors)
    report.warnings = list(vault.warnings)
    report.notes = len(vault.notes)
    report.bytes = sum(len(n.raw.encode("utf-8", "surrogatepass")) for n in vault.notes)
    if not vault.notes and not vault.errors:
        raise InvalidInputError(f"no Markdown notes (*.md) in {folder}")
    with report.clock.measure("plan"):
        await ensure_vault_schema(db)
        previous_root = await stored_vault_root(db)
        if previous_root is not None and previous_root != str(folder) and not replace:
            raise InvalidInputError(
                f"this database holds the vault {previous_root}; import {folder} into "
                "another --data-dir, or replace the stored vault (--replace)"
            )
        known = {
            row["note_id"]: row
            for row in await db.query(
                f"SELECT note_id, path, hash, hash_fulltext, edges_hash, config FROM {NOTE};"
            )
            or []
        }
        rows = await _row_counts(db)
    fingerprint = config_fingerprint(config)
    pending, removed = _plan(vault, known, rows, fingerprint, report, rewrite)
    model = await _model_name() if embed else None
    report.model = model
    with report.clock.measure("plan"):
        reusable = await _reusable_vectors(db, [p.note.id for p in pending] + removed, model)
    total = len(pending)
    bar = Progress(
        "notes import",
        "notes",
        total,
        sum(len(p.note.raw) for p in pending),
        stream,
        enabled=progress,
    )
    try:
        for group in _groups(pending, write_rows, write_notes):
            await _vectors_of_group(db, group, reusable, embed, model, report)
            await _write(db, group, str(folder), fingerprint, report)
            bar.advance(
                items=len(group),
                nbytes=sum(len(p.note.raw) for p in group),
                chunks=sum(len(p.chunks) for p in group),
            )
        if removed:
            faults.checkpoint("writing")
            with report.clock.measure("write"):
                await db.query_all(_REMOVE, {"ids": removed})
            faults.checkpoint("written")
            report.removed = len(removed)
            report.removed_ids = removed
        if not pending and not removed and previous_root != str(folder):
            await db.query(
                f"UPSERT {META} SET root = $root, config = $config RETURN NONE;",
                {"root": str(folder), "config": fingerprint},
            )
    finally:
        bar.close()
    if embed:
        embedded, _ = await embed_missing(db, clock=report.clock)
        report.embedded += embedded
    report.missing_vectors = await _count_missing(db)
    report.seconds = time.perf_counter() - started
    return report


async def _row_counts(db: Database) -> dict[str, tuple[int, int]]:
    """(chunk rows, edge rows) stored for each note id."""
    chunks, edges = await db.query_all(
        f"SELECT note_id, count() AS n FROM {CHUNK} GROUP BY note_id;"
        f"SELECT note_id, count() AS n FROM {EDGE} GROUP BY note_id;"
    )
    counts: dict[str, tuple[int, int]] = {}
    for row in chunks or []:
        counts[row["note_id"]] = (int(row["n"]), 0)
    for row in edges or []:
        counts[row["note_id"]] = (counts.get(row["note_id"], (0, 0))[0], int(row["n"]))
    return counts


def _plan(
    vault: VaultParse,
    known: dict[str, dict[str, Any]],
    rows: dict[str, tuple[int, int]],
    fingerprint: str,
    report: NotesImportReport,
    rewrite: bool,
) -> tuple[list[_Pending], list[str]]:
    """The notes to write, and the ids of the stored notes to remove."""
    pending: list[_Pending] = []
    present: set[str] = set()
    for note in vault.notes:
        present.add(note.id)
        edges = edges_of_note(vault, note.id)
        edges_hash = edges_fingerprint(edges)
        row = known.get(note.id)
        chunks = vault.chunks.get(note.id, [])
        if row is None:
            report.added += 1
        elif row["hash"] != note.hash:
            report.changed += 1
        elif (
            row["hash_fulltext"] != note.hash_fulltext
            or row["edges_hash"] != edges_hash
            or row["config"] != fingerprint
            or row["path"] != note.path
        ):
            report.rewritten += 1
        elif rows.get(note.id, (0, 0)) != (len(chunks), len(edges)) or rewrite:
            report.repaired += 1
        else:
            report.unchanged += 1
            continue
        none: list[None] = [None] * len(chunks)
        pending.append(_Pending(note, chunks, edges, edges_hash, list(none), list(none)))
    # A file that could not be parsed this time keeps its previous version.
    unreadable = {e.path for e in vault.errors}
    removed = [
        note_id
        for note_id, row in sorted(known.items())
        if note_id not in present and row["path"] not in unreadable
    ]
    return pending, removed


async def _reusable_vectors(
    db: Database, note_ids: list[str], model: str | None
) -> dict[str, tuple[list[float], str]]:
    """Stored vectors of these notes' chunks, with their model, by
    ``embed_hash``: the current model's (any model's when not embedding)."""
    if not note_ids:
        return {}
    rows = await db.query(
        f"SELECT embed_hash, embedding, embed_model FROM {CHUNK} WHERE note_id IN $ids "
        "AND embedding != NONE AND ($model = NONE OR embed_model = $model);",
        {"ids": note_ids, "model": model},
    )
    return {row["embed_hash"]: (row["embedding"], row["embed_model"]) for row in rows or []}


async def _vectors_of_group(
    db: Database,
    group: list[_Pending],
    reusable: dict[str, tuple[list[float], str]],
    embed: bool,
    model: str | None,
    report: NotesImportReport,
) -> None:
    """Each chunk's vector: kept from the store when its ``embed_text`` was
    embedded already, else (when ``embed``) computed by the model."""
    wanted: list[tuple[_Pending, int]] = []
    for item in group:
        for i, chunk in enumerate(item.chunks):
            if not chunk.embed_text.strip():
                continue
            kept = reusable.get(_sha256(chunk.embed_text))
            if kept is not None:
                item.vectors[i], item.models[i] = kept
                report.reused += 1
            elif embed:
                wanted.append((item, i))
    if not wanted:
        return
    vectors = await _vectors_for([item.chunks[i].embed_text for item, i in wanted], report.clock)
    faults.checkpoint("embedded")
    await _ensure_dimension(db, len(vectors[0]))
    for (item, i), vector in zip(wanted, vectors, strict=True):
        item.vectors[i], item.models[i] = vector, model
    report.embedded += len(vectors)


async def _write(
    db: Database,
    group: list[_Pending],
    root: str,
    fingerprint: str,
    report: NotesImportReport,
) -> None:
    chunk_ids = {c.id for item in group for c in item.chunks}
    notes = [
        {
            "id": note_rid(item.note.id),
            "row": _note_row(item.note, len(item.chunks), item.edges_hash, fingerprint),
        }
        for item in group
    ]
    chunks = [
        _chunk_row(chunk, vector, model)
        for item in group
        for chunk, vector, model in zip(item.chunks, item.vectors, item.models, strict=True)
    ]
    edges = [
        _edge_row(edge, ordinal, chunk_ids)
        for item in group
        for ordinal, edge in enumerate(item.edges)
    ]
    faults.checkpoint("writing")
    with report.clock.measure("write"):
        await db.query_all(
            _WRITE,
            {
                "ids": [item.note.id for item in group],
                "notes": notes,
                "chunks": chunks,
                "edges": edges,
                "root": root,
                "config": fingerprint,
            },
        )
    faults.checkpoint("written")
    report.chunks_written += len(chunks)
    report.edges_written += len(edges)
    report.written_ids += [item.note.id for item in group]


async def _count_missing(db: Database) -> int:
    return int(
        await db.query(
            f"RETURN count(SELECT VALUE id FROM {CHUNK} WHERE embedding = NONE "
            "AND string::trim(embed_text) != '');"
        )
        or 0
    )


async def embed_missing(
    db: Database | None = None,
    clock: StageClock | None = None,
    batch: int = 256,
    progress: bool = False,
    stream: Any = None,
) -> tuple[int, int]:
    """Embed the vault chunks without a vector (or with another model's):
    what ``import_vault(embed=False)`` left. Each batch is written in one
    transaction, and only onto chunks whose text is still the one embedded.
    Returns (chunks embedded, chunks that were due)."""
    db = db or await get_database()
    clock = clock or StageClock()
    if not await has_vault(db):
        return 0, 0
    model = await _model_name()
    with clock.measure("plan"):
        due = await db.query(
            f"SELECT id, embed_hash, embed_text FROM {CHUNK} "
            "WHERE (embedding = NONE OR embed_model != $model) "
            "AND string::trim(embed_text) != '' ORDER BY id;",
            {"model": model},
        )
    due = list(due or [])
    bar = Progress("notes embed", "chunks", len(due), 0, stream, enabled=progress)
    done = 0
    try:
        for start in range(0, len(due), batch):
            part = due[start : start + batch]
            vectors = await _vectors_for([row["embed_text"] for row in part], clock)
            faults.checkpoint("embedded")
            await _ensure_dimension(db, len(vectors[0]))
            rows = [
                {"id": row["id"], "embed_hash": row["embed_hash"], "embedding": vector}
                for row, vector in zip(part, vectors, strict=True)
            ]
            faults.checkpoint("writing")
            with clock.measure("write"):
                await db.query_all(_SET_VECTORS, {"rows": rows, "model": model})
            faults.checkpoint("written")
            done += len(rows)
            bar.advance(items=len(rows))
    finally:
        bar.close()
    if due:
        logger.debug("Embedded {} vault chunks", done)
    return done, len(due)


# --- graph queries -------------------------------------------------------------


def _edge_rows(rows: Iterable[dict[str, Any]]) -> list[EdgeRow]:
    return [
        EdgeRow(
            kind=r["kind"],
            source_id=r["source_id"],
            target_id=r["target_id"],
            scope=r["scope"],
            note_id=r["note_id"],
            status=r["status"],
        )
        for r in rows
    ]


_EDGE_FIELDS = "kind, source_id, target_id, scope, note_id, status"


async def chunk_neighbours(chunk_id: str, db: Database | None = None) -> dict[str, str | None]:
    """The chunks before and after ``chunk_id`` in its note, through the
    ``prev``/``next`` edges: ``{"prev": id or None, "next": id or None}``."""
    db = db or await get_database()
    row = await db.query(
        "RETURN {"
        f"prev: $chunk->({EDGE} WHERE kind = 'prev')->{CHUNK}.chunk_id, "
        f"next: $chunk->({EDGE} WHERE kind = 'next')->{CHUNK}.chunk_id"
        "};",
        {"chunk": chunk_rid(chunk_id)},
    )
    prev = (row or {}).get("prev") or []
    nxt = (row or {}).get("next") or []
    return {"prev": prev[0] if prev else None, "next": nxt[0] if nxt else None}


async def backlinks(note_id: str, db: Database | None = None) -> list[str]:
    """The ids of the notes that link to ``note_id`` (its ``backlink`` edges
    and the ``references`` of other notes' chunks), sorted."""
    db = db or await get_database()
    rows = await db.query(
        f"RETURN array::distinct(array::concat("
        f"(SELECT VALUE note_id FROM $note<-({EDGE} WHERE kind = 'references' "
        f"AND status = 'ok')), "
        f"(SELECT VALUE note_id FROM $note<-({EDGE} WHERE kind = 'backlink' AND status = 'ok'))"
        "));",
        {"note": note_rid(note_id)},
    )
    return sorted(str(r) for r in rows or [] if str(r) != note_id)


async def linked_notes(note_id: str, db: Database | None = None) -> list[str]:
    """The ids of the notes that ``note_id`` links to (resolved links), sorted."""
    db = db or await get_database()
    rows = await db.query(
        f"SELECT VALUE target_id FROM {EDGE} WHERE note_id = $id AND kind = 'references' "
        "AND status = 'ok';",
        {"id": note_id},
    )
    return sorted({str(r) for r in rows or [] if str(r) != note_id})


async def unresolved_links(db: Database | None = None) -> list[EdgeRow]:
    """Every edge of the vault whose target is missing, by owner note."""
    db = db or await get_database()
    rows = await db.query(
        f"SELECT {_EDGE_FIELDS} FROM {EDGE} WHERE status = 'unresolved' "
        "ORDER BY note_id, source_id, target_id;"
    )
    return _edge_rows(rows or [])


async def note_edges(note_id: str, db: Database | None = None) -> list[EdgeRow]:
    """The edges owned by one note, in the order they were written."""
    db = db or await get_database()
    rows = await db.query(
        f"SELECT {_EDGE_FIELDS}, id FROM {EDGE} WHERE note_id = $id ORDER BY id;",
        {"id": note_id},
    )
    return _edge_rows(rows or [])
