//! Bindings of the note vault rules ([`crate::notes`]) for
//! `fastnotebook.notes`: byte offsets become code-point offsets here; the
//! work runs with the GIL released; the records (`NoteLink`, `NoteChunk`,
//! `Edge`) are built here.

use pyo3::IntoPyObjectExt;
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use rustc_hash::FxHashMap;

use super::args::Parsed;
use super::notes_records::NoteLink;
use super::text::{PyText, str_slice};
use crate::notes::{self, edges, plan, scan};
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

/// A note body as Rust text: a Python `str` (transcoded unless ASCII) or
/// the UTF-8 bytes of the note's file from the body's first byte.
enum Body {
    Text(PyText),
    Utf8 { data: PyBackedBytes, offset: usize },
}

impl Body {
    fn utf8(data: PyBackedBytes, offset: usize) -> PyResult<Self> {
        match data.get(offset..).map(std::str::from_utf8) {
            Some(Ok(_)) => Ok(Body::Utf8 { data, offset }),
            _ => Err(PyValueError::new_err(
                "the note's bytes from the offset of its body are not UTF-8",
            )),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            Body::Text(text) => text.as_str(),
            Body::Utf8 { data, offset } => {
                let bytes = data.get(*offset..).unwrap_or_default();
                // SAFETY: `Body::utf8` checked that these bytes are UTF-8, and
                // the bytes object they belong to never changes.
                unsafe { std::str::from_utf8_unchecked(bytes) }
            }
        }
    }

    /// A Python `str` for text derived from the body (its lone surrogates,
    /// if any, restored).
    fn to_py<'py>(&self, py: Python<'py>, s: &str) -> PyResult<Bound<'py, PyString>> {
        match self {
            Body::Text(text) => text.to_py(py, s),
            Body::Utf8 { .. } => Ok(PyString::new(py, s)),
        }
    }

    fn surrogates(&self) -> Option<crate::text::SurrogateMap> {
        match self {
            Body::Text(text) => text.surrogates(),
            Body::Utf8 { .. } => None,
        }
    }
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

/// The links of a body as the scan found them, with code-point offsets.
fn found_links<'a>(text: &'a str, raw: &[scan::RawLink]) -> Vec<edges::Found<'a>> {
    let mut chars = Chars::new(text);
    raw.iter()
        .map(|l| {
            let mut f = edges::found(text, l);
            f.start = chars.of(f.start);
            f.end = chars.of(f.end);
            f
        })
        .collect()
}

fn opt_text<'py>(body: &Body, py: Python<'py>, s: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
    match s {
        Some(s) => Ok(body.to_py(py, s)?.into_any()),
        None => Ok(py.None().into_bound(py)),
    }
}

fn link_kind(py: Python<'_>, kind: edges::LinkKind) -> &Bound<'_, PyString> {
    match kind {
        edges::LinkKind::Wikilink => intern!(py, "wikilink"),
        edges::LinkKind::Embed => intern!(py, "embed"),
        edges::LinkKind::Markdown => intern!(py, "markdown"),
    }
}

/// The `NoteLink`s of a body (see `edges::note_link`).
fn note_links<'py>(
    py: Python<'py>,
    body: &Body,
    found: &[edges::Found<'_>],
) -> PyResult<Bound<'py, PyTuple>> {
    let mut out: Vec<Bound<'py, NoteLink>> = Vec::with_capacity(found.len());
    // One `str` per distinct target of the note (targets repeat).
    let mut targets: FxHashMap<String, Bound<'py, PyString>> = FxHashMap::default();
    for l in found.iter().filter_map(edges::note_link) {
        let target = match targets.get(l.target.as_ref()) {
            Some(t) => t.clone(),
            None => {
                let t = body.to_py(py, &l.target)?;
                targets.insert(l.target.to_string(), t.clone());
                t
            }
        };
        out.push(NoteLink::from_values(
            py,
            [
                link_kind(py, l.kind).clone().into_any(),
                target.into_any(),
                opt_text(body, py, l.heading.as_deref())?,
                opt_text(body, py, l.block.as_deref())?,
                opt_text(body, py, l.display)?,
                l.start.into_bound_py_any(py)?,
                l.end.into_bound_py_any(py)?,
                l.in_suggestions.into_bound_py_any(py)?,
            ],
        )?);
    }
    PyTuple::new(py, out)
}

fn h1_of(st: &scan::Structure<'_>) -> Option<String> {
    scan::first_h1(st).and_then(|(a, b)| st.text.get(a..b).map(str::to_string))
}

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

/// One planned chunk in code points: its span, where its embed text
/// starts, tokens, lines (1-based), its section path (indices into the
/// plan's titles), a quote of its own, oversized, the block kind.
pub(super) struct PlanRow {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) overlap_start: usize,
    pub(super) tokens: usize,
    pub(super) first_line: usize,
    pub(super) last_line: usize,
    pub(super) path: Vec<usize>,
    pub(super) own: bool,
    pub(super) oversized: bool,
    pub(super) block: Option<plan::BlockKind>,
}

/// The chunk plan of one note body (what `chunk_note` makes its chunks of).
#[pyclass(frozen, module = "fastnotebook._core", name = "_NotePlan")]
pub struct NotePlan {
    pub(super) rows: Vec<PlanRow>,
    /// The heading titles of the body, in order.
    pub(super) titles: Vec<Py<PyString>>,
}

#[pymethods]
impl NotePlan {
    fn __len__(&self) -> usize {
        self.rows.len()
    }
}

fn plan_rows(st: &scan::Structure<'_>, planned: &[plan::Planned]) -> Vec<PlanRow> {
    let text = st.text;
    let mut spans = Chars::new(text);
    let mut overlaps = Chars::new(text);
    planned
        .iter()
        .map(|p| PlanRow {
            start: spans.of(p.start),
            end: spans.of(p.end),
            overlap_start: overlaps.of(p.overlap_start),
            tokens: p.tokens,
            first_line: p.first_line + 1,
            last_line: p.last_line + 1,
            path: p.path.clone(),
            own: p.own,
            oversized: p.oversized,
            block: p.block,
        })
        .collect()
}

fn note_plan(
    py: Python<'_>,
    body: &Body,
    st: &scan::Structure<'_>,
    rows: Vec<PlanRow>,
) -> PyResult<NotePlan> {
    let titles = st
        .headings
        .iter()
        .map(|h| Ok(body.to_py(py, st.heading_title(h))?.unbind()))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(NotePlan { rows, titles })
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

/// Rust text derived from a body as UTF-8 bytes with the body's lone
/// surrogates restored (`str.encode("utf-8", "surrogatepass")`).
fn surrogatepass_bytes<'py>(py: Python<'py>, body: &Body, s: &str) -> Bound<'py, PyBytes> {
    match body.surrogates() {
        Some(map) if map.touches(s) => {
            let mut out = Vec::with_capacity(s.len());
            for cp in map.restore(s) {
                match char::from_u32(cp) {
                    Some(c) => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
                    // A lone surrogate: its three-byte form.
                    None => out.extend_from_slice(&[
                        0xE0 | (cp >> 12) as u8,
                        0x80 | ((cp >> 6) & 0x3F) as u8,
                        0x80 | (cp & 0x3F) as u8,
                    ]),
                }
            }
            PyBytes::new(py, &out)
        }
        _ => PyBytes::new(py, s.as_bytes()),
    }
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
    let h1 = match h1_of(&st) {
        Some(h) => Some(body.to_py(py, &h)?),
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

/// Test hook: the rows of a chunk plan: (start, end, overlap start, tokens,
/// first line, last line, section path, own quote, oversized, block kind).
#[cfg(feature = "test-hooks")]
#[pyfunction]
fn _notes_plan_rows<'py>(
    py: Python<'py>,
    plan: PyRef<'py, NotePlan>,
) -> PyResult<Bound<'py, PyList>> {
    let rows = PyList::empty(py);
    for r in &plan.rows {
        let path: Vec<&Py<PyString>> = r.path.iter().map(|&h| &plan.titles[h]).collect();
        rows.append((
            r.start,
            r.end,
            r.overlap_start,
            r.tokens,
            r.first_line,
            r.last_line,
            path,
            r.own,
            r.oversized,
            r.block.map(plan::BlockKind::name),
        ))?;
    }
    Ok(rows)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    #[cfg(feature = "test-hooks")]
    {
        m.add_function(wrap_pyfunction!(_notes_link_rows, m)?)?;
        m.add_function(wrap_pyfunction!(_notes_plan_rows, m)?)?;
    }
    m.add_class::<NotePlan>()?;
    m.add_function(wrap_pyfunction!(_notes_frontmatter_end, m)?)?;
    m.add_function(wrap_pyfunction!(_notes_normalise, m)?)?;
    m.add_function(wrap_pyfunction!(_notes_chunk, m)?)?;
    m.add_function(wrap_pyfunction!(_notes_body, m)?)?;
    m.add_function(wrap_pyfunction!(_notes_split_data, m)?)?;
    super::notes_records::register(m)
}
