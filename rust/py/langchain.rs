//! Bindings for `fastnotebook.langchain`: langchain-text-splitters' character,
//! recursive, token and Markdown syntax splitters with `len` or exact
//! tiktoken lengths (the `Document`s are made in
//! [`super::langchain_documents`]).
//!
//! The Python module decides when these are exactly what the LangChain class
//! would do; here they only do it.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use super::strings::piece_list;
use super::text::{PyText, UnreadText};
use crate::chunking::markdown_syntax::MarkdownSyntaxSplitter;
use crate::chunking::recursive::{CharLength, KeepSeparator, Piece, RecursiveSplitter};
use crate::text::CodeUnits;
use crate::tokens::{Encoding, TokenLength};

fn encoding_arg(name: &str) -> PyResult<Encoding> {
    Ok(name.parse()?)
}

fn size_arg(name: &str, value: i64, min: i64) -> PyResult<usize> {
    if value < min {
        return Err(PyValueError::new_err(format!(
            "{name} must be >= {min}, got {value}"
        )));
    }
    Ok(value as usize)
}

/// How the text is cut.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `RecursiveCharacterTextSplitter`.
    Recursive,
    /// `CharacterTextSplitter`: the first separator, no recursion.
    Character,
}

/// `RecursiveCharacterTextSplitter` or `CharacterTextSplitter` with literal
/// separators and `len` (encoding `None`) or a tiktoken count as length.
#[pyclass(frozen, name = "LangchainSplitter", module = "fastnotebook._core")]
struct PyLangchainSplitter {
    inner: RecursiveSplitter,
    mode: Mode,
    encoding: Option<Encoding>,
}

#[pymethods]
impl PyLangchainSplitter {
    #[new]
    #[pyo3(signature = (mode, chunk_size, chunk_overlap, separators, keep_separator, strip_whitespace, encoding=None))]
    fn new(
        mode: &str,
        chunk_size: i64,
        chunk_overlap: i64,
        separators: Vec<String>,
        keep_separator: Option<&str>,
        strip_whitespace: bool,
        encoding: Option<&str>,
    ) -> PyResult<Self> {
        let mode = match mode {
            "recursive" => Mode::Recursive,
            "character" => Mode::Character,
            other => {
                return Err(PyValueError::new_err(format!(
                    "mode must be 'recursive' or 'character', got {other:?}"
                )));
            }
        };
        let keep = match keep_separator {
            None => KeepSeparator::Discard,
            Some("start") => KeepSeparator::Start,
            Some("end") => KeepSeparator::End,
            Some(other) => {
                return Err(PyValueError::new_err(format!(
                    "keep_separator must be None, 'start' or 'end', got {other:?}"
                )));
            }
        };
        if separators.is_empty() {
            return Err(PyValueError::new_err("separators must not be empty"));
        }
        let encoding = encoding.map(encoding_arg).transpose()?;
        let inner = RecursiveSplitter::new(
            size_arg("chunk_size", chunk_size, 1)?,
            size_arg("chunk_overlap", chunk_overlap, 0)?,
            separators,
            keep,
            strip_whitespace,
        )?;
        Ok(Self {
            inner,
            mode,
            encoding,
        })
    }

    /// The chunks of `text`, as the LangChain class's `split_text`.
    fn split_text<'py>(&self, py: Python<'py>, text: UnreadText) -> PyResult<Bound<'py, PyList>> {
        let split = py.detach(|| self.split_one(text))?;
        split.into_list(py)
    }
}

/// The chunks of one text, before their strings are made (which needs the
/// GIL): ranges of its code units, or of its UTF-8 for token lengths.
enum Split {
    Latin1(UnreadText, Vec<Piece<Vec<u8>>>),
    Ucs2(UnreadText, Vec<Piece<Vec<u16>>>),
    Ucs4(UnreadText, Vec<Piece<Vec<u32>>>),
    Utf8(PyText, Vec<Piece<String>>),
}

impl Split {
    fn into_list(self, py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
        match self {
            Split::Latin1(text, pieces) => match text.units() {
                CodeUnits::Latin1(u) => piece_list(py, u, &pieces),
                _ => Err(units_changed()),
            },
            Split::Ucs2(text, pieces) => match text.units() {
                CodeUnits::Ucs2(u) => piece_list(py, u, &pieces),
                _ => Err(units_changed()),
            },
            Split::Ucs4(text, pieces) => match text.units() {
                CodeUnits::Ucs4(u) => piece_list(py, u, &pieces),
                _ => Err(units_changed()),
            },
            Split::Utf8(text, pieces) => {
                let spans = pieces.iter().filter_map(|p| match p {
                    Piece::Span(r) => Some(r.clone()),
                    Piece::Text(_) => None,
                });
                let mut slices = text.slices(py, spans)?.into_iter();
                let items = pieces
                    .iter()
                    .map(|p| match p {
                        Piece::Span(_) => slices.next().ok_or_else(|| {
                            PyValueError::new_err("internal error: missing chunk slice")
                        }),
                        Piece::Text(t) => text.to_py(py, t),
                    })
                    .collect::<PyResult<Vec<_>>>()?;
                PyList::new(py, items)
            }
        }
    }
}

fn units_changed() -> PyErr {
    PyValueError::new_err("internal error: a string's code units changed width")
}

impl PyLangchainSplitter {
    /// Splits one text (needs no GIL).
    fn split_one(&self, text: UnreadText) -> crate::error::Result<Split> {
        let Some(encoding) = self.encoding else {
            return Ok(match text.units() {
                CodeUnits::Latin1(u) => {
                    let pieces = self.pieces(u, &CharLength);
                    Split::Latin1(text, pieces)
                }
                CodeUnits::Ucs2(u) => {
                    let pieces = self.pieces(u, &CharLength);
                    Split::Ucs2(text, pieces)
                }
                CodeUnits::Ucs4(u) => {
                    let pieces = self.pieces(u, &CharLength);
                    Split::Ucs4(text, pieces)
                }
            });
        };
        let text = text.read(crate::text::Surrogates::Map)?;
        let length = TokenLength::new(encoding.tokenizer(), text.surrogates());
        let pieces = self.pieces(text.as_str(), &length);
        Ok(Split::Utf8(text, pieces))
    }

    fn pieces<S, L>(&self, text: &S, length: &L) -> Vec<Piece<S::Owned>>
    where
        S: crate::chunking::splittable::Splittable + ?Sized,
        L: crate::chunking::recursive::LengthFunction<S>,
    {
        match self.mode {
            Mode::Recursive => self.inner.split(text, length),
            Mode::Character => self.inner.split_once(text, length),
        }
    }
}

/// `TokenTextSplitter.split_text` for text holding no special token: the
/// tokens in windows of `chunk_size` that start `chunk_size - chunk_overlap`
/// apart, each decoded as tiktoken decodes (invalid UTF-8 replaced).
#[pyfunction]
fn token_windows<'py>(
    py: Python<'py>,
    text: PyText,
    encoding: &str,
    chunk_size: i64,
    chunk_overlap: i64,
) -> PyResult<Bound<'py, PyList>> {
    let encoding = encoding_arg(encoding)?;
    let size = size_arg("chunk_size", chunk_size, 1)?;
    let overlap = size_arg("chunk_overlap", chunk_overlap, 0)?;
    if overlap >= size {
        return Err(PyValueError::new_err(
            "tokens_per_chunk must be greater than chunk_overlap",
        ));
    }
    let text = text.for_tiktoken();
    let ranges = py.detach(|| {
        encoding
            .tokenizer()
            .token_windows(&text, size, size - overlap)
    });
    let bytes = text.as_bytes();
    let windows: Vec<std::borrow::Cow<'_, str>> = ranges
        .into_iter()
        .map(|r| String::from_utf8_lossy(&bytes[r]))
        .filter(|w| !w.is_empty())
        .collect();
    let items = windows
        .iter()
        .map(|w| super::strings::new_string_utf8(py, w))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// langchain's `ExperimentalMarkdownSyntaxTextSplitter`: `split_text`
/// returns the `(page_content, metadata)` pairs and the header path at the
/// end of the text (`(depth, text)` pairs), which the class keeps.
#[pyclass(frozen, name = "MarkdownSyntaxSplitter", module = "fastnotebook._core")]
struct PyMarkdownSyntaxSplitter {
    inner: MarkdownSyntaxSplitter,
}

#[pymethods]
impl PyMarkdownSyntaxSplitter {
    #[new]
    #[pyo3(signature = (headers, strip_headers, return_each_line))]
    fn new(headers: Vec<(String, String)>, strip_headers: bool, return_each_line: bool) -> Self {
        Self {
            inner: MarkdownSyntaxSplitter::new(&headers, strip_headers, return_each_line),
        }
    }

    #[allow(clippy::type_complexity)]
    fn split_text<'py>(
        &self,
        py: Python<'py>,
        text: PyText,
    ) -> PyResult<(Bound<'py, PyList>, Vec<(usize, Bound<'py, PyString>)>)> {
        let split = py.detach(|| self.inner.split(text.as_str()));
        let chunks = split
            .chunks
            .iter()
            .map(|chunk| {
                let metadata = PyDict::new(py);
                for (key, value) in &chunk.metadata {
                    metadata.set_item(key.as_str(), text.to_py(py, value)?)?;
                }
                Ok((text.to_py(py, &chunk.content)?, metadata))
            })
            .collect::<PyResult<Vec<_>>>()?;
        let stack = split
            .header_stack
            .iter()
            .map(|(depth, title)| Ok((*depth, text.to_py(py, title)?)))
            .collect::<PyResult<Vec<_>>>()?;
        Ok((PyList::new(py, chunks)?, stack))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLangchainSplitter>()?;
    m.add_class::<PyMarkdownSyntaxSplitter>()?;
    m.add_function(wrap_pyfunction!(token_windows, m)?)?;
    Ok(())
}
