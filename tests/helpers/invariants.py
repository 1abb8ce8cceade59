"""The chunk invariants every chunker must keep, written once (the Python
oracle): the text chunks of the property, robustness and fuzz-regression
tests, and the chunk records of ``fastnotebook.chunk`` and of note vaults
(``check_spans_and_links``, ``check_records``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from fastnotebook import Chunk
from fastnotebook.notes import NoteChunk
from fastnotebook.token_utils import token_count

MD_HEADERS = [("#", "Header 1"), ("##", "Header 2"), ("###", "Header 3")]
HTML_HEADERS = [("h1", "Header 1"), ("h2", "Header 2"), ("h3", "Header 3")]


def visible(s: str) -> str:
    """What the Markdown splitter keeps that is not whitespace."""
    return "".join(c for c in s if c.isprintable() and not c.isspace())


def non_ws(s: str) -> str:
    return "".join(c for c in s if not c.isspace())


def aligns(text: str, chunks: list[str], gap: str = "") -> bool:
    """Whether the chunks can be placed in ``text`` in order (starts never
    decreasing, each a substring), leaving only whitespace (or ``gap``
    characters) outside them."""
    free = [c.isspace() or c in gap for c in text]
    # free_to[i]: the first position >= i that is not free.
    free_to = list(range(len(text) + 1))
    for i in range(len(text) - 1, -1, -1):
        free_to[i] = free_to[i + 1] if free[i] else i

    @functools.cache
    def place(i: int, start: int, end: int) -> bool:
        if i == len(chunks):
            return free_to[end] == len(text)
        chunk = chunks[i]
        limit = free_to[end]
        q = text.find(chunk, start)
        while q != -1 and q <= limit:
            if place(i + 1, q, max(end, q + len(chunk))):
                return True
            q = text.find(chunk, q + 1)
        return False

    return place(0, 0, 0)


def check_sizes(
    chunks: list[str], size: int, unit: str, source: str, encoding: str = "o200k_base"
) -> None:
    for c in chunks:
        assert c and c == c.strip(), c
        if unit == "chars":
            assert len(c) <= size, (len(c), size)
        else:
            n = token_count(c, encoding)
            assert n <= size or len(c) == 1 or fits_as_pieces(c, size, source, encoding), (c, size)


def fits_as_pieces(chunk: str, size: int, source: str, encoding: str = "o200k_base") -> bool:
    """Whether, at one of its places in ``source``, the chunk cuts into pieces
    (of at most 64 characters, free to take in the whitespace around it) whose
    token counts add up to at most ``size``: the measure of langchain's merge,
    which sums the counts of a chunk's pieces before the chunk is stripped.
    Stripped and counted whole, a chunk may exceed it: "programs" is two
    tokens where " programs" is one (the original does the same; see
    tests/regressions/chunk_tokens)."""
    at = source.find(chunk)
    while at != -1:
        start, end = at, at + len(chunk)
        while start > 0 and source[start - 1].isspace():
            start -= 1
        while end < len(source) and source[end].isspace():
            end += 1
        text, lead, tail = source[start:end], at - start, end - (at + len(chunk))
        best = [0 if j <= lead else size + 1 for j in range(len(text) + 1)]
        for j in range(1, len(text) + 1):
            for i in range(max(0, j - 64), j):
                best[j] = min(best[j], best[i] + token_count(text[i:j], encoding))
        if min(best[len(text) - tail :]) <= size:
            return True
        at = source.find(chunk, at + 1)
    return False


# --- chunk records ---------------------------------------------------------------


def record_span(record: Chunk | NoteChunk) -> tuple[int, int]:
    """Where a record lies in its source: ``(start, end)`` in code points."""
    if isinstance(record, NoteChunk):
        return record.char_start, record.char_end
    return record.start, record.end


def check_spans_and_links(
    source: str, records: Sequence[Chunk] | Sequence[NoteChunk], *, slices: bool = True
) -> None:
    """The rules every chunk record keeps, of a document or of a note body:
    its text is the slice of the source its span gives (unless ``slices`` is
    false: records rebuilt from parts, as JSON's); its index is its place; its
    character and token counts are its text's; its first and last lines are
    those of its first and last character; ``prev_id``/``next_id`` name its
    neighbours; no two records share an id."""
    for i, record in enumerate(records):
        start, end = record_span(record)
        assert 0 <= start <= end <= len(source), (i, record)
        if slices:
            assert source[start:end] == record.text, (i, record)
        assert record.index == i, (i, record)
        assert record.char_count == len(record.text), (i, record)
        assert record.token_count == token_count(record.text), (i, record)
        assert record.start_line == source.count("\n", 0, start) + 1, (i, record)
        assert record.end_line == source.count("\n", 0, max(start, end - 1)) + 1, (i, record)
        assert record.prev_id == (records[i - 1].id if i else None), (i, record)
        assert record.next_id == (records[i + 1].id if i + 1 < len(records) else None), (i, record)
    assert len({r.id for r in records}) == len(records)


def check_records(
    source: str,
    chunks: Sequence[Chunk],
    *,
    max_size: int,
    length: Callable[[str], int],
    covered_from: int = 0,
    slices: bool = True,
) -> None:
    """``check_spans_and_links``, then what ``fastnotebook.chunk`` adds: spans
    in order, the hard maximum, no degenerate chunk, and every non-whitespace
    code point from ``covered_from`` on in some chunk, except runs without a
    letter or digit that had no room in a neighbour (dropped, as documented)."""
    check_spans_and_links(source, chunks, slices=slices)
    covered = [False] * len(source)
    prev_start = prev_end = -1
    for i, c in enumerate(chunks):
        assert c.start >= prev_start and c.end >= prev_end, (i, c)
        prev_start, prev_end = c.start, c.end
        assert c.text.strip(), (i, c)
        assert any(ch.isalnum() for ch in c.text), (i, c)
        assert length(c.text) <= max_size, (i, length(c.text), c)
        for k in range(c.start, c.end):
            covered[k] = True
    missing = [
        k for k in range(covered_from, len(source)) if not covered[k] and not source[k].isspace()
    ]
    dropped_words = [k for k in missing if source[k].isalnum()]
    assert not dropped_words, (len(missing), source[missing[0] : missing[0] + 40])


def grapheme_boundaries(text: str) -> set[int]:
    """The code-point offsets between extended grapheme clusters (UAX #29, as
    the ``regex`` module's ``\\X`` finds them), both ends included."""
    import regex

    return {m.start() for m in regex.finditer(r"\X", text)} | {len(text)}


def check_grapheme_cuts(
    source: str, chunks: Sequence[Chunk], *, max_size: int, length: Callable[[str], int]
) -> None:
    """Every chunk starts and ends between grapheme clusters unless the cluster
    it cuts alone exceeds ``max_size``, and its own text is within ``max_size``
    (one character above it may stand alone)."""
    import regex

    boundaries = grapheme_boundaries(source)
    clusters = [(m.start(), m.end()) for m in regex.finditer(r"\X", source)]
    for i, c in enumerate(chunks):
        assert source[c.start : c.end] == c.text, (i, c)
        for at in (c.start, c.end):
            if at not in boundaries:
                a, b = next((a, b) for a, b in clusters if a < at < b)
                assert length(source[a:b]) > max_size, (i, at, source[a:b], c)
        assert length(c.text) <= max_size or len(c.text) == 1, (i, length(c.text), c)
