//! The strategies: each turns a text into [`Raw`] chunks ([`Split`]).

pub mod frontmatter;
pub mod html;
pub mod json;
pub mod markdown;
pub mod semantic;
pub mod sentence;

use crate::chunking::recursive::{KeepSeparator, LengthFunction, Piece, RecursiveSplitter};
use crate::error::Result;

use super::counts::SourceTokens;
use super::{Options, Raw, Split, Strategy};

/// Runs the options' strategy.
pub fn split<L: LengthFunction<str>>(source: &str, options: &Options, length: &L) -> Result<Split> {
    match &options.strategy {
        Strategy::Recursive { separators, keep } => {
            recursive(source, options, separators, *keep, length)
        }
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
/// separators, keep_separator)` (defaults `["\n\n", "\n", " ", ""]`, kept at
/// the start of the next piece, chunks stripped): the same strings, as
/// spans. With [`KeepSeparator::End`] a separator stays with the piece before
/// it (a sentence keeps its `". "`).
fn recursive<L: LengthFunction<str>>(
    source: &str,
    options: &Options,
    separators: &[String],
    keep: KeepSeparator,
    length: &L,
) -> Result<Split> {
    let splitter = RecursiveSplitter::new(
        options.chunk_size,
        options.overlap,
        separators.to_vec(),
        keep,
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
///
/// One counting pass ([`SourceTokens`]) places every window: a token's
/// start is found from the pieces' counts, and BPE runs again only on a
/// piece of several tokens that a window boundary falls inside. The same
/// table gives each window's own count (`measured`), so no window is
/// encoded or counted again.
fn token(source: &str, options: &Options) -> Split {
    let table = SourceTokens::new(options.encoding.tokenizer(), source);
    let total = table.total();
    let n = options.chunk_size;
    let step = (options.chunk_size - options.overlap).max(1);
    let mut chunks = Vec::with_capacity(total / step + 1);
    // Window starts and ends both increase: one search cursor for each.
    let (mut starts, mut ends) = (0, 0);
    let mut prev_end = 0;
    let mut first = 0;
    while first < total {
        let last = (first + n).min(total);
        let start = floor_char_boundary(source, table.token_start(first, &mut starts));
        let end = ceil_char_boundary(source, table.token_start(last, &mut ends));
        // A window inside the previous one's characters (a character of
        // several tokens) adds nothing.
        let inside = chunks
            .last()
            .is_some_and(|p: &Raw| p.range.start <= start && end <= p.range.end);
        if start < end && !inside {
            let mut raw = Raw::span(start..end);
            raw.own_start = prev_end.clamp(start, end);
            raw.measured = table.count(start..end).map(|c| (start..end, c));
            prev_end = prev_end.max(end);
            chunks.push(raw);
        }
        if last == total {
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
