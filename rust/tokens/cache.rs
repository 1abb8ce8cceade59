//! Per-thread tables of piece -> token count, consulted before the rank
//! table.
//!
//! The front table holds every piece of 3 to 16 bytes seen lately, tokens
//! (count 1) and merged pieces alike. Why: the rank table of `o200k_base` is
//! 8 MB over 2,048 pages, more than the TLB holds, so a lookup of a cold token
//! is a page walk and a cache miss (half of the time of `count` on real text,
//! `tokens::breakdown`); the pieces of real text are few and recur (Zipf), and
//! this table of 1 MB (256 pages) stays in the core's L2 cache and TLB. It is
//! direct-mapped on the piece's hash with the key bytes inline, so a hit is
//! exact and costs one load. Filled as text is counted (a miss asks the rank
//! table, merging if needed, and stores the answer), so it follows the
//! vocabulary of the documents at hand.
//!
//! Longer pieces that are not tokens (their merge costs a dozen lookups;
//! runs of spaces or dashes in Markdown) are remembered in two smaller
//! direct-mapped tables keyed by their full bytes.

use std::cell::RefCell;

use super::Encoding;
use super::vocab::same_bytes;

/// Longest piece of the front table.
pub const MAX_FRONT: usize = 16;
/// 16K sets of two slots of 32 bytes, a set a cache line (1 MB a thread and
/// encoding, within a core's L2): each folder of the corpus holds 20-46K
/// distinct pieces of 3-16 bytes, and a miss costs a rank-table lookup (tens
/// of ns cold) or a merge (~200 ns). Two ways (the most recently used
/// first) miss 35-60% less than one of the same size.
const FRONT_SETS: usize = 1 << 14;
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
    /// The key of `text[s..e]` (3 to 16 bytes) whose first `min(8, len)`
    /// bytes, zero padded, are `head`.
    #[inline(always)]
    pub fn new(text: &[u8], s: usize, e: usize, head: u64) -> FrontKey {
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
            lo: head,
            hi,
            len: n as u64,
        }
    }

    /// The key of `piece` (3 to 16 bytes), the slow way (for tests).
    #[cfg(test)]
    pub fn of(piece: &[u8]) -> FrontKey {
        let mut lo = [0u8; 8];
        let mut hi = [0u8; 8];
        for (i, &x) in piece.iter().enumerate() {
            if i < 8 {
                lo[i] = x
            } else {
                hi[i - 8] = x
            }
        }
        FrontKey {
            lo: u64::from_le_bytes(lo),
            hi: u64::from_le_bytes(hi),
            len: piece.len() as u64,
        }
    }
}

#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
struct Front {
    key: FrontKey,
    count: u64,
}

#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct FrontSet {
    ways: [Front; 2],
}

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
    front: Box<[FrontSet]>,
    mid: Box<[Entry<MAX_MID>]>,
    long: Box<[Entry<MAX_KEY>]>,
}

/// The front set of hash `h` (bits other than the rank table's, whose low
/// bits pick its slot).
#[inline(always)]
fn front_set(h: u64) -> usize {
    (h >> 20) as usize & (FRONT_SETS - 1)
}

impl PieceCache {
    pub(crate) fn new() -> PieceCache {
        PieceCache {
            front: vec![FrontSet::default(); FRONT_SETS].into_boxed_slice(),
            mid: vec![Entry::EMPTY; MID_SLOTS].into_boxed_slice(),
            long: vec![Entry::EMPTY; LONG_SLOTS].into_boxed_slice(),
        }
    }

    /// Starts loading the front slot of hash `h`.
    #[inline(always)]
    pub fn prefetch(&self, h: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let set = &self.front[front_set(h)];
            // SAFETY: a prefetch only hints the cache; the address is valid.
            unsafe { _mm_prefetch::<_MM_HINT_T0>((set as *const FrontSet).cast()) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = h;
    }

    /// The count of the piece of front key `key` and hash `h`, if present
    /// (then it becomes the first of its set).
    #[inline(always)]
    pub fn front_get(&mut self, key: &FrontKey, h: u64) -> Option<usize> {
        let set = &mut self.front[front_set(h)];
        if set.ways[0].key == *key {
            return Some(set.ways[0].count as usize);
        }
        if set.ways[1].key == *key {
            set.ways.swap(0, 1);
            return Some(set.ways[0].count as usize);
        }
        None
    }

    /// Stores a count as the first of its set (the second is dropped).
    #[inline(always)]
    pub fn front_put(&mut self, key: FrontKey, h: u64, count: usize) {
        let set = &mut self.front[front_set(h)];
        set.ways[1] = set.ways[0];
        set.ways[0] = Front {
            key,
            count: count as u64,
        };
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
                let head = super::super::vocab::key_hash(piece).head;
                let want = FrontKey::of(piece);
                assert_eq!(FrontKey::new(&text, s, e, head), want, "{n} {s}");
                assert_eq!(FrontKey::new(&text[..e], s, e, head), want, "{n} {s}");
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

    #[test]
    fn front_hits_are_exact() {
        let mut cache = PieceCache::new();
        let a = FrontKey::of(b"hello");
        let b = FrontKey::of(b"hellp");
        cache.front_put(a, 42, 3);
        assert_eq!(cache.front_get(&a, 42), Some(3));
        // Same slot, other key: a miss, not a wrong count.
        assert_eq!(cache.front_get(&b, 42), None);
        // Two ways: both stay; a third key drops the least recently used.
        cache.front_put(b, 42, 2);
        assert_eq!(cache.front_get(&b, 42), Some(2));
        assert_eq!(cache.front_get(&a, 42), Some(3));
        let c = FrontKey::of(b"hellq");
        cache.front_put(c, 42, 1);
        assert_eq!(cache.front_get(&b, 42), None);
        assert_eq!(cache.front_get(&a, 42), Some(3));
        assert_eq!(cache.front_get(&c, 42), Some(1));
    }
}
