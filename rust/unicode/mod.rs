//! Character classes exactly as CPython 3.11 defines them.
//!
//! The reference implementation is Python: `str.strip`, `str.isprintable` and
//! the `re` classes `\s`, `\w`, `\d` follow the Unicode version bundled with the
//! interpreter (14.0.0), which differs from the one Rust's `char` methods use.
//! The tables are generated from CPython by `scripts/gen_unicode_tables.py`.

mod tables;

pub use tables::{
    DECIMAL as DECIMAL_RANGES, SPACE as SPACE_RANGES, UNICODE_VERSION, WORD as WORD_RANGES,
};

/// Whether `c` falls in one of the sorted, disjoint ranges of `table`.
pub(crate) fn in_table(table: &[(u32, u32)], c: char) -> bool {
    let cp = c as u32;
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                std::cmp::Ordering::Less
            } else if lo > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// `str.isspace()`, `re` `\s` and the characters `str.strip()` removes.
#[inline]
pub fn is_space(c: char) -> bool {
    if c.is_ascii() {
        matches!(c, '\t'..='\r' | '\x1c'..=' ')
    } else {
        in_table(tables::SPACE, c)
    }
}

/// `str.isprintable()`.
#[inline]
pub fn is_printable(c: char) -> bool {
    let cp = c as usize;
    if c.is_ascii() {
        (' '..='~').contains(&c)
    } else if let Some(word) = PRINTABLE_BMP.get(cp / 64) {
        word & (1 << (cp % 64)) != 0
    } else {
        in_table(tables::PRINTABLE, c)
    }
}

/// [`is_printable`] of each code point of the Basic Multilingual Plane, a
/// bit each (8 KiB): Markdown lines with non-ASCII text ask it of every
/// character, and a lookup costs less than a search of the table.
static PRINTABLE_BMP: std::sync::LazyLock<Box<[u64; 1024]>> = std::sync::LazyLock::new(|| {
    let mut bits = Box::new([0u64; 1024]);
    for &(lo, hi) in tables::PRINTABLE {
        for cp in lo..=hi.min(0xFFFF) {
            bits[cp as usize / 64] |= 1 << (cp % 64);
        }
    }
    bits
});

/// `re` `\w` for `str` patterns: `str.isalnum()` or `_`.
#[inline]
pub fn is_word(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        in_table(tables::WORD, c)
    }
}

/// `re` `\d` for `str` patterns: `str.isdecimal()`.
#[inline]
pub fn is_decimal(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_digit()
    } else {
        in_table(tables::DECIMAL, c)
    }
}

/// General category C*: control, format, surrogate, private use, unassigned.
#[inline]
pub fn is_other(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_control()
    } else {
        in_table(tables::OTHER, c)
    }
}

/// `str.strip()`: the slice without leading and trailing Python whitespace.
#[inline]
pub fn strip(s: &str) -> &str {
    strip_end(strip_start(s))
}

/// `str.lstrip()`.
#[inline]
pub fn strip_start(s: &str) -> &str {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            if !matches!(b, b'\t'..=b'\r' | 0x1c..=b' ') {
                return &s[i..];
            }
            i += 1;
        } else {
            let c = s[i..].chars().next().unwrap_or('\0');
            if !is_space(c) {
                return &s[i..];
            }
            i += c.len_utf8();
        }
    }
    ""
}

/// `str.rstrip()`.
#[inline]
pub fn strip_end(s: &str) -> &str {
    let bytes = s.as_bytes();
    let mut end = bytes.len();
    while end > 0 {
        let b = bytes[end - 1];
        if b < 0x80 {
            if !matches!(b, b'\t'..=b'\r' | 0x1c..=b' ') {
                return &s[..end];
            }
            end -= 1;
        } else {
            let c = s[..end].chars().next_back().unwrap_or('\0');
            if !is_space(c) {
                return &s[..end];
            }
            end -= c.len_utf8();
        }
    }
    ""
}

/// Whether `str.strip()` would leave nothing.
pub fn is_blank(s: &str) -> bool {
    strip_start(s).is_empty()
}

/// `len(s)` in Python: the number of code points.
#[inline]
pub fn char_len(s: &str) -> usize {
    // Count the bytes that do not continue a character. Summing each block
    // into a u8 lets the compiler use byte-wide SIMD adds; counting straight
    // into a usize widens every byte and runs several times slower.
    const BLOCK: usize = 128;
    let bytes = s.as_bytes();
    let mut blocks = bytes.chunks_exact(BLOCK);
    let mut total = 0usize;
    for block in blocks.by_ref() {
        let starts: u8 = block
            .iter()
            .map(|&b| u8::from((b as i8) >= -0x40))
            .fold(0, u8::wrapping_add);
        // A block of 128 bytes has at most 128 starts: no wrap-around.
        total += usize::from(starts);
    }
    total
        + blocks
            .remainder()
            .iter()
            .filter(|&&b| (b as i8) >= -0x40)
            .count()
}

/// Which classes a code point belongs to, as bits: 1 space, 2 printable,
/// 4 word, 8 decimal, 16 category C*. Lets the test suite compare every code
/// point with the running CPython.
pub fn class_bits(c: char) -> u8 {
    u8::from(is_space(c))
        | (u8::from(is_printable(c)) << 1)
        | (u8::from(is_word(c)) << 2)
        | (u8::from(is_decimal(c)) << 3)
        | (u8::from(is_other(c)) << 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_classes_match_python() {
        assert!(is_space(' ') && is_space('\n') && is_space('\x1f') && !is_space('a'));
        assert!(is_printable(' ') && !is_printable('\t') && !is_printable('\x7f'));
        assert!(is_word('_') && is_word('9') && !is_word('-'));
        assert!(is_decimal('0') && !is_decimal('a'));
    }

    #[test]
    fn non_ascii_classes_follow_unicode_14() {
        assert!(is_space('\u{a0}') && is_space('\u{3000}') && !is_space('\u{200b}'));
        assert!(!is_printable('\u{a0}') && !is_printable('\u{200b}') && is_printable('é'));
        assert!(is_word('é') && is_word('\u{0661}') && !is_word('\u{0301}'));
        assert!(is_decimal('\u{0661}') && !is_decimal('\u{00b2}'));
    }

    #[test]
    fn printable_bits_match_the_table() {
        for c in (0x80..0x1_0000).filter_map(char::from_u32) {
            assert_eq!(is_printable(c), in_table(tables::PRINTABLE, c), "{c:?}");
        }
    }

    #[test]
    fn strip_uses_python_whitespace() {
        assert_eq!(strip("\u{a0}\u{85} a b\u{2029}\x1c"), "a b");
        assert_eq!(strip("\u{200b}x"), "\u{200b}x");
        assert_eq!(strip(" \t\n"), "");
        assert!(is_blank("\u{3000}\n") && !is_blank(" .\n"));
    }

    #[test]
    fn char_len_counts_code_points() {
        assert_eq!(char_len(""), 0);
        assert_eq!(char_len("héllo ☃ 𝄞"), 9);
    }
}
