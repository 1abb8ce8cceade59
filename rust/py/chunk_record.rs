//! How the `Chunk` record is generated: [`chunk_record!`] declares its
//! stored fields once, and [`ChunkField`] says how each kind of field is
//! read, copied and replaced.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

/// A stored field of the `Chunk` record: how it is read, copied, and
/// replaced by `Chunk.replace`.
pub(super) trait ChunkField: Sized {
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>>;
    fn copy(&self, py: Python<'_>) -> Self;
    fn replaced(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Self>;
}

impl ChunkField for usize {
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.into_pyobject(py)?.into_any())
    }
    fn copy(&self, _: Python<'_>) -> Self {
        *self
    }
    fn replaced(value: &Bound<'_, PyAny>, _: &str) -> PyResult<Self> {
        value.extract()
    }
}

impl ChunkField for Py<PyString> {
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.bind(py).clone().into_any())
    }
    fn copy(&self, py: Python<'_>) -> Self {
        self.clone_ref(py)
    }
    fn replaced(value: &Bound<'_, PyAny>, _: &str) -> PyResult<Self> {
        Ok(value.cast::<PyString>()?.clone().unbind())
    }
}

impl ChunkField for Option<Py<PyString>> {
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.copy(py).into_pyobject(py)?.into_any())
    }
    fn copy(&self, py: Python<'_>) -> Self {
        self.as_ref().map(|s| s.clone_ref(py))
    }
    fn replaced(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Self> {
        opt_string(Some(value), name)
    }
}

/// `headings`: a tuple of str, from any iterable of str.
impl ChunkField for Py<PyTuple> {
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.bind(py).clone().into_any())
    }
    fn copy(&self, py: Python<'_>) -> Self {
        self.clone_ref(py)
    }
    fn replaced(value: &Bound<'_, PyAny>, _: &str) -> PyResult<Self> {
        headings_tuple(value)
    }
}

impl ChunkField for Py<PyDict> {
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.bind(py).clone().into_any())
    }
    fn copy(&self, py: Python<'_>) -> Self {
        self.clone_ref(py)
    }
    fn replaced(value: &Bound<'_, PyAny>, _: &str) -> PyResult<Self> {
        Ok(value.cast::<PyDict>()?.clone().unbind())
    }
}

/// The record class: its stored fields (read-only attributes, in `order`
/// with the computed ones), and `FIELDS`, `field`, `set_field` and `copy`
/// over all of them. Fields outside `stored` are the class's
/// `computed_field`/`set_computed_field`; `hidden` ones are not attributes.
macro_rules! chunk_record {
    (
        $(#[$doc:meta])*
        $rust:ident, $name:literal,
        order = [$($all:ident),+ $(,)?],
        stored = [$($field:ident: $ty:ty),+ $(,)?],
        hidden = [$($(#[$hdoc:meta])* $hidden:ident: $hty:ty),* $(,)?] $(,)?
    ) => {
        $(#[$doc])*
        #[pyclass(frozen, module = "fastnotebook._core", name = $name)]
        pub struct $rust {
            $(
                #[pyo3(get)]
                pub(super) $field: $ty,
            )+
            $(
                $(#[$hdoc])*
                pub(super) $hidden: $hty,
            )*
        }

        impl $rust {
            const FIELDS: [&'static str; [$(stringify!($all)),+].len()] = [$(stringify!($all)),+];

            fn field<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
                match name {
                    $(stringify!($field) => ChunkField::get(&self.$field, py),)+
                    other => self.computed_field(py, other),
                }
            }

            fn set_field(&mut self, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
                match name {
                    $(stringify!($field) => self.$field = ChunkField::replaced(value, name)?,)+
                    other => self.set_computed_field(other, value)?,
                }
                Ok(())
            }

            pub(super) fn copy(&self, py: Python<'_>) -> Self {
                $rust {
                    $($field: ChunkField::copy(&self.$field, py),)+
                    $($hidden: self.$hidden.clone(),)*
                }
            }
        }
    };
}

pub(super) use chunk_record;

pub(super) fn opt_string(
    value: Option<&Bound<'_, PyAny>>,
    name: &str,
) -> PyResult<Option<Py<PyString>>> {
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

pub(super) fn headings_tuple(value: &Bound<'_, PyAny>) -> PyResult<Py<PyTuple>> {
    let items: Vec<String> = value
        .try_iter()?
        .map(|item| item?.extract::<String>())
        .collect::<PyResult<_>>()
        .map_err(|_| PyTypeError::new_err("headings must be an iterable of str"))?;
    Ok(PyTuple::new(value.py(), items)?.unbind())
}
