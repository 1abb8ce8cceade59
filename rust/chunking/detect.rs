//! Content-type detection: file extension first, then content heuristics.
//!
//! The heuristics are Open Notebook's regular expressions with Python `re`
//! semantics, found by the scanners of [`super::signals`]. The scores are sums
//! of the same constants in the same order, so the floats are bit-identical
//! to the original's.

use super::signals::{html_signals, markdown_signals};
use crate::error::{Error, Result};
use crate::unicode;
use std::borrow::Cow;
use std::str::FromStr;

/// How a text is split.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ContentType {
    Html,
    Markdown,
    Plain,
}

impl ContentType {
    /// The value of the Python enum member.
    pub fn as_str(self) -> &'static str {
        match self {
            ContentType::Html => "html",
            ContentType::Markdown => "markdown",
            ContentType::Plain => "plain",
        }
    }
}

/// The type of a name (the Python enum member's value).
impl FromStr for ContentType {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        match name {
            "html" => Ok(ContentType::Html),
            "markdown" => Ok(ContentType::Markdown),
            "plain" => Ok(ContentType::Plain),
            _ => Err(Error::InvalidArgument(format!(
                "content_type must be 'html', 'markdown' or 'plain', got {name:?}"
            ))),
        }
    }
}

/// Heuristic scores at or above this override a plain-text extension.
pub const HIGH_CONFIDENCE_THRESHOLD: f64 = 0.8;
/// Only this many leading characters are examined.
pub const SAMPLE_CHARS: usize = 5000;

const EXTENSIONS: &[(&str, ContentType)] = &[
    (".html", ContentType::Html),
    (".htm", ContentType::Html),
    (".xhtml", ContentType::Html),
    (".md", ContentType::Markdown),
    (".markdown", ContentType::Markdown),
    (".mdown", ContentType::Markdown),
    (".mkd", ContentType::Markdown),
    (".txt", ContentType::Plain),
    (".text", ContentType::Plain),
    (".py", ContentType::Plain),
    (".js", ContentType::Plain),
    (".ts", ContentType::Plain),
    (".java", ContentType::Plain),
    (".c", ContentType::Plain),
    (".cpp", ContentType::Plain),
    (".go", ContentType::Plain),
    (".rs", ContentType::Plain),
    (".rb", ContentType::Plain),
    (".php", ContentType::Plain),
    (".sh", ContentType::Plain),
    (".bash", ContentType::Plain),
    (".zsh", ContentType::Plain),
    (".sql", ContentType::Plain),
    (".json", ContentType::Plain),
    (".yaml", ContentType::Plain),
    (".yml", ContentType::Plain),
    (".xml", ContentType::Plain),
    (".csv", ContentType::Plain),
    (".tsv", ContentType::Plain),
];

/// The file extensions that map to a content type, as the original's table.
pub fn known_extensions() -> impl Iterator<Item = (&'static str, ContentType)> {
    EXTENSIONS.iter().copied()
}

/// `pathlib.PurePosixPath(path).suffix`: the last component's final
/// `.suffix`, where a leading dot (".bashrc") or a trailing one ("a.") does
/// not count, and "." components are ignored.
fn path_suffix(path: &str) -> &str {
    let name = path
        .split('/')
        .rev()
        .find(|part| !part.is_empty() && *part != ".")
        .unwrap_or("");
    match name.rfind('.') {
        Some(i) if i > 0 && i + 1 < name.len() => &name[i..],
        _ => "",
    }
}

/// Content type from the file extension, case-insensitively (Python's
/// `str.lower`, under which only U+212A KELVIN SIGN becomes a letter that an
/// extension in the table contains).
pub fn detect_from_extension(path: &str) -> Option<ContentType> {
    let suffix = path_suffix(path);
    let lowered: String = suffix
        .chars()
        .map(|c| {
            if c == '\u{212A}' {
                'k'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect();
    EXTENSIONS
        .iter()
        .find(|(ext, _)| *ext == lowered)
        .map(|&(_, ct)| ct)
}

/// Whether `needle` (lowercase ASCII) occurs in `text` ignoring ASCII case,
/// which is what `needle in text.lower()` finds for these needles.
fn contains_ascii_ci(text: &str, needle: &str) -> bool {
    // Every needle starts with '<': only look where one is.
    let (bytes, needle) = (text.as_bytes(), needle.as_bytes());
    memchr::memchr_iter(needle[0], bytes).any(|at| {
        bytes
            .get(at..at + needle.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(needle))
    })
}

fn html_score(sample: &str) -> f64 {
    let signals = html_signals(sample);
    let mut score = 0.0;
    let mut indicators = 0;
    if signals.doctype {
        score += 0.4;
        indicators += 1;
    }
    if signals.html_tag {
        score += 0.3;
        indicators += 1;
    }
    for tag in ["<head", "<body", "<div", "<span", "<p>", "<table", "<form"] {
        if contains_ascii_ci(sample, tag) {
            score += 0.1;
            indicators += 1;
            if indicators >= 5 {
                break;
            }
        }
    }
    if signals.header_tag {
        score += 0.15;
    }
    if signals.closing_tag {
        score += 0.1;
    }
    f64::min(score, 1.0)
}

fn markdown_score(sample: &str) -> f64 {
    let signals = markdown_signals(sample);
    let mut score = 0.0;
    let headers = signals.headers;
    if headers >= 3 {
        score += 0.35;
    } else if headers >= 1 {
        score += 0.2;
    }
    let links = signals.links;
    if links >= 2 {
        score += 0.25;
    } else if links >= 1 {
        score += 0.15;
    }
    if signals.fence {
        score += 0.2;
    }
    if signals.inline_code {
        score += 0.1;
    }
    let items = signals.list_items;
    if items >= 3 {
        score += 0.15;
    } else if items >= 1 {
        score += 0.08;
    }
    if signals.emphasis {
        score += 0.1;
    }
    if signals.quote {
        score += 0.1;
    }
    f64::min(score, 1.0)
}

/// The first `n` code points of `text`.
fn prefix_chars(text: &str, n: usize) -> &str {
    // Mostly ASCII: n characters are at most 4n bytes; count only that far.
    let window = &text[..text.floor_char_boundary(n.saturating_mul(4).min(text.len()))];
    if unicode::char_len(window) <= n {
        return window;
    }
    match window.char_indices().nth(n) {
        Some((i, _)) => &text[..i],
        None => window,
    }
}

/// Content type and confidence from the text alone.
pub fn detect_from_heuristics(text: &str) -> (ContentType, f64) {
    let sample = prefix_chars(text, SAMPLE_CHARS);
    if unicode::char_len(sample) < 10 {
        return (ContentType::Plain, 0.5);
    }
    let html = html_score(sample);
    if html >= HIGH_CONFIDENCE_THRESHOLD {
        return (ContentType::Html, html);
    }
    let markdown = markdown_score(sample);
    if markdown >= HIGH_CONFIDENCE_THRESHOLD {
        return (ContentType::Markdown, markdown);
    }
    if html > markdown && html > 0.3 {
        (ContentType::Html, html)
    } else if markdown > 0.3 {
        (ContentType::Markdown, markdown)
    } else {
        (ContentType::Plain, 0.6)
    }
}

/// Everything `detect_content_type` decides, so callers can log as the
/// original does. The heuristics are not run (confidence NaN) when an HTML or
/// Markdown extension makes them irrelevant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Detection {
    pub content_type: ContentType,
    pub from_extension: Option<ContentType>,
    pub heuristic: ContentType,
    pub confidence: f64,
}

/// The extension decides, except that no extension defers to the heuristics
/// and a plain-text extension yields to a confident heuristic.
pub fn detect(text: &str, path: Option<&str>) -> Detection {
    detect_lazily(path, || Cow::Borrowed(text))
}

/// [`detect`] with the text asked for only when the heuristics run: making a
/// sample of a Python string's code units costs a pass over it.
pub fn detect_lazily<'t>(path: Option<&str>, text: impl FnOnce() -> Cow<'t, str>) -> Detection {
    let from_extension = path.and_then(detect_from_extension);
    // An HTML or Markdown extension wins whatever the heuristics say.
    let (heuristic, confidence) = match from_extension {
        Some(ContentType::Html | ContentType::Markdown) => (ContentType::Plain, f64::NAN),
        _ => detect_from_heuristics(&text()),
    };
    let content_type = match from_extension {
        None => heuristic,
        Some(ContentType::Plain) if confidence >= HIGH_CONFIDENCE_THRESHOLD => heuristic,
        Some(ct) => ct,
    };
    Detection {
        content_type,
        from_extension,
        heuristic,
        confidence,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_types() {
        for ct in [ContentType::Html, ContentType::Markdown, ContentType::Plain] {
            assert_eq!(ct.as_str().parse(), Ok(ct));
        }
        assert_eq!(
            "HTML".parse::<ContentType>(),
            Err(Error::InvalidArgument(
                "content_type must be 'html', 'markdown' or 'plain', got \"HTML\"".into()
            ))
        );
    }

    #[test]
    fn extensions_follow_pathlib_suffix() {
        assert_eq!(
            detect_from_extension("docs/a.HTML"),
            Some(ContentType::Html)
        );
        assert_eq!(
            detect_from_extension("notes.tar.md"),
            Some(ContentType::Markdown)
        );
        assert_eq!(
            detect_from_extension("x.M\u{212A}D"),
            Some(ContentType::Markdown)
        );
        assert_eq!(
            detect_from_extension("dir.md/"),
            Some(ContentType::Markdown)
        );
        assert_eq!(detect_from_extension("a.md/."), Some(ContentType::Markdown));
        assert_eq!(detect_from_extension(".md"), None);
        assert_eq!(detect_from_extension("file."), None);
        assert_eq!(detect_from_extension("a.md/.."), None);
        assert_eq!(detect_from_extension("README"), None);
        assert_eq!(detect_from_extension(""), None);
        assert_eq!(detect_from_extension("x.docx"), None);
    }

    #[test]
    fn short_text_is_plain_half_confident() {
        assert_eq!(detect_from_heuristics("# a"), (ContentType::Plain, 0.5));
        assert_eq!(
            detect_from_heuristics("ééééééééé"),
            (ContentType::Plain, 0.5)
        );
    }

    #[test]
    fn html_document_is_confident() {
        let html = "<!DOCTYPE html><html><head></head><body><div><p>x</p></div></body></html>";
        let (ct, score) = detect_from_heuristics(html);
        assert_eq!(ct, ContentType::Html);
        assert_eq!(score, 1.0);
    }

    #[test]
    fn structural_loop_stops_at_five_indicators() {
        // doctype + html + head + body + div = 5 indicators: span/p/table are
        // not counted, then h1 (+0.15) and a closing tag (+0.1).
        let html = "<!doctype html><html><head><body><div><span><p><table><h1>t</h1>";
        let expected = f64::min(0.0 + 0.4 + 0.3 + 0.1 + 0.1 + 0.1 + 0.15 + 0.1, 1.0);
        assert_eq!(html_score(html), expected);
    }

    #[test]
    fn markdown_scores_sum_in_order() {
        let md = "# Title\n\nSome `code` and [a](b) and [c](d).\n\n- one\n- two\n- three\n";
        let expected = 0.0 + 0.2 + 0.25 + 0.1 + 0.15;
        assert_eq!(markdown_score(md), expected);
        assert_eq!(
            detect_from_heuristics(md),
            (ContentType::Markdown, expected)
        );
    }

    #[test]
    fn plain_extension_yields_only_to_confident_heuristics() {
        let md = "# A\n## B\n### C\n[x](y) [z](w)\n```\ncode\n```\n";
        assert_eq!(
            detect(md, Some("a.txt")).content_type,
            ContentType::Markdown
        );
        assert_eq!(
            detect("plain words only here", Some("a.txt")).content_type,
            ContentType::Plain
        );
        assert_eq!(detect(md, Some("a.html")).content_type, ContentType::Html);
        assert_eq!(detect(md, None).content_type, ContentType::Markdown);
    }
}
