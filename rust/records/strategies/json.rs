//! A JSON document split on its structure; every chunk is valid JSON.
//!
//! A value that fits in `chunk_size` is one chunk, its source text exactly.
//! A larger object or array is split into groups of consecutive members
//! (objects: `"key": value` as written; arrays: elements), each group
//! wrapped in its container's brackets: `{"a": 1, "b": [2]}`, `[3, 4]`. A
//! member too large for a group of its own is split the same way, one level
//! down. A string longer than the size is cut into several JSON strings
//! (never inside an escape). `metadata["json_path"]` is the path of the
//! value or of the container (`$`, `$.key`, `$["a key"]`, `$.list[3]`);
//! `metadata["json_members"]` lists a group's keys or indices.
//!
//! Grouped chunks are the one case where `text` is not `source[start:end]`:
//! the span runs from the group's first member to its last, and the text
//! adds the brackets and joins the members with `", "`.

use std::ops::Range;

use crate::chunking::recursive::LengthFunction;
use crate::error::{Error, Result};
use crate::records::{Options, Raw, Split, Value, has_word_char, split_to_max};

/// The deepest nesting read (deeper documents are rejected, not recursed
/// into without bound).
const MAX_DEPTH: usize = 256;

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> Error {
        let before = &self.s[..self.at.min(self.s.len())];
        let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
        let col = 1 + before.iter().rev().take_while(|&&b| b != b'\n').count();
        Error::InvalidArgument(format!("invalid JSON at line {line} column {col}: {what}"))
    }

    fn ws(&mut self) {
        while self
            .s
            .get(self.at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.at += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Tree> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        self.ws();
        let start = self.at;
        let kind = match self.s.get(self.at) {
            Some(b'{') => {
                self.at += 1;
                let mut members = Vec::new();
                self.ws();
                if self.s.get(self.at) == Some(&b'}') {
                    self.at += 1;
                } else {
                    loop {
                        self.ws();
                        let key_start = self.at;
                        if self.s.get(self.at) != Some(&b'"') {
                            return Err(self.error("expected a key"));
                        }
                        let key = self.string()?;
                        self.ws();
                        if self.s.get(self.at) != Some(&b':') {
                            return Err(self.error("expected ':'"));
                        }
                        self.at += 1;
                        let v = self.value(depth + 1)?;
                        members.push((key, key_start, v));
                        self.ws();
                        match self.s.get(self.at) {
                            Some(b',') => self.at += 1,
                            Some(b'}') => {
                                self.at += 1;
                                break;
                            }
                            _ => return Err(self.error("expected ',' or '}'")),
                        }
                    }
                }
                TreeKind::Object(members)
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s.get(self.at) == Some(&b']') {
                    self.at += 1;
                } else {
                    loop {
                        items.push(self.value(depth + 1)?);
                        self.ws();
                        match self.s.get(self.at) {
                            Some(b',') => self.at += 1,
                            Some(b']') => {
                                self.at += 1;
                                break;
                            }
                            _ => return Err(self.error("expected ',' or ']'")),
                        }
                    }
                }
                TreeKind::Array(items)
            }
            Some(b'"') => {
                self.string()?;
                TreeKind::Str
            }
            Some(b't') => self.literal(b"true")?,
            Some(b'f') => self.literal(b"false")?,
            Some(b'n') => self.literal(b"null")?,
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(_) => return Err(self.error("unexpected character")),
            None => return Err(self.error("unexpected end")),
        };
        Ok(Tree {
            range: start..self.at,
            kind,
        })
    }

    fn literal(&mut self, word: &[u8]) -> Result<TreeKind> {
        if self.s[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(TreeKind::Other)
        } else {
            Err(self.error("unexpected word"))
        }
    }

    fn number(&mut self) -> Result<TreeKind> {
        let start = self.at;
        if self.s.get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        let digits = |p: &mut Self| {
            let from = p.at;
            while p.s.get(p.at).is_some_and(u8::is_ascii_digit) {
                p.at += 1;
            }
            p.at > from
        };
        match self.s.get(self.at) {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return Err(self.error("bad number")),
        }
        if self.s.get(self.at) == Some(&b'.') {
            self.at += 1;
            if !digits(self) {
                return Err(self.error("bad number"));
            }
        }
        if matches!(self.s.get(self.at), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.s.get(self.at), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !digits(self) {
                return Err(self.error("bad number"));
            }
        }
        debug_assert!(self.at > start);
        Ok(TreeKind::Other)
    }

    /// A string literal at `at`: its decoded text.
    fn string(&mut self) -> Result<String> {
        self.at += 1;
        let mut out = String::new();
        loop {
            let Some(&b) = self.s.get(self.at) else {
                return Err(self.error("unterminated string"));
            };
            match b {
                b'"' => {
                    self.at += 1;
                    return Ok(out);
                }
                b'\\' => {
                    let e = self.s.get(self.at + 1).copied();
                    self.at += 2;
                    match e {
                        Some(b'"') => out.push('"'),
                        Some(b'\\') => out.push('\\'),
                        Some(b'/') => out.push('/'),
                        Some(b'b') => out.push('\u{8}'),
                        Some(b'f') => out.push('\u{c}'),
                        Some(b'n') => out.push('\n'),
                        Some(b'r') => out.push('\r'),
                        Some(b't') => out.push('\t'),
                        Some(b'u') => {
                            let hi = self.hex4()?;
                            let cp = if (0xD800..0xDC00).contains(&hi)
                                && self.s[self.at..].starts_with(b"\\u")
                            {
                                self.at += 2;
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                                } else {
                                    0xFFFD
                                }
                            } else {
                                hi
                            };
                            out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                        }
                        _ => return Err(self.error("bad escape")),
                    }
                }
                0..=0x1F => return Err(self.error("control character in string")),
                _ => {
                    // Copy the run of plain bytes (valid UTF-8: from a str).
                    let from = self.at;
                    while self
                        .s
                        .get(self.at)
                        .is_some_and(|&c| c != b'"' && c != b'\\' && c >= 0x20)
                    {
                        self.at += 1;
                    }
                    out.push_str(&String::from_utf8_lossy(&self.s[from..self.at]));
                }
            }
        }
    }

    fn hex4(&mut self) -> Result<u32> {
        let h = self
            .s
            .get(self.at..self.at + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or_else(|| self.error("bad \\u escape"))?;
        self.at += 4;
        Ok(h)
    }
}

/// A path segment for a key: `.key` for identifiers, `["key"]` otherwise.
fn key_segment(key: &str) -> String {
    let ident = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ident {
        format!(".{key}")
    } else {
        format!("[{}]", json_string(key))
    }
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A node with its range and its children's.
struct Tree {
    range: Range<usize>,
    kind: TreeKind,
}

enum TreeKind {
    Object(Vec<(String, usize, Tree)>),
    Array(Vec<Tree>),
    Str,
    Other,
}

struct Chunker<'a, L> {
    source: &'a str,
    size: usize,
    max: usize,
    length: &'a L,
    out: Vec<Raw>,
}

impl<L: LengthFunction<str>> Chunker<'_, L> {
    fn fits(&self, text: &str, limit: usize) -> bool {
        !self.length.exceeds(text, limit)
    }

    fn meta(path: &str, members: Option<Value>) -> Vec<(String, Value)> {
        let mut m = vec![("json_path".to_string(), Value::Str(path.to_string()))];
        if let Some(members) = members {
            m.push(("json_members".to_string(), members));
        }
        m
    }

    fn node(&mut self, t: &Tree, path: &str) {
        let text = &self.source[t.range.clone()];
        if self.fits(text, self.size) {
            let mut raw = Raw::span(t.range.clone());
            raw.metadata = Self::meta(path, None);
            self.out.push(raw);
            return;
        }
        match &t.kind {
            TreeKind::Object(members) => {
                let items: Vec<Item> = members
                    .iter()
                    .map(|(key, key_start, v)| Item {
                        range: *key_start..v.range.end,
                        label: Value::Str(key.clone()),
                        child_path: format!("{path}{}", key_segment(key)),
                        tree: v,
                        key: Some(key.as_str()),
                    })
                    .collect();
                self.groups(&items, path, ('{', '}'));
            }
            TreeKind::Array(elements) => {
                let items: Vec<Item> = elements
                    .iter()
                    .enumerate()
                    .map(|(i, v)| Item {
                        range: v.range.clone(),
                        label: Value::Int(i as i64),
                        child_path: format!("{path}[{i}]"),
                        tree: v,
                        key: None,
                    })
                    .collect();
                self.groups(&items, path, ('[', ']'));
            }
            TreeKind::Str => self.long_string(t.range.clone(), path, None),
            TreeKind::Other => {
                // A number longer than the size: kept whole.
                let mut raw = Raw::span(t.range.clone());
                raw.metadata = Self::meta(path, None);
                self.out.push(raw);
            }
        }
    }

    fn wrapped(&self, items: &[Item<'_>], brackets: (char, char)) -> String {
        let mut s = String::new();
        s.push(brackets.0);
        for (i, it) in items.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            s.push_str(&self.source[it.range.clone()]);
        }
        s.push(brackets.1);
        s
    }

    fn emit_group(&mut self, items: &[Item<'_>], path: &str, brackets: (char, char)) {
        let text = self.wrapped(items, brackets);
        let members = Value::List(items.iter().map(|it| it.label.clone()).collect());
        let (Some(first), Some(last)) = (items.first(), items.last()) else {
            return;
        };
        self.out.push(Raw {
            range: first.range.start..last.range.end,
            own_start: first.range.start,
            headings: Vec::new(),
            metadata: Self::meta(path, Some(members)),
            text: Some(text),
            measured: None,
        });
    }

    fn groups(&mut self, items: &[Item<'_>], path: &str, brackets: (char, char)) {
        let mut start = 0;
        let mut i = 0;
        // The group so far, without its closing bracket.
        let mut text = String::from(brackets.0);
        while i < items.len() {
            let before = text.len();
            if start < i {
                text.push_str(", ");
            }
            text.push_str(&self.source[items[i].range.clone()]);
            text.push(brackets.1);
            let fits = self.fits(&text, self.size);
            text.pop();
            if fits {
                i += 1;
                continue;
            }
            text.truncate(before);
            if start < i {
                self.emit_group(&items[start..i], path, brackets);
                start = i;
                text.truncate(1);
                continue;
            }
            // One member alone does not fit: one level down.
            let it = &items[i];
            match (&it.tree.kind, it.key) {
                (TreeKind::Str, Some(key)) => {
                    self.long_string(it.tree.range.clone(), &it.child_path, Some(key))
                }
                _ => self.node(it.tree, &it.child_path),
            }
            i += 1;
            start = i;
        }
        if start < items.len() {
            self.emit_group(&items[start..], path, brackets);
        }
    }

    /// A string literal longer than the size: JSON strings of its parts,
    /// cut outside escapes (`{"key": "part"}` under a key).
    fn long_string(&mut self, range: Range<usize>, path: &str, key: Option<&str>) {
        let inner = range.start + 1..range.end - 1;
        let prefix = key.map_or(String::new(), |k| format!("{{{}: ", json_string(k)));
        let suffix = if key.is_some() { "}" } else { "" };
        // Room for the quotes, the key and a cut pushed past an escape (a
        // surrogate pair is 12 bytes).
        let overhead = self.length.length(&format!("{prefix}\"\"{suffix}")) + 12;
        let budget = self.max.saturating_sub(overhead).max(1);
        let escapes = escape_spans(&self.source[inner.clone()], inner.start);
        let mut cuts: Vec<usize> = vec![inner.start];
        for r in split_to_max(self.source, inner.clone(), budget, self.length) {
            cuts.push(r.end);
        }
        cuts.push(inner.end);
        // No cut inside an escape: moved to its end.
        for c in &mut cuts {
            if let Some(e) = escapes.iter().find(|e| e.start < *c && *c < e.end) {
                *c = e.end;
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        // A part without a letter or digit goes with the part before it
        // (the first with the one after it) when the two fit together;
        // otherwise the cut moves, a character or an escape at a time,
        // into the larger part until the small one holds a letter or digit,
        // as long as it fits: no part exceeds the hard maximum.
        let fits = |a: usize, b: usize| {
            self.fits(
                &format!("{prefix}\"{}\"{suffix}", &self.source[a..b]),
                self.max,
            )
        };
        let mut k = 1;
        while k + 1 < cuts.len() {
            let (low, high) = (cuts[k - 1], cuts[k + 1]);
            let first_bare = k == 1 && !has_word_char(&self.source[low..cuts[k]]);
            if !first_bare && has_word_char(&self.source[cuts[k]..high]) {
                k += 1;
                continue;
            }
            if fits(low, high) {
                cuts.remove(k);
                continue;
            }
            let mut cut = cuts[k];
            loop {
                let moved = if first_bare {
                    unit_after(self.source, &escapes, cut)
                } else {
                    unit_before(self.source, &escapes, cut)
                };
                let small = if first_bare {
                    (low, moved)
                } else {
                    (moved, high)
                };
                if moved <= low || moved >= high || !fits(small.0, small.1) {
                    break;
                }
                cut = moved;
                if has_word_char(&self.source[small.0..small.1]) {
                    break;
                }
            }
            cuts[k] = cut;
            k += 1;
        }
        for (part, w) in cuts.windows(2).enumerate() {
            let piece = &self.source[w[0]..w[1]];
            let text = format!("{prefix}\"{piece}\"{suffix}");
            let mut metadata = Self::meta(path, None);
            metadata.push(("json_part".to_string(), Value::Int(part as i64)));
            self.out.push(Raw {
                range: w[0]..w[1],
                own_start: w[0],
                headings: Vec::new(),
                metadata,
                text: Some(text),
                measured: None,
            });
        }
    }
}

struct Item<'a> {
    range: Range<usize>,
    label: Value,
    child_path: String,
    tree: &'a Tree,
    key: Option<&'a str>,
}

/// The start of the character or escape of a string literal that ends at
/// `at`.
fn unit_before(source: &str, escapes: &[Range<usize>], at: usize) -> usize {
    match escapes.iter().find(|e| e.end == at) {
        Some(e) => e.start,
        None => source
            .get(..at)
            .and_then(|s| s.char_indices().next_back())
            .map_or(at, |(i, _)| i),
    }
}

/// The end of the character or escape of a string literal that starts at
/// `at`.
fn unit_after(source: &str, escapes: &[Range<usize>], at: usize) -> usize {
    match escapes.iter().find(|e| e.start == at) {
        Some(e) => e.end,
        None => source
            .get(at..)
            .and_then(|s| s.chars().next())
            .map_or(at, |c| at + c.len_utf8()),
    }
}

/// The byte ranges of the escapes of a string literal's inside.
fn escape_spans(inner: &str, base: usize) -> Vec<Range<usize>> {
    let b = inner.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            let high = b.get(i + 1) == Some(&b'u')
                && matches!(b.get(i + 2), Some(b'd' | b'D'))
                && matches!(b.get(i + 3), Some(b'8'..=b'9' | b'a' | b'b' | b'A' | b'B'));
            let len = match b.get(i + 1) {
                // A surrogate pair is one escape.
                Some(b'u')
                    if high && b.get(i + 6) == Some(&b'\\') && b.get(i + 7) == Some(&b'u') =>
                {
                    12
                }
                Some(b'u') => 6,
                _ => 2,
            };
            let end = (i + len).min(b.len());
            out.push(base + i..base + end);
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

pub fn split<L: LengthFunction<str>>(source: &str, options: &Options, length: &L) -> Result<Split> {
    if options.overlap > 0 {
        return Err(Error::InvalidArgument(
            "the 'json' strategy has no overlap: each chunk is a JSON document".to_string(),
        ));
    }
    let mut parser = Parser {
        s: source.as_bytes(),
        at: 0,
    };
    let tree = parser.value(0)?;
    parser.ws();
    if parser.at < source.len() {
        return Err(parser.error("extra data after the document"));
    }
    let mut chunker = Chunker {
        source,
        size: options.chunk_size,
        max: options.max_size,
        length,
        out: Vec::new(),
    };
    chunker.node(&tree, "$");
    Ok(Split {
        chunks: chunker.out,
        fixed: true,
        ..Split::default()
    })
}
