//! Which way one text of `chunk_text` goes: on the code units of a Python
//! `str` as CPython stores them (no transcoding, and characters are units),
//! or on its UTF-8.
//!
//! Counting characters, plain text and Markdown are split on the code units;
//! HTML (parsed as UTF-8) and tokens (BPE on UTF-8) on the transcoded text,
//! and so is long wide Markdown (see [`WIDE_REBUILD_LIMIT`]).

use std::str::FromStr;

use super::detect::ContentType;
use super::recursive::CharLength;
use super::{ChunkSizes, Chunks, Plan, chunk_text, chunk_text_unless_html, plan};
use crate::error::{Error, Result};
use crate::text::{CodeUnit, CodeUnits, SurrogateMap, max_char};
use crate::tokens::{Encoding, TokenLength};

/// What a chunk's size is counted in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Characters (code points, as Python's `len`).
    Chars,
    /// Tokens of a tiktoken encoding.
    Tokens(Encoding),
}

impl Unit {
    /// The unit of a name, `"chars"` or `"tokens"` (then counted in
    /// `encoding`, which is only read for tokens).
    pub fn new(unit: &str, encoding: &str) -> Result<Unit> {
        match unit {
            "chars" => Ok(Unit::Chars),
            "tokens" => Encoding::from_str(encoding).map(Unit::Tokens),
            other => Err(Error::InvalidArgument(format!(
                "unit must be 'chars' or 'tokens', got {other:?}"
            ))),
        }
    }
}

/// Chunks of code units, with the bound of each one's largest code point
/// that its `str` is made for ([`max_char`]; found here, away from the
/// Python runtime, which making the strings needs).
#[derive(Clone, Debug, PartialEq)]
pub struct UnitChunks<T> {
    pub chunks: Chunks<Vec<T>>,
    pub max_chars: Vec<u32>,
}

impl<T: CodeUnit> UnitChunks<T> {
    /// `ascii`: whether the input is all ASCII, and so is every chunk (its
    /// units, and the ASCII a splitter adds): then none is scanned, nor is a
    /// chunk known to be ASCII on its own ([`super::Chunk::ascii`]).
    fn new(input: &[T], chunks: Chunks<Vec<T>>, ascii: bool) -> Self {
        let max_chars = chunks
            .chunks
            .iter()
            .map(|c| {
                if ascii || c.ascii {
                    0x7F
                } else {
                    max_char(&[chunks.text(input, c)])
                }
            })
            .collect();
        Self { chunks, max_chars }
    }
}

/// [`UnitChunks`] of the width of the text's code units.
#[derive(Clone, Debug, PartialEq)]
pub enum WidthChunks {
    Latin1(UnitChunks<u8>),
    Ucs2(UnitChunks<u16>),
    Ucs4(UnitChunks<u32>),
}

macro_rules! width_chunks_from {
    ($($unit:ty => $variant:ident),*) => {$(
        impl From<UnitChunks<$unit>> for WidthChunks {
            fn from(chunks: UnitChunks<$unit>) -> Self {
                WidthChunks::$variant(chunks)
            }
        }
    )*};
}
width_chunks_from!(u8 => Latin1, u16 => Ucs2, u32 => Ucs4);

impl WidthChunks {
    /// The type the text was split as; `None` when it needed no splitting.
    pub fn content_type(&self) -> Option<ContentType> {
        crate::for_width!(self, WidthChunks, |c| c.chunks.content_type)
    }

    /// The text's length (see [`Chunks::input_length`]).
    pub fn input_length(&self) -> usize {
        crate::for_width!(self, WidthChunks, |c| c.chunks.input_length)
    }
}

/// The chunks of a text given as code units (`ascii`: whether they are all
/// ASCII, as CPython knows), when that is the way it goes; `None` when it
/// must be chunked on its UTF-8 ([`chunk_utf8`]).
pub fn chunk_code_units(
    units: CodeUnits<'_>,
    ascii: bool,
    content_type: Option<ContentType>,
    path: Option<&str>,
    sizes: ChunkSizes,
    unit: Unit,
) -> Result<Option<WidthChunks>> {
    if unit != Unit::Chars {
        return Ok(None);
    }
    crate::for_width!(units, |u| chunk_units(u, ascii, content_type, path, sizes))
}

fn chunk_units<T: CodeUnit>(
    units: &[T],
    ascii: bool,
    content_type: Option<ContentType>,
    path: Option<&str>,
    sizes: ChunkSizes,
) -> Result<Option<WidthChunks>>
where
    WidthChunks: From<UnitChunks<T>>,
{
    // Latin-1 (one byte a unit) is never too wide.
    let wide = std::mem::size_of::<T>() > 1;
    if wide && rebuilds_large(units, content_type, path, sizes) {
        return Ok(None);
    }
    let chunks = chunk_text_unless_html(units, content_type, path, sizes, &CharLength)?;
    Ok(chunks.map(|chunks| UnitChunks::new(units, chunks, ascii).into()))
}

/// Chunks a text given as UTF-8 (with the map of the lone surrogates that
/// were moved when it was transcoded, if any) in the given unit.
pub fn chunk_utf8(
    text: &str,
    surrogates: Option<SurrogateMap>,
    content_type: Option<ContentType>,
    path: Option<&str>,
    sizes: ChunkSizes,
    unit: Unit,
) -> Result<Chunks> {
    match unit {
        Unit::Chars => chunk_text(text, content_type, path, sizes, &CharLength),
        Unit::Tokens(encoding) => {
            let length = TokenLength::new(encoding.tokenizer(), surrogates);
            chunk_text(text, content_type, path, sizes, &length)
        }
    }
}

/// Code units of a wide (UCS-2 or UCS-4) text above which Markdown is chunked
/// on its UTF-8 instead: the sections a header splitter rebuilds take the
/// text's width, 2 or 4 bytes a character, and with the chunks' strings the
/// peak would pass 3x the text's UTF-8 size. Below it, the excess is a
/// constant of a few MB.
pub const WIDE_REBUILD_LIMIT: usize = 1 << 20;

/// Whether `units` is a long wide text that would be split as Markdown.
fn rebuilds_large<T: CodeUnit>(
    units: &[T],
    content_type: Option<ContentType>,
    path: Option<&str>,
    sizes: ChunkSizes,
) -> bool {
    units.len() > WIDE_REBUILD_LIMIT
        && matches!(
            plan(units, content_type, path, sizes, &CharLength),
            Plan::Split(ContentType::Markdown, _)
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{Surrogates, transcode};

    fn sizes() -> ChunkSizes {
        ChunkSizes::new(20, 0, None).expect("sizes")
    }

    /// The chunks' texts, whichever way they went.
    fn texts(units: CodeUnits<'_>, content_type: ContentType, unit: Unit) -> (bool, Vec<String>) {
        let ct = Some(content_type);
        match chunk_code_units(units, false, ct, None, sizes(), unit).expect("chunks") {
            Some(width_chunks) => {
                let texts = crate::for_width!(&width_chunks, WidthChunks, |c| {
                    let input = CodeUnit::units_of(units).expect("same width");
                    c.chunks
                        .chunks
                        .iter()
                        .map(|chunk| crate::text::utf8_lossy(c.chunks.text(input, chunk)))
                        .collect()
                });
                (true, texts)
            }
            None => {
                let (text, map) = transcode(units, Surrogates::Map).expect("text");
                let chunks = chunk_utf8(&text, map, ct, None, sizes(), unit).expect("chunks");
                let texts = chunks
                    .chunks
                    .iter()
                    .map(|c| chunks.text(text.as_str(), c).to_string())
                    .collect();
                (false, texts)
            }
        }
    }

    #[test]
    fn names_of_units() {
        assert_eq!(Unit::new("chars", "ignored"), Ok(Unit::Chars));
        assert_eq!(
            Unit::new("tokens", "cl100k_base"),
            Ok(Unit::Tokens(Encoding::Cl100kBase))
        );
        let err = |s: &str| Err(Error::InvalidArgument(s.into()));
        assert_eq!(
            Unit::new("words", "o200k_base"),
            err("unit must be 'chars' or 'tokens', got \"words\"")
        );
        assert_eq!(
            Unit::new("tokens", "gpt2"),
            err("unknown encoding \"gpt2\"; choose one of o200k_base, cl100k_base")
        );
    }

    #[test]
    fn characters_of_plain_and_markdown_go_on_code_units_the_same_as_utf8() {
        let text =
            "# Título\n\nuna frase más larga que veinte letras\n\n## Дальше\nещё немного текста 🎉";
        let latin1: Vec<u8> = "plain text, café au lait, many words long"
            .chars()
            .map(|c| c as u32 as u8)
            .collect();
        let ucs2: Vec<u16> = text
            .chars()
            .filter(|&c| (c as u32) < 0x1_0000)
            .map(|c| c as u16)
            .collect();
        let ucs4: Vec<u32> = text.chars().map(|c| c as u32).collect();
        for units in [
            CodeUnits::Latin1(&latin1),
            CodeUnits::Ucs2(&ucs2),
            CodeUnits::Ucs4(&ucs4),
        ] {
            for ct in [ContentType::Plain, ContentType::Markdown] {
                let (on_units, chunks) = texts(units, ct, Unit::Chars);
                assert!(on_units);
                let (text, map) = transcode(units, Surrogates::Map).expect("text");
                let utf8 =
                    chunk_utf8(&text, map, Some(ct), None, sizes(), Unit::Chars).expect("chunks");
                let expected: Vec<String> = utf8
                    .chunks
                    .iter()
                    .map(|c| utf8.text(text.as_str(), c).to_string())
                    .collect();
                assert_eq!(chunks, expected, "{units:?} {ct:?}");
                assert!(chunks.len() > 1);
            }
        }
    }

    #[test]
    fn html_and_tokens_go_on_utf8() {
        let html: Vec<u8> = b"<h1>A</h1><p>some text that is long enough</p>".to_vec();
        let (on_units, chunks) = texts(CodeUnits::Latin1(&html), ContentType::Html, Unit::Chars);
        assert!(!on_units);
        assert!(!chunks.is_empty());
        let plain: Vec<u16> = "word ".repeat(40).encode_utf16().collect();
        let tokens = Unit::Tokens(Encoding::O200kBase);
        let (on_units, chunks) = texts(CodeUnits::Ucs2(&plain), ContentType::Plain, tokens);
        assert!(!on_units);
        assert!(chunks.len() > 1);
    }

    #[test]
    fn long_wide_markdown_goes_on_utf8_and_the_rest_on_units() {
        let line = "# Заголовок\nтекст\n";
        let long: Vec<u16> = line
            .repeat(WIDE_REBUILD_LIMIT / line.chars().count() + 1)
            .encode_utf16()
            .collect();
        assert!(long.len() > WIDE_REBUILD_LIMIT);
        let chunk = |units, ct| {
            chunk_code_units(units, false, Some(ct), None, ChunkSizes::CHARS, Unit::Chars)
                .expect("chunks")
                .is_some()
        };
        assert!(!chunk(CodeUnits::Ucs2(&long), ContentType::Markdown));
        assert!(chunk(CodeUnits::Ucs2(&long), ContentType::Plain));
        let short = &long[..WIDE_REBUILD_LIMIT];
        assert!(chunk(CodeUnits::Ucs2(short), ContentType::Markdown));
        // Latin-1 rebuilds one byte a character: never too wide.
        let latin1: Vec<u8> = "# Titre\ntexte é\n"
            .repeat(WIDE_REBUILD_LIMIT / 8)
            .into_bytes();
        let latin1: Vec<u8> = String::from_utf8(latin1)
            .expect("utf8")
            .chars()
            .map(|c| c as u32 as u8)
            .collect();
        assert!(latin1.len() > WIDE_REBUILD_LIMIT);
        assert!(chunk(CodeUnits::Latin1(&latin1), ContentType::Markdown));
    }

    #[test]
    fn max_chars_bound_each_chunks_width() {
        let ucs2: Vec<u16> = "ascii words here and more, then Ω at the end of it all"
            .encode_utf16()
            .collect();
        let chunked = chunk_code_units(
            CodeUnits::Ucs2(&ucs2),
            false,
            Some(ContentType::Plain),
            None,
            sizes(),
            Unit::Chars,
        )
        .expect("chunks");
        let Some(WidthChunks::Ucs2(c)) = chunked else {
            panic!("UCS-2 chunks expected, got {chunked:?}");
        };
        assert_eq!(c.max_chars.len(), c.chunks.chunks.len());
        for (chunk, &max) in c.chunks.chunks.iter().zip(&c.max_chars) {
            let widest = c
                .chunks
                .text(&ucs2[..], chunk)
                .iter()
                .copied()
                .max()
                .unwrap_or(0);
            // CPython only asks which of 0x80, 0x100 and 0x10000 it reaches.
            for bound in [0x80, 0x100, 0x1_0000] {
                assert_eq!(u32::from(widest) >= bound, max >= bound, "{chunk:?}");
            }
        }
        assert_eq!(c.chunks.content_type, Some(ContentType::Plain));
    }
}
