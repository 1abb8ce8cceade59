//! The vault graph rules of one note body: note links, the links of each
//! chunk of the plan and the note's edges (`invariants::check_note_graph`).
#![no_main]

use fastnotebook_fuzz::invariants;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| invariants::fuzz_one("notes", data));
