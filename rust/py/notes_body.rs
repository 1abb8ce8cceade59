//! A note body as Rust text, and what is made of it for Python: code-point
//! offsets from the core's byte offsets, strings with the body's lone
//! surrogates restored, the `NoteLink` records.

use pyo3::IntoPyObjectExt;
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyString, PyTuple};
use rustc_hash::FxHashMap;

use super::notes_records::NoteLink;
use super::text::PyText;
use crate::notes::{edges, scan};
use crate::text::CharOffsets;

/// Byte offsets of a text to code points, for offsets given in increasing
/// order (ASCII text: the identity).
pub(super) struct Chars<'a> {
    ascii: bool,
    offsets: CharOffsets<'a>,
}

impl<'a> Chars<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Chars {
            ascii: text.is_ascii(),
            offsets: CharOffsets::new(text),
        }
    }

    pub(super) fn of(&mut self, byte: usize) -> usize {
        if self.ascii {
            byte
        } else {
            self.offsets.of(byte)
        }
    }
}

/// A note body as Rust text: a Python `str` (transcoded unless ASCII) or
/// the UTF-8 bytes of the note's file from the body's first byte.
pub(super) enum Body {
    Text(PyText),
    Utf8 { data: PyBackedBytes, offset: usize },
}

impl Body {
    pub(super) fn utf8(data: PyBackedBytes, offset: usize) -> PyResult<Self> {
        match data.get(offset..).map(std::str::from_utf8) {
            Some(Ok(_)) => Ok(Body::Utf8 { data, offset }),
            _ => Err(PyValueError::new_err(
                "the note's bytes from the offset of its body are not UTF-8",
            )),
        }
    }

    pub(super) fn as_str(&self) -> &str {
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
    pub(super) fn to_py<'py>(&self, py: Python<'py>, s: &str) -> PyResult<Bound<'py, PyString>> {
        match self {
            Body::Text(text) => text.to_py(py, s),
            Body::Utf8 { .. } => Ok(PyString::new(py, s)),
        }
    }

    pub(super) fn surrogates(&self) -> Option<crate::text::SurrogateMap> {
        match self {
            Body::Text(text) => text.surrogates(),
            Body::Utf8 { .. } => None,
        }
    }
}

/// The links of a body as the scan found them, with code-point offsets.
pub(super) fn found_links<'a>(text: &'a str, raw: &[scan::RawLink]) -> Vec<edges::Found<'a>> {
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

pub(super) fn opt_text<'py>(
    body: &Body,
    py: Python<'py>,
    s: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
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
pub(super) fn note_links<'py>(
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

/// Rust text derived from a body as UTF-8 bytes with the body's lone
/// surrogates restored (`str.encode("utf-8", "surrogatepass")`).
pub(super) fn surrogatepass_bytes<'py>(
    py: Python<'py>,
    body: &Body,
    s: &str,
) -> Bound<'py, PyBytes> {
    match body.surrogates() {
        Some(map) if map.touches(s) => PyBytes::new(py, &map.surrogatepass_utf8(s)),
        _ => PyBytes::new(py, s.as_bytes()),
    }
}
