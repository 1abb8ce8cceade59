//! Bindings for the text cleaners.

use pyo3::prelude::*;
use pyo3::types::PyString;

use super::text::{PyText, PyTextWithoutSurrogates};
use crate::cleaning;

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

/// `(thinking, cleaned)`, or None when the content is to be returned as is.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn parse_thinking_content<'py>(
    py: Python<'py>,
    content: &Bound<'py, PyString>,
) -> PyResult<Option<(Bound<'py, PyString>, Bound<'py, PyString>)>> {
    // Too long to parse: decided on the length alone, before reading the text.
    if content.len()? > cleaning::MAX_THINKING_INPUT_CHARS {
        return Ok(None);
    }
    let content: PyText = content.extract()?;
    let parsed = py.detach(|| cleaning::parse_thinking(content.as_str()));
    parsed
        .map(|(thinking, cleaned)| {
            Ok((content.to_py(py, &thinking)?, content.to_py(py, &cleaned)?))
        })
        .transpose()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add(
        "MAX_THINKING_INPUT_CHARS",
        cleaning::MAX_THINKING_INPUT_CHARS,
    )?;
    m.add_function(wrap_pyfunction!(remove_non_ascii, m)?)?;
    m.add_function(wrap_pyfunction!(remove_non_printable, m)?)?;
    m.add_function(wrap_pyfunction!(parse_thinking_content, m)?)?;
    Ok(())
}
