"""The standalone splitters equal langchain's with the same parameters."""

from __future__ import annotations

from typing import Literal

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter

from fastnotebook import splitters
from helpers.documents import documents

separator_lists = st.one_of(
    st.none(),
    st.lists(
        st.sampled_from(["\n\n", "\n", ". ", ", ", " ", "", "ab", "#", "é", "\r\n"]),
        min_size=1,
        max_size=6,
    ),
)
keep_modes: st.SearchStrategy[bool | Literal["start", "end"]] = st.sampled_from(
    [True, False, "start", "end"]
)


@st.composite
def recursive_params(draw: st.DrawFn) -> tuple[int, int, list[str] | None, bool | str, bool]:
    size = draw(st.integers(1, 400))
    overlap = draw(st.integers(0, size))
    return size, overlap, draw(separator_lists), draw(keep_modes), draw(st.booleans())


@settings(max_examples=500, deadline=None)
@given(documents, recursive_params())
def test_recursive_splitter_equals_langchain(text: str, params: tuple) -> None:  # type: ignore[type-arg]
    size, overlap, separators, keep, strip = params
    reference = RecursiveCharacterTextSplitter(
        chunk_size=size,
        chunk_overlap=overlap,
        separators=separators,
        keep_separator=keep,
        strip_whitespace=strip,
    )
    ours = splitters.RecursiveSplitter(size, overlap, separators, keep, strip)
    assert ours.split_text(text) == reference.split_text(text)


header_sets = st.sampled_from(
    [
        [("#", "Header 1"), ("##", "Header 2"), ("###", "Header 3")],
        [("##", "B"), ("#", "A")],
        [("#", "Same"), ("##", "Same")],
        [("####", "Four"), ("#", "One")],
    ]
)


@settings(max_examples=500, deadline=None)
@given(documents, header_sets, st.booleans(), st.booleans())
def test_markdown_header_splitter_equals_langchain(
    text: str, headers: list[tuple[str, str]], each_line: bool, strip_headers: bool
) -> None:
    reference = MarkdownHeaderTextSplitter(
        headers, return_each_line=each_line, strip_headers=strip_headers
    )
    expected = [(d.page_content, d.metadata) for d in reference.split_text(text)]
    got = splitters.MarkdownHeaderSplitter(headers, each_line, strip_headers).split_text(text)
    assert got == expected
    assert [list(m) for _, m in got] == [list(m) for _, m in expected]  # same key order
