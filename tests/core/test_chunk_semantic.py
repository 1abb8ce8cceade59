"""The semantic strategies against a plain numpy implementation of the same rule,
with a deterministic embedding function."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest

from fastnotebook import chunk, chunk_many
from fastnotebook._core import _sentence_spans
from helpers.corpus import read, require_corpus
from helpers.invariants import check_records

DIM = 48


def embed(texts: list[str]) -> np.ndarray[Any, Any]:
    """Bag of hashed words: close for texts that share words."""
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    for i, t in enumerate(texts):
        for word in t.lower().split():
            out[i, zlib.crc32(word.strip(".,!?").encode()) % DIM] += 1.0
    return out


def windows(text: str, window: int) -> tuple[list[tuple[int, int]], list[str]]:
    spans = _sentence_spans(text)
    sentences = [text[a:b] for a, b in spans]
    return spans, [
        " ".join(sentences[max(0, i - window) : i + window + 1]) for i in range(len(sentences))
    ]


def reference_groups(
    text: str, kind: str, amount: float, window: int = 1, merge: float | None = None
) -> list[tuple[int, int]]:
    spans, texts = windows(text, window)
    e = embed(texts).astype(np.float64)
    norms = np.linalg.norm(e, axis=1)
    dots = (e[:-1] * e[1:]).sum(axis=1)
    denom = norms[:-1] * norms[1:]
    sims = np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 0)
    dist = 1 - sims
    if kind == "percentile":
        breaks = np.nonzero(dist > np.percentile(dist, amount))[0] if len(dist) else []
    elif kind == "std":
        breaks = np.nonzero(dist > dist.mean() + amount * dist.std())[0] if len(dist) else []
    else:
        breaks = np.nonzero(sims < amount)[0]
    groups = []
    start = 0
    for b in breaks:
        groups.append((start, int(b) + 1))
        start = int(b) + 1
    if start < len(spans):
        groups.append((start, len(spans)))
    if merge is not None:
        merged: list[tuple[int, int]] = []
        for g in groups:
            if merged:
                a = e[merged[-1][0] : merged[-1][1]].mean(axis=0)
                b = e[g[0] : g[1]].mean(axis=0)
                n = np.linalg.norm(a) * np.linalg.norm(b)
                if n > 0 and a @ b / n >= merge:
                    merged[-1] = (merged[-1][0], g[1])
                    continue
            merged.append(g)
        groups = merged
    return [(spans[a][0], spans[b - 1][1]) for a, b in groups]


TEXT = (
    "Cats purr and sleep. Cats chase mice at night. Cats sleep all day. "
    "Rockets launch into orbit. Rockets burn fuel fast. Orbit needs speed. "
    "Bread needs flour and water. Bread rises in the oven. Ovens bake bread. "
    "Cats and bread? Rockets again reach orbit."
)


@pytest.mark.parametrize(
    ("kind", "amount"),
    [("percentile", 95.0), ("percentile", 60.0), ("std", 0.5), ("std", 1.0), ("absolute", 0.3)],
)
@pytest.mark.parametrize("window", [0, 1])
def test_breakpoints_equal_numpy(kind: str, amount: float, window: int) -> None:
    got = chunk(
        TEXT,
        "semantic",
        chunk_size=10_000,
        embed=embed,
        threshold_type=kind,  # type: ignore[arg-type]
        threshold=amount,
        window=window,
    )
    assert [(c.start, c.end) for c in got] == reference_groups(TEXT, kind, amount, window)
    check_records(TEXT, got, max_size=10_000, length=len)
    assert all("similarity" in c.metadata for c in got[1:])


@pytest.mark.parametrize("merge", [0.2, 0.5, 0.9])
def test_double_pass_equals_numpy(merge: float) -> None:
    got = chunk(
        TEXT,
        "semantic_double_pass",
        chunk_size=10_000,
        embed=embed,
        threshold_type="percentile",
        threshold=50.0,
        merge_threshold=merge,
    )
    expected = reference_groups(TEXT, "percentile", 50.0, 1, merge)
    assert [(c.start, c.end) for c in got] == expected


def test_size_limit_and_corpus() -> None:
    for path in require_corpus("txt")[:15]:
        text = read(path)
        for strategy in ("semantic", "semantic_double_pass"):
            got = chunk(text, strategy, chunk_size=400, overlap=40, embed=embed, threshold=80.0)  # type: ignore[arg-type]
            check_records(text, got, max_size=400, length=len)
        tokens = chunk(text, "semantic", chunk_size=96, unit="tokens", embed=embed)
        from fastnotebook.token_utils import token_count

        check_records(text, tokens, max_size=96, length=token_count)


def test_errors() -> None:
    with pytest.raises(ValueError, match="needs embed"):
        chunk(TEXT, "semantic")
    with pytest.raises(ValueError, match="shape"):
        chunk(TEXT, "semantic", embed=lambda ts: np.zeros((1, 3)))
    with pytest.raises(ValueError, match="threshold_type"):
        chunk(TEXT, "semantic", embed=embed, threshold_type="max")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="percentile"):
        chunk(TEXT, "semantic", embed=embed, threshold=120.0)
    with pytest.raises(ValueError, match="merge_threshold"):
        chunk(TEXT, "semantic", embed=embed, merge_threshold=0.5)
    with pytest.raises(ValueError, match="semantic"):
        chunk(TEXT, "recursive", embed=embed)
    with pytest.raises(ValueError, match="chunk\\(\\) per text"):
        chunk_many([TEXT], "semantic")
    assert chunk("", "semantic", embed=embed) == []
    # A list of lists and float64 work as well as float32 arrays.
    as_lists = chunk(TEXT, "semantic", embed=lambda ts: embed(ts).tolist())
    assert [c.text for c in as_lists] == [c.text for c in chunk(TEXT, "semantic", embed=embed)]
