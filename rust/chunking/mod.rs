//! Open Notebook's chunking pipeline: detect the content type, split on
//! headers (HTML, Markdown) or separators (plain), split oversized pieces
//! again, strip, drop empty chunks.

pub mod detect;
pub mod graphemes;
pub mod html;
mod lines;
pub mod markdown;
pub mod markdown_syntax;
pub mod recursive;
pub mod route;
pub mod signals;
mod span_merge;
pub mod splittable;
pub mod start_index;

use std::borrow::Borrow;
use std::ops::Range;

use crate::error::{Error, Result};
use detect::ContentType;
use recursive::{CharLength, LengthFunction, Piece, RecursiveSplitter};
use splittable::Splittable;

/// Header name -> header text, in the order a Python dict would hold them;
/// texts are `String`s, or the code units of a Python string.
pub type Metadata<O = String> = Vec<(String, O)>;

/// One document out of a header splitter: its text and the headers above it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section<O = String> {
    pub content: O,
    pub metadata: Metadata<O>,
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

    /// Sizes from numbers as a caller passes them (possibly negative): the
    /// chunk size must be above 0, the others at least 0.
    pub fn new(chunk_size: i64, chunk_overlap: i64, min_chunk_size: Option<i64>) -> Result<Self> {
        fn at_least(name: &str, value: i64, min: i64, rule: &str) -> Result<usize> {
            match usize::try_from(value) {
                Ok(n) if value >= min => Ok(n),
                _ => Err(Error::InvalidArgument(format!(
                    "{name} must be {rule}, got {value}"
                ))),
            }
        }
        let chunk_size = at_least("chunk_size", chunk_size, 1, "> 0")?;
        let chunk_overlap = at_least("chunk_overlap", chunk_overlap, 0, ">= 0")?;
        let min_chunk_size = min_chunk_size
            .map(|min| at_least("min_chunk_size", min, 0, ">= 0"))
            .transpose()?;
        Ok(ChunkSizes {
            chunk_size,
            chunk_overlap,
            min_chunk_size,
        })
    }
}

/// Where a chunk's text lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The input text.
    Input,
    /// `Chunks::rebuilt`: text a header splitter rebuilt.
    Rebuilt,
}

/// A chunk: a range of its source (bytes of a `str`, units of code units).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub source: Source,
    pub range: Range<usize>,
    /// Whether it is known to be all ASCII (false: not known). Its Python
    /// string's width then needs no scan of its units.
    pub ascii: bool,
}

/// The chunks of one text, and the text rebuilt by a header splitter that
/// some of them point into, in the input's form (`String`, or code units:
/// see [`markdown::MarkdownHeaderSplitter::split_into`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Chunks<O = String> {
    pub chunks: Vec<Chunk>,
    /// The rebuilt sections, one after the other.
    pub rebuilt: O,
    /// The type the text was split as; `None` when it needed no splitting.
    pub content_type: Option<ContentType>,
    /// The input's length in the unit of the length function when it fits in
    /// one chunk; otherwise some number above the chunk size (measuring all of
    /// a long text in tokens would cost a pass of its own). 0 for blank text.
    pub input_length: usize,
}

impl<O: Default> Chunks<O> {
    /// The text of a chunk of `input`.
    pub fn text<'a, S>(&'a self, input: &'a S, chunk: &Chunk) -> &'a S
    where
        S: Splittable<Owned = O> + ?Sized,
        O: Borrow<S>,
    {
        match chunk.source {
            Source::Input => &input[chunk.range.clone()],
            Source::Rebuilt => &Borrow::<S>::borrow(&self.rebuilt)[chunk.range.clone()],
        }
    }

    /// The chunks of a text that needs no splitting.
    fn unsplit(plan: Plan, len: usize) -> Self {
        let mut out = Chunks::default();
        if let Plan::Whole(length) = plan {
            out.input_length = length;
            out.chunks.push(Chunk {
                source: Source::Input,
                range: 0..len,
                ascii: false,
            });
        }
        out
    }
}

/// What `chunk_text` does with a text, decided before any splitting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Blank: no chunks.
    Blank,
    /// Within the chunk size (its length in the unit): the text as it is.
    Whole(usize),
    /// Split as this type; the length is above the chunk size.
    Split(ContentType, usize),
}

/// The first steps of Open Notebook's `chunk_text`: blank text, short text,
/// then the content type.
pub fn plan<S, L>(
    text: &S,
    content_type: Option<ContentType>,
    file_path: Option<&str>,
    sizes: ChunkSizes,
    length: &L,
) -> Plan
where
    S: Splittable + ?Sized,
    L: LengthFunction<S>,
{
    if text.strip_range().is_empty() {
        return Plan::Blank;
    }
    let input_length = length.length_up_to(text, sizes.chunk_size);
    if input_length <= sizes.chunk_size {
        return Plan::Whole(input_length);
    }
    let content_type = content_type.unwrap_or_else(|| {
        detect::detect_lazily(file_path, || {
            text.char_prefix(detect::SAMPLE_CHARS).to_str()
        })
        .content_type
    });
    Plan::Split(content_type, input_length)
}

/// Splits `text` as Open Notebook's `chunk_text` does.
pub fn chunk_text<L: LengthFunction>(
    text: &str,
    content_type: Option<ContentType>,
    file_path: Option<&str>,
    sizes: ChunkSizes,
    length: &L,
) -> Result<Chunks> {
    match plan(text, content_type, file_path, sizes, length) {
        Plan::Split(ContentType::Html, len) => split_html(text, len, sizes, length),
        Plan::Split(content_type, len) => split(text, content_type, len, sizes, length),
        other => Ok(Chunks::unsplit(other, text.len())),
    }
}

/// Open Notebook's chunks of a text in either form ([`Splittable`]); HTML,
/// which needs a `str`, is left to [`chunk_text`]: `None`.
pub fn chunk_text_unless_html<S, L>(
    text: &S,
    content_type: Option<ContentType>,
    file_path: Option<&str>,
    sizes: ChunkSizes,
    length: &L,
) -> Result<Option<Chunks<S::Owned>>>
where
    S: Splittable + ?Sized,
    L: LengthFunction<S>,
{
    match plan(text, content_type, file_path, sizes, length) {
        Plan::Split(ContentType::Html, _) => Ok(None),
        Plan::Split(content_type, len) => split(text, content_type, len, sizes, length).map(Some),
        other => Ok(Some(Chunks::unsplit(other, text.len()))),
    }
}

/// Splits a long plain or Markdown text.
fn split<S, L>(
    text: &S,
    content_type: ContentType,
    input_length: usize,
    sizes: ChunkSizes,
    length: &L,
) -> Result<Chunks<S::Owned>>
where
    S: Splittable + ?Sized,
    L: LengthFunction<S>,
{
    let mut out = Chunks {
        content_type: Some(content_type),
        input_length,
        ..Chunks::default()
    };
    let splitter = RecursiveSplitter::open_notebook(sizes.chunk_size, sizes.chunk_overlap)?;
    if content_type == ContentType::Markdown {
        let md = markdown::MarkdownHeaderSplitter::open_notebook();
        // The sections hold about the text again (lines stripped, "  \n" added).
        S::reserve(&mut out.rebuilt, text.len() + text.len() / 16);
        let sections = md.split_into(text, &mut out.rebuilt);
        // A chunk per section, and about one per chunk size of long ones.
        let rebuilt: &S = out.rebuilt.borrow();
        let estimate = sections.len() + rebuilt.len() / sizes.chunk_size.max(1);
        out.chunks.reserve(estimate.min(recursive::PRESIZE_LIMIT));
        split_sections::<S, L>(&mut out, sections, &splitter, sizes, length);
    } else {
        let pieces = splitter.split(text, length);
        push_pieces::<S, S>(&mut out, Source::Input, 0, false, pieces);
    }
    finish(&mut out, text, sizes, length);
    Ok(out)
}

/// Splits a long HTML text.
fn split_html<L: LengthFunction>(
    text: &str,
    input_length: usize,
    sizes: ChunkSizes,
    length: &L,
) -> Result<Chunks> {
    let mut out: Chunks = Chunks {
        content_type: Some(ContentType::Html),
        input_length,
        ..Chunks::default()
    };
    let splitter = RecursiveSplitter::open_notebook(sizes.chunk_size, sizes.chunk_overlap)?;
    let headers = html::open_notebook_headers();
    let ranges = html::HtmlHeaderSplitter::new(headers, false)?
        .split_into(text, &mut out.rebuilt)?
        .into_iter()
        .map(|range| markdown::SectionSpan {
            range,
            paragraph_breaks: true,
            ascii: false,
        })
        .collect();
    split_sections::<str, L>(&mut out, ranges, &splitter, sizes, length);
    finish(&mut out, text, sizes, length);
    Ok(out)
}

/// The first of Open Notebook's separators, "\n\n".
const PARAGRAPH_BREAK: &str = recursive::OPEN_NOTEBOOK_SEPARATORS[0];

/// Splits again the rebuilt sections longer than the chunk size.
fn split_sections<S, L>(
    out: &mut Chunks<S::Owned>,
    sections: Vec<markdown::SectionSpan>,
    splitter: &RecursiveSplitter,
    sizes: ChunkSizes,
    length: &L,
) where
    S: Splittable + ?Sized,
    L: LengthFunction<S>,
{
    for markdown::SectionSpan {
        range,
        paragraph_breaks,
        ascii,
    } in sections
    {
        let section: &S = &out.rebuilt.borrow()[range.clone()];
        let absent = (!paragraph_breaks).then_some(PARAGRAPH_BREAK);
        if !length.exceeds(section, sizes.chunk_size) {
            out.chunks.push(Chunk {
                source: Source::Rebuilt,
                range,
                ascii,
            });
            continue;
        }
        let ascii_bytes = section
            .ascii_bytes()
            .filter(|_| LengthFunction::<S>::is_char_length(length));
        let utf8 = section
            .as_utf8()
            .filter(|_| LengthFunction::<S>::is_char_length(length));
        if let Some(bytes) = ascii_bytes {
            // Its bytes are its characters: no counting needed.
            let pieces = splitter.split_lacking(bytes, &CharLength, absent);
            push_pieces::<[u8], S>(out, Source::Rebuilt, range.start, true, pieces);
        } else if let Some(pieces) = utf8.and_then(|s| split_code_points(splitter, s, absent)) {
            push_pieces::<str, S>(out, Source::Rebuilt, range.start, ascii, pieces);
        } else {
            let pieces = splitter.split_lacking(section, length, absent);
            push_pieces::<S, S>(out, Source::Rebuilt, range.start, ascii, pieces);
        }
    }
}

/// [`RecursiveSplitter::split_lacking`] of a non-ASCII UTF-8 `text` in
/// characters, made on its code points (UCS-2 when they all fit, else
/// UCS-4) and mapped back to byte ranges of `text`; `None` for a text of
/// 4 GiB or more (offsets are `u32`).
///
/// Why: on code units a piece's length is its number of units, so the
/// merge jumps between separators near each chunk's end
/// ([`span_merge`]) instead of counting the characters of every line, as
/// it must on UTF-8. Long HTML sections are all non-ASCII on the corpus
/// (`¶`, `’`), and that per-line path was 9% of the samples of HTML
/// chunking. Units split as UTF-8 does (`code_units_split_as_utf8`), and
/// `code_point_split_is_utf8_split` checks this function against it.
fn split_code_points(
    splitter: &RecursiveSplitter,
    text: &str,
    absent: Option<&str>,
) -> Option<Vec<Piece<String>>> {
    u32::try_from(text.len()).ok()?;
    // UCS-2 unless a code point does not fit (no pass to look first).
    split_as_units::<u16>(splitter, text, absent)
        .or_else(|| split_as_units::<u32>(splitter, text, absent))
}

/// [`split_code_points`] in units `T`; `None` when a code point does not
/// fit in one.
fn split_as_units<T: crate::text::CodeUnit>(
    splitter: &RecursiveSplitter,
    text: &str,
    absent: Option<&str>,
) -> Option<Vec<Piece<String>>>
where
    [T]: Splittable<Owned = Vec<T>>,
{
    let bytes = text.as_bytes();
    // `units[k]` is the `k`-th code point, starting at byte `at[k]`;
    // `at[units.len()]` is the end.
    let mut units: Vec<T> = Vec::with_capacity(bytes.len());
    let mut at: Vec<u32> = Vec::with_capacity(bytes.len() + 1);
    let mut i = 0;
    while i < bytes.len() {
        // Runs of ASCII, most of the text, 16 bytes at a time.
        if let Some(block) = bytes[i..].first_chunk::<16>()
            && block.is_ascii()
        {
            units.extend(block.iter().map(|&b| T::from(b)));
            at.extend(i as u32..i as u32 + 16);
            i += 16;
            continue;
        }
        let Some(c) = text.get(i..).and_then(|rest| rest.chars().next()) else {
            break;
        };
        units.push(T::from_code_point(c as u32)?);
        at.push(i as u32);
        i += c.len_utf8();
    }
    at.push(bytes.len() as u32);
    let byte = |k: usize| at.get(k).map_or(bytes.len(), |&b| b as usize);
    let pieces = splitter
        .split_lacking(&units[..], &CharLength, absent)
        .into_iter()
        .map(|piece| match piece {
            Piece::Span(r) => Piece::Span(byte(r.start)..byte(r.end)),
            Piece::Text(t) => Piece::Text(<[T]>::to_str(&t).into_owned()),
        })
        .collect();
    Some(pieces)
}

/// Strips the chunks and drops the empty (and, in token mode, small) ones.
fn finish<S, L>(out: &mut Chunks<S::Owned>, input: &S, sizes: ChunkSizes, length: &L)
where
    S: Splittable + ?Sized,
    L: LengthFunction<S>,
{
    strip_chunks(out, input);
    if let Some(min) = sizes.min_chunk_size {
        drop_small_chunks(out, input, min, length);
    }
}

/// Adds split pieces of `source` (text `P` within a text `S`) whose text
/// starts at `base` there; `ascii`: whether that text is known to be ASCII.
fn push_pieces<P, S>(
    out: &mut Chunks<S::Owned>,
    source: Source,
    base: usize,
    ascii: bool,
    pieces: Vec<Piece<P::Owned>>,
) where
    P: Splittable + ?Sized,
    S: Splittable + ?Sized,
{
    out.chunks.reserve(pieces.len());
    for piece in pieces {
        let range = match piece {
            Piece::Span(r) => base + r.start..base + r.end,
            Piece::Text(text) => {
                // Only when separators are discarded, which the pipeline never does.
                let start = out.rebuilt.borrow().len();
                S::push_str(&mut out.rebuilt, &P::to_str(text.borrow()));
                let end = out.rebuilt.borrow().len();
                out.chunks.push(Chunk {
                    source: Source::Rebuilt,
                    range: start..end,
                    ascii,
                });
                continue;
            }
        };
        out.chunks.push(Chunk {
            source,
            range,
            ascii,
        });
    }
}

/// `[c.strip() for c in chunks if c and c.strip()]`.
fn strip_chunks<S: Splittable + ?Sized>(out: &mut Chunks<S::Owned>, input: &S) {
    let Chunks {
        chunks, rebuilt, ..
    } = out;
    let rebuilt: &S = (*rebuilt).borrow();
    chunks.retain_mut(|chunk| {
        let kept = match chunk.source {
            Source::Input => input[chunk.range.clone()].strip_range(),
            Source::Rebuilt => rebuilt[chunk.range.clone()].strip_range(),
        };
        let start = chunk.range.start;
        chunk.range = start + kept.start..start + kept.end;
        !kept.is_empty()
    });
}

fn drop_small_chunks<S, L>(out: &mut Chunks<S::Owned>, input: &S, min: usize, length: &L)
where
    S: Splittable + ?Sized,
    L: LengthFunction<S>,
{
    if min == 0 || out.chunks.len() <= 1 {
        return;
    }
    let keep: Vec<bool> = out
        .chunks
        .iter()
        .map(|c| length.exceeds(out.text(input, c), min - 1))
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

    /// The chunks' texts of pieces of `text`.
    fn piece_texts(text: &str, pieces: Vec<Piece<String>>) -> Vec<String> {
        pieces
            .into_iter()
            .map(|p| match p {
                Piece::Span(r) => text[r].to_string(),
                Piece::Text(t) => t,
            })
            .collect()
    }

    proptest::proptest! {
        /// The split of a UTF-8 text on its code points is the split of
        /// the text itself, ranges mapped back included; long ASCII runs
        /// take the 16-byte blocks.
        #[test]
        fn code_point_split_is_utf8_split(
            parts in proptest::collection::vec(
                proptest::sample::select(&[
                    "a", "bc", " ", "\n", "\n\n", ". ", ", ", "\t", "é", "¶", "’", "☃",
                    "\u{3000}", "\u{a0}", "😀", "\u{85}", "  \n",
                    "a long run of ascii text, ", "another one.\nwith a line",
                ][..]),
                0..80,
            ),
            size in 1usize..60,
            overlap_pct in 0usize..100,
            lacks_breaks in proptest::bool::ANY,
        ) {
            let text = parts.concat();
            let absent = (lacks_breaks && !text.contains("\n\n")).then_some(PARAGRAPH_BREAK);
            let splitter = RecursiveSplitter::open_notebook(size, size * overlap_pct / 100)
                .expect("valid");
            let expected = piece_texts(&text, splitter.split_lacking(text.as_str(), &CharLength, absent));
            let pieces = split_code_points(&splitter, &text, absent).expect("short");
            proptest::prop_assert_eq!(piece_texts(&text, pieces), expected);
        }
    }

    fn texts(text: &str, ct: Option<ContentType>) -> Vec<String> {
        let out = chunk_text(text, ct, None, ChunkSizes::CHARS, &CharLength).expect("chunks");
        out.chunks
            .iter()
            .map(|c| out.text(text, c).to_string())
            .collect()
    }

    #[test]
    fn sizes_are_checked() {
        assert_eq!(ChunkSizes::new(1500, 225, None), Ok(ChunkSizes::CHARS));
        assert_eq!(
            ChunkSizes::new(1, 0, Some(0)).map(|s| s.min_chunk_size),
            Ok(Some(0))
        );
        let err = |s: &str| Err(Error::InvalidArgument(s.into()));
        assert_eq!(
            ChunkSizes::new(0, 0, None),
            err("chunk_size must be > 0, got 0")
        );
        assert_eq!(
            ChunkSizes::new(-3, 0, None),
            err("chunk_size must be > 0, got -3")
        );
        assert_eq!(
            ChunkSizes::new(10, -1, None),
            err("chunk_overlap must be >= 0, got -1")
        );
        assert_eq!(
            ChunkSizes::new(10, 0, Some(-1)),
            err("min_chunk_size must be >= 0, got -1")
        );
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
                    ascii: true,
                },
                Chunk {
                    source: Source::Input,
                    range: 0..1,
                    ascii: true,
                },
            ],
            ..Default::default()
        };
        drop_small_chunks(&mut out, input, 5, &CharLength);
        assert_eq!(out.chunks.len(), 2);
    }
}
