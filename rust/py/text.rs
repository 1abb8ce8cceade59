//! Python `str` in, lone surrogates included (new `str` objects are made in
//! [`super::strings`]).
//!
//! Performance notes: an ASCII `str` is borrowed without a copy. Any other is
//! transcoded from its PEP 393 code units by [`crate::text::transcode`]
//! rather than through `PyUnicode_AsUTF8`, which is several times slower and
//! caches a second copy on the object. Chunks that are slices of the input are
//! copied from the original object's code units (no UTF-8 decoding), so that
//! surrogates come back for free; see [`substring`] for why not
//! `PyUnicode_Substring`.

use std::ops::Range;

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyString;
use pyo3::types::string::PyStringData;

use super::strings::{new_string_utf8, substring};
use crate::for_width;
use crate::text::{CharOffsets, CodeUnits, SurrogateMap, Surrogates, transcode};
use crate::tokens::Encoding;

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
            _ => new_string_utf8(py, s),
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
        let object = self.object.bind(py);
        // SAFETY: the object is immutable and alive while `self` is.
        let data = unsafe { object.data()? };
        let mut starts = CharOffsets::new(text);
        let mut ends = CharOffsets::new(text);
        ranges
            .map(|range| {
                if self.is_ascii() {
                    return substring(py, data, range);
                }
                let chars = starts.of(range.start)..ends.of(range.end);
                substring(py, data, chars)
            })
            .collect()
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for PyText {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(UnreadText::take(obj)?.read(Surrogates::Map)?)
    }
}

/// A Python string for a transform that drops lone surrogates anyway: they
/// are left out on the way in, which works for every input.
pub struct PyTextWithoutSurrogates(pub PyText);

impl<'a, 'py> FromPyObject<'a, 'py> for PyTextWithoutSurrogates {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(PyTextWithoutSurrogates(
            UnreadText::take(obj)?.read(Surrogates::Drop)?,
        ))
    }
}

/// A Python string taken under the GIL but not yet transcoded: many of them
/// are read on all cores, without the GIL ([`UnreadText::read`]), so that
/// transcoding is not a serial part of the batch functions.
pub struct UnreadText {
    object: Py<PyString>,
    /// The code units of `object`, which keeps them alive and unchanged (a
    /// `str` never changes): only handed out borrowed from `self`
    /// ([`UnreadText::units`]), never for `'static`.
    units: CodeUnits<'static>,
    /// ASCII: the `str` object's own bytes are its UTF-8.
    ascii: Option<PyBackedStr>,
}

impl UnreadText {
    /// Takes a `str` (or raises `TypeError`), without copying its text.
    pub fn take(obj: Borrowed<'_, '_, PyAny>) -> PyResult<Self> {
        let Ok(string) = obj.cast::<PyString>() else {
            let type_name = obj.get_type().name()?;
            return Err(PyTypeError::new_err(format!(
                "expected str, got {type_name}"
            )));
        };
        let string = string.to_owned();
        // SAFETY: the units are only read while `string`, stored beside them,
        // keeps the immutable object alive (see `units`).
        let units = unsafe {
            std::mem::transmute::<CodeUnits<'_>, CodeUnits<'static>>(code_units(string.data()?))
        };
        // SAFETY: `data()` made the string ready; CPython keeps whether it is
        // ASCII in its header, which saves a scan.
        let ascii = unsafe { ffi::PyUnicode_IS_ASCII(string.as_ptr()) } != 0;
        let ascii = ascii
            .then(|| PyBackedStr::try_from(string.clone()))
            .transpose()?;
        Ok(UnreadText {
            object: string.unbind(),
            units,
            ascii,
        })
    }

    /// Its length in code units (code points).
    pub fn len(&self) -> usize {
        for_width!(self.units, |u| u.len())
    }

    /// Whether it is all ASCII (known from the `str`'s header).
    pub fn is_ascii(&self) -> bool {
        self.ascii.is_some()
    }

    /// Its code units, as CPython stores them (ASCII as Latin-1). Needs no GIL.
    pub fn units(&self) -> CodeUnits<'_> {
        self.units
    }

    /// Reads the text as Rust text: transcodes it unless it is ASCII. Needs
    /// no GIL.
    pub fn read(self, policy: Surrogates) -> crate::error::Result<PyText> {
        let (backing, surrogates) = match self.ascii {
            Some(text) => (Backing::Borrowed(text), None),
            None => {
                let (text, surrogates) = transcode(self.units, policy)?;
                (Backing::Owned(text), surrogates)
            }
        };
        Ok(PyText {
            object: self.object,
            backing,
            surrogates,
        })
    }
}

/// The code units of a `str`'s data, as the core takes them.
pub fn code_units(data: PyStringData<'_>) -> CodeUnits<'_> {
    match data {
        PyStringData::Ucs1(units) => CodeUnits::Latin1(units),
        PyStringData::Ucs2(units) => CodeUnits::Ucs2(units),
        PyStringData::Ucs4(units) => CodeUnits::Ucs4(units),
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for UnreadText {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        UnreadText::take(obj)
    }
}

/// Runs `work` with the GIL released, unless the text is short (`len`
/// under `from`) and `encoding`'s vocabulary is loaded already: releasing
/// and taking the GIL back would then cost more than the work.
pub fn detach_unless_short<T: Send>(
    py: Python<'_>,
    len: usize,
    from: usize,
    encoding: Encoding,
    work: impl FnOnce() -> T + Send,
) -> T {
    if len < from && encoding.loaded_tokenizer().is_some() {
        work()
    } else {
        py.detach(work)
    }
}
