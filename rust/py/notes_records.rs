//! The records of a parsed vault that come by the thousand (`NoteLink`,
//! `NoteChunk`, `Edge` of `fastnotebook.notes`): frozen classes built here
//! without a Python call per record. Each holds its field values (no tuple
//! to allocate) and behaves as the frozen dataclass it replaces: the same
//! constructor (positional or keyword), read-only attributes, equality of
//! two records of one class field by field, the hash of the field tuple
//! (`TypeError` when a field is unhashable), the dataclass `repr`, pickling.

use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};

macro_rules! note_record {
    (
        $(#[$doc:meta])*
        $rust:ident, $name:literal,
        fields = [$($field:ident),+ $(,)?],
        signature = $sig:tt,
        defaults = $defaults:expr $(,)?
    ) => {
        $(#[$doc])*
        #[pyclass(frozen, module = "fastnotebook.notes.model", name = $name)]
        pub struct $rust {
            values: [Py<PyAny>; [$(stringify!($field)),+].len()],
        }

        impl $rust {
            pub const FIELDS: &'static [&'static str] = &[$(stringify!($field)),+];

            /// A record of these field values (in `FIELDS` order).
            pub fn from_values<'py>(
                py: Python<'py>,
                values: [Bound<'py, PyAny>; [$(stringify!($field)),+].len()],
            ) -> PyResult<Bound<'py, Self>> {
                Bound::new(py, $rust { values: values.map(Bound::unbind) })
            }

            /// The value of field `i` (`FIELDS` order).
            pub fn value<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyAny>> {
                self.values
                    .get(i)
                    .map(|v| v.bind(py).clone())
                    .ok_or_else(|| pyo3::exceptions::PyIndexError::new_err("no such field"))
            }

            /// The field values as a tuple.
            fn tuple<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
                PyTuple::new(py, self.values.iter().map(|v| v.bind(py)))
            }
        }

        #[pymethods]
        impl $rust {
            #[new]
            #[pyo3(signature = $sig)]
            #[allow(clippy::too_many_arguments)]
            fn new<'py>(py: Python<'py>, $($field: Option<Bound<'py, PyAny>>),+) -> PyResult<Self> {
                let mut values: Vec<Bound<'py, PyAny>> = Vec::with_capacity(Self::FIELDS.len());
                $(values.push(match $field {
                    Some(v) => v,
                    None => py.None().into_bound(py),
                });)+
                let defaults: fn(Python<'py>, &mut [Bound<'py, PyAny>]) -> PyResult<()> = $defaults;
                defaults(py, &mut values)?;
                let values: Vec<Py<PyAny>> = values.into_iter().map(Bound::unbind).collect();
                let values = values
                    .try_into()
                    .map_err(|_| pyo3::exceptions::PySystemError::new_err("field count"))?;
                Ok($rust { values })
            }

            $(
                #[getter]
                fn $field<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
                    const I: usize = index_of($rust::FIELDS, stringify!($field));
                    self.values[I].bind(py).clone()
                }
            )+

            #[classattr]
            fn __match_args__(py: Python<'_>) -> PyResult<Py<PyTuple>> {
                Ok(PyTuple::new(py, Self::FIELDS)?.unbind())
            }

            fn __eq__<'py>(&self, py: Python<'py>, other: &Bound<'py, PyAny>) -> PyResult<Py<PyAny>> {
                match other.cast_exact::<Self>() {
                    Ok(other) => self.tuple(py)?.eq(other.get().tuple(py)?)?.into_py_any(py),
                    Err(_) => Ok(py.NotImplemented()),
                }
            }

            fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
                self.tuple(py)?.hash()
            }

            fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
                let mut out = String::from(concat!($name, "("));
                for (i, name) in Self::FIELDS.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(name);
                    out.push('=');
                    out.push_str(&self.values[i].bind(py).repr()?.to_cow()?);
                }
                out.push(')');
                Ok(out)
            }

            fn __reduce__<'py>(
                slf: &Bound<'py, Self>,
            ) -> PyResult<(Bound<'py, PyType>, Bound<'py, PyTuple>)> {
                Ok((slf.get_type(), slf.get().tuple(slf.py())?))
            }
        }
    };
}

/// The position of `name` in `fields` (evaluated at compile time).
const fn index_of(fields: &[&str], name: &str) -> usize {
    let mut i = 0;
    while i < fields.len() {
        let (a, b) = (fields[i].as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut k = 0;
            while k < a.len() && a[k] == b[k] {
                k += 1;
            }
            if k == a.len() {
                return i;
            }
        }
        i += 1;
    }
    usize::MAX
}

fn no_defaults<'py>(_: Python<'py>, _: &mut [Bound<'py, PyAny>]) -> PyResult<()> {
    Ok(())
}

/// `metadata` defaults to a new empty dict.
fn chunk_defaults<'py>(py: Python<'py>, values: &mut [Bound<'py, PyAny>]) -> PyResult<()> {
    if let Some(metadata) = values.last_mut()
        && metadata.is_none()
    {
        *metadata = PyDict::new(py).into_any();
    }
    Ok(())
}

note_record!(
    /// One link of a note body; ``start``/``end`` are code points into the body.
    NoteLink,
    "NoteLink",
    fields = [kind, target, heading, block, display, start, end, in_suggestions],
    signature = (kind, target, heading, block, display, start, end, in_suggestions),
    defaults = no_defaults,
);

note_record!(
    /// One chunk of a note body: ``text == body[char_start:char_end]``.
    NoteChunk,
    "NoteChunk",
    fields = [
        note_id,
        id,
        index,
        text,
        char_start,
        char_end,
        start_line,
        end_line,
        section_title,
        section_path,
        prev_id,
        next_id,
        token_count,
        char_count,
        embed_text,
        wikilinks,
        references,
        metadata,
    ],
    signature = (
        note_id, id, index, text, char_start, char_end, start_line, end_line,
        section_title, section_path, prev_id, next_id, token_count, char_count,
        embed_text, wikilinks, references, metadata = None
    ),
    defaults = chunk_defaults,
);

note_record!(
    /// One edge of the vault graph (``target_id`` is the raw target when unresolved).
    Edge,
    "Edge",
    fields = [kind, source_id, target_id, scope, note_id, status],
    signature = (kind, source_id, target_id, scope, note_id, status),
    defaults = no_defaults,
);

impl NoteLink {
    pub const KIND: usize = index_of(Self::FIELDS, "kind");
    pub const TARGET: usize = index_of(Self::FIELDS, "target");
    pub const START: usize = index_of(Self::FIELDS, "start");
    pub const IN_SUGGESTIONS: usize = index_of(Self::FIELDS, "in_suggestions");
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NoteLink>()?;
    m.add_class::<NoteChunk>()?;
    m.add_class::<Edge>()?;
    Ok(())
}
