"""The chunk invariants every chunker must keep, written once: used by the
property tests, the robustness tests and the fuzz-regression replays."""

from __future__ import annotations

import functools

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
