"""Invariants every chunk-record strategy keeps (``fastnotebook.chunk``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fastnotebook import Chunk
from fastnotebook.token_utils import token_count


def check_records(
    source: str,
    chunks: Sequence[Chunk],
    *,
    max_size: int,
    length: Callable[[str], int],
    covered_from: int = 0,
    slices: bool = True,
) -> None:
    """Spans, order, lines, counts, links, the hard maximum, no degenerate
    chunk, and every non-whitespace code point from ``covered_from`` on in
    some chunk, except runs without a letter or digit that had no room in a
    neighbour (dropped, as documented)."""
    covered = [False] * len(source)
    prev_start = prev_end = -1
    for i, c in enumerate(chunks):
        if slices:
            assert source[c.start : c.end] == c.text, (i, c)
        assert c.index == i
        assert c.start >= prev_start and c.end >= prev_end, (i, c)
        prev_start, prev_end = c.start, c.end
        assert c.start_line == source.count("\n", 0, c.start) + 1
        assert c.end_line == source.count("\n", 0, max(c.start, c.end - 1)) + 1
        assert c.char_count == len(c.text)
        assert c.token_count == token_count(c.text), (i, c)
        assert c.text.strip(), (i, c)
        assert any(ch.isalnum() for ch in c.text), (i, c)
        assert length(c.text) <= max_size, (i, length(c.text), c)
        assert c.prev_id == (chunks[i - 1].id if i else None)
        assert c.next_id == (chunks[i + 1].id if i + 1 < len(chunks) else None)
        for k in range(c.start, c.end):
            covered[k] = True
    assert len({c.id for c in chunks}) == len(chunks)
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
