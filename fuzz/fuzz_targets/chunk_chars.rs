//! `chunk_text` in characters, any content type (or detection), path, size,
//! overlap and minimum (`invariants::check_chunk_text`).
#![no_main]

use fastnotebook_fuzz::invariants;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| invariants::fuzz_one("chunk_chars", data));
