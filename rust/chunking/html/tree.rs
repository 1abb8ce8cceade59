//! BeautifulSoup 4.15's tree building (`BeautifulSoup.handle_starttag`,
//! `handle_endtag`/`_popToTag`, `endData`, and `BeautifulSoupHTMLParser`'s
//! handling of void elements), reduced to what the header splitter reads.
//!
//! Tags live in an arena in creation order, which is the pre-order of the
//! final tree, so a tag's subtree is a contiguous range of indices. Each tag
//! keeps its depth (its number of parents, the `BeautifulSoup` object
//! included) and the list of its direct strings, already stripped; strings
//! that strip to nothing are dropped, since the splitter drops them too.
//!
//! A string made of one run of the source (text between two tags, the usual
//! case) is kept as that range of the source rather than copied: only
//! strings with references, markup declarations or pieces from several
//! places are written into the tree's own buffer.

use std::collections::HashMap;

use super::tokenizer::{FxBuild, Sink, load_le};
use crate::unicode;

/// Marks the end of a piece list.
const NONE: u32 = u32::MAX;

/// Name ids fixed in advance.
pub(crate) const DOCUMENT: u32 = 0;
pub(crate) const BODY: u32 = 1;
const FIRST_VOID: u32 = 2;

/// `HTMLTreeBuilder.empty_element_tags`.
const VOID: [&str; 24] = [
    "area", "base", "basefont", "bgsound", "br", "col", "command", "embed", "frame", "hr", "image",
    "img", "input", "isindex", "keygen", "link", "menuitem", "meta", "nextid", "param", "source",
    "spacer", "track", "wbr",
];

#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub name: u32,
    /// `len(list(node.parents))`.
    pub depth: u32,
    pub first: u32,
    last: u32,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Piece {
    pub start: usize,
    pub end: usize,
    pub next: u32,
    /// A range of the source, else of `Tree::text`.
    pub in_source: bool,
}

/// `str.strip()`, without the call when both ends are ASCII.
///
/// Why: most strings are a word or more of text (nothing to strip) or a
/// line break and indentation between two tags (nothing left);
/// `unicode::strip`'s two calls were 5% of the instructions of HTML
/// chunking, then 3% of its samples for the whitespace-only runs alone. Only
/// a non-ASCII byte next to the stripped ASCII spaces, which may be Unicode
/// whitespace, goes to `unicode::strip`. `strip_is_str_strip` checks the
/// equality.
#[inline(always)]
fn strip(raw: &str) -> &str {
    let space = |b: u8| matches!(b, b'\t'..=b'\r' | 0x1c..=b' ');
    let b = raw.as_bytes();
    let Some(start) = b.iter().position(|&c| !space(c)) else {
        // Empty, within `raw` as `unicode::strip` leaves it.
        return raw.get(b.len()..).unwrap_or_default();
    };
    // Not empty: some byte is no ASCII space.
    let end = b.iter().rposition(|&c| !space(c)).map_or(start, |e| e + 1);
    if b[start] >= 0x80 || b[end - 1] >= 0x80 {
        return unicode::strip(raw);
    }
    // Both ends are ASCII bytes, so character boundaries.
    raw.get(start..end).unwrap_or_default()
}

/// Tag names to small integers.
pub(crate) struct Names {
    /// Recently seen short names: (key, id), by a hash of the key.
    recent: [(u64, u32); 64],
    /// Names of at most 7 bytes, packed into an integer with their length.
    short: HashMap<u64, u32, FxBuild>,
    long: HashMap<Box<str>, u32, FxBuild>,
    count: u32,
}

/// `name` packed with its length, if it has at most 7 bytes.
#[inline]
fn short_key(name: &str) -> Option<u64> {
    let b = name.as_bytes();
    if b.len() > 7 {
        return None;
    }
    // The length in the top byte, the bytes below it (see `load_le` for why
    // not through a stack copy).
    Some(load_le(b) | (b.len() as u64) << 56)
}

impl Names {
    fn new() -> Self {
        let mut names = Names {
            recent: [(u64::MAX, 0); 64],
            short: HashMap::default(),
            long: HashMap::default(),
            count: 0,
        };
        names.intern("[document]");
        names.intern("body");
        for v in VOID {
            names.intern(v);
        }
        names
    }

    #[inline]
    fn slot(key: u64) -> usize {
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize
    }

    #[inline]
    pub(crate) fn intern(&mut self, name: &str) -> u32 {
        let next = self.count;
        let id = match short_key(name) {
            Some(key) => {
                let slot = Self::slot(key);
                let (k, id) = self.recent[slot];
                if k == key {
                    return id;
                }
                let id = *self.short.entry(key).or_insert(next);
                self.recent[slot] = (key, id);
                id
            }
            None => match self.long.get(name) {
                Some(&id) => id,
                None => {
                    self.long.insert(name.into(), next);
                    next
                }
            },
        };
        if id == next {
            self.count += 1;
        }
        id
    }

    #[inline]
    fn get(&self, name: &str) -> Option<u32> {
        match short_key(name) {
            Some(key) => {
                let (k, id) = self.recent[Self::slot(key)];
                if k == key {
                    return Some(id);
                }
                self.short.get(&key).copied()
            }
            None => self.long.get(name).copied(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.count as usize
    }
}

/// The parse tree, as far as the splitter needs it.
pub(crate) struct Tree<'a> {
    /// The document the tokenizer reads.
    src: &'a str,
    pub names: Names,
    /// Node 0 is the `BeautifulSoup` object itself.
    pub nodes: Vec<Node>,
    pub pieces: Vec<Piece>,
    /// The text of the pieces not in the source.
    pub text: String,
    /// Start of the data not yet made into a string (`current_data`).
    pending: usize,
    /// The data not yet made into a string when it is one range of the
    /// source (then none is in `text` after `pending`).
    pending_source: Option<(usize, usize)>,
    /// The total length of the pieces.
    pub piece_bytes: usize,
    /// Open tags; `stack[0]` is the document.
    stack: Vec<u32>,
    /// `open_tag_counter`, by name id.
    open: Vec<u32>,
    /// `already_closed_empty_element`, as a count by name id.
    closed_void: Vec<u32>,
    /// The first `<body>` and the end of its subtree.
    pub body: Option<(u32, u32)>,
    body_open: bool,
}

impl<'a> Tree<'a> {
    /// The tree of `src`, whose ranges [`Sink::source_data`] gives.
    pub(crate) fn new(src: &'a str) -> Self {
        let capacity_hint = src.len();
        let names = Names::new();
        let n = names.len();
        let mut nodes = Vec::with_capacity(capacity_hint / 64 + 1);
        nodes.push(Node {
            name: DOCUMENT,
            depth: 0,
            first: NONE,
            last: NONE,
        });
        Tree {
            src,
            names,
            nodes,
            pieces: Vec::with_capacity(capacity_hint / 64 + 1),
            // Most text stays in the source.
            text: String::with_capacity(capacity_hint / 64),
            pending: 0,
            pending_source: None,
            piece_bytes: 0,
            stack: vec![0],
            open: vec![0; n],
            closed_void: vec![0; n],
            body: None,
            body_open: false,
        }
    }

    #[inline]
    fn is_void(id: u32) -> bool {
        (FIRST_VOID..FIRST_VOID + VOID.len() as u32).contains(&id)
    }

    fn intern(&mut self, name: &str) -> u32 {
        let id = self.names.intern(name);
        if id as usize >= self.open.len() {
            self.open.push(0);
            self.closed_void.push(0);
        }
        id
    }

    /// `endData`: the pending text becomes a string of the current tag.
    /// Its surrounding whitespace stays in `text`, outside the piece.
    #[inline]
    fn end_data(&mut self) {
        let (start, end, in_source) = if let Some((from, to)) = self.pending_source.take() {
            let raw = self.src.get(from..to).unwrap_or_default();
            let stripped = strip(raw);
            if stripped.is_empty() {
                return;
            }
            let start = from + (stripped.as_ptr() as usize - raw.as_ptr() as usize);
            (start, start + stripped.len(), true)
        } else {
            if self.text.len() == self.pending {
                return;
            }
            let raw = &self.text[self.pending..];
            let stripped = strip(raw);
            if stripped.is_empty() {
                self.text.truncate(self.pending);
                return;
            }
            let start = self.pending + (stripped.as_ptr() as usize - raw.as_ptr() as usize);
            let end = start + stripped.len();
            self.text.truncate(end);
            self.pending = end;
            (start, end, false)
        };
        self.piece_bytes += end - start;
        let node = *self.stack.last().unwrap_or(&0) as usize;
        let idx = self.pieces.len() as u32;
        self.pieces.push(Piece {
            start,
            end,
            next: NONE,
            in_source,
        });
        if let Some(nd) = self.nodes.get_mut(node) {
            if nd.last == NONE {
                nd.first = idx;
            } else if let Some(prev) = self.pieces.get_mut(nd.last as usize) {
                prev.next = idx;
            }
            nd.last = idx;
        }
    }

    fn pop(&mut self) {
        if self.stack.len() <= 1 {
            return;
        }
        let Some(top) = self.stack.pop() else { return };
        let name = self.nodes[top as usize].name;
        self.open[name as usize] -= 1;
        if self.body_open
            && let Some((b, _)) = self.body
            && b == top
        {
            self.body = Some((b, self.nodes.len() as u32));
            self.body_open = false;
        }
    }

    /// `_popToTag`: pops up to and including the latest open tag `id`.
    fn pop_to(&mut self, id: u32) {
        if self.open[id as usize] == 0 {
            return;
        }
        while self.stack.len() > 1 {
            let top = self.stack[self.stack.len() - 1];
            let name = self.nodes[top as usize].name;
            self.pop();
            if name == id {
                break;
            }
        }
    }

    /// The text of `node`: its strings joined with `" "`, appended to `out`.
    pub(crate) fn write_text(&self, node: &Node, out: &mut String) {
        let mut p = node.first;
        let mut first = true;
        while let Some(piece) = self.pieces.get(p as usize) {
            if !first {
                out.push(' ');
            }
            first = false;
            let text = if piece.in_source {
                self.src
            } else {
                &self.text
            };
            out.push_str(text.get(piece.start..piece.end).unwrap_or_default());
            p = piece.next;
        }
    }

    /// Moves pending data that is a range of the source into `text`, so
    /// that more can be appended to it.
    #[inline]
    fn spill(&mut self) {
        if let Some((from, to)) = self.pending_source.take() {
            self.text
                .push_str(self.src.get(from..to).unwrap_or_default());
        }
    }

    /// `_feed`'s end: the last string, and every tag closed.
    pub(crate) fn finish(&mut self) {
        self.end_data();
        while self.stack.len() > 1 {
            self.pop();
        }
    }
}

impl Sink for Tree<'_> {
    #[inline]
    fn data(&mut self, text: &str) {
        self.spill();
        self.text.push_str(text);
    }

    #[inline]
    fn source_data(&mut self, from: usize, to: usize, text: &str) {
        if self.text.len() != self.pending {
            self.text.push_str(text);
            return;
        }
        self.pending_source = match self.pending_source {
            None => Some((from, to)),
            Some((start, end)) if end == from => Some((start, to)),
            Some(_) => {
                self.spill();
                self.text.push_str(text);
                None
            }
        };
    }

    fn start_tag(&mut self, name: &str, self_closing: bool) {
        let id = self.intern(name);
        self.end_data();
        let node = self.nodes.len() as u32;
        self.nodes.push(Node {
            name: id,
            depth: self.stack.len() as u32,
            first: NONE,
            last: NONE,
        });
        self.stack.push(node);
        self.open[id as usize] += 1;
        if id == BODY && self.body.is_none() {
            self.body = Some((node, 0));
            self.body_open = true;
        }
        if self_closing {
            // handle_startendtag: closed at once, nothing remembered.
            self.pop_to(id);
        } else if Self::is_void(id) {
            // An empty-element tag is closed at once, and the next explicit
            // end tag of that name is then ignored.
            self.pop_to(id);
            self.closed_void[id as usize] += 1;
        }
    }

    fn end_tag(&mut self, name: &str) {
        match self.names.get(name) {
            Some(id) if self.closed_void[id as usize] > 0 => {
                self.closed_void[id as usize] -= 1;
            }
            Some(id) => {
                self.end_data();
                self.pop_to(id);
            }
            None => self.end_data(),
        }
    }

    fn special(&mut self, text: &str) {
        self.end_data();
        self.text.push_str(text);
        self.end_data();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (name, depth, text) of each tag, in creation order.
    fn tags(tree: &Tree<'_>) -> Vec<(String, u32, String)> {
        let mut names = vec![String::new(); tree.names.len()];
        for (name, &id) in &tree.names.long {
            names[id as usize] = name.to_string();
        }
        for (&key, &id) in &tree.names.short {
            let bytes = key.to_le_bytes();
            let len = bytes[7] as usize;
            names[id as usize] = String::from_utf8_lossy(&bytes[..len]).into_owned();
        }
        tree.nodes
            .iter()
            .map(|n| {
                let mut text = String::new();
                tree.write_text(n, &mut text);
                (names[n.name as usize].clone(), n.depth, text)
            })
            .collect()
    }

    fn tag(name: &str, depth: u32, text: &str) -> (String, u32, String) {
        (name.to_string(), depth, text.to_string())
    }

    #[test]
    fn strings_merge_until_the_next_event() {
        let mut t = Tree::new("");
        t.data(" a");
        t.data("b ");
        t.start_tag("p", false);
        t.data("c");
        t.end_tag("nothing-open");
        t.data("d");
        t.special(" e ");
        t.data(" \n ");
        t.finish();
        assert_eq!(tags(&t), [tag("[document]", 0, "ab"), tag("p", 1, "c d e")]);
    }

    #[test]
    fn end_tags_pop_to_the_latest_open_tag_of_that_name() {
        let mut t = Tree::new("");
        for name in ["div", "p", "b"] {
            t.start_tag(name, false);
        }
        t.end_tag("p");
        t.data("x");
        t.end_tag("b");
        t.data("y");
        t.finish();
        assert_eq!(
            tags(&t),
            [
                tag("[document]", 0, ""),
                tag("div", 1, "x y"),
                tag("p", 2, ""),
                tag("b", 3, "")
            ]
        );
    }

    #[test]
    fn void_tags_close_at_once_and_swallow_one_end_tag() {
        let mut t = Tree::new("");
        t.start_tag("br", false);
        t.start_tag("br", true);
        t.data("a");
        t.end_tag("br"); // taken by the first <br>: no string boundary
        t.data("b");
        t.end_tag("br"); // a real end tag: ends the string
        t.data("c");
        t.finish();
        assert_eq!(
            tags(&t),
            [
                tag("[document]", 0, "ab c"),
                tag("br", 1, ""),
                tag("br", 1, "")
            ]
        );
    }

    #[test]
    fn body_is_the_first_one_and_its_subtree() {
        let mut t = Tree::new("");
        t.start_tag("html", false);
        t.start_tag("body", false);
        t.start_tag("p", false);
        t.start_tag("body", false);
        t.end_tag("body");
        t.end_tag("body");
        t.start_tag("p", false);
        t.finish();
        assert_eq!(t.body, Some((2, 5)));
        let mut t = Tree::new("");
        t.start_tag("body", false);
        t.start_tag("p", false);
        t.finish();
        assert_eq!(t.body, Some((1, 3)));
    }

    #[test]
    fn strip_is_str_strip() {
        let samples = [
            "",
            " ",
            "\n",
            "a",
            " a",
            "a ",
            " a b ",
            "\u{1c}a\u{1f}",
            "\u{a0}a\u{3000}",
            "a\u{85}",
            "\u{e9}",
            "\u{e9} ",
            "x\u{b}",
            "\u{7f}",
            "\n   \t",
            "\u{1c}\u{1d}\u{1e}\u{1f}",
            " \u{a0}",
            "\u{a0} ",
            " \u{a0}x\u{2003} ",
            " x\u{e9}\u{3000}",
            "\u{3000}\n",
            "\n\u{e9}\n",
        ];
        for s in samples {
            assert_eq!(strip(s), unicode::strip(s), "{s:?}");
        }
        // Every string of up to three characters from an alphabet of ASCII
        // and Unicode spaces, non-spaces and multi-byte characters.
        let alphabet = [
            ' ',
            '\n',
            '\u{1f}',
            'a',
            '\u{85}',
            '\u{a0}',
            '\u{e9}',
            '\u{2028}',
            '\u{3000}',
            '\u{10348}',
        ];
        for x in alphabet {
            for y in alphabet {
                for z in alphabet {
                    for s in [format!("{x}"), format!("{x}{y}"), format!("{x}{y}{z}")] {
                        assert_eq!(strip(&s), unicode::strip(&s), "{s:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn long_and_short_names_intern_apart() {
        let mut names = Names::new();
        let a = names.intern("blockquote");
        let b = names.intern("p");
        assert_ne!(a, b);
        assert_eq!(names.intern("blockquote"), a);
        assert_eq!(names.get("p"), Some(b));
        assert_eq!(names.get("body"), Some(BODY));
        assert_eq!(names.get("missing"), None);
    }
}
