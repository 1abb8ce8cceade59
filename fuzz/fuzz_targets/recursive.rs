//! The recursive splitter with any size, overlap, separators (from a palette
//! of 12), separator mode and strip flag: slices in order, coverage, sizes,
//! indivisible pieces (`invariants::check_recursive`).
#![no_main]

use fastnotebook_fuzz::invariants;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| invariants::fuzz_one("recursive", data));
