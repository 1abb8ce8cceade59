"""Brute-force cosine top-k in numpy, with the core's arithmetic (see
rust/vector_search.rs): float32 products summed into eight lanes by column
index modulo 8, in column order, then the lanes summed pairwise; a row's
score is dot(query, row) / (norm(query) * norm(row)); NaN scores are left
out; ties go to the lower row."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]


def lane_dot(matrix: F32, query: F32) -> F32:
    """dot(query, row) for every row, as the core sums it."""
    return _lanes((matrix * query).astype(np.float32))


def _lanes(products: F32) -> F32:
    lanes = np.zeros((products.shape[0], 8), dtype=np.float32)
    for column in range(products.shape[1]):
        lanes[:, column % 8] += products[:, column]
    pairs = [lanes[:, i] + lanes[:, i + 1] for i in range(0, 8, 2)]
    return (pairs[0] + pairs[1]) + (pairs[2] + pairs[3])


def brute_force_top_k(matrix: F32, query: F32, k: int) -> tuple[list[int], list[float]]:
    """The rows and scores the core's ``cosine_top_k`` must return."""
    matrix = np.asarray(matrix, dtype=np.float32)
    query = np.asarray(query, dtype=np.float32)
    if len(matrix) == 0:
        return [], []
    query_norm = np.sqrt(lane_dot(query[None, :], query)[0])
    row_norms = np.sqrt(lane_dot_rows(matrix))
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = (lane_dot(matrix, query) / (query_norm * row_norms)).astype(np.float32)
    rows = np.arange(len(matrix))
    keep = ~np.isnan(scores)
    rows, kept = rows[keep], scores[keep]
    order = np.lexsort((rows, -kept))[:k]
    return rows[order].tolist(), kept[order].tolist()


def lane_dot_rows(matrix: F32) -> F32:
    """dot(row, row) for every row, as the core sums it."""
    return _lanes((matrix * matrix).astype(np.float32))
