//! What a scanned link points to: the target of a Markdown link (only links
//! to `.md` files are note links), percent-decoding as Python's
//! `urllib.parse.unquote` does it, and attachment targets (images, media,
//! canvases and other files that are not notes).

use std::borrow::Cow;

/// Extensions (lower case) of link targets that are attachments, not notes.
pub const ATTACHMENT_EXTENSIONS: [&str; 37] = [
    "png",
    "jpg",
    "jpeg",
    "gif",
    "bmp",
    "svg",
    "webp",
    "avif",
    "tif",
    "tiff",
    "ico",
    "heic",
    "pdf",
    "mp3",
    "mp4",
    "m4a",
    "m4v",
    "webm",
    "ogg",
    "ogv",
    "wav",
    "flac",
    "mov",
    "mkv",
    "avi",
    "3gp",
    "canvas",
    "base",
    "excalidraw",
    "zip",
    "csv",
    "json",
    "txt",
    "html",
    "htm",
    "css",
    "js",
];

/// Python's `str.isspace` (Unicode `White_Space` plus the information
/// separators U+001C..U+001F).
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.strip()`.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

/// The extension of a target's last path segment (after its last `.`), as
/// written; `None` without a `.` in that segment.
pub fn extension(target: &str) -> Option<&str> {
    let name = target.rsplit('/').next().unwrap_or(target);
    name.rfind('.').map(|i| &name[i + 1..])
}

/// Whether a lower-cased extension is an attachment's.
pub fn is_attachment_extension(lower: &str) -> bool {
    ATTACHMENT_EXTENSIONS.contains(&lower)
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// `urllib.parse.unquote(s)`: in each run of ASCII characters every `%XX`
/// (two hex digits) becomes that byte and the run's bytes are decoded as
/// UTF-8, an invalid sequence becoming U+FFFD; other characters and any
/// other `%` stay as they are.
pub fn unquote(s: &str) -> Cow<'_, str> {
    if !s.contains('%') {
        return Cow::Borrowed(s);
    }
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut run: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii() {
            // A non-ASCII character: copied as it is (to its end).
            let mut j = i + 1;
            while j < b.len() && !s.is_char_boundary(j) {
                j += 1;
            }
            out.push_str(&s[i..j]);
            i = j;
            continue;
        }
        // One ASCII run.
        run.clear();
        while i < b.len() && b[i].is_ascii() {
            if b[i] == b'%'
                && let (Some(hi), Some(lo)) = (
                    b.get(i + 1).copied().and_then(hex),
                    b.get(i + 2).copied().and_then(hex),
                )
            {
                run.push(hi * 16 + lo);
                i += 3;
                continue;
            }
            run.push(b[i]);
            i += 1;
        }
        out.push_str(&String::from_utf8_lossy(&run));
    }
    Cow::Owned(out)
}

/// The target of a Markdown link to a note: (path, heading, block).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkdownTarget {
    pub target: String,
    pub heading: Option<String>,
    pub block: Option<String>,
}

fn has_scheme(s: &str) -> bool {
    let b = s.as_bytes();
    if !b.first().is_some_and(u8::is_ascii_alphabetic) {
        return false;
    }
    for &c in &b[1..] {
        match c {
            b':' => return true,
            c if c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'-') => {}
            _ => return false,
        }
    }
    false
}

/// The note a Markdown link's URL points to: `None` for URLs with a scheme,
/// fragments of the same note, and targets that are not `.md` files.
pub fn markdown_target(url: &str) -> Option<MarkdownTarget> {
    let mut target = py_strip(url);
    if target.starts_with('<') && target.ends_with('>') {
        target = target.get(1..target.len().saturating_sub(1)).unwrap_or("");
    }
    if target.is_empty() || target.starts_with('#') || has_scheme(target) {
        return None;
    }
    let (path, fragment) = match target.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (target, None),
    };
    let path = unquote(path);
    let tail = path.as_bytes();
    if tail.len() < 3 || !tail[tail.len() - 3..].eq_ignore_ascii_case(b".md") {
        return None;
    }
    let (mut heading, mut block) = (None, None);
    if let Some(fragment) = fragment.filter(|f| !f.is_empty()) {
        let fragment = unquote(fragment);
        match fragment.strip_prefix('^') {
            Some(b) => block = (!b.is_empty()).then(|| b.to_string()),
            None => heading = Some(fragment.into_owned()),
        }
    }
    Some(MarkdownTarget {
        target: path.into_owned(),
        heading,
        block,
    })
}
