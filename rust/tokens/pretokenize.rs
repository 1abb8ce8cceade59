//! Hand-written equivalents of tiktoken's split patterns: the same pieces as
//! fancy-regex's `find_iter` over
//!
//! cl100k_base:
//! `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`
//!
//! o200k_base (A = `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`, B = `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`,
//! P = `[^\r\n\p{L}\p{N}]`, C = `(?i:'s|'t|'re|'ve|'m|'ll|'d)`):
//! `P?A*B+C?|P?A+B*C?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
//!
//! Each alternative is resolved as the backtracking engine resolves it
//! (leftmost-first: the first alternative that matches, each quantifier as
//! long as the rest still matches):
//! - `P?A*B+C?`: with the prefix if there is one, else without. `A*` takes the
//!   run of A; `B+` must then start at the last B character within that run
//!   or just after it (A and B share Lm, Lo and M), and runs on from there.
//! - `\s*[\r\n]+` (and cl100k's `\s*[\r\n]`): the whitespace run up to and
//!   including its last `\r` or `\n`.
//! - `\s+(?!\S)`: the whitespace run less its last character when a
//!   non-space follows (fails for a single character), all of it at the end.
//! - `\s++$`: the whitespace run when it reaches the end of the text.
//!
//! Every character starts some alternative (letters, numbers, whitespace, and
//! everything else in `[^\s\p{L}\p{N}]`), so the pieces tile the text.

use super::classes::{self, ClassTable, LETTER, LOWER, NUMBER, SPACE, UPPER};

#[inline(always)]
fn is_newline(b: u8) -> bool {
    b == b'\r' || b == b'\n'
}

/// Length of a contraction at `i`, or 0: o200k_base's
/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` and cl100k_base's `'(?i:[sdmt]|ll|ve|re)`
/// match the same strings. Case-insensitive as the regex crate folds: `s` also
/// matches U+017F LATIN SMALL LETTER LONG S; the other letters have no other
/// folds (see the test `contraction_folds_are_the_regex_crates`).
#[inline(always)]
fn contraction(b: &[u8], i: usize) -> usize {
    if b.get(i) != Some(&b'\'') {
        return 0;
    }
    // `| 0x20` maps only 'S'/'s' to 's' (and so on): other bytes that could
    // follow (UTF-8 lead bytes, >= 0x80) stay >= 0x80.
    let lower = |k: usize| b.get(i + k).map(|c| c | 0x20);
    match lower(1) {
        Some(b's') | Some(b't') | Some(b'm') | Some(b'd') => 2,
        Some(b'r') | Some(b'v') if lower(2) == Some(b'e') => 3,
        Some(b'l') if lower(2) == Some(b'l') => 3,
        // U+017F is C5 BF.
        _ if b.get(i + 1) == Some(&0xC5) && b.get(i + 2) == Some(&0xBF) => 3,
        _ => 0,
    }
}

/// Scans a run of characters with any of `bits` from `i`; returns its end.
#[inline(always)]
fn run(t: &ClassTable, b: &[u8], mut i: usize, bits: u8) -> usize {
    while i < b.len() {
        let (c, l) = classes::at(t, b, i);
        if c & bits == 0 {
            break;
        }
        i += l;
    }
    i
}

/// Scans a run of characters with none of `bits` from `i`.
#[inline(always)]
fn run_not(t: &ClassTable, b: &[u8], mut i: usize, bits: u8) -> usize {
    while i < b.len() {
        let (c, l) = classes::at(t, b, i);
        if c & bits != 0 {
            break;
        }
        i += l;
    }
    i
}

/// The whitespace run from `i`: (end, start of its last character, end of its
/// last `\r`/`\n` or 0 when none, number of characters is >= 2).
#[inline(always)]
fn space_run(t: &ClassTable, b: &[u8], i: usize) -> (usize, usize, usize, bool) {
    let mut p = i;
    let mut last = i;
    let mut nl_end = 0;
    while p < b.len() {
        let x = b[p];
        let (c, l) = if x < 0x80 {
            (classes::ascii(x), 1)
        } else {
            classes::at(t, b, p)
        };
        if c & SPACE == 0 {
            break;
        }
        if is_newline(x) {
            nl_end = p + 1;
        }
        last = p;
        p += l;
    }
    (p, last, nl_end, last > i)
}

/// `A*B+C?` from `s` (o200k_base's first alternative after its prefix).
#[inline(always)]
fn o200k_upper_lower(t: &ClassTable, b: &[u8], s: usize) -> Option<usize> {
    // A*: the run of A, remembering the last B inside it.
    let mut p = s;
    let mut last_b = None;
    while p < b.len() {
        let (c, l) = classes::at(t, b, p);
        if c & UPPER == 0 {
            // B+ can start right here (an Ll character)?
            if c & LOWER != 0 {
                let k = run(t, b, p + l, LOWER);
                return Some(k + contraction(b, k));
            }
            break;
        }
        if c & LOWER != 0 {
            last_b = Some(p + l);
        }
        p += l;
    }
    // Backtrack A* to the last B of the run: B+ is that one character (the
    // rest of the run is Lu/Lt, and what follows is not B).
    let k = last_b?;
    Some(k + contraction(b, k))
}

/// `A+B*C?` from `s`.
#[inline(always)]
fn o200k_upper_then_lower(t: &ClassTable, b: &[u8], s: usize) -> Option<usize> {
    let j = run(t, b, s, UPPER);
    if j == s {
        return None;
    }
    let k = run(t, b, j, LOWER);
    Some(k + contraction(b, k))
}

const HIGH: u64 = 0x8080_8080_8080_8080;
const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
const BYTES: usize = 8;

/// The high bit of each byte of `x` (8 bytes, little-endian) that is not in
/// `a..=z`. On the low 7 bits `y` of a byte, `y + 0x1F` reaches 0x80 exactly
/// when `y >= b'a'` and `y + 0x05` exactly when `y > b'z'`, and neither sum
/// carries into the next byte (`y <= 0x7F`); a byte with its own high bit set
/// is not ASCII, so not a letter.
#[inline(always)]
fn not_lower_mask(x: u64) -> u64 {
    let y = x & LOW7;
    let at_least_a = y.wrapping_add(0x1F1F_1F1F_1F1F_1F1F);
    let above_z = y.wrapping_add(0x0505_0505_0505_0505);
    !(at_least_a & !above_z & !x) & HIGH
}

/// End of the run of bytes from `j` for which `not_mask` has no high bit,
/// eight at a time: a word ends with one computed position instead of a
/// byte loop whose exit the branch predictor misses once a word (the
/// pre-tokenizer's largest cost on ASCII text).
#[inline(always)]
fn swar_run(
    b: &[u8],
    mut j: usize,
    not_mask: impl Fn(u64) -> u64,
    byte: impl Fn(u8) -> bool,
) -> usize {
    while let Some(w) = b.get(j..j + BYTES) {
        let mut buf = [0u8; BYTES];
        buf.copy_from_slice(w);
        let m = not_mask(u64::from_le_bytes(buf));
        if m != 0 {
            return j + (m.trailing_zeros() / 8) as usize;
        }
        j += BYTES;
    }
    while j < b.len() && byte(b[j]) {
        j += 1;
    }
    j
}

/// End of the run of `[a-z]` from `j`.
#[inline(always)]
pub(crate) fn ascii_lower_run(b: &[u8], j: usize) -> usize {
    swar_run(b, j, not_lower_mask, |c| c.is_ascii_lowercase())
}

/// End of the run of `[A-Za-z]` from `j`: setting bit 5 maps `A..=Z` onto
/// `a..=z` and no other byte into it (`@`, `[`..`^` land on `` ` ``, `{`..`~`).
#[inline(always)]
pub(crate) fn ascii_alpha_run(b: &[u8], j: usize) -> usize {
    swar_run(
        b,
        j,
        |x| not_lower_mask(x | 0x2020_2020_2020_2020),
        |c| c.is_ascii_alphabetic(),
    )
}

/// `A*B+C?|A+B*C?` from `s` (an ASCII letter) when the word is ASCII: the
/// run of `[A-Z]`, then the run of `[a-z]` (ASCII upper-case letters are not
/// B, so `B+` can only start after the upper-case run), then a contraction.
/// None when a non-ASCII byte ends either run: it may be A or B, and the
/// general path decides.
#[inline(always)]
fn o200k_ascii_word(b: &[u8], s: usize) -> Option<usize> {
    let mut j = s;
    while j < b.len() && b[j].is_ascii_uppercase() {
        j += 1;
    }
    let j = ascii_lower_run(b, j);
    if j < b.len() && b[j] >= 0x80 {
        return None;
    }
    Some(j + contraction(b, j))
}

/// `\p{N}{1,3}` from `s` (an ASCII digit) when the digits are ASCII; None
/// when a non-ASCII byte (perhaps a number) follows within three characters.
#[inline(always)]
fn ascii_digits(b: &[u8], s: usize) -> Option<usize> {
    let mut e = s + 1;
    while e < b.len() && e < s + 3 && b[e].is_ascii_digit() {
        e += 1;
    }
    if e < s + 3 && e < b.len() && b[e] >= 0x80 {
        return None;
    }
    Some(e)
}

/// End of the o200k_base piece that starts at `i < b.len()`.
#[inline(always)]
pub fn o200k_next(t: &ClassTable, b: &[u8], i: usize) -> usize {
    let x = b[i];
    // Fast paths for ASCII starts.
    if x < 0x80 {
        let c = classes::ascii(x);
        if c & LETTER != 0 {
            // Letters: alternative 1 (or 2 when no lower-case letter follows).
            if let Some(e) = o200k_ascii_word(b, i) {
                return e;
            }
            if let Some(e) = o200k_upper_lower(t, b, i) {
                return e;
            }
            if let Some(e) = o200k_upper_then_lower(t, b, i) {
                return e;
            }
        }
        if c & NUMBER != 0
            && let Some(e) = ascii_digits(b, i)
        {
            return e;
        }
        // The next character, if ASCII (0xFF: non-ASCII or none).
        let y = match b.get(i + 1) {
            Some(&y) if y < 0x80 => y,
            Some(_) => return o200k_general(t, b, i),
            None => 0xFF,
        };
        let cy = if y < 0x80 { classes::ascii(y) } else { 0 };
        if c & (LETTER | NUMBER | SPACE) == 0 {
            // Punctuation: a prefix only if a letter follows, else
            // `[^\s\p{L}\p{N}]+[\r\n/]*`.
            if cy & LETTER != 0 {
                return o200k_prefixed(t, b, i, 1);
            }
            return o200k_punct(t, b, i);
        }
        if c & SPACE != 0 {
            if cy & LETTER != 0 && !is_newline(x) {
                return o200k_prefixed(t, b, i, 1);
            }
            if x == b' ' && y != 0xFF && cy & (SPACE | NUMBER | LETTER) == 0 {
                // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`, with the space.
                return o200k_punct(t, b, i + 1);
            }
            if cy & LETTER == 0 {
                return o200k_spaces(t, b, i);
            }
        }
    }
    o200k_general(t, b, i)
}

/// `\s*[\r\n]+|\s+(?!\S)|\s+` from `i`.
#[inline(always)]
fn o200k_spaces(t: &ClassTable, b: &[u8], i: usize) -> usize {
    let (end, last, nl_end, several) = space_run(t, b, i);
    if nl_end != 0 {
        nl_end
    } else if end == b.len() || !several {
        end
    } else {
        last
    }
}

/// `P?A*B+C?|P?A+B*C?` with the prefix `P` of length `pl` at `i` known to be
/// followed by an ASCII letter, so one of them matches.
#[inline(always)]
fn o200k_prefixed(t: &ClassTable, b: &[u8], i: usize, pl: usize) -> usize {
    if let Some(e) = o200k_ascii_word(b, i + pl) {
        return e;
    }
    if let Some(e) = o200k_upper_lower(t, b, i + pl) {
        return e;
    }
    match o200k_upper_then_lower(t, b, i + pl) {
        Some(e) => e,
        None => o200k_general(t, b, i),
    }
}

/// `[^\s\p{L}\p{N}]+[\r\n/]*` from `s`.
#[inline(always)]
fn o200k_punct(t: &ClassTable, b: &[u8], s: usize) -> usize {
    let mut e = run_not(t, b, s, SPACE | LETTER | NUMBER);
    while e < b.len() && (is_newline(b[e]) || b[e] == b'/') {
        e += 1;
    }
    e
}

fn o200k_general(t: &ClassTable, b: &[u8], i: usize) -> usize {
    let (c0, l0) = classes::at(t, b, i);
    let prefix = c0 & (LETTER | NUMBER) == 0 && !is_newline(b[i]);
    if prefix && let Some(e) = o200k_upper_lower(t, b, i + l0) {
        return e;
    }
    if c0 & (UPPER | LOWER) != 0
        && let Some(e) = o200k_upper_lower(t, b, i)
    {
        return e;
    }
    if prefix && let Some(e) = o200k_upper_then_lower(t, b, i + l0) {
        return e;
    }
    if c0 & UPPER != 0
        && let Some(e) = o200k_upper_then_lower(t, b, i)
    {
        return e;
    }
    if c0 & NUMBER != 0 {
        // \p{N}{1,3}
        let mut e = i + l0;
        for _ in 0..2 {
            if e >= b.len() {
                break;
            }
            let (c, l) = classes::at(t, b, e);
            if c & NUMBER == 0 {
                break;
            }
            e += l;
        }
        return e;
    }
    if c0 & SPACE == 0 {
        // Not a letter, number or space: ` ?[^\s\p{L}\p{N}]+[\r\n/]*`.
        return o200k_punct(t, b, i);
    }
    if b[i] == b' ' && i + 1 < b.len() {
        let (c1, _) = classes::at(t, b, i + 1);
        if c1 & (SPACE | LETTER | NUMBER) == 0 {
            return o200k_punct(t, b, i + 1);
        }
    }
    o200k_spaces(t, b, i)
}

/// The run of letters (`\p{L}`) from `i`, ASCII ones first.
#[inline(always)]
fn letters(t: &ClassTable, b: &[u8], i: usize) -> usize {
    let j = ascii_alpha_run(b, i);
    if j < b.len() && b[j] >= 0x80 {
        run(t, b, j, LETTER)
    } else {
        j
    }
}

/// End of the cl100k_base piece that starts at `i < b.len()`.
#[inline(always)]
pub fn cl100k_next(t: &ClassTable, b: &[u8], i: usize) -> usize {
    let x = b[i];
    if x < 0x80 {
        let c = classes::ascii(x);
        if c & LETTER != 0 {
            return letters(t, b, i + 1);
        }
        if c & NUMBER != 0
            && let Some(e) = ascii_digits(b, i)
        {
            return e;
        }
        let y = match b.get(i + 1) {
            Some(&y) if y < 0x80 => y,
            Some(_) => return cl100k_general(t, b, i),
            None => 0xFF,
        };
        let cy = if y < 0x80 { classes::ascii(y) } else { 0 };
        if c & (LETTER | NUMBER | SPACE) == 0 && x != b'\'' {
            // Punctuation: a prefix only if a letter follows.
            if cy & LETTER != 0 {
                return letters(t, b, i + 2);
            }
            return cl100k_punct(t, b, i);
        }
        if c & SPACE != 0 {
            if cy & LETTER != 0 && !is_newline(x) {
                return letters(t, b, i + 2);
            }
            if x == b' ' && y != 0xFF && cy & (SPACE | NUMBER | LETTER) == 0 {
                return cl100k_punct(t, b, i + 1);
            }
            if cy & LETTER == 0 {
                return cl100k_spaces(t, b, i);
            }
        }
    }
    cl100k_general(t, b, i)
}

/// `\s++$|\s*[\r\n]|\s+(?!\S)|\s` from `i`.
#[inline(always)]
fn cl100k_spaces(t: &ClassTable, b: &[u8], i: usize) -> usize {
    let (end, last, nl_end, several) = space_run(t, b, i);
    if end == b.len() {
        end
    } else if nl_end != 0 {
        nl_end
    } else if several {
        last
    } else {
        end
    }
}

/// `[^\s\p{L}\p{N}]++[\r\n]*+` from `s`.
#[inline(always)]
fn cl100k_punct(t: &ClassTable, b: &[u8], s: usize) -> usize {
    let mut e = run_not(t, b, s, SPACE | LETTER | NUMBER);
    while e < b.len() && is_newline(b[e]) {
        e += 1;
    }
    e
}

fn cl100k_general(t: &ClassTable, b: &[u8], i: usize) -> usize {
    if b[i] == b'\'' {
        let k = contraction(b, i);
        if k != 0 {
            return i + k;
        }
    }
    let (c0, l0) = classes::at(t, b, i);
    if c0 & LETTER != 0 {
        return run(t, b, i + l0, LETTER);
    }
    if c0 & NUMBER == 0 && !is_newline(b[i]) && i + l0 < b.len() {
        let (c1, l1) = classes::at(t, b, i + l0);
        if c1 & LETTER != 0 {
            return run(t, b, i + l0 + l1, LETTER);
        }
    }
    if c0 & NUMBER != 0 {
        let mut e = i + l0;
        for _ in 0..2 {
            if e >= b.len() {
                break;
            }
            let (c, l) = classes::at(t, b, e);
            if c & NUMBER == 0 {
                break;
            }
            e += l;
        }
        return e;
    }
    if c0 & SPACE == 0 {
        return cl100k_punct(t, b, i);
    }
    if b[i] == b' ' && i + 1 < b.len() {
        let (c1, _) = classes::at(t, b, i + 1);
        if c1 & (SPACE | LETTER | NUMBER) == 0 {
            return cl100k_punct(t, b, i + 1);
        }
    }
    cl100k_spaces(t, b, i)
}

/// Calls `f` with each piece of `text`, left to right.
#[inline(always)]
pub fn for_each_piece(
    next: impl Fn(&ClassTable, &[u8], usize) -> usize,
    text: &str,
    mut f: impl FnMut(&[u8]),
) {
    let t = classes::table();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let e = next(t, b, i);
        debug_assert!(e > i && text.is_char_boundary(e));
        f(&b[i..e]);
        i = e;
    }
}

#[cfg(test)]
mod swar_tests {
    use super::*;

    /// Every byte value at every position of a word of 8 bytes and of the
    /// tail after it: the SWAR runs end where the byte loops end.
    #[test]
    fn swar_runs_are_the_byte_loops() {
        let lower = |b: &[u8], j: usize| {
            (j..b.len())
                .find(|&k| !b[k].is_ascii_lowercase())
                .unwrap_or(b.len())
        };
        let alpha = |b: &[u8], j: usize| {
            (j..b.len())
                .find(|&k| !b[k].is_ascii_alphabetic())
                .unwrap_or(b.len())
        };
        for len in 0..20 {
            for at in 0..len {
                for x in 0..=255u8 {
                    let mut b = vec![b'q'; len];
                    b[at] = x;
                    if at > 0 {
                        b[at - 1] = b'Q';
                    }
                    for j in 0..=len {
                        assert_eq!(ascii_lower_run(&b, j), lower(&b, j), "{b:?} {j}");
                        assert_eq!(ascii_alpha_run(&b, j), alpha(&b, j), "{b:?} {j}");
                    }
                }
            }
        }
    }
}
