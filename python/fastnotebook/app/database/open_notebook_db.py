"""A database as Open Notebook makes it: its own migrations, applied from a
checkout, and sources with the fields its code writes.

Used by the benchmark (``benches/bench_pipeline.py --open-notebook``) and the
tests to run ``embed`` on Open Notebook's schema: a SCHEMAFULL
``source_embedding`` with typed fields, a BM25 index on chunk content and
``fn::vector_search``, which scores every stored chunk.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fastnotebook.app.database import Database, RecordID
from fastnotebook.errors import DatabaseOperationError

__all__ = ["add_sources", "apply_migrations", "migration_files", "vector_search"]


def migration_files(src: Path) -> list[Path]:
    """The up migrations of the checkout ``src``, in order (1, 2, ... 10)."""
    folder = src / "open_notebook" / "database" / "migrations"
    files = [p for p in folder.glob("*.surrealql") if re.fullmatch(r"\d+", p.stem)]
    if not files:
        raise FileNotFoundError(f"no migrations in {folder}")
    return sorted(files, key=lambda p: int(p.stem))


def _statements(path: Path) -> str:
    # As Open Notebook runs a migration file: without its comment lines.
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return " ".join(line for line in lines if line and not line.startswith("--"))


async def apply_migrations(db: Database, src: Path) -> list[str]:
    """Apply every up migration of ``src`` to ``db``, in order, each as one
    request, as Open Notebook does; the errors of its statements, which
    Open Notebook's runner does not check either (some clean up tables that
    a new database does not have)."""
    errors: list[str] = []
    for path in migration_files(src):
        try:
            await db.query_all(_statements(path))
        except DatabaseOperationError as e:
            errors.append(f"{path.name}: {e}")
    return errors


async def add_sources(db: Database, documents: Iterable[tuple[str, str]]) -> list[RecordID]:
    """One source per (file path, text), with the fields Open Notebook's
    ``Source`` has for an uploaded file; their ids."""
    rows: list[dict[str, Any]] = [
        {"title": Path(path).name, "full_text": text, "asset": {"file_path": path}}
        for path, text in documents
    ]
    ids: list[RecordID] = []
    for start in range(0, len(rows), 256):
        ids += await db.query(
            "INSERT INTO source $rows RETURN VALUE id;", {"rows": rows[start : start + 256]}
        )
    return ids


async def vector_search(
    db: Database, query: list[float], count: int, minimum: float = 0.0
) -> list[dict[str, Any]]:
    """Open Notebook's own ``fn::vector_search`` over sources (not notes)."""
    found = await db.query(
        "RETURN fn::vector_search($query, $count, true, false, $minimum);",
        {"query": query, "count": count, "minimum": minimum},
    )
    return list(found or [])
