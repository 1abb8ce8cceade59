"""The ``html`` strategy: slices of the HTML's text, heading paths as langchain's
``HTMLHeaderTextSplitter`` finds them."""

from __future__ import annotations

import pytest
from langchain_text_splitters import HTMLHeaderTextSplitter

from fastnotebook import chunk
from fastnotebook.chunkers import html_text
from fastnotebook.token_utils import token_count
from helpers.corpus import read, require_corpus
from helpers.invariants import check_records

HEADERS = [(f"h{i}", f"h{i}") for i in range(1, 7)]


def reference(html: str) -> tuple[str, list[tuple[int, tuple[str, ...]]]]:
    """langchain's documents joined with a blank line, and where each starts
    with its heading path (outermost first)."""
    docs = HTMLHeaderTextSplitter(HEADERS).split_text(html)
    text = ""
    starts = []
    for d in docs:
        if text:
            text += "\n\n"
        path = tuple(v for _, v in sorted(d.metadata.items(), key=lambda kv: int(kv[0][1:])))
        starts.append((len(text), path))
        text += d.page_content
    return text, starts


def check_html(html: str, size: int, overlap: int, unit: str = "chars") -> None:
    length = len if unit == "chars" else token_count
    text, starts = reference(html)
    assert html_text(html) == text
    chunks = chunk(html, "html", chunk_size=size, overlap=overlap, unit=unit)  # type: ignore[arg-type]
    check_records(text, chunks, max_size=size, length=length)
    for c in chunks:
        if overlap == 0:
            path = [p for at, p in starts if at <= c.start][-1]
            assert c.headings == path, c


def test_heading_paths_and_units() -> None:
    html = (
        "<html><body><h1>Guide</h1><p>Intro text.</p><h3>Deep</h3><p>Deep text.</p>"
        "<h2>Mid</h2><p>Mid text that is a little longer than the rest.</p></body></html>"
    )
    chunks = chunk(html, "html", chunk_size=40, context_headers="breadcrumb")
    assert [(c.headings, c.text) for c in chunks] == [
        (("Guide",), "Guide\n\nIntro text.\n\nDeep\n\nDeep text."),
        # The heading goes with the first piece of its text.
        (("Guide", "Mid"), "Mid\n\nMid text that is a little longer"),
        (("Guide", "Mid"), "than the rest."),
    ]
    assert chunks[1].embed_text == "Guide > Mid\n\nMid\n\nMid text that is a little longer"
    assert [c.headings for c in chunk(html, "html", chunk_size=20)][:3] == [
        ("Guide",),
        ("Guide", "Deep"),
        ("Guide", "Mid"),
    ]
    check_html(html, 40, 0)


@pytest.mark.parametrize(
    ("size", "overlap", "unit"), [(500, 0, "chars"), (1500, 200, "chars"), (256, 0, "tokens")]
)
def test_html_corpus(size: int, overlap: int, unit: str) -> None:
    for path in require_corpus("html")[:40]:
        check_html(read(path), size, overlap, unit)
