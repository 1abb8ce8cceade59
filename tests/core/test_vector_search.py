"""The core's exact cosine search against a numpy brute force with the same
arithmetic: the same rows and the same score bits, ties to the lower row."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fastnotebook import _core
from helpers.vectors import brute_force_top_k


def search(matrix: np.ndarray, query: np.ndarray, k: int) -> tuple[list[int], list[float]]:
    index, score = _core.cosine_top_k(matrix, _core.row_norms(matrix), query, k)
    assert index.dtype == np.int64 and score.dtype == np.float32
    return index.tolist(), score.tolist()


@pytest.mark.parametrize(("rows", "dim"), [(1, 1), (7, 3), (1000, 384), (9001, 13), (5000, 64)])
def test_equals_numpy_brute_force_bit_for_bit(rows: int, dim: int) -> None:
    rng = np.random.default_rng(rows * 31 + dim)
    matrix = rng.standard_normal((rows, dim)).astype(np.float32)
    for _ in range(3):
        query = rng.standard_normal(dim).astype(np.float32)
        for k in (1, 10, rows + 3):
            assert search(matrix, query, k) == brute_force_top_k(matrix, query, k)


def test_ties_go_to_the_lower_row_and_nan_rows_are_left_out() -> None:
    rng = np.random.default_rng(7)
    # Few distinct rows, many copies: most scores are tied.
    base = rng.integers(-2, 3, size=(5, 8)).astype(np.float32)
    matrix = base[rng.integers(0, 5, size=300)]
    matrix[10] = 0.0  # zero vector: no score
    matrix[11, 3] = np.nan
    query = rng.standard_normal(8).astype(np.float32)
    rows, scores = search(matrix, query, 300)
    assert (rows, scores) == brute_force_top_k(matrix, query, 300)
    assert 10 not in rows and 11 not in rows
    pairs = list(zip(rows, scores, strict=True))
    for (r1, s1), (r2, s2) in itertools.pairwise(pairs):
        assert s1 > s2 or (s1 == s2 and r1 < r2)
    assert search(matrix, np.zeros(8, dtype=np.float32), 5) == ([], [])


def test_reads_memory_maps_without_a_copy(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((2000, 32)).astype(np.float32)
    np.save(tmp_path / "m.npy", matrix)
    mapped = np.load(tmp_path / "m.npy", mmap_mode="r")
    assert not mapped.flags.writeable
    query = matrix[5]
    assert search(mapped, query, 4) == search(matrix, query, 4)
    assert search(matrix, query, 1)[0] == [5]


def test_bad_arguments_raise_value_or_type_errors() -> None:
    matrix = np.ones((4, 3), dtype=np.float32)
    norms = _core.row_norms(matrix)
    with pytest.raises(ValueError, match="dimension"):
        _core.cosine_top_k(matrix, norms, np.ones(2, dtype=np.float32), 1)
    with pytest.raises(ValueError, match="norms"):
        _core.cosine_top_k(matrix, norms[:2], np.ones(3, dtype=np.float32), 1)
    with pytest.raises(ValueError, match="C-contiguous"):
        _core.cosine_top_k(
            np.ones((3, 4), dtype=np.float32).T, norms, np.ones(3, dtype=np.float32), 1
        )
    with pytest.raises(TypeError):
        _core.cosine_top_k(matrix.astype(np.float64), norms, np.ones(3, dtype=np.float32), 1)
    with pytest.raises(ValueError, match="column"):
        _core.row_norms(np.ones((3, 0), dtype=np.float32))
    with pytest.raises(OverflowError):
        _core.cosine_top_k(matrix, norms, np.ones(3, dtype=np.float32), -1)
    assert _core.cosine_top_k(matrix, norms, np.ones(3, dtype=np.float32), 0)[0].tolist() == []


@pytest.mark.parametrize("dim", [384, 37])
def test_the_sketch_leaves_the_result_bit_for_bit_unchanged(dim: int) -> None:
    rng = np.random.default_rng(dim)
    # Clusters of near-duplicates (close scores, ties) and rows the sketch's
    # bound does not cover (zero, NaN, tiny, huge): all scored as numpy does.
    centres = rng.standard_normal((40, dim)).astype(np.float32)
    matrix = centres[rng.integers(0, 40, size=12_000)]
    matrix += 0.03 * rng.standard_normal(matrix.shape).astype(np.float32)
    matrix[100:110] = centres[3]
    matrix[5] = 0.0
    matrix[6, 2] = np.nan
    matrix[7] = 1e-20
    matrix[8] = 1e15
    norms = _core.row_norms(matrix)
    sketch = _core.sketch_rows(matrix)
    codes, scales, errors = sketch
    assert codes.shape == matrix.shape and codes.dtype == np.int8
    assert np.isinf(errors[[5, 6, 7, 8]]).all() and np.isfinite(errors[9:]).all()
    queries = [rng.standard_normal(dim).astype(np.float32) for _ in range(4)]
    queries += [centres[3], matrix[2000], np.zeros(dim, dtype=np.float32)]
    for query in queries:
        for k in (1, 10, 40, 300):
            index, score = _core.cosine_top_k(matrix, norms, query, k, sketch)
            assert (index.tolist(), score.tolist()) == brute_force_top_k(matrix, query, k)
    with pytest.raises(ValueError, match="sketch"):
        _core.cosine_top_k(matrix, norms, queries[0], 3, (codes[:10], scales, errors))
