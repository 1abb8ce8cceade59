"""The chunkers compared, at Open Notebook's settings.

Each method says what it is, in which unit its limit is counted, and whether
it can run here (peers are optional extras: a missing one is reported as
missing, not a failure). ``chunk(document)`` gives the chunks of one document.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from fastnotebook import chunking
from fastnotebook.bench import reference
from fastnotebook.bench.corpus import Document
from fastnotebook.chunking_config import Unit

CHARS_SIZE, CHARS_OVERLAP = 1500, 225
TOKENS_SIZE, TOKENS_OVERLAP = 400, 60
ENCODING = "o200k_base"
_CONTENT_TYPES = {
    "html": chunking.ContentType.HTML,
    "markdown": chunking.ContentType.MARKDOWN,
    "plain": chunking.ContentType.PLAIN,
}


@dataclass
class Method:
    name: str
    unit: str  # "chars" or "tokens"
    limit: int
    #: "fastnotebook", "original" or "peer"
    family: str
    make: Callable[[], Callable[[Document], list[str]]]
    requires: tuple[str, ...] = ()
    #: A further condition for running: why not, or None.
    precondition: Callable[[], str | None] | None = None

    def missing(self) -> str | None:
        """Why the method cannot run here, or None."""
        absent = [m for m in self.requires if importlib.util.find_spec(m) is None]
        if absent:
            return f"not installed: {', '.join(absent)}"
        if self.precondition is not None and (reason := self.precondition()):
            return reason
        if self.unit == "tokens" and self.family == "original":
            try:
                reference.tiktoken_encoding(ENCODING)
            except FileNotFoundError as e:
                return str(e)
        return None


def _fastnotebook(unit: Unit) -> Callable[[], Callable[[Document], list[str]]]:
    def make() -> Callable[[Document], list[str]]:
        def run(doc: Document) -> list[str]:
            return chunking.chunk_text(doc.text, _CONTENT_TYPES[doc.kind], unit=unit)

        return run

    return make


#: The row of Open Notebook's current contract: its module of the same name,
#: compared with the original of its unit (built as the release builds it).
OPEN_NOTEBOOK_HEAD = "Open Notebook HEAD (tokens 400/15%): fastnotebook.open_notebook"


def _open_notebook_head() -> Callable[[Document], list[str]]:
    from fastnotebook.open_notebook import chunking as head

    types = {t.value: t for t in head.ContentType}
    return lambda doc: head.chunk_text(doc.text, types[doc.kind])


def _open_notebook_head_defaults() -> str | None:
    """The row is the release's defaults: not run under other sizes (set by
    ``OPEN_NOTEBOOK_CHUNK_*`` at import), which the original would not use."""
    from fastnotebook.open_notebook import chunking as head

    sizes = (head.CHUNK_SIZE, head.CHUNK_OVERLAP, head.MIN_CHUNK_SIZE)
    if sizes != (TOKENS_SIZE, TOKENS_OVERLAP, 5):
        return f"OPEN_NOTEBOOK_* sizes in effect {sizes}, not the release's (400, 60, 5)"
    return None


def _original(unit: str) -> Callable[[], Callable[[Document], list[str]]]:
    def make() -> Callable[[Document], list[str]]:
        if unit == "tokens":
            reference.tiktoken_encoding(ENCODING)  # load before timing

        def run(doc: Document) -> list[str]:
            return reference.chunk_text(doc.text, doc.kind, unit=unit)

        return run

    return make


def _langchain_recursive() -> Callable[[Document], list[str]]:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(
        chunk_size=CHARS_SIZE, chunk_overlap=CHARS_OVERLAP, separators=reference.SEPARATORS
    )
    return lambda doc: splitter.split_text(doc.text)


def _semantic_text_splitter(unit: str) -> Callable[[], Callable[[Document], list[str]]]:
    def make() -> Callable[[Document], list[str]]:
        from semantic_text_splitter import TextSplitter

        splitter: Any
        if unit == "chars":
            splitter = TextSplitter(CHARS_SIZE, overlap=CHARS_OVERLAP)
        else:
            splitter = TextSplitter.from_tiktoken_model(
                "gpt-4o", TOKENS_SIZE, overlap=TOKENS_OVERLAP
            )
        return lambda doc: list(splitter.chunks(doc.text))

    return make


def _chonkie(kind: str) -> Callable[[], Callable[[Document], list[str]]]:
    def make() -> Callable[[Document], list[str]]:
        import chonkie

        chunker: Any
        if kind == "recursive":
            chunker = chonkie.RecursiveChunker(tokenizer="character", chunk_size=CHARS_SIZE)
        else:
            chunker = chonkie.FastChunker(chunk_size=CHARS_SIZE)
        return lambda doc: [c.text for c in chunker.chunk(doc.text)]

    return make


def _semchunk() -> Callable[[Document], list[str]]:
    from semchunk import chunk  # type: ignore[attr-defined, unused-ignore]  # not in __all__

    return lambda doc: cast(list[str], chunk(doc.text, CHARS_SIZE, len, overlap=CHARS_OVERLAP))


def chunking_methods() -> list[Method]:
    return [
        Method("fastnotebook", "chars", CHARS_SIZE, "fastnotebook", _fastnotebook("chars")),
        Method(
            "original (langchain)",
            "chars",
            CHARS_SIZE,
            "original",
            _original("chars"),
            ("langchain_text_splitters", "bs4"),
        ),
        Method("fastnotebook", "tokens", TOKENS_SIZE, "fastnotebook", _fastnotebook("tokens")),
        Method(
            "original (langchain+tiktoken)",
            "tokens",
            TOKENS_SIZE,
            "original",
            _original("tokens"),
            ("langchain_text_splitters", "bs4", "tiktoken"),
        ),
        Method(
            OPEN_NOTEBOOK_HEAD,
            "tokens",
            TOKENS_SIZE,
            "fastnotebook",
            _open_notebook_head,
            precondition=_open_notebook_head_defaults,
        ),
        Method(
            "langchain RecursiveCharacterTextSplitter",
            "chars",
            CHARS_SIZE,
            "peer",
            _langchain_recursive,
            ("langchain_text_splitters",),
        ),
        Method(
            "semantic-text-splitter",
            "chars",
            CHARS_SIZE,
            "peer",
            _semantic_text_splitter("chars"),
            ("semantic_text_splitter",),
        ),
        Method(
            "semantic-text-splitter (tiktoken)",
            "tokens",
            TOKENS_SIZE,
            "peer",
            _semantic_text_splitter("tokens"),
            ("semantic_text_splitter",),
        ),
        Method(
            "chonkie RecursiveChunker",
            "chars",
            CHARS_SIZE,
            "peer",
            _chonkie("recursive"),
            ("chonkie",),
        ),
        Method("chonkie FastChunker", "chars", CHARS_SIZE, "peer", _chonkie("fast"), ("chonkie",)),
        Method("semchunk", "chars", CHARS_SIZE, "peer", _semchunk, ("semchunk",)),
    ]
