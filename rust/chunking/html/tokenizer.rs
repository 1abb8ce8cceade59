//! Python 3.11.7's `html.parser.HTMLParser` as BeautifulSoup drives it
//! (`convert_charrefs=False`, `feed()` then `close()`), with BeautifulSoup's
//! handlers for character and entity references folded in.
//!
//! The tokenizer walks the input once, calling a [`Sink`] with the events
//! `BeautifulSoupHTMLParser` would forward to the tree builder. Every regular
//! expression of `html.parser` and `_markupbase` that can decide where a
//! construct ends is re-implemented by hand with the backtracking order of
//! Python's `re`, including `\s` as Unicode whitespace and `[a-zA-Z]` as
//! ASCII. The two passes of the original (`goahead(0)` from `feed`, then
//! `goahead(1)` from `close` on what the first left) are kept as they are,
//! because they differ: the first stops at the first incomplete construct,
//! the second turns it into text.
//!
//! Linear time. `html.parser` searches forward from each construct, which is
//! quadratic on inputs like `<a<a<a...` or `<a b='<a b='...` once a
//! construct fails and the parser resumes inside it. Here:
//! - a failed search is remembered (no `>` after `p` means none after any
//!   later position either), and the tag-name scan remembers its last answer;
//! - in the first pass, a construct either fails (ending the pass) or is
//!   consumed whole, so nothing else is ever scanned twice;
//! - in the second pass, where the parser resumes inside failed start tags,
//!   the end of the attribute loop of each failed tag is memoised by the
//!   position of each of its attributes (the loop from a given position
//!   always ends at the same place), and the long scans inside attributes
//!   (names, values, runs of spaces) keep the stretches already found free
//!   of their stop characters, so no stretch is scanned twice;
//! - the one-pass readers of simple tags, tried first at each `<`, read at
//!   most [`SIMPLE_TAG_MAX`] bytes (start tags) or stop at the first byte
//!   that is no name byte or space (end tags, whose run ends at the next
//!   `<`).

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use memchr::{memchr, memchr2};

use crate::error::{Error, Result};
use crate::unicode;

use super::casing::{CASE_IGNORABLE, CASED};
use super::entities::{NAMED, WINDOWS_1252};

/// The events of `BeautifulSoupHTMLParser`, as the tree builder sees them.
pub(crate) trait Sink {
    /// `handle_data`: text, merged with adjacent text until the next event.
    fn data(&mut self, text: &str);
    /// `handle_data` for `text`, the bytes `from..to` of the source.
    fn source_data(&mut self, from: usize, to: usize, text: &str) {
        let _ = (from, to);
        self.data(text);
    }
    /// A start tag (name lowercased); `self_closing` for `<tag/>`.
    fn start_tag(&mut self, name: &str, self_closing: bool);
    /// An end tag (name lowercased).
    fn end_tag(&mut self, name: &str);
    /// A comment, declaration, doctype, processing instruction or CDATA
    /// section: a string of its own.
    fn special(&mut self, text: &str);
}

/// FxHash (rustc's hasher): fast for the small keys used here.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher(u64);

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// The little-endian integer of at most 8 bytes, zero-padded: the value of
/// `u64::from_le_bytes` on the bytes copied into a zeroed `[u8; 8]`.
///
/// Built in a register: copying a short slice into a stack word and reading
/// the word back makes the CPU wait for the narrow stores to land (a failed
/// store-to-load forwarding), which the profile of HTML chunking showed as
/// half the time of interning tag names.
#[inline(always)]
pub(crate) fn load_le(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .take(8)
        .enumerate()
        .fold(0, |word, (i, &b)| word | u64::from(b) << (8 * i))
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            self.add(load_le(rest) ^ ((rest.len() as u64) << 59));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) type FxBuild = BuildHasherDefault<FxHasher>;

/// Positions to positions, for the attribute-loop memo: a hash map while
/// small, then (pathological inputs with a great many failed tags) an array
/// over the input, which keeps lookups cheap and local.
enum Memo {
    Sparse(HashMap<usize, usize, FxBuild>),
    Dense(Vec<u32>),
}

impl Memo {
    const ABSENT: u32 = u32::MAX;

    #[inline]
    fn get(&self, p: usize) -> Option<usize> {
        match self {
            Memo::Sparse(map) if map.is_empty() => None,
            Memo::Sparse(map) => map.get(&p).copied(),
            Memo::Dense(v) => v
                .get(p)
                .filter(|&&e| e != Self::ABSENT)
                .map(|&e| e as usize),
        }
    }

    /// `n`: the input length (positions are at most `n < u32::MAX`).
    fn insert(&mut self, p: usize, end: usize, n: usize) {
        if let Memo::Sparse(map) = self
            && map.len() >= 1024 + n / 32
        {
            let mut dense = vec![Self::ABSENT; n + 1];
            for (&k, &e) in map.iter() {
                if let Some(slot) = dense.get_mut(k) {
                    *slot = e as u32;
                }
            }
            *self = Memo::Dense(dense);
        }
        match self {
            Memo::Sparse(map) => {
                map.insert(p, end);
            }
            Memo::Dense(v) => {
                if let Some(slot) = v.get_mut(p) {
                    *slot = end as u32;
                }
            }
        }
    }
}

/// Where a construct starting with `<` ended, or that it is incomplete
/// (`-1` in `html.parser`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Parsed {
    At(usize),
    Incomplete,
}

/// The element whose content is raw text (`set_cdata_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cdata {
    Script,
    Style,
}

impl Cdata {
    fn name(self) -> &'static str {
        match self {
            Cdata::Script => "script",
            Cdata::Style => "style",
        }
    }
}

/// The character classes scanned inside start tags; each stops at the
/// first character of the named kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scan {
    /// `>` or `\s` (end of `[^>\s]*`).
    Bare,
    /// `\s`, `/`, `=` or `>` (end of `[^\s/=>]*`).
    AttrName,
    /// Not `\s` (end of `\s*`).
    NotSpace,
    /// Neither `\s` nor a `/` not followed by `>` (end of `(?:\s|/(?!>))*`).
    NotSpaceLoneSlash,
    /// Not `=` (end of `=+`).
    NotEq,
    SQuote,
    DQuote,
}

const SCANS: usize = 7;

/// Scans in the second pass shorter than this are not cached.
const SHORT_SCAN: usize = 256;

/// Byte classes: ASCII `\s`, `>`, `/`, `=`, and the lead bytes of the
/// non-ASCII characters that may be `\s` (U+0085, U+00A0, U+1680,
/// U+2000-U+205F, U+3000).
const C_SPACE: u8 = 1;
const C_GT: u8 = 2;
const C_SLASH: u8 = 4;
const C_EQ: u8 = 8;
const C_MAYBE_SPACE: u8 = 16;

const fn class_table() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 0x80 {
        if matches!(c as u8, b'\t'..=b'\r' | 0x1c..=b' ') {
            t[c] = C_SPACE;
        }
        c += 1;
    }
    t[b'>' as usize] = C_GT;
    t[b'/' as usize] = C_SLASH;
    t[b'=' as usize] = C_EQ;
    t[0xc2] = C_MAYBE_SPACE;
    t[0xe1] = C_MAYBE_SPACE;
    t[0xe2] = C_MAYBE_SPACE;
    t[0xe3] = C_MAYBE_SPACE;
    t
}
static CLASS: [u8; 256] = class_table();

/// Characters that end a tag name (`[^\t\n\r\f />\x00]*`).
const fn name_stop_table() -> [bool; 256] {
    let mut t = [false; 256];
    t[b'\t' as usize] = true;
    t[b'\n' as usize] = true;
    t[b'\r' as usize] = true;
    t[0x0c] = true;
    t[b' ' as usize] = true;
    t[b'/' as usize] = true;
    t[b'>' as usize] = true;
    t[0] = true;
    t
}
static NAME_STOP: [bool; 256] = name_stop_table();

/// Byte classes of the simple start tags [`Tokenizer::simple_starttag`]
/// reads: ASCII only, so that no `\s` outside ASCII and no `<` or `&` can
/// change where the general rules end the tag.
/// `[A-Za-z0-9_:.-]`: a tag name byte that is no name stop.
const F_NAME: u8 = 1;
/// `[ \t\n\r\f]`: both `\s` and a name stop.
const F_WS: u8 = 2;
/// Printable ASCII but `"'<>/=&`: an attribute name byte (`[^\s/=>]`).
const F_ATTR: u8 = 4;
/// Printable ASCII but `"'<>&`: a bare value byte (`[^>\s]`).
const F_VALUE: u8 = 8;
/// `[A-Z]`: a name with none is its own lowercase.
const F_UPPER: u8 = 16;

const fn simple_tag_table() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut c = 0x21;
    while c < 0x7f {
        t[c] = match c as u8 {
            b'"' | b'\'' | b'<' | b'>' | b'&' => 0,
            b'/' | b'=' => F_VALUE,
            b'A'..=b'Z' => F_NAME | F_ATTR | F_VALUE | F_UPPER,
            b'a'..=b'z' | b'0'..=b'9' | b'_' | b':' | b'.' | b'-' => F_NAME | F_ATTR | F_VALUE,
            _ => F_ATTR | F_VALUE,
        };
        c += 1;
    }
    t[b' ' as usize] = F_WS;
    t[b'\t' as usize] = F_WS;
    t[b'\n' as usize] = F_WS;
    t[b'\r' as usize] = F_WS;
    t[0x0c] = F_WS;
    t
}
static SIMPLE: [u8; 256] = simple_tag_table();

/// The longest start tag [`Tokenizer::simple_starttag`] reads, `<` to `>`:
/// it bounds the work of each attempt (one per `<`), so that failed attempts
/// cost a constant each and the tokenizer stays linear.
const SIMPLE_TAG_MAX: usize = 1024;

/// What a start tag at `<` turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StartTag {
    /// A tag: its name ends at `name_end`, the tag at `endpos`.
    Tag {
        name_end: usize,
        endpos: usize,
        self_closing: bool,
    },
    /// Not a tag after all: text up to `endpos`.
    Text(usize),
    Incomplete,
}

/// The first `x` or `y` in `b` from `from` on (the same answer as
/// `memchr2`).
///
/// Why: the text between two tags and a quoted attribute value are mostly a
/// few bytes long, where `memchr2`'s call and set-up cost more than the
/// search (6% of the samples of HTML chunking went to it). The first 32
/// bytes are looked at inline, two SSE2 compares each 16; `memchr2` only
/// for what lies beyond. `find2_is_memchr2` checks the equality.
#[inline(always)]
fn find2(b: &[u8], from: usize, x: u8, y: u8) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(block) = b.get(from..).and_then(|rest| rest.first_chunk::<32>()) {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86_64; the two unaligned loads read the
        // 32 bytes of `block`.
        let mask = unsafe {
            let (vx, vy) = (_mm_set1_epi8(x as i8), _mm_set1_epi8(y as i8));
            let hits = |v: __m128i| _mm_or_si128(_mm_cmpeq_epi8(v, vx), _mm_cmpeq_epi8(v, vy));
            let lo = hits(_mm_loadu_si128(block.as_ptr().cast()));
            let hi = hits(_mm_loadu_si128(block.as_ptr().add(16).cast()));
            (_mm_movemask_epi8(lo) as u32) | ((_mm_movemask_epi8(hi) as u32) << 16)
        };
        if mask != 0 {
            return Some(from + mask.trailing_zeros() as usize);
        }
        let rest = from + 32;
        return memchr2(x, y, &b[rest..]).map(|o| rest + o);
    }
    b.get(from..)
        .and_then(|rest| memchr2(x, y, rest))
        .map(|o| from + o)
}

#[inline]
fn is_ascii_space(b: u8) -> bool {
    matches!(b, b'\t'..=b'\r' | 0x1c..=b' ')
}

/// A search whose failure is remembered: if nothing is found from `p`,
/// nothing is found from any later position.
#[derive(Clone, Copy, Debug)]
struct NoneFrom(usize);

impl NoneFrom {
    fn new() -> Self {
        NoneFrom(usize::MAX)
    }
    #[inline]
    fn known_absent(self, from: usize) -> bool {
        from >= self.0
    }
    #[inline]
    fn record_absent(&mut self, from: usize) {
        self.0 = self.0.min(from);
    }
}

pub(crate) struct Tokenizer<'a, S: Sink> {
    src: &'a str,
    b: &'a [u8],
    pub(crate) sink: S,
    cdata: Option<Cdata>,
    /// Second pass (`close()`), where incomplete constructs become text.
    end: bool,
    gt: NoneFrom,
    squote: NoneFrom,
    dquote: NoneFrom,
    comment_close: NoneFrom,
    marked_close: NoneFrom,
    ms_marked_close: NoneFrom,
    /// Second pass only: attribute start -> end of the attribute loop.
    memo: Memo,
    /// Second pass only, by [`Scan`]: start -> first stop, with no stop in
    /// between.
    scans: [BTreeMap<usize, usize>; SCANS],
    visited: Vec<usize>,
    /// Last `name_end` query: no name stop in `from..to`, one at `to`.
    name_cache: (usize, usize),
    /// Last `[\s/]*` after a tag name: (name end, where it stops).
    attrs_cache: (usize, usize),
    name_buf: String,
    /// Tests only: every start tag by the general rules, to compare.
    #[cfg(test)]
    general_only: bool,
}

impl<'a, S: Sink> Tokenizer<'a, S> {
    pub(crate) fn new(src: &'a str, sink: S) -> Self {
        Tokenizer {
            src,
            b: src.as_bytes(),
            sink,
            cdata: None,
            end: false,
            gt: NoneFrom::new(),
            squote: NoneFrom::new(),
            dquote: NoneFrom::new(),
            comment_close: NoneFrom::new(),
            marked_close: NoneFrom::new(),
            ms_marked_close: NoneFrom::new(),
            memo: Memo::Sparse(HashMap::default()),
            scans: Default::default(),
            visited: Vec::new(),
            name_cache: (usize::MAX, 0),
            attrs_cache: (usize::MAX, 0),
            name_buf: String::new(),
            #[cfg(test)]
            general_only: false,
        }
    }

    /// `feed(text)` then `close()`.
    pub(crate) fn run(&mut self) -> Result<()> {
        let n = self.b.len();
        let mut i = 0;
        self.goahead(&mut i)?;
        // close(): goahead(1) on what the first pass left.
        self.end = true;
        self.goahead(&mut i)?;
        if i < n && self.cdata.is_none() {
            self.data(i, n);
        }
        Ok(())
    }

    #[inline]
    fn data(&mut self, from: usize, to: usize) {
        debug_assert!(self.src.is_char_boundary(from) && self.src.is_char_boundary(to));
        if let Some(text) = self.src.get(from..to) {
            self.sink.source_data(from, to, text);
        }
    }

    #[inline]
    fn data_char(&mut self, c: char) {
        let mut buf = [0u8; 4];
        let s = c.encode_utf8(&mut buf);
        self.sink.data(s);
    }

    /// The character at byte `p` (a character boundary), if any.
    #[inline]
    fn char_at(&self, p: usize) -> Option<char> {
        self.src.get(p..).and_then(|s| s.chars().next())
    }

    /// Length in bytes of the `\s` character at `p`, 0 if there is none.
    #[inline]
    fn space_len(&self, p: usize) -> usize {
        match self.b.get(p) {
            None => 0,
            Some(&c) if c < 0x80 => usize::from(is_ascii_space(c)),
            Some(_) => match self.char_at(p) {
                Some(ch) if unicode::is_space(ch) => ch.len_utf8(),
                _ => 0,
            },
        }
    }

    /// `\s*` from `p`.
    #[inline]
    fn skip_space(&self, p: usize) -> usize {
        self.scan(Scan::NotSpace, p, self.b.len())
    }

    /// Length of the character starting at `p` (1 past the end).
    #[inline]
    fn char_len(&self, p: usize) -> usize {
        match self.b.get(p) {
            Some(&c) if c >= 0xf0 => 4,
            Some(&c) if c >= 0xe0 => 3,
            Some(&c) if c >= 0xc0 => 2,
            _ => 1,
        }
    }

    /// Whether the character before `p` is in `['"\s/]`.
    #[inline]
    fn lookbehind_ok(&self, p: usize) -> bool {
        if p == 0 {
            return false;
        }
        let c = self.b[p - 1];
        if c < 0x80 {
            return matches!(c, b'\'' | b'"' | b'/') || is_ascii_space(c);
        }
        self.src
            .get(..p)
            .and_then(|s| s.chars().next_back())
            .is_some_and(unicode::is_space)
    }

    /// Next `byte` at or after `from`, remembering failures.
    #[inline]
    fn find_cached(b: &[u8], byte: u8, from: usize, cache: &mut NoneFrom) -> Option<usize> {
        if cache.known_absent(from) {
            return None;
        }
        match b.get(from..).and_then(|rest| memchr(byte, rest)) {
            Some(o) => Some(from + o),
            None => {
                cache.record_absent(from);
                None
            }
        }
    }

    #[inline]
    fn find_gt(&mut self, from: usize) -> Option<usize> {
        Self::find_cached(self.b, b'>', from, &mut self.gt)
    }

    // ---------------------------------------------------------------- goahead

    /// One `goahead` pass from `*i`; returns at `break` or at the end.
    fn goahead(&mut self, i: &mut usize) -> Result<()> {
        let b = self.b;
        let n = b.len();
        while *i < n {
            let j = match self.cdata {
                Some(cd) => match self.find_cdata_end(*i, cd) {
                    Some(j) => j,
                    None => break,
                },
                None => find2(b, *i, b'<', b'&').unwrap_or(n),
            };
            if *i < j {
                self.data(*i, j);
            }
            *i = j;
            if j == n {
                break;
            }
            if b[j] == b'<' {
                let next = b.get(j + 1).copied();
                let parsed = match next {
                    Some(c) if c.is_ascii_alphabetic() => self.parse_starttag(j),
                    Some(b'/') => self.parse_endtag(j),
                    Some(b'!') if b[j..].starts_with(b"<!--") => self.parse_comment(j),
                    Some(b'?') => self.parse_pi(j),
                    Some(b'!') => self.parse_html_declaration(j)?,
                    Some(_) => {
                        self.sink.data("<");
                        Parsed::At(j + 1)
                    }
                    None => break,
                };
                *i = match parsed {
                    Parsed::At(k) => k,
                    Parsed::Incomplete => {
                        if !self.end {
                            break;
                        }
                        let k = match self.find_gt(j + 1) {
                            Some(g) => g + 1,
                            None => memchr(b'<', &b[j + 1..]).map_or(j + 1, |o| j + 1 + o),
                        };
                        self.data(j, k);
                        k
                    }
                };
            } else if b.get(j + 1) == Some(&b'#') {
                match self.charref_at(j) {
                    Some((name_end, k)) => {
                        self.handle_charref(j + 2, name_end)?;
                        *i = k;
                    }
                    None => {
                        if memchr(b';', &b[j..]).is_some() {
                            self.sink.data("&#");
                            *i = j + 2;
                        }
                        break;
                    }
                }
            } else if let Some((name_end, k)) = self.entityref_at(j) {
                self.handle_entityref(j + 1, name_end);
                *i = k;
            } else if b.get(j + 1).is_some_and(u8::is_ascii_alphabetic) {
                // `incomplete` matched: in the second pass, `&x` as the
                // whole remainder loses its `&`.
                if self.end && j + 2 == n {
                    *i = j + 1;
                }
                break;
            } else if j + 1 < n {
                self.sink.data("&");
                *i = j + 1;
            } else {
                break;
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------ references

    /// `charref` at `j` (`&#` there): end of the name and where to go on.
    fn charref_at(&self, j: usize) -> Option<(usize, usize)> {
        let b = self.b;
        let p = j + 2;
        let mut q = p;
        while b.get(q).is_some_and(u8::is_ascii_digit) {
            q += 1;
        }
        if q == p {
            if !matches!(b.get(p), Some(b'x' | b'X')) {
                return None;
            }
            q = p + 1;
            while b.get(q).is_some_and(u8::is_ascii_hexdigit) {
                q += 1;
            }
            if q == p + 1 {
                return None;
            }
        }
        let term = *b.get(q)?;
        if term.is_ascii_hexdigit() {
            return None;
        }
        Some((q, if term == b';' { q + 1 } else { q }))
    }

    /// `entityref` at `j` (`&` there): end of the name and where to go on.
    fn entityref_at(&self, j: usize) -> Option<(usize, usize)> {
        let b = self.b;
        if !b.get(j + 1).is_some_and(u8::is_ascii_alphabetic) {
            return None;
        }
        let mut q = j + 2;
        while b
            .get(q)
            .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'-' || c == b'.')
        {
            q += 1;
        }
        match b.get(q) {
            Some(&term) => Some((q, if term == b';' { q + 1 } else { q })),
            None => {
                // The run reaches the end: backtrack to the last `-` or `.`
                // of the name, which then serves as the terminator.
                let p = (j + 2..q).rev().find(|&p| matches!(b[p], b'-' | b'.'))?;
                Some((p, p))
            }
        }
    }

    /// BeautifulSoup's `handle_charref` for the digits `from..to` (with the
    /// `x` of a hexadecimal reference).
    fn handle_charref(&mut self, from: usize, to: usize) -> Result<()> {
        let digits = &self.b[from..to];
        let value: u32 = if matches!(digits.first(), Some(b'x' | b'X')) {
            let mut v: u32 = 0;
            for &d in &digits[1..] {
                let x = char::from(d).to_digit(16).unwrap_or(0);
                v = v.saturating_mul(16).saturating_add(x).min(0x0011_0000);
            }
            v
        } else {
            if digits.len() > 4300 {
                // `int()` refuses such strings; BeautifulSoup lets the
                // ValueError through.
                return Err(Error::UnsupportedText(format!(
                    "Exceeds the limit (4300 digits) for integer string conversion: \
                     value has {} digits; use sys.set_int_max_str_digits() to increase \
                     the limit",
                    digits.len()
                )));
            }
            let mut v: u32 = 0;
            for &d in digits {
                v = v
                    .saturating_mul(10)
                    .saturating_add(u32::from(d - b'0'))
                    .min(0x0011_0000);
            }
            v
        };
        self.data_char(numeric_reference(value));
        Ok(())
    }

    /// BeautifulSoup's `handle_entityref` for the name `from..to`.
    fn handle_entityref(&mut self, from: usize, to: usize) {
        let name = &self.src[from..to];
        if let Some(text) = common_entity(name) {
            self.sink.data(text);
            return;
        }
        match NAMED.binary_search_by(|&(k, _)| k.cmp(name)) {
            Ok(idx) => self.sink.data(NAMED[idx].1),
            Err(_) => {
                self.sink.data("&");
                self.sink.data(name);
            }
        }
    }

    // ------------------------------------------------------------ start tags

    /// End of the tag name starting at `p` (`[^\t\n\r\f />\x00]*`).
    ///
    /// A tag name can run over other `<` (`<a<a<a...`); as queries come in
    /// document order, remembering the last answer keeps this linear.
    #[inline]
    fn name_end(&mut self, p: usize) -> usize {
        let (from, to) = self.name_cache;
        if from <= p && p <= to {
            return to;
        }
        let b = self.b;
        let mut q = p;
        while q < b.len() && !NAME_STOP[b[q] as usize] {
            q += 1;
        }
        self.name_cache = (p, q);
        q
    }

    /// `[\s/]*`.
    #[inline]
    fn skip_space_slash(&self, mut p: usize) -> usize {
        loop {
            if self.b.get(p) == Some(&b'/') {
                p += 1;
                continue;
            }
            let l = self.space_len(p);
            if l == 0 {
                return p;
            }
            p += l;
        }
    }

    /// `(?:\s|/(?!>))*`.
    #[inline]
    fn skip_space_lone_slash(&self, p: usize) -> usize {
        self.scan(Scan::NotSpaceLoneSlash, p, self.b.len())
    }

    /// The first stop of `set` in `from..limit` (`limit` a character
    /// boundary), or `limit`.
    #[inline]
    fn scan(&self, set: Scan, from: usize, limit: usize) -> usize {
        let b = self.b.get(..limit).unwrap_or(self.b);
        let mut p = from;
        match set {
            Scan::Bare | Scan::AttrName => {
                let stops = if set == Scan::Bare {
                    C_SPACE | C_GT
                } else {
                    C_SPACE | C_GT | C_SLASH | C_EQ
                };
                while let Some(&c) = b.get(p) {
                    let class = CLASS[c as usize];
                    if class & stops != 0 || (class & C_MAYBE_SPACE != 0 && self.space_len(p) > 0) {
                        return p;
                    }
                    // Bytes inside a multi-byte character are never stops.
                    p += 1;
                }
                b.len()
            }
            Scan::NotSpace | Scan::NotSpaceLoneSlash => {
                let lone_slash = set == Scan::NotSpaceLoneSlash;
                while let Some(&c) = b.get(p) {
                    let class = CLASS[c as usize];
                    let lone = lone_slash && c == b'/' && self.b.get(p + 1) != Some(&b'>');
                    if class & C_SPACE != 0 || lone {
                        p += 1;
                    } else if class & C_MAYBE_SPACE != 0 {
                        let l = self.space_len(p);
                        if l == 0 {
                            return p;
                        }
                        p += l;
                    } else {
                        return p;
                    }
                }
                b.len()
            }
            Scan::NotEq => {
                while b.get(p) == Some(&b'=') {
                    p += 1;
                }
                p.min(b.len())
            }
            Scan::SQuote | Scan::DQuote => {
                let quote = if set == Scan::SQuote { b'\'' } else { b'"' };
                b.get(from..)
                    .and_then(|s| memchr(quote, s))
                    .map_or(b.len(), |o| from + o)
            }
        }
    }

    /// The first stop of `set` at or after `p` (the end of the input if
    /// none). In the second pass, answers are kept as intervals without a
    /// stop, so that no stretch of the input is scanned twice for one set.
    #[inline]
    fn next_stop(&mut self, set: Scan, p: usize) -> usize {
        if self.end {
            self.next_stop_cached(set, p)
        } else {
            self.scan(set, p, self.b.len())
        }
    }

    #[inline(never)]
    fn next_stop_cached(&mut self, set: Scan, p: usize) -> usize {
        let n = self.b.len();
        // Short scans need no cache: each attribute start is computed once
        // (see `attr_chain`), so they cost a bounded amount per position.
        let near = (p + SHORT_SCAN).min(n);
        let q = self.scan(set, p, near);
        if q < near || near == n {
            return q;
        }
        let cache = &self.scans[set as usize];
        if let Some((_, &stop)) = cache.range(..=p).next_back()
            && p <= stop
        {
            return stop;
        }
        let next = cache.range(p..).next().map(|(&a, &stop)| (a, stop));
        let limit = next.map_or(n, |(a, _)| a);
        let q = self.scan(set, p, limit);
        let cache = &mut self.scans[set as usize];
        match next {
            Some((a, stop)) if q >= limit => {
                cache.remove(&a);
                cache.insert(p, stop);
                stop
            }
            _ => {
                cache.insert(p, q);
                q
            }
        }
    }

    /// `[^>\s]*` from `p`.
    #[inline]
    fn bare_value_end(&mut self, p: usize) -> usize {
        self.next_stop(Scan::Bare, p)
    }

    /// A quoted attribute value opening at `r`: the end after the closing
    /// quote, or `None` if it never closes.
    #[inline]
    fn quoted_end(&mut self, r: usize, quote: u8) -> Option<usize> {
        if self.end {
            let set = if quote == b'\'' {
                Scan::SQuote
            } else {
                Scan::DQuote
            };
            let c = self.next_stop(set, r + 1);
            return (c < self.b.len()).then_some(c + 1);
        }
        let cache = if quote == b'\'' {
            &mut self.squote
        } else {
            &mut self.dquote
        };
        Self::find_cached(self.b, quote, r + 1, cache).map(|c| c + 1)
    }

    /// One attribute of `attrfind_tolerant` (the same as one iteration of the
    /// attribute group of `locatestarttagend_tolerant`), at `p`: its end,
    /// trailing `(?:\s|/(?!>))*` included, or `None` if none starts there.
    fn attr_step(&mut self, p: usize) -> Option<usize> {
        if !self.lookbehind_ok(p) {
            return None;
        }
        let b = self.b;
        // [^\s/>]
        match b.get(p) {
            None | Some(b'/' | b'>') => return None,
            _ => {}
        }
        if self.space_len(p) > 0 {
            return None;
        }
        // [^\s/=>]*
        let q = self.next_stop(Scan::AttrName, p + self.char_len(p));
        // (\s*=+\s*('[^']*'|"[^"]*"|(?!['"])[^>\s]*))?
        let mut pos = q;
        let q1 = self.next_stop(Scan::NotSpace, q);
        if b.get(q1) == Some(&b'=') {
            let q2 = self.next_stop(Scan::NotEq, q1 + 1);
            let r = self.next_stop(Scan::NotSpace, q2);
            let value_end = match b.get(r) {
                Some(&quote @ (b'\'' | b'"')) => self.quoted_end(r, quote),
                _ => Some(self.bare_value_end(r)),
            };
            pos = match value_end {
                Some(e) => e,
                // Backtracking: one space less before the quote gives an
                // empty bare value (then the space is skipped again) ...
                None if r > q2 => r,
                // ... one `=` less gives a bare value starting at that `=`.
                None if q2 - q1 > 1 => self.bare_value_end(q2 - 1),
                None => q,
            };
        }
        Some(self.next_stop(Scan::NotSpaceLoneSlash, pos))
    }

    /// The attribute loop of `locatestarttagend_tolerant` from `p`: where it
    /// stops.
    ///
    /// In the second pass, the attribute starts visited are kept in
    /// `visited`; if the tag then turns out incomplete, `remember_chain`
    /// stores where the chain from each of them ends, since later tags may
    /// start inside this one and walk the same chain. (A complete tag is
    /// consumed whole, so its chain is never walked again.)
    fn attr_chain(&mut self, mut p: usize) -> usize {
        if !self.end {
            while let Some(next) = self.attr_step(p) {
                p = next;
            }
            return p;
        }
        self.visited.clear();
        loop {
            if let Some(e) = self.memo.get(p) {
                return e;
            }
            self.visited.push(p);
            match self.attr_step(p) {
                Some(next) => p = next,
                None => return p,
            }
        }
    }

    /// See `attr_chain`.
    fn remember_chain(&mut self, end: usize) {
        if self.end {
            let n = self.b.len();
            for &v in &self.visited {
                self.memo.insert(v, end, n);
            }
        }
    }

    /// The tag name `from..to` lowercased as Python's `str.lower` does:
    /// borrowed from the input when it already is (the common case).
    fn lower_name(&mut self, from: usize, to: usize) -> bool {
        let name = &self.src[from..to];
        if name
            .bytes()
            .all(|c| c.is_ascii() && !c.is_ascii_uppercase())
        {
            return false;
        }
        self.name_buf.clear();
        python_lower_into(name, &mut self.name_buf);
        true
    }

    /// `lower_name`, skipped when the name is known to be lowercase ASCII
    /// (`lowercase`) already.
    #[inline]
    fn lowered(&mut self, from: usize, to: usize, lowercase: bool) -> bool {
        !lowercase && self.lower_name(from, to)
    }

    /// `parse_starttag` (with `check_for_whole_start_tag`) at `i`.
    fn parse_starttag(&mut self, i: usize) -> Parsed {
        // Most tags are simple; the general rules only for the others.
        let simple = self.simple_starttag(i);
        #[cfg(test)]
        let simple = simple.filter(|_| !self.general_only);
        let (tag, lowercase) = match simple {
            Some((tag, lowercase)) => (tag, lowercase),
            None => (self.general_starttag(i), false),
        };
        let (name_end, endpos, self_closing) = match tag {
            StartTag::Tag {
                name_end,
                endpos,
                self_closing,
            } => (name_end, endpos, self_closing),
            StartTag::Text(endpos) => {
                self.data(i, endpos);
                return Parsed::At(endpos);
            }
            StartTag::Incomplete => return Parsed::Incomplete,
        };
        let src = self.src;
        let name = if self.lowered(i + 1, name_end, lowercase) {
            self.name_buf.as_str()
        } else {
            &src[i + 1..name_end]
        };
        if self_closing {
            self.sink.start_tag(name, true);
        } else {
            self.sink.start_tag(name, false);
            match name {
                "script" => self.cdata = Some(Cdata::Script),
                "style" => self.cdata = Some(Cdata::Style),
                _ => {}
            }
        }
        Parsed::At(endpos)
    }

    /// A simple start tag at `i` (`<` and a letter there), read in one pass,
    /// or `None` for the general rules. Simple: at most [`SIMPLE_TAG_MAX`]
    /// bytes of ASCII, of the form
    /// `<NAME (WS+ ATTR (= ('...'|"..."|BARE))?)* WS* /? >` with NAME of
    /// [`F_NAME`], WS of [`F_WS`], ATTR of [`F_ATTR`] and BARE of [`F_VALUE`]
    /// bytes not starting with `=` (`=+` takes those; quoted values may hold
    /// anything but their quote).
    ///
    /// On these, `general_starttag` gives the same answer without any
    /// backtracking: each attribute ends where its simple form does, and
    /// the tag ends at the first `>` outside quoted values. A bare value takes
    /// a `/` before `>` (`<a b=c/>` is no self-closing tag), as `[^>\s]*`
    /// does. `simple_tags_are_read_as_the_general_rules_read_them` checks
    /// the equality on generated tags.
    ///
    /// With the tag, whether its name is known to be lowercase already.
    #[inline]
    fn simple_starttag(&self, i: usize) -> Option<(StartTag, bool)> {
        let b = self.b.get(..(i + SIMPLE_TAG_MAX).min(self.b.len()))?;
        let class = |p: usize| b.get(p).map_or(0, |&c| SIMPLE[c as usize]);
        let mut p = i + 1;
        let mut seen = 0;
        while class(p) & F_NAME != 0 {
            seen |= class(p);
            p += 1;
        }
        let name_end = p;
        let lowercase = seen & F_UPPER == 0;
        loop {
            let ws_start = p;
            while class(p) & F_WS != 0 {
                p += 1;
            }
            match b.get(p)? {
                b'>' => {
                    let tag = StartTag::Tag {
                        name_end,
                        endpos: p + 1,
                        self_closing: false,
                    };
                    return Some((tag, lowercase));
                }
                b'/' => {
                    let tag = StartTag::Tag {
                        name_end,
                        endpos: p + 2,
                        self_closing: true,
                    };
                    return (b.get(p + 1) == Some(&b'>')).then_some((tag, lowercase));
                }
                _ if p > ws_start && class(p) & F_ATTR != 0 => {
                    p += 1;
                    while class(p) & F_ATTR != 0 {
                        p += 1;
                    }
                    if b.get(p) == Some(&b'=') {
                        // `=+` takes every `=`, then `\s*` the spaces after
                        // them, and the value may start with `/` there
                        // (`<a v== />` is no self-closing tag): a space
                        // leaves the tag to the general rules, below.
                        while b.get(p) == Some(&b'=') {
                            p += 1;
                        }
                        match *b.get(p)? {
                            quote @ (b'"' | b'\'') => {
                                p = find2(b, p + 1, quote, quote)? + 1;
                            }
                            _ if class(p) & F_VALUE != 0 => {
                                while class(p) & F_VALUE != 0 {
                                    p += 1;
                                }
                            }
                            _ => return None,
                        }
                    }
                }
                _ => return None,
            }
        }
    }

    /// `locatestarttagend_tolerant`, then `check_for_whole_start_tag` and the
    /// attribute loop of `parse_starttag`, at `i`, with all of `html.parser`'s
    /// backtracking.
    fn general_starttag(&mut self, i: usize) -> StartTag {
        let b = self.b;
        let name_end = self.name_end(i + 2);
        // locatestarttagend_tolerant
        let attrs_start = if self.attrs_cache.0 == name_end {
            self.attrs_cache.1
        } else {
            let a = self.skip_space_slash(name_end);
            self.attrs_cache = (name_end, a);
            a
        };
        let j = self.attr_chain(attrs_start);
        let endpos = match b.get(j) {
            Some(b'>') => j + 1,
            Some(b'/') if b.get(j + 1) == Some(&b'>') => j + 2,
            // A `/` not before `>`: html.parser waits for more input, as it
            // does at the end, or in or before an attribute value.
            Some(b'/') | None => {
                self.remember_chain(j);
                return StartTag::Incomplete;
            }
            Some(&c) if c.is_ascii_alphabetic() || c == b'=' => {
                self.remember_chain(j);
                return StartTag::Incomplete;
            }
            Some(_) => j,
        };
        // tagfind_tolerant, then attrfind_tolerant while k < endpos. From the
        // same start, attrfind repeats the attribute loop above, which
        // stopped at `j` (and `j <= endpos`).
        let tagfind_end = self.skip_space_lone_slash(name_end);
        let mut k = tagfind_end;
        if tagfind_end == attrs_start {
            k = j;
        } else {
            while k < endpos {
                match self.attr_step(k) {
                    Some(next) => k = next,
                    None => break,
                }
            }
        }
        let rest = self.src.get(k..endpos).unwrap_or("");
        match unicode::strip(rest) {
            ">" => StartTag::Tag {
                name_end,
                endpos,
                self_closing: false,
            },
            "/>" => StartTag::Tag {
                name_end,
                endpos,
                self_closing: true,
            },
            _ => StartTag::Text(endpos),
        }
    }

    // -------------------------------------------------------------- end tags

    /// `parse_endtag` at `i` (`</` there).
    fn parse_endtag(&mut self, i: usize) -> Parsed {
        let b = self.b;
        let simple = self.simple_endtag(i);
        #[cfg(test)]
        let simple = simple.filter(|_| !self.general_only);
        let (matched, gtpos, lowercase) = match simple {
            Some((ne, gtpos, lowercase)) => (Some((i + 2, ne)), gtpos, lowercase),
            None => match self.general_endtag(i) {
                Some((matched, gtpos)) => (matched, gtpos, false),
                None => return Parsed::Incomplete,
            },
        };
        let g = gtpos - 1;
        if let Some((ns, ne)) = matched {
            let src = self.src;
            let name = if self.lowered(ns, ne, lowercase) {
                self.name_buf.as_str()
            } else {
                &src[ns..ne]
            };
            if let Some(cd) = self.cdata
                && name != cd.name()
            {
                self.data(i, gtpos);
                return Parsed::At(gtpos);
            }
            self.sink.end_tag(name);
            self.cdata = None;
            return Parsed::At(gtpos);
        }
        if self.cdata.is_some() {
            self.data(i, gtpos);
            return Parsed::At(gtpos);
        }
        if b.get(i + 2).is_some_and(u8::is_ascii_alphabetic) {
            let ne = self.name_end(i + 3);
            let src = self.src;
            let name = if self.lower_name(i + 2, ne) {
                self.name_buf.as_str()
            } else {
                &src[i + 2..ne]
            };
            self.sink.end_tag(name);
            return Parsed::At(gtpos);
        }
        if g == i + 2 {
            // `</>` is ignored.
            return Parsed::At(gtpos);
        }
        // Bogus comment.
        if let Some(text) = self.src.get(i + 2..g) {
            self.sink.special(text);
        }
        Parsed::At(gtpos)
    }

    /// A simple end tag at `i` (`</` there): `</NAME WS* >` with NAME a
    /// letter then [`F_NAME`] bytes (`endtagfind`'s name) and WS of [`F_WS`].
    /// `endtagfind` matches it as it is (the first `>` after `</` is its
    /// own), which saves the search for `>` and the `\s` scans: the end of
    /// the name, the end of the tag, and whether the name is known to be
    /// lowercase. `None` for the general rules.
    #[inline]
    fn simple_endtag(&self, i: usize) -> Option<(usize, usize, bool)> {
        let b = self.b;
        if !b.get(i + 2)?.is_ascii_alphabetic() {
            return None;
        }
        let class = |p: usize| b.get(p).map_or(0, |&c| SIMPLE[c as usize]);
        let mut p = i + 2;
        let mut seen = 0;
        while class(p) & F_NAME != 0 {
            seen |= class(p);
            p += 1;
        }
        let name_end = p;
        while class(p) & F_WS != 0 {
            p += 1;
        }
        (*b.get(p)? == b'>').then_some((name_end, p + 1, seen & F_UPPER == 0))
    }

    /// The search for `>` and `endtagfind` of `parse_endtag` at `i`: the name
    /// if `endtagfind` matched, and the end of the tag; `None` if no `>`
    /// follows.
    fn general_endtag(&mut self, i: usize) -> Option<(Option<(usize, usize)>, usize)> {
        let b = self.b;
        let g = self.find_gt(i + 1)?;
        // endtagfind: </\s*([a-zA-Z][-.a-zA-Z0-9:_]*)\s*>
        let ns = self.skip_space(i + 2);
        let mut matched = None;
        if b.get(ns).is_some_and(u8::is_ascii_alphabetic) {
            let mut ne = ns + 1;
            while b.get(ne).is_some_and(|&c| {
                c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b':' | b'_')
            }) {
                ne += 1;
            }
            if self.skip_space(ne) == g {
                matched = Some((ns, ne));
            }
        }
        Some((matched, g + 1))
    }

    /// `</\s*script\s*>` (or `style`), case-insensitive as Python's `re`,
    /// from `i`: where it starts.
    fn find_cdata_end(&self, mut i: usize, cd: Cdata) -> Option<usize> {
        let b = self.b;
        let word: &[u8] = match cd {
            Cdata::Script => b"script",
            Cdata::Style => b"style",
        };
        loop {
            let o = memchr(b'<', b.get(i..)?)?;
            let start = i + o;
            i = start + 1;
            if b.get(start + 1) != Some(&b'/') {
                continue;
            }
            let mut p = self.skip_space(start + 2);
            let mut ok = true;
            for &w in word {
                let Some(ch) = self.char_at(p) else {
                    ok = false;
                    break;
                };
                if !matches_ignore_case(ch, w) {
                    ok = false;
                    break;
                }
                p += ch.len_utf8();
            }
            if ok && b.get(self.skip_space(p)) == Some(&b'>') {
                return Some(start);
            }
        }
    }

    // ----------------------------------------------- comments, declarations

    /// `parse_comment` at `i` (`<!--` there).
    fn parse_comment(&mut self, i: usize) -> Parsed {
        match self.find_comment_close(i + 4) {
            Some((ms, me)) => {
                if let Some(text) = self.src.get(i + 4..ms) {
                    self.sink.special(text);
                }
                Parsed::At(me)
            }
            None => Parsed::Incomplete,
        }
    }

    /// `--\s*>` from `from`.
    fn find_comment_close(&mut self, from: usize) -> Option<(usize, usize)> {
        if self.comment_close.known_absent(from) {
            return None;
        }
        let b = self.b;
        let mut p = from;
        loop {
            let Some(o) = b.get(p..).and_then(|rest| memchr(b'-', rest)) else {
                self.comment_close.record_absent(from);
                return None;
            };
            let d = p + o;
            if b.get(d + 1) == Some(&b'-') {
                let e = self.skip_space(d + 2);
                if b.get(e) == Some(&b'>') {
                    return Some((d, e + 1));
                }
            }
            p = d + 1;
        }
    }

    /// `]\s*]\s*>` (`double`) or `]\s*>` from `from`.
    fn find_marked_close(&mut self, from: usize, double: bool) -> Option<(usize, usize)> {
        let known_absent = if double {
            self.marked_close.known_absent(from)
        } else {
            self.ms_marked_close.known_absent(from)
        };
        if known_absent {
            return None;
        }
        let b = self.b;
        let mut p = from;
        loop {
            let Some(o) = b.get(p..).and_then(|rest| memchr(b']', rest)) else {
                if double {
                    self.marked_close.record_absent(from);
                } else {
                    self.ms_marked_close.record_absent(from);
                }
                return None;
            };
            let s = p + o;
            let mut e = self.skip_space(s + 1);
            if double {
                if b.get(e) == Some(&b']') {
                    e = self.skip_space(e + 1);
                    if b.get(e) == Some(&b'>') {
                        return Some((s, e + 1));
                    }
                }
            } else if b.get(e) == Some(&b'>') {
                return Some((s, e + 1));
            }
            p = s + 1;
        }
    }

    /// `parse_pi` at `i` (`<?` there).
    fn parse_pi(&mut self, i: usize) -> Parsed {
        match self.find_gt(i + 2) {
            Some(g) => {
                if let Some(text) = self.src.get(i + 2..g) {
                    self.sink.special(text);
                }
                Parsed::At(g + 1)
            }
            None => Parsed::Incomplete,
        }
    }

    /// `parse_html_declaration` at `i` (`<!` there, not `<!--`).
    fn parse_html_declaration(&mut self, i: usize) -> Result<Parsed> {
        let b = self.b;
        if b.get(i + 2) == Some(&b'[') {
            return self.parse_marked_section(i);
        }
        if b.get(i..i + 9)
            .is_some_and(|s| s.eq_ignore_ascii_case(b"<!doctype"))
        {
            return Ok(match self.find_gt(i + 9) {
                Some(g) => {
                    // BeautifulSoup's handle_decl drops `len("DOCTYPE ")`
                    // characters.
                    let decl = self.src.get(i + 2..g).unwrap_or("");
                    let rest = decl.char_indices().nth(8).map_or("", |(o, _)| &decl[o..]);
                    self.sink.special(rest);
                    Parsed::At(g + 1)
                }
                None => Parsed::Incomplete,
            });
        }
        // Bogus comment.
        Ok(match self.find_gt(i + 2) {
            Some(g) => {
                if let Some(text) = self.src.get(i + 2..g) {
                    self.sink.special(text);
                }
                Parsed::At(g + 1)
            }
            None => Parsed::Incomplete,
        })
    }

    /// `parse_marked_section` at `i` (`<![` there).
    fn parse_marked_section(&mut self, i: usize) -> Result<Parsed> {
        let b = self.b;
        let n = b.len();
        // _scan_name(i + 3)
        let p = i + 3;
        if p >= n {
            return Ok(Parsed::Incomplete);
        }
        if !b[p].is_ascii_alphabetic() {
            let context: String = self.src[i..].chars().take(20).collect();
            return Err(Error::MarkupRejected(format!(
                "html.parser rejected the markup: expected name token at {context:?}"
            )));
        }
        let mut ne = p + 1;
        while b
            .get(ne)
            .is_some_and(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        {
            ne += 1;
        }
        if self.skip_space(ne) == n {
            return Ok(Parsed::Incomplete);
        }
        let name = b[p..ne].to_ascii_lowercase();
        let double = match name.as_slice() {
            b"temp" | b"cdata" | b"ignore" | b"include" | b"rcdata" => true,
            b"if" | b"else" | b"endif" => false,
            _ => {
                return Err(Error::MarkupRejected(format!(
                    "html.parser rejected the markup: unknown status keyword {:?} in marked section",
                    &self.src[p..self.skip_space(ne)]
                )));
            }
        };
        Ok(match self.find_marked_close(i + 3, double) {
            Some((ms, me)) => {
                let data = self.src.get(i + 3..ms).unwrap_or("");
                if data.len() >= 6 && data.as_bytes()[..6].eq_ignore_ascii_case(b"CDATA[") {
                    self.sink.special(&data[6..]);
                } else {
                    self.sink.special(data);
                }
                Parsed::At(me)
            }
            None => Parsed::Incomplete,
        })
    }
}

/// Whether `ch` matches the ASCII letter `w` under Python's `re.IGNORECASE`
/// (which also folds U+017F to `s` and U+0130, U+0131 to `i`).
/// The references most documents use, as [`NAMED`] has them: answered
/// without its binary search (a dozen string comparisons over its 2231
/// names, 2% of the time of chunking code documentation, where `&gt;` and
/// `&quot;` abound). `common_entities_agree_with_the_table` checks them.
#[inline]
fn common_entity(name: &str) -> Option<&'static str> {
    Some(match name {
        "gt" => ">",
        "lt" => "<",
        "amp" => "&",
        "quot" => "\"",
        "apos" => "'",
        "nbsp" => "\u{a0}",
        "copy" => "\u{a9}",
        _ => return None,
    })
}

fn matches_ignore_case(ch: char, w: u8) -> bool {
    if ch.is_ascii() {
        return (ch as u8).eq_ignore_ascii_case(&w);
    }
    matches!(
        (ch, w),
        ('\u{17f}', b's') | ('\u{130}' | '\u{131}', b'i') | ('\u{212a}', b'k')
    )
}

/// `UnicodeDammit.numeric_character_reference`.
fn numeric_reference(value: u32) -> char {
    if value == 0 || value > 0x10_ffff || (0xd800..=0xdfff).contains(&value) {
        return '\u{fffd}';
    }
    if (0x80..=0x9f).contains(&value)
        && let Ok(idx) = WINDOWS_1252.binary_search_by(|&(k, _)| k.cmp(&value))
    {
        return WINDOWS_1252[idx].1;
    }
    char::from_u32(value).unwrap_or('\u{fffd}')
}

/// CPython's final-sigma rule for the capital sigma at `chars[i]`: preceded
/// by a cased character and not followed by one, case-ignorable ones skipped.
fn final_sigma(chars: &[char], i: usize) -> bool {
    let before = chars[..i]
        .iter()
        .rev()
        .find(|&&c| !crate::unicode::in_table(CASE_IGNORABLE, c));
    if !before.is_some_and(|&c| crate::unicode::in_table(CASED, c)) {
        return false;
    }
    let after = chars[i + 1..]
        .iter()
        .find(|&&c| !crate::unicode::in_table(CASE_IGNORABLE, c));
    !after.is_some_and(|&c| crate::unicode::in_table(CASED, c))
}

/// Python 3.11's `str.lower()` (Unicode 14) appended to `out`.
///
/// Character by character, Rust's full lowercase mapping is Python's for
/// every character printable in Unicode 14; non-printable ones (those
/// assigned since among them) have none in Python. The capital sigma follows
/// CPython's context rule with Unicode 14's properties.
pub(crate) fn python_lower_into(name: &str, out: &mut String) {
    if name.is_ascii() {
        out.extend(name.bytes().map(|c| char::from(c.to_ascii_lowercase())));
        return;
    }
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == '\u{3a3}' {
            out.push(if final_sigma(&chars, i) {
                '\u{3c2}'
            } else {
                '\u{3c3}'
            });
        } else if c.is_ascii() || unicode::is_printable(c) {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::chunking::html::tree::Tree;

    /// Records events; adjacent data merged as BeautifulSoup merges it.
    #[derive(Default)]
    struct Events(Vec<String>);

    impl Sink for Events {
        fn data(&mut self, text: &str) {
            match self.0.last_mut() {
                Some(last) if last.starts_with("D:") => last.push_str(text),
                _ => self.0.push(format!("D:{text}")),
            }
        }
        fn start_tag(&mut self, name: &str, self_closing: bool) {
            self.0
                .push(format!("{}:{name}", if self_closing { "S/" } else { "S" }));
        }
        fn end_tag(&mut self, name: &str) {
            self.0.push(format!("E:{name}"));
        }
        fn special(&mut self, text: &str) {
            self.0.push(format!("X:{text}"));
        }
    }

    fn events(html: &str) -> Vec<String> {
        let mut t = Tokenizer::new(html, Events::default());
        t.run().expect("accepted");
        t.sink.0
    }

    #[test]
    fn load_le_is_the_zero_padded_little_endian_word() {
        let bytes = [0x01u8, 0x80, 0xff, 0x7f, 0x00, 0xaa, 0x55, 0xfe, 0x42];
        for len in 0..=8 {
            let mut word = [0u8; 8];
            word[..len].copy_from_slice(&bytes[..len]);
            assert_eq!(load_le(&bytes[..len]), u64::from_le_bytes(word), "{len}");
        }
    }

    #[test]
    fn tags_and_text() {
        assert_eq!(
            events("<P Class=x>a</P >b<BR/>"),
            ["S:p", "D:a", "E:p", "D:b", "S/:br"]
        );
        assert_eq!(events("<a/ >x<a / / >"), ["S:a", "D:x", "S:a"]);
        assert_eq!(events("<a //>"), ["S/:a"]);
        assert_eq!(events("</p x=1>"), ["E:p"]);
        assert_eq!(events("</p\u{b}x>"), ["E:p\u{b}x"]);
        assert_eq!(events("</ p>"), ["E:p"]);
        assert_eq!(events("</ 3>"), ["X: 3"]);
        assert_eq!(events("</>"), Vec::<String>::new());
        assert_eq!(events("<\u{c9}>"), ["D:<\u{c9}>"]);
    }

    #[test]
    fn attribute_values_follow_python_backtracking() {
        // Quoted values may hold `>`.
        assert_eq!(events("<a b='>'>t"), ["S:a", "D:t"]);
        // An unclosed quote after `= ` becomes an attribute name.
        assert_eq!(events("<a b= 'x>t"), ["S:a", "D:t"]);
        // After `==`, the value starts at the second `=`.
        assert_eq!(events("<a b=='x>t"), ["S:a", "D:t"]);
        // After a single `=`, the tag cannot end: text up to the next `>`.
        assert_eq!(events("<a b='x>t"), ["D:<a b='x>t"]);
        // A NUL right after the name ends the tag early: the tag is text.
        assert_eq!(events("<a\u{0}b>c"), ["D:<a\u{0}b>c"]);
        assert_eq!(events("<a\"\u{0}x>c"), ["S:a\"", "D:c"]);
    }

    #[test]
    fn raw_text_elements() {
        assert_eq!(
            events("<script>a<b>&amp;</SCRIPT >c"),
            ["S:script", "D:a<b>&amp;", "E:script", "D:c"]
        );
        assert_eq!(
            events("<style>x</\u{17f}tyle>y</style>"),
            ["S:style", "D:x</\u{17f}tyle>y", "E:style"]
        );
        assert_eq!(events("<script/>a&amp;"), ["S/:script", "D:a&"]);
        // Never closed: its content and everything after it is dropped.
        assert_eq!(events("<script>x</p>"), ["S:script"]);
    }

    #[test]
    fn markup_declarations() {
        assert_eq!(events("<!-- a -- >b"), ["X: a ", "D:b"]);
        assert_eq!(events("<!---->"), ["X:"]);
        assert_eq!(events("<!-->x-->"), ["X:>x"]);
        assert_eq!(events("<!DOCTYPE html>"), ["X:html"]);
        assert_eq!(events("<!ELEMENT x>"), ["X:ELEMENT x"]);
        assert_eq!(events("<?xml v?>"), ["X:xml v?"]);
        assert_eq!(events("<![CDATA[<p>]]>"), ["X:<p>"]);
        assert_eq!(events("<![cdata x] ] >"), ["X:cdata x"]);
        assert_eq!(events("<![if !IE]>"), ["X:if !IE"]);
        let mut t = Tokenizer::new("<![unknown[x]]>", Events::default());
        assert!(matches!(t.run(), Err(Error::MarkupRejected(_))));
    }

    #[test]
    fn references() {
        assert_eq!(events("&lt;&LT&ltx;&unknown;x"), ["D:<<&ltx&unknownx"]);
        assert_eq!(events("&#38;&#x26&#X26;"), ["D:&&&"]);
        assert_eq!(events("&#150;&#x9d;"), ["D:\u{2013}\u{9d}"]);
        assert_eq!(events("& &; &#; &#x;"), ["D:& &; &#; &#x;"]);
    }

    #[test]
    fn python_lower_matches_unicode_14() {
        let lower = |s: &str| {
            let mut out = String::new();
            python_lower_into(s, &mut out);
            out
        };
        assert_eq!(lower("H1"), "h1");
        assert_eq!(lower("\u{130}X"), "i\u{307}x");
        assert_eq!(lower("A\u{3a3}"), "a\u{3c2}");
        assert_eq!(lower("A\u{3a3}B"), "a\u{3c3}b");
        // Unassigned in Unicode 14: left alone, as Python 3.11 does.
        assert_eq!(lower("\u{1c89}\u{a7cb}"), "\u{1c89}\u{a7cb}");
        // Final sigma with Unicode 14's properties: U+1C8A (new since) is not
        // cased, U+00AD is ignorable, U+0295 was still a cased letter.
        assert_eq!(lower("A\u{3a3}\u{1c8a}"), "a\u{3c2}\u{1c8a}");
        assert_eq!(lower("A\u{3a3}\u{ad}B"), "a\u{3c3}\u{ad}b");
        assert_eq!(lower("A\u{3a3}\u{ad}"), "a\u{3c2}\u{ad}");
        assert_eq!(lower("\u{295}\u{3a3}"), "\u{295}\u{3c2}");
        assert_eq!(lower("\u{3a3}"), "\u{3c3}");
    }

    #[test]
    fn many_failed_tags_share_their_attribute_loops() {
        // Each `<a` starts a tag whose attributes run to the end: all text.
        let html = format!("&#;{}", "<a b".repeat(1500));
        let mut t = Tokenizer::new(&html, Events::default());
        t.run().expect("accepted");
        assert!(matches!(t.memo, Memo::Dense(_)));
        assert_eq!(t.sink.0, [format!("D:{html}")]);
        let html = format!("&#;{}>", "<a b".repeat(1500));
        assert_eq!(events(&html), ["D:&#;", "S:a"]);
    }

    fn simple(html: &str) -> Option<StartTag> {
        Tokenizer::new(html, Events::default())
            .simple_starttag(0)
            .map(|(tag, _)| tag)
    }

    /// Whether the name `from..to` of `html` is its own Python lowercase.
    fn is_lowercase(html: &str, from: usize, to: usize) -> bool {
        let mut lower = String::new();
        python_lower_into(&html[from..to], &mut lower);
        lower == html[from..to]
    }

    fn general(html: &str, second_pass: bool) -> StartTag {
        let mut t = Tokenizer::new(html, Events::default());
        t.end = second_pass;
        t.general_starttag(0)
    }

    #[test]
    fn simple_end_tags_take_the_simple_path() {
        let simple = |html: &str| Tokenizer::new(html, Events::default()).simple_endtag(0);
        assert_eq!(simple("</p>"), Some((3, 4, true)));
        assert_eq!(simple("</H1 \n>x"), Some((4, 7, false)));
        assert_eq!(simple("</x-y:z.w_>"), Some((10, 11, true)));
        for html in [
            "</ p>",
            "</p x>",
            "</p\u{a0}>",
            "</p\u{b}>",
            "</p",
            "</>",
            "</\u{e9}>",
        ] {
            assert_eq!(simple(html), None, "{html:?}");
        }
    }

    #[test]
    fn simple_tags_take_the_simple_path() {
        let tag = |name_end, endpos, self_closing| {
            Some(StartTag::Tag {
                name_end,
                endpos,
                self_closing,
            })
        };
        assert_eq!(simple("<p>x"), tag(2, 3, false));
        assert_eq!(simple("<BR/>"), tag(3, 5, true));
        assert_eq!(simple("<br\n/>"), tag(3, 6, true));
        assert_eq!(simple("<a href=\"x>y\" class='c'>"), tag(2, 24, false));
        assert_eq!(simple("<a b='\u{e9}<&'/>"), tag(2, 13, true));
        assert_eq!(simple("<a b/>"), tag(2, 6, true));
        // A bare value takes the `/`.
        assert_eq!(simple("<a b=c/>"), tag(2, 8, false));
        assert_eq!(simple("<a b==c d>"), tag(2, 10, false));
        assert_eq!(simple("<a b==\"/>\" d>"), tag(2, 13, false));
        // The general rules decide these.
        for html in [
            "<a b= c>",
            "<a b== />",
            "<a b==>",
            "<a b=>",
            "<a b=\"x\"c>",
            "<a / >",
            "<a\u{b}b>",
            "<a\u{a0}b>",
            "<a b=\u{e9}>",
            "<a b<c>",
            "<a &b>",
            "<a b='x>",
            "<a b='x",
            "<a b",
            "<a/",
            "<a b=c",
        ] {
            assert_eq!(simple(html), None, "{html:?}");
        }
        let long = format!("<a b=\"{}\">", "x".repeat(SIMPLE_TAG_MAX));
        assert_eq!(simple(&long), None);
        assert!(simple(&long[..long.len() - 10]).is_none());
    }

    /// Pieces of start tags: names, spaces (`\s` and not, ASCII and not),
    /// attributes, values, the characters the general rules backtrack on.
    const TAG_PIECES: &[&str] = &[
        "a",
        "B",
        "h1",
        "x-y",
        "n:s",
        "_",
        ".",
        "0",
        "\u{e9}",
        "\u{17f}",
        "\u{130}",
        " ",
        "  ",
        "\t",
        "\n",
        "\r",
        "\u{c}",
        "\u{b}",
        "\u{1c}",
        "\u{a0}",
        "\u{3000}",
        "\u{85}",
        "\0",
        "/",
        "//",
        "/>",
        ">",
        "<",
        "&",
        "&amp;",
        "=",
        "==",
        "'",
        "\"",
        "\"v\"",
        "'v'",
        "\"a b\"",
        "'>'",
        "\"<\"",
        "\"'\"",
        "'\"'",
        "v",
        "v/",
        "href",
        "class",
        "x=1",
        " k=v",
        " k='q'",
        " k=\"q\"",
        " k",
        "`",
        "!",
        "?",
        "\u{1f600}",
    ];

    fn tag_like() -> impl Strategy<Value = String> {
        (
            proptest::sample::select(&["a", "p", "Br", "h2", "X"][..]),
            proptest::collection::vec(proptest::sample::select(TAG_PIECES), 0..14),
            proptest::sample::select(&["", ">", "/>", " >", "x", "\"", "'"][..]),
        )
            .prop_map(|(name, pieces, end)| format!("<{name}{}{end}", pieces.concat()))
    }

    /// Documents of tags, text, references and the rest of the markup.
    const DOC_PIECES: &[&str] = &[
        "text",
        " ",
        "\n",
        "<p>",
        "</p>",
        "<a href=\"u\">",
        "</a>",
        "<br/>",
        "<br />",
        "<img src=x alt='y'/>",
        "<a b=c/>",
        "<a b= 'x>",
        "<a b='x",
        "<a",
        "<",
        ">",
        "&",
        "&amp;",
        "&#38;",
        "&#",
        "'",
        "\"",
        "=",
        "/",
        "<!-- c -->",
        "<!--",
        "<!DOCTYPE html>",
        "<?pi?>",
        "<script>",
        "</script>",
        "<style>",
        "</style >",
        "</",
        "</ p>",
        "<X Y>",
        "\u{e9}",
        "\u{a0}",
        "<a\u{a0}b=c>",
        "<a b=\"",
        "<a/",
        "<a/ >",
    ];

    /// Generated documents: [`DOC_PIECES`], end tags and tags.
    fn document() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                3 => proptest::sample::select(DOC_PIECES).prop_map(str::to_owned),
                1 => (
                    proptest::sample::select(&["</", "</ ", "</\u{a0}"][..]),
                    proptest::sample::select(TAG_PIECES),
                    proptest::sample::select(&[">", " >", "", "\u{b}>"][..]),
                )
                    .prop_map(|(a, b, c)| format!("{a}{b}{c}")),
                1 => tag_like(),
            ],
            0..24,
        )
        .prop_map(|pieces| pieces.concat())
    }

    /// A tree given every string as copied text (no source ranges).
    struct Copying<'a>(Tree<'a>);

    impl Sink for Copying<'_> {
        fn data(&mut self, text: &str) {
            self.0.data(text);
        }
        fn start_tag(&mut self, name: &str, self_closing: bool) {
            self.0.start_tag(name, self_closing);
        }
        fn end_tag(&mut self, name: &str) {
            self.0.end_tag(name);
        }
        fn special(&mut self, text: &str) {
            self.0.special(text);
        }
    }

    /// (name, depth, text) of each tag.
    type Tags = Vec<(u32, u32, String)>;

    /// The tags, the body and the text's length.
    fn tree_summary(tree: &Tree<'_>) -> (Tags, Option<(u32, u32)>, usize) {
        let tags = tree
            .nodes
            .iter()
            .map(|n| {
                let mut text = String::new();
                tree.write_text(n, &mut text);
                (n.name, n.depth, text)
            })
            .collect();
        (tags, tree.body, tree.piece_bytes)
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(4096))]

        /// Strings kept as ranges of the source read as the copied ones.
        #[test]
        fn source_ranges_give_the_tree_copies_give(html in document()) {
            let mut by_range = Tokenizer::new(&html, Tree::new(&html));
            let ranges_result = by_range.run().map_err(|e| e.to_string());
            by_range.sink.finish();
            let mut by_copy = Tokenizer::new(&html, Copying(Tree::new(&html)));
            let copies_result = by_copy.run().map_err(|e| e.to_string());
            by_copy.sink.0.finish();
            prop_assert_eq!(ranges_result, copies_result);
            prop_assert_eq!(
                tree_summary(&by_range.sink),
                tree_summary(&by_copy.sink.0),
                "{:?}",
                html
            );
        }

        /// The simple path answers as the general rules do (same tag or
        /// text, same name, same end), in both passes, or leaves the tag to
        /// them.
        #[test]
        fn simple_tags_are_read_as_the_general_rules_read_them(
            html in tag_like(),
            cut in 0usize..64,
        ) {
            let mut cut = html.len().saturating_sub(cut);
            while !html.is_char_boundary(cut) {
                cut -= 1;
            }
            for html in [html.as_str(), &html[..cut]] {
                let t = Tokenizer::new(html, Events::default());
                if let Some((fast, lowercase)) = t.simple_starttag(0) {
                    let StartTag::Tag { name_end, .. } = fast else {
                        return Err(TestCaseError::fail(format!("{html:?}: {fast:?}")));
                    };
                    prop_assert_eq!(fast, general(html, false), "{:?}", html);
                    prop_assert_eq!(fast, general(html, true), "{:?}", html);
                    prop_assert_eq!(lowercase, is_lowercase(html, 1, name_end), "{:?}", html);
                }
            }
        }

        /// The same for end tags: `endtagfind`'s name and the end of the tag.
        #[test]
        fn simple_end_tags_are_read_as_the_general_rules_read_them(
            before in proptest::sample::select(&["", " ", "\u{a0}", "\u{b}"][..]),
            name in proptest::sample::select(&["a", "P", "h1", "x-y:z", "\u{e9}", "3"][..]),
            pieces in proptest::collection::vec(proptest::sample::select(TAG_PIECES), 0..6),
        ) {
            let html = format!("</{before}{name}{}", pieces.concat());
            let t = Tokenizer::new(&html, Events::default());
            if let Some((name_end, gtpos, lowercase)) = t.simple_endtag(0) {
                let mut g = Tokenizer::new(&html, Events::default());
                prop_assert_eq!(Some((Some((2, name_end)), gtpos)), g.general_endtag(0));
                prop_assert_eq!(lowercase, is_lowercase(&html, 2, name_end), "{:?}", html);
            }
        }

        /// Whole documents give the same events with and without the simple
        /// path.
        #[test]
        fn documents_give_the_same_events_with_the_simple_path(html in document()) {
            let mut fast = Tokenizer::new(&html, Events::default());
            let fast_result = fast.run().map_err(|e| e.to_string());
            let mut general = Tokenizer::new(&html, Events::default());
            general.general_only = true;
            let general_result = general.run().map_err(|e| e.to_string());
            prop_assert_eq!(fast_result, general_result);
            prop_assert_eq!(fast.sink.0, general.sink.0, "{:?}", html);
        }
    }

    proptest::proptest! {
        #[test]
        fn find2_is_memchr2(
            // Mostly no match, so that some lie beyond the first 32 bytes.
            bytes in proptest::collection::vec(
                prop_oneof![
                    30 => Just(b'a'),
                    1 => proptest::sample::select(&[b'<', b'&', b'"', 0x80, 0xff][..]),
                ],
                0..100,
            ),
            from in 0usize..110,
            pair in proptest::sample::select(&[(b'<', b'&'), (b'"', b'"'), (0xff, b'a')][..]),
        ) {
            let (x, y) = pair;
            let expected = bytes.get(from..).and_then(|r| memchr2(x, y, r)).map(|o| from + o);
            prop_assert_eq!(find2(&bytes, from, x, y), expected);
        }
    }

    #[test]
    fn find2_finds_each_position() {
        for len in [0, 1, 31, 32, 33, 70] {
            for at in 0..len {
                let mut bytes = vec![b'a'; len];
                bytes[at] = b'&';
                for from in 0..=len {
                    let expected = (from <= at).then_some(at);
                    assert_eq!(
                        find2(&bytes, from, b'<', b'&'),
                        expected,
                        "{len} {at} {from}"
                    );
                }
            }
            assert_eq!(find2(&vec![b'a'; len], 0, b'<', b'&'), None);
        }
    }

    #[test]
    fn common_entities_agree_with_the_table() {
        for name in ["gt", "lt", "amp", "quot", "apos", "nbsp", "copy"] {
            let from_table = NAMED
                .binary_search_by(|&(k, _)| k.cmp(name))
                .map(|i| NAMED[i].1);
            assert_eq!(common_entity(name), from_table.ok(), "{name}");
        }
        for name in ["GT", "g", "gtx", "", "Amp"] {
            assert_eq!(common_entity(name), None, "{name}");
        }
    }

    #[test]
    fn linear_on_pathological_input() {
        // Each of these is quadratic with naive searches; 100k repetitions
        // would take minutes then.
        for unit in [
            "<a",
            "<a b='",
            "&#;<a b='<a b='",
            "</a",
            "<!-- >",
            "<a/",
            "<a b='<a c=\"<a d='",
            "&#;<a b=\"x<a c='y ",
        ] {
            let html = format!("&#;{}", unit.repeat(100_000));
            let mut t = Tokenizer::new(&html, Events::default());
            t.run().expect("accepted");
        }
    }
}
