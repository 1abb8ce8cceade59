"""Shared by the tests of the stored note vault (tests/app/test_notes_*.py):
the real-vault folders, byte comparison of an exported folder, snapshots of
what the store holds per note."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from fastnotebook.app.database import Database

VAULT_ENV = "FASTNOTEBOOK_TEST_VAULT"


def real_vaults() -> list[Path]:
    """The real vault folders named by ``FASTNOTEBOOK_TEST_VAULT`` (several
    separated by ``os.pathsep``); the test is skipped, saying why, when unset."""
    raw = os.environ.get(VAULT_ENV, "").strip()
    if not raw:
        pytest.skip(f"{VAULT_ENV} is not set (a real vault folder, e.g. obsidian-help/en)")
    folders = [Path(p) for p in raw.split(os.pathsep) if p.strip()]
    missing = [str(p) for p in folders if not p.is_dir()]
    if missing:
        pytest.skip(f"{VAULT_ENV} names missing folders: {', '.join(missing)}")
    return folders


def markdown_files(root: Path) -> dict[str, bytes]:
    """Every *.md under ``root`` outside dot-folders, by relative path."""
    found = {}
    for path in root.rglob("*.md"):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        found[rel.as_posix()] = path.read_bytes()
    return found


def assert_same_files(expected: dict[str, bytes], out: Path) -> None:
    """``out`` holds exactly the ``expected`` files, byte for byte."""
    written = markdown_files(out)
    assert sorted(written) == sorted(expected)
    different = [rel for rel, data in expected.items() if written[rel] != data]
    assert not different, f"not byte-identical: {different[:5]}"


async def snapshot(db: Database) -> dict[str, Any]:
    """What the store holds: chunks (id -> text, embed hash, vector?) and
    edges (owner note -> sorted edge tuples) and note rows (id -> hashes)."""
    chunks = await db.query(
        "SELECT chunk_id, text, embed_hash, embedding != NONE AS vector FROM vault_chunk;"
    )
    edges = await db.query(
        "SELECT note_id, kind, source_id, target_id, scope, status FROM vault_edge;"
    )
    notes = await db.query("SELECT note_id, path, hash_fulltext, edges_hash FROM vault_note;")
    by_note: dict[str, list[tuple[str, ...]]] = {}
    for e in edges or []:
        by_note.setdefault(e["note_id"], []).append(
            (e["kind"], e["source_id"], e["target_id"], e["scope"], e["status"])
        )
    return {
        "chunks": {c["chunk_id"]: (c["text"], c["embed_hash"], c["vector"]) for c in chunks or []},
        "edges": {k: sorted(v) for k, v in by_note.items()},
        "notes": {n["note_id"]: (n["path"], n["hash_fulltext"]) for n in notes or []},
    }


def changed_keys(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    return {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
