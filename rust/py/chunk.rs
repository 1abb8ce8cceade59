//! The `Chunk` record of `fastnotebook.chunkers` and `_relink_chunks` (ids
//! and links again after the caller's post-processors).

use std::sync::OnceLock;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use super::chunk_record::{ChunkField, chunk_record, headings_tuple};
use super::text::PyText;
use crate::chunking::recursive::LengthFunction;
use crate::records::{self, ContextHeaders};
use crate::tokens::{Encoding, TokenLength};

chunk_record!(
    /// One chunk of a document (see `fastnotebook.chunkers`).
    PyChunk,
    "Chunk",
    order = [
        text,
        start,
        end,
        start_line,
        end_line,
        index,
        id,
        prev_id,
        next_id,
        headings,
        token_count,
        char_count,
        metadata,
        embed_text,
    ],
    stored = [
        text: Py<PyString>,
        start: usize,
        end: usize,
        start_line: usize,
        end_line: usize,
        index: usize,
        id: Py<PyString>,
        prev_id: Option<Py<PyString>>,
        next_id: Option<Py<PyString>>,
        headings: Py<PyTuple>,
        char_count: usize,
        metadata: Py<PyDict>,
        embed_text: Py<PyString>,
    ],
    hidden = [
        /// Counted in Rust on first use (unless the unit was tokens), then kept.
        tokens: OnceLock<usize>,
        encoding: Encoding,
    ],
);

pub(super) fn known(count: Option<usize>) -> OnceLock<usize> {
    let cell = OnceLock::new();
    if let Some(n) = count {
        let _ = cell.set(n);
    }
    cell
}

impl PyChunk {
    /// `token_count`, the one field not stored as it is read.
    fn computed_field<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        match name {
            "token_count" => Ok(self.token_count(py)?.into_pyobject(py)?.into_any()),
            other => Err(PyTypeError::new_err(format!(
                "Chunk has no field {other:?}"
            ))),
        }
    }

    fn set_computed_field(&mut self, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        match name {
            "token_count" => self.tokens = known(Some(value.extract()?)),
            other => {
                return Err(PyTypeError::new_err(format!(
                    "Chunk has no field {other:?}; fields: {}",
                    Self::FIELDS.join(", ")
                )));
            }
        }
        Ok(())
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
            out.set_field(&key, &value)?;
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
        for name in Self::FIELDS {
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
        for name in Self::FIELDS {
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
