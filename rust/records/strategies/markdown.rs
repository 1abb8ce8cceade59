//! Header-aware Markdown.
//!
//! The text (after any YAML front matter, which goes to the metadata) is
//! read as CommonMark blocks at the top level: ATX headings (`#` to
//! `######`), setext headings (a paragraph underlined with `=` or `-`),
//! fenced code (```` ``` ```` or `~~~`), indented code, HTML blocks and
//! GFM tables; a `#` inside any of the others is not a heading. Headings
//! inside lists or block quotes are not section headings.
//!
//! Each heading opens a section that lasts until the next heading of the
//! same or a higher level; its heading path is that of the nearest open
//! section of a higher level plus its own (a jump from `#` to `###` leaves
//! no empty level; a later `##` closes the `###`). Sections are merged
//! bottom-up: a section whose whole subtree fits in `chunk_size` is one
//! chunk; otherwise its own text (heading and blocks before its first
//! subsection) is packed block by block, each subsection is chunked the
//! same way, and neighbouring results are merged while they fit.
//!
//! Code fences and tables are never cut: one longer than `chunk_size` is a
//! chunk of its own, up to the hard maximum; one longer than the hard
//! maximum is cut between its lines (a line longer than that by LangChain's
//! default separators). Other blocks longer than `chunk_size` are split by
//! LangChain's default separators.
//!
//! A chunk's `headings` are the heading path where its own text starts: at
//! its first letter or digit (a run of punctuation before it, such as a
//! thematic break, does not count).

use std::ops::Range;

use crate::chunking::recursive::LengthFunction;
use crate::records::{Heading, Options, Raw, Split, split_to_max};

use super::frontmatter;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    Heading(u8, String),
    /// Never cut below the hard maximum (fences, tables).
    Whole,
    Other,
}

#[derive(Clone, Debug)]
struct Block {
    range: Range<usize>,
    kind: Kind,
}

/// A line: its start and its end without the line break.
#[derive(Clone, Copy, Debug)]
struct Line {
    start: usize,
    end: usize,
}

fn lines(source: &str, from: usize) -> Vec<Line> {
    let bytes = source.as_bytes();
    let tail = bytes.get(from..).unwrap_or_default();
    // One pass of the SIMD searcher over the text, into a vector of the
    // right size: a `memchr` call per line and the vector's regrowth took a
    // quarter more instructions (callgrind, the corpus's Markdown).
    let mut out = Vec::with_capacity(memchr::memchr_iter(b'\n', tail).count() + 1);
    let mut push = |start: usize, end: usize| {
        // Without the `\r` of a `\r\n`.
        let end = if end > start && bytes[end - 1] == b'\r' {
            end - 1
        } else {
            end
        };
        out.push(Line { start, end });
    };
    let mut at = from;
    for i in memchr::memchr_iter(b'\n', tail) {
        push(at, from + i);
        at = from + i + 1;
    }
    if at < source.len() {
        push(at, source.len());
    }
    out
}

/// The lines as [`lines`] made them before (a `memchr` call per line), for
/// the equality test.
#[cfg(test)]
fn lines_one_by_one(source: &str, from: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = from;
    while at < source.len() {
        let nl = memchr::memchr(b'\n', &source.as_bytes()[at..]).map(|i| at + i);
        let (end, next) = match nl {
            Some(i) => (i, i + 1),
            None => (source.len(), source.len()),
        };
        let end = if source[at..end].ends_with('\r') {
            end - 1
        } else {
            end
        };
        out.push((at, end));
        at = next;
    }
    out
}

/// Columns of leading indentation (a tab to the next multiple of 4) and
/// the byte where the content starts.
fn indent(s: &str) -> (usize, usize) {
    let mut cols = 0;
    for (i, b) in s.bytes().enumerate() {
        match b {
            b' ' => cols += 1,
            b'\t' => cols += 4 - cols % 4,
            _ => return (cols, i),
        }
    }
    (cols, s.len())
}

fn is_blank(s: &str) -> bool {
    s.bytes().all(|b| b == b' ' || b == b'\t')
}

/// An ATX heading: its level and text.
fn atx(s: &str) -> Option<(u8, String)> {
    let (cols, at) = indent(s);
    if cols > 3 {
        return None;
    }
    let rest = &s[at..];
    let hashes = rest.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let after = &rest[hashes..];
    if !(after.is_empty() || after.starts_with(' ') || after.starts_with('\t')) {
        return None;
    }
    let mut text = after.trim_matches(|c| c == ' ' || c == '\t');
    // A closing sequence: #s alone or after a space.
    let trimmed = text.trim_end_matches('#');
    if trimmed.is_empty() {
        text = "";
    } else if trimmed.len() < text.len() && (trimmed.ends_with(' ') || trimmed.ends_with('\t')) {
        text = trimmed.trim_end_matches([' ', '\t']);
    }
    Some((hashes as u8, text.to_string()))
}

/// An opening fence: its character and length.
fn fence_open(s: &str) -> Option<(u8, usize)> {
    let (cols, at) = indent(s);
    if cols > 3 {
        return None;
    }
    let rest = &s.as_bytes()[at..];
    let c = *rest.first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let n = rest.iter().take_while(|&&b| b == c).count();
    if n < 3 {
        return None;
    }
    // A backtick fence's info string holds no backtick.
    if c == b'`' && rest[n..].contains(&b'`') {
        return None;
    }
    Some((c, n))
}

fn fence_closes(s: &str, c: u8, n: usize) -> bool {
    let (cols, at) = indent(s);
    if cols > 3 {
        return false;
    }
    let rest = &s.as_bytes()[at..];
    let m = rest.iter().take_while(|&&b| b == c).count();
    m >= n && is_blank(&s[at + m..])
}

/// A setext underline: the heading level it makes.
fn setext_underline(s: &str) -> Option<u8> {
    let (cols, at) = indent(s);
    if cols > 3 {
        return None;
    }
    let rest = s[at..].trim_end_matches([' ', '\t']);
    let c = rest.bytes().next()?;
    if (c == b'=' || c == b'-') && rest.bytes().all(|b| b == c) {
        Some(if c == b'=' { 1 } else { 2 })
    } else {
        None
    }
}

/// A thematic break (`---`, `***`, `___`, spaces allowed).
fn thematic_break(s: &str) -> bool {
    let (cols, at) = indent(s);
    if cols > 3 {
        return false;
    }
    let rest = &s[at..];
    let Some(c) = rest.bytes().next() else {
        return false;
    };
    if !matches!(c, b'-' | b'*' | b'_') {
        return false;
    }
    rest.bytes().filter(|&b| b == c).count() >= 3
        && rest.bytes().all(|b| b == c || b == b' ' || b == b'\t')
}

/// A line that starts a list item or a block quote.
fn container_start(s: &str) -> bool {
    let (cols, at) = indent(s);
    if cols > 3 {
        return false;
    }
    let rest = &s.as_bytes()[at..];
    match rest.first() {
        Some(b'>') => true,
        Some(b'-' | b'*' | b'+') => matches!(rest.get(1), None | Some(b' ' | b'\t')),
        Some(b'0'..=b'9') => {
            let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            digits <= 9
                && matches!(rest.get(digits), Some(b'.' | b')'))
                && matches!(rest.get(digits + 1), None | Some(b' ' | b'\t'))
        }
        _ => false,
    }
}

/// The HTML block a line starts: `Some(end marker)` (types 1-5, which end
/// at a line holding it), `Some("")` for the others (end at a blank line).
fn html_start(s: &str, interrupts_paragraph: bool) -> Option<&'static str> {
    let (cols, at) = indent(s);
    if cols > 3 {
        return None;
    }
    let rest = &s[at..];
    if !rest.starts_with('<') {
        return None;
    }
    let lower = rest
        .get(..rest.len().min(12))
        .unwrap_or(rest)
        .to_ascii_lowercase();
    for (open, close) in [
        ("<script", "</script>"),
        ("<pre", "</pre>"),
        ("<style", "</style>"),
        ("<textarea", "</textarea>"),
    ] {
        if lower.starts_with(open)
            && matches!(
                lower.as_bytes().get(open.len()),
                None | Some(b' ' | b'>' | b'\t')
            )
        {
            return Some(close);
        }
    }
    if rest.starts_with("<!--") {
        return Some("-->");
    }
    if rest.starts_with("<?") {
        return Some("?>");
    }
    if rest.starts_with("<![CDATA[") {
        return Some("]]>");
    }
    if rest.starts_with("<!") && rest.as_bytes().get(2).is_some_and(u8::is_ascii_alphabetic) {
        return Some(">");
    }
    let name_at = if rest.starts_with("</") { 2 } else { 1 };
    let name: String = rest[name_at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect::<String>()
        .to_ascii_lowercase();
    if name.is_empty() || !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let after = rest[name_at + name.len()..].chars().next();
    let boundary = matches!(after, None | Some(' ' | '\t' | '>' | '/'));
    if boundary && BLOCK_TAGS.contains(&name.as_str()) {
        return Some("");
    }
    // Type 7: a whole open or closing tag alone on its line; it cannot
    // interrupt a paragraph.
    let trimmed = rest.trim_end();
    if !interrupts_paragraph && boundary && trimmed.ends_with('>') && !trimmed[1..].contains('<') {
        return Some("");
    }
    None
}

const BLOCK_TAGS: [&str; 62] = [
    "address",
    "article",
    "aside",
    "base",
    "basefont",
    "blockquote",
    "body",
    "caption",
    "center",
    "col",
    "colgroup",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "frame",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hr",
    "html",
    "iframe",
    "legend",
    "li",
    "link",
    "main",
    "menu",
    "menuitem",
    "nav",
    "noframes",
    "ol",
    "optgroup",
    "option",
    "p",
    "param",
    "search",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "title",
    "tr",
    "track",
    "ul",
];

/// A GFM table delimiter row (`| --- | :-: |`).
fn delimiter_row(s: &str) -> bool {
    let (cols, at) = indent(s);
    if cols > 3 {
        return false;
    }
    let t = s[at..].trim_end();
    // Only pipes, dashes, colons and whitespace can make one: most lines are
    // rejected here, before the cells are cut.
    if !t
        .chars()
        .all(|c| matches!(c, '|' | '-' | ':') || c.is_whitespace())
    {
        return false;
    }
    let inner = t.strip_prefix('|').unwrap_or(t);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    if inner.is_empty() || !(t.contains('|') || t.contains('-')) {
        return false;
    }
    let cells: Vec<&str> = inner.split('|').map(str::trim).collect();
    cells.iter().all(|c| {
        let c = c.strip_prefix(':').unwrap_or(c);
        let c = c.strip_suffix(':').unwrap_or(c);
        !c.is_empty() && c.bytes().all(|b| b == b'-')
    }) && (t.contains('|') || cells.len() > 1)
}

/// The number of cells of a table row.
fn row_cells(s: &str) -> usize {
    let t = s.trim();
    let inner = t.strip_prefix('|').unwrap_or(t);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    inner.split('|').count()
}

/// Whether line `i` starts a GFM table (which may interrupt a paragraph):
/// a row with `|` over a delimiter row of as many cells.
fn table_start<'s>(ls: &[Line], i: usize, text: &impl Fn(&Line) -> &'s str) -> bool {
    let (Some(head), Some(delim)) = (ls.get(i), ls.get(i + 1)) else {
        return false;
    };
    let (head, delim) = (text(head), text(delim));
    indent(head).0 < 4
        && head.contains('|')
        && delimiter_row(delim)
        && row_cells(head) == row_cells(delim)
}

/// Whether a line is not blank and starts no block but a paragraph or a
/// table: indented four columns or more (no heading, fence, list, quote,
/// break, HTML block or setext underline is), or its first character is
/// none of those that start one (`=`, `-`, `#`, `` ` ``, `~`, `>`, `*`, `+`,
/// `_`, `<`, digits).
fn starts_plain(s: &str) -> bool {
    let (cols, at) = indent(s);
    match s.as_bytes().get(at) {
        None => false,
        Some(_) if cols >= 4 => true,
        Some(c) => !matches!(
            c,
            b'=' | b'-' | b'#' | b'`' | b'~' | b'>' | b'*' | b'+' | b'_' | b'<' | b'0'..=b'9'
        ),
    }
}

/// Reads the top-level blocks of `source[from..]`.
fn blocks(source: &str, from: usize) -> Vec<Block> {
    let ls = lines(source, from);
    let text = |l: &Line| &source[l.start..l.end];
    let mut out = Vec::new();
    let mut i = 0;
    // Whether the previous line ended a paragraph that a lazy line continues.
    let mut in_paragraph = false;
    while i < ls.len() {
        let l = ls[i];
        let s = text(&l);
        if is_blank(s) {
            in_paragraph = false;
            i += 1;
            continue;
        }
        let (cols, _) = indent(s);
        if cols >= 4 && !in_paragraph {
            // Indented code: up to the last indented line before a
            // less-indented one.
            let mut j = i + 1;
            let mut last = i;
            while j < ls.len() {
                let t = text(&ls[j]);
                if is_blank(t) {
                    j += 1;
                    continue;
                }
                if indent(t).0 < 4 {
                    break;
                }
                last = j;
                j += 1;
            }
            out.push(Block {
                range: l.start..ls[last].end,
                kind: Kind::Other,
            });
            i = last + 1;
            continue;
        }
        if let Some((c, n)) = fence_open(s) {
            let mut j = i + 1;
            while j < ls.len() && !fence_closes(text(&ls[j]), c, n) {
                j += 1;
            }
            let last = j.min(ls.len() - 1);
            out.push(Block {
                range: l.start..ls[last].end,
                kind: Kind::Whole,
            });
            in_paragraph = false;
            i = last + 1;
            continue;
        }
        if let Some((level, title)) = atx(s) {
            out.push(Block {
                range: l.start..l.end,
                kind: Kind::Heading(level, title),
            });
            in_paragraph = false;
            i += 1;
            continue;
        }
        if let Some(end) = html_start(s, in_paragraph) {
            let mut j = i;
            if end.is_empty() {
                while j + 1 < ls.len() && !is_blank(text(&ls[j + 1])) {
                    j += 1;
                }
            } else {
                while j < ls.len() && !text(&ls[j]).contains(end) {
                    j += 1;
                }
                j = j.min(ls.len() - 1);
            }
            out.push(Block {
                range: l.start..ls[j].end,
                kind: Kind::Other,
            });
            in_paragraph = false;
            i = j + 1;
            continue;
        }
        if table_start(&ls, i, &text) {
            let mut j = i + 1;
            while j + 1 < ls.len() {
                let t = text(&ls[j + 1]);
                if is_blank(t) || atx(t).is_some() || fence_open(t).is_some() || container_start(t)
                {
                    break;
                }
                j += 1;
            }
            out.push(Block {
                range: l.start..ls[j].end,
                kind: Kind::Whole,
            });
            i = j + 1;
            continue;
        }
        if container_start(s) || thematic_break(s) {
            // Lists, quotes and breaks: text, never a setext heading's.
            let mut j = i;
            if !thematic_break(s) {
                while j + 1 < ls.len() {
                    let t = text(&ls[j + 1]);
                    if is_blank(t) || atx(t).is_some() || fence_open(t).is_some() {
                        break;
                    }
                    j += 1;
                }
            }
            out.push(Block {
                range: l.start..ls[j].end,
                kind: Kind::Other,
            });
            in_paragraph = false;
            i = j + 1;
            continue;
        }
        // A paragraph, which a setext underline makes a heading.
        let mut j = i;
        let mut heading = None;
        while j + 1 < ls.len() {
            let t = text(&ls[j + 1]);
            // Most lines of a paragraph start with a letter: only a table
            // can interrupt them (the checks below each read the indent
            // again; ~4% of the instructions of reading the blocks).
            if starts_plain(t) {
                if table_start(&ls, j + 1, &text) {
                    break;
                }
                j += 1;
                continue;
            }
            if let Some(level) = setext_underline(t) {
                heading = Some(level);
                j += 1;
                break;
            }
            if is_blank(t)
                || atx(t).is_some()
                || fence_open(t).is_some()
                || container_start(t)
                || thematic_break(t)
                || html_start(t, true).is_some()
                || table_start(&ls, j + 1, &text)
            {
                break;
            }
            j += 1;
        }
        match heading {
            Some(level) => {
                let title = ls[i..j]
                    .iter()
                    .map(|l| text(l).trim())
                    .collect::<Vec<_>>()
                    .join("\n");
                out.push(Block {
                    range: l.start..ls[j].end,
                    kind: Kind::Heading(level, title),
                });
                in_paragraph = false;
            }
            None => {
                out.push(Block {
                    range: l.start..ls[j].end,
                    kind: Kind::Other,
                });
                in_paragraph = true;
            }
        }
        i = j + 1;
    }
    out
}

/// A section: its heading and blocks, and its subsections.
#[derive(Debug, Default)]
struct Section {
    /// The block of its heading (`None`: the root). Its heading path is
    /// built only when a chunk needs it ([`Headings::path`]).
    heading: Option<usize>,
    level: u8,
    /// Its own blocks (the heading first), indices into the block list.
    own: Range<usize>,
    children: Vec<Section>,
    /// Its whole range in the source.
    range: Range<usize>,
}

/// The section tree of the blocks (the root: level 0, the text before the
/// first heading as its own).
fn tree(blocks: &[Block]) -> Section {
    let mut stack: Vec<Section> = vec![Section::default()];
    let close = |stack: &mut Vec<Section>| {
        if let Some(done) = stack.pop()
            && let Some(parent) = stack.last_mut()
        {
            parent.children.push(done);
        }
    };
    for (i, b) in blocks.iter().enumerate() {
        if let Kind::Heading(level, _) = &b.kind {
            while stack.len() > 1 && stack.last().is_some_and(|s| s.level >= *level) {
                close(&mut stack);
            }
            stack.push(Section {
                heading: Some(i),
                level: *level,
                own: i..i + 1,
                ..Section::default()
            });
        } else if let Some(top) = stack.last_mut() {
            if top.children.is_empty() && top.own.end == i {
                top.own.end = i + 1;
            } else if top.own.is_empty() && top.children.is_empty() {
                top.own = i..i + 1;
            }
        }
    }
    while stack.len() > 1 {
        close(&mut stack);
    }
    let mut root = stack.pop().unwrap_or_default();
    set_ranges(&mut root, blocks);
    root
}

fn set_ranges(s: &mut Section, blocks: &[Block]) {
    for c in &mut s.children {
        set_ranges(c, blocks);
    }
    let own_start = blocks.get(s.own.start).filter(|_| !s.own.is_empty());
    let start = own_start
        .map(|b| b.range.start)
        .or_else(|| s.children.first().map(|c| c.range.start))
        .unwrap_or(0);
    let end = s
        .children
        .last()
        .map(|c| c.range.end)
        .or_else(|| blocks.get(s.own.end.wrapping_sub(1)).map(|b| b.range.end))
        .unwrap_or(start);
    s.range = start..end;
}

/// A group of blocks about to be a chunk: its range, its section's heading
/// block, and whether it may merge with its neighbours.
struct Group {
    range: Range<usize>,
    heading: Option<usize>,
    mergeable: bool,
    /// A heading alone: it merges with what follows, never into what
    /// precedes.
    heading_only: bool,
}

struct Chunker<'a, L> {
    source: &'a str,
    blocks: &'a [Block],
    size: usize,
    max: usize,
    length: &'a L,
    /// For a costly unit (tokens): `sums[i]` is the length of blocks `..i`
    /// measured one by one, plus one per gap between them. Empty in
    /// characters, which are counted exactly.
    sums: Vec<usize>,
}

impl<L: LengthFunction<str>> Chunker<'_, L> {
    /// Whether a range is within `limit`. In tokens, a range of whole blocks
    /// is first estimated from the blocks' own lengths (counting a text
    /// again and again as a pack grows would make packing quadratic): far
    /// above the limit, it does not fit; well below (90%), it does; near
    /// it, it is counted. The hard maximum is checked exactly afterwards
    /// for every chunk ([`crate::records::finish`]).
    fn fits(&self, range: Range<usize>, limit: usize) -> bool {
        if let Some(estimate) = self.estimate(&range) {
            if estimate > limit + limit / 10 {
                return false;
            }
            if estimate * 10 <= limit * 9 {
                return true;
            }
        }
        !self.length.exceeds(&self.source[range], limit)
    }

    /// The estimated length of a range that starts and ends at blocks.
    fn estimate(&self, range: &Range<usize>) -> Option<usize> {
        if self.sums.is_empty() {
            return None;
        }
        let a = self.blocks.partition_point(|b| b.range.start < range.start);
        let b = self.blocks.partition_point(|b| b.range.end <= range.end);
        if a >= b
            || self.blocks[a].range.start != range.start
            || self.blocks[b - 1].range.end != range.end
        {
            return None;
        }
        Some(self.sums[b] - self.sums[a] - 1)
    }

    fn section(&self, s: &Section, out: &mut Vec<Group>) {
        if s.range.is_empty() {
            return;
        }
        if self.fits(s.range.clone(), self.size) {
            out.push(Group {
                range: s.range.clone(),
                heading: s.heading,
                mergeable: true,
                heading_only: false,
            });
            return;
        }
        let mut groups = Vec::new();
        self.own_blocks(s, &mut groups);
        for c in &s.children {
            self.section(c, &mut groups);
        }
        // Neighbours merged while they fit.
        for g in groups {
            if let Some(last) = out.last_mut()
                && last.mergeable
                && g.mergeable
                && !g.heading_only
                && self.fits(last.range.start..g.range.end, self.size)
            {
                last.range.end = g.range.end;
                last.heading_only = false;
                continue;
            }
            out.push(g);
        }
    }

    /// A section's own blocks, packed up to the size.
    fn own_blocks(&self, s: &Section, out: &mut Vec<Group>) {
        let mut pack: Option<Range<usize>> = None;
        // Whether the pack holds the section's heading alone.
        let mut heading_only = false;
        for b in &self.blocks[s.own.clone()] {
            let r = b.range.clone();
            if let Some(p) = &mut pack
                && self.fits(p.start..r.end, self.size)
            {
                p.end = r.end;
                heading_only = false;
                continue;
            }
            if self.fits(r.clone(), self.size) {
                if let Some(p) = pack.take() {
                    out.push(self.group(p, s.heading, true, heading_only));
                }
                pack = Some(r);
                heading_only = matches!(b.kind, Kind::Heading(..));
                continue;
            }
            // A block above the size.
            let mut start = r.start;
            if let Some(p) = pack.take() {
                if heading_only && !matches!(b.kind, Kind::Whole) {
                    // The heading goes with the first piece of its text.
                    start = p.start;
                } else {
                    out.push(self.group(p, s.heading, !heading_only, heading_only));
                }
            }
            heading_only = false;
            match b.kind {
                Kind::Whole if self.fits(r.clone(), self.max) => {
                    out.push(self.group(r, s.heading, false, false));
                }
                Kind::Whole => {
                    for piece in self.lines_up_to_max(r) {
                        out.push(self.group(piece, s.heading, false, false));
                    }
                }
                _ => {
                    for piece in split_to_max(self.source, start..r.end, self.size, self.length) {
                        out.push(self.group(piece, s.heading, false, false));
                    }
                }
            }
        }
        if let Some(p) = pack {
            out.push(self.group(p, s.heading, true, heading_only));
        }
    }

    fn group(
        &self,
        range: Range<usize>,
        heading: Option<usize>,
        mergeable: bool,
        heading_only: bool,
    ) -> Group {
        Group {
            range,
            heading,
            mergeable,
            heading_only,
        }
    }

    /// A block cut between lines into pieces within the hard maximum.
    fn lines_up_to_max(&self, r: Range<usize>) -> Vec<Range<usize>> {
        let mut out: Vec<Range<usize>> = Vec::new();
        let mut pack: Option<Range<usize>> = None;
        for l in lines(&self.source[..r.end], r.start) {
            let lr = l.start..l.end;
            if let Some(p) = &mut pack
                && self.fits(p.start..lr.end, self.max)
            {
                p.end = lr.end;
                continue;
            }
            if let Some(p) = pack.take() {
                out.push(p);
            }
            if self.fits(lr.clone(), self.max) {
                pack = Some(lr);
            } else {
                out.extend(split_to_max(self.source, lr, self.max, self.length));
            }
        }
        out.extend(pack);
        out
    }
}

/// Moves a heading that ends a group to the start of the next group when
/// the result stays within the hard maximum: a heading goes with its text.
fn headings_forward<L: LengthFunction<str>>(
    mut groups: Vec<Group>,
    blocks: &[Block],
    chunker: &Chunker<'_, L>,
) -> Vec<Group> {
    let heading_at_end: std::collections::HashMap<usize, usize> = blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| matches!(b.kind, Kind::Heading(..)))
        .map(|(i, b)| (b.range.end, i))
        .collect();
    let mut emptied = vec![false; groups.len()];
    for i in 0..groups.len().saturating_sub(1) {
        let Some(&last) = heading_at_end.get(&groups[i].range.end) else {
            continue;
        };
        // The run of headings that ends the group: moved from its first
        // heading that leaves the next group within the hard maximum.
        let mut first = last;
        while first > 0
            && matches!(blocks[first - 1].kind, Kind::Heading(..))
            && blocks[first - 1].range.start >= groups[i].range.start
        {
            first -= 1;
        }
        let Some(k) = (first..=last).find(|&k| {
            blocks[k].range.start >= groups[i].range.start
                && chunker.fits(blocks[k].range.start..groups[i + 1].range.end, chunker.max)
        }) else {
            continue;
        };
        let heading_start = blocks[k].range.start;
        groups[i + 1].range.start = heading_start;
        if heading_start == groups[i].range.start {
            emptied[i] = true;
        } else {
            groups[i].range.end = k
                .checked_sub(1)
                .map_or(groups[i].range.start, |p| blocks[p].range.end);
        }
    }
    groups
        .into_iter()
        .zip(emptied)
        .filter(|(g, e)| !*e && !g.range.is_empty())
        .map(|(g, _)| g)
        .collect()
}

/// The heading blocks in order, each with its parent: the nearest heading
/// before it of a lower level (the nearest open section of a higher level,
/// as in [`tree`]). A heading path is the chain of parents, at most six
/// deep (levels rise along it), built only for the chunks: copying every
/// heading's whole path, most of which no chunk takes, was about 3.5% of
/// the instructions of `chunk` in tokens on the corpus's Markdown.
struct Headings<'b> {
    blocks: &'b [Block],
    /// (start, block, parent entry) of each heading block.
    entries: Vec<(usize, usize, Option<usize>)>,
}

impl<'b> Headings<'b> {
    fn new(blocks: &'b [Block]) -> Self {
        let level = |block: usize| match blocks[block].kind {
            Kind::Heading(level, _) => level,
            _ => 0,
        };
        let mut entries: Vec<(usize, usize, Option<usize>)> = Vec::new();
        let mut open: Vec<usize> = Vec::new();
        for (i, b) in blocks.iter().enumerate() {
            if let Kind::Heading(l, _) = b.kind {
                while open.last().is_some_and(|&e| level(entries[e].1) >= l) {
                    open.pop();
                }
                entries.push((b.range.start, i, open.last().copied()));
                open.push(entries.len() - 1);
            }
        }
        Headings { blocks, entries }
    }

    /// The heading path of entry `e`.
    fn path(&self, e: usize) -> Vec<Heading> {
        let mut chain = Vec::with_capacity(6);
        let mut at = Some(e);
        while let Some(x) = at.and_then(|x| self.entries.get(x)) {
            chain.push(x.1);
            at = x.2;
        }
        chain
            .iter()
            .rev()
            .filter_map(|&b| match &self.blocks[b].kind {
                Kind::Heading(level, text) => Some(Heading {
                    level: *level,
                    text: text.clone(),
                }),
                _ => None,
            })
            .collect()
    }

    /// The heading path where `at` is: of the last heading at or before it.
    fn path_at(&self, at: usize) -> Option<Vec<Heading>> {
        let k = self.entries.partition_point(|&(start, _, _)| start <= at);
        k.checked_sub(1).map(|e| self.path(e))
    }

    /// The heading path of heading block `block` (`None`: the root's, empty).
    fn path_of_block(&self, block: Option<usize>) -> Vec<Heading> {
        block
            .map(|b| self.entries.partition_point(|&(_, i, _)| i < b))
            .filter(|&e| self.entries.get(e).is_some_and(|x| Some(x.1) == block))
            .map_or_else(Vec::new, |e| self.path(e))
    }
}

pub fn split<L: LengthFunction<str>>(source: &str, options: &Options, length: &L) -> Split {
    let (body, document_metadata) = frontmatter::split_off(source);
    let blocks = blocks(source, body);
    let root = tree(&blocks);
    let sums = if length.is_char_length() {
        Vec::new()
    } else {
        let mut sums = Vec::with_capacity(blocks.len() + 1);
        sums.push(0);
        let mut total = 0;
        for b in &blocks {
            total += length.length_up_to(&source[b.range.clone()], options.max_size) + 1;
            sums.push(total);
        }
        sums
    };
    let chunker = Chunker {
        source,
        blocks: &blocks,
        size: options.chunk_size,
        max: options.max_size,
        length,
        sums,
    };
    let mut groups = Vec::new();
    chunker.section(&root, &mut groups);
    let groups = headings_forward(groups, &blocks, &chunker);
    let headings = Headings::new(&blocks);
    let chunks = groups
        .into_iter()
        .map(|g| {
            // The path where the chunk's own text starts (its first letter or
            // digit): the last heading at or before it.
            let first = source[g.range.clone()]
                .char_indices()
                .find(|(_, c)| *c != '_' && crate::unicode::is_word(*c))
                .map_or(g.range.start, |(i, _)| g.range.start + i);
            let mut raw = Raw::span(g.range);
            raw.headings = headings
                .path_at(first)
                .unwrap_or_else(|| headings.path_of_block(g.heading));
            raw
        })
        .collect();
    let chunks = absorb_small(
        source,
        chunks,
        &blocks,
        &headings,
        (options.min_size(), options.chunk_size, options.max_size),
        length,
    );
    let whole_blocks = blocks
        .iter()
        .filter(|b| b.kind == Kind::Whole)
        .map(|b| b.range.clone())
        .collect();
    Split {
        chunks,
        whole_blocks,
        document_metadata,
        ..Split::default()
    }
}

/// Chunks that are headings alone, or below `min` in the unit, join a
/// neighbour with the same heading path: the two become one chunk when it
/// stays within `size`; otherwise the cut between them moves to the last
/// word start that leaves the second at least `min` and under the same
/// headings (never inside a heading, a code fence or a table; the first
/// keeping more than headings; both within `max`). Without such a
/// neighbour, or such a cut, the chunk stays as it is.
fn absorb_small<L: LengthFunction<str>>(
    source: &str,
    chunks: Vec<Raw>,
    blocks: &[Block],
    headings: &Headings<'_>,
    (min, size, max): (usize, usize, usize),
    length: &L,
) -> Vec<Raw> {
    let heading_only = |r: &Range<usize>| {
        let a = blocks.partition_point(|b| b.range.end <= r.start);
        let b = blocks.partition_point(|b| b.range.start < r.end);
        a < b
            && blocks[a..b]
                .iter()
                .all(|b| matches!(b.kind, Kind::Heading(..)))
    };
    let small = |r: &Range<usize>| {
        heading_only(r) || (min > 0 && length.length_up_to(&source[r.clone()], min) < min)
    };
    let fits = |r: Range<usize>, limit: usize| !length.exceeds(&source[r], limit);
    // Whether `p` is strictly inside a heading, a fence or a table.
    let inside_block = |p: usize| {
        let k = blocks.partition_point(|b| b.range.end <= p);
        blocks
            .get(k)
            .is_some_and(|b| b.range.start < p && !matches!(b.kind, Kind::Other))
    };
    let recut = |range: Range<usize>, path: &[Heading]| -> Option<usize> {
        let text = &source[range.clone()];
        for (i, ch) in text.char_indices().rev() {
            let p = range.start + i;
            if i == 0
                || crate::unicode::is_space(ch)
                || !text[..i]
                    .chars()
                    .next_back()
                    .is_some_and(crate::unicode::is_space)
                || inside_block(p)
            {
                continue;
            }
            let tail = length.length_up_to(&source[p..range.end], max);
            if tail > max {
                return None;
            }
            // Further back the tail only grows and the head shrinks.
            if tail >= min && fits(range.start..p, max) {
                let fine = !heading_only(&(range.start..p))
                    && headings
                        .path_at(first_word(source, p..range.end))
                        .as_deref()
                        == Some(path);
                return fine.then_some(p);
            }
        }
        None
    };
    let mut out: Vec<Raw> = Vec::with_capacity(chunks.len());
    for c in chunks {
        out.push(c);
        while let [.., x, y] = out.as_mut_slice() {
            if x.headings != y.headings || !(small(&x.range) || small(&y.range)) {
                break;
            }
            if fits(x.range.start..y.range.end, size) {
                x.range.end = y.range.end;
                out.pop();
                continue;
            }
            if let Some(p) = recut(x.range.start..y.range.end, &y.headings) {
                x.range.end = p;
                y.range.start = p;
                y.own_start = p;
            }
            break;
        }
    }
    out
}

/// Where the first letter or digit of `range` is (its end without one).
fn first_word(source: &str, range: Range<usize>) -> usize {
    source[range.clone()]
        .char_indices()
        .find(|(_, c)| *c != '_' && crate::unicode::is_word(*c))
        .map_or(range.end, |(i, _)| range.start + i)
}

/// The top-level headings (level, text, byte offset), for tests.
pub fn headings(source: &str) -> Vec<(u8, String, usize)> {
    let (body, _) = frontmatter::split_off(source);
    blocks(source, body)
        .into_iter()
        .filter_map(|b| match b.kind {
            Kind::Heading(level, text) => Some((level, text, b.range.start)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Starts of lines that make the block checks meet.
    const PARTS: &[&str] = &[
        " ",
        "  ",
        "   ",
        "    ",
        "\t",
        " \t",
        "#",
        "###",
        "#######",
        "=",
        "==",
        "-",
        "---",
        "- ",
        "*",
        "* ",
        "***",
        "+",
        "+ ",
        "_",
        "___",
        ">",
        "> ",
        "<",
        "<div>",
        "<!--",
        "<pre",
        "</p>",
        "1.",
        "1. ",
        "12)",
        "1234567890.",
        "`",
        "```",
        "~~~",
        "|",
        "| --- |",
        ":",
        ":-:",
        "a",
        "Word",
        "é",
        "\r",
        "x|y",
        "-|-",
        "a b",
        "é|",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        /// Lines from one pass of the searcher are the lines found one by
        /// one, from any start.
        #[test]
        fn lines_are_the_lines(parts in proptest::collection::vec(proptest::sample::select(&["a", "\n", "\r", "\r\n", " ", "é"][..]), 0..20), from in 0usize..40) {
            let source = parts.concat();
            let from = (0..=from.min(source.len())).rev().find(|&i| source.is_char_boundary(i)).unwrap_or(0);
            let got: Vec<(usize, usize)> = lines(&source, from).iter().map(|l| (l.start, l.end)).collect();
            prop_assert_eq!(got, lines_one_by_one(&source, from));
        }

        /// The shortcut of paragraph lines: a line it takes as plain is one
        /// that every other check rejects.
        #[test]
        fn plain_lines_start_no_block(parts in proptest::collection::vec(proptest::sample::select(PARTS), 0..6)) {
            let t = parts.concat();
            if starts_plain(&t) {
                prop_assert!(!is_blank(&t));
                prop_assert!(setext_underline(&t).is_none());
                prop_assert!(atx(&t).is_none());
                prop_assert!(fence_open(&t).is_none());
                prop_assert!(!container_start(&t));
                prop_assert!(!thematic_break(&t));
                prop_assert!(html_start(&t, true).is_none());
                prop_assert!(html_start(&t, false).is_none());
            }
        }

        /// Heading paths from the parent chains equal the paths built by
        /// keeping every heading's whole path (the former way), at every
        /// heading and for every section of the tree.
        #[test]
        fn heading_paths_are_the_stack_paths(levels in proptest::collection::vec(0u8..=6, 0..40)) {
            let source: String = levels
                .iter()
                .enumerate()
                .map(|(i, &l)| match l {
                    0 => format!("text {i}\n\n"),
                    l => format!("{} h{i}\n\n", "#".repeat(l as usize)),
                })
                .collect();
            let blocks = blocks(&source, 0);
            let headings = Headings::new(&blocks);
            let mut path: Vec<Heading> = Vec::new();
            let mut expected = Vec::new();
            for (i, b) in blocks.iter().enumerate() {
                if let Kind::Heading(level, title) = &b.kind {
                    while path.last().is_some_and(|h| h.level >= *level) {
                        path.pop();
                    }
                    path.push(Heading { level: *level, text: title.clone() });
                    expected.push((i, path.clone()));
                    prop_assert_eq!(headings.path_at(b.range.start), Some(path.clone()));
                    prop_assert_eq!(headings.path_at(b.range.end), Some(path.clone()));
                }
            }
            fn walk(s: &Section, h: &Headings<'_>, expected: &[(usize, Vec<Heading>)]) -> Result<(), TestCaseError> {
                let want = match s.heading {
                    Some(b) => expected.iter().find(|(i, _)| *i == b).map(|(_, p)| p.clone()).unwrap_or_default(),
                    None => Vec::new(),
                };
                prop_assert_eq!(h.path_of_block(s.heading), want);
                for c in &s.children {
                    walk(c, h, expected)?;
                }
                Ok(())
            }
            walk(&tree(&blocks), &headings, &expected)?;
        }
    }
}
