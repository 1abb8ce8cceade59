//! Bindings for the CBOR row encoder: record ids as bytes, texts, and the
//! vectors as a numpy array (float32 or float64, read without a copy when
//! C-contiguous); the encoding runs without the GIL.

use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::PyBytes;

use crate::cbor::{self, ChunkRows, Floats, RowIds};
use crate::cbor_read::{self, Statement};

/// Runs `encode` over the matrix's numbers as a contiguous slice.
fn with_floats<'py, R>(
    py: Python<'py>,
    vectors: &Bound<'py, PyAny>,
    encode: impl FnOnce(Floats<'_>, usize) -> crate::error::Result<R> + Send,
) -> PyResult<R>
where
    R: Send,
{
    if let Ok(m) = vectors.extract::<PyReadonlyArray2<'py, f32>>() {
        let view = m.as_array();
        let dim = view.ncols();
        let owned = view.as_standard_layout();
        let slice = owned.as_slice().unwrap_or(&[]);
        return Ok(py.detach(|| encode(Floats::F32(slice), dim))?);
    }
    if let Ok(m) = vectors.extract::<PyReadonlyArray2<'py, f64>>() {
        let view = m.as_array();
        let dim = view.ncols();
        let owned = view.as_standard_layout();
        let slice = owned.as_slice().unwrap_or(&[]);
        return Ok(py.detach(|| encode(Floats::F64(slice), dim))?);
    }
    let dtype = vectors
        .getattr("dtype")
        .map_or_else(|_| vectors.get_type().to_string(), |d| d.to_string());
    Err(PyTypeError::new_err(format!(
        "vectors must be a 2-D numpy array of float32 or float64, got {dtype}"
    )))
}

/// The CBOR array of chunk rows (`source`, `order`, `content`, `embedding`)
/// of records `owners` (CBOR-encoded ids), `counts[i]` texts each; with
/// `ids=(table, keys)`, row `j` also gets the id `table:keys[j]`.
#[pyfunction]
#[pyo3(signature = (owners, counts, texts, vectors, ids=None))]
fn encode_chunk_rows<'py>(
    py: Python<'py>,
    owners: Vec<PyBackedBytes>,
    counts: Vec<usize>,
    texts: Vec<PyBackedStr>,
    vectors: &Bound<'py, PyAny>,
    ids: Option<(PyBackedStr, Vec<PyBackedStr>)>,
) -> PyResult<Bound<'py, PyBytes>> {
    let owners: Vec<&[u8]> = owners.iter().map(|o| o.as_ref()).collect();
    let texts: Vec<&str> = texts.iter().map(|t| t.as_ref()).collect();
    let keys: Vec<&str> = ids
        .as_ref()
        .map(|(_, keys)| keys.iter().map(|k| k.as_ref()).collect())
        .unwrap_or_default();
    let ids = ids.as_ref().map(|(table, _)| RowIds {
        table: table.as_ref(),
        keys: &keys,
    });
    let out = with_floats(py, vectors, |floats, dimension| {
        cbor::chunk_rows(&ChunkRows {
            owners: &owners,
            counts: &counts,
            texts: &texts,
            vectors: floats,
            dimension,
            ids,
        })
    })?;
    Ok(PyBytes::new(py, &out))
}

/// The CBOR array of `{id, embedding}` rows: record `ids[i]` (CBOR-encoded)
/// with row `i` of `vectors`.
#[pyfunction]
fn encode_vector_rows<'py>(
    py: Python<'py>,
    ids: Vec<PyBackedBytes>,
    vectors: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let ids: Vec<&[u8]> = ids.iter().map(|o| o.as_ref()).collect();
    let out = with_floats(py, vectors, |floats, dimension| {
        cbor::vector_rows(&ids, floats, dimension)
    })?;
    Ok(PyBytes::new(py, &out))
}

type Span = (usize, usize);
type Rows<'py> = (Vec<Span>, Bound<'py, PyArray2<f32>>);

/// The statements of a SurrealDB `query` response: `(status, result span,
/// rows)`, where `rows` (each id's byte span and an f32 matrix of
/// `dimension` columns) is given for a result of `[id, vector]` pairs.
#[pyfunction]
fn read_vector_statements<'py>(
    py: Python<'py>,
    data: PyBackedBytes,
    dimension: usize,
) -> PyResult<Vec<(String, Span, Option<Rows<'py>>)>> {
    let statements = py.detach(|| cbor_read::query_statements(&data, dimension))?;
    statements
        .into_iter()
        .map(
            |Statement {
                 status,
                 result,
                 rows,
             }| {
                let rows = match rows {
                    None => None,
                    Some(rows) => {
                        let count = rows.ids.len();
                        let matrix =
                            PyArray1::from_vec(py, rows.vectors).reshape([count, dimension])?;
                        Some((rows.ids, matrix))
                    }
                };
                Ok((status, result, rows))
            },
        )
        .collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_vector_statements, m)?)?;
    m.add_function(wrap_pyfunction!(encode_chunk_rows, m)?)?;
    m.add_function(wrap_pyfunction!(encode_vector_rows, m)?)
}
