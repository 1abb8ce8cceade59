"""The evaluation's metrics against an oracle written here on sets of
character positions (hand-made ranges and random ones), and the scoring of
retrieved chunks across corpora."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastnotebook.bench.quality import Dataset, Question, metrics, score

Range = tuple[int, int]


def chars(ranges: list[Range]) -> set[int]:
    out: set[int] = set()
    for a, b in ranges:
        out.update(range(a, b))
    return out


def oracle(refs: list[Range], retrieved: list[Range], foreign: int) -> tuple[float, float, float]:
    """Recall, precision, IoU by counting characters."""
    got, wanted = chars(retrieved), chars(refs)
    numerator = len(got & wanted)
    reference_length = sum(b - a for a, b in refs)
    retrieved_length = sum(b - a for a, b in retrieved) + foreign
    missed = sum(len(set(range(a, b)) - got) for a, b in refs)
    precision = numerator / retrieved_length if retrieved_length else 0.0
    denominator = retrieved_length + missed
    return numerator / reference_length, precision, numerator / denominator if denominator else 0.0


def oracle_omega(refs: list[Range], chunks: list[Range]) -> float:
    """The chunks that meet (intersect or touch) a reference, all of them."""
    meeting = [(a, b) for a, b in chunks if any(a <= y and x <= b for x, y in refs)]
    held, wanted = chars(meeting), chars(refs)
    numerator = len(held & wanted)
    if not numerator:
        return 0.0
    return numerator / len(held | wanted)


def check(refs: list[Range], retrieved: list[Range], foreign: int = 0) -> None:
    got = metrics.retrieval_scores(refs, retrieved, foreign)
    recall, precision, iou = oracle(refs, retrieved, foreign)
    assert got.recall == pytest.approx(recall)
    assert got.precision == pytest.approx(precision)
    assert got.iou == pytest.approx(iou)


@pytest.mark.parametrize(
    ("refs", "retrieved", "foreign", "expected"),
    [
        # One chunk holding the whole reference and 90 more characters.
        ([(10, 20)], [(0, 100)], 0, (1.0, 0.1, 0.1)),
        # Half the reference; a chunk of another corpus counts in precision.
        ([(0, 10)], [(5, 15)], 10, (0.5, 0.25, 5 / 25)),
        # Two overlapping retrieved chunks: shared characters count once above,
        # twice below.
        ([(0, 10)], [(0, 10), (5, 15)], 0, (1.0, 10 / 20, 10 / 20)),
        # Nothing found: the reference's characters are all missed.
        ([(50, 60)], [(0, 10)], 0, (0.0, 0.0, 0.0)),
        # Two references, one found.
        ([(0, 10), (20, 30)], [(0, 10)], 0, (0.5, 1.0, 10 / 20)),
    ],
)
def test_hand_made_ranges(
    refs: list[Range],
    retrieved: list[Range],
    foreign: int,
    expected: tuple[float, float, float],
) -> None:
    got = metrics.retrieval_scores(refs, retrieved, foreign)
    assert (got.recall, got.precision, got.iou) == pytest.approx(expected)
    check(refs, retrieved, foreign)


@pytest.mark.parametrize(
    ("refs", "chunks", "expected"),
    [
        ([(10, 20)], [(0, 15), (15, 30)], 10 / 30),
        # A chunk touching a reference (ending where it starts) counts.
        ([(10, 20)], [(0, 10), (10, 20)], 10 / 20),
        # A reference no chunk holds: its characters count in the union.
        ([(10, 20), (100, 110)], [(5, 20)], 10 / 25),
        ([(10, 20)], [], 0.0),
    ],
)
def test_hand_made_precision_omega(refs: list[Range], chunks: list[Range], expected: float) -> None:
    hit = metrics.meeting(
        np.array([a for a, _ in chunks], dtype=np.int64),
        np.array([b for _, b in chunks], dtype=np.int64),
        refs,
    )
    meeting = [chunks[int(i)] for i in hit]
    assert metrics.precision_omega(refs, meeting) == pytest.approx(expected)
    assert oracle_omega(refs, chunks) == pytest.approx(expected)


def test_union_merges_touching_ranges() -> None:
    assert metrics.union([(5, 8), (0, 3), (3, 4), (7, 10), (20, 20)]) == [(0, 4), (5, 10), (20, 20)]
    assert metrics.covered([(0, 4), (5, 10)], (2, 7)) == 4


def ranges(max_size: int = 6) -> st.SearchStrategy[list[Range]]:
    pair = st.tuples(st.integers(0, 120), st.integers(1, 40)).map(lambda p: (p[0], p[0] + p[1]))
    return st.lists(pair, min_size=1, max_size=max_size)


@settings(max_examples=400, deadline=None)
@given(refs=ranges(3), retrieved=ranges(), foreign=st.integers(0, 50))
def test_random_ranges(refs: list[Range], retrieved: list[Range], foreign: int) -> None:
    check(refs, retrieved, foreign)


@settings(max_examples=400, deadline=None)
@given(refs=ranges(3), chunks=ranges(8))
def test_random_precision_omega(refs: list[Range], chunks: list[Range]) -> None:
    hit = metrics.meeting(np.array([a for a, _ in chunks]), np.array([b for _, b in chunks]), refs)
    got = metrics.precision_omega(refs, [chunks[int(i)] for i in hit])
    assert got == pytest.approx(oracle_omega(refs, chunks))


def test_score_keeps_corpora_apart() -> None:
    dataset = Dataset(
        "two",
        {"a": "x" * 100, "b": "y" * 100},
        [Question("q1", "a", ((10, 20),)), Question("q2", "b", ((0, 50),))],
    )
    spans = {"a": [(0, 50), (50, 100)], "b": [(0, 25), (25, 100)]}
    # Flat order: a0, a1, b0, b1. q1 retrieves a0 and b1 (another corpus's
    # chunk, which counts in precision only); q2 retrieves b1 and a0.
    retrieved = np.array([[0, 3], [3, 0]])
    got = score(dataset, spans, retrieved)
    assert got["recall"] == pytest.approx([1.0, 25 / 50])
    assert got["precision"] == pytest.approx([10 / 125, 25 / 125])
    assert got["iou"] == pytest.approx([10 / 125, 25 / (125 + 25)])
    assert got["precision_omega"] == pytest.approx([10 / 50, 50 / 100])
