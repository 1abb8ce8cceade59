//! Bindings for exact cosine search: numpy float32 arrays, read without a
//! copy, searched with the GIL released.

use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::vector_search;

/// The matrix as one row-major slice and its row length.
fn rows<'a>(matrix: &'a PyReadonlyArray2<'_, f32>) -> PyResult<(&'a [f32], usize)> {
    let dim = matrix.shape()[1];
    // as_slice accepts Fortran order too: the rows must be contiguous.
    let slice = matrix
        .as_slice()
        .ok()
        .filter(|_| matrix.is_c_contiguous())
        .ok_or_else(|| {
            PyValueError::new_err(
                "matrix must be C-contiguous (row-major): pass numpy.ascontiguousarray(matrix)",
            )
        })?;
    Ok((slice, dim))
}

fn vector<'a>(array: &'a PyReadonlyArray1<'_, f32>, name: &str) -> PyResult<&'a [f32]> {
    array
        .as_slice()
        .map_err(|_| PyValueError::new_err(format!("{name} must be a contiguous array")))
}

/// Row indices (int64) and their scores (float32), best first.
type TopK<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f32>>);

/// The norm of every row of a float32 matrix (n x d), as cosine_top_k uses them.
#[pyfunction]
fn row_norms<'py>(
    py: Python<'py>,
    matrix: PyReadonlyArray2<'py, f32>,
) -> PyResult<Bound<'py, PyArray1<f32>>> {
    let (slice, dim) = rows(&matrix)?;
    if dim == 0 {
        return Err(PyValueError::new_err(
            "matrix must have at least one column",
        ));
    }
    let norms = py.detach(|| vector_search::row_norms(slice, dim))?;
    Ok(PyArray1::from_vec(py, norms))
}

/// The k rows most similar to query by cosine, best first (ties: lower row
/// first): (row indices as int64, scores as float32).
#[pyfunction]
fn cosine_top_k<'py>(
    py: Python<'py>,
    matrix: PyReadonlyArray2<'py, f32>,
    norms: PyReadonlyArray1<'py, f32>,
    query: PyReadonlyArray1<'py, f32>,
    k: usize,
) -> PyResult<TopK<'py>> {
    let (slice, dim) = rows(&matrix)?;
    if dim == 0 {
        return Err(PyValueError::new_err(
            "matrix must have at least one column",
        ));
    }
    let norms = vector(&norms, "norms")?;
    let query = vector(&query, "query")?;
    let hits = py.detach(|| vector_search::cosine_top_k(slice, dim, norms, query, k))?;
    let index: Vec<i64> = hits.iter().map(|h| h.row as i64).collect();
    let score: Vec<f32> = hits.iter().map(|h| h.score).collect();
    Ok((PyArray1::from_vec(py, index), PyArray1::from_vec(py, score)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(row_norms, m)?)?;
    m.add_function(wrap_pyfunction!(cosine_top_k, m)?)?;
    Ok(())
}
