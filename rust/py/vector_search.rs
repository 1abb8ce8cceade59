//! Bindings for exact cosine search: numpy float32 arrays, read without a
//! copy, searched with the GIL released.

use numpy::{
    PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
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

/// The rows' sketches for cosine_top_k's sketch argument: (codes as an int8
/// matrix n x d, scales as float32, error bounds as float32).
#[pyfunction]
fn sketch_rows<'py>(py: Python<'py>, matrix: PyReadonlyArray2<'py, f32>) -> PyResult<Sketch<'py>> {
    let (slice, dim) = rows(&matrix)?;
    if dim == 0 {
        return Err(PyValueError::new_err(
            "matrix must have at least one column",
        ));
    }
    let (codes, scales, errors) = py.detach(|| vector_search::sketch_rows(slice, dim))?;
    let codes = PyArray1::from_vec(py, codes).reshape([slice.len() / dim, dim])?;
    Ok((
        codes,
        PyArray1::from_vec(py, scales),
        PyArray1::from_vec(py, errors),
    ))
}

/// Codes (int8, n x d), scales and error bounds (float32, n).
type Sketch<'py> = (
    Bound<'py, PyArray2<i8>>,
    Bound<'py, PyArray1<f32>>,
    Bound<'py, PyArray1<f32>>,
);

/// The k rows most similar to query by cosine, best first (ties: lower row
/// first): (row indices as int64, scores as float32). With sketch (from
/// sketch_rows of the same matrix) the result is the same, bit for bit,
/// reading the full rows of only the candidates the sketches leave.
#[pyfunction]
#[pyo3(signature = (matrix, norms, query, k, sketch=None))]
fn cosine_top_k<'py>(
    py: Python<'py>,
    matrix: PyReadonlyArray2<'py, f32>,
    norms: PyReadonlyArray1<'py, f32>,
    query: PyReadonlyArray1<'py, f32>,
    k: usize,
    sketch: Option<(
        PyReadonlyArray2<'py, i8>,
        PyReadonlyArray1<'py, f32>,
        PyReadonlyArray1<'py, f32>,
    )>,
) -> PyResult<TopK<'py>> {
    let (slice, dim) = rows(&matrix)?;
    if dim == 0 {
        return Err(PyValueError::new_err(
            "matrix must have at least one column",
        ));
    }
    let norms = vector(&norms, "norms")?;
    let query = vector(&query, "query")?;
    let hits = match &sketch {
        None => py.detach(|| vector_search::cosine_top_k(slice, dim, norms, query, k))?,
        Some((codes, scales, errors)) => {
            let codes = codes
                .as_slice()
                .ok()
                .filter(|_| codes.is_c_contiguous())
                .ok_or_else(|| {
                    PyValueError::new_err("the sketch's codes must be C-contiguous (row-major)")
                })?;
            let sketch = vector_search::Sketch {
                codes,
                scales: vector(scales, "the sketch's scales")?,
                errors: vector(errors, "the sketch's errors")?,
            };
            py.detach(|| vector_search::cosine_top_k_sketched(slice, dim, norms, sketch, query, k))?
        }
    };
    let index: Vec<i64> = hits.iter().map(|h| h.row as i64).collect();
    let score: Vec<f32> = hits.iter().map(|h| h.score).collect();
    Ok((PyArray1::from_vec(py, index), PyArray1::from_vec(py, score)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(row_norms, m)?)?;
    m.add_function(wrap_pyfunction!(cosine_top_k, m)?)?;
    m.add_function(wrap_pyfunction!(sketch_rows, m)?)?;
    Ok(())
}
