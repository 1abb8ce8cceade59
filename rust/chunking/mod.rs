//! Open Notebook's chunking pipeline: detect the content type, split on
//! headers (HTML, Markdown) or separators (plain), split oversized pieces
//! again, strip, drop empty chunks.

pub mod detect;
pub mod html;
mod lines;
pub mod markdown;
pub mod recursive;
pub mod signals;

use std::ops::Range;

use crate::error::Result;
use crate::unicode;
use detect::ContentType;
use recursive::{LengthFunction, Piece, RecursiveSplitter};

/// Header name -> header text, in the order a Python dict would hold them.
pub type Metadata = Vec<(String, String)>;

/// One document out of a header splitter: its text and the headers above it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub content: String,
    pub metadata: Metadata,
}

/// Sizes of the chunks, in the unit of the length function used with them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkSizes {
    pub chunk_size: usize,
    pub chunk_overlap: usize,
    /// When more than one chunk remains, drop those shorter than this, unless
    /// that drops them all (Open Notebook's token-sized chunking).
    pub min_chunk_size: Option<usize>,
}

impl ChunkSizes {
    /// Open Notebook's original character sizes: 1500 with 225 overlap.
    pub const CHARS: ChunkSizes = ChunkSizes {
        chunk_size: 1500,
        chunk_overlap: 225,
        min_chunk_size: None,
    };
}

/// Where a chunk's text lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The input text.
    Input,
    /// `Chunks::rebuilt`: text a header splitter rebuilt.
    Rebuilt,
}

/// A chunk: a byte range of its source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub source: Source,
    pub range: Range<usize>,
}

/// The chunks of one text, and the text rebuilt by a header splitter that
/// some of them point into.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Chunks {
    pub chunks: Vec<Chunk>,
    /// The rebuilt sections, one after the other.
    pub rebuilt: String,
    /// The type the text was split as; `None` when it needed no splitting.
    pub content_type: Option<ContentType>,
    /// The input's length in the unit of the length function when it fits in
    /// one chunk; otherwise some number above the chunk size (measuring all of
    /// a long text in tokens would cost a pass of its own). 0 for blank text.
    pub input_length: usize,
}

impl Chunks {
    /// The text of chunk `i`, given the input it came from.
    pub fn text<'a>(&'a self, input: &'a str, chunk: &Chunk) -> &'a str {
        match chunk.source {
            Source::Input => &input[chunk.range.clone()],
            Source::Rebuilt => &self.rebuilt[chunk.range.clone()],
        }
    }
}

/// Splits `text` as Open Notebook's `chunk_text` does.
pub fn chunk_text<L: LengthFunction>(
    text: &str,
    content_type: Option<ContentType>,
    file_path: Option<&str>,
    sizes: ChunkSizes,
    length: &L,
) -> Result<Chunks> {
    let mut out = Chunks::default();
    if unicode::is_blank(text) {
        return Ok(out);
    }
    out.input_length = length.length_up_to(text, sizes.chunk_size);
    if out.input_length <= sizes.chunk_size {
        out.chunks.push(Chunk {
            source: Source::Input,
            range: 0..text.len(),
        });
        return Ok(out);
    }
    let content_type = content_type.unwrap_or_else(|| detect::detect(text, file_path).content_type);
    out.content_type = Some(content_type);
    let splitter = RecursiveSplitter::open_notebook(sizes.chunk_size, sizes.chunk_overlap)?;
    let sections = match content_type {
        ContentType::Plain => {
            let pieces = splitter.split(text, length);
            push_pieces(&mut out, Source::Input, 0, pieces);
            Vec::new()
        }
        ContentType::Markdown => {
            let headers = markdown::open_notebook_headers();
            let md = markdown::MarkdownHeaderSplitter::new(headers, false, false)?;
            out.rebuilt.reserve(text.len());
            md.split_into(text, &mut out.rebuilt)
        }
        ContentType::Html => {
            let headers = html::open_notebook_headers();
            let sections = html::HtmlHeaderSplitter::new(headers, false)?.split(text)?;
            let mut ranges = Vec::with_capacity(sections.len());
            for section in sections {
                let start = out.rebuilt.len();
                out.rebuilt.push_str(&section.content);
                ranges.push(start..out.rebuilt.len());
            }
            ranges
        }
    };
    for range in sections {
        let section = &out.rebuilt[range.clone()];
        let pieces = if length.length_up_to(section, sizes.chunk_size) > sizes.chunk_size {
            splitter.split(section, length)
        } else {
            vec![Piece::Span(0..section.len())]
        };
        push_pieces(&mut out, Source::Rebuilt, range.start, pieces);
    }
    strip_chunks(&mut out, text);
    if let Some(min) = sizes.min_chunk_size {
        drop_small_chunks(&mut out, text, min, length);
    }
    Ok(out)
}

/// Adds split pieces of `source` whose text starts at byte `base` there.
fn push_pieces(out: &mut Chunks, source: Source, base: usize, pieces: Vec<Piece>) {
    for piece in pieces {
        let range = match piece {
            Piece::Span(r) => base + r.start..base + r.end,
            Piece::Text(text) => {
                // Only when separators are discarded, which the pipeline never does.
                let start = out.rebuilt.len();
                out.rebuilt.push_str(&text);
                out.chunks.push(Chunk {
                    source: Source::Rebuilt,
                    range: start..out.rebuilt.len(),
                });
                continue;
            }
        };
        out.chunks.push(Chunk { source, range });
    }
}

/// `[c.strip() for c in chunks if c and c.strip()]`.
fn strip_chunks(out: &mut Chunks, input: &str) {
    let Chunks {
        chunks, rebuilt, ..
    } = out;
    chunks.retain_mut(|chunk| {
        let source = match chunk.source {
            Source::Input => input,
            Source::Rebuilt => rebuilt.as_str(),
        };
        let slice = &source[chunk.range.clone()];
        let kept = unicode::strip(slice);
        let start = chunk.range.start + (kept.as_ptr() as usize - slice.as_ptr() as usize);
        chunk.range = start..start + kept.len();
        !kept.is_empty()
    });
}

fn drop_small_chunks<L: LengthFunction>(out: &mut Chunks, input: &str, min: usize, length: &L) {
    if min == 0 || out.chunks.len() <= 1 {
        return;
    }
    let keep: Vec<bool> = out
        .chunks
        .iter()
        .map(|c| length.length_up_to(out.text(input, c), min) >= min)
        .collect();
    if keep.iter().any(|&k| k) {
        let mut flags = keep.into_iter();
        out.chunks.retain(|_| flags.next().unwrap_or(false));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use recursive::CharLength;

    fn texts(text: &str, ct: Option<ContentType>) -> Vec<String> {
        let out = chunk_text(text, ct, None, ChunkSizes::CHARS, &CharLength).expect("chunks");
        out.chunks
            .iter()
            .map(|c| out.text(text, c).to_string())
            .collect()
    }

    #[test]
    fn blank_and_short_texts() {
        assert!(texts("", None).is_empty());
        assert!(texts(" \n\u{3000}", None).is_empty());
        assert_eq!(texts("  short  ", None), ["  short  "]);
    }

    #[test]
    fn plain_text_chunks_are_slices_within_the_limit() {
        let text = "word ".repeat(1000);
        let chunks = texts(&text, Some(ContentType::Plain));
        assert!(chunks.len() > 3);
        assert!(
            chunks
                .iter()
                .all(|c| c.chars().count() <= 1500 && text.contains(c.as_str()))
        );
    }

    #[test]
    fn markdown_sections_are_split_again_when_long() {
        let text = format!("# A\n{}\n# B\nshort", "x ".repeat(1000));
        let chunks = texts(&text, Some(ContentType::Markdown));
        assert_eq!(chunks.last().map(String::as_str), Some("# B\nshort"));
        assert!(chunks.iter().all(|c| c.chars().count() <= 1500));
    }

    #[test]
    fn small_chunks_are_dropped_only_when_others_remain() {
        let input = "x";
        let mut out = Chunks {
            chunks: vec![
                Chunk {
                    source: Source::Input,
                    range: 0..1,
                },
                Chunk {
                    source: Source::Input,
                    range: 0..1,
                },
            ],
            ..Default::default()
        };
        drop_small_chunks(&mut out, input, 5, &CharLength);
        assert_eq!(out.chunks.len(), 2);
    }
}
