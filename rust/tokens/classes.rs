//! The character classes of tiktoken's split patterns, with the Unicode data
//! of the regex engine tiktoken 0.14.0 was built with.
//!
//! Python tiktoken 0.14.0 runs its patterns with fancy-regex 0.19 on
//! regex-syntax 0.8.11, whose tables are Unicode 16.0.0: characters assigned
//! in Unicode 16.0 (U+1C89, Garay U+10D40..) are letters to it, those of 17.0
//! (Sidetic U+10940.., CJK Extension J U+323B0..) are not. `tables.rs` is
//! generated from regex-syntax 0.8 (the same Unicode 16.0.0 data; see the
//! test `tables_are_regex_syntax_classes`, which regenerates it with
//! `FASTNOTEBOOK_REGEN_TOKEN_TABLES=1`), and the Python tests compare every
//! code point with the classes the installed tiktoken itself matches.

use std::sync::LazyLock;

use super::tables::CLASS_RANGES;

/// `\p{L}`
pub const LETTER: u8 = 1;
/// `\p{N}`
pub const NUMBER: u8 = 2;
/// `\s` (Unicode White_Space)
pub const SPACE: u8 = 4;
/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`: o200k_base's "upper" class.
pub const UPPER: u8 = 8;
/// `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`: o200k_base's "lower" class.
pub const LOWER: u8 = 16;

/// Code points per block of the two-level table.
const BLOCK: usize = 128;
const NUM_CODE_POINTS: usize = 0x11_0000;

/// Class bits of every code point: a two-level table built once from
/// [`CLASS_RANGES`] (deduplicated 128-code-point blocks, about 40 KB).
pub struct ClassTable {
    index: Vec<u16>,
    blocks: Vec<[u8; BLOCK]>,
}

static TABLE: LazyLock<ClassTable> = LazyLock::new(ClassTable::build);

/// The class bits of ASCII characters, as a constant.
static ASCII: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut i = 0;
    while i < CLASS_RANGES.len() {
        let (start, end, bits) = CLASS_RANGES[i];
        let mut c = start;
        while c <= end && c < 128 {
            t[c as usize] = bits;
            c += 1;
        }
        i += 1;
    }
    t
};

impl ClassTable {
    fn build() -> ClassTable {
        let mut flat = vec![0u8; NUM_CODE_POINTS];
        for &(start, end, bits) in CLASS_RANGES {
            for slot in &mut flat[start as usize..=end as usize] {
                *slot = bits;
            }
        }
        let mut index = Vec::with_capacity(NUM_CODE_POINTS / BLOCK);
        let mut blocks: Vec<[u8; BLOCK]> = Vec::new();
        let mut seen = std::collections::HashMap::new();
        for chunk in flat.chunks_exact(BLOCK) {
            let mut block = [0u8; BLOCK];
            block.copy_from_slice(chunk);
            let id = *seen.entry(block).or_insert_with(|| {
                blocks.push(block);
                blocks.len() - 1
            });
            index.push(id as u16);
        }
        ClassTable { index, blocks }
    }

    #[inline]
    fn of(&self, cp: u32) -> u8 {
        let cp = cp as usize;
        match self.index.get(cp / BLOCK) {
            Some(&b) => self.blocks[b as usize][cp % BLOCK],
            None => 0,
        }
    }
}

/// The table, built on first use.
#[inline]
pub fn table() -> &'static ClassTable {
    &TABLE
}

/// The class bits of a character.
#[inline]
pub fn of_char(c: char) -> u8 {
    let cp = c as u32;
    if cp < 128 {
        ASCII[cp as usize]
    } else {
        TABLE.of(cp)
    }
}

/// Class bits and byte length of the character starting at byte `i` of
/// `text` (valid UTF-8, `i` on a character boundary, `i < text.len()`).
#[inline(always)]
pub fn at(table: &ClassTable, text: &[u8], i: usize) -> (u8, usize) {
    let b0 = text[i];
    if b0 < 0x80 {
        return (ASCII[b0 as usize], 1);
    }
    let (cp, len) = decode_multibyte(text, i, b0);
    (table.of(cp), len)
}

/// The code point and byte length of the non-ASCII character at `i`.
#[inline(always)]
fn decode_multibyte(text: &[u8], i: usize, b0: u8) -> (u32, usize) {
    let cont = |k: usize| (text[i + k] & 0x3F) as u32;
    if b0 < 0xE0 {
        ((((b0 & 0x1F) as u32) << 6) | cont(1), 2)
    } else if b0 < 0xF0 {
        ((((b0 & 0x0F) as u32) << 12) | (cont(1) << 6) | cont(2), 3)
    } else {
        (
            (((b0 & 0x07) as u32) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3),
            4,
        )
    }
}

/// ASCII class bits (for the hot loops).
#[inline(always)]
pub fn ascii(b: u8) -> u8 {
    ASCII[(b & 0x7F) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex_syntax::hir::{Class, HirKind};

    fn class_ranges(pattern: &str) -> Vec<(u32, u32)> {
        let hir = regex_syntax::Parser::new()
            .parse(pattern)
            .expect("pattern parses");
        match hir.kind() {
            HirKind::Class(Class::Unicode(c)) => c
                .ranges()
                .iter()
                .map(|r| (r.start() as u32, r.end() as u32))
                .collect(),
            other => panic!("{pattern}: not a Unicode class: {other:?}"),
        }
    }

    /// The class bits as regex-syntax computes them, run-length encoded.
    fn generate() -> Vec<(u32, u32, u8)> {
        let classes = [
            (LETTER, r"\p{L}"),
            (NUMBER, r"\p{N}"),
            (SPACE, r"\s"),
            (UPPER, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
            (LOWER, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
        ];
        let mut flat = vec![0u8; NUM_CODE_POINTS];
        for (bit, pattern) in classes {
            for (start, end) in class_ranges(pattern) {
                for slot in &mut flat[start as usize..=end as usize] {
                    *slot |= bit;
                }
            }
        }
        let mut out: Vec<(u32, u32, u8)> = Vec::new();
        for (cp, &bits) in flat.iter().enumerate() {
            if bits == 0 {
                continue;
            }
            let cp = cp as u32;
            match out.last_mut() {
                Some(last) if last.2 == bits && last.1 + 1 == cp => last.1 = cp,
                _ => out.push((cp, cp, bits)),
            }
        }
        out
    }

    fn render(ranges: &[(u32, u32, u8)]) -> String {
        let mut s = String::from(
            "//! GENERATED by `FASTNOTEBOOK_REGEN_TOKEN_TABLES=1 cargo test --lib \
             tokens::classes` from\n//! regex-syntax's Unicode classes (Unicode 16.0.0). Do not edit.\n\
             //!\n//! `(first, last, bits)`: inclusive code point ranges with nonzero class bits\n\
             //! (see `classes.rs`); every other code point has none.\n\n\
             #[rustfmt::skip]\npub static CLASS_RANGES: &[(u32, u32, u8)] = &[\n",
        );
        for (a, b, bits) in ranges {
            s.push_str(&format!("    (0x{a:X}, 0x{b:X}, {bits}),\n"));
        }
        s.push_str("];\n");
        s
    }

    #[test]
    fn tables_are_regex_syntax_classes() {
        let generated = generate();
        if std::env::var_os("FASTNOTEBOOK_REGEN_TOKEN_TABLES").is_some() {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/rust/tokens/tables.rs");
            std::fs::write(path, render(&generated)).expect("write tables.rs");
        }
        assert!(
            generated.as_slice() == CLASS_RANGES,
            "rust/tokens/tables.rs is stale: rerun with FASTNOTEBOOK_REGEN_TOKEN_TABLES=1"
        );
    }

    #[test]
    fn lookup_matches_ranges() {
        let t = table();
        let mut expected = vec![0u8; NUM_CODE_POINTS];
        for &(a, b, bits) in CLASS_RANGES {
            for slot in &mut expected[a as usize..=b as usize] {
                *slot = bits;
            }
        }
        for (cp, &bits) in expected.iter().enumerate() {
            assert_eq!(t.of(cp as u32), bits, "U+{cp:04X}");
            if let Some(c) = char::from_u32(cp as u32) {
                assert_eq!(of_char(c), bits);
                let mut buf = [0u8; 4];
                let s = c.encode_utf8(&mut buf);
                assert_eq!(at(t, s.as_bytes(), 0), (bits, s.len()));
            }
        }
        assert!(t.blocks.len() < 1000, "{} blocks", t.blocks.len());
    }

    #[test]
    fn unicode_16_not_17() {
        // Unicode 16.0: CYRILLIC CAPITAL LETTER TJE, GARAY, GURUNG KHEMA.
        for c in ['\u{1C89}', '\u{10D50}', '\u{16100}'] {
            assert_ne!(of_char(c) & LETTER, 0, "{c:?}");
        }
        // Unicode 17.0: SIDETIC, TAI YO, CJK Extension J.
        for c in ['\u{10940}', '\u{1E6C0}', '\u{323B0}'] {
            assert_eq!(of_char(c), 0, "{c:?}");
        }
    }
}
