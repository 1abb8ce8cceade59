//! Python strings that Rust strings cannot hold.
//!
//! A Python `str` may contain lone surrogates (U+D800..U+DFFF); a Rust `&str`
//! may not. CPython encodes them with the `surrogatepass` error handler as
//! three-byte sequences. [`decode_surrogatepass`] turns such bytes into a
//! `String` by mapping every surrogate to a private-use character that does
//! not otherwise occur in the text, one for one, so that code-point counts
//! and character classes (neither is space, word, digit or printable) stay
//! exactly as Python sees them; [`SurrogateMap::restore`] undoes the mapping
//! on the way out. Nothing is lost.

use crate::error::{Error, Result};

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

    /// Whether `s` holds any placeholder (a cheap test: they are four-byte
    /// characters of planes 15-16, which start with 0xF3 or 0xF4).
    pub fn touches(self, s: &str) -> bool {
        s.bytes().any(|b| b >= 0xF3) && s.chars().any(|c| self.surrogate_of(c).is_some())
    }

    /// `s` with placeholders turned back into surrogates, as CPython's
    /// `surrogatepass` UTF-8.
    pub fn restore(self, s: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(s.len());
        for c in s.chars() {
            match self.surrogate_of(c) {
                Some(sur) => out.extend_from_slice(&[
                    0xE0 | (sur >> 12) as u8,
                    0x80 | ((sur >> 6) & 0x3F) as u8,
                    0x80 | (sur & 0x3F) as u8,
                ]),
                None => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
            }
        }
        out
    }
}

/// Decodes CPython's `str.encode("utf-8", "surrogatepass")`; the map is
/// `None` when the text held no surrogate.
pub fn decode_surrogatepass(bytes: &[u8]) -> Result<(String, Option<SurrogateMap>)> {
    let mut used_windows: u64 = 0;
    let mut has_surrogate = false;
    for_each_piece(bytes, |piece| match piece {
        Piece::Text(text) => {
            for c in text.chars().filter(|&c| c as u32 >= WINDOW_PLANES[0]) {
                let cp = c as u32;
                let plane = u32::from(cp >= WINDOW_PLANES[1]);
                let window = (cp - WINDOW_PLANES[plane as usize]) / SURROGATE_COUNT;
                used_windows |= 1 << (plane * WINDOWS_PER_PLANE + window);
            }
        }
        Piece::Surrogate(_) => has_surrogate = true,
    })?;
    if !has_surrogate {
        // Valid UTF-8 after all.
        let text = String::from_utf8(bytes.to_vec())
            .map_err(|e| Error::UnsupportedText(format!("invalid UTF-8: {e}")))?;
        return Ok((text, None));
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
    let mut out = String::with_capacity(bytes.len() + bytes.len() / 3);
    for_each_piece(bytes, |piece| match piece {
        Piece::Text(text) => out.push_str(text),
        Piece::Surrogate(s) => out.push(map.placeholder(s)),
    })?;
    Ok((out, Some(map)))
}

enum Piece<'a> {
    Text(&'a str),
    Surrogate(u32),
}

fn for_each_piece<'a>(mut bytes: &'a [u8], mut f: impl FnMut(Piece<'a>)) -> Result<()> {
    while !bytes.is_empty() {
        match std::str::from_utf8(bytes) {
            Ok(text) => {
                f(Piece::Text(text));
                return Ok(());
            }
            Err(e) => {
                let valid = e.valid_up_to();
                // The prefix was just validated.
                f(Piece::Text(
                    std::str::from_utf8(&bytes[..valid]).unwrap_or(""),
                ));
                let rest = &bytes[valid..];
                match rest {
                    [0xED, b1 @ 0xA0..=0xBF, b2 @ 0x80..=0xBF, ..] => {
                        let s = 0xD000 | (u32::from(b1 & 0x3F) << 6) | u32::from(b2 & 0x3F);
                        f(Piece::Surrogate(s));
                        bytes = &rest[3..];
                    }
                    _ => {
                        return Err(Error::UnsupportedText(format!(
                            "invalid UTF-8 at byte {valid}"
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn surrogatepass(units: &[u32]) -> Vec<u8> {
        let mut out = Vec::new();
        for &u in units {
            match char::from_u32(u) {
                Some(c) => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
                None => out.extend_from_slice(&[
                    0xE0 | (u >> 12) as u8,
                    0x80 | ((u >> 6) & 0x3F) as u8,
                    0x80 | (u & 0x3F) as u8,
                ]),
            }
        }
        out
    }

    #[test]
    fn plain_utf8_needs_no_map() {
        let (text, map) = decode_surrogatepass("héllo".as_bytes()).expect("decodes");
        assert_eq!(text, "héllo");
        assert_eq!(map, None);
    }

    #[test]
    fn surrogates_round_trip_one_char_each() {
        let bytes = surrogatepass(&[0x61, 0xD800, 0x62, 0xDFFF, 0xDBFF, 0xDC00]);
        let (text, map) = decode_surrogatepass(&bytes).expect("decodes");
        let map = map.expect("has surrogates");
        assert_eq!(text.chars().count(), 6);
        assert!(map.touches(&text));
        assert_eq!(map.restore(&text), bytes);
    }

    #[test]
    fn placeholders_avoid_characters_already_present() {
        let bytes = surrogatepass(&[0xF0000, 0xD800]);
        let (text, map) = decode_surrogatepass(&bytes).expect("decodes");
        let map = map.expect("has surrogates");
        assert_eq!(text.chars().next(), Some('\u{F0000}'));
        assert_ne!(text.chars().nth(1), Some('\u{F0000}'));
        assert_eq!(map.restore(&text), bytes);
    }

    #[test]
    fn invalid_bytes_are_an_error() {
        assert!(decode_surrogatepass(&[0x61, 0xFF]).is_err());
    }
}
