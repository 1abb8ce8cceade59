//! langchain's `ExperimentalMarkdownSyntaxTextSplitter`: Markdown cut at
//! headers, code fences and horizontal rules, whitespace kept as written.
//!
//! The text is read line by line as Python's `str.splitlines(keepends=True)`
//! cuts it. A header line (`#` to `######`, a space, its text; only the
//! configured levels) closes the chunk and sets the header path; a line
//! opening a code fence (```` ``` ```` or `~~~`) closes the chunk, and the
//! fence up to the next line opening one is a chunk of its own with its
//! language as `Code` (a fence never closed drops the rest of the text, as
//! langchain's does); a horizontal rule (`***`, `---`, `___`, three or more,
//! then the line's `\n`) closes the chunk. Blank chunks are dropped.

use crate::unicode;

/// A chunk: its text and metadata, keys in the order a Python dict holds them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxChunk {
    pub content: String,
    pub metadata: Vec<(String, String)>,
}

/// The splitter's settings.
#[derive(Clone, Debug)]
pub struct MarkdownSyntaxSplitter {
    /// Metadata key of each header depth 1-6 (`None`: not split on).
    names: [Option<String>; 6],
    strip_headers: bool,
    return_each_line: bool,
}

/// What a split leaves: the chunks (or lines), and the header path at the end
/// of the text as (depth, text) pairs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyntaxSplit {
    pub chunks: Vec<SyntaxChunk>,
    pub header_stack: Vec<(usize, String)>,
}

/// `dict[key] = value`: replaced in place, or appended.
fn set(metadata: &mut Vec<(String, String)>, key: &str, value: &str) {
    match metadata.iter_mut().find(|(k, _)| k == key) {
        Some((_, v)) => value.clone_into(v),
        None => metadata.push((key.to_string(), value.to_string())),
    }
}

/// Python's `str.isspace()`.
fn is_space_only(s: &str) -> bool {
    !s.is_empty() && s.chars().all(unicode::is_space)
}

/// The line boundaries of `str.splitlines`.
fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\x0b'
            | '\x0c'
            | '\x1c'
            | '\x1d'
            | '\x1e'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// `text.splitlines(keepends=True)`.
fn lines_with_ends(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if !is_line_break(c) {
            continue;
        }
        let mut end = i + c.len_utf8();
        if c == '\r'
            && let Some(&(j, '\n')) = chars.peek()
        {
            end = j + 1;
            chars.next();
        }
        lines.push(&text[start..end]);
        start = end;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// `text.splitlines()`.
fn lines_without_ends(text: &str) -> impl Iterator<Item = &str> {
    lines_with_ends(text).into_iter().map(|line| {
        let line = line.strip_suffix("\r\n").unwrap_or(line);
        match line.chars().next_back() {
            Some(c) if is_line_break(c) => &line[..line.len() - c.len_utf8()],
            _ => line,
        }
    })
}

/// What `.*` matches from `at`: up to the first `\n`.
fn rest_of_line(line: &str, at: usize) -> &str {
    let rest = &line[at..];
    rest.find('\n').map_or(rest, |n| &rest[..n])
}

/// `^(#{1,6}) (.*)`: the depth and the header's text.
fn header(line: &str) -> Option<(usize, &str)> {
    let depth = line.bytes().take_while(|&b| b == b'#').count();
    ((1..=6).contains(&depth) && line.as_bytes().get(depth) == Some(&b' '))
        .then(|| (depth, rest_of_line(line, depth + 1)))
}

/// ``^```(.*)`` or `^~~~(.*)`: the fence's language.
fn code_fence(line: &str) -> Option<&str> {
    (line.starts_with("```") || line.starts_with("~~~")).then(|| rest_of_line(line, 3))
}

/// `^\*\*\*+\n`, `^---+\n` or `^___+\n`.
fn horizontal_rule(line: &str) -> bool {
    [b'*', b'-', b'_'].iter().any(|&mark| {
        let run = line.bytes().take_while(|&b| b == mark).count();
        run >= 3 && line.as_bytes().get(run) == Some(&b'\n')
    })
}

impl MarkdownSyntaxSplitter {
    /// `headers`: (marker, metadata key) pairs as the class's
    /// `splittable_headers` dict holds them; markers other than `#` to
    /// `######` never match a line.
    pub fn new(headers: &[(String, String)], strip_headers: bool, return_each_line: bool) -> Self {
        let mut names: [Option<String>; 6] = Default::default();
        for (marker, name) in headers {
            let depth = marker.len();
            if (1..=6).contains(&depth) && marker.bytes().all(|b| b == b'#') {
                names[depth - 1] = Some(name.clone());
            }
        }
        Self {
            names,
            strip_headers,
            return_each_line,
        }
    }

    pub fn split(&self, text: &str) -> SyntaxSplit {
        let lines = lines_with_ends(text);
        let mut out = SyntaxSplit::default();
        let mut content = String::new();
        let mut metadata: Vec<(String, String)> = Vec::new();
        let mut i = 0;
        while i < lines.len() {
            let line = lines[i];
            i += 1;
            let header = header(line).filter(|(depth, _)| self.names[depth - 1].is_some());
            if let Some((depth, title)) = header {
                self.complete(&mut out, &mut content, &mut metadata);
                if !self.strip_headers {
                    content.push_str(line);
                }
                if let Some(at) = out.header_stack.iter().position(|(d, _)| *d >= depth) {
                    out.header_stack.truncate(at);
                }
                out.header_stack.push((depth, title.to_string()));
            } else if let Some(language) = code_fence(line) {
                self.complete(&mut out, &mut content, &mut metadata);
                let mut fenced = line.to_string();
                let mut closed = false;
                while i < lines.len() {
                    fenced.push_str(lines[i]);
                    i += 1;
                    if code_fence(lines[i - 1]).is_some() {
                        closed = true;
                        break;
                    }
                }
                if closed {
                    content = fenced;
                }
                set(&mut metadata, "Code", language);
                self.complete(&mut out, &mut content, &mut metadata);
            } else if horizontal_rule(line) {
                self.complete(&mut out, &mut content, &mut metadata);
            } else {
                content.push_str(line);
            }
        }
        self.complete(&mut out, &mut content, &mut metadata);
        if self.return_each_line {
            out.chunks = out
                .chunks
                .iter()
                .flat_map(|chunk| {
                    lines_without_ends(&chunk.content)
                        .filter(|line| !line.is_empty() && !is_space_only(line))
                        .map(|line| SyntaxChunk {
                            content: line.to_string(),
                            metadata: chunk.metadata.clone(),
                        })
                        .collect::<Vec<_>>()
                })
                .collect();
        }
        out
    }

    /// Closes the current chunk: kept, with the header path as metadata,
    /// unless blank; a new one starts.
    fn complete(
        &self,
        out: &mut SyntaxSplit,
        content: &mut String,
        metadata: &mut Vec<(String, String)>,
    ) {
        let text = std::mem::take(content);
        let mut meta = std::mem::take(metadata);
        if text.is_empty() || is_space_only(&text) {
            return;
        }
        for (depth, title) in &out.header_stack {
            if let Some(name) = &self.names[depth - 1] {
                set(&mut meta, name, title);
            }
        }
        out.chunks.push(SyntaxChunk {
            content: text,
            metadata: meta,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn splitter(strip: bool, each: bool) -> MarkdownSyntaxSplitter {
        let headers: Vec<(String, String)> = (1..=6)
            .map(|d| ("#".repeat(d), format!("Header {d}")))
            .collect();
        MarkdownSyntaxSplitter::new(&headers, strip, each)
    }

    #[test]
    fn lines_split_as_python() {
        assert_eq!(
            lines_with_ends("a\r\nb\rc\u{2028}d\n\ne"),
            ["a\r\n", "b\r", "c\u{2028}", "d\n", "\n", "e"]
        );
        assert!(lines_with_ends("").is_empty());
        assert_eq!(
            lines_without_ends("a\r\nb\x0c").collect::<Vec<_>>(),
            ["a", "b"]
        );
    }

    #[test]
    fn headers_fences_and_rules() {
        let text = "# A\nintro\n```py\ncode\n```\n---\n## B\r\nmore\n";
        let split = splitter(true, false).split(text);
        let got: Vec<(&str, Vec<(&str, &str)>)> = split
            .chunks
            .iter()
            .map(|c| {
                (
                    c.content.as_str(),
                    c.metadata
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_str()))
                        .collect(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("intro\n", vec![("Header 1", "A")]),
                (
                    "```py\ncode\n```\n",
                    vec![("Code", "py"), ("Header 1", "A")]
                ),
                ("more\n", vec![("Header 1", "A"), ("Header 2", "B\r")]),
            ]
        );
        assert_eq!(
            split.header_stack,
            [(1, "A".to_string()), (2, "B\r".to_string())]
        );
    }

    #[test]
    fn an_unclosed_fence_drops_the_rest() {
        let split = splitter(true, false).split("text\n```\nnever closed\n");
        assert_eq!(split.chunks.len(), 1);
        assert_eq!(split.chunks[0].content, "text\n");
    }
}
