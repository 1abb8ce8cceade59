//! The strategies: each turns a text into [`Raw`] chunks ([`Split`]).

pub mod frontmatter;
pub mod html;
pub mod json;
pub mod markdown;
pub mod semantic;
pub mod sentence;

use crate::chunking::recursive::{KeepSeparator, LengthFunction, Piece, RecursiveSplitter};
use crate::error::Result;

use super::{Options, Raw, Split, Strategy};

/// Runs the options' strategy.
pub fn split<L: LengthFunction<str>>(source: &str, options: &Options, length: &L) -> Result<Split> {
    match &options.strategy {
        Strategy::Recursive { separators } => recursive(source, options, separators, length),
        Strategy::Token => Ok(token(source, options)),
        Strategy::Markdown => Ok(markdown::split(source, options, length)),
        Strategy::Sentence => Ok(sentence::split(source, options, length)),
        Strategy::Json => json::split(source, options, length),
        Strategy::Semantic { .. } => Err(crate::error::Error::InvalidArgument(
            "the semantic strategies need the sentences' embeddings: use \
             records::chunk_semantic"
                .to_string(),
        )),
        // Its chunks are not of the source: see `records::chunk`.
        Strategy::Html => Err(crate::error::Error::InvalidArgument(
            "the 'html' strategy splits the HTML's text: use records::chunk".to_string(),
        )),
    }
}

/// LangChain's `RecursiveCharacterTextSplitter(chunk_size, chunk_overlap,
/// separators)` (defaults `["\n\n", "\n", " ", ""]`, kept at the start of
/// the next piece, chunks stripped): the same strings, as spans.
fn recursive<L: LengthFunction<str>>(
    source: &str,
    options: &Options,
    separators: &[String],
    length: &L,
) -> Result<Split> {
    let splitter = RecursiveSplitter::new(
        options.chunk_size,
        options.overlap,
        separators.to_vec(),
        KeepSeparator::Start,
        true,
    )?;
    let mut chunks = Vec::new();
    let mut prev_end = 0;
    for piece in splitter.split(source, length) {
        // Separators are kept: every piece is a span.
        if let Piece::Span(range) = piece {
            let mut raw = Raw::span(range.clone());
            raw.own_start = prev_end.clamp(range.start, range.end);
            prev_end = prev_end.max(range.end);
            chunks.push(raw);
        }
    }
    Ok(Split {
        chunks,
        overlapped: true,
        ..Split::default()
    })
}

/// Windows of `chunk_size` tokens starting every `chunk_size - overlap`
/// tokens, as a sliding window over tiktoken's `encode` (the last window
/// ends the text). A window that starts or ends inside a character (a
/// character of several tokens) is widened to the whole character.
fn token(source: &str, options: &Options) -> Split {
    let tokenizer = options.encoding.tokenizer();
    let ids = tokenizer.encode(source);
    // Byte offsets of token starts, found walking forward (window starts and
    // ends both increase): no table of offsets beside the ids.
    let token_len = |id: u32| tokenizer.vocab().token_bytes(id).map_or(0, <[u8]>::len);
    let mut starts = (0usize, 0usize);
    let mut ends = (0usize, 0usize);
    let offset = |walk: &mut (usize, usize), to: usize| {
        while walk.0 < to {
            walk.1 += token_len(ids[walk.0]);
            walk.0 += 1;
        }
        walk.1.min(source.len())
    };
    let n = options.chunk_size;
    let step = (options.chunk_size - options.overlap).max(1);
    let mut chunks = Vec::with_capacity(ids.len() / step + 1);
    let mut prev_end = 0;
    let mut first = 0;
    while first < ids.len() {
        let last = (first + n).min(ids.len());
        let start = floor_char_boundary(source, offset(&mut starts, first));
        let end = ceil_char_boundary(source, offset(&mut ends, last));
        // A window inside the previous one's characters (a character of
        // several tokens) adds nothing.
        let inside = chunks
            .last()
            .is_some_and(|p: &Raw| p.range.start <= start && end <= p.range.end);
        if start < end && !inside {
            let mut raw = Raw::span(start..end);
            raw.own_start = prev_end.clamp(start, end);
            prev_end = prev_end.max(end);
            chunks.push(raw);
        }
        if last == ids.len() {
            break;
        }
        first += step;
    }
    Split {
        chunks,
        overlapped: true,
        exact: true,
        ..Split::default()
    }
}

pub(crate) fn floor_char_boundary(s: &str, mut at: usize) -> usize {
    at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

pub(crate) fn ceil_char_boundary(s: &str, mut at: usize) -> usize {
    at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at += 1;
    }
    at
}
