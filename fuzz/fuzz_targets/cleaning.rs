//! The text cleaners against the original regular expressions (run by
//! `regex` with CPython's classes): remove_non_ascii, remove_non_printable's
//! output alphabet, parse_thinking exactly (`invariants::check_cleaning`).
#![no_main]

use fastnotebook_fuzz::invariants;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| invariants::fuzz_one("cleaning", data));
