"""Rebuilding a vault from the store, byte for byte.

``export_vault`` writes every stored note to ``out_dir / note.path`` as the
UTF-8 bytes of its stored full text (front matter and line endings as they
were imported). With ``from_chunks`` each body is rebuilt from the note's
chunks instead (``body_from_chunks``) after its stored front matter text:
the proof that the chunks are lossless. A note whose chunks do not rebuild
its body is an error, not a silently different file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from fastnotebook.app.database import Database, get_database
from fastnotebook.app.vault.store import CHUNK, NOTE
from fastnotebook.errors import InvalidInputError
from fastnotebook.notes import NoteChunk, body_from_chunks

__all__ = ["ExportReport", "chunk_from_row", "export_vault", "safe_relative_path"]


@dataclass
class ExportReport:
    out_dir: str
    files: int = 0
    bytes: int = 0
    from_chunks: bool = False
    mismatches: list[str] = field(default_factory=list)  # notes whose chunks lost text


def safe_relative_path(path: str) -> PurePosixPath:
    """A stored note path as a relative path that stays inside the export
    folder; ``InvalidInputError`` for anything else (absolute, ``..``)."""
    relative = PurePosixPath(path)
    if relative.is_absolute() or not relative.parts or ".." in relative.parts:
        raise InvalidInputError(f"refusing to export a note to {path!r}: not inside the folder")
    return relative


def chunk_from_row(row: dict[str, Any]) -> NoteChunk:
    """A stored chunk row as a ``NoteChunk``."""
    return NoteChunk(
        note_id=row["note_id"],
        id=row["chunk_id"],
        index=int(row["index"]),
        text=row["text"],
        char_start=int(row["char_start"]),
        char_end=int(row["char_end"]),
        start_line=int(row["start_line"]),
        end_line=int(row["end_line"]),
        section_title=row.get("section_title"),
        section_path=tuple(row.get("section_path") or ()),
        prev_id=row.get("prev_id"),
        next_id=row.get("next_id"),
        token_count=int(row["token_count"]),
        char_count=int(row["char_count"]),
        embed_text=row["embed_text"],
        wikilinks=tuple(row.get("wikilinks") or ()),
        references=tuple(row.get("references") or ()),
        metadata=dict(row.get("metadata") or {}),
    )


_CHUNK_FIELDS = (
    "note_id, chunk_id, index, text, char_start, char_end, start_line, end_line, "
    "section_title, section_path, prev_id, next_id, token_count, char_count, embed_text, "
    "wikilinks, references, metadata"
)


async def stored_chunks(db: Database, note_ids: list[str]) -> dict[str, list[NoteChunk]]:
    """The stored chunks of these notes, in order, by note id."""
    rows = await db.query(
        f"SELECT {_CHUNK_FIELDS} FROM {CHUNK} WHERE note_id IN $ids ORDER BY note_id, index;",
        {"ids": note_ids},
    )
    found: dict[str, list[NoteChunk]] = {}
    for row in rows or []:
        found.setdefault(row["note_id"], []).append(chunk_from_row(row))
    return found


async def export_vault(
    out_dir: str | os.PathLike[str],
    db: Database | None = None,
    from_chunks: bool = False,
    batch: int = 200,
) -> ExportReport:
    """Write every stored note under ``out_dir`` (see the module). Existing
    files there are overwritten; nothing else in the folder is touched."""
    db = db or await get_database()
    out = Path(out_dir).expanduser()
    if out.exists() and not out.is_dir():
        raise InvalidInputError(f"{out} is a file, not a folder to export into")
    report = ExportReport(str(out), from_chunks=from_chunks)
    ids = [
        str(i) for i in await db.query(f"SELECT VALUE note_id FROM {NOTE} ORDER BY note_id;") or []
    ]
    for start in range(0, len(ids), batch):
        part = ids[start : start + batch]
        rows = await db.query(
            f"SELECT note_id, path, raw, frontmatter_text FROM {NOTE} WHERE note_id IN $ids;",
            {"ids": part},
        )
        chunks = await stored_chunks(db, part) if from_chunks else {}
        for row in rows or []:
            raw: str = row["raw"]
            if from_chunks:
                try:
                    body = body_from_chunks(chunks.get(row["note_id"], []))
                except ValueError:  # the chunks do not tile one body
                    body = ""
                text = row["frontmatter_text"] + body
                if text != raw:
                    report.mismatches.append(row["path"])
                    continue
            else:
                text = raw
            target = out / safe_relative_path(row["path"])
            target.parent.mkdir(parents=True, exist_ok=True)
            data = text.encode("utf-8", "surrogatepass")
            target.write_bytes(data)
            report.files += 1
            report.bytes += len(data)
    return report
