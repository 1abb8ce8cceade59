//! Header-aware Markdown splitting, as langchain's `MarkdownHeaderTextSplitter`.
//!
//! Lines are stripped (Python whitespace) and cleared of non-printable
//! characters; lines inside ``` or ~~~ fences are never headers; a header line
//! closes the section before it; blank lines close a block. Blocks with the
//! same header metadata are then joined with `"  \n"`, as are a header and the
//! deeper section that follows it when headers are kept.

use std::borrow::{Borrow, Cow};
use std::ops::Range;
use std::sync::LazyLock;

use super::Section;
use super::lines::for_each_line;
use super::splittable::Splittable;
use crate::error::{Error, Result};

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
    /// First characters of the markers: most lines are rejected on their first unit.
    marker_starts: Vec<u32>,
    /// ASCII units that start neither a header marker nor a fence: a line
    /// of printable ASCII starting with one goes into the block as it is.
    ordinary_first: [bool; 128],
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
        if headers_to_split_on
            .iter()
            .any(|(marker, _)| marker.is_empty())
        {
            return Err(Error::InvalidArgument(
                "header markers to split on must not be empty".into(),
            ));
        }
        Ok(Self::with_markers(
            headers_to_split_on,
            return_each_line,
            strip_headers,
        ))
    }

    /// Open Notebook's splitter (headers `#` to `###`, kept in the text),
    /// built once.
    pub fn open_notebook() -> &'static Self {
        static SPLITTER: LazyLock<MarkdownHeaderSplitter> = LazyLock::new(|| {
            MarkdownHeaderSplitter::with_markers(open_notebook_headers(), false, false)
        });
        &SPLITTER
    }

    /// [`Self::new`] for markers known not to be empty.
    fn with_markers(
        headers_to_split_on: Vec<(String, String)>,
        return_each_line: bool,
        strip_headers: bool,
    ) -> Self {
        let mut names: Vec<String> = Vec::new();
        let mut headers = Vec::with_capacity(headers_to_split_on.len());
        for (marker, name) in headers_to_split_on {
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
        let mut marker_starts: Vec<u32> = headers
            .iter()
            .filter_map(|h| h.marker.chars().next())
            .map(u32::from)
            .collect();
        marker_starts.sort_unstable();
        marker_starts.dedup();
        let mut ordinary_first = [false; 128];
        for b in 0x21..0x7f_u8 {
            ordinary_first[b as usize] =
                !matches!(b, b'`' | b'~') && !marker_starts.contains(&u32::from(b));
        }
        Self {
            headers,
            names,
            marker_starts,
            ordinary_first,
            return_each_line,
            strip_headers,
        }
    }

    /// The sections, in the text's own form (`String` for a `str`, code
    /// units for a Python string's units), with their header metadata.
    pub fn split<S: Splittable + ?Sized>(&self, text: &S) -> Vec<Section<S::Owned>> {
        let mut out = S::Owned::default();
        let (sections, metas) = self.read(text, &mut out);
        let (out, titles): (&S, &S) = (out.borrow(), metas.titles.borrow());
        sections
            .into_iter()
            .map(|Written { range, version, .. }| Section {
                content: out[range].to_owned(),
                metadata: metas
                    .version(version)
                    .iter()
                    .map(|(name, title)| {
                        (self.names[*name].clone(), titles[title.clone()].to_owned())
                    })
                    .collect(),
            })
            .collect()
    }

    /// The sections' text only, appended to `out`; returns where each is.
    /// (Cheaper than [`Self::split`] when the metadata is not wanted.)
    ///
    /// Sections keep the text's form: a kept line is copied as it is, and a
    /// chunk of them becomes a Python string without decoding.
    pub fn split_into<S: Splittable + ?Sized>(
        &self,
        text: &S,
        out: &mut S::Owned,
    ) -> Vec<SectionSpan> {
        let (sections, _) = self.read(text, out);
        sections
            .into_iter()
            .map(|w| SectionSpan {
                range: w.range,
                paragraph_breaks: w.empty_lines,
                ascii: !w.non_ascii,
            })
            .collect()
    }

    /// The header the line starts with, and its marker's length.
    fn header_at<S: Splittable + ?Sized>(&self, line: &S) -> Option<(&Header, usize)> {
        if line.is_empty() || !self.marker_starts.contains(&line.unit(0)) {
            return None;
        }
        self.headers.iter().find_map(|h| {
            let n = line.prefix_len(&h.marker)?;
            (line.len() == n || line.unit(n) == u32::from(b' ')).then_some((h, n))
        })
    }

    /// The line-by-line pass, writing the sections to `out` as it goes:
    /// each section's range there with the metadata version it holds, and
    /// the versions (one more per header line).
    fn read<S: Splittable + ?Sized>(
        &self,
        text: &S,
        out: &mut S::Owned,
    ) -> (Vec<Written>, Metas<S>) {
        let mut pass = Pass {
            splitter: self,
            out,
            // Sized for a document of a few dozen headers (and its
            // versions of the metadata below): growing by one costs more.
            sections: Vec::with_capacity(32),
            section: None,
            empty_lines: false,
            non_ascii: false,
            metas: Metas::new(),
            in_block: false,
            last_line_hash: false,
        };
        let mut stack: Vec<(usize, usize)> = Vec::new(); // (level, name)
        let mut popped: Vec<usize> = Vec::new(); // names a header line closes
        let mut fence: Option<&'static str> = None;

        for_each_line(text, |line| {
            let ascii = line.printable_ascii;
            let line = if ascii {
                // Nothing to filter, and only spaces to strip.
                let mut kept = line.range;
                if text.unit(kept.start) == 0x20 {
                    // Up to the newline (not a space), or the end of the text.
                    kept.start += text.spaces_from(kept.start);
                }
                while !kept.is_empty() && text.unit(kept.end - 1) == 0x20 {
                    kept.end -= 1;
                }
                if kept.is_empty() {
                    match fence {
                        Some(_) => pass.add(&text[kept], false, true),
                        // Outside a fence: the end of a block.
                        None => pass.in_block = false,
                    }
                    return;
                }
                let first = text.unit(kept.start);
                if self.ordinary_first[first as usize] {
                    // Neither a header nor a fence: most lines.
                    pass.add_range(text, kept, first == u32::from(b'#'));
                    return;
                }
                Cow::Borrowed(&text[kept])
            } else {
                let raw = &text[line.range];
                raw[raw.strip_range()].printable()
            };
            let line: &S = &line;
            let may_fence = !line.is_empty() && matches!(line.unit(0), 0x60 | 0x7E); // ` ~
            match fence {
                _ if !may_fence => {}
                None if line.prefix_len("```").is_some() && !has_backticks_after_3(line) => {
                    fence = Some("```")
                }
                None if line.prefix_len("~~~").is_some() => fence = Some("~~~"),
                Some(f) if line.prefix_len(f).is_some() => fence = None,
                _ => {}
            }
            if fence.is_some() {
                pass.add(line, starts_with_hash(line, 0), ascii);
                return;
            }
            if let Some((header, marker_len)) = self.header_at(line) {
                // The block before the header keeps the metadata it was read under.
                pass.in_block = false;
                popped.clear();
                while let Some(&(level, name)) = stack.last()
                    && level >= header.level
                {
                    popped.push(name);
                    stack.pop();
                }
                stack.push((header.level, header.name));
                let rest = &line[marker_len..line.len()];
                pass.metas
                    .push_header(&popped, header.name, &rest[rest.strip_range()]);
                if !self.strip_headers {
                    pass.add(line, starts_with_hash(line, 0), ascii);
                }
            } else if !line.is_empty() {
                pass.add(line, starts_with_hash(line, 0), ascii);
            } else {
                pass.in_block = false;
            }
        });
        pass.close_section();
        (pass.sections, pass.metas)
    }
}

/// Whether the unit at `at` is `#`.
fn starts_with_hash<S: Splittable + ?Sized>(text: &S, at: usize) -> bool {
    at < text.len() && text.unit(at) == u32::from(b'#')
}

/// Whether "```" occurs again past the first three units: `line.count("```")
/// == 1` for a line that starts with it. A plain scan: fence lines are short
/// (a searcher built per text cost more than it found).
fn has_backticks_after_3<S: Splittable + ?Sized>(line: &S) -> bool {
    let mut run = 0;
    for at in 3..line.len() {
        run = if line.unit(at) == u32::from(b'`') {
            run + 1
        } else {
            0
        };
        if run == 3 {
            return true;
        }
    }
    false
}

/// Where a section's text was written (see [`MarkdownHeaderSplitter::split_into`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionSpan {
    pub range: Range<usize>,
    /// Whether it may hold a paragraph break, `"\n\n"`: only when an empty
    /// line (in a code fence) was written into it, as lines are joined with
    /// `"\n"` and `"  \n"`. Without one, a splitter need not look for it.
    pub paragraph_breaks: bool,
    /// Whether it is known to be all ASCII: when every line written into it
    /// was printable ASCII (false: not known).
    pub ascii: bool,
}

/// A finished section of the line pass: [`SectionSpan`] and the version of
/// the metadata it holds.
struct Written {
    range: Range<usize>,
    version: usize,
    empty_lines: bool,
    non_ascii: bool,
}

/// The line pass's output: the sections written so far and the one being
/// written. A block (lines joined with "\n") joins the open section with
/// "  \n" when it has the same metadata, or when the section ends with a
/// header line and the block is deeper (headers kept): as langchain
/// aggregates its blocks.
struct Pass<'a, S: Splittable + ?Sized> {
    splitter: &'a MarkdownHeaderSplitter,
    out: &'a mut S::Owned,
    /// Finished sections.
    sections: Vec<Written>,
    /// The open section: where it starts in `out`, and its metadata version.
    section: Option<(usize, usize)>,
    /// Whether an empty line (in a code fence) was written to the open section.
    empty_lines: bool,
    /// Whether a line that was not all printable ASCII was written to it.
    non_ascii: bool,
    metas: Metas<S>,
    /// Whether the current block has a line.
    in_block: bool,
    /// Whether the last line written starts with `#`.
    last_line_hash: bool,
}

impl<S: Splittable + ?Sized> Pass<'_, S> {
    /// Writes a kept line to the current block; `ascii`: whether the line
    /// read was all printable ASCII.
    fn add(&mut self, line: &S, starts_with_hash: bool, ascii: bool) {
        self.start_line(starts_with_hash);
        // After the line's start, which may close a section.
        self.empty_lines |= line.is_empty();
        self.non_ascii |= !ascii;
        S::push(self.out, line);
    }

    /// [`Self::add`] for the line at `range` of `text`, which lets a short
    /// line be copied as a block of `text` ([`Splittable::push_range`]).
    fn add_range(&mut self, text: &S, range: Range<usize>, starts_with_hash: bool) {
        self.start_line(starts_with_hash);
        text.push_range(self.out, range);
    }

    /// A new line of the current block, or the block's first. (Inlined into
    /// both callers: as a call, the line pass took 4% more instructions.)
    #[inline(always)]
    fn start_line(&mut self, starts_with_hash: bool) {
        if self.in_block {
            S::push_str(self.out, "\n");
        } else {
            self.open_block();
        }
        self.last_line_hash = starts_with_hash;
    }

    /// The length of the text written so far.
    fn written(&self) -> usize {
        Borrow::<S>::borrow(&*self.out).len()
    }

    /// A block's first line: it joins the open section or starts one.
    fn open_block(&mut self) {
        self.in_block = true;
        let meta = self.metas.current();
        if let Some((_, section_meta)) = &mut self.section
            && !self.splitter.return_each_line
        {
            let same = *section_meta == meta || self.metas.same(*section_meta, meta);
            let header_above = !same
                && self.metas.version(*section_meta).len() < self.metas.version(meta).len()
                && self.last_line_hash
                && !self.splitter.strip_headers;
            if same || header_above {
                S::push_str(self.out, "  \n");
                *section_meta = meta;
                return;
            }
        }
        self.close_section();
        self.section = Some((self.written(), meta));
    }

    fn close_section(&mut self) {
        if let Some((start, version)) = self.section.take() {
            self.sections.push(Written {
                range: start..self.written(),
                version,
                empty_lines: std::mem::take(&mut self.empty_lines),
                non_ascii: std::mem::take(&mut self.non_ascii),
            });
        }
    }
}

/// The versions of the header metadata (an insertion-ordered dict from
/// header name to header text), one more per header line; the last one is
/// current. Stored flat, texts included: a header line allocates nothing.
struct Metas<S: Splittable + ?Sized> {
    /// The header texts, one after the other.
    titles: S::Owned,
    /// Every version's entries (name index, text range in `titles`), one
    /// version after the other.
    entries: Vec<(usize, Range<usize>)>,
    /// Where each version's entries are.
    versions: Vec<Range<usize>>,
}

impl<S: Splittable + ?Sized> Metas<S> {
    fn new() -> Self {
        // Sized for a few dozen headers, each buffer at most 1 KiB: glibc
        // serves those from its per-thread cache, larger ones from the
        // slower shared bins.
        let mut titles = S::Owned::default();
        S::reserve(&mut titles, 1024 / S::UNIT_SIZE);
        let mut versions = Vec::with_capacity(32);
        // The first version: no headers yet.
        versions.push(0..0);
        Self {
            titles,
            entries: Vec::with_capacity(32),
            versions,
        }
    }

    fn current(&self) -> usize {
        self.versions.len() - 1
    }

    fn version(&self, version: usize) -> &[(usize, Range<usize>)] {
        &self.entries[self.versions[version].clone()]
    }

    /// A new version: the current one without the `closed` names, and with
    /// `name` set to `title` (in its place when it is still there).
    fn push_header(&mut self, closed: &[usize], name: usize, title: &S) {
        let start = self.titles.borrow().len();
        S::push(&mut self.titles, title);
        let title = start..self.titles.borrow().len();
        let first = self.entries.len();
        for i in self.versions[self.current()].clone() {
            let entry = self.entries[i].clone();
            if !closed.contains(&entry.0) {
                self.entries.push(entry);
            }
        }
        match self.entries[first..].iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 = title,
            None => self.entries.push((name, title)),
        }
        self.versions.push(first..self.entries.len());
    }

    /// Python dict equality of two versions: same keys and values, in any order.
    fn same(&self, a: usize, b: usize) -> bool {
        let (a, b) = (self.version(a), self.version(b));
        let titles: &S = self.titles.borrow();
        let text = |range: &Range<usize>| &titles[range.clone()];
        a.len() == b.len()
            && a.iter().all(|(name, title)| {
                b.iter()
                    .any(|(other, value)| other == name && text(value) == text(title))
            })
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
    fn a_fence_line_holds_one_triple_backtick() {
        // `str.count("```")`: "````" and "`````" hold one, "``````" two.
        for (fence, opens) in [
            ("````", true),
            ("`````", true),
            ("``````", false),
            ("```a``", true),
        ] {
            let md = format!("{fence}\n# H\nz");
            let expected: &[&str] = if opens {
                &[md.as_str()]
            } else {
                &[fence, "# H\nz"]
            };
            assert_eq!(
                contents(&splitter(false).split(md.as_str())),
                expected,
                "{fence}"
            );
        }
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

    /// Sections of code units, as UTF-8.
    fn utf8<T: crate::text::CodeUnit>(sections: Vec<Section<Vec<T>>>) -> Vec<Section> {
        let text = |units: &Vec<T>| units.as_slice().to_str().into_owned();
        sections
            .iter()
            .map(|s| Section {
                content: text(&s.content),
                metadata: s
                    .metadata
                    .iter()
                    .map(|(k, v)| (k.clone(), text(v)))
                    .collect(),
            })
            .collect()
    }

    proptest::proptest! {
        /// A Python string's code units, in each width that holds it, split
        /// as its UTF-8 does.
        #[test]
        fn code_units_split_as_utf8(
            parts in proptest::collection::vec(
                proptest::sample::select(&[
                    "a", "word", " ", "\n", "\n\n", "# ", "## ", "###", "#", "```", "~~~", "`",
                    "\t", "é", "ÿ", "☃", "\u{3000}", "\u{a0}", "😀", "\u{85}", "\u{7}",
                    "\u{200b}", "\r\n", "  ",
                ][..]),
                0..60,
            ),
            strip in proptest::bool::ANY,
            each_line in proptest::bool::ANY,
        ) {
            let text = parts.concat();
            let splitter =
                MarkdownHeaderSplitter::new(open_notebook_headers(), each_line, strip).expect("valid");
            let fitting = |max: u32| -> String { text.chars().filter(|&c| (c as u32) <= max).collect() };
            let ucs4: Vec<u32> = text.chars().map(u32::from).collect();
            proptest::prop_assert_eq!(utf8(splitter.split(ucs4.as_slice())), splitter.split(text.as_str()));
            let bmp = fitting(0xFFFF);
            let ucs2: Vec<u16> = bmp.encode_utf16().collect();
            proptest::prop_assert_eq!(utf8(splitter.split(ucs2.as_slice())), splitter.split(bmp.as_str()));
            let latin = fitting(0xFF);
            let latin1: Vec<u8> = latin.chars().map(|c| c as u8).collect();
            proptest::prop_assert_eq!(utf8(splitter.split(latin1.as_slice())), splitter.split(latin.as_str()));
        }
    }

    #[test]
    fn unterminated_fence_keeps_the_rest() {
        let md = "# A\n~~~\n# x\n\n";
        assert_eq!(contents(&splitter(false).split(md)), ["# A\n~~~\n# x\n\n"]);
    }
}
