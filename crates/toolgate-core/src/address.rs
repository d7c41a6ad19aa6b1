//! Which IP addresses are public: the address half of every SSRF rule in
//! toolgate (the web tools', the sandbox's network proxy's).
//!
//! A web tool, or a sandboxed command through the network proxy, may
//! connect only to an address on the public internet unless an address is
//! listed explicitly. Every other kind — this host, the local network, the cloud provider's
//! metadata service, addresses that only mean something to a router — is
//! refused, wherever the address came from: a URL literal in any numeric
//! spelling, a DNS answer, a redirect.
//!
//! # Rules
//!
//! 1. IPv4: refused when in any range of [`V4_RANGES`] (this network
//!    `0/8`, private `10/8`, `172.16/12`, `192.168/16`, shared `100.64/10`,
//!    loopback `127/8`, link-local `169.254/16`, IETF `192.0.0/24`,
//!    documentation, benchmarking `198.18/15`, the 6to4 relay, multicast
//!    `224/4`, reserved `240/4`, broadcast), and the cloud metadata
//!    addresses, some of which (`168.63.129.16`) sit in public space.
//! 2. IPv6 that carries an IPv4 address — IPv4-mapped `::ffff:0:0/96`,
//!    NAT64 `64:ff9b::/96`, 6to4 `2002::/16` — is judged by the IPv4
//!    address it carries (rule 1): a mapped public address is public, a
//!    mapped loopback address is loopback.
//! 3. Deprecated IPv4-compatible `::/96` (other than `::` and `::1`) is
//!    always refused: nothing public uses it.
//! 4. Other IPv6: only global unicast `2000::/3` can be public, and within
//!    it the ranges of [`V6_RANGES`] are refused (Teredo and the IETF
//!    protocol block `2001::/23`, documentation `2001:db8::/32` and
//!    `3fff::/20`). Outside `2000::/3`: loopback, unspecified, unique local
//!    `fc00::/7` (with AWS's metadata `fd00:ec2::254`), link-local
//!    `fe80::/10`, site-local `fec0::/10`, multicast `ff00::/8`, discard
//!    `100::/64`, local-use NAT64 `64:ff9b:1::/48` and anything else
//!    unassigned are refused.
//! 5. The first matching range names the kind, so a metadata address is
//!    reported as one rather than as link-local.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is not public.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AddressKind {
    /// `0.0.0.0`, `::`: "any address", which reaches this host.
    Unspecified,
    /// `0.0.0.0/8` other than `0.0.0.0`: "this network".
    ThisNetwork,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918: `10/8`, `172.16/12`, `192.168/16`.
    Private,
    /// `100.64.0.0/10`, carrier-grade NAT.
    SharedCgnat,
    /// `169.254.0.0/16`, `fe80::/10`.
    LinkLocal,
    /// An instance metadata service (AWS, GCP, Azure, Alibaba, Oracle).
    CloudMetadata,
    /// `fc00::/7`.
    UniqueLocal,
    /// `fec0::/10` (deprecated).
    SiteLocal,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// `198.18.0.0/15`, `2001:2::/48`.
    Benchmarking,
    /// Reserved, deprecated or special-purpose space that is not reachable
    /// on the public internet (`240/4`, `192.0.0/24`, Teredo, `::/96`,
    /// IPv6 outside `2000::/3`, …).
    Reserved,
}

impl fmt::Display for AddressKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Unspecified => "the unspecified address (this host)",
            Self::ThisNetwork => "a \"this network\" address",
            Self::Loopback => "a loopback address (this host)",
            Self::Private => "a private network address",
            Self::SharedCgnat => "a shared carrier-grade NAT address",
            Self::LinkLocal => "a link-local address",
            Self::CloudMetadata => "a cloud metadata service address",
            Self::UniqueLocal => "a unique local (private) IPv6 address",
            Self::SiteLocal => "a site-local IPv6 address",
            Self::Multicast => "a multicast address",
            Self::Broadcast => "the broadcast address",
            Self::Documentation => "a documentation address",
            Self::Benchmarking => "a benchmarking address",
            Self::Reserved => "a reserved address",
        })
    }
}

/// How an IPv6 address carries an IPv4 one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Embedding {
    /// `::ffff:a.b.c.d`.
    Ipv4Mapped,
    /// `::a.b.c.d` (deprecated).
    Ipv4Compatible,
    /// `64:ff9b::a.b.c.d`.
    Nat64,
    /// `2002:aabb:ccdd::/48`.
    SixToFour,
}

impl fmt::Display for Embedding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Ipv4Mapped => "IPv4-mapped",
            Self::Ipv4Compatible => "IPv4-compatible",
            Self::Nat64 => "NAT64",
            Self::SixToFour => "6to4",
        })
    }
}

/// The verdict on an address that is not public.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Blocked {
    /// What kind of address it is (of the embedded IPv4 address, when
    /// `embedded` is set).
    pub kind: AddressKind,
    /// The IPv4 address an IPv6 address carries, and how.
    pub embedded: Option<(Embedding, Ipv4Addr)>,
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.embedded {
            None => write!(f, "{}", self.kind),
            Some((how, v4)) => write!(f, "{} ({how} IPv6 form of {v4})", self.kind),
        }
    }
}

/// The refused IPv4 ranges, most specific first (rule 5).
pub const V4_RANGES: &[(Ipv4Addr, u8, AddressKind)] = &[
    // AWS, GCP, Azure, Oracle, OpenStack: the instance metadata service.
    (
        Ipv4Addr::new(169, 254, 169, 254),
        32,
        AddressKind::CloudMetadata,
    ),
    // AWS ECS task metadata and credentials.
    (
        Ipv4Addr::new(169, 254, 170, 2),
        32,
        AddressKind::CloudMetadata,
    ),
    // Alibaba Cloud metadata.
    (
        Ipv4Addr::new(100, 100, 100, 200),
        32,
        AddressKind::CloudMetadata,
    ),
    // Azure's WireServer: public space, but the host's agent answers it.
    (
        Ipv4Addr::new(168, 63, 129, 16),
        32,
        AddressKind::CloudMetadata,
    ),
    // Oracle Cloud's legacy metadata address.
    (
        Ipv4Addr::new(192, 0, 0, 192),
        32,
        AddressKind::CloudMetadata,
    ),
    (Ipv4Addr::UNSPECIFIED, 32, AddressKind::Unspecified),
    (Ipv4Addr::BROADCAST, 32, AddressKind::Broadcast),
    (Ipv4Addr::UNSPECIFIED, 8, AddressKind::ThisNetwork),
    (Ipv4Addr::new(10, 0, 0, 0), 8, AddressKind::Private),
    (Ipv4Addr::new(100, 64, 0, 0), 10, AddressKind::SharedCgnat),
    (Ipv4Addr::new(127, 0, 0, 0), 8, AddressKind::Loopback),
    (Ipv4Addr::new(169, 254, 0, 0), 16, AddressKind::LinkLocal),
    (Ipv4Addr::new(172, 16, 0, 0), 12, AddressKind::Private),
    (Ipv4Addr::new(192, 0, 0, 0), 24, AddressKind::Reserved),
    (Ipv4Addr::new(192, 0, 2, 0), 24, AddressKind::Documentation),
    (Ipv4Addr::new(192, 88, 99, 0), 24, AddressKind::Reserved),
    (Ipv4Addr::new(192, 168, 0, 0), 16, AddressKind::Private),
    (Ipv4Addr::new(198, 18, 0, 0), 15, AddressKind::Benchmarking),
    (
        Ipv4Addr::new(198, 51, 100, 0),
        24,
        AddressKind::Documentation,
    ),
    (
        Ipv4Addr::new(203, 0, 113, 0),
        24,
        AddressKind::Documentation,
    ),
    (Ipv4Addr::new(224, 0, 0, 0), 4, AddressKind::Multicast),
    (Ipv4Addr::new(240, 0, 0, 0), 4, AddressKind::Reserved),
];

/// The refused IPv6 ranges, most specific first (rule 5). Ranges that
/// carry an IPv4 address are handled before this table (rule 2).
pub const V6_RANGES: &[(Ipv6Addr, u8, AddressKind)] = &[
    (Ipv6Addr::UNSPECIFIED, 128, AddressKind::Unspecified),
    (Ipv6Addr::LOCALHOST, 128, AddressKind::Loopback),
    // AWS's IPv6 instance metadata service.
    (
        Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254),
        128,
        AddressKind::CloudMetadata,
    ),
    (
        Ipv6Addr::new(0x2001, 0x0002, 0, 0, 0, 0, 0, 0),
        48,
        AddressKind::Benchmarking,
    ),
    // Teredo (2001::/32) and the rest of the IETF protocol block.
    (
        Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0),
        23,
        AddressKind::Reserved,
    ),
    (
        Ipv6Addr::new(0x2001, 0x0db8, 0, 0, 0, 0, 0, 0),
        32,
        AddressKind::Documentation,
    ),
    (
        Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0),
        20,
        AddressKind::Documentation,
    ),
    (
        Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0),
        7,
        AddressKind::UniqueLocal,
    ),
    (
        Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0),
        10,
        AddressKind::LinkLocal,
    ),
    (
        Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0),
        10,
        AddressKind::SiteLocal,
    ),
    (
        Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0),
        8,
        AddressKind::Multicast,
    ),
];

/// Whether `addr` is in `net/len`.
fn in_v4(addr: Ipv4Addr, net: Ipv4Addr, len: u8) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
    u32::from(addr) & mask == u32::from(net) & mask
}

/// Whether `addr` is in `net/len`.
fn in_v6(addr: Ipv6Addr, net: Ipv6Addr, len: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
    u128::from(addr) & mask == u128::from(net) & mask
}

/// Why `addr` may not be reached, or `None` when it is a public address
/// (see the [module rules](self)).
pub fn classify(addr: IpAddr) -> Option<Blocked> {
    match addr {
        IpAddr::V4(v4) => classify_v4(v4).map(|kind| Blocked {
            kind,
            embedded: None,
        }),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(addr: Ipv4Addr) -> Option<AddressKind> {
    V4_RANGES
        .iter()
        .find(|(net, len, _)| in_v4(addr, *net, *len))
        .map(|(_, _, kind)| *kind)
}

fn classify_v6(addr: Ipv6Addr) -> Option<Blocked> {
    let bits = u128::from(addr);
    let low_v4 = Ipv4Addr::from((bits & 0xffff_ffff) as u32);
    let embedded = |how: Embedding, v4: Ipv4Addr| {
        classify_v4(v4).map(|kind| Blocked {
            kind,
            embedded: Some((how, v4)),
        })
    };
    // Rule 2: forms that carry an IPv4 address are judged by it.
    if bits >> 32 == 0xffff {
        return embedded(Embedding::Ipv4Mapped, low_v4);
    }
    if in_v6(addr, Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96) {
        return embedded(Embedding::Nat64, low_v4);
    }
    if in_v6(addr, Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16) {
        let v4 = Ipv4Addr::from(((bits >> 80) & 0xffff_ffff) as u32);
        return embedded(Embedding::SixToFour, v4);
    }
    if let Some((_, _, kind)) = V6_RANGES
        .iter()
        .find(|(net, len, _)| in_v6(addr, *net, *len))
    {
        return Some(Blocked {
            kind: *kind,
            embedded: None,
        });
    }
    // Rule 3: `::a.b.c.d` (`::` and `::1` were matched above).
    if bits >> 32 == 0 {
        return Some(Blocked {
            kind: embedded(Embedding::Ipv4Compatible, low_v4)
                .map_or(AddressKind::Reserved, |b| b.kind),
            embedded: Some((Embedding::Ipv4Compatible, low_v4)),
        });
    }
    // Rule 4: only global unicast can be public.
    if !in_v6(addr, Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3) {
        return Some(Blocked {
            kind: AddressKind::Reserved,
            embedded: None,
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    use AddressKind::{
        Benchmarking, Broadcast, CloudMetadata, Documentation, LinkLocal, Loopback, Multicast,
        Private, Reserved, SharedCgnat, SiteLocal, ThisNetwork, UniqueLocal, Unspecified,
    };

    #[test]
    fn address_table() {
        // (address, expected kind; None = public)
        let cases: &[(&str, Option<AddressKind>)] = &[
            ("0.0.0.0", Some(Unspecified)),
            ("0.1.2.3", Some(ThisNetwork)),
            ("10.0.0.1", Some(Private)),
            ("10.255.255.255", Some(Private)),
            ("11.0.0.1", None),
            ("100.63.255.255", None),
            ("100.64.0.1", Some(SharedCgnat)),
            ("100.127.255.255", Some(SharedCgnat)),
            ("100.128.0.0", None),
            ("100.100.100.200", Some(CloudMetadata)),
            ("127.0.0.1", Some(Loopback)),
            ("127.255.255.254", Some(Loopback)),
            ("128.0.0.1", None),
            ("168.63.129.16", Some(CloudMetadata)),
            ("168.63.129.17", None),
            ("169.254.0.1", Some(LinkLocal)),
            ("169.254.169.254", Some(CloudMetadata)),
            ("169.254.170.2", Some(CloudMetadata)),
            ("172.15.255.255", None),
            ("172.16.0.1", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("172.32.0.0", None),
            ("192.0.0.1", Some(Reserved)),
            ("192.0.0.192", Some(CloudMetadata)),
            ("192.0.2.1", Some(Documentation)),
            ("192.88.99.1", Some(Reserved)),
            ("192.167.255.255", None),
            ("192.168.1.1", Some(Private)),
            ("192.169.0.0", None),
            ("198.17.255.255", None),
            ("198.18.0.1", Some(Benchmarking)),
            ("198.19.255.255", Some(Benchmarking)),
            ("198.20.0.0", None),
            ("198.51.100.7", Some(Documentation)),
            ("203.0.113.9", Some(Documentation)),
            ("223.255.255.255", None),
            ("224.0.0.1", Some(Multicast)),
            ("239.255.255.250", Some(Multicast)),
            ("240.0.0.1", Some(Reserved)),
            ("255.255.255.254", Some(Reserved)),
            ("255.255.255.255", Some(Broadcast)),
            ("8.8.8.8", None),
            ("93.184.216.34", None),
            ("1.1.1.1", None),
            // IPv6
            ("::", Some(Unspecified)),
            ("::1", Some(Loopback)),
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::ffff:7f00:1", Some(Loopback)),
            ("::ffff:10.1.2.3", Some(Private)),
            ("::ffff:169.254.169.254", Some(CloudMetadata)),
            ("::ffff:0.0.0.0", Some(Unspecified)),
            ("::ffff:8.8.8.8", None),
            ("::127.0.0.1", Some(Loopback)),
            ("::8.8.8.8", Some(Reserved)),
            ("::2", Some(ThisNetwork)),
            ("64:ff9b::127.0.0.1", Some(Loopback)),
            ("64:ff9b::a9fe:a9fe", Some(CloudMetadata)),
            ("64:ff9b::8.8.8.8", None),
            ("64:ff9b:1::1", Some(Reserved)),
            ("2002:7f00:1::", Some(Loopback)),
            ("2002:c0a8:101::1", Some(Private)),
            ("2002:a9fe:a9fe::1", Some(CloudMetadata)),
            ("2002:808:808::1", None),
            ("2001::1", Some(Reserved)),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", Some(Reserved)),
            ("2001:2::1", Some(Benchmarking)),
            ("2001:1ff::1", Some(Reserved)),
            ("2001:200::1", None),
            ("2001:db8::1", Some(Documentation)),
            ("3fff::1", Some(Documentation)),
            ("3fff:1000::1", None),
            ("2606:4700:4700::1111", None),
            ("2a00:1450:4001:80b::200e", None),
            ("fc00::1", Some(UniqueLocal)),
            ("fdff:ffff::1", Some(UniqueLocal)),
            ("fd00:ec2::254", Some(CloudMetadata)),
            ("fd00:ec2::253", Some(UniqueLocal)),
            ("fe80::1", Some(LinkLocal)),
            ("febf::1", Some(LinkLocal)),
            ("fec0::1", Some(SiteLocal)),
            ("ff02::1", Some(Multicast)),
            ("ff05::1:3", Some(Multicast)),
            ("100::1", Some(Reserved)),
            ("::ffff:0:7f00:1", Some(Reserved)),
            ("4000::1", Some(Reserved)),
            ("1fff:ffff::1", Some(Reserved)),
        ];
        for (text, expected) in cases {
            let addr: IpAddr = text.parse().unwrap();
            assert_eq!(classify(addr).map(|b| b.kind), *expected, "{text}");
        }
    }

    #[test]
    fn embedded_addresses_are_named() {
        let cases: &[(&str, &str)] = &[
            (
                "::ffff:127.0.0.1",
                "a loopback address (this host) (IPv4-mapped IPv6 form of 127.0.0.1)",
            ),
            (
                "64:ff9b::a9fe:a9fe",
                "a cloud metadata service address (NAT64 IPv6 form of 169.254.169.254)",
            ),
            (
                "2002:c0a8:101::1",
                "a private network address (6to4 IPv6 form of 192.168.1.1)",
            ),
            (
                "::8.8.8.8",
                "a reserved address (IPv4-compatible IPv6 form of 8.8.8.8)",
            ),
            ("fe80::1", "a link-local address"),
        ];
        for (text, expected) in cases {
            let blocked = classify(text.parse().unwrap()).unwrap();
            assert_eq!(blocked.to_string(), *expected, "{text}");
        }
    }

    /// Every range in the tables refuses its first and last address, and
    /// the addresses just outside either end are judged on their own.
    #[test]
    fn range_ends_are_inside() {
        for (net, len, kind) in V4_RANGES {
            let mask = u32::MAX.checked_shl(32 - u32::from(*len)).unwrap_or(0);
            let first = u32::from(*net) & mask;
            let last = first | !mask;
            for end in [first, last] {
                assert!(
                    classify(IpAddr::V4(end.into())).is_some(),
                    "{net}/{len} {kind:?}"
                );
            }
        }
        for (net, len, kind) in V6_RANGES {
            let mask = u128::MAX.checked_shl(128 - u32::from(*len)).unwrap_or(0);
            let first = u128::from(*net) & mask;
            let last = first | !mask;
            for end in [first, last] {
                assert!(
                    classify(IpAddr::V6(end.into())).is_some(),
                    "{net}/{len} {kind:?}"
                );
            }
        }
    }
}
