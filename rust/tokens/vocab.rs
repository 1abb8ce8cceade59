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
//! entries); longer keys go to an open-addressing table whose 8-byte slots hold
//! a hash tag, the key length and the offset of `[rank: u32][bytes]` in one
//! arena, so a hit touches two cache lines and most misses one.

use std::collections::HashSet;

use super::Encoding;

pub type Rank = u32;

pub const NO_RANK: Rank = Rank::MAX;
const EMPTY: u64 = 0;
/// The top 24 bits of a slot: a tag from the hash.
const TAG_MASK: u64 = 0xFFFF_FF00_0000_0000;

pub struct Vocab {
    byte_rank: [Rank; 256],
    pair_rank: Vec<Rank>,
    slots: Vec<u64>,
    mask: usize,
    /// `[rank as 4 LE bytes][token bytes]` for every token of 3+ bytes.
    arena: Vec<u8>,
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

/// A fast hash of a key of 3+ bytes (all bytes count).
#[inline(always)]
pub fn hash(b: &[u8]) -> u64 {
    let n = b.len();
    let (lo, hi) = if n >= 8 {
        (read_u64(b, 0), read_u64(b, n - 8))
    } else if n >= 4 {
        (read_u32(b, 0), read_u32(b, n - 4))
    } else {
        let mut v = 0u64;
        for &x in b {
            v = (v << 8) | x as u64;
        }
        (v, 0)
    };
    let mut h = fold_mul(lo ^ K0, hi ^ K1 ^ n as u64);
    if n > 16 {
        let mut i = 8;
        while i + 8 < n {
            h = fold_mul(h ^ read_u64(b, i), K2);
            i += 8;
        }
    }
    h
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
        let mut vocab = Vocab {
            byte_rank,
            pair_rank: Vec::new(),
            slots: vec![EMPTY; cap],
            mask: cap - 1,
            arena: Vec::new(),
            decode: Vec::new(),
            decode_arena: Vec::new(),
            len: tokens.len(),
        };
        let max_rank = tokens.iter().map(|t| t.0).max().unwrap_or(0);
        vocab.decode = vec![(u32::MAX, 0); max_rank as usize + 1];
        for (rank, bytes) in &tokens {
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
                    vocab.insert_long(*rank, bytes)?;
                }
            }
        }
        if byte_rank.contains(&NO_RANK) {
            return Err("a single byte is not a token".into());
        }
        vocab.byte_rank = byte_rank;
        vocab.pair_rank = pair_rank;
        Ok(vocab)
    }

    fn insert_long(&mut self, rank: Rank, bytes: &[u8]) -> Result<(), String> {
        let offset = self.arena.len();
        if offset > u32::MAX as usize {
            return Err("vocabulary too large".into());
        }
        self.arena.extend_from_slice(&rank.to_le_bytes());
        self.arena.extend_from_slice(bytes);
        let h = hash(bytes);
        let slot = (h & TAG_MASK) | ((bytes.len() as u64) << 32) | offset as u64;
        let mut i = h as usize & self.mask;
        while self.slots[i] != EMPTY {
            i = (i + 1) & self.mask;
        }
        self.slots[i] = slot;
        Ok(())
    }

    #[inline(always)]
    fn get_long(&self, key: &[u8]) -> Option<Rank> {
        self.get_hashed(key, hash(key))
    }

    /// Starts loading the slot a key with hash `h` probes first.
    #[inline(always)]
    pub fn prefetch(&self, h: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let slot = &self.slots[h as usize & self.mask];
            // SAFETY: a prefetch only hints the cache; the address is valid.
            unsafe { _mm_prefetch::<_MM_HINT_T0>((slot as *const u64).cast()) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = h;
    }

    /// Starts loading the token bytes of the slot a key with hash `h` and
    /// length `len` probes first, when its tag matches.
    #[inline(always)]
    pub fn prefetch_token(&self, h: u64, len: usize) {
        let want = (h & TAG_MASK) | ((len as u64 & 0xFF) << 32);
        let slot = self.slots[h as usize & self.mask];
        if slot & 0xFFFF_FFFF_0000_0000 == want {
            #[cfg(target_arch = "x86_64")]
            if let Some(entry) = self.arena.get((slot & 0xFFFF_FFFF) as usize) {
                use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
                // SAFETY: a prefetch only hints the cache; the address is valid.
                unsafe { _mm_prefetch::<_MM_HINT_T0>((entry as *const u8).cast()) }
            }
        }
    }

    /// [`Vocab::get`] for a key of 3 to 255 bytes whose [`hash`] is `h`.
    #[inline(always)]
    pub fn get_hashed(&self, key: &[u8], h: u64) -> Option<Rank> {
        let want = (h & TAG_MASK) | ((key.len() as u64 & 0xFF) << 32);
        let mut i = h as usize & self.mask;
        loop {
            let slot = self.slots[i];
            if slot == EMPTY {
                return None;
            }
            if slot & 0xFFFF_FFFF_0000_0000 == want {
                let off = (slot & 0xFFFF_FFFF) as usize;
                if let Some(stored) = self.arena.get(off + 4..off + 4 + key.len())
                    && same_bytes(stored, key)
                {
                    let mut r = [0u8; 4];
                    r.copy_from_slice(&self.arena[off..off + 4]);
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

    /// Number of (ordinary) tokens.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
