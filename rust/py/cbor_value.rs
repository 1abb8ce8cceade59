//! Bindings for the CBOR reader (`crate::cbor_value`): a SurrealDB response
//! as Python values, built as the SDK's decoder builds them: its `RecordID`
//! class for record ids, its decoder for every other tagged item. The input
//! is read without the GIL.

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyList, PyString};

use crate::cbor_value::{self, Item};

/// `(value,)`: the one CBOR data item that is `data`, with record ids built
/// by `record_id(table, key)` and other tagged items by
/// `decode_tagged(their bytes)`; None when the reader leaves `data` to the
/// SDK's decoder (see `crate::cbor_value`).
#[pyfunction]
fn decode_cbor<'py>(
    py: Python<'py>,
    data: PyBackedBytes,
    record_id: Bound<'py, PyAny>,
    decode_tagged: Bound<'py, PyAny>,
) -> PyResult<Option<(Bound<'py, PyAny>,)>> {
    let Ok(item) = py.detach(|| cbor_value::decode(&data)) else {
        return Ok(None);
    };
    let builder = Builder {
        py,
        record_id,
        decode_tagged,
    };
    Ok(Some((builder.build(&item)?,)))
}

struct Builder<'py> {
    py: Python<'py>,
    record_id: Bound<'py, PyAny>,
    decode_tagged: Bound<'py, PyAny>,
}

impl<'py> Builder<'py> {
    /// Recursion bounded by `cbor_value::MAX_DEPTH`.
    fn build(&self, item: &Item<'_>) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        Ok(match item {
            Item::Unsigned(n) => n.into_pyobject(py)?.into_any(),
            Item::Negative(n) => (-1i128 - i128::from(*n)).into_pyobject(py)?.into_any(),
            Item::Bytes(bytes) => PyBytes::new(py, bytes).into_any(),
            Item::Text(text) => PyString::new(py, text).into_any(),
            Item::Array(items) => {
                let built = items
                    .iter()
                    .map(|i| self.build(i))
                    .collect::<PyResult<Vec<_>>>()?;
                PyList::new(py, built)?.into_any()
            }
            Item::Map(pairs) => {
                let dict = PyDict::new(py);
                for (key, value) in pairs {
                    dict.set_item(self.build(key)?, self.build(value)?)?;
                }
                dict.into_any()
            }
            Item::Float(x) => PyFloat::new(py, *x).into_any(),
            Item::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
            Item::Null | Item::None => py.None().into_bound(py),
            Item::RecordId(table, key) => self
                .record_id
                .call1((self.build(table)?, self.build(key)?))?,
            Item::Tagged(span) => self.decode_tagged.call1((PyBytes::new(py, span),))?,
        })
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(decode_cbor, m)?)
}
