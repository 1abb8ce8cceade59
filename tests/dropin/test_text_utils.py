"""text_utils equals the original on real text and on all of Unicode."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastnotebook
from fastnotebook import _core, text_utils
from fastnotebook.bench import reference
from fastnotebook.text_utils import (
    clean_thinking_content,
    extract_text_content,
    parse_thinking_content,
    remove_non_ascii,
    remove_non_printable,
)
from helpers.corpus import corpus_files, read, repository_texts

any_text = st.text(
    alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=sys.maxunicode)
)
think_pieces = st.sampled_from(
    [
        "<think>",
        "</think>",
        "<think",
        "think>",
        "\n",
        "\n\n\n",
        " \n\t\n",
        "\u2028",
        "\u00a0",
        " ",
        "answer",
    ]
)
think_text = st.lists(st.one_of(think_pieces, any_text.map(lambda s: s[:5])), max_size=40).map(
    "".join
)


def real_texts() -> list[str]:
    files = [p for kind in ("html", "md", "txt") for p in corpus_files(kind)] + repository_texts()
    return [read(p) for p in files]


def test_real_documents_match_the_original() -> None:
    texts = real_texts()
    assert texts
    for text in texts:
        assert remove_non_ascii(text) == reference.remove_non_ascii(text)
        assert remove_non_printable(text) == reference.remove_non_printable(text)
        piece = text[:90_000]
        answer = f"<think>{piece[:500]}</think>\n\n\n{piece}"
        assert parse_thinking_content(answer) == reference.parse_thinking_content(answer)


@settings(max_examples=1000, deadline=None)
@given(any_text)
def test_cleaners_match_the_original_on_all_of_unicode(text: str) -> None:
    assert remove_non_ascii(text) == reference.remove_non_ascii(text)
    assert remove_non_printable(text) == reference.remove_non_printable(text)
    assert parse_thinking_content(text) == reference.parse_thinking_content(text)


@settings(max_examples=1000, deadline=None)
@given(think_text)
def test_thinking_parser_matches_the_original(text: str) -> None:
    assert parse_thinking_content(text) == reference.parse_thinking_content(text)
    assert clean_thinking_content(text) == reference.parse_thinking_content(text)[1]


def test_every_code_point_cleans_like_the_original() -> None:
    everything = "".join(chr(cp) for cp in range(sys.maxunicode + 1))
    assert remove_non_printable(everything) == reference.remove_non_printable(everything)
    assert remove_non_ascii(everything) == reference.remove_non_ascii(everything)
    assert parse_thinking_content(everything) == ("", everything)


def test_surrogates_with_every_private_use_window_taken_raise_a_clear_error() -> None:
    # Lone surrogates are mapped to private-use characters the text does not
    # use; a text using all 64 windows of 2048 leaves none. Such a text is
    # refused with a ValueError, never crashes.
    windows = "".join(chr(base + i * 0x800) for base in (0xF0000, 0x100000) for i in range(32))
    text = "<think>a</think>\ud800" + windows
    with pytest.raises(_core.UnsupportedTextError, match="private-use"):
        _core.token_count(text)
    assert issubclass(_core.UnsupportedTextError, ValueError)
    # parse_thinking_content reads the code units as they are: no mapping.
    assert parse_thinking_content(text) == reference.parse_thinking_content(text)


# Each of CPython's representations of a str (PEP 393), and lone surrogates:
# the parser reads their code units as they are.
WIDTHS = {
    "ascii": "",
    "latin-1": "\xe9\xa0\x85\x1c",
    "ucs-2": "\u3000\u2603\u2028\u200b",
    "ucs-4": "\U0001d11e\U0010ffff\u3000",
    "surrogates": "\ud800\udfff\udc80\ud83d",
}


@pytest.mark.parametrize("width", list(WIDTHS))
def test_thinking_parser_on_every_representation(width: str) -> None:
    extra = WIDTHS[width]
    cases = [
        f"<think>{extra} a{extra}</think>Answer{extra}\n\n\n\nmore<think>b</think>",
        f"{extra}<think>\n{extra}\n</think>\n{extra}\n \n{extra}end",
        f"reasoning{extra} </think> answer{extra} ",
        f"x</think>y<think>z{extra}",
        f"<think></think>{extra}",
        f"<think>{extra}</think>\n\n\n",
        f"no tags{extra}",
        "<think>ascii only</think> but the input is wide" + extra[:1],
        "\n".join(["a", " ", "\u3000" if extra else " ", "b"]) + f"<think>{extra}</think>",
    ]
    for text in cases:
        expected = reference.parse_thinking_content(text)
        # Equal str also means the same representation: CPython compares
        # the kinds first, and they must be the narrowest; isascii() reads
        # the ASCII flag.
        parsed = parse_thinking_content(text)
        assert parsed == expected, repr(text)
        for part in parsed:
            assert part.isascii() == all(c < "\x80" for c in part), repr(part)
    # Long enough to run over many 64-character blocks.
    long = (f"line{extra}\n\n \n{extra}\t\n" * 500)[:20_000]
    text = f"<think>{long[:3000]}</think>\n{long}<think>x</think>\n\n{long}"
    assert parse_thinking_content(text) == reference.parse_thinking_content(text)


wide_text = st.text(
    alphabet=st.one_of(
        st.characters(codec=None, min_codepoint=0, max_codepoint=0xFF),
        st.characters(codec=None, min_codepoint=0xD800, max_codepoint=0xDFFF),
        st.sampled_from(["\u3000", "\u2028", "\x85", "\xa0", "\U0001d11e", "\u2603"]),
    ),
    max_size=5,
)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.one_of(think_pieces, wide_text), max_size=60).map("".join))
def test_thinking_parser_with_surrogates_and_wide_characters(text: str) -> None:
    assert parse_thinking_content(text) == reference.parse_thinking_content(text)


def test_documented_examples() -> None:
    assert parse_thinking_content("<think>Let me analyze this</think>Here's my answer") == (
        "Let me analyze this",
        "Here's my answer",
    )
    assert (
        clean_thinking_content("<think>Let me think...</think>Here's the answer")
        == "Here's the answer"
    )
    assert parse_thinking_content("Reasoning here</think>The answer") == (
        "Reasoning here",
        "The answer",
    )
    assert parse_thinking_content("no thinking") == ("", "no thinking")


def test_non_string_and_huge_content() -> None:
    assert parse_thinking_content(None) == ("", "")  # type: ignore[arg-type]
    assert parse_thinking_content(42) == ("", "42")  # type: ignore[arg-type]
    huge = "<think>x</think>" + "y" * 100_000
    assert parse_thinking_content(huge) == ("", huge)
    with pytest.raises(TypeError):
        remove_non_printable(b"bytes")  # type: ignore[arg-type]


def test_surrogates_survive_where_the_original_keeps_them() -> None:
    text = "<think>\udc80 why</think> caf\udce9"
    assert parse_thinking_content(text) == ("\udc80 why", "caf\udce9")
    assert remove_non_printable("a\udc80b") == "ab"


def test_extract_text_content() -> None:
    assert extract_text_content("plain") == "plain"
    parts = [{"type": "text", "text": "Hello, "}, "world", {"type": "image"}, 3]
    assert extract_text_content(parts) == "Hello, world"
    assert extract_text_content(None) == "None"
    assert extract_text_content({"text": "x"}) == "{'text': 'x'}"


def test_top_level_exports() -> None:
    for name in [
        "remove_non_ascii",
        "remove_non_printable",
        "parse_thinking_content",
        "clean_thinking_content",
    ]:
        assert getattr(fastnotebook, name) is getattr(text_utils, name)
    assert text_utils.THINK_PATTERN.pattern == r"<think>(.*?)</think>"
