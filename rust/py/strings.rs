//! New Python `str` objects: slices of a `str`'s code units, the pieces a
//! splitter made, UTF-8 text; allocated with the GIL, and written without it
//! when a batch needs that ([`new_unwritten_string`]).

use std::ops::Range;

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::string::PyStringData;
use pyo3::types::{PyList, PyString};

use super::text::code_units;
use crate::chunking::recursive::Piece;
use crate::for_width;
use crate::text::{CodeUnit, copy_pieces, max_char, narrow_pieces};

/// `text[range]` for a range of code points of `data`.
///
/// `PyUnicode_Substring` finds the narrowest representation of the result
/// with a scalar scan that costs more than the splitting itself on UCS-2
/// text; the maximum found here vectorises, and so does the narrowing copy.
pub(super) fn substring<'py>(
    py: Python<'py>,
    data: PyStringData<'_>,
    range: Range<usize>,
) -> PyResult<Bound<'py, PyString>> {
    for_width!(code_units(data), |units| new_string(
        py,
        &[units_in(units, range)?]
    ))
}

fn units_in<T>(units: &[T], range: Range<usize>) -> PyResult<&[T]> {
    units
        .get(range)
        .ok_or_else(|| pyo3::exceptions::PySystemError::new_err("chunk outside its text"))
}

/// `text[range]` for a range of code points of a `str`.
pub fn str_slice<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    start: usize,
    end: usize,
) -> PyResult<Bound<'py, PyString>> {
    // SAFETY: the object is immutable and alive while `text` is.
    let data = unsafe { text.data()? };
    for_width!(code_units(data), |units| {
        let part = units
            .get(start..end)
            .ok_or_else(|| PyValueError::new_err("a range lies outside its text"))?;
        new_string(py, &[part])
    })
}

/// The strings of the pieces a splitter made of code units `units` (a
/// span: a slice of `units`; a text: its own units).
pub fn piece_list<'py, T: CodeUnit>(
    py: Python<'py>,
    units: &[T],
    pieces: &[Piece<Vec<T>>],
) -> PyResult<Bound<'py, PyList>> {
    let items = pieces
        .iter()
        .map(|piece| match piece {
            Piece::Span(r) => new_string(py, &[&units[r.clone()]]),
            Piece::Text(t) => new_string(py, &[t]),
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// A new `str` holding the units of `pieces` one after the other, in the
/// representation CPython requires for its largest code point (a `str` must
/// use the narrowest one); the empty `str` when there are none.
pub fn new_string<'py, T: CodeUnit>(
    py: Python<'py>,
    pieces: &[&[T]],
) -> PyResult<Bound<'py, PyString>> {
    let len: usize = pieces.iter().map(|units| units.len()).sum();
    let (string, unwritten) = new_unwritten_string(py, len, max_char(pieces))?;
    // SAFETY: `string`, alive, has been seen by no one else.
    unsafe { unwritten.write(pieces) };
    Ok(string)
}

/// A new `str` of `len` code units up to code point `max`, and its units to
/// write: writing them needs no GIL, so a batch allocates its strings with
/// the GIL and writes them after releasing it.
pub fn new_unwritten_string(
    py: Python<'_>,
    len: usize,
    max: u32,
) -> PyResult<(Bound<'_, PyString>, UnwrittenUnits)> {
    // SAFETY: `PyUnicode_New(len, max)` returns a string of `len` code units
    // of the kind chosen by `max` (1 byte below 256, 2 below 65536, else 4),
    // whose data, inside the object, stays where it is while it lives.
    unsafe {
        let object = Bound::from_owned_ptr_or_err(
            py,
            ffi::PyUnicode_New(len as ffi::Py_ssize_t, max as ffi::Py_UCS4),
        )?;
        let data = ffi::PyUnicode_DATA(object.as_ptr());
        Ok((
            object.cast_into_unchecked(),
            UnwrittenUnits { data, len, max },
        ))
    }
}

/// The code units of a `str` from [`new_unwritten_string`], not yet written.
pub struct UnwrittenUnits {
    data: *mut std::ffi::c_void,
    len: usize,
    max: u32,
}

// SAFETY: the units belong to a new `str` that no one reads until they are
// written (see `write`); which thread writes them does not matter.
unsafe impl Send for UnwrittenUnits {}

impl UnwrittenUnits {
    /// Writes the units of `pieces` one after the other (as many as fit).
    ///
    /// # Safety
    /// The `str` must be alive, and no one may have read it yet.
    pub unsafe fn write<T: CodeUnit>(self, pieces: &[&[T]]) {
        let Self { data, len, max } = self;
        // SAFETY: `data` holds `len` units of the kind `max` chose, which
        // only this call accesses (the caller's contract).
        unsafe {
            if max < 0x100 {
                let dst = std::slice::from_raw_parts_mut(data.cast::<u8>(), len);
                narrow_pieces(dst, pieces);
            } else if max < 0x1_0000 {
                let dst = std::slice::from_raw_parts_mut(data.cast::<u16>(), len);
                copy_pieces(dst, pieces, T::narrow_u16);
            } else {
                let dst = std::slice::from_raw_parts_mut(data.cast::<u32>(), len);
                copy_pieces(dst, pieces, T::code_point);
            }
        }
    }
}

/// A new `str` of UTF-8 text; ASCII text (most chunks) is copied straight
/// into a compact ASCII string, with no decoding.
pub fn new_string_utf8<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyString>> {
    if !text.is_ascii() {
        return Ok(PyString::new(py, text));
    }
    let bytes = text.as_bytes();
    // SAFETY: `PyUnicode_New(len, 127)` returns a compact ASCII string of
    // `len` one-byte units, all written here with ASCII bytes before anyone
    // sees it.
    unsafe {
        let object = Bound::from_owned_ptr_or_err(
            py,
            ffi::PyUnicode_New(bytes.len() as ffi::Py_ssize_t, 0x7F),
        )?;
        let data = ffi::PyUnicode_DATA(object.as_ptr()).cast::<u8>();
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), data, bytes.len());
        Ok(object.cast_into_unchecked())
    }
}
