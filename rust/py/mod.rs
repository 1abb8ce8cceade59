//! The Python bindings: argument conversion, GIL release and error mapping.
//! No algorithm lives here.

mod chunking;
mod cleaning;
mod pooling;
mod text;
mod tokens;

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::error::Error;
use crate::unicode;

create_exception!(
    fastnotebook._core,
    MarkupRejectedError,
    PyValueError,
    "The HTML parser gave up on the markup (BeautifulSoup's ParserRejectedMarkup)."
);
create_exception!(
    fastnotebook._core,
    UnsupportedTextError,
    PyValueError,
    "The text cannot be processed as given."
);

impl From<Error> for PyErr {
    fn from(err: Error) -> PyErr {
        match err {
            Error::InvalidArgument(msg) => PyValueError::new_err(msg),
            Error::MarkupRejected(msg) => MarkupRejectedError::new_err(msg),
            Error::UnsupportedText(msg) => UnsupportedTextError::new_err(msg),
        }
    }
}

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

/// Test-only: panics inside Rust, so that the tests can check that a panic
/// surfaces as a Python exception (`pyo3_runtime.PanicException`) and leaves
/// the library working. `site`: "gil" (GIL held), "detached" (GIL released),
/// "worker" (on a rayon worker, GIL released).
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
    let py = m.py();
    m.add("UNICODE_VERSION", unicode::UNICODE_VERSION)?;
    m.add("MarkupRejectedError", py.get_type::<MarkupRejectedError>())?;
    m.add(
        "UnsupportedTextError",
        py.get_type::<UnsupportedTextError>(),
    )?;
    m.add_function(wrap_pyfunction!(_char_class_bits, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    chunking::register(m)?;
    cleaning::register(m)?;
    pooling::register(m)?;
    tokens::register(m)
}
