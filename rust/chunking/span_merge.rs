//! langchain's `_merge_splits` for pieces that tile the text, measured in
//! units, found from the piece boundaries near each chunk's ends instead of
//! piece by piece.
//!
//! When the pieces are contiguous (the separator kept with a piece) and a
//! piece's length is its number of units, a chunk grows from its start to
//! the last boundary within `chunk_size` of it, and the overlap the next
//! chunk keeps starts at the first boundary far enough on: a few searches
//! around each chunk's end, which skip the lines (say) in between. The
//! merge of [`super::recursive`] makes the same chunks one piece at a time.
//!
//! Each search covers text no earlier one did (the overlap's aside, at
//! most `chunk_overlap` units a chunk): linear time.

use std::ops::Range;

/// Where the pieces of a text start: the text's start, after each cut, and
/// its end (an empty piece between two equal boundaries is no piece).
pub trait Boundaries {
    /// The text's length: the last boundary.
    fn end(&self) -> usize;

    /// The first boundary at or after `at` (`at <= end()`).
    fn first_from(&self, at: usize) -> usize;

    /// The last boundary in `after + 1..=upto`, if any (`after < end()`).
    fn last_within(&self, after: usize, upto: usize) -> Option<usize>;
}

/// What the merge makes of the text, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A chunk: the pieces in this range, joined (not yet stripped).
    Chunk(Range<usize>),
    /// A piece of at least `chunk_size` units, to split further; the chunk
    /// before it was closed without overlap.
    Long(Range<usize>),
}

/// Calls `step` with the chunks and long pieces of the text whose pieces
/// `boundaries` gives, as langchain merges them: a chunk holds whole pieces
/// (shorter than `chunk_size`) up to `chunk_size` units, and the next one
/// starts with the shortest tail of it of at most `chunk_overlap` units
/// that leaves room for the piece that did not fit.
pub fn merge<B: Boundaries>(
    boundaries: &B,
    chunk_size: usize,
    chunk_overlap: usize,
    mut step: impl FnMut(Step),
) {
    let end = boundaries.end();
    // Pieces `held..next` are the chunk being made; the next piece starts
    // at `next`.
    let mut held: usize = 0;
    let mut next = 0;
    while next < end {
        let limit = held.saturating_add(chunk_size);
        let holding = held < next;
        // The last boundary the chunk can grow to.
        let reach = match boundaries.last_within(next, limit) {
            // A first piece must be shorter than a chunk: one of exactly
            // `chunk_size` ends at `limit` with no boundary before it.
            Some(b)
                if holding || b < limit || boundaries.last_within(next, limit - 1).is_some() =>
            {
                b
            }
            None if holding => next,
            _ => {
                let piece_end = boundaries.first_from(next + 1);
                step(Step::Long(next..piece_end));
                (held, next) = (piece_end, piece_end);
                continue;
            }
        };
        if reach == end {
            break;
        }
        // The piece that does not fit (it ends past `limit`).
        let piece_end = boundaries.first_from(reach + 1);
        step(Step::Chunk(held..reach));
        if piece_end - reach >= chunk_size {
            step(Step::Long(reach..piece_end));
            held = piece_end;
        } else {
            // The tail kept: at most `chunk_overlap` units, and room for the piece.
            let from = reach
                .saturating_sub(chunk_overlap)
                .max(piece_end - chunk_size);
            held = boundaries.first_from(from).min(reach);
        }
        next = piece_end;
    }
    if held < end {
        step(Step::Chunk(held..end));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Boundaries listed in order.
    struct Listed(Vec<usize>);

    impl Boundaries for Listed {
        fn end(&self) -> usize {
            *self.0.last().expect("the end is listed")
        }

        fn first_from(&self, at: usize) -> usize {
            self.0[self.0.partition_point(|&b| b < at)]
        }

        fn last_within(&self, after: usize, upto: usize) -> Option<usize> {
            let i = self.0.partition_point(|&b| b <= upto);
            self.0[..i].last().copied().filter(|&b| b > after)
        }
    }

    /// langchain's `_merge_splits` over the pieces, one at a time (with
    /// `split_text`'s handling of long pieces), as the oracle.
    fn one_at_a_time(bounds: &[usize], chunk_size: usize, chunk_overlap: usize) -> Vec<Step> {
        let mut steps = Vec::new();
        let mut window: Vec<Range<usize>> = Vec::new();
        let total = |w: &[Range<usize>]| w.iter().map(|r| r.len()).sum::<usize>();
        let emit = |w: &[Range<usize>], steps: &mut Vec<Step>| {
            if let (Some(first), Some(last)) = (w.first(), w.last()) {
                steps.push(Step::Chunk(first.start..last.end));
            }
        };
        for piece in bounds.windows(2).map(|w| w[0]..w[1]) {
            if piece.is_empty() {
                continue;
            }
            let len = piece.len();
            if len >= chunk_size {
                emit(&window, &mut steps);
                window.clear();
                steps.push(Step::Long(piece));
                continue;
            }
            if total(&window) + len > chunk_size && !window.is_empty() {
                emit(&window, &mut steps);
                while total(&window) > chunk_overlap
                    || (total(&window) + len > chunk_size && total(&window) > 0)
                {
                    window.remove(0);
                }
            }
            window.push(piece);
        }
        emit(&window, &mut steps);
        steps
    }

    fn merged(bounds: &[usize], chunk_size: usize, chunk_overlap: usize) -> Vec<Step> {
        let mut steps = Vec::new();
        merge(&Listed(bounds.to_vec()), chunk_size, chunk_overlap, |s| {
            steps.push(s)
        });
        steps
    }

    #[test]
    fn chunks_overlap_by_whole_pieces() {
        // Pieces of 3 units; chunks of 7 hold two, and keep one of overlap.
        let bounds = [0, 3, 6, 9, 12];
        let steps = merged(&bounds, 7, 3);
        assert_eq!(
            steps,
            [Step::Chunk(0..6), Step::Chunk(3..9), Step::Chunk(6..12)]
        );
        assert_eq!(steps, one_at_a_time(&bounds, 7, 3));
    }

    #[test]
    fn a_piece_of_the_chunk_size_is_long() {
        assert_eq!(
            merged(&[0, 5, 7], 5, 2),
            [Step::Long(0..5), Step::Chunk(5..7)]
        );
        assert_eq!(
            merged(&[0, 2, 7, 8], 5, 2),
            [Step::Chunk(0..2), Step::Long(2..7), Step::Chunk(7..8)]
        );
    }

    #[test]
    fn an_empty_text_makes_nothing() {
        assert_eq!(merged(&[0], 5, 2), []);
    }

    proptest! {
        #[test]
        fn merges_as_one_piece_at_a_time(
            lengths in proptest::collection::vec(
                prop_oneof![1usize..4, 0usize..30, Just(0)], 0..60),
            chunk_size in 1usize..25,
            overlap_pct in 0usize..=100,
        ) {
            let mut bounds = vec![0];
            for len in lengths {
                bounds.push(bounds[bounds.len() - 1] + len);
            }
            let chunk_overlap = chunk_size * overlap_pct / 100;
            prop_assert_eq!(
                merged(&bounds, chunk_size, chunk_overlap),
                one_at_a_time(&bounds, chunk_size, chunk_overlap)
            );
        }
    }
}
