//! Bindings for reading an embeddings response.

use numpy::{PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;

use crate::embeddings_json;

/// The vectors of an OpenAI-style embeddings response as a float64 matrix,
/// or None when it must be decoded in Python (see the core module).
#[pyfunction]
fn embedding_rows<'py>(
    py: Python<'py>,
    body: PyBackedBytes,
) -> PyResult<Option<Bound<'py, PyArray2<f64>>>> {
    let Some(rows) = py.detach(|| embeddings_json::embedding_rows(&body)) else {
        return Ok(None);
    };
    let matrix = PyArray1::from_vec(py, rows.values).reshape([rows.rows, rows.dimension])?;
    Ok(Some(matrix))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(embedding_rows, m)?)
}
