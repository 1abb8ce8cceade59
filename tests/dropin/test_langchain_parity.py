"""fastnotebook.langchain's classes give what langchain-text-splitters' give,
on the shared corpus and on generated text: the same page_content, metadata
(start_index included, same key order) and order, on both of each class's
paths (Rust, and LangChain's own for what only Python can evaluate)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import langchain_text_splitters as lc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document

from fastnotebook import langchain as fl
from helpers.corpus import CORPUS, corpus_files, read
from helpers.documents import documents
from helpers.langchain import register_offline_encodings


@pytest.fixture(autouse=True)
def _offline_tiktoken() -> None:
    register_offline_encodings()


KEEP_MODES: list[Any] = [True, False, "start", "end"]


def _files(*kinds: str) -> list[Path]:
    return [p for kind in kinds for p in corpus_files(kind) if p.is_file()]


def _require(files: list[Path]) -> list[Path]:
    if not files:
        pytest.skip(f"shared corpus not found at {CORPUS} (set FASTNOTEBOOK_CORPUS)")
    return files


def _sample(files: list[Path], n: int, seed: int) -> list[Path]:
    return sorted(random.Random(seed).sample(files, min(n, len(files))))


def _texts(files: list[Path], limit: int | None = None) -> list[str]:
    return [read(p)[:limit] if limit else read(p) for p in files]


def _docs(docs: list[Document]) -> list[tuple[str, dict[Any, Any], list[Any]]]:
    """What must be equal: content, metadata and its key order, in order."""
    for d in docs:
        assert type(d) is Document
    return [(d.page_content, d.metadata, list(d.metadata)) for d in docs]


def _same_documents(ours: Any, ref: Any, texts: list[str], names: list[str]) -> None:
    metadatas = [{"source": name, "n": i} for i, name in enumerate(names)]
    assert _docs(ours.create_documents(texts, metadatas)) == _docs(
        ref.create_documents(texts, metadatas)
    )


def _same_chunks(ours: Any, ref: Any, texts: list[str]) -> None:
    for text in texts:
        assert ours.split_text(text) == ref.split_text(text)


def _both(name: str, **kwargs: Any) -> tuple[Any, Any]:
    return getattr(fl, name)(**kwargs), getattr(lc, name)(**kwargs)


# ----------------------------------------------------------- the whole corpus


def test_recursive_every_document_with_start_index() -> None:
    files = _require(_files("html", "md", "txt"))
    ours, ref = _both(
        "RecursiveCharacterTextSplitter", chunk_size=500, chunk_overlap=100, add_start_index=True
    )
    assert ours._rust_splitter() is not None
    _same_documents(ours, ref, _texts(files), [p.name for p in files])


@pytest.mark.parametrize("keep", KEEP_MODES)
@pytest.mark.parametrize(("size", "overlap"), [(1, 0), (7, 3), (60, 60), (200, 0), (4000, 200)])
def test_recursive_parameter_grid(keep: Any, size: int, overlap: int) -> None:
    files = _sample(_require(_files("html", "md", "txt")), 6, seed=size * 31 + overlap)
    limit = 4000 if size < 50 else 40_000
    for strip in (True, False):
        ours, ref = _both(
            "RecursiveCharacterTextSplitter",
            chunk_size=size,
            chunk_overlap=overlap,
            keep_separator=keep,
            strip_whitespace=strip,
        )
        assert ours._rust_splitter() is not None
        _same_chunks(ours, ref, _texts(files, limit))


def test_character_every_document() -> None:
    files = _require(_files("html", "md", "txt"))
    ours, ref = _both(
        "CharacterTextSplitter", chunk_size=800, chunk_overlap=80, add_start_index=True
    )
    assert ours._rust_splitter() is not None
    _same_documents(ours, ref, _texts(files), [p.name for p in files])


@pytest.mark.parametrize("keep", KEEP_MODES)
@pytest.mark.parametrize("separator", ["\n\n", "\n", " ", "", ". "])
def test_character_parameter_grid(keep: Any, separator: str) -> None:
    files = _sample(_require(_files("html", "md", "txt")), 4, seed=len(separator))
    for size, overlap in [(1, 0), (50, 25), (300, 0), (2000, 1999)]:
        limit = 3000 if size < 100 or not separator else 30_000
        ours, ref = _both(
            "CharacterTextSplitter",
            separator=separator,
            chunk_size=size,
            chunk_overlap=overlap,
            keep_separator=keep,
        )
        _same_chunks(ours, ref, _texts(files, limit))


def test_markdown_every_markdown_document() -> None:
    files = _require(_files("md"))
    ours, ref = _both(
        "MarkdownTextSplitter", chunk_size=400, chunk_overlap=50, add_start_index=True
    )
    assert ours._rust_splitter() is not None
    _same_documents(ours, ref, _texts(files), [p.name for p in files])


@pytest.mark.parametrize("name", ["PythonCodeTextSplitter", "LatexTextSplitter"])
def test_code_splitters_every_document(name: str) -> None:
    files = _require(_files("html", "md", "txt"))
    ours, ref = _both(name, chunk_size=300, chunk_overlap=30)
    assert ours._rust_splitter() is not None
    _same_chunks(ours, ref, _texts(files, 20_000))


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_token_every_document(encoding: str) -> None:
    files = _require(_files("html", "md", "txt"))
    if encoding == "cl100k_base":
        files = _sample(files, 40, seed=7)
    ours, ref = _both(
        "TokenTextSplitter",
        encoding_name=encoding,
        chunk_size=300,
        chunk_overlap=30,
        add_start_index=True,
    )
    assert ours._rust_splitter() is not None
    _same_chunks(ours, ref, _texts(files))
    # start_index searches each chunk from near the last: LangChain's cost is
    # quadratic where a window's decoding is not in the text (a cut character).
    sample = _sample(files, 30, seed=11)
    _same_documents(ours, ref, _texts(sample), [p.name for p in sample])


@pytest.mark.parametrize(("size", "overlap"), [(1, 0), (2, 1), (5, 4), (50, 0)])
def test_token_tiny_windows_cut_characters_alike(size: int, overlap: int) -> None:
    files = _sample(_require(_files("md", "txt")), 8, seed=size)
    ours, ref = _both(
        "TokenTextSplitter", encoding_name="o200k_base", chunk_size=size, chunk_overlap=overlap
    )
    _same_chunks(ours, ref, [*_texts(files, 3000), "日本語のテキスト 😀 é" * 20])


@pytest.mark.parametrize("cls", ["RecursiveCharacterTextSplitter", "CharacterTextSplitter"])
def test_from_tiktoken_encoder(cls: str) -> None:
    files = _sample(_require(_files("html", "md", "txt")), 12, seed=3)
    for encoding, size, overlap in [("o200k_base", 100, 20), ("cl100k_base", 30, 0)]:
        ours = getattr(fl, cls).from_tiktoken_encoder(
            encoding_name=encoding, chunk_size=size, chunk_overlap=overlap
        )
        ref = getattr(lc, cls).from_tiktoken_encoder(
            encoding_name=encoding, chunk_size=size, chunk_overlap=overlap
        )
        assert ours._rust_splitter() is not None
        _same_chunks(ours, ref, _texts(files, 30_000))


def test_from_tiktoken_encoder_model_name() -> None:
    ours = fl.RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        model_name="gpt-4o", chunk_size=50, chunk_overlap=5
    )
    ref = lc.RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        model_name="gpt-4o", chunk_size=50, chunk_overlap=5
    )
    assert ours._rust_splitter() is not None
    files = _sample(_require(_files("md")), 3, seed=1)
    _same_chunks(ours, ref, _texts(files, 20_000))


@pytest.mark.parametrize("language", list(lc.Language))
def test_from_language_every_language(language: lc.Language) -> None:
    files = _sample(_require(_files("html", "md", "txt")), 4, seed=sum(map(ord, language.value)))
    texts = _texts(files, 15_000)
    for keep in (True, False):
        kwargs: dict[str, Any] = {"chunk_size": 200, "chunk_overlap": 20, "keep_separator": keep}
        try:
            ref = lc.RecursiveCharacterTextSplitter.from_language(language, **kwargs)
        except ValueError as err:
            with pytest.raises(ValueError, match=str(err).split("!")[0]):
                fl.RecursiveCharacterTextSplitter.from_language(language, **kwargs)
            return
        ours = fl.RecursiveCharacterTextSplitter.from_language(language, **kwargs)
        assert type(ours) is fl.RecursiveCharacterTextSplitter
        _same_chunks(ours, ref, texts)


def test_from_language_paths() -> None:
    """Which languages' separators are literal strings: those go to Rust."""
    rust = fl.RecursiveCharacterTextSplitter.from_language
    assert rust(lc.Language.PYTHON)._rust_splitter() is not None
    assert rust(lc.Language.R)._rust_splitter() is not None  # "\nsetClass\\(" is literal
    assert rust(lc.Language.R, keep_separator=False)._rust_splitter() is None
    assert rust(lc.Language.MARKDOWN)._rust_splitter() is None  # "\n#{1,6} "
    assert rust(lc.Language.LATEX)._rust_splitter() is None  # "$" anchors
    assert rust(lc.Language.VISUALBASIC6)._rust_splitter() is None  # look-aheads
    assert rust(lc.Language.COBOL)._rust_splitter() is None  # "." matches any character
    assert rust(lc.Language.HASKELL)._rust_splitter() is None  # "\n| " alternates
    for language in (lc.Language.GO, lc.Language.HTML, lc.Language.CSHARP, lc.Language.RUST):
        assert rust(language)._rust_splitter() is not None


@pytest.mark.parametrize("return_each_line", [False, True])
@pytest.mark.parametrize("strip_headers", [True, False])
def test_markdown_header_every_markdown_document(
    return_each_line: bool, strip_headers: bool
) -> None:
    files = _require(_files("md"))
    if return_each_line or not strip_headers:
        files = _sample(files, 40, seed=int(return_each_line) + 2 * int(strip_headers))
    headers = [("#", "H1"), ("##", "H2"), ("###", "H3"), ("####", "H4")]
    ours = fl.MarkdownHeaderTextSplitter(headers, return_each_line, strip_headers)
    ref = lc.MarkdownHeaderTextSplitter(headers, return_each_line, strip_headers)
    assert ours._rust_splitter() is not None
    for text in _texts(files):
        assert _docs(ours.split_text(text)) == _docs(ref.split_text(text))


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"strip_headers": False},
        {"return_each_line": True},
        {"headers_to_split_on": [("##", "Two"), ("#", "One"), ("####", "One")]},
    ],
)
def test_experimental_markdown_every_markdown_document(kwargs: dict[str, Any]) -> None:
    files = _require(_files("md"))
    if kwargs:
        files = _sample(files, 40, seed=len(kwargs) + len(str(kwargs)))
    ours = fl.ExperimentalMarkdownSyntaxTextSplitter(**kwargs)
    ref = lc.ExperimentalMarkdownSyntaxTextSplitter(**kwargs)
    assert ours._rust_splitter() is not None
    for text in _texts(files):
        assert _experimental(ours, text) == _experimental(ref, text)


def _experimental(splitter: Any, text: str) -> Any:
    """The documents, their fields set, and the state the splitter keeps."""
    docs = splitter.split_text(text)
    return (
        _docs(docs),
        [sorted(d.model_fields_set) for d in docs],
        docs is splitter.chunks,
        _docs(splitter.chunks),
        [sorted(d.model_fields_set) for d in splitter.chunks],
        splitter.current_header_stack,
        _docs([splitter.current_chunk]),
    )


@pytest.mark.parametrize("each", [False, True])
def test_html_header_every_html_document(each: bool) -> None:
    files = _require(_files("html"))
    if each:
        files = _sample(files, 15, seed=5)
    headers = [("h1", "Header 1"), ("h2", "Header 2"), ("h3", "Header 3")]
    ours = fl.HTMLHeaderTextSplitter(headers, return_each_element=each)
    ref = lc.HTMLHeaderTextSplitter(headers, return_each_element=each)
    assert ours._rust_splitter() is not None
    for text in _texts(files):
        assert _docs(ours.split_text(text)) == _docs(ref.split_text(text))


def test_html_header_from_file(tmp_path: Path) -> None:
    files = _sample(_require(_files("html")), 3, seed=9)
    headers = [("h2", "B"), ("h1", "A")]
    ours, ref = fl.HTMLHeaderTextSplitter(headers), lc.HTMLHeaderTextSplitter(headers)
    for path in files:
        assert _docs(ours.split_text_from_file(str(path))) == _docs(
            ref.split_text_from_file(str(path))
        )
        with path.open(encoding="utf-8") as a, path.open(encoding="utf-8") as b:
            assert _docs(ours.split_text_from_file(a)) == _docs(ref.split_text_from_file(b))


def test_recursive_json_every_document() -> None:
    files = _require(_files("html", "md", "txt"))
    data = [
        {
            "name": p.name,
            "lines": {str(i): ln for i, ln in enumerate(read(p).splitlines()[:150])},
            "list": read(p).split()[:40],
        }
        for p in files
    ]
    for convert in (False, True):
        ours = fl.RecursiveJsonSplitter(max_chunk_size=600)
        ref = lc.RecursiveJsonSplitter(max_chunk_size=600)
        metadatas = [{"source": p.name, "tags": ["a", {"b": 1}]} for p in files]
        assert _docs(ours.create_documents(data, convert_lists=convert, metadatas=metadatas)) == (
            _docs(ref.create_documents(data, convert_lists=convert, metadatas=metadatas))
        )
        assert ours.split_text(data[0], convert_lists=convert) == ref.split_text(
            data[0], convert_lists=convert
        )
        assert json.loads(ours.split_text(data[0])[0])


# ------------------------------------------------------------ generated text

separator_lists = st.lists(
    st.sampled_from(["\n\n", "\n", ". ", ", ", " ", "", "ab", "#", "é", "\r\n", "日"]),
    min_size=1,
    max_size=6,
)


@st.composite
def sizes(draw: st.DrawFn) -> tuple[int, int]:
    size = draw(st.integers(1, 300))
    return size, draw(st.integers(0, size))


@settings(max_examples=300, deadline=None)
@given(
    documents, sizes(), separator_lists, st.sampled_from(KEEP_MODES), st.booleans(), st.booleans()
)
def test_generated_recursive(
    text: str,
    size_overlap: tuple[int, int],
    separators: list[str],
    keep: Any,
    strip: bool,
    regex: bool,
) -> None:
    size, overlap = size_overlap
    if regex:
        separators = [s.replace(".", "\\.") for s in separators]
    kwargs = dict(
        chunk_size=size,
        chunk_overlap=overlap,
        separators=separators,
        keep_separator=keep,
        strip_whitespace=strip,
        is_separator_regex=regex,
        add_start_index=True,
    )
    ours, ref = _both("RecursiveCharacterTextSplitter", **kwargs)
    assert ours.split_text(text) == ref.split_text(text)
    assert _docs(ours.create_documents([text, text])) == _docs(ref.create_documents([text, text]))


@settings(max_examples=300, deadline=None)
@given(
    documents,
    sizes(),
    st.sampled_from(["\n\n", "\n", " ", "", "é", ". "]),
    st.sampled_from(KEEP_MODES),
    st.booleans(),
)
def test_generated_character(
    text: str, size_overlap: tuple[int, int], separator: str, keep: Any, strip: bool
) -> None:
    size, overlap = size_overlap
    ours, ref = _both(
        "CharacterTextSplitter",
        separator=separator,
        chunk_size=size,
        chunk_overlap=overlap,
        keep_separator=keep,
        strip_whitespace=strip,
        add_start_index=True,
    )
    assert ours.split_text(text) == ref.split_text(text)
    assert _docs(ours.create_documents([text])) == _docs(ref.create_documents([text]))


@settings(max_examples=100, deadline=None)
@given(documents, st.integers(1, 40), st.data())
def test_generated_token(text: str, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(0, size - 1))
    encoding = data.draw(st.sampled_from(["o200k_base", "cl100k_base"]))
    ours, ref = _both(
        "TokenTextSplitter",
        encoding_name=encoding,
        chunk_size=size,
        chunk_overlap=overlap,
        add_start_index=True,
    )
    assert ours.split_text(text) == ref.split_text(text)
    assert _docs(ours.create_documents([text])) == _docs(ref.create_documents([text]))


@settings(max_examples=150, deadline=None)
@given(documents, st.integers(1, 60), st.data())
def test_generated_tiktoken_lengths(text: str, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(0, size))
    keep = data.draw(st.sampled_from(KEEP_MODES))
    for cls in ("RecursiveCharacterTextSplitter", "CharacterTextSplitter"):
        ours = getattr(fl, cls).from_tiktoken_encoder(
            encoding_name="o200k_base",
            chunk_size=size,
            chunk_overlap=overlap,
            keep_separator=keep,
        )
        ref = getattr(lc, cls).from_tiktoken_encoder(
            encoding_name="o200k_base",
            chunk_size=size,
            chunk_overlap=overlap,
            keep_separator=keep,
        )
        assert ours.split_text(text) == ref.split_text(text)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            documents,
            st.sampled_from(
                [
                    "# ",
                    "## H\n",
                    "```py\n",
                    "~~~\n",
                    "---\n",
                    "***\n",
                    "___\r\n",
                    "####### x\n",
                    "#x\n",
                    "\u2028",
                    "\r",
                    "   \n",
                    "\x0c",
                ]
            ),
        ),
        max_size=12,
    ).map("".join),
    st.booleans(),
    st.booleans(),
)
def test_generated_experimental_markdown(text: str, strip: bool, each: bool) -> None:
    ours = fl.ExperimentalMarkdownSyntaxTextSplitter(strip_headers=strip, return_each_line=each)
    ref = lc.ExperimentalMarkdownSyntaxTextSplitter(strip_headers=strip, return_each_line=each)
    assert _experimental(ours, text) == _experimental(ref, text)
    # The second call clears and reuses the list the first returned, as LangChain's.
    first, first_ref = ours.split_text(text), ref.split_text(text)
    ours.split_text("# other\nx\n")
    ref.split_text("# other\nx\n")
    assert _docs(first) == _docs(first_ref)


@settings(max_examples=100, deadline=None)
@given(documents, st.booleans(), st.booleans())
def test_generated_markdown_header(text: str, each_line: bool, strip: bool) -> None:
    headers = [("#", "A"), ("##", "B"), ("###", "C")]
    ours = fl.MarkdownHeaderTextSplitter(headers, each_line, strip)
    ref = lc.MarkdownHeaderTextSplitter(headers, each_line, strip)
    assert _docs(ours.split_text(text)) == _docs(ref.split_text(text))


# --------------------------------------------------------------- start_index


@pytest.mark.parametrize(
    "name", ["RecursiveCharacterTextSplitter", "CharacterTextSplitter", "TokenTextSplitter"]
)
def test_start_index_with_repeated_text(name: str) -> None:
    kwargs: dict[str, Any] = {"chunk_size": 12, "chunk_overlap": 4, "add_start_index": True}
    if name == "CharacterTextSplitter":
        kwargs["separator"] = " "
    if name == "TokenTextSplitter":
        kwargs.update(chunk_size=3, chunk_overlap=1, encoding_name="o200k_base")
    ours, ref = _both(name, **kwargs)
    texts = ["abc abc abc abc abc abc abc", "x " * 40, "aaaa " * 30 + "b", "é😀 é😀 " * 15]
    got = _docs(ours.create_documents(texts))
    assert got == _docs(ref.create_documents(texts))
    assert all("start_index" in m for _, m, _ in got)
