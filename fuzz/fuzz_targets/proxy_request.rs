//! Arbitrary bytes as what a sandboxed command sends the network proxy: an
//! HTTP request head (`CONNECT host:port`, `GET http://…`) or a SOCKS5
//! greeting and request. Nothing may panic, nothing accepted may claim more
//! bytes than it was given or a head larger than the limit, and every host
//! an accepted request names goes through the policy's normalisation
//! without panicking.
//!
//!     cargo +nightly fuzz run proxy_request -- -dict=proxy_request.dict -max_total_time=300

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    toolgate_sandbox::fuzz_proxy_request(data);
});
