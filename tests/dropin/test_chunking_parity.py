"""chunk_text and content-type detection give exactly the original's results:
on the shared corpus, on the repository's own files, and on generated text."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastnotebook import chunking
from fastnotebook.bench import reference
from fastnotebook.chunking import ContentType
from helpers.corpus import KINDS, corpus_files, read, repository_texts, require_corpus
from helpers.documents import documents

CT = {"html": ContentType.HTML, "markdown": ContentType.MARKDOWN, "plain": ContentType.PLAIN}


def ours(text: str, content_type: str | None = None, file_path: str | None = None) -> list[str]:
    ct = None if content_type is None else CT[content_type]
    return chunking.chunk_text(text, ct, file_path)


def assert_same_chunks(
    text: str, content_type: str | None = None, file_path: str | None = None
) -> None:
    expected = reference.chunk_text(text, content_type, file_path)
    got = ours(text, content_type, file_path)
    if got != expected:
        first = next(
            (i for i, (a, b) in enumerate(zip(got, expected, strict=False)) if a != b), None
        )
        raise AssertionError(
            f"{len(got)} chunks vs {len(expected)} expected; first difference at {first}: "
            f"{got[first][:120]!r} != {expected[first][:120]!r}"
            if first is not None
            else f"{len(got)} chunks vs {len(expected)} expected"
        )


@pytest.mark.parametrize("kind", ["md", "txt"])
def test_corpus_chunks_match_the_original(kind: str) -> None:
    files = require_corpus(kind)
    for path in files:
        text = read(path)
        assert ours(text, KINDS[kind]) == reference.chunk_text(text, KINDS[kind]), path.name


@pytest.mark.parametrize("kind", ["html", "md", "txt"])
def test_corpus_detection_matches_the_original(kind: str) -> None:
    files = require_corpus(kind)
    for path in files:
        text = read(path)
        name, confidence = reference.detect_content_type_from_heuristics(text)
        assert chunking.detect_content_type_from_heuristics(text) == (CT[name], confidence), (
            path.name
        )
        for fake in (path.name, "notes.txt", "page.html", "README", None):
            expected = reference.detect_content_type(text, fake)
            assert chunking.detect_content_type(text, fake) == CT[expected], (path.name, fake)


def test_corpus_chunks_match_with_detection_from_the_path() -> None:
    files = [p for kind in ("md", "txt") for p in corpus_files(kind)]
    if not files:
        pytest.skip("shared corpus not found")
    for path in files:
        text = read(path)
        assert ours(text, None, str(path)) == reference.chunk_text(text, None, str(path)), path.name


def test_repository_files_match_the_original() -> None:
    files = repository_texts()
    assert len(files) > 10
    for path in files:
        text = read(path)
        for content_type in ("markdown", "plain"):
            assert_same_chunks(text, content_type)
        assert_same_chunks(text, None, str(path))


def test_files_with_undecodable_bytes_keep_them() -> None:
    # Bytes that are not UTF-8 become lone surrogates with surrogateescape.
    raw = ("word " * 400 + "\n\n").encode() + b"\xff\xfe caf\xe9 " + ("more " * 400).encode()
    text = raw.decode("utf-8", errors="surrogateescape")
    for content_type in ("markdown", "plain"):
        assert_same_chunks(text, content_type)
    assert "".join(ours(text, "plain")).count("\udcff") >= 1


def test_chunks_of_wide_text_take_their_own_narrowest_representation() -> None:
    # A str whose widest character needs 4 bytes is stored 4 bytes per
    # character; its chunks must each be stored as narrowly as their own
    # characters allow (CPython compares representations before contents).
    sections = ["ascii " * 300, "caf\xe9 " * 300, "\u4e2d\u6587 " * 500, "\U0001f600 " * 800]
    for widest in range(1, len(sections) + 1):
        text = "\n\n".join(sections[:widest] + sections[: widest - 1])
        for content_type in ("plain", "markdown"):
            assert_same_chunks(text, content_type)
        chunks = ours(text, "plain")
        assert {c.isascii() for c in chunks} == ({True, False} if widest > 1 else {True})
        assert all(c == "".join(list(c)) and hash(c) == hash(str(c)) for c in chunks)


@pytest.mark.parametrize("wide", ["\u2192", "\U0001f600"])
def test_long_wide_markdown_matches_the_original(wide: str) -> None:
    # Over 2**20 code units, wide Markdown is chunked on its UTF-8 (its
    # rebuilt sections would take 2-4 bytes a character): same chunks.
    block = f"# Part\n\nsome text {wide} here\n  indented\t\n```\n# not a header\n```\n\n"
    text = block * (1_200_000 // len(block)) + "lone \udc80 surrogate\n"
    assert len(text) > 2**20
    assert_same_chunks(text, "markdown")
    assert_same_chunks(text, None, "notes.md")


def test_surrogates_with_every_private_use_window_taken_split_in_characters() -> None:
    # Plain text and Markdown in characters are split on the code units, lone
    # surrogates as they are: no private-use mapping, so no text is refused.
    # HTML is parsed as UTF-8, where each lone surrogate needs a private-use
    # character the text does not use; a text using all 64 windows leaves none.
    windows = "".join(chr(base + i * 0x800) for base in (0xF0000, 0x100000) for i in range(32))
    text = ("# Title\n\nwords and more words\ud800 " * 60) + windows
    for content_type in ("plain", "markdown"):
        assert_same_chunks(text, content_type)
    with pytest.raises(ValueError, match="private-use"):
        ours(text, "html")


# Text built from the pieces that stress the splitters: headers, fences,
# lists, separators of every kind, unicode, control characters, long words.
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.sampled_from(["markdown", "plain", None]))
def test_generated_documents_match_the_original(text: str, content_type: str | None) -> None:
    assert_same_chunks(text, content_type)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.sampled_from(["markdown", "plain"]))
def test_every_code_unit_width_matches_the_original(text: str, content_type: str) -> None:
    # Plain text and Markdown are split on the str's own code units: the same
    # document restricted to ASCII, Latin-1, the BMP (lone surrogates
    # included) and all planes, so that each width CPython stores is split.
    for widest in (0x7F, 0xFF, 0xFFFF, 0x10FFFF):
        assert_same_chunks("".join(c for c in text if ord(c) <= widest), content_type)


@settings(max_examples=300, deadline=None)
@given(
    st.text(min_size=0, max_size=300), st.sampled_from([None, "a.txt", "a.md", "x.HTML", "README"])
)
def test_generated_detection_matches_the_original(text: str, path: str | None) -> None:
    name, confidence = reference.detect_content_type_from_heuristics(text)
    assert chunking.detect_content_type_from_heuristics(text) == (CT[name], confidence)
    assert chunking.detect_content_type(text, path) == CT[reference.detect_content_type(text, path)]


_md_line = st.one_of(
    st.sampled_from(
        ["# T", "## T", "### T", "#### T", "```", "~~~", "- a", "1. b", "> q", "", " "]
    ),
    st.from_regex(r"[#>*+\-0-9 ]{0,4}[\w\[\]()`*_ .]{0,30}", fullmatch=True),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_md_line, max_size=60).map("\n".join))
def test_generated_markdown_detection_matches_the_original(text: str) -> None:
    name, confidence = reference.detect_content_type_from_heuristics(text)
    assert chunking.detect_content_type_from_heuristics(text) == (CT[name], confidence)


@pytest.mark.parametrize(
    "path",
    [
        "a.md",
        "A.MD",
        "x/y.markdown",
        "note.mKd",
        "page.HTM",
        "p.xhtml",
        "code.rs",
        "data.tsv",
        "n.txt",
        ".md",
        "file.",
        "noext",
        "",
        "dir.md/",
        "a.md/.",
        "a.md/..",
        "x.M\u212aD",
        "caf\udce9.md",
        "weird.\ud800",
    ],
)
def test_extension_table_matches_the_original(path: str) -> None:
    expected = reference.detect_content_type_from_extension(path)
    got = chunking.detect_content_type_from_extension(path)
    assert got == (None if expected is None else CT[expected])


def test_path_objects_and_other_types_are_read_like_pathlib() -> None:
    assert chunking.detect_content_type_from_extension(Path("a/b.md")) is ContentType.MARKDOWN
    for value in (None, "", 0, 12, b"a.md", ["a.md"], object()):
        assert chunking.detect_content_type_from_extension(value) is None  # type: ignore[arg-type]
        assert reference.detect_content_type_from_extension(value) is None
