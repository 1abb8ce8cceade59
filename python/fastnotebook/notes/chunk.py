"""Chunking a note body into ``NoteChunk`` records."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

from fastnotebook import _core
from fastnotebook.notes import _plan
from fastnotebook.notes._scan import BLANK
from fastnotebook.notes.config import NotesConfig
from fastnotebook.notes.model import Note, NoteChunk

__all__ = ["body_from_chunks", "chunk_note"]

_DEFAULT = NotesConfig()

Resolve = Callable[[str, Note], str | None]


def chunk_note(
    note: Note,
    config: NotesConfig = _DEFAULT,
    *,
    resolve: Resolve | None = None,
) -> list[NoteChunk]:
    """The chunks of a note's body (see ``docs/notes-rules.md`` for the rules).

    ``resolve(target, note)`` maps a link target to a note id (``None`` when
    it does not resolve); without it ``wikilinks`` and ``references`` carry the
    raw targets.
    """
    body = note.body
    encoding = config.encoding

    def count(texts: list[str]) -> list[int]:
        return _core.token_counts(texts, encoding) if texts else []

    planned, st, marks = _plan.plan_chunks(body, config.limits_for(note.type), count)
    if not planned:
        return []
    texts = [body[p.start : p.end] for p in planned]
    tokens = count(texts)
    # Section path at each chunk's first non-blank line.
    paths: list[tuple[str, ...]] = []
    stack: list[tuple[int, str]] = []
    line_starts = [ln.start for ln in st.lines]
    li = 0
    for p in planned:
        first = bisect.bisect_right(line_starts, p.start) - 1
        while (
            first < len(st.lines) - 1 and st.kinds[first] == BLANK and st.lines[first].end < p.end
        ):
            first += 1
        while li <= first:
            h = st.headings.get(li)
            if h is not None:
                level, title = h
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, title))
            li += 1
        paths.append(tuple(title for _, title in stack))
    link_starts = [link.start for link in note.links]
    ids = [f"{note.id}#c{k:02d}" for k in range(len(planned))]
    chunks: list[NoteChunk] = []
    for k, (p, text, tk) in enumerate(zip(planned, texts, tokens, strict=True)):
        ov = p.start
        if k > 0 and config.overlap > 0:
            prev = planned[k - 1]
            ov = _plan.overlap_start(body, st, marks, prev.start, prev.end, config.overlap, count)
        lo = bisect.bisect_left(link_starts, p.start)
        hi = bisect.bisect_left(link_starts, p.end)
        wikilinks: list[str] = []
        references: list[dict[str, str]] = []
        for link in note.links[lo:hi]:
            target = (resolve(link.target, note) if resolve else None) or link.target
            if target not in wikilinks:
                wikilinks.append(target)
            if not link.in_suggestions:
                references.append({"kind": link.kind, "target_id": target})
        metadata: dict[str, object] = {"overlap_start": ov}
        if p.oversized:
            metadata["oversized"] = True
            metadata["block"] = p.block
        if p.own:
            metadata["block"] = "quote"
        path = paths[k]
        chunks.append(
            NoteChunk(
                note_id=note.id,
                id=ids[k],
                index=k,
                text=text,
                char_start=p.start,
                char_end=p.end,
                start_line=body.count("\n", 0, p.start) + 1,
                end_line=body.count("\n", 0, max(p.end - 1, p.start)) + 1,
                section_title=path[-1] if path else None,
                section_path=path,
                prev_id=ids[k - 1] if k > 0 else None,
                next_id=ids[k + 1] if k + 1 < len(planned) else None,
                token_count=tk,
                char_count=len(text),
                embed_text=body[ov : p.end],
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
