//! A small per-thread cache of piece -> token count for pieces that are not
//! tokens themselves (their merge costs a dozen lookups; in real text most of
//! them recur, and chunking counts most text twice). Direct-mapped on the
//! piece's hash, keyed by the full bytes, so a hit is always exact: short
//! pieces in one table, pieces of up to 255 bytes (runs of spaces or dashes
//! in Markdown, whose merges are long) in a smaller one.

use std::cell::RefCell;

use super::Encoding;
use super::vocab::same_bytes;

/// Longest piece of the short table.
const MAX_SHORT: usize = 27;
/// 32K slots of 32 bytes (1 MB a thread and encoding, within a core's L2):
/// the corpus's documents hold 9-29K distinct pieces that are not tokens
/// (`tokens::breakdown`), which thrashed a table of 4K slots, and a miss
/// costs a merge of about 130 ns.
const SLOTS: usize = 1 << 15;
/// Longest piece cached.
const MAX_KEY: usize = 255;
const LONG_SLOTS: usize = 1 << 8;

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
    short: Box<[Entry<MAX_SHORT>]>,
    long: Box<[Entry<MAX_KEY>]>,
}

impl PieceCache {
    fn new() -> PieceCache {
        PieceCache {
            short: vec![Entry::EMPTY; SLOTS].into_boxed_slice(),
            long: vec![Entry::EMPTY; LONG_SLOTS].into_boxed_slice(),
        }
    }

    /// The cached count of `piece` (3..=MAX_KEY bytes) with hash `h`.
    #[inline(always)]
    pub fn get(&self, piece: &[u8], h: u64) -> Option<usize> {
        if piece.len() <= MAX_SHORT {
            self.short[(h >> 20) as usize & (SLOTS - 1)].get(piece)
        } else {
            self.long[(h >> 20) as usize & (LONG_SLOTS - 1)].get(piece)
        }
    }

    #[inline(always)]
    pub fn put(&mut self, piece: &[u8], h: u64, count: usize) {
        if piece.len() <= MAX_SHORT {
            self.short[(h >> 20) as usize & (SLOTS - 1)].put(piece, count)
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
