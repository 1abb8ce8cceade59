"""The evaluation run: chunk every corpus with each configuration, embed the
chunks and the questions, retrieve the top ``k`` chunks of all corpora by
exact cosine similarity, and score each question (``metrics``)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fastnotebook.bench.quality import metrics
from fastnotebook.bench.quality.configs import Config
from fastnotebook.bench.quality.data import Dataset
from fastnotebook.bench.quality.embedding import CachedEmbedder, embedder

__all__ = ["ConfigResult", "Evaluation", "MetricSummary", "evaluate", "score"]

METRICS = ("recall", "precision", "iou", "precision_omega")


@dataclass
class MetricSummary:
    mean: float
    std: float

    @classmethod
    def of(cls, values: Sequence[float]) -> MetricSummary:
        array = np.asarray(values, dtype=np.float64)
        if not len(array):
            return cls(0.0, 0.0)
        return cls(float(array.mean()), float(array.std()))  # population std, as the reference


@dataclass
class ConfigResult:
    name: str
    kind: str
    family: str
    size: int | None
    overlap: int
    unit: str
    encoding: str
    chunks: int
    mean_tokens: float
    std_tokens: float
    min_tokens: int
    max_tokens: int
    mean_chars: float
    chunk_seconds: float
    chunk_mb_per_s: float
    overall: dict[str, MetricSummary]
    corpora: dict[str, dict[str, MetricSummary]]
    questions: int
    scores: dict[str, list[float]] = field(default_factory=dict, repr=False)

    def to_dict(self, with_scores: bool = False) -> dict[str, Any]:
        out = asdict(self)
        if not with_scores:
            out.pop("scores")
        return out


@dataclass
class Evaluation:
    dataset: str
    model: str
    top_k: int
    encoding: str
    questions: int
    corpora: dict[str, int]
    results: list[ConfigResult]
    skipped: dict[str, str]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["results"] = [r.to_dict() for r in self.results]
        return out


def score(
    dataset: Dataset,
    spans: dict[str, list[metrics.Range]],
    retrieved: np.ndarray,
) -> dict[str, list[float]]:
    """The four metrics of every question: ``spans`` are each corpus's chunk
    ranges, ``retrieved[q]`` the indices, in the concatenation of the
    corpora's chunks (in ``spans``' order), of question ``q``'s chunks."""
    owners: list[str] = []
    for corpus_id, ranges in spans.items():
        owners += [corpus_id] * len(ranges)
    flat = [r for ranges in spans.values() for r in ranges]
    arrays = {
        c: (np.array([a for a, _ in r]), np.array([b for _, b in r])) for c, r in spans.items()
    }
    out: dict[str, list[float]] = {m: [] for m in METRICS}
    for q, question in enumerate(dataset.questions):
        same: list[metrics.Range] = []
        foreign = 0
        for i in retrieved[q]:
            a, b = flat[int(i)]
            if owners[int(i)] == question.corpus_id:
                same.append((a, b))
            else:
                foreign += b - a
        scores = metrics.retrieval_scores(question.references, same, foreign)
        starts, ends = arrays[question.corpus_id]
        hit = metrics.meeting(starts, ends, question.references)
        ranges = spans[question.corpus_id]
        omega = metrics.precision_omega(question.references, [ranges[int(i)] for i in hit])
        out["recall"].append(scores.recall)
        out["precision"].append(scores.precision)
        out["iou"].append(scores.iou)
        out["precision_omega"].append(omega)
    return out


def _top_k(questions: np.ndarray, chunks: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` most similar chunks of each question, best first
    (exact: every chunk is compared; ties go to the earlier chunk)."""
    k = min(k, chunks.shape[0])
    similarity = questions @ chunks.T
    order = np.argsort(-similarity, axis=1, kind="stable")
    return order[:, :k]


Progress = Callable[[str, int, int], None]
"""``progress(label, done, total)``: the embedding of a configuration's chunks."""


def evaluate(
    dataset: Dataset,
    configs: Sequence[Config],
    *,
    model: Any = "default",
    top_k: int = 5,
    encoding: str = "cl100k_base",
    cache: str | Path | None = None,
    progress: Progress | None = None,
) -> Evaluation:
    """Evaluate ``configs`` on ``dataset``: retrieval quality (recall,
    precision, IoU, precision-Omega, per corpus and overall, with standard
    deviations), chunking speed and chunk sizes (in ``encoding`` tokens).

    ``model`` is ``"default"`` (the offline model), ``"PROVIDER:MODEL"``
    (esperanto), an esperanto embedding model or a callable ``list[str] ->
    array (n, dim)``; vectors are cached by content hash (in ``cache``, an
    SQLite file, across runs). A configuration whose peer library is missing
    is skipped and named in ``Evaluation.skipped``."""
    from fastnotebook import token_utils

    if top_k < 1:
        raise ValueError(f"top_k must be positive, got {top_k}")
    dataset.check()
    if not dataset.questions:
        raise ValueError("the dataset has no questions")
    began = time.perf_counter()
    embed, key = embedder(model)
    cached = CachedEmbedder(embed, key, cache)
    results: list[ConfigResult] = []
    skipped: dict[str, str] = {}
    try:
        question_vectors = cached([q.text for q in dataset.questions])
        size = sum(len(t.encode("utf-8", "surrogatepass")) for t in dataset.corpora.values())
        for config in configs:
            reason = config.missing()
            if reason:
                skipped[config.name] = reason
                continue
            splitter = config.splitter(embed=lambda texts: cached(texts))
            spans: dict[str, list[metrics.Range]] = {}
            seconds = 0.0
            splitter(next(iter(dataset.corpora.values()))[:2000])  # load what it loads lazily
            for corpus_id, text in dataset.corpora.items():
                with _timer() as elapsed:
                    ranges = splitter(text)
                seconds += elapsed()
                _check_spans(config, corpus_id, text, ranges)
                spans[corpus_id] = ranges
            texts = [dataset.corpora[c][a:b] for c, r in spans.items() for a, b in r]
            if progress is not None:
                progress(config.name, 0, len(texts))
            done = 0

            def advance(n: int, label: str = config.name, total: int = len(texts)) -> None:
                nonlocal done
                done += n
                if progress is not None:
                    progress(label, min(done, total), total)

            vectors = cached(texts, advance)
            if progress is not None:
                progress(config.name, len(texts), len(texts))
            retrieved = _top_k(question_vectors, vectors, top_k)
            scores = score(dataset, spans, retrieved)
            tokens = token_utils.token_counts(texts, encoding)
            results.append(_result(config, dataset, spans, texts, tokens, seconds, size, scores))
    finally:
        cached.close()
    return Evaluation(
        dataset=dataset.name,
        model=key,
        top_k=top_k,
        encoding=encoding,
        questions=len(dataset.questions),
        corpora={c: len(t) for c, t in dataset.corpora.items()},
        results=results,
        skipped=skipped,
        seconds=time.perf_counter() - began,
    )


@contextmanager
def _timer() -> Iterator[Callable[[], float]]:
    start = time.perf_counter()
    end: list[float] = []
    yield lambda: (end[0] if end else time.perf_counter()) - start
    end.append(time.perf_counter())


def _check_spans(config: Config, corpus_id: str, text: str, ranges: list[metrics.Range]) -> None:
    for a, b in ranges:
        if not 0 <= a < b <= len(text):
            raise ValueError(f"{config.name}: chunk [{a}:{b}] is not a range of {corpus_id}")
    if not ranges:
        raise ValueError(f"{config.name}: no chunks for {corpus_id}")


def _result(
    config: Config,
    dataset: Dataset,
    spans: dict[str, list[metrics.Range]],
    texts: list[str],
    tokens: list[int],
    seconds: float,
    size: int,
    scores: dict[str, list[float]],
) -> ConfigResult:
    per_corpus: dict[str, dict[str, MetricSummary]] = {}
    for corpus_id in dataset.corpora:
        rows = [i for i, q in enumerate(dataset.questions) if q.corpus_id == corpus_id]
        per_corpus[corpus_id] = {m: MetricSummary.of([scores[m][i] for i in rows]) for m in METRICS}
    return ConfigResult(
        name=config.name,
        kind=config.kind,
        family=config.family,
        size=config.size,
        overlap=config.overlap,
        unit=config.unit,
        encoding=config.encoding,
        chunks=len(texts),
        mean_tokens=statistics.fmean(tokens),
        std_tokens=statistics.pstdev(tokens),
        min_tokens=min(tokens),
        max_tokens=max(tokens),
        mean_chars=statistics.fmean(len(t) for t in texts),
        chunk_seconds=seconds,
        chunk_mb_per_s=size / 1e6 / max(seconds, 1e-9),
        overall={m: MetricSummary.of(scores[m]) for m in METRICS},
        corpora=per_corpus,
        questions=len(dataset.questions),
        scores=scores,
    )
