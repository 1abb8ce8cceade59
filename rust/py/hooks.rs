//! Functions only the tests call, compiled with the `test-hooks` cargo feature
//! (the development build, `make build`, enables it; release builds do not).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::tokens::classes;
use crate::unicode;

/// Class bits (1 space, 2 printable, 4 word, 8 decimal, 16 category C*) of the code points
/// `start..end`, surrogates as 0: lets the tests compare the tables with the
/// running CPython.
#[pyfunction]
fn _char_class_bits(py: Python<'_>, start: u32, end: u32) -> Bound<'_, PyBytes> {
    let bits: Vec<u8> = (start..end)
        .map(|cp| char::from_u32(cp).map_or(0, unicode::class_bits))
        .collect();
    PyBytes::new(py, &bits)
}

/// The pre-tokenizers' class bits (1 `\p{L}`, 2 `\p{N}`, 4 `\s`, 8 o200k's
/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`, 16 its `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`) of the
/// code points `start..end`, surrogates as 0: lets the tests compare them
/// with the classes the installed tiktoken matches.
#[pyfunction]
fn _token_char_classes(py: Python<'_>, start: u32, end: u32) -> Bound<'_, PyBytes> {
    let bits: Vec<u8> = (start..end)
        .map(|cp| char::from_u32(cp).map_or(0, classes::of_char))
        .collect();
    PyBytes::new(py, &bits)
}

/// Panics inside Rust, so that the tests can check that a panic surfaces as
/// a Python exception (`pyo3_runtime.PanicException`) and leaves the library
/// working. `site`: "gil" (GIL held), "detached" (GIL released), "worker"
/// (on a rayon worker, GIL released).
#[pyfunction]
#[pyo3(signature = (site = "detached"))]
fn _panic_for_tests(py: Python<'_>, site: &str) -> PyResult<()> {
    fn forced(site: &str) -> usize {
        panic!("forced panic for tests ({site})")
    }
    let ran = match site {
        "gil" => forced(site),
        "detached" => py.detach(|| forced("detached")),
        "worker" => py.detach(|| {
            use rayon::prelude::*;
            (0..64usize)
                .into_par_iter()
                .map(|i| if i == 63 { forced("worker") } else { i })
                .sum()
        }),
        other => {
            return Err(PyValueError::new_err(format!(
                "site must be 'gil', 'detached' or 'worker', got {other:?}"
            )));
        }
    };
    Err(PyValueError::new_err(format!("no panic ({ran})")))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_char_class_bits, m)?)?;
    m.add_function(wrap_pyfunction!(_token_char_classes, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    Ok(())
}
