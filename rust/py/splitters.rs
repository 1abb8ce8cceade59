//! langchain's header splitters and its recursive splitter with `len`:
//! `RecursiveSplitter`, `MarkdownHeaderSplitter`, `HtmlHeaderSplitter`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use super::strings::{new_string, piece_list};
use super::text::{PyText, UnreadText};
use crate::chunking::ChunkSizes;
use crate::chunking::Section;
use crate::chunking::html::HtmlHeaderSplitter;
use crate::chunking::markdown::MarkdownHeaderSplitter;
use crate::chunking::recursive::{CharLength, KeepSeparator, RecursiveSplitter};
use crate::for_width;
use crate::text::CodeUnit;

/// `(page_content, metadata)` pairs, with `to_py` making the strings.
fn sections_to_py<'py, O>(
    py: Python<'py>,
    sections: Vec<Section<O>>,
    to_py: impl Fn(&O) -> PyResult<Bound<'py, PyString>>,
) -> PyResult<Bound<'py, PyList>> {
    let items = sections
        .into_iter()
        .map(|section| {
            let metadata = PyDict::new(py);
            for (name, value) in &section.metadata {
                metadata.set_item(name, to_py(value)?)?;
            }
            Ok((to_py(&section.content)?, metadata))
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

fn keep_separator_arg(value: &Bound<'_, PyAny>) -> PyResult<KeepSeparator> {
    if let Ok(flag) = value.cast::<pyo3::types::PyBool>() {
        return Ok(if flag.is_true() {
            KeepSeparator::Start
        } else {
            KeepSeparator::Discard
        });
    }
    match value.extract::<&str>() {
        Ok("start") => Ok(KeepSeparator::Start),
        Ok("end") => Ok(KeepSeparator::End),
        _ => Err(PyValueError::new_err(format!(
            "keep_separator must be True, False, 'start' or 'end', got {}",
            value.repr()?
        ))),
    }
}

/// langchain's `RecursiveCharacterTextSplitter` with literal separators and
/// `len` as the length function.
#[pyclass(frozen, name = "RecursiveSplitter", module = "fastnotebook._core")]
struct PyRecursiveSplitter {
    inner: RecursiveSplitter,
}

#[pymethods]
impl PyRecursiveSplitter {
    #[new]
    #[pyo3(signature = (chunk_size=4000, chunk_overlap=200, separators=None, keep_separator=None, strip_whitespace=true))]
    fn new(
        chunk_size: i64,
        chunk_overlap: i64,
        separators: Option<Vec<String>>,
        keep_separator: Option<&Bound<'_, PyAny>>,
        strip_whitespace: bool,
    ) -> PyResult<Self> {
        let sizes = ChunkSizes::new(chunk_size, chunk_overlap, None)?;
        let keep = keep_separator.map_or(Ok(KeepSeparator::Start), keep_separator_arg)?;
        let inner = RecursiveSplitter::new(
            sizes.chunk_size,
            sizes.chunk_overlap,
            separators.unwrap_or_default(),
            keep,
            strip_whitespace,
        )?;
        Ok(Self { inner })
    }

    /// The chunks of `text`, each at most `chunk_size` characters (a single
    /// piece with no separator inside aside), consecutive chunks sharing up to
    /// `chunk_overlap` characters.
    ///
    /// >>> RecursiveSplitter(chunk_size=10, chunk_overlap=0).split_text("one two three four five")
    /// ['one two', 'three', 'four five']
    fn split_text<'py>(&self, py: Python<'py>, text: UnreadText) -> PyResult<Bound<'py, PyList>> {
        for_width!(text.units(), |u| self.split_units(py, u))
    }
}

impl PyRecursiveSplitter {
    fn split_units<'py, T: CodeUnit>(
        &self,
        py: Python<'py>,
        units: &[T],
    ) -> PyResult<Bound<'py, PyList>> {
        let pieces = py.detach(|| self.inner.split(units, &CharLength));
        piece_list(py, units, &pieces)
    }
}

/// langchain's `MarkdownHeaderTextSplitter`: `split_text` returns
/// `(page_content, metadata)` pairs.
#[pyclass(frozen, name = "MarkdownHeaderSplitter", module = "fastnotebook._core")]
struct PyMarkdownHeaderSplitter {
    inner: MarkdownHeaderSplitter,
}

#[pymethods]
impl PyMarkdownHeaderSplitter {
    #[new]
    #[pyo3(signature = (headers_to_split_on, return_each_line=false, strip_headers=true))]
    fn new(
        headers_to_split_on: Vec<(String, String)>,
        return_each_line: bool,
        strip_headers: bool,
    ) -> PyResult<Self> {
        let inner =
            MarkdownHeaderSplitter::new(headers_to_split_on, return_each_line, strip_headers)?;
        Ok(Self { inner })
    }

    /// `(page_content, metadata)` pairs: the text under each header, and the
    /// headers (as named in `headers_to_split_on`) it sits under.
    ///
    /// >>> MarkdownHeaderSplitter([("#", "h1")]).split_text("# A\ntext\n# B\nmore")
    /// [('text', {'h1': 'A'}), ('more', {'h1': 'B'})]
    fn split_text<'py>(&self, py: Python<'py>, text: UnreadText) -> PyResult<Bound<'py, PyList>> {
        for_width!(text.units(), |u| self.split_units(py, u))
    }
}

impl PyMarkdownHeaderSplitter {
    fn split_units<'py, T: CodeUnit>(
        &self,
        py: Python<'py>,
        units: &[T],
    ) -> PyResult<Bound<'py, PyList>> {
        let sections = py.detach(|| self.inner.split(units));
        sections_to_py(py, sections, |s: &Vec<T>| new_string(py, &[s]))
    }
}

/// langchain's `HTMLHeaderTextSplitter` (BeautifulSoup with `html.parser`):
/// `split_text` returns `(page_content, metadata)` pairs.
#[pyclass(frozen, name = "HtmlHeaderSplitter", module = "fastnotebook._core")]
struct PyHtmlHeaderSplitter {
    inner: HtmlHeaderSplitter,
}

#[pymethods]
impl PyHtmlHeaderSplitter {
    #[new]
    #[pyo3(signature = (headers_to_split_on, return_each_element=false))]
    fn new(
        headers_to_split_on: Vec<(String, String)>,
        return_each_element: bool,
    ) -> PyResult<Self> {
        let inner = HtmlHeaderSplitter::new(headers_to_split_on, return_each_element)?;
        Ok(Self { inner })
    }

    /// `(page_content, metadata)` pairs: the text of each section, and the
    /// headers (as named in `headers_to_split_on`) it sits under. Raises
    /// `MarkupRejectedError` (a `ValueError`) for markup `html.parser` rejects.
    ///
    /// >>> HtmlHeaderSplitter([("h1", "h1")]).split_text("<h1>A</h1><p>text</p>")
    /// [('A', {'h1': 'A'}), ('text', {'h1': 'A'})]
    fn split_text<'py>(&self, py: Python<'py>, text: PyText) -> PyResult<Bound<'py, PyList>> {
        let sections = py.detach(|| self.inner.split(text.as_str()))?;
        sections_to_py(py, sections, |s: &String| text.to_py(py, s))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRecursiveSplitter>()?;
    m.add_class::<PyMarkdownHeaderSplitter>()?;
    m.add_class::<PyHtmlHeaderSplitter>()?;
    Ok(())
}
