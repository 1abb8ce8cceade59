//! Bindings for content-type detection, `chunk_text` and the three splitters.
//! Which way a text is chunked is the core's decision
//! ([`crate::chunking::route`]); here its code units or UTF-8 are taken from
//! the `str` and the chunks made into strings.

use pyo3::exceptions::PyValueError;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use super::text::{
    PyText, UnreadText, UnwrittenUnits, new_string, new_unwritten_string, piece_list,
};
use crate::batch;
use crate::chunking::detect::{self, ContentType};
use crate::chunking::html::HtmlHeaderSplitter;
use crate::chunking::markdown::MarkdownHeaderSplitter;
use crate::chunking::recursive::{CharLength, KeepSeparator, RecursiveSplitter};
use crate::chunking::route::{self, Unit, UnitChunks, WidthChunks};
use crate::chunking::{ChunkSizes, Chunks, Section, Source};
use crate::error::Result;
use crate::for_width;
use crate::text::{CodeUnit, CodeUnits, Surrogates};

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

/// The strings of chunks of a text split as UTF-8.
fn chunk_strings<'py>(
    py: Python<'py>,
    text: &PyText,
    chunks: &Chunks,
) -> PyResult<Vec<Bound<'py, PyString>>> {
    let input_ranges = chunks
        .chunks
        .iter()
        .filter(|c| c.source == Source::Input)
        .map(|c| c.range.clone());
    let mut slices = text.slices(py, input_ranges)?.into_iter();
    chunks
        .chunks
        .iter()
        .map(|c| match c.source {
            Source::Input => slices
                .next()
                .ok_or_else(|| PyValueError::new_err("internal error: missing chunk slice")),
            Source::Rebuilt => text.to_py(py, &chunks.rebuilt[c.range.clone()]),
        })
        .collect()
}

/// The chunks of one text, on its code units or on its UTF-8 (see
/// [`route`]), with what they are slices of.
enum Chunked {
    Units(UnreadText, WidthChunks),
    Utf8(PyText, Chunks),
}

impl Chunked {
    /// Chunks one text (needs no GIL).
    fn new(
        text: UnreadText,
        content_type: Option<ContentType>,
        path: Option<&str>,
        sizes: ChunkSizes,
        unit: Unit,
    ) -> Result<Chunked> {
        let (units, ascii) = (text.units(), text.is_ascii());
        if let Some(chunks) =
            route::chunk_code_units(units, ascii, content_type, path, sizes, unit)?
        {
            return Ok(Chunked::Units(text, chunks));
        }
        let text = text.read(Surrogates::Map)?;
        let chunks = route::chunk_utf8(
            text.as_str(),
            text.surrogates(),
            content_type,
            path,
            sizes,
            unit,
        )?;
        Ok(Chunked::Utf8(text, chunks))
    }

    /// The type the text was split as, and its length in the unit.
    fn summary(&self) -> (Option<ContentType>, usize) {
        match self {
            Chunked::Units(_, c) => (c.content_type(), c.input_length()),
            Chunked::Utf8(_, c) => (c.content_type, c.input_length),
        }
    }
}

/// A text's chunks as Python strings, made with the GIL: those of code
/// units are allocated then and written after, without it.
struct Strings<'py> {
    strings: Vec<Bound<'py, PyString>>,
    unwritten: Vec<UnwrittenUnits>,
}

impl Chunked {
    /// The chunks' strings, allocated (the caller drops the chunks, which
    /// needs no GIL).
    fn allocate<'py>(&mut self, py: Python<'py>) -> PyResult<Strings<'py>> {
        match self {
            Chunked::Utf8(text, chunks) => {
                if chunks.chunks.iter().all(|c| c.source == Source::Rebuilt) {
                    // Peak memory: the input's copy is not needed to make the strings.
                    text.release_copy();
                }
                let strings = chunk_strings(py, text, chunks)?;
                Ok(Strings {
                    strings,
                    unwritten: Vec::new(),
                })
            }
            Chunked::Units(text, chunks) => {
                for_width!(chunks, WidthChunks, |c| allocate_units(py, text.units(), c))
            }
        }
    }

    /// Writes the characters of the strings [`Self::allocate`] left
    /// unwritten (needs no GIL).
    ///
    /// # Safety
    /// `unwritten` must come from this text's `allocate`, with its strings
    /// alive and seen by no one yet.
    unsafe fn write(&self, unwritten: Vec<UnwrittenUnits>) -> PyResult<()> {
        match self {
            Chunked::Utf8(..) => Ok(()),
            // SAFETY: the caller's contract.
            Chunked::Units(text, chunks) => for_width!(chunks, WidthChunks, |c| unsafe {
                write_units(text.units(), c, unwritten)
            }),
        }
    }

    /// The Python list of the chunks.
    fn list<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let Strings { strings, unwritten } = self.allocate(py)?;
        // SAFETY: just allocated, and `strings` keeps them alive unseen.
        unsafe { self.write(unwritten)? };
        PyList::new(py, strings)
    }
}

/// The units of a text of the width of its chunks.
fn units_of<'a, T: CodeUnit>(units: CodeUnits<'a>) -> PyResult<&'a [T]> {
    T::units_of(units).ok_or_else(|| PyValueError::new_err("internal error: code units changed"))
}

/// New strings for chunks of the code units `input`, not yet written.
fn allocate_units<'py, T: CodeUnit>(
    py: Python<'py>,
    input: CodeUnits<'_>,
    unit_chunks: &UnitChunks<T>,
) -> PyResult<Strings<'py>> {
    let input = units_of(input)?;
    let UnitChunks { chunks, max_chars } = unit_chunks;
    // Sized up front (collecting pairs, then unzipping them, grew both).
    let mut strings = Vec::with_capacity(chunks.chunks.len());
    let mut unwritten = Vec::with_capacity(chunks.chunks.len());
    for (c, &max) in chunks.chunks.iter().zip(max_chars) {
        let (string, units) = new_unwritten_string(py, chunks.text(input, c).len(), max)?;
        strings.push(string);
        unwritten.push(units);
    }
    Ok(Strings { strings, unwritten })
}

/// Writes the strings [`allocate_units`] made.
///
/// # Safety
/// As [`Chunked::write`].
unsafe fn write_units<T: CodeUnit>(
    input: CodeUnits<'_>,
    unit_chunks: &UnitChunks<T>,
    unwritten: Vec<UnwrittenUnits>,
) -> PyResult<()> {
    let input = units_of(input)?;
    let chunks = &unit_chunks.chunks;
    for (units, c) in unwritten.into_iter().zip(&chunks.chunks) {
        // SAFETY: the caller's contract.
        unsafe { units.write(&[chunks.text(input, c)]) };
    }
    Ok(())
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

/// Code units of the texts a batch thread takes at a time: the calling thread
/// makes the strings of what it is handed at once, so short texts do not each
/// cost it two takes of the GIL.
const GIL_GROUP: usize = 1 << 16;

/// The lists of a group of chunked texts: their strings allocated with the
/// GIL, written without it, then put in lists with it again.
fn lists_of(group: Vec<Result<Chunked>>) -> Vec<PyResult<Py<PyList>>> {
    Python::attach(|py| {
        // Each text's strings, or its error; and what is left to write.
        let (strings, mut to_write): (Vec<PyResult<_>>, Vec<_>) = group
            .into_iter()
            .map(|chunked| {
                let allocated = chunked.map_err(PyErr::from).and_then(|mut chunked| {
                    let strings = chunked.allocate(py)?;
                    Ok((chunked, strings))
                });
                match allocated {
                    Ok((chunked, Strings { strings, unwritten })) => {
                        (Ok(strings), Some((chunked, unwritten)))
                    }
                    Err(e) => (Err(e), None),
                }
            })
            .unzip();
        let written: Vec<PyResult<()>> = py.detach(|| {
            to_write
                .iter_mut()
                .map(|w| match w {
                    // SAFETY: each text's own, allocated above; `strings`
                    // keeps them alive, and no one has seen them.
                    Some((chunked, unwritten)) => unsafe {
                        chunked.write(std::mem::take(unwritten))
                    },
                    None => Ok(()),
                })
                .collect()
        });
        strings
            .into_iter()
            .zip(written)
            .map(|(strings, written)| {
                written?;
                Ok(PyList::new(py, strings?)?.unbind())
            })
            .collect()
    })
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
    m.add_class::<PyRecursiveSplitter>()?;
    m.add_class::<PyMarkdownHeaderSplitter>()?;
    m.add_class::<PyHtmlHeaderSplitter>()?;
    Ok(())
}
