"""Block-aware chunk plan of a note body (pure Python reference implementation).

The body is cut into lines (and over-long prose lines into sentences and word
groups); every boundary between two units gets a priority:

- ``MANDATORY`` (5): an H2/H3 section starts, or a block quote / callout of two
  or more lines starts or ends (such a quote is its own chunk),
- ``BLOCK`` (3): between two blocks (paragraph, list group, heading, code, table),
- ``ITEM`` (2): between two top-level items of a list group,
- ``LINE`` (1): between lines of a paragraph, list item or quote,
- ``NEVER`` (0): inside a fenced code block or a table, right after a heading,
  before a blank line (blank lines stay with the block before them).

``ITEM`` and ``LINE`` boundaries only count inside a block larger than the
target maximum: a block that fits is never cut. Chunks grow to the target
maximum and end at the strongest boundary reached after the target minimum;
a code block or table alone over the target maximum is its own chunk (flagged
``oversized`` over the hard maximum); a chunk under the minimum merges with a
neighbour of its section when the two fit under the hard maximum.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from fastnotebook.notes import _scan
from fastnotebook.notes._scan import BLANK, FENCE, HEADING

__all__ = ["PlannedChunk", "plan_chunks"]

NEVER, LINE, ITEM, BLOCK, MANDATORY = 0, 1, 2, 3, 5

CountMany = Callable[[list[str]], list[int]]


@dataclass
class PlannedChunk:
    start: int  # code points into the body
    end: int
    tokens: int
    section: int  # index of the section (chunks never merge across sections)
    own: bool = False  # a quote/callout kept as its own chunk
    oversized: bool = False
    block: str | None = None  # the block kind of an oversized chunk
    metadata: dict[str, object] = field(default_factory=dict)


@dataclass
class _Unit:
    start: int
    end: int
    prio: int  # boundary priority BEFORE this unit
    block: int  # index of the block it belongs to
    tokens: int = 0


@dataclass
class _Block:
    kind: str  # paragraph, list, quote, code, table, heading, rule
    first: int  # first line index
    last: int  # last line index (inclusive, trailing blank lines included)
    own: bool = False


_SENTENCE = re.compile(r"(?<=[.!?\u2026\u3002\uff01\uff1f])[\"')\]]*[ \t]+")
_SPACE = re.compile(r"[ \t]+")


def _blocks(st: _scan.Structure) -> tuple[list[_Block], list[int]]:
    """Blocks of the body and the line-level boundary priority before each line."""
    lines, kinds = st.lines, st.kinds
    n = len(lines)
    prio = [NEVER] * n
    blocks: list[_Block] = []
    section_has_content = False
    i = 0

    def add(kind: str, first: int, last: int, own: bool = False) -> None:
        blocks.append(_Block(kind, first, last, own))

    while i < n:
        kind = kinds[i]
        text = lines[i].text
        start = i
        if kind == BLANK:
            # Leading blank lines: a block of their own that merges forward.
            while i < n and kinds[i] == BLANK:
                i += 1
            add("blank", start, i - 1)
            continue
        if kind == FENCE:
            fid = st.fence_id[i]
            while i < n and kinds[i] == FENCE and st.fence_id[i] == fid:
                i += 1
            add("code", start, i - 1)
        elif kind == HEADING:
            level, _ = st.headings[i]
            i += 1
            add("heading", start, start)
            if level in (2, 3) and section_has_content:
                prio[start] = MANDATORY
                blocks[-1].kind = "section"
            section_has_content = False
        elif _scan._QUOTE.match(text):
            while i < n and (
                (kinds[i] == _scan.TEXT and _scan._QUOTE.match(lines[i].text))
                or (kinds[i] == FENCE and lines[i].text.lstrip().startswith(">"))
            ):
                if i > start:
                    prio[i] = NEVER if kinds[i] == FENCE and kinds[i - 1] == FENCE else LINE
                i += 1
            add("quote", start, i - 1, own=i - start >= 2)
        elif (
            "|" in text
            and i + 1 < n
            and kinds[i + 1] == _scan.TEXT
            and _scan._TABLE_DELIM.match(lines[i + 1].text)
            and ("|" in lines[i + 1].text)
        ):
            i += 2
            while i < n and kinds[i] == _scan.TEXT and "|" in lines[i].text:
                i += 1
            add("table", start, i - 1)
        elif _scan._THEMATIC.match(text):
            i += 1
            add("rule", start, start)
        elif (m := _scan._LIST_ITEM.match(text)) is not None:
            base = len(m.group(1).expandtabs(4))
            i += 1
            while i < n:
                k = kinds[i]
                t = lines[i].text
                if k == BLANK:
                    j = i
                    while j < n and kinds[j] == BLANK:
                        j += 1
                    if j >= n:
                        break
                    nt = lines[j].text
                    indent = len(nt) - len(nt.lstrip(" \t"))
                    if kinds[j] == HEADING or not (_scan._LIST_ITEM.match(nt) or indent > base):
                        break
                    i = j
                    t, k = nt, kinds[j]
                if k == HEADING:
                    break
                if k == FENCE:
                    indent = len(t) - len(t.lstrip(" \t"))
                    if indent <= base and not (i > 0 and kinds[i - 1] == FENCE):
                        break
                    prio[i] = (
                        NEVER
                        if kinds[i - 1] == FENCE and st.fence_id[i - 1] == st.fence_id[i]
                        else LINE
                    )
                    i += 1
                    continue
                if _scan._THEMATIC.match(t) or (
                    _scan._QUOTE.match(t) and len(t) - len(t.lstrip()) <= base
                ):
                    break
                im = _scan._LIST_ITEM.match(t)
                if im is not None and len(im.group(1).expandtabs(4)) <= base + 1:
                    prio[i] = ITEM
                else:
                    prio[i] = LINE
                i += 1
            add("list", start, i - 1)
        else:
            i += 1
            while (
                i < n
                and kinds[i] == _scan.TEXT
                and not _scan._QUOTE.match(lines[i].text)
                and not _scan._LIST_ITEM.match(lines[i].text)
                and not _scan._THEMATIC.match(lines[i].text)
                and not (
                    "|" in lines[i].text
                    and i + 1 < n
                    and _scan._TABLE_DELIM.match(lines[i + 1].text)
                    and "|" in lines[i + 1].text
                )
            ):
                prio[i] = LINE
                i += 1
            add("paragraph", start, i - 1)
        if blocks[-1].kind != "section" and blocks[-1].kind != "heading":
            section_has_content = True
        # Blank lines after a block stay with it.
        while i < n and kinds[i] == BLANK:
            prio[i] = NEVER
            i += 1
        blocks[-1].last = i - 1
        if i < n:
            prio[i] = max(prio[i], BLOCK)
    # Boundaries between blocks; stickiness after headings; own quotes.
    for b, block in enumerate(blocks):
        if b == 0:
            continue
        first = block.first
        prev = blocks[b - 1]
        if prev.kind in ("heading", "section"):
            if block.kind == "section":
                continue  # an empty section merges with the next one
            prio[first] = NEVER
        elif prio[first] != MANDATORY:
            prio[first] = BLOCK
        if block.own and prev.kind not in ("heading", "section"):
            prio[first] = MANDATORY
        if prev.own and block.kind != "blank":
            prio[first] = max(prio[first], MANDATORY)
    return blocks, prio


def _split_long(text: str, offset: int, limit: int, count: CountMany) -> list[tuple[int, int]]:
    """Sub-line pieces of a prose line over ``limit`` tokens: sentences, then
    word groups, then character runs."""
    pieces: list[tuple[int, int]] = []
    pos = 0
    for m in _SENTENCE.finditer(text):
        pieces.append((pos, m.end()))
        pos = m.end()
    pieces.append((pos, len(text)))
    pieces = [p for p in pieces if p[1] > p[0]]
    out: list[tuple[int, int]] = []
    counts = count([text[a:b] for a, b in pieces])
    for (a, b), tokens in zip(pieces, counts, strict=True):
        if tokens <= limit:
            out.append((a, b))
            continue
        # Word groups of about limit/2 tokens.
        chars_per = max(1, (b - a) * (limit // 2) // max(tokens, 1))
        s = a
        while s < b:
            e = min(b, s + chars_per)
            if e < b:
                sp = text.rfind(" ", s + 1, e + 1)
                if sp > s:
                    e = sp + 1
            out.append((s, e))
            s = e
    return [(offset + a, offset + b) for a, b in out]


def plan_chunks(
    body: str,
    limits: tuple[int, int, int, int],
    count: CountMany,
) -> tuple[list[PlannedChunk], _scan.Structure, list[int]]:
    """The chunks of a body (spans tile the body exactly), its structure, and
    the per-line code/table marks of ``atomic_lines`` (for overlap starts)."""
    target_min, target_max, hard_max, small = limits
    st = _scan.structure(body)
    if not body:
        return [], st, []
    blocks, prio = _blocks(st)
    lines = st.lines
    line_tokens = count([ln.text for ln in lines])
    block_of = [0] * len(lines)
    block_tokens = [0] * len(blocks)
    for b, block in enumerate(blocks):
        for i in range(block.first, block.last + 1):
            block_of[i] = b
            block_tokens[b] += line_tokens[i]
    units: list[_Unit] = []
    for i, ln in enumerate(lines):
        b = block_of[i]
        p = prio[i] if i > 0 else MANDATORY
        if p in (ITEM, LINE) and block_tokens[b] <= target_max:
            p = NEVER
        block = blocks[b]
        if line_tokens[i] > target_max and block.kind in ("paragraph", "list", "quote"):
            pieces = _split_long(ln.text, ln.start, target_max, count)
            pieces[-1] = (pieces[-1][0], ln.end)
            piece_tokens = count([body[a:e] for a, e in pieces])
            for k, ((a, e), tk) in enumerate(zip(pieces, piece_tokens, strict=True)):
                units.append(_Unit(a, e, p if k == 0 else LINE, b, tk))
        else:
            units.append(_Unit(ln.start, ln.end, p, b, line_tokens[i]))
    # Greedy packing between mandatory boundaries.
    chunks: list[PlannedChunk] = []
    section = 0
    u = 0
    nu = len(units)
    while u < nu:
        if u > 0 and units[u].prio == MANDATORY and blocks[units[u].block].kind == "section":
            section += 1
        tokens = units[u].tokens
        best: tuple[int, int, int] | None = None  # (prio, index, tokens)
        last_fit: tuple[int, int, int] | None = None
        first_cut: tuple[int, int] | None = None
        v = u + 1
        while True:
            p_here = MANDATORY if v >= nu or units[v].prio == MANDATORY else units[v].prio
            if p_here != NEVER:
                if tokens > target_max:
                    if first_cut is None:
                        first_cut = (v, tokens)
                    break
                last_fit = (p_here, v, tokens)
                if p_here == MANDATORY:
                    break
                if tokens >= target_min and (best is None or p_here >= best[0]):
                    best = (p_here, v, tokens)
            if v >= nu:
                break
            tokens += units[v].tokens
            v += 1
        if last_fit is not None and last_fit[0] == MANDATORY:
            cut, ctoks = last_fit[1], last_fit[2]
        elif best is not None:
            cut, ctoks = best[1], best[2]
        elif last_fit is not None:
            cut, ctoks = last_fit[1], last_fit[2]
        else:
            assert first_cut is not None
            cut, ctoks = first_cut
        start, end = units[u].start, units[cut - 1].end
        kinds = {blocks[units[k].block].kind for k in range(u, cut)}
        own = any(blocks[units[k].block].own for k in range(u, cut))
        chunk = PlannedChunk(start, end, ctoks, section, own=own)
        if ctoks > hard_max:
            chunk.oversized = True
            atomic = kinds & {"code", "table"}
            chunk.block = sorted(atomic)[0] if atomic else sorted(kinds - {"blank"} or kinds)[0]
        chunks.append(chunk)
        u = cut
    # Small chunks merge with a neighbour of their section.
    merged = True
    while merged:
        merged = False
        for k, ch in enumerate(chunks):
            if ch.tokens >= small or ch.own or ch.oversized:
                continue
            options = []
            for j in (k - 1, k + 1):
                if 0 <= j < len(chunks):
                    other = chunks[j]
                    if (
                        other.section == ch.section
                        and not other.own
                        and not other.oversized
                        and other.tokens + ch.tokens <= target_max
                    ):
                        options.append((other.tokens, j))
            if not options:
                continue
            _, j = min(options)
            a, b = min(j, k), max(j, k)
            chunks[a] = PlannedChunk(
                chunks[a].start,
                chunks[b].end,
                chunks[a].tokens + chunks[b].tokens,
                ch.section,
            )
            del chunks[b]
            merged = True
            break
    return chunks, st, atomic_lines(st, blocks)


def atomic_lines(st: _scan.Structure, blocks: Sequence[_Block]) -> list[int]:
    """Per line: 0 prose, 1 first line of a code block or table, 2 inside one."""
    marks = [0] * len(st.lines)
    for block in blocks:
        if block.kind in ("code", "table"):
            last = block.last
            while last > block.first and st.kinds[last] == BLANK:
                last -= 1
            marks[block.first] = 1
            for i in range(block.first + 1, last + 1):
                marks[i] = 2
    return marks


def overlap_start(
    body: str,
    st: _scan.Structure,
    marks: Sequence[int],
    prev_start: int,
    prev_end: int,
    overlap: int,
    count: CountMany,
) -> int:
    """Where the overlap of the chunk after ``body[prev_start:prev_end]`` starts:
    the longest suffix of the previous chunk of at most ``overlap + 10`` tokens
    that starts at a line start or (in prose) a word start, never inside a code
    block or table; ``prev_end`` (no overlap) when none fits."""
    if overlap <= 0 or prev_end <= prev_start:
        return prev_end
    lines = st.lines
    lo, hi = 0, len(lines)
    while lo < hi:  # the first line starting at or after prev_end
        mid = (lo + hi) // 2
        if lines[mid].start < prev_end:
            lo = mid + 1
        else:
            hi = mid
    limit_chars = (overlap + 10) * 16
    candidates: list[int] = []
    i = lo - 1
    while i >= 0 and lines[i].end > prev_start:
        ln = lines[i]
        if marks[i] == 0:
            text = body[ln.start : min(ln.end, prev_end)]
            for m in reversed(list(_SPACE.finditer(text.rstrip()))):
                candidates.append(ln.start + m.end())
        if marks[i] != 2 and ln.start >= prev_start:
            candidates.append(ln.start)
        if ln.start <= prev_start or prev_end - ln.start > limit_chars:
            break
        i -= 1
    candidates = sorted({c for c in candidates if prev_start <= c < prev_end}, reverse=True)
    if not candidates:
        return prev_end
    counts = count([body[c:prev_end] for c in candidates])
    best = prev_end
    for c, tokens in zip(candidates, counts, strict=True):
        if tokens > overlap + 10:
            break
        best = c
    return best
