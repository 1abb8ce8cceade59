"""fastnotebook.langchain's classes are LangChain's classes: constructed the
same, usable where those are, taking LangChain's own path (same results, same
errors) for whatever the Rust path does not evaluate exactly."""

from __future__ import annotations

import copy
import pickle
import re
import subprocess
import sys
import textwrap
import warnings
from typing import Any

import httpx
import langchain_text_splitters as lc
import pytest
from langchain_core.documents import BaseDocumentTransformer, Document

from fastnotebook import langchain as fl
from helpers.langchain import register_offline_encodings


@pytest.fixture(autouse=True)
def _offline_tiktoken() -> None:
    register_offline_encodings()


TEXT = (
    "# Title\n\nSome text here. More words follow, and more.\n\n## Part\n\n"
    "def f(x):\n    return x\n\nclass A:\n    pass\n" * 5
)

CLASSES = [
    "RecursiveCharacterTextSplitter",
    "CharacterTextSplitter",
    "TokenTextSplitter",
    "MarkdownTextSplitter",
    "PythonCodeTextSplitter",
    "LatexTextSplitter",
    "MarkdownHeaderTextSplitter",
    "ExperimentalMarkdownSyntaxTextSplitter",
    "HTMLHeaderTextSplitter",
    "RecursiveJsonSplitter",
]


def _docs(docs: Any) -> list[tuple[str, dict[Any, Any]]]:
    return [(d.page_content, d.metadata) for d in docs]


@pytest.mark.parametrize("name", CLASSES)
def test_each_class_is_a_subclass_of_langchains(name: str) -> None:
    ours, theirs = getattr(fl, name), getattr(lc, name)
    assert issubclass(ours, theirs)
    assert ours.__name__ == theirs.__name__
    if issubclass(theirs, lc.TextSplitter):
        assert issubclass(ours, BaseDocumentTransformer)


def test_every_langchain_name_imports_from_here() -> None:
    """The import line is the whole migration: every public name is here."""
    for name in lc.__all__:
        if name in {
            "KonlpyTextSplitter",
            "NLTKTextSplitter",
            "SpacyTextSplitter",
            "SentenceTransformersTokenTextSplitter",
        }:
            continue  # LangChain loads these lazily, with their own dependencies
        assert hasattr(fl, name), name
    assert fl.Language is lc.Language


def test_constructor_errors_are_langchains() -> None:
    for kwargs in (
        {"chunk_size": 0},
        {"chunk_size": 10, "chunk_overlap": 11},
        {"chunk_overlap": -1},
    ):
        with pytest.raises(ValueError) as theirs:
            lc.RecursiveCharacterTextSplitter(**kwargs)
        with pytest.raises(ValueError) as ours:
            fl.RecursiveCharacterTextSplitter(**kwargs)
        assert str(ours.value) == str(theirs.value)


def _same(ours: Any, ref: Any, texts: list[str]) -> None:
    for text in texts:
        assert ours.split_text(text) == ref.split_text(text)
    assert _docs(ours.create_documents(texts)) == _docs(ref.create_documents(texts))


TEXTS = [TEXT, "", "   ", "one", "a b c d e f g h i j " * 30, "é日本😀 " * 50]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"length_function": lambda t: len(t.split()) + 1},
        {"length_function": lambda t: len(t.encode())},
        {"separators": ["\n#{1,6} ", r"\s+", ""], "is_separator_regex": True},
        {"separators": ["(?=class)", "\n", ""], "is_separator_regex": True},
        {"separators": ["\\.", " "], "is_separator_regex": True, "keep_separator": False},
        {"chunk_size": 40.0},
    ],
)
def test_python_only_settings_take_langchains_path(kwargs: dict[str, Any]) -> None:
    base = {"chunk_size": 40, "chunk_overlap": 10, **kwargs}
    ours = fl.RecursiveCharacterTextSplitter(**base)
    ref = lc.RecursiveCharacterTextSplitter(**base)
    assert ours._rust_splitter() is None
    _same(ours, ref, TEXTS)


def test_literal_regex_separators_take_the_rust_path() -> None:
    base = {"chunk_size": 40, "chunk_overlap": 10, "is_separator_regex": True}
    for separators, keep in [
        (["\\.", " ", ""], True),
        (["\n\n", "\n", " "], False),
        (["\\(", "x"], "end"),
    ]:
        ours = fl.RecursiveCharacterTextSplitter(separators=separators, keep_separator=keep, **base)
        ref = lc.RecursiveCharacterTextSplitter(separators=separators, keep_separator=keep, **base)
        assert ours._rust_splitter() is not None
        _same(ours, ref, [*TEXTS, "f(x) (y) a.b.c. " * 10])


def test_character_regex_separators() -> None:
    for separator, regex, keep, rust in [
        ("\\s+", True, False, False),
        ("(?<=\\.) ", True, True, False),
        ("\\.", True, True, True),
        ("\\.", True, False, False),
        (".", False, False, True),
    ]:
        kwargs = {
            "separator": separator,
            "is_separator_regex": regex,
            "keep_separator": keep,
            "chunk_size": 30,
            "chunk_overlap": 5,
        }
        ours, ref = fl.CharacterTextSplitter(**kwargs), lc.CharacterTextSplitter(**kwargs)
        assert (ours._rust_splitter() is not None) is rust, separator
        _same(ours, ref, [*TEXTS, "One. Two.  Three.\tFour. " * 8])


def test_settings_changed_after_construction_are_seen() -> None:
    ours = fl.RecursiveCharacterTextSplitter(chunk_size=50, chunk_overlap=0)
    ref = lc.RecursiveCharacterTextSplitter(chunk_size=50, chunk_overlap=0)
    _same(ours, ref, TEXTS)
    for splitter in (ours, ref):
        splitter._chunk_size = 20
        splitter._keep_separator = "end"
    _same(ours, ref, TEXTS)
    ours._length_function = ref._length_function = lambda t: 2 * len(t)
    assert ours._rust_splitter() is None
    _same(ours, ref, TEXTS)


def test_special_tokens_take_tiktokens_path() -> None:
    text = "before <|endoftext|> after " * 5
    for cls, extra in (
        ("RecursiveCharacterTextSplitter", {}),
        ("CharacterTextSplitter", {"separator": " "}),
    ):
        kwargs: dict[str, Any] = {
            "encoding_name": "o200k_base",
            "chunk_size": 5,
            "chunk_overlap": 0,
            **extra,
        }
        ours = getattr(fl, cls).from_tiktoken_encoder(**kwargs)
        ref = getattr(lc, cls).from_tiktoken_encoder(**kwargs)
        assert ours._rust_splitter() is not None
        assert ours.split_text("plain text only " * 5) == ref.split_text("plain text only " * 5)
        try:
            expected: Any = ref.split_text(text)
        except ValueError as err:
            with pytest.raises(ValueError, match=re.escape(str(err)[:60])):
                ours.split_text(text)
        else:
            assert ours.split_text(text) == expected
    for allowed in ("all", {"<|endoftext|>"}):
        ours = fl.RecursiveCharacterTextSplitter.from_tiktoken_encoder(
            encoding_name="cl100k_base", chunk_size=4, chunk_overlap=1, allowed_special=allowed
        )
        ref = lc.RecursiveCharacterTextSplitter.from_tiktoken_encoder(
            encoding_name="cl100k_base", chunk_size=4, chunk_overlap=1, allowed_special=allowed
        )
        assert ours.split_text(text) == ref.split_text(text)
        ours_t = fl.TokenTextSplitter(
            encoding_name="cl100k_base", chunk_size=3, chunk_overlap=1, allowed_special=allowed
        )
        ref_t = lc.TokenTextSplitter(
            encoding_name="cl100k_base", chunk_size=3, chunk_overlap=1, allowed_special=allowed
        )
        assert ours_t.split_text(text) == ref_t.split_text(text)
    # A disallowed ordinary string raises in tiktoken: so here.
    ours_t = fl.TokenTextSplitter(encoding_name="o200k_base", disallowed_special={"after"})
    with pytest.raises(ValueError):
        ours_t.split_text(text)


def test_other_encodings_take_tiktokens_path() -> None:
    ours = fl.TokenTextSplitter(encoding_name="r50k_base", chunk_size=10, chunk_overlap=2)
    ref = lc.TokenTextSplitter(encoding_name="r50k_base", chunk_size=10, chunk_overlap=2)
    assert ours._rust_splitter() is None
    _same(ours, ref, TEXTS)
    ours_r = fl.RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        "r50k_base", chunk_size=10, chunk_overlap=2
    )
    assert ours_r._rust_splitter() is None
    ref_r = lc.RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        "r50k_base", chunk_size=10, chunk_overlap=2
    )
    _same(ours_r, ref_r, TEXTS)


def test_token_overlap_equal_to_size_raises_as_langchain() -> None:
    ours = fl.TokenTextSplitter(encoding_name="o200k_base", chunk_size=5, chunk_overlap=5)
    ref = lc.TokenTextSplitter(encoding_name="o200k_base", chunk_size=5, chunk_overlap=5)
    with pytest.raises(ValueError) as theirs:
        ref.split_text("abc")
    with pytest.raises(ValueError) as got:
        ours.split_text("abc")
    assert str(got.value) == str(theirs.value)


def test_markdown_header_custom_patterns_take_langchains_path() -> None:
    headers = [("**", "Bold"), ("#", "H1")]
    text = "**Intro**\ntext\n# One\nmore\n**Next**\nend"
    ours = fl.MarkdownHeaderTextSplitter(headers, custom_header_patterns={"**": 1})
    ref = lc.MarkdownHeaderTextSplitter(headers, custom_header_patterns={"**": 1})
    assert ours._rust_splitter() is None
    assert _docs(ours.split_text(text)) == _docs(ref.split_text(text))


def test_html_split_text_from_url(monkeypatch: pytest.MonkeyPatch) -> None:
    """`split_text_from_url` is LangChain's (fetch, then `split_text`)."""
    html = "<html><body><h1>T</h1><p>one</p><h2>S</h2><p>two</p></body></html>"

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text=html)

    from langchain_core._security import _transport

    monkeypatch.setattr(
        _transport,
        "ssrf_safe_client",
        lambda **_: httpx.Client(transport=httpx.MockTransport(handler)),
    )
    headers = [("h1", "A"), ("h2", "B")]
    ours = fl.HTMLHeaderTextSplitter(headers)
    ref = lc.HTMLHeaderTextSplitter(headers)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # deprecated since 1.1.2
        got = ours.split_text_from_url("http://example.invalid/page")
        expected = ref.split_text_from_url("http://example.invalid/page")
    assert _docs(got) == _docs(expected) == _docs(ours.split_text(html))


def test_rust_made_documents_are_ordinary_documents() -> None:
    splitter = fl.RecursiveCharacterTextSplitter(
        chunk_size=30, chunk_overlap=0, add_start_index=True
    )
    reference = lc.RecursiveCharacterTextSplitter(
        chunk_size=30, chunk_overlap=0, add_start_index=True
    )
    docs = splitter.create_documents([TEXT], [{"source": "a", "tags": ["x"]}])
    ref = reference.create_documents([TEXT], [{"source": "a", "tags": ["x"]}])
    assert docs == ref
    for d, r in zip(docs, ref, strict=True):
        assert d.model_dump() == r.model_dump()
        assert d.model_fields_set == r.model_fields_set
        assert d.to_json() == r.to_json()
        assert repr(d) == repr(r)
        assert pickle.loads(pickle.dumps(d)) == d
        assert copy.deepcopy(d) == d
    # Each chunk's metadata is its own copy, nested values included.
    docs[0].metadata["tags"].append("y")
    docs[0].id = "changed"
    assert docs[1].metadata["tags"] == ["x"]
    assert docs[1].id is None
    assert "id" in docs[0].model_fields_set and "id" not in docs[1].model_fields_set


def test_transform_documents_pipeline_is_the_same_with_either_import() -> None:
    source = [
        Document(page_content=TEXT, metadata={"source": "a.md", "page": 1, "tags": ["x"]}),
        Document(page_content=TEXT.upper(), metadata={"source": "b.md", "nested": {"k": [1]}}),
        Document(page_content="", metadata={}),
        Document(page_content="short", id="doc-id", metadata={"source": "c"}),
    ]

    def pipeline(module: Any) -> list[Any]:
        splitters = [
            module.RecursiveCharacterTextSplitter(
                chunk_size=60, chunk_overlap=10, add_start_index=True
            ),
            module.CharacterTextSplitter(separator="\n", chunk_size=50, chunk_overlap=0),
            module.MarkdownTextSplitter(chunk_size=80, chunk_overlap=0, add_start_index=True),
            module.TokenTextSplitter(encoding_name="o200k_base", chunk_size=12, chunk_overlap=3),
        ]
        out = []
        for splitter in splitters:
            docs = list(splitter.transform_documents(copy.deepcopy(source)))
            out.append([(d.page_content, d.metadata, d.id) for d in docs])
            out.append(_docs(splitter.split_documents(copy.deepcopy(source))))
        return out

    assert pipeline(fl) == pipeline(lc)


async def test_async_transform_documents() -> None:
    source = [Document(page_content=TEXT, metadata={"source": "a"})]
    ours = fl.RecursiveCharacterTextSplitter(chunk_size=40, chunk_overlap=5)
    ref = lc.RecursiveCharacterTextSplitter(chunk_size=40, chunk_overlap=5)
    assert _docs(await ours.atransform_documents(source)) == _docs(
        await ref.atransform_documents(source)
    )


def test_metadatas_shorter_than_texts_fail_as_langchain() -> None:
    ours = fl.RecursiveCharacterTextSplitter(chunk_size=10, chunk_overlap=0)
    ref = lc.RecursiveCharacterTextSplitter(chunk_size=10, chunk_overlap=0)
    with pytest.raises(IndexError):
        ref.create_documents(["a", "b"], [{"x": 1}])
    with pytest.raises(IndexError):
        ours.create_documents(["a", "b"], [{"x": 1}])


def test_without_langchain_the_import_says_which_extra() -> None:
    script = textwrap.dedent(
        """
        import importlib.abc, sys

        class NotInstalled(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {"langchain_text_splitters", "langchain_core"}:
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, NotInstalled())
        try:
            import fastnotebook.langchain
        except ImportError as e:
            print(e)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "pip install 'fastnotebook[langchain]'" in done.stdout


def test_sizes_the_core_cannot_take_go_to_langchain() -> None:
    big = 2**70
    ours = fl.RecursiveCharacterTextSplitter(chunk_size=big, chunk_overlap=0)
    ref = lc.RecursiveCharacterTextSplitter(chunk_size=big, chunk_overlap=0)
    assert ours._rust_splitter() is None
    _same(ours, ref, TEXTS)
    ours_c = fl.CharacterTextSplitter(chunk_size=10, chunk_overlap=True)
    ref_c = lc.CharacterTextSplitter(chunk_size=10, chunk_overlap=True)
    assert ours_c._rust_splitter() is None
    _same(ours_c, ref_c, TEXTS)


def test_create_documents_uses_an_overridden_split_text() -> None:
    class Shouting(fl.RecursiveCharacterTextSplitter):
        def split_text(self, text: str) -> list[str]:
            return [c.upper() for c in super().split_text(text)]

    class ShoutingRef(lc.RecursiveCharacterTextSplitter):
        def split_text(self, text: str) -> list[str]:
            return [c.upper() for c in super().split_text(text)]

    kwargs = {"chunk_size": 30, "chunk_overlap": 5, "add_start_index": True}
    texts = [TEXT, "plain words " * 20]
    assert _docs(Shouting(**kwargs).create_documents(texts)) == _docs(
        ShoutingRef(**kwargs).create_documents(texts)
    )


def test_many_documents_split_at_once_as_one_by_one() -> None:
    texts = [TEXT[i:] + "é日" * (i % 7) for i in range(0, 600, 7)]
    for name in ("RecursiveCharacterTextSplitter", "CharacterTextSplitter"):
        kwargs: dict[str, Any] = {"chunk_size": 25, "chunk_overlap": 5, "add_start_index": True}
        ours, ref = getattr(fl, name)(**kwargs), getattr(lc, name)(**kwargs)
        assert _docs(ours.create_documents(texts)) == _docs(ref.create_documents(texts))
        tok = getattr(fl, name).from_tiktoken_encoder(
            encoding_name="cl100k_base", chunk_size=8, chunk_overlap=2
        )
        tok_ref = getattr(lc, name).from_tiktoken_encoder(
            encoding_name="cl100k_base", chunk_size=8, chunk_overlap=2
        )
        assert _docs(tok.create_documents(texts)) == _docs(tok_ref.create_documents(texts))


def test_experimental_markdown_odd_settings() -> None:
    text = "# A\n## B\ntext \ud800 here\n```\ncode\n```\n### C\nend\n"
    for headers in ([("#", None), ("##", "B")], [("h1", "X"), ("#", "A")], None):
        ours = fl.ExperimentalMarkdownSyntaxTextSplitter(headers_to_split_on=headers)
        ref = lc.ExperimentalMarkdownSyntaxTextSplitter(headers_to_split_on=headers)
        assert (ours._rust_splitter() is None) is (headers is not None and headers[0][1] is None)
        assert _docs(ours.split_text(text)) == _docs(ref.split_text(text))
        assert ours.current_header_stack == ref.current_header_stack
