//! Arbitrary strings through the web tools' SSRF checks, and arbitrary
//! addresses through the DNS-answer check. Nothing may panic, and:
//!
//! - a URL the checks approve is `http` or `https`, carries no user name
//!   or password, and its host — parsed again here, the WHATWG way, by the
//!   `url` crate — is neither a local name (`localhost`, `*.localhost`)
//!   nor an address that an independent judgement (std's address methods
//!   plus the special ranges) calls non-public;
//! - an address approved as a DNS answer passes the same judgement;
//! - the marker neutraliser leaves no marker in any text.
//!
//! The independent judgement is deliberately simpler than
//! `toolgate_core::address` (which refuses more): the target checks
//! that nothing it knows to be private ever gets through.
//!
//!     cargo +nightly fuzz run web_url -- -max_total_time=600

#![no_main]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use toolgate_web::markers;
use toolgate_web::ssrf::UrlPolicy;
use url::{Host, Url};

/// Whether an IPv4 address is certainly not public.
fn private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_unspecified()
        || ip.is_multicast()
        || a == 0
        || a >= 240
        || (a == 100 && (b & 0xc0) == 64)
        || (a == 198 && (b & 0xfe) == 18)
}

/// Whether an IPv6 address is certainly not public.
fn private_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    let low = Ipv4Addr::from(u32::from(s[6]) << 16 | u32::from(s[7]));
    if let Some(v4) = ip.to_ipv4_mapped() {
        return private_v4(v4);
    }
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00
        || (s[0] & 0xffc0) == 0xfe80
        || (s[0] & 0xffc0) == 0xfec0
        || (s[0] == 0x2001 && s[1] == 0x0db8)
        || (s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0; 4] && private_v4(low))
        || (s[0] == 0x2002 && private_v4(Ipv4Addr::from(u32::from(s[1]) << 16 | u32::from(s[2]))))
        || s[..6] == [0; 6]
}

fn private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => private_v4(v4),
        IpAddr::V6(v6) => private_v6(v6),
    }
}

fn policy() -> &'static UrlPolicy {
    static POLICY: OnceLock<UrlPolicy> = OnceLock::new();
    POLICY.get_or_init(UrlPolicy::default)
}

fuzz_target!(|data: &[u8]| {
    if data.len() >= 16 {
        let mut v6 = [0u8; 16];
        v6.copy_from_slice(&data[..16]);
        let v4 = Ipv4Addr::new(data[0], data[1], data[2], data[3]);
        for ip in [IpAddr::V6(Ipv6Addr::from(v6)), IpAddr::V4(v4)] {
            if policy().check_resolved("example.com", &[ip]).is_ok() {
                assert!(!private(ip), "DNS answer {ip} approved");
            }
        }
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let neutral = markers::neutralise(text);
    assert!(
        !neutral
            .to_ascii_uppercase()
            .contains("EXTERNAL_UNTRUSTED_CONTENT"),
        "{text:?} -> {neutral:?}"
    );
    let Ok(checked) = policy().check_url(text) else {
        return;
    };
    let again = Url::parse(text.trim()).expect("an approved URL parses");
    assert!(matches!(again.scheme(), "http" | "https"), "{text:?}");
    assert!(
        again.username().is_empty() && again.password().is_none(),
        "{text:?}"
    );
    match again.host() {
        Some(Host::Ipv4(v4)) => assert!(!private_v4(v4), "{text:?} -> {v4}"),
        Some(Host::Ipv6(v6)) => assert!(!private_v6(v6), "{text:?} -> {v6}"),
        Some(Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            assert!(
                name != "localhost" && !name.ends_with(".localhost"),
                "{text:?} -> {name}"
            );
        }
        None => panic!("{text:?} approved without a host"),
    }
    assert_eq!(checked.url, again, "{text:?}");
});
