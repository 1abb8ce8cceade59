//! Arguments parsed by their type: a Python `str` naming an option becomes
//! the core enum that implements `FromStr`, its error the core's (a
//! `ValueError`). One extractor for every such option. Also the other
//! arguments of the chunkers: sizes, the unit, a caller's length function.

use std::str::FromStr;
use std::sync::Mutex;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::chunking::recursive::LengthFunction;
use crate::records::UnitName;

use crate::error::Error;

/// A `str` argument parsed by `T::from_str` (`TypeError` for another
/// type, as for any `str` argument).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Parsed<T>(pub T);

impl<'a, 'py, T: FromStr<Err = Error>> FromPyObject<'a, 'py> for Parsed<T> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let name = obj.cast::<PyString>()?;
        Ok(Parsed(name.to_str()?.parse()?))
    }
}

/// A caller's `str -> int` as a length function: called with the GIL, the
/// first error kept and raised once the split is done.
pub struct PyLength {
    pub function: Py<PyAny>,
    pub error: Mutex<Option<PyErr>>,
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

pub fn size_arg(name: &str, value: i64) -> PyResult<usize> {
    usize::try_from(value)
        .map_err(|_| PyValueError::new_err(format!("{name} must be >= 0, got {value}")))
}

/// The unit of a call: a name, or the caller's `str -> int`.
pub fn unit_arg(unit: &Bound<'_, PyAny>) -> PyResult<(UnitName, Option<Py<PyAny>>)> {
    if unit.is_instance_of::<PyString>() {
        let Parsed(name) = unit.extract()?;
        Ok((name, None))
    } else if unit.is_callable() {
        Ok((UnitName::Custom, Some(unit.clone().unbind())))
    } else {
        Err(PyTypeError::new_err(
            "unit must be 'chars', 'tokens' or a callable str -> int",
        ))
    }
}
