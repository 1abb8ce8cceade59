//! The one error type of the core; the bindings map each variant to a Python
//! exception.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// A parameter is out of range (Python `ValueError`).
    InvalidArgument(String),
    /// The HTML parser gave up on the markup, as Python's `html.parser`
    /// does on some malformed declarations (BeautifulSoup's
    /// `ParserRejectedMarkup`).
    MarkupRejected(String),
    /// The text cannot be represented for processing (Python `ValueError`).
    UnsupportedText(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidArgument(msg)
            | Error::MarkupRejected(msg)
            | Error::UnsupportedText(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for Error {}
