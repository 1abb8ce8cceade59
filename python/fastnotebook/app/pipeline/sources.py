"""The sources in a database, and removing them: ``fastnotebook sources``
and ``fastnotebook ingest --prune``.

Removing a source removes, in one transaction, everything stored for it:
its chunks and their vectors (``source_embedding``), its insights, its
notebook memberships (``reference``), the embedding state rows of the
source and of its insights, and the source itself. Whatever made the source
unusable (text the database cannot return, say), the records that are left
are whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastnotebook.app.database import Database, RecordID, ensure_record_id

__all__ = [
    "SourceInfo",
    "list_sources",
    "remove_sources",
    "resolve_sources",
    "vanished_sources",
]

_REMOVE = """
BEGIN TRANSACTION;
LET $insights = (SELECT VALUE id FROM source_insight WHERE source IN $ids);
DELETE embedding_state WHERE record IN $ids OR record IN $insights RETURN NONE;
DELETE source_embedding WHERE source IN $ids RETURN NONE;
DELETE source_insight WHERE source IN $ids RETURN NONE;
DELETE reference WHERE in IN $ids RETURN NONE;
DELETE $ids RETURN NONE;
COMMIT TRANSACTION;
"""

# Titles are read with NUL removed: a source stored by an older version with
# NUL in its title must still be listed, so that it can be removed.
_LIST = """
SELECT id, string::replace(title ?? '', $nul, '') AS title, asset.file_path AS path,
    bytes::len(<bytes> (full_text ?? '')) AS size,
    asset.file_size AS file_size, asset.file_mtime_ns AS file_mtime_ns,
    string::contains(full_text ?? '', $nul) AS has_nul
FROM source ORDER BY path, id;
SELECT source, count() AS chunks FROM source_embedding GROUP BY source;
SELECT record, model FROM embedding_state WHERE kind = 'source';
"""


@dataclass(frozen=True)
class SourceInfo:
    """One source as ``fastnotebook sources list`` shows it."""

    id: str
    title: str
    path: str | None
    size: int  # bytes of text
    chunks: int  # stored chunks (with vectors)
    embedded: bool  # embedded by the pipeline (it has a state row)
    model: str | None
    readable: bool  # False: its text holds NUL, which the database cannot return
    exists: bool | None  # whether its file exists (None: not from a file)
    #: Whether its file's size or modification time differ from when it was
    #: ingested (None: not known, e.g. ingested by an older version).
    changed: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


async def list_sources(db: Database) -> list[SourceInfo]:
    """Every source, by path (sources without a file last, by id)."""
    sources, chunks, states = await db.query_all(_LIST, {"nul": "\x00"})
    chunk_counts = {str(row["source"]): int(row["chunks"]) for row in chunks or []}
    models = {str(row["record"]): row.get("model") for row in states or []}
    found = []
    for row in sources or []:
        key = str(row["id"])
        path = row.get("path") if isinstance(row.get("path"), str) else None
        found.append(
            SourceInfo(
                id=key,
                title=row.get("title") or "",
                path=path,
                size=int(row.get("size") or 0),
                chunks=chunk_counts.get(key, 0),
                embedded=key in models,
                model=models.get(key),
                readable=not row.get("has_nul"),
                exists=None if path is None else Path(path).is_file(),
                changed=_changed(path, row.get("file_size"), row.get("file_mtime_ns")),
            )
        )
    return found


def _changed(path: str | None, size: Any, mtime_ns: Any) -> bool | None:
    """Whether the file at ``path`` differs in size or mtime from what was
    ingested (None: no file, or nothing recorded to compare with)."""
    if path is None or not isinstance(size, int) or not isinstance(mtime_ns, int):
        return None
    try:
        now = Path(path).stat()
    except OSError:
        return None
    return (now.st_size, now.st_mtime_ns) != (size, mtime_ns)


async def resolve_sources(
    db: Database, references: Iterable[str]
) -> tuple[list[RecordID], list[str]]:
    """The source ids that ``references`` name (a ``source:...`` id, or a file
    path, relative or absolute, as ingested), and the references that name
    no source."""
    rows = await db.query("SELECT id, asset.file_path AS path FROM source;")
    by_id = {str(row["id"]): row["id"] for row in rows or []}
    by_path: dict[str, list[Any]] = {}
    for row in rows or []:
        if isinstance(row.get("path"), str):
            by_path.setdefault(row["path"], []).append(row["id"])
    ids: dict[str, RecordID] = {}
    unknown = []
    for reference in references:
        matches: list[Any] = []
        if reference in by_id:
            matches = [by_id[reference]]
        else:
            path = str(Path(reference).expanduser().resolve())
            matches = by_path.get(path, []) or by_path.get(reference, [])
        if not matches:
            unknown.append(reference)
        for match in matches:
            record = ensure_record_id(match)
            ids.setdefault(str(record), record)
    return list(ids.values()), unknown


async def vanished_sources(db: Database, roots: Sequence[str | Path]) -> list[tuple[Any, str]]:
    """(id, path) of the sources under ``roots`` (files or folders) whose
    files no longer exist."""
    resolved = [Path(root).expanduser().resolve() for root in roots]
    rows = await db.query(
        "SELECT id, asset.file_path AS path FROM source WHERE asset.file_path != NONE;"
    )
    gone = []
    for row in rows or []:
        path = row.get("path")
        if not isinstance(path, str) or Path(path).exists():
            continue
        if any(Path(path) == root or Path(path).is_relative_to(root) for root in resolved):
            gone.append((row["id"], path))
    return gone


async def remove_sources(db: Database, ids: Sequence[Any]) -> None:
    """Remove the sources ``ids`` and everything stored for them, in one
    transaction (see the module)."""
    if ids:
        await db.query_all(_REMOVE, {"ids": [ensure_record_id(i) for i in ids]})
