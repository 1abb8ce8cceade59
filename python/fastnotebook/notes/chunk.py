"""Chunking a note body into ``NoteChunk`` records."""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
    limits = config.limits_for(note.type)
    cached = note.__dict__.get(PLAN_ATTRIBUTE)
    if cached is not None and cached[0] == (limits, config.overlap, config.encoding):
        plan = cached[1]
    else:
        plan = _core._notes_chunk(note.body, limits, config.overlap, config.encoding)
    lookup = None if resolve is None else (lambda target: resolve(target, note))
    return _core._notes_chunks(note.id, note.body, plan, note.links, lookup)


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
