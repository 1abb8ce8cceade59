"""The line-level rules of note bodies (pure Python reference implementation).

Front matter split, fenced code blocks, code spans, headings, link scan, hash
normalisation and the block structure the chunker cuts at. Offsets are code
points. Every scan is linear in the length of the text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "Line",
    "Structure",
    "first_h1",
    "frontmatter_end",
    "normalise",
    "scan_links",
    "structure",
]


def frontmatter_end(raw: str) -> int:
    """Length of the front matter block at the top of ``raw`` (0 when none)."""
    pos = 1 if raw.startswith("\ufeff") else 0
    nl = raw.find("\n", pos)
    if nl < 0:
        return 0
    if raw[pos:nl].rstrip("\r").rstrip(" \t") != "---":
        return 0
    start = nl + 1
    while start < len(raw):
        nl = raw.find("\n", start)
        line_end = len(raw) if nl < 0 else nl + 1
        line = raw[start:line_end].rstrip("\r\n").rstrip(" \t")
        if line in ("---", "..."):
            return line_end
        start = line_end
    return 0


def normalise(text: str, *, canonical: bool) -> str:
    """``\\r\\n`` -> ``\\n``, trailing spaces/tabs trimmed per line; ``canonical``
    also reduces runs of blank lines to one."""
    lines = text.replace("\r\n", "\n").split("\n")
    out: list[str] = []
    previous_blank = False
    for line in lines:
        line = line.rstrip(" \t")
        blank = not line
        if canonical and blank and previous_blank:
            continue
        out.append(line)
        previous_blank = blank
    return "\n".join(out)


@dataclass(frozen=True)
class Line:
    start: int  # offset of the line's first character
    end: int  # offset after its line end
    text: str  # without the line end


_FENCE = re.compile(r"^[ \t]*(?:>[ \t]?)*[ \t]*(`{3,}|~{3,})(.*)$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_LIST_ITEM = re.compile(r"^([ \t]*)(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_QUOTE = re.compile(r"^ {0,3}>")
_TABLE_DELIM = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_THEMATIC = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")


def _split_lines(text: str) -> list[Line]:
    lines: list[Line] = []
    start = 0
    n = len(text)
    while start < n:
        nl = text.find("\n", start)
        end = n if nl < 0 else nl + 1
        content = text[start:end].rstrip("\n").removesuffix("\r")
        lines.append(Line(start, end, content))
        start = end
    return lines


def _heading(text: str) -> tuple[int, str] | None:
    m = _HEADING.match(text)
    if m is None:
        return None
    title = _CLOSING_HASHES.sub("", m.group(2) or "").strip()
    return len(m.group(1)), title


# Line kinds.
BLANK, TEXT, HEADING, FENCE = "blank", "text", "heading", "fence"


@dataclass
class Structure:
    lines: list[Line]
    kinds: list[str]  # BLANK / TEXT / HEADING / FENCE (every line of a fenced block)
    fence_id: list[int]  # per line: index of its fenced block, -1 outside
    headings: dict[int, tuple[int, str]]  # line index -> (level, title)
    code_spans: list[tuple[int, int]]  # offsets of inline code spans (outside fences)


def structure(body: str) -> Structure:
    """Lines, fenced blocks, headings and code spans of a body."""
    lines = _split_lines(body)
    kinds: list[str] = []
    fence_id: list[int] = []
    headings: dict[int, tuple[int, str]] = {}
    fence: tuple[str, int] | None = None
    fences = 0
    for i, line in enumerate(lines):
        text = line.text
        if fence is not None:
            kinds.append(FENCE)
            fence_id.append(fences - 1)
            m = _FENCE.match(text)
            if (
                m
                and m.group(1)[0] == fence[0]
                and len(m.group(1)) >= fence[1]
                and not m.group(2).strip()
            ):
                fence = None
            continue
        m = _FENCE.match(text)
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence = (m.group(1)[0], len(m.group(1)))
            fences += 1
            kinds.append(FENCE)
            fence_id.append(fences - 1)
            continue
        fence_id.append(-1)
        if not text.strip():
            kinds.append(BLANK)
            continue
        h = _heading(text)
        if h is not None:
            headings[i] = h
            kinds.append(HEADING)
            continue
        kinds.append(TEXT)
    spans = _code_spans(body, lines, kinds)
    return Structure(lines, kinds, fence_id, headings, spans)


_BACKTICKS = re.compile(r"`+")


def _code_spans(body: str, lines: list[Line], kinds: list[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    i = 0
    n = len(lines)
    while i < n:
        if kinds[i] not in (TEXT, HEADING):
            i += 1
            continue
        j = i + 1
        if kinds[i] == TEXT:
            while j < n and kinds[j] == TEXT:
                j += 1
        start, end = lines[i].start, lines[j - 1].end
        runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(body, start, end)]
        nxt = [-1] * len(runs)
        seen: dict[int, int] = {}
        for k in range(len(runs) - 1, -1, -1):
            length = runs[k][1] - runs[k][0]
            nxt[k] = seen.get(length, -1)
            seen[length] = k
        k = 0
        while k < len(runs):
            if nxt[k] >= 0:
                spans.append((runs[k][0], runs[nxt[k]][1]))
                k = nxt[k] + 1
            else:
                k += 1
        i = j
    return spans


def first_h1(body: str) -> str | None:
    """The title of the first H1 outside code blocks, if any."""
    st = structure(body)
    for i in sorted(st.headings):
        level, title = st.headings[i]
        if level == 1 and title:
            return title
    return None


def _masked(body: str, st: Structure) -> str:
    """The body with fenced blocks and code spans blanked (same offsets)."""
    regions: list[tuple[int, int]] = []
    i = 0
    n = len(st.lines)
    while i < n:
        if st.kinds[i] == FENCE:
            j = i
            while j < n and st.kinds[j] == FENCE:
                j += 1
            regions.append((st.lines[i].start, st.lines[j - 1].end))
            i = j
        else:
            i += 1
    regions.extend(st.code_spans)
    regions.sort()
    parts: list[str] = []
    pos = 0
    for a, b in regions:
        if a < pos:
            a = pos
        if b <= a:
            continue
        parts.append(body[pos:a])
        parts.append(re.sub(r"[^\n]", " ", body[a:b]))
        pos = b
    parts.append(body[pos:])
    return "".join(parts)


def suggestion_ranges(st: Structure, suggestion_headings: Sequence[str]) -> list[tuple[int, int]]:
    """Offsets of the sections under a suggestions heading (to the next heading
    of the same or a higher level)."""
    wanted = {_heading_key(h) for h in suggestion_headings}
    ranges: list[tuple[int, int]] = []
    open_level: int | None = None
    open_start = 0
    for i in sorted(st.headings):
        level, title = st.headings[i]
        if open_level is not None and level <= open_level:
            ranges.append((open_start, st.lines[i].start))
            open_level = None
        if open_level is None and _heading_key(title) in wanted:
            open_level = level
            open_start = st.lines[i].start
    if open_level is not None:
        ranges.append((open_start, st.lines[-1].end if st.lines else 0))
    return ranges


def _heading_key(title: str) -> str:
    return title.strip().rstrip(":").strip().casefold()


_WIKI = re.compile(r"(!?)\[\[([^\[\]\n]*)\]\]")
_MDLINK = re.compile(
    r"(!?)\[([^\[\]\n]*)\]\([ \t]*(<[^<>\n]*>|[^\s()<>]+)"
    r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'))?[ \t]*\)"
)

# (kind, start, end, inner, url, in_suggestions): inner is the text between
# `[[`/`]]` for wikilinks, the link text for Markdown links (url their target).
ScannedLink = tuple[str, int, int, str, str | None, bool]


def scan_links(body: str, suggestion_headings: Sequence[str]) -> list[ScannedLink]:
    """Every wikilink, embed and Markdown link outside code, in body order."""
    st = structure(body)
    masked = _masked(body, st)
    ranges = suggestion_ranges(st, suggestion_headings)
    found: list[tuple[str, int, int, str, str | None]] = []
    taken: list[tuple[int, int]] = []
    for m in _WIKI.finditer(masked):
        kind = "embed" if m.group(1) else "wikilink"
        found.append((kind, m.start(), m.end(), body[m.start(2) : m.end(2)], None))
        taken.append((m.start(), m.end()))
    for m in _MDLINK.finditer(masked):
        if any(a <= m.start() < b for a, b in taken):
            continue
        kind = "embed" if m.group(1) else "markdown"
        found.append(
            (kind, m.start(), m.end(), body[m.start(2) : m.end(2)], body[m.start(3) : m.end(3)])
        )
    found.sort(key=lambda f: f[1])
    out: list[ScannedLink] = []
    r = 0
    for kind, start, end, inner, url in found:
        while r < len(ranges) and ranges[r][1] <= start:
            r += 1
        in_sugg = r < len(ranges) and ranges[r][0] <= start < ranges[r][1]
        out.append((kind, start, end, inner, url, in_sugg))
    return out
