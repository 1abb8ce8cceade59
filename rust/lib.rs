//! fastnotebook's core: the text preparation of Open Notebook's `utils`, in
//! Rust. The algorithm modules know nothing of Python; `py` is the one thin
//! bindings layer that the `fastnotebook._core` extension module exposes: it
//! converts arguments and results between Python and Rust and maps errors,
//! and every decision is the core's.

pub mod batch;
pub mod cbor;
pub mod chunking;
pub mod cleaning;
pub mod error;
pub mod notes;
pub mod pooling;
pub mod records;
pub mod text;
pub mod tokens;
pub mod unicode;
pub mod vector_search;

mod py;

#[cfg(test)]
mod proptests;

use pyo3::prelude::*;

#[pymodule(gil_used = false)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    py::register(m)
}
