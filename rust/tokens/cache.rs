//! Per-thread tables of piece -> token count, consulted before the rank
//! table.
//!
//! The front tables hold every piece of 3 to 16 bytes seen lately, tokens
//! (count 1) and merged pieces alike. Why: a lookup in the rank table
//! (8 MB for `o200k_base`) of a cold key is a cache miss, and a piece that
//! is no token costs a merge of a dozen such lookups (~200 ns); the pieces
//! of real text are few and recur (Zipf), and these tables (2 MB) stay in
//! the core's L2 cache. Set-associative on a hash of the piece with the key
//! bytes inline, so a hit is exact and costs one cache line. Filled as text
//! is counted (a miss asks the rank table, merging if needed, and stores the
//! answer), so they follow the vocabulary of the documents at hand.
//!
//! Pieces of up to 8 bytes (86-88% of the occurrences, 68-73% of the distinct
//! pieces of the corpus) take 16-byte slots, four a cache line; longer ones
//! 32-byte slots, two a line. Each folder of the corpus holds 20-46K distinct
//! pieces of 3-16 bytes: with 64K short and 32K wide slots, nearly all of a
//! folder's pieces stay (a single table of 32K slots of 32 bytes missed
//! 3.5-6%).
//!
//! Longer pieces that are not tokens (runs of spaces or dashes in Markdown)
//! are remembered in two smaller direct-mapped tables keyed by their full
//! bytes.

use std::cell::RefCell;

use super::Encoding;
use super::pages::{Pages, Zeroable};
use super::vocab::same_bytes;

/// Longest piece of the front table.
pub const MAX_FRONT: usize = 16;
/// Sets of the short table (4 slots of 16 bytes each: 1 MB).
const SHORT_BITS: u32 = 14;
/// Sets of the wide table (2 slots of 32 bytes each: 1 MB), after the short
/// table's in one 2 MB mapping: one huge page, one TLB entry (on 4 KB pages
/// the prefetches of its lines stalled on page walks).
const WIDE_BITS: u32 = 14;
const LINES: usize = (1 << SHORT_BITS) + (1 << WIDE_BITS);
/// Longest piece of the middle table.
const MAX_MID: usize = 31;
const MID_SLOTS: usize = 1 << 12;
/// Longest piece cached.
const MAX_KEY: usize = 255;
const LONG_SLOTS: usize = 1 << 8;

/// A piece of 3 to [`MAX_FRONT`] bytes as two little-endian words, zero
/// padded, with its length: equal keys are equal pieces.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct FrontKey {
    lo: u64,
    hi: u64,
    len: u64,
}

impl FrontKey {
    /// The key of `text[s..e]` (3 to 16 bytes).
    #[inline(always)]
    pub fn new(text: &[u8], s: usize, e: usize) -> FrontKey {
        let n = e.wrapping_sub(s);
        debug_assert!((3..=MAX_FRONT).contains(&n));
        let hi = if n > 8 {
            // The piece's last 8 bytes, shifted so that byte 8 of the piece
            // lands in the lowest byte; the shift drops the bytes before it.
            let mut buf = [0u8; 8];
            if let Some(w) = text.get(e - 8..e) {
                buf.copy_from_slice(w);
            }
            u64::from_le_bytes(buf) >> ((16 - n) * 8)
        } else {
            0
        };
        FrontKey {
            lo: super::vocab::head_in(text, s, e),
            hi,
            len: n as u64,
        }
    }

    /// Whether the piece goes to the short table.
    #[inline(always)]
    fn is_short(&self) -> bool {
        self.len <= 8
    }

    /// The line of the key's set: one multiplication (the rank table's
    /// hash, a 128-bit product, is only computed on a miss); the top bits of
    /// the product depend on every bit of the key.
    #[inline(always)]
    fn set(&self) -> usize {
        let x = self.lo ^ self.hi.rotate_left(29) ^ self.len.rotate_right(3);
        let h = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        if self.is_short() {
            (h >> (64 - SHORT_BITS)) as usize
        } else {
            (1 << SHORT_BITS) + (h >> (64 - WIDE_BITS)) as usize
        }
    }

    /// The key of `piece` (3 to 16 bytes), the slow way (for tests).
    #[cfg(test)]
    pub fn of(piece: &[u8]) -> FrontKey {
        let mut lo = [0u8; 8];
        let mut hi = [0u8; 8];
        for (i, &x) in piece.iter().enumerate() {
            if i < 8 { lo[i] = x } else { hi[i - 8] = x }
        }
        FrontKey {
            lo: u64::from_le_bytes(lo),
            hi: u64::from_le_bytes(hi),
            len: piece.len() as u64,
        }
    }
}

/// A cache line of the front tables: a set of the short table, four slots
/// of (piece bytes, length | count << 8), or of the wide table, two slots of
/// (bytes 0-7, bytes 8-15, length, count). A length of 0: an empty slot.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Line {
    w: [u64; 8],
}

// SAFETY: integers; all zeros is a line of empty slots.
unsafe impl Zeroable for Line {}

#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Entry<const N: usize> {
    len: u8,
    key: [u8; N],
    count: u32,
}

impl<const N: usize> Entry<N> {
    const EMPTY: Self = Entry {
        len: 0,
        key: [0; N],
        count: 0,
    };

    #[inline(always)]
    fn get(&self, piece: &[u8]) -> Option<usize> {
        let key = self.key.get(..piece.len())?;
        (self.len as usize == piece.len() && same_bytes(key, piece)).then_some(self.count as usize)
    }

    #[inline(always)]
    fn put(&mut self, piece: &[u8], count: usize) {
        if let Some(key) = self.key.get_mut(..piece.len()) {
            key.copy_from_slice(piece);
            self.len = piece.len() as u8;
            self.count = count as u32;
        }
    }
}

pub struct PieceCache {
    front: Pages<Line>,
    mid: Box<[Entry<MAX_MID>]>,
    long: Box<[Entry<MAX_KEY>]>,
}

impl PieceCache {
    pub(crate) fn new() -> PieceCache {
        PieceCache {
            front: Pages::zeroed(LINES),
            mid: vec![Entry::EMPTY; MID_SLOTS].into_boxed_slice(),
            long: vec![Entry::EMPTY; LONG_SLOTS].into_boxed_slice(),
        }
    }

    /// Starts loading the front set of `key`.
    #[inline(always)]
    pub fn prefetch(&self, key: &FrontKey) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let line = &self.front[key.set()];
            // SAFETY: a prefetch only hints the cache; the address is valid.
            unsafe { _mm_prefetch::<_MM_HINT_T0>((line as *const Line).cast()) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// The count of the piece of front key `key`, if present
    /// (then it becomes the first of its set).
    #[inline(always)]
    pub fn front_get(&mut self, key: &FrontKey) -> Option<usize> {
        let w = &mut self.front[key.set()].w;
        if key.is_short() {
            for i in 0..4 {
                let (lo, meta) = (w[2 * i], w[2 * i + 1]);
                if lo == key.lo && meta & 0xFF == key.len {
                    if i > 0 {
                        // Most recently used first: the others move down.
                        w.copy_within(0..2 * i, 2);
                        w[0] = lo;
                        w[1] = meta;
                    }
                    return Some((meta >> 8) as usize);
                }
            }
            return None;
        }
        if w[0] == key.lo && w[1] == key.hi && w[2] == key.len {
            return Some(w[3] as usize);
        }
        if w[4] == key.lo && w[5] == key.hi && w[6] == key.len {
            let count = w[7];
            w.copy_within(0..4, 4);
            w[..4].copy_from_slice(&[key.lo, key.hi, key.len, count]);
            return Some(count as usize);
        }
        None
    }

    /// Stores a count as the first of its set (the last is dropped).
    #[inline(always)]
    pub fn front_put(&mut self, key: FrontKey, count: usize) {
        let w = &mut self.front[key.set()].w;
        if key.is_short() {
            w.copy_within(0..6, 2);
            w[0] = key.lo;
            w[1] = key.len | (count as u64) << 8;
        } else {
            w.copy_within(0..4, 4);
            w[..4].copy_from_slice(&[key.lo, key.hi, key.len, count as u64]);
        }
    }

    /// The cached count of `piece` (more than [`MAX_FRONT`] bytes, at most
    /// `MAX_KEY`) with hash `h`.
    #[inline(always)]
    pub fn get(&self, piece: &[u8], h: u64) -> Option<usize> {
        if piece.len() <= MAX_MID {
            self.mid[(h >> 20) as usize & (MID_SLOTS - 1)].get(piece)
        } else {
            self.long[(h >> 20) as usize & (LONG_SLOTS - 1)].get(piece)
        }
    }

    #[inline(always)]
    pub fn put(&mut self, piece: &[u8], h: u64, count: usize) {
        if piece.len() <= MAX_MID {
            self.mid[(h >> 20) as usize & (MID_SLOTS - 1)].put(piece, count)
        } else {
            self.long[(h >> 20) as usize & (LONG_SLOTS - 1)].put(piece, count)
        }
    }
}

thread_local! {
    static CACHES: RefCell<[Option<PieceCache>; 2]> = const { RefCell::new([None, None]) };
}

/// Runs `f` with this thread's cache for `encoding`, or with none when it is
/// unavailable (thread teardown, re-entry).
#[inline]
pub fn with<R>(encoding: Encoding, mut f: impl FnMut(Option<&mut PieceCache>) -> R) -> R {
    let cached = CACHES.try_with(|cell| {
        let mut caches = cell.try_borrow_mut().ok()?;
        let cache = caches[encoding as usize].get_or_insert_with(PieceCache::new);
        Some(f(Some(cache)))
    });
    match cached {
        Ok(Some(r)) => r,
        _ => f(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys built from the text equal the keys built byte by byte, for every
    /// length and position of the piece in its text (with and without bytes
    /// after it), and differ when any byte or the length differs.
    #[test]
    fn front_keys_are_the_bytes() {
        let text: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37) ^ 0x5A).collect();
        for n in 3..=MAX_FRONT {
            for s in 0..=text.len() - n {
                let e = s + n;
                let piece = &text[s..e];
                let want = FrontKey::of(piece);
                assert_eq!(FrontKey::new(&text, s, e), want, "{n} {s}");
                assert_eq!(FrontKey::new(&text[..e], s, e), want, "{n} {s}");
                assert!(want.set() < LINES);
                assert_eq!(want.set() < 1 << SHORT_BITS, n <= 8);
                // A zero byte appended is another key (the length differs).
                if n < MAX_FRONT {
                    let longer = [piece, &[0u8][..]].concat();
                    assert_ne!(FrontKey::of(&longer), want);
                }
                for at in 0..n {
                    let mut other = piece.to_vec();
                    other[at] ^= 1;
                    assert_ne!(FrontKey::of(&other), want, "{n} {at}");
                }
            }
        }
    }

    /// `ways` keys of `len` bytes that share a set.
    fn keys_of_one_set(len: usize, ways: usize) -> Vec<FrontKey> {
        let set_of = FrontKey::of(&vec![b'x'; len]).set();
        (0..1u32 << 22)
            .map(|i| {
                let mut piece = vec![b'x'; len];
                piece[..3].copy_from_slice(&i.to_le_bytes()[..3]);
                FrontKey::of(&piece)
            })
            .filter(|k| k.set() == set_of)
            .take(ways)
            .collect()
    }

    /// Hits are exact; a set keeps its `ways` most recently used keys.
    #[test]
    fn front_hits_are_exact() {
        #[cfg(target_os = "linux")]
        assert!(PieceCache::new().front.is_mapped());
        for (len, ways) in [(3, 4), (8, 4), (9, 2), (16, 2)] {
            let mut cache = PieceCache::new();
            let keys = keys_of_one_set(len, ways + 1);
            assert_eq!(keys.len(), ways + 1);
            for (i, k) in keys[..ways].iter().enumerate() {
                assert_eq!(cache.front_get(k), None, "{len}");
                cache.front_put(*k, i + 1);
            }
            for (i, k) in keys[..ways].iter().enumerate() {
                assert_eq!(cache.front_get(k), Some(i + 1), "{len} {i}");
            }
            // The first key is now the least recently used: a new key of the
            // set drops it, and only it.
            cache.front_put(keys[ways], 99);
            assert_eq!(cache.front_get(&keys[0]), None, "{len}");
            assert_eq!(cache.front_get(&keys[ways]), Some(99));
            for (i, k) in keys[1..ways].iter().enumerate() {
                assert_eq!(cache.front_get(k), Some(i + 2), "{len} {i}");
            }
            // A key of another length with the same leading bytes misses.
            let mut shorter = keys[1];
            shorter.len -= 1;
            assert_eq!(cache.front_get(&shorter), None);
        }
    }
}
