"""pytest-benchmark suites of the hot paths, each beside its reference or
peer in one benchmark group (docs/performance.md, "pytest-benchmark"):

- ``chunk_text[KIND-UNIT]``: ``fastnotebook.chunk_text`` against the original
  pipeline, by content type and unit;
- ``token_count[ENCODING]``: against tiktoken;
- ``pooling``: ``mean_pool_embeddings`` against the original's numpy path;
- ``strategy[S]``: each ``chunk()`` strategy against the peer closest to it;
- ``langchain[CLASS]``: each ``fastnotebook.langchain`` class against the
  langchain-text-splitters class of the same name.

The documents are the bundled samples (``samples/python-docs``, three kinds),
so the figures compare across machines and commits:

    pytest benches --benchmark-only --benchmark-autosave      # record
    pytest benches --benchmark-only --benchmark-compare       # against the last record
    pytest benches --benchmark-disable -q                     # once each, as tests (CI)
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fastnotebook import chunk, chunking, token_utils
from fastnotebook.bench import reference
from fastnotebook.bench.corpus import Corpus, load
from fastnotebook.bench.langchain import _cases, _offline_tiktoken
from fastnotebook.embedding import mean_pool_embeddings

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "python-docs"
KINDS = ("html", "markdown", "plain")
# Bytes of each kind: enough for steady timings, little enough that the
# original's slowest path (HTML) stays under a second a call.
PER_KIND = 120_000
CONTENT_TYPES = {
    "html": chunking.ContentType.HTML,
    "markdown": chunking.ContentType.MARKDOWN,
    "plain": chunking.ContentType.PLAIN,
}

pytest.importorskip("pytest_benchmark", reason="pip install pytest-benchmark (the dev extra)")


@cache
def corpus() -> Corpus:
    return load(SAMPLES)


@cache
def texts(kind: str) -> tuple[str, ...]:
    out: list[str] = []
    size = 0
    for doc in corpus().by_kind(kind):
        if size >= PER_KIND:
            break
        out.append(doc.text)
        size += len(doc.text.encode("utf-8"))
    assert out, f"no {kind} document in {SAMPLES}"
    return tuple(out)


def needs(*modules: str) -> None:
    for module in modules:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed")


def tiktoken_available(encoding: str) -> Any:
    try:
        return reference.tiktoken_encoding(encoding)
    except FileNotFoundError as e:
        pytest.skip(str(e))


# chunk_text by content type and unit ------------------------------------------


@pytest.mark.parametrize("unit", ["chars", "tokens"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("impl", ["fastnotebook", "original"])
def test_chunk_text(benchmark: Any, impl: str, kind: str, unit: str) -> None:
    benchmark.group = f"chunk_text[{kind}-{unit}]"
    docs = texts(kind)
    if impl == "fastnotebook":
        content_type = CONTENT_TYPES[kind]
        result = benchmark(lambda: [chunking.chunk_text(t, content_type, unit=unit) for t in docs])
    else:
        needs("langchain_text_splitters", "bs4")
        if unit == "tokens":
            tiktoken_available("o200k_base")  # the original's token length, loaded untimed
        result = benchmark(lambda: [reference.chunk_text(t, kind, unit=unit) for t in docs])
    assert all(result)


# token_count -------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
@pytest.mark.parametrize("impl", ["fastnotebook", "tiktoken"])
def test_token_count(benchmark: Any, impl: str, encoding: str) -> None:
    benchmark.group = f"token_count[{encoding}]"
    docs = texts("markdown") + texts("plain")
    if impl == "fastnotebook":
        counts = benchmark(lambda: [token_utils.token_count(t, encoding) for t in docs])
    else:
        needs("tiktoken")
        tokens = tiktoken_available(encoding)
        counts = benchmark(lambda: [len(tokens.encode_ordinary(t)) for t in docs])
    assert all(c > 0 for c in counts)


# pooling -----------------------------------------------------------------------


@pytest.mark.parametrize("impl", ["fastnotebook", "original"])
def test_pooling(benchmark: Any, impl: str) -> None:
    benchmark.group = "pooling[200 documents x 8 x 768]"
    rng = np.random.default_rng(0)
    lists = [rng.standard_normal((8, 768)).tolist() for _ in range(200)]
    pool = mean_pool_embeddings if impl == "fastnotebook" else reference.mean_pool

    async def all_documents() -> list[list[float]]:
        return [await pool(e) for e in lists]

    pooled = benchmark(lambda: asyncio.run(all_documents()))
    assert len(pooled) == 200 and len(pooled[0]) == 768


# every strategy against its closest peer ----------------------------------------


def words_embedding(batch: list[str]) -> np.ndarray:
    """A cheap deterministic embedding for the semantic strategies: the
    benchmark times the chunking, not a model."""
    out = np.zeros((len(batch), 64), dtype=np.float32)
    for i, text in enumerate(batch):
        for word in text.split():
            out[i, hash(word) % 64] += 1.0
    return out


def json_document() -> str:
    items = [{"id": i, "title": f"item {i}", "text": t[:400]} for i, t in enumerate(texts("plain"))]
    return json.dumps({"items": items * 5})


def _ours(strategy: str) -> Callable[[], object]:
    options: dict[str, Any] = {"chunk_size": 1000, "overlap": 0}
    docs: tuple[str, ...] = texts("markdown")
    if strategy == "token":
        options.update(chunk_size=256, unit="tokens", overlap=32)
    elif strategy == "recursive":
        options["overlap"] = 200
    elif strategy == "html":
        docs = texts("html")
    elif strategy == "json":
        docs = (json_document(),)
    elif strategy.startswith("semantic"):
        options["embed"] = words_embedding
        docs = docs[:2]
    return lambda: [chunk(t, strategy, **options) for t in docs]  # type: ignore[arg-type]


def _peer(strategy: str) -> Callable[[], object]:
    if strategy == "recursive":
        needs("langchain_text_splitters")
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        splitter: Any = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)
        return lambda: [splitter.split_text(t) for t in texts("markdown")]
    if strategy == "token":
        needs("chonkie")
        import chonkie

        token_chunker = chonkie.TokenChunker(
            tokenizer=tiktoken_available("o200k_base"), chunk_size=256, chunk_overlap=32
        )
        return lambda: [token_chunker.chunk(t) for t in texts("markdown")]
    if strategy == "markdown":
        needs("semantic_text_splitter")
        from semantic_text_splitter import MarkdownSplitter

        markdown = MarkdownSplitter(1000)
        return lambda: [markdown.chunks(t) for t in texts("markdown")]
    if strategy == "sentence":
        needs("chonkie")
        import chonkie

        sentences = chonkie.SentenceChunker(tokenizer="character", chunk_size=1000)
        return lambda: [sentences.chunk(t) for t in texts("markdown")]
    if strategy == "html":
        needs("langchain_text_splitters", "bs4")
        from langchain_text_splitters import HTMLHeaderTextSplitter

        headers = [(f"h{i}", f"H{i}") for i in range(1, 7)]
        html_splitter = HTMLHeaderTextSplitter(headers)
        return lambda: [html_splitter.split_text(t) for t in texts("html")]
    if strategy == "json":
        needs("langchain_text_splitters")
        from langchain_text_splitters import RecursiveJsonSplitter

        data = json.loads(json_document())
        json_splitter = RecursiveJsonSplitter(max_chunk_size=1000)
        return lambda: json_splitter.split_text(data)
    pytest.skip(f"no peer library has the {strategy} strategy with a pluggable embedding")


STRATEGY_PEERS = {
    "recursive": "langchain",
    "token": "chonkie",
    "markdown": "semantic-text-splitter",
    "sentence": "chonkie",
    "json": "langchain",
    "html": "langchain",
    "semantic": None,
    "semantic_double_pass": None,
}


@pytest.mark.parametrize(
    ("strategy", "impl"),
    [(s, "fastnotebook") for s in STRATEGY_PEERS]
    + [(s, peer) for s, peer in STRATEGY_PEERS.items() if peer is not None],
)
def test_strategy(benchmark: Any, strategy: str, impl: str) -> None:
    benchmark.group = f"strategy[{strategy}]"
    logging.getLogger("langchain_text_splitters").setLevel(logging.ERROR)
    run = _ours(strategy) if impl == "fastnotebook" else _peer(strategy)
    assert benchmark(run)


# the LangChain classes -----------------------------------------------------------

LANGCHAIN_CASES = [(c.cls, c.settings) for c in _cases()]


@pytest.mark.parametrize(("cls", "settings"), LANGCHAIN_CASES)
@pytest.mark.parametrize("impl", ["fastnotebook", "langchain"])
def test_langchain(benchmark: Any, impl: str, cls: str, settings: str) -> None:
    needs("langchain_text_splitters")
    import langchain_text_splitters as lc

    from fastnotebook import langchain as fl

    _offline_tiktoken()
    logging.getLogger("langchain_text_splitters").setLevel(logging.ERROR)
    case = next(c for c in _cases() if (c.cls, c.settings) == (cls, settings))
    benchmark.group = f"langchain[{cls} {settings}]"
    try:
        splitter = case.make(fl if impl == "fastnotebook" else lc)
    except (OSError, ValueError) as e:  # an encoding tiktoken would download
        pytest.skip(f"{cls}: {e}")
    docs = [t for kind in case.kinds for t in texts(kind)]
    assert benchmark(lambda: [splitter.split_text(t) for t in docs])
