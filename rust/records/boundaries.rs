//! The last step of the shared post-processing, for every strategy: each
//! chunk starts and ends between extended grapheme clusters (UAX #29), and
//! its own text, measured whole in the unit, is within the hard maximum.
//!
//! The rule, chunk by chunk in order:
//! 1. the start moves back and the end forward to the nearest cluster
//!    boundary (a chunk never loses part of a cluster it touches);
//! 2. if the chunk then exceeds the maximum, its end moves back instead: to
//!    the boundary before the original end, then one cluster at a time
//!    (after [`STEPS`] clusters, by bisection over the chunk's boundaries);
//! 3. only a cluster that alone exceeds the maximum is cut inside, after as
//!    many of its characters as fit (at least one);
//! 4. what a chunk gives up at its end goes to the start of the next chunk,
//!    or to new chunks after the last one, so no text is lost;
//! 5. chunks that are not exact windows are stripped again, on cluster
//!    boundaries; a chunk left without a letter or digit goes to the next.
//!
//! Each question about a boundary is local ([`Graphemes`]) and a chunk is
//! measured a bounded number of times, so the step is linear in the text.

use std::ops::Range;

use crate::chunking::graphemes::Graphemes;
use crate::chunking::recursive::LengthFunction;
use crate::chunking::splittable::Splittable;

use super::{Raw, has_word_char};

/// Clusters given up one at a time before bisecting.
pub const STEPS: usize = 8;

struct Fitter<'a, L> {
    source: &'a str,
    graphemes: Graphemes<'a>,
    max: usize,
    length: &'a L,
}

impl<L: LengthFunction<str>> Fitter<'_, L> {
    /// The count of `range` when it is within the maximum.
    fn fits(&self, range: Range<usize>) -> Option<usize> {
        let n = self.length.length_up_to(&self.source[range], self.max);
        (n <= self.max).then_some(n)
    }

    /// The chunk from `start` (a boundary, or inside a cluster too large for
    /// any chunk) towards `end`, cut on clusters to fit: its range and count.
    fn place(&self, start: usize, end: usize) -> (Range<usize>, usize) {
        let g = &self.graphemes;
        let mut e = g.ceil(end);
        if e <= start {
            e = g.next(start);
        }
        if let Some(n) = self.fits(start..e) {
            return (start..e, n);
        }
        let floor = g.floor(end);
        if start < floor && floor < e {
            e = floor;
            if let Some(n) = self.fits(start..e) {
                return (start..e, n);
            }
        }
        for _ in 0..STEPS {
            let p = g.prev(e);
            if p <= start {
                return self.inside_first_cluster(start);
            }
            e = p;
            if let Some(n) = self.fits(start..e) {
                return (start..e, n);
            }
        }
        // Bisection over the boundaries left: the last one that fits.
        let mut ends = Vec::new();
        let mut at = g.next(start);
        while at < e {
            ends.push(at);
            at = g.next(at);
        }
        let (mut lo, mut hi) = (0, ends.len());
        let mut best = None;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.fits(start..ends[mid]) {
                Some(n) => {
                    best = Some((start..ends[mid], n));
                    lo = mid + 1;
                }
                None => hi = mid,
            }
        }
        best.unwrap_or_else(|| self.inside_first_cluster(start))
    }

    /// The first cluster from `start` exceeds the maximum alone: as many of
    /// its characters as fit, at least one.
    fn inside_first_cluster(&self, start: usize) -> (Range<usize>, usize) {
        let cluster_end = self.graphemes.next(start);
        let text = &self.source[start..cluster_end];
        let mut best = None;
        for (i, ch) in text.char_indices() {
            let e = start + i + ch.len_utf8();
            match self.fits(start..e) {
                Some(n) => best = Some((start..e, n)),
                None if best.is_some() => break,
                None => {
                    let n = self.length.length(&self.source[start..e]);
                    return (start..e, n);
                }
            }
        }
        best.unwrap_or((start..cluster_end, 0))
    }

    /// `range` (of count `n`) without the whitespace around it, on cluster
    /// boundaries, and its count; unchanged if that leaves nothing.
    fn stripped(&self, range: Range<usize>, n: usize) -> (Range<usize>, usize) {
        let r = self.strip(range.clone());
        if r == range || r.is_empty() {
            return (range, n);
        }
        match self.fits(r.clone()) {
            Some(m) => (r, m),
            None => (range, n),
        }
    }

    /// `range` without the whitespace around it, on cluster boundaries.
    fn strip(&self, range: Range<usize>) -> Range<usize> {
        let g = &self.graphemes;
        let r = self.source[range.clone()].strip_range();
        if r.is_empty() {
            return range.start..range.start;
        }
        let mut start = range.start + r.start;
        if !g.is_boundary(start) {
            start = g.floor(start).max(range.start);
        }
        let mut end = range.start + r.end;
        if !g.is_boundary(end) {
            end = g.ceil(end).min(range.end);
        }
        start..end
    }
}

/// Applies the rule (see the module's description) to `chunks`; `strip`:
/// the chunks are not exact windows.
pub fn fit<L: LengthFunction<str>>(
    source: &str,
    chunks: Vec<Raw>,
    max_size: usize,
    length: &L,
    strip: bool,
) -> Vec<Raw> {
    let f = Fitter {
        source,
        graphemes: Graphemes::new(source),
        max: max_size,
        length,
    };
    let g = &f.graphemes;
    let mut out: Vec<Raw> = Vec::with_capacity(chunks.len());
    // Text given up by earlier chunks and in none yet.
    let mut owed: Option<Range<usize>> = None;
    let mut last: Option<Raw> = None;
    for mut c in chunks {
        if c.text.is_some() {
            out.push(c);
            continue;
        }
        let original = c.range.clone();
        let mut start = g.floor(original.start);
        let mut owed_end = original.end;
        if let Some(o) = owed.take() {
            start = start.min(o.start);
            owed_end = owed_end.max(o.end);
        }
        let unchanged = start == original.start && g.is_boundary(original.end);
        let (mut range, mut n) = match &c.measured {
            Some((r, n)) if unchanged && *r == original && *n <= max_size => (original.clone(), *n),
            _ => f.place(start, original.end),
        };
        if strip {
            (range, n) = f.stripped(range, n);
        }
        if range.end < owed_end {
            owed = Some(range.end..owed_end);
        }
        let adds = out
            .iter()
            .rev()
            .find(|p| p.text.is_none())
            .is_none_or(|p| range.end > p.range.end);
        if !adds {
            continue;
        }
        if range.is_empty() || !has_word_char(&source[range.clone()]) {
            owed = Some(range.start..owed_end);
            last = Some(c);
            continue;
        }
        c.own_start = c.own_start.clamp(range.start, range.end);
        c.measured = Some((range.clone(), n));
        c.range = range;
        last = Some(c.clone());
        out.push(c);
    }
    // What the last chunks gave up: chunks of their own.
    while let Some(o) = owed.take() {
        let Some(template) = &last else { break };
        let text = &source[o.clone()];
        if !has_word_char(text) {
            break;
        }
        let skip = text.len() - text.trim_start().len();
        let start = g.floor(o.start + skip).max(o.start);
        let (mut range, mut n) = f.place(start, o.end);
        if strip {
            (range, n) = f.stripped(range, n);
        }
        if range.end < o.end {
            owed = Some(range.end..o.end);
        }
        if !has_word_char(&source[range.clone()]) {
            continue;
        }
        out.push(Raw {
            own_start: range.start,
            measured: Some((range.clone(), n)),
            range,
            headings: template.headings.clone(),
            metadata: template.metadata.clone(),
            text: None,
        });
    }
    out
}
