//! The invariants of the core's public entries, as checks that panic with a
//! message when one does not hold. One copy serves two harnesses: the fuzz
//! targets (`fuzz/fuzz_targets`, through `fastnotebook_fuzz`) and the
//! property tests (`rust/proptests.rs`, which includes this file). Both name
//! the core `fnb` in the module that includes this one.
//!
//! What holds, by entry (the README's "Robustness" section says the same):
//! - `RecursiveSplitter` with the separator kept (start or end): every chunk
//!   is a byte range of the input; starts and ends never decrease; every
//!   character that is not whitespace lies in some chunk (every character,
//!   whitespace too, when `strip_whitespace=false`); chunks are stripped and
//!   within `chunk_size`, except an indivisible piece, which comes back as
//!   it is: one that the splitter, run on it alone, returns unchanged.
//!   With `keep_separator=false` the separators at chunk boundaries are
//!   dropped (and runs of one separator collapse to one): with whitespace
//!   separators, the non-whitespace text still appears, in order, whole.
//! - `MarkdownHeaderSplitter`: sections are rebuilt text (lines stripped,
//!   non-printable characters dropped, blocks joined with `"  \n"`); their
//!   printable non-whitespace characters are exactly the input's, in order,
//!   except the header lines when `strip_headers=true` (those go to the
//!   metadata).
//! - `HtmlHeaderSplitter`: sections are extracted text, stripped and
//!   non-empty; markup, attribute values, whitespace and everything outside
//!   the first `<body>` are dropped, entities decoded; text is ordered tag by
//!   tag (a tag's own strings before its children's), so the order of the
//!   input holds only within one tag. Input without `<` and `&` comes back as
//!   one section, the stripped input. Without `&`, no character is invented.
//!   Aggregated and per-element output hold the same characters.
//! - `chunk_text`: blank text gives nothing; text within `chunk_size` comes
//!   back whole, unstripped; otherwise chunks are stripped, non-empty, in
//!   order, within `chunk_size` in the unit (characters: always, as the last
//!   separator is ""; tokens: as langchain measures a chunk, the sum of the
//!   counts of its pieces before the strip, which the stripped chunk counted
//!   whole may exceed, and a single character may exceed it; see
//!   `fits_as_pieces`). Plain chunks
//!   cover the input's non-whitespace; Markdown and HTML chunks cover the
//!   splitter's sections (above). `min_chunk_size` drops chunks below it when
//!   one at least reaches it: that option loses text, by design.
//! - token counts: `count` equals the number of ids `encode` gives, the ids
//!   decode back to the text, and both equal tiktoken's (tiktoken-rs, the
//!   pre-tokenizer patterns run by fancy-regex).
//! - pooling: finite input gives a finite unit vector (or zeros when the
//!   rows cancel out), unchanged when rows are scaled by powers of two; NaN
//!   or infinity, no rows or dimension 0 are errors.
//! - cleaners: equal to the original regular expressions (run by `regex`).
//! - transcoding: surrogates round-trip through their placeholders.
//! - the note graph: note links lie in the body, have a non-empty target
//!   that is no attachment; each chunk of the plan holds the links that
//!   start in it, its wikilinks distinct, its references the links outside
//!   suggestions; a note owns one `belongs_to` per chunk, `prev`/`next`
//!   between neighbours, one chunk `references` per reference, one
//!   `backlink` per distinct resolved target, and asks once per raw target.

use std::ops::Range;
use std::sync::LazyLock;

use super::fnb;
use fnb::chunking::detect::{self, ContentType};
use fnb::chunking::html::{self, HtmlHeaderSplitter};
use fnb::chunking::markdown::{self, MarkdownHeaderSplitter};
use fnb::chunking::recursive::{
    CharLength, KeepSeparator, LengthFunction, Piece, RecursiveSplitter,
};
use fnb::chunking::signals::{self, HtmlSignals, MarkdownSignals};
use fnb::chunking::{self, ChunkSizes, Source};
use fnb::error::Error;
use fnb::tokens::Encoding;
use fnb::{cleaning, pooling, text, unicode};

// ------------------------------------------------------------------ helpers

/// Python's `c.isspace()`.
pub fn is_ws(c: char) -> bool {
    unicode::is_space(c)
}

/// The non-whitespace characters of `s`.
pub fn non_ws(s: &str) -> String {
    s.chars().filter(|&c| !is_ws(c)).collect()
}

/// The characters the Markdown splitter keeps and that are not whitespace.
pub fn md_visible(s: &str) -> String {
    s.chars()
        .filter(|&c| unicode::is_printable(c) && !is_ws(c))
        .collect()
}

fn char_len(s: &str) -> usize {
    unicode::char_len(s)
}

/// Checks that `spans` are non-empty ranges of `source` on character
/// boundaries, whose starts and ends never decrease; with `cover`, every
/// character outside all spans is whitespace (`all_chars`: every character
/// lies in a span).
pub fn check_spans(source: &str, spans: &[Range<usize>], cover: bool, all_chars: bool, what: &str) {
    let mut prev: Option<&Range<usize>> = None;
    let mut covered = 0usize;
    for span in spans {
        assert!(
            span.start < span.end && span.end <= source.len(),
            "{what}: bad span {span:?} of a {}-byte source",
            source.len()
        );
        assert!(
            source.is_char_boundary(span.start) && source.is_char_boundary(span.end),
            "{what}: span {span:?} cuts a character"
        );
        if let Some(p) = prev {
            assert!(
                p.start <= span.start && p.end <= span.end,
                "{what}: spans out of order: {p:?} then {span:?}"
            );
        }
        if cover && span.start > covered {
            let gap = &source[covered..span.start];
            assert!(
                !all_chars && gap.chars().all(is_ws),
                "{what}: text {gap:?} at {covered}..{} is in no chunk",
                span.start
            );
        }
        covered = covered.max(span.end);
        prev = Some(span);
    }
    if cover {
        let tail = &source[covered.min(source.len())..];
        assert!(
            tail.is_empty() || (!all_chars && tail.chars().all(is_ws)),
            "{what}: the text after byte {covered} ({} bytes) is in no chunk",
            tail.len()
        );
    }
}

/// Whether `chunks`, in order, can be placed in `text` so that each is a
/// substring, their starts never decrease, each starts no later than the
/// ones before it end, and together they cover all of `text`. (For chunks
/// whose positions are unknown: texts without whitespace, or their
/// non-whitespace projections.)
pub fn aligns(text: &str, chunks: &[String]) -> bool {
    let t: Vec<char> = text.chars().collect();
    let cs: Vec<Vec<char>> = chunks.iter().map(|c| c.chars().collect()).collect();
    if cs.is_empty() {
        return t.is_empty();
    }
    let mut failed = std::collections::HashSet::new();
    // (chunk index, its start, the furthest end so far)
    let mut stack: Vec<(usize, usize, usize)> = Vec::new();
    let fits = |i: usize, p: usize| t.get(p..p + cs[i].len()) == Some(&cs[i][..]);
    if fits(0, 0) {
        stack.push((0, 0, cs[0].len()));
    }
    while let Some((i, p, end)) = stack.pop() {
        if i + 1 == cs.len() {
            if end == t.len() {
                return true;
            }
            continue;
        }
        if !failed.insert((i, p, end)) {
            continue;
        }
        for q in p..=end {
            if fits(i + 1, q) {
                stack.push((i + 1, q, end.max(q + cs[i + 1].len())));
            }
        }
    }
    false
}

// ----------------------------------------------------------------- detection

/// The sample the heuristics read: the first 5000 characters.
fn sample(text: &str) -> &str {
    text.char_indices()
        .nth(5000)
        .map_or(text, |(i, _)| &text[..i])
}

fn python_re(pattern: &str) -> regex::Regex {
    let class = |ranges: &[(u32, u32)]| {
        let mut out = String::from("[");
        for &(lo, hi) in ranges {
            out.push_str(&format!("\\x{{{lo:X}}}-\\x{{{hi:X}}}"));
        }
        out + "]"
    };
    let expanded = pattern
        .replace("{W}", &class(unicode::WORD_RANGES))
        .replace("{D}", &class(unicode::DECIMAL_RANGES))
        .replace("{S}", &class(unicode::SPACE_RANGES));
    regex::Regex::new(&expanded).expect("oracle pattern compiles")
}

/// Open Notebook's detection patterns, with CPython's classes.
static DETECT_ORACLE: LazyLock<Vec<regex::Regex>> = LazyLock::new(|| {
    [
        "<![Dd][Oo][Cc][Tt][Yy][Pp][Ee]{S}+[Hh][Tt][Mm][Ll]",
        "<[Hh][Tt][Mm][Ll](?:{S}|>)",
        "<[Hh][1-6](?:{S}|>)",
        "</{W}+>",
        "(?m)^#{1,6}{S}+.+",
        r"\[.+?\]\(.+?\)",
        "(?m)^```",
        "`[^`]+`",
        r"(?m)^[\*\-\+]{S}+",
        r"(?m)^{D}+\.{S}+",
        r"\*\*.+?\*\*|__.+?__",
        "(?m)^>{S}+",
    ]
    .iter()
    .map(|p| python_re(p))
    .collect()
});

fn oracle_count(i: usize, text: &str) -> usize {
    DETECT_ORACLE[i].find_iter(text).count()
}

/// Content-type detection: the scanners equal the original patterns on the
/// sample, the heuristics read only the sample, scores are in range, and
/// `detect` applies the extension rules.
pub fn check_detect(text: &str, path: &str) {
    let s = sample(text);
    let html = HtmlSignals {
        doctype: oracle_count(0, s) > 0,
        html_tag: oracle_count(1, s) > 0,
        header_tag: oracle_count(2, s) > 0,
        closing_tag: oracle_count(3, s) > 0,
    };
    let md = MarkdownSignals {
        headers: oracle_count(4, s),
        links: oracle_count(5, s),
        fence: oracle_count(6, s) > 0,
        inline_code: oracle_count(7, s) > 0,
        list_items: oracle_count(8, s) + oracle_count(9, s),
        emphasis: oracle_count(10, s) > 0,
        quote: oracle_count(11, s) > 0,
    };
    assert_eq!(signals::html_signals(s), html, "HTML signals of {s:?}");
    assert_eq!(
        signals::markdown_signals(s),
        md,
        "Markdown signals of {s:?}"
    );

    let (ct, confidence) = detect::detect_from_heuristics(text);
    assert_eq!(
        detect::detect_from_heuristics(s),
        (ct, confidence),
        "the heuristics read past the sample"
    );
    assert!((0.0..=1.0).contains(&confidence), "confidence {confidence}");
    if char_len(s) < 10 {
        assert_eq!((ct, confidence), (ContentType::Plain, 0.5));
    }
    if ct == ContentType::Plain {
        assert!(
            confidence == 0.5 || confidence == 0.6,
            "plain at {confidence}"
        );
    } else {
        assert!(confidence > 0.3, "{ct:?} at {confidence}");
    }

    let ext = detect::detect_from_extension(path);
    assert_eq!(
        detect::detect_from_extension(&path.to_ascii_uppercase()),
        ext,
        "extension case of {path:?}"
    );
    let d = detect::detect(text, Some(path));
    assert_eq!(d.from_extension, ext);
    let expected = match ext {
        None => ct,
        Some(ContentType::Plain) if confidence >= detect::HIGH_CONFIDENCE_THRESHOLD => ct,
        Some(e) => e,
    };
    assert_eq!(d.content_type, expected, "detect({path:?})");
    assert_eq!(detect::detect(text, None).content_type, ct);
}

// ------------------------------------------------------------------ recursive

fn piece_text<'a>(text: &'a str, piece: &'a Piece) -> &'a str {
    match piece {
        Piece::Span(r) => &text[r.clone()],
        Piece::Text(t) => t,
    }
}

/// The recursive splitter's invariants (code-point lengths).
pub fn check_recursive(
    text: &str,
    chunk_size: usize,
    chunk_overlap: usize,
    separators: &[String],
    keep: KeepSeparator,
    strip: bool,
) {
    let Ok(splitter) =
        RecursiveSplitter::new(chunk_size, chunk_overlap, separators.to_vec(), keep, strip)
    else {
        assert!(chunk_size == 0 || chunk_overlap > chunk_size);
        return;
    };
    let pieces = splitter.split(text, &CharLength);
    let seps: Vec<&str> = if separators.is_empty() {
        vec!["\n\n", "\n", " ", ""]
    } else {
        separators.iter().map(String::as_str).collect()
    };
    for piece in &pieces {
        let chunk = piece_text(text, piece);
        assert!(!chunk.is_empty(), "empty chunk");
        let within = char_len(chunk) <= chunk_size;
        let stripped = !strip || unicode::strip(chunk) == chunk;
        if within && stripped {
            continue;
        }
        assert!(
            within || !seps.contains(&""),
            "with the empty separator every unit is one character: {chunk:?}"
        );
        // Over the limit or unstripped: only an indivisible piece, which the
        // splitter returns unchanged.
        let again: Vec<String> = splitter
            .split(chunk, &CharLength)
            .iter()
            .map(|p| piece_text(chunk, p).to_string())
            .collect();
        assert!(
            char_len(chunk) >= chunk_size && again == [chunk],
            "chunk of {} chars (limit {chunk_size}, stripped {stripped}) is not indivisible: \
             {chunk:?} splits into {again:?}",
            char_len(chunk)
        );
    }
    match keep {
        KeepSeparator::Start | KeepSeparator::End => {
            let spans: Vec<Range<usize>> = pieces
                .iter()
                .map(|p| match p {
                    Piece::Span(r) => r.clone(),
                    Piece::Text(t) => panic!("kept separators give slices, got {t:?}"),
                })
                .collect();
            check_spans(text, &spans, true, !strip, "recursive");
        }
        KeepSeparator::Discard => {
            if seps.iter().all(|s| s.chars().all(is_ws)) {
                let chunks: Vec<String> =
                    pieces.iter().map(|p| non_ws(piece_text(text, p))).collect();
                assert!(
                    aligns(&non_ws(text), &chunks),
                    "discarded whitespace separators lost text: {chunks:?}"
                );
            }
        }
    }
}

// ------------------------------------------------------------------- markdown

/// The lines the Markdown splitter reads as headers (outside fences), by the
/// rules of langchain's splitter, written out independently.
fn markdown_without_header_lines(text: &str, markers: &[String]) -> String {
    let mut markers: Vec<&str> = markers.iter().map(String::as_str).collect();
    markers.sort_by_key(|m| std::cmp::Reverse(m.chars().count()));
    let mut fence: Option<&str> = None;
    let mut kept = String::new();
    for raw in text.split('\n') {
        let line: String = unicode::strip(raw)
            .chars()
            .filter(|&c| unicode::is_printable(c))
            .collect();
        match fence {
            None if line.starts_with("```") && line.matches("```").count() == 1 => {
                fence = Some("```")
            }
            None if line.starts_with("~~~") => fence = Some("~~~"),
            Some(f) if line.starts_with(f) => fence = None,
            _ => {}
        }
        let header = fence.is_none()
            && markers.iter().any(|m| {
                line.starts_with(m) && (line.len() == m.len() || line.as_bytes()[m.len()] == b' ')
            });
        if !header {
            kept.push_str(&line);
            kept.push('\n');
        }
    }
    kept
}

/// The Markdown splitter's invariants.
pub fn check_markdown(text: &str, headers: Vec<(String, String)>, each_line: bool, strip: bool) {
    let markers: Vec<String> = headers.iter().map(|(m, _)| m.clone()).collect();
    let Ok(splitter) = MarkdownHeaderSplitter::new(headers, each_line, strip) else {
        assert!(markers.iter().any(String::is_empty));
        return;
    };
    let sections = splitter.split(text);
    let mut rebuilt = String::new();
    let spans = splitter.split_into(text, &mut rebuilt);
    assert_eq!(spans.len(), sections.len());
    for (span, section) in spans.iter().zip(&sections) {
        assert_eq!(
            &rebuilt[span.range.clone()],
            section.content,
            "split_into differs"
        );
        assert!(
            span.paragraph_breaks || !section.content.contains("\n\n"),
            "a paragraph break in a section said to hold none: {:?}",
            section.content
        );
        assert!(
            !span.ascii || section.content.is_ascii(),
            "a section said to be ASCII is not: {:?}",
            section.content
        );
        for (_, value) in &section.metadata {
            assert_eq!(unicode::strip(value), value, "header text not stripped");
        }
    }
    let got = md_visible(&rebuilt);
    let expected = if strip {
        md_visible(&markdown_without_header_lines(text, &markers))
    } else {
        md_visible(text)
    };
    assert_eq!(got, expected, "Markdown sections lost or changed text");
}

// ----------------------------------------------------------------------- html

/// The HTML splitter's invariants.
pub fn check_html(text: &str) {
    let headers = html::open_notebook_headers();
    let aggregated = HtmlHeaderSplitter::new(headers.clone(), false).map(|s| s.split(text));
    let each = HtmlHeaderSplitter::new(headers, true).map(|s| s.split(text));
    let (Ok(aggregated), Ok(each)) = (aggregated, each) else {
        panic!("the Open Notebook headers are valid");
    };
    let (aggregated, each) = match (aggregated, each) {
        (Ok(a), Ok(e)) => (a, e),
        (Err(a), Err(e)) => {
            assert_eq!(a, e, "the two modes fail differently");
            match a {
                Error::MarkupRejected(_) => assert!(text.contains("<!["), "rejected {text:?}"),
                Error::UnsupportedText(_) => assert!(text.contains("&#")),
                Error::InvalidArgument(m) => panic!("invalid argument: {m}"),
            }
            return;
        }
        (a, e) => panic!("one mode failed: {a:?} / {e:?}"),
    };
    for section in aggregated.iter().chain(&each) {
        let c = &section.content;
        assert!(!c.is_empty() && unicode::strip(c) == c, "section {c:?}");
        for (_, value) in &section.metadata {
            assert!(!value.is_empty() && unicode::strip(value) == value);
        }
    }
    let sorted = |sections: &[chunking::Section]| {
        let mut v: Vec<char> = sections
            .iter()
            .flat_map(|s| non_ws(&s.content).chars().collect::<Vec<_>>())
            .collect();
        v.sort_unstable();
        v
    };
    assert_eq!(
        sorted(&aggregated),
        sorted(&each),
        "aggregated and per-element sections hold different text"
    );
    if !text.contains('<') && !text.contains('&') {
        let expected: Vec<&str> = Some(unicode::strip(text))
            .filter(|s| !s.is_empty())
            .into_iter()
            .collect();
        let got: Vec<&str> = aggregated.iter().map(|s| s.content.as_str()).collect();
        assert_eq!(got, expected, "text without markup");
    }
    if !text.contains('&') {
        // Nothing invented: each character of the output is in the input at
        // least as often (joiners aside).
        let mut budget = std::collections::HashMap::new();
        for c in text.chars() {
            *budget.entry(c).or_insert(0i64) += 1;
        }
        for c in aggregated.iter().flat_map(|s| s.content.chars()) {
            if c == ' ' || c == '\n' {
                continue;
            }
            let n = budget.entry(c).or_insert(0);
            *n -= 1;
            assert!(*n >= 0, "{c:?} appears more often than in the input");
        }
    }
}

// ------------------------------------------------------------------ chunk_text

/// `chunk_text`'s invariants for one unit. `single_unit_may_exceed`: whether
/// a one-character chunk may exceed the size (tokens: one character can be
/// several tokens).
pub fn check_chunk_text<L: LengthFunction>(
    text: &str,
    content_type: Option<ContentType>,
    path: Option<&str>,
    sizes: ChunkSizes,
    length: &L,
    single_unit_may_exceed: bool,
) {
    let result = chunking::chunk_text(text, content_type, path, sizes, length);
    let chosen = content_type.unwrap_or_else(|| detect::detect(text, path).content_type);
    let out = match result {
        Ok(out) => out,
        Err(Error::MarkupRejected(_) | Error::UnsupportedText(_))
            if chosen == ContentType::Html =>
        {
            return;
        }
        Err(e) => panic!("chunk_text failed: {e:?}"),
    };
    let texts: Vec<&str> = out.chunks.iter().map(|c| out.text(text, c)).collect();
    if unicode::is_blank(text) {
        assert!(out.chunks.is_empty(), "blank text gave chunks");
        return;
    }
    // The input's length when it fits one chunk, else some number above.
    let full = length.length(text);
    if out.input_length <= sizes.chunk_size {
        assert_eq!(out.input_length, full, "input length");
    } else {
        assert!(
            full > sizes.chunk_size,
            "input of length {full} reported over the size"
        );
    }
    if out.input_length <= sizes.chunk_size {
        assert_eq!(texts, [text], "text within the size comes back whole");
        assert_eq!(out.content_type, None);
        return;
    }
    assert_eq!(out.content_type, Some(chosen), "content type");
    for (t, chunk) in texts.iter().zip(&out.chunks) {
        assert!(
            !t.is_empty() && unicode::strip(t) == *t,
            "chunk {t:?} not stripped"
        );
        assert!(!chunk.ascii || t.is_ascii(), "chunk {t:?} said to be ASCII");
        let n = length.length(t);
        let source = match chunk.source {
            Source::Input => text,
            Source::Rebuilt => out.rebuilt.as_str(),
        };
        assert!(
            n <= sizes.chunk_size
                || (single_unit_may_exceed
                    && (t.chars().count() == 1
                        || fits_as_pieces(source, chunk.range.clone(), sizes.chunk_size, length))),
            "chunk of length {n} over {}: {t:?}",
            sizes.chunk_size
        );
    }
    if let Some(min) = sizes.min_chunk_size {
        // The same chunks as without a minimum, less those below it when
        // one at least reaches it.
        let all = ChunkSizes {
            min_chunk_size: None,
            ..sizes
        };
        let Ok(full) = chunking::chunk_text(text, content_type, path, all, length) else {
            panic!("chunk_text failed without min_chunk_size only");
        };
        let full: Vec<&str> = full.chunks.iter().map(|c| full.text(text, c)).collect();
        let kept: Vec<&str> = full
            .iter()
            .copied()
            .filter(|t| length.length(t) >= min)
            .collect();
        let expected = if full.len() > 1 && min > 0 && !kept.is_empty() {
            kept
        } else {
            full
        };
        assert_eq!(texts, expected, "min_chunk_size {min}");
        return;
    }
    let spans: Vec<Range<usize>> = out.chunks.iter().map(|c| c.range.clone()).collect();
    let sources = |s: Source| out.chunks.iter().all(|c| c.source == s);
    match chosen {
        ContentType::Plain => {
            assert!(
                sources(Source::Input),
                "plain chunks are slices of the input"
            );
            check_spans(text, &spans, true, false, "plain chunks");
        }
        ContentType::Markdown => {
            assert!(sources(Source::Rebuilt));
            let md = MarkdownHeaderSplitter::new(markdown::open_notebook_headers(), false, false)
                .expect("valid headers");
            let mut rebuilt = String::new();
            let sections: Vec<_> = md
                .split_into(text, &mut rebuilt)
                .into_iter()
                .map(|s| s.range)
                .collect();
            assert_eq!(out.rebuilt, rebuilt, "Markdown sections");
            check_sections(&rebuilt, &sections, &spans, "Markdown chunks");
            assert_eq!(md_visible(&rebuilt), md_visible(text), "Markdown text lost");
        }
        ContentType::Html => {
            assert!(sources(Source::Rebuilt));
            let sections = HtmlHeaderSplitter::new(html::open_notebook_headers(), false)
                .and_then(|s| s.split(text))
                .expect("chunk_text accepted it");
            let mut rebuilt = String::new();
            let mut ranges = Vec::new();
            for s in &sections {
                let start = rebuilt.len();
                rebuilt.push_str(&s.content);
                ranges.push(start..rebuilt.len());
            }
            assert_eq!(out.rebuilt, rebuilt, "HTML sections");
            check_sections(&rebuilt, &ranges, &spans, "HTML chunks");
        }
    }
}

/// Whether the chunk at `range` of `source` can be cut into pieces (of at
/// most 200 characters) whose lengths add up to at most `size`, the pieces
/// free to take in whitespace around the chunk: the measure of langchain's
/// merge, which sums the lengths of a chunk's pieces before the chunk is
/// stripped. In tokens the stripped chunk, counted whole, may exceed it:
/// fuzzing found " programs" + " from" + ... = 50 tokens at size 50, whose
/// stripped text counts 51, "programs" being two tokens where " programs"
/// is one (the original does the same).
pub fn fits_as_pieces<L: LengthFunction>(
    source: &str,
    range: Range<usize>,
    size: usize,
    length: &L,
) -> bool {
    let before = &source[..range.start];
    let start = range.start - (before.len() - unicode::strip_end(before).len());
    let after = &source[range.end..];
    let end = range.end + (after.len() - unicode::strip_start(after).len());
    let text = &source[start..end];
    let (lead, trail) = (range.start - start, end - range.end);
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .collect();
    // best[j]: the least sum for the text up to bounds[j], starting anywhere
    // in the leading whitespace.
    let mut best: Vec<usize> = bounds
        .iter()
        .map(|&b| if b <= lead { 0 } else { usize::MAX })
        .collect();
    for j in 1..bounds.len() {
        for i in j.saturating_sub(200)..j {
            if best[i] != usize::MAX {
                let sum = best[i] + length.length(&text[bounds[i]..bounds[j]]);
                best[j] = best[j].min(sum);
            }
        }
    }
    bounds
        .iter()
        .zip(&best)
        .any(|(&b, &sum)| b >= text.len() - trail && sum <= size)
}

/// Chunks of rebuilt sections: each within one section, in order, and
/// together covering each section's non-whitespace.
fn check_sections(rebuilt: &str, sections: &[Range<usize>], spans: &[Range<usize>], what: &str) {
    let mut rest = spans;
    for section in sections {
        let n = rest
            .iter()
            .take_while(|s| s.start >= section.start && s.end <= section.end)
            .count();
        let (mine, others) = rest.split_at(n);
        let local: Vec<Range<usize>> = mine
            .iter()
            .map(|s| s.start - section.start..s.end - section.start)
            .collect();
        check_spans(&rebuilt[section.clone()], &local, true, false, what);
        rest = others;
    }
    assert!(
        rest.is_empty(),
        "{what}: a chunk crosses sections: {:?}",
        rest.first()
    );
}

// --------------------------------------------------------------------- tokens

fn tiktoken_rs(enc: Encoding) -> &'static tiktoken_rs::CoreBPE {
    match enc {
        Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
    }
}

const CL100K_PAT: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

fn pretokenizer(enc: Encoding) -> &'static fancy_regex::Regex {
    static O: LazyLock<fancy_regex::Regex> = LazyLock::new(|| {
        fancy_regex::Regex::new(tiktoken_rs::O200K_BASE_PAT_STR).expect("pattern")
    });
    static C: LazyLock<fancy_regex::Regex> =
        LazyLock::new(|| fancy_regex::Regex::new(CL100K_PAT).expect("pattern"));
    match enc {
        Encoding::O200kBase => &O,
        Encoding::Cl100kBase => &C,
    }
}

/// Token counting in one encoding: pieces and ids as tiktoken's, the count
/// equal to the number of ids, and the ids decoding back to the text.
pub fn check_tokens(text: &str, enc: Encoding) {
    let tokenizer = enc.tokenizer();
    let mut pieces: Vec<&str> = Vec::new();
    let mut at = 0;
    tokenizer.for_each_piece(text, |p| {
        let piece = text
            .get(at..at + p.len())
            .expect("pieces on char boundaries");
        assert_eq!(piece.as_bytes(), p, "pieces are consecutive slices");
        at += p.len();
        pieces.push(piece);
    });
    assert_eq!(at, text.len(), "pieces cover the text");
    let expected: Vec<&str> = pretokenizer(enc)
        .find_iter(text)
        .map(|m| m.expect("regex ran").as_str())
        .collect();
    assert_eq!(pieces, expected, "{} pieces of {text:?}", enc.name());
    let ids = tokenizer.encode(text);
    // tiktoken's merge is quadratic in a piece's length: compared where the
    // pieces are short (long ones are compared by the core's own tests).
    if pieces.iter().all(|p| p.len() <= 512) {
        assert_eq!(
            ids,
            tiktoken_rs(enc).encode_ordinary(text),
            "{} ids",
            enc.name()
        );
    }
    let n = tokenizer.count(text);
    assert_eq!(n, ids.len(), "count == len(encode)");
    // Counting up to a limit: exact within it, above it otherwise.
    let length = token_length(enc);
    for limit in [0, 1, n / 2, n.saturating_sub(1), n, n + 1] {
        for got in [
            tokenizer.count_up_to(text, limit),
            length.length_up_to(text, limit),
        ] {
            assert!(
                if n <= limit { got == n } else { got > limit },
                "count_up_to({limit}) = {got} for {n} tokens"
            );
        }
    }
    assert_eq!(
        tokenizer.decode_bytes(&ids),
        text.as_bytes(),
        "decode(encode(text))"
    );
}

// -------------------------------------------------------------------- pooling

fn unit_or_zero(v: &[f64], tolerance: f64) {
    assert!(v.iter().all(|x| x.is_finite()), "non-finite result {v:?}");
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    assert!(
        (norm - 1.0).abs() <= tolerance || v.iter().all(|&x| x == 0.0),
        "norm {norm} of {v:?}"
    );
}

/// Mean pooling of `data` as rows of `dim`: errors exactly for no rows, dimension 0
/// or non-finite values; otherwise a unit vector (zeros when the rows
/// cancel), the same when each row is scaled by a power of two `2^scales[i]`
/// (compared where no product leaves the range where squaring is exact).
pub fn check_mean_pool<T: pooling::Element + PartialEq + std::fmt::Debug>(
    data: &[T],
    dim: usize,
    scales: &[i8],
) {
    let result = pooling::mean_pool(data, dim);
    if dim == 0 {
        assert!(result.is_err(), "dimension 0 accepted");
        return;
    }
    let rows = data.len() / dim;
    let used = &data[..rows * dim];
    let finite = used.iter().all(|x| x.to_f64().is_finite());
    let v = match result {
        Ok(v) => v,
        Err(e) => {
            assert!(rows == 0 || !finite, "finite rows refused: {e:?}");
            return;
        }
    };
    assert!(rows > 0 && finite, "accepted no rows or non-finite values");
    assert_eq!(v.len(), dim);
    unit_or_zero(&v, 1e-9);
    let mut scaled = used.to_vec();
    for (i, row) in scaled.chunks_exact_mut(dim).enumerate() {
        let k = i32::from(scales.get(i).copied().unwrap_or(0) % 16);
        for x in row {
            *x = T::from_f64(x.to_f64() * 2f64.powi(k));
        }
    }
    let exact = |xs: &[T]| {
        xs.iter().all(|x| {
            let a = x.to_f64().abs();
            a == 0.0 || (1e-30..=1e30).contains(&a)
        })
    };
    // Scaling back must give the original (no rounding in the product).
    let restored = scaled.chunks_exact(dim).enumerate().all(|(i, row)| {
        let k = i32::from(scales.get(i).copied().unwrap_or(0) % 16);
        row.iter()
            .zip(&used[i * dim..(i + 1) * dim])
            .all(|(s, o)| T::from_f64(s.to_f64() * 2f64.powi(-k)) == *o)
    });
    if exact(used) && exact(&scaled) && restored {
        let w = pooling::mean_pool(&scaled, dim).expect("scaled rows pool");
        assert_eq!(v, w, "pooling changed when rows were scaled");
    }
}

/// Masked token pooling: finite, norm at most 1 (1 unless the masked mean is
/// below 1e-12), errors only for a shape mismatch or non-finite sums.
pub fn check_token_pool(hidden: &[f32], mask: &[i64], dim: usize) {
    let mut out = vec![0.0f32; dim];
    let result = pooling::token_mean_pool(hidden, mask, &mut out);
    if hidden.len() != mask.len() * dim {
        assert!(result.is_err(), "shape mismatch accepted");
        return;
    }
    let small = hidden.iter().all(|x| x.is_finite() && x.abs() < 1e30)
        && mask.iter().all(|m| m.unsigned_abs() < 1 << 20);
    match result {
        Ok(()) => {
            assert!(out.iter().all(|x| x.is_finite()));
            let norm = out
                .iter()
                .map(|&x| f64::from(x).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(norm <= 1.0 + 1e-5, "norm {norm}");
        }
        Err(e) => assert!(!small, "refused: {e:?}"),
    }
}

/// Segment offsets are valid exactly when they start at 0, end at the row
/// count and strictly increase.
pub fn check_offsets(offsets: &[i64], rows: usize) {
    let valid = offsets.first() == Some(&0)
        && offsets
            .last()
            .is_some_and(|&l| l >= 0 && l as usize == rows)
        && offsets.windows(2).all(|w| w[0] < w[1]);
    assert_eq!(
        pooling::check_offsets(offsets, rows).is_ok(),
        valid,
        "{offsets:?} / {rows}"
    );
}

// ------------------------------------------------------------------- cleaning

static THINK: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"(?s)<think>(.*?)</think>").expect("pattern"));
static THINK_NO_OPEN: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"(?s)\A(.*?)</think>").expect("pattern"));
static BLANK_LINES: LazyLock<regex::Regex> = LazyLock::new(|| python_re(r"\n{S}*\n{S}*\n"));

/// The original `parse_thinking_content` with `re` (None: returned as is).
fn parse_thinking_oracle(content: &str) -> Option<(String, String)> {
    if char_len(content) > cleaning::MAX_THINKING_INPUT_CHARS {
        return None;
    }
    let found: Vec<&str> = THINK
        .captures_iter(content)
        .filter_map(|c| c.get(1).map(|m| m.as_str()))
        .collect();
    if found.is_empty() {
        let m = THINK_NO_OPEN.captures(content)?;
        let whole = m.get(0)?;
        let inner = m.get(1)?;
        return Some((
            unicode::strip(inner.as_str()).to_string(),
            unicode::strip(&content[whole.end()..]).to_string(),
        ));
    }
    let thinking: Vec<&str> = found.iter().map(|t| unicode::strip(t)).collect();
    let removed = THINK.replace_all(content, "");
    let cleaned = BLANK_LINES.replace_all(&removed, "\n\n");
    Some((thinking.join("\n\n"), unicode::strip(&cleaned).to_string()))
}

/// The cleaners against the original regular expressions and their rules.
pub fn check_cleaning(text: &str) {
    let ascii = cleaning::remove_non_ascii(text);
    assert_eq!(
        ascii,
        text.chars().filter(char::is_ascii).collect::<String>()
    );
    let printable = cleaning::remove_non_printable(text);
    for c in printable.chars() {
        let allowed = matches!(c, '.' | ',' | '!' | '?' | '-') || unicode::is_word(c) || is_ws(c);
        assert!(
            allowed && (!unicode::is_other(c) || c == '\n' || c == '\t'),
            "{c:?} left by remove_non_printable"
        );
    }
    assert_eq!(
        parse_thinking(text),
        parse_thinking_oracle(text),
        "parse_thinking"
    );
}

/// `cleaning::parse_thinking` on the code units of `text` in every PEP 393
/// representation it fits in (which must agree), as strings.
fn parse_thinking(text: &str) -> Option<(String, String)> {
    fn strings<T: text::CodeUnit>(units: &[T]) -> Option<(String, String)> {
        let string = |pieces: &[&[T]]| {
            pieces
                .concat()
                .into_iter()
                .map(|u| char::from_u32(u.code_point()).expect("a character of the input"))
                .collect::<String>()
        };
        cleaning::parse_thinking(units).map(|t| (string(&t.thinking), string(&t.cleaned)))
    }
    let ucs4: Vec<u32> = text.chars().map(u32::from).collect();
    let parsed = strings(&ucs4);
    if ucs4.iter().all(|&u| u < 0x1_0000) {
        let ucs2: Vec<u16> = ucs4.iter().map(|&u| u as u16).collect();
        assert_eq!(strings(&ucs2), parsed, "parse_thinking on UCS-2");
    }
    if ucs4.iter().all(|&u| u < 0x100) {
        let latin1: Vec<u8> = ucs4.iter().map(|&u| u as u8).collect();
        assert_eq!(strings(&latin1), parsed, "parse_thinking on Latin-1");
    }
    parsed
}

// ---------------------------------------------------------------- transcoding

/// PEP 393 transcoding: valid UTF-8 with one character per code unit;
/// surrogates mapped one for one and restored, or dropped; other code points
/// past U+10FFFF refused. `utf16_repaired` equals UTF-16 decoding with
/// replacement.
pub fn check_transcode(units: &[u32]) {
    let ucs2: Vec<u16> = units.iter().map(|&u| u as u16).collect();
    let latin1: Vec<u8> = units.iter().map(|&u| u as u8).collect();
    let (l, map) = text::transcode(text::CodeUnits::Latin1(&latin1), text::Surrogates::Map)
        .expect("Latin-1 always transcodes");
    assert!(map.is_none());
    assert_eq!(
        l.chars().map(u32::from).collect::<Vec<_>>(),
        latin1.iter().map(|&b| u32::from(b)).collect::<Vec<_>>()
    );
    for cps in [
        ucs2.iter().map(|&u| u32::from(u)).collect::<Vec<u32>>(),
        units.to_vec(),
    ] {
        let code = |v: &[u32]| -> Result<(String, Option<text::SurrogateMap>), Error> {
            if cps.iter().all(|&c| c <= 0xFFFF) {
                let u: Vec<u16> = v.iter().map(|&c| c as u16).collect();
                text::transcode(text::CodeUnits::Ucs2(&u), text::Surrogates::Map)
            } else {
                text::transcode(text::CodeUnits::Ucs4(v), text::Surrogates::Map)
            }
        };
        let beyond = cps.iter().any(|&c| c > 0x10FFFF);
        let surrogate = |c: u32| (0xD800..0xE000).contains(&c);
        match code(&cps) {
            Err(e) => {
                // Past U+10FFFF, or surrogates with no free private-use
                // window (each of the 64 windows of planes 15-16 in use).
                let windows: std::collections::HashSet<u32> = cps
                    .iter()
                    .filter(|&&c| (0xF0000..0x110000).contains(&c))
                    .map(|&c| (c - 0xF0000) / 0x800)
                    .collect();
                let no_window = windows.len() == 64 && cps.iter().any(|&c| surrogate(c));
                assert!(beyond || no_window, "refused {cps:?}: {e:?}");
            }
            Ok((s, map)) => {
                assert!(!beyond, "accepted a code point past U+10FFFF");
                assert!(std::str::from_utf8(s.as_bytes()).is_ok());
                assert_eq!(char_len(&s), cps.len(), "one character per code unit");
                match map {
                    Some(m) => {
                        assert_eq!(m.restore(&s), cps, "surrogates restored");
                        let mut utf16 = Vec::new();
                        for &c in &cps {
                            match char::from_u32(c) {
                                Some(ch) => {
                                    let mut buf = [0u16; 2];
                                    utf16.extend_from_slice(ch.encode_utf16(&mut buf));
                                }
                                None => utf16.push(c as u16),
                            }
                        }
                        let repaired: String = char::decode_utf16(utf16)
                            .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
                            .collect();
                        assert_eq!(m.utf16_repaired(&s), repaired, "utf16_repaired");
                        assert_eq!(m.touches(&s), cps.iter().any(|&c| surrogate(c)));
                    }
                    None => {
                        assert!(
                            !cps.iter().any(|&c| surrogate(c)),
                            "surrogates without a map"
                        );
                        assert_eq!(s.chars().map(u32::from).collect::<Vec<_>>(), cps);
                    }
                }
            }
        }
        if !beyond {
            let dropped = if cps.iter().all(|&c| c <= 0xFFFF) {
                let u: Vec<u16> = cps.iter().map(|&c| c as u16).collect();
                text::transcode(text::CodeUnits::Ucs2(&u), text::Surrogates::Drop)
            } else {
                text::transcode(text::CodeUnits::Ucs4(&cps), text::Surrogates::Drop)
            };
            let (s, map) = dropped.expect("dropping surrogates always works");
            assert!(map.is_none());
            let expected: Vec<u32> = cps.iter().copied().filter(|&c| !surrogate(c)).collect();
            assert_eq!(s.chars().map(u32::from).collect::<Vec<_>>(), expected);
        }
    }
}

/// A `LengthFunction` in tokens for texts without surrogates.
pub fn token_length(enc: Encoding) -> fnb::tokens::TokenLength {
    fnb::tokens::TokenLength::new(enc.tokenizer(), None)
}

/// `ChunkSizes` from raw numbers, always valid (size >= 1, overlap <= size).
pub fn sizes(size: usize, overlap: usize, min: Option<usize>) -> ChunkSizes {
    let chunk_size = size.max(1);
    ChunkSizes {
        chunk_size,
        chunk_overlap: overlap % (chunk_size + 1),
        min_chunk_size: min,
    }
}

/// The content types, by a number.
pub fn content_type(n: u8) -> Option<ContentType> {
    match n % 4 {
        0 => None,
        1 => Some(ContentType::Plain),
        2 => Some(ContentType::Markdown),
        _ => Some(ContentType::Html),
    }
}

/// The keep-separator modes, by a number.
pub fn keep(n: u8) -> KeepSeparator {
    match n % 3 {
        0 => KeepSeparator::Start,
        1 => KeepSeparator::End,
        _ => KeepSeparator::Discard,
    }
}

// -------------------------------------------------------------- fuzz inputs
//
// How each fuzz target reads its bytes, here so that the regression inputs
// kept under `tests/regressions/<target>/` replay through the same code in
// `cargo test` (`rust/proptests.rs`).

/// A fuzz input: `N` parameter bytes, then the text. The seed corpus is the
/// test documents behind `N` bytes of parameters (`fuzz/seeds.py`).
pub struct Input<'a> {
    params: &'a [u8],
    pub text: std::borrow::Cow<'a, str>,
}

impl<'a> Input<'a> {
    /// Splits off `n` parameter bytes (missing ones read as 0); the rest is
    /// the text, invalid UTF-8 replaced by U+FFFD.
    pub fn new(data: &'a [u8], n: usize) -> Self {
        let (params, text) = data.split_at(n.min(data.len()));
        Input {
            params,
            text: String::from_utf8_lossy(text),
        }
    }

    pub fn byte(&self, i: usize) -> u8 {
        self.params.get(i).copied().unwrap_or(0)
    }

    pub fn u16(&self, i: usize) -> u16 {
        u16::from_le_bytes([self.byte(i), self.byte(i + 1)])
    }
}

/// Separators the recursive target picks from: Open Notebook's, langchain's,
/// non-whitespace ones, ones that overlap themselves, multi-byte ones.
pub const SEPARATORS: [&str; 12] = [
    "\n\n", "\n", ". ", ", ", " ", "", "a", "aa", "ab", "\u{3000}", "é", "<",
];

/// Header sets the Markdown target picks from.
pub fn markdown_headers(n: u8) -> Vec<(String, String)> {
    let sets: [&[(&str, &str)]; 4] = [
        &[("#", "Header 1"), ("##", "Header 2"), ("###", "Header 3")],
        &[("##", "A"), ("#", "A"), ("####", "B")],
        &[("=", "Eq"), ("ab", "AB"), ("#", "H")],
        &[("#", "H1"), ("", "empty")],
    ];
    sets[(n % 4) as usize]
        .iter()
        .map(|&(m, name)| (m.to_string(), name.to_string()))
        .collect()
}

/// Paths the chunking targets pick from.
pub fn path(n: u8) -> Option<&'static str> {
    [
        None,
        Some("a.md"),
        Some("a.html"),
        Some("a.txt"),
        Some("noext"),
    ][(n % 5) as usize]
}

/// Runs the named fuzz target's checks on one input.
pub fn fuzz_one(target: &str, data: &[u8]) {
    match target {
        "detect" => {
            let n = usize::from(data.first().copied().unwrap_or(0) % 32);
            let rest = Input::new(data.get(1..).unwrap_or(&[]), 0);
            let (path, text) = rest.text.split_at(rest.text.floor_char_boundary(n));
            check_detect(text, path);
        }
        "recursive" => {
            let input = Input::new(data, 8);
            let flags = input.byte(4);
            let count = usize::from(input.byte(5) % 7);
            let picks = input.u16(6);
            let separators: Vec<String> = (0..count)
                .map(|i| {
                    let pick = usize::from((picks >> (2 * i)) & 0xF);
                    SEPARATORS[pick % SEPARATORS.len()].to_string()
                })
                .collect();
            check_recursive(
                &input.text,
                usize::from(input.u16(0) % 400),
                usize::from(input.u16(2) % 400),
                &separators,
                keep(flags),
                flags & 0x80 == 0,
            );
        }
        "markdown" => {
            let input = Input::new(data, 1);
            let flags = input.byte(0);
            check_markdown(
                &input.text,
                markdown_headers(flags >> 2),
                flags & 1 == 1,
                flags & 2 == 2,
            );
        }
        "html" => check_html(&Input::new(data, 0).text),
        "chunk_chars" | "chunk_tokens" => {
            let input = Input::new(data, 6);
            let flags = input.byte(0);
            let min = input.byte(5);
            let tokens = target == "chunk_tokens";
            let limit = if tokens { 300 } else { 600 };
            let sizes = sizes(
                usize::from(input.u16(1) % limit),
                usize::from(input.u16(3) % limit),
                (min & 0x80 != 0).then_some(usize::from(min & 0x3F)),
            );
            let ct = content_type(flags);
            let path = path((flags >> 2) & 0x1F);
            if tokens {
                let encoding = if flags & 0x80 == 0 {
                    Encoding::O200kBase
                } else {
                    Encoding::Cl100kBase
                };
                check_chunk_text(&input.text, ct, path, sizes, &token_length(encoding), true);
            } else {
                check_chunk_text(&input.text, ct, path, sizes, &CharLength, false);
            }
        }
        "tokens" => {
            let input = Input::new(data, 0);
            for encoding in Encoding::ALL {
                check_tokens(&input.text, encoding);
            }
        }
        "pooling" => fuzz_pooling(data),
        "cleaning" => check_cleaning(&Input::new(data, 0).text),
        "notes" => check_note_graph(&Input::new(data, 0).text),
        "transcode" => {
            let units: Vec<u32> = data
                .chunks_exact(3)
                .map(|c| {
                    let flip = if c[2] & 0x80 != 0 { 0xD800 } else { 0 };
                    u32::from_le_bytes([c[0], c[1], c[2] & 0x1F, 0]) ^ flip
                })
                .collect();
            check_transcode(&units);
        }
        other => panic!("no fuzz target {other:?}"),
    }
}

/// The fuzz targets, by name.
pub const TARGETS: [&str; 11] = [
    "detect",
    "recursive",
    "markdown",
    "html",
    "chunk_chars",
    "chunk_tokens",
    "tokens",
    "pooling",
    "cleaning",
    "transcode",
    "notes",
];

/// The vault graph rules of one note body (`notes::edges`): targets are
/// handles of distinct target texts; odd handles do not resolve.
pub fn check_note_graph(text: &str) {
    use fnb::notes::edges::{self, EdgeKind, Node, Scope, Status};
    use fnb::notes::{plan, scan};
    use std::collections::{HashMap, HashSet};

    let st = scan::structure(text);
    let raw = scan::links(&st, &["Possible connections".to_string()]);
    let links: Vec<edges::NoteLink<'_>> = raw
        .iter()
        .filter_map(|r| edges::note_link(&edges::found(text, r)))
        .collect();
    let mut handles: HashMap<String, usize> = HashMap::new();
    let mut targets = Vec::new();
    for l in &links {
        assert!(
            l.start < l.end && l.end <= text.len(),
            "link outside the body: {l:?}"
        );
        assert!(
            !l.target.is_empty() && !edges::is_attachment(&l.target),
            "{l:?}"
        );
        let n = handles.len();
        targets.push(*handles.entry(l.target.to_string()).or_insert(n));
    }
    let limits = plan::Limits {
        target_min: 8,
        target_max: 16,
        hard_max: 32,
        min: 4,
    };
    let planned = plan::plan_text(text, limits, 4, Encoding::O200kBase.tokenizer());
    let spans: Vec<(usize, usize)> = planned.iter().map(|p| (p.start, p.end)).collect();
    let starts: Vec<usize> = links.iter().map(|l| l.start).collect();
    let flags: Vec<bool> = links.iter().map(|l| l.in_suggestions).collect();
    let mut asked_links = Vec::new();
    let chunk_links = edges::chunk_links(&spans, &starts, &flags, |i| {
        asked_links.push(i);
        Ok::<_, std::convert::Infallible>(targets[i])
    })
    .unwrap_or_else(|e| match e {});
    assert_eq!(
        asked_links,
        (0..links.len()).collect::<Vec<_>>(),
        "every link once, in order"
    );
    let mut references: Vec<Vec<usize>> = Vec::new();
    for (c, (start, end)) in chunk_links.iter().zip(&spans) {
        let distinct: HashSet<usize> = c.wikilinks.iter().copied().collect();
        assert_eq!(distinct.len(), c.wikilinks.len(), "wikilinks repeat");
        for &(i, t) in &c.references {
            assert!(*start <= links[i].start && links[i].start < *end);
            assert!(!links[i].in_suggestions && t == targets[i] && distinct.contains(&t));
        }
        references.push(c.references.iter().map(|&(_, t)| t).collect());
    }
    let outside = links.iter().filter(|l| !l.in_suggestions).count();
    assert_eq!(references.iter().map(Vec::len).sum::<usize>(), outside);
    let mut asked = Vec::new();
    let graph = edges::note_edges(
        &references,
        |t| {
            asked.push(t);
            Ok::<_, std::convert::Infallible>((t % 2 == 0).then_some(t))
        },
        true,
    )
    .unwrap_or_else(|e| match e {});
    let distinct: HashSet<usize> = references.iter().flatten().copied().collect();
    assert_eq!(asked.len(), distinct.len(), "one resolve per raw target");
    let n = spans.len();
    let count = |kind: EdgeKind, scope: Scope| {
        graph
            .iter()
            .filter(|e| e.kind == kind && e.scope == scope)
            .count()
    };
    assert_eq!(count(EdgeKind::BelongsTo, Scope::Chunk), n);
    assert_eq!(count(EdgeKind::Prev, Scope::Chunk), n.saturating_sub(1));
    assert_eq!(count(EdgeKind::Next, Scope::Chunk), n.saturating_sub(1));
    assert_eq!(count(EdgeKind::References, Scope::Chunk), outside);
    assert_eq!(count(EdgeKind::References, Scope::Note), distinct.len());
    let resolved = distinct.iter().filter(|&&t| t % 2 == 0).count();
    assert_eq!(count(EdgeKind::Backlink, Scope::Note), resolved);
    for e in &graph {
        match (e.kind, e.source, e.target) {
            (EdgeKind::Prev, Node::Chunk(a), Node::Chunk(b)) => assert_eq!(a, b + 1),
            (EdgeKind::Next, Node::Chunk(a), Node::Chunk(b)) => assert_eq!(a + 1, b),
            (EdgeKind::References, _, Node::Target(t)) => {
                assert_eq!(e.status == Status::Ok, t % 2 == 0, "{e:?}");
            }
            (EdgeKind::Backlink, Node::Target(t), Node::Note) => assert_eq!(t % 2, 0),
            (EdgeKind::BelongsTo, Node::Chunk(_), Node::Note) => {}
            _ => panic!("unexpected edge {e:?}"),
        }
    }
}

/// Pooling on the bytes: a dimension, a kind, eight scales, then floats.
fn fuzz_pooling(data: &[u8]) {
    let dim = usize::from(data.first().copied().unwrap_or(0) % 17);
    let kind = data.get(1).copied().unwrap_or(0);
    let scales: Vec<i8> = data.iter().skip(2).take(8).map(|&b| b as i8).collect();
    let body = data.get(10..).unwrap_or(&[]);
    let f32s: Vec<f32> = body
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    match kind % 4 {
        0 => check_mean_pool(&f32s, dim, &scales),
        1 => {
            let f64s: Vec<f64> = body
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                .collect();
            check_mean_pool(&f64s, dim, &scales);
        }
        2 => {
            let tokens = if dim == 0 { 0 } else { f32s.len() / (dim + 1) };
            let mask: Vec<i64> = scales
                .iter()
                .cycle()
                .take(tokens)
                .map(|&s| i64::from(s % 3))
                .collect();
            check_token_pool(&f32s[..tokens * dim], &mask, dim);
            check_token_pool(&f32s, &mask, dim);
        }
        _ => {
            let offsets: Vec<i64> = scales.iter().map(|&s| i64::from(s)).collect();
            check_offsets(&offsets, dim);
        }
    }
}
