//! Exact cosine search over a matrix of f32 vectors (row-major, `n x d`).
//!
//! The arithmetic is fixed, so that any implementation that follows it (the
//! reference in the tests, numpy in the Python tests) gets the same bits:
//!
//! - `dot(a, b)`: eight f32 accumulators, all zero; for `j` in `0..d` in
//!   order, `lane[j % 8] += a[j] * b[j]` (a rounded f32 product, then a
//!   rounded f32 sum: never a fused multiply-add); then
//!   `((lane0 + lane1) + (lane2 + lane3)) + ((lane4 + lane5) + (lane6 + lane7))`.
//! - `norm(a) = sqrt(dot(a, a))` (f32, correctly rounded).
//! - `score(row) = dot(query, row) / (norm(query) * norm(row))`, the row's
//!   norm precomputed by [`row_norms`].
//! - A row whose score is NaN (a zero vector, or a NaN or infinite element)
//!   is never returned.
//! - The top `k` are the rows with the highest scores, best first; equal
//!   scores in row order (the lower index first), so the result is fully
//!   determined by the matrix and the query.
//!
//! Time is linear in `n * d` (each element is read once, plus a linear
//! selection of the `k` best scores); the scores are computed on every core
//! in blocks of rows, which does not change them.

use rayon::prelude::*;

use crate::error::{Error, Result};

/// Accumulator lanes of [`dot`].
pub const LANES: usize = 8;

/// Rows per parallel block: large enough that scheduling is negligible.
const BLOCK_ROWS: usize = 4096;

/// The dot product of two equally long slices, summed as the module says.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    debug_assert_eq!(a.len(), b.len());
    let mut lane = [0.0f32; LANES];
    let mut a_blocks = a.chunks_exact(LANES);
    let mut b_blocks = b.chunks_exact(LANES);
    for (x, y) in (&mut a_blocks).zip(&mut b_blocks) {
        for i in 0..LANES {
            lane[i] += x[i] * y[i];
        }
    }
    for (i, (x, y)) in a_blocks
        .remainder()
        .iter()
        .zip(b_blocks.remainder())
        .enumerate()
    {
        lane[i] += x * y;
    }
    ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]))
}

/// The Euclidean norm of a vector, as the module says.
#[inline]
pub fn norm(a: &[f32]) -> f32 {
    dot(a, a).sqrt()
}

fn check_matrix(matrix: &[f32], dim: usize) -> Result<usize> {
    if dim == 0 {
        return Err(Error::InvalidArgument(
            "the vectors' dimension must be at least 1".into(),
        ));
    }
    if !matrix.len().is_multiple_of(dim) {
        return Err(Error::InvalidArgument(format!(
            "a matrix of {} values is not made of rows of {dim}",
            matrix.len()
        )));
    }
    Ok(matrix.len() / dim)
}

/// The norm of every row of `matrix` (`n x dim`, row-major).
pub fn row_norms(matrix: &[f32], dim: usize) -> Result<Vec<f32>> {
    let rows = check_matrix(matrix, dim)?;
    let mut out = vec![0.0f32; rows];
    out.par_chunks_mut(BLOCK_ROWS)
        .zip(matrix.par_chunks(BLOCK_ROWS * dim))
        .for_each(|(norms, block)| {
            for (n, row) in norms.iter_mut().zip(block.chunks_exact(dim)) {
                *n = norm(row);
            }
        });
    Ok(out)
}

/// A hit: the row's index and its score.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    pub row: usize,
    pub score: f32,
}

/// Best first: higher score, then lower row. Scores are never NaN here.
fn better(a: &Hit, b: &Hit) -> std::cmp::Ordering {
    b.score.total_cmp(&a.score).then(a.row.cmp(&b.row))
}

/// The `k` rows of `matrix` (`n x dim`, row-major, with `norms` from
/// [`row_norms`]) most similar to `query` by cosine, best first (see the
/// module for the exact arithmetic and order). Fewer than `k` when fewer
/// rows have a score; none when the query is a zero vector.
pub fn cosine_top_k(
    matrix: &[f32],
    dim: usize,
    norms: &[f32],
    query: &[f32],
    k: usize,
) -> Result<Vec<Hit>> {
    let rows = check_matrix(matrix, dim)?;
    if query.len() != dim {
        return Err(Error::InvalidArgument(format!(
            "the query has dimension {} but the vectors have {dim}",
            query.len()
        )));
    }
    if norms.len() != rows {
        return Err(Error::InvalidArgument(format!(
            "{} norms for {rows} rows",
            norms.len()
        )));
    }
    if k == 0 || rows == 0 {
        return Ok(Vec::new());
    }
    let query_norm = norm(query);
    let mut scores = vec![0.0f32; rows];
    scores
        .par_chunks_mut(BLOCK_ROWS)
        .zip(matrix.par_chunks(BLOCK_ROWS * dim))
        .zip(norms.par_chunks(BLOCK_ROWS))
        .for_each(|((out, block), block_norms)| {
            for ((s, row), n) in out.iter_mut().zip(block.chunks_exact(dim)).zip(block_norms) {
                *s = dot(query, row) / (query_norm * n);
            }
        });
    let mut hits: Vec<Hit> = scores
        .into_iter()
        .enumerate()
        .filter(|(_, score)| !score.is_nan())
        .map(|(row, score)| Hit { row, score })
        .collect();
    if hits.len() > k {
        hits.select_nth_unstable_by(k - 1, better);
        hits.truncate(k);
    }
    hits.sort_unstable_by(better);
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The module's arithmetic, written out plainly.
    fn reference(matrix: &[f32], dim: usize, query: &[f32], k: usize) -> Vec<Hit> {
        fn plain_dot(a: &[f32], b: &[f32]) -> f32 {
            let mut lane = [0.0f32; 8];
            for j in 0..a.len() {
                let p = a[j] * b[j];
                lane[j % 8] += p;
            }
            ((lane[0] + lane[1]) + (lane[2] + lane[3]))
                + ((lane[4] + lane[5]) + (lane[6] + lane[7]))
        }
        let qn = plain_dot(query, query).sqrt();
        let mut all: Vec<Hit> = matrix
            .chunks_exact(dim)
            .enumerate()
            .map(|(row, v)| Hit {
                row,
                score: plain_dot(query, v) / (qn * plain_dot(v, v).sqrt()),
            })
            .filter(|h| !h.score.is_nan())
            .collect();
        all.sort_by(better);
        all.truncate(k);
        all
    }

    fn search(matrix: &[f32], dim: usize, query: &[f32], k: usize) -> Vec<Hit> {
        let norms = row_norms(matrix, dim).unwrap();
        cosine_top_k(matrix, dim, &norms, query, k).unwrap()
    }

    fn bits(hits: &[Hit]) -> Vec<(usize, u32)> {
        hits.iter().map(|h| (h.row, h.score.to_bits())).collect()
    }

    #[test]
    fn finds_the_most_similar_rows_best_first() {
        let matrix = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, -1.0, 0.0];
        let hits = search(&matrix, 2, &[1.0, 0.1], 3);
        assert_eq!(hits.iter().map(|h| h.row).collect::<Vec<_>>(), [0, 2, 1]);
        assert!(hits[0].score > hits[1].score && hits[1].score > hits[2].score);
    }

    #[test]
    fn ties_go_to_the_lower_row() {
        // Rows 0, 2 and 3 are the same direction (same score), row 1 is worse.
        let matrix = [2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 2.0, 0.0];
        let hits = search(&matrix, 2, &[1.0, 0.0], 2);
        assert_eq!(hits.iter().map(|h| h.row).collect::<Vec<_>>(), [0, 2]);
        let all = search(&matrix, 2, &[1.0, 0.0], 10);
        assert_eq!(all.iter().map(|h| h.row).collect::<Vec<_>>(), [0, 2, 3, 1]);
    }

    #[test]
    fn zero_and_non_finite_rows_are_never_returned() {
        let matrix = [0.0, 0.0, f32::NAN, 1.0, 1.0, 1.0, f32::INFINITY, 1.0];
        let hits = search(&matrix, 2, &[1.0, 1.0], 10);
        assert_eq!(hits.iter().map(|h| h.row).collect::<Vec<_>>(), [2]);
        assert!(search(&matrix, 2, &[0.0, 0.0], 10).is_empty());
    }

    #[test]
    fn k_zero_and_empty_matrices_give_nothing() {
        assert!(search(&[1.0, 2.0], 2, &[1.0, 2.0], 0).is_empty());
        assert!(search(&[], 2, &[1.0, 2.0], 3).is_empty());
    }

    #[test]
    fn shapes_are_checked() {
        let norms = [1.0];
        assert!(cosine_top_k(&[1.0, 2.0], 2, &norms, &[1.0], 1).is_err());
        assert!(cosine_top_k(&[1.0, 2.0, 3.0], 2, &norms, &[1.0, 2.0], 1).is_err());
        assert!(cosine_top_k(&[1.0, 2.0], 2, &[], &[1.0, 2.0], 1).is_err());
        assert!(cosine_top_k(&[1.0, 2.0], 0, &norms, &[], 1).is_err());
        assert!(row_norms(&[1.0, 2.0, 3.0], 2).is_err());
    }

    #[test]
    fn equals_the_reference_bit_for_bit_across_blocks() {
        // More rows than one parallel block, an odd dimension (a lane tail).
        let dim = 13;
        let rows = BLOCK_ROWS * 2 + 77;
        let mut state = 0x2545_f491_u32;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state as f32 / u32::MAX as f32) * 2.0 - 1.0
        };
        let matrix: Vec<f32> = (0..rows * dim).map(|_| next()).collect();
        let query: Vec<f32> = (0..dim).map(|_| next()).collect();
        for k in [1, 10, 100, rows + 5] {
            assert_eq!(
                bits(&search(&matrix, dim, &query, k)),
                bits(&reference(&matrix, dim, &query, k))
            );
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn element() -> impl Strategy<Value = f32> {
            // Few distinct values, so that equal scores (ties) are common.
            prop_oneof![
                4 => (-4i8..=4).prop_map(f32::from),
                1 => -1e3f32..1e3,
                1 => Just(0.0f32),
            ]
        }

        fn case() -> impl Strategy<Value = (usize, Vec<f32>, Vec<f32>, usize)> {
            (1usize..20, 0usize..60, 0usize..70).prop_flat_map(|(dim, rows, k)| {
                (
                    Just(dim),
                    proptest::collection::vec(element(), rows * dim),
                    proptest::collection::vec(element(), dim),
                    Just(k),
                )
            })
        }

        proptest! {
            #[test]
            fn top_k_equals_the_full_sort((dim, matrix, query, k) in case()) {
                let hits = search(&matrix, dim, &query, k);
                prop_assert_eq!(bits(&hits), bits(&reference(&matrix, dim, &query, k)));
                prop_assert!(hits.len() <= k);
                prop_assert!(hits.windows(2).all(|w| better(&w[0], &w[1]).is_lt()));
            }
        }
    }
}
