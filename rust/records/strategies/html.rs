//! Header-aware HTML (`h1` to `h6`), on the HTML's text.
//!
//! The document is read as langchain's `HTMLHeaderTextSplitter` with the
//! six heading tags reads it ([`crate::chunking::html`], which parses as
//! BeautifulSoup with `html.parser`): a list of sections, each with the
//! headings in force. The *HTML text* is the sections' texts joined with a
//! blank line ([`document`]); the chunks are slices of it (not of the
//! markup): `text == html_text[start:end]`.
//!
//! Consecutive sections under the same headings (a heading and the text
//! below it) form a unit; units are packed while they fit in `chunk_size`,
//! a unit longer than that is split by LangChain's default separators (its
//! heading kept with the first piece, [`split_unit`]). A chunk's `headings`
//! are those of its first unit, outermost first.

use std::ops::Range;

use crate::chunking::html::HtmlHeaderSplitter;
use crate::chunking::recursive::LengthFunction;
use crate::error::Result;
use crate::records::{Heading, Options, Raw, Split, split_to_max};

/// What the HTML's chunks are slices of.
pub const SECTION_SEPARATOR: &str = "\n\n";

/// Sections under the same headings: their range in the HTML text, and the
/// headings.
pub type Unit = (Range<usize>, Vec<Heading>);

/// The HTML text, and its units.
pub fn document(html: &str) -> Result<(String, Vec<Unit>)> {
    let headers: Vec<(String, String)> = (1..=6)
        .map(|l| (format!("h{l}"), format!("h{l}")))
        .collect();
    let sections = HtmlHeaderSplitter::new(headers, false)?.split(html)?;
    let mut text = String::with_capacity(html.len() / 2);
    let mut units: Vec<Unit> = Vec::new();
    let mut last_meta: Option<Vec<(String, String)>> = None;
    for s in sections {
        if !text.is_empty() {
            text.push_str(SECTION_SEPARATOR);
        }
        let start = text.len();
        text.push_str(&s.content);
        let end = text.len();
        match units.last_mut() {
            Some(u) if last_meta.as_ref() == Some(&s.metadata) => u.0.end = end,
            _ => {
                let mut headings: Vec<Heading> = s
                    .metadata
                    .iter()
                    .map(|(name, value)| Heading {
                        level: name[1..].parse().unwrap_or(6),
                        text: value.clone(),
                    })
                    .collect();
                headings.sort_by_key(|h| h.level);
                units.push((start..end, headings));
            }
        }
        last_meta = Some(s.metadata);
    }
    Ok((text, units))
}

/// A unit longer than the size: split by LangChain's default separators.
/// When it starts with its heading, the heading goes with the first piece of
/// the text below it (the text is split to the size less the heading's).
fn split_unit<L: LengthFunction<str>>(
    text: &str,
    range: Range<usize>,
    headings: &[Heading],
    size: usize,
    length: &L,
) -> Vec<Range<usize>> {
    let unit = &text[range.clone()];
    if let Some(h) = headings.last()
        && let Some(body) = unit
            .strip_prefix(h.text.as_str())
            .and_then(|rest| rest.strip_prefix(SECTION_SEPARATOR))
    {
        let body_start = range.end - body.len();
        let head = length.length(&text[range.start..body_start]);
        if head < size / 2 {
            let mut pieces = split_to_max(text, body_start..range.end, size - head, length);
            if let Some(first) = pieces.first_mut() {
                first.start = range.start;
            }
            return pieces;
        }
    }
    split_to_max(text, range, size, length)
}

/// The chunks of the HTML text `text` with its `units` (see [`document`]).
pub fn split<L: LengthFunction<str>>(
    text: &str,
    units: Vec<Unit>,
    options: &Options,
    length: &L,
) -> Split {
    let size = options.chunk_size;
    let fits = |r: Range<usize>| !length.exceeds(&text[r], size);
    let mut chunks: Vec<Raw> = Vec::new();
    // The pack being built: its range and headings.
    let mut pack: Option<(Range<usize>, Vec<Heading>)> = None;
    for (range, headings) in units {
        if let Some((p, _)) = &mut pack
            && fits(p.start..range.end)
        {
            p.end = range.end;
            continue;
        }
        if let Some((p, hs)) = pack.take() {
            let mut raw = Raw::span(p);
            raw.headings = hs;
            chunks.push(raw);
        }
        if fits(range.clone()) {
            pack = Some((range, headings));
            continue;
        }
        for r in split_unit(text, range, &headings, size, length) {
            let mut raw = Raw::span(r);
            raw.headings = headings.clone();
            chunks.push(raw);
        }
    }
    if let Some((p, hs)) = pack {
        let mut raw = Raw::span(p);
        raw.headings = hs;
        chunks.push(raw);
    }
    Split {
        chunks,
        ..Split::default()
    }
}
