//! Token counting in both encodings against tiktoken (pieces by the original
//! patterns in fancy-regex, ids by tiktoken-rs), count == len(encode),
//! decode(encode(text)) == text (`invariants::check_tokens`).
#![no_main]

use fastnotebook_fuzz::invariants;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| invariants::fuzz_one("tokens", data));
