"""The counts and invariants of a stored vault (``fastnotebook notes audit``).

Each invariant compares what the graph holds with what the notes and chunks
say it must hold; a store written only by ``import_vault`` satisfies all of
them whatever interrupted it. A violated invariant means the store was
changed by something else (or a bug): ``fastnotebook notes import VAULT``
rewrites every note whose rows do not match its file; for a note whose
rows are damaged but whose hashes still match, ``--rewrite`` rewrites all.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from fastnotebook.app.database import Database, get_database
from fastnotebook.app.vault.export import chunk_from_row
from fastnotebook.app.vault.store import CHUNK, EDGE, MISSING, NOTE
from fastnotebook.notes import body_from_chunks

__all__ = ["AuditReport", "Invariant", "audit_vault"]


@dataclass(frozen=True)
class Invariant:
    name: str
    expected: int
    actual: int
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.expected == self.actual


@dataclass
class AuditReport:
    counts: dict[str, int] = field(default_factory=dict)
    invariants: list[Invariant] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(i.ok for i in self.invariants)

    @property
    def violated(self) -> list[Invariant]:
        return [i for i in self.invariants if not i.ok]

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "counts": dict(self.counts),
            "invariants": [
                {
                    "name": i.name,
                    "ok": i.ok,
                    "expected": i.expected,
                    "actual": i.actual,
                    **({"detail": i.detail} if i.detail else {}),
                }
                for i in self.invariants
            ],
        }


def _first(items: list[str], limit: int = 5) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


async def audit_vault(db: Database | None = None) -> AuditReport:
    """Count the store and check its invariants (see the module)."""
    db = db or await get_database()
    report = AuditReport()
    notes = (
        await db.query(
            f"SELECT note_id, path, raw, frontmatter_text, chunk_count, hash_fulltext FROM {NOTE};"
        )
        or []
    )
    chunks = (
        await db.query(
            "SELECT note_id, chunk_id, index, text, char_start, char_end, start_line, end_line, "
            "section_title, section_path, prev_id, next_id, token_count, char_count, "
            "embed_text, wikilinks, references, metadata, embedding != NONE AS has_vector, "
            f"array::len(embedding ?? []) AS dimension FROM {CHUNK};"
        )
        or []
    )
    edges = (
        await db.query(
            "SELECT kind, status, scope, note_id, source_id, target_id, "
            f"record::tb(in) AS in_table, record::tb(out) AS out_table, "
            f"record::exists(in) AS in_exists, record::exists(out) AS out_exists FROM {EDGE};"
        )
        or []
    )
    kinds = Counter(e["kind"] for e in edges)
    by_note: dict[str, list[dict[str, Any]]] = {}
    for chunk in chunks:
        by_note.setdefault(chunk["note_id"], []).append(chunk)
    note_ids = {n["note_id"] for n in notes}
    report.counts = {
        "notes": len(notes),
        "chunks": len(chunks),
        "edges": len(edges),
        **{kind: kinds.get(kind, 0) for kind in ("belongs_to", "prev", "next", "references")},
        "backlink": kinds.get("backlink", 0),
        "unresolved": sum(e["status"] == "unresolved" for e in edges),
        "vectors": sum(bool(c["has_vector"]) for c in chunks),
        "missing_vectors": sum(
            not c["has_vector"] and bool(c["embed_text"].strip()) for c in chunks
        ),
    }
    chunk_refs = [e for e in edges if e["kind"] == "references" and e["scope"] == "chunk"]
    expected_pairs = sum(max(len(by_note.get(n, [])) - 1, 0) for n in note_ids)
    links_per_chunk = sum(len(c["references"] or []) for c in chunks)
    # A link resolves to a stored note's id, or keeps its raw target (unresolved).
    distinct_targets = sum(
        len(
            {
                r["target_id"]
                for c in by_note.get(n, [])
                for r in c["references"] or []
                if r["target_id"] in note_ids
            }
        )
        for n in note_ids
    )
    dangling_refs = sum(
        r["target_id"] not in note_ids for c in chunks for r in c["references"] or []
    )
    add = report.invariants.append
    add(Invariant("belongs_to == chunks", len(chunks), kinds.get("belongs_to", 0)))
    add(Invariant("prev == sum(max(chunks_in_note - 1, 0))", expected_pairs, kinds.get("prev", 0)))
    add(Invariant("next == sum(max(chunks_in_note - 1, 0))", expected_pairs, kinds.get("next", 0)))
    add(Invariant("chunk references == sum of links per chunk", links_per_chunk, len(chunk_refs)))
    add(
        Invariant(
            "backlinks == sum of distinct link targets per note",
            distinct_targets,
            kinds.get("backlink", 0),
        )
    )
    add(
        Invariant(
            "unresolved chunk references == links to no stored note",
            dangling_refs,
            sum(e["status"] == "unresolved" for e in chunk_refs),
        )
    )
    add(
        Invariant(
            "unresolved edges == edges into missing targets",
            sum(e["status"] == "unresolved" for e in edges),
            sum(e["out_table"] == MISSING for e in edges),
        )
    )
    dangling = [
        f"{e['kind']} {e['source_id']} -> {e['target_id']}"
        for e in edges
        if not e["in_exists"] or (e["status"] == "ok" and not e["out_exists"])
    ]
    add(Invariant("edges whose ends are missing", 0, len(dangling), _first(dangling)))
    orphans = sorted(
        {c["chunk_id"] for c in chunks if c["note_id"] not in note_ids}
        | {f"edge of {e['note_id']}" for e in edges if e["note_id"] not in note_ids}
    )
    add(Invariant("chunks and edges of no stored note", 0, len(orphans), _first(orphans)))
    bad_count, bad_order, lossy, bad_hash = [], [], [], []
    for note in notes:
        own = sorted(by_note.get(note["note_id"], []), key=lambda c: int(c["index"]))
        if int(note["chunk_count"]) != len(own):
            bad_count.append(note["path"])
        if [int(c["index"]) for c in own] != list(range(len(own))):
            bad_order.append(note["path"])
        raw: str = note["raw"]
        try:
            body: str | None = body_from_chunks([chunk_from_row(c) for c in own])
        except ValueError:  # the chunks do not tile one body
            body = None
        if body is None or note["frontmatter_text"] + body != raw:
            lossy.append(note["path"])
        if (
            hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()
            != note["hash_fulltext"]
        ):
            bad_hash.append(note["path"])
    add(Invariant("notes whose chunk count is wrong", 0, len(bad_count), _first(bad_count)))
    add(Invariant("notes whose chunk indexes are not 0..n-1", 0, len(bad_order), _first(bad_order)))
    add(Invariant("notes whose chunks do not rebuild the body", 0, len(lossy), _first(lossy)))
    add(
        Invariant(
            "notes whose text does not match hash_fulltext", 0, len(bad_hash), _first(bad_hash)
        )
    )
    dimensions = {int(c["dimension"]) for c in chunks if c["has_vector"]}
    add(Invariant("vector dimensions", min(len(dimensions), 1), len(dimensions)))
    return report
