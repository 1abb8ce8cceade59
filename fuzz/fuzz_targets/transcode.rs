//! PEP 393 transcoding of arbitrary code units (Latin-1, UCS-2, UCS-4, lone
//! surrogates, values past U+10FFFF): valid UTF-8, surrogates restored or
//! dropped, UTF-16 repair as Python decodes it (`invariants::check_transcode`).
#![no_main]

use fastnotebook_fuzz::invariants;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| invariants::fuzz_one("transcode", data));
