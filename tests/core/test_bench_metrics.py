"""The harness's quality metrics on hand-made cases with known answers."""

from __future__ import annotations

import pytest

from fastnotebook.bench.metrics import coverage, percentile, size_stats


def test_size_stats_count_chunks_over_the_limit() -> None:
    stats = size_stats(["a" * 10, "b" * 20, "c" * 30, "d" * 40], limit=25)
    assert (stats.count, stats.min, stats.max, stats.over_limit) == (4, 10, 40, 2)
    assert stats.median == 25.0
    assert stats.p95 == pytest.approx(38.5)
    assert size_stats([], 10).count == 0
    assert size_stats(["ab", "abcd"], 3, length=lambda s: len(s) // 2).over_limit == 0


def test_percentile_interpolates() -> None:
    assert percentile([1, 2, 3, 4, 5], 0.5) == 3
    assert percentile([10], 0.95) == 10
    assert percentile([], 0.5) == 0.0


def test_overlapping_chunks_cover_the_text_once() -> None:
    text = "alpha beta gamma delta epsilon"
    assert coverage(text, ["alpha beta gamma", "gamma delta", "delta epsilon"]) == 1.0


def test_missing_text_is_uncovered() -> None:
    text = "aaaa bbbb cccc dddd"  # 16 non-whitespace characters
    assert coverage(text, ["aaaa bbbb", "dddd"]) == pytest.approx(12 / 16)
    assert coverage(text, []) == 0.0
    assert coverage("   ", ["x"]) == 1.0


def test_whitespace_differences_do_not_matter() -> None:
    assert coverage("# A\n\nline one\n  line two", ["# A  \nline one\nline two"]) == 1.0


def test_extracted_text_leaves_markup_uncovered() -> None:
    html = "<p>Tom &amp; Jerry</p>"
    result = coverage(html, ["Tom & Jerry"])
    # "Tom&Jerry" matched (9 of the 21 non-space characters of the markup).
    assert result == pytest.approx(9 / len("".join(html.split())))


def test_repeated_text_is_located_in_order() -> None:
    text = "same same same other"
    assert coverage(text, ["same", "same", "other"]) == pytest.approx(13 / 17)
