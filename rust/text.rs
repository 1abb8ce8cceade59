//! Python strings as Rust text, and back.
//!
//! CPython stores a `str` as Latin-1, UCS-2 or UCS-4 code units (PEP 393).
//! The core works on UTF-8, so non-ASCII strings are transcoded once, here,
//! with an ASCII fast path (much faster than CPython's own UTF-8 encoder,
//! and it needs no UTF-8 copy cached on the `str` object).
//!
//! A Python `str` may also hold lone surrogates (U+D800..U+DFFF), which a Rust
//! `str` may not. Each is mapped to a private-use character that does not
//! otherwise occur in the text, one for one, so that code-point counts and
//! character classes (neither is space, word, digit or printable) stay exactly
//! as Python sees them; [`SurrogateMap::restore`] undoes the mapping on the way
//! out. Nothing is lost.

use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ops::{BitOr, Range};
use std::sync::OnceLock;

use memchr::memmem;

use crate::error::{Error, Result};
use crate::unicode;

const SURROGATES: u32 = 0xD800;
const SURROGATE_COUNT: u32 = 0x800;
/// Candidate windows for the mapping: the private-use planes 15 and 16,
/// 32 windows each of 0x800 code points.
const WINDOW_PLANES: [u32; 2] = [0xF0000, 0x100000];
const WINDOWS_PER_PLANE: u32 = 0x10000 / SURROGATE_COUNT;

/// Where the surrogates of one text were moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SurrogateMap {
    base: u32,
}

impl SurrogateMap {
    fn placeholder(self, surrogate: u32) -> char {
        // base + offset stays inside a private-use plane: always a valid char.
        char::from_u32(self.base + (surrogate - SURROGATES)).unwrap_or(char::REPLACEMENT_CHARACTER)
    }

    fn surrogate_of(self, c: char) -> Option<u32> {
        let cp = c as u32;
        (self.base..self.base + SURROGATE_COUNT)
            .contains(&cp)
            .then(|| cp - self.base + SURROGATES)
    }

    /// Whether `s` holds any placeholder (a cheap test first: they are
    /// four-byte characters of planes 15-16, which start with 0xF3 or 0xF4).
    pub fn touches(self, s: &str) -> bool {
        s.bytes().any(|b| b >= 0xF3) && s.chars().any(|c| self.surrogate_of(c).is_some())
    }

    /// `s` as Python's `encode("utf-16", "surrogatepass").decode("utf-16",
    /// "replace")` leaves it (what tiktoken counts for a `str` with
    /// surrogates): a high surrogate followed by a low one becomes the
    /// character they encode, any other surrogate U+FFFD.
    pub fn utf16_repaired(self, s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            let Some(high) = self.surrogate_of(c) else {
                out.push(c);
                continue;
            };
            let low = chars.peek().and_then(|&n| self.surrogate_of(n));
            match low {
                Some(low) if high < 0xDC00 && low >= 0xDC00 => {
                    chars.next();
                    let cp = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                    out.push(char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER));
                }
                _ => out.push(char::REPLACEMENT_CHARACTER),
            }
        }
        out
    }

    /// The code points of `s`, placeholders turned back into surrogates.
    pub fn restore(self, s: &str) -> Vec<u32> {
        s.chars()
            .map(|c| self.surrogate_of(c).unwrap_or(c as u32))
            .collect()
    }

    /// `s` as Python's `encode("utf-8", "surrogatepass")` encodes the text
    /// it stands for: placeholders turned back into surrogates, each in the
    /// three-byte form UTF-8 would give it.
    pub fn surrogatepass_utf8(self, s: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(s.len());
        for c in s.chars() {
            match self.surrogate_of(c) {
                None => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
                Some(cp) => out.extend_from_slice(&[
                    0xE0 | (cp >> 12) as u8,
                    0x80 | ((cp >> 6) & 0x3F) as u8,
                    0x80 | (cp & 0x3F) as u8,
                ]),
            }
        }
        out
    }
}

/// The code units of a CPython `str`.
#[derive(Clone, Copy, Debug)]
pub enum CodeUnits<'a> {
    Latin1(&'a [u8]),
    Ucs2(&'a [u16]),
    Ucs4(&'a [u32]),
}

/// The one dispatch over the three widths of a CPython `str`: evaluates
/// `$body` with `$units` bound to what a [`CodeUnits`] holds, whichever its
/// width. With an enum's name first, it does the same for any enum whose
/// variants are named `Latin1`, `Ucs2` and `Ucs4` (one value each).
///
/// The body is compiled once per width: generic code called in it is
/// monomorphised for `u8`, `u16` and `u32`, and the width is matched once,
/// not per unit.
///
/// ```
/// use _core::{for_width, text::{CodeUnit, CodeUnits}};
/// fn max<T: CodeUnit>(units: &[T]) -> u32 {
///     units.iter().map(|u| u.code_point()).max().unwrap_or(0)
/// }
/// let units = CodeUnits::Ucs2(&[0x41, 0x3B1]);
/// assert_eq!(for_width!(units, |u| max(u)), 0x3B1);
/// ```
#[macro_export]
macro_rules! for_width {
    ($value:expr, |$units:pat_param| $body:expr) => {
        match $value {
            $crate::text::CodeUnits::Latin1($units) => $body,
            $crate::text::CodeUnits::Ucs2($units) => $body,
            $crate::text::CodeUnits::Ucs4($units) => $body,
        }
    };
    ($value:expr, $enum:ident, |$units:pat_param| $body:expr) => {
        match $value {
            $enum::Latin1($units) => $body,
            $enum::Ucs2($units) => $body,
            $enum::Ucs4($units) => $body,
        }
    };
}

/// What to do with lone surrogates when transcoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Surrogates {
    /// Map them to private-use placeholders ([`SurrogateMap`]).
    Map,
    /// Leave them out: for transforms that drop them anyway, this works even
    /// when no placeholder window is free.
    Drop,
}

/// UTF-8 for the given code units, and the surrogate map when any was mapped.
pub fn transcode(
    units: CodeUnits<'_>,
    surrogates: Surrogates,
) -> Result<(String, Option<SurrogateMap>)> {
    for_width!(units, |u| match surrogates {
        // Latin-1 has no surrogates: either way, every unit is a character.
        Surrogates::Drop => Ok((utf8_of(u, Placeholders::Drop)?, None)),
        Surrogates::Map => with_surrogates(u),
    })
}

/// UTF-8 for code units, lone surrogates as U+FFFD (Python's
/// `errors="replace"`); ASCII runs are copied a block at a time.
pub fn utf8_lossy<U: CodeUnit>(units: &[U]) -> String {
    // `Replace` turns every unit into a character: nothing can fail.
    utf8_of(units, Placeholders::Replace).unwrap_or_default()
}

#[derive(Clone, Copy)]
enum Placeholders {
    Reject,
    Drop,
    Map(SurrogateMap),
    /// U+FFFD.
    Replace,
}

/// A code unit of one of the three PEP 393 representations of a `str`
/// (Latin-1, UCS-2, UCS-4): one code point each, surrogates included.
/// Sealed: implemented for `u8`, `u16` and `u32` only.
pub trait CodeUnit:
    sealed::Sealed
    + Copy
    + Ord
    + Default
    + std::fmt::Debug
    + From<u8>
    + BitOr<Output = Self>
    + Send
    + Sync
    + 'static
{
    /// `"\n\n"`, the paragraph break the text utilities join with.
    const PARAGRAPH_BREAK: &'static [Self];

    fn code_point(self) -> u32;
    /// The units `units` holds when they are of this width.
    fn units_of(units: CodeUnits<'_>) -> Option<&[Self]>;
    /// The unit holding code point `cp`, when it fits.
    fn from_code_point(cp: u32) -> Option<Self>;
    /// The unit as one byte: only meaningful when it is below 256.
    fn narrow_u8(self) -> u8;
    /// The unit as two bytes: only meaningful when it is below 65536.
    fn narrow_u16(self) -> u16;

    /// The bytes of `units` in memory (native byte order).
    fn bytes_of(units: &[Self]) -> &[u8] {
        // SAFETY: `Self` is u8, u16 or u32 (the trait is sealed): plain
        // integers without padding, so every byte of the slice is
        // initialised, and u8 needs no alignment.
        unsafe { std::slice::from_raw_parts(units.as_ptr().cast(), std::mem::size_of_val(units)) }
    }

    /// 16 units as bytes: ASCII units as they are, others as some byte that
    /// is not ASCII or is 0 (the vectorised narrowing saturates).
    fn narrow16(units: &[Self; 16]) -> [u8; 16] {
        units.map(|u| u.code_point().min(0xFF) as u8)
    }

    /// 64 units as bytes, as [`Self::narrow16`] makes them.
    fn narrowed(block: &[Self; 64]) -> [u8; 64] {
        let mut bytes = [0u8; 64];
        for (out, units) in bytes
            .as_chunks_mut::<16>()
            .0
            .iter_mut()
            .zip(block.as_chunks::<16>().0)
        {
            *out = Self::narrow16(units);
        }
        bytes
    }

    /// `f` of [`Self::narrowed`] (bytes are passed as they are, uncopied).
    #[inline(always)]
    fn with_narrowed<R>(block: &[Self; 64], f: impl FnOnce(&[u8; 64]) -> R) -> R {
        f(&Self::narrowed(block))
    }

    /// Appends `units` as bytes when they are all ASCII (and returns true);
    /// otherwise leaves `out` as it was. One pass: blocks are checked and
    /// narrowed together straight into `out`'s spare room; a last partial
    /// block is done as the full block that ends the units (overlapping the
    /// one before), so short runs cost few blocks and no unit loop.
    fn push_ascii(out: &mut Vec<u8>, units: &[Self]) -> bool {
        let n = units.len();
        out.reserve(n);
        let start = out.len();
        let dest = &mut out.spare_capacity_mut()[..n];
        if let Some(last) = n.checked_sub(ASCII_BLOCK) {
            let mut at = 0;
            while at < n {
                let from = at.min(last);
                match units[from..].first_chunk().and_then(Self::ascii_block) {
                    Some(bytes) => write_bytes(&mut dest[from..from + ASCII_BLOCK], &bytes),
                    None => return false,
                }
                at = from + ASCII_BLOCK;
            }
        } else {
            for (slot, u) in dest.iter_mut().zip(units) {
                if u.code_point() >= 0x80 {
                    return false;
                }
                slot.write(u.narrow_u8());
            }
        }
        // SAFETY: the `n` bytes after `start` were reserved and all written
        // (the blocks, or the units one by one, cover `0..n`).
        unsafe { out.set_len(start + n) };
        true
    }

    /// A block of units as bytes, when they are all ASCII.
    #[inline(always)]
    fn ascii_block(block: &[Self; ASCII_BLOCK]) -> Option<[u8; ASCII_BLOCK]> {
        let bytes = Self::narrow16(block);
        // Narrowing takes a unit from 0x80 up to a byte with its high bit
        // set, except one with the top bit of its width set (packed to 0),
        // whose own last byte has it.
        no_high_bit(Self::bytes_of(block), &bytes).then_some(bytes)
    }
}

/// Whether no byte of `memory` (16, 32 or 64 bytes) nor of `bytes` has its
/// high bit set.
#[inline(always)]
fn no_high_bit(memory: &[u8], bytes: &[u8; 16]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86_64; each unaligned load reads one
        // whole 16-byte chunk of `memory` or `bytes`.
        unsafe {
            let or = memory
                .chunks_exact(16)
                .fold(_mm_loadu_si128(bytes.as_ptr().cast()), |or, chunk| {
                    _mm_or_si128(or, _mm_loadu_si128(chunk.as_ptr().cast()))
                });
            _mm_movemask_epi8(or) == 0
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        memory.iter().chain(bytes).all(|&b| b < 0x80)
    }
}

/// Copies `bytes` to the start of `dest` (as much as fits).
#[inline(always)]
fn write_bytes(dest: &mut [MaybeUninit<u8>], bytes: &[u8]) {
    let n = bytes.len().min(dest.len());
    // SAFETY: both ranges hold `n` bytes, and a `&mut` cannot overlap a `&`.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dest.as_mut_ptr().cast::<u8>(), n) };
}

/// Appends `units[range]` to `out`. A part of at most 64 units is copied
/// inline as 64 units (only the part is kept), when `units` goes on that far:
/// Markdown lines are short, and a `memcpy` call branches on the length of
/// each. (Units, not bytes: most lines of UCS-2 and UCS-4 texts fit then.)
#[inline]
pub fn push_range<T: CodeUnit>(out: &mut Vec<T>, units: &[T], range: Range<usize>) {
    let block = 64;
    let n = range.len();
    match units.get(range.start..range.start + block) {
        Some(source) if n <= block => {
            out.reserve(block);
            let start = out.len();
            copy_block(source, &mut out.spare_capacity_mut()[..block]);
            // SAFETY: `block` units after `start` were reserved and written,
            // and the part is their first `n <= block`.
            unsafe { out.set_len(start + n) };
        }
        _ => out.extend_from_slice(&units[range]),
    }
}

/// Copies `from` into `to` (of the same length).
#[inline(always)]
fn copy_block<T: CodeUnit>(from: &[T], to: &mut [MaybeUninit<T>]) {
    let n = from.len().min(to.len());
    // SAFETY: both hold `n` units, and a `&mut` cannot overlap a `&`.
    unsafe { std::ptr::copy_nonoverlapping(from.as_ptr(), to.as_mut_ptr().cast::<T>(), n) };
}

/// Units [`CodeUnit::push_ascii`] checks at a time (one SSE2 register of bytes).
pub const ASCII_BLOCK: usize = 16;

/// Classes of up to 64 code units, as bit masks (bit `i` for unit `i`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UnitClasses {
    /// `\n`.
    pub newline: u64,
    /// ` ` (U+0020).
    pub space: u64,
    /// Anything but visible ASCII (`!` to `~`): whitespace among others.
    pub not_graphic: u64,
}

/// The classes of the first 64 units (at most) of `units`.
#[inline]
pub fn classify<T: CodeUnit>(units: &[T]) -> UnitClasses {
    match units.first_chunk::<64>() {
        Some(block) => T::with_narrowed(block, classify_bytes),
        None => classify_scalar(units),
    }
}

/// Classes of up to 64 code units for finding lines, as bit masks (bit `i`
/// for unit `i`): two of [`UnitClasses`]' three, for fewer instructions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineClasses {
    /// `\n`.
    pub newline: u64,
    /// Outside printable ASCII (` ` to `~`): newlines among others.
    pub not_printable: u64,
}

impl From<UnitClasses> for LineClasses {
    fn from(c: UnitClasses) -> Self {
        LineClasses {
            newline: c.newline,
            // Not visible and not a space: outside ' '..='~'.
            not_printable: c.not_graphic & !c.space,
        }
    }
}

/// The line classes of the first 64 units (at most) of `units`.
#[inline]
pub fn classify_lines<T: CodeUnit>(units: &[T]) -> LineClasses {
    match units.first_chunk::<64>() {
        Some(block) => T::with_narrowed(block, classify_line_bytes),
        None => classify_scalar(units).into(),
    }
}

/// [`LineClasses`] of 64 narrowed units (see [`classify_sse2`]).
#[inline(always)]
fn classify_line_bytes(bytes: &[u8; 64]) -> LineClasses {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let vectors = bytes.as_ptr().cast::<__m128i>();
        let (newline, printable) = (0..4).fold((0, 0), |(newline, printable), k| {
            // SAFETY: SSE2 is part of x86_64; the unaligned load, k < 4,
            // reads 16 of the 64 bytes of `bytes`.
            let (n, p) = unsafe {
                let v = _mm_loadu_si128(vectors.add(k));
                let n = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x0A));
                // ' '..='~' is what v + 0x60 takes to -128..=-34 (as i8).
                let p = _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8(0x60)), _mm_set1_epi8(-33));
                (_mm_movemask_epi8(n) as u16, _mm_movemask_epi8(p) as u16)
            };
            (
                newline | (u64::from(n) << (16 * k)),
                printable | (u64::from(p) << (16 * k)),
            )
        });
        LineClasses {
            newline,
            not_printable: !printable,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        classify_scalar(bytes).into()
    }
}

/// An ASCII needle of one or two bytes, not NUL ("\n", "\n\n", ". "), found
/// with masks of 64 units: for the short gaps between occurrences of such
/// common separators, cheaper than a substring searcher's call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShortNeedle {
    first: u8,
    second: Option<u8>,
}

impl ShortNeedle {
    pub fn new(needle: &str) -> Option<Self> {
        let ascii = |b: &u8| (1..0x80).contains(b);
        match needle.as_bytes() {
            [a] if ascii(a) => Some(Self {
                first: *a,
                second: None,
            }),
            [a, b] if ascii(a) && ascii(b) => Some(Self {
                first: *a,
                second: Some(*b),
            }),
            _ => None,
        }
    }

    /// Its length in units (1 or 2).
    pub fn units(self) -> usize {
        1 + usize::from(self.second.is_some())
    }
}

/// Bit `i` set where `needle` starts at unit `at + i`, for the occurrences
/// that lie within the 64 units from `at` (so at most 63 of a pair).
#[inline]
pub fn needle_starts<T: CodeUnit>(units: &[T], at: usize, needle: ShortNeedle) -> u64 {
    let units = units.get(at..).unwrap_or_default();
    let matches = |bytes: &[u8; 64]| {
        let first = eq_mask(bytes, needle.first);
        match needle.second {
            None => first,
            Some(b) if b == needle.first => first & (first >> 1),
            Some(b) => first & (eq_mask(bytes, b) >> 1),
        }
    };
    // Units past an occurrence's start: an occurrence starting in the last
    // of them ends in the next window (or past the text).
    let past = needle.units() - 1;
    match units.first_chunk::<64>() {
        Some(block) => T::with_narrowed(block, matches) & (u64::MAX >> past),
        None => {
            let mut block = [T::default(); 64];
            block[..units.len()].copy_from_slice(units);
            let starts = (1u64 << units.len().saturating_sub(past)) - 1;
            T::with_narrowed(&block, matches) & starts
        }
    }
}

/// How many spaces (U+0020) follow one another from `at` on (0 past the
/// end). Checked 16 units at a time: indented lines start with runs of
/// varying length, on which a loop over units mispredicts its exit.
#[inline]
pub fn spaces_from<T: CodeUnit>(units: &[T], at: usize) -> usize {
    let units = units.get(at..).unwrap_or_default();
    let mut n = 0;
    while let Some(block) = units
        .get(n..)
        .and_then(|rest| rest.first_chunk::<ASCII_BLOCK>())
    {
        let run = (!u32::from(eq_mask16(&T::narrow16(block), 0x20))).trailing_zeros() as usize;
        n += run;
        if run < ASCII_BLOCK {
            return n;
        }
    }
    n + units[n..]
        .iter()
        .take_while(|u| u.code_point() == 0x20)
        .count()
}

/// Bit `i` set where `bytes[i] == byte`, for the first 64 bytes (at most).
#[inline]
pub fn byte_mask(bytes: &[u8], byte: u8) -> u64 {
    match bytes.first_chunk::<64>() {
        Some(block) => eq_mask(block, byte),
        None => bytes
            .iter()
            .enumerate()
            .fold(0, |mask, (i, &b)| mask | (u64::from(b == byte) << i)),
    }
}

/// Bit `i` set where `bytes[i] == byte`.
#[inline(always)]
fn eq_mask(bytes: &[u8; 64], byte: u8) -> u64 {
    let (blocks, _) = bytes.as_chunks::<16>();
    blocks.iter().enumerate().fold(0, |mask, (k, block)| {
        mask | (u64::from(eq_mask16(block, byte)) << (16 * k))
    })
}

/// Bit `i` set where `bytes[i] == byte`, for 16 bytes (one SSE2 register).
#[inline(always)]
fn eq_mask16(bytes: &[u8; 16], byte: u8) -> u16 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86_64; the unaligned load reads the 16
        // bytes of `bytes`.
        unsafe {
            let v = _mm_loadu_si128(bytes.as_ptr().cast());
            _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(byte as i8))) as u16
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        bytes
            .iter()
            .enumerate()
            .fold(0, |mask, (i, &b)| mask | (u16::from(b == byte) << i))
    }
}

/// [`UnitClasses`] of 64 narrowed units.
#[inline(always)]
fn classify_bytes(bytes: &[u8; 64]) -> UnitClasses {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let vectors = bytes.as_ptr().cast::<__m128i>();
        // SAFETY: SSE2 is part of x86_64; the unaligned loads, k < 4, read
        // the 64 bytes of `bytes`.
        classify_sse2(|k| unsafe { _mm_loadu_si128(vectors.add(k)) })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        classify_scalar(bytes)
    }
}

fn classify_scalar<T: CodeUnit>(units: &[T]) -> UnitClasses {
    units
        .iter()
        .take(64)
        .enumerate()
        .fold(UnitClasses::default(), |c, (i, &u)| {
            let cp = u.code_point();
            UnitClasses {
                newline: c.newline | (u64::from(cp == 0x0A) << i),
                space: c.space | (u64::from(cp == 0x20) << i),
                not_graphic: c.not_graphic | (u64::from(!(0x21..=0x7E).contains(&cp)) << i),
            }
        })
}

/// SSE2 (part of x86_64) for [`classify_bytes`]: `bytes(k)` gives units
/// `16k..16k + 16` as bytes, each unit above 0xFF saturated to 0x00 or 0xFF
/// (neither a newline nor visible ASCII, as the unit).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify_sse2(bytes: impl Fn(usize) -> std::arch::x86_64::__m128i) -> UnitClasses {
    use std::arch::x86_64::*;
    let (newline, space, graphic) = (0..4).fold((0, 0, 0), |(newline, space, graphic), k| {
        let v = bytes(k);
        // SAFETY: SSE2 is part of x86_64.
        let (n, s, g) = unsafe {
            let n = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x0A));
            let s = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x20));
            // '!'..='~' is what v + 0x5F takes to -128..=-35 (as i8).
            let g = _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8(0x5F)), _mm_set1_epi8(-34));
            (
                _mm_movemask_epi8(n) as u16,
                _mm_movemask_epi8(s) as u16,
                _mm_movemask_epi8(g) as u16,
            )
        };
        (
            newline | (u64::from(n) << (16 * k)),
            space | (u64::from(s) << (16 * k)),
            graphic | (u64::from(g) << (16 * k)),
        )
    });
    UnitClasses {
        newline,
        space,
        not_graphic: !graphic,
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for u32 {}
}

impl CodeUnit for u8 {
    const PARAGRAPH_BREAK: &'static [u8] = b"\n\n";

    fn narrowed(block: &[u8; 64]) -> [u8; 64] {
        *block
    }

    #[inline(always)]
    fn with_narrowed<R>(block: &[u8; 64], f: impl FnOnce(&[u8; 64]) -> R) -> R {
        f(block)
    }

    #[inline(always)]
    fn units_of(units: CodeUnits<'_>) -> Option<&[u8]> {
        match units {
            CodeUnits::Latin1(units) => Some(units),
            _ => None,
        }
    }
    #[inline(always)]
    fn code_point(self) -> u32 {
        u32::from(self)
    }
    #[inline(always)]
    fn from_code_point(cp: u32) -> Option<Self> {
        u8::try_from(cp).ok()
    }
    #[inline(always)]
    fn narrow_u8(self) -> u8 {
        self
    }
    #[inline(always)]
    fn narrow_u16(self) -> u16 {
        self.into()
    }
}

impl CodeUnit for u16 {
    const PARAGRAPH_BREAK: &'static [u16] = &[0x0A, 0x0A];

    #[cfg(target_arch = "x86_64")]
    fn narrow16(units: &[u16; 16]) -> [u8; 16] {
        use std::arch::x86_64::*;
        let vectors = units.as_ptr().cast::<__m128i>();
        let mut bytes = [0u8; 16];
        // SAFETY: SSE2 is part of x86_64; the two unaligned loads read the 32
        // bytes of `units`, the store writes the 16 of `bytes`.
        unsafe {
            let load = |i| _mm_loadu_si128(vectors.add(i));
            // Saturated to bytes as signed numbers: 0x100..=0x7FFF to 0xFF,
            // 0x8000 and above to 0x00.
            _mm_storeu_si128(
                bytes.as_mut_ptr().cast(),
                _mm_packus_epi16(load(0), load(1)),
            );
        }
        bytes
    }

    #[inline(always)]
    fn units_of(units: CodeUnits<'_>) -> Option<&[u16]> {
        match units {
            CodeUnits::Ucs2(units) => Some(units),
            _ => None,
        }
    }
    #[inline(always)]
    fn code_point(self) -> u32 {
        u32::from(self)
    }
    #[inline(always)]
    fn from_code_point(cp: u32) -> Option<Self> {
        u16::try_from(cp).ok()
    }
    #[inline(always)]
    fn narrow_u8(self) -> u8 {
        self as u8 // only called when every unit is below 256
    }
    #[inline(always)]
    fn narrow_u16(self) -> u16 {
        self
    }
}

impl CodeUnit for u32 {
    const PARAGRAPH_BREAK: &'static [u32] = &[0x0A, 0x0A];

    #[cfg(target_arch = "x86_64")]
    fn narrow16(units: &[u32; 16]) -> [u8; 16] {
        use std::arch::x86_64::*;
        let vectors = units.as_ptr().cast::<__m128i>();
        let mut bytes = [0u8; 16];
        // SAFETY: SSE2 is part of x86_64; the four unaligned loads read the
        // 64 bytes of `units`, the store writes the 16 of `bytes`.
        unsafe {
            let load = |i| _mm_loadu_si128(vectors.add(i));
            // Saturated to 16 bits as signed numbers (0x8000..=0x7FFF_FFFF to
            // 0x7FFF, 0x8000_0000 and above to 0x8000), then to bytes as for
            // UCS-2.
            let low = _mm_packs_epi32(load(0), load(1));
            let high = _mm_packs_epi32(load(2), load(3));
            _mm_storeu_si128(bytes.as_mut_ptr().cast(), _mm_packus_epi16(low, high));
        }
        bytes
    }

    #[inline(always)]
    fn units_of(units: CodeUnits<'_>) -> Option<&[u32]> {
        match units {
            CodeUnits::Ucs4(units) => Some(units),
            _ => None,
        }
    }
    #[inline(always)]
    fn code_point(self) -> u32 {
        self
    }
    #[inline(always)]
    fn from_code_point(cp: u32) -> Option<Self> {
        Some(cp)
    }
    #[inline(always)]
    fn narrow_u8(self) -> u8 {
        self as u8 // only called when every unit is below 256
    }
    #[inline(always)]
    fn narrow_u16(self) -> u16 {
        self as u16 // only called when every unit is below 65536
    }
}

/// A bound of the largest code point of `pieces` that CPython takes for the
/// same one: it only asks which of 0x80, 0x100 and 0x10000 the largest
/// reaches. The OR of the units reaches the same ones (they are powers of
/// two) and is cheaper than the maximum; and the scan stops as soon as the
/// widest representation the units can need is reached.
pub fn max_char<T: CodeUnit>(pieces: &[&[T]]) -> u32 {
    let widest = match std::mem::size_of::<T>() {
        1 => 0x80,
        2 => 0x100,
        _ => 0x1_0000,
    };
    let mut or = 0;
    for block in pieces.iter().flat_map(|units| units.chunks(512)) {
        // Sixteen lanes, OR-ed unit by unit: this form vectorises.
        let (lanes, rest) = block.as_chunks::<16>();
        let mut acc = [T::default(); 16];
        for lane in lanes {
            for (a, &u) in acc.iter_mut().zip(lane) {
                *a = *a | u;
            }
        }
        or |= acc
            .iter()
            .chain(rest)
            .fold(T::default(), |or, &u| or | u)
            .code_point();
        if or >= widest {
            break;
        }
    }
    // OR-ing code points may pass U+10FFFF, which CPython refuses.
    or.min(0x10_FFFF)
}

/// Writes the units of `pieces` (all below 256) one after the other into
/// `dst` as bytes, 16 at a time.
pub fn narrow_pieces<T: CodeUnit>(dst: &mut [u8], pieces: &[&[T]]) {
    let mut rest = dst;
    for units in pieces {
        let n = units.len().min(rest.len());
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(n);
        let (blocks, units_left) = units[..n].as_chunks::<16>();
        let (head_blocks, head_left) = head.as_chunks_mut::<16>();
        for (out, block) in head_blocks.iter_mut().zip(blocks) {
            *out = T::narrow16(block);
        }
        for (out, &unit) in head_left.iter_mut().zip(units_left) {
            *out = unit.narrow_u8();
        }
        rest = tail;
    }
}

/// Writes the units of `pieces` one after the other into `dst`, converted.
pub fn copy_pieces<T: CodeUnit, D>(dst: &mut [D], pieces: &[&[T]], convert: impl Fn(T) -> D) {
    let mut rest = dst;
    for units in pieces {
        let n = units.len().min(rest.len());
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(n);
        head.iter_mut()
            .zip(units.iter())
            .for_each(|(d, &s)| *d = convert(s));
        rest = tail;
    }
}

/// Finds a needle in the memory of a text whose units are `unit` bytes wide
/// (UTF-8 and Latin-1 1, UCS-2 2, UCS-4 4): `memchr`/`memmem` over the bytes,
/// keeping only the hits that start on a unit.
#[derive(Clone, Debug)]
pub struct UnitFinder {
    search: Search,
    unit: usize,
}

#[derive(Clone, Debug)]
enum Search {
    /// The needle cannot occur (a character wider than the units).
    Never,
    /// One byte: `memchr`, cheaper per match than a substring searcher.
    Byte(u8),
    Bytes(Box<BytesSearch>),
}

/// A substring searcher, and its reverse, built at the first backward
/// search (most finders never search backwards).
#[derive(Clone, Debug)]
struct BytesSearch {
    forward: memmem::Finder<'static>,
    reverse: OnceLock<memmem::FinderRev<'static>>,
}

/// How common a byte is in the code units of text, as `memmem` ranks the
/// bytes of a needle to pick the two it looks for first (a pair of rare
/// bytes makes few false candidates). Its default ranking, for UTF-8 text,
/// takes zero bytes for rare, while they are the commonest of all in UCS-2
/// and UCS-4 (the high bytes of ASCII); and markup characters are common in
/// HTML, rarer letters such as `k` less so in any text.
struct UnitByteRank;

impl memchr::arch::all::packedpair::HeuristicFrequencyRank for UnitByteRank {
    fn rank(&self, byte: u8) -> u8 {
        match byte {
            0 => 255,
            b' ' | b'\n' | b'e' | b't' | b'a' | b'o' | b'i' | b'n' | b's' | b'h' | b'r' => 240,
            b'<' | b'>' | b'/' | b'=' | b'"' => 200,
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => 150,
            _ => 100,
        }
    }
}

impl UnitFinder {
    /// `needle`: its memory in the text's form, `None` when it cannot occur.
    pub fn new(needle: Option<&[u8]>, unit: usize) -> Self {
        let search = match needle {
            None => Search::Never,
            Some(&[byte]) => Search::Byte(byte),
            Some(bytes) => {
                let forward = if unit == 1 {
                    memmem::Finder::new(bytes)
                } else {
                    memmem::FinderBuilder::new().build_forward_with_ranker(UnitByteRank, bytes)
                };
                Search::Bytes(Box::new(BytesSearch {
                    forward: forward.into_owned(),
                    reverse: OnceLock::new(),
                }))
            }
        };
        Self { search, unit }
    }

    /// The needle's length in bytes (0 when it cannot occur).
    fn needle_bytes(&self) -> usize {
        match &self.search {
            Search::Never => 0,
            Search::Byte(_) => 1,
            Search::Bytes(search) => search.forward.needle().len(),
        }
    }

    /// The unit index of the first occurrence at or after unit `from`.
    pub fn find(&self, bytes: &[u8], from: usize) -> Option<usize> {
        let mut at = from * self.unit;
        loop {
            let rest = bytes.get(at..)?;
            let hit = at
                + match &self.search {
                    Search::Never => return None,
                    Search::Byte(b) => memchr::memchr(*b, rest)?,
                    Search::Bytes(search) => search.forward.find(rest)?,
                };
            if hit.is_multiple_of(self.unit) {
                return Some(hit / self.unit);
            }
            // Straddles two units: the next candidate starts on the next one.
            at = hit.next_multiple_of(self.unit);
        }
    }

    /// The unit index of the last occurrence that starts at a unit in
    /// `from..=to` (and ends within `bytes`).
    pub fn rfind(&self, bytes: &[u8], from: usize, to: usize) -> Option<usize> {
        let start = from.checked_mul(self.unit)?;
        let needle = self.needle_bytes();
        let mut end = to
            .saturating_mul(self.unit)
            .saturating_add(needle)
            .min(bytes.len());
        loop {
            let hay = bytes.get(start..end)?;
            let hit = start
                + match &self.search {
                    Search::Never => return None,
                    Search::Byte(b) => memchr::memrchr(*b, hay)?,
                    Search::Bytes(search) => search
                        .reverse
                        .get_or_init(|| {
                            memmem::FinderRev::new(search.forward.needle()).into_owned()
                        })
                        .rfind(hay)?,
                };
            if hit.is_multiple_of(self.unit) {
                return Some(hit / self.unit);
            }
            // Straddles two units: the next candidate starts before it.
            end = hit + needle - 1;
        }
    }
}

/// A [`UnitFinder`] for an ASCII needle in code units `T`.
pub struct AsciiFinder<T> {
    finder: UnitFinder,
    unit: PhantomData<T>,
}

impl<T: CodeUnit> AsciiFinder<T> {
    pub fn new(needle: &str) -> Self {
        let units: Vec<T> = needle.bytes().map(T::from).collect();
        Self {
            finder: UnitFinder::new(Some(T::bytes_of(&units)), std::mem::size_of::<T>()),
            unit: PhantomData,
        }
    }

    /// The index of the first unit of the first occurrence in `units`.
    pub fn find(&self, units: &[T]) -> Option<usize> {
        self.finder.find(T::bytes_of(units), 0)
    }
}

fn is_surrogate(cp: u32) -> bool {
    (SURROGATES..SURROGATES + SURROGATE_COUNT).contains(&cp)
}

fn with_surrogates<U: CodeUnit>(units: &[U]) -> Result<(String, Option<SurrogateMap>)> {
    match utf8_of(units, Placeholders::Reject) {
        Err(Error::UnsupportedText(_)) => {}
        done => return done.map(|text| (text, None)),
    }
    // Rare: lone surrogates. Pick a window no character of the text uses.
    let mut used_windows: u64 = 0;
    for cp in units
        .iter()
        .map(|u| u.code_point())
        // Past U+10FFFF is no character (refused below), and no window.
        .filter(|&cp| (WINDOW_PLANES[0]..=0x10FFFF).contains(&cp))
    {
        let plane = u32::from(cp >= WINDOW_PLANES[1]);
        let window = (cp - WINDOW_PLANES[plane as usize]) / SURROGATE_COUNT;
        used_windows |= 1 << (plane * WINDOWS_PER_PLANE + window);
    }
    let free = (0..2 * WINDOWS_PER_PLANE)
        .find(|w| used_windows & (1 << w) == 0)
        .ok_or_else(|| {
            Error::UnsupportedText(
                "text holds lone surrogates and uses every private-use window needed to \
                 represent them"
                    .into(),
            )
        })?;
    let map = SurrogateMap {
        base: WINDOW_PLANES[(free / WINDOWS_PER_PLANE) as usize]
            + (free % WINDOWS_PER_PLANE) * SURROGATE_COUNT,
    };
    Ok((utf8_of(units, Placeholders::Map(map))?, Some(map)))
}

fn utf8_of<U: CodeUnit>(units: &[U], map: Placeholders) -> Result<String> {
    let mut out: Vec<u8> = Vec::with_capacity(units.len() + units.len() / 4);
    append_utf8(&mut out, units, map)?;
    // SAFETY: `append_utf8` writes only ASCII bytes and `char::encode_utf8`
    // output, so `out` is valid UTF-8; validating it again would cost a pass.
    Ok(unsafe { String::from_utf8_unchecked(out) })
}

fn append_utf8<U: CodeUnit>(out: &mut Vec<u8>, units: &[U], map: Placeholders) -> Result<()> {
    const BLOCK: usize = 32;
    let mut blocks = units.chunks_exact(BLOCK);
    for block in blocks.by_ref() {
        // Most text is ASCII runs.
        if !U::push_ascii(out, block) {
            push_units(out, block, map)?;
        }
    }
    push_units(out, blocks.remainder(), map)
}

fn push_units<U: CodeUnit>(out: &mut Vec<u8>, units: &[U], map: Placeholders) -> Result<()> {
    for u in units {
        let cp = u.code_point();
        if cp < 0x80 {
            out.push(cp as u8);
            continue;
        }
        let c = match (char::from_u32(cp), map) {
            (Some(c), _) => c,
            (None, Placeholders::Map(map)) if is_surrogate(cp) => map.placeholder(cp),
            (None, Placeholders::Drop) if is_surrogate(cp) => continue,
            (None, Placeholders::Replace) => char::REPLACEMENT_CHARACTER,
            _ => {
                return Err(Error::UnsupportedText(format!(
                    "code point {cp:#x} is not a character"
                )));
            }
        };
        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
    }
    Ok(())
}

/// Converts byte offsets of a text into code-point offsets (Python indices);
/// cheap when the offsets asked for mostly increase.
#[derive(Clone, Debug)]
pub struct CharOffsets<'a> {
    text: &'a str,
    byte: usize,
    chars: usize,
}

impl<'a> CharOffsets<'a> {
    pub fn new(text: &'a str) -> Self {
        Self {
            text,
            byte: 0,
            chars: 0,
        }
    }

    /// The code-point index of byte offset `byte` (a character boundary).
    pub fn of(&mut self, byte: usize) -> usize {
        if byte < self.byte {
            self.byte = 0;
            self.chars = 0;
        }
        let span = self.text.get(self.byte..byte).unwrap_or("");
        self.chars += unicode::char_len(span);
        self.byte = byte;
        self.chars
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_written_one_after_the_other() {
        let a: [u16; 20] = std::array::from_fn(|i| 0x41 + i as u16);
        let b: [u16; 3] = [0xE9, 0x20, 0xFF];
        let mut bytes = [0u8; 23];
        narrow_pieces(&mut bytes, &[&a, &b]);
        let want: Vec<u8> = a.iter().chain(&b).map(|&u| u as u8).collect();
        assert_eq!(bytes.to_vec(), want);
        // As many as fit.
        let mut short = [0u8; 21];
        narrow_pieces(&mut short, &[&a, &b]);
        assert_eq!(short.to_vec(), want[..21]);
        let wide: [u32; 2] = [0x1F600, 0x3B1];
        let mut out = [0u32; 5];
        copy_pieces(&mut out, &[&wide[..], &[0x41, 0x42, 0x43]], |u| u);
        assert_eq!(out, [0x1F600, 0x3B1, 0x41, 0x42, 0x43]);
        let mut narrow = [0u16; 3];
        copy_pieces(
            &mut narrow,
            &[&[0x3B1u32, 0x41][..], &[0x20AC]],
            u32::narrow_u16,
        );
        assert_eq!(narrow, [0x3B1, 0x41, 0x20AC]);
    }

    #[test]
    fn surrogatepass_utf8_restores_lone_surrogates() {
        // "a", U+D800, "é", U+DFFF, U+1F600 (not a surrogate: kept as it is).
        let units = [0x61, 0xD800, 0xE9, 0xDFFF];
        let (text, map) = transcode(CodeUnits::Ucs2(&units), Surrogates::Map).unwrap();
        let map = map.expect("lone surrogates are mapped");
        let mut text = text;
        text.push('\u{1F600}');
        let mut want = vec![b'a', 0xED, 0xA0, 0x80];
        want.extend_from_slice("é".as_bytes());
        want.extend_from_slice(&[0xED, 0xBF, 0xBF]);
        want.extend_from_slice("\u{1F600}".as_bytes());
        assert_eq!(map.surrogatepass_utf8(&text), want);
        assert_eq!(map.surrogatepass_utf8("plain"), b"plain");
    }

    fn push_ascii_as_naive<U: CodeUnit>(units: &[U]) {
        let mut out = b"kept".to_vec();
        let ascii = units.iter().all(|u| u.code_point() < 0x80);
        assert_eq!(U::push_ascii(&mut out, units), ascii, "{units:?}");
        let mut expected = b"kept".to_vec();
        if ascii {
            expected.extend(units.iter().map(|u| u.code_point() as u8));
        }
        assert_eq!(out, expected, "{units:?}");
    }

    proptest::proptest! {
        /// Every width, every position of a non-ASCII unit (in a block or in
        /// the rest), and the values that saturate when packed.
        #[test]
        fn push_ascii_appends_only_all_ascii_units(
            points in proptest::collection::vec(
                proptest::prop_oneof![
                    8 => 0u32..0x80,
                    1 => proptest::sample::select(
                        &[0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x1_0000, 0x10_FFFF][..]
                    ),
                ],
                0..70,
            )
        ) {
            let ucs4: Vec<u32> = points.clone();
            push_ascii_as_naive(&ucs4);
            let ucs2: Vec<u16> = points.iter().filter_map(|&p| u16::try_from(p).ok()).collect();
            push_ascii_as_naive(&ucs2);
            let latin1: Vec<u8> = points.iter().filter_map(|&p| u8::try_from(p).ok()).collect();
            push_ascii_as_naive(&latin1);
        }
    }

    fn spaces_from_as_naive<U: CodeUnit>(units: &[U]) {
        for at in 0..=units.len() + 1 {
            let naive = units
                .get(at..)
                .unwrap_or_default()
                .iter()
                .take_while(|u| u.code_point() == 0x20)
                .count();
            assert_eq!(spaces_from(units, at), naive, "{at} in {units:?}");
        }
    }

    proptest::proptest! {
        /// Runs shorter and longer than a block, ending at a space's
        /// look-alikes once narrowed (U+0120, U+8020) or at the end.
        #[test]
        fn spaces_from_counts_the_run(
            points in proptest::collection::vec(
                proptest::prop_oneof![
                    8 => proptest::strategy::Just(0x20u32),
                    1 => proptest::sample::select(&[0x0A, 0x21, 0xA0, 0x120, 0x8020, 0x1_0020][..]),
                ],
                0..50,
            )
        ) {
            spaces_from_as_naive(&points);
            let ucs2: Vec<u16> = points.iter().filter_map(|&p| u16::try_from(p).ok()).collect();
            spaces_from_as_naive(&ucs2);
            let latin1: Vec<u8> = points.iter().filter_map(|&p| u8::try_from(p).ok()).collect();
            spaces_from_as_naive(&latin1);
        }
    }

    #[test]
    fn lossy_utf8_replaces_each_surrogate_unit() {
        // A pair of surrogate units is two lone surrogates of a `str`.
        let mut units: Vec<u16> = vec![0x61; 40];
        units.extend([0xD800, 0xDC00, 0xE9, 0x62]);
        let expected = format!("{}\u{FFFD}\u{FFFD}éb", "a".repeat(40));
        assert_eq!(utf8_lossy(&units), expected);
        let wide: Vec<u32> = units
            .iter()
            .map(|&u| u32::from(u))
            .chain([0x1F600])
            .collect();
        assert_eq!(utf8_lossy(&wide), expected + "😀");
        assert_eq!(utf8_lossy(&[0xE9u8, 0x41]), "éA");
    }

    #[test]
    fn latin1_and_ucs_transcode_to_utf8() {
        let latin1: Vec<u8> = "café and more text than one block"
            .chars()
            .map(|c| c as u8)
            .collect();
        assert_eq!(
            transcode(CodeUnits::Latin1(&latin1), Surrogates::Map)
                .expect("ok")
                .0,
            "café and more text than one block"
        );
        let ucs2: Vec<u16> = "snow ☃ everywhere, and a long ASCII tail"
            .encode_utf16()
            .collect();
        assert_eq!(
            transcode(CodeUnits::Ucs2(&ucs2), Surrogates::Map)
                .expect("ok")
                .0,
            "snow ☃ everywhere, and a long ASCII tail"
        );
        let ucs4: Vec<u32> = "clef 𝄞!".chars().map(|c| c as u32).collect();
        assert_eq!(
            transcode(CodeUnits::Ucs4(&ucs4), Surrogates::Map).expect("ok"),
            ("clef 𝄞!".to_string(), None)
        );
    }

    #[test]
    fn surrogates_map_one_char_each_and_restore() {
        let units = [0x61, 0xD800, 0x62, 0xDFFF, 0xDBFF, 0xDC00];
        let (text, map) = transcode(CodeUnits::Ucs2(&units), Surrogates::Map).expect("ok");
        let map = map.expect("has surrogates");
        assert_eq!(text.chars().count(), 6);
        assert!(map.touches(&text));
        assert!(!map.touches("plain"));
        assert_eq!(
            map.restore(&text),
            units.iter().map(|&u| u32::from(u)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn push_range_appends_the_part_alone() {
        fn check<T: CodeUnit>() {
            let units: Vec<T> = (0..150u8).map(|b| T::from(b % 128)).collect();
            for range in [
                0..0,
                3..7,
                0..16,
                5..69,
                10..80,
                140..150,
                149..150,
                150..150,
                0..150,
            ] {
                let mut out: Vec<T> = vec![T::from(b'x')];
                push_range(&mut out, &units, range.clone());
                assert_eq!(out[0], T::from(b'x'));
                assert_eq!(&out[1..], &units[range.clone()], "{range:?}");
            }
        }
        check::<u8>();
        check::<u16>();
        check::<u32>();
    }

    #[test]
    fn utf16_repair_pairs_surrogates_and_replaces_lone_ones() {
        let units = [0x61, 0xD83D, 0xDE00, 0xDC00, 0xD800, 0x62, 0xD800];
        let (text, map) = transcode(CodeUnits::Ucs2(&units), Surrogates::Map).expect("ok");
        let map = map.expect("has surrogates");
        assert_eq!(map.utf16_repaired(&text), "a😀\u{fffd}\u{fffd}b\u{fffd}");
    }

    #[test]
    fn placeholders_avoid_characters_already_present() {
        let units = [0xF0000, 0xD800];
        let (text, map) = transcode(CodeUnits::Ucs4(&units), Surrogates::Map).expect("ok");
        let map = map.expect("has surrogates");
        assert_eq!(text.chars().next(), Some('\u{F0000}'));
        assert_ne!(text.chars().nth(1), Some('\u{F0000}'));
        assert_eq!(map.restore(&text), units);
    }

    #[test]
    fn surrogates_can_be_dropped_instead() {
        let units = [0x61, 0xD800, 0x62];
        let (text, map) = transcode(CodeUnits::Ucs2(&units), Surrogates::Drop).expect("ok");
        assert_eq!((text.as_str(), map), ("ab", None));
    }

    /// `classify` and `classify_lines` in all three widths against the plain definition, on
    /// every length around a block.
    #[test]
    fn classes_match_their_definition() {
        fn check<T: CodeUnit + std::fmt::Debug>(units: &[T]) {
            let mut expected = UnitClasses::default();
            for (i, u) in units.iter().take(64).enumerate() {
                let cp = u.code_point();
                expected.newline |= u64::from(cp == 0x0A) << i;
                expected.space |= u64::from(cp == 0x20) << i;
                expected.not_graphic |= u64::from(!(0x21..=0x7E).contains(&cp)) << i;
            }
            assert_eq!(classify(units), expected, "{units:x?}");
            let lines = LineClasses {
                newline: expected.newline,
                not_printable: expected.not_graphic & !expected.space,
            };
            assert_eq!(classify_lines(units), lines, "{units:x?}");
        }
        // The bounds of each class, and units holding their bytes elsewhere.
        #[rustfmt::skip]
        let alphabet: [u32; 27] = [
            0x0A, 0x0B, 0x09, 0x20, 0x21, 0x61, 0x7E, 0x7F, 0x80, 0xA0, 0xFF, 0x010A, 0x0A00,
            0x0120, 0x2000, 0x2100, 0x3000, 0x7F21, 0x800A, 0xFF0A, 0xFFFF, 0x000A_0000,
            0x0021_0021, 0x0020_0020, 0x0001_000A, 0x8000_0021, 0xFFFF_000A,
        ];
        let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
        for len in [0, 1, 15, 16, 17, 63, 64, 65, 100] {
            for _ in 0..50 {
                let units: Vec<u32> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        alphabet[(seed % alphabet.len() as u64) as usize]
                    })
                    .collect();
                check(&units);
                check(&units.iter().map(|&u| u as u16).collect::<Vec<_>>());
                check(&units.iter().map(|&u| u as u8).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn char_offsets_follow_code_points() {
        let text = "aé☃𝄞b";
        let mut offsets = CharOffsets::new(text);
        assert_eq!(offsets.of(1), 1);
        assert_eq!(offsets.of(3), 2);
        assert_eq!(offsets.of(10), 4);
        assert_eq!(offsets.of(0), 0);
        assert_eq!(offsets.of(text.len()), 5);
    }
}
