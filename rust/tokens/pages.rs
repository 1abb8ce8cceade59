//! Zeroed tables on 2 MB pages where the kernel gives them.
//!
//! Why: a lookup in the rank table (8 MB for `o200k_base`, over 2,048 pages
//! of 4 KB, more than the TLB holds) of a cold key is a page walk on top of
//! a cache miss. On 2 MB pages the table spans 4 TLB entries. Linux gives
//! them to a mapping that is aligned to 2 MB and advised `MADV_HUGEPAGE`
//! before its pages are first touched (transparent huge pages in `madvise`
//! mode, the usual default); elsewhere, or when the mapping fails, the table
//! is an ordinary vector.

use std::ops::{Deref, DerefMut};

/// Types whose all-zero bytes are a valid value, with no drop glue.
///
/// # Safety
/// Implement only for plain data of integers (and arrays or `repr(C)`
/// structs of them): [`Pages::zeroed`] hands out zero-filled memory as `T`.
pub unsafe trait Zeroable: Copy {}

// SAFETY: integers are valid for every bit pattern, zero included.
unsafe impl Zeroable for u8 {}
// SAFETY: as above.
unsafe impl Zeroable for u32 {}
// SAFETY: as above.
unsafe impl Zeroable for u64 {}

/// Size of a huge page on x86-64 and aarch64 Linux (4 KB base pages).
pub const HUGE: usize = 2 << 20;

/// A fixed-size table of `T`, zeroed at creation.
pub struct Pages<T: Zeroable> {
    inner: Inner<T>,
}

enum Inner<T> {
    Vec(Vec<T>),
    #[cfg(target_os = "linux")]
    Mapped(Mapping<T>),
}

/// An anonymous mapping of `bytes` bytes at `base`, of which the first
/// `len * size_of::<T>()` from `start` are the table.
#[cfg(target_os = "linux")]
struct Mapping<T> {
    base: *mut libc::c_void,
    bytes: usize,
    start: *mut T,
    len: usize,
}

// SAFETY: a `Mapping` owns its memory exclusively, like a `Vec<T>`.
#[cfg(target_os = "linux")]
unsafe impl<T: Send> Send for Mapping<T> {}
// SAFETY: shared access only reads, like `&[T]`.
#[cfg(target_os = "linux")]
unsafe impl<T: Sync> Sync for Mapping<T> {}

#[cfg(target_os = "linux")]
impl<T> Drop for Mapping<T> {
    fn drop(&mut self) {
        // SAFETY: `base` and `bytes` are the mapping `map_huge` made, unmapped
        // only here, once; no reference into it outlives `self`.
        unsafe {
            libc::munmap(self.base, self.bytes);
        }
    }
}

/// Maps `len` zeroed `T`s (at least [`HUGE`] bytes) aligned to [`HUGE`],
/// advised to be backed by huge pages; None when the kernel refuses.
#[cfg(target_os = "linux")]
fn map_huge<T: Zeroable>(len: usize) -> Option<Mapping<T>> {
    let size = len.checked_mul(std::mem::size_of::<T>())?;
    let size = size.checked_next_multiple_of(HUGE)?;
    // One extra huge page to align the start within the mapping.
    let bytes = size.checked_add(HUGE)?;
    // SAFETY: a fresh private anonymous mapping; no existing memory is
    // touched. The result is checked against MAP_FAILED.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return None;
    }
    let skip = (base as usize).next_multiple_of(HUGE) - base as usize;
    // SAFETY: `skip < HUGE` and `skip + size <= bytes`: in the mapping.
    let start = unsafe { base.cast::<u8>().add(skip) };
    // SAFETY: the range lies in the mapping; the advice is only a hint (its
    // failure leaves ordinary pages), and anonymous memory reads as zeros.
    unsafe {
        libc::madvise(start.cast(), size, libc::MADV_HUGEPAGE);
    }
    Some(Mapping {
        base,
        bytes,
        start: start.cast(),
        len,
    })
}

impl<T: Zeroable> Pages<T> {
    /// `len` zeroed values; tables of a megabyte or more on huge pages when
    /// the system gives them.
    pub fn zeroed(len: usize) -> Pages<T> {
        #[cfg(target_os = "linux")]
        if len.saturating_mul(std::mem::size_of::<T>()) >= HUGE / 2
            && let Some(m) = map_huge::<T>(len)
        {
            return Pages {
                inner: Inner::Mapped(m),
            };
        }
        Pages {
            // SAFETY: `T: Zeroable`: all-zero bytes are a valid `T`.
            inner: Inner::Vec(vec![unsafe { std::mem::zeroed::<T>() }; len]),
        }
    }

    /// A copy of `values`, placed as [`Pages::zeroed`] places tables.
    pub fn from_slice(values: &[T]) -> Pages<T> {
        let mut pages = Pages::zeroed(values.len());
        pages.copy_from_slice(values);
        pages
    }

    /// Whether the table is in a mapping advised to use huge pages.
    #[cfg(test)]
    pub fn is_mapped(&self) -> bool {
        match self.inner {
            Inner::Vec(_) => false,
            #[cfg(target_os = "linux")]
            Inner::Mapped(_) => true,
        }
    }
}

impl<T: Zeroable> Deref for Pages<T> {
    type Target = [T];

    #[inline(always)]
    fn deref(&self) -> &[T] {
        match &self.inner {
            Inner::Vec(v) => v,
            // SAFETY: `start` is aligned to 2 MB (so to `T`) and points to
            // `len` zero-initialized (valid, `T: Zeroable`) values inside the
            // mapping, which lives as long as `self`.
            #[cfg(target_os = "linux")]
            Inner::Mapped(m) => unsafe { std::slice::from_raw_parts(m.start, m.len) },
        }
    }
}

impl<T: Zeroable> DerefMut for Pages<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.inner {
            Inner::Vec(v) => v,
            // SAFETY: as in `deref`; `&mut self` makes the access exclusive.
            #[cfg(target_os = "linux")]
            Inner::Mapped(m) => unsafe { std::slice::from_raw_parts_mut(m.start, m.len) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tables of every size class read as zeros, take writes to their first
    /// and last elements without touching neighbours, keep their length, and
    /// are aligned for `T` (the mapped ones to 2 MB); dropping them unmaps
    /// (run under the tests' many allocations, a double unmap or an unmap of
    /// the wrong range would crash or corrupt a later table).
    #[test]
    fn tables_are_zeroed_sized_and_writable() {
        for round in 0..3u64 {
            for len in [
                0usize,
                1,
                7,
                4096,
                (HUGE / 2) / 8,
                HUGE / 8 + 3,
                3 * HUGE / 8,
            ] {
                let mut t: Pages<u64> = Pages::zeroed(len);
                assert_eq!(t.len(), len);
                assert!(t.iter().all(|&x| x == 0), "{len}");
                assert_eq!(t.as_ptr() as usize % std::mem::align_of::<u64>(), 0);
                if t.is_mapped() {
                    assert_eq!(t.as_ptr() as usize % HUGE, 0);
                }
                if len >= 2 {
                    t[0] = round + 1;
                    t[len - 1] = round + 2;
                    assert_eq!(t[1..len - 1].iter().filter(|&&x| x != 0).count(), 0);
                    assert_eq!((t[0], t[len - 1]), (round + 1, round + 2));
                }
                let copy = Pages::from_slice(&t);
                assert_eq!(&copy[..], &t[..]);
            }
        }
        #[cfg(target_os = "linux")]
        assert!(Pages::<u8>::zeroed(HUGE).is_mapped());
    }
}
