"""Chunk records (``fastnotebook.chunk``) against the closest peer of each
strategy, in the same run on the same documents.

Each case is one strategy at one setting, on the documents it is for; every
method of a case gets the same texts and the same size. Ours return ``Chunk``
records (text, offsets, lines, ids, links, token counts); the peers return
what they return (strings or their own chunk objects). Ratios are the median
MB/s of ``fastnotebook`` single-threaded (``chunk`` per document) over the
fastest peer's; ``chunk_many`` (all cores) is reported beside.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from fastnotebook.bench.corpus import Corpus

ENCODING = "o200k_base"


@dataclass
class RecordResult:
    case: str
    method: str
    documents: int
    megabytes: float
    mbs: float
    spread: str
    chunks: int
    #: fastnotebook single-threaded over the fastest peer (ours only).
    ratio_to_fastest_peer: float | None = None
    #: Semantic cases: the share of the time spent in the embedding function
    #: (the MB/s and ratio are of the time outside it).
    embedding_share: float | None = None


#: The cases the README's headline table shows (the full table has them all).
HEADLINE_CASES = (
    "recursive, 1000 chars, overlap 100",
    "sentence, 256 tokens",
    "recursive, 256 tokens, overlap 32",
    "token, 512 tokens, overlap 64",
    "markdown, 400 tokens",
)


@dataclass
class Case:
    name: str
    kind: str
    #: Our call for one text.
    ours: Callable[[str], list[Any]]
    #: Our batch call.
    ours_many: Callable[[list[str]], list[Any]]
    #: Peer name -> (modules it needs, maker of its call for one text).
    peers: dict[str, tuple[tuple[str, ...], Callable[[], Callable[[str], list[Any]]]]]
    #: Turns a corpus text into this case's input (JSON for ``json``).
    prepare: Callable[[str], str] = str


def _tiktoken() -> Any:
    from fastnotebook.bench import reference

    return reference.tiktoken_encoding(ENCODING)


def _chonkie(kind: str, size: int, overlap: int = 0, tokens: bool = False) -> Any:
    def make() -> Callable[[str], list[Any]]:
        import chonkie

        tokenizer: Any = _tiktoken() if tokens else "character"
        chunker: Any
        if kind == "sentence":
            chunker = chonkie.SentenceChunker(
                tokenizer=tokenizer, chunk_size=size, chunk_overlap=overlap
            )
        elif kind == "recursive":
            chunker = chonkie.RecursiveChunker(tokenizer=tokenizer, chunk_size=size)
        else:
            chunker = chonkie.TokenChunker(
                tokenizer=tokenizer, chunk_size=size, chunk_overlap=overlap
            )
        return lambda text: list(chunker.chunk(text))

    return make


def _langchain_recursive(size: int, overlap: int, tokens: bool = False) -> Any:
    def make() -> Callable[[str], list[Any]]:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        if tokens:
            enc = _tiktoken()
            splitter = RecursiveCharacterTextSplitter(
                chunk_size=size,
                chunk_overlap=overlap,
                length_function=lambda s: len(enc.encode(s, disallowed_special=())),
            )
        else:
            splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap)
        return splitter.split_text

    return make


def _text_splitter_markdown(size: int, tokens: bool) -> Any:
    def make() -> Callable[[str], list[Any]]:
        from semantic_text_splitter import MarkdownSplitter

        splitter: Any = (
            MarkdownSplitter.from_tiktoken_model("gpt-4o", size)
            if tokens
            else MarkdownSplitter(size)
        )
        return lambda text: list(splitter.chunks(text))

    return make


def _langchain_markdown(size: int) -> Any:
    def make() -> Callable[[str], list[Any]]:
        from langchain_text_splitters import (
            MarkdownHeaderTextSplitter,
            RecursiveCharacterTextSplitter,
        )

        headers = MarkdownHeaderTextSplitter([("#" * i, f"h{i}") for i in range(1, 7)])
        splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=0)
        return lambda text: splitter.split_documents(headers.split_text(text))

    return make


def _langchain_html() -> Any:
    def make() -> Callable[[str], list[Any]]:
        from langchain_text_splitters import HTMLHeaderTextSplitter

        splitter = HTMLHeaderTextSplitter([(f"h{i}", f"h{i}") for i in range(1, 7)])
        return splitter.split_text

    return make


def _langchain_json(size: int) -> Any:
    def make() -> Callable[[str], list[Any]]:
        from langchain_text_splitters import RecursiveJsonSplitter

        splitter = RecursiveJsonSplitter(max_chunk_size=size)
        return lambda text: splitter.split_text(json.loads(text), convert_lists=True)

    return make


def _as_json(text: str) -> str:
    return json.dumps({"paragraphs": text.split("\n\n"), "lines": text.splitlines()})


def cases() -> list[Case]:
    from fastnotebook import chunk, chunk_many
    from fastnotebook.chunkers import Strategy

    def ours(strategy: Strategy, **options: Any) -> tuple[Callable[[str], list[Any]], Any]:
        return (
            partial(chunk, strategy=strategy, **options),
            partial(chunk_many, strategy=strategy, **options),
        )

    found: list[Case] = []
    one, many = ours("sentence", chunk_size=512)
    found.append(
        Case(
            "sentence, 512 chars",
            "plain",
            one,
            many,
            {"chonkie SentenceChunker": (("chonkie",), _chonkie("sentence", 512))},
        )
    )
    one, many = ours("sentence", chunk_size=256, unit="tokens")
    found.append(
        Case(
            "sentence, 256 tokens",
            "plain",
            one,
            many,
            {
                "chonkie SentenceChunker (tiktoken)": (
                    ("chonkie", "tiktoken"),
                    _chonkie("sentence", 256, tokens=True),
                )
            },
        )
    )
    one, many = ours("recursive", chunk_size=1000, overlap=100)
    found.append(
        Case(
            "recursive, 1000 chars, overlap 100",
            "plain",
            one,
            many,
            {
                "langchain RecursiveCharacterTextSplitter": (
                    ("langchain_text_splitters",),
                    _langchain_recursive(1000, 100),
                ),
                "chonkie RecursiveChunker (no overlap)": (
                    ("chonkie",),
                    _chonkie("recursive", 1000),
                ),
            },
        )
    )
    one, many = ours("recursive", chunk_size=256, overlap=32, unit="tokens")
    found.append(
        Case(
            "recursive, 256 tokens, overlap 32",
            "plain",
            one,
            many,
            {
                "langchain RecursiveCharacterTextSplitter (tiktoken)": (
                    ("langchain_text_splitters", "tiktoken"),
                    _langchain_recursive(256, 32, tokens=True),
                ),
                "chonkie RecursiveChunker (tiktoken, no overlap)": (
                    ("chonkie", "tiktoken"),
                    _chonkie("recursive", 256, tokens=True),
                ),
            },
        )
    )
    one, many = ours("token", chunk_size=512, overlap=64, unit="tokens")
    found.append(
        Case(
            "token, 512 tokens, overlap 64",
            "plain",
            one,
            many,
            {
                "chonkie TokenChunker (tiktoken)": (
                    ("chonkie", "tiktoken"),
                    _chonkie("token", 512, 64, tokens=True),
                )
            },
        )
    )
    one, many = ours("markdown", chunk_size=400, unit="tokens")
    found.append(
        Case(
            "markdown, 400 tokens",
            "markdown",
            one,
            many,
            {
                "semantic-text-splitter MarkdownSplitter (tiktoken)": (
                    ("semantic_text_splitter",),
                    _text_splitter_markdown(400, tokens=True),
                )
            },
        )
    )
    one, many = ours("markdown", chunk_size=1000)
    found.append(
        Case(
            "markdown, 1000 chars",
            "markdown",
            one,
            many,
            {
                "semantic-text-splitter MarkdownSplitter": (
                    ("semantic_text_splitter",),
                    _text_splitter_markdown(1000, tokens=False),
                ),
                "langchain MarkdownHeaderTextSplitter + Recursive": (
                    ("langchain_text_splitters",),
                    _langchain_markdown(1000),
                ),
            },
        )
    )
    one, many = ours("html", chunk_size=1000)
    found.append(
        Case(
            "html, 1000 chars",
            "html",
            one,
            many,
            {
                "langchain HTMLHeaderTextSplitter (no sizing)": (
                    ("langchain_text_splitters", "bs4"),
                    _langchain_html(),
                )
            },
        )
    )
    one, many = ours("json", chunk_size=1000)
    found.append(
        Case(
            "json, 1000 chars",
            "plain",
            one,
            many,
            {
                "langchain RecursiveJsonSplitter": (
                    ("langchain_text_splitters",),
                    _langchain_json(1000),
                )
            },
            prepare=_as_json,
        )
    )
    return found


EMBED_DIM = 64


class _Embedder:
    """The same deterministic embedding function for every method (hashed bag of
    words), timing its own calls so that they can be left out."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def __call__(self, texts: list[str]) -> Any:
        import time
        import zlib

        import numpy as np

        start = time.perf_counter()
        out = np.zeros((len(texts), EMBED_DIM), dtype=np.float32)
        for i, t in enumerate(texts):
            for word in t.lower().split():
                out[i, zlib.crc32(word.encode()) % EMBED_DIM] += 1.0
        self.seconds += time.perf_counter() - start
        return out


def _chonkie_semantic(embedder: _Embedder, size: int) -> Callable[[str], list[Any]]:
    import importlib

    import chonkie
    import numpy as np

    def similarity(self: Any, u: Any, v: Any) -> Any:
        n = float(np.linalg.norm(u) * np.linalg.norm(v))
        return np.float32(u @ v / n if n else 0.0)

    # Made with type(): the base class is only known when chonkie is installed.
    base: Any = importlib.import_module("chonkie.embeddings").BaseEmbeddings
    embeddings: Any = type(
        "Embeddings",
        (base,),
        {
            "embed": lambda self, text: embedder([text])[0],
            "embed_batch": lambda self, texts: list(embedder(texts)),
            "dimension": property(lambda self: EMBED_DIM),
            "get_tokenizer": lambda self: "character",
            "similarity": similarity,
        },
    )
    chunker = chonkie.SemanticChunker(embedding_model=embeddings(), chunk_size=size, threshold=0.5)
    return lambda text: list(chunker.chunk(text))


def bench_semantic(corpus: Corpus, repeats: int) -> tuple[list[RecordResult], dict[str, str]]:
    """``semantic`` and ``semantic_double_pass`` against chonkie's SemanticChunker
    with the same embedding function: the time outside the embedding calls,
    and the share of those calls."""
    import time

    from fastnotebook import chunk

    texts = [d.text for d in corpus.by_kind("plain")]
    if not texts:
        return [], {}
    size = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
    calls: dict[str, tuple[_Embedder, Callable[[str], list[Any]]]] = {}
    for strategy in ("semantic", "semantic_double_pass"):
        e = _Embedder()
        calls[f"fastnotebook chunk ({strategy})"] = (
            e,
            partial(chunk, strategy=strategy, chunk_size=1000, embed=e, threshold_type="absolute"),
        )
    missing: dict[str, str] = {}
    if importlib.util.find_spec("chonkie") is None:
        missing["chonkie SemanticChunker (semantic)"] = "not installed: chonkie"
    else:
        e = _Embedder()
        calls["chonkie SemanticChunker"] = (e, _chonkie_semantic(e, 1000))
    stats: dict[str, list[tuple[float, float]]] = {name: [] for name in calls}
    counts = {name: sum(len(call(t)) for t in texts) for name, (_, call) in calls.items()}
    for _ in range(repeats):
        for name, (embedder, call) in calls.items():
            embedder.seconds = 0.0
            start = time.perf_counter()
            for t in texts:
                call(t)
            total = time.perf_counter() - start
            stats[name].append((total - embedder.seconds, embedder.seconds / total))

    def median(values: list[float]) -> float:
        return sorted(values)[len(values) // 2]

    outside = {name: median([o for o, _ in runs]) for name, runs in stats.items()}
    peer = outside.get("chonkie SemanticChunker")
    results = []
    for name, runs in stats.items():
        mbs = [size / max(o, 1e-9) / 1e6 for o, _ in runs]
        ours = name.startswith("fastnotebook")
        results.append(
            RecordResult(
                case="semantic, 1000 chars (time outside the embedding calls)",
                method=name,
                documents=len(texts),
                megabytes=size / 1e6,
                mbs=median(mbs),
                spread=f"{min(mbs):.1f}-{max(mbs):.1f}",
                chunks=counts[name],
                ratio_to_fastest_peer=peer / outside[name] if ours and peer else None,
                embedding_share=median([share for _, share in runs]),
            )
        )
    return results, missing


def _each(call: Callable[[str], list[Any]], texts: list[str]) -> object:
    return [call(t) for t in texts]


def bench_records(corpus: Corpus, repeats: int) -> tuple[list[RecordResult], dict[str, str]]:
    """Every case; and the peers that could not run, with why."""
    from fastnotebook.bench.timing import time_rounds

    results: list[RecordResult] = []
    missing: dict[str, str] = {}
    for case in cases():
        texts = [case.prepare(d.text) for d in corpus.by_kind(case.kind)]
        if not texts:
            continue
        size = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
        calls: dict[str, Callable[[str], list[Any]]] = {"fastnotebook chunk": case.ours}
        for name, (modules, make) in case.peers.items():
            absent = [m for m in modules if importlib.util.find_spec(m) is None]
            if absent:
                missing[f"{name} ({case.name})"] = f"not installed: {', '.join(absent)}"
                continue
            try:
                calls[name] = make()
            except (FileNotFoundError, OSError) as err:
                missing[f"{name} ({case.name})"] = str(err)
        counts = {name: sum(len(call(t)) for t in texts) for name, call in calls.items()}
        jobs: dict[str, Callable[[], object]] = {
            name: partial(_each, call, texts) for name, call in calls.items()
        }
        jobs["fastnotebook chunk_many (all cores)"] = partial(case.ours_many, texts)
        counts["fastnotebook chunk_many (all cores)"] = counts["fastnotebook chunk"]
        timings = time_rounds(jobs, size, len(texts), repeats)
        peers = [t.median for n, t in timings.items() if not n.startswith("fastnotebook")]
        fastest = max(peers, default=0.0)
        for name, timing in timings.items():
            ours = name.startswith("fastnotebook")
            results.append(
                RecordResult(
                    case=case.name,
                    method=name,
                    documents=len(texts),
                    megabytes=size / 1e6,
                    mbs=timing.median,
                    spread=timing.spread(),
                    chunks=counts[name],
                    ratio_to_fastest_peer=timing.median / fastest if ours and fastest else None,
                )
            )
    semantic, missing_semantic = bench_semantic(corpus, repeats)
    missing.update(missing_semantic)
    return results + semantic, missing
