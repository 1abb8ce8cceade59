//! Chunks as Python strings: a text's chunks on its code units or on its
//! UTF-8 (see [`route`]), their strings allocated with the GIL and written
//! without it, one text or a batch group at a time.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use super::strings::{UnwrittenUnits, new_unwritten_string};
use super::text::{PyText, UnreadText};
use crate::chunking::detect::ContentType;
use crate::chunking::route::{self, Unit, UnitChunks, WidthChunks};
use crate::chunking::{ChunkSizes, Chunks, Source};
use crate::error::Result;
use crate::for_width;
use crate::text::{CodeUnit, CodeUnits, Surrogates};

/// The strings of chunks of a text split as UTF-8.
fn chunk_strings<'py>(
    py: Python<'py>,
    text: &PyText,
    chunks: &Chunks,
) -> PyResult<Vec<Bound<'py, PyString>>> {
    let input_ranges = chunks
        .chunks
        .iter()
        .filter(|c| c.source == Source::Input)
        .map(|c| c.range.clone());
    let mut slices = text.slices(py, input_ranges)?.into_iter();
    chunks
        .chunks
        .iter()
        .map(|c| match c.source {
            Source::Input => slices
                .next()
                .ok_or_else(|| PyValueError::new_err("internal error: missing chunk slice")),
            Source::Rebuilt => text.to_py(py, &chunks.rebuilt[c.range.clone()]),
        })
        .collect()
}

/// The chunks of one text, on its code units or on its UTF-8 (see
/// [`route`]), with what they are slices of.
pub(super) enum Chunked {
    Units(UnreadText, WidthChunks),
    Utf8(PyText, Chunks),
}

impl Chunked {
    /// Chunks one text (needs no GIL).
    pub(super) fn new(
        text: UnreadText,
        content_type: Option<ContentType>,
        path: Option<&str>,
        sizes: ChunkSizes,
        unit: Unit,
    ) -> Result<Chunked> {
        let (units, ascii) = (text.units(), text.is_ascii());
        if let Some(chunks) =
            route::chunk_code_units(units, ascii, content_type, path, sizes, unit)?
        {
            return Ok(Chunked::Units(text, chunks));
        }
        let text = text.read(Surrogates::Map)?;
        let chunks = route::chunk_utf8(
            text.as_str(),
            text.surrogates(),
            content_type,
            path,
            sizes,
            unit,
        )?;
        Ok(Chunked::Utf8(text, chunks))
    }

    /// The type the text was split as, and its length in the unit.
    pub(super) fn summary(&self) -> (Option<ContentType>, usize) {
        match self {
            Chunked::Units(_, c) => (c.content_type(), c.input_length()),
            Chunked::Utf8(_, c) => (c.content_type, c.input_length),
        }
    }
}

/// A text's chunks as Python strings, made with the GIL: those of code
/// units are allocated then and written after, without it.
struct Strings<'py> {
    strings: Vec<Bound<'py, PyString>>,
    unwritten: Vec<UnwrittenUnits>,
}

impl Chunked {
    /// The chunks' strings, allocated (the caller drops the chunks, which
    /// needs no GIL).
    fn allocate<'py>(&mut self, py: Python<'py>) -> PyResult<Strings<'py>> {
        match self {
            Chunked::Utf8(text, chunks) => {
                if chunks.chunks.iter().all(|c| c.source == Source::Rebuilt) {
                    // Peak memory: the input's copy is not needed to make the strings.
                    text.release_copy();
                }
                let strings = chunk_strings(py, text, chunks)?;
                Ok(Strings {
                    strings,
                    unwritten: Vec::new(),
                })
            }
            Chunked::Units(text, chunks) => {
                for_width!(chunks, WidthChunks, |c| allocate_units(py, text.units(), c))
            }
        }
    }

    /// Writes the characters of the strings [`Self::allocate`] left
    /// unwritten (needs no GIL).
    ///
    /// # Safety
    /// `unwritten` must come from this text's `allocate`, with its strings
    /// alive and seen by no one yet.
    unsafe fn write(&self, unwritten: Vec<UnwrittenUnits>) -> PyResult<()> {
        match self {
            Chunked::Utf8(..) => Ok(()),
            // SAFETY: the caller's contract.
            Chunked::Units(text, chunks) => for_width!(chunks, WidthChunks, |c| unsafe {
                write_units(text.units(), c, unwritten)
            }),
        }
    }

    /// The Python list of the chunks.
    pub(super) fn list<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let Strings { strings, unwritten } = self.allocate(py)?;
        // SAFETY: just allocated, and `strings` keeps them alive unseen.
        unsafe { self.write(unwritten)? };
        PyList::new(py, strings)
    }
}

/// The units of a text of the width of its chunks.
fn units_of<'a, T: CodeUnit>(units: CodeUnits<'a>) -> PyResult<&'a [T]> {
    T::units_of(units).ok_or_else(|| PyValueError::new_err("internal error: code units changed"))
}

/// New strings for chunks of the code units `input`, not yet written.
fn allocate_units<'py, T: CodeUnit>(
    py: Python<'py>,
    input: CodeUnits<'_>,
    unit_chunks: &UnitChunks<T>,
) -> PyResult<Strings<'py>> {
    let input = units_of(input)?;
    let UnitChunks { chunks, max_chars } = unit_chunks;
    // Sized up front (collecting pairs, then unzipping them, grew both).
    let mut strings = Vec::with_capacity(chunks.chunks.len());
    let mut unwritten = Vec::with_capacity(chunks.chunks.len());
    for (c, &max) in chunks.chunks.iter().zip(max_chars) {
        let (string, units) = new_unwritten_string(py, chunks.text(input, c).len(), max)?;
        strings.push(string);
        unwritten.push(units);
    }
    Ok(Strings { strings, unwritten })
}

/// Writes the strings [`allocate_units`] made.
///
/// # Safety
/// As [`Chunked::write`].
unsafe fn write_units<T: CodeUnit>(
    input: CodeUnits<'_>,
    unit_chunks: &UnitChunks<T>,
    unwritten: Vec<UnwrittenUnits>,
) -> PyResult<()> {
    let input = units_of(input)?;
    let chunks = &unit_chunks.chunks;
    for (units, c) in unwritten.into_iter().zip(&chunks.chunks) {
        // SAFETY: the caller's contract.
        unsafe { units.write(&[chunks.text(input, c)]) };
    }
    Ok(())
}

/// Code units of the texts a batch thread takes at a time: the calling thread
/// makes the strings of what it is handed at once, so short texts do not each
/// cost it two takes of the GIL.
pub(super) const GIL_GROUP: usize = 1 << 16;

/// The lists of a group of chunked texts: their strings allocated with the
/// GIL, written without it, then put in lists with it again.
pub(super) fn lists_of(group: Vec<Result<Chunked>>) -> Vec<PyResult<Py<PyList>>> {
    Python::attach(|py| {
        // Each text's strings, or its error; and what is left to write.
        let (strings, mut to_write): (Vec<PyResult<_>>, Vec<_>) = group
            .into_iter()
            .map(|chunked| {
                let allocated = chunked.map_err(PyErr::from).and_then(|mut chunked| {
                    let strings = chunked.allocate(py)?;
                    Ok((chunked, strings))
                });
                match allocated {
                    Ok((chunked, Strings { strings, unwritten })) => {
                        (Ok(strings), Some((chunked, unwritten)))
                    }
                    Err(e) => (Err(e), None),
                }
            })
            .unzip();
        let written: Vec<PyResult<()>> = py.detach(|| {
            to_write
                .iter_mut()
                .map(|w| match w {
                    // SAFETY: each text's own, allocated above; `strings`
                    // keeps them alive, and no one has seen them.
                    Some((chunked, unwritten)) => unsafe {
                        chunked.write(std::mem::take(unwritten))
                    },
                    None => Ok(()),
                })
                .collect()
        });
        strings
            .into_iter()
            .zip(written)
            .map(|(strings, written)| {
                written?;
                Ok(PyList::new(py, strings?)?.unbind())
            })
            .collect()
    })
}
