//! The `Document`s of `fastnotebook.langchain`'s `create_documents` and of
//! the header splitters, made without a Python loop. Where each chunk
//! starts (`start_index`) is the core's ([`crate::chunking::start_index`]).
//!
//! Why a template instance is copied through `object.__setattr__` rather
//! than `Document.model_construct(...)` or `Document(...)` called per chunk:
//! measured with `python benches/bench_langchain_documents.py` (20,000
//! documents, best of 15, garbage collector off; langchain-core 1.8.3,
//! pydantic 2.14.4, CPython 3.11.7, a shared 2-core VM, two runs), the
//! template copy makes a `Document` in 0.42-0.59 us, `model_construct` in
//! 3.0-3.4 us and `Document(page_content=..., metadata=...)` in 2.3-2.8 us:
//! the public route would make this step 5-7x slower. The Python module
//! checks once that the documents made here equal `Document(...)`'s in every
//! attribute, and uses `Document(...)` when they do not
//! (`_fast_documents_work`).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySet, PyString, PyType};

use super::text::code_units;
use crate::chunking::start_index::StartIndex;
use crate::for_width;

/// The attributes every new `Document` starts from: a template instance's.
struct Template<'py> {
    cls: Bound<'py, PyType>,
    fields: Bound<'py, PyDict>,
    fields_set: Bound<'py, PySet>,
    extra: Bound<'py, PyAny>,
    private: Bound<'py, PyAny>,
}

fn generic_setattr(
    obj: &Bound<'_, PyAny>,
    name: &Bound<'_, PyString>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    // SAFETY: both are live objects; `PyObject_GenericSetAttr` is
    // `object.__setattr__`, which bypasses the model's own `__setattr__` as
    // pydantic's `model_construct` does.
    let rc = unsafe { ffi::PyObject_GenericSetAttr(obj.as_ptr(), name.as_ptr(), value.as_ptr()) };
    if rc < 0 {
        return Err(PyErr::fetch(obj.py()));
    }
    Ok(())
}

impl<'py> Template<'py> {
    fn of(template: &Bound<'py, PyAny>) -> PyResult<Self> {
        let py = template.py();
        Ok(Template {
            cls: template.get_type(),
            fields: template
                .getattr(pyo3::intern!(py, "__dict__"))?
                .cast_into::<PyDict>()
                .map_err(|_| PyTypeError::new_err("template has no __dict__ dict"))?,
            fields_set: template
                .getattr(pyo3::intern!(py, "__pydantic_fields_set__"))?
                .cast_into::<PySet>()
                .map_err(|_| PyTypeError::new_err("template has no fields set"))?,
            extra: template.getattr(pyo3::intern!(py, "__pydantic_extra__"))?,
            private: template.getattr(pyo3::intern!(py, "__pydantic_private__"))?,
        })
    }

    /// A new instance with the template's attributes, `page_content` and
    /// `metadata` replaced: what pydantic's `model_construct` makes.
    fn new_document(
        &self,
        content: &Bound<'py, PyAny>,
        metadata: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = self.cls.py();
        // SAFETY: `tp_alloc` of a live type object returns a new (zeroed)
        // instance of it or NULL with an exception set; it is `object.__new__`
        // for a class that defines no `__new__` (checked by the caller).
        let obj = unsafe {
            let tp = self.cls.as_type_ptr();
            let alloc = (*tp).tp_alloc.unwrap_or(ffi::PyType_GenericAlloc);
            Bound::from_owned_ptr_or_err(py, alloc(tp, 0))?
        };
        let fields = self.fields.copy()?;
        fields.set_item(pyo3::intern!(py, "page_content"), content)?;
        fields.set_item(pyo3::intern!(py, "metadata"), metadata)?;
        generic_setattr(&obj, pyo3::intern!(py, "__dict__"), fields.as_any())?;
        let fields_set = PySet::empty(py)?;
        for name in self.fields_set.iter() {
            fields_set.add(name)?;
        }
        generic_setattr(
            &obj,
            pyo3::intern!(py, "__pydantic_fields_set__"),
            fields_set.as_any(),
        )?;
        generic_setattr(&obj, pyo3::intern!(py, "__pydantic_extra__"), &self.extra)?;
        generic_setattr(
            &obj,
            pyo3::intern!(py, "__pydantic_private__"),
            &self.private,
        )?;
        Ok(obj)
    }
}

/// `TextSplitter.create_documents` once the chunks are known: for text `i`
/// and each of its chunks, a copy of `metadatas[i]` (a shallow copy when
/// `flat[i]`, which the caller sets only when that equals a deep copy; else
/// `copy.deepcopy`), with `start_index` when asked (the offset LangChain
/// finds: the chunk searched for from the previous start plus the previous
/// chunk's length less the overlap), in a new `Document`.
#[pyfunction]
#[pyo3(signature = (template, texts, chunk_lists, metadatas, flat, add_start_index, chunk_overlap))]
#[allow(clippy::too_many_arguments)]
fn langchain_documents<'py>(
    py: Python<'py>,
    template: &Bound<'py, PyAny>,
    texts: Vec<Bound<'py, PyString>>,
    chunk_lists: Vec<Bound<'py, PyList>>,
    metadatas: Vec<Bound<'py, PyDict>>,
    flat: Vec<bool>,
    add_start_index: bool,
    chunk_overlap: i64,
) -> PyResult<Bound<'py, PyList>> {
    let n = texts.len();
    if chunk_lists.len() != n || metadatas.len() != n || flat.len() != n {
        return Err(PyValueError::new_err(
            "texts, chunk_lists, metadatas and flat must have the same length",
        ));
    }
    let template = Template::of(template)?;
    let deepcopy = py.import("copy")?.getattr("deepcopy")?;
    let start_key = pyo3::intern!(py, "start_index");
    let total: usize = chunk_lists.iter().map(|l| l.len()).sum();
    let mut docs = Vec::with_capacity(total);
    for (((text, chunks), metadata), flat) in
        texts.iter().zip(&chunk_lists).zip(&metadatas).zip(flat)
    {
        // SAFETY: `text` is alive, and a `str` never changes, while its
        // units are read here.
        let text_units = code_units(unsafe { text.data()? });
        let mut start = StartIndex::new(chunk_overlap);
        for chunk in chunks.iter() {
            let md = if flat {
                metadata.copy()?
            } else {
                deepcopy
                    .call1((metadata,))?
                    .cast_into::<PyDict>()
                    .map_err(|_| {
                        PyTypeError::new_err("copy.deepcopy of a dict did not return a dict")
                    })?
            };
            if add_start_index {
                let Ok(chunk_str) = chunk.cast::<PyString>() else {
                    // What `str.find` raises.
                    return Err(PyTypeError::new_err(format!(
                        "must be str, not {}",
                        chunk.get_type().name()?
                    )));
                };
                // SAFETY: as for `text`.
                let chunk_units = code_units(unsafe { chunk_str.data()? });
                let index = for_width!(text_units, |t| start.next(t, chunk_units));
                md.set_item(start_key, index)?;
            }
            docs.push(template.new_document(&chunk, md.as_any())?);
        }
    }
    PyList::new(py, docs)
}

/// A `Document` for each `(page_content, metadata)` pair (the metadata dict
/// itself, not a copy): the header splitters' sections.
#[pyfunction]
fn langchain_section_documents<'py>(
    py: Python<'py>,
    template: &Bound<'py, PyAny>,
    sections: &Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyList>> {
    let template = Template::of(template)?;
    let docs = sections
        .iter()
        .map(|item| {
            let (content, metadata): (Bound<'py, PyAny>, Bound<'py, PyDict>) = item.extract()?;
            template.new_document(&content, metadata.as_any())
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, docs)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(langchain_documents, m)?)?;
    m.add_function(wrap_pyfunction!(langchain_section_documents, m)?)?;
    Ok(())
}
