//! The text the splitters cut, in either of two forms:
//!
//! - a Rust `str`, where offsets are bytes;
//! - the code units of a Python `str` (PEP 393: Latin-1, UCS-2 or UCS-4, one
//!   unit per code point, lone surrogates included), where offsets are code
//!   points, as Python's own indices.
//!
//! Splitting a Python string's own units needs no transcoding on the way in
//! and no offset conversion on the way out, and its length in characters is
//! its length in units; the splitters are written once, over this trait.

use std::fmt::Debug;
use std::ops::{Index, Range};

use crate::text::{self, CodeUnit, LineClasses, ShortNeedle, UnitFinder};
use crate::unicode;

/// A text to split: `str` or `[T]` for a [`CodeUnit`] `T`.
///
/// Its `ToOwned::Owned` (`String` or `Vec<T>`) holds text built from pieces.
pub trait Splittable:
    Index<Range<usize>, Output = Self>
    + ToOwned<Owned: Clone + Debug + Default + PartialEq + Send + Sync>
    + PartialEq
    + Sync
{
    /// Bytes of memory per offset in [`Splittable::bytes`]: 1 for `str`.
    const UNIT_SIZE: usize;

    /// Whether every offset is a character (code units; not UTF-8).
    const UNITS_ARE_CHARS: bool;

    /// The length in offsets.
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The text's memory, which separators are searched in.
    fn bytes(&self) -> &[u8];

    /// Python's `len`: the number of code points.
    fn char_len(&self) -> usize;

    /// The offset just past the code point that starts at `at`.
    fn char_end(&self, at: usize) -> usize;

    /// The memory `needle` would occupy in this form; `None` when it cannot
    /// occur (a character wider than the units).
    fn needle_bytes(needle: &str) -> Option<Vec<u8>>;

    /// `str.strip()`: the range left without leading and trailing Python
    /// whitespace (empty, at 0, when nothing is left).
    fn strip_range(&self) -> Range<usize>;

    /// The code unit (code point, or byte of a `str`) at `at`.
    fn unit(&self, at: usize) -> u32;

    /// The line classes of the 64 units (bytes of a `str`) from `at`, fewer
    /// at the end.
    fn classify_lines(&self, at: usize) -> LineClasses;

    /// How many spaces follow one another from unit `at` on ([`text::spaces_from`]).
    fn spaces_from(&self, at: usize) -> usize;

    /// [`text::needle_starts`] on the units (bytes of a `str`) from `at`.
    fn needle_starts(&self, at: usize, needle: ShortNeedle) -> u64;

    /// Python's `"".join(filter(str.isprintable, self))`, borrowed when
    /// every character is printable.
    fn printable(&self) -> std::borrow::Cow<'_, Self>;

    /// The length of `prefix` in offsets when the text starts with it.
    fn prefix_len(&self, prefix: &str) -> Option<usize>;

    /// Where `part` (a slice of `self`) starts in `self`; `None` when it
    /// lies elsewhere.
    fn offset_of(&self, part: &Self) -> Option<usize> {
        let start = (part.bytes().as_ptr() as usize).wrapping_sub(self.bytes().as_ptr() as usize);
        let end = start.wrapping_add(part.bytes().len());
        (start.is_multiple_of(Self::UNIT_SIZE) && end <= self.bytes().len())
            .then_some(start / Self::UNIT_SIZE)
    }

    /// Appends `part` to `out`.
    fn push(out: &mut Self::Owned, part: &Self);

    /// Appends `self[range]` to `out` (a short part faster than [`Self::push`]).
    fn push_range(&self, out: &mut Self::Owned, range: Range<usize>) {
        Self::push(out, &self[range]);
    }

    /// Appends `s` to `out`, leaving out characters wider than the units
    /// (callers only append text that occurs in this form).
    fn push_str(out: &mut Self::Owned, s: &str);

    /// Room for `additional` more offsets in `out`.
    fn reserve(out: &mut Self::Owned, additional: usize);

    /// The text's bytes when it is all ASCII and they are not its units
    /// already: then they split faster, with offsets unchanged.
    fn ascii_bytes(&self) -> Option<&[u8]> {
        None
    }

    /// The text as UTF-8 when that is its form (a `str`), else `None`.
    fn as_utf8(&self) -> Option<&str> {
        None
    }

    /// The text up to its `n`-th code point (all of it when shorter).
    fn char_prefix(&self, n: usize) -> &Self;

    /// The text as a Rust `str`; lone surrogates become U+FFFD.
    fn to_str(&self) -> std::borrow::Cow<'_, str>;
}

impl Splittable for str {
    const UNIT_SIZE: usize = 1;
    const UNITS_ARE_CHARS: bool = false;

    fn len(&self) -> usize {
        str::len(self)
    }

    fn bytes(&self) -> &[u8] {
        self.as_bytes()
    }

    fn char_len(&self) -> usize {
        unicode::char_len(self)
    }

    fn char_end(&self, at: usize) -> usize {
        let width = match self.as_bytes().get(at) {
            None => 0,
            Some(&b) if b < 0x80 => 1,
            Some(&b) if b < 0xE0 => 2,
            Some(&b) if b < 0xF0 => 3,
            Some(_) => 4,
        };
        at + width
    }

    fn needle_bytes(needle: &str) -> Option<Vec<u8>> {
        Some(needle.as_bytes().to_vec())
    }

    fn strip_range(&self) -> Range<usize> {
        let kept = unicode::strip(self);
        // `strip` returns a literal "" when nothing is left.
        match self.offset_of(kept) {
            Some(start) if !kept.is_empty() => start..start + kept.len(),
            _ => 0..0,
        }
    }

    fn unit(&self, at: usize) -> u32 {
        self.as_bytes().get(at).map_or(0, |&b| u32::from(b))
    }

    fn classify_lines(&self, at: usize) -> LineClasses {
        text::classify_lines(self.as_bytes().get(at..).unwrap_or_default())
    }

    fn spaces_from(&self, at: usize) -> usize {
        text::spaces_from(self.as_bytes(), at)
    }

    fn needle_starts(&self, at: usize, needle: ShortNeedle) -> u64 {
        // ASCII bytes of UTF-8 are characters of their own.
        text::needle_starts(self.as_bytes(), at, needle)
    }

    fn printable(&self) -> std::borrow::Cow<'_, str> {
        if all_printable_utf8(self) {
            return std::borrow::Cow::Borrowed(self);
        }
        std::borrow::Cow::Owned(self.chars().filter(|&c| unicode::is_printable(c)).collect())
    }

    fn prefix_len(&self, prefix: &str) -> Option<usize> {
        self.starts_with(prefix).then_some(prefix.len())
    }

    fn push(out: &mut String, part: &str) {
        out.push_str(part);
    }

    fn push_str(out: &mut String, s: &str) {
        out.push_str(s);
    }

    fn reserve(out: &mut String, additional: usize) {
        out.reserve(additional);
    }

    fn ascii_bytes(&self) -> Option<&[u8]> {
        self.is_ascii().then_some(self.as_bytes())
    }

    fn as_utf8(&self) -> Option<&str> {
        Some(self)
    }

    fn char_prefix(&self, n: usize) -> &str {
        self.char_indices().nth(n).map_or(self, |(i, _)| &self[..i])
    }

    fn to_str(&self) -> std::borrow::Cow<'_, str> {
        std::borrow::Cow::Borrowed(self)
    }
}

/// Units checked at a time for printable ASCII.
const PRINTABLE_BLOCK: usize = 32;

/// Whether every unit of a block is printable ASCII (0x20-0x7E); branch-free,
/// so that it vectorises.
fn is_printable_ascii_block<T: CodeUnit>(block: &[T]) -> bool {
    block
        .iter()
        .fold(true, |ok, &u| ok & (0x20..0x7F).contains(&u.code_point()))
}

/// Whether every code unit is a printable character. A line with a few
/// non-ASCII characters is mostly blocks of printable ASCII, checked at once;
/// only the other blocks are looked at unit by unit.
fn all_printable<T: CodeUnit>(units: &[T]) -> bool {
    units
        .chunks(PRINTABLE_BLOCK)
        .all(|block| is_printable_ascii_block(block) || block.iter().all(|&u| is_printable(u)))
}

/// [`all_printable`] for UTF-8: blocks of printable ASCII bytes at once,
/// characters one by one elsewhere.
fn all_printable_utf8(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if let Some(block) = bytes[at..].first_chunk::<PRINTABLE_BLOCK>()
            && is_printable_ascii_block(block)
        {
            at += PRINTABLE_BLOCK;
            continue;
        }
        // `at` is on a character boundary: blocks are ASCII, characters whole.
        match text.get(at..).and_then(|rest| rest.chars().next()) {
            Some(c) if unicode::is_printable(c) => at += c.len_utf8(),
            _ => return false,
        }
    }
    true
}

/// A code point's character, `None` for surrogates (and past U+10FFFF).
fn char_of<T: CodeUnit>(unit: T) -> Option<char> {
    char::from_u32(unit.code_point())
}

fn is_space<T: CodeUnit>(unit: T) -> bool {
    let cp = unit.code_point();
    if cp < 0x80 {
        matches!(cp, 0x09..=0x0D | 0x1C..=0x20)
    } else {
        char_of(unit).is_some_and(unicode::is_space)
    }
}

#[inline(always)]
fn is_printable<T: CodeUnit>(unit: T) -> bool {
    let cp = unit.code_point();
    if cp < 0x80 {
        (0x20..0x7F).contains(&cp)
    } else {
        char_of(unit).is_some_and(unicode::is_printable)
    }
}

impl<T: CodeUnit> Splittable for [T] {
    const UNIT_SIZE: usize = std::mem::size_of::<T>();
    const UNITS_ARE_CHARS: bool = true;

    fn len(&self) -> usize {
        <[T]>::len(self)
    }

    fn bytes(&self) -> &[u8] {
        T::bytes_of(self)
    }

    fn char_len(&self) -> usize {
        <[T]>::len(self)
    }

    fn char_end(&self, at: usize) -> usize {
        (at + 1).min(<[T]>::len(self))
    }

    fn needle_bytes(needle: &str) -> Option<Vec<u8>> {
        let units = needle
            .chars()
            .map(|c| T::from_code_point(c as u32))
            .collect::<Option<Vec<T>>>()?;
        Some(T::bytes_of(&units).to_vec())
    }

    fn strip_range(&self) -> Range<usize> {
        let Some(start) = self.iter().position(|&u| !is_space(u)) else {
            return 0..0;
        };
        let end = self
            .iter()
            .rposition(|&u| !is_space(u))
            .map_or(start, |i| i + 1);
        start..end
    }

    fn unit(&self, at: usize) -> u32 {
        self.get(at).map_or(0, |u| u.code_point())
    }

    // Inlined: the line pass calls it once a window, and the call's
    // arguments and results went through memory.
    #[inline(always)]
    fn classify_lines(&self, at: usize) -> LineClasses {
        text::classify_lines(self.get(at..).unwrap_or_default())
    }

    fn spaces_from(&self, at: usize) -> usize {
        text::spaces_from(self, at)
    }

    // Inlined: the searches call it once a window (see `classify_lines`).
    #[inline(always)]
    fn needle_starts(&self, at: usize, needle: ShortNeedle) -> u64 {
        text::needle_starts(self, at, needle)
    }

    fn printable(&self) -> std::borrow::Cow<'_, [T]> {
        if all_printable(self) {
            return std::borrow::Cow::Borrowed(self);
        }
        std::borrow::Cow::Owned(self.iter().copied().filter(|&u| is_printable(u)).collect())
    }

    fn prefix_len(&self, prefix: &str) -> Option<usize> {
        let mut n = 0;
        for c in prefix.chars() {
            if self.get(n)?.code_point() != c as u32 {
                return None;
            }
            n += 1;
        }
        Some(n)
    }

    fn push(out: &mut Vec<T>, part: &[T]) {
        out.extend_from_slice(part);
    }

    #[inline]
    fn push_range(&self, out: &mut Vec<T>, range: Range<usize>) {
        text::push_range(out, self, range);
    }

    #[inline(always)]
    fn push_str(out: &mut Vec<T>, s: &str) {
        // The separators and line breaks appended are ASCII: one unit a byte
        // (inlined, a literal's check folds away).
        if s.is_ascii() {
            out.extend(s.bytes().map(T::from));
        } else {
            out.extend(s.chars().filter_map(|c| T::from_code_point(c as u32)));
        }
    }

    fn reserve(out: &mut Vec<T>, additional: usize) {
        out.reserve(additional);
    }

    fn char_prefix(&self, n: usize) -> &[T] {
        &self[..n.min(<[T]>::len(self))]
    }

    fn to_str(&self) -> std::borrow::Cow<'_, str> {
        std::borrow::Cow::Owned(text::utf8_lossy(self))
    }
}

/// Finds a separator in a [`Splittable`] text: leftmost occurrences that
/// start on a unit, as Python's `re.split` finds a literal.
#[derive(Clone, Debug)]
pub struct Finder {
    finder: UnitFinder,
    /// One or two ASCII units ("\n", "\n\n", ". "): looked for first with
    /// masks of 64 units, which costs less than a substring searcher's call
    /// for the short gaps between occurrences of such common separators.
    short: Option<ShortNeedle>,
    /// The needle's length in units (0 when it cannot occur).
    needle_len: usize,
}

/// Windows of 64 units a short needle is looked for in before the
/// substring searcher takes over, per byte of a unit: that searcher's call
/// costs about as much as this many windows, and for wider units it also
/// checks that a hit starts on a unit (measured on the shared corpus's
/// plain text, where paragraphs run to hundreds of units).
const SHORT_WINDOWS_PER_UNIT_BYTE: usize = 8;

impl Finder {
    pub fn new<S: Splittable + ?Sized>(needle: &str) -> Self {
        let bytes = S::needle_bytes(needle);
        Finder {
            finder: UnitFinder::new(bytes.as_deref(), S::UNIT_SIZE),
            short: ShortNeedle::new(needle),
            needle_len: bytes.map_or(0, |b| b.len() / S::UNIT_SIZE),
        }
    }

    /// The needle's length in units of the text.
    pub fn needle_len(&self) -> usize {
        self.needle_len
    }

    /// Whether the needle occurs in `text` at all: one long scan, which the
    /// substring searcher does fastest.
    pub fn occurs_in<S: Splittable + ?Sized>(&self, text: &S) -> bool {
        self.finder.find(text.bytes(), 0).is_some()
    }

    /// The offset of the first occurrence at or after offset `from`.
    pub fn find<S: Splittable + ?Sized>(&self, text: &S, from: usize) -> Option<usize> {
        let Some(short) = self.short else {
            return self.finder.find(text.bytes(), from);
        };
        // Windows overlap by the units past an occurrence's start.
        let step = 65 - short.units();
        let mut at = from;
        for _ in 0..SHORT_WINDOWS_PER_UNIT_BYTE * S::UNIT_SIZE {
            if at + short.units() > text.len() {
                return None;
            }
            let starts = text.needle_starts(at, short);
            if starts != 0 {
                return Some(at + starts.trailing_zeros() as usize);
            }
            at += step;
        }
        // A long gap: the substring searcher scans faster.
        self.finder.find(text.bytes(), at)
    }

    /// The offset of the last occurrence that starts in `from..=to` (and
    /// ends within the text). Occurrences that overlap are all found (where
    /// [`Self::find`] from a previous one's end would skip the second).
    pub fn rfind<S: Splittable + ?Sized>(&self, text: &S, from: usize, to: usize) -> Option<usize> {
        let Some(short) = self.short else {
            return self.finder.rfind(text.bytes(), from, to);
        };
        // Units past an occurrence's start, which must lie in its window.
        let past = short.units() - 1;
        let mut to = to;
        for _ in 0..SHORT_WINDOWS_PER_UNIT_BYTE * S::UNIT_SIZE {
            if from > to {
                return None;
            }
            // The window whose first `64 - past` units end at `to`.
            let start = (to + past).saturating_sub(63).max(from);
            let reached = u64::MAX >> (63 - (to - start));
            let starts = text.needle_starts(start, short) & reached;
            if starts != 0 {
                return Some(start + 63 - starts.leading_zeros() as usize);
            }
            if start == from {
                return None;
            }
            to = start - 1;
        }
        self.finder.rfind(text.bytes(), from, to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units<T: CodeUnit>(s: &str) -> Vec<T> {
        s.chars()
            .map(|c| T::from_code_point(c as u32).expect("fits"))
            .collect()
    }

    #[test]
    fn strip_matches_str() {
        for s in ["", "   ", " a ", "\u{3000}x\u{a0}y\u{85}", "\u{200b}z", "a"] {
            let r = s.strip_range();
            let u: Vec<u32> = units(s);
            let ur = u.strip_range();
            assert_eq!(s[r].chars().count(), ur.len(), "{s:?}");
            assert_eq!(unicode::strip(s).chars().count(), ur.len());
        }
        assert_eq!([0xD800u16, 0x20].strip_range(), 0..1);
    }

    #[test]
    fn finder_keeps_to_unit_boundaries() {
        // Bytes 1..5 of the first three units are those of "\n\n".
        let text: Vec<u16> = vec![0x0A41, 0x0A00, 0x4100, 0x0A, 0x0A];
        let finder = Finder::new::<[u16]>("\n\n");
        assert_eq!(finder.find(text.as_slice(), 0), Some(3));
        assert_eq!(finder.find(text.as_slice(), 4), None);
        assert_eq!(Finder::new::<[u8]>("☃").find(b"abc".as_slice(), 0), None);
        let s = "a☃b☃";
        let f = Finder::new::<str>("☃");
        assert_eq!(f.find(s, 0), Some(1));
        assert_eq!(f.find(s, 4), Some(5));
    }

    /// Past the windows looked at with masks, the substring searcher finds
    /// the rest: at every gap around that limit, in every width, with
    /// look-alike units (whose bytes hold the needle's) on the way.
    #[test]
    fn short_needles_after_long_gaps() {
        fn check<T: CodeUnit + std::fmt::Debug>(filler: T) {
            let limit = 64 * SHORT_WINDOWS_PER_UNIT_BYTE * std::mem::size_of::<T>();
            for gap in [
                limit - 70,
                limit - 1,
                limit,
                limit + 1,
                limit + 200,
                3 * limit,
            ] {
                let mut text = vec![filler; gap];
                text.extend(units::<T>("\n\nx"));
                for needle in ["\n\n", "\n"] {
                    let finder = Finder::new::<[T]>(needle);
                    assert_eq!(
                        finder.find(text.as_slice(), 0),
                        Some(gap),
                        "{needle:?} {gap}"
                    );
                    assert_eq!(finder.find(text.as_slice(), gap + 2), None);
                }
            }
        }
        check(b'a');
        check(0x0A0Au16);
        check(0x000A_000Au32);
    }

    proptest::proptest! {
        /// One- and two-unit separators (found with masks) are found where
        /// `str::find` finds them, from every start, in every width; across
        /// windows too.
        #[test]
        fn short_finder_finds_as_str_find(
            parts in proptest::collection::vec(
                proptest::sample::select(&[
                    "\n", "\n\n", ".", ". ", ",", " ", "a", "word", "\u{10a}", "\u{a0a}",
                    "é", "☃", "😀", "\u{2e00}", "\u{12e}",
                ][..]),
                0..200,
            ),
            needle in proptest::sample::select(&["\n\n", ". ", ", ", "..", "\n ", "\n", " ", "."][..]),
        ) {
            let text = parts.concat();
            let expected: Vec<Option<usize>> = text
                .char_indices()
                .map(|(from, _)| text[from..].find(needle).map(|i| i + from))
                .collect();
            let finder = Finder::new::<str>(needle);
            proptest::prop_assert!(finder.short.is_some());
            let found: Vec<_> = text.char_indices().map(|(from, _)| finder.find(text.as_str(), from)).collect();
            proptest::prop_assert_eq!(&found, &expected);
            // The same offsets in characters, for the code units of each width.
            let in_chars = |byte: usize| text[..byte].chars().count();
            let expected: Vec<Option<usize>> = expected.iter().map(|e| e.map(in_chars)).collect();
            fn found_in<T: CodeUnit>(text: &str, needle: &str) -> Vec<Option<usize>> {
                let u: Vec<T> = text.chars().map(|c| T::from_code_point(c as u32).unwrap_or_default()).collect();
                let finder = Finder::new::<[T]>(needle);
                (0..u.len()).map(|from| finder.find(u.as_slice(), from)).collect()
            }
            proptest::prop_assert_eq!(found_in::<u32>(&text, needle), expected.clone());
            if text.chars().all(|c| (c as u32) < 0x1_0000) {
                proptest::prop_assert_eq!(found_in::<u16>(&text, needle), expected.clone());
            }
            if text.chars().all(|c| (c as u32) < 0x100) {
                proptest::prop_assert_eq!(found_in::<u8>(&text, needle), expected);
            }
        }
    }

    proptest::proptest! {
        /// The last occurrence in a range is found, in every width, for
        /// short separators (masks, then the substring searcher past long
        /// gaps) and others, overlapping occurrences included.
        #[test]
        fn rfind_finds_the_last_occurrence_in_range(
            parts in proptest::collection::vec(
                proptest::sample::select(&[
                    "\n", "\n\n", ". ", "a", "word", "\u{a0a}", "é", "☃", "😀", "\u{2e00}",
                    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                ][..]),
                0..120,
            ),
            needle in proptest::sample::select(&["\n\n", ". ", "\n", " ", "☃", "a\u{a0a}", "é."][..]),
            ranges in proptest::collection::vec((0usize..2000, 0usize..2000), 1..20),
        ) {
            let text = parts.concat();
            let points: Vec<u32> = text.chars().map(u32::from).collect();
            let wanted: Vec<u32> = needle.chars().map(u32::from).collect();
            let last = |from: usize, to: usize| {
                (from..=to)
                    .rev()
                    .find(|&at| points.get(at..at + wanted.len()) == Some(wanted.as_slice()))
            };
            fn check<T: CodeUnit>(
                points: &[u32],
                needle: &str,
                ranges: &[(usize, usize)],
                last: &dyn Fn(usize, usize) -> Option<usize>,
            ) -> Result<(), proptest::test_runner::TestCaseError> {
                let Some(units) = points.iter().map(|&p| T::from_code_point(p)).collect::<Option<Vec<T>>>() else {
                    return Ok(());
                };
                let finder = Finder::new::<[T]>(needle);
                for &(from, to) in ranges {
                    let (from, to) = (from.min(units.len()), to.min(units.len()));
                    let expected = if from <= to { last(from, to) } else { None };
                    proptest::prop_assert_eq!(finder.rfind(units.as_slice(), from, to), expected, "{}..={}", from, to);
                }
                Ok(())
            }
            check::<u8>(&points, needle, &ranges, &last)?;
            check::<u16>(&points, needle, &ranges, &last)?;
            check::<u32>(&points, needle, &ranges, &last)?;
        }
    }

    proptest::proptest! {
        /// Blocks of printable ASCII are skipped whole: a character that is
        /// not printable is found anywhere, block edges included.
        #[test]
        fn printable_filters_as_python(
            parts in proptest::collection::vec(
                proptest::sample::select(&[
                    "a", "word ", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "é", "\u{7}", "\t", "\u{a0}",
                    "☃", "\u{200b}", "😀", "\u{85}", "\u{3000}",
                ][..]),
                0..40,
            ),
        ) {
            let text = parts.concat();
            let expected: String = text.chars().filter(|&c| unicode::is_printable(c)).collect();
            proptest::prop_assert_eq!(text.printable().into_owned(), expected.clone());
            let ucs4: Vec<u32> = units(&text);
            proptest::prop_assert_eq!(ucs4.printable().into_owned(), units::<u32>(&expected));
        }
    }

    #[test]
    fn printable_drops_surrogates_and_controls() {
        let text: Vec<u16> = vec![0x61, 0xD800, 0x07, 0xE9];
        assert_eq!(text.printable().as_ref(), [0x61, 0xE9]);
        assert_eq!("a\u{7}é".printable(), "aé");
    }

    #[test]
    fn prefix_and_char_ends() {
        let u: Vec<u16> = units("## x");
        assert_eq!(u.prefix_len("##"), Some(2));
        assert_eq!(u.prefix_len("###"), None);
        assert_eq!("é#".char_end(0), 2);
        assert_eq!(u.char_end(3), 4);
    }
}
