"""Hostile input: each case runs through the public API and its result is
checked. How long each takes at 1, 10 and 100 MB is measured by
``benches/bench_hostile.py``, not asserted here (the tests only have to
finish)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from fastnotebook import _core
from fastnotebook.chunking import ContentType, chunk_text, detect_content_type_from_heuristics
from fastnotebook.splitters import HtmlHeaderSplitter, MarkdownHeaderSplitter
from fastnotebook.text_utils import (
    parse_thinking_content,
    remove_non_ascii,
    remove_non_printable,
)
from fastnotebook.token_utils import token_count, token_counts
from helpers.corpus import tiktoken_reference
from helpers.invariants import HTML_HEADERS, MD_HEADERS, aligns

MB = 1_000_000
CONTROL = "".join(map(chr, [*range(0x20), *range(0x7F, 0xA0)]))
# Every 7th lone surrogate, high and low.
SURROGATES = "".join(chr(c) for c in range(0xD800, 0xE000, 7))


def numbered(prefix: str, n: int, sep: str = " ") -> str:
    """`prefix0 prefix1 ...`: text where every chunk occurs once."""
    return sep.join(f"{prefix}{i}" for i in range(n))


def in_order(text: str, chunks: list[str]) -> None:
    """Each chunk occurs in `text` at or after the previous one's start, with
    only whitespace between the chunks, and all non-whitespace is in some
    chunk (a linear check for text where each chunk occurs once)."""
    start, end = 0, 0
    for chunk in chunks:
        at = text.find(chunk, start)
        assert at != -1, chunk[:80]
        assert not text[end:at].strip(), f"text lost before {chunk[:40]!r}"
        start, end = at, max(end, at + len(chunk))
    assert not text[end:].strip(), "text lost at the end"


@pytest.fixture(scope="module")
def tiktoken_o200k() -> Iterator[object]:
    yield tiktoken_reference("o200k_base")


# ------------------------------------------------ control characters, surrogates


HOSTILE_CHARS = (CONTROL + "word " + SURROGATES + "\ud83d\ude00 \n") * 40


@pytest.mark.parametrize("unit", ["chars", "tokens"])
def test_every_control_character_and_lone_surrogates_plain(unit: str) -> None:
    text = HOSTILE_CHARS
    chunks = chunk_text(text, ContentType.PLAIN, unit=unit)  # type: ignore[arg-type]
    assert len(chunks) > 1
    assert all(c in text for c in chunks)
    assert aligns(text, chunks)


def test_every_control_character_and_lone_surrogates_markdown() -> None:
    text = "# Title\x07\ud800\n" + HOSTILE_CHARS
    chunks = chunk_text(text, ContentType.MARKDOWN)
    assert chunks[0].startswith("# Title")
    # Non-printable characters (controls, lone surrogates) are dropped, as the
    # original's `filter(str.isprintable, line)`; everything else is kept.
    assert all(c.isprintable() or c == "\n" for chunk in chunks for c in chunk)
    kept = "".join(c for c in text if c.isprintable() and not c.isspace())
    sections = [
        s for s, _ in MarkdownHeaderSplitter(MD_HEADERS, strip_headers=False).split_text(text)
    ]
    assert "".join(c for s in sections for c in s if not c.isspace()) == kept
    assert aligns("\x00".join(sections), chunks, gap="\x00")


def test_every_control_character_and_lone_surrogates_html() -> None:
    # No markup: the one section is the stripped text, surrogates and all.
    text = HOSTILE_CHARS
    assert HtmlHeaderSplitter(HTML_HEADERS).split_text(text) == [(text.strip(), {})]
    chunks = chunk_text(text, ContentType.HTML)
    assert aligns(text.strip(), chunks)


def test_every_control_character_and_lone_surrogates_elsewhere(tiktoken_o200k: object) -> None:
    text = HOSTILE_CHARS
    expected = len(tiktoken_o200k.encode(text, disallowed_special=()))  # type: ignore[attr-defined]
    assert token_count(text) == expected
    assert token_counts([text, text[::-1]]) == [expected, token_count(text[::-1])]
    assert remove_non_ascii(text) == "".join(c for c in text if c < "\x80")
    printable = remove_non_printable(text)
    assert printable and all(c not in CONTROL or c in "\n\t" for c in printable)
    assert not any("\ud800" <= c <= "\udfff" for c in printable)
    thinking, answer = parse_thinking_content(f"<think>{text}</think> after")
    assert (thinking, answer) == (text.strip(), "after")
    for t in (text, CONTROL * 100, SURROGATES * 10):
        kind, confidence = detect_content_type_from_heuristics(t)
        assert kind in ContentType and 0.0 <= confidence <= 1.0


# ------------------------------------------------------------------ huge inputs


def test_megabytes_without_a_newline() -> None:
    # 10 MB here; the benchmark runs 100 MB.
    text = numbered("w", 1_300_000)
    assert len(text) > 10 * MB and "\n" not in text
    chunks = chunk_text(text, ContentType.PLAIN)
    assert all(len(c) <= 1500 for c in chunks)
    # Words of up to 9 characters: chunks of at least 1490, at most 225 overlap.
    assert len(text) / 1500 <= len(chunks) <= len(text) / (1490 - 225) + 1
    in_order(text, chunks)


def test_megabytes_of_one_character_in_both_units() -> None:
    # 10 MB in characters, 1 MB in tokens; the benchmark runs up to 100 MB.
    n = 10 * MB
    chunks = chunk_text("x" * n, ContentType.PLAIN)
    assert len(chunks) == -(-(n - 225) // (1500 - 225))
    assert all(c == "x" * 1500 for c in chunks[:-1])
    n = MB
    tokens = chunk_text("x" * n, ContentType.PLAIN, unit="tokens")
    assert all(token_count(c) <= 400 for c in tokens)
    assert set("".join(tokens)) == {"x"}
    assert sum(len(c) for c in tokens) >= n


def test_a_million_markdown_headers() -> None:
    text = "".join(f"# h{i}\n" for i in range(MB))
    chunks = chunk_text(text, ContentType.MARKDOWN)
    assert chunks == [f"# h{i}" for i in range(MB)]


def test_a_million_html_headers() -> None:
    text = "".join(f"<h2>t{i}</h2>" for i in range(MB))
    chunks = chunk_text(text, ContentType.HTML)
    assert chunks == [f"t{i}" for i in range(MB)]


def test_a_hundred_thousand_nested_tags() -> None:
    n = 100_000
    closed = "<div>" * n + "deep" + "</div>" * n
    assert chunk_text(closed, ContentType.HTML) == ["deep"]
    assert HtmlHeaderSplitter(HTML_HEADERS, return_each_element=True).split_text(closed) == [
        ("deep", {})
    ]
    unclosed = "<section><p>" * n + "bottom"
    assert chunk_text(unclosed, ContentType.HTML) == ["bottom"]
    headers = "<h1>a<div>" * n + "end"
    sections = HtmlHeaderSplitter(HTML_HEADERS).split_text(headers)
    assert sections[-1][0] == "end" and len(sections) == n + 1


def test_unclosed_comments_and_tags_become_text() -> None:
    body = numbered("c", 200_000)
    chunks = chunk_text("<p>start<!-- " + body, ContentType.HTML)
    # As BeautifulSoup with html.parser: the unterminated comment is text.
    in_order("start<!-- " + body, chunks)
    attribute = "<p>text<div class='" + numbered("v", 200_000)
    chunks = chunk_text(attribute, ContentType.HTML)
    in_order(attribute[len("<p>") :], chunks)
    for hostile in ("<a" * MB, "</" * MB, "<!" * MB, "<?" * MB, "<![CDATA[" + "x" * MB):
        chunks = chunk_text(hostile, ContentType.HTML)
        used = set(hostile)
        assert chunks and all(len(c) <= 1500 and set(c) <= used | {" ", "\n"} for c in chunks)


def test_rejected_markup_and_huge_references_raise_documented_errors() -> None:
    with pytest.raises(_core.MarkupRejectedError):
        chunk_text("<p>x</p><![bogus[" + "y" * MB, ContentType.HTML)
    with pytest.raises(_core.UnsupportedTextError):
        chunk_text("&#" + "9" * MB + ";", ContentType.HTML)
    # Hex references have no digit limit: one replacement character.
    assert chunk_text("&#x" + "f" * MB + ";" + "z" * 2000, ContentType.HTML)[0].startswith("\ufffd")


def test_megabytes_of_script() -> None:
    script = "".join(f"var s{i} = '<div>' + {i};\n" for i in range(200_000))
    html = f"<html><body><p>before</p><script>{script}</script><p>after</p></body></html>"
    chunks = chunk_text(html, ContentType.HTML)
    # bs4 keeps script text as a string of its tag: the script is a section.
    sections = [s for s, _ in HtmlHeaderSplitter(HTML_HEADERS).split_text(html)]
    assert sections == ["before  \n" + script.strip() + "  \nafter"]
    in_order(sections[0], chunks)


# ----------------------------------------------- worst cases for regex and BPE


@pytest.mark.parametrize("char", ["a", " ", "\n", "1", ".", "é", "😀", "\u3000"])
def test_megabytes_of_one_character_count_exactly(char: str, tiktoken_o200k: object) -> None:
    enc = tiktoken_o200k
    small = char * 20_000
    assert token_count(small) == len(enc.encode(small, disallowed_special=()))  # type: ignore[attr-defined]
    big = char * (2 * MB // len(char.encode()))  # the benchmark runs up to 100 MB
    ids = _core.encode_ordinary(big)
    assert token_count(big) == len(ids)
    assert enc.decode_bytes(ids) == big.encode()  # type: ignore[attr-defined]
    medium = big[: MB // len(char.encode())]
    cl100k = _core.encode_ordinary(medium, "cl100k_base")
    assert token_count(medium, "cl100k_base") == len(cl100k) > 0


def test_long_digit_runs_count_in_threes(tiktoken_o200k: object) -> None:
    digits = "7" * 999_999
    assert token_count(digits) == len(tiktoken_o200k.encode(digits))  # type: ignore[attr-defined]
    assert token_count("7" * 9_999_999) == 3_333_333 * token_count("777")
    assert token_count("7" * 9_999_999, "cl100k_base") == 3_333_333 * token_count(
        "777", "cl100k_base"
    )


@pytest.mark.parametrize("char", ["[", "`", "*", "#", "<", "_", ">", "-", "("])
def test_detection_reads_only_the_sample_of_any_input(char: str) -> None:
    text = char * (10 * MB)
    assert detect_content_type_from_heuristics(text) == detect_content_type_from_heuristics(
        text[:5000]
    )
    chunks = chunk_text(text)
    assert len(chunks) == -(-(len(text) - 225) // (1500 - 225))
    assert all(set(c) == {char} for c in chunks)


def test_cleaners_on_huge_hostile_text() -> None:
    assert remove_non_printable("\x00\x01\u200e" * (3 * MB)) == ""
    assert remove_non_ascii("é" * (10 * MB)) == ""
    assert remove_non_printable("a\u2028" * MB) == ("a\n" * MB).strip()
    opens = "<think>" * MB
    assert parse_thinking_content(opens) == ("", opens)  # over the limit: as it is
    near = "<think>" * 14_000 + "</think>"
    blocks = re.findall(r"<think>(.*?)</think>", near, re.DOTALL)
    assert parse_thinking_content(near) == ("\n\n".join(b.strip() for b in blocks), "")
