//! Chunk records for Python: `_Chunker`, the options of
//! `fastnotebook.chunkers.chunk` parsed once, chunks one text (`chunk`),
//! many on all cores without the GIL (`chunk_many`), or one from the
//! embeddings of its sentences (`chunk_semantic`); the `Chunk` objects are
//! built here from the core's records.

use std::sync::Mutex;

use numpy::PyReadonlyArray2;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use super::args::{Parsed, PyLength, size_arg, unit_arg};
use super::chunk::{PyChunk, known};
use super::text::{PyText, UnreadText, detach_unless_short};
use super::values::value_to_py;
use crate::batch;
use crate::chunking::recursive::{CharLength, KeepSeparator};
use crate::records::strategies::semantic::{Threshold, ThresholdType};
use crate::records::{self, Chunked, ContextHeaders, Options, Strategy, UnitName};
use crate::text::Surrogates;
use crate::tokens::{Encoding, TokenLength};

/// The options of `fastnotebook.chunkers.chunk`, parsed and checked once;
/// `doc_id` is given per text.
#[pyclass(frozen, module = "fastnotebook._core", name = "_Chunker")]
pub struct PyChunker {
    options: Options,
    /// The caller's length function, when the unit is one.
    function: Option<Py<PyAny>>,
}

/// Texts shorter than this are chunked without releasing the GIL.
const DETACH_FROM: usize = 4096;

/// Code units of the texts a batch thread takes at a time.
const GROUP: usize = 1 << 16;

#[pymethods]
impl PyChunker {
    #[new]
    #[pyo3(signature = (
        strategy, chunk_size, overlap, max_size, unit, encoding, context_headers, separators,
        min_chunk_size = None, keep_separator = None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        strategy: Parsed<Strategy>,
        chunk_size: i64,
        overlap: i64,
        max_size: Option<i64>,
        unit: Bound<'_, PyAny>,
        encoding: Parsed<Encoding>,
        context_headers: Option<Parsed<ContextHeaders>>,
        separators: Option<Vec<String>>,
        min_chunk_size: Option<i64>,
        keep_separator: Option<Parsed<KeepSeparator>>,
    ) -> PyResult<Self> {
        let Parsed(mut strategy) = strategy;
        if let Some(separators) = separators {
            let Strategy::Recursive {
                separators: own, ..
            } = &mut strategy
            else {
                return Err(PyValueError::new_err(
                    "separators is an option of the 'recursive' strategy only",
                ));
            };
            *own = separators;
        }
        if let Some(Parsed(keep_separator)) = keep_separator {
            let Strategy::Recursive { keep, .. } = &mut strategy else {
                return Err(PyValueError::new_err(
                    "keep_separator is an option of the 'recursive' strategy only",
                ));
            };
            *keep = keep_separator;
        }
        let chunk_size = size_arg("chunk_size", chunk_size)?;
        let (unit, function) = unit_arg(&unit)?;
        if matches!(strategy, Strategy::Token) && unit != UnitName::Tokens {
            return Err(PyValueError::new_err(
                "the 'token' strategy measures in tokens: pass unit='tokens'",
            ));
        }
        let options = Options {
            strategy,
            chunk_size,
            overlap: size_arg("overlap", overlap)?,
            max_size: match max_size {
                Some(m) => size_arg("max_size", m)?,
                None => chunk_size,
            },
            unit,
            encoding: encoding.0,
            context_headers: context_headers.map_or(ContextHeaders::Off, |Parsed(c)| c),
            doc_id: None,
            min_chunk_size: min_chunk_size
                .map(|m| size_arg("min_chunk_size", m))
                .transpose()?,
        };
        options.validate()?;
        Ok(PyChunker { options, function })
    }

    /// What the ids of this chunker's chunks hash besides each chunk.
    #[getter]
    fn key(&self) -> String {
        self.options.id_key()
    }

    /// The chunks of one text.
    #[pyo3(signature = (text, doc_id = None))]
    fn chunk<'py>(
        &self,
        py: Python<'py>,
        text: PyText,
        doc_id: Option<String>,
    ) -> PyResult<Bound<'py, PyList>> {
        let options = Options {
            doc_id,
            ..self.options.clone()
        };
        let source = text.as_str();
        let records = match &self.function {
            Some(function) => {
                let length = PyLength {
                    function: function.clone_ref(py),
                    error: Mutex::new(None),
                };
                let records = records::chunk(source, &options, &length, None::<&TokenLength>)?;
                if let Some(e) = length.error.lock().ok().and_then(|mut e| e.take()) {
                    return Err(e);
                }
                records
            }
            None => {
                let work = || records::chunk_builtin(source, text.surrogates(), &options);
                detach_unless_short(py, source.len(), DETACH_FROM, options.encoding, work)?
            }
        };
        to_chunks(py, &text, records, options.encoding)
    }

    /// `chunk` of each text (`doc_ids[i]` its doc id), on all cores
    /// without the GIL.
    #[pyo3(signature = (texts, doc_ids = None))]
    fn chunk_many<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<UnreadText>,
        doc_ids: Option<Vec<Option<String>>>,
    ) -> PyResult<Bound<'py, PyList>> {
        if self.function.is_some() {
            return Err(PyValueError::new_err(
                "chunk_many runs in Rust on all cores: a Python length function needs chunk()",
            ));
        }
        let n = texts.len();
        let doc_ids = match doc_ids {
            Some(ids) if ids.len() != n => {
                return Err(PyValueError::new_err(format!(
                    "doc_ids has {} entries for {n} texts",
                    ids.len()
                )));
            }
            Some(ids) => ids,
            None => vec![None; n],
        };
        let options = self.options.clone();
        let encoding = options.encoding;
        let each = move |i: usize, text: UnreadText| {
            let options = Options {
                doc_id: doc_ids[i].clone(),
                ..options.clone()
            };
            let text = text.read(Surrogates::Map)?;
            let chunked = records::chunk_builtin(text.as_str(), text.surrogates(), &options)?;
            Ok::<_, crate::error::Error>((text, chunked))
        };
        let finish = |group: Vec<crate::error::Result<(PyText, Chunked)>>| {
            Python::attach(|py| {
                group
                    .into_iter()
                    .map(|made| {
                        let (text, records) = made?;
                        Ok(to_chunks(py, &text, records, encoding)?.unbind())
                    })
                    .collect::<Vec<PyResult<Py<PyList>>>>()
            })
        };
        let lists = py
            .detach(|| batch::longest_first_in_groups(texts, UnreadText::len, GROUP, each, finish));
        let lists = lists.into_iter().collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, lists)
    }

    /// The chunks of the semantic strategies from the embeddings of the
    /// sentences of `_sentence_spans(text)`, and the key their ids hash.
    #[pyo3(signature = (text, embeddings, threshold_type, threshold, merge_threshold, doc_id = None))]
    #[allow(clippy::too_many_arguments)]
    fn chunk_semantic<'py>(
        &self,
        py: Python<'py>,
        text: PyText,
        embeddings: Matrix<'py>,
        threshold_type: Parsed<ThresholdType>,
        threshold: Option<f64>,
        merge_threshold: Option<f64>,
        doc_id: Option<String>,
    ) -> PyResult<(Bound<'py, PyList>, String)> {
        if self.function.is_some() {
            return Err(PyValueError::new_err(
                "the semantic strategies measure in 'chars' or 'tokens'",
            ));
        }
        if let Some(t) = merge_threshold
            && !t.is_finite()
        {
            return Err(PyValueError::new_err("merge_threshold must be finite"));
        }
        let options = Options {
            strategy: Strategy::Semantic {
                threshold: Threshold::new(threshold_type.0, threshold)?,
                merge_threshold,
            },
            doc_id,
            ..self.options.clone()
        };
        let tokens = TokenLength::new(options.encoding.tokenizer(), text.surrogates());
        let source = text.as_str();
        let chunked = match &embeddings {
            Matrix::F32(m) => semantic(source, m, &options, &tokens)?,
            Matrix::F64(m) => semantic(source, m, &options, &tokens)?,
        };
        Ok((
            to_chunks(py, &text, chunked, options.encoding)?,
            options.id_key(),
        ))
    }
}

/// An embedding matrix, read where numpy keeps it.
#[derive(FromPyObject)]
enum Matrix<'py> {
    F32(PyReadonlyArray2<'py, f32>),
    F64(PyReadonlyArray2<'py, f64>),
}

fn semantic<E: Copy + Into<f64> + numpy::Element>(
    source: &str,
    matrix: &PyReadonlyArray2<'_, E>,
    options: &Options,
    tokens: &TokenLength,
) -> PyResult<Chunked> {
    let view = matrix.as_array();
    let (rows, dim) = view.dim();
    // Contiguous arrays are read in place; others are copied once.
    let owned;
    let data: &[E] = match view.as_slice() {
        Some(d) => d,
        None => {
            owned = view.iter().copied().collect::<Vec<E>>();
            &owned
        }
    };
    let e = records::strategies::semantic::Embeddings { data, rows, dim };
    Ok(match options.unit {
        UnitName::Tokens => records::chunk_semantic(source, &e, options, tokens, Some(tokens))?,
        _ => records::chunk_semantic(source, &e, options, &CharLength, None::<&TokenLength>)?,
    })
}

/// The `Chunk` objects of a text's records.
fn to_chunks<'py>(
    py: Python<'py>,
    text: &PyText,
    chunked: Chunked,
    encoding: Encoding,
) -> PyResult<Bound<'py, PyList>> {
    let Chunked {
        records,
        text: derived,
    } = chunked;
    let source = derived.as_deref().unwrap_or(text.as_str());
    let slices = match derived {
        // Slices of the source's own object.
        None => text.slices(
            py,
            records
                .iter()
                .filter(|r| r.text.is_none())
                .map(|r| r.range.clone()),
        )?,
        Some(_) => records
            .iter()
            .filter(|r| r.text.is_none())
            .map(|r| text.to_py(py, &source[r.range.clone()]))
            .collect::<PyResult<_>>()?,
    };
    let mut slices = slices.into_iter();
    let ids: Vec<Py<PyString>> = records
        .iter()
        .map(|r| PyString::new(py, &r.id).unbind())
        .collect();
    let mut out = Vec::with_capacity(records.len());
    let mut last_headings: Option<(&[records::Heading], Py<PyTuple>)> = None;
    for (i, r) in records.iter().enumerate() {
        let text_obj = match &r.text {
            Some(t) => text.to_py(py, t)?,
            None => slices
                .next()
                .ok_or_else(|| PyValueError::new_err("internal: missing slice"))?,
        };
        let embed_text = if r.header.is_empty() {
            text_obj.clone()
        } else {
            let body = r.text(source);
            let joined = format!("{}{}{body}", r.header, records::HEADER_SEPARATOR);
            text.to_py(py, &joined)?
        };
        let headings = match &last_headings {
            Some((hs, tuple)) if *hs == r.headings.as_slice() => tuple.clone_ref(py),
            _ => {
                let tuple = PyTuple::new(py, r.headings.iter().map(|h| h.text.as_str()))?.unbind();
                last_headings = Some((r.headings.as_slice(), tuple.clone_ref(py)));
                tuple
            }
        };
        let metadata = PyDict::new(py);
        for (k, v) in &r.metadata {
            metadata.set_item(k, value_to_py(py, v)?)?;
        }
        out.push(PyChunk {
            text: text_obj.unbind(),
            start: r.start,
            end: r.end,
            start_line: r.start_line,
            end_line: r.end_line,
            index: i,
            id: ids[i].clone_ref(py),
            prev_id: r.prev.map(|p| ids[p].clone_ref(py)),
            next_id: r.next.map(|n| ids[n].clone_ref(py)),
            headings,
            tokens: known(r.token_count),
            encoding,
            char_count: r.char_count,
            metadata: metadata.unbind(),
            embed_text: embed_text.unbind(),
        });
    }
    let objects = out
        .into_iter()
        .map(|c| Bound::new(py, c))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, objects)
}
/// The sentences of a text (code-point offsets), as the `sentence` and
/// semantic strategies cut it.
#[pyfunction]
fn _sentence_spans(py: Python<'_>, text: PyText) -> Vec<(usize, usize)> {
    let source = text.as_str();
    let spans = py.detach(|| records::strategies::sentence::sentences(source));
    let mut starts = crate::text::CharOffsets::new(source);
    let mut ends = crate::text::CharOffsets::new(source);
    spans
        .into_iter()
        .map(|r| (starts.of(r.start), ends.of(r.end)))
        .collect()
}
/// The text the `html` strategy's chunks are slices of.
#[pyfunction]
fn _html_text<'py>(py: Python<'py>, html: PyText) -> PyResult<Bound<'py, PyString>> {
    let (text, _) = py.detach(|| records::strategies::html::document(html.as_str()))?;
    html.to_py(py, &text)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyChunker>()?;
    m.add(
        "CHUNK_STRATEGIES",
        PyTuple::new(m.py(), records::STRATEGIES)?,
    )?;
    m.add_function(wrap_pyfunction!(_html_text, m)?)?;
    m.add_function(wrap_pyfunction!(_sentence_spans, m)?)
}
