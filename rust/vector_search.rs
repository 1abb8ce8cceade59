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
//!
//! ## The sketch: the same result from a quarter of the memory traffic
//!
//! A search over many rows is bound by reading the matrix. [`sketch_rows`]
//! keeps, for every row, its direction rounded to 8-bit integers (the unit
//! row divided by a per-row scale, rounded) and an upper bound of that
//! rounding's error (the Euclidean norm of the difference, computed in f64
//! and rounded up). [`cosine_top_k_sketched`] first scores every row from
//! the sketches (integer dot products, exact), which gives each row an
//! interval that holds its exact f32 score: the sketch's estimate, plus or
//! minus the query's and the row's rounding error (Cauchy-Schwarz) and a
//! bound of the f32 arithmetic's own rounding. Every row whose interval lies
//! wholly below the `k`-th highest lower end has `k` rows certainly better
//! than it, so it cannot be in the top `k`; the other rows (a few hundred
//! among a million, typically) are scored by the exact arithmetic above and
//! ranked as [`cosine_top_k`] ranks them. The result is therefore
//! [`cosine_top_k`]'s, bit for bit. A row or query the bound does not cover
//! (a non-finite element, a norm outside `[1e-10, 1e10]`) is always scored
//! exactly (the query: the plain search is used).

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

/// The `k` best of `hits`, best first (k >= 1).
fn best(mut hits: Vec<Hit>, k: usize) -> Vec<Hit> {
    if hits.len() > k {
        hits.select_nth_unstable_by(k - 1, better);
        hits.truncate(k);
    }
    hits.sort_unstable_by(better);
    hits
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
    let hits: Vec<Hit> = scores
        .into_iter()
        .enumerate()
        .filter(|(_, score)| !score.is_nan())
        .map(|(row, score)| Hit { row, score })
        .collect();
    Ok(best(hits, k))
}

/// Norms outside this range are not sketched (their rows are always scored
/// exactly): inside it no product or sum of the f32 arithmetic overflows,
/// and underflow is negligible against the bound's slack.
const SKETCH_NORMS: (f64, f64) = (1e-10, 1e10);

/// Sketches hold at most this dimension (their integer sums cannot overflow).
const SKETCH_MAX_DIM: usize = 100_000;

/// One row's sketch: `codes` filled, (scale, error bound). The error is
/// infinite (and the codes zero) for a row the bound does not cover.
///
/// The sums run on four f64 lanes and the codes are rounded by a cast, so
/// that the loops compile to vector instructions (a sequential sum and
/// `f64::round`, a libm call on baseline x86-64, did not). Any code is
/// valid: the error is measured from the codes chosen, and the margin added
/// to it covers the f64 rounding of the sums, whatever their order.
fn sketch_row(row: &[f32], codes: &mut [i8]) -> (f32, f32) {
    let uncovered = (0.0, f32::INFINITY);
    codes.fill(0);
    if row.iter().any(|x| !x.is_finite()) {
        return uncovered;
    }
    let norm = lane_sum(row, |x| x * x).sqrt();
    if !(SKETCH_NORMS.0..=SKETCH_NORMS.1).contains(&norm) {
        return uncovered;
    }
    let largest = row.iter().fold(0.0f64, |m, &x| m.max(f64::from(x).abs())) / norm;
    // The scale is stored as f32: the codes and the error use that value.
    let scale = (largest / 127.0) as f32;
    if !(scale > 0.0 && scale.is_finite()) {
        return uncovered;
    }
    let step = f64::from(scale);
    let (to_unit, to_code) = (1.0 / norm, 1.0 / (norm * step));
    for (code, &x) in codes.iter_mut().zip(row) {
        // Half away from zero, clamped: the cast truncates toward zero.
        let scaled = (f64::from(x) * to_code).clamp(-127.0, 127.0);
        *code = (scaled + 0.5f64.copysign(scaled)) as i8;
    }
    let mut lanes = [0.0f64; 4];
    let mut pairs = row.chunks_exact(4).zip(codes.chunks_exact(4));
    for (xs, cs) in &mut pairs {
        for i in 0..4 {
            let difference = f64::from(xs[i]) * to_unit - f64::from(cs[i]) * step;
            lanes[i] += difference * difference;
        }
    }
    let tail = row.len() - row.len() % 4;
    let mut error = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    for (&x, &c) in row[tail..].iter().zip(&codes[tail..]) {
        let difference = f64::from(x) * to_unit - f64::from(c) * step;
        error += difference * difference;
    }
    // Rounded up: a relative margin far above f64's and f32's rounding.
    let bound = (error.sqrt() * (1.0 + 1e-6) + 1e-9) as f32;
    (scale, bound)
}

/// The sum of `f(x)` over `row` in f64, on four lanes.
#[inline(always)]
fn lane_sum(row: &[f32], f: impl Fn(f64) -> f64) -> f64 {
    let mut lanes = [0.0f64; 4];
    let mut blocks = row.chunks_exact(4);
    for xs in &mut blocks {
        for i in 0..4 {
            lanes[i] += f(f64::from(xs[i]));
        }
    }
    let rest: f64 = blocks.remainder().iter().map(|&x| f(f64::from(x))).sum();
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]) + rest
}

/// The sketch of every row of `matrix` (`n x dim`): the 8-bit codes
/// (`n x dim`, row-major), each row's scale and each row's error bound (see
/// the module).
pub fn sketch_rows(matrix: &[f32], dim: usize) -> Result<(Vec<i8>, Vec<f32>, Vec<f32>)> {
    let rows = check_matrix(matrix, dim)?;
    let mut codes = vec![0i8; rows * dim];
    let mut scales = vec![0.0f32; rows];
    let mut errors = vec![0.0f32; rows];
    codes
        .par_chunks_mut(BLOCK_ROWS * dim)
        .zip(matrix.par_chunks(BLOCK_ROWS * dim))
        .zip(scales.par_chunks_mut(BLOCK_ROWS))
        .zip(errors.par_chunks_mut(BLOCK_ROWS))
        .for_each(|(((codes, block), scales), errors)| {
            for (((code, row), scale), error) in codes
                .chunks_exact_mut(dim)
                .zip(block.chunks_exact(dim))
                .zip(scales.iter_mut())
                .zip(errors.iter_mut())
            {
                (*scale, *error) = sketch_row(row, code);
            }
        });
    Ok((codes, scales, errors))
}

/// The sketches of a matrix's rows, as [`sketch_rows`] returns them.
#[derive(Clone, Copy, Debug)]
pub struct Sketch<'a> {
    pub codes: &'a [i8],
    pub scales: &'a [f32],
    pub errors: &'a [f32],
}

/// The integer dot product of two codes (exact: products fit in i16, and
/// at most `SKETCH_MAX_DIM` of them in i32).
#[inline(always)]
fn code_dot(a: &[i8], b: &[i8]) -> i32 {
    const WIDTH: usize = 32;
    let mut lane = [0i32; WIDTH];
    let mut a_blocks = a.chunks_exact(WIDTH);
    let mut b_blocks = b.chunks_exact(WIDTH);
    for (x, y) in (&mut a_blocks).zip(&mut b_blocks) {
        for i in 0..WIDTH {
            lane[i] += i32::from(i16::from(x[i]) * i16::from(y[i]));
        }
    }
    let tail: i32 = a_blocks
        .remainder()
        .iter()
        .zip(b_blocks.remainder())
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum();
    lane.iter().sum::<i32>() + tail
}

/// The query's side of the sketch scan.
struct Scan<'a> {
    dim: usize,
    query_codes: &'a [i8],
    query_scale: f64,
    query_error: f64,
    arithmetic: f64,
}

impl Scan<'_> {
    /// Each row's interval (lowest, highest) for its exact f32 score.
    #[inline(always)]
    fn bounds(&self, out: &mut [(f64, f64)], codes: &[i8], scales: &[f32], errors: &[f32]) {
        for (((bound, codes), &scale), &error) in out
            .iter_mut()
            .zip(codes.chunks_exact(self.dim))
            .zip(scales)
            .zip(errors)
        {
            *bound = if error.is_finite() {
                let dot = f64::from(code_dot(self.query_codes, codes));
                let estimate = self.query_scale * f64::from(scale) * dot;
                let slack = (1.0 + self.query_error) * f64::from(error)
                    + self.query_error
                    + self.arithmetic
                    + 1e-9;
                (estimate - slack, estimate + slack)
            } else {
                (f64::NEG_INFINITY, f64::INFINITY)
            };
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn bounds_avx2(&self, out: &mut [(f64, f64)], codes: &[i8], scales: &[f32], errors: &[f32]) {
        self.bounds(out, codes, scales, errors);
    }

    /// [`Scan::bounds`], with the wider integer instructions where the
    /// processor has them (integer sums: the same result either way).
    fn block(&self, out: &mut [(f64, f64)], codes: &[i8], scales: &[f32], errors: &[f32]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2, checked just above.
            unsafe { self.bounds_avx2(out, codes, scales, errors) };
            return;
        }
        self.bounds(out, codes, scales, errors);
    }
}

/// [`cosine_top_k`]'s result, bit for bit, reading the full rows of only the
/// candidates the sketch cannot rule out (see the module). `sketch` must be
/// [`sketch_rows`] of `matrix`, and `norms` [`row_norms`] of it.
pub fn cosine_top_k_sketched(
    matrix: &[f32],
    dim: usize,
    norms: &[f32],
    sketch: Sketch<'_>,
    query: &[f32],
    k: usize,
) -> Result<Vec<Hit>> {
    let rows = check_matrix(matrix, dim)?;
    if sketch.codes.len() != matrix.len()
        || sketch.scales.len() != rows
        || sketch.errors.len() != rows
    {
        return Err(Error::InvalidArgument(format!(
            "the sketch ({} codes, {} scales, {} errors) is not one of {rows} rows of {dim}",
            sketch.codes.len(),
            sketch.scales.len(),
            sketch.errors.len()
        )));
    }
    if query.len() != dim || norms.len() != rows {
        // The plain search reports the mismatch.
        return cosine_top_k(matrix, dim, norms, query, k);
    }
    let Some(candidates) = candidates(dim, rows, sketch, query, k) else {
        return cosine_top_k(matrix, dim, norms, query, k);
    };
    let query_norm = norm(query);
    let hits: Vec<Hit> = candidates
        .into_iter()
        .map(|row| Hit {
            row,
            score: dot(query, &matrix[row * dim..(row + 1) * dim]) / (query_norm * norms[row]),
        })
        .filter(|h| !h.score.is_nan())
        .collect();
    Ok(best(hits, k))
}

/// The rows (ascending) the sketch cannot rule out of the top `k`, or None
/// when the plain search is to be used (no sketch bound for this query or
/// dimension, or at most `k` rows).
fn candidates(
    dim: usize,
    rows: usize,
    sketch: Sketch<'_>,
    query: &[f32],
    k: usize,
) -> Option<Vec<usize>> {
    if dim > SKETCH_MAX_DIM || k == 0 || rows <= k {
        return None;
    }
    let mut query_codes = vec![0i8; dim];
    let (query_scale, query_error) = sketch_row(query, &mut query_codes);
    if query_error.is_infinite() {
        return None;
    }
    let query_scale = f64::from(query_scale);
    let query_error = f64::from(query_error);
    // The f32 arithmetic's own error on a score: about 2 * (dim / 8 + 5)
    // roundings of relative size 2^-24 bound it; this is far above that.
    let arithmetic = (dim as f64 + 64.0) * f64::from(f32::EPSILON);
    let mut bounds = vec![(0.0f64, 0.0f64); rows];
    let scan = Scan {
        dim,
        query_codes: &query_codes,
        query_scale,
        query_error,
        arithmetic,
    };
    bounds
        .par_chunks_mut(BLOCK_ROWS)
        .zip(sketch.codes.par_chunks(BLOCK_ROWS * dim))
        .zip(sketch.scales.par_chunks(BLOCK_ROWS))
        .zip(sketch.errors.par_chunks(BLOCK_ROWS))
        .for_each(|(((out, codes), scales), errors)| {
            scan.block(out, codes, scales, errors);
        });
    let mut lowest: Vec<f64> = bounds.iter().map(|b| b.0).collect();
    let (_, kth, _) = lowest.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
    let threshold = *kth;
    drop(lowest);
    Some(
        bounds
            .iter()
            .enumerate()
            .filter(|(_, b)| b.1 >= threshold)
            .map(|(row, _)| row)
            .collect(),
    )
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

    fn sketched(matrix: &[f32], dim: usize, query: &[f32], k: usize) -> Vec<Hit> {
        let norms = row_norms(matrix, dim).unwrap();
        let (codes, scales, errors) = sketch_rows(matrix, dim).unwrap();
        let sketch = Sketch {
            codes: &codes,
            scales: &scales,
            errors: &errors,
        };
        cosine_top_k_sketched(matrix, dim, &norms, sketch, query, k).unwrap()
    }

    /// A deterministic stream of numbers in [-1, 1).
    fn numbers(seed: u32) -> impl FnMut() -> f32 {
        let mut state = seed;
        move || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state as f32 / u32::MAX as f32) * 2.0 - 1.0
        }
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

    #[test]
    fn the_sketch_gives_the_plain_result_and_reads_few_rows() {
        let dim = 384;
        let rows = 20_000;
        let mut next = numbers(0x9e37_79b9);
        // Clustered rows (near-duplicates, close scores) and a few the bound
        // does not cover, wherever they fall.
        let centres: Vec<f32> = (0..50 * dim).map(|_| next()).collect();
        let mut matrix: Vec<f32> = (0..rows * dim)
            .map(|i| centres[((i / dim) % 50) * dim + i % dim] + 0.05 * next())
            .collect();
        matrix[7 * dim..8 * dim].fill(0.0);
        matrix[11 * dim + 3] = f32::NAN;
        matrix[13 * dim..14 * dim].fill(1e-20);
        matrix[17 * dim..18 * dim].fill(3e15);
        matrix[19 * dim..20 * dim].copy_from_slice(&centres[..dim]);
        let (codes, scales, errors) = sketch_rows(&matrix, dim).unwrap();
        assert!(errors[7].is_infinite() && errors[11].is_infinite());
        assert!(errors[13].is_infinite() && errors[17].is_infinite());
        assert!(errors[19] < 0.02);
        let sketch = Sketch {
            codes: &codes,
            scales: &scales,
            errors: &errors,
        };
        let mut queries: Vec<Vec<f32>> =
            (0..6).map(|_| (0..dim).map(|_| next()).collect()).collect();
        queries.push(centres[..dim].to_vec()); // ties: row 19 and its cluster
        queries.push(matrix[1000 * dim..1001 * dim].to_vec());
        for query in &queries {
            for k in [1, 10, 40, 500] {
                assert_eq!(
                    bits(&sketched(&matrix, dim, query, k)),
                    bits(&search(&matrix, dim, query, k))
                );
            }
            let found = candidates(dim, rows, sketch, query, 40).unwrap();
            assert!(found.len() < rows / 10, "{} candidates", found.len());
        }
        // Queries the bound does not cover use the plain search.
        for query in [vec![0.0; dim], vec![f32::NAN; dim], vec![1e-12; dim]] {
            assert!(candidates(dim, rows, sketch, &query, 5).is_none());
            assert_eq!(
                bits(&sketched(&matrix, dim, &query, 5)),
                bits(&search(&matrix, dim, &query, 5))
            );
        }
    }

    #[test]
    fn a_sketch_of_other_rows_is_refused() {
        let matrix = [1.0, 0.0, 0.0, 1.0];
        let (codes, scales, errors) = sketch_rows(&matrix, 2).unwrap();
        let norms = row_norms(&matrix, 2).unwrap();
        let short = Sketch {
            codes: &codes[..2],
            scales: &scales,
            errors: &errors,
        };
        assert!(cosine_top_k_sketched(&matrix, 2, &norms, short, &[1.0, 0.0], 1).is_err());
        assert!(sketch_rows(&[1.0, 2.0, 3.0], 2).is_err());
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
                prop_assert_eq!(bits(&sketched(&matrix, dim, &query, k)), bits(&hits));
                prop_assert!(hits.len() <= k);
                prop_assert!(hits.windows(2).all(|w| better(&w[0], &w[1]).is_lt()));
            }

            #[test]
            fn a_row_s_error_bound_covers_its_rounding(
                row in proptest::collection::vec(
                    prop_oneof![element(), -1e-6f32..1e-6, -1e6f32..1e6], 1..45)
            ) {
                let (codes, scales, errors) = sketch_rows(&row, row.len()).unwrap();
                prop_assume!(errors[0].is_finite());
                // Plainly: one sequential sum, divisions.
                let norm = row.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>().sqrt();
                let step = f64::from(scales[0]);
                let mut error = 0.0f64;
                for (&x, &code) in row.iter().zip(&codes) {
                    let unit = f64::from(x) / norm;
                    prop_assert!((unit / step - f64::from(code)).abs() <= 0.5 + 1e-9);
                    error += (unit - f64::from(code) * step).powi(2);
                }
                prop_assert!(error.sqrt() <= f64::from(errors[0]));
            }
        }
    }
}
