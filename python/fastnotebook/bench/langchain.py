"""``fastnotebook bench --langchain``: each class of ``fastnotebook.langchain``
against the langchain-text-splitters class of the same name, same documents,
same run (interleaved rounds), on ``split_text`` and on ``split_documents``
(``Document``s in, ``Document``s out on both sides). Every row also checks
that both gave the same output."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from fastnotebook.bench.corpus import Corpus
from fastnotebook.bench.timing import Timing, time_rounds

LANGCHAIN_HEADER = [
    "class",
    "settings",
    "documents",
    "call",
    "fastnotebook MB/s",
    "langchain MB/s",
    "speed-up",
    "same output",
]


@dataclass
class LangchainResult:
    cls: str
    settings: str
    kind: str
    call: str
    documents: int
    megabytes: float
    ours: Timing
    theirs: Timing
    identical: bool

    @property
    def ratio(self) -> float:
        return self.ours.median / self.theirs.median if self.theirs.median else 0.0


def _offline_tiktoken() -> None:
    """LangChain's classes ask tiktoken for the encodings, which downloads
    them: give it the local vocabularies first when there are any (the same
    files, checked against OpenAI's hashes)."""
    import tiktoken.registry

    from fastnotebook.bench import reference

    for name in ("o200k_base", "cl100k_base"):
        if name in tiktoken.registry.ENCODINGS:
            continue
        # Without a local file, tiktoken downloads it.
        with contextlib.suppress(FileNotFoundError):
            tiktoken.registry.ENCODINGS[name] = reference.tiktoken_encoding(name)


@dataclass
class _Case:
    cls: str
    settings: str
    kinds: tuple[str, ...]
    make: Callable[[Any], Any]
    documents: bool  # whether split_documents exists (TextSplitter subclasses)


def _cases() -> list[_Case]:
    o200k = "o200k_base"
    return [
        _Case(
            "RecursiveCharacterTextSplitter",
            "1000/200",
            ("html", "markdown", "plain"),
            lambda m: m.RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200),
            True,
        ),
        _Case(
            "RecursiveCharacterTextSplitter",
            "from_tiktoken_encoder o200k 256/32",
            ("html", "markdown", "plain"),
            lambda m: m.RecursiveCharacterTextSplitter.from_tiktoken_encoder(
                encoding_name=o200k, chunk_size=256, chunk_overlap=32
            ),
            True,
        ),
        _Case(
            "CharacterTextSplitter",
            "'\\n\\n' 1000/200",
            ("html", "markdown", "plain"),
            lambda m: m.CharacterTextSplitter(chunk_size=1000, chunk_overlap=200),
            True,
        ),
        _Case(
            "TokenTextSplitter",
            "o200k 256/32",
            ("html", "markdown", "plain"),
            lambda m: m.TokenTextSplitter(encoding_name=o200k, chunk_size=256, chunk_overlap=32),
            True,
        ),
        _Case(
            "MarkdownTextSplitter",
            "1000/200",
            ("markdown",),
            lambda m: m.MarkdownTextSplitter(chunk_size=1000, chunk_overlap=200),
            True,
        ),
        _Case(
            "PythonCodeTextSplitter",
            "1000/200",
            ("plain",),
            lambda m: m.PythonCodeTextSplitter(chunk_size=1000, chunk_overlap=200),
            True,
        ),
        _Case(
            "MarkdownHeaderTextSplitter",
            "# to ####",
            ("markdown",),
            lambda m: m.MarkdownHeaderTextSplitter(
                [("#", "H1"), ("##", "H2"), ("###", "H3"), ("####", "H4")]
            ),
            False,
        ),
        _Case(
            "ExperimentalMarkdownSyntaxTextSplitter",
            "default headers",
            ("markdown",),
            lambda m: m.ExperimentalMarkdownSyntaxTextSplitter(),
            False,
        ),
        _Case(
            "HTMLHeaderTextSplitter",
            "h1 to h3",
            ("html",),
            lambda m: m.HTMLHeaderTextSplitter([("h1", "H1"), ("h2", "H2"), ("h3", "H3")]),
            False,
        ),
    ]


def _output(result: Any) -> list[Any]:
    return [(d.page_content, d.metadata) if hasattr(d, "page_content") else d for d in result]


def bench_langchain(
    corpus: Corpus, repeats: int, only: Sequence[str] = ()
) -> list[LangchainResult]:
    """Every case on the corpus's documents of its kinds (``only``: the
    classes to run, all when empty)."""
    import langchain_text_splitters as lc
    from langchain_core.documents import Document

    from fastnotebook import langchain as fl

    _offline_tiktoken()
    # LangChain logs a warning for each chunk over the size (a piece that
    # could not be split): the same chunks on both sides, noise here.
    logging.getLogger("langchain_text_splitters").setLevel(logging.ERROR)
    results = []
    for case in _cases():
        if only and case.cls not in only:
            continue
        docs = [d for kind in case.kinds for d in corpus.by_kind(kind)]
        if not docs:
            continue
        texts = [d.text for d in docs]
        size = sum(d.size for d in docs)
        ours, theirs = case.make(fl), case.make(lc)
        calls: list[tuple[str, Callable[[Any], Callable[[], object]]]] = [
            ("split_text", partial(_split_texts, texts=texts))
        ]
        if case.documents:
            inputs = [
                Document(page_content=d.text, metadata={"source": d.path, "kind": d.kind})
                for d in docs
            ]
            calls.append(("split_documents", partial(_split_documents, documents=inputs)))
        for call, job in calls:
            identical = _output(_flatten(job(ours)())) == _output(_flatten(job(theirs)()))
            timings = time_rounds(
                {"ours": job(ours), "theirs": job(theirs)}, size, len(docs), repeats
            )
            results.append(
                LangchainResult(
                    cls=case.cls,
                    settings=case.settings,
                    kind="+".join(case.kinds),
                    call=call,
                    documents=len(docs),
                    megabytes=size / 1e6,
                    ours=timings["ours"],
                    theirs=timings["theirs"],
                    identical=identical,
                )
            )
    return results


def _split_texts(splitter: Any, texts: list[str]) -> Callable[[], object]:
    return lambda: [splitter.split_text(t) for t in texts]


def _split_documents(splitter: Any, documents: list[Any]) -> Callable[[], object]:
    return lambda: splitter.split_documents(documents)


def _flatten(result: Any) -> list[Any]:
    """A list of chunk lists (split_text per document) as one list."""
    out: list[Any] = []
    for item in result:
        if isinstance(item, list):
            out.extend(item)
            out.append(None)  # document boundary
        else:
            out.append(item)
    return out


def langchain_rows(results: Sequence[LangchainResult]) -> list[list[str]]:
    return [
        [
            r.cls,
            r.settings,
            f"{r.kind} ({r.documents}, {r.megabytes:.1f} MB)",
            r.call,
            f"{r.ours.median:.1f} ({r.ours.spread()})",
            f"{r.theirs.median:.2f} ({r.theirs.spread()})",
            f"{r.ratio:.1f}x",
            "yes" if r.identical else "NO",
        ]
        for r in results
    ]
