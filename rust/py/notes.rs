//! Bindings of the note vault rules ([`crate::notes`]) for
//! `fastnotebook.notes`: byte offsets become code-point offsets here; the
//! work runs with the GIL released; the records (`NoteLink`, `NoteChunk`,
//! `Edge`) are built here.

use pyo3::IntoPyObjectExt;
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use rustc_hash::FxHashMap;

use super::notes_records::{Edge, NoteChunk, NoteLink};
use super::text::{PyText, code_units, new_string};
use crate::for_width;
use crate::notes::{self, links, plan, scan};
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
    let frontmatter = substring(py, &raw, 0, chars)?;
    let body = substring(py, &raw, chars, raw.len()?)?;
    Ok(Some((raw, frontmatter, body, end)))
}

/// A link as the scan found it, with code-point offsets.
struct FoundLink<'a> {
    kind: scan::RawLinkKind,
    start: usize,
    end: usize,
    /// Wikilinks: the parts of the inner text; Markdown links: the URL and
    /// the link text.
    target: &'a str,
    heading: Option<&'a str>,
    block: Option<&'a str>,
    display: Option<&'a str>,
    in_suggestions: bool,
}

fn found_links<'a>(text: &'a str, raw: &[scan::RawLink]) -> Vec<FoundLink<'a>> {
    let mut chars = Chars::new(text);
    raw.iter()
        .map(|l| {
            let start = chars.of(l.start);
            let end = chars.of(l.end);
            let inner = text.get(l.inner.0..l.inner.1).unwrap_or("");
            let (target, heading, block, display) = match l.kind {
                scan::RawLinkKind::Wiki | scan::RawLinkKind::WikiEmbed => {
                    let w = scan::split_wiki(inner);
                    (w.target, w.heading, w.block, w.display)
                }
                _ => {
                    let url = l.url.and_then(|(a, b)| text.get(a..b)).unwrap_or("");
                    (url, None, None, Some(inner))
                }
            };
            FoundLink {
                kind: l.kind,
                start,
                end,
                target,
                heading,
                block,
                display,
                in_suggestions: l.in_suggestions,
            }
        })
        .collect()
}

/// Whether a link target names an attachment (by its extension, compared as
/// Python's `str.casefold` compares).
fn is_attachment(py: Python<'_>, target: &str) -> PyResult<bool> {
    let Some(ext) = links::extension(target) else {
        return Ok(false);
    };
    if ext.is_ascii() {
        return Ok(links::is_attachment_extension(&ext.to_ascii_lowercase()));
    }
    let folded = PyString::new(py, ext).call_method0(intern!(py, "casefold"))?;
    Ok(links::is_attachment_extension(
        folded.cast::<PyString>()?.to_str()?,
    ))
}

fn opt_text<'py>(body: &Body, py: Python<'py>, s: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
    match s {
        Some(s) => Ok(body.to_py(py, s)?.into_any()),
        None => Ok(py.None().into_bound(py)),
    }
}

/// The `NoteLink`s of a body: Markdown links only when they point to a `.md`
/// file (their URL decoded), no attachments, no empty targets.
fn note_links<'py>(
    py: Python<'py>,
    body: &Body,
    found: &[FoundLink<'_>],
) -> PyResult<Bound<'py, PyTuple>> {
    let mut out: Vec<Bound<'py, NoteLink>> = Vec::with_capacity(found.len());
    // One `str` per distinct target of the note (targets repeat).
    let mut targets: FxHashMap<String, Bound<'py, PyString>> = FxHashMap::default();
    for l in found {
        let markdown;
        let (kind, target, heading, block) = match l.kind {
            scan::RawLinkKind::Wiki => (intern!(py, "wikilink"), l.target, l.heading, l.block),
            scan::RawLinkKind::WikiEmbed => (intern!(py, "embed"), l.target, l.heading, l.block),
            scan::RawLinkKind::Markdown | scan::RawLinkKind::MarkdownEmbed => {
                let Some(parsed) = links::markdown_target(l.target) else {
                    continue;
                };
                markdown = parsed;
                let kind = if l.kind == scan::RawLinkKind::Markdown {
                    intern!(py, "markdown")
                } else {
                    intern!(py, "embed")
                };
                (
                    kind,
                    markdown.target.as_str(),
                    markdown.heading.as_deref(),
                    markdown.block.as_deref(),
                )
            }
        };
        if target.is_empty() || is_attachment(py, target)? {
            continue;
        }
        let target = match targets.get(target) {
            Some(t) => t.clone(),
            None => {
                let t = body.to_py(py, target)?;
                targets.insert(target.to_string(), t.clone());
                t
            }
        };
        out.push(NoteLink::from_values(
            py,
            [
                kind.clone().into_any(),
                target.into_any(),
                opt_text(body, py, heading)?,
                opt_text(body, py, block)?,
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
struct PlanRow {
    start: usize,
    end: usize,
    overlap_start: usize,
    tokens: usize,
    first_line: usize,
    last_line: usize,
    path: Vec<usize>,
    own: bool,
    oversized: bool,
    block: Option<&'static str>,
}

/// The chunk plan of one note body (what `chunk_note` makes its chunks of).
#[pyclass(frozen, module = "fastnotebook._core", name = "_NotePlan")]
pub struct NotePlan {
    rows: Vec<PlanRow>,
    /// The heading titles of the body, in order.
    titles: Vec<Py<PyString>>,
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
            block: p.block.map(plan::BlockKind::name),
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
    encoding: &str,
    normalise: Option<&str>,
    data: Option<PyBackedBytes>,
    offset: usize,
) -> PyResult<BodyParts<'py>> {
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

/// `text[range]` for a range of code points of a `str`.
fn substring<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    start: usize,
    end: usize,
) -> PyResult<Bound<'py, PyString>> {
    // SAFETY: the object is immutable and alive while `text` is.
    let data = unsafe { text.data()? };
    for_width!(code_units(data), |units| {
        let part = units
            .get(start..end)
            .ok_or_else(|| PyValueError::new_err("a planned chunk lies outside its note body"))?;
        new_string(py, &[part])
    })
}

/// `f"{note_id}#c{index:02d}"`.
fn chunk_id<'py>(
    py: Python<'py>,
    note_id: &Bound<'py, PyString>,
    index: usize,
) -> PyResult<Bound<'py, PyAny>> {
    match note_id.to_str() {
        Ok(id) => Ok(PyString::new(py, &format!("{id}#c{index:02}")).into_any()),
        // Lone surrogates: formatted by Python.
        Err(_) => intern!(py, "{}#c{:02d}").call_method1(intern!(py, "format"), (note_id, index)),
    }
}

/// Link targets as `resolve(target)` maps them (the raw target when it
/// gives `None` or there is no `resolve`), each target resolved once.
struct Targets<'py> {
    resolve: Option<Bound<'py, PyAny>>,
    seen: Bound<'py, PyDict>,
}

impl<'py> Targets<'py> {
    fn new(py: Python<'py>, resolve: Option<Bound<'py, PyAny>>) -> Self {
        Targets {
            resolve: resolve.filter(|r| !r.is_none()),
            seen: PyDict::new(py),
        }
    }

    fn of(&self, target: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(hit) = self.seen.get_item(target)? {
            return Ok(hit);
        }
        let found = match &self.resolve {
            Some(resolve) => {
                let r = resolve.call1((target,))?;
                if r.is_truthy()? { r } else { target.clone() }
            }
            None => target.clone(),
        };
        self.seen.set_item(target, &found)?;
        Ok(found)
    }
}

/// The `NoteChunk`s of a note from its plan: `links` are the note's
/// `NoteLink`s, `resolve(target)` a note id or `None` (see `chunk_note`).
#[pyfunction]
#[pyo3(signature = (note_id, body, plan, links, resolve = None))]
fn _notes_chunks<'py>(
    py: Python<'py>,
    note_id: Bound<'py, PyString>,
    body: Bound<'py, PyString>,
    plan: PyRef<'py, NotePlan>,
    links: Bound<'py, PyAny>,
    resolve: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let rows = &plan.rows;
    let targets = Targets::new(py, resolve);
    let mut starts: Vec<usize> = Vec::new();
    let mut link_values: Vec<Bound<'py, NoteLink>> = Vec::new();
    for link in links.try_iter()? {
        let link = link?.cast_into::<NoteLink>()?;
        starts.push(link.get().value(py, NoteLink::START)?.extract()?);
        link_values.push(link);
    }
    let ids = (0..rows.len())
        .map(|k| chunk_id(py, &note_id, k))
        .collect::<PyResult<Vec<_>>>()?;
    let none = py.None().into_bound(py);
    let chunks = PyList::empty(py);
    for (k, row) in rows.iter().enumerate() {
        let lo = starts.partition_point(|&s| s < row.start);
        let hi = starts.partition_point(|&s| s < row.end).max(lo);
        let mut wikilinks: Vec<Bound<'py, PyAny>> = Vec::new();
        let references = PyList::empty(py);
        for link in &link_values[lo..hi] {
            let values = link.get();
            let target = targets.of(&values.value(py, NoteLink::TARGET)?)?;
            let mut known = false;
            for w in &wikilinks {
                if w.is(&target) || w.eq(&target)? {
                    known = true;
                    break;
                }
            }
            if !known {
                wikilinks.push(target.clone());
            }
            if !values.value(py, NoteLink::IN_SUGGESTIONS)?.is_truthy()? {
                let reference = PyDict::new(py);
                reference.set_item(intern!(py, "kind"), values.value(py, NoteLink::KIND)?)?;
                reference.set_item(intern!(py, "target_id"), target)?;
                references.append(reference)?;
            }
        }
        let metadata = PyDict::new(py);
        metadata.set_item(intern!(py, "overlap_start"), row.overlap_start)?;
        if row.oversized {
            metadata.set_item(intern!(py, "oversized"), true)?;
            metadata.set_item(intern!(py, "block"), row.block)?;
        } else if row.own {
            metadata.set_item(intern!(py, "block"), intern!(py, "quote"))?;
        }
        let text = substring(py, &body, row.start, row.end)?;
        let embed_text = if row.overlap_start == row.start {
            text.clone()
        } else {
            substring(py, &body, row.overlap_start, row.end)?
        };
        let path = PyTuple::new(py, row.path.iter().map(|&h| &plan.titles[h]))?;
        let section_title = match row.path.last() {
            Some(&h) => plan.titles[h].bind(py).clone().into_any(),
            None => none.clone(),
        };
        chunks.append(NoteChunk::from_values(
            py,
            [
                note_id.clone().into_any(),
                ids[k].clone(),
                k.into_bound_py_any(py)?,
                text.into_any(),
                row.start.into_bound_py_any(py)?,
                row.end.into_bound_py_any(py)?,
                row.first_line.into_bound_py_any(py)?,
                row.last_line.into_bound_py_any(py)?,
                section_title,
                path.into_any(),
                if k > 0 {
                    ids[k - 1].clone()
                } else {
                    none.clone()
                },
                ids.get(k + 1).cloned().unwrap_or_else(|| none.clone()),
                row.tokens.into_bound_py_any(py)?,
                row.end.saturating_sub(row.start).into_bound_py_any(py)?,
                embed_text.into_any(),
                PyTuple::new(py, wikilinks)?.into_any(),
                references.to_tuple().into_any(),
                metadata.into_any(),
            ],
        )?)?;
    }
    Ok(chunks)
}

fn edge<'py>(py: Python<'py>, values: [Bound<'py, PyAny>; 6]) -> PyResult<Bound<'py, Edge>> {
    Edge::from_values(py, values)
}

/// The edges one note owns (see `edges_for_note`): `chunks` its chunks in
/// order, `known` every note id, `resolve(target)` a note id or `None`.
#[pyfunction]
fn _notes_edges<'py>(
    py: Python<'py>,
    note_id: Bound<'py, PyString>,
    chunks: Bound<'py, PyAny>,
    known: Bound<'py, PyAny>,
    resolve: Bound<'py, PyAny>,
    note_scope_references: bool,
) -> PyResult<Bound<'py, PyList>> {
    let nid = note_id.into_any();
    let (chunk_scope, note_scope) = (intern!(py, "chunk").as_any(), intern!(py, "note").as_any());
    let (ok, unresolved) = (
        intern!(py, "ok").as_any(),
        intern!(py, "unresolved").as_any(),
    );
    let mut ids: Vec<Bound<'py, PyAny>> = Vec::new();
    let mut references: Vec<Bound<'py, PyAny>> = Vec::new();
    for chunk in chunks.try_iter()? {
        let chunk = chunk?;
        ids.push(chunk.getattr(intern!(py, "id"))?);
        references.push(chunk.getattr(intern!(py, "references"))?);
    }
    let edges = PyList::empty(py);
    for id in &ids {
        edges.append(edge(
            py,
            [
                intern!(py, "belongs_to").clone().into_any(),
                id.clone(),
                nid.clone(),
                chunk_scope.clone(),
                nid.clone(),
                ok.clone(),
            ],
        )?)?;
    }
    for (k, id) in ids.iter().enumerate() {
        if k > 0 {
            edges.append(edge(
                py,
                [
                    intern!(py, "prev").clone().into_any(),
                    id.clone(),
                    ids[k - 1].clone(),
                    chunk_scope.clone(),
                    nid.clone(),
                    ok.clone(),
                ],
            )?)?;
        }
        if let Some(next) = ids.get(k + 1) {
            edges.append(edge(
                py,
                [
                    intern!(py, "next").clone().into_any(),
                    id.clone(),
                    next.clone(),
                    chunk_scope.clone(),
                    nid.clone(),
                    ok.clone(),
                ],
            )?)?;
        }
    }
    // Each raw target resolved once; the targets in first-seen order.
    let resolved = PyDict::new(py);
    let targets = PyDict::new(py);
    for (id, refs) in ids.iter().zip(&references) {
        for reference in refs.try_iter()? {
            let mut target = reference?.get_item(intern!(py, "target_id"))?;
            let mut status = ok.clone();
            if !known.contains(&target)? {
                let found = match resolved.get_item(&target)? {
                    Some(hit) => hit,
                    None => {
                        let hit = resolve.call1((&target,))?;
                        resolved.set_item(&target, &hit)?;
                        hit
                    }
                };
                if found.is_none() {
                    status = unresolved.clone();
                } else {
                    target = found;
                }
            }
            edges.append(edge(
                py,
                [
                    intern!(py, "references").clone().into_any(),
                    id.clone(),
                    target.clone(),
                    chunk_scope.clone(),
                    nid.clone(),
                    status.clone(),
                ],
            )?)?;
            if !targets.contains(&target)? {
                targets.set_item(&target, &status)?;
            }
        }
    }
    for (target, status) in targets.iter() {
        if status.is(ok) || status.eq(ok)? {
            edges.append(edge(
                py,
                [
                    intern!(py, "backlink").clone().into_any(),
                    target,
                    nid.clone(),
                    note_scope.clone(),
                    nid.clone(),
                    ok.clone(),
                ],
            )?)?;
        }
    }
    if note_scope_references {
        for (target, status) in targets.iter() {
            edges.append(edge(
                py,
                [
                    intern!(py, "references").clone().into_any(),
                    nid.clone(),
                    target,
                    note_scope.clone(),
                    nid.clone(),
                    status,
                ],
            )?)?;
        }
    }
    Ok(edges)
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
            r.block,
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
    m.add_function(wrap_pyfunction!(_notes_chunks, m)?)?;
    m.add_function(wrap_pyfunction!(_notes_edges, m)?)?;
    super::notes_records::register(m)
}
