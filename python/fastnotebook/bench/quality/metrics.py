"""The retrieval metrics of Chroma's chunking evaluation (Smith & Troynikov,
2024), on character ranges ``(start, end)`` of one corpus.

For a question with reference excerpts ``F`` and retrieved chunks ``R``:

- the *numerator* is the number of characters that lie both in a retrieved
  chunk of the question's corpus and in a reference (each counted once);
- **recall** = numerator / the summed lengths of the references;
- **precision** = numerator / the summed lengths of the retrieved chunks (all
  of them, chunks of other corpora and repeated characters of overlapping
  chunks included);
- **IoU** = numerator / (the summed lengths of the retrieved chunks + the
  characters of each reference that no retrieved chunk holds);
- **precision-Omega** is the IoU with the best possible retrieval of the
  chunking: exactly the chunks of the corpus that meet a reference, the
  denominator then being the union of those chunks and the references'
  uncovered characters.

As in the reference code, a chunk *meets* a reference when the two ranges
intersect or touch (``chunk.start <= ref.end`` and ``ref.start <=
chunk.end``): a chunk that ends where a reference starts counts among the
chunks of precision-Omega, adding its length to the denominator only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Range",
    "Scores",
    "covered",
    "meeting",
    "precision_omega",
    "retrieval_scores",
    "total",
    "union",
]

Range = tuple[int, int]


def union(ranges: Iterable[Range]) -> list[Range]:
    """The ranges merged: sorted, disjoint, none touching another."""
    merged: list[Range] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def total(ranges: Iterable[Range]) -> int:
    """The summed lengths (characters in several ranges count several times)."""
    return sum(end - start for start, end in ranges)


def covered(merged: Sequence[Range], target: Range) -> int:
    """Characters of ``target`` inside ``merged`` (the output of ``union``)."""
    start, end = target
    inside = 0
    for a, b in merged:
        if a >= end:
            break
        inside += max(0, min(b, end) - max(a, start))
    return inside


def _uncovered(merged: Sequence[Range], target: Range) -> list[Range]:
    """The parts of ``target`` outside ``merged``."""
    start, end = target
    parts: list[Range] = []
    for a, b in merged:
        if b <= start:
            continue
        if a >= end:
            break
        if a > start:
            parts.append((start, a))
        start = max(start, b)
    if start < end:
        parts.append((start, end))
    return parts


@dataclass(frozen=True)
class Scores:
    recall: float
    precision: float
    iou: float


def retrieval_scores(
    references: Sequence[Range], retrieved: Sequence[Range], foreign: int = 0
) -> Scores:
    """Recall, precision and IoU of one question: ``retrieved`` are the
    retrieved chunks of the question's corpus, ``foreign`` the summed lengths
    of the retrieved chunks of other corpora."""
    reference_length = total(references)
    if reference_length <= 0:
        raise ValueError("a question needs references of at least one character")
    chunks = union(retrieved)
    numerator = sum(covered(chunks, r) for r in union(references))
    missed = sum(r[1] - r[0] - covered(chunks, r) for r in references)
    retrieved_length = total(retrieved) + foreign
    return Scores(
        recall=numerator / reference_length,
        precision=numerator / retrieved_length if retrieved_length else 0.0,
        iou=numerator / (retrieved_length + missed) if retrieved_length + missed else 0.0,
    )


def meeting(starts: np.ndarray, ends: np.ndarray, references: Sequence[Range]) -> np.ndarray:
    """Indices of the chunks (``starts[i]``, ``ends[i]``) that meet a reference."""
    hit = np.zeros(len(starts), dtype=bool)
    for a, b in references:
        hit |= (starts <= b) & (ends >= a)
    return np.flatnonzero(hit)


def precision_omega(references: Sequence[Range], chunks: Sequence[Range]) -> float:
    """Precision-Omega of one question: ``chunks`` are the chunks of its
    corpus that meet a reference (see ``meeting``)."""
    merged = union(chunks)
    numerator = sum(covered(merged, r) for r in union(references))
    if numerator == 0:
        return 0.0
    missed = union(part for r in references for part in _uncovered(merged, r))
    return numerator / (total(merged) + total(missed))
