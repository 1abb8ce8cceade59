"""``fastnotebook chunk FILE --strategy S``: the :func:`fastnotebook.chunk`
records of one file, as text, JSON lines, a terminal view or an HTML page.

Without ``--strategy``, ``--view`` or ``--html`` the command prints Open
Notebook's ``chunk_text`` strings (``tools.cmd_chunk``); with any of them it
runs :func:`fastnotebook.chunk` with the strategy (``recursive`` by default).

The view shows the source once, each chunk's text in a colour that
alternates from chunk to chunk, the overlaps (text in two chunks or more) on
a yellow background and the text in no chunk dimmed. Without colour (the
``NO_COLOR`` variable, ``--color never``, or output that is not a terminal)
the chunks are marked in the text: ``[#3>`` where chunk 3 starts and
``<#3]`` where it ends, so an overlap is the text between ``[#4>`` and
``<#3]``.
"""

from __future__ import annotations

import argparse
import html
import itertools
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from fastnotebook.app.cli.errors import EXIT_USAGE, CliError
from fastnotebook.chunkers import STRATEGIES, Chunk, chunk, html_text

__all__ = [
    "Segment",
    "add_options",
    "cmd_records",
    "render_html",
    "render_view",
    "segments",
    "use_colour",
    "wanted",
]

DEFAULT_SIZE = {"chars": 1500, "tokens": 400}

# ANSI styles of the view: two alternating chunk colours, the overlap, the
# text no chunk holds.
_STYLE = {
    "even": "\x1b[36m",
    "odd": "\x1b[35m",
    "overlap": "\x1b[30;43m",
    "gap": "\x1b[2m",
}
_RESET = "\x1b[0m"


def add_options(parser: argparse.ArgumentParser) -> None:
    """The record options of ``fastnotebook chunk``."""
    parser.add_argument(
        "--strategy",
        choices=list(STRATEGIES),
        help="chunk with fastnotebook.chunk and this strategy (docs/strategies.md); "
        "overlap 0 unless --overlap; the semantic ones use the offline model",
    )
    parser.add_argument(
        "--view",
        action="store_true",
        help="show the chunks in the source: alternating colours, overlaps highlighted "
        "(markers [#i> ... <#i] without colour)",
    )
    parser.add_argument(
        "--color",
        choices=["auto", "always", "never"],
        default="auto",
        help="colours of --view (auto: on a terminal, unless NO_COLOR is set)",
    )
    parser.add_argument(
        "--html",
        metavar="OUT",
        help="write a self-contained HTML page of the chunks (span, overlap, headings "
        "and tokens on hover)",
    )


def wanted(args: argparse.Namespace) -> bool:
    """Whether the options ask for records rather than ``chunk_text``'s strings."""
    return bool(args.strategy or args.view or args.html)


def use_colour(choice: str, stream: TextIO) -> bool:
    """``--color``: ``auto`` is colour on a terminal unless ``NO_COLOR`` is set
    (to anything but the empty string, https://no-color.org)."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


@dataclass(frozen=True)
class _Options:
    strategy: str
    unit: str
    size: int
    overlap: int
    encoding: str


def _options(args: argparse.Namespace) -> _Options:
    strategy = args.strategy or "recursive"
    unit = args.unit or ("tokens" if strategy == "token" else "chars")
    if strategy == "token" and unit != "tokens":
        raise CliError("--strategy token counts tokens: drop --unit chars", code=EXIT_USAGE)
    size = DEFAULT_SIZE[unit] if args.size is None else args.size
    overlap = 0 if args.overlap is None else args.overlap
    if size < 1:
        raise CliError(f"--size ({size}) must be a positive integer", code=EXIT_USAGE)
    if overlap < 0:
        raise CliError(f"--overlap ({overlap}) cannot be negative", code=EXIT_USAGE)
    if overlap >= size:
        raise CliError(f"--overlap ({overlap}) cannot be >= chunk size ({size})", code=EXIT_USAGE)
    if strategy == "json" and overlap:
        raise CliError("--strategy json takes no --overlap: each chunk is a document")
    return _Options(strategy, unit, size, overlap, args.encoding or "o200k_base")


def _records(text: str, options: _Options) -> list[Chunk]:
    semantic = options.strategy.startswith("semantic")
    try:
        return chunk(
            text,
            options.strategy,  # type: ignore[arg-type]
            chunk_size=options.size,
            unit=options.unit,  # type: ignore[arg-type]
            overlap=options.overlap,
            encoding=options.encoding,
            embed="default" if semantic else None,
        )
    except (ModuleNotFoundError, RuntimeError) as e:
        if not semantic:
            raise
        raise CliError(
            f"--strategy {options.strategy} embeds with the offline model, which cannot be "
            f"loaded ({e}): pip install 'fastnotebook[local]'"
        ) from e


def cmd_records(args: argparse.Namespace, read: Callable[[Path], str]) -> int:
    """``fastnotebook chunk FILE --strategy S``; ``read`` reads the file (one
    clear line for a missing, folder or binary file)."""
    options = _options(args)
    path = Path(args.file)
    source = read(path)
    chunks = _records(source, options)
    # The html strategy cuts the HTML's text, the others the source.
    shown = html_text(source) if options.strategy == "html" else source
    out = sys.stdout
    if args.json:
        for c in chunks:
            out.write(json.dumps(c.to_dict(), ensure_ascii=False, default=str) + "\n")
    elif args.view:
        out.write(render_view(shown, chunks, colour=use_colour(args.color, out)))
    elif not args.html:
        _print_records(path, options, shown, chunks, out)
    if args.html:
        page = render_html(shown, chunks, title=f"{path.name}: {_describe(options)}")
        try:
            Path(args.html).write_text(page, encoding="utf-8", errors="replace")
        except OSError as e:
            raise CliError(f"cannot write {args.html}: {e.strerror or e}") from e
        told = sys.stderr if args.json or args.view else out
        print(f"wrote {args.html}: {len(chunks)} chunks of {path}", file=told)
    return 0


def _describe(options: _Options) -> str:
    overlap = f", overlap {options.overlap}" if options.overlap else ""
    encoding = f" ({options.encoding})" if options.unit == "tokens" else ""
    return f"{options.strategy}, {options.size} {options.unit}{encoding}{overlap}"


def _about(c: Chunk) -> str:
    """One line on a chunk: span, lines, sizes, heading path."""
    lines = (
        f"line {c.start_line}"
        if c.start_line == c.end_line
        else f"lines {c.start_line}-{c.end_line}"
    )
    about = f"[{c.start}:{c.end}] {lines}, {c.token_count} tokens, {c.char_count} characters"
    if c.headings:
        about += " · " + " > ".join(c.headings)
    return about


def _print_records(
    path: Path, options: _Options, text: str, chunks: Sequence[Chunk], out: TextIO
) -> None:
    out.write(f"{path}: {_describe(options)}; {len(text):,} characters, {len(chunks)} chunks\n")
    for c in chunks:
        out.write(f"--- chunk {c.index} {_about(c)}\n{c.text}\n")


@dataclass(frozen=True)
class Segment:
    """A stretch of the shown text held by the same chunks (their indices)."""

    start: int
    end: int
    chunks: tuple[int, ...]


def segments(length: int, chunks: Sequence[Chunk]) -> list[Segment]:
    """The text ``[0, length)`` cut where any chunk starts or ends: each piece
    with the chunks that hold it (none: a gap, two or more: an overlap)."""
    spans = [(max(0, min(c.start, length)), max(0, min(c.end, length))) for c in chunks]
    cuts = sorted({0, length, *(a for a, _ in spans), *(b for _, b in spans)})
    starting: dict[int, list[int]] = {}
    ending: dict[int, list[int]] = {}
    for i, (a, b) in enumerate(spans):
        if a < b:
            starting.setdefault(a, []).append(i)
            ending.setdefault(b, []).append(i)
    active: set[int] = set()
    out: list[Segment] = []
    for a, b in itertools.pairwise(cuts):
        active.difference_update(ending.get(a, ()))
        active.update(starting.get(a, ()))
        out.append(Segment(a, b, tuple(sorted(active))))
    return out


def _style(segment: Segment) -> str:
    if not segment.chunks:
        return "gap"
    if len(segment.chunks) > 1:
        return "overlap"
    return "odd" if segment.chunks[0] % 2 else "even"


def render_view(text: str, chunks: Sequence[Chunk], *, colour: bool) -> str:
    """The terminal view of ``chunks`` in ``text`` (see the module's docstring)."""
    parts: list[str] = []
    overlaps = sum(1 for i in range(1, len(chunks)) if chunks[i].start < chunks[i - 1].end)
    summary = f"{len(chunks)} chunks, {overlaps} overlaps"
    if colour:
        parts.append(
            f"{summary}: chunks alternate {_STYLE['even']}cyan{_RESET} and "
            f"{_STYLE['odd']}magenta{_RESET}, {_STYLE['overlap']}overlap{_RESET}, "
            f"{_STYLE['gap']}in no chunk{_RESET}\n\n"
        )
        for seg in segments(len(text), chunks):
            piece = text[seg.start : seg.end]
            style = _STYLE[_style(seg)]
            # A style ends at each line end so that a pager or a later line
            # does not inherit it.
            parts.append(
                "\n".join(f"{style}{line}{_RESET}" if line else "" for line in piece.split("\n"))
            )
        parts.append("\n")
        return "".join(parts)
    parts.append(f"{summary}: [#i> starts chunk i, <#i] ends it\n\n")
    starts: dict[int, list[int]] = {}
    ends: dict[int, list[int]] = {}
    for i, c in enumerate(chunks):
        starts.setdefault(c.start, []).append(i)
        ends.setdefault(c.end, []).append(i)
    cuts = sorted({0, len(text), *starts, *ends})
    for a, b in zip(cuts, [*cuts[1:], None], strict=False):
        parts.extend(f"<#{i}]" for i in ends.get(a, ()))
        parts.extend(f"[#{i}>" for i in starts.get(a, ()))
        if b is not None:
            parts.append(text[a:b])
    parts.append("\n")
    return "".join(parts)


_CSS = """
body { font: 14px/1.5 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #fff; }
header { padding: 10px 16px; border-bottom: 1px solid #ddd; background: #fafafa; }
header h1 { font-size: 16px; margin: 0 0 4px; }
.key { display: inline-block; padding: 0 6px; border-radius: 3px; margin-right: 6px; }
#info { position: sticky; top: 0; padding: 6px 16px; min-height: 1.5em;
        background: #f2f2f7; border-bottom: 1px solid #ddd; font-size: 13px; }
pre { margin: 0; padding: 16px; white-space: pre-wrap; word-wrap: break-word;
      font: 13px/1.6 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.c0 { background: rgb(190, 225, 255); }
.c1 { background: rgb(255, 214, 170); }
.ov { background: rgb(255, 221, 0); box-shadow: inset 0 -2px 0 rgb(204, 0, 0); }
.gap { color: #999; }
.seg.hot { outline: 2px solid rgb(0, 90, 200); }
"""

_SCRIPT = """
const info = document.getElementById("info");
function describe(i) {
  const c = CHUNKS[i];
  let s = "chunk " + c.index + ": [" + c.start + ":" + c.end + "], lines " + c.start_line +
    "-" + c.end_line + ", " + c.token_count + " tokens, " + c.char_count + " characters";
  if (c.overlap_prev) s += ", overlap " + c.overlap_prev + " with chunk " + (c.index - 1);
  if (c.overlap_next) s += ", overlap " + c.overlap_next + " with chunk " + (c.index + 1);
  if (c.headings.length) s += " \\u00b7 " + c.headings.join(" > ");
  return s;
}
let hot = [];
document.getElementById("source").addEventListener("mouseover", (event) => {
  const seg = event.target.closest(".seg");
  if (!seg) return;
  for (const el of hot) el.classList.remove("hot");
  const ids = (seg.dataset.c || "").split(" ").filter((x) => x !== "");
  info.textContent = ids.length ? ids.map((i) => describe(+i)).join("  |  ") : "in no chunk";
  hot = [];
  for (const i of ids) {
    for (const el of document.querySelectorAll(".k" + i)) { el.classList.add("hot"); hot.push(el); }
  }
});
"""


def _chunk_info(chunks: Sequence[Chunk]) -> list[dict[str, Any]]:
    info = []
    for i, c in enumerate(chunks):
        before = max(0, chunks[i - 1].end - c.start) if i else 0
        after = max(0, c.end - chunks[i + 1].start) if i + 1 < len(chunks) else 0
        info.append(
            {
                "index": c.index,
                "start": c.start,
                "end": c.end,
                "start_line": c.start_line,
                "end_line": c.end_line,
                "token_count": c.token_count,
                "char_count": c.char_count,
                "headings": list(c.headings),
                "overlap_prev": before,
                "overlap_next": after,
            }
        )
    return info


def render_html(text: str, chunks: Sequence[Chunk], *, title: str) -> str:
    """A self-contained page: ``text`` with every chunk's span drawn (colours
    alternate, overlaps yellow), and on hover the chunk's span, overlaps,
    heading path and token count (in a bar, and as the span's tooltip)."""
    info = _chunk_info(chunks)
    body: list[str] = []
    for seg in segments(len(text), chunks):
        style = _style(seg)
        css = {"even": "c0", "odd": "c1", "overlap": "ov", "gap": "gap"}[style]
        classes = " ".join(["seg", css, *(f"k{i}" for i in seg.chunks)])
        tip = "\n".join(
            f"chunk {info[i]['index']} [{info[i]['start']}:{info[i]['end']}], "
            f"{info[i]['token_count']} tokens"
            + (f", overlap {info[i]['overlap_prev']}" if info[i]["overlap_prev"] else "")
            + (" · " + " > ".join(info[i]["headings"]) if info[i]["headings"] else "")
            for i in seg.chunks
        )
        body.append(
            f'<span class="{classes}" data-c="{" ".join(map(str, seg.chunks))}"'
            f' title="{html.escape(tip or "in no chunk")}">'
            f"{html.escape(text[seg.start : seg.end])}</span>"
        )
    data = json.dumps(info, ensure_ascii=True).replace("</", "<\\/")
    overlaps = sum(1 for c in info if c["overlap_prev"])
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{html.escape(title)}</h1>"
        f"{len(chunks)} chunks, {overlaps} overlaps, {len(text):,} characters. "
        '<span class="key c0">chunk</span><span class="key c1">next chunk</span>'
        '<span class="key ov">overlap</span><span class="key gap">in no chunk</span>'
        "</header>"
        '<div id="info">hover the text to see its chunk</div>'
        f'<pre id="source">{"".join(body)}</pre>'
        f"<script>const CHUNKS = {data};{_SCRIPT}</script></body></html>\n"
    )
