//! Header-aware HTML splitting, as langchain-text-splitters 1.1.3's
//! `HTMLHeaderTextSplitter`, which parses with BeautifulSoup 4.15.0 and
//! Python 3.11.7's `html.parser`.
//!
//! [`tokenizer`] reproduces `html.parser` with BeautifulSoup's handlers,
//! [`tree`] BeautifulSoup's tree building; this module walks the tree as
//! `_generate_documents` does. Tags are created in document order, which is
//! the pre-order of the tree, so the depth-first walk is a loop over the tags
//! in creation order (no recursion, however deep the nesting).
//!
//! For every tag under the first `<body>` (or under the document when there
//! is none), its text is its direct strings (text, comments, CDATA,
//! declarations, processing instructions, script and style content),
//! stripped, the empty ones dropped, joined with `" "`. A tag without text is
//! skipped. A header tag closes the running chunk (tags' texts joined with
//! `"  \n"`), drops the active headers of its level or deeper, and is a
//! document of its own; any other tag drops the active headers found deeper
//! in the tree than itself, then joins the chunk (or is a document of its
//! own with `return_each_element`).
//!
//! Known differences from the reference: none on any input found so far.
//! One is possible in theory: tag names are lowercased with Rust's Unicode
//! tables, kept to Python's where they differ (characters unassigned in
//! Unicode 14 are left alone), except for the final-sigma rule when a `Σ` in
//! a tag name stands next to a character assigned after Unicode 14; that can
//! only change which end tag closes which start tag.
//!
//! Errors: markup `html.parser` rejects (a marked section `<![` without a
//! known keyword) gives [`Error::MarkupRejected`], as BeautifulSoup raises
//! `ParserRejectedMarkup`; a decimal character reference of more than 4300
//! digits gives [`Error::UnsupportedText`], as Python's `int()` raises
//! `ValueError` there.

pub mod entities;
mod tokenizer;
mod tree;

use std::cmp::Ordering;

use super::Section;
use crate::error::{Error, Result};
use crate::unicode;
use tokenizer::Tokenizer;
use tree::{BODY, Tree};

/// Open Notebook's headers: `h1`, `h2`, `h3`.
pub fn open_notebook_headers() -> Vec<(String, String)> {
    [("h1", "Header 1"), ("h2", "Header 2"), ("h3", "Header 3")]
        .iter()
        .map(|&(t, n)| (t.to_string(), n.to_string()))
        .collect()
}

/// A Python `int`, as `int(s)` parses it: sign and decimal digits without
/// leading zeros (empty for zero).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Level {
    negative: bool,
    digits: String,
}

impl Ord for Level {
    fn cmp(&self, other: &Self) -> Ordering {
        let magnitude = self
            .digits
            .len()
            .cmp(&other.digits.len())
            .then_with(|| self.digits.cmp(&other.digits));
        match (self.negative, other.negative) {
            (false, false) => magnitude,
            (true, true) => magnitude.reverse(),
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
        }
    }
}

impl PartialOrd for Level {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The value of a Unicode decimal digit (`str.isdecimal()`).
fn decimal_value(c: char) -> Option<u8> {
    if c.is_ascii_digit() {
        return Some(c as u8 - b'0');
    }
    let cp = c as u32;
    unicode::DECIMAL_RANGES
        .iter()
        .find(|&&(lo, hi)| lo <= cp && cp <= hi)
        // Decimal digits come in runs of ten, from zero up.
        .map(|&(lo, _)| ((cp - lo) % 10) as u8)
}

/// Python's `int(s)` (base 10): surrounding whitespace, a sign, Unicode
/// decimal digits, single underscores between digits, at most 4300 digits.
fn parse_int(s: &str) -> std::result::Result<Level, String> {
    let invalid = || format!("invalid literal for int() with base 10: {s:?}");
    let body = unicode::strip(s);
    let (negative, rest) = match body.chars().next() {
        Some('-') => (true, &body[1..]),
        Some('+') => (false, &body[1..]),
        _ => (false, body),
    };
    let mut digits = String::new();
    let mut count = 0usize;
    let mut after_digit = false;
    let mut after_underscore = false;
    for c in rest.chars() {
        if c == '_' {
            if !after_digit {
                return Err(invalid());
            }
            after_digit = false;
            after_underscore = true;
            continue;
        }
        let Some(d) = decimal_value(c) else {
            return Err(invalid());
        };
        count += 1;
        after_digit = true;
        after_underscore = false;
        if !(digits.is_empty() && d == 0) {
            digits.push(char::from(b'0' + d));
        }
    }
    if count == 0 || after_underscore {
        return Err(invalid());
    }
    if count > 4300 {
        return Err(format!(
            "Exceeds the limit (4300 digits) for integer string conversion: value has {count} digits"
        ));
    }
    let negative = negative && !digits.is_empty();
    Ok(Level { negative, digits })
}

#[derive(Clone, Debug)]
struct HeaderTag {
    tag: String,
    level: Level,
    /// Index into `HtmlHeaderSplitter::names`.
    name: usize,
}

/// langchain's `HTMLHeaderTextSplitter`.
#[derive(Clone, Debug)]
pub struct HtmlHeaderSplitter {
    /// One entry per distinct tag; the name is the last one given for it.
    headers: Vec<HeaderTag>,
    names: Vec<String>,
    return_each_element: bool,
}

/// A header in force: `active_headers[name] = (text, level, dom_depth)`.
struct Active {
    name: usize,
    text: String,
    header: usize,
    depth: u32,
}

impl HtmlHeaderSplitter {
    /// `headers_to_split_on` pairs a tag ("h2") with a metadata name; the
    /// level of a tag is `int(tag[1:])`, which must parse.
    pub fn new(
        headers_to_split_on: Vec<(String, String)>,
        return_each_element: bool,
    ) -> Result<Self> {
        let mut headers: Vec<HeaderTag> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        for (tag, name) in headers_to_split_on {
            let tail = tag.char_indices().nth(1).map_or("", |(o, _)| &tag[o..]);
            let level = parse_int(tail).map_err(Error::InvalidArgument)?;
            let name = match names.iter().position(|n| *n == name) {
                Some(i) => i,
                None => {
                    names.push(name);
                    names.len() - 1
                }
            };
            match headers.iter_mut().find(|h| h.tag == tag) {
                Some(h) => h.name = name,
                None => headers.push(HeaderTag { tag, level, name }),
            }
        }
        Ok(Self {
            headers,
            names,
            return_each_element,
        })
    }

    /// `split_text(html)`: `(page_content, metadata)` of each document.
    pub fn split(&self, html: &str) -> Result<Vec<Section>> {
        let mut tokenizer = Tokenizer::new(html, Tree::new(html.len()));
        tokenizer.run()?;
        let mut tree = tokenizer.sink;
        tree.finish();

        // Name id -> index into `self.headers`.
        let header_ids: Vec<u32> = self
            .headers
            .iter()
            .map(|h| tree.names.intern(&h.tag))
            .collect();
        let mut header_of = vec![u32::MAX; tree.names.len()];
        for (i, &id) in header_ids.iter().enumerate() {
            header_of[id as usize] = i as u32;
        }

        let (start, end) = match tree.body {
            Some((b, e)) => (b as usize, e as usize),
            None => (0, tree.nodes.len()),
        };
        debug_assert!(
            tree.nodes
                .get(start)
                .is_none_or(|n| tree.body.is_none() || n.name == BODY)
        );

        let mut out = Vec::new();
        let mut active: Vec<Active> = Vec::new();
        let mut chunk = String::new();
        let mut node_text = String::new();
        let each = self.return_each_element;

        for node in tree.nodes.get(start..end).unwrap_or(&[]) {
            if node.first == u32::MAX {
                continue;
            }
            node_text.clear();
            let mut p = node.first;
            while let Some(piece) = tree.pieces.get(p as usize) {
                if !node_text.is_empty() {
                    node_text.push(' ');
                }
                node_text.push_str(&tree.text[piece.start..piece.end]);
                p = piece.next;
            }
            let header = header_of
                .get(node.name as usize)
                .copied()
                .unwrap_or(u32::MAX);
            if header != u32::MAX {
                let header = header as usize;
                if !each && !chunk.is_empty() {
                    out.push(Section {
                        content: std::mem::take(&mut chunk),
                        metadata: self.metadata(&active),
                    });
                }
                let level = &self.headers[header].level;
                active.retain(|a| self.headers[a.header].level < *level);
                let name = self.headers[header].name;
                let entry = Active {
                    name,
                    text: node_text.clone(),
                    header,
                    depth: node.depth,
                };
                match active.iter_mut().find(|a| a.name == name) {
                    Some(a) => *a = entry,
                    None => active.push(entry),
                }
                out.push(Section {
                    content: node_text.clone(),
                    metadata: self.metadata(&active),
                });
            } else {
                active.retain(|a| node.depth >= a.depth);
                if each {
                    out.push(Section {
                        content: node_text.clone(),
                        metadata: self.metadata(&active),
                    });
                } else {
                    if !chunk.is_empty() {
                        chunk.push_str("  \n");
                    }
                    chunk.push_str(&node_text);
                }
            }
        }
        if !each && !chunk.is_empty() {
            out.push(Section {
                content: chunk,
                metadata: self.metadata(&active),
            });
        }
        Ok(out)
    }

    fn metadata(&self, active: &[Active]) -> Vec<(String, String)> {
        active
            .iter()
            .map(|a| (self.names[a.name].clone(), a.text.clone()))
            .collect()
    }
}
