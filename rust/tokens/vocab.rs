//! The rank table: token bytes -> rank, built once from the vocabulary that
//! tiktoken-rs ships.
//!
//! tiktoken-rs keeps its byte -> rank map private, but its `CoreBPE` decodes
//! every rank to its bytes; we read the table out that way once and drop the
//! `CoreBPE`. Special tokens are skipped: with `disallowed_special=()` and
//! nothing allowed, tiktoken encodes their text as ordinary text.
//!
//! Performance notes: lookups are the inner loop of both the whole-piece test
//! and the merges. Single bytes and byte pairs are direct tables (256 and 64K
//! entries); longer keys go to an open-addressing table whose 16-byte slots hold
//! the key's first 8 bytes, a hash tag, the key length, and the rank (keys of
//! up to 8 bytes: one cache line per lookup) or the offset of
//! `[rank: u32][bytes]` in an arena (longer keys). The table (and the arena
//! when it reaches 1 MB) lies on 2 MB pages where the kernel gives them
//! (`pages.rs`): 4 TLB entries instead of 2,048 for the 8 MB table of
//! `o200k_base`.

use std::collections::HashSet;

use super::Encoding;
use super::pages::{Pages, Zeroable};

pub type Rank = u32;

pub const NO_RANK: Rank = Rank::MAX;
/// The top 24 bits of a slot's `meta`: a tag from the hash.
const TAG_MASK: u64 = 0xFFFF_FF00_0000_0000;
/// Tag and length bits of `meta`.
const TAG_LEN_MASK: u64 = 0xFFFF_FFFF_0000_0000;

/// A table slot: `meta` is tag (24 bits) | key length (8) | rank (keys of up
/// to 8 bytes) or arena offset (32); 0 when empty. `head` is the key's first
/// 8 bytes, little-endian, zero-padded.
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
struct Slot {
    head: u64,
    meta: u64,
}

// SAFETY: two integers; all zeros is the empty slot.
unsafe impl Zeroable for Slot {}

/// A key's hash and first 8 bytes ([`Vocab::get_prehashed`]).
#[derive(Clone, Copy, Default)]
pub struct KeyHash {
    pub hash: u64,
    pub(crate) head: u64,
}

pub struct Vocab {
    byte_rank: [Rank; 256],
    pair_rank: Vec<Rank>,
    /// Bit `a << 8 | b`: whether the pair `a b` is a token. The counts of
    /// 2-byte pieces (26% of the pieces of HTML) only need this; it is 8 KB,
    /// so it stays in the L1 cache where the 256 KB `pair_rank` competes
    /// for L2 with the front tables.
    pair_bits: Box<[u64; 1024]>,
    slots: Pages<Slot>,
    mask: usize,
    /// `[rank as 4 LE bytes][token bytes]` for every token of 9+ bytes.
    arena: Pages<u8>,
    /// Token bytes by rank, for decoding: `(offset in decode_arena, len)`.
    decode: Vec<(u32, u32)>,
    decode_arena: Vec<u8>,
    len: usize,
}

#[inline(always)]
fn fold_mul(a: u64, b: u64) -> u64 {
    let p = (a as u128) * (b as u128);
    (p as u64) ^ ((p >> 64) as u64)
}

#[inline(always)]
fn read_u64(b: &[u8], at: usize) -> u64 {
    let mut buf = [0u8; 8];
    buf.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(buf)
}

#[inline(always)]
fn read_u32(b: &[u8], at: usize) -> u64 {
    let mut buf = [0u8; 4];
    buf.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(buf) as u64
}

const K0: u64 = 0x243F_6A88_85A3_08D3;
const K1: u64 = 0x1319_8A2E_0370_7344;
const K2: u64 = 0xA409_3822_299F_31D0;

/// `a == b` for slices of equal length >= 3, without a `memcmp` call.
#[inline(always)]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n >= 8 {
        if read_u64(a, 0) != read_u64(b, 0) || read_u64(a, n - 8) != read_u64(b, n - 8) {
            return false;
        }
        let mut i = 8;
        while i + 8 < n {
            if read_u64(a, i) != read_u64(b, i) {
                return false;
            }
            i += 8;
        }
        true
    } else if n >= 4 {
        read_u32(a, 0) == read_u32(b, 0) && read_u32(a, n - 4) == read_u32(b, n - 4)
    } else {
        a.iter().zip(b).all(|(x, y)| x == y)
    }
}

/// The first `min(8, len)` bytes of `b` (3+ bytes) as a little-endian u64.
#[inline(always)]
fn head(b: &[u8]) -> u64 {
    let n = b.len();
    if n >= 8 {
        read_u64(b, 0)
    } else if n >= 4 {
        // Two overlapping reads; the shared bytes are equal, so OR is exact.
        read_u32(b, 0) | read_u32(b, n - 4) << ((n - 4) * 8)
    } else {
        let mut v = 0u64;
        for (i, &x) in b.iter().enumerate() {
            v |= (x as u64) << (8 * i);
        }
        v
    }
}

/// A fast hash of a key of 3+ bytes (all bytes count), with its head.
#[inline(always)]
pub fn key_hash(b: &[u8]) -> KeyHash {
    let n = b.len();
    let first = head(b);
    let hash = if n <= 8 {
        fold_mul(first ^ K0, K1 ^ n as u64)
    } else {
        let mut h = fold_mul(first ^ K0, read_u64(b, n - 8) ^ K1 ^ n as u64);
        let mut i = 8;
        while i + 8 < n {
            h = fold_mul(h ^ read_u64(b, i), K2);
            i += 8;
        }
        h
    };
    KeyHash { hash, head: first }
}

/// [`key_hash`] of `text[s..e]` (3+ bytes). A key of up to 8 bytes with 8
/// bytes of `text` from `s` has its head read in one load, masked.
#[inline(always)]
pub fn key_hash_in(text: &[u8], s: usize, e: usize) -> KeyHash {
    let n = e.wrapping_sub(s);
    if (3..=8).contains(&n)
        && let Some(w) = text.get(s..s + 8)
    {
        let mut buf = [0u8; 8];
        buf.copy_from_slice(w);
        let first = u64::from_le_bytes(buf) & (u64::MAX >> (64 - 8 * n));
        return KeyHash {
            hash: fold_mul(first ^ K0, K1 ^ n as u64),
            head: first,
        };
    }
    key_hash(text.get(s..e).unwrap_or_default())
}

/// The first `min(8, len)` bytes of `text[s..e]` (3+ bytes), zero padded,
/// as a little-endian u64 (one masked load when 8 bytes of `text` follow
/// `s`).
#[inline(always)]
pub fn head_in(text: &[u8], s: usize, e: usize) -> u64 {
    let n = e.wrapping_sub(s);
    if let Some(w) = text.get(s..s + 8) {
        let mut buf = [0u8; 8];
        buf.copy_from_slice(w);
        let x = u64::from_le_bytes(buf);
        return if n >= 8 {
            x
        } else {
            x & (u64::MAX >> (64 - 8 * n))
        };
    }
    head(text.get(s..e).unwrap_or_default())
}

/// A fast hash of a key of 3+ bytes.
#[inline(always)]
pub fn hash(b: &[u8]) -> u64 {
    key_hash(b).hash
}

impl Vocab {
    /// Reads the vocabulary of `encoding` out of tiktoken-rs.
    pub fn load(encoding: Encoding) -> Result<Vocab, String> {
        let bpe = match encoding {
            Encoding::O200kBase => tiktoken_rs::o200k_base(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base(),
        }
        .map_err(|e| format!("loading {}: {e}", encoding.name()))?;
        let specials: HashSet<Rank> = bpe
            .special_tokens()
            .into_iter()
            .flat_map(|s| bpe.encode_with_special_tokens(s))
            .collect();
        let mut tokens: Vec<(Rank, Vec<u8>)> = Vec::new();
        // Ranks are dense from 0; stop well past the last one.
        let mut rank: Rank = 0;
        let mut misses = 0;
        while misses < 1 << 16 {
            match bpe.decode_bytes(&[rank]) {
                Ok(bytes) if !specials.contains(&rank) => {
                    tokens.push((rank, bytes));
                    misses = 0;
                }
                _ => misses += 1,
            }
            rank += 1;
        }
        drop(bpe);
        Vocab::from_tokens(tokens)
    }

    /// Builds the tables from `(rank, bytes)` pairs.
    pub fn from_tokens(tokens: Vec<(Rank, Vec<u8>)>) -> Result<Vocab, String> {
        let mut byte_rank = [NO_RANK; 256];
        let mut pair_rank = vec![NO_RANK; 1 << 16];
        let cap = (tokens.len() * 2).next_power_of_two().max(16);
        // The arena first: the table is then filled with its offsets, and
        // both are allocated once, at their final size (see `pages`).
        let mut arena = Vec::new();
        let mut offsets = Vec::with_capacity(tokens.len());
        for (rank, bytes) in &tokens {
            offsets.push(arena.len());
            if bytes.len() > 8 {
                arena.extend_from_slice(&rank.to_le_bytes());
                arena.extend_from_slice(bytes);
            }
        }
        if arena.len() > u32::MAX as usize {
            return Err("vocabulary too large".into());
        }
        let mut vocab = Vocab {
            byte_rank,
            pair_rank: Vec::new(),
            pair_bits: Box::new([0; 1024]),
            slots: Pages::zeroed(cap),
            mask: cap - 1,
            arena: Pages::from_slice(&arena),
            decode: Vec::new(),
            decode_arena: Vec::new(),
            len: tokens.len(),
        };
        let max_rank = tokens.iter().map(|t| t.0).max().unwrap_or(0);
        vocab.decode = vec![(u32::MAX, 0); max_rank as usize + 1];
        for ((rank, bytes), offset) in tokens.iter().zip(offsets) {
            if bytes.len() > 255 || bytes.is_empty() {
                return Err(format!("token {rank} has {} bytes", bytes.len()));
            }
            vocab.decode[*rank as usize] = (vocab.decode_arena.len() as u32, bytes.len() as u32);
            vocab.decode_arena.extend_from_slice(bytes);
            match bytes.len() {
                1 => byte_rank[bytes[0] as usize] = *rank,
                2 => pair_rank[(bytes[0] as usize) << 8 | bytes[1] as usize] = *rank,
                _ => {
                    if vocab.get_long(bytes).is_some() {
                        return Err(format!("duplicate token {bytes:?}"));
                    }
                    vocab.insert_long(*rank, bytes, offset);
                }
            }
        }
        if byte_rank.contains(&NO_RANK) {
            return Err("a single byte is not a token".into());
        }
        vocab.byte_rank = byte_rank;
        for (i, &r) in pair_rank.iter().enumerate() {
            if r != NO_RANK {
                vocab.pair_bits[i / 64] |= 1 << (i % 64);
            }
        }
        vocab.pair_rank = pair_rank;
        Ok(vocab)
    }

    /// Adds a token of 3+ bytes; one of 9+ is at `offset` in the arena.
    fn insert_long(&mut self, rank: Rank, bytes: &[u8], offset: usize) {
        let k = key_hash(bytes);
        let value = if bytes.len() <= 8 {
            rank as u64
        } else {
            offset as u64
        };
        let slot = Slot {
            head: k.head,
            meta: (k.hash & TAG_MASK) | ((bytes.len() as u64) << 32) | value,
        };
        let mut i = k.hash as usize & self.mask;
        while self.slots[i].meta != 0 {
            i = (i + 1) & self.mask;
        }
        self.slots[i] = slot;
    }

    #[inline(always)]
    fn get_long(&self, key: &[u8]) -> Option<Rank> {
        self.get_prehashed(key, key_hash(key))
    }

    /// Starts loading the slot a key with hash `h` probes first.
    #[inline(always)]
    pub fn prefetch(&self, h: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let slot = &self.slots[h as usize & self.mask];
            // SAFETY: a prefetch only hints the cache; the address is valid.
            unsafe { _mm_prefetch::<_MM_HINT_T0>((slot as *const Slot).cast()) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = h;
    }

    /// Starts loading the token bytes of the slot a key of `len` (9+) bytes
    /// with hash `h` probes first, when its tag matches.
    #[inline(always)]
    pub fn prefetch_token(&self, h: u64, len: usize) {
        if len <= 8 {
            return;
        }
        let want = (h & TAG_MASK) | ((len as u64 & 0xFF) << 32);
        let slot = self.slots[h as usize & self.mask];
        if slot.meta & TAG_LEN_MASK == want {
            #[cfg(target_arch = "x86_64")]
            if let Some(entry) = self.arena.get((slot.meta & 0xFFFF_FFFF) as usize) {
                use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
                // SAFETY: a prefetch only hints the cache; the address is valid.
                unsafe { _mm_prefetch::<_MM_HINT_T0>((entry as *const u8).cast()) }
            }
        }
    }

    /// [`Vocab::get`] for a key of 3 to 255 bytes with [`key_hash`] `k`.
    #[inline(always)]
    pub fn get_prehashed(&self, key: &[u8], k: KeyHash) -> Option<Rank> {
        let n = key.len();
        let want = (k.hash & TAG_MASK) | ((n as u64 & 0xFF) << 32);
        let mut i = k.hash as usize & self.mask;
        loop {
            let slot = self.slots[i];
            if slot.meta == 0 {
                return None;
            }
            if slot.meta & TAG_LEN_MASK == want && slot.head == k.head {
                let value = (slot.meta & 0xFFFF_FFFF) as usize;
                if n <= 8 {
                    return Some(value as Rank);
                }
                if let Some(stored) = self.arena.get(value + 4..value + 4 + n)
                    && same_bytes(stored, key)
                {
                    let mut r = [0u8; 4];
                    r.copy_from_slice(&self.arena[value..value + 4]);
                    return Some(Rank::from_le_bytes(r));
                }
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The rank of the token `key`, if it is one.
    #[inline(always)]
    pub fn get(&self, key: &[u8]) -> Option<Rank> {
        let r = match key.len() {
            0 => NO_RANK,
            1 => self.byte_rank[key[0] as usize],
            2 => self.pair_rank[(key[0] as usize) << 8 | key[1] as usize],
            n if n > 255 => NO_RANK,
            _ => return self.get_long(key),
        };
        (r != NO_RANK).then_some(r)
    }

    /// The rank of `key` or `Rank::MAX`.
    #[inline(always)]
    pub fn rank(&self, key: &[u8]) -> Rank {
        self.get(key).unwrap_or(NO_RANK)
    }

    #[inline(always)]
    pub fn byte_rank(&self, b: u8) -> Rank {
        self.byte_rank[b as usize]
    }

    /// Whether the two bytes `a b` are a token (`pair_rank(a, b) != NO_RANK`).
    #[inline(always)]
    pub fn is_pair(&self, a: u8, b: u8) -> bool {
        let i = (a as usize) << 8 | b as usize;
        self.pair_bits[i / 64] >> (i % 64) & 1 != 0
    }

    #[inline(always)]
    pub fn pair_rank(&self, a: u8, b: u8) -> Rank {
        self.pair_rank[(a as usize) << 8 | b as usize]
    }

    /// The bytes of token `rank`.
    pub fn token_bytes(&self, rank: Rank) -> Option<&[u8]> {
        let &(off, len) = self.decode.get(rank as usize)?;
        if off == u32::MAX {
            return None;
        }
        self.decode_arena
            .get(off as usize..off as usize + len as usize)
    }

    /// The ordinary tokens' bytes in rank order, from rank 0 up to the
    /// first missing rank (tiktoken's `mergeable_ranks`, whose ranks are
    /// dense).
    pub fn mergeable_ranks(&self) -> impl Iterator<Item = &[u8]> {
        (0..).map_while(|rank| self.token_bytes(rank))
    }

    /// Number of (ordinary) tokens.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_token_maps_to_its_rank() {
        for enc in Encoding::ALL {
            let v = enc.tokenizer().vocab();
            let tokens: Vec<(Rank, &[u8])> = (0..v.decode.len() as Rank)
                .filter_map(|r| Some((r, v.token_bytes(r)?)))
                .collect();
            assert_eq!(tokens.len(), v.len());
            let all: HashSet<&[u8]> = tokens.iter().map(|t| t.1).collect();
            for &(rank, bytes) in &tokens {
                assert_eq!(v.get(bytes), Some(rank), "{}", enc.name());
                // Near misses: a byte less, a byte more.
                let longer = [bytes, b"\x00"].concat();
                for probe in [&bytes[..bytes.len() - 1], &longer[..]] {
                    assert_eq!(v.get(probe).is_some(), all.contains(probe), "{probe:?}");
                }
            }
            // Keys that are no tokens, of every length class.
            for key in [
                &b"\xff\xff\xff"[..],
                b"\x00\x01\x02\x03",
                b"zzzzqqqqxxxxjjjj",
                &[0xfe; 200],
            ] {
                assert_eq!(v.get(key), None);
            }
        }
    }

    #[test]
    fn head_is_the_first_bytes() {
        let text = b"abcdefghijklmnop";
        for n in 3..=16 {
            let mut expected = [0u8; 8];
            let m = n.min(8);
            expected[..m].copy_from_slice(&text[..m]);
            assert_eq!(head(&text[..n]), u64::from_le_bytes(expected), "{n}");
        }
    }
}
