//! The vault graph of one note: which scanned links are note links, what
//! each chunk links to (its `wikilinks`, `references` and metadata), and the
//! edges the note owns (`belongs_to`, `prev`/`next`, `references`,
//! `backlink`) with their statuses.
//!
//! Link targets are an opaque `T` (`Copy + Eq + Hash`): the caller decides
//! what makes two targets equal and how a raw target resolves to a note id
//! (the bindings use handles of Python strings and a Python resolver).
//! Every function is linear in its input.

use std::borrow::Cow;
use std::hash::Hash;

use rustc_hash::{FxHashMap, FxHashSet};

use super::links;
use super::plan::BlockKind;
use super::scan::{self, RawLink, RawLinkKind};
use crate::records::Value;

/// A link as written, its parts split (byte offsets into the body).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found<'a> {
    pub kind: RawLinkKind,
    pub start: usize,
    pub end: usize,
    /// Wikilinks: the target part of the inner text; Markdown links: the URL.
    pub target: &'a str,
    pub heading: Option<&'a str>,
    pub block: Option<&'a str>,
    /// Wikilinks: the alias; Markdown links: the link text.
    pub display: Option<&'a str>,
    pub in_suggestions: bool,
}

/// The parts of a scanned link of `text`.
pub fn found<'a>(text: &'a str, raw: &RawLink) -> Found<'a> {
    let inner = text.get(raw.inner.0..raw.inner.1).unwrap_or("");
    let (target, heading, block, display) = match raw.kind {
        RawLinkKind::Wiki | RawLinkKind::WikiEmbed => {
            let w = scan::split_wiki(inner);
            (w.target, w.heading, w.block, w.display)
        }
        RawLinkKind::Markdown | RawLinkKind::MarkdownEmbed => {
            let url = raw.url.and_then(|(a, b)| text.get(a..b)).unwrap_or("");
            (url, None, None, Some(inner))
        }
    };
    Found {
        kind: raw.kind,
        start: raw.start,
        end: raw.end,
        target,
        heading,
        block,
        display,
        in_suggestions: raw.in_suggestions,
    }
}

/// The kind of a note link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkKind {
    Wikilink,
    /// `![[...]]` or `![...](...)`.
    Embed,
    Markdown,
}

impl LinkKind {
    pub fn name(self) -> &'static str {
        match self {
            LinkKind::Wikilink => "wikilink",
            LinkKind::Embed => "embed",
            LinkKind::Markdown => "markdown",
        }
    }
}

/// A link to a note (what a `NoteLink` holds; byte offsets).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoteLink<'a> {
    pub kind: LinkKind,
    pub target: Cow<'a, str>,
    pub heading: Option<Cow<'a, str>>,
    pub block: Option<Cow<'a, str>>,
    pub display: Option<&'a str>,
    pub start: usize,
    pub end: usize,
    pub in_suggestions: bool,
}

/// The note link a found link makes: Markdown links only when they point to
/// a `.md` file (their URL decoded); `None` for attachments and empty
/// targets.
pub fn note_link<'a>(f: &Found<'a>) -> Option<NoteLink<'a>> {
    let (kind, target, heading, block) = match f.kind {
        RawLinkKind::Wiki => (
            LinkKind::Wikilink,
            Cow::Borrowed(f.target),
            f.heading.map(Cow::Borrowed),
            f.block.map(Cow::Borrowed),
        ),
        RawLinkKind::WikiEmbed => (
            LinkKind::Embed,
            Cow::Borrowed(f.target),
            f.heading.map(Cow::Borrowed),
            f.block.map(Cow::Borrowed),
        ),
        RawLinkKind::Markdown | RawLinkKind::MarkdownEmbed => {
            let parsed = links::markdown_target(f.target)?;
            let kind = if f.kind == RawLinkKind::Markdown {
                LinkKind::Markdown
            } else {
                LinkKind::Embed
            };
            (
                kind,
                Cow::Owned(parsed.target),
                parsed.heading.map(Cow::Owned),
                parsed.block.map(Cow::Owned),
            )
        }
    };
    if target.is_empty() || is_attachment(&target) {
        return None;
    }
    Some(NoteLink {
        kind,
        target,
        heading,
        block,
        display: f.display,
        start: f.start,
        end: f.end,
        in_suggestions: f.in_suggestions,
    })
}

/// Python's `str.casefold` of `s` when the result is ASCII, else `None`.
/// Besides ASCII, only these characters fold to ASCII (Unicode 14, checked
/// against every code point by the unit test's table): `ß ẞ → ss`,
/// `ſ → s`, `K` (Kelvin) `→ k` and the Latin ligatures U+FB00..U+FB06.
pub fn ascii_casefold(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let folded = match c {
            c if c.is_ascii() => {
                out.push(c.to_ascii_lowercase());
                continue;
            }
            'ß' | 'ẞ' => "ss",
            'ſ' => "s",
            '\u{212a}' => "k",
            'ﬀ' => "ff",
            'ﬁ' => "fi",
            'ﬂ' => "fl",
            'ﬃ' => "ffi",
            'ﬄ' => "ffl",
            'ﬅ' | 'ﬆ' => "st",
            _ => return None,
        };
        out.push_str(folded);
    }
    Some(out)
}

/// Whether a link target names an attachment (its extension compared as
/// Python's `str.casefold` compares).
pub fn is_attachment(target: &str) -> bool {
    links::extension(target)
        .and_then(ascii_casefold)
        .is_some_and(|ext| links::is_attachment_extension(&ext))
}

/// What one chunk links to: `wikilinks` every distinct target (first-seen
/// order), `references` the link index and target of each link outside a
/// suggestions section.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChunkLinks<T> {
    pub wikilinks: Vec<T>,
    pub references: Vec<(usize, T)>,
}

/// The links of each chunk: `spans` the chunks' `(start, end)`, `starts`
/// and `in_suggestions` the links' starts (increasing) and flags, in one
/// unit of offsets; `target(i)` the (resolved) target of link `i`, asked
/// once per link, in order. A link belongs to the chunk its start is in.
pub fn chunk_links<T, E>(
    spans: &[(usize, usize)],
    starts: &[usize],
    in_suggestions: &[bool],
    mut target: impl FnMut(usize) -> Result<T, E>,
) -> Result<Vec<ChunkLinks<T>>, E>
where
    T: Copy + Eq + Hash,
{
    let mut out = Vec::with_capacity(spans.len());
    for &(start, end) in spans {
        let lo = starts.partition_point(|&s| s < start);
        let hi = starts.partition_point(|&s| s < end).max(lo);
        let mut links = ChunkLinks {
            wikilinks: Vec::new(),
            references: Vec::new(),
        };
        let mut seen: FxHashSet<T> = FxHashSet::default();
        for i in lo..hi {
            let t = target(i)?;
            if seen.insert(t) {
                links.wikilinks.push(t);
            }
            if !in_suggestions.get(i).copied().unwrap_or(false) {
                links.references.push((i, t));
            }
        }
        out.push(links);
    }
    Ok(out)
}

/// The metadata of a note chunk: where its embed text starts, and its block
/// when it is oversized (one block that cannot be cut) or a quote of its own.
pub fn chunk_metadata(
    overlap_start: usize,
    oversized: bool,
    own: bool,
    block: Option<BlockKind>,
) -> Vec<(&'static str, Value)> {
    let count = i64::try_from(overlap_start).unwrap_or(i64::MAX);
    let mut out = vec![("overlap_start", Value::Int(count))];
    if oversized {
        out.push(("oversized", Value::Bool(true)));
        let block = block.map_or(Value::Null, |b| Value::Str(b.name().to_string()));
        out.push(("block", block));
    } else if own {
        out.push(("block", Value::Str("quote".to_string())));
    }
    out
}

/// The id of chunk `index` of a note: `{note_id}#c{index:02}`.
pub fn chunk_id(note_id: &str, index: usize) -> String {
    format!("{note_id}#c{index:02}")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    BelongsTo,
    Prev,
    Next,
    References,
    Backlink,
}

impl EdgeKind {
    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::BelongsTo => "belongs_to",
            EdgeKind::Prev => "prev",
            EdgeKind::Next => "next",
            EdgeKind::References => "references",
            EdgeKind::Backlink => "backlink",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Chunk,
    Note,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Chunk => "chunk",
            Scope::Note => "note",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Ok,
    /// The target names no note (`target_id` is the raw target).
    Unresolved,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Unresolved => "unresolved",
        }
    }
}

/// An end of an edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node<T> {
    /// The note that owns the edges.
    Note,
    /// Its chunk of this index.
    Chunk(usize),
    /// A link target (a note id once resolved).
    Target(T),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge<T> {
    pub kind: EdgeKind,
    pub source: Node<T>,
    pub target: Node<T>,
    pub scope: Scope,
    pub status: Status,
}

/// The edges one note owns, in this order: each chunk `belongs_to` the
/// note; each chunk's `prev` and `next`; one chunk `references` edge per
/// reference (`references[k]` the raw targets of chunk `k`'s references);
/// one `backlink` from each distinct resolved target to the note; with
/// `note_scope_references`, one note `references` edge per distinct target.
///
/// `resolve(raw)` is the note id a raw target names (`None`: unresolved,
/// the edge keeps the raw target); it is asked once per distinct raw target.
/// A target's status is that of its first reference.
pub fn note_edges<T, E>(
    references: &[Vec<T>],
    mut resolve: impl FnMut(T) -> Result<Option<T>, E>,
    note_scope_references: bool,
) -> Result<Vec<Edge<T>>, E>
where
    T: Copy + Eq + Hash,
{
    let n = references.len();
    let edge = |kind, source, target, scope, status| Edge {
        kind,
        source,
        target,
        scope,
        status,
    };
    let mut out: Vec<Edge<T>> = Vec::with_capacity(3 * n);
    for k in 0..n {
        let chunk = Node::Chunk(k);
        out.push(edge(
            EdgeKind::BelongsTo,
            chunk,
            Node::Note,
            Scope::Chunk,
            Status::Ok,
        ));
    }
    for k in 0..n {
        let chunk = Node::Chunk(k);
        if k > 0 {
            out.push(edge(
                EdgeKind::Prev,
                chunk,
                Node::Chunk(k - 1),
                Scope::Chunk,
                Status::Ok,
            ));
        }
        if k + 1 < n {
            out.push(edge(
                EdgeKind::Next,
                chunk,
                Node::Chunk(k + 1),
                Scope::Chunk,
                Status::Ok,
            ));
        }
    }
    let mut resolved: FxHashMap<T, Option<T>> = FxHashMap::default();
    // Distinct targets in first-seen order, with their first status.
    let mut targets: Vec<(T, Status)> = Vec::new();
    let mut seen: FxHashSet<T> = FxHashSet::default();
    for (k, refs) in references.iter().enumerate() {
        for &raw in refs {
            let found = match resolved.get(&raw) {
                Some(&hit) => hit,
                None => {
                    let hit = resolve(raw)?;
                    resolved.insert(raw, hit);
                    hit
                }
            };
            let (target, status) = match found {
                Some(id) => (id, Status::Ok),
                None => (raw, Status::Unresolved),
            };
            out.push(edge(
                EdgeKind::References,
                Node::Chunk(k),
                Node::Target(target),
                Scope::Chunk,
                status,
            ));
            if seen.insert(target) {
                targets.push((target, status));
            }
        }
    }
    for &(target, status) in &targets {
        if status == Status::Ok {
            out.push(edge(
                EdgeKind::Backlink,
                Node::Target(target),
                Node::Note,
                Scope::Note,
                Status::Ok,
            ));
        }
    }
    if note_scope_references {
        for &(target, status) in &targets {
            out.push(edge(
                EdgeKind::References,
                Node::Note,
                Node::Target(target),
                Scope::Note,
                status,
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Never = std::convert::Infallible;

    fn links_of(text: &str) -> Vec<(LinkKind, String)> {
        let st = scan::structure(text);
        scan::links(&st, &[])
            .iter()
            .filter_map(|raw| note_link(&found(text, raw)))
            .map(|l| (l.kind, l.target.into_owned()))
            .collect()
    }

    #[test]
    fn only_links_to_notes_are_note_links() {
        let text = "[[A]] ![[B#h]] [[pic.PNG]] [[]] [c](C%20D.md#x) ![e](E.md) \
                    [web](https://x.org/F.md) [g](g.txt) [[ﬂac.ﬂac]] [[x.cß]]";
        assert_eq!(
            links_of(text),
            [
                (LinkKind::Wikilink, "A".to_string()),
                (LinkKind::Embed, "B".to_string()),
                (LinkKind::Markdown, "C D.md".to_string()),
                (LinkKind::Embed, "E.md".to_string()),
            ]
        );
    }

    #[test]
    fn casefold_to_ascii_matches_python() {
        // Every non-ASCII code point whose `str.casefold()` is ASCII.
        let table = [
            ('\u{df}', "ss"),
            ('\u{17f}', "s"),
            ('\u{1e9e}', "ss"),
            ('\u{212a}', "k"),
            ('\u{fb00}', "ff"),
            ('\u{fb01}', "fi"),
            ('\u{fb02}', "fl"),
            ('\u{fb03}', "ffi"),
            ('\u{fb04}', "ffl"),
            ('\u{fb05}', "st"),
            ('\u{fb06}', "st"),
        ];
        for (c, folded) in table {
            assert_eq!(ascii_casefold(&c.to_string()).as_deref(), Some(folded));
        }
        let folds_to_ascii = |c: char| table.iter().any(|&(t, _)| t == c);
        for c in (0x80u32..0x3_0000).filter_map(char::from_u32) {
            if !folds_to_ascii(c) {
                assert_eq!(ascii_casefold(&c.to_string()), None, "{c:?}");
            }
        }
        assert_eq!(ascii_casefold("PnG").as_deref(), Some("png"));
        assert!(is_attachment("a/b.PDF") && is_attachment("x.ſvg") && !is_attachment("x.md"));
        assert!(!is_attachment("noext") && !is_attachment("dir.png/note"));
    }

    #[test]
    fn chunk_links_dedupe_targets_and_skip_suggestions() {
        let spans = [(0, 10), (10, 20), (20, 30)];
        let starts = [1, 5, 8, 12, 25];
        let flags = [false, false, true, true, false];
        let targets = [7, 8, 7, 9, 7];
        let got = chunk_links(&spans, &starts, &flags, |i| Ok::<_, Never>(targets[i])).unwrap();
        assert_eq!(got[0].wikilinks, [7, 8]);
        assert_eq!(got[0].references, [(0, 7), (1, 8)]);
        assert_eq!(got[1].wikilinks, [9]);
        assert!(got[1].references.is_empty());
        assert_eq!(got[2].references, [(4, 7)]);
    }

    #[test]
    fn metadata_names_the_block_of_oversized_and_quote_chunks() {
        assert_eq!(chunk_metadata(3, false, false, None).len(), 1);
        let m = chunk_metadata(0, true, true, Some(BlockKind::Code));
        assert_eq!(m[1], ("oversized", Value::Bool(true)));
        assert_eq!(m[2], ("block", Value::Str("code".to_string())));
        let m = chunk_metadata(0, false, true, Some(BlockKind::Quote));
        assert_eq!(m[1], ("block", Value::Str("quote".to_string())));
        assert_eq!(chunk_id("n", 3), "n#c03");
        assert_eq!(chunk_id("n", 123), "n#c123");
    }

    #[test]
    fn edges_of_a_note() {
        // Targets: 1 resolves to 10, 2 is unresolved, 10 resolves to itself.
        let refs = vec![vec![1, 2], vec![], vec![10, 1]];
        let mut asked = Vec::new();
        let edges = note_edges(
            &refs,
            |t| {
                asked.push(t);
                Ok::<_, Never>(match t {
                    1 | 10 => Some(10),
                    _ => None,
                })
            },
            true,
        )
        .unwrap();
        assert_eq!(asked, [1, 2, 10]);
        let kinds: Vec<&str> = edges.iter().map(|e| e.kind.name()).collect();
        assert_eq!(
            kinds,
            [
                "belongs_to",
                "belongs_to",
                "belongs_to",
                "next",
                "prev",
                "next",
                "prev",
                "references",
                "references",
                "references",
                "references",
                "backlink",
                "references",
                "references",
            ]
        );
        assert_eq!(edges[8].target, Node::Target(2));
        assert_eq!(edges[8].status, Status::Unresolved);
        assert_eq!(edges[11].source, Node::Target(10));
        assert_eq!(edges[11].target, Node::Note);
        assert_eq!(edges[13].status, Status::Unresolved);
        assert_eq!(edges[13].scope, Scope::Note);
    }
}
