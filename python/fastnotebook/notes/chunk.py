"""Chunking a note body into ``NoteChunk`` records."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from typing import Any

from fastnotebook import _core
from fastnotebook.notes.config import NotesConfig
from fastnotebook.notes.model import Note, NoteChunk
from fastnotebook.notes.parse import PLAN_ATTRIBUTE

__all__ = ["body_from_chunks", "chunk_note"]

_DEFAULT = NotesConfig()

Resolve = Callable[[str, Note], str | None]


def chunk_note(
    note: Note,
    config: NotesConfig = _DEFAULT,
    *,
    resolve: Resolve | None = None,
) -> list[NoteChunk]:
    """The chunks of a note's body (the rules: ``docs/notes-rules.md``).

    ``resolve(target, note)`` maps a link target to a note id (``None`` when
    it does not resolve); without it ``wikilinks`` and ``references`` carry the
    raw targets. Links in a suggestions section appear in ``wikilinks`` but
    not in ``references`` (they create no edges).
    """
    body = note.body
    limits = config.limits_for(note.type)
    cached = note.__dict__.get(PLAN_ATTRIBUTE)
    if cached is not None and cached[0] == (limits, config.overlap, config.encoding):
        rows = cached[1]
    else:
        rows = _core._notes_chunk(body, limits, config.overlap, config.encoding)
    if not rows:
        return []
    links = note.links
    link_starts = [link.start for link in links]
    resolved: dict[str, str] = {}
    ids = [f"{note.id}#c{k:02d}" for k in range(len(rows))]
    last = len(rows) - 1
    chunks: list[NoteChunk] = []
    for k, row in enumerate(rows):
        start, end, ov, tokens, first_line, last_line, path, own, oversized, block = row
        lo = bisect.bisect_left(link_starts, start)
        hi = bisect.bisect_left(link_starts, end)
        wikilinks: list[str] = []
        references: list[dict[str, str]] = []
        for link in links[lo:hi]:
            target = resolved.get(link.target)
            if target is None:
                target = (resolve(link.target, note) if resolve else None) or link.target
                resolved[link.target] = target
            if target not in wikilinks:
                wikilinks.append(target)
            if not link.in_suggestions:
                references.append({"kind": link.kind, "target_id": target})
        metadata: dict[str, Any] = {"overlap_start": ov}
        if oversized:
            metadata["oversized"] = True
            metadata["block"] = block
        elif own:
            metadata["block"] = "quote"
        text = body[start:end]
        chunks.append(
            NoteChunk(
                note_id=note.id,
                id=ids[k],
                index=k,
                text=text,
                char_start=start,
                char_end=end,
                start_line=first_line,
                end_line=last_line,
                section_title=path[-1] if path else None,
                section_path=tuple(path),
                prev_id=ids[k - 1] if k > 0 else None,
                next_id=ids[k + 1] if k < last else None,
                token_count=tokens,
                char_count=end - start,
                embed_text=body[ov:end],
                wikilinks=tuple(wikilinks),
                references=tuple(references),
                metadata=metadata,
            )
        )
    return chunks


def body_from_chunks(chunks: Sequence[NoteChunk]) -> str:
    """The note body back from its chunks (ordered by index; overlap ignored).

    Raises ``ValueError`` when the chunks do not tile one body (a gap, an
    overlap of spans, or chunks of several notes).
    """
    ordered = sorted(chunks, key=lambda c: c.index)
    pos = 0
    parts: list[str] = []
    for chunk in ordered:
        if chunk.note_id != ordered[0].note_id:
            raise ValueError("chunks of several notes given to body_from_chunks")
        if chunk.char_start != pos:
            raise ValueError(
                f"chunk {chunk.id} starts at {chunk.char_start}, expected {pos}: "
                "the chunks do not tile"
            )
        if len(chunk.text) != chunk.char_end - chunk.char_start:
            raise ValueError(f"chunk {chunk.id}: text length does not match its span")
        parts.append(chunk.text)
        pos = chunk.char_end
    return "".join(parts)
