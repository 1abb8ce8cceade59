//! Chunk records for Python: the `Chunk` class, `_chunk_records`,
//! `_chunk_records_many` (all cores, GIL released) and `_relink_chunks`
//! (ids and links again after the caller's post-processors).

use std::sync::{Mutex, OnceLock};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use super::text::{PyText, UnreadText};
use crate::batch;
use crate::chunking::recursive::{CharLength, LengthFunction};
use numpy::PyReadonlyArray2;

use crate::records::counts::{SourceTokens, SpanTokens};
use crate::records::strategies::semantic::Threshold;
use crate::records::{self, Chunked, ContextHeaders, Options, Strategy, UnitName, Value};
use crate::text::Surrogates;
use crate::tokens::{Encoding, TokenLength};

/// One chunk of a document (see `fastnotebook.chunkers`).
#[pyclass(frozen, module = "fastnotebook._core", name = "Chunk")]
pub struct PyChunk {
    #[pyo3(get)]
    text: Py<PyString>,
    #[pyo3(get)]
    start: usize,
    #[pyo3(get)]
    end: usize,
    #[pyo3(get)]
    start_line: usize,
    #[pyo3(get)]
    end_line: usize,
    #[pyo3(get)]
    index: usize,
    #[pyo3(get)]
    id: Py<PyString>,
    #[pyo3(get)]
    prev_id: Option<Py<PyString>>,
    #[pyo3(get)]
    next_id: Option<Py<PyString>>,
    #[pyo3(get)]
    headings: Py<PyTuple>,
    /// Counted in Rust on first use (unless the unit was tokens), then kept.
    tokens: OnceLock<usize>,
    encoding: Encoding,
    #[pyo3(get)]
    char_count: usize,
    #[pyo3(get)]
    metadata: Py<PyDict>,
    #[pyo3(get)]
    embed_text: Py<PyString>,
}

fn known(count: Option<usize>) -> OnceLock<usize> {
    let cell = OnceLock::new();
    if let Some(n) = count {
        let _ = cell.set(n);
    }
    cell
}

const FIELDS: [&str; 14] = [
    "text",
    "start",
    "end",
    "start_line",
    "end_line",
    "index",
    "id",
    "prev_id",
    "next_id",
    "headings",
    "token_count",
    "char_count",
    "metadata",
    "embed_text",
];

impl PyChunk {
    fn field<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        Ok(match name {
            "text" => self.text.bind(py).clone().into_any(),
            "start" => self.start.into_pyobject(py)?.into_any(),
            "end" => self.end.into_pyobject(py)?.into_any(),
            "start_line" => self.start_line.into_pyobject(py)?.into_any(),
            "end_line" => self.end_line.into_pyobject(py)?.into_any(),
            "index" => self.index.into_pyobject(py)?.into_any(),
            "id" => self.id.bind(py).clone().into_any(),
            "prev_id" => self.prev_id.clone_ref_opt(py).into_pyobject(py)?.into_any(),
            "next_id" => self.next_id.clone_ref_opt(py).into_pyobject(py)?.into_any(),
            "headings" => self.headings.bind(py).clone().into_any(),
            "token_count" => self.token_count(py)?.into_pyobject(py)?.into_any(),
            "char_count" => self.char_count.into_pyobject(py)?.into_any(),
            "metadata" => self.metadata.bind(py).clone().into_any(),
            "embed_text" => self.embed_text.bind(py).clone().into_any(),
            other => {
                return Err(PyTypeError::new_err(format!(
                    "Chunk has no field {other:?}"
                )));
            }
        })
    }
}

trait CloneRefOpt {
    fn clone_ref_opt(&self, py: Python<'_>) -> Self;
}

impl CloneRefOpt for Option<Py<PyString>> {
    fn clone_ref_opt(&self, py: Python<'_>) -> Self {
        self.as_ref().map(|s| s.clone_ref(py))
    }
}

fn opt_string(value: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<Py<PyString>>> {
    match value {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => Ok(Some(
            v.cast::<PyString>()
                .map_err(|_| PyTypeError::new_err(format!("{name} must be a str or None")))?
                .clone()
                .unbind(),
        )),
    }
}

#[pymethods]
impl PyChunk {
    #[new]
    #[pyo3(signature = (
        text, start, end, *, start_line = 1, end_line = 1, index = 0, id = None,
        prev_id = None, next_id = None, headings = None, token_count = None,
        char_count = None, metadata = None, embed_text = None, encoding = "o200k_base"
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        text: Bound<'_, PyString>,
        start: usize,
        end: usize,
        start_line: usize,
        end_line: usize,
        index: usize,
        id: Option<Bound<'_, PyString>>,
        prev_id: Option<Bound<'_, PyString>>,
        next_id: Option<Bound<'_, PyString>>,
        headings: Option<Bound<'_, PyAny>>,
        token_count: Option<usize>,
        char_count: Option<usize>,
        metadata: Option<Bound<'_, PyDict>>,
        embed_text: Option<Bound<'_, PyString>>,
        encoding: &str,
    ) -> PyResult<Self> {
        let encoding = encoding_arg(encoding)?;
        let headings = match headings {
            None => PyTuple::empty(py).unbind(),
            Some(h) => headings_tuple(&h)?,
        };
        let char_count = match char_count {
            Some(n) => n,
            None => text.len()?,
        };
        Ok(PyChunk {
            embed_text: embed_text.unwrap_or_else(|| text.clone()).unbind(),
            text: text.unbind(),
            start,
            end,
            start_line,
            end_line,
            index,
            id: id.map_or_else(|| PyString::new(py, "").unbind(), Bound::unbind),
            prev_id: prev_id.map(Bound::unbind),
            next_id: next_id.map(Bound::unbind),
            headings,
            tokens: known(token_count),
            encoding,
            char_count,
            metadata: metadata.map_or_else(|| PyDict::new(py).unbind(), Bound::unbind),
        })
    }

    /// A copy with the given fields changed. Changing `text` alone keeps
    /// the context header of `embed_text` and updates `char_count`.
    #[pyo3(signature = (**changes))]
    fn replace(&self, py: Python<'_>, changes: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut out = self.copy(py);
        let Some(changes) = changes else {
            return Ok(out);
        };
        for (key, value) in changes.iter() {
            let key: String = key.extract()?;
            match key.as_str() {
                "text" => out.text = value.cast::<PyString>()?.clone().unbind(),
                "start" => out.start = value.extract()?,
                "end" => out.end = value.extract()?,
                "start_line" => out.start_line = value.extract()?,
                "end_line" => out.end_line = value.extract()?,
                "index" => out.index = value.extract()?,
                "id" => out.id = value.cast::<PyString>()?.clone().unbind(),
                "prev_id" => out.prev_id = opt_string(Some(&value), "prev_id")?,
                "next_id" => out.next_id = opt_string(Some(&value), "next_id")?,
                "headings" => out.headings = headings_tuple(&value)?,
                "token_count" => out.tokens = known(Some(value.extract()?)),
                "char_count" => out.char_count = value.extract()?,
                "metadata" => out.metadata = value.cast::<PyDict>()?.clone().unbind(),
                "embed_text" => out.embed_text = value.cast::<PyString>()?.clone().unbind(),
                other => {
                    return Err(PyTypeError::new_err(format!(
                        "Chunk has no field {other:?}; fields: {}",
                        FIELDS.join(", ")
                    )));
                }
            }
        }
        if changes.contains("text")? {
            if !changes.contains("token_count")? {
                out.tokens = OnceLock::new();
            }
            let new_text = out.text.bind(py);
            if !changes.contains("char_count")? {
                out.char_count = new_text.len()?;
            }
            if !changes.contains("embed_text")? {
                // The old header, if the old embed_text was header + text.
                let old_embed = self.embed_text.bind(py).to_str()?;
                let old_text = self.text.bind(py).to_str()?;
                out.embed_text = match old_embed.strip_suffix(old_text) {
                    Some(header) if !header.is_empty() => {
                        PyString::new(py, &format!("{header}{}", new_text.to_str()?)).unbind()
                    }
                    _ => new_text.clone().unbind(),
                };
            }
        }
        Ok(out)
    }

    /// Tokens of `text` in the chunk's encoding (counted on first use).
    #[getter]
    fn token_count(&self, py: Python<'_>) -> PyResult<usize> {
        if let Some(&n) = self.tokens.get() {
            return Ok(n);
        }
        let text: PyText = self.text.bind(py).extract()?;
        let n =
            TokenLength::new(self.encoding.tokenizer(), text.surrogates()).length(text.as_str());
        Ok(*self.tokens.get_or_init(|| n))
    }

    /// The fields as a dict (`headings` a list, `metadata` a copy).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for name in FIELDS {
            let v = self.field(py, name)?;
            match name {
                "headings" => d.set_item(name, PyList::new(py, v.cast::<PyTuple>()?.iter())?)?,
                "metadata" => d.set_item(name, v.cast::<PyDict>()?.copy()?)?,
                _ => d.set_item(name, v)?,
            }
        }
        Ok(d)
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(other) = other.cast::<PyChunk>() else {
            return Ok(false);
        };
        let other = other.get();
        for name in FIELDS {
            if !self.field(py, name)?.eq(other.field(py, name)?)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let text = self.text.bind(py).repr()?;
        let headings = self.headings.bind(py).repr()?;
        Ok(format!(
            "Chunk(index={}, id={}, start={}, end={}, headings={headings}, text={text})",
            self.index,
            self.id.bind(py).repr()?,
            self.start,
            self.end,
        ))
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let kwargs = self.to_dict(py)?;
        let rebuild = py
            .import("fastnotebook.chunkers")?
            .getattr("_chunk_from_dict")?;
        PyTuple::new(
            py,
            [
                rebuild.into_any(),
                PyTuple::new(py, [kwargs.into_any()])?.into_any(),
            ],
        )
    }
}

impl PyChunk {
    fn copy(&self, py: Python<'_>) -> Self {
        PyChunk {
            text: self.text.clone_ref(py),
            start: self.start,
            end: self.end,
            start_line: self.start_line,
            end_line: self.end_line,
            index: self.index,
            id: self.id.clone_ref(py),
            prev_id: self.prev_id.clone_ref_opt(py),
            next_id: self.next_id.clone_ref_opt(py),
            headings: self.headings.clone_ref(py),
            tokens: self.tokens.clone(),
            encoding: self.encoding,
            char_count: self.char_count,
            metadata: self.metadata.clone_ref(py),
            embed_text: self.embed_text.clone_ref(py),
        }
    }
}

fn headings_tuple(value: &Bound<'_, PyAny>) -> PyResult<Py<PyTuple>> {
    let items: Vec<String> = value
        .try_iter()?
        .map(|item| item?.extract::<String>())
        .collect::<PyResult<_>>()
        .map_err(|_| PyTypeError::new_err("headings must be an iterable of str"))?;
    Ok(PyTuple::new(value.py(), items)?.unbind())
}

/// A caller's `str -> int` as a length function: called with the GIL, the
/// first error kept and raised once the split is done.
struct PyLength {
    function: Py<PyAny>,
    error: Mutex<Option<PyErr>>,
}

impl LengthFunction<str> for PyLength {
    fn length(&self, text: &str) -> usize {
        Python::attach(|py| {
            let result = self
                .function
                .bind(py)
                .call1((text,))
                .and_then(|n| n.extract::<i64>())
                .and_then(|n| {
                    usize::try_from(n).map_err(|_| {
                        PyValueError::new_err(format!("the length function returned {n} (< 0)"))
                    })
                });
            match result {
                Ok(n) => n,
                Err(e) => {
                    if let Ok(mut slot) = self.error.lock()
                        && slot.is_none()
                    {
                        *slot = Some(e);
                    }
                    0
                }
            }
        })
    }
}

fn strategy_arg(name: &str, separators: Option<Vec<String>>) -> PyResult<Strategy> {
    if separators.is_some() && name != "recursive" {
        return Err(PyValueError::new_err(
            "separators is an option of the 'recursive' strategy only",
        ));
    }
    match name {
        "recursive" => Ok(Strategy::Recursive {
            separators: separators.unwrap_or_default(),
        }),
        "token" => Ok(Strategy::Token),
        "markdown" => Ok(Strategy::Markdown),
        "sentence" => Ok(Strategy::Sentence),
        "json" => Ok(Strategy::Json),
        "html" => Ok(Strategy::Html),
        other => Err(PyValueError::new_err(format!(
            "unknown strategy {other:?}; choose one of {}",
            STRATEGIES.join(", ")
        ))),
    }
}

/// The strategies `strategy_arg` knows.
const STRATEGIES: [&str; 6] = ["recursive", "token", "markdown", "sentence", "json", "html"];

fn encoding_arg(name: &str) -> PyResult<Encoding> {
    Ok(name.parse()?)
}

fn size_arg(name: &str, value: i64) -> PyResult<usize> {
    usize::try_from(value)
        .map_err(|_| PyValueError::new_err(format!("{name} must be >= 0, got {value}")))
}

/// The options of a call, and the caller's length function if any.
#[allow(clippy::too_many_arguments)]
fn options_arg(
    strategy: &str,
    chunk_size: i64,
    overlap: i64,
    max_size: Option<i64>,
    unit: &Bound<'_, PyAny>,
    encoding: &str,
    context_headers: Option<&str>,
    doc_id: Option<String>,
    separators: Option<Vec<String>>,
) -> PyResult<(Options, Option<Py<PyAny>>)> {
    let strategy = strategy_arg(strategy, separators)?;
    let chunk_size = size_arg("chunk_size", chunk_size)?;
    let (unit, function) = if let Ok(name) = unit.extract::<String>() {
        match name.as_str() {
            "chars" => (UnitName::Chars, None),
            "tokens" => (UnitName::Tokens, None),
            other => {
                return Err(PyValueError::new_err(format!(
                    "unit must be 'chars', 'tokens' or a callable, got {other:?}"
                )));
            }
        }
    } else if unit.is_callable() {
        (UnitName::Custom, Some(unit.clone().unbind()))
    } else {
        return Err(PyTypeError::new_err(
            "unit must be 'chars', 'tokens' or a callable str -> int",
        ));
    };
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
        encoding: encoding_arg(encoding)?,
        context_headers: ContextHeaders::from_name(context_headers)?,
        doc_id,
    };
    options.validate()?;
    Ok((options, function))
}

/// Chunks one text in Rust (no GIL needed) with a built-in unit.
fn chunk_builtin(text: &PyText, options: &Options) -> crate::error::Result<Chunked> {
    let tokenizer = options.encoding.tokenizer();
    let surrogates = text.surrogates();
    let tokens = TokenLength::new(tokenizer, surrogates);
    match options.unit {
        // One counting pass gives the count of every span of the source
        // (`records::counts`): the strategies measure blocks, packs and
        // chunks again and again. The `token` strategy keeps its own table;
        // `html` chunks another text and `json` measures the JSON texts it
        // writes (no span of the source: the pass would be extra); lone
        // surrogates need repair.
        UnitName::Tokens
            if surrogates.is_none()
                && !matches!(
                    options.strategy,
                    Strategy::Token | Strategy::Html | Strategy::Json
                ) =>
        {
            let spans = SpanTokens::new(tokens, Some(SourceTokens::new(tokenizer, text.as_str())));
            records::chunk(text.as_str(), options, &spans, Some(&spans))
        }
        // Counted while splitting anyway: the counts come almost free.
        UnitName::Tokens => records::chunk(text.as_str(), options, &tokens, Some(&tokens)),
        _ => records::chunk(text.as_str(), options, &CharLength, None::<&TokenLength>),
    }
}

pub fn value_to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(f) => f.into_pyobject(py)?.into_any(),
        Value::Str(s) => PyString::new(py, s).into_any(),
        Value::List(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(value_to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Map(entries) => {
            let dict = PyDict::new(py);
            for (k, v) in entries {
                dict.set_item(k, value_to_py(py, v)?)?;
            }
            dict.into_any()
        }
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

/// Texts shorter than this are chunked without releasing the GIL.
const DETACH_FROM: usize = 4096;

/// The chunks of one text, and the key their ids hash.
#[pyfunction]
#[pyo3(signature = (
    text, strategy = "recursive", chunk_size = 1000, overlap = 0, max_size = None,
    unit = None, encoding = "o200k_base", context_headers = None, doc_id = None,
    separators = None
))]
#[allow(clippy::too_many_arguments)]
fn _chunk_records<'py>(
    py: Python<'py>,
    text: PyText,
    strategy: &str,
    chunk_size: i64,
    overlap: i64,
    max_size: Option<i64>,
    unit: Option<Bound<'py, PyAny>>,
    encoding: &str,
    context_headers: Option<&str>,
    doc_id: Option<String>,
    separators: Option<Vec<String>>,
) -> PyResult<(Bound<'py, PyList>, String)> {
    let unit = unit.unwrap_or_else(|| PyString::new(py, "chars").into_any());
    let (options, function) = options_arg(
        strategy,
        chunk_size,
        overlap,
        max_size,
        &unit,
        encoding,
        context_headers,
        doc_id,
        separators,
    )?;
    let records = match function {
        Some(function) => {
            let length = PyLength {
                function,
                error: Mutex::new(None),
            };
            let records = records::chunk(text.as_str(), &options, &length, None::<&TokenLength>)?;
            if let Some(e) = length.error.lock().ok().and_then(|mut e| e.take()) {
                return Err(e);
            }
            records
        }
        None if text.as_str().len() < DETACH_FROM
            && options.encoding.loaded_tokenizer().is_some() =>
        {
            chunk_builtin(&text, &options)?
        }
        None => py.detach(|| chunk_builtin(&text, &options))?,
    };
    Ok((
        to_chunks(py, &text, records, options.encoding)?,
        options.id_key(),
    ))
}

/// Code units of the texts a batch thread takes at a time.
const GROUP: usize = 1 << 16;

/// `_chunk_records` of each text, on all cores without the GIL.
#[pyfunction]
#[pyo3(signature = (
    texts, strategy = "recursive", chunk_size = 1000, overlap = 0, max_size = None,
    unit = None, encoding = "o200k_base", context_headers = None, doc_ids = None,
    separators = None
))]
#[allow(clippy::too_many_arguments)]
fn _chunk_records_many<'py>(
    py: Python<'py>,
    texts: Vec<UnreadText>,
    strategy: &str,
    chunk_size: i64,
    overlap: i64,
    max_size: Option<i64>,
    unit: Option<Bound<'py, PyAny>>,
    encoding: &str,
    context_headers: Option<&str>,
    doc_ids: Option<Vec<Option<String>>>,
    separators: Option<Vec<String>>,
) -> PyResult<(Bound<'py, PyList>, String)> {
    let unit = unit.unwrap_or_else(|| PyString::new(py, "chars").into_any());
    let (options, function) = options_arg(
        strategy,
        chunk_size,
        overlap,
        max_size,
        &unit,
        encoding,
        context_headers,
        None,
        separators,
    )?;
    if function.is_some() {
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
    let key = options.id_key();
    let encoding = options.encoding;
    let each = move |i: usize, text: UnreadText| {
        let mut options = options.clone();
        options.doc_id = doc_ids[i].clone();
        let text = text.read(Surrogates::Map)?;
        let chunked = chunk_builtin(&text, &options)?;
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
    let lists =
        py.detach(|| batch::longest_first_in_groups(texts, UnreadText::len, GROUP, each, finish));
    let lists = lists.into_iter().collect::<PyResult<Vec<_>>>()?;
    Ok((PyList::new(py, lists)?, key))
}

/// The chunks again with `index`, `id`, `prev_id`, `next_id`, `char_count`
/// and `token_count` recomputed (after the caller's post-processors).
#[pyfunction]
#[pyo3(signature = (chunks, key, doc_id = None, encoding = "o200k_base"))]
fn _relink_chunks<'py>(
    py: Python<'py>,
    chunks: Vec<Bound<'py, PyAny>>,
    key: &str,
    doc_id: Option<&str>,
    encoding: &str,
) -> PyResult<Bound<'py, PyList>> {
    let encoding = encoding_arg(encoding)?;
    let mut made: Vec<(PyChunk, PyText)> = Vec::with_capacity(chunks.len());
    for (i, c) in chunks.iter().enumerate() {
        let c = c.cast::<PyChunk>().map_err(|_| {
            PyTypeError::new_err(format!(
                "a post-processor returned {} for chunk {i}; expected a Chunk or None",
                c.get_type()
                    .name()
                    .map_or_else(|_| "?".to_string(), |n| n.to_string())
            ))
        })?;
        let mut copy = c.get().copy(py);
        let text: PyText = copy.text.bind(py).extract()?;
        copy.index = i;
        copy.char_count = copy.text.bind(py).len()?;
        // Counted again on first use.
        copy.tokens = OnceLock::new();
        copy.encoding = encoding;
        made.push((copy, text));
    }
    let linked = records::link(made.len(), |k| {
        let (c, text) = &made[k];
        records::chunk_id(doc_id, key, c.start, c.end, text.as_str())
    });
    let ids: Vec<Py<PyString>> = linked
        .iter()
        .map(|l| PyString::new(py, &l.id).unbind())
        .collect();
    let made: Vec<PyChunk> = made
        .into_iter()
        .zip(&linked)
        .enumerate()
        .map(|(k, ((mut c, _), l))| {
            c.id = ids[k].clone_ref(py);
            c.prev_id = l.prev.map(|p| ids[p].clone_ref(py));
            c.next_id = l.next.map(|n| ids[n].clone_ref(py));
            c
        })
        .collect();
    let objects = made
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

/// An embedding matrix, read where numpy keeps it.
#[derive(FromPyObject)]
enum Matrix<'py> {
    F32(PyReadonlyArray2<'py, f32>),
    F64(PyReadonlyArray2<'py, f64>),
}

fn threshold_arg(kind: &str, amount: Option<f64>) -> PyResult<Threshold> {
    let finite = |x: f64| {
        if x.is_finite() {
            Ok(x)
        } else {
            Err(PyValueError::new_err(format!(
                "threshold must be finite, got {x}"
            )))
        }
    };
    match kind {
        "percentile" => {
            let p = finite(amount.unwrap_or(95.0))?;
            if !(0.0..=100.0).contains(&p) {
                return Err(PyValueError::new_err(format!(
                    "a percentile threshold is within 0-100, got {p}"
                )));
            }
            Ok(Threshold::Percentile(p))
        }
        "std" => Ok(Threshold::StdDev(finite(amount.unwrap_or(3.0))?)),
        "absolute" => Ok(Threshold::Absolute(finite(amount.unwrap_or(0.5))?)),
        other => Err(PyValueError::new_err(format!(
            "threshold_type must be 'percentile', 'std' or 'absolute', got {other:?}"
        ))),
    }
}

/// The chunks of the semantic strategies from the embeddings of the
/// sentences of `_sentence_spans(text)`.
#[pyfunction]
#[pyo3(signature = (
    text, embeddings, threshold_type = "percentile", threshold = None, merge_threshold = None,
    chunk_size = 1000, overlap = 0, max_size = None, unit = None, encoding = "o200k_base",
    context_headers = None, doc_id = None
))]
#[allow(clippy::too_many_arguments)]
fn _chunk_semantic<'py>(
    py: Python<'py>,
    text: PyText,
    embeddings: Matrix<'py>,
    threshold_type: &str,
    threshold: Option<f64>,
    merge_threshold: Option<f64>,
    chunk_size: i64,
    overlap: i64,
    max_size: Option<i64>,
    unit: Option<Bound<'py, PyAny>>,
    encoding: &str,
    context_headers: Option<&str>,
    doc_id: Option<String>,
) -> PyResult<(Bound<'py, PyList>, String)> {
    let unit = unit.unwrap_or_else(|| PyString::new(py, "chars").into_any());
    let (mut options, function) = options_arg(
        "recursive",
        chunk_size,
        overlap,
        max_size,
        &unit,
        encoding,
        context_headers,
        doc_id,
        None,
    )?;
    if function.is_some() {
        return Err(PyValueError::new_err(
            "the semantic strategies measure in 'chars' or 'tokens'",
        ));
    }
    if let Some(t) = merge_threshold
        && !t.is_finite()
    {
        return Err(PyValueError::new_err("merge_threshold must be finite"));
    }
    options.strategy = Strategy::Semantic {
        threshold: threshold_arg(threshold_type, threshold)?,
        merge_threshold,
    };
    let tokens = TokenLength::new(options.encoding.tokenizer(), text.surrogates());
    let source = text.as_str();
    fn run<E: Copy + Into<f64> + numpy::Element>(
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
    let chunked = match &embeddings {
        Matrix::F32(m) => run(source, m, &options, &tokens)?,
        Matrix::F64(m) => run(source, m, &options, &tokens)?,
    };
    Ok((
        to_chunks(py, &text, chunked, options.encoding)?,
        options.id_key(),
    ))
}

/// The text the `html` strategy's chunks are slices of.
#[pyfunction]
fn _html_text<'py>(py: Python<'py>, html: PyText) -> PyResult<Bound<'py, PyString>> {
    let (text, _) = py.detach(|| records::strategies::html::document(html.as_str()))?;
    html.to_py(py, &text)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyChunk>()?;
    m.add("CHUNK_STRATEGIES", PyTuple::new(m.py(), STRATEGIES)?)?;
    m.add_function(wrap_pyfunction!(_chunk_records, m)?)?;
    m.add_function(wrap_pyfunction!(_chunk_records_many, m)?)?;
    m.add_function(wrap_pyfunction!(_html_text, m)?)?;
    m.add_function(wrap_pyfunction!(_sentence_spans, m)?)?;
    m.add_function(wrap_pyfunction!(_chunk_semantic, m)?)?;
    m.add_function(wrap_pyfunction!(_relink_chunks, m)?)
}
