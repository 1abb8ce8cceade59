//! The block-aware chunk plan of a note body.
//!
//! The body is cut into lines (over-long prose lines into sentences and
//! word groups); every boundary between two units gets a priority:
//!
//! - `MANDATORY`: an H2/H3 section starts (after a section with content), or
//!   a block quote / callout of two or more lines starts or ends (it is its
//!   own chunk);
//! - `BLOCK`: between two blocks (paragraph, list group, heading, code,
//!   table, thematic break);
//! - `ITEM`: between two top-level items of a list group;
//! - `LINE`: between lines of a paragraph, list item or quote;
//! - `NEVER`: inside a fenced code block or a table, right after a heading,
//!   before a blank line (blank lines stay with the block before them).
//!
//! `ITEM` and `LINE` boundaries only count inside a block over the target
//! maximum: a block that fits is never cut. A chunk grows up to the target
//! maximum and ends at the strongest boundary reached once it has the target
//! minimum; a block alone over the target maximum with no boundary inside
//! (code, table) is its own chunk, flagged oversized over the hard maximum. A
//! chunk under the minimum merges with a neighbour of its section when both
//! fit under the target maximum (quotes kept apart and oversized chunks
//! never merge).
//!
//! Token counts come from one pass of the tokenizer over the body: a text's
//! count is the sum of its pre-tokenizer pieces' counts, so prefix sums give
//! the count of any span between pieces; the few chunks with an end inside a
//! piece are counted again exactly.

use super::scan::{self, LineKind, Structure};
use crate::tokens::Tokenizer;

const NEVER: u8 = 0;
const LINE: u8 = 1;
const ITEM: u8 = 2;
const BLOCK: u8 = 3;
const MANDATORY: u8 = 5;

/// Sizes in tokens.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub target_min: usize,
    pub target_max: usize,
    pub hard_max: usize,
    pub min: usize,
}

impl Limits {
    /// Limits that make sense together: `0 < min <= target_max` and
    /// `0 < target_min <= target_max <= hard_max`.
    pub fn new(
        target_min: usize,
        target_max: usize,
        hard_max: usize,
        min: usize,
    ) -> crate::error::Result<Self> {
        if !(0 < min && min <= target_max && 0 < target_min && target_min <= target_max)
            || target_max > hard_max
        {
            return Err(crate::error::Error::InvalidArgument(format!(
                "limits {:?}: need 0 < min <= target_max and 0 < target_min <= target_max <= hard_max",
                (target_min, target_max, hard_max, min)
            )));
        }
        Ok(Limits {
            target_min,
            target_max,
            hard_max,
            min,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockKind {
    Blank,
    Paragraph,
    List,
    Quote,
    Code,
    Table,
    Heading,
    Section,
    Rule,
}

impl BlockKind {
    pub fn name(self) -> &'static str {
        match self {
            BlockKind::Blank => "blank",
            BlockKind::Paragraph => "paragraph",
            BlockKind::List => "list",
            BlockKind::Quote => "quote",
            BlockKind::Code => "code",
            BlockKind::Table => "table",
            BlockKind::Heading | BlockKind::Section => "heading",
            BlockKind::Rule => "rule",
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Block {
    kind: BlockKind,
    first: usize,
    last: usize,
    own: bool,
}

/// One planned chunk: `start..end` in bytes of the body; `overlap_start`
/// where its embed text starts (`<= start`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    pub start: usize,
    pub end: usize,
    pub overlap_start: usize,
    pub tokens: usize,
    pub section: usize,
    /// A block quote or callout kept as its own chunk.
    pub own: bool,
    /// Over the hard maximum: one block that cannot be cut.
    pub oversized: bool,
    pub block: Option<BlockKind>,
    /// Line indices (0-based) of the first and last line.
    pub first_line: usize,
    pub last_line: usize,
    /// Indices into `Structure::headings` of the section path at its start.
    pub path: Vec<usize>,
}

fn is_quote(t: &str) -> bool {
    let b = t.as_bytes();
    let mut i = 0;
    while i < b.len() && i < 3 && b[i] == b' ' {
        i += 1;
    }
    b.get(i) == Some(&b'>')
}

fn indent_width(t: &str) -> usize {
    let mut w = 0;
    for c in t.bytes() {
        match c {
            b' ' => w += 1,
            b'\t' => w += 4 - w % 4,
            _ => break,
        }
    }
    w
}

/// A list item line: its marker's indentation width.
fn list_item(t: &str) -> Option<usize> {
    let b = t.as_bytes();
    let mut i = 0;
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    let marker_at = i;
    match b.get(i)? {
        b'-' | b'*' | b'+' => i += 1,
        b'0'..=b'9' => {
            while i < b.len() && b[i].is_ascii_digit() && i - marker_at < 9 {
                i += 1;
            }
            if !matches!(b.get(i), Some(b'.') | Some(b')')) {
                return None;
            }
            i += 1;
        }
        _ => return None,
    }
    match b.get(i) {
        None | Some(b' ') | Some(b'\t') => Some(indent_width(&t[..marker_at])),
        _ => None,
    }
}

fn is_thematic(t: &str) -> bool {
    let b = t.as_bytes();
    let mut i = 0;
    while i < b.len() && i < 3 && b[i] == b' ' {
        i += 1;
    }
    let Some(&c) = b.get(i) else { return false };
    if !matches!(c, b'-' | b'*' | b'_') {
        return false;
    }
    let mut n = 0;
    for &x in &b[i..] {
        if x == c {
            n += 1;
        } else if x != b' ' && x != b'\t' {
            return false;
        }
    }
    n >= 3
}

fn is_table_delim(t: &str) -> bool {
    let s = t.trim_matches([' ', '\t']);
    let s = s.strip_prefix('|').unwrap_or(s);
    let s = s.strip_suffix('|').unwrap_or(s);
    if s.is_empty() {
        return false;
    }
    s.split('|').all(|cell| {
        let c = cell.trim_matches([' ', '\t']);
        let c = c.strip_prefix(':').unwrap_or(c);
        let c = c.strip_suffix(':').unwrap_or(c);
        !c.is_empty() && c.bytes().all(|x| x == b'-')
    })
}

/// Per line: whether it holds a `|` (one scan of the whole text).
fn pipe_lines(st: &Structure<'_>) -> Vec<bool> {
    let mut pipes = vec![false; st.lines.len()];
    let mut line = 0;
    for at in memchr::memchr_iter(b'|', st.text.as_bytes()) {
        while line < st.lines.len() && st.lines[line].text_end <= at {
            line += 1;
        }
        match st.lines.get(line) {
            Some(l) if l.start <= at => pipes[line] = true,
            Some(_) => {}
            None => break,
        }
    }
    pipes
}

fn table_starts(st: &Structure<'_>, pipes: &[bool], i: usize) -> bool {
    i + 1 < st.lines.len()
        && st.kinds[i] == LineKind::Text
        && st.kinds[i + 1] == LineKind::Text
        && pipes[i]
        && pipes[i + 1]
        && is_table_delim(st.line_text(i + 1))
}

/// Blocks of the body and the boundary priority before each line.
fn blocks(st: &Structure<'_>) -> (Vec<Block>, Vec<u8>) {
    let n = st.lines.len();
    let pipes = pipe_lines(st);
    let kinds = &st.kinds;
    let mut prio = vec![NEVER; n];
    let mut blocks: Vec<Block> = Vec::new();
    let mut section_has_content = false;
    let mut i = 0;
    while i < n {
        let start = i;
        let t = st.line_text(i);
        let kind = match kinds[i] {
            LineKind::Blank => {
                while i < n && kinds[i] == LineKind::Blank {
                    i += 1;
                }
                blocks.push(Block {
                    kind: BlockKind::Blank,
                    first: start,
                    last: i - 1,
                    own: false,
                });
                continue;
            }
            LineKind::Fence => {
                let fid = st.fence_id[i];
                while i < n && kinds[i] == LineKind::Fence && st.fence_id[i] == fid {
                    i += 1;
                }
                BlockKind::Code
            }
            LineKind::Heading => {
                let level = st.heading_at(i).map_or(1, |h| h.level);
                i += 1;
                if (level == 2 || level == 3) && section_has_content {
                    prio[start] = MANDATORY;
                    section_has_content = false;
                    BlockKind::Section
                } else {
                    BlockKind::Heading
                }
            }
            LineKind::Text if is_quote(t) => {
                i += 1;
                while i < n {
                    let lt = st.line_text(i);
                    let in_quote = match kinds[i] {
                        LineKind::Text => is_quote(lt),
                        LineKind::Fence => lt.trim_start().starts_with('>'),
                        _ => false,
                    };
                    if !in_quote {
                        break;
                    }
                    let inside_fence = kinds[i] == LineKind::Fence
                        && kinds[i - 1] == LineKind::Fence
                        && st.fence_id[i] == st.fence_id[i - 1];
                    prio[i] = if inside_fence { NEVER } else { LINE };
                    i += 1;
                }
                BlockKind::Quote
            }
            LineKind::Text if table_starts(st, &pipes, i) => {
                i += 2;
                while i < n && kinds[i] == LineKind::Text && pipes[i] {
                    i += 1;
                }
                BlockKind::Table
            }
            LineKind::Text if is_thematic(t) => {
                i += 1;
                BlockKind::Rule
            }
            LineKind::Text if list_item(t).is_some() => {
                let base = list_item(t).unwrap_or(0);
                i += 1;
                while i < n {
                    let mut k = kinds[i];
                    let mut lt = st.line_text(i);
                    if k == LineKind::Blank {
                        let mut j = i;
                        while j < n && kinds[j] == LineKind::Blank {
                            j += 1;
                        }
                        if j >= n {
                            break;
                        }
                        let nt = st.line_text(j);
                        if kinds[j] == LineKind::Heading
                            || !(list_item(nt).is_some() || indent_width(nt) > base)
                        {
                            break;
                        }
                        i = j;
                        k = kinds[j];
                        lt = nt;
                    }
                    if k == LineKind::Heading {
                        break;
                    }
                    if k == LineKind::Fence {
                        let continues =
                            kinds[i - 1] == LineKind::Fence && st.fence_id[i - 1] == st.fence_id[i];
                        if !continues && indent_width(lt) <= base {
                            break;
                        }
                        prio[i] = if continues { NEVER } else { LINE };
                        i += 1;
                        continue;
                    }
                    if is_thematic(lt)
                        || (is_quote(lt) && indent_width(lt) <= base)
                        || table_starts(st, &pipes, i)
                    {
                        break;
                    }
                    prio[i] = match list_item(lt) {
                        Some(w) if w <= base + 1 => ITEM,
                        _ => LINE,
                    };
                    i += 1;
                }
                BlockKind::List
            }
            LineKind::Text => {
                i += 1;
                while i < n
                    && kinds[i] == LineKind::Text
                    && !is_quote(st.line_text(i))
                    && list_item(st.line_text(i)).is_none()
                    && !is_thematic(st.line_text(i))
                    && !table_starts(st, &pipes, i)
                {
                    prio[i] = LINE;
                    i += 1;
                }
                BlockKind::Paragraph
            }
        };
        if !matches!(kind, BlockKind::Heading | BlockKind::Section) {
            section_has_content = true;
        }
        while i < n && kinds[i] == LineKind::Blank {
            prio[i] = NEVER;
            i += 1;
        }
        let own = kind == BlockKind::Quote && {
            let mut last = i - 1;
            while last > start && kinds[last] == LineKind::Blank {
                last -= 1;
            }
            last > start
        };
        blocks.push(Block {
            kind,
            first: start,
            last: i - 1,
            own,
        });
    }
    for b in 1..blocks.len() {
        let block = blocks[b];
        let prev = blocks[b - 1];
        let first = block.first;
        let after_heading = matches!(prev.kind, BlockKind::Heading | BlockKind::Section);
        if after_heading {
            prio[first] = NEVER;
        } else if prio[first] != MANDATORY {
            prio[first] = BLOCK;
        }
        if block.own && !after_heading {
            prio[first] = MANDATORY;
        }
        if prev.own && block.kind != BlockKind::Blank {
            prio[first] = MANDATORY;
        }
    }
    (blocks, prio)
}

/// Token prefix sums at piece ends.
struct Tokens {
    ends: Vec<usize>,
    cum: Vec<usize>,
}

const SPARE_MAX: usize = 1 << 20;

thread_local! {
    /// The buffers of the last `Tokens` of this thread, reused by the next
    /// (large notes would otherwise map fresh pages for every note); kept
    /// only up to `SPARE_MAX` entries each.
    static SPARE: std::cell::RefCell<(Vec<usize>, Vec<usize>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

impl Drop for Tokens {
    fn drop(&mut self) {
        let ends = std::mem::take(&mut self.ends);
        let cum = std::mem::take(&mut self.cum);
        if ends.capacity() > SPARE_MAX || cum.capacity() > SPARE_MAX {
            return;
        }
        let _ = SPARE.try_with(|spare| {
            if let Ok(mut spare) = spare.try_borrow_mut() {
                *spare = (ends, cum);
            }
        });
    }
}

impl Tokens {
    fn new(tokenizer: &Tokenizer, text: &str) -> Self {
        let (mut ends, mut cum) = SPARE
            .try_with(|spare| {
                spare
                    .try_borrow_mut()
                    .map(|mut s| std::mem::take(&mut *s))
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        ends.clear();
        cum.clear();
        ends.reserve(text.len() / 4 + 1);
        cum.reserve(text.len() / 4 + 1);
        let mut total = 0;
        tokenizer.count_pieces_of(text, |end, tokens| {
            total += tokens;
            ends.push(end);
            cum.push(total);
        });
        Tokens { ends, cum }
    }

    /// Tokens of the pieces that end at or before `at`.
    fn at(&self, at: usize) -> usize {
        let k = self.ends.partition_point(|&e| e <= at);
        if k == 0 { 0 } else { self.cum[k - 1] }
    }

    /// `at(p)` for each of `positions`, which must not decrease (one merge
    /// walk instead of a search per position).
    fn at_each(&self, positions: impl Iterator<Item = usize>) -> Vec<usize> {
        let mut k = 0;
        positions
            .map(|p| {
                while k < self.ends.len() && self.ends[k] <= p {
                    k += 1;
                }
                if k == 0 { 0 } else { self.cum[k - 1] }
            })
            .collect()
    }

    fn between(&self, a: usize, b: usize) -> usize {
        self.at(b).saturating_sub(self.at(a))
    }

    fn is_piece_end(&self, at: usize) -> bool {
        at == 0 || self.ends.binary_search(&at).is_ok()
    }
}

#[derive(Clone, Copy, Debug)]
struct Unit {
    start: usize,
    end: usize,
    prio: u8,
    block: usize,
    tokens: usize,
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Sentences of `a..b` (ends after the whitespace that follows `.!?` and
/// closing quotes/brackets).
fn sentence_ends(text: &str, a: usize, b: usize, out: &mut Vec<usize>) {
    let bytes = text.as_bytes();
    let mut prev_terminal = false;
    let mut i = a;
    for (off, c) in text.get(a..b).unwrap_or("").char_indices() {
        let at = a + off;
        if at < i {
            continue;
        }
        if matches!(
            c,
            '.' | '!' | '?' | '\u{2026}' | '\u{3002}' | '\u{ff01}' | '\u{ff1f}'
        ) {
            prev_terminal = true;
            continue;
        }
        if prev_terminal && matches!(c, '"' | '\'' | ')' | ']') {
            continue;
        }
        if prev_terminal && (c == ' ' || c == '\t') {
            let mut e = at;
            while e < b && (bytes[e] == b' ' || bytes[e] == b'\t') {
                e += 1;
            }
            if e < b {
                out.push(e);
            }
            i = e;
        }
        prev_terminal = false;
    }
}

/// Pieces of an over-long prose line `a..b`: sentences, and word groups of
/// about half the limit within a sentence still over it.
fn split_long(text: &str, tok: &Tokens, a: usize, b: usize, limit: usize) -> Vec<(usize, usize)> {
    let mut cuts = Vec::new();
    sentence_ends(text, a, b, &mut cuts);
    cuts.push(b);
    let mut out = Vec::new();
    let mut s = a;
    for e in cuts {
        if e <= s {
            continue;
        }
        let tokens = tok.between(s, e);
        if tokens <= limit {
            out.push((s, e));
            s = e;
            continue;
        }
        let per = ((e - s) * (limit / 2).max(1) / tokens.max(1)).max(1);
        let mut p = s;
        while p < e {
            let mut q = floor_boundary(text, (p + per).min(e));
            if q <= p {
                q = p + text
                    .get(p..)
                    .and_then(|r| r.chars().next())
                    .map_or(1, char::len_utf8);
                q = q.min(e);
            }
            if q < e
                && let Some(sp) = text.get(p..q).and_then(|r| r.rfind([' ', '\t']))
                && sp > 0
            {
                q = p + sp + 1;
            }
            out.push((p, q));
            p = q;
        }
        s = e;
    }
    out
}

/// Per line: 0 prose, 1 first line of a code block or table, 2 inside one.
fn atomic_marks(st: &Structure<'_>, blocks: &[Block]) -> Vec<u8> {
    let mut marks = vec![0u8; st.lines.len()];
    for block in blocks {
        if matches!(block.kind, BlockKind::Code | BlockKind::Table) {
            let mut last = block.last;
            while last > block.first && st.kinds[last] == LineKind::Blank {
                last -= 1;
            }
            marks[block.first] = 1;
            for m in marks.iter_mut().take(last + 1).skip(block.first + 1) {
                *m = 2;
            }
        }
    }
    marks
}

/// The chunk plan of `text` (spans tile the text exactly, in order).
pub fn plan(
    text: &str,
    st: &Structure<'_>,
    limits: Limits,
    overlap: usize,
    tokenizer: &Tokenizer,
) -> Vec<Planned> {
    let n = st.lines.len();
    if n == 0 {
        return Vec::new();
    }
    let Limits {
        target_min,
        target_max,
        hard_max,
        min,
    } = limits;
    let tok = Tokens::new(tokenizer, text);
    let (blocks, prio) = blocks(st);
    // Tokens before each line start (and the text's end): the lines tile
    // the text, so a line's or block's count is a difference of two.
    let line_at = tok.at_each(
        st.lines
            .iter()
            .map(|l| l.start)
            .chain(std::iter::once(text.len())),
    );
    let lines_tokens = |first: usize, last: usize| line_at[last + 1].saturating_sub(line_at[first]);
    let mut block_of = vec![0usize; n];
    let mut block_tokens = vec![0usize; blocks.len()];
    for (b, block) in blocks.iter().enumerate() {
        for slot in block_of.iter_mut().take(block.last + 1).skip(block.first) {
            *slot = b;
        }
        block_tokens[b] = lines_tokens(block.first, block.last);
    }
    let mut units: Vec<Unit> = Vec::with_capacity(n);
    for (i, line) in st.lines.iter().enumerate() {
        let b = block_of[i];
        let mut p = if i == 0 { MANDATORY } else { prio[i] };
        if (p == ITEM || p == LINE) && block_tokens[b] <= target_max {
            p = NEVER;
        }
        let tokens = lines_tokens(i, i);
        let splittable = matches!(
            blocks[b].kind,
            BlockKind::Paragraph | BlockKind::List | BlockKind::Quote
        );
        if tokens > target_max && splittable {
            let pieces = split_long(text, &tok, line.start, line.end, target_max);
            for (k, &(a, e)) in pieces.iter().enumerate() {
                units.push(Unit {
                    start: a,
                    end: e,
                    prio: if k == 0 { p } else { LINE },
                    block: b,
                    tokens: tok.between(a, e),
                });
            }
        } else {
            units.push(Unit {
                start: line.start,
                end: line.end,
                prio: p,
                block: b,
                tokens,
            });
        }
    }
    // Greedy packing.
    struct Raw {
        start: usize,
        end: usize,
        tokens: usize,
        section: usize,
        own: bool,
        oversized: bool,
        block: Option<BlockKind>,
    }
    let mut chunks: Vec<Raw> = Vec::new();
    let nu = units.len();
    let mut section = 0;
    let mut u = 0;
    while u < nu {
        if u > 0 && units[u].prio == MANDATORY && blocks[units[u].block].kind == BlockKind::Section
        {
            section += 1;
        }
        let mut tokens = units[u].tokens;
        let mut best: Option<(u8, usize, usize)> = None;
        let mut last_fit: Option<(u8, usize, usize)> = None;
        let mut first_cut: Option<(usize, usize)> = None;
        let mut v = u + 1;
        loop {
            let here = if v >= nu || units[v].prio == MANDATORY {
                MANDATORY
            } else {
                units[v].prio
            };
            if here != NEVER {
                if tokens > target_max {
                    first_cut = Some((v, tokens));
                    break;
                }
                last_fit = Some((here, v, tokens));
                if here == MANDATORY {
                    break;
                }
                if tokens >= target_min && best.is_none_or(|(bp, _, _)| here >= bp) {
                    best = Some((here, v, tokens));
                }
            }
            if v >= nu {
                break;
            }
            tokens += units[v].tokens;
            v += 1;
        }
        let (cut, ctoks) = match (last_fit, best, first_cut) {
            (Some((MANDATORY, c, t)), _, _) => (c, t),
            (_, Some((_, c, t)), _) => (c, t),
            (Some((_, c, t)), None, _) => (c, t),
            (None, None, Some((c, t))) => (c, t),
            (None, None, None) => (nu, tokens),
        };
        let cut = cut.max(u + 1);
        let mut own = false;
        let mut atomic: Option<BlockKind> = None;
        let mut other: Option<BlockKind> = None;
        for unit in &units[u..cut] {
            let block = blocks[unit.block];
            own |= block.own;
            match block.kind {
                BlockKind::Code | BlockKind::Table => {
                    atomic.get_or_insert(block.kind);
                }
                BlockKind::Blank => {}
                k => {
                    other.get_or_insert(k);
                }
            }
        }
        let oversized = ctoks > hard_max;
        chunks.push(Raw {
            start: units[u].start,
            end: units[cut - 1].end,
            tokens: ctoks,
            section,
            own,
            oversized,
            block: if oversized { atomic.or(other) } else { None },
        });
        u = cut;
    }
    // Small chunks merge with a neighbour of their section (linear: a merge
    // only ever grows the chunk before, which is checked again).
    let mut merged: Vec<Raw> = Vec::with_capacity(chunks.len());
    let mergeable = |c: &Raw| !c.own && !c.oversized;
    let mut pending = chunks.into_iter().peekable();
    while let Some(mut ch) = pending.next() {
        if let Some(prev) = merged.last_mut()
            && prev.section == ch.section
            && mergeable(prev)
            && mergeable(&ch)
            && (ch.tokens < min || prev.tokens < min)
            && prev.tokens + ch.tokens <= hard_max
        {
            // Prefer the smaller neighbour for a small chunk between two.
            let next_better = ch.tokens < min
                && prev.tokens >= min
                && pending.peek().is_some_and(|nx| {
                    nx.section == ch.section
                        && mergeable(nx)
                        && nx.tokens < prev.tokens
                        && nx.tokens + ch.tokens <= hard_max
                });
            if !next_better {
                prev.end = ch.end;
                prev.tokens += ch.tokens;
                continue;
            }
        }
        if ch.tokens < min
            && mergeable(&ch)
            && let Some(nx) = pending.peek()
            && nx.section == ch.section
            && mergeable(nx)
            && nx.tokens + ch.tokens <= hard_max
        {
            let nx = pending.next().unwrap_or_else(|| unreachable!());
            ch.end = nx.end;
            ch.tokens += nx.tokens;
        }
        merged.push(ch);
    }
    let marks = atomic_marks(st, &blocks);
    // Exact counts where an end falls inside a piece; lines, paths, overlap.
    let mut out = Vec::with_capacity(merged.len());
    let mut path: Vec<usize> = Vec::new();
    let mut h = 0;
    for (k, ch) in merged.iter().enumerate() {
        let tokens = if tok.is_piece_end(ch.start) && tok.is_piece_end(ch.end) {
            ch.tokens
        } else {
            tokenizer.count(text.get(ch.start..ch.end).unwrap_or(""))
        };
        let first_line = st.lines.partition_point(|l| l.end <= ch.start).min(n - 1);
        let last_line = st
            .lines
            .partition_point(|l| l.end < ch.end)
            .min(n - 1)
            .max(first_line);
        let mut first_content = first_line;
        while first_content < last_line && st.kinds[first_content] == LineKind::Blank {
            first_content += 1;
        }
        while h < st.headings.len() && st.headings[h].line <= first_content {
            let level = st.headings[h].level;
            while path.last().is_some_and(|&p| st.headings[p].level >= level) {
                path.pop();
            }
            path.push(h);
            h += 1;
        }
        let overlap_start = if k == 0 || overlap == 0 {
            ch.start
        } else {
            let prev = &merged[k - 1];
            overlap_from(
                text, st, &marks, &tok, tokenizer, prev.start, prev.end, overlap,
            )
        };
        out.push(Planned {
            start: ch.start,
            end: ch.end,
            overlap_start,
            tokens,
            section: ch.section,
            own: ch.own,
            oversized: ch.oversized,
            block: ch.block,
            first_line,
            last_line,
            path: path.clone(),
        });
    }
    out
}

/// Where the overlap after the chunk `prev_start..prev_end` starts: the
/// longest suffix of it of at most `overlap + 10` tokens that starts at a line
/// start or, in prose, a word start, never inside a code block or table;
/// `prev_end` (none) when no such suffix fits. Candidates are found with the
/// prefix sums (a start inside a piece can be off by a token or two) and the
/// chosen one is counted exactly unless both its ends fall between pieces.
#[allow(clippy::too_many_arguments)]
fn overlap_from(
    text: &str,
    st: &Structure<'_>,
    marks: &[u8],
    tok: &Tokens,
    tokenizer: &Tokenizer,
    prev_start: usize,
    prev_end: usize,
    overlap: usize,
) -> usize {
    let budget = overlap + 10;
    let end_count = tok.at(prev_end);
    // Approximate counts may be one or two tokens low: look a little further.
    // The positions tried only decrease: `k` walks back over the piece ends
    // (`tok.at(c)` is the count of the first `k` pieces).
    let mut k = tok.ends.partition_point(|&e| e <= prev_end);
    let mut fits = |c: usize| {
        while k > 0 && tok.ends[k - 1] > c {
            k -= 1;
        }
        let at = if k == 0 { 0 } else { tok.cum[k - 1] };
        end_count.saturating_sub(at) <= budget + 2
    };
    let b = text.as_bytes();
    let mut candidates: Vec<usize> = Vec::new(); // latest first
    let mut i = st.lines.partition_point(|l| l.start < prev_end);
    'lines: while i > 0 {
        i -= 1;
        let line = st.lines[i];
        if line.end <= prev_start {
            break;
        }
        let lo = line.start.max(prev_start);
        if marks[i] == 0 {
            let stop = line.text_end.min(prev_end);
            let mut p = stop;
            while p > lo {
                let q = p - 1;
                if (b[q] == b' ' || b[q] == b'\t') && p < stop && b[p] != b' ' && b[p] != b'\t' {
                    if !fits(p) {
                        break 'lines;
                    }
                    candidates.push(p);
                }
                p = q;
            }
        }
        if !fits(line.start) {
            break;
        }
        if marks[i] != 2 && line.start >= prev_start {
            candidates.push(line.start);
        }
        if line.start <= prev_start {
            break;
        }
    }
    // Longest first, counted exactly.
    let end_aligned = tok.is_piece_end(prev_end);
    for &c in candidates.iter().rev() {
        let tokens = if end_aligned && tok.is_piece_end(c) {
            end_count.saturating_sub(tok.at(c))
        } else {
            tokenizer.count(text.get(c..prev_end).unwrap_or(""))
        };
        if tokens <= budget {
            return c;
        }
    }
    prev_end
}

/// Convenience for callers holding only the text.
pub fn plan_text(
    text: &str,
    limits: Limits,
    overlap: usize,
    tokenizer: &Tokenizer,
) -> Vec<Planned> {
    let st = scan::structure(text);
    plan(text, &st, limits, overlap, tokenizer)
}
