//! Chunk records: every strategy's chunks as spans of the source with their
//! offsets, lines, heading path, sizes, ids and the text to embed.
//!
//! A strategy ([`strategies`]) turns a text into [`Raw`] chunks: byte ranges
//! of the source, in order, with the headings above them. The shared
//! post-processing ([`finish`]) then, in this order:
//! 1. strips the whitespace around each chunk;
//! 2. splits any chunk above the hard maximum (`max_size`, in the unit)
//!    with LangChain's default separators;
//! 3. folds chunks without a letter or digit (whitespace or punctuation
//!    only) into a neighbour that has room for them, else drops them;
//! 4. adds the overlap, for strategies without one of their own: each chunk
//!    starts up to `overlap` units earlier, at the start of a word, never
//!    inside a block the strategy marked whole (a code fence, a table), and
//!    never past the hard maximum;
//! 5. moves every chunk's ends onto extended grapheme cluster boundaries and
//!    keeps its own text within the hard maximum ([`boundaries`]);
//! 6. computes the code-point offsets, lines, counts, ids and `embed_text`.
//!
//! Nothing here knows Python; `crate::py::records` builds the objects.

mod boundaries;
pub mod counts;
pub mod strategies;

use std::ops::Range;

use crate::chunking::recursive::{CharLength, KeepSeparator, LengthFunction, RecursiveSplitter};
use crate::chunking::splittable::Splittable;
use crate::error::{Error, Result};
use crate::tokens::Encoding;

/// A metadata value (what a Python dict of JSON-like values holds).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Value>),
    Map(Vec<(String, Value)>),
}

/// A heading above a chunk: its level (1 to 6) and text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heading {
    pub level: u8,
    pub text: String,
}

/// What a strategy makes of the text: a chunk before post-processing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Raw {
    /// Bytes of the source.
    pub range: Range<usize>,
    /// Where the part not shared with the previous chunk starts (the same as
    /// `range.start` without overlap).
    pub own_start: usize,
    pub headings: Vec<Heading>,
    pub metadata: Vec<(String, Value)>,
    /// The chunk's text when it is not `source[range]` (JSON members
    /// wrapped in their container's brackets).
    pub text: Option<String>,
    /// A range's exact length in the unit, once measured (its count of
    /// tokens is then known when the unit is tokens).
    pub measured: Option<(Range<usize>, usize)>,
}

impl Raw {
    pub fn span(range: Range<usize>) -> Self {
        Raw {
            own_start: range.start,
            range,
            ..Raw::default()
        }
    }
}

/// What a strategy returns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Split {
    pub chunks: Vec<Raw>,
    /// Byte ranges that overlap never starts inside (code fences, tables).
    pub whole_blocks: Vec<Range<usize>>,
    /// Whether the chunks already overlap (the strategy's own overlap).
    pub overlapped: bool,
    /// Document metadata given to every chunk (YAML front matter).
    pub document_metadata: Vec<(String, Value)>,
    /// Whether the chunks must not be cut, merged or extended (JSON: each
    /// chunk is a JSON document).
    pub fixed: bool,
    /// Whether the chunks are exact windows, neither stripped nor cut again
    /// (tokens: the strategy keeps within the maximum by construction).
    pub exact: bool,
}

/// What is prepended to a chunk's text in `embed_text`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContextHeaders {
    Off,
    /// The heading path, joined with " > ".
    Breadcrumb,
    /// Every heading line, as Markdown ATX headings.
    Full,
    /// The nearest heading.
    Parent,
}

impl std::str::FromStr for ContextHeaders {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        match name {
            "off" | "none" => Ok(ContextHeaders::Off),
            "breadcrumb" => Ok(ContextHeaders::Breadcrumb),
            "full" => Ok(ContextHeaders::Full),
            "parent" => Ok(ContextHeaders::Parent),
            other => Err(Error::InvalidArgument(format!(
                "context_headers must be None, 'breadcrumb', 'full' or 'parent', got {other:?}"
            ))),
        }
    }
}

impl ContextHeaders {
    /// The headers of a name (`None`: off).
    pub fn from_name(name: Option<&str>) -> Result<Self> {
        name.map_or(Ok(ContextHeaders::Off), str::parse)
    }

    /// The `embed_text` of a chunk whose text changes from `old_text` to
    /// `new_text`: the context header of `old_embed` (when it is a header,
    /// the separator and `old_text`) before the new text; `None` when there
    /// was no header (`embed_text` is then the text itself).
    pub fn reheaded(old_embed: &str, old_text: &str, new_text: &str) -> Option<String> {
        match old_embed.strip_suffix(old_text) {
            Some(header) if !header.is_empty() => Some(format!("{header}{new_text}")),
            _ => None,
        }
    }

    /// The header for a chunk under `headings` (empty: none).
    pub fn header(self, headings: &[Heading]) -> String {
        match (self, headings) {
            (ContextHeaders::Off, _) | (_, []) => String::new(),
            (ContextHeaders::Breadcrumb, hs) => hs
                .iter()
                .map(|h| h.text.as_str())
                .collect::<Vec<_>>()
                .join(" > "),
            (ContextHeaders::Full, hs) => hs
                .iter()
                .map(|h| format!("{} {}", "#".repeat(h.level.clamp(1, 6) as usize), h.text))
                .collect::<Vec<_>>()
                .join("\n"),
            (ContextHeaders::Parent, [.., last]) => last.text.clone(),
        }
    }
}

/// The separator between the context header and the text in `embed_text`.
pub const HEADER_SEPARATOR: &str = "\n\n";

/// The strategy and its own options.
#[derive(Clone, Debug, PartialEq)]
pub enum Strategy {
    /// LangChain's `RecursiveCharacterTextSplitter` (literal separators,
    /// kept at the start of the next piece, or with `keep` at the end of
    /// the preceding one; chunks stripped).
    Recursive {
        separators: Vec<String>,
        keep: KeepSeparator,
    },
    /// Fixed windows of tokens.
    Token,
    /// Header-aware Markdown.
    Markdown,
    /// Sentences packed up to the size.
    Sentence,
    /// A JSON document split on its structure.
    Json,
    /// Header-aware HTML, on the HTML's text.
    Html,
    /// Sentences grouped by the similarity of their embeddings (a second
    /// pass merging close neighbours with `merge_threshold`).
    Semantic {
        threshold: strategies::semantic::Threshold,
        merge_threshold: Option<f64>,
    },
}

/// The strategies a name gives (the semantic ones take embeddings and are
/// made by [`chunk_semantic`]'s caller).
pub const STRATEGIES: [&str; 6] = ["recursive", "token", "markdown", "sentence", "json", "html"];

impl std::str::FromStr for Strategy {
    type Err = Error;

    /// A strategy by name, with its default options (`recursive`: the
    /// default separators).
    fn from_str(name: &str) -> Result<Self> {
        match name {
            "recursive" => Ok(Strategy::Recursive {
                separators: Vec::new(),
                keep: KeepSeparator::Start,
            }),
            "token" => Ok(Strategy::Token),
            "markdown" => Ok(Strategy::Markdown),
            "sentence" => Ok(Strategy::Sentence),
            "json" => Ok(Strategy::Json),
            "html" => Ok(Strategy::Html),
            other => Err(Error::InvalidArgument(format!(
                "unknown strategy {other:?}; choose one of {}",
                STRATEGIES.join(", ")
            ))),
        }
    }
}

impl Strategy {
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::Recursive { .. } => "recursive",
            Strategy::Token => "token",
            Strategy::Markdown => "markdown",
            Strategy::Sentence => "sentence",
            Strategy::Json => "json",
            Strategy::Html => "html",
            Strategy::Semantic {
                merge_threshold: None,
                ..
            } => "semantic",
            Strategy::Semantic { .. } => "semantic_double_pass",
        }
    }
}

/// How sizes are measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitName {
    Chars,
    Tokens,
    /// A caller's function.
    Custom,
}

impl std::str::FromStr for UnitName {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        match name {
            "chars" => Ok(UnitName::Chars),
            "tokens" => Ok(UnitName::Tokens),
            other => Err(Error::InvalidArgument(format!(
                "unit must be 'chars', 'tokens' or a callable, got {other:?}"
            ))),
        }
    }
}

/// Every option of a call.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub strategy: Strategy,
    pub chunk_size: usize,
    pub overlap: usize,
    /// The hard maximum: no chunk's text is longer, in the unit.
    pub max_size: usize,
    pub unit: UnitName,
    /// The encoding of `token_count` (and of the unit "tokens").
    pub encoding: Encoding,
    pub context_headers: ContextHeaders,
    pub doc_id: Option<String>,
    /// The `markdown` strategy's minimum chunk size, in the unit (`None`:
    /// a tenth of `chunk_size`; see [`Options::min_size`]).
    pub min_chunk_size: Option<usize>,
}

impl Options {
    /// Checks the sizes: `chunk_size > 0`, `overlap < chunk_size`,
    /// `max_size >= chunk_size`.
    pub fn validate(&self) -> Result<()> {
        if self.chunk_size == 0 {
            return Err(Error::InvalidArgument(
                "chunk_size must be > 0, got 0".to_string(),
            ));
        }
        if self.overlap >= self.chunk_size {
            return Err(Error::InvalidArgument(format!(
                "overlap ({}) must be smaller than chunk_size ({})",
                self.overlap, self.chunk_size
            )));
        }
        if let Some(min) = self.min_chunk_size {
            if self.strategy != Strategy::Markdown {
                return Err(Error::InvalidArgument(
                    "min_chunk_size is an option of the 'markdown' strategy".to_string(),
                ));
            }
            if min > self.chunk_size {
                return Err(Error::InvalidArgument(format!(
                    "min_chunk_size ({min}) must be at most chunk_size ({})",
                    self.chunk_size
                )));
            }
        }
        if self.max_size < self.chunk_size {
            return Err(Error::InvalidArgument(format!(
                "max_size ({}) must be at least chunk_size ({})",
                self.max_size, self.chunk_size
            )));
        }
        Ok(())
    }

    /// The smallest chunk the `markdown` strategy leaves alone when a
    /// neighbour can take it: `min_chunk_size`, else a tenth of `chunk_size`.
    pub fn min_size(&self) -> usize {
        self.min_chunk_size.unwrap_or(self.chunk_size / 10)
    }

    /// What the ids hash besides the chunk: every option but `doc_id`
    /// (which prefixes them) and `context_headers` (which changes no chunk).
    pub fn id_key(&self) -> String {
        // The default `keep` is left out, so that the ids stay those of
        // the strategy before it had the option.
        let strategy = match &self.strategy {
            Strategy::Recursive {
                separators,
                keep: KeepSeparator::Start,
            } => format!("Recursive {{ separators: {separators:?} }}"),
            other => format!("{other:?}"),
        };
        let key = format!(
            "{}|{}|{}|{}|{:?}|{}",
            strategy,
            self.chunk_size,
            self.overlap,
            self.max_size,
            self.unit,
            self.encoding.name()
        );
        match self.min_chunk_size {
            Some(min) => format!("{key}|{min}"),
            None => key,
        }
    }
}

/// A finished chunk.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// Bytes of the source.
    pub range: Range<usize>,
    /// Code points of the source.
    pub start: usize,
    pub end: usize,
    pub start_line: usize,
    pub end_line: usize,
    pub headings: Vec<Heading>,
    pub metadata: Vec<(String, Value)>,
    /// `None`: `source[range]`.
    pub text: Option<String>,
    pub char_count: usize,
    /// Tokens of the text in the options' encoding, when counted (see
    /// [`chunk`]).
    pub token_count: Option<usize>,
    pub id: String,
    /// The indices of the previous and next record (see [`link`]).
    pub prev: Option<usize>,
    pub next: Option<usize>,
    /// The context header (empty: `embed_text` is the text).
    pub header: String,
}

impl Record {
    pub fn text<'a>(&'a self, source: &'a str) -> &'a str {
        match &self.text {
            Some(t) => t,
            None => source.get(self.range.clone()).unwrap_or(""),
        }
    }
}

/// The chunks of a text.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunked {
    pub records: Vec<Record>,
    /// The text the records' ranges are in when it is not the source (the
    /// `html` strategy's HTML text).
    pub text: Option<String>,
}

/// Splits `source` with the options' strategy and finishes the chunks.
/// `length` measures in the options' unit; `tokens`, when given, counts
/// each chunk's `token_count` (left `None` otherwise, for the caller to count
/// when asked).
pub fn chunk<L, T>(
    source: &str,
    options: &Options,
    length: &L,
    tokens: Option<&T>,
) -> Result<Chunked>
where
    L: LengthFunction<str>,
    T: LengthFunction<str>,
{
    options.validate()?;
    if options.strategy == Strategy::Html {
        let (text, units) = strategies::html::document(source)?;
        let split = strategies::html::split(&text, units, options, length);
        let records = finish(&text, split, options, length, tokens);
        return Ok(Chunked {
            records,
            text: Some(text),
        });
    }
    let split = strategies::split(source, options, length)?;
    Ok(Chunked {
        records: finish(source, split, options, length, tokens),
        text: None,
    })
}

/// [`chunk`] in a built-in unit (characters, or tokens of the options'
/// encoding; not [`UnitName::Custom`]), each chunk's `token_count` counted
/// when the unit is tokens. `surrogates`: where the source's lone
/// surrogates were mapped, if it had any (tokens are counted as tiktoken
/// counts the original text).
pub fn chunk_builtin(
    source: &str,
    surrogates: Option<crate::text::SurrogateMap>,
    options: &Options,
) -> Result<Chunked> {
    use crate::tokens::TokenLength;
    use counts::{SourceTokens, SpanTokens};

    let tokenizer = options.encoding.tokenizer();
    let tokens = TokenLength::new(tokenizer, surrogates);
    match options.unit {
        // One counting pass gives the count of every span of the source
        // (`counts`): the strategies measure blocks, packs and chunks again
        // and again. The `token` strategy keeps its own table; `html` chunks
        // another text and `json` measures the JSON texts it writes (no span
        // of the source: the pass would be extra); lone surrogates need
        // repair.
        UnitName::Tokens
            if surrogates.is_none()
                && !matches!(
                    options.strategy,
                    Strategy::Token | Strategy::Html | Strategy::Json
                ) =>
        {
            let spans = SpanTokens::new(tokens, Some(SourceTokens::new(tokenizer, source)));
            chunk(source, options, &spans, Some(&spans))
        }
        // Counted while splitting anyway: the counts come almost free.
        UnitName::Tokens => chunk(source, options, &tokens, Some(&tokens)),
        _ => chunk(source, options, &CharLength, None::<&TokenLength>),
    }
}

/// [`chunk`] with the `Semantic` strategy, given the embeddings of the
/// sentences of `source` ([`strategies::sentence::sentences`]).
pub fn chunk_semantic<E, L, T>(
    source: &str,
    embeddings: &strategies::semantic::Embeddings<'_, E>,
    options: &Options,
    length: &L,
    tokens: Option<&T>,
) -> Result<Chunked>
where
    E: Copy + Into<f64>,
    L: LengthFunction<str>,
    T: LengthFunction<str>,
{
    options.validate()?;
    let Strategy::Semantic {
        threshold,
        merge_threshold,
    } = options.strategy
    else {
        return Err(Error::InvalidArgument(
            "chunk_semantic needs the semantic strategy".to_string(),
        ));
    };
    let split = strategies::semantic::split(
        source,
        embeddings,
        threshold,
        merge_threshold,
        options,
        length,
    )?;
    Ok(Chunked {
        records: finish(source, split, options, length, tokens),
        text: None,
    })
}

/// The shared post-processing (see the module's description).
pub fn finish<L, T>(
    source: &str,
    split: Split,
    options: &Options,
    length: &L,
    tokens: Option<&T>,
) -> Vec<Record>
where
    L: LengthFunction<str>,
    T: LengthFunction<str>,
{
    let Split {
        chunks,
        whole_blocks,
        overlapped,
        document_metadata,
        fixed,
        exact,
    } = split;
    let mut chunks = if exact {
        let chunks = fold_degenerate(source, chunks, options.max_size, length);
        boundaries::fit(source, chunks, options.max_size, length, false)
    } else if fixed {
        chunks
            .into_iter()
            .filter(|c| has_word_char(c.text.as_deref().unwrap_or(&source[c.range.clone()])))
            .collect()
    } else {
        let chunks = strip(source, chunks);
        let chunks = enforce_max(source, chunks, options.max_size, length);
        let mut chunks = fold_degenerate(source, chunks, options.max_size, length);
        if !overlapped && options.overlap > 0 {
            add_overlap(source, &mut chunks, &whole_blocks, options, length);
        }
        boundaries::fit(source, chunks, options.max_size, length, true)
    };
    if !document_metadata.is_empty() {
        for c in &mut chunks {
            let mut metadata = document_metadata.clone();
            metadata.append(&mut c.metadata);
            c.metadata = metadata;
        }
    }
    records(source, chunks, options, tokens)
}

/// Whether a text holds a letter or a digit (Python's `str.isalnum`).
pub fn has_word_char(text: &str) -> bool {
    text.chars().any(|c| c != '_' && crate::unicode::is_word(c))
}

/// Strips the whitespace around source chunks; drops the empty ones.
fn strip(source: &str, chunks: Vec<Raw>) -> Vec<Raw> {
    chunks
        .into_iter()
        .filter_map(|mut c| {
            if c.text.is_some() {
                return Some(c);
            }
            let r = source[c.range.clone()].strip_range();
            let range = c.range.start + r.start..c.range.start + r.end;
            if range.is_empty() {
                return None;
            }
            c.own_start = c.own_start.clamp(range.start, range.end);
            c.range = range;
            Some(c)
        })
        .collect()
}

/// LangChain's default separators, for chunks above the hard maximum.
fn fallback_splitter(max_size: usize) -> RecursiveSplitter {
    // max_size > 0 and overlap 0: always valid.
    RecursiveSplitter::new(max_size, 0, Vec::new(), KeepSeparator::Start, true)
        .unwrap_or_else(|e| unreachable!("{e}"))
}

/// Splits the chunks above `max_size` (in the unit) into chunks within it,
/// cut between grapheme clusters ([`boundaries`]; pieces without a letter or
/// digit go to the front of the next).
pub fn split_to_max<L: LengthFunction<str>>(
    source: &str,
    range: Range<usize>,
    max_size: usize,
    length: &L,
) -> Vec<Range<usize>> {
    let text = &source[range.clone()];
    if !length.exceeds(text, max_size) {
        return vec![range];
    }
    let pieces = if length.is_char_length() {
        fallback_splitter(max_size).split(text, &CharLength)
    } else {
        fallback_splitter(max_size).split(text, length)
    };
    let pieces = pieces
        .into_iter()
        .filter_map(|p| match p {
            crate::chunking::recursive::Piece::Span(r) => Some(Raw::span(r)),
            crate::chunking::recursive::Piece::Text(_) => None,
        })
        .collect();
    boundaries::fit(text, pieces, max_size, length, true)
        .into_iter()
        .map(|p| range.start + p.range.start..range.start + p.range.end)
        .collect()
}

fn enforce_max<L: LengthFunction<str>>(
    source: &str,
    chunks: Vec<Raw>,
    max_size: usize,
    length: &L,
) -> Vec<Raw> {
    let mut out = Vec::with_capacity(chunks.len());
    for mut c in chunks {
        if c.text.is_some() {
            out.push(c);
            continue;
        }
        let n = length.length_up_to(&source[c.range.clone()], max_size);
        if n <= max_size {
            c.measured = Some((c.range.clone(), n));
            out.push(c);
            continue;
        }
        for r in split_to_max(source, c.range.clone(), max_size, length) {
            out.push(Raw {
                own_start: r.start.max(c.own_start).min(r.end),
                range: r,
                headings: c.headings.clone(),
                metadata: c.metadata.clone(),
                text: None,
                measured: None,
            });
        }
    }
    out
}

/// Folds chunks with no letter or digit into the previous chunk, or else the
/// next, when the result stays within `max_size`; drops them otherwise.
fn fold_degenerate<L: LengthFunction<str>>(
    source: &str,
    chunks: Vec<Raw>,
    max_size: usize,
    length: &L,
) -> Vec<Raw> {
    let mut out: Vec<Raw> = Vec::with_capacity(chunks.len());
    let mut pending: Option<Raw> = None;
    for c in chunks {
        let degenerate = c.text.is_none() && !has_word_char(&source[c.range.clone()]);
        if let Some(p) = pending.take() {
            // A degenerate chunk waits for the next: it goes in front of it.
            if c.text.is_none() && !length.exceeds(&source[p.range.start..c.range.end], max_size) {
                let mut c = c;
                c.range.start = p.range.start;
                c.own_start = c.own_start.min(p.own_start);
                if degenerate {
                    pending = Some(c);
                } else {
                    out.push(c);
                }
                continue;
            }
        }
        if !degenerate {
            out.push(c);
            continue;
        }
        if let Some(prev) = out.last_mut()
            && prev.text.is_none()
            && !length.exceeds(&source[prev.range.start..c.range.end], max_size)
        {
            prev.range.end = c.range.end;
            continue;
        }
        pending = Some(c);
    }
    out
}

/// Whether byte `at` of `source` starts a word: not whitespace, and at the
/// start or after whitespace.
fn starts_word(source: &str, at: usize) -> bool {
    let next = source[at..].chars().next();
    let prev = source[..at].chars().next_back();
    next.is_some_and(|c| !crate::unicode::is_space(c)) && prev.is_none_or(crate::unicode::is_space)
}

/// Starts each chunk up to `overlap` units before its own start, at a word
/// start within the previous chunk, outside the whole blocks, within the
/// hard maximum.
fn add_overlap<L: LengthFunction<str>>(
    source: &str,
    chunks: &mut [Raw],
    whole_blocks: &[Range<usize>],
    options: &Options,
    length: &L,
) {
    for i in 1..chunks.len() {
        let (before, after) = chunks.split_at_mut(i);
        let prev = &before[i - 1];
        let c = &mut after[0];
        if c.text.is_some() || prev.text.is_some() {
            continue;
        }
        let own = c.range.start;
        let floor = prev.own_start.max(prev.range.start);
        let mut best = own;
        let mut at = own;
        while at > floor {
            // The previous word start.
            let mut p = at;
            while let Some(ch) = source[..p].chars().next_back() {
                p -= ch.len_utf8();
                if p <= floor || starts_word(source, p) {
                    break;
                }
            }
            if p < floor || !starts_word(source, p) {
                break;
            }
            if length.exceeds(&source[p..own], options.overlap)
                || length.exceeds(&source[p..c.range.end], options.max_size)
            {
                break;
            }
            best = p;
            at = p;
        }
        if best < own {
            // Never inside a whole block: move past it.
            for b in whole_blocks {
                if b.start < best && best < b.end {
                    best = b.end.min(own);
                }
            }
            let skip = source[best..own].len() - source[best..own].trim_start().len();
            best += skip;
        }
        c.range.start = best;
    }
}

/// Code points and lines of byte offsets that mostly increase.
struct Cursor<'a> {
    source: &'a str,
    byte: usize,
    chars: usize,
    /// Newlines before `byte`.
    lines: usize,
}

impl<'a> Cursor<'a> {
    fn new(source: &'a str) -> Self {
        Cursor {
            source,
            byte: 0,
            chars: 0,
            lines: 0,
        }
    }

    /// (code points, newlines) before byte `at`.
    fn at(&mut self, at: usize) -> (usize, usize) {
        if at >= self.byte {
            let s = &self.source[self.byte..at];
            self.chars += crate::unicode::char_len(s);
            self.lines += memchr::memchr_iter(b'\n', s.as_bytes()).count();
        } else {
            let s = &self.source[at..self.byte];
            self.chars -= crate::unicode::char_len(s);
            self.lines -= memchr::memchr_iter(b'\n', s.as_bytes()).count();
        }
        self.byte = at;
        (self.chars, self.lines)
    }
}

/// A stable 64-bit hash (8 bytes at a time, multiply-xorshift mixing,
/// splitmix64's finalizer): ids must not change between runs, machines or
/// versions of Rust, so no `std` hasher.
pub fn stable_hash(parts: &[&[u8]]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h: u64 = 0x243f_6a88_85a3_08d3;
    let word = |h: &mut u64, w: u64| {
        *h = (*h ^ w).wrapping_mul(K);
        *h ^= *h >> 29;
    };
    for part in parts {
        word(&mut h, part.len() as u64);
        let mut words = part.chunks_exact(8);
        for w in &mut words {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            word(&mut h, u64::from_le_bytes(b));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            word(&mut h, u64::from_le_bytes(b));
        }
    }
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// A chunk's id: `"{doc_id}:{hash}"` or `"{hash}"`, the hash of the doc id,
/// the options, the code-point offsets and the text.
pub fn chunk_id(doc_id: Option<&str>, key: &str, start: usize, end: usize, text: &str) -> String {
    let h = stable_hash(&[
        doc_id.unwrap_or("").as_bytes(),
        key.as_bytes(),
        &(start as u64).to_le_bytes(),
        &(end as u64).to_le_bytes(),
        text.as_bytes(),
    ]);
    match doc_id {
        Some(d) => format!("{d}:{h:016x}"),
        None => format!("{h:016x}"),
    }
}

/// A chunk's id and its neighbours (indices into the same list).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Linked {
    pub id: String,
    pub prev: Option<usize>,
    pub next: Option<usize>,
}

/// The ids of `n` chunks in order (`id(k)`: the id of chunk `k`) with each
/// one's previous and next chunk: the one place where chunk ids and
/// prev/next links are made, for every strategy's records, for records
/// linked again after post-processing and for a note's chunks.
pub fn link(n: usize, mut id: impl FnMut(usize) -> String) -> Vec<Linked> {
    (0..n)
        .map(|k| Linked {
            id: id(k),
            prev: k.checked_sub(1),
            next: (k + 1 < n).then_some(k + 1),
        })
        .collect()
}

fn records<T: LengthFunction<str>>(
    source: &str,
    chunks: Vec<Raw>,
    options: &Options,
    tokens: Option<&T>,
) -> Vec<Record> {
    let key = options.id_key();
    let mut starts = Cursor::new(source);
    let mut ends = Cursor::new(source);
    let mut records: Vec<Record> = chunks
        .into_iter()
        .map(|c| {
            let (start, start_newlines) = starts.at(c.range.start);
            let (end, _) = ends.at(c.range.end);
            // The line of the last character.
            let last = source[..c.range.end]
                .char_indices()
                .next_back()
                .map_or(c.range.start, |(i, _)| i.max(c.range.start));
            let (_, end_newlines) = ends.at(last);
            let text = match &c.text {
                Some(t) => t.as_str(),
                None => &source[c.range.clone()],
            };
            let char_count = crate::unicode::char_len(text);
            let token_count = match &c.measured {
                // The unit is tokens of the same encoding: counted already.
                Some((range, n)) if options.unit == UnitName::Tokens && *range == c.range => {
                    Some(*n)
                }
                _ => tokens.map(|t| t.length(text)),
            };
            let header = options.context_headers.header(&c.headings);
            Record {
                range: c.range,
                start,
                end,
                start_line: start_newlines + 1,
                end_line: end_newlines + 1,
                headings: c.headings,
                metadata: c.metadata,
                text: c.text,
                char_count,
                token_count,
                id: String::new(),
                prev: None,
                next: None,
                header,
            }
        })
        .collect();
    let linked = link(records.len(), |k| {
        let r = &records[k];
        chunk_id(
            options.doc_id.as_deref(),
            &key,
            r.start,
            r.end,
            r.text(source),
        )
    });
    for (r, l) in records.iter_mut().zip(linked) {
        r.id = l.id;
        r.prev = l.prev;
        r.next = l.next;
    }
    records
}

#[cfg(test)]
mod tests;
