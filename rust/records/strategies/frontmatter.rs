//! YAML front matter: a document that starts with a `---` line and has a
//! closing `---` (or `...`) line. Its text is left out of the chunks and read
//! into the metadata (`"front_matter"`) with a YAML subset that needs no
//! Python package:
//! - mappings by indentation (`key: value`, `key:` and an indented block);
//! - lists by indentation (`- item`, items that are mappings too) and inline
//!   (`[a, b]`), inline mappings (`{a: 1}`);
//! - scalars: `null`/`~`, `true`/`false`, integers, floats, plain, single-
//!   and double-quoted strings; block scalars `|` and `>`;
//! - `#` comments. Anything else (anchors, tags, multi-line plain scalars)
//!   is kept as the string it is written as.

use crate::records::Value;

/// Where the body starts after the front matter, and the metadata entries.
pub fn split_off(source: &str) -> (usize, Vec<(String, Value)>) {
    match block(source) {
        Some((yaml, next)) => (next, vec![("front_matter".to_string(), parse(yaml))]),
        None => (0, Vec::new()),
    }
}

/// The front matter block at the top of `source`: its YAML text (between
/// the `---` lines) and the byte offset where the body starts (after the
/// closing `---` or `...` line and its line end); `None` when `source` does
/// not start with a `---` line or the block is never closed.
pub fn block(source: &str) -> Option<(&str, usize)> {
    let first_end = source.find('\n').unwrap_or(source.len());
    if source[..first_end].trim_end() != "---" {
        return None;
    }
    let mut at = (first_end + 1).min(source.len());
    let content_start = at;
    while at < source.len() {
        let end = source[at..].find('\n').map_or(source.len(), |i| at + i);
        let line = source[at..end].trim_end();
        if line == "---" || line == "..." {
            let next = (end + 1).min(source.len());
            return Some((&source[content_start..at], next));
        }
        at = end + 1;
    }
    None
}

/// The lines that matter: (indent, text without the indent).
fn meaningful_lines<'a>(raw: &[&'a str]) -> Vec<(usize, &'a str, usize)> {
    raw.iter()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('#')
        })
        .map(|(i, l)| {
            let n = l.len() - l.trim_start_matches(' ').len();
            (n, &l[n..], i)
        })
        .collect()
}

/// Parses a YAML subset into a value (a mapping at the top).
pub fn parse(yaml: &str) -> Value {
    let raw: Vec<&str> = yaml.lines().map(|l| l.trim_end_matches('\r')).collect();
    let lines = meaningful_lines(&raw);
    if lines.is_empty() {
        return Value::Map(Vec::new());
    }
    let mut parser = Parser { lines, raw, at: 0 };
    let indent = parser.lines[0].0;
    parser.block(indent)
}

struct Parser<'a> {
    lines: Vec<(usize, &'a str, usize)>,
    raw: Vec<&'a str>,
    at: usize,
}

impl<'a> Parser<'a> {
    fn block(&mut self, indent: usize) -> Value {
        match self.lines.get(self.at) {
            Some((_, t, _)) if is_item(t) => self.list(indent),
            _ => self.map(indent),
        }
    }

    fn list(&mut self, indent: usize) -> Value {
        let mut items = Vec::new();
        while let Some(&(n, t, _)) = self.lines.get(self.at) {
            if n != indent || !is_item(t) {
                break;
            }
            let rest = t[1..].trim_start();
            self.at += 1;
            if rest.is_empty() {
                items.push(self.nested(indent));
            } else if split_key(rest).is_some() && !rest.starts_with(['"', '\'', '[', '{']) {
                // A mapping item: its first entry on the dash's line.
                let item_indent = indent + (t.len() - rest.len());
                self.at -= 1;
                self.lines[self.at].0 = item_indent;
                self.lines[self.at].1 = rest;
                items.push(self.map(item_indent));
            } else {
                items.push(self.scalar_or_block(rest, indent));
            }
        }
        Value::List(items)
    }

    fn map(&mut self, indent: usize) -> Value {
        let mut entries: Vec<(String, Value)> = Vec::new();
        while let Some(&(n, t, _)) = self.lines.get(self.at) {
            if n != indent || is_item(t) {
                break;
            }
            self.at += 1;
            let Some((key, rest)) = split_key(t) else {
                entries.push((t.trim().to_string(), Value::Null));
                continue;
            };
            let value = if rest.is_empty() {
                self.nested(indent)
            } else {
                self.scalar_or_block(rest, indent)
            };
            match entries.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => entries.push((key, value)),
            }
        }
        Value::Map(entries)
    }

    /// The block under a `key:` or `-` line: more indented lines, or a list
    /// at the same indent under a key.
    fn nested(&mut self, indent: usize) -> Value {
        match self.lines.get(self.at) {
            Some(&(n, _, _)) if n > indent => self.block(n),
            Some(&(n, t, _)) if n == indent && is_item(t) => self.list(n),
            _ => Value::Null,
        }
    }

    fn scalar_or_block(&mut self, rest: &str, indent: usize) -> Value {
        let marker = rest.split(" #").next().unwrap_or(rest).trim();
        if matches!(marker, "|" | "|-" | "|+" | ">" | ">-" | ">+") {
            return self.block_scalar(marker, indent);
        }
        scalar(rest)
    }

    /// A `|` or `>` scalar: the following lines indented deeper.
    fn block_scalar(&mut self, marker: &str, indent: usize) -> Value {
        // The raw lines, blank ones included, after the marker's line.
        let Some(&(_, _, first_raw)) = self.lines.get(self.at.wrapping_sub(1)) else {
            return Value::Str(String::new());
        };
        let mut body: Vec<&str> = Vec::new();
        let mut block_indent = None;
        for r in &self.raw[first_raw + 1..] {
            let n = r.len() - r.trim_start_matches(' ').len();
            if r.trim().is_empty() {
                body.push("");
                continue;
            }
            if n <= indent {
                break;
            }
            let bi = *block_indent.get_or_insert(n);
            body.push(r.get(bi.min(n)..).unwrap_or(""));
        }
        // Skip the meaningful lines the block used.
        while let Some(&(n, _, _)) = self.lines.get(self.at) {
            if n <= indent {
                break;
            }
            self.at += 1;
        }
        while body.last() == Some(&"") {
            body.pop();
        }
        let mut text = if marker.starts_with('|') {
            body.join("\n")
        } else {
            let mut out = String::new();
            for (i, l) in body.iter().enumerate() {
                if i > 0 {
                    out.push(if l.is_empty() || body[i - 1].is_empty() {
                        '\n'
                    } else {
                        ' '
                    });
                }
                out.push_str(l);
            }
            out
        };
        if !marker.ends_with('-') {
            text.push('\n');
        }
        Value::Str(text)
    }
}

fn is_item(t: &str) -> bool {
    t == "-" || t.starts_with("- ")
}

/// `key: rest` (the key unquoted), when `t` is a mapping entry.
fn split_key(t: &str) -> Option<(String, &str)> {
    if let Some(q) = t.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let end = t[1..].find(q)? + 1;
        let after = t[end + 1..].trim_start();
        let rest = after.strip_prefix(':')?;
        if !(rest.is_empty() || rest.starts_with(' ')) {
            return None;
        }
        return Some((t[1..end].to_string(), rest.trim()));
    }
    let mut search = 0;
    while let Some(i) = t[search..].find(':') {
        let at = search + i;
        let rest = &t[at + 1..];
        if rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t') {
            let key = t[..at].trim();
            if key.is_empty() {
                return None;
            }
            return Some((key.to_string(), rest.trim()));
        }
        search = at + 1;
    }
    None
}

/// A scalar, an inline list or an inline mapping.
pub fn scalar(text: &str) -> Value {
    let t = strip_comment(text).trim();
    if t.starts_with('[') && t.ends_with(']') {
        return Value::List(
            split_inline(&t[1..t.len() - 1])
                .into_iter()
                .map(scalar)
                .collect(),
        );
    }
    if t.starts_with('{') && t.ends_with('}') {
        let mut entries = Vec::new();
        for part in split_inline(&t[1..t.len() - 1]) {
            match split_key(part.trim()) {
                Some((k, v)) => entries.push((k, scalar(v))),
                None => entries.push((part.trim().to_string(), Value::Null)),
            }
        }
        return Value::Map(entries);
    }
    if let Some(inner) = t.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        return Value::Str(unescape_double(inner));
    }
    if let Some(inner) = t.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
        return Value::Str(inner.replace("''", "'"));
    }
    match t {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && let Ok(i) = t.parse::<i64>()
    {
        return Value::Int(i);
    }
    if digits.bytes().any(|b| b.is_ascii_digit())
        && digits
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
        && let Ok(f) = t.parse::<f64>()
    {
        return Value::Float(f);
    }
    Value::Str(t.to_string())
}

/// A plain scalar without its ` #` comment (quotes respected).
fn strip_comment(t: &str) -> &str {
    let mut quote = None;
    let bytes = t.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if (b == b'"' || b == b'\'') && (i == 0 || bytes[i - 1] == b' ') => {
                quote = Some(b)
            }
            None if b == b'#' && i > 0 && bytes[i - 1] == b' ' => return &t[..i],
            None => {}
        }
    }
    t
}

/// Splits the inside of `[...]` or `{...}` at top-level commas.
fn split_inline(t: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut quote = None;
    let mut start = 0;
    for (i, c) in t.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(&t[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !t[start..].trim().is_empty() {
        out.push(&t[start..]);
    }
    out.into_iter().map(str::trim).collect()
}

fn unescape_double(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('/') => out.push('/'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}
