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
}

/// The code units of a CPython `str`.
#[derive(Clone, Copy, Debug)]
pub enum CodeUnits<'a> {
    Latin1(&'a [u8]),
    Ucs2(&'a [u16]),
    Ucs4(&'a [u32]),
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
    match (units, surrogates) {
        (CodeUnits::Latin1(u), _) => Ok((utf8_of(u, Placeholders::Reject)?, None)),
        (CodeUnits::Ucs2(u), Surrogates::Drop) => Ok((utf8_of(u, Placeholders::Drop)?, None)),
        (CodeUnits::Ucs4(u), Surrogates::Drop) => Ok((utf8_of(u, Placeholders::Drop)?, None)),
        (CodeUnits::Ucs2(u), Surrogates::Map) => with_surrogates(u),
        (CodeUnits::Ucs4(u), Surrogates::Map) => with_surrogates(u),
    }
}

#[derive(Clone, Copy)]
enum Placeholders {
    Reject,
    Drop,
    Map(SurrogateMap),
}

trait Unit: Copy {
    fn code_point(self) -> u32;
}

impl Unit for u8 {
    #[inline(always)]
    fn code_point(self) -> u32 {
        u32::from(self)
    }
}

impl Unit for u16 {
    #[inline(always)]
    fn code_point(self) -> u32 {
        u32::from(self)
    }
}

impl Unit for u32 {
    #[inline(always)]
    fn code_point(self) -> u32 {
        self
    }
}

fn is_surrogate(cp: u32) -> bool {
    (SURROGATES..SURROGATES + SURROGATE_COUNT).contains(&cp)
}

fn with_surrogates<U: Unit>(units: &[U]) -> Result<(String, Option<SurrogateMap>)> {
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

fn utf8_of<U: Unit>(units: &[U], map: Placeholders) -> Result<String> {
    const BLOCK: usize = 32;
    let mut out: Vec<u8> = Vec::with_capacity(units.len() + units.len() / 4);
    let mut blocks = units.chunks_exact(BLOCK);
    for block in blocks.by_ref() {
        // Branch-free OR of the block vectorises; most text is ASCII runs.
        if block.iter().fold(0, |acc, u| acc | u.code_point()) < 0x80 {
            out.extend(block.iter().map(|u| u.code_point() as u8));
        } else {
            push_units(&mut out, block, map)?;
        }
    }
    push_units(&mut out, blocks.remainder(), map)?;
    // SAFETY: `out` holds only ASCII bytes and `char::encode_utf8` output, so it
    // is valid UTF-8; validating it again would cost a pass over the text.
    Ok(unsafe { String::from_utf8_unchecked(out) })
}

fn push_units<U: Unit>(out: &mut Vec<u8>, units: &[U], map: Placeholders) -> Result<()> {
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
