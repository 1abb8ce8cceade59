//! The Markdown header splitter with any of four header sets (one with an
//! invalid empty marker) and both flags: `split` equals `split_into`; the
//! sections keep exactly the input's printable non-whitespace text, less the
//! header lines with `strip_headers` (`invariants::check_markdown`).
#![no_main]

use fastnotebook_fuzz::invariants;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| invariants::fuzz_one("markdown", data));
