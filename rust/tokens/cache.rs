//! A small per-thread cache of piece -> token count for pieces that are not
//! tokens themselves (their merge costs a dozen lookups; in real text most of
//! them recur). Direct-mapped on the piece's hash, keyed by the full bytes,
//! so a hit is always exact.

use std::cell::RefCell;

use super::Encoding;
use super::vocab::same_bytes;

/// Longest piece cached.
pub const MAX_KEY: usize = 27;
const SLOTS: usize = 1 << 12;

#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Entry {
    len: u8,
    key: [u8; MAX_KEY],
    count: u32,
}

const EMPTY: Entry = Entry {
    len: 0,
    key: [0; MAX_KEY],
    count: 0,
};

pub struct PieceCache {
    entries: Box<[Entry]>,
}

impl PieceCache {
    fn new() -> PieceCache {
        PieceCache {
            entries: vec![EMPTY; SLOTS].into_boxed_slice(),
        }
    }

    #[inline(always)]
    fn slot(h: u64) -> usize {
        (h >> 20) as usize & (SLOTS - 1)
    }

    /// The cached count of `piece` (3..=MAX_KEY bytes) with hash `h`.
    #[inline(always)]
    pub fn get(&self, piece: &[u8], h: u64) -> Option<usize> {
        let e = &self.entries[Self::slot(h)];
        (e.len as usize == piece.len() && same_bytes(&e.key[..piece.len()], piece))
            .then_some(e.count as usize)
    }

    #[inline(always)]
    pub fn put(&mut self, piece: &[u8], h: u64, count: usize) {
        let e = &mut self.entries[Self::slot(h)];
        e.len = piece.len() as u8;
        e.key[..piece.len()].copy_from_slice(piece);
        e.count = count as u32;
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
