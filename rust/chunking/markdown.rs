//! Header-aware Markdown splitting, as langchain's `MarkdownHeaderTextSplitter`.
//!
//! Lines are stripped (Python whitespace) and cleared of non-printable
//! characters; lines inside ``` or ~~~ fences are never headers; a header line
//! closes the section before it; blank lines close a block. Blocks with the
//! same header metadata are then joined with `"  \n"`, as are a header and the
//! deeper section that follows it when headers are kept.

use std::borrow::Cow;

use memchr::memmem;

use super::Section;
use crate::error::{Error, Result};
use crate::unicode;

#[derive(Clone, Debug)]
struct Header {
    marker: String,
    /// Index into `MarkdownHeaderSplitter::names`.
    name: usize,
    level: usize,
}

#[derive(Clone, Debug)]
pub struct MarkdownHeaderSplitter {
    /// Longest marker first, so "###" is tried before "#".
    headers: Vec<Header>,
    names: Vec<String>,
    return_each_line: bool,
    strip_headers: bool,
}

/// Open Notebook's headers: `#`, `##`, `###`.
pub fn open_notebook_headers() -> Vec<(String, String)> {
    [("#", "Header 1"), ("##", "Header 2"), ("###", "Header 3")]
        .iter()
        .map(|&(m, n)| (m.to_string(), n.to_string()))
        .collect()
}

impl MarkdownHeaderSplitter {
    /// `headers_to_split_on` pairs a marker ("##") with a metadata name.
    pub fn new(
        headers_to_split_on: Vec<(String, String)>,
        return_each_line: bool,
        strip_headers: bool,
    ) -> Result<Self> {
        let mut names: Vec<String> = Vec::new();
        let mut headers = Vec::with_capacity(headers_to_split_on.len());
        for (marker, name) in headers_to_split_on {
            if marker.is_empty() {
                return Err(Error::InvalidArgument(
                    "header markers to split on must not be empty".into(),
                ));
            }
            let name = match names.iter().position(|n| *n == name) {
                Some(i) => i,
                None => {
                    names.push(name);
                    names.len() - 1
                }
            };
            let level = marker.matches('#').count();
            headers.push(Header {
                marker,
                name,
                level,
            });
        }
        // Stable, like Python's `sorted`: equal lengths keep their order.
        headers.sort_by_key(|h| std::cmp::Reverse(h.marker.chars().count()));
        Ok(Self {
            headers,
            names,
            return_each_line,
            strip_headers,
        })
    }

    pub fn split(&self, text: &str) -> Vec<Section> {
        let blocks = self.blocks(text);
        if self.return_each_line {
            return blocks.into_iter().map(|b| self.section(b)).collect();
        }
        self.aggregate(blocks)
            .into_iter()
            .map(|b| self.section(b))
            .collect()
    }

    fn section(&self, block: Block) -> Section {
        Section {
            content: block.content,
            metadata: block
                .metadata
                .into_iter()
                .map(|(name, value)| (self.names[name].clone(), value))
                .collect(),
        }
    }

    fn header_at(&self, line: &str) -> Option<&Header> {
        self.headers.iter().find(|h| {
            line.starts_with(h.marker.as_str())
                && (line.len() == h.marker.len() || line.as_bytes()[h.marker.len()] == b' ')
        })
    }

    /// The line-by-line pass: blocks of lines and the headers above them.
    fn blocks(&self, text: &str) -> Vec<Block> {
        let mut blocks = Vec::new();
        let mut lines: Vec<Cow<'_, str>> = Vec::new();
        let mut metadata = Meta::default();
        let mut stack: Vec<(usize, usize)> = Vec::new(); // (level, name)
        let mut fence: Option<&'static str> = None;

        for raw in text.split('\n') {
            let line = printable(unicode::strip(raw));
            match fence {
                None if line.starts_with("```") && count(&line, "```") == 1 => fence = Some("```"),
                None if line.starts_with("~~~") => fence = Some("~~~"),
                Some(f) if line.starts_with(f) => fence = None,
                _ => {}
            }
            if fence.is_some() {
                lines.push(line);
                continue;
            }
            if let Some(header) = self.header_at(&line) {
                // The block before the header keeps the metadata it was read under.
                flush(&mut lines, &metadata, &mut blocks);
                while stack
                    .last()
                    .is_some_and(|&(level, _)| level >= header.level)
                {
                    if let Some((_, name)) = stack.pop() {
                        metadata.remove(name);
                    }
                }
                stack.push((header.level, header.name));
                let title = unicode::strip(&line[header.marker.len()..]).to_string();
                metadata.set(header.name, title);
                if !self.strip_headers {
                    lines.push(line);
                }
            } else if !line.is_empty() {
                lines.push(line);
            } else {
                flush(&mut lines, &metadata, &mut blocks);
            }
        }
        flush(&mut lines, &metadata, &mut blocks);
        blocks
    }

    /// Joins consecutive blocks with equal metadata, and a header with the
    /// deeper block right after it when headers are kept.
    fn aggregate(&self, blocks: Vec<Block>) -> Vec<Block> {
        let mut out: Vec<Block> = Vec::with_capacity(blocks.len());
        for block in blocks {
            if let Some(last) = out.last_mut() {
                let same = last.metadata.same_as(&block.metadata);
                let header_above = !same
                    && last.metadata.len() < block.metadata.len()
                    && last_line_is_header(&last.content)
                    && !self.strip_headers;
                if same || header_above {
                    last.content.push_str("  \n");
                    last.content.push_str(&block.content);
                    if header_above {
                        last.metadata = block.metadata;
                    }
                    continue;
                }
            }
            out.push(block);
        }
        out
    }
}

/// Python's `"".join(filter(str.isprintable, line))`.
fn printable(line: &str) -> Cow<'_, str> {
    if line.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Cow::Borrowed(line);
    }
    if line.chars().all(unicode::is_printable) {
        return Cow::Borrowed(line);
    }
    Cow::Owned(line.chars().filter(|&c| unicode::is_printable(c)).collect())
}

/// `str.count`: non-overlapping occurrences.
fn count(haystack: &str, needle: &str) -> usize {
    memmem::find_iter(haystack.as_bytes(), needle.as_bytes()).count()
}

fn last_line_is_header(content: &str) -> bool {
    content
        .rsplit('\n')
        .next()
        .is_some_and(|l| l.starts_with('#'))
}

#[derive(Clone, Debug)]
struct Block {
    content: String,
    metadata: Meta,
}

fn flush(lines: &mut Vec<Cow<'_, str>>, metadata: &Meta, blocks: &mut Vec<Block>) {
    if lines.is_empty() {
        return;
    }
    let size = lines.iter().map(|l| l.len() + 1).sum();
    let mut content = String::with_capacity(size);
    for (i, line) in lines.drain(..).enumerate() {
        if i > 0 {
            content.push('\n');
        }
        content.push_str(&line);
    }
    blocks.push(Block {
        content,
        metadata: metadata.clone(),
    });
}

/// A small insertion-ordered dict from header name index to header text.
#[derive(Clone, Debug, Default)]
struct Meta(Vec<(usize, String)>);

impl Meta {
    fn set(&mut self, name: usize, value: String) {
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 = value,
            None => self.0.push((name, value)),
        }
    }

    fn remove(&mut self, name: usize) {
        self.0.retain(|(n, _)| *n != name);
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    /// Python dict equality: same keys and values, in any order.
    fn same_as(&self, other: &Meta) -> bool {
        self.0.len() == other.0.len() && self.0.iter().all(|entry| other.0.contains(entry))
    }
}

impl IntoIterator for Meta {
    type Item = (usize, String);
    type IntoIter = std::vec::IntoIter<(usize, String)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn splitter(strip_headers: bool) -> MarkdownHeaderSplitter {
        MarkdownHeaderSplitter::new(open_notebook_headers(), false, strip_headers).expect("valid")
    }

    fn contents(sections: &[Section]) -> Vec<&str> {
        sections.iter().map(|s| s.content.as_str()).collect()
    }

    #[test]
    fn headers_open_sections_and_keep_their_line() {
        let md = "# A\nintro\n\nmore\n## B\nbody\n# C\nend";
        let sections = splitter(false).split(md);
        assert_eq!(
            contents(&sections),
            ["# A\nintro  \nmore", "## B\nbody", "# C\nend"]
        );
        assert_eq!(sections[1].metadata.len(), 2);
    }

    #[test]
    fn a_bare_header_joins_the_deeper_section_after_it() {
        let sections = splitter(false).split("# A\n## B\nbody");
        assert_eq!(contents(&sections), ["# A  \n## B\nbody"]);
        assert_eq!(
            sections[0].metadata,
            vec![
                ("Header 1".to_string(), "A".to_string()),
                ("Header 2".to_string(), "B".to_string())
            ]
        );
    }

    #[test]
    fn stripped_headers_leave_only_bodies() {
        let sections = splitter(true).split("# A\nintro\n## B\nbody");
        assert_eq!(contents(&sections), ["intro", "body"]);
    }

    #[test]
    fn fenced_lines_are_never_headers() {
        let md = "# A\n```\n# not a header\n\n```\ntext";
        let sections = splitter(false).split(md);
        assert_eq!(
            contents(&sections),
            ["# A\n```\n# not a header\n\n```\ntext"]
        );
    }

    #[test]
    fn inline_triple_backticks_do_not_open_a_fence() {
        let md = "```x``` y\n# H\nz";
        assert_eq!(
            contents(&splitter(false).split(md)),
            ["```x``` y", "# H\nz"]
        );
    }

    #[test]
    fn deeper_markers_need_a_space() {
        let md = "####not\n#### four\n#tag";
        assert_eq!(
            contents(&splitter(false).split(md)),
            ["####not\n#### four\n#tag"]
        );
    }

    #[test]
    fn lines_are_stripped_and_cleared_of_non_printables() {
        let md = "  \u{200b}# A\u{a0}\n\tx\u{7}y \n\u{200b}\nz";
        let sections = splitter(false).split(md);
        assert_eq!(contents(&sections), ["# A\nxy  \nz"]);
        assert_eq!(sections[0].metadata[0].1, "A");
    }

    #[test]
    fn unterminated_fence_keeps_the_rest() {
        let md = "# A\n~~~\n# x\n\n";
        assert_eq!(contents(&splitter(false).split(md)), ["# A\n~~~\n# x\n\n"]);
    }
}
