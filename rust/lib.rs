//! fastnotebook's core: the text preparation of Open Notebook's `utils`, in
//! Rust. The algorithm modules know nothing of Python; `py` is the one thin
//! bindings layer that the `fastnotebook._core` extension module exposes: it
//! converts arguments and results between Python and Rust and maps errors,
//! and every decision is the core's. It is built with the `python` feature
//! (a default one): without it the crate is the core alone, with no pyo3.

pub mod batch;
pub mod cbor;
pub mod cbor_read;
pub mod cbor_value;
pub mod chunking;
pub mod cleaning;
pub mod embeddings_json;
pub mod error;
pub mod notes;
pub mod pooling;
pub mod records;
pub mod text;
pub mod tokens;
pub mod unicode;
pub mod vector_search;

#[cfg(feature = "python")]
mod py;

#[cfg(test)]
mod proptests;

#[cfg(feature = "python")]
#[pyo3::pymodule(gil_used = false)]
fn _core(m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
    py::register(m)
}
