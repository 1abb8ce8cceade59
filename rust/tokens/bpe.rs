//! tiktoken's byte pair merge: repeatedly merge the adjacent pair of parts
//! whose concatenation is the token of lowest rank, the leftmost of equals,
//! until no adjacent pair concatenates to a token.
//!
//! Short pieces (the usual case) use tiktoken's own array scan, on the stack.
//! Long pieces use a doubly linked list of parts and a queue of candidate
//! merges bucketed by rank, O(n log n) at worst and close to linear on the
//! usual worst cases (one repeated character), so a 10 MB piece takes about
//! a second, not hours.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use super::vocab::{Rank, Vocab};

/// Pieces up to this many bytes merge on the stack.
pub const SMALL: usize = 48;

const NONE: Rank = Rank::MAX;

/// Calls `emit(start, end)` for each final part of `piece` (2+ bytes), left to
/// right. The part's rank is `vocab.rank(&piece[start..end])`.
#[inline]
pub fn merge(vocab: &Vocab, piece: &[u8], emit: impl FnMut(usize, usize)) {
    if piece.len() <= SMALL {
        merge_small(vocab, piece, emit)
    } else if piece.len() < u32::MAX as usize {
        merge_large::<u32>(vocab, piece, emit)
    } else {
        merge_large::<u64>(vocab, piece, emit)
    }
}

/// Number of parts `piece` merges into.
#[inline]
pub fn count(vocab: &Vocab, piece: &[u8]) -> usize {
    if piece.len() <= SMALL {
        count_small(vocab, piece)
    } else {
        let mut n = 0;
        merge(vocab, piece, |_, _| n += 1);
        n
    }
}

/// tiktoken's `_byte_pair_merge`: `starts[i]` is where part i starts,
/// `ranks[i]` the rank of parts i and i+1 together.
#[inline(always)]
fn merge_small_core(vocab: &Vocab, piece: &[u8], starts: &mut [u8; SMALL + 1]) -> usize {
    let n = piece.len();
    debug_assert!((2..=SMALL).contains(&n));
    let mut ranks = [NONE; SMALL + 1];
    let mut min = (NONE, 0usize);
    for i in 0..n - 1 {
        let r = vocab.pair_rank(piece[i], piece[i + 1]);
        ranks[i] = r;
        if r < min.0 {
            min = (r, i);
        }
    }
    for (i, s) in starts.iter_mut().enumerate().take(n + 1) {
        *s = i as u8;
    }
    // parts: starts[0..m], with starts[m] == n; ranks[0..m-1]
    let mut m = n;
    while min.0 != NONE {
        let i = min.1;
        // Merge parts i and i+1: the boundary starts[i+1] goes.
        if i > 0 {
            ranks[i - 1] = if i + 2 <= m {
                vocab.rank(&piece[starts[i - 1] as usize..starts[i + 2] as usize])
            } else {
                NONE
            };
        }
        ranks[i] = if i + 3 <= m {
            vocab.rank(&piece[starts[i] as usize..starts[i + 3] as usize])
        } else {
            NONE
        };
        // (Plain loops: `copy_within` calls `memmove`, slow at this size.)
        for k in i + 1..m {
            starts[k] = starts[k + 1];
        }
        for k in i + 1..m - 1 {
            ranks[k] = ranks[k + 1];
        }
        m -= 1;
        min = (NONE, 0);
        for (j, &r) in ranks[..m - 1].iter().enumerate() {
            if r < min.0 {
                min = (r, j);
            }
        }
        if m == 1 {
            break;
        }
    }
    m
}

fn merge_small(vocab: &Vocab, piece: &[u8], mut emit: impl FnMut(usize, usize)) {
    let mut starts = [0u8; SMALL + 1];
    let m = merge_small_core(vocab, piece, &mut starts);
    for w in starts[..=m].windows(2) {
        emit(w[0] as usize, w[1] as usize);
    }
}

#[inline]
fn count_small(vocab: &Vocab, piece: &[u8]) -> usize {
    let mut starts = [0u8; SMALL + 1];
    merge_small_core(vocab, piece, &mut starts)
}

/// Index type of the linked list and heap keys: u32 for pieces under 4 GiB.
trait Idx: Copy + Ord + std::hash::Hash {
    type Key: Copy + Ord;
    const NIL: Self;
    fn from_usize(i: usize) -> Self;
    fn to_usize(self) -> usize;
    fn key(rank: Rank, at: Self) -> Self::Key;
    fn unkey(key: Self::Key) -> (Rank, Self);
}

impl Idx for u32 {
    type Key = u64;
    const NIL: u32 = u32::MAX;
    #[inline(always)]
    fn from_usize(i: usize) -> u32 {
        i as u32
    }
    #[inline(always)]
    fn to_usize(self) -> usize {
        self as usize
    }
    #[inline(always)]
    fn key(rank: Rank, at: u32) -> u64 {
        (rank as u64) << 32 | at as u64
    }
    #[inline(always)]
    fn unkey(key: u64) -> (Rank, u32) {
        ((key >> 32) as Rank, key as u32)
    }
}

impl Idx for u64 {
    type Key = u128;
    const NIL: u64 = u64::MAX;
    #[inline(always)]
    fn from_usize(i: usize) -> u64 {
        i as u64
    }
    #[inline(always)]
    fn to_usize(self) -> usize {
        self as usize
    }
    #[inline(always)]
    fn key(rank: Rank, at: u64) -> u128 {
        (rank as u128) << 64 | at as u128
    }
    #[inline(always)]
    fn unkey(key: u128) -> (Rank, u64) {
        ((key >> 64) as Rank, key as u64)
    }
}

/// The long-piece version. Parts are identified by their start byte: `end[s]`
/// is where the part starting at `s` ends, `prev[s]` where the part before it
/// starts, `rank[s]` the rank of the part at `s` joined with the next one
/// (`NONE`: no such token, or `s` is no longer a part start).
///
/// Candidate merges are taken in tiktoken's order, (rank, start) ascending,
/// without one big heap: they wait in one bucket per rank, and ranks are
/// taken in increasing order (a heap of distinct ranks), each bucket sorted
/// once when its turn comes. A merge of rank `r` only creates candidates for
/// longer strings, so never of rank `r` itself; one of a lower rank (or of
/// `r`, created by such a lower merge) goes to a small "urgent" heap that is
/// served first, in (rank, start) order. Stale candidates are skipped as in
/// tiktoken's `_byte_pair_merge_large`: the rank at a start only ever changes
/// to the rank of a longer string, so a candidate is current exactly when its
/// rank is still the rank at its start.
fn merge_large<I: Idx>(vocab: &Vocab, piece: &[u8], mut emit: impl FnMut(usize, usize)) {
    let n = piece.len();
    let mut end: Vec<I> = (1..=n).map(I::from_usize).collect();
    let mut prev: Vec<I> = Vec::with_capacity(n);
    prev.push(I::NIL);
    prev.extend((0..n - 1).map(I::from_usize));
    let mut rank: Vec<Rank> = Vec::with_capacity(n);
    let mut queue = Queue::<I>::default();
    for i in 0..n - 1 {
        let r = vocab.pair_rank(piece[i], piece[i + 1]);
        rank.push(r);
        queue.push(r, I::from_usize(i));
    }
    rank.push(NONE);

    while let Some((r, left)) = queue.pop() {
        let left = left.to_usize();
        if rank[left] != r {
            continue; // stale
        }
        let right = end[left].to_usize();
        let right_end = end[right].to_usize();
        // Join: the part at `left` now ends at `right_end`; `right` is gone.
        end[left] = I::from_usize(right_end);
        rank[right] = NONE;
        if right_end < n {
            prev[right_end] = I::from_usize(left);
            let next_end = end[right_end].to_usize();
            let nr = vocab.rank(&piece[left..next_end]);
            rank[left] = nr;
            queue.push(nr, I::from_usize(left));
        } else {
            rank[left] = NONE;
        }
        let p = prev[left];
        if p != I::NIL {
            let p = p.to_usize();
            let pr = vocab.rank(&piece[p..right_end]);
            rank[p] = pr;
            queue.push(pr, I::from_usize(p));
        }
    }
    let mut s = 0;
    while s < n {
        let e = end[s].to_usize();
        emit(s, e);
        s = e;
    }
}

/// Candidate merges, popped in (rank, start) order; see [`merge_large`].
struct Queue<I: Idx> {
    /// Whether ranks are being served (else every candidate waits in a bucket).
    serving: bool,
    /// Rank being served and its candidates, sorted, from `cursor` on.
    current: Rank,
    sorted: Vec<I>,
    cursor: usize,
    /// Candidates of a rank <= `current` created while serving it.
    urgent: BinaryHeap<Reverse<I::Key>>,
    /// Candidates of higher ranks, and those ranks (each once).
    buckets: FxHashMap<Rank, Vec<I>>,
    ranks: BinaryHeap<Reverse<Rank>>,
}

impl<I: Idx> Default for Queue<I> {
    fn default() -> Self {
        Queue {
            serving: false,
            current: 0,
            sorted: Vec::new(),
            cursor: 0,
            urgent: BinaryHeap::new(),
            buckets: FxHashMap::default(),
            ranks: BinaryHeap::new(),
        }
    }
}

impl<I: Idx> Queue<I> {
    #[inline(always)]
    fn push(&mut self, rank: Rank, at: I) {
        if rank == NONE {
            return;
        }
        if !self.serving || rank > self.current {
            let ranks = &mut self.ranks;
            self.buckets
                .entry(rank)
                .or_insert_with(|| {
                    ranks.push(Reverse(rank));
                    Vec::new()
                })
                .push(at);
        } else {
            #[cfg(test)]
            tests::URGENT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.urgent.push(Reverse(I::key(rank, at)));
        }
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<(Rank, I)> {
        loop {
            let head = self.sorted.get(self.cursor).copied();
            match (self.urgent.peek(), head) {
                (Some(&Reverse(k)), Some(at)) if k < I::key(self.current, at) => {
                    self.urgent.pop();
                    return Some(I::unkey(k));
                }
                (_, Some(at)) => {
                    self.cursor += 1;
                    return Some((self.current, at));
                }
                (Some(&Reverse(k)), None) => {
                    self.urgent.pop();
                    return Some(I::unkey(k));
                }
                (None, None) => {
                    let Reverse(next) = self.ranks.pop()?;
                    let mut bucket = self.buckets.remove(&next).unwrap_or_default();
                    bucket.sort_unstable();
                    self.serving = true;
                    self.current = next;
                    self.sorted = bucket;
                    self.cursor = 0;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Candidates that went to the urgent heap (so the tests know they ran it).
    pub static URGENT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// tiktoken's `_byte_pair_merge`, verbatim in spirit: the reference.
    fn reference(vocab: &Vocab, piece: &[u8]) -> Vec<(usize, usize)> {
        let mut parts: Vec<(usize, Rank)> = (0..piece.len() - 1)
            .map(|i| (i, vocab.rank(&piece[i..i + 2])))
            .collect();
        parts.push((piece.len() - 1, NONE));
        parts.push((piece.len(), NONE));
        let get = |parts: &Vec<(usize, Rank)>, i: usize| {
            if i + 3 < parts.len() {
                vocab.rank(&piece[parts[i].0..parts[i + 3].0])
            } else {
                NONE
            }
        };
        loop {
            let mut min = (NONE, usize::MAX);
            for (i, &(_, r)) in parts[..parts.len() - 1].iter().enumerate() {
                if r < min.0 {
                    min = (r, i);
                }
            }
            if min.0 == NONE {
                break;
            }
            let i = min.1;
            if i > 0 {
                parts[i - 1].1 = get(&parts, i - 1);
            }
            parts[i].1 = get(&parts, i);
            parts.remove(i + 1);
        }
        parts.windows(2).map(|w| (w[0].0, w[1].0)).collect()
    }

    fn ours(vocab: &Vocab, piece: &[u8]) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        merge(vocab, piece, |a, b| v.push((a, b)));
        assert_eq!(count(vocab, piece), v.len());
        v
    }

    fn large(vocab: &Vocab, piece: &[u8]) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        merge_large::<u32>(vocab, piece, |a, b| v.push((a, b)));
        let mut w = Vec::new();
        merge_large::<u64>(vocab, piece, |a, b| w.push((a, b)));
        assert_eq!(v, w);
        v
    }

    fn toy() -> Vocab {
        let mut tokens: Vec<(Rank, Vec<u8>)> = (0..=255u8).map(|b| (b as Rank, vec![b])).collect();
        let merges: &[&[u8]] = &[b"ab", b"bc", b"abc", b"cd", b"bcd", b"aa", b"aaa", b"aaaa"];
        for (i, m) in merges.iter().enumerate() {
            tokens.push((256 + i as Rank, m.to_vec()));
        }
        Vocab::from_tokens(tokens).expect("toy vocab")
    }

    #[test]
    fn toy_merges() {
        let v = toy();
        assert_eq!(ours(&v, b"abcd"), vec![(0, 3), (3, 4)]);
        // aa|a|a|a -> aa|aa|a -> aa|aaa ("aaaaa" is no token).
        assert_eq!(ours(&v, b"aaaaa"), vec![(0, 2), (2, 5)]);
        for s in [
            &b"abcdabcdaaaaabbcd"[..],
            b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            b"xy",
        ] {
            assert_eq!(ours(&v, s), reference(&v, s));
            assert_eq!(large(&v, s), reference(&v, s));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Long pieces over small alphabets (many merges, rank ties, and
        /// candidates created below the rank being served) merge exactly as
        /// tiktoken's loop.
        #[test]
        fn large_is_tiktokens_merge(
            alphabet in proptest::sample::select(vec![
                "a", "ab", "aab", " ", " \n", "!-=", "ing the", "\u{4E2D}\u{6587}", "xyzzy0",
                "\u{1F600}!", "\t\t\n",
            ]),
            picks in proptest::collection::vec(0usize..64, 2..1500),
        ) {
            let letters: Vec<char> = alphabet.chars().collect();
            let text: String = picks.iter().map(|&i| letters[i % letters.len()]).collect();
            let piece = text.as_bytes();
            for enc in super::super::Encoding::ALL {
                let v = enc.tokenizer().vocab();
                proptest::prop_assert_eq!(large(v, piece), reference(v, piece));
            }
        }
    }

    /// A vocabulary of all strings over "abc" up to 4 bytes, ranked in an
    /// order derived from `seed`: unlike a trained vocabulary, merges often
    /// create candidates of lower rank than the one being merged.
    fn shuffled_vocab(seed: u64) -> Vocab {
        let mut tokens: Vec<(Rank, Vec<u8>)> = (0..=255u8).map(|b| (b as Rank, vec![b])).collect();
        let mut strings: Vec<Vec<u8>> = vec![vec![]];
        let mut all = Vec::new();
        for _ in 0..4 {
            strings = strings
                .iter()
                .flat_map(|s| b"abc".iter().map(move |&c| [s.clone(), vec![c]].concat()))
                .collect();
            all.extend(strings.iter().filter(|s| s.len() >= 2).cloned());
        }
        let mut x = seed | 1;
        let mut keyed: Vec<(u64, Vec<u8>)> = all
            .into_iter()
            .map(|s| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x, s)
            })
            .filter(|(k, _)| k % 4 != 0) // leave some strings out
            .collect();
        keyed.sort();
        for (i, (_, s)) in keyed.into_iter().enumerate() {
            tokens.push((256 + i as Rank, s));
        }
        Vocab::from_tokens(tokens).expect("vocab")
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]
        #[test]
        fn shuffled_ranks_merge_as_tiktoken(
            seed in proptest::prelude::any::<u64>(),
            picks in proptest::collection::vec(0usize..3, 2..300),
        ) {
            let v = shuffled_vocab(seed);
            let piece: Vec<u8> = picks.iter().map(|&i| b"abc"[i]).collect();
            let expected = reference(&v, &piece);
            proptest::prop_assert_eq!(large(&v, &piece), expected.clone());
            if piece.len() <= SMALL {
                proptest::prop_assert_eq!(ours(&v, &piece), expected);
            }
        }
    }

    #[test]
    fn urgent_candidates_are_exercised() {
        let v = shuffled_vocab(7);
        let before = URGENT.load(std::sync::atomic::Ordering::Relaxed);
        for k in 0..50usize {
            let piece: Vec<u8> = (0..200).map(|i| b"abc"[(i * 7 + k * i / 3) % 3]).collect();
            assert_eq!(large(&v, &piece), reference(&v, &piece));
        }
        assert!(URGENT.load(std::sync::atomic::Ordering::Relaxed) > before);
    }

    #[test]
    fn real_vocab_small_and_large_agree() {
        let tok = super::super::Encoding::O200kBase.tokenizer();
        let v = tok.vocab();
        let samples: &[&[u8]] = &[
            b"antidisestablishmentarianism",
            b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "\u{4E2D}\u{6587}\u{5B57}\u{7B26}\u{4E32}\u{6D4B}\u{8BD5}".as_bytes(),
            b"!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
            b"supercalifragilisticexpialidocious",
            b"0123456789",
        ];
        for s in samples {
            let r = reference(v, s);
            assert_eq!(ours(v, s), r, "{:?}", String::from_utf8_lossy(s));
            assert_eq!(large(v, s), r, "{:?}", String::from_utf8_lossy(s));
        }
    }
}
