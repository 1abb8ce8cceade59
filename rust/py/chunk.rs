//! The `Chunk` record of `fastnotebook.chunkers` and `_relink_chunks` (ids
//! and links again after the caller's post-processors).

use std::sync::OnceLock;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use super::text::PyText;
use crate::chunking::recursive::LengthFunction;
use crate::records::{self, ContextHeaders};
use crate::tokens::{Encoding, TokenLength};

/// One chunk of a document (see `fastnotebook.chunkers`).
#[pyclass(frozen, module = "fastnotebook._core", name = "Chunk")]
pub struct PyChunk {
    #[pyo3(get)]
    pub(super) text: Py<PyString>,
    #[pyo3(get)]
    pub(super) start: usize,
    #[pyo3(get)]
    pub(super) end: usize,
    #[pyo3(get)]
    pub(super) start_line: usize,
    #[pyo3(get)]
    pub(super) end_line: usize,
    #[pyo3(get)]
    pub(super) index: usize,
    #[pyo3(get)]
    pub(super) id: Py<PyString>,
    #[pyo3(get)]
    pub(super) prev_id: Option<Py<PyString>>,
    #[pyo3(get)]
    pub(super) next_id: Option<Py<PyString>>,
    #[pyo3(get)]
    pub(super) headings: Py<PyTuple>,
    /// Counted in Rust on first use (unless the unit was tokens), then kept.
    pub(super) tokens: OnceLock<usize>,
    pub(super) encoding: Encoding,
    #[pyo3(get)]
    pub(super) char_count: usize,
    #[pyo3(get)]
    pub(super) metadata: Py<PyDict>,
    #[pyo3(get)]
    pub(super) embed_text: Py<PyString>,
}

pub(super) fn known(count: Option<usize>) -> OnceLock<usize> {
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
        let encoding: Encoding = encoding.parse()?;
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
                let old_embed = self.embed_text.bind(py).to_str()?;
                let old_text = self.text.bind(py).to_str()?;
                out.embed_text =
                    match ContextHeaders::reheaded(old_embed, old_text, new_text.to_str()?) {
                        Some(embed) => PyString::new(py, &embed).unbind(),
                        None => new_text.clone().unbind(),
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
    pub(super) fn copy(&self, py: Python<'_>) -> Self {
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
    let encoding: Encoding = encoding.parse()?;
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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyChunk>()?;
    m.add_function(wrap_pyfunction!(_relink_chunks, m)?)
}
