//! The line structure of a note body (fenced code blocks, headings, code
//! spans) and the link scan over it.

use rustc_hash::FxHashMap;

/// What a line is, before block grouping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    Blank,
    Text,
    Heading,
    /// Any line of a fenced code block, its fences included.
    Fence,
}

/// One line: `start..end` includes its line end, `start..text_end` not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    pub start: usize,
    pub text_end: usize,
    pub end: usize,
}

/// An ATX heading outside code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heading {
    pub line: usize,
    pub level: u8,
    /// Byte range of the title (trimmed, closing `#`s removed).
    pub title: (usize, usize),
}

/// The lines of a body, what each is, and where the code is.
pub struct Structure<'a> {
    pub text: &'a str,
    pub lines: Vec<Line>,
    pub kinds: Vec<LineKind>,
    /// Per line: the index of its fenced block, `u32::MAX` outside one.
    pub fence_id: Vec<u32>,
    pub headings: Vec<Heading>,
    /// Byte ranges of inline code spans (outside fenced blocks), increasing.
    pub code_spans: Vec<(usize, usize)>,
}

pub const NO_FENCE: u32 = u32::MAX;

impl<'a> Structure<'a> {
    pub fn line_text(&self, i: usize) -> &'a str {
        let l = self.lines[i];
        self.text.get(l.start..l.text_end).unwrap_or("")
    }

    pub fn heading_title(&self, h: &Heading) -> &'a str {
        self.text.get(h.title.0..h.title.1).unwrap_or("")
    }

    /// The heading on line `i`, if any (headings are sorted by line).
    pub fn heading_at(&self, i: usize) -> Option<&Heading> {
        self.headings
            .binary_search_by_key(&i, |h| h.line)
            .ok()
            .and_then(|k| self.headings.get(k))
    }
}

fn split_lines(text: &str) -> Vec<Line> {
    let b = text.as_bytes();
    let mut lines = Vec::with_capacity(text.len() / 40 + 1);
    let mut start = 0;
    while start < b.len() {
        let (text_end, end) = match memchr::memchr(b'\n', &b[start..]) {
            Some(i) => {
                let nl = start + i;
                let te = if nl > start && b[nl - 1] == b'\r' {
                    nl - 1
                } else {
                    nl
                };
                (te, nl + 1)
            }
            None => (b.len(), b.len()),
        };
        lines.push(Line {
            start,
            text_end,
            end,
        });
        start = end;
    }
    lines
}

fn skip_spaces(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    i
}

/// A fence line: (fence char, run length, byte offset after the run). Any
/// indentation and block quote markers may precede the run (fences inside
/// list items and quotes).
pub fn fence(line: &str) -> Option<(u8, usize, usize)> {
    let b = line.as_bytes();
    let mut i = skip_spaces(b, 0);
    while i < b.len() && b[i] == b'>' {
        i = skip_spaces(b, i + 1);
    }
    let c = *b.get(i)?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let run_start = i;
    while i < b.len() && b[i] == c {
        i += 1;
    }
    let n = i - run_start;
    (n >= 3).then_some((c, n, i))
}

/// An ATX heading line: (level, title byte range within the line).
pub fn heading(line: &str) -> Option<(u8, (usize, usize))> {
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() && i < 3 && b[i] == b' ' {
        i += 1;
    }
    let hashes = i;
    while i < b.len() && b[i] == b'#' {
        i += 1;
    }
    let level = i - hashes;
    if !(1..=6).contains(&level) {
        return None;
    }
    if i < b.len() && b[i] != b' ' && b[i] != b'\t' {
        return None;
    }
    let start = skip_spaces(b, i);
    let mut end = b.len();
    while end > start && (b[end - 1] == b' ' || b[end - 1] == b'\t') {
        end -= 1;
    }
    // Closing sequence: `#`s preceded by a space (or the whole title).
    let mut k = end;
    while k > start && b[k - 1] == b'#' {
        k -= 1;
    }
    if k < end && (k == start || b[k - 1] == b' ' || b[k - 1] == b'\t') {
        end = k;
        while end > start && (b[end - 1] == b' ' || b[end - 1] == b'\t') {
            end -= 1;
        }
    }
    Some((level as u8, (start, end.max(start))))
}

fn is_blank(line: &str) -> bool {
    line.bytes().all(|c| c == b' ' || c == b'\t')
}

/// Lines, fenced blocks, headings and code spans of a body.
pub fn structure(text: &str) -> Structure<'_> {
    let lines = split_lines(text);
    let mut kinds = Vec::with_capacity(lines.len());
    let mut fence_id = Vec::with_capacity(lines.len());
    let mut headings = Vec::new();
    let mut open: Option<(u8, usize)> = None;
    let mut fences: u32 = 0;
    for (i, l) in lines.iter().enumerate() {
        let t = text.get(l.start..l.text_end).unwrap_or("");
        if let Some((c, n)) = open {
            kinds.push(LineKind::Fence);
            fence_id.push(fences - 1);
            if let Some((c2, n2, after)) = fence(t)
                && c2 == c
                && n2 >= n
                && is_blank(t.get(after..).unwrap_or(""))
            {
                open = None;
            }
            continue;
        }
        if let Some((c, n, after)) = fence(t) {
            let info = t.get(after..).unwrap_or("");
            if !(c == b'`' && info.contains('`')) {
                open = Some((c, n));
                fences = fences.saturating_add(1);
                kinds.push(LineKind::Fence);
                fence_id.push(fences - 1);
                continue;
            }
        }
        fence_id.push(NO_FENCE);
        if is_blank(t) {
            kinds.push(LineKind::Blank);
        } else if let Some((level, (a, b))) = heading(t) {
            kinds.push(LineKind::Heading);
            headings.push(Heading {
                line: i,
                level,
                title: (l.start + a, l.start + b),
            });
        } else {
            kinds.push(LineKind::Text);
        }
    }
    let mut st = Structure {
        text,
        lines,
        kinds,
        fence_id,
        headings,
        code_spans: Vec::new(),
    };
    st.code_spans = code_spans(&st);
    st
}

/// Code spans: a run of n backticks up to the next run of exactly n
/// backticks within one paragraph (consecutive text lines) or heading; an
/// unmatched run is literal. Linear: each run's closer is found from a table
/// of the next run of each length.
fn code_spans(st: &Structure<'_>) -> Vec<(usize, usize)> {
    let b = st.text.as_bytes();
    let mut spans = Vec::new();
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut next_same: Vec<usize> = Vec::new();
    let mut seen: FxHashMap<usize, usize> = FxHashMap::default();
    let n = st.lines.len();
    let mut i = 0;
    while i < n {
        let kind = st.kinds[i];
        if kind != LineKind::Text && kind != LineKind::Heading {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        if kind == LineKind::Text {
            while j < n && st.kinds[j] == LineKind::Text {
                j += 1;
            }
        }
        let (start, end) = (st.lines[i].start, st.lines[j - 1].end);
        runs.clear();
        let mut p = start;
        while let Some(k) = memchr::memchr(b'`', &b[p..end]) {
            let s = p + k;
            let mut e = s;
            while e < end && b[e] == b'`' {
                e += 1;
            }
            runs.push((s, e));
            p = e;
        }
        if runs.len() >= 2 {
            next_same.clear();
            next_same.resize(runs.len(), usize::MAX);
            seen.clear();
            for k in (0..runs.len()).rev() {
                let len = runs[k].1 - runs[k].0;
                next_same[k] = seen.get(&len).copied().unwrap_or(usize::MAX);
                seen.insert(len, k);
            }
            let mut k = 0;
            while k < runs.len() {
                let close = next_same[k];
                if close != usize::MAX {
                    spans.push((runs[k].0, runs[close].1));
                    k = close + 1;
                } else {
                    k += 1;
                }
            }
        }
        i = j;
    }
    spans
}

/// The title of the first H1 outside code, if any (byte range).
pub fn first_h1(st: &Structure<'_>) -> Option<(usize, usize)> {
    st.headings
        .iter()
        .find(|h| h.level == 1 && h.title.1 > h.title.0)
        .map(|h| h.title)
}

/// The text of the title [`first_h1`] finds.
pub fn first_h1_text<'a>(st: &Structure<'a>) -> Option<&'a str> {
    first_h1(st).and_then(|(a, b)| st.text.get(a..b))
}

/// Byte ranges masked from the link scan: fenced blocks and code spans,
/// sorted and disjoint.
fn code_regions(st: &Structure<'_>) -> Vec<(usize, usize)> {
    let mut regions = Vec::new();
    let n = st.lines.len();
    let mut i = 0;
    while i < n {
        if st.kinds[i] == LineKind::Fence {
            let mut j = i;
            while j < n && st.kinds[j] == LineKind::Fence {
                j += 1;
            }
            regions.push((st.lines[i].start, st.lines[j - 1].end));
            i = j;
        } else {
            i += 1;
        }
    }
    regions.extend_from_slice(&st.code_spans);
    regions.sort_unstable();
    regions
}

fn heading_key(title: &str) -> String {
    title.trim().trim_end_matches(':').trim().to_lowercase()
}

/// Byte ranges of the sections under a suggestions heading (a heading whose
/// title, trimmed and without a trailing colon, equals one of `names`
/// ignoring case), each up to the next heading of the same or a higher level.
pub fn suggestion_ranges(st: &Structure<'_>, names: &[String]) -> Vec<(usize, usize)> {
    let wanted: Vec<String> = names.iter().map(|n| heading_key(n)).collect();
    let mut ranges = Vec::new();
    if wanted.is_empty() {
        return ranges;
    }
    let mut open: Option<(u8, usize)> = None;
    for h in &st.headings {
        let start = st.lines[h.line].start;
        if let Some((level, s)) = open
            && h.level <= level
        {
            ranges.push((s, start));
            open = None;
        }
        if open.is_none() && wanted.contains(&heading_key(st.heading_title(h))) {
            open = Some((h.level, start));
        }
    }
    if let Some((_, s)) = open {
        ranges.push((s, st.text.len()));
    }
    ranges
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RawLinkKind {
    /// `[[...]]`
    Wiki,
    /// `![[...]]`
    WikiEmbed,
    /// `[text](url)`
    Markdown,
    /// `![text](url)`
    MarkdownEmbed,
}

/// A link as written: `inner` is the text between `[[` and `]]` (wikilinks)
/// or between `[` and `]` (Markdown links, whose target is `url`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawLink {
    pub kind: RawLinkKind,
    pub start: usize,
    pub end: usize,
    pub inner: (usize, usize),
    pub url: Option<(usize, usize)>,
    pub in_suggestions: bool,
}

/// `[[inner]]` at `i` (`b[i..i+2] == "[["`): the offset of the closing `]]`.
fn wiki_at(b: &[u8], i: usize, limit: usize) -> Option<usize> {
    let mut j = i + 2;
    while j < limit {
        match b[j] {
            b'[' | b'\n' => return None,
            b']' => return (j + 1 < limit && b[j + 1] == b']').then_some(j),
            _ => j += 1,
        }
    }
    None
}

/// `[text](url "title")` at `i`: (text end, url range, end).
fn markdown_at(b: &[u8], i: usize, limit: usize) -> Option<(usize, (usize, usize), usize)> {
    let mut j = i + 1;
    while j < limit && !matches!(b[j], b'[' | b']' | b'\n') {
        j += 1;
    }
    if j + 1 >= limit || b[j] != b']' || b[j + 1] != b'(' {
        return None;
    }
    let text_end = j;
    j = skip_spaces(b, j + 2);
    let url_start = j;
    if j < limit && b[j] == b'<' {
        j += 1;
        while j < limit && !matches!(b[j], b'<' | b'>' | b'\n') {
            j += 1;
        }
        if j >= limit || b[j] != b'>' {
            return None;
        }
        j += 1;
    } else {
        while j < limit && !b[j].is_ascii_whitespace() && !matches!(b[j], b'(' | b')' | b'<' | b'>')
        {
            j += 1;
        }
        if j == url_start {
            return None;
        }
    }
    let url_end = j;
    let after_url = j;
    j = skip_spaces(b, j);
    if j > after_url && j < limit && (b[j] == b'"' || b[j] == b'\'') {
        let q = b[j];
        j += 1;
        while j < limit && b[j] != q && b[j] != b'\n' {
            j += 1;
        }
        if j >= limit || b[j] != q {
            return None;
        }
        j = skip_spaces(b, j + 1);
    }
    if j < limit && b[j] == b')' {
        Some((text_end, (url_start, url_end), j + 1))
    } else {
        None
    }
}

/// Every wikilink, embed and Markdown link outside code, in text order.
pub fn links(st: &Structure<'_>, suggestion_names: &[String]) -> Vec<RawLink> {
    let b = st.text.as_bytes();
    let regions = code_regions(st);
    let ranges = suggestion_ranges(st, suggestion_names);
    let mut out = Vec::new();
    let mut r = 0; // next code region
    let mut s = 0; // next suggestion range
    let mut i = 0;
    while let Some(k) = memchr::memchr(b'[', &b[i..]) {
        i += k;
        while r < regions.len() && regions[r].1 <= i {
            r += 1;
        }
        // Inside code: skip the region.
        if r < regions.len() && regions[r].0 <= i {
            i = regions[r].1;
            continue;
        }
        let limit = regions.get(r).map_or(b.len(), |reg| reg.0);
        let embed = i > 0 && b[i - 1] == b'!';
        let start = if embed { i - 1 } else { i };
        let found = if i + 1 < limit && b[i + 1] == b'[' {
            wiki_at(b, i, limit).map(|close| {
                let kind = if embed {
                    RawLinkKind::WikiEmbed
                } else {
                    RawLinkKind::Wiki
                };
                (kind, (i + 2, close), None, close + 2)
            })
        } else {
            markdown_at(b, i, limit).map(|(text_end, url, end)| {
                let kind = if embed {
                    RawLinkKind::MarkdownEmbed
                } else {
                    RawLinkKind::Markdown
                };
                (kind, (i + 1, text_end), Some(url), end)
            })
        };
        match found {
            Some((kind, inner, url, end)) => {
                while s < ranges.len() && ranges[s].1 <= start {
                    s += 1;
                }
                let in_suggestions = s < ranges.len() && ranges[s].0 <= start;
                out.push(RawLink {
                    kind,
                    start,
                    end,
                    inner,
                    url,
                    in_suggestions,
                });
                i = end;
            }
            None => i += 1,
        }
    }
    out
}

/// The parts of a wikilink's inner text `target#heading|display`,
/// `target^block`, `target#^block` (a `\\|` in a table cell is a `|`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WikiParts<'a> {
    pub target: &'a str,
    pub heading: Option<&'a str>,
    pub block: Option<&'a str>,
    pub display: Option<&'a str>,
}

fn non_empty(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

pub fn split_wiki(inner: &str) -> WikiParts<'_> {
    let (mut target, display) = match inner.find('|') {
        Some(i) => (
            inner[..i].strip_suffix('\\').unwrap_or(&inner[..i]),
            Some(&inner[i + 1..]),
        ),
        None => (inner, None),
    };
    let mut heading = None;
    let mut block = None;
    if let Some(i) = target.find('#') {
        let rest = &target[i + 1..];
        target = &target[..i];
        match rest.strip_prefix('^') {
            Some(b) => block = non_empty(b),
            None => heading = non_empty(rest),
        }
    } else if let Some(i) = target.find('^') {
        block = non_empty(&target[i + 1..]);
        target = &target[..i];
    }
    WikiParts {
        target: target.trim(),
        heading,
        block,
        display,
    }
}
