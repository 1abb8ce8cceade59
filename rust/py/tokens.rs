//! Bindings for exact tiktoken token counts (the encodings of [`Encoding`]).
//!
//! Strings are read as tiktoken reads a Python `str` (surrogate pairs joined,
//! lone surrogates replaced by U+FFFD: [`PyText::for_tiktoken`]). The
//! vocabulary loads on first use, with the GIL released; so is the work,
//! except for short texts (under 1 KB).

use super::text::{PyText, UnreadText, detach_unless_short};
use crate::batch;
use crate::text::Surrogates;
use crate::tokens::Encoding;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

/// Texts shorter than this are counted without releasing the GIL (it would
/// cost more than the work) once the vocabulary is loaded.
const DETACH_FROM: usize = 1024;

/// `len(tiktoken.get_encoding(encoding).encode(text, disallowed_special=()))`
#[pyfunction]
#[pyo3(signature = (text, encoding = "o200k_base"))]
fn token_count(py: Python<'_>, text: PyText, encoding: &str) -> PyResult<usize> {
    let encoding: Encoding = encoding.parse()?;
    let text = text.for_tiktoken();
    let count = || encoding.tokenizer().count(&text);
    Ok(detach_unless_short(
        py,
        text.len(),
        DETACH_FROM,
        encoding,
        count,
    ))
}

/// `token_count` of each text, on all cores.
#[pyfunction]
#[pyo3(signature = (texts, encoding = "o200k_base"))]
fn token_counts(py: Python<'_>, texts: Vec<UnreadText>, encoding: &str) -> PyResult<Vec<usize>> {
    let encoding: Encoding = encoding.parse()?;
    // Texts are transcoded where they are counted, on every thread of the
    // batch: done under the GIL, it would be a serial part capping the
    // speed-up.
    let counts = py.detach(|| {
        let tokenizer = encoding.tokenizer();
        let count = move |_, text: UnreadText| {
            let text = text.read(Surrogates::Map)?;
            Ok(tokenizer.count(&text.for_tiktoken()))
        };
        batch::longest_first(texts, UnreadText::len, count)
            .into_iter()
            .collect::<crate::error::Result<Vec<usize>>>()
    });
    Ok(counts?)
}

/// `tiktoken.get_encoding(encoding).encode_ordinary(text)`
#[pyfunction]
#[pyo3(signature = (text, encoding = "o200k_base"))]
fn encode_ordinary(py: Python<'_>, text: PyText, encoding: &str) -> PyResult<Vec<u32>> {
    let encoding: Encoding = encoding.parse()?;
    let text = text.for_tiktoken();
    Ok(py.detach(|| encoding.tokenizer().encode(&text)))
}

/// The bytes of each ordinary token of `encoding`, in rank order: the
/// vocabulary tiktoken downloads, from the copy built into the extension.
#[pyfunction]
fn _tiktoken_ranks<'py>(py: Python<'py>, encoding: &str) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let encoding: Encoding = encoding.parse()?;
    let tokenizer = py.detach(|| encoding.tokenizer());
    Ok(tokenizer
        .vocab()
        .mergeable_ranks()
        .map(|b| PyBytes::new(py, b))
        .collect())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let names = Encoding::ALL.map(Encoding::name);
    m.add("ENCODINGS", PyTuple::new(m.py(), names)?)?;
    m.add_function(wrap_pyfunction!(token_count, m)?)?;
    m.add_function(wrap_pyfunction!(token_counts, m)?)?;
    m.add_function(wrap_pyfunction!(encode_ordinary, m)?)?;
    m.add_function(wrap_pyfunction!(_tiktoken_ranks, m)?)?;
    Ok(())
}
