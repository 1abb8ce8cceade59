//! Bindings for the text cleaners.

use pyo3::prelude::*;
use pyo3::types::PyString;

use super::strings::new_string;
use super::text::{PyTextWithoutSurrogates, code_units};
use crate::cleaning;
use crate::for_width;
use crate::text::CodeUnit;

// Both drop lone surrogates (they are neither ASCII nor printable), so the
// text is read without them.

#[pyfunction]
fn remove_non_ascii<'py>(
    py: Python<'py>,
    text: PyTextWithoutSurrogates,
) -> PyResult<Bound<'py, PyString>> {
    let out = py.detach(|| cleaning::remove_non_ascii(text.0.as_str()));
    text.0.to_py(py, &out)
}

#[pyfunction]
fn remove_non_printable<'py>(
    py: Python<'py>,
    text: PyTextWithoutSurrogates,
) -> PyResult<Bound<'py, PyString>> {
    let out = py.detach(|| cleaning::remove_non_printable(text.0.as_str()));
    text.0.to_py(py, &out)
}

type Parsed<'py> = Option<(Bound<'py, PyString>, Bound<'py, PyString>)>;

/// `(thinking, cleaned)`, or None when the content is to be returned as is.
///
/// Parsed on the `str`'s own code units, and the results built from slices
/// of them: no conversion to UTF-8 and back, and lone surrogates are kept.
///
/// The GIL is kept: the input is at most 100,000 characters, parsed in tens
/// of microseconds, and releasing it measured no faster alone while, under
/// contention, taking it back can wait a whole switch interval (5 ms).
#[pyfunction]
fn parse_thinking_content<'py>(
    py: Python<'py>,
    content: &Bound<'py, PyString>,
) -> PyResult<Parsed<'py>> {
    // Too long to parse: decided on the length alone, before reading the text.
    if content.len()? > cleaning::MAX_THINKING_INPUT_CHARS {
        return Ok(None);
    }
    // SAFETY: the code units are read while `content`, an immutable `str`,
    // is borrowed, and the results are copied out of them before it is released.
    let units = code_units(unsafe { content.data()? });
    for_width!(units, |u| parse_thinking(py, u))
}

fn parse_thinking<'py, T: CodeUnit>(py: Python<'py>, units: &[T]) -> PyResult<Parsed<'py>> {
    cleaning::parse_thinking(units)
        .map(|parsed| {
            Ok((
                new_string(py, &parsed.thinking)?,
                new_string(py, &parsed.cleaned)?,
            ))
        })
        .transpose()
}

/// Each text as esperanto's embedding models send it (their `_clean_text`),
/// lone surrogates kept.
///
/// The GIL is kept: a request's texts take microseconds each.
#[pyfunction]
fn normalize_embedding_inputs<'py>(
    py: Python<'py>,
    texts: Vec<Bound<'py, PyString>>,
) -> PyResult<Vec<Bound<'py, PyString>>> {
    texts
        .iter()
        .map(|text| {
            // SAFETY: the code units are read while `text`, an immutable
            // `str`, is borrowed, and the result is copied out of them.
            let units = code_units(unsafe { text.data()? });
            for_width!(units, |u| new_string(
                py,
                &[&cleaning::normalize_embedding_input(u)]
            ))
        })
        .collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add(
        "MAX_THINKING_INPUT_CHARS",
        cleaning::MAX_THINKING_INPUT_CHARS,
    )?;
    m.add_function(wrap_pyfunction!(remove_non_ascii, m)?)?;
    m.add_function(wrap_pyfunction!(remove_non_printable, m)?)?;
    m.add_function(wrap_pyfunction!(parse_thinking_content, m)?)?;
    m.add_function(wrap_pyfunction!(normalize_embedding_inputs, m)?)?;
    Ok(())
}
