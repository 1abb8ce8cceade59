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
//!   of the input, returned as a range, never copied.
//! - Counting characters in code units, such chunks are found from the piece
//!   boundaries near their ends ([`super::span_merge`]): the pieces in
//!   between (most of a chunk's lines) are never looked at.
//! - The text is a `str` or a Python string's own code units
//!   ([`Splittable`]): the latter needs no transcoding, and its length in
//!   characters is its length.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::{LazyLock, OnceLock};

use std::borrow::{Borrow, Cow};

use super::span_merge;
use super::splittable::{Finder, Splittable};
use crate::error::{Error, Result};

/// How long a piece of text is, for chunk sizing.
pub trait LengthFunction<S: Splittable + ?Sized = str>: Sync {
    fn length(&self, text: &S) -> usize;

    /// The length when it is at most `limit`; otherwise any value above
    /// `limit`. Splitting mostly asks "is this over the size?", which a
    /// costly length (tokens) can answer without measuring everything.
    fn length_up_to(&self, text: &S, _limit: usize) -> usize {
        self.length(text)
    }

    /// Whether the length is above `limit`.
    fn exceeds(&self, text: &S, limit: usize) -> bool {
        self.length_up_to(text, limit) > limit
    }

    /// Whether this is [`CharLength`]: then ASCII UTF-8 text can be split
    /// as Latin-1 code units, whose length is their number.
    fn is_char_length(&self) -> bool {
        false
    }
}

/// Python's `len`: code points.
#[derive(Clone, Copy, Debug, Default)]
pub struct CharLength;

impl<S: Splittable + ?Sized> LengthFunction<S> for CharLength {
    #[inline]
    fn length(&self, text: &S) -> usize {
        text.char_len()
    }

    #[inline]
    fn exceeds(&self, text: &S, limit: usize) -> bool {
        // A text has no more characters than units: most texts asked about
        // need no counting.
        text.len() > limit && text.char_len() > limit
    }

    fn is_char_length(&self) -> bool {
        true
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

impl std::str::FromStr for KeepSeparator {
    type Err = crate::error::Error;

    /// `"start"` or `"end"` (dropping a separator changes the text, so it is
    /// not a name here).
    fn from_str(name: &str) -> crate::error::Result<Self> {
        match name {
            "start" => Ok(KeepSeparator::Start),
            "end" => Ok(KeepSeparator::End),
            other => Err(crate::error::Error::InvalidArgument(format!(
                "keep_separator must be 'start' or 'end', got {other:?}"
            ))),
        }
    }
}

/// One chunk: a range of the input, or text that is not one (only when
/// separators are discarded and a repeated separator had to be re-joined).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece<O = String> {
    Span(Range<usize>),
    Text(O),
}

/// langchain's default separators.
pub const DEFAULT_SEPARATORS: [&str; 4] = ["\n\n", "\n", " ", ""];
/// The separators Open Notebook uses.
pub const OPEN_NOTEBOOK_SEPARATORS: [&str; 6] = ["\n\n", "\n", ". ", ", ", " ", ""];

/// A separator and its searcher in one form of text.
#[derive(Clone, Debug)]
struct Separator<'a> {
    text: Cow<'a, str>,
    finder: Finder,
    /// Whether two of its occurrences can overlap ("\n\n" in "\n\n\n"):
    /// then only some of those found searching backwards cut the text.
    overlaps_itself: bool,
}

impl<'a> Separator<'a> {
    fn new<S: Splittable + ?Sized>(text: &'a str) -> Self {
        Separator {
            text: Cow::Borrowed(text),
            finder: Finder::new::<S>(text),
            overlaps_itself: overlaps_itself(text),
        }
    }

    fn into_owned(self) -> Separator<'static> {
        Separator {
            text: Cow::Owned(self.text.into_owned()),
            finder: self.finder,
            overlaps_itself: self.overlaps_itself,
        }
    }
}

/// Whether a proper prefix of `needle` is also a suffix of it (the
/// longest border, from the Knuth-Morris-Pratt failure function).
fn overlaps_itself(needle: &str) -> bool {
    let chars: Vec<char> = needle.chars().collect();
    let mut border = vec![0; chars.len()];
    let mut k = 0;
    for i in 1..chars.len() {
        while k > 0 && chars[i] != chars[k] {
            k = border[k - 1];
        }
        if chars[i] == chars[k] {
            k += 1;
        }
        border[i] = k;
    }
    border.last().is_some_and(|&b| b > 0)
}

/// The boundaries of a text's pieces cut at a separator that does not
/// overlap itself: then every occurrence found, in either direction, cuts.
struct SeparatorBoundaries<'a, S: ?Sized> {
    text: &'a S,
    finder: &'a Finder,
    /// From an occurrence's start to the boundary it makes: 0 when the
    /// separator starts the next piece, its length when it ends the last.
    shift: usize,
}

impl<S: Splittable + ?Sized> span_merge::Boundaries for SeparatorBoundaries<'_, S> {
    fn end(&self) -> usize {
        self.text.len()
    }

    fn first_from(&self, at: usize) -> usize {
        if at == 0 {
            return 0;
        }
        self.finder
            .find(self.text, at.saturating_sub(self.shift))
            .map_or(self.text.len(), |found| found + self.shift)
    }

    fn last_within(&self, after: usize, upto: usize) -> Option<usize> {
        if upto >= self.text.len() {
            return (after < self.text.len()).then_some(self.text.len());
        }
        let upto = upto.checked_sub(self.shift)?;
        let from = (after + 1).saturating_sub(self.shift);
        self.finder
            .rfind(self.text, from, upto)
            .map(|found| found + self.shift)
    }
}

/// Open Notebook's separators with their searchers, built once per width
/// of text units (they are ASCII: a `str` and Latin-1 units share them).
fn open_notebook_separators(unit_size: usize) -> &'static [Separator<'static>] {
    fn build<S: Splittable + ?Sized>() -> Vec<Separator<'static>> {
        OPEN_NOTEBOOK_SEPARATORS
            .iter()
            .map(|text| Separator::new::<S>(text))
            .collect()
    }
    static BYTES: LazyLock<Vec<Separator<'static>>> = LazyLock::new(build::<[u8]>);
    static UCS2: LazyLock<Vec<Separator<'static>>> = LazyLock::new(build::<[u16]>);
    static UCS4: LazyLock<Vec<Separator<'static>>> = LazyLock::new(build::<[u32]>);
    match unit_size {
        1 => &BYTES,
        2 => &UCS2,
        _ => &UCS4,
    }
}

/// The most elements a vector is sized for up front from an estimate.
pub(crate) const PRESIZE_LIMIT: usize = 4096;

/// A splitter's separators.
#[derive(Clone, Debug)]
enum Separators {
    /// Open Notebook's, whose searchers are built once
    /// ([`open_notebook_separators`]): making the splitter allocates nothing.
    OpenNotebook,
    Other(Box<OtherSeparators>),
}

/// A splitter's own separators, with their searchers for each form of text
/// built on first use: splitting a text builds none.
#[derive(Clone, Debug)]
struct OtherSeparators {
    texts: Vec<String>,
    /// For `str`, then code units of 1, 2 and 4 bytes.
    by_form: [OnceLock<Vec<Separator<'static>>>; 4],
}

impl OtherSeparators {
    fn separators(texts: Vec<String>) -> Separators {
        Separators::Other(Box::new(OtherSeparators {
            texts,
            by_form: Default::default(),
        }))
    }

    fn for_form<S: Splittable + ?Sized>(&self) -> &[Separator<'static>] {
        let form = match (S::UNITS_ARE_CHARS, S::UNIT_SIZE) {
            (false, _) => 0,
            (true, 1) => 1,
            (true, 2) => 2,
            _ => 3,
        };
        self.by_form[form].get_or_init(|| {
            self.texts
                .iter()
                .map(|text| Separator::new::<S>(text).into_owned())
                .collect()
        })
    }
}

#[derive(Clone, Debug)]
pub struct RecursiveSplitter {
    chunk_size: usize,
    chunk_overlap: usize,
    separators: Separators,
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
        let separators = if separators.is_empty() {
            OtherSeparators::separators(DEFAULT_SEPARATORS.iter().map(|s| s.to_string()).collect())
        } else if separators
            .iter()
            .map(String::as_str)
            .eq(OPEN_NOTEBOOK_SEPARATORS)
        {
            Separators::OpenNotebook
        } else {
            OtherSeparators::separators(separators)
        };
        Self::with_separators(
            chunk_size,
            chunk_overlap,
            separators,
            keep_separator,
            strip_whitespace,
        )
    }

    /// [`Self::new`] with the separators chosen.
    fn with_separators(
        chunk_size: usize,
        chunk_overlap: usize,
        separators: Separators,
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
        Self::with_separators(
            chunk_size,
            chunk_overlap,
            Separators::OpenNotebook,
            KeepSeparator::Start,
            true,
        )
    }

    pub fn chunk_size(&self) -> usize {
        self.chunk_size
    }

    /// Splits `text`; spans are ranges of `text`.
    pub fn split<S, L>(&self, text: &S, length: &L) -> Vec<Piece<S::Owned>>
    where
        S: Splittable + ?Sized,
        L: LengthFunction<S>,
    {
        self.split_lacking(text, length, None)
    }

    /// [`Self::split`] of a text known not to hold `absent` (a separator),
    /// which is then not looked for: the caller's knowledge saves a scan
    /// of the whole text. (Were it there after all, the chunks could differ.)
    pub fn split_lacking<S, L>(
        &self,
        text: &S,
        length: &L,
        absent: Option<&str>,
    ) -> Vec<Piece<S::Owned>>
    where
        S: Splittable + ?Sized,
        L: LengthFunction<S>,
    {
        // About two pieces per chunk (a chunk and its overlap's start), up
        // to a bound: an estimate, not a reservation for tiny chunk sizes.
        let estimate = 2 * text.len() / self.chunk_size.max(1) + 1;
        let mut out = Vec::with_capacity(estimate.min(PRESIZE_LIMIT));
        let separators = self.separators_for::<S>();
        self.split_into(text, 0, separators, absent, length, &mut out);
        out
    }

    /// The separators with their searchers for texts of form `S`.
    fn separators_for<S: Splittable + ?Sized>(&self) -> &[Separator<'static>] {
        match &self.separators {
            Separators::OpenNotebook => open_notebook_separators(S::UNIT_SIZE),
            Separators::Other(other) => other.for_form::<S>(),
        }
    }

    /// langchain's `CharacterTextSplitter`: the text is cut at the first
    /// separator only (its characters for the empty one), and every piece,
    /// however long, goes through the merge: no piece is split again, and a
    /// long one becomes a chunk of its own (stripped like any other).
    pub fn split_once<S, L>(&self, text: &S, length: &L) -> Vec<Piece<S::Owned>>
    where
        S: Splittable + ?Sized,
        L: LengthFunction<S>,
    {
        let estimate = 2 * text.len() / self.chunk_size.max(1) + 1;
        let mut out = Vec::with_capacity(estimate.min(PRESIZE_LIMIT));
        let separator = self
            .separators_for::<S>()
            .first()
            .filter(|sep| !sep.text.is_empty());
        let merge_separator = match (self.keep_separator, separator) {
            (KeepSeparator::Discard, Some(sep)) => sep.text.as_ref(),
            _ => "",
        };
        let mut merger = Merger::new(self, text, 0, merge_separator, length);
        for range in pieces(text, separator, self.keep_separator) {
            let len = length.length(&text[range.clone()]);
            merger.push(range, len, &mut out);
        }
        merger.finish(&mut out);
        out
    }

    fn split_into<S, L>(
        &self,
        text: &S,
        base: usize,
        separators: &[Separator<'_>],
        absent: Option<&str>,
        length: &L,
        out: &mut Vec<Piece<S::Owned>>,
    ) where
        S: Splittable + ?Sized,
        L: LengthFunction<S>,
    {
        if separators.is_empty() {
            // A piece too long, and no separator left: kept as it is,
            // unstripped, like langchain.
            out.push(Piece::Span(base..base + text.len()));
            return;
        }
        let (separator, remaining) = choose_separator(text, separators, absent);
        if let Some(boundaries) = self.spans_by_boundaries(text, separator, length) {
            span_merge::merge(
                &boundaries,
                self.chunk_size,
                self.chunk_overlap,
                |step| match step {
                    span_merge::Step::Chunk(span) => {
                        push_span(text, base, span, self.strip_whitespace, out)
                    }
                    // Its pieces lack what it lacks.
                    span_merge::Step::Long(range) => self.split_into(
                        &text[range.clone()],
                        base + range.start,
                        remaining,
                        absent,
                        length,
                        out,
                    ),
                },
            );
            return;
        }
        let merge_separator = match (self.keep_separator, separator) {
            (KeepSeparator::Discard, Some(sep)) => sep.text.as_ref(),
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
            let piece = &text[range.clone()];
            self.split_into(piece, base + range.start, remaining, absent, length, out);
        }
        merger.finish(out);
    }

    /// The boundaries of the pieces `separator` cuts `text` into, when the
    /// merge can go by them ([`span_merge`]): the pieces are contiguous (the
    /// separator kept), a piece's length is its number of units, and every
    /// occurrence cuts.
    fn spans_by_boundaries<'a, S, L>(
        &self,
        text: &'a S,
        separator: Option<&'a Separator<'_>>,
        length: &L,
    ) -> Option<SeparatorBoundaries<'a, S>>
    where
        S: Splittable + ?Sized,
        L: LengthFunction<S>,
    {
        // Overlapping occurrences ("\n\n", plain text's first separator)
        // go piece by piece. That forward search also streams a text not yet
        // in the cache, which searches by jumps measured slower on; the
        // pieces it leaves to split are then in the cache, as are the
        // sections Markdown rebuilds.
        let separator = separator.filter(|s| !s.overlaps_itself)?;
        let shift = match self.keep_separator {
            KeepSeparator::Start => 0,
            KeepSeparator::End => separator.finder.needle_len(),
            KeepSeparator::Discard => return None,
        };
        (S::UNITS_ARE_CHARS && length.is_char_length()).then_some(SeparatorBoundaries {
            text,
            finder: &separator.finder,
            shift,
        })
    }
}

/// Appends the chunk `text[span]` (stripped when `strip`) as a span of the
/// text `text` starts at `base` of, unless nothing is left of it.
fn push_span<S: Splittable + ?Sized, O>(
    text: &S,
    base: usize,
    span: Range<usize>,
    strip: bool,
    out: &mut Vec<Piece<O>>,
) {
    let kept = if strip {
        let r = text[span.clone()].strip_range();
        span.start + r.start..span.start + r.end
    } else {
        span
    };
    if !kept.is_empty() {
        out.push(Piece::Span(base + kept.start..base + kept.end));
    }
}

/// The first separator that occurs in `text` (the empty one always does;
/// `None` stands for it; `absent` is known not to), and the separators left
/// for splitting its pieces.
fn choose_separator<'s, 'a, S: Splittable + ?Sized>(
    text: &S,
    separators: &'s [Separator<'a>],
    absent: Option<&str>,
) -> (Option<&'s Separator<'a>>, &'s [Separator<'a>]) {
    for (i, sep) in separators.iter().enumerate() {
        if sep.text.is_empty() {
            return (None, &[]);
        }
        if Some(sep.text.as_ref()) != absent && sep.finder.occurs_in(text) {
            return (Some(sep), &separators[i + 1..]);
        }
    }
    (separators.last().filter(|s| !s.text.is_empty()), &[])
}

/// The non-empty pieces of `text` cut at every (non-overlapping) occurrence of
/// `separator`, or its characters for the empty separator.
struct Pieces<'a, S: ?Sized> {
    text: &'a S,
    /// `None`: the empty separator.
    finder: Option<&'a Finder>,
    keep: KeepSeparator,
    separator_len: usize,
    /// Where the next piece starts; `None` once the last one was given.
    next: Option<usize>,
    /// Where the search for the next separator resumes.
    search_from: usize,
}

fn pieces<'a, S: Splittable + ?Sized>(
    text: &'a S,
    separator: Option<&'a Separator<'_>>,
    keep: KeepSeparator,
) -> Pieces<'a, S> {
    let separator_len = separator.map_or(0, |s| s.finder.needle_len());
    Pieces {
        text,
        finder: separator.map(|s| &s.finder),
        keep,
        separator_len,
        next: Some(0),
        search_from: 0,
    }
}

impl<S: Splittable + ?Sized> Iterator for Pieces<'_, S> {
    type Item = Range<usize>;

    fn next(&mut self) -> Option<Range<usize>> {
        loop {
            let start = self.next?;
            let Some(finder) = self.finder else {
                if start >= self.text.len() {
                    self.next = None;
                    return None;
                }
                let end = self.text.char_end(start);
                self.next = Some(end);
                return Some(start..end);
            };
            let found = finder.find(self.text, self.search_from);
            let len = self.separator_len;
            if let Some(at) = found {
                self.search_from = at + len;
            }
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
struct Merger<'a, S: Splittable + ?Sized, L> {
    text: &'a S,
    base: usize,
    chunk_size: usize,
    chunk_overlap: usize,
    strip: bool,
    separator: &'a str,
    separator_len: usize,
    /// The separator's length in units of the text (0 when it cannot occur).
    separator_units: usize,
    /// The current chunk's pieces: range in `text` and length.
    window: VecDeque<(Range<usize>, usize)>,
    total: usize,
    _length: std::marker::PhantomData<L>,
}

impl<'a, S: Splittable + ?Sized, L: LengthFunction<S>> Merger<'a, S, L> {
    fn new(
        splitter: &RecursiveSplitter,
        text: &'a S,
        base: usize,
        separator: &'a str,
        length: &L,
    ) -> Self {
        let (separator_len, separator_units) = if separator.is_empty() {
            (0, 0)
        } else {
            let mut owned = S::Owned::default();
            S::push_str(&mut owned, separator);
            let units = Borrow::<S>::borrow(&owned).len();
            (length.length(owned.borrow()), units)
        };
        Self {
            text,
            base,
            chunk_size: splitter.chunk_size,
            chunk_overlap: splitter.chunk_overlap,
            strip: splitter.strip_whitespace,
            separator,
            separator_len,
            separator_units,
            // A chunk's lines, say (growing one piece at a time cost more),
            // in at most 1 KiB: glibc's per-thread cache serves that.
            window: VecDeque::with_capacity(32),
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

    fn push(&mut self, range: Range<usize>, len: usize, out: &mut Vec<Piece<S::Owned>>) {
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
    fn finish(&mut self, out: &mut Vec<Piece<S::Owned>>) {
        self.emit(out);
        self.window.clear();
        self.total = 0;
    }

    fn emit(&self, out: &mut Vec<Piece<S::Owned>>) {
        let (Some((first, _)), Some((last, _))) = (self.window.front(), self.window.back()) else {
            return;
        };
        // Pieces cut at single occurrences of the separator are the text
        // between them joined with it: a span of the text. (Pieces further
        // apart had empty pieces, between repeated separators, dropped.)
        let contiguous = self.separator.is_empty()
            || self
                .window
                .iter()
                .zip(self.window.iter().skip(1))
                .all(|((a, _), (b, _))| b.start == a.end + self.separator_units);
        if contiguous {
            push_span(self.text, self.base, first.start..last.end, self.strip, out);
            return;
        }
        let mut joined = S::Owned::default();
        for (i, (range, _)) in self.window.iter().enumerate() {
            if i > 0 {
                S::push_str(&mut joined, self.separator);
            }
            S::push(&mut joined, &self.text[range.clone()]);
        }
        let whole: &S = joined.borrow();
        let kept = if self.strip {
            whole.strip_range()
        } else {
            0..whole.len()
        };
        if !kept.is_empty() {
            let mut text = S::Owned::default();
            S::push(&mut text, &whole[kept]);
            out.push(Piece::Text(text));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shared searchers for `S` find what searchers built for it find.
    fn shared_finders_match<S: Splittable + ?Sized>(text: &S) {
        let shared = open_notebook_separators(S::UNIT_SIZE);
        for (shared, own) in shared.iter().zip(OPEN_NOTEBOOK_SEPARATORS) {
            let own_finder = Finder::new::<S>(own);
            let hits = |f: &Finder| {
                (0..text.len())
                    .map(|at| f.find(text, at))
                    .collect::<Vec<_>>()
            };
            assert_eq!(hits(&shared.finder), hits(&own_finder), "{own:?}");
        }
    }

    #[test]
    fn shared_separators_find_as_their_own_would() {
        let text = "Words, more. Lines\nand\n\nparagraphs \u{e9}. \u{2603}, end";
        shared_finders_match(text);
        shared_finders_match(text.encode_utf16().collect::<Vec<u16>>().as_slice());
        shared_finders_match(text.chars().map(u32::from).collect::<Vec<u32>>().as_slice());
    }

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

    /// The chunks of `text` as strings, whichever its form.
    fn chunk_strings<S: Splittable + ?Sized>(
        text: &S,
        pieces: Vec<Piece<S::Owned>>,
    ) -> Vec<String> {
        pieces
            .into_iter()
            .map(|p| match p {
                Piece::Span(r) => text[r].to_str().into_owned(),
                Piece::Text(t) => t.borrow().to_str().into_owned(),
            })
            .collect()
    }

    proptest::proptest! {
        /// A Python string's code units, in each width that holds it, split
        /// as its UTF-8 does.
        #[test]
        fn code_units_split_as_utf8(
            parts in proptest::collection::vec(
                proptest::sample::select(&[
                    "a", "bc", " ", "\n", "\n\n", ". ", ", ", "\t", "é", "ÿ", "☃", "\u{3000}",
                    "\u{a0}", "😀", "\u{85}", "--",
                ][..]),
                0..60,
            ),
            size in 1usize..24,
            overlap_pct in 0usize..100,
            seps in proptest::sample::select(&[0usize, 1, 2, 3][..]),
            keep in proptest::sample::select(&[KeepSeparator::Start, KeepSeparator::End, KeepSeparator::Discard][..]),
            strip in proptest::bool::ANY,
        ) {
            let text = parts.concat();
            let separators: &[&str] = match seps {
                0 => &OPEN_NOTEBOOK_SEPARATORS,
                1 => &DEFAULT_SEPARATORS,
                2 => &["☃", "é", " ", ""],
                _ => &["--", "\u{3000}", "ÿ"],
            };
            let seps = separators.iter().map(|s| s.to_string()).collect();
            let splitter = RecursiveSplitter::new(size, size * overlap_pct / 100, seps, keep, strip)
                .expect("valid");
            // Each width gets the characters it can hold.
            let fitting = |max: u32| -> String { text.chars().filter(|&c| (c as u32) <= max).collect() };
            let expected = |text: &str| chunk_strings(text, splitter.split(text, &CharLength));
            let ucs4: Vec<u32> = text.chars().map(|c| c as u32).collect();
            proptest::prop_assert_eq!(chunk_strings(ucs4.as_slice(), splitter.split(ucs4.as_slice(), &CharLength)), expected(&text));
            let bmp = fitting(0xFFFF);
            let ucs2: Vec<u16> = bmp.encode_utf16().collect();
            proptest::prop_assert_eq!(chunk_strings(ucs2.as_slice(), splitter.split(ucs2.as_slice(), &CharLength)), expected(&bmp));
            let latin = fitting(0xFF);
            let latin1: Vec<u8> = latin.chars().map(|c| c as u8).collect();
            proptest::prop_assert_eq!(chunk_strings(latin1.as_slice(), splitter.split(latin1.as_slice(), &CharLength)), expected(&latin));
        }
    }

    #[test]
    fn whitespace_only_chunks_are_dropped() {
        let s = splitter(3, 0, &["\n", ""], KeepSeparator::Start);
        assert_eq!(split(&s, "ab\n   \n  \ncd"), ["ab", "cd"]);
    }
}
