//! Bindings for content-type detection and `chunk_text`/`chunk_texts` (the
//! splitter classes are in [`super::splitters`]). Which way a text is chunked
//! is the core's decision ([`crate::chunking::route`]); here the arguments are
//! parsed and the chunks made into strings ([`super::chunked`]).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use super::chunked::{Chunked, GIL_GROUP, lists_of};
use super::text::{PyText, UnreadText};
use crate::batch;
use crate::chunking::ChunkSizes;
use crate::chunking::detect::{self, ContentType};
use crate::chunking::route::Unit;
use crate::error::Result;

fn content_type_arg(name: Option<&str>) -> Result<Option<ContentType>> {
    name.map(str::parse).transpose()
}

#[pyfunction]
fn detect_content_type_from_extension(file_path: PyText) -> Option<&'static str> {
    detect::detect_from_extension(file_path.as_str()).map(ContentType::as_str)
}

#[pyfunction]
fn detect_content_type_from_heuristics(text: PyText) -> (&'static str, f64) {
    let (ct, confidence) = detect::detect_from_heuristics(text.as_str());
    (ct.as_str(), confidence)
}

/// (chosen type, type from the extension, type from the heuristics, confidence)
#[pyfunction]
#[pyo3(signature = (text, file_path=None))]
fn detect_content_type(
    text: PyText,
    file_path: Option<PyText>,
) -> (&'static str, Option<&'static str>, &'static str, f64) {
    let d = detect::detect(text.as_str(), file_path.as_ref().map(PyText::as_str));
    (
        d.content_type.as_str(),
        d.from_extension.map(ContentType::as_str),
        d.heuristic.as_str(),
        d.confidence,
    )
}

/// Chunks of one text, the content type it was split as (None when it needed
/// no splitting), and its length in the unit.
#[pyfunction]
#[pyo3(signature = (text, content_type=None, file_path=None, chunk_size=1500, chunk_overlap=225,
                    unit="chars", encoding="o200k_base", min_chunk_size=None))]
#[allow(clippy::too_many_arguments)]
fn chunk_text<'py>(
    py: Python<'py>,
    text: UnreadText,
    content_type: Option<&str>,
    file_path: Option<PyText>,
    chunk_size: i64,
    chunk_overlap: i64,
    unit: &str,
    encoding: &str,
    min_chunk_size: Option<i64>,
) -> PyResult<(Bound<'py, PyList>, Option<&'static str>, usize)> {
    let content_type = content_type_arg(content_type)?;
    let sizes = ChunkSizes::new(chunk_size, chunk_overlap, min_chunk_size)?;
    let unit = Unit::new(unit, encoding)?;
    let path = file_path.as_ref().map(PyText::as_str);
    let mut chunked = py.detach(|| Chunked::new(text, content_type, path, sizes, unit))?;
    let (content_type, input_length) = chunked.summary();
    let list = chunked.list(py)?;
    Ok((list, content_type.map(ContentType::as_str), input_length))
}

/// `chunk_text` over many texts on all cores; the first error (in input
/// order) is raised.
#[pyfunction]
#[pyo3(signature = (texts, content_types=None, file_paths=None, chunk_size=1500, chunk_overlap=225,
                    unit="chars", encoding="o200k_base", min_chunk_size=None))]
#[allow(clippy::too_many_arguments)]
fn chunk_texts<'py>(
    py: Python<'py>,
    texts: Vec<UnreadText>,
    content_types: Option<Vec<Option<String>>>,
    file_paths: Option<Vec<Option<PyText>>>,
    chunk_size: i64,
    chunk_overlap: i64,
    unit: &str,
    encoding: &str,
    min_chunk_size: Option<i64>,
) -> PyResult<Bound<'py, PyList>> {
    let n = texts.len();
    let types = match content_types {
        Some(ts) if ts.len() != n => {
            return Err(PyValueError::new_err(format!(
                "content_types has {} entries for {n} texts",
                ts.len()
            )));
        }
        Some(ts) => ts
            .iter()
            .map(|t| content_type_arg(t.as_deref()))
            .collect::<Result<_>>()?,
        None => vec![None; n],
    };
    if let Some(paths) = &file_paths
        && paths.len() != n
    {
        return Err(PyValueError::new_err(format!(
            "file_paths has {} entries for {n} texts",
            paths.len()
        )));
    }
    let sizes = ChunkSizes::new(chunk_size, chunk_overlap, min_chunk_size)?;
    let unit = Unit::new(unit, encoding)?;
    // The calling thread makes the lists of what the helpers hand over, and of
    // its own groups, between chunking groups of its own: it alone of the
    // batch's threads takes the GIL. Texts are transcoded where they are
    // chunked. The helpers share what `each` owns.
    let each = move |i: usize, text| {
        let path = file_paths
            .as_ref()
            .and_then(|p| p[i].as_ref())
            .map(PyText::as_str);
        Chunked::new(text, types[i], path, sizes, unit)
    };
    let lists = py.detach(|| {
        batch::longest_first_in_groups(texts, UnreadText::len, GIL_GROUP, each, lists_of)
    });
    // The first error in input order, as the loop of `chunk_text` would raise.
    let lists = lists.into_iter().collect::<PyResult<Vec<Py<PyList>>>>()?;
    PyList::new(py, lists)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CHUNK_SIZE", ChunkSizes::CHARS.chunk_size)?;
    m.add("CHUNK_OVERLAP", ChunkSizes::CHARS.chunk_overlap)?;
    m.add(
        "HIGH_CONFIDENCE_THRESHOLD",
        detect::HIGH_CONFIDENCE_THRESHOLD,
    )?;
    m.add_function(wrap_pyfunction!(detect_content_type_from_extension, m)?)?;
    m.add_function(wrap_pyfunction!(detect_content_type_from_heuristics, m)?)?;
    m.add_function(wrap_pyfunction!(detect_content_type, m)?)?;
    m.add_function(wrap_pyfunction!(chunk_text, m)?)?;
    m.add_function(wrap_pyfunction!(chunk_texts, m)?)?;
    Ok(())
}
