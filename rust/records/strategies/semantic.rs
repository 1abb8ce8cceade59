//! Semantic chunking: sentences ([`super::sentence::sentences`]) grouped
//! where the meaning of consecutive sentence windows stays close, from one
//! embedding per sentence (computed by the caller).
//!
//! The distance between sentence `i` and `i + 1` is `1 - cos(e[i], e[i+1])`
//! (0 similarity for a zero vector). A group ends after sentence `i` when:
//! - `Percentile(p)`: its distance is above the `p`-th percentile of all
//!   distances (numpy's default linear interpolation), as LangChain's
//!   `SemanticChunker`;
//! - `StdDev(k)`: its distance is above their mean plus `k` population
//!   standard deviations;
//! - `Absolute(t)`: its similarity is below `t`.
//!
//! A group longer than `chunk_size` is split into sentences packed up to
//! the size. With `merge_threshold` (the double pass), neighbouring chunks
//! whose mean sentence embeddings have a similarity of at least the
//! threshold are merged while the result fits in `chunk_size`.
//! `metadata["similarity"]` is the similarity across a chunk's start (its
//! first sentence with the sentence before it), when it has one.

use std::ops::Range;

use crate::chunking::recursive::LengthFunction;
use crate::error::{Error, Result};
use crate::records::{Options, Raw, Split, Value};

use super::sentence;

/// Where groups end.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Threshold {
    Percentile(f64),
    StdDev(f64),
    Absolute(f64),
}

/// How a threshold is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThresholdType {
    Percentile,
    Std,
    Absolute,
}

impl std::str::FromStr for ThresholdType {
    type Err = crate::error::Error;

    fn from_str(name: &str) -> crate::error::Result<Self> {
        match name {
            "percentile" => Ok(ThresholdType::Percentile),
            "std" => Ok(ThresholdType::Std),
            "absolute" => Ok(ThresholdType::Absolute),
            other => Err(crate::error::Error::InvalidArgument(format!(
                "threshold_type must be 'percentile', 'std' or 'absolute', got {other:?}"
            ))),
        }
    }
}

impl Threshold {
    /// A threshold of a type and an amount (`None`: the type's default,
    /// 95th percentile, 3 standard deviations or 0.5); the amount must be
    /// finite, a percentile within 0-100.
    pub fn new(kind: ThresholdType, amount: Option<f64>) -> crate::error::Result<Self> {
        let finite = |x: f64| {
            if x.is_finite() {
                Ok(x)
            } else {
                Err(crate::error::Error::InvalidArgument(format!(
                    "threshold must be finite, got {x}"
                )))
            }
        };
        match kind {
            ThresholdType::Percentile => {
                let p = finite(amount.unwrap_or(95.0))?;
                if !(0.0..=100.0).contains(&p) {
                    return Err(crate::error::Error::InvalidArgument(format!(
                        "a percentile threshold is within 0-100, got {p}"
                    )));
                }
                Ok(Threshold::Percentile(p))
            }
            ThresholdType::Std => Ok(Threshold::StdDev(finite(amount.unwrap_or(3.0))?)),
            ThresholdType::Absolute => Ok(Threshold::Absolute(finite(amount.unwrap_or(0.5))?)),
        }
    }
}

/// The embeddings: `rows` vectors of `dim` values, row-major.
pub struct Embeddings<'a, T> {
    pub data: &'a [T],
    pub rows: usize,
    pub dim: usize,
}

/// The cosine similarity of consecutive rows.
pub fn similarities<T: Copy + Into<f64>>(e: &Embeddings<'_, T>) -> Vec<f64> {
    let row = |i: usize| &e.data[i * e.dim..(i + 1) * e.dim];
    let norms: Vec<f64> = (0..e.rows)
        .map(|i| {
            row(i)
                .iter()
                .map(|&x| x.into() * x.into())
                .sum::<f64>()
                .sqrt()
        })
        .collect();
    (1..e.rows)
        .map(|i| {
            let dot: f64 = row(i - 1)
                .iter()
                .zip(row(i))
                .map(|(&a, &b)| a.into() * b.into())
                .sum();
            let n = norms[i - 1] * norms[i];
            if n > 0.0 { dot / n } else { 0.0 }
        })
        .collect()
}

/// numpy's `percentile` with linear interpolation.
fn percentile(values: &[f64], p: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = p / 100.0 * (sorted.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    let frac = rank - lo as f64;
    sorted[lo] + (sorted[hi.min(sorted.len() - 1)] - sorted[lo]) * frac
}

/// The indices `i` after which a group ends (between sentence `i` and
/// `i + 1`).
pub fn breakpoints(sims: &[f64], threshold: Threshold) -> Vec<usize> {
    if sims.is_empty() {
        return Vec::new();
    }
    let distances: Vec<f64> = sims.iter().map(|s| 1.0 - s).collect();
    match threshold {
        Threshold::Absolute(t) => (0..sims.len()).filter(|&i| sims[i] < t).collect(),
        Threshold::Percentile(p) => {
            let limit = percentile(&distances, p);
            (0..sims.len()).filter(|&i| distances[i] > limit).collect()
        }
        Threshold::StdDev(k) => {
            let n = distances.len() as f64;
            let mean = distances.iter().sum::<f64>() / n;
            let var = distances
                .iter()
                .map(|d| (d - mean) * (d - mean))
                .sum::<f64>()
                / n;
            let limit = mean + k * var.sqrt();
            (0..sims.len()).filter(|&i| distances[i] > limit).collect()
        }
    }
}

fn mean_row<T: Copy + Into<f64>>(e: &Embeddings<'_, T>, rows: Range<usize>) -> Vec<f64> {
    let mut out = vec![0.0; e.dim];
    for i in rows.clone() {
        for (o, &x) in out.iter_mut().zip(&e.data[i * e.dim..(i + 1) * e.dim]) {
            *o += x.into();
        }
    }
    let n = rows.len().max(1) as f64;
    out.iter_mut().for_each(|o| *o /= n);
    out
}

fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let n =
        a.iter().map(|x| x * x).sum::<f64>().sqrt() * b.iter().map(|x| x * x).sum::<f64>().sqrt();
    if n > 0.0 { dot / n } else { 0.0 }
}

/// The chunks of `source` from the embeddings of its sentences (one row per
/// sentence of [`sentence::sentences`], in order).
pub fn split<T: Copy + Into<f64>, L: LengthFunction<str>>(
    source: &str,
    embeddings: &Embeddings<'_, T>,
    threshold: Threshold,
    merge_threshold: Option<f64>,
    options: &Options,
    length: &L,
) -> Result<Split> {
    let sents = sentence::sentences(source);
    if embeddings.rows != sents.len() {
        return Err(Error::InvalidArgument(format!(
            "the embeddings have {} rows for {} sentences",
            embeddings.rows,
            sents.len()
        )));
    }
    if embeddings.data.len() != embeddings.rows * embeddings.dim {
        return Err(Error::InvalidArgument(
            "the embeddings are not a full rows x dim matrix".to_string(),
        ));
    }
    let sims = similarities(embeddings);
    // Groups of sentences: index ranges.
    let mut groups: Vec<Range<usize>> = Vec::new();
    let mut start = 0;
    for b in breakpoints(&sims, threshold) {
        groups.push(start..b + 1);
        start = b + 1;
    }
    if start < sents.len() {
        groups.push(start..sents.len());
    }
    // Groups longer than the size: sentences packed up to it.
    let size = options.chunk_size;
    let span = |g: &Range<usize>| sents[g.start].start..sents[g.end - 1].end;
    let fits = |g: &Range<usize>| !length.exceeds(&source[span(g)], size);
    let mut pieces: Vec<Range<usize>> = Vec::new();
    for g in groups {
        if fits(&g) {
            pieces.push(g);
            continue;
        }
        let mut first = g.start;
        while first < g.end {
            let mut last = first + 1;
            while last < g.end && fits(&(first..last + 1)) {
                last += 1;
            }
            pieces.push(first..last);
            first = last;
        }
    }
    if let Some(t) = merge_threshold {
        let mut merged: Vec<Range<usize>> = Vec::with_capacity(pieces.len());
        for p in pieces {
            if let Some(last) = merged.last_mut() {
                let joined = last.start..p.end;
                let close = cosine(
                    &mean_row(embeddings, last.clone()),
                    &mean_row(embeddings, p.clone()),
                ) >= t;
                if close && fits(&joined) {
                    *last = joined;
                    continue;
                }
            }
            merged.push(p);
        }
        pieces = merged;
    }
    let chunks = pieces
        .into_iter()
        .map(|g| {
            let mut raw = Raw::span(span(&g));
            if g.start > 0 {
                raw.metadata
                    .push(("similarity".to_string(), Value::Float(sims[g.start - 1])));
            }
            raw
        })
        .collect();
    Ok(Split {
        chunks,
        ..Split::default()
    })
}
