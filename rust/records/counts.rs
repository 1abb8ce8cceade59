//! Token counts of any span of a text from one counting pass over it.
//!
//! Every strategy asks for the token count of many spans of the same source
//! (blocks, sections, packs growing block by block, each chunk's count), so
//! the same text used to be counted two to four times. [`SourceTokens`]
//! counts the source once and keeps, in two bit sets of one bit a byte,
//! where its pieces (the split pattern's) start and, for a piece of `k`
//! tokens, `k` bits at its first bytes (a token holds at least one byte).
//! The tokens before a piece boundary are then the set bits before it: a
//! rank over 64-bit words, O(1). About 0.4 bytes a byte of text.
//!
//! A span's count is not always the sum of the pieces inside it: the span's
//! own pieces differ near its ends. [`SourceTokens::count`] is exact:
//! - the pieces starting at a position depend only on the text after it (the
//!   split patterns look behind nothing), so the span's pieces, cut from its
//!   start, are the text's own from the first one that ends on a boundary of
//!   the text's pieces (found by cutting pieces from the start, usually one);
//! - cutting a text shorter changes no piece that ends before the cut unless
//!   a pattern asserts something about the cut position: `\s+(?!\S)` and
//!   `\s++$` do, and only for a piece of whitespace that reaches the cut. A
//!   span therefore has the text's pieces up to the last boundary before its
//!   trailing whitespace; the rest (the part of the piece it cuts, and the
//!   whitespace) is counted alone.
//!
//! Spans that are not slices of the source, or are short, are counted
//! directly.

use std::ops::Range;

use crate::chunking::recursive::LengthFunction;
use crate::tokens::classes::{self, SPACE};
use crate::tokens::{Encoding, TokenLength, Tokenizer, bpe, pretokenize};

/// Where the pieces of a text start and how many tokens precede each.
pub struct SourceTokens<'a> {
    source: &'a str,
    tokenizer: &'static Tokenizer,
    /// Bit `p`: a piece starts at byte `p`.
    starts: Vec<u64>,
    /// For each piece of `k > 1` tokens, the bits of its bytes 1 to `k - 1`:
    /// with `starts`, `k` bits for each piece (most pieces are one token,
    /// and set one bit).
    extra: Vec<u64>,
    /// Set bits of `starts | extra` before each word (one more entry: the
    /// total).
    rank: Vec<u64>,
}

/// At most this many pieces are cut from a span's start before it meets a
/// boundary of the text's pieces; past it the span is counted directly.
const MAX_HEAD_PIECES: usize = 8;

impl<'a> SourceTokens<'a> {
    /// One counting pass over `source`.
    pub fn new(tokenizer: &'static Tokenizer, source: &'a str) -> Self {
        let words = source.len().div_ceil(64);
        let mut starts = vec![0u64; words];
        let mut extra = vec![0u64; words];
        // The bits of the current word are kept in the closure's state and
        // stored when the pieces reach the next word (every 64 bytes):
        // a read-modify-write of the vectors for each piece, through the
        // closure's captures, made this pass measurably slower than
        // `Tokenizer::count` over the same text (most pieces are one token:
        // only their start bit). `benches/bench_records_cpu.py --passes N`
        // under perf compares the two.
        let mut prev = 0usize;
        let mut word = 0usize;
        let mut word_starts = 0u64;
        let mut word_extra = 0u64;
        tokenizer.count_pieces_of(source, |end, k| {
            if end <= prev {
                return;
            }
            let s = prev;
            prev = end;
            if s >> 6 != word {
                if let (Some(a), Some(b)) = (starts.get_mut(word), extra.get_mut(word)) {
                    *a |= word_starts;
                    *b |= word_extra;
                }
                word = s >> 6;
                word_starts = 0;
                word_extra = 0;
            }
            word_starts |= 1 << (s & 63);
            if k > 1 {
                // A token holds at least one byte: the bits stay in the
                // piece (and may reach later words, stored directly).
                for p in s + 1..s + k.min(end - s) {
                    if p >> 6 == word {
                        word_extra |= 1 << (p & 63);
                    } else if let Some(b) = extra.get_mut(p >> 6) {
                        *b |= 1 << (p & 63);
                    }
                }
            }
        });
        if let (Some(a), Some(b)) = (starts.get_mut(word), extra.get_mut(word)) {
            *a |= word_starts;
            *b |= word_extra;
        }
        let mut rank = Vec::with_capacity(words + 1);
        let mut total = 0u64;
        rank.push(0);
        for (a, b) in starts.iter().zip(&extra) {
            total += u64::from((a | b).count_ones());
            rank.push(total);
        }
        SourceTokens {
            source,
            tokenizer,
            starts,
            extra,
            rank,
        }
    }

    pub fn source(&self) -> &'a str {
        self.source
    }

    /// The tokens of the whole source.
    pub fn total(&self) -> usize {
        self.rank.last().map_or(0, |&n| n as usize)
    }

    /// Whether a piece of the source starts at `p` (or `p` is its end).
    fn is_boundary(&self, p: usize) -> bool {
        p >= self.source.len() || self.starts[p >> 6] >> (p & 63) & 1 == 1
    }

    /// The last piece boundary at or before `p`.
    fn boundary_at_or_before(&self, p: usize) -> usize {
        if p >= self.source.len() {
            return self.source.len();
        }
        let mut w = p >> 6;
        let mut bits = self.starts[w] & (u64::MAX >> (63 - (p & 63)));
        loop {
            if bits != 0 {
                return (w << 6) + 63 - bits.leading_zeros() as usize;
            }
            if w == 0 {
                return 0;
            }
            w -= 1;
            bits = self.starts[w];
        }
    }

    /// The first piece boundary after `p` (`p` < the source's length).
    fn boundary_after(&self, p: usize) -> usize {
        let q = p + 1;
        if q >= self.source.len() {
            return self.source.len();
        }
        let mut w = q >> 6;
        let mut bits = self.starts[w] & (u64::MAX << (q & 63));
        loop {
            if bits != 0 {
                return (w << 6) + bits.trailing_zeros() as usize;
            }
            w += 1;
            match self.starts.get(w) {
                Some(&b) => bits = b,
                None => return self.source.len(),
            }
        }
    }

    /// Word `w` of the token bits.
    #[inline]
    fn tokens(&self, w: usize) -> u64 {
        self.starts[w] | self.extra[w]
    }

    /// Tokens of the pieces before boundary `p`.
    fn before(&self, p: usize) -> usize {
        let w = p >> 6;
        let bit = p & 63;
        let mut n = self.rank[w];
        if bit != 0 {
            n += u64::from((self.tokens(w) & ((1u64 << bit) - 1)).count_ones());
        }
        n as usize
    }

    /// The end of the piece of `text` that starts at byte `i`.
    fn next_piece(&self, text: &[u8], i: usize) -> usize {
        let t = classes::table();
        match self.tokenizer.encoding() {
            Encoding::O200kBase => pretokenize::o200k_next(t, text, i),
            Encoding::Cl100kBase => pretokenize::cl100k_next(t, text, i),
        }
    }

    /// The exact count of `source[range]` when the table gives it (see the
    /// module's description); `None`: count the span directly.
    pub fn count(&self, range: Range<usize>) -> Option<usize> {
        let (a, b) = (range.start, range.end);
        let span = self.source.get(a..b)?;
        if span.is_empty() {
            return Some(0);
        }
        // Where the span's trailing whitespace starts (any character that
        // may be `\s`, and control characters: a shorter span is safe).
        let mut r = b;
        for c in span.chars().rev() {
            if classes::of_char(c) & SPACE == 0 && !c.is_whitespace() && !c.is_control() {
                break;
            }
            r -= c.len_utf8();
        }
        // Pieces cut from the span's start until one ends on a boundary of
        // the source's pieces.
        let bytes = span.as_bytes();
        let mut q = a;
        let mut head = 0;
        let mut cut = 0;
        while !self.is_boundary(q) {
            if cut == MAX_HEAD_PIECES {
                return None;
            }
            let e = a + self.next_piece(bytes, q - a);
            // A piece alone is that one piece again.
            head += self.tokenizer.count(&self.source[q..e]);
            cut += 1;
            q = e;
            if q >= b {
                return Some(head);
            }
        }
        let g = self.boundary_at_or_before(r);
        if g < q {
            return None;
        }
        let tail = if g == b {
            0
        } else {
            self.tokenizer.count(&self.source[g..b])
        };
        Some(head + self.before(g) - self.before(q) + tail)
    }

    /// The byte offset where token `j` of the source starts (the source's
    /// length for `j >= total`), as `encode` would place it; `cursor` is a
    /// word index to search from (offsets asked in increasing order).
    pub fn token_start(&self, j: usize, cursor: &mut usize) -> usize {
        let j64 = j as u64;
        if j >= self.total() {
            return self.source.len();
        }
        // The word holding the j-th set bit.
        let mut w = (*cursor).min(self.starts.len().saturating_sub(1));
        while w > 0 && self.rank[w] > j64 {
            w -= 1;
        }
        while self.rank[w + 1] <= j64 {
            w += 1;
        }
        *cursor = w;
        let mut bits = self.tokens(w);
        for _ in 0..j64 - self.rank[w] {
            bits &= bits - 1;
        }
        let p = (w << 6) + bits.trailing_zeros() as usize;
        // The piece holding it, and the token's place in the piece.
        let s = self.boundary_at_or_before(p);
        let k = j - self.before(s);
        if k == 0 {
            return s;
        }
        let e = self.boundary_after(s);
        let piece = &self.source.as_bytes()[s..e];
        let mut at = e;
        let mut seen = 0;
        bpe::merge(self.tokenizer.vocab(), piece, |start, _| {
            if seen == k {
                at = s + start;
            }
            seen += 1;
        });
        at
    }
}

/// Token counts with a [`SourceTokens`] table for the spans of its source
/// (the others, and all of a text with lone surrogates, counted directly).
pub struct SpanTokens<'a> {
    table: Option<SourceTokens<'a>>,
    direct: TokenLength,
}

/// Spans up to this many bytes are counted directly: as cheap as the table's
/// bookkeeping.
const DIRECT_UP_TO: usize = 16;

impl<'a> SpanTokens<'a> {
    /// `table`: of the text the spans will be slices of.
    pub fn new(direct: TokenLength, table: Option<SourceTokens<'a>>) -> Self {
        SpanTokens { table, direct }
    }

    /// The exact count from the table, for a slice of its source.
    #[inline]
    fn table_count(&self, text: &str) -> Option<usize> {
        let table = self.table.as_ref()?;
        if text.len() <= DIRECT_UP_TO {
            return None;
        }
        let base = table.source.as_ptr() as usize;
        let at = (text.as_ptr() as usize).checked_sub(base)?;
        if at + text.len() > table.source.len() {
            return None;
        }
        table.count(at..at + text.len())
    }
}

impl LengthFunction<str> for SpanTokens<'_> {
    fn length(&self, text: &str) -> usize {
        self.table_count(text)
            .unwrap_or_else(|| self.direct.length(text))
    }

    fn length_up_to(&self, text: &str, limit: usize) -> usize {
        match self.table_count(text) {
            Some(n) if n <= limit => n,
            // Above the limit: the value the direct count gives (callers
            // that add such values up, as Markdown's block estimates do,
            // then decide as before).
            _ => self.direct.length_up_to(text, limit),
        }
    }

    fn exceeds(&self, text: &str, limit: usize) -> bool {
        if text.len() <= limit {
            return false;
        }
        match self.table_count(text) {
            Some(n) => n > limit,
            None => self.direct.exceeds(text, limit),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Pieces that make the split patterns' alternatives meet at span ends:
    /// whitespace runs before digits and punctuation, contractions, case
    /// changes, marks, newlines after punctuation, multi-token words.
    const PALETTE: &[&str] = &[
        "a",
        "word",
        "Word",
        "WORD",
        "ABCdef",
        " ",
        "  ",
        "   ",
        "\n",
        "\n\n",
        "\r\n",
        "\t",
        " \n ",
        "1",
        "12345",
        " 1",
        ".",
        ". ",
        ".\n",
        "...",
        " (",
        ")",
        "/",
        "'s",
        "'LL",
        "é",
        "e\u{301}",
        "日本語",
        "😀",
        "\u{a0}",
        "\u{3000}",
        "\u{200b}",
        "-",
        "--",
        "#",
        "| a |",
        "supercalifragilistic",
        "\u{0663}\u{0664}",
        "\u{0928}\u{093f}",
    ];

    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(proptest::sample::select(PALETTE), 0..40).prop_map(|v| v.concat())
    }

    fn boundaries(s: &str) -> Vec<usize> {
        (0..=s.len()).filter(|&i| s.is_char_boundary(i)).collect()
    }

    /// Every span's count from the table equals counting it alone, and every
    /// token's start is where `encode` puts it. Returns how many spans the
    /// table answered.
    fn check(source: &str, encoding: Encoding, spans: &[(usize, usize)]) -> usize {
        let tokenizer = encoding.tokenizer();
        let table = SourceTokens::new(tokenizer, source);
        let ids = tokenizer.encode(source);
        assert_eq!(table.total(), ids.len());
        let mut at = 0;
        let mut cursor = 0;
        for (j, &id) in ids.iter().enumerate() {
            assert_eq!(
                table.token_start(j, &mut cursor),
                at,
                "{source:?} token {j}"
            );
            at += tokenizer.vocab().token_bytes(id).map_or(0, <[u8]>::len);
        }
        let lengths = SpanTokens::new(TokenLength::new(tokenizer, None), Some(table));
        let table = lengths.table.as_ref().unwrap_or_else(|| unreachable!());
        let mut answered = 0;
        for &(a, b) in spans {
            let expected = tokenizer.count(&source[a..b]);
            if let Some(n) = table.count(a..b) {
                assert_eq!(n, expected, "{:?} in {source:?}", &source[a..b]);
                answered += 1;
            }
            assert_eq!(lengths.length(&source[a..b]), expected);
            for limit in [0, expected.saturating_sub(1), expected] {
                assert_eq!(
                    lengths.exceeds(&source[a..b], limit),
                    expected > limit,
                    "{:?} limit {limit}",
                    &source[a..b]
                );
            }
        }
        answered
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn every_span_counts_as_alone(source in text()) {
            let bounds = boundaries(&source);
            let spans: Vec<(usize, usize)> = bounds
                .iter()
                .flat_map(|&a| bounds.iter().filter(move |&&b| b >= a).map(move |&b| (a, b)))
                .collect();
            for encoding in Encoding::ALL {
                check(&source, encoding, &spans);
            }
        }
    }

    #[test]
    fn corpus_spans_count_as_alone() {
        let root = std::env::var_os("FASTNOTEBOOK_CORPUS")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| "../shared/corpus".into());
        let (mut files, mut spans_asked, mut answered) = (0, 0, 0);
        for dir in ["md", "txt", "html"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                continue;
            };
            let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            paths.sort();
            for path in paths
                .iter()
                .step_by(if cfg!(debug_assertions) { 25 } else { 3 })
            {
                let bytes = std::fs::read(path).unwrap_or_default();
                let source = String::from_utf8_lossy(&bytes);
                let bounds = boundaries(&source);
                if bounds.len() < 2 {
                    continue;
                }
                // Spans of a few bytes to a few thousand, from a fixed
                // pseudo-random sequence.
                let mut x: u64 = 0x9e37_79b9_7f4a_7c15 ^ source.len() as u64;
                let mut spans = Vec::new();
                for _ in 0..200 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let a = (x % bounds.len() as u64) as usize;
                    let len = [3, 20, 300, 3000][(x >> 40) as usize % 4];
                    let b = (a + 1 + (x >> 20) as usize % len).min(bounds.len() - 1);
                    spans.push((bounds[a.min(b)], bounds[b]));
                }
                answered += check(&source, Encoding::O200kBase, &spans);
                spans_asked += spans.len();
                files += 1;
            }
        }
        if files == 0 {
            eprintln!(
                "corpus_spans_count_as_alone: no corpus at {}",
                root.display()
            );
        }
        // Nearly every span comes from the table.
        assert!(
            answered * 10 >= spans_asked * 9,
            "{answered} of {spans_asked}"
        );
    }
}
