//! Python `str` in, Python `str` out, lone surrogates included.

use pyo3::exceptions::{PyTypeError, PyUnicodeEncodeError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBytes, PyString};

use crate::text::{SurrogateMap, decode_surrogatepass};

/// A Python string as Rust text: borrowed from the `str` object when it is
/// valid UTF-8 (no copy), decoded with its surrogates mapped otherwise.
pub struct PyText {
    backing: Backing,
    surrogates: Option<SurrogateMap>,
}

enum Backing {
    Borrowed(PyBackedStr),
    Owned(String),
}

impl PyText {
    pub fn as_str(&self) -> &str {
        match &self.backing {
            Backing::Borrowed(s) => s,
            Backing::Owned(s) => s,
        }
    }

    /// A Python `str` for `s` (a slice of this text or text derived from
    /// it), with any surrogate of the original restored.
    pub fn to_py<'py>(&self, py: Python<'py>, s: &str) -> PyResult<Bound<'py, PyString>> {
        match self.surrogates {
            Some(map) if map.touches(s) => {
                let bytes = PyBytes::new(py, &map.restore(s));
                PyString::from_encoded_object(&bytes, Some(c"utf-8"), Some(c"surrogatepass"))
            }
            _ => Ok(PyString::new(py, s)),
        }
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for PyText {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let py = obj.py();
        let Ok(string) = obj.cast::<PyString>() else {
            let type_name = obj.get_type().name()?;
            return Err(PyTypeError::new_err(format!(
                "expected str, got {type_name}"
            )));
        };
        match PyBackedStr::try_from(string.to_owned()) {
            Ok(s) => Ok(PyText {
                backing: Backing::Borrowed(s),
                surrogates: None,
            }),
            Err(err) if err.is_instance_of::<PyUnicodeEncodeError>(py) => {
                let encoded = string.call_method1("encode", ("utf-8", "surrogatepass"))?;
                let bytes = encoded.cast::<PyBytes>()?;
                let (text, surrogates) = decode_surrogatepass(bytes.as_bytes())?;
                Ok(PyText {
                    backing: Backing::Owned(text),
                    surrogates,
                })
            }
            Err(err) => Err(err),
        }
    }
}
