//! Arbitrary bytes as a shell command: parsing and classifying must never
//! panic, whatever the input.
//!
//!     cargo +nightly fuzz run command_classify -- -max_total_time=600

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(cmd) = std::str::from_utf8(data) else {
        return;
    };
    let verdict = toolgate_policy::classify(cmd);
    assert!(!verdict.reason().is_empty());
    if let Ok(parsed) = toolgate_policy::parse_command(cmd) {
        for simple in parsed.simple_commands() {
            let _ = simple.text();
            let _ = simple.program_name();
        }
    }
});
