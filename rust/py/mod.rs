//! The Python bindings: argument conversion, GIL release and error mapping.
//! No algorithm lives here.

mod args;
mod cbor;
mod cbor_value;
mod chunk;
mod chunk_record;
mod chunked;
mod chunking;
mod cleaning;
mod embeddings_json;
#[cfg(feature = "test-hooks")]
mod hooks;
mod langchain;
mod langchain_documents;
mod notes;
mod notes_body;
mod notes_graph;
mod notes_plan;
mod notes_records;
mod pooling;
mod records;
mod splitters;
mod strings;
mod text;
mod tokens;
mod values;
mod vector_search;

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("UNICODE_VERSION", unicode::UNICODE_VERSION)?;
    m.add("MarkupRejectedError", py.get_type::<MarkupRejectedError>())?;
    m.add(
        "UnsupportedTextError",
        py.get_type::<UnsupportedTextError>(),
    )?;
    #[cfg(feature = "test-hooks")]
    hooks::register(m)?;
    cbor::register(m)?;
    cbor_value::register(m)?;
    chunk::register(m)?;
    chunking::register(m)?;
    cleaning::register(m)?;
    embeddings_json::register(m)?;
    langchain::register(m)?;
    langchain_documents::register(m)?;
    notes::register(m)?;
    notes_graph::register(m)?;
    pooling::register(m)?;
    records::register(m)?;
    splitters::register(m)?;
    tokens::register(m)?;
    vector_search::register(m)
}
