//! Content-type detection: the scanners against the original regular
//! expressions (run by `regex`), the 5000-character sample, score ranges,
//! the extension rules. Input: a path length byte, the path, the text.
#![no_main]

use fastnotebook_fuzz::invariants;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| invariants::fuzz_one("detect", data));
