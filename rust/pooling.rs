//! Mean pooling of embeddings, as Open Notebook's `mean_pool_embeddings`:
//! normalise each vector to unit length (zero vectors stay zero), average,
//! normalise the average (a zero average stays zero). Accumulates in f64.
//!
//! Two deliberate differences from the numpy original, both where it returns
//! garbage: non-finite input (NaN, infinity) is an error instead of a NaN
//! result, and norms are computed without overflow or underflow (a vector of
//! 1e200s or 1e-200s is normalised like any other; numpy's `sum(x*x)` gives
//! inf or 0 there). Pooling is therefore exactly invariant to scaling a row.
//!
//! Performance notes: each row is read once from memory (a row of a few
//! thousand floats stays in L1 for the second pass) and the inner loops run on
//! fixed-width blocks with separate accumulators, which the compiler turns
//! into SIMD; pooling many documents is memory-bound.

use crate::error::{Error, Result};

/// A float type that can be pooled.
pub trait Element: Copy + Send + Sync {
    fn to_f64(self) -> f64;
    fn from_f64(value: f64) -> Self;
}

impl Element for f32 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline(always)]
    fn from_f64(value: f64) -> Self {
        value as f32
    }
}

impl Element for f64 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_f64(value: f64) -> Self {
        value
    }
}

const LANES: usize = 8;

/// Sum of squares, in f64, over blocks of `LANES` independent accumulators.
fn sum_of_squares<T: Element>(row: &[T]) -> f64 {
    let mut acc = [0.0f64; LANES];
    let mut blocks = row.chunks_exact(LANES);
    for block in blocks.by_ref() {
        for (a, &x) in acc.iter_mut().zip(block) {
            let x = x.to_f64();
            *a += x * x;
        }
    }
    let tail: f64 = blocks
        .remainder()
        .iter()
        .map(|&x| x.to_f64() * x.to_f64())
        .sum();
    acc.iter().sum::<f64>() + tail
}

/// `acc += row / norm`. A division, as numpy's: multiplying by the
/// reciprocal is off by an ulp, and when normalised rows cancel out (opposite
/// vectors) that ulp, normalised, would become the result.
fn add_normalised<T: Element>(acc: &mut [f64], row: &[T], norm: f64) {
    for (a, &x) in acc.iter_mut().zip(row) {
        *a += x.to_f64() / norm;
    }
}

/// `values / norm` into `out` (values unchanged when the norm is 0).
fn write_normalised<T: Element>(out: &mut [T], values: &[f64], norm: f64) {
    let norm = if norm > 0.0 { norm } else { 1.0 };
    for (o, &v) in out.iter_mut().zip(values) {
        *o = T::from_f64(v / norm);
    }
}

/// The Euclidean norm, exact for any finite magnitude; `None` for non-finite
/// input.
fn norm<T: Element>(row: &[T]) -> Option<f64> {
    let squares = sum_of_squares(row);
    if squares.is_normal() && squares.is_finite() {
        return Some(squares.sqrt());
    }
    if squares == 0.0 && row.iter().all(|x| x.to_f64() == 0.0) {
        return Some(0.0);
    }
    // Overflow, underflow or non-finite input: scale by the largest magnitude.
    let mut largest = 0.0f64;
    for &x in row {
        let x = x.to_f64();
        if !x.is_finite() {
            return None;
        }
        largest = largest.max(x.abs());
    }
    if largest == 0.0 {
        return Some(0.0);
    }
    let scaled: f64 = row.iter().map(|&x| (x.to_f64() / largest).powi(2)).sum();
    Some(largest * scaled.sqrt())
}

fn not_finite(what: &str) -> Error {
    Error::InvalidArgument(format!(
        "{what} contains NaN or infinite values; mean pooling needs finite numbers"
    ))
}

/// Accumulates normalised rows of one document.
pub struct Pool {
    sum: Vec<f64>,
    rows: usize,
}

impl Pool {
    pub fn new(dimension: usize) -> Self {
        Self {
            sum: vec![0.0; dimension],
            rows: 0,
        }
    }

    /// Adds one embedding; `index` names it in errors.
    pub fn add<T: Element>(&mut self, row: &[T], index: usize) -> Result<()> {
        if row.len() != self.sum.len() {
            return Err(Error::InvalidArgument(format!(
                "all embeddings must have the same dimension: embedding {index} has {}, \
                 expected {}",
                row.len(),
                self.sum.len()
            )));
        }
        let n = norm(row).ok_or_else(|| not_finite(&format!("embedding {index}")))?;
        // A zero vector is averaged as it is (the original divides it by 1).
        add_normalised(&mut self.sum, row, if n > 0.0 { n } else { 1.0 });
        self.rows += 1;
        Ok(())
    }

    /// The pooled vector, written into `out` (of the pool's dimension).
    pub fn finish_into<T: Element>(self, out: &mut [T]) -> Result<()> {
        if self.rows == 0 {
            return Err(Error::InvalidArgument(
                "Cannot mean pool empty list of embeddings".into(),
            ));
        }
        let count = self.rows as f64;
        let mean: Vec<f64> = self.sum.iter().map(|s| s / count).collect();
        let n = norm(&mean).ok_or_else(|| not_finite("the mean"))?;
        write_normalised(out, &mean, n);
        Ok(())
    }

    pub fn finish(self) -> Result<Vec<f64>> {
        let mut out = vec![0.0; self.sum.len()];
        self.finish_into(&mut out)?;
        Ok(out)
    }
}

/// One document's embeddings, rows of a row-major matrix.
pub fn mean_pool<T: Element>(data: &[T], dimension: usize) -> Result<Vec<f64>> {
    if dimension == 0 {
        return Err(Error::InvalidArgument("embeddings have dimension 0".into()));
    }
    let mut pool = Pool::new(dimension);
    for (i, row) in data.chunks_exact(dimension).enumerate() {
        pool.add(row, i)?;
    }
    pool.finish()
}

/// Sentence-transformers' mean pooling of a transformer's token embeddings:
/// the average of the tokens whose attention mask is set (at least 1e-9 of a
/// token, as torch's `clamp`), then L2-normalised with an epsilon of 1e-12
/// (`torch.nn.functional.normalize`). `hidden` holds `tokens` rows of
/// `out.len()` values, `mask` one flag per token.
pub fn token_mean_pool<T: Element>(hidden: &[T], mask: &[i64], out: &mut [T]) -> Result<()> {
    let dimension = out.len();
    if hidden.len() != mask.len() * dimension {
        return Err(Error::InvalidArgument(format!(
            "token embeddings hold {} values, expected {} tokens x {dimension}",
            hidden.len(),
            mask.len()
        )));
    }
    let mut sum = vec![0.0f64; dimension];
    let mut kept = 0.0f64;
    for (row, &flag) in hidden.chunks_exact(dimension.max(1)).zip(mask) {
        if flag != 0 {
            for (a, &x) in sum.iter_mut().zip(row) {
                *a += x.to_f64() * flag as f64;
            }
            kept += flag as f64;
        }
    }
    let count = kept.max(1e-9);
    let mean: Vec<f64> = sum.iter().map(|s| s / count).collect();
    let n = norm(&mean).ok_or_else(|| not_finite("the token embeddings"))?;
    write_normalised(out, &mean, n.max(1e-12));
    Ok(())
}

/// Checks that `offsets` cut `rows` rows into consecutive non-empty segments.
pub fn check_offsets(offsets: &[i64], rows: usize) -> Result<()> {
    let bad = |msg: String| Err(Error::InvalidArgument(msg));
    match (offsets.first(), offsets.last()) {
        (Some(&0), Some(&last)) if last as usize == rows && last >= 0 => {}
        (None, _) | (Some(_), None) => return bad("offsets must hold at least one value".into()),
        (Some(&first), Some(&last)) => {
            return bad(format!(
                "offsets must start at 0 and end at the number of rows ({rows}), got {first} \
                 and {last}"
            ));
        }
    }
    if let Some(i) = offsets.windows(2).position(|w| w[1] <= w[0]) {
        return bad(format!(
            "document {i} is empty or offsets decrease: offsets[{i}] = {}, offsets[{}] = {}; \
             Cannot mean pool empty list of embeddings",
            offsets[i],
            i + 1,
            offsets[i + 1]
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    #[test]
    fn one_vector_is_normalised() {
        assert!(close(
            &mean_pool(&[3.0f64, 4.0], 2).expect("ok"),
            &[0.6, 0.8]
        ));
        assert!(close(
            &mean_pool(&[0.0f64, 0.0], 2).expect("ok"),
            &[0.0, 0.0]
        ));
    }

    #[test]
    fn orthogonal_vectors_meet_in_the_middle() {
        let r = mean_pool(&[2.0f32, 0.0, 0.0, 5.0], 2).expect("ok");
        let h = std::f64::consts::FRAC_1_SQRT_2;
        assert!(close(&r, &[h, h]));
    }

    #[test]
    fn zero_rows_are_averaged_unnormalised() {
        // (1,0) normalised, plus a zero row: mean (0.5, 0), normalised (1, 0).
        assert!(close(
            &mean_pool(&[7.0f64, 0.0, 0.0, 0.0], 2).expect("ok"),
            &[1.0, 0.0]
        ));
        // Opposite vectors: zero mean, returned as it is.
        assert!(close(
            &mean_pool(&[1.0f64, 0.0, -2.0, 0.0], 2).expect("ok"),
            &[0.0, 0.0]
        ));
    }

    #[test]
    fn extreme_magnitudes_are_normalised_exactly() {
        assert!(close(
            &mean_pool(&[3e200f64, 4e200], 2).expect("ok"),
            &[0.6, 0.8]
        ));
        assert!(close(
            &mean_pool(&[3e-200f64, 4e-200], 2).expect("ok"),
            &[0.6, 0.8]
        ));
    }

    #[test]
    fn opposite_vectors_cancel_exactly() {
        assert_eq!(mean_pool(&[-1.53125f32, 1.0], 1).expect("ok"), [0.0]);
    }

    #[test]
    fn subnormal_vectors_are_normalised() {
        assert!(close(&mean_pool(&[2.2e-311f64], 1).expect("ok"), &[1.0]));
        assert!(close(
            &mean_pool(&[3e-320f64, 4e-320], 2).expect("ok"),
            &[0.6, 0.8]
        ));
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(mean_pool::<f64>(&[], 3).is_err());
        assert!(mean_pool(&[1.0f64, f64::NAN], 2).is_err());
        assert!(mean_pool(&[f64::INFINITY, 1.0], 2).is_err());
        let mut pool = Pool::new(2);
        assert!(pool.add(&[1.0f64, 2.0, 3.0], 0).is_err());
    }

    #[test]
    fn token_pooling_averages_masked_tokens_and_normalises() {
        let hidden = [1.0f32, 0.0, 0.0, 3.0, 100.0, 100.0];
        let mut out = [0.0f32; 2];
        token_mean_pool(&hidden, &[1, 1, 0], &mut out).expect("ok");
        let expected = [1.0 / 10f32.sqrt(), 3.0 / 10f32.sqrt()];
        assert!(out.iter().zip(expected).all(|(a, b)| (a - b).abs() < 1e-6));
        assert!(token_mean_pool(&hidden, &[1, 1], &mut out).is_err());
    }

    #[test]
    fn offsets_must_cut_non_empty_segments() {
        assert!(check_offsets(&[0, 2, 5], 5).is_ok());
        assert!(check_offsets(&[0, 2, 2, 5], 5).is_err());
        assert!(check_offsets(&[1, 5], 5).is_err());
        assert!(check_offsets(&[0, 4], 5).is_err());
        assert!(check_offsets(&[], 0).is_err());
    }
}
