//! Header-aware Markdown splitting, as langchain's `MarkdownHeaderTextSplitter`.
//!
//! Lines are stripped (Python whitespace) and cleared of non-printable
//! characters; lines inside ``` or ~~~ fences are never headers; a header line
//! closes the section before it; blank lines close a block. Blocks with the
//! same header metadata are then joined with `"  \n"`, as are a header and the
//! deeper section that follows it when headers are kept.

use std::borrow::Cow;

use memchr::memmem;

use super::lines::{Line, lines};
use super::{Metadata, Section};
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
    /// First bytes of the markers: most lines are rejected on their first byte.
    marker_starts: Vec<u8>,
    /// Bytes an ordinary line may start with (see [`Self::is_ordinary`]).
    ordinary_first: [bool; 256],
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
        let mut marker_starts: Vec<u8> = headers.iter().map(|h| h.marker.as_bytes()[0]).collect();
        marker_starts.sort_unstable();
        marker_starts.dedup();
        let mut ordinary_first = [false; 256];
        for b in 0x21..0x7f_u8 {
            ordinary_first[b as usize] = !matches!(b, b'`' | b'~') && !marker_starts.contains(&b);
        }
        Ok(Self {
            headers,
            names,
            marker_starts,
            ordinary_first,
            return_each_line,
            strip_headers,
        })
    }

    pub fn split(&self, text: &str) -> Vec<Section> {
        let pass = self.read(text);
        self.groups(&pass)
            .iter()
            .map(|g| {
                let mut content = String::new();
                pass.write(g, &mut content);
                Section {
                    content,
                    metadata: pass.metadata(self, g),
                }
            })
            .collect()
    }

    /// The sections' text only, appended to `out`; returns where each is.
    /// (Cheaper than [`Self::split`] when the metadata is not wanted.)
    pub fn split_into(&self, text: &str, out: &mut String) -> Vec<std::ops::Range<usize>> {
        let pass = self.read(text);
        self.groups(&pass)
            .iter()
            .map(|g| {
                let start = out.len();
                pass.write(g, out);
                start..out.len()
            })
            .collect()
    }

    fn groups(&self, pass: &Pass<'_>) -> Vec<Group> {
        if self.return_each_line {
            pass.blocks
                .iter()
                .map(|b| Group {
                    blocks: b.index..b.index + 1,
                    meta: b.meta,
                })
                .collect()
        } else {
            self.aggregate(pass)
        }
    }

    /// Whether the line goes into the current block unchanged, fence or not:
    /// printable ASCII, nothing to strip at either end, and a first byte that
    /// starts no header marker and no fence. Most lines are; they skip the
    /// general path.
    fn is_ordinary(&self, text: &str, line: &Line) -> bool {
        let bytes = &text.as_bytes()[line.range.clone()];
        let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
            return false;
        };
        line.printable_ascii && self.ordinary_first[first as usize] && last != b' '
    }

    fn header_at(&self, line: &str) -> Option<&Header> {
        let first = *line.as_bytes().first()?;
        if !self.marker_starts.contains(&first) {
            return None;
        }
        self.headers.iter().find(|h| {
            line.starts_with(h.marker.as_str())
                && (line.len() == h.marker.len() || line.as_bytes()[h.marker.len()] == b' ')
        })
    }

    /// The line-by-line pass: blocks of lines and the headers above them.
    fn read<'t>(&self, text: &'t str) -> Pass<'t> {
        let mut pass = Pass {
            text,
            lines: Vec::with_capacity(text.len() / 64),
            blocks: Vec::new(),
            metas: vec![Meta::default()],
        };
        let mut block_start = 0;
        let mut stack: Vec<(usize, usize)> = Vec::new(); // (level, name)
        let mut fence: Option<&'static str> = None;

        // Consecutive ordinary lines are one slice of the text: added at once.
        let mut ordinary: Option<std::ops::Range<usize>> = None;
        for line in lines(text) {
            if self.is_ordinary(text, &line) {
                // What every step below would leave as it is.
                ordinary =
                    Some(ordinary.map_or(line.range.clone(), |run| run.start..line.range.end));
                continue;
            }
            if let Some(run) = ordinary.take() {
                pass.push_line(Cow::Borrowed(&text[run]), block_start);
            }
            let raw = &text[line.range];
            let line = printable(unicode::strip(raw));
            let may_fence = matches!(line.as_bytes().first(), Some(b'`' | b'~'));
            match fence {
                _ if !may_fence => {}
                None if line.starts_with("```") && count(&line, "```") == 1 => fence = Some("```"),
                None if line.starts_with("~~~") => fence = Some("~~~"),
                Some(f) if line.starts_with(f) => fence = None,
                _ => {}
            }
            if fence.is_some() {
                pass.push_line(line, block_start);
                continue;
            }
            if let Some(header) = self.header_at(&line) {
                // The block before the header keeps the metadata it was read under.
                pass.close_block(&mut block_start);
                let mut meta = pass.metas[pass.metas.len() - 1].clone();
                while stack
                    .last()
                    .is_some_and(|&(level, _)| level >= header.level)
                {
                    if let Some((_, name)) = stack.pop() {
                        meta.remove(name);
                    }
                }
                stack.push((header.level, header.name));
                let title = unicode::strip(&line[header.marker.len()..]).to_string();
                meta.set(header.name, title);
                pass.metas.push(meta);
                if !self.strip_headers {
                    pass.push_line(line, block_start);
                }
            } else if !line.is_empty() {
                pass.push_line(line, block_start);
            } else {
                pass.close_block(&mut block_start);
            }
        }
        if let Some(run) = ordinary {
            pass.push_line(Cow::Borrowed(&text[run]), block_start);
        }
        pass.close_block(&mut block_start);
        pass
    }

    /// Joins consecutive blocks with equal metadata, and a header with the
    /// deeper block right after it when headers are kept.
    fn aggregate(&self, pass: &Pass<'_>) -> Vec<Group> {
        let mut out: Vec<Group> = Vec::with_capacity(pass.blocks.len());
        for block in &pass.blocks {
            if let Some(last) = out.last_mut() {
                let (a, b) = (&pass.metas[last.meta], &pass.metas[block.meta]);
                let same = last.meta == block.meta || a.same_as(b);
                let header_above = !same
                    && a.len() < b.len()
                    && pass.last_line(last).starts_with('#')
                    && !self.strip_headers;
                if same || header_above {
                    last.blocks.end = block.index + 1;
                    if header_above {
                        last.meta = block.meta;
                    }
                    continue;
                }
            }
            out.push(Group {
                blocks: block.index..block.index + 1,
                meta: block.meta,
            });
        }
        out
    }
}

/// Whether every byte is printable ASCII (0x20-0x7E).
fn ascii_printable(bytes: &[u8]) -> bool {
    // Branch-free per block, so that it vectorises: most lines are plain ASCII.
    bytes.chunks(32).all(|block| {
        block
            .iter()
            .fold(true, |ok, &b| ok & (0x20..0x7f).contains(&b))
    })
}

/// Python's `"".join(filter(str.isprintable, line))`.
fn printable(line: &str) -> Cow<'_, str> {
    if ascii_printable(line.as_bytes()) {
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

/// What the line pass found: every kept line, the blocks (runs of lines)
/// and the metadata versions they were read under.
struct Pass<'t> {
    text: &'t str,
    /// Kept lines; adjacent ones are merged into one slice of the text.
    lines: Vec<Cow<'t, str>>,
    blocks: Vec<Block>,
    /// Each header line makes a new version; blocks point at one.
    metas: Vec<Meta>,
}

#[derive(Clone, Copy, Debug)]
struct Block {
    /// Position in `Pass::blocks`.
    index: usize,
    /// Lines `start..end` of `Pass::lines`.
    start: usize,
    end: usize,
    meta: usize,
}

/// Consecutive blocks that become one section.
#[derive(Clone, Debug)]
struct Group {
    blocks: std::ops::Range<usize>,
    meta: usize,
}

impl<'t> Pass<'t> {
    /// Adds a line to the current block. A line that follows the previous one
    /// in the text with just the `\n` between extends it instead: joined with
    /// "\n" they are that slice of the text, copied later in one go.
    fn push_line(&mut self, line: Cow<'t, str>, block_start: usize) {
        let base = self.text.as_ptr() as usize;
        let in_block = self.lines.len() > block_start;
        if let (true, Cow::Borrowed(next), Some(Cow::Borrowed(previous))) =
            (in_block, &line, self.lines.last_mut())
        {
            // Offsets in the text; a slice from elsewhere (the empty literal
            // strip returns) falls outside it and is never merged.
            let start = (previous.as_ptr() as usize).wrapping_sub(base);
            let gap = start.wrapping_add(previous.len());
            let next_start = (next.as_ptr() as usize).wrapping_sub(base);
            if next_start == gap + 1
                && self.text.as_bytes().get(gap) == Some(&b'\n')
                && let Some(joined) = self.text.get(start..next_start + next.len())
            {
                *previous = joined;
                return;
            }
        }
        self.lines.push(line);
    }

    fn close_block(&mut self, block_start: &mut usize) {
        if self.lines.len() > *block_start {
            self.blocks.push(Block {
                index: self.blocks.len(),
                start: *block_start,
                end: self.lines.len(),
                meta: self.metas.len() - 1,
            });
            *block_start = self.lines.len();
        }
    }

    /// The last line of a group's text.
    fn last_line(&self, group: &Group) -> &str {
        let block = &self.blocks[group.blocks.end - 1];
        let line = &self.lines[block.end - 1];
        // A line may hold no '\n'; a stripped line never does.
        line.rsplit('\n').next().unwrap_or("")
    }

    /// Appends a group's text: lines of a block joined with "\n", blocks
    /// joined with "  \n".
    fn write(&self, group: &Group, content: &mut String) {
        let blocks = &self.blocks[group.blocks.clone()];
        let size: usize = blocks
            .iter()
            .flat_map(|b| &self.lines[b.start..b.end])
            .map(|l| l.len() + 3)
            .sum();
        content.reserve(size);
        for (i, block) in blocks.iter().enumerate() {
            if i > 0 {
                content.push_str("  \n");
            }
            for (j, line) in self.lines[block.start..block.end].iter().enumerate() {
                if j > 0 {
                    content.push('\n');
                }
                content.push_str(line);
            }
        }
    }

    fn metadata(&self, splitter: &MarkdownHeaderSplitter, group: &Group) -> Metadata {
        self.metas[group.meta]
            .0
            .iter()
            .map(|(name, value)| (splitter.names[*name].clone(), value.clone()))
            .collect()
    }
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
