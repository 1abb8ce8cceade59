"""Invariants of the public API on generated input (hypothesis), checked with
Python's own string methods as the oracle for whitespace and printability.

What holds, by content type (docs/ROBUSTNESS.md says the same):

- plain text: every chunk is a substring of the input, stripped; chunks come
  in input order and together hold every non-whitespace character;
- Markdown: chunks are substrings of the header splitter's sections
  (rebuilt text: lines stripped, non-printable characters dropped, blocks
  joined with "  \\n"), in order, covering them; the sections hold exactly the
  input's printable non-whitespace characters, in order (less the header
  lines with ``strip_headers=True``);
- HTML: chunks are substrings of the sections (extracted text), in order,
  covering them; the sections hold every character of the body's text,
  none of its markup or attribute values;
- sizes: no chunk exceeds the size in code points; in tokens, none exceeds
  it as langchain measures a chunk (the sum of its pieces' counts, before
  the strip), which the stripped chunk counted whole may exceed by a token
  or so (the original does the same), and one character may;
- ``min_chunk_size`` (token unit) drops chunks below it when one reaches it:
  the one option that loses text, by design.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastnotebook import _core
from fastnotebook.chunking import ContentType, chunk_text, chunk_texts
from fastnotebook.embedding import mean_pool, mean_pool_segments
from fastnotebook.splitters import HtmlHeaderSplitter, MarkdownHeaderSplitter, RecursiveSplitter
from fastnotebook.token_utils import token_count, token_counts
from helpers.invariants import HTML_HEADERS, MD_HEADERS, aligns, check_sizes, non_ws, visible

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

PIECES = [
    "a", "b", "word", "Wörter", " ", "  ", "\n", "\n\n", "\t", "\r\n", ". ", ", ", "é", "日本",
    "😀", "\u3000", "\xa0", "\u200b", "\x00", "\x07", "\x85", "\u2028", "\x1f", "\x7f", "#",
    "# ", "## ", "###", "`", "```", "~~~", "<", ">", "</", "<p>", "</p>", "<h1>", "</h1>",
    "<div>", "&amp;", "<!--", "-->", "1234567", "'s", "\ufffd", "\U0010ffff", "\U000f0000",
    "\udc80", "\ud800", "\ud83d\ude00", "\udfff",
]  # fmt: skip

texts = st.lists(st.sampled_from(PIECES), max_size=120).map("".join)
sizes = st.tuples(st.integers(1, 60), st.integers(0, 60)).map(lambda t: (t[0], t[1] % (t[0] + 1)))


def test_aligner_can_fail() -> None:
    assert aligns("a b c", ["a b", "b c"])
    assert aligns(" aaaa ", ["aa", "aa"])
    assert not aligns("a b c", ["a", "c"])
    assert not aligns("a b", ["b", "a"])
    assert not aligns("ab", ["a"])


def sections(splitter: MarkdownHeaderSplitter | HtmlHeaderSplitter, text: str) -> list[str]:
    return [content for content, _ in splitter.split_text(text)]


@SETTINGS
@given(text=texts, size=sizes, unit=st.sampled_from(["chars", "tokens"]))
def test_plain_chunks_are_ordered_substrings_covering_the_text(
    text: str, size: tuple[int, int], unit: str
) -> None:
    chunks, split_as, length = _core.chunk_text(text, "plain", None, *size, unit=unit)
    # The length when the text fits one chunk, else some number above the size.
    full = len(text) if unit == "chars" else token_count(text)
    if not text.strip():
        assert (chunks, length) == ([], 0)
        return
    assert length == full if length <= size[0] else full > size[0]
    if length <= size[0]:
        assert chunks == ([text] if text.strip() else [])
        return
    assert split_as == "plain"
    check_sizes(chunks, size[0], unit, text)
    assert all(c in text for c in chunks)
    assert aligns(text, chunks)


@SETTINGS
@given(text=texts, size=sizes, unit=st.sampled_from(["chars", "tokens"]))
def test_markdown_chunks_cover_the_sections_which_keep_the_text(
    text: str, size: tuple[int, int], unit: str
) -> None:
    parts = sections(MarkdownHeaderSplitter(MD_HEADERS, strip_headers=False), text)
    assert visible("".join(parts)) == visible(text)
    chunks, _, length = _core.chunk_text(text, "markdown", None, *size, unit=unit)
    if length <= size[0]:
        return
    check_sizes(chunks, size[0], unit, "\x00".join(parts))
    # Sections are joined with NUL, which never survives the splitter.
    assert aligns("\x00".join(parts), chunks, gap="\x00")


@st.composite
def markdown_documents(draw: st.DrawFn) -> tuple[str, str]:
    """Markdown of header and body lines (no fences); also the body alone."""
    lines, body = [], []
    for _ in range(draw(st.integers(0, 12))):
        words = draw(
            st.lists(
                st.sampled_from(["x", "y z", "é", "\x07", "`a`", "\u200b"]), min_size=1, max_size=4
            )
        )
        line = " ".join(words)
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["#", "##", "###"])) + " " + line)
        else:
            lines.append(draw(st.sampled_from(["", "  ", "\t"])) + line)
            body.append(line)
        if draw(st.booleans()):
            lines.append("")
    return "\n".join(lines), "\n".join(body)


@SETTINGS
@given(doc=markdown_documents(), each_line=st.booleans())
def test_markdown_strip_headers_drops_exactly_the_header_lines(
    doc: tuple[str, str], each_line: bool
) -> None:
    text, body = doc
    for strip, expected in ((True, body), (False, text)):
        splitter = MarkdownHeaderSplitter(
            MD_HEADERS, return_each_line=each_line, strip_headers=strip
        )
        assert visible("".join(sections(splitter, text))) == visible(expected)


@st.composite
def html_documents(draw: st.DrawFn) -> tuple[str, str]:
    """Well-formed HTML: lowercase text in tags whose attribute values are
    uppercase, `script`/`style` holding text only; also its body text."""
    words = st.text(alphabet="abcxyzé日0 \n", max_size=10)

    def node(depth: int) -> tuple[str, str]:
        kind = draw(st.integers(0, 4 if depth < 4 else 1))
        if kind == 0:
            t = draw(words)
            return t, t
        if kind == 1:
            tag, t = draw(st.sampled_from(["script", "style", "b"])), draw(words)
            return f"<{tag}>{t}</{tag}>", t
        tag = draw(st.sampled_from(["div", "p", "span", "h1", "h2", "h3", "li", "td"]))
        value = draw(st.text(alphabet="ABCXYZ", max_size=5))
        kids = [node(depth + 1) for _ in range(draw(st.integers(0, 4)))]
        html = f'<{tag} class="{value}" id={value}Q>' + "".join(h for h, _ in kids) + f"</{tag}>"
        return html, " ".join(t for _, t in kids)

    body = [node(0) for _ in range(draw(st.integers(0, 4)))]
    html = "".join(h for h, _ in body)
    if draw(st.booleans()):
        html = f"<html><head><title>HEAD</title></head><body>{html}</body></html>TAIL"
    return html, " ".join(t for _, t in body)


@SETTINGS
@given(doc=html_documents(), size=sizes, each=st.booleans())
def test_html_sections_hold_the_body_text_and_no_markup(
    doc: tuple[str, str], size: tuple[int, int], each: bool
) -> None:
    html, text = doc
    parts = sections(HtmlHeaderSplitter(HTML_HEADERS, return_each_element=each), html)
    assert all(p and p == p.strip() for p in parts)
    assert Counter(non_ws("".join(parts))) == Counter(non_ws(text))
    chunks, _, length = _core.chunk_text(html, "html", None, *size)
    if length <= size[0]:
        assert chunks == ([html] if html.strip() else [])
        return
    check_sizes(chunks, size[0], "chars", html)
    aggregated = sections(HtmlHeaderSplitter(HTML_HEADERS), html)
    assert aligns("\x00".join(aggregated), chunks, gap="\x00")


@SETTINGS
@given(
    text=texts,
    size=st.integers(1, 40),
    seps=st.lists(st.sampled_from(["\n\n", "\n", ". ", " ", "", "a", "é"]), max_size=4),
    keep=st.sampled_from([True, "start", "end"]),
)
def test_recursive_splitter_keeps_every_character(
    text: str, size: int, seps: list[str], keep: bool | str
) -> None:
    splitter = RecursiveSplitter(size, size // 3, seps or None, keep_separator=keep)
    chunks = splitter.split_text(text)
    assert all(c in text for c in chunks)
    assert aligns(text, chunks)
    for c in chunks:
        if len(c) > size or c != c.strip():
            # Indivisible: the splitter returns it unchanged.
            assert len(c) >= size and splitter.split_text(c) == [c], c


@SETTINGS
@given(text=texts)
def test_recursive_splitter_without_separators_drops_only_them(text: str) -> None:
    # keep_separator=False drops the separators at chunk boundaries (and
    # collapses repeats); with whitespace separators, no other text goes.
    chunks = RecursiveSplitter(12, 4, None, keep_separator=False).split_text(text)
    assert aligns(non_ws(text), [non_ws(c) for c in chunks])


@SETTINGS
@given(text=texts, size=st.integers(5, 40), minimum=st.integers(0, 12))
def test_min_chunk_size_drops_only_small_chunks(text: str, size: int, minimum: int) -> None:
    full, _, _ = _core.chunk_text(text, "plain", None, size, size // 4, unit="tokens")
    kept, _, _ = _core.chunk_text(
        text, "plain", None, size, size // 4, unit="tokens", min_chunk_size=minimum
    )
    large = [c for c in full if token_count(c) >= minimum]
    assert kept == (large if len(full) > 1 and minimum > 0 and large else full)


@SETTINGS
@given(batch=st.lists(texts, max_size=8), encoding=st.sampled_from(["o200k_base", "cl100k_base"]))
def test_token_counts_equal_per_string_counts(batch: list[str], encoding: str) -> None:
    assert token_counts(batch, encoding) == [token_count(t, encoding) for t in batch]
    assert [len(_core.encode_ordinary(t, encoding)) for t in batch] == token_counts(batch, encoding)


@SETTINGS
@given(
    batch=st.lists(
        st.tuples(texts.map(lambda t: t * 30), st.sampled_from([None, *ContentType])), max_size=6
    ),
    paths=st.lists(st.sampled_from([None, "a.md", "b.html", "c.txt", "d"]), min_size=6, max_size=6),
    unit=st.sampled_from(["chars", "tokens"]),
)
def test_chunk_texts_equals_chunk_text_per_document(
    batch: list[tuple[str, ContentType | None]], paths: list[str | None], unit: str
) -> None:
    docs = [t for t, _ in batch]
    types = [c for _, c in batch]
    paths = paths[: len(docs)]
    expected = [chunk_text(t, c, p, unit=unit) for t, c, p in zip(docs, types, paths, strict=True)]  # type: ignore[arg-type]
    assert chunk_texts(docs, types, paths, unit=unit) == expected  # type: ignore[arg-type]


# Zero, or magnitudes where squares and powers of two stay exact.
floats = st.one_of(st.just(0.0), st.floats(1e-3, 1e6), st.floats(-1e6, -1e-3))


@SETTINGS
@given(
    rows=st.integers(1, 6).flatmap(
        lambda dim: st.lists(st.lists(floats, min_size=dim, max_size=dim), min_size=1, max_size=8)
    ),
    exponents=st.lists(st.integers(-30, 30), min_size=8, max_size=8),
    factor=st.floats(1e-3, 1e3),
)
def test_pooling_is_invariant_to_row_scaling_and_unit_norm(
    rows: list[list[float]], exponents: list[int], factor: float
) -> None:
    matrix = np.array(rows, dtype=np.float64)
    pooled = mean_pool(matrix)
    norm = float(np.linalg.norm(pooled))
    assert math.isclose(norm, 1.0, rel_tol=1e-9) or not pooled.any()
    # Powers of two scale exactly: the same result, bit for bit.
    powers = np.ldexp(1.0, np.array(exponents[: len(rows)]))[:, None]
    assert np.array_equal(mean_pool(matrix * powers), pooled)
    # Any positive factor: the same up to rounding, unless the rows nearly
    # cancel out (then rounding is all that is left).
    lengths = np.linalg.norm(matrix, axis=1, keepdims=True)
    mean = np.mean(matrix / np.where(lengths > 0, lengths, 1.0), axis=0)
    if np.linalg.norm(mean) > 1e-6:
        np.testing.assert_allclose(mean_pool(matrix * factor), pooled, atol=1e-7)
    as_list = _core.mean_pool_embeddings(rows)
    np.testing.assert_allclose(as_list, pooled, rtol=0, atol=1e-12)
    f32 = mean_pool(matrix.astype(np.float32))
    assert f32.dtype == np.float32
    assert math.isclose(float(np.linalg.norm(f32)), 1.0, rel_tol=1e-5) or not f32.any()


@SETTINGS
@given(
    lengths=st.lists(st.integers(1, 5), min_size=1, max_size=6),
    dim=st.integers(1, 5),
    seed=st.integers(0, 2**32 - 1),
)
def test_pooling_segments_equal_pooling_each(lengths: list[int], dim: int, seed: int) -> None:
    matrix = np.random.default_rng(seed).normal(size=(sum(lengths), dim))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    pooled = mean_pool_segments(matrix, offsets)
    for i, (a, b) in enumerate(itertools.pairwise(offsets)):
        assert np.array_equal(pooled[i], mean_pool(matrix[a:b]))


@pytest.mark.parametrize(
    "rows",
    [[[float("nan"), 1.0]], [[1.0, float("inf")]], [], [[1.0], [1.0, 2.0]]],
    ids=["nan", "inf", "empty", "ragged"],
)
def test_pooling_refuses_what_has_no_mean(rows: list[list[float]]) -> None:
    with pytest.raises(ValueError):
        _core.mean_pool_embeddings(rows)


def test_pooling_exceptions_are_the_documented_ones() -> None:
    # Rows that cancel out: the zero vector, as it is.
    assert _core.mean_pool_embeddings([[1.0, 0.0], [-3.0, 0.0]]) == [0.0, 0.0]
    # Zero rows are averaged without normalising.
    assert _core.mean_pool_embeddings([[0.0, 0.0], [0.0, 5.0]]) == [0.0, 1.0]
    # Huge and tiny magnitudes are normalised exactly.
    for scale in (1e300, 1e-300, 5e-324):
        assert _core.mean_pool_embeddings([[scale, 0.0]]) == [1.0, 0.0]
