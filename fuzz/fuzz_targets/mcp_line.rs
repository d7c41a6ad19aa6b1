//! Arbitrary bytes as a line on `toolgate mcp serve`'s stdin: decoding must
//! never panic, and a line the `tools/call` fast path takes must be one
//! rmcp's own parse makes the same request of.
//!
//!     cargo +nightly fuzz run mcp_line -- -dict=mcp_line.dict -max_total_time=300

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    toolgate_mcp::fuzz_stdio_line(data);
});
