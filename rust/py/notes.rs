//! Bindings of the note vault rules ([`crate::notes`]) for
//! `fastnotebook.notes`: the body as Rust text and the records made of it
//! are in [`super::notes_body`], the chunk plan in [`super::notes_plan`], the
//! graph in [`super::notes_graph`]; the work runs with the GIL released.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyString, PyTuple};

use super::args::Parsed;
#[cfg(feature = "test-hooks")]
use super::notes_body::opt_text;
use super::notes_body::{Body, Chars, found_links, note_links, surrogatepass_bytes};
use super::notes_plan::{NotePlan, limits_arg, note_plan, plan_rows};
use super::strings::str_slice;
use super::text::PyText;
use crate::notes::{self, plan, scan};
use crate::tokens::Encoding;
#[cfg(feature = "test-hooks")]
use pyo3::types::PyList;

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

/// A note file's bytes as `(raw, frontmatter_text, body, offset of the body
/// in bytes)`, `raw == frontmatter_text + body` (see `split_frontmatter`);
/// `None` when they are not UTF-8.
type SplitNote<'py> = (
    Bound<'py, PyString>,
    Bound<'py, PyString>,
    Bound<'py, PyString>,
    usize,
);

#[pyfunction]
fn _notes_split_data<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Option<SplitNote<'py>>> {
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(None);
    };
    let raw = PyString::new(py, text);
    let end = notes::frontmatter_end(text);
    if end == 0 {
        return Ok(Some((raw.clone(), intern!(py, "").clone(), raw, 0)));
    }
    let head = text.get(..end).unwrap_or_default();
    let chars = if head.is_ascii() {
        end
    } else {
        head.chars().count()
    };
    let frontmatter = str_slice(py, &raw, 0, chars)?;
    let body = str_slice(py, &raw, chars, raw.len()?)?;
    Ok(Some((raw, frontmatter, body, end)))
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
) -> PyResult<NotePlan> {
    let encoding: Encoding = encoding.parse()?;
    let limits = limits_arg(limits)?;
    let body = Body::Text(body);
    let text = body.as_str();
    let (st, rows) = py.detach(|| {
        let st = scan::structure(text);
        let planned = plan::plan(text, &st, limits, overlap, encoding.tokenizer());
        let rows = plan_rows(&st, &planned);
        (st, rows)
    });
    note_plan(py, &body, &st, rows)
}

/// Everything of one body in one pass over its structure: (links, first H1,
/// the body normalised for hashing as UTF-8 bytes (surrogates passed
/// through) or `None`, the chunk plan).
type BodyParts<'py> = (
    Bound<'py, PyTuple>,
    Option<Bound<'py, PyString>>,
    Option<Bound<'py, PyBytes>>,
    NotePlan,
);

/// The links (`NoteLink`s), first H1, hash text (`normalise`: None,
/// "canonical" or "none") and chunk plan of one body at once.
#[pyfunction]
/// With `data` (the UTF-8 bytes of the note's file) the body is read from
/// `data[offset:]`, which must be `body` encoded (see `_notes_split_data`),
/// without transcoding `body`.
#[pyo3(signature = (body, suggestion_headings, limits, overlap, encoding, normalise, data = None, offset = 0))]
#[allow(clippy::too_many_arguments)]
fn _notes_body<'py>(
    py: Python<'py>,
    body: Bound<'py, PyString>,
    suggestion_headings: Vec<String>,
    limits: (usize, usize, usize, usize),
    overlap: usize,
    encoding: Parsed<Encoding>,
    normalise: Option<Parsed<notes::Normalisation>>,
    data: Option<PyBackedBytes>,
    offset: usize,
) -> PyResult<BodyParts<'py>> {
    let Parsed(encoding) = encoding;
    let limits = limits_arg(limits)?;
    let canonical = normalise.map(|Parsed(n)| n == notes::Normalisation::Canonical);
    let body = match data {
        Some(data) => Body::utf8(data, offset)?,
        None => Body::Text(body.extract()?),
    };
    let text = body.as_str();
    let (st, found, normalised, rows) = py.detach(|| {
        let st = scan::structure(text);
        let found = found_links(text, &scan::links(&st, &suggestion_headings));
        let normalised = canonical.map(|c| notes::normalise(text, c));
        let planned = plan::plan(text, &st, limits, overlap, encoding.tokenizer());
        let rows = plan_rows(&st, &planned);
        (st, found, normalised, rows)
    });
    let links = note_links(py, &body, &found)?;
    let h1 = match scan::first_h1_text(&st) {
        Some(h) => Some(body.to_py(py, h)?),
        None => None,
    };
    let normalised = normalised.map(|n| surrogatepass_bytes(py, &body, &n));
    let plan = note_plan(py, &body, &st, rows)?;
    Ok((links, h1, normalised, plan))
}

/// Test hook: the links of a body as the scan finds them, before the rules
/// of `NoteLink`s apply: (kind, start, end, target, heading, block, display,
/// in suggestions); kind 0 wikilink, 1 embed, 2 Markdown link, 3 Markdown
/// embed; for Markdown links `target` is the URL as written.
#[cfg(feature = "test-hooks")]
#[pyfunction]
fn _notes_link_rows<'py>(
    py: Python<'py>,
    body: PyText,
    suggestion_headings: Vec<String>,
) -> PyResult<Bound<'py, PyList>> {
    let body = Body::Text(body);
    let text = body.as_str();
    let st = scan::structure(text);
    let rows = PyList::empty(py);
    for l in found_links(text, &scan::links(&st, &suggestion_headings)) {
        let code: u8 = match l.kind {
            scan::RawLinkKind::Wiki => 0,
            scan::RawLinkKind::WikiEmbed => 1,
            scan::RawLinkKind::Markdown => 2,
            scan::RawLinkKind::MarkdownEmbed => 3,
        };
        rows.append((
            code,
            l.start,
            l.end,
            body.to_py(py, l.target)?,
            opt_text(&body, py, l.heading)?,
            opt_text(&body, py, l.block)?,
            opt_text(&body, py, l.display)?,
            l.in_suggestions,
        ))?;
    }
    Ok(rows)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    #[cfg(feature = "test-hooks")]
    {
        m.add_function(wrap_pyfunction!(_notes_link_rows, m)?)?;
        super::notes_plan::register_hooks(m)?;
    }
    super::notes_plan::register(m)?;
    m.add_function(wrap_pyfunction!(_notes_frontmatter_end, m)?)?;
    m.add_function(wrap_pyfunction!(_notes_normalise, m)?)?;
    m.add_function(wrap_pyfunction!(_notes_chunk, m)?)?;
    m.add_function(wrap_pyfunction!(_notes_body, m)?)?;
    m.add_function(wrap_pyfunction!(_notes_split_data, m)?)?;
    super::notes_records::register(m)
}
