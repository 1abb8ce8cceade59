"""``fastnotebook bench``: speed and quality of every chunker, token counter and
pooling path, measured in one run on one machine.

Timings are interleaved (every method once per round, rounds repeated) and
reported as median and spread (min-max) of MB/s; ratios are against the
original measured in the same run. A timing covers the calls; the release of
what they return follows each call, untimed, and is reported beside (see
``fastnotebook.bench.timing``). Quality comes from one untimed pass.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any

from fastnotebook.bench import metrics
from fastnotebook.bench.corpus import KINDS, Corpus, Document
from fastnotebook.bench.methods import ENCODING, Method, chunking_methods
from fastnotebook.bench.notes import NoteVaultResult, bench_notes
from fastnotebook.bench.records import RecordResult, bench_records
from fastnotebook.bench.timing import Timing, time_rounds

TINY_TOKENS = 5
PACKAGES = (
    "fastnotebook",
    "langchain-text-splitters",
    "beautifulsoup4",
    "tiktoken",
    "numpy",
    "semantic-text-splitter",
    "chonkie",
    "semchunk",
)


@dataclass
class ChunkingResult:
    method: str
    unit: str
    limit: int
    kind: str
    documents: int
    megabytes: float
    timing: Timing
    sizes: metrics.SizeStats
    coverage: float
    tiny_chunks: int
    identical_to_original: float | None
    peak_memory_mb: float | None = None
    ratio_to_original: float | None = None
    ratio_with_release: float | None = None
    #: For fastnotebook's rows in tokens: the time of the chunking over the
    #: time of one ``token_count`` pass (``ENCODING``) over the same
    #: documents, timed in the same rounds (issue #33's bound: 1.25x).
    ratio_to_token_pass: float | None = None


def _run_all(run: Callable[[Document], list[str]], docs: list[Document]) -> object:
    return [run(d) for d in docs]


def _count_each(count: Callable[[str, str], int], texts: list[str], encoding: str) -> object:
    return [count(t, encoding) for t in texts]


def _tiktoken_each(enc: Any, texts: list[str]) -> object:
    return [len(enc.encode(t, disallowed_special=())) for t in texts]


#: The key of the token_count pass timed with the chunkers.
TOKEN_PASS = "\x00token_count pass"


def _token_length() -> Callable[[str], int]:
    from fastnotebook.token_utils import token_count

    return lambda s: token_count(s, ENCODING)


def bench_chunking(corpus: Corpus, repeats: int, methods: Sequence[Method]) -> list[ChunkingResult]:
    from fastnotebook.token_utils import token_count

    tokens = _token_length()
    results: list[ChunkingResult] = []
    for kind in KINDS:
        docs = corpus.by_kind(kind)
        if not docs:
            continue
        size = sum(d.size for d in docs)
        runners = {m.name + m.unit: (m, m.make()) for m in methods}
        outputs = {key: [run(d) for d in docs] for key, (_, run) in runners.items()}
        jobs: dict[str, Callable[[], object]] = {
            key: partial(_run_all, run, docs) for key, (_, run) in runners.items()
        }
        # One token_count pass over the same documents, interleaved with the
        # chunkers: what chunking in tokens is measured against.
        texts = [d.text for d in docs]
        jobs[TOKEN_PASS] = partial(_count_each, token_count, texts, ENCODING)
        timings = time_rounds(jobs, size, len(docs), repeats)
        token_pass = timings.pop(TOKEN_PASS)
        for key, (method, _) in runners.items():
            chunks = [c for doc_chunks in outputs[key] for c in doc_chunks]
            length = len if method.unit == "chars" else tokens
            original = next(
                (
                    k
                    for k, (m, _) in runners.items()
                    if m.family == "original" and m.unit == method.unit
                ),
                None,
            )
            identical = None
            if method.family == "fastnotebook" and original is not None:
                same = sum(a == b for a, b in zip(outputs[key], outputs[original], strict=True))
                identical = same / len(docs)
            covered = [
                metrics.coverage(d.text, out) for d, out in zip(docs, outputs[key], strict=True)
            ]
            results.append(
                ChunkingResult(
                    method=method.name,
                    unit=method.unit,
                    limit=method.limit,
                    kind=kind,
                    documents=len(docs),
                    megabytes=size / 1e6,
                    timing=timings[key],
                    sizes=metrics.size_stats(chunks, method.limit, length),
                    coverage=sum(covered) / len(covered),
                    tiny_chunks=sum(tokens(c) < TINY_TOKENS for c in chunks),
                    identical_to_original=identical,
                    ratio_to_token_pass=token_pass.median / timings[key].median
                    if method.family == "fastnotebook"
                    and method.unit == "tokens"
                    and timings[key].median > 0
                    else None,
                )
            )
        for result in results:
            if result.kind != kind:
                continue
            original_result = next(
                (
                    r
                    for r in results
                    if r.kind == kind and r.unit == result.unit and r.method.startswith("original")
                ),
                None,
            )
            if original_result and original_result.timing.median > 0:
                ours, theirs = result.timing, original_result.timing
                result.ratio_to_original = ours.median / theirs.median
                result.ratio_with_release = ours.median_with_release / theirs.median_with_release
    return results


# The peak is taken over the chunking alone: after the documents are loaded
# and a small text has been chunked (lazy imports and vocabularies are the
# library's, not the chunking's). On Linux, writing 5 to clear_refs resets
# VmHWM to the current resident size; elsewhere ru_maxrss is the fallback.
MEMORY_PROBE = """
import gc, json, resource, sys
from fastnotebook.bench import corpus, methods
def rss(field):
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith(field)) / 1024
docs = [corpus.Document(**d) for d in json.load(open(sys.argv[1]))]
method = next(m for m in methods.chunking_methods() if m.name + m.unit == sys.argv[2])
run = method.make()
run(corpus.Document("warm-up", docs[0].kind, "<p>warm up</p>\\n\\n# warm up\\n" * 200))
gc.collect()
try:
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")
    base, peak = rss("VmRSS:"), lambda: rss("VmHWM:")
except OSError:
    maxrss = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    base, peak = maxrss(), maxrss
for d in docs:
    run(d)
print(max(0.0, peak() - base))
"""


def measure_memory(results: list[ChunkingResult], corpus: Corpus, workdir: Path) -> None:
    """Peak memory above the loaded documents, each method in a fresh process."""
    for kind in KINDS:
        docs = corpus.by_kind(kind)
        if not docs:
            continue
        spec = workdir / f"memory-{kind}.json"
        spec.write_text(json.dumps([asdict(d) for d in docs]), encoding="utf-8")
        for result in (r for r in results if r.kind == kind):
            out = subprocess.run(
                [sys.executable, "-c", MEMORY_PROBE, str(spec), result.method + result.unit],
                capture_output=True,
                text=True,
            )
            if out.returncode != 0:
                raise RuntimeError(
                    f"memory probe of {result.method} ({result.unit}) on {kind} failed:\n"
                    + out.stderr[-2000:]
                )
            result.peak_memory_mb = float(out.stdout.split()[-1])
        spec.unlink()


@dataclass
class TokenResult:
    method: str
    encoding: str
    kind: str
    timing: Timing
    identical_to_tiktoken: float | None
    ratio_to_tiktoken: float | None = None


def bench_tokens(corpus: Corpus, repeats: int) -> list[TokenResult]:
    from fastnotebook.bench import reference
    from fastnotebook.token_utils import token_count, token_counts

    results: list[TokenResult] = []
    for encoding in ("cl100k_base", "o200k_base"):
        try:
            enc = reference.tiktoken_encoding(encoding)
        except FileNotFoundError:
            enc = None
        for kind in KINDS:
            texts = [d.text for d in corpus.by_kind(kind)]
            if not texts:
                continue
            size = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
            jobs: dict[str, Callable[[], object]] = {
                "fastnotebook token_count": partial(_count_each, token_count, texts, encoding),
                "fastnotebook token_counts (all cores)": partial(token_counts, texts, encoding),
            }
            ours = [token_count(t, encoding) for t in texts]
            identical: float | None = None
            if enc is not None:
                jobs["tiktoken"] = partial(_tiktoken_each, enc, texts)
                theirs = [len(enc.encode(t, disallowed_special=())) for t in texts]
                identical = sum(a == b for a, b in zip(ours, theirs, strict=True)) / len(texts)
            timings = time_rounds(jobs, size, len(texts), repeats)
            base = timings.get("tiktoken")
            for name, timing in timings.items():
                results.append(
                    TokenResult(
                        method=name,
                        encoding=encoding,
                        kind=kind,
                        timing=timing,
                        identical_to_tiktoken=None if name == "tiktoken" else identical,
                        ratio_to_tiktoken=timing.median / base.median
                        if base and base.median
                        else None,
                    )
                )
    return results


@dataclass
class PoolingResult:
    method: str
    shape: str
    per_document_us: float
    gb_per_s: float
    ratio_to_original: float | None


def bench_pooling(
    repeats: int, documents: int = 1000, chunks: int = 8, dim: int = 768
) -> list[PoolingResult]:
    import asyncio

    import numpy as np

    from fastnotebook.bench import reference
    from fastnotebook.embedding import mean_pool_embeddings, mean_pool_segments

    rng = np.random.default_rng(0)
    lists = [rng.normal(size=(chunks, dim)).tolist() for _ in range(documents)]
    big_docs = documents * 10
    matrix = rng.normal(size=(big_docs * chunks, dim)).astype(np.float32)
    offsets = np.arange(0, big_docs * chunks + 1, chunks, dtype=np.int64)
    list_bytes = documents * chunks * dim * 8
    array_bytes = matrix.nbytes

    def numpy_segments() -> object:
        rows = matrix.astype(np.float64).reshape(big_docs, chunks, dim)
        norms = np.linalg.norm(rows, axis=2, keepdims=True)
        mean = (rows / np.where(norms > 0, norms, 1.0)).mean(axis=1)
        return mean / np.linalg.norm(mean, axis=1, keepdims=True)

    async def pool_all(pool: Callable[[list[list[float]]], Awaitable[list[float]]]) -> object:
        # One event loop per round: starting one per call would cost more
        # than the pooling itself, on both sides.
        return [await pool(e) for e in lists]

    jobs: dict[str, Callable[[], object]] = {
        "original (numpy, from lists)": lambda: asyncio.run(pool_all(reference.mean_pool)),
        "fastnotebook mean_pool_embeddings (lists)": lambda: asyncio.run(
            pool_all(mean_pool_embeddings)
        ),
        "numpy vectorised (array)": numpy_segments,
        "fastnotebook mean_pool_segments (array)": lambda: mean_pool_segments(matrix, offsets),
        "memcpy of the array (numpy copy)": lambda: matrix.copy(),
    }
    timings = time_rounds(jobs, 1, 1, repeats)
    seconds = {name: 1 / (t.median * 1e6) for name, t in timings.items()}
    results = []
    for name, secs in seconds.items():
        is_list = "lists" in name
        docs = documents if is_list else big_docs
        nbytes = list_bytes if is_list else array_bytes
        baseline = seconds[
            "original (numpy, from lists)" if is_list else "numpy vectorised (array)"
        ]
        results.append(
            PoolingResult(
                method=name,
                shape=f"{docs} x {chunks} x {dim} {'float lists' if is_list else 'float32'}",
                per_document_us=secs / docs * 1e6,
                gb_per_s=nbytes / secs / 1e9,
                ratio_to_original=baseline / secs,
            )
        )
    return results


def environment() -> dict[str, Any]:
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions: dict[str, str | None] = {}
    for package in PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "machine": platform.machine(),
        "system": platform.platform(),
        "python": sys.version.split()[0],
        "packages": versions,
    }


@dataclass
class Report:
    corpus: str
    environment: dict[str, Any]
    missing: dict[str, str]
    chunking: list[ChunkingResult]
    tokens: list[TokenResult]
    pooling: list[PoolingResult]
    # fastnotebook.langchain against langchain-text-splitters (``--langchain``):
    # fastnotebook.bench.langchain.LangchainResult rows.
    langchain: list[Any] = field(default_factory=list)
    #: ``fastnotebook.chunk`` strategies against their closest peers.
    records: list[RecordResult] = field(default_factory=list)
    #: ``fastnotebook.notes.read_vault`` on note vaults.
    notes: list[NoteVaultResult] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, default=str)


def run(
    corpus: Corpus,
    out_dir: Path,
    repeats: int,
    *,
    memory: bool = True,
    pooling_documents: int = 1000,
) -> Report:
    """Every section, then ``bench.json`` in ``out_dir``. The array pooling
    case is ten times ``pooling_documents`` documents of 8 x 768 floats."""
    out_dir.mkdir(parents=True, exist_ok=True)
    methods = chunking_methods()
    missing = {m.name + f" ({m.unit})": reason for m in methods if (reason := m.missing())}
    available = [m for m in methods if m.missing() is None]
    chunking = bench_chunking(corpus, repeats, available)
    if memory:
        measure_memory(chunking, corpus, out_dir)
    records, missing_records = bench_records(corpus, repeats)
    missing.update(missing_records)
    report = Report(
        corpus=corpus.name,
        environment=environment(),
        missing=missing,
        chunking=chunking,
        tokens=bench_tokens(corpus, repeats),
        pooling=bench_pooling(repeats, documents=pooling_documents),
        records=records,
        notes=bench_notes(repeats),
    )
    (out_dir / "bench.json").write_text(report.to_json(), encoding="utf-8")
    return report
