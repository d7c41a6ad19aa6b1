//! Which URLs a web tool may request: the SSRF rules.
//!
//! [`UrlPolicy`] judges a URL before any request (scheme, user info, host
//! name, an IP literal in any spelling) and the addresses its host resolves
//! to before any connection. The web tools' HTTP client (see [`super`]) asks
//! the policy inside its DNS resolver, so the addresses checked are the
//! only ones it can connect to.

use std::collections::HashSet;
use std::fmt;
use std::net::IpAddr;

use url::{Host, Url};

use super::address::{self, AddressKind, Blocked};

/// Why a URL may not be requested. The messages are written for the model:
/// each says what was refused and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlRefusal {
    /// The text is not a URL.
    #[error("`{url}` is not a valid URL ({reason}); give a full http:// or https:// URL")]
    Invalid {
        /// The text given.
        url: String,
        /// What the URL parser said.
        reason: String,
    },
    /// Not `http` or `https`.
    #[error("only http:// and https:// URLs can be fetched, not `{scheme}:`")]
    Scheme {
        /// The scheme given.
        scheme: String,
    },
    /// The URL carries a user name or password (`http://user@host/`).
    #[error(
        "URLs with a user name or password before the host (`user@host`) are refused; remove the part before `@`"
    )]
    UserInfo,
    /// The URL has no host.
    #[error("the URL has no host")]
    NoHost,
    /// A name that means this host or the local network.
    #[error("`{host}` is a local network name; web tools only reach public internet hosts")]
    LocalName {
        /// The host as written in the URL.
        host: String,
    },
    /// The host is, or resolves to, an address that is not public.
    #[error("{}", describe_address(host, *addr, *blocked))]
    Address {
        /// The host as written in the URL.
        host: String,
        /// The address refused.
        addr: IpAddr,
        /// Why.
        blocked: Blocked,
    },
    /// The host name could not be resolved.
    #[error("cannot resolve `{host}`: {reason}")]
    Resolve {
        /// The host name.
        host: String,
        /// What the resolver said.
        reason: String,
    },
    /// The host name resolved to no address.
    #[error("`{host}` has no address")]
    NoAddress {
        /// The host name.
        host: String,
    },
}

fn describe_address(host: &str, addr: IpAddr, blocked: Blocked) -> String {
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    let subject = if literal.parse::<IpAddr>().ok() == Some(addr) {
        format!("`{addr}` is")
    } else {
        format!("`{host}` is {addr},")
    };
    format!("{subject} {blocked}; web tools only reach public internet addresses")
}

/// Names that mean this host or the local network whatever DNS says
/// (checked with the trailing dot removed, lower-case).
const LOCAL_NAMES: &[&str] = &[
    "localhost",
    "localhost.localdomain",
    "ip6-localhost",
    "ip6-loopback",
];

/// Suffixes of names that are local by definition: `localhost` (RFC 6761),
/// `local` (mDNS), `internal` (ICANN's private-use TLD, and GCP's
/// `metadata.google.internal`), `home.arpa` (RFC 8375), `localdomain`.
const LOCAL_SUFFIXES: &[&str] = &[
    ".localhost",
    ".local",
    ".internal",
    ".home.arpa",
    ".localdomain",
];

/// A URL that passed the checks that need no DNS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedUrl {
    /// The parsed URL, as the client will request it.
    pub url: Url,
    /// Whether the host is listed in `allow_hosts`.
    pub allowed_by_name: bool,
}

/// The SSRF rules, with the configured exemptions.
///
/// # Rules
///
/// 1. The URL is parsed as a browser parses it (WHATWG, the `url` crate):
///    `http://2130706433/`, `http://0177.0.0.1/`, `http://0x7f.1/`,
///    `http://127.1/` and full-width digits all become `127.0.0.1`.
/// 2. Only `http` and `https`; no user name or password in the URL.
/// 3. A host name that is local by definition — `localhost`, any name
///    under `.localhost`, `.local`, `.internal`, `.home.arpa`,
///    `.localdomain`, or a single label such as `intranet` (which the
///    system resolver completes with the local search domains) — is
///    refused, with or without a trailing dot, in any case.
/// 4. An address, written in the URL or returned by DNS, must be public
///    (see [`super::address`]); a name is refused when *any* of
///    its addresses is not.
/// 5. `allow_hosts` exempts exactly what it lists from rules 3 and 4: a
///    listed name skips the local-name rule and may resolve to private
///    addresses (but not to a cloud metadata address, which only a listed
///    address exempts); a listed address may be reached however it is
///    named. Entries are compared after the same parsing as URLs (so
///    `127.1` lists `127.0.0.1`), names lower-case without a trailing dot.
///    Rules 1 and 2 have no exemption.
#[derive(Debug, Clone, Default)]
pub struct UrlPolicy {
    names: HashSet<String>,
    addrs: HashSet<IpAddr>,
}

/// An `allow_hosts` entry that is not a host name or an address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{entry}` is not a host name or an IP address ({reason})")]
pub struct AllowEntryError {
    /// The entry.
    pub entry: String,
    /// What is wrong with it.
    pub reason: String,
}

impl UrlPolicy {
    /// The rules with `allow_hosts` exempted (see rule 5).
    pub fn new<S: AsRef<str>>(allow_hosts: &[S]) -> Result<Self, AllowEntryError> {
        let mut policy = Self::default();
        for entry in allow_hosts {
            let entry = entry.as_ref();
            let error = |reason: &str| AllowEntryError {
                entry: entry.to_owned(),
                reason: reason.to_owned(),
            };
            let trimmed = entry.trim();
            if trimmed.is_empty() || trimmed.contains(['/', '@', '*']) {
                return Err(error(
                    "give a bare host such as `intranet.example` or `10.0.0.5`",
                ));
            }
            if let Ok(addr) = trimmed.parse::<IpAddr>() {
                policy.addrs.insert(addr);
                continue;
            }
            match Host::parse(trimmed) {
                Ok(Host::Domain(name)) => {
                    policy.names.insert(normal_name(&name));
                }
                Ok(Host::Ipv4(v4)) => {
                    policy.addrs.insert(IpAddr::V4(v4));
                }
                Ok(Host::Ipv6(v6)) => {
                    policy.addrs.insert(IpAddr::V6(v6));
                }
                Err(e) => return Err(error(&e.to_string())),
            }
        }
        Ok(policy)
    }

    /// Checks everything about `url` that needs no DNS (rules 1–5): the
    /// scheme, user info, local names, and the address when the host is
    /// an IP literal.
    pub fn check_url(&self, url: &str) -> Result<CheckedUrl, UrlRefusal> {
        let parsed = Url::parse(url.trim()).map_err(|e| UrlRefusal::Invalid {
            url: url.to_owned(),
            reason: e.to_string(),
        })?;
        self.check_parsed(parsed)
    }

    /// [`check_url`](Self::check_url) on an already parsed URL (a
    /// redirect's target).
    pub fn check_parsed(&self, url: Url) -> Result<CheckedUrl, UrlRefusal> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(UrlRefusal::Scheme {
                scheme: url.scheme().to_owned(),
            });
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlRefusal::UserInfo);
        }
        let allowed_by_name = match url.host() {
            None => return Err(UrlRefusal::NoHost),
            Some(Host::Ipv4(v4)) => {
                self.check_literal(&url, IpAddr::V4(v4))?;
                false
            }
            Some(Host::Ipv6(v6)) => {
                self.check_literal(&url, IpAddr::V6(v6))?;
                false
            }
            Some(Host::Domain(name)) => {
                let name = normal_name(name);
                let allowed = self.names.contains(&name);
                if !allowed && is_local_name(&name) {
                    return Err(UrlRefusal::LocalName { host: name.clone() });
                }
                allowed
            }
        };
        Ok(CheckedUrl {
            url,
            allowed_by_name,
        })
    }

    fn check_literal(&self, url: &Url, addr: IpAddr) -> Result<(), UrlRefusal> {
        if self.addrs.contains(&addr) {
            return Ok(());
        }
        match address::classify(addr) {
            None => Ok(()),
            Some(blocked) => Err(UrlRefusal::Address {
                host: url.host_str().unwrap_or_default().to_owned(),
                addr,
                blocked,
            }),
        }
    }

    /// Checks the addresses `host` (a domain name) resolved to: every one
    /// must be public or exempt (rules 4 and 5).
    pub fn check_resolved(&self, host: &str, addrs: &[IpAddr]) -> Result<(), UrlRefusal> {
        let name = normal_name(host);
        if addrs.is_empty() {
            return Err(UrlRefusal::NoAddress { host: name });
        }
        let name_allowed = self.names.contains(&name);
        for &addr in addrs {
            if self.addrs.contains(&addr) {
                continue;
            }
            let Some(blocked) = address::classify(addr) else {
                continue;
            };
            if name_allowed && blocked.kind != AddressKind::CloudMetadata {
                continue;
            }
            return Err(UrlRefusal::Address {
                host: name,
                addr,
                blocked,
            });
        }
        Ok(())
    }
}

impl fmt::Display for UrlPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut listed: Vec<String> = self.names.iter().cloned().collect();
        listed.extend(self.addrs.iter().map(ToString::to_string));
        listed.sort();
        write!(f, "public addresses only")?;
        if !listed.is_empty() {
            write!(f, ", plus {}", listed.join(", "))?;
        }
        Ok(())
    }
}

/// A host name as compared: lower-case, without the trailing dot.
fn normal_name(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// Whether a (normalised) name is local by definition (rule 3).
fn is_local_name(name: &str) -> bool {
    !name.contains('.')
        || LOCAL_NAMES.contains(&name)
        || LOCAL_SUFFIXES.iter().any(|suffix| name.ends_with(suffix))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `check_url` says about a URL: `Ok(host)` or the refusal's kind.
    fn verdict(policy: &UrlPolicy, url: &str) -> Result<String, String> {
        match policy.check_url(url) {
            Ok(checked) => Ok(checked.url.host_str().unwrap_or_default().to_owned()),
            Err(refusal) => Err(match refusal {
                UrlRefusal::Invalid { .. } => "invalid".to_owned(),
                UrlRefusal::Scheme { .. } => "scheme".to_owned(),
                UrlRefusal::UserInfo => "userinfo".to_owned(),
                UrlRefusal::NoHost => "nohost".to_owned(),
                UrlRefusal::LocalName { .. } => "local".to_owned(),
                UrlRefusal::Address { addr, blocked, .. } => format!("{addr} {:?}", blocked.kind),
                other => format!("{other:?}"),
            }),
        }
    }

    #[test]
    fn url_table() {
        let strict = UrlPolicy::default();
        // (url, Ok(host) or Err(kind))
        let cases: &[(&str, Result<&str, &str>)] = &[
            ("https://example.com/page?q=1", Ok("example.com")),
            ("HTTP://EXAMPLE.COM./", Ok("example.com.")),
            ("http://93.184.216.34/", Ok("93.184.216.34")),
            (
                "http://[2606:4700:4700::1111]/",
                Ok("[2606:4700:4700::1111]"),
            ),
            ("http://[::ffff:8.8.8.8]/", Ok("[::ffff:808:808]")),
            ("http://172.15.0.1/", Ok("172.15.0.1")),
            // Numeric host forms, parsed the WHATWG way.
            ("http://127.0.0.1/", Err("127.0.0.1 Loopback")),
            ("http://2130706433/", Err("127.0.0.1 Loopback")),
            ("http://017700000001/", Err("127.0.0.1 Loopback")),
            ("http://0x7f000001/", Err("127.0.0.1 Loopback")),
            ("http://0177.0.0.1/", Err("127.0.0.1 Loopback")),
            ("http://0x7f.0.0.1/", Err("127.0.0.1 Loopback")),
            ("http://0x7f.1/", Err("127.0.0.1 Loopback")),
            ("http://127.1/", Err("127.0.0.1 Loopback")),
            ("http://127.0.1/", Err("127.0.0.1 Loopback")),
            ("http://127.0.0.1./", Err("127.0.0.1 Loopback")),
            ("http://0/", Err("0.0.0.0 Unspecified")),
            ("http://0.0.0.0:8080/", Err("0.0.0.0 Unspecified")),
            ("http://%31%32%37.0.0.1/", Err("127.0.0.1 Loopback")),
            (
                "http://\u{ff11}\u{ff12}\u{ff17}.0.0.1/",
                Err("127.0.0.1 Loopback"),
            ),
            ("http://0xA9FEA9FE/", Err("169.254.169.254 CloudMetadata")),
            ("http://2852039166/", Err("169.254.169.254 CloudMetadata")),
            (
                "http://169.254.169.254/latest/meta-data/",
                Err("169.254.169.254 CloudMetadata"),
            ),
            (
                "http://100.100.100.200/",
                Err("100.100.100.200 CloudMetadata"),
            ),
            ("http://168.63.129.16/", Err("168.63.129.16 CloudMetadata")),
            ("http://10.0.0.1/", Err("10.0.0.1 Private")),
            ("http://012.1/", Err("10.0.0.1 Private")),
            ("http://172.16.5.4/", Err("172.16.5.4 Private")),
            ("http://192.168.0.1/", Err("192.168.0.1 Private")),
            ("http://0xc0.0xa8.1.1/", Err("192.168.1.1 Private")),
            ("http://100.64.0.1/", Err("100.64.0.1 SharedCgnat")),
            ("http://224.0.0.1/", Err("224.0.0.1 Multicast")),
            ("http://255.255.255.255/", Err("255.255.255.255 Broadcast")),
            ("http://4294967295/", Err("255.255.255.255 Broadcast")),
            ("http://192.0.2.1/", Err("192.0.2.1 Documentation")),
            ("http://198.18.0.1/", Err("198.18.0.1 Benchmarking")),
            // IPv6 forms.
            ("http://[::1]/", Err("::1 Loopback")),
            ("http://[0:0:0:0:0:0:0:1]/", Err("::1 Loopback")),
            ("http://[::]/", Err(":: Unspecified")),
            (
                "http://[::ffff:127.0.0.1]/",
                Err("::ffff:127.0.0.1 Loopback"),
            ),
            ("http://[::ffff:7f00:1]/", Err("::ffff:127.0.0.1 Loopback")),
            (
                "http://[0:0:0:0:0:ffff:169.254.169.254]/",
                Err("::ffff:169.254.169.254 CloudMetadata"),
            ),
            ("http://[::127.0.0.1]/", Err("::7f00:1 Loopback")),
            (
                "http://[64:ff9b::127.0.0.1]/",
                Err("64:ff9b::7f00:1 Loopback"),
            ),
            (
                "http://[64:ff9b::a9fe:a9fe]/",
                Err("64:ff9b::a9fe:a9fe CloudMetadata"),
            ),
            ("http://[2002:7f00:1::]/", Err("2002:7f00:1:: Loopback")),
            ("http://[2002:c0a8:1::1]/", Err("2002:c0a8:1::1 Private")),
            (
                "http://[fd00:ec2::254]/",
                Err("fd00:ec2::254 CloudMetadata"),
            ),
            ("http://[fc00::1]/", Err("fc00::1 UniqueLocal")),
            ("http://[fe80::1]/", Err("fe80::1 LinkLocal")),
            ("http://[fec0::1]/", Err("fec0::1 SiteLocal")),
            ("http://[ff02::1]/", Err("ff02::1 Multicast")),
            ("http://[2001:db8::1]/", Err("2001:db8::1 Documentation")),
            (
                "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
                Err("2001:0:4136:e378:8000:63bf:3fff:fdd2 Reserved"),
            ),
            // Local names.
            ("http://localhost/", Err("local")),
            ("http://localhost./", Err("local")),
            ("http://LOCALHOST/", Err("local")),
            ("http://LocalHost.:8080/x", Err("local")),
            ("http://api.localhost/", Err("local")),
            ("http://a.b.localhost./", Err("local")),
            ("http://localhost.localdomain/", Err("local")),
            ("http://printer.local/", Err("local")),
            (
                "http://metadata.google.internal/computeMetadata/v1/",
                Err("local"),
            ),
            ("http://metadata/", Err("local")),
            ("http://intranet/", Err("local")),
            ("http://router.home.arpa/", Err("local")),
            ("http://xn--localhost/", Err("invalid")),
            ("http://localhost%2e/", Err("local")),
            // Userinfo tricks.
            ("http://evil@127.0.0.1/", Err("userinfo")),
            ("http://user:pass@example.com/", Err("userinfo")),
            ("http://example.com@127.0.0.1/", Err("userinfo")),
            ("http://127.0.0.1:80@example.com/", Err("userinfo")),
            ("http://:@example.com/", Ok("example.com")),
            ("http://example.com#@127.0.0.1/", Ok("example.com")),
            ("http://127.0.0.1\\@example.com/", Err("127.0.0.1 Loopback")),
            // Schemes.
            ("file:///etc/passwd", Err("scheme")),
            ("ftp://example.com/", Err("scheme")),
            ("gopher://127.0.0.1:70/", Err("scheme")),
            ("javascript:alert(1)", Err("scheme")),
            ("data:text/html,hi", Err("scheme")),
            ("ws://example.com/", Err("scheme")),
            ("example.com", Err("invalid")),
            ("http://", Err("invalid")),
            ("http://[::1/", Err("invalid")),
            ("http://1.2.3.4.5/", Err("invalid")),
            ("http://256.0.0.1/", Err("invalid")),
            ("http://foo.0x7f/", Err("invalid")),
        ];
        for (url, expected) in cases {
            let expected = expected.map(str::to_owned).map_err(str::to_owned);
            assert_eq!(verdict(&strict, url), expected, "{url}");
        }
    }

    #[test]
    fn allow_hosts_exempt_only_what_they_list() {
        let policy = UrlPolicy::new(&[
            "127.0.0.1",
            "Intranet.Example.",
            "[fd12::1]",
            "10.1",
            "wiki",
        ])
        .unwrap();
        // (url, passes the checks before DNS, host listed by name)
        let cases: &[(&str, bool, bool)] = &[
            ("http://127.0.0.1:8080/", true, false),
            ("http://2130706433/", true, false),
            ("http://127.0.0.2/", false, false),
            ("http://[::ffff:127.0.0.1]/", false, false),
            ("http://[::1]/", false, false),
            ("http://localhost/", false, false),
            ("http://intranet.example/", true, true),
            ("http://INTRANET.EXAMPLE./", true, true),
            ("http://www.intranet.example/", true, false),
            ("http://[fd12::1]/", true, false),
            ("http://[fd12::2]/", false, false),
            ("http://10.0.0.1/", true, false),
            ("http://10.0.0.2/", false, false),
            ("http://wiki/", true, true),
            ("http://evil@127.0.0.1/", false, false),
            ("file://127.0.0.1/etc/passwd", false, false),
        ];
        // `www.intranet.example` is not listed, but it is not a local name
        // either: it passes, and its addresses are checked after DNS.
        for (url, passes, named) in cases {
            let checked = policy.check_url(url);
            assert_eq!(checked.is_ok(), *passes, "{url}");
            assert_eq!(checked.is_ok_and(|c| c.allowed_by_name), *named, "{url}");
        }
    }

    #[test]
    fn resolved_addresses_are_all_checked() {
        let policy = UrlPolicy::new(&["intranet.example", "192.168.7.7"]).unwrap();
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        // (host, addresses, Ok or the address refused)
        let cases: &[(&str, &[&str], Option<&str>)] = &[
            ("example.com", &["93.184.216.34"], None),
            (
                "example.com",
                &["93.184.216.34", "2606:2800:220:1::1"],
                None,
            ),
            (
                "example.com",
                &["93.184.216.34", "10.0.0.1"],
                Some("10.0.0.1"),
            ),
            (
                "example.com",
                &["10.0.0.1", "93.184.216.34"],
                Some("10.0.0.1"),
            ),
            ("example.com", &["2606:2800:220:1::1", "::1"], Some("::1")),
            (
                "example.com",
                &["::ffff:169.254.169.254"],
                Some("::ffff:169.254.169.254"),
            ),
            ("rebind.example", &["127.0.0.1"], Some("127.0.0.1")),
            ("example.com", &["192.168.7.7"], None),
            (
                "example.com",
                &["192.168.7.7", "192.168.7.8"],
                Some("192.168.7.8"),
            ),
            ("intranet.example", &["10.0.0.1", "fd00::5"], None),
            ("INTRANET.EXAMPLE.", &["10.0.0.1"], None),
            (
                "intranet.example",
                &["169.254.169.254"],
                Some("169.254.169.254"),
            ),
            (
                "intranet.example",
                &["fd00:ec2::254"],
                Some("fd00:ec2::254"),
            ),
        ];
        for (host, addrs, refused) in cases {
            let addrs: Vec<IpAddr> = addrs.iter().map(|a| ip(a)).collect();
            let got = policy.check_resolved(host, &addrs).map_err(|e| match e {
                UrlRefusal::Address { addr, .. } => addr,
                other => panic!("{other:?}"),
            });
            assert_eq!(got.err(), refused.map(ip), "{host} {addrs:?}");
        }
        assert!(matches!(
            policy.check_resolved("example.com", &[]),
            Err(UrlRefusal::NoAddress { .. })
        ));
    }

    #[test]
    fn refusals_say_what_and_why() {
        let strict = UrlPolicy::default();
        let cases: &[(&str, &str)] = &[
            (
                "http://2130706433/",
                "`127.0.0.1` is a loopback address (this host); web tools only reach public internet addresses",
            ),
            (
                "http://[::ffff:127.0.0.1]/",
                "`::ffff:127.0.0.1` is a loopback address (this host) (IPv4-mapped IPv6 form of 127.0.0.1); web tools only reach public internet addresses",
            ),
            (
                "http://LOCALHOST./",
                "`localhost` is a local network name; web tools only reach public internet hosts",
            ),
            (
                "file:///etc/passwd",
                "only http:// and https:// URLs can be fetched, not `file:`",
            ),
        ];
        for (url, message) in cases {
            assert_eq!(
                strict.check_url(url).unwrap_err().to_string(),
                *message,
                "{url}"
            );
        }
        let resolved = strict
            .check_resolved("evil.example", &["10.0.0.1".parse().unwrap()])
            .unwrap_err();
        assert_eq!(
            resolved.to_string(),
            "`evil.example` is 10.0.0.1, a private network address; web tools only reach public internet addresses"
        );
    }

    #[test]
    fn bad_allow_entries_are_refused() {
        for entry in [
            "",
            " ",
            "http://x.example/",
            "*.example.com",
            "user@host",
            "a b",
            "[::1",
        ] {
            assert!(UrlPolicy::new(&[entry]).is_err(), "{entry:?}");
        }
    }
}
