//! The HTML header splitter, aggregated and per element: only the documented
//! errors, stripped non-empty sections, the same text in both modes,
//! markup-free input kept whole, nothing invented (`invariants::check_html`).
#![no_main]

use fastnotebook_fuzz::invariants;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| invariants::fuzz_one("html", data));
