//! Python `str` in, Python `str` out, lone surrogates included.
//!
//! Performance notes: an ASCII `str` is borrowed without a copy. Any other is
//! transcoded from its PEP 393 code units by [`crate::text::transcode`]
//! rather than through `PyUnicode_AsUTF8`, which is several times slower and
//! caches a second copy on the object. Chunks that are slices of the input are
//! cut from the original object with `PyUnicode_Substring` (a copy in its own
//! representation, no UTF-8 decoding); surrogates come back for free there.

use std::ops::Range;

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyString;
use pyo3::types::string::PyStringData;

use crate::text::{CharOffsets, CodeUnits, SurrogateMap, Surrogates, transcode};

/// A Python string as Rust text.
pub struct PyText {
    object: Py<PyString>,
    backing: Backing,
    surrogates: Option<SurrogateMap>,
}

enum Backing {
    /// ASCII: the `str` object's own bytes.
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

    /// The text as tiktoken sees a Python `str`: surrogate pairs joined,
    /// lone surrogates replaced by U+FFFD.
    pub fn for_tiktoken(&self) -> std::borrow::Cow<'_, str> {
        match self.surrogates {
            Some(map) => std::borrow::Cow::Owned(map.utf16_repaired(self.as_str())),
            None => std::borrow::Cow::Borrowed(self.as_str()),
        }
    }

    /// Frees the transcoded copy of the text, when there is one, once only
    /// rebuilt text is still needed (slicing the input is no longer possible).
    pub fn release_copy(&mut self) {
        if let Backing::Owned(text) = &mut self.backing {
            *text = String::new();
        }
    }

    /// Where this text's lone surrogates were mapped, if it had any.
    pub fn surrogates(&self) -> Option<SurrogateMap> {
        self.surrogates
    }

    fn is_ascii(&self) -> bool {
        matches!(self.backing, Backing::Borrowed(_))
    }

    /// A Python `str` for text derived from this one (not a slice of it),
    /// with any surrogate of the original restored.
    pub fn to_py<'py>(&self, py: Python<'py>, s: &str) -> PyResult<Bound<'py, PyString>> {
        match self.surrogates {
            Some(map) if map.touches(s) => {
                let units = map.restore(s);
                // SAFETY: `units` is a valid UCS-4 buffer of `units.len()` code
                // points; CPython copies it and accepts lone surrogates.
                unsafe {
                    let ptr = ffi::PyUnicode_FromKindAndData(
                        ffi::PyUnicode_4BYTE_KIND as _,
                        units.as_ptr().cast(),
                        units.len() as ffi::Py_ssize_t,
                    );
                    Ok(Bound::from_owned_ptr_or_err(py, ptr)?.cast_into_unchecked())
                }
            }
            _ => Ok(PyString::new(py, s)),
        }
    }

    /// Python substrings of the original object for byte ranges of
    /// [`Self::as_str`]; fastest when starts and ends increase.
    pub fn slices<'py>(
        &self,
        py: Python<'py>,
        ranges: impl Iterator<Item = Range<usize>>,
    ) -> PyResult<Vec<Bound<'py, PyString>>> {
        let text = self.as_str();
        let mut starts = CharOffsets::new(text);
        let mut ends = CharOffsets::new(text);
        ranges
            .map(|range| {
                let (start, end) = if self.is_ascii() {
                    (range.start, range.end)
                } else {
                    (starts.of(range.start), ends.of(range.end))
                };
                // SAFETY: the object is a live `str` and 0 <= start <= end <=
                // its length (the ranges are ranges of its text).
                unsafe {
                    let ptr = ffi::PyUnicode_Substring(
                        self.object.as_ptr(),
                        start as ffi::Py_ssize_t,
                        end as ffi::Py_ssize_t,
                    );
                    Ok(Bound::from_owned_ptr_or_err(py, ptr)?.cast_into_unchecked())
                }
            })
            .collect()
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for PyText {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        PyText::extract_with(obj, Surrogates::Map)
    }
}

/// A Python string for a transform that drops lone surrogates anyway: they
/// are left out on the way in, which works for every input.
pub struct PyTextWithoutSurrogates(pub PyText);

impl<'a, 'py> FromPyObject<'a, 'py> for PyTextWithoutSurrogates {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        PyText::extract_with(obj, Surrogates::Drop).map(PyTextWithoutSurrogates)
    }
}

impl PyText {
    fn extract_with(obj: Borrowed<'_, '_, PyAny>, policy: Surrogates) -> PyResult<Self> {
        let Ok(string) = obj.cast::<PyString>() else {
            let type_name = obj.get_type().name()?;
            return Err(PyTypeError::new_err(format!(
                "expected str, got {type_name}"
            )));
        };
        let string = string.to_owned();
        // SAFETY: we only read the code units while holding a reference to the
        // immutable object, and copy what we keep.
        let units = match unsafe { string.data()? } {
            PyStringData::Ucs1(u) if u.is_ascii() => None,
            PyStringData::Ucs1(u) => Some(CodeUnits::Latin1(u)),
            PyStringData::Ucs2(u) => Some(CodeUnits::Ucs2(u)),
            PyStringData::Ucs4(u) => Some(CodeUnits::Ucs4(u)),
        };
        let (backing, surrogates) = match units {
            // An ASCII string is its own UTF-8: borrowing it copies nothing.
            None => (
                Backing::Borrowed(PyBackedStr::try_from(string.clone())?),
                None,
            ),
            Some(units) => {
                let (text, map) = transcode(units, policy)?;
                (Backing::Owned(text), map)
            }
        };
        Ok(PyText {
            object: string.unbind(),
            backing,
            surrogates,
        })
    }
}
