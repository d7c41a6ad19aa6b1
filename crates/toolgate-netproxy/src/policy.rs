//! Where a sandboxed command may connect: [`NetworkPolicy`], the allow and
//! deny lists the proxy judges every connection by.

use std::collections::BTreeSet;
use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use async_trait::async_trait;
use toolgate_core::address;

/// Turns a host name into the addresses the proxy may connect to.
///
/// By default the proxy asks the system ([`SystemResolver`]); tests and
/// embedders that map names themselves pass their own to
/// [`NetworkPolicyBuilder::resolver`].
#[async_trait]
pub trait Resolve: Send + Sync + fmt::Debug {
    /// The addresses of `host` (a normalised name, never an address
    /// literal), for a connection to `port`.
    async fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<IpAddr>>;
}

/// The system's resolver (`getaddrinfo`, on a blocking thread).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

#[async_trait]
impl Resolve for SystemResolver {
    async fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<IpAddr>> {
        let addrs = tokio::net::lookup_host((host, port)).await?;
        let mut out: Vec<IpAddr> = Vec::new();
        for addr in addrs {
            if !out.contains(&addr.ip()) {
                out.push(addr.ip());
            }
        }
        Ok(out)
    }
}

/// An entry of an allow or deny list that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{entry}` is not a network pattern: {reason}")]
pub struct PatternError {
    /// The entry as written.
    pub entry: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// What a host part of an entry matches.
#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    /// `*`: every name (never an address).
    AnyName,
    /// `example.com`: that name only.
    Exact(String),
    /// `*.example.com`: every name strictly below `example.com`.
    Below(String),
    /// `10.0.0.5`, `10.0.0.0/8`, `::1`, `fd00::/8`: addresses.
    Net(IpAddr, u8),
}

/// One entry of a list: a host pattern and, optionally, one port.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    host: HostPattern,
    port: Option<u16>,
    text: String,
}

/// Where a connection goes, as the client named it: a host name (normalised)
/// or an address literal.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Target {
    Name(String),
    Addr(IpAddr),
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Name(name) => f.write_str(name),
            Self::Addr(IpAddr::V6(v6)) => write!(f, "[{v6}]"),
            Self::Addr(addr) => write!(f, "{addr}"),
        }
    }
}

/// How a name is allowed, which decides whether it may reach special
/// addresses (rule 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Listed {
    /// By an entry naming it exactly (or, for an address, covering it).
    Exactly,
    /// By a wildcard entry, or by a person.
    Broadly,
}

/// The list verdict on a target, before any resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Judgement {
    /// A deny entry matches: refused whatever else is said.
    Denied(String),
    /// An allow entry matches.
    Allowed(Listed),
    /// An address no allow entry covers: refused, never asked.
    UnlistedAddress,
    /// A name no entry matches: a person may be asked.
    Unlisted,
}

/// Why every address a name resolved to was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AddressRefusal {
    /// A deny entry covers it.
    Denied(IpAddr, String),
    /// It is not public, and neither the name nor the address is listed
    /// exactly.
    Special(IpAddr, address::Blocked),
}

impl fmt::Display for AddressRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Denied(addr, entry) => write!(f, "it resolves to {addr}, denied by `{entry}`"),
            Self::Special(addr, why) => write!(
                f,
                "it resolves to {addr}, {why}, which only an exactly listed name or address may reach"
            ),
        }
    }
}

/// Where sandboxed commands may connect, through the proxy.
///
/// Built with [`NetworkPolicy::builder`] and given to
/// the proxy ([`Proxy::start`](crate::Proxy::start)); in toolgate, through
/// the sandbox's `SandboxBuilder::network_policy`.
///
/// # Entries
///
/// Each entry of `allow` and `deny` is a host and an optional port
/// (`:PORT`; without one, every port):
///
/// - `example.com`: that name only;
/// - `*.example.com`: every name below it, at any depth, but not
///   `example.com` itself;
/// - `*`: every name (never an address);
/// - `192.0.2.7`, `[2001:db8::7]`, `10.0.0.0/8`, `fd00::/8`: addresses
///   (an IPv6 address with a port is written in brackets:
///   `[::1]:8080`).
///
/// Names are compared as DNS compares them: IDNA-mapped to ASCII
/// (`Bücher.example` is `xn--bcher-kva.example`), lower-case, without the
/// trailing dot.
///
/// # Rules
///
/// 1. A connection that a `deny` entry matches (its name, or any address
///    it would go to) is refused, whatever `allow` says and whatever a
///    person would answer: deny wins.
/// 2. A name an `allow` entry matches is allowed, then resolved by the
///    proxy (the command's own DNS is never used).
/// 3. An address literal is allowed only when an address entry of `allow`
///    covers it; otherwise it is refused without asking anyone.
/// 4. A name no entry matches is *unlisted*: the person is asked when
///    someone can be asked ([`NetworkConsent`](crate::NetworkConsent)),
///    and it is refused otherwise.
/// 5. After resolution, an address that is not public (loopback, private,
///    link-local, shared CGNAT, cloud metadata, unique local, …: see
///    [`toolgate_core::address`]) is reached only when the name was listed
///    exactly (not by a wildcard, not by a person's answer) or the address
///    itself is covered by an address entry. So `*.example.com` resolving
///    to `127.0.0.1` is refused (DNS rebinding), while `git.corp.example`
///    listed by name may resolve to `10.1.2.3`.
/// 6. The proxy connects to the addresses it checked, never to a name
///    again, so a second DNS answer cannot slip in between check and use.
#[derive(Debug, Clone)]
pub struct NetworkPolicy {
    allow: Vec<Entry>,
    deny: Vec<Entry>,
    hint: String,
    pub(crate) resolver: Arc<dyn Resolve>,
}

/// Configures a [`NetworkPolicy`].
#[derive(Debug, Clone)]
pub struct NetworkPolicyBuilder {
    allow: Vec<String>,
    deny: Vec<String>,
    hint: String,
    resolver: Arc<dyn Resolve>,
}

impl NetworkPolicy {
    /// Starts a policy that allows nothing and denies nothing (every name
    /// is unlisted).
    pub fn builder() -> NetworkPolicyBuilder {
        NetworkPolicyBuilder {
            allow: Vec::new(),
            deny: Vec::new(),
            hint: "add it to the sandbox's network allow list".to_owned(),
            resolver: Arc::new(SystemResolver),
        }
    }

    /// The allow entries, as written.
    pub fn allowed(&self) -> impl Iterator<Item = &str> {
        self.allow.iter().map(|e| e.text.as_str())
    }

    /// The deny entries, as written.
    pub fn denied(&self) -> impl Iterator<Item = &str> {
        self.deny.iter().map(|e| e.text.as_str())
    }

    /// How a refused command is told to allow a host.
    pub fn hint(&self) -> &str {
        &self.hint
    }

    /// The list verdict on `target` at `port` (rules 1, 3, 4).
    pub(crate) fn judge(&self, target: &Target, port: u16) -> Judgement {
        if let Some(entry) = self.deny.iter().find(|e| e.matches(target, port).is_some()) {
            return Judgement::Denied(entry.text.clone());
        }
        let best = self
            .allow
            .iter()
            .filter_map(|e| e.matches(target, port))
            .min_by_key(|listed| *listed != Listed::Exactly);
        match (best, target) {
            (Some(listed), _) => Judgement::Allowed(listed),
            (None, Target::Addr(_)) => Judgement::UnlistedAddress,
            (None, Target::Name(_)) => Judgement::Unlisted,
        }
    }

    /// The addresses of an allowed name the proxy may connect to (rules 1
    /// and 5), in the resolver's order; or why none.
    pub(crate) fn check_addresses(
        &self,
        addrs: &[IpAddr],
        port: u16,
        listed: Listed,
    ) -> Result<Vec<IpAddr>, AddressRefusal> {
        let mut ok = Vec::new();
        let mut first_refusal = None;
        for &addr in addrs {
            let target = Target::Addr(addr);
            if let Some(entry) = self
                .deny
                .iter()
                .find(|e| e.matches(&target, port).is_some())
            {
                first_refusal.get_or_insert(AddressRefusal::Denied(addr, entry.text.clone()));
                continue;
            }
            if let Some(blocked) = address::classify(addr) {
                let covered = self
                    .allow
                    .iter()
                    .any(|e| e.matches(&target, port).is_some());
                if listed != Listed::Exactly && !covered {
                    first_refusal.get_or_insert(AddressRefusal::Special(addr, blocked));
                    continue;
                }
            }
            ok.push(addr);
        }
        match first_refusal {
            Some(refusal) if ok.is_empty() => Err(refusal),
            _ => Ok(ok),
        }
    }
}

impl NetworkPolicyBuilder {
    /// Entries to allow (see [`NetworkPolicy`]). By default, none.
    #[must_use]
    pub fn allow<I, S>(mut self, entries: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allow.extend(entries.into_iter().map(Into::into));
        self
    }

    /// Entries to deny; they win over `allow`. By default, none.
    #[must_use]
    pub fn deny<I, S>(mut self, entries: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.deny.extend(entries.into_iter().map(Into::into));
        self
    }

    /// What a refused command is told to do to allow a host (the HTTP 403
    /// body ends with it). By default, "add it to the sandbox's network
    /// allow list"; toolgate's host names its configuration key.
    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = hint.into();
        self
    }

    /// How the proxy resolves names. By default, [`SystemResolver`].
    #[must_use]
    pub fn resolver(mut self, resolver: Arc<dyn Resolve>) -> Self {
        self.resolver = resolver;
        self
    }

    /// Reads every entry; the first that cannot be read is the error.
    pub fn build(self) -> Result<NetworkPolicy, PatternError> {
        let parse = |list: Vec<String>| -> Result<Vec<Entry>, PatternError> {
            let mut seen = BTreeSet::new();
            let mut out = Vec::new();
            for text in list {
                let entry = Entry::parse(&text)?;
                if seen.insert((format!("{:?}", entry.host), entry.port)) {
                    out.push(entry);
                }
            }
            Ok(out)
        };
        Ok(NetworkPolicy {
            allow: parse(self.allow)?,
            deny: parse(self.deny)?,
            hint: self.hint,
            resolver: self.resolver,
        })
    }
}

impl Entry {
    fn parse(text: &str) -> Result<Self, PatternError> {
        let error = |reason| PatternError {
            entry: text.to_owned(),
            reason,
        };
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(error("it is empty"));
        }
        let (host, port) = split_port(trimmed).map_err(error)?;
        let host = if let Some((net, len)) = host.split_once('/') {
            let net: IpAddr = net
                .parse()
                .map_err(|_| error("a `/` is only for an address block (`10.0.0.0/8`)"))?;
            let max = if net.is_ipv4() { 32 } else { 128 };
            let len: u8 = len
                .parse()
                .ok()
                .filter(|l| *l <= max)
                .ok_or_else(|| error("the prefix length is not a number within the address"))?;
            HostPattern::Net(net, len)
        } else if let Ok(addr) = host.parse::<IpAddr>() {
            HostPattern::Net(addr, if addr.is_ipv4() { 32 } else { 128 })
        } else if host == "*" {
            HostPattern::AnyName
        } else if let Some(rest) = host.strip_prefix("*.") {
            HostPattern::Below(normalize_name(rest).map_err(error)?)
        } else if host.contains('*') {
            return Err(error(
                "a wildcard is `*` alone or `*.` before a domain (`*.example.com`)",
            ));
        } else {
            HostPattern::Exact(normalize_name(host).map_err(error)?)
        };
        Ok(Self {
            host,
            port,
            text: trimmed.to_owned(),
        })
    }

    /// How this entry matches `target` at `port`, if it does.
    fn matches(&self, target: &Target, port: u16) -> Option<Listed> {
        if self.port.is_some_and(|p| p != port) {
            return None;
        }
        match (&self.host, target) {
            (HostPattern::AnyName, Target::Name(_)) => Some(Listed::Broadly),
            (HostPattern::Exact(name), Target::Name(target)) => {
                (name == target).then_some(Listed::Exactly)
            }
            (HostPattern::Below(domain), Target::Name(target)) => target
                .strip_suffix(domain.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.'))
                .then_some(Listed::Broadly),
            (HostPattern::Net(net, len), Target::Addr(addr)) => {
                in_net(*addr, *net, *len).then_some(Listed::Exactly)
            }
            _ => None,
        }
    }
}

/// `host` and its port: `[v6]:port`, `[v6]`, a bare IPv6 address (no
/// port), `host:port`, `host`.
fn split_port(text: &str) -> Result<(&str, Option<u16>), &'static str> {
    let port = |p: &str| -> Result<u16, &'static str> {
        p.parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or("the port is not a number from 1 to 65535")
    };
    if let Some(rest) = text.strip_prefix('[') {
        let (inside, after) = rest.split_once(']').ok_or("a `[` without its `]`")?;
        return match after {
            "" => Ok((inside, None)),
            _ => match after.strip_prefix(':') {
                Some(p) => Ok((inside, Some(port(p)?))),
                None => Err("only `:PORT` may follow `]`"),
            },
        };
    }
    if text.matches(':').count() == 1 {
        let (host, p) = text.split_once(':').ok_or("a lone `:`")?;
        return Ok((host, Some(port(p)?)));
    }
    // No port: a name, an IPv4 address, or an IPv6 address or block.
    Ok((text, None))
}

/// Whether `addr` lies in `net/len`. An IPv4-mapped IPv6 address is
/// compared as the IPv4 address it carries.
fn in_net(addr: IpAddr, net: IpAddr, len: u8) -> bool {
    let addr = match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
        v4 @ IpAddr::V4(_) => v4,
    };
    match (addr, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

/// A host name as DNS compares it: IDNA-mapped to ASCII, lower-case,
/// without the trailing dot; refused when it is not a plausible name.
pub(crate) fn normalize_name(name: &str) -> Result<String, &'static str> {
    let name = name.strip_suffix('.').unwrap_or(name);
    if name.is_empty() {
        return Err("the name is empty");
    }
    let ascii = idna::domain_to_ascii_cow(name.as_bytes(), idna::AsciiDenyList::URL)
        .map_err(|_| "the name is not a valid (internationalised) domain name")?;
    if ascii.len() > 253 {
        return Err("the name is longer than 253 characters");
    }
    let labels: Vec<&str> = ascii.split('.').collect();
    for label in &labels {
        if label.is_empty() || label.len() > 63 {
            return Err("a label of the name is empty or longer than 63 characters");
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err("the name holds a character no host name has");
        }
    }
    // `2130706433`, `0x7f.1`, `127.1`: numbers that resolvers (and browsers)
    // read as IPv4 addresses; a real name's last label is never numeric.
    if labels.last().is_some_and(|l| looks_numeric(l)) {
        return Err("the name is a number (an address in another spelling)");
    }
    Ok(ascii.into_owned())
}

fn looks_numeric(label: &str) -> bool {
    let hex = label
        .strip_prefix("0x")
        .or_else(|| label.strip_prefix("0X"));
    match hex {
        Some(digits) => digits.bytes().all(|b| b.is_ascii_hexdigit()),
        None => label.bytes().all(|b| b.is_ascii_digit()),
    }
}

/// The target a client named: an address literal (`192.0.2.1`, `::1`,
/// `[::1]`) or a normalised name.
pub(crate) fn target(host: &str) -> Result<Target, &'static str> {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if let Ok(v6) = bare.parse::<Ipv6Addr>() {
        return Ok(Target::Addr(
            v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        ));
    }
    if let Ok(v4) = host.parse::<Ipv4Addr>() {
        return Ok(Target::Addr(IpAddr::V4(v4)));
    }
    normalize_name(host).map(Target::Name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(allow: &[&str], deny: &[&str]) -> NetworkPolicy {
        NetworkPolicy::builder()
            .allow(allow.iter().copied())
            .deny(deny.iter().copied())
            .build()
            .unwrap()
    }

    fn verdict(p: &NetworkPolicy, host: &str, port: u16) -> String {
        match target(host) {
            Err(why) => format!("bad: {why}"),
            Ok(t) => match p.judge(&t, port) {
                Judgement::Denied(entry) => format!("denied by {entry}"),
                Judgement::Allowed(Listed::Exactly) => "exact".to_owned(),
                Judgement::Allowed(Listed::Broadly) => "broad".to_owned(),
                Judgement::UnlistedAddress => "unlisted address".to_owned(),
                Judgement::Unlisted => "unlisted".to_owned(),
            },
        }
    }

    #[test]
    fn list_verdicts() {
        let p = policy(
            &[
                "github.com",
                "*.npmjs.org",
                "example.com:8443",
                "Bücher.Example",
                "127.0.0.2",
                "10.0.0.0/8",
                "[::1]:9000",
                "fd00::/8",
                "api.EXAMPLE.org.",
            ],
            &["evil.npmjs.org", "10.9.0.0/16", "*.blocked.github.com"],
        );
        let cases: &[(&str, u16, &str)] = &[
            // Exact names, any port.
            ("github.com", 443, "exact"),
            ("github.com", 22, "exact"),
            ("GitHub.COM", 443, "exact"),
            ("github.com.", 443, "exact"),
            ("api.github.com", 443, "unlisted"),
            ("notgithub.com", 443, "unlisted"),
            // Wildcards: below only, any depth.
            ("registry.npmjs.org", 443, "broad"),
            ("a.b.npmjs.org", 443, "broad"),
            ("npmjs.org", 443, "unlisted"),
            ("xnpmjs.org", 443, "unlisted"),
            // Deny wins.
            ("evil.npmjs.org", 443, "denied by evil.npmjs.org"),
            ("EVIL.npmjs.org.", 443, "denied by evil.npmjs.org"),
            (
                "x.blocked.github.com",
                443,
                "denied by *.blocked.github.com",
            ),
            // Ports.
            ("example.com", 8443, "exact"),
            ("example.com", 443, "unlisted"),
            // IDNA, case, trailing dot.
            ("bücher.example", 443, "exact"),
            ("xn--bcher-kva.example", 443, "exact"),
            ("BÜCHER.example", 443, "exact"),
            ("api.example.org", 80, "exact"),
            // Addresses: only address entries cover them, never asked.
            ("127.0.0.2", 80, "exact"),
            ("127.0.0.3", 80, "unlisted address"),
            ("10.1.2.3", 22, "exact"),
            ("10.9.1.1", 22, "denied by 10.9.0.0/16"),
            ("::1", 9000, "exact"),
            ("[::1]", 9000, "exact"),
            ("::1", 9001, "unlisted address"),
            ("[::ffff:127.0.0.2]", 80, "exact"),
            ("fd12::1", 443, "exact"),
            ("1.1.1.1", 443, "unlisted address"),
            ("169.254.169.254", 80, "unlisted address"),
            // Not names.
            (
                "2130706433",
                80,
                "bad: the name is a number (an address in another spelling)",
            ),
            (
                "0x7f.1",
                80,
                "bad: the name is a number (an address in another spelling)",
            ),
            (
                "127.1",
                80,
                "bad: the name is a number (an address in another spelling)",
            ),
            (
                "a b.com",
                80,
                "bad: the name is not a valid (internationalised) domain name",
            ),
            (
                "a..com",
                80,
                "bad: a label of the name is empty or longer than 63 characters",
            ),
            ("", 80, "bad: the name is empty"),
            (
                "a/b.com",
                80,
                "bad: the name is not a valid (internationalised) domain name",
            ),
        ];
        for (host, port, expected) in cases {
            assert_eq!(verdict(&p, host, *port), *expected, "{host}:{port}");
        }
    }

    #[test]
    fn star_allows_names_not_addresses() {
        let p = policy(&["*"], &["tracker.example"]);
        let cases: &[(&str, u16, &str)] = &[
            ("anything.example", 443, "broad"),
            ("localhost", 80, "broad"),
            ("tracker.example", 443, "denied by tracker.example"),
            ("192.0.2.1", 443, "unlisted address"),
        ];
        for (host, port, expected) in cases {
            assert_eq!(verdict(&p, host, *port), *expected, "{host}:{port}");
        }
    }

    #[test]
    fn resolved_addresses() {
        let p = policy(
            &[
                "exact.test",
                "*.wild.test",
                "127.0.0.2",
                "192.168.1.0/24:22",
            ],
            &["203.0.113.9"],
        );
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let check = |addrs: &[&str], port, listed| -> Result<Vec<String>, String> {
            let addrs: Vec<IpAddr> = addrs.iter().map(|a| ip(a)).collect();
            p.check_addresses(&addrs, port, listed)
                .map(|ok| ok.iter().map(ToString::to_string).collect())
                .map_err(|e| e.to_string())
        };
        // Public addresses are fine however the name was allowed.
        assert_eq!(
            check(&["93.184.215.14"], 443, Listed::Broadly),
            Ok(vec!["93.184.215.14".into()])
        );
        // An exactly listed name may reach a private address.
        assert_eq!(
            check(&["127.0.0.3"], 80, Listed::Exactly),
            Ok(vec!["127.0.0.3".into()])
        );
        // A wildcard or a person's answer may not: DNS rebinding.
        for special in [
            "127.0.0.1",
            "10.0.0.1",
            "169.254.169.254",
            "100.64.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "0.0.0.0",
        ] {
            assert!(
                check(&[special], 443, Listed::Broadly).is_err(),
                "{special}"
            );
        }
        assert!(
            check(&["169.254.169.254"], 80, Listed::Broadly)
                .unwrap_err()
                .contains("metadata")
        );
        // ...unless the address itself is listed.
        assert_eq!(
            check(&["127.0.0.2"], 80, Listed::Broadly),
            Ok(vec!["127.0.0.2".into()])
        );
        assert_eq!(
            check(&["192.168.1.5"], 22, Listed::Broadly),
            Ok(vec!["192.168.1.5".into()])
        );
        assert!(check(&["192.168.1.5"], 80, Listed::Broadly).is_err());
        // Mixed answers keep the good ones; a denied address never stays.
        assert_eq!(
            check(&["127.0.0.1", "93.184.215.14"], 443, Listed::Broadly),
            Ok(vec!["93.184.215.14".into()])
        );
        assert!(
            check(&["203.0.113.9"], 443, Listed::Exactly)
                .unwrap_err()
                .contains("denied")
        );
    }

    #[test]
    fn bad_entries() {
        let cases: &[(&str, &str)] = &[
            ("", "it is empty"),
            ("   ", "it is empty"),
            (
                "exa*mple.com",
                "a wildcard is `*` alone or `*.` before a domain (`*.example.com`)",
            ),
            (
                "*example.com",
                "a wildcard is `*` alone or `*.` before a domain (`*.example.com`)",
            ),
            ("example.com:0", "the port is not a number from 1 to 65535"),
            (
                "example.com:99999",
                "the port is not a number from 1 to 65535",
            ),
            (
                "example.com:https",
                "the port is not a number from 1 to 65535",
            ),
            ("[::1", "a `[` without its `]`"),
            ("[::1]x", "only `:PORT` may follow `]`"),
            (
                "10.0.0.0/33",
                "the prefix length is not a number within the address",
            ),
            (
                "host/8",
                "a `/` is only for an address block (`10.0.0.0/8`)",
            ),
            (
                "a..b",
                "a label of the name is empty or longer than 63 characters",
            ),
            (
                "1234",
                "the name is a number (an address in another spelling)",
            ),
        ];
        for (entry, reason) in cases {
            let err = NetworkPolicy::builder()
                .allow([*entry])
                .build()
                .unwrap_err();
            assert_eq!(err.reason, *reason, "{entry:?}");
        }
    }
}
