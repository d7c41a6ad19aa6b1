//! Parses arbitrary bytes as a patch (unified diff or envelope) and, when
//! they parse, applies every file section to a few fixed texts (empty, LF,
//! CRLF with a BOM and no final newline). Nothing may panic, and a
//! successful apply must return valid UTF-8 — `String` guarantees that, so
//! the check is that slicing never split a character.
//!
//! The same property runs without libFuzzer, over a few thousand mutated
//! patches, in `crates/toolgate-tools/tests/patch_cases.rs`
//! (`mutated_patches_never_panic`). Run with:
//!
//!     cargo +nightly fuzz run patch_parse -- -max_total_time=60
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_tools::patch;

const TEXTS: &[&str] = &[
    "",
    "a\nb\nc\nb\nc\n\n    indented \u{201c}quoted\u{201d}\n",
    "\u{feff}a\r\nb\r\nc\r\nd",
];

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(parsed) = patch::parse(&text) else {
        return;
    };
    for file in parsed.files() {
        let _ = file.target_path();
        for original in TEXTS {
            if let Ok(applied) = patch::apply_with_report(original, file) {
                let _ = applied.report.to_string();
            }
        }
    }
});
