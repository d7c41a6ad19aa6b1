//! Arbitrary bytes as a shell command: extracting operands must never panic,
//! and every operand it returns is part of what a guardrail checks.
//!
//!     cargo +nightly fuzz run command_operands -- -max_total_time=600

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(cmd) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(operands) = toolgate_policy::command_operands(cmd) {
        for operand in operands {
            let _ = (operand.text().len(), operand.kind(), operand.is_glob());
        }
    }
});
