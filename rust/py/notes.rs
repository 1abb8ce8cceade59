//! Bindings of the note vault rules ([`crate::notes`]) for
//! `fastnotebook.notes`: byte offsets become code-point offsets here; the
//! work runs with the GIL released.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyString;

use super::text::PyText;
use crate::notes::{self, plan, scan};
use crate::text::CharOffsets;
use crate::tokens::Encoding;

/// Byte offsets of a text to code points, for offsets given in increasing
/// order (ASCII text: the identity).
struct Chars<'a> {
    ascii: bool,
    offsets: CharOffsets<'a>,
}

impl<'a> Chars<'a> {
    fn new(text: &'a str) -> Self {
        Chars {
            ascii: text.is_ascii(),
            offsets: CharOffsets::new(text),
        }
    }

    fn of(&mut self, byte: usize) -> usize {
        if self.ascii {
            byte
        } else {
            self.offsets.of(byte)
        }
    }
}

/// Length in code points of the front matter block at the top of `raw`.
#[pyfunction]
fn _notes_frontmatter_end(raw: PyText) -> usize {
    let text = raw.as_str();
    let end = notes::frontmatter_end(text);
    Chars::new(text).of(end)
}

/// The text a content hash is taken of (see `notes::normalise`).
#[pyfunction]
fn _notes_normalise<'py>(
    py: Python<'py>,
    text: PyText,
    canonical: bool,
) -> PyResult<Bound<'py, PyString>> {
    let out = py.detach(|| notes::normalise(text.as_str(), canonical));
    text.to_py(py, &out)
}

/// One scanned link: (kind, start, end, target, heading, block, display,
/// in suggestions); kind 0 wikilink, 1 embed, 2 Markdown link, 3 Markdown
/// embed. For Markdown links `target` is the URL as written (decoded by the
/// caller) and `display` the link text.
type LinkRow = (
    u8,
    usize,
    usize,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    bool,
);

fn owned(s: Option<&str>) -> Option<String> {
    s.map(str::to_string)
}

fn link_rows(text: &str, links: &[scan::RawLink]) -> Vec<LinkRow> {
    let mut chars = Chars::new(text);
    links
        .iter()
        .map(|l| {
            let start = chars.of(l.start);
            let end = chars.of(l.end);
            let inner = text.get(l.inner.0..l.inner.1).unwrap_or("");
            let (kind, target, heading, block, display) = match (l.kind, l.url) {
                (scan::RawLinkKind::Wiki | scan::RawLinkKind::WikiEmbed, _) => {
                    let w = scan::split_wiki(inner);
                    let kind = if l.kind == scan::RawLinkKind::Wiki {
                        0
                    } else {
                        1
                    };
                    (kind, w.target, w.heading, w.block, w.display)
                }
                (kind, url) => {
                    let url = url.and_then(|(a, b)| text.get(a..b)).unwrap_or("");
                    let kind = if kind == scan::RawLinkKind::Markdown {
                        2
                    } else {
                        3
                    };
                    (kind, url, None, None, Some(inner))
                }
            };
            (
                kind,
                start,
                end,
                target.to_string(),
                owned(heading),
                owned(block),
                owned(display),
                l.in_suggestions,
            )
        })
        .collect()
}

fn h1_of(st: &scan::Structure<'_>) -> Option<String> {
    scan::first_h1(st).and_then(|(a, b)| st.text.get(a..b).map(str::to_string))
}

/// The links of a body outside code, and the title of its first H1.
#[pyfunction]
fn _notes_scan(
    py: Python<'_>,
    body: PyText,
    suggestion_headings: Vec<String>,
) -> (Vec<LinkRow>, Option<String>) {
    py.detach(|| {
        let text = body.as_str();
        let st = scan::structure(text);
        let links = scan::links(&st, &suggestion_headings);
        (link_rows(text, &links), h1_of(&st))
    })
}

/// One planned chunk: (start, end, overlap start, tokens, first line, last
/// line (1-based), section path, own quote, oversized, block kind).
type ChunkRow = (
    usize,
    usize,
    usize,
    usize,
    usize,
    usize,
    Vec<String>,
    bool,
    bool,
    Option<&'static str>,
);

fn limits_arg(limits: (usize, usize, usize, usize)) -> PyResult<plan::Limits> {
    let (target_min, target_max, hard_max, min) = limits;
    if !(0 < min && min <= target_max && 0 < target_min && target_min <= target_max)
        || target_max > hard_max
    {
        return Err(PyValueError::new_err(format!(
            "limits {limits:?}: need 0 < min <= target_max and 0 < target_min <= target_max <= hard_max"
        )));
    }
    Ok(plan::Limits {
        target_min,
        target_max,
        hard_max,
        min,
    })
}

fn chunk_rows(st: &scan::Structure<'_>, planned: &[plan::Planned]) -> Vec<ChunkRow> {
    let text = st.text;
    let mut spans = Chars::new(text);
    let mut overlaps = Chars::new(text);
    planned
        .iter()
        .map(|p| {
            let start = spans.of(p.start);
            let end = spans.of(p.end);
            let path = p
                .path
                .iter()
                .map(|&h| st.heading_title(&st.headings[h]).to_string())
                .collect();
            (
                start,
                end,
                overlaps.of(p.overlap_start),
                p.tokens,
                p.first_line + 1,
                p.last_line + 1,
                path,
                p.own,
                p.oversized,
                p.block.map(plan::BlockKind::name),
            )
        })
        .collect()
}

/// The chunk plan of a note body (see `notes::plan`).
#[pyfunction]
#[pyo3(signature = (body, limits, overlap = 50, encoding = "o200k_base"))]
fn _notes_chunk(
    py: Python<'_>,
    body: PyText,
    limits: (usize, usize, usize, usize),
    overlap: usize,
    encoding: &str,
) -> PyResult<Vec<ChunkRow>> {
    let encoding: Encoding = encoding.parse()?;
    let limits = limits_arg(limits)?;
    Ok(py.detach(|| {
        let text = body.as_str();
        let st = scan::structure(text);
        let planned = plan::plan(text, &st, limits, overlap, encoding.tokenizer());
        chunk_rows(&st, &planned)
    }))
}

/// Everything of one body in one pass over its structure: (links, first H1,
/// the body normalised for hashing or `None`, the chunk plan).
type BodyRows<'py> = (
    Vec<LinkRow>,
    Option<String>,
    Option<Bound<'py, PyString>>,
    Vec<ChunkRow>,
);

/// `_notes_scan`, `_notes_normalise` (`normalise`: None, "canonical" or
/// "none") and `_notes_chunk` of one body at once.
#[pyfunction]
#[pyo3(signature = (body, suggestion_headings, limits, overlap, encoding, normalise))]
fn _notes_body<'py>(
    py: Python<'py>,
    body: PyText,
    suggestion_headings: Vec<String>,
    limits: (usize, usize, usize, usize),
    overlap: usize,
    encoding: &str,
    normalise: Option<&str>,
) -> PyResult<BodyRows<'py>> {
    let encoding: Encoding = encoding.parse()?;
    let limits = limits_arg(limits)?;
    let canonical = match normalise {
        None => None,
        Some("canonical") => Some(true),
        Some("none") => Some(false),
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "normalise must be 'canonical', 'none' or None, not {other:?}"
            )));
        }
    };
    let (links, h1, normalised, rows) = py.detach(|| {
        let text = body.as_str();
        let st = scan::structure(text);
        let links = link_rows(text, &scan::links(&st, &suggestion_headings));
        let normalised = canonical.map(|c| notes::normalise(text, c));
        let planned = plan::plan(text, &st, limits, overlap, encoding.tokenizer());
        (links, h1_of(&st), normalised, chunk_rows(&st, &planned))
    });
    // Surrogates of the body come back in the normalised text.
    let normalised = match normalised {
        Some(n) => Some(body.to_py(py, &n)?),
        None => None,
    };
    Ok((links, h1, normalised, rows))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_notes_frontmatter_end, m)?)?;
    m.add_function(wrap_pyfunction!(_notes_normalise, m)?)?;
    m.add_function(wrap_pyfunction!(_notes_scan, m)?)?;
    m.add_function(wrap_pyfunction!(_notes_chunk, m)?)?;
    m.add_function(wrap_pyfunction!(_notes_body, m)?)?;
    Ok(())
}
