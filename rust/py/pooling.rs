//! Bindings for mean pooling: Python lists (the original's API) and numpy
//! arrays (float32 or float64, any layout, read without a copy).

use numpy::ndarray::{Array2, ArrayView2, Axis, s};
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArray3,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyList, PyTuple};
use rayon::prelude::*;

use crate::error::Result;
use crate::pooling::{self, Element, Pool};

/// One number of an embedding: a float, or anything with `__float__`.
fn number(x: &Bound<'_, PyAny>) -> PyResult<f64> {
    match x.cast::<PyFloat>() {
        Ok(f) => Ok(f.value()),
        Err(_) => x.extract::<f64>(),
    }
}

/// Reads one embedding (a list, tuple or other sequence of numbers) into `row`.
fn read_row(item: &Bound<'_, PyAny>, row: &mut Vec<f64>) -> PyResult<()> {
    row.clear();
    if let Ok(list) = item.cast_exact::<PyList>() {
        // The common case, a list of floats, read without reference counting
        // or calls: this is where converting lists costs the original most.
        let mut i = 0;
        // SAFETY: we hold the GIL and a reference to the list. The size is
        // re-read every step, since converting a non-float item may run
        // Python code that changes the list; that item is converted from a
        // new reference of its own.
        unsafe {
            while i < ffi::PyList_GET_SIZE(list.as_ptr()) {
                let obj = ffi::PyList_GET_ITEM(list.as_ptr(), i);
                if ffi::PyFloat_CheckExact(obj) != 0 {
                    row.push(ffi::PyFloat_AS_DOUBLE(obj));
                } else {
                    row.push(number(&Bound::from_borrowed_ptr(item.py(), obj))?);
                }
                i += 1;
            }
        }
    } else if let Ok(tuple) = item.cast::<PyTuple>() {
        for x in tuple.iter() {
            row.push(number(&x)?);
        }
    } else {
        for x in item.try_iter()? {
            row.push(number(&x?)?);
        }
    }
    Ok(())
}

/// Mean pooling of a list of embeddings (lists of floats), as the original.
#[pyfunction]
fn mean_pool_embeddings(embeddings: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    let mut rows = embeddings
        .try_iter()
        .map_err(|_| PyTypeError::new_err("embeddings must be a list of lists of floats"))?;
    let Some(first) = rows.next() else {
        return Err(PyValueError::new_err(
            "Cannot mean pool empty list of embeddings",
        ));
    };
    let mut row = Vec::new();
    read_row(&first?, &mut row)?;
    let mut pool = Pool::new(row.len());
    pool.add(&row, 0)?;
    for (i, item) in rows.enumerate() {
        read_row(&item?, &mut row)?;
        pool.add(&row, i + 1)?;
    }
    Ok(pool.finish()?)
}

/// Pools the rows `start..end` of a matrix view into `out`.
fn pool_rows<T: Element>(matrix: &ArrayView2<'_, T>, out: &mut [T]) -> Result<()> {
    let mut pool = Pool::new(matrix.ncols());
    let mut scratch: Vec<T> = Vec::new();
    for (i, row) in matrix.axis_iter(Axis(0)).enumerate() {
        match row.as_slice() {
            Some(slice) => pool.add(slice, i)?,
            None => {
                // A strided row: copy it once.
                scratch.clear();
                scratch.extend(row.iter().copied());
                pool.add(&scratch, i)?;
            }
        }
    }
    pool.finish_into(out)
}

fn pool_one<'py, T: Element + numpy::Element>(
    py: Python<'py>,
    matrix: PyReadonlyArray2<'py, T>,
) -> PyResult<Bound<'py, PyArray1<T>>> {
    let view = matrix.as_array();
    let mut out = vec![T::from_f64(0.0); view.ncols()];
    py.detach(|| pool_rows(&view, &mut out))?;
    Ok(PyArray1::from_vec(py, out))
}

fn pool_segments<'py, T: Element + numpy::Element>(
    py: Python<'py>,
    matrix: PyReadonlyArray2<'py, T>,
    offsets: &[i64],
) -> PyResult<Bound<'py, PyArray2<T>>> {
    let view = matrix.as_array();
    pooling::check_offsets(offsets, view.nrows())?;
    let (docs, dim) = (offsets.len() - 1, view.ncols());
    let mut out = vec![T::from_f64(0.0); docs * dim];
    py.detach(|| {
        out.par_chunks_mut(dim.max(1))
            .enumerate()
            .try_for_each(|(doc, target)| {
                let (start, end) = (offsets[doc] as usize, offsets[doc + 1] as usize);
                pool_rows(&view.slice(s![start..end, ..]), target)
            })
    })?;
    let out = Array2::from_shape_vec((docs, dim), out)
        .map_err(|e| PyValueError::new_err(format!("internal shape error: {e}")))?;
    Ok(out.into_pyarray(py))
}

fn unsupported(matrix: &Bound<'_, PyAny>) -> PyErr {
    let dtype = matrix
        .getattr("dtype")
        .map_or_else(|_| matrix.get_type().to_string(), |d| d.to_string());
    PyTypeError::new_err(format!(
        "expected a 2-D numpy array of float32 or float64, got {dtype}; convert it with \
         numpy.asarray(x, dtype=numpy.float32)"
    ))
}

/// One document: the mean-pooled row of a (rows x dim) array, same dtype.
#[pyfunction]
fn mean_pool<'py>(py: Python<'py>, matrix: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(m) = matrix.extract::<PyReadonlyArray2<'py, f32>>() {
        return Ok(pool_one(py, m)?.into_any());
    }
    if let Ok(m) = matrix.extract::<PyReadonlyArray2<'py, f64>>() {
        return Ok(pool_one(py, m)?.into_any());
    }
    Err(unsupported(matrix))
}

/// Many documents: rows `offsets[i]:offsets[i+1]` are document i.
#[pyfunction]
fn mean_pool_segments<'py>(
    py: Python<'py>,
    matrix: &Bound<'py, PyAny>,
    offsets: PyReadonlyArray1<'py, i64>,
) -> PyResult<Bound<'py, PyAny>> {
    let offsets = offsets.as_array().to_vec();
    if let Ok(m) = matrix.extract::<PyReadonlyArray2<'py, f32>>() {
        return Ok(pool_segments(py, m, &offsets)?.into_any());
    }
    if let Ok(m) = matrix.extract::<PyReadonlyArray2<'py, f64>>() {
        return Ok(pool_segments(py, m, &offsets)?.into_any());
    }
    Err(unsupported(matrix))
}

/// Attention-masked mean pooling of token embeddings, normalised:
/// `hidden` (batch x tokens x dim, float32), `mask` (batch x tokens, int64)
/// -> (batch x dim, float32), as sentence-transformers' Pooling + Normalize.
#[pyfunction]
fn mean_pool_tokens<'py>(
    py: Python<'py>,
    hidden: PyReadonlyArray3<'py, f32>,
    mask: PyReadonlyArray2<'py, i64>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let (hidden, mask) = (hidden.as_array(), mask.as_array());
    let (batch, tokens, dim) = hidden.dim();
    if mask.dim() != (batch, tokens) {
        return Err(PyValueError::new_err(format!(
            "attention mask has shape {:?}, expected ({batch}, {tokens})",
            mask.dim()
        )));
    }
    let mut out = vec![0.0f32; batch * dim];
    py.detach(|| {
        out.par_chunks_mut(dim.max(1))
            .enumerate()
            .try_for_each(|(i, target)| {
                let h = hidden.index_axis(Axis(0), i);
                let m = mask.index_axis(Axis(0), i);
                let h = h.as_standard_layout();
                let m = m.as_standard_layout();
                let (h, m) = (h.as_slice().unwrap_or(&[]), m.as_slice().unwrap_or(&[]));
                pooling::token_mean_pool(h, m, target)
            })
    })?;
    let out = Array2::from_shape_vec((batch, dim), out)
        .map_err(|e| PyValueError::new_err(format!("internal shape error: {e}")))?;
    Ok(out.into_pyarray(py))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(mean_pool_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(mean_pool_embeddings, m)?)?;
    m.add_function(wrap_pyfunction!(mean_pool, m)?)?;
    m.add_function(wrap_pyfunction!(mean_pool_segments, m)?)?;
    Ok(())
}
