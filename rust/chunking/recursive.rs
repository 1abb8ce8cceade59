//! Recursive separator splitting, as langchain's `RecursiveCharacterTextSplitter`
//! (literal separators).
//!
//! The text is cut at the first separator of the list that occurs in it; pieces
//! shorter than the chunk size are merged greedily into chunks with overlap,
//! longer ones are split again with the remaining separators. Lengths come
//! from a [`LengthFunction`] (code points, or tokens), summed piece by piece
//! exactly as langchain's `_merge_splits` sums them.
//!
//! Performance notes:
//! - Pieces stream through the merger: only the current chunk's window is
//!   held, so splitting 100 MB into single characters needs no per-character
//!   allocation.
//! - With the separator kept (the default), every chunk is a contiguous slice
//!   of the input, returned as a byte range, never copied.

use std::collections::VecDeque;
use std::ops::Range;

use memchr::memmem;

use crate::error::{Error, Result};
use crate::unicode;

/// How long a piece of text is, for chunk sizing.
pub trait LengthFunction: Sync {
    fn length(&self, text: &str) -> usize;

    /// The length when it is at most `limit`; otherwise any value above
    /// `limit`. Splitting mostly asks "is this over the size?", which a
    /// costly length (tokens) can answer without measuring everything.
    fn length_up_to(&self, text: &str, _limit: usize) -> usize {
        self.length(text)
    }
}

/// Python's `len`: code points.
#[derive(Clone, Copy, Debug, Default)]
pub struct CharLength;

impl LengthFunction for CharLength {
    #[inline]
    fn length(&self, text: &str) -> usize {
        unicode::char_len(text)
    }
}

/// Where a separator goes once the text is cut at it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeepSeparator {
    /// Dropped; chunks are re-joined with it (langchain `keep_separator=False`).
    Discard,
    /// At the start of the following piece (`True` / `"start"`).
    Start,
    /// At the end of the preceding piece (`"end"`).
    End,
}

/// One chunk: a byte range of the input, or text that is not one (only when
/// separators are discarded and a repeated separator had to be re-joined).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    Span(Range<usize>),
    Text(String),
}

/// langchain's default separators.
pub const DEFAULT_SEPARATORS: [&str; 4] = ["\n\n", "\n", " ", ""];
/// The separators Open Notebook uses.
pub const OPEN_NOTEBOOK_SEPARATORS: [&str; 6] = ["\n\n", "\n", ". ", ", ", " ", ""];

/// A separator and its searcher, built once per splitter.
#[derive(Clone, Debug)]
struct Separator {
    text: String,
    finder: memmem::Finder<'static>,
}

impl Separator {
    fn new(text: String) -> Self {
        let finder = memmem::Finder::new(text.as_bytes()).into_owned();
        Self { text, finder }
    }
}

#[derive(Clone, Debug)]
pub struct RecursiveSplitter {
    chunk_size: usize,
    chunk_overlap: usize,
    separators: Vec<Separator>,
    keep_separator: KeepSeparator,
    strip_whitespace: bool,
}

impl RecursiveSplitter {
    /// Validates as langchain's `TextSplitter.__init__` does. An empty
    /// separator list means the defaults.
    pub fn new(
        chunk_size: usize,
        chunk_overlap: usize,
        separators: Vec<String>,
        keep_separator: KeepSeparator,
        strip_whitespace: bool,
    ) -> Result<Self> {
        if chunk_size == 0 {
            return Err(Error::InvalidArgument(format!(
                "chunk_size must be > 0, got {chunk_size}"
            )));
        }
        if chunk_overlap > chunk_size {
            return Err(Error::InvalidArgument(format!(
                "Got a larger chunk overlap ({chunk_overlap}) than chunk size ({chunk_size}), \
                 should be smaller."
            )));
        }
        let separators = if separators.is_empty() {
            DEFAULT_SEPARATORS.iter().map(|s| s.to_string()).collect()
        } else {
            separators
        };
        let separators = separators.into_iter().map(Separator::new).collect();
        Ok(Self {
            chunk_size,
            chunk_overlap,
            separators,
            keep_separator,
            strip_whitespace,
        })
    }

    /// Open Notebook's plain-text splitter with the given size and overlap.
    pub fn open_notebook(chunk_size: usize, chunk_overlap: usize) -> Result<Self> {
        let separators = OPEN_NOTEBOOK_SEPARATORS
            .iter()
            .map(|s| s.to_string())
            .collect();
        Self::new(
            chunk_size,
            chunk_overlap,
            separators,
            KeepSeparator::Start,
            true,
        )
    }

    pub fn chunk_size(&self) -> usize {
        self.chunk_size
    }

    /// Splits `text`; spans are byte ranges of `text`.
    pub fn split<L: LengthFunction>(&self, text: &str, length: &L) -> Vec<Piece> {
        let mut out = Vec::new();
        self.split_into(text, 0, &self.separators, length, &mut out);
        out
    }

    fn split_into<L: LengthFunction>(
        &self,
        text: &str,
        base: usize,
        separators: &[Separator],
        length: &L,
        out: &mut Vec<Piece>,
    ) {
        let (separator, remaining) = choose_separator(text, separators);
        let merge_separator = match (self.keep_separator, separator) {
            (KeepSeparator::Discard, Some(sep)) => sep.text.as_str(),
            _ => "",
        };
        let mut merger = Merger::new(self, text, base, merge_separator, length);
        for range in pieces(text, separator, self.keep_separator) {
            let len = length.length_up_to(&text[range.clone()], self.chunk_size);
            if len < self.chunk_size {
                merger.push(range, len, out);
                continue;
            }
            merger.finish(out);
            if remaining.is_empty() {
                // Indivisible: kept as it is, unstripped, like langchain.
                out.push(Piece::Span(base + range.start..base + range.end));
            } else {
                let piece = &text[range.clone()];
                self.split_into(piece, base + range.start, remaining, length, out);
            }
        }
        merger.finish(out);
    }
}

/// The first separator that occurs in `text` (the empty one always does;
/// `None` stands for it), and the separators left for splitting its pieces.
fn choose_separator<'s>(
    text: &str,
    separators: &'s [Separator],
) -> (Option<&'s Separator>, &'s [Separator]) {
    for (i, sep) in separators.iter().enumerate() {
        if sep.text.is_empty() {
            return (None, &[]);
        }
        if sep.finder.find(text.as_bytes()).is_some() {
            return (Some(sep), &separators[i + 1..]);
        }
    }
    (separators.last().filter(|s| !s.text.is_empty()), &[])
}

/// The non-empty pieces of `text` cut at every (non-overlapping) occurrence of
/// `separator`, or its characters for the empty separator.
struct Pieces<'a> {
    text: &'a str,
    cuts: Cuts<'a>,
    keep: KeepSeparator,
    separator_len: usize,
    /// Where the next piece starts; `None` once the last one was given.
    next: Option<usize>,
}

/// Where a separator occurs: a one-byte separator ("\n", " ") is found with
/// `memchr`, whose iterator costs less per match than a substring searcher's.
enum Cuts<'a> {
    Chars(std::str::CharIndices<'a>),
    Byte(memchr::Memchr<'a>),
    Substring(Box<memmem::FindIter<'a, 'a>>),
}

fn pieces<'a>(text: &'a str, separator: Option<&'a Separator>, keep: KeepSeparator) -> Pieces<'a> {
    let cuts = match separator {
        None => Cuts::Chars(text.char_indices()),
        Some(sep) => match sep.text.as_bytes() {
            &[byte] => Cuts::Byte(memchr::memchr_iter(byte, text.as_bytes())),
            _ => Cuts::Substring(Box::new(sep.finder.find_iter(text.as_bytes()))),
        },
    };
    Pieces {
        text,
        cuts,
        keep,
        separator_len: separator.map_or(0, |s| s.text.len()),
        next: Some(0),
    }
}

impl Iterator for Pieces<'_> {
    type Item = Range<usize>;

    fn next(&mut self) -> Option<Range<usize>> {
        loop {
            let start = self.next?;
            let found = match &mut self.cuts {
                Cuts::Chars(chars) => {
                    let Some((i, c)) = chars.next() else {
                        self.next = None;
                        return None;
                    };
                    return Some(i..i + c.len_utf8());
                }
                Cuts::Byte(matches) => matches.next(),
                Cuts::Substring(matches) => matches.next(),
            };
            let len = self.separator_len;
            let (range, next) = match (found, self.keep) {
                (Some(at), KeepSeparator::Start) => (start..at, Some(at)),
                (Some(at), KeepSeparator::End) => (start..at + len, Some(at + len)),
                (Some(at), KeepSeparator::Discard) => (start..at, Some(at + len)),
                (None, _) => (start..self.text.len(), None),
            };
            self.next = next;
            if !range.is_empty() {
                return Some(range);
            }
        }
    }
}

/// langchain's `_merge_splits`, fed one piece at a time.
struct Merger<'a, L> {
    text: &'a str,
    base: usize,
    chunk_size: usize,
    chunk_overlap: usize,
    strip: bool,
    separator: &'a str,
    separator_len: usize,
    /// The current chunk's pieces: byte range in `text` and length.
    window: VecDeque<(Range<usize>, usize)>,
    total: usize,
    _length: std::marker::PhantomData<L>,
}

impl<'a, L: LengthFunction> Merger<'a, L> {
    fn new(
        splitter: &RecursiveSplitter,
        text: &'a str,
        base: usize,
        separator: &'a str,
        length: &L,
    ) -> Self {
        Self {
            text,
            base,
            chunk_size: splitter.chunk_size,
            chunk_overlap: splitter.chunk_overlap,
            strip: splitter.strip_whitespace,
            separator,
            separator_len: if separator.is_empty() {
                0
            } else {
                length.length(separator)
            },
            window: VecDeque::new(),
            total: 0,
            _length: std::marker::PhantomData,
        }
    }

    fn joined_len(&self, len: usize) -> usize {
        let sep = if self.window.is_empty() {
            0
        } else {
            self.separator_len
        };
        self.total + len + sep
    }

    fn push(&mut self, range: Range<usize>, len: usize, out: &mut Vec<Piece>) {
        if self.joined_len(len) > self.chunk_size && !self.window.is_empty() {
            self.emit(out);
            while self.total > self.chunk_overlap
                || (self.joined_len(len) > self.chunk_size && self.total > 0)
            {
                let sep = if self.window.len() > 1 {
                    self.separator_len
                } else {
                    0
                };
                let Some((_, front)) = self.window.pop_front() else {
                    break;
                };
                self.total = self.total.saturating_sub(front + sep);
            }
        }
        self.window.push_back((range, len));
        let sep = if self.window.len() > 1 {
            self.separator_len
        } else {
            0
        };
        self.total += len + sep;
    }

    /// Emits the last chunk of this run and starts afresh.
    fn finish(&mut self, out: &mut Vec<Piece>) {
        self.emit(out);
        self.window.clear();
        self.total = 0;
    }

    fn emit(&self, out: &mut Vec<Piece>) {
        let (Some((first, _)), Some((last, _))) = (self.window.front(), self.window.back()) else {
            return;
        };
        let contiguous = self.separator.is_empty();
        if contiguous {
            let slice = &self.text[first.start..last.end];
            let kept = if self.strip {
                unicode::strip(slice)
            } else {
                slice
            };
            if !kept.is_empty() {
                let start = first.start + (kept.as_ptr() as usize - slice.as_ptr() as usize);
                out.push(Piece::Span(
                    self.base + start..self.base + start + kept.len(),
                ));
            }
            return;
        }
        let mut joined = String::new();
        for (i, (range, _)) in self.window.iter().enumerate() {
            if i > 0 {
                joined.push_str(self.separator);
            }
            joined.push_str(&self.text[range.clone()]);
        }
        let kept = if self.strip {
            unicode::strip(&joined)
        } else {
            &joined
        };
        if !kept.is_empty() {
            out.push(Piece::Text(kept.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(splitter: &RecursiveSplitter, text: &str) -> Vec<String> {
        splitter
            .split(text, &CharLength)
            .into_iter()
            .map(|p| match p {
                Piece::Span(r) => text[r].to_string(),
                Piece::Text(t) => t,
            })
            .collect()
    }

    fn splitter(
        size: usize,
        overlap: usize,
        seps: &[&str],
        keep: KeepSeparator,
    ) -> RecursiveSplitter {
        let seps = seps.iter().map(|s| s.to_string()).collect();
        RecursiveSplitter::new(size, overlap, seps, keep, true).expect("valid")
    }

    #[test]
    fn rejects_invalid_sizes() {
        assert!(RecursiveSplitter::open_notebook(0, 0).is_err());
        assert!(RecursiveSplitter::open_notebook(10, 11).is_err());
        assert!(RecursiveSplitter::open_notebook(10, 10).is_ok());
    }

    #[test]
    fn separators_start_the_next_piece() {
        let s = splitter(10, 0, &[" ", ""], KeepSeparator::Start);
        assert_eq!(split(&s, "aaaa bbbb cccc"), ["aaaa bbbb", "cccc"]);
    }

    #[test]
    fn separators_end_the_previous_piece() {
        let s = splitter(7, 0, &[",", ""], KeepSeparator::End);
        assert_eq!(split(&s, "aa,bb,cc,dd"), ["aa,bb,", "cc,dd"]);
    }

    #[test]
    fn discarded_separators_are_rejoined_once() {
        let s = splitter(8, 0, &["\n\n", ""], KeepSeparator::Discard);
        assert_eq!(split(&s, "a\n\n\n\nb\n\nccccccc"), ["a\n\nb", "ccccccc"]);
    }

    #[test]
    fn overlap_keeps_trailing_pieces() {
        let s = splitter(10, 4, &[" ", ""], KeepSeparator::Start);
        assert_eq!(
            split(&s, "aa bb cc dd ee ff"),
            ["aa bb cc", "cc dd ee", "ee ff"]
        );
    }

    #[test]
    fn long_words_fall_through_to_characters() {
        let s = splitter(4, 1, &[" ", ""], KeepSeparator::Start);
        assert_eq!(split(&s, "abcdefghij"), ["abcd", "defg", "ghij"]);
    }

    #[test]
    fn indivisible_pieces_are_kept_whole() {
        let s = splitter(3, 0, &[" "], KeepSeparator::Start);
        assert_eq!(split(&s, "ab abcdef"), ["ab", " abcdef"]);
    }

    #[test]
    fn multibyte_characters_are_counted_as_code_points() {
        let s = splitter(3, 0, &[""], KeepSeparator::Start);
        assert_eq!(split(&s, "ééééé☃"), ["ééé", "éé☃"]);
    }

    #[test]
    fn whitespace_only_chunks_are_dropped() {
        let s = splitter(3, 0, &["\n", ""], KeepSeparator::Start);
        assert_eq!(split(&s, "ab\n   \n  \ncd"), ["ab", "cd"]);
    }
}
