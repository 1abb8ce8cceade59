//! Markdown note vaults: the rules over one note's text (front matter split,
//! fenced code, code spans, headings, links, block structure, chunk plan,
//! hash normalisation). Byte offsets into `&str` throughout; every scan is
//! linear in the length of the text and never panics on any input.

pub mod edges;
pub mod links;
pub mod plan;
pub mod scan;

#[cfg(test)]
mod tests;

use crate::records::strategies::frontmatter;

/// Length in bytes of the front matter block at the top of `raw` (0 when
/// there is none): an optional byte order mark, a `---` line, up to and
/// including the next `---` or `...` line and its line end. Without a closing
/// line there is no front matter (the `---` is a thematic break).
pub fn frontmatter_end(raw: &str) -> usize {
    let bom = if raw.starts_with('\u{feff}') { 3 } else { 0 };
    match raw.get(bom..).and_then(frontmatter::block) {
        Some((_, next)) => bom + next,
        None => 0,
    }
}

/// How a body is normalised for its content hash (see [`normalise`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Normalisation {
    /// Blank-line runs collapsed too.
    Canonical,
    /// Line ends and trailing blanks only.
    Lines,
}

impl std::str::FromStr for Normalisation {
    type Err = crate::error::Error;

    fn from_str(name: &str) -> crate::error::Result<Self> {
        match name {
            "canonical" => Ok(Normalisation::Canonical),
            "none" => Ok(Normalisation::Lines),
            other => Err(crate::error::Error::InvalidArgument(format!(
                "normalise must be 'canonical', 'none' or None, not {other:?}"
            ))),
        }
    }
}

/// The text a content hash is taken of (never stored): `\r\n` becomes
/// `\n`, trailing spaces and tabs of every line are trimmed, and with
/// `canonical` every run of blank lines becomes one blank line.
pub fn normalise(text: &str, canonical: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut previous_blank = false;
    let mut first = true;
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', text.as_bytes()).chain(std::iter::once(text.len()));
    for end in ends {
        let line = text.get(start..end).unwrap_or_default();
        start = end + 1;
        let line = line.strip_suffix('\r').unwrap_or(line);
        let line = line.trim_end_matches([' ', '\t']);
        let blank = line.is_empty();
        if canonical && blank && previous_blank {
            continue;
        }
        if !first {
            out.push('\n');
        }
        out.push_str(line);
        first = false;
        previous_blank = blank;
    }
    out
}
