//! Exact BPE token counts for OpenAI's `o200k_base` and `cl100k_base`
//! encodings: `count(text)` equals Python tiktoken 0.14.0's
//! `len(enc.encode(text, disallowed_special=()))`.
//!
//! The text is cut into pieces as tiktoken's split pattern cuts it
//! ([`pretokenize`], hand-written, with the Unicode 16.0 classes of the regex
//! engine tiktoken uses: [`classes`]); a piece that is a token counts one,
//! any other is merged by tiktoken's rule ([`bpe`]) over the vocabulary that
//! the tiktoken-rs crate ships ([`vocab`]). Special tokens are never
//! recognized: their text is ordinary text.
//!
//! One input has no tiktoken count to equal: a whitespace run of about a
//! million characters or more that reaches the `\s+(?!\S)` alternative
//! overflows fancy-regex's backtracking stack, and tiktoken raises
//! `ValueError`. We return the count the pattern defines.
//!
//! Performance notes (about 9-15x Python tiktoken on real text, single
//! thread; see `benches/bench_tokens.py` and docs/performance.md):
//! - the count path builds no token vectors;
//! - the pre-tokenizers are hand-written, with ASCII fast paths; runs of
//!   ASCII letters are read eight bytes at a time;
//! - pieces of 2 bytes are counted from a bitmap of the token pairs (8 KB,
//!   in the L1 cache);
//! - pieces of 3-16 bytes are looked up first in per-thread front tables of
//!   piece -> count (2 MB, one huge page; `cache.rs`),
//!   which hold tokens and merged pieces alike; on a miss, the piece is
//!   looked up whole in the rank table (about 93% of the pieces of real text
//!   are tokens), which lies on 2 MB pages (`pages.rs`), and merged if it is
//!   none;
//! - pieces are cut in batches of 16 and their table lines prefetched, so
//!   the cache misses of a batch overlap;
//! - merges of long pieces are O(n log n) at worst: 10 MB of one repeated
//!   character takes about a second.

mod bound;
pub mod bpe;
mod cache;
pub mod classes;
mod pages;
pub mod pretokenize;
mod tables;
pub mod vocab;

use std::ops::Range;
use std::str::FromStr;
use std::sync::OnceLock;

use crate::error::Error;
use crate::text::SurrogateMap;
use vocab::{Rank, Vocab};

/// A tiktoken encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    O200kBase,
    Cl100kBase,
}

impl Encoding {
    pub const ALL: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    fn cell(self) -> &'static OnceLock<Tokenizer> {
        static O200K: OnceLock<Tokenizer> = OnceLock::new();
        static CL100K: OnceLock<Tokenizer> = OnceLock::new();
        match self {
            Encoding::O200kBase => &O200K,
            Encoding::Cl100kBase => &CL100K,
        }
    }

    /// The tokenizer if it is loaded already.
    pub fn loaded_tokenizer(self) -> Option<&'static Tokenizer> {
        self.cell().get()
    }

    /// The tokenizer, loaded on first use (once per process, thread-safe).
    pub fn tokenizer(self) -> &'static Tokenizer {
        self.cell().get_or_init(|| {
            // The vocabulary is compiled into tiktoken-rs: failing to read it
            // is a build defect, not something input can cause.
            Tokenizer::load(self).unwrap_or_else(|e| panic!("{e}"))
        })
    }
}

/// The encoding of a name (`"o200k_base"`, ...): the one place that
/// validates names, for every function that takes one.
impl FromStr for Encoding {
    type Err = Error;

    fn from_str(name: &str) -> crate::error::Result<Encoding> {
        Encoding::ALL
            .into_iter()
            .find(|e| e.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Encoding::ALL.iter().map(|e| e.name()).collect();
                Error::InvalidArgument(format!(
                    "unknown encoding {name:?}; choose one of {}",
                    names.join(", ")
                ))
            })
    }
}

/// A loaded encoding: counts and encodes text.
pub struct Tokenizer {
    encoding: Encoding,
    vocab: Vocab,
}

impl Tokenizer {
    /// Reads the vocabulary (a few hundred milliseconds); prefer
    /// [`Encoding::tokenizer`], which does it once.
    pub fn load(encoding: Encoding) -> Result<Tokenizer, String> {
        Ok(Tokenizer {
            encoding,
            vocab: Vocab::load(encoding)?,
        })
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    /// Calls `f` with each piece of `text` as the encoding's split pattern
    /// cuts it.
    #[inline]
    pub fn for_each_piece(&self, text: &str, f: impl FnMut(&[u8])) {
        match self.encoding {
            Encoding::O200kBase => pretokenize::for_each_piece(pretokenize::o200k_next, text, f),
            Encoding::Cl100kBase => pretokenize::for_each_piece(pretokenize::cl100k_next, text, f),
        }
    }

    /// Number of tokens of a piece of 3 to 255 bytes whose key hash is `k`,
    /// from the rank table (merging if it is no token); the middle and long
    /// tables of `cache` remember the merges of pieces longer than the front
    /// table's.
    #[inline(always)]
    fn hashed_piece_count(
        &self,
        piece: &[u8],
        k: vocab::KeyHash,
        cache: Option<&mut cache::PieceCache>,
    ) -> usize {
        let v = &self.vocab;
        if v.get_prehashed(piece, k).is_some() {
            return 1;
        }
        if let [a, b, c] = *piece {
            // Not a token: its lower-ranked pair merges if either is a token,
            // and the result cannot merge with the third byte.
            let pairs = v.is_pair(a, b) as usize | v.is_pair(b, c) as usize;
            return 3 - pairs;
        }
        let h = k.hash;
        if piece.len() > cache::MAX_FRONT
            && let Some(c) = cache
        {
            if let Some(n) = c.get(piece, h) {
                return n;
            }
            let n = bpe::count(v, piece);
            c.put(piece, h, n);
            return n;
        }
        bpe::count(v, piece)
    }

    /// Counts in batches of pieces, in three passes so that the cache
    /// misses of a batch overlap: cut the pieces, prefetch their front-table
    /// sets (rank-table slots for longer pieces); take the counts the front
    /// table has, and hash the others for the rank table and prefetch their
    /// slots; then find those (storing them in the front table).
    #[inline(always)]
    fn count_pieces<const O200K: bool>(
        &self,
        text: &str,
        limit: usize,
        mut cache: Option<&mut cache::PieceCache>,
        mut on_piece: impl FnMut(usize, usize),
    ) -> usize {
        const BATCH: usize = 16;
        const PENDING: usize = usize::MAX;
        let t = classes::table();
        let v = &self.vocab;
        let b = text.as_bytes();
        let mut bounds = [0usize; BATCH + 1];
        let mut hashes = [vocab::KeyHash::default(); BATCH];
        let mut keys = [cache::FrontKey::default(); BATCH];
        let mut counts = [0usize; BATCH];
        let mut n = 0;
        let mut i = 0;
        while i < b.len() && n <= limit {
            bounds[0] = i;
            let mut k = 0;
            while k < BATCH && i < b.len() {
                let s = i;
                // Called directly (not through a function value) so that the
                // pre-tokenizer's fast paths are inlined into this loop.
                i = if O200K {
                    pretokenize::o200k_next(t, b, i)
                } else {
                    pretokenize::cl100k_next(t, b, i)
                };
                let len = i.wrapping_sub(s);
                if (3..=255).contains(&len) {
                    match cache.as_deref() {
                        Some(c) if len <= cache::MAX_FRONT => {
                            keys[k] = cache::FrontKey::new(b, s, i);
                            c.prefetch(&keys[k]);
                        }
                        _ => {
                            hashes[k] = vocab::key_hash_in(b, s, i);
                            v.prefetch(hashes[k].hash);
                        }
                    }
                }
                k += 1;
                bounds[k] = i;
            }
            for j in 0..k {
                let (s, e) = (bounds[j], bounds[j + 1]);
                counts[j] = match e.wrapping_sub(s) {
                    0 => 0,
                    1 => 1,
                    // Two bytes: one token, or two that cannot merge.
                    2 => 2 - v.is_pair(b[s], b[s + 1]) as usize,
                    len => {
                        let front = match cache.as_deref_mut() {
                            Some(c) if len <= cache::MAX_FRONT => {
                                let got = c.front_get(&keys[j]);
                                if got.is_none() {
                                    hashes[j] = vocab::key_hash_in(b, s, e);
                                    v.prefetch(hashes[j].hash);
                                }
                                got
                            }
                            _ => None,
                        };
                        front.unwrap_or(PENDING)
                    }
                };
            }
            for j in 0..k {
                let (s, e) = (bounds[j], bounds[j + 1]);
                let mut tokens = counts[j];
                if tokens == PENDING {
                    let piece = b.get(s..e).unwrap_or_default();
                    tokens = if piece.len() <= 255 {
                        self.hashed_piece_count(piece, hashes[j], cache.as_deref_mut())
                    } else {
                        bpe::count(v, piece)
                    };
                    if piece.len() <= cache::MAX_FRONT
                        && let Some(c) = cache.as_deref_mut()
                    {
                        c.front_put(keys[j], tokens);
                    }
                }
                n += tokens;
                on_piece(e, tokens);
            }
        }
        n
    }

    /// The count of `text`, calling `on_piece(end, tokens)` for each piece
    /// the split pattern cuts (`end`: byte offset after the piece). The count
    /// of a text is the sum of its pieces' counts, so prefix sums of these
    /// give the exact count of any span that starts and ends between pieces.
    pub fn count_pieces_of(&self, text: &str, mut on_piece: impl FnMut(usize, usize)) -> usize {
        cache::with(self.encoding, |cache| match self.encoding {
            Encoding::O200kBase => {
                self.count_pieces::<true>(text, usize::MAX, cache, &mut on_piece)
            }
            Encoding::Cl100kBase => {
                self.count_pieces::<false>(text, usize::MAX, cache, &mut on_piece)
            }
        })
    }

    /// `len(tiktoken.get_encoding(name).encode(text, disallowed_special=()))`.
    pub fn count(&self, text: &str) -> usize {
        self.count_up_to(text, usize::MAX)
    }

    /// The count when it is at most `limit`; otherwise some number above
    /// `limit`, found without counting the rest of the text (to decide that a
    /// text exceeds a chunk size, the first tokens past it are enough).
    pub fn count_up_to(&self, text: &str, limit: usize) -> usize {
        // A long text with more words than the limit exceeds it: no BPE.
        if text.len() > limit {
            let words = bound::words_up_to(text, limit);
            if words > limit {
                return words;
            }
        }
        cache::with(self.encoding, |cache| match self.encoding {
            Encoding::O200kBase => self.count_pieces::<true>(text, limit, cache, |_, _| {}),
            Encoding::Cl100kBase => self.count_pieces::<false>(text, limit, cache, |_, _| {}),
        })
    }

    /// The byte ranges of `text` that the windows of `size` tokens starting
    /// every `step` tokens cover (the last window ends at the last token),
    /// as langchain's `split_text_on_tokens` makes them: the bytes its
    /// decoding of each window's ids is made of (the tokens of a text are
    /// its bytes, in order). Found from the pieces' token counts, with the
    /// BPE merge run only on the pieces a window boundary falls inside.
    pub fn token_windows(&self, text: &str, size: usize, step: usize) -> Vec<Range<usize>> {
        // (end of the piece, tokens up to its end), for pieces of 1+ tokens.
        let mut pieces: Vec<(usize, usize)> = Vec::with_capacity(text.len() / 4 + 1);
        let mut total = 0;
        cache::with(self.encoding, |cache| {
            let on_piece = |end: usize, tokens: usize| {
                if tokens > 0 {
                    total += tokens;
                    pieces.push((end, total));
                }
            };
            match self.encoding {
                Encoding::O200kBase => self.count_pieces::<true>(text, usize::MAX, cache, on_piece),
                Encoding::Cl100kBase => {
                    self.count_pieces::<false>(text, usize::MAX, cache, on_piece)
                }
            }
        });
        // The byte offset where token `j` starts (`total`: the end).
        let offset = |j: usize| -> usize {
            if j >= total {
                return text.len();
            }
            // The piece holding token j: the first whose count passes j.
            let p = pieces.partition_point(|&(_, upto)| upto <= j);
            let (start, before) = if p == 0 { (0, 0) } else { pieces[p - 1] };
            if j == before {
                return start;
            }
            let piece = &text.as_bytes()[start..pieces[p].0];
            let mut at = start;
            let mut seen = before;
            bpe::merge(&self.vocab, piece, |s, _| {
                if seen == j {
                    at = start + s;
                }
                seen += 1;
            });
            at
        };
        let mut out = Vec::with_capacity(total / step.max(1) + 1);
        let mut start = 0;
        while start < total {
            let end = (start + size).min(total);
            out.push(offset(start)..offset(end));
            if end == total {
                break;
            }
            start += step;
        }
        out
    }

    /// The token ids, as tiktoken's `encode_ordinary`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut out: Vec<Rank> = Vec::with_capacity(text.len() / 4 + 1);
        self.for_each_piece(text, |piece| match self.vocab.get(piece) {
            Some(r) => out.push(r),
            None => bpe::merge(&self.vocab, piece, |s, e| {
                out.push(self.vocab.rank(&piece[s..e]));
            }),
        });
        out
    }

    /// The bytes of the tokens `ids` (unknown ids are skipped).
    pub fn decode_bytes(&self, ids: &[u32]) -> Vec<u8> {
        let mut out = Vec::new();
        for &id in ids {
            if let Some(b) = self.vocab.token_bytes(id) {
                out.extend_from_slice(b);
            }
        }
        out
    }
}

/// Token count as a chunk length function.
///
/// Text that came from a Python `str` with lone surrogates holds private-use
/// placeholders for them (see [`crate::text`]); with the map, each piece is
/// counted as tiktoken counts the Python substring (pairs joined, lone
/// surrogates as U+FFFD).
pub struct TokenLength {
    tokenizer: &'static Tokenizer,
    surrogates: Option<SurrogateMap>,
}

impl TokenLength {
    pub fn new(tokenizer: &'static Tokenizer, surrogates: Option<SurrogateMap>) -> Self {
        Self {
            tokenizer,
            surrogates,
        }
    }
}

impl crate::chunking::recursive::LengthFunction for TokenLength {
    #[inline]
    fn length(&self, text: &str) -> usize {
        self.length_up_to(text, usize::MAX)
    }

    #[inline]
    fn length_up_to(&self, text: &str, limit: usize) -> usize {
        match self.surrogates {
            Some(map) if map.touches(text) => {
                self.tokenizer.count_up_to(&map.utf16_repaired(text), limit)
            }
            _ => self.tokenizer.count_up_to(text, limit),
        }
    }

    /// A token holds at least one byte, so text of at most `limit` bytes
    /// (after the repair of surrogates, which never adds bytes) needs no
    /// counting.
    #[inline]
    fn exceeds(&self, text: &str, limit: usize) -> bool {
        text.len() > limit && self.length_up_to(text, limit) > limit
    }
}

#[cfg(test)]
mod breakdown;
#[cfg(test)]
mod tests;
