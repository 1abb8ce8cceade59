//! Mean pooling on arbitrary bytes read as float32 or float64 rows: errors
//! exactly for NaN/infinity, no rows or dimension 0; unit norm (or zeros);
//! invariance to scaling rows by powers of two. Also masked token pooling
//! and segment offsets on the same bytes.
#![no_main]

use fastnotebook_fuzz::invariants;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| invariants::fuzz_one("pooling", data));
