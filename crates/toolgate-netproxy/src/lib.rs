//! The network proxy of toolgate's sandbox: an HTTP (`CONNECT` and
//! absolute-form) and SOCKS5 proxy that connects out only where a
//! [`NetworkPolicy`] allows, asks a person ([`NetworkConsent`]) about
//! unlisted names, and reports every connection ([`NetworkObserver`]).
//!
//! # Why a crate of its own
//!
//! It is a product of its own inside the sandbox: a network server with its
//! own parsers (the request heads and SOCKS5 messages a hostile command
//! sends, fuzzed), a domain policy and its resolver, and nothing of the
//! process runner — no namespaces, mounts, Landlock or spawning. The sandbox
//! (`toolgate-sandbox`) makes the network namespace, binds the two listeners
//! inside it and hands them to [`Proxy::start`]; everything after the
//! `accept` is here. Apart, each crate stays a size one person can read
//! (the sandbox was over 10k lines with it), the parsers are fuzzed without
//! the runner, and a change to the policy or the parsers does not rebuild
//! the process runner.
//!
//! `toolgate-sandbox` re-exports the public types, so its users see no
//! change: `toolgate_sandbox::NetworkPolicy` is [`NetworkPolicy`].

use std::fmt;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use async_trait::async_trait;

pub use policy::{NetworkPolicy, NetworkPolicyBuilder, PatternError, Resolve, SystemResolver};
pub use proxy::Proxy;

mod http;
mod policy;
mod proxy;
mod socks;

/// Both request parsers over arbitrary bytes, for the fuzz target: neither
/// may panic, and what they accept must be what they promise. Not part of
/// the API.
#[doc(hidden)]
pub fn fuzz_proxy_request(data: &[u8]) {
    if let Ok(Some(end)) = http::head_end(data) {
        assert!(end <= data.len() && end <= http::MAX_HEAD);
        if let Ok(request) = http::parse(&data[..end]) {
            match request {
                http::Request::Connect { host, port }
                | http::Request::Forward { host, port, .. } => {
                    assert!(port != 0 && !host.is_empty());
                    let _ = policy::target(&host);
                }
            }
        }
    }
    if let Ok(Some(len)) = socks::greeting(data) {
        assert!(len <= data.len());
    }
    if let Ok(Some((target, len))) = socks::request(data) {
        assert!(len <= data.len());
        let (host, _) = target.host_port();
        let _ = policy::target(&host);
    }
}

/// A person's answer about an unlisted host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConsentAnswer {
    /// This connection (and the others waiting on the same question).
    AllowOnce,
    /// This host, on any port, for as long as the sandbox lives.
    AllowForSession,
    /// As [`AllowForSession`](Self::AllowForSession); the asker may also
    /// have saved the host in the configuration.
    AlwaysAllow,
    /// Not this host, for as long as the sandbox lives (so a retrying
    /// script does not ask again and again).
    Deny,
}

/// The protocol a connection came in by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Protocol {
    /// HTTP `CONNECT` (a tunnel: HTTPS, git over HTTPS, …).
    HttpConnect,
    /// An absolute-form plain HTTP request (`GET http://…`).
    HttpForward,
    /// SOCKS5 `CONNECT`.
    Socks5,
}

impl Protocol {
    /// `http-connect`, `http`, `socks5`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::HttpConnect => "http-connect",
            Self::HttpForward => "http",
            Self::Socks5 => "socks5",
        }
    }
}

/// An unlisted host a command wants to reach.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConsentRequest {
    /// The host name, normalised (lower-case ASCII, IDNA-mapped).
    pub host: String,
    /// The port.
    pub port: u16,
    /// How the command asked.
    pub protocol: Protocol,
}

/// Asks a person whether a command may reach a host no list names (rule 4
/// of [`NetworkPolicy`]).
///
/// The sandbox cannot know the front end; the host adapts its approver to
/// this. Questions about the same host are asked once, however many
/// connections wait on them.
#[async_trait]
pub trait NetworkConsent: Send + Sync {
    /// Asks about `request`. Taking long is fine: the connection waits (up
    /// to ten minutes).
    async fn ask(&self, request: &ConsentRequest) -> ConsentAnswer;
}

/// What became of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// An allow entry lists it.
    Listed,
    /// A person allowed it (now, or earlier for the session).
    Approved(ConsentAnswer),
    /// A deny entry matches its name or the addresses it resolves to.
    DenyListed,
    /// No entry lists it, and nobody could be asked (or the mode never
    /// asks).
    Unlisted,
    /// An address literal no allow entry covers.
    UnlistedAddress,
    /// A person refused it (now, or earlier for the session), or did not
    /// answer in time.
    Refused,
    /// Its name resolves only to addresses it may not reach (rule 5).
    SpecialAddress,
    /// The request could not be read, or is not one the proxy serves.
    BadRequest,
    /// Too many questions were already waiting for a person.
    Busy,
}

impl Decision {
    /// Whether the proxy went on to connect.
    pub fn allowed(self) -> bool {
        matches!(self, Self::Listed | Self::Approved(_))
    }

    /// The decision as the audit names it: `allowed` (listed), `approved`
    /// (by a person), `denied` (by a person), else `refused`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Listed => "allowed",
            Self::Approved(_) => "approved",
            Self::Refused => "denied",
            _ => "refused",
        }
    }
}

/// One connection, as the proxy reports it when it ends (or is refused).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionRecord {
    /// Unique within the sandbox, in order of arrival.
    pub id: u64,
    /// How the command asked.
    pub protocol: Protocol,
    /// The host as the command named it (normalised when it could be).
    pub host: String,
    /// The port.
    pub port: u16,
    /// What was decided.
    pub decision: Decision,
    /// Where the proxy connected, when it did.
    pub peer: Option<SocketAddr>,
    /// Bytes from the command to the host.
    pub sent: u64,
    /// Bytes from the host to the command.
    pub received: u64,
    /// From the first byte of the request to the end of the connection.
    pub duration: Duration,
    /// Why it was refused, or what failed (resolving, connecting).
    pub error: Option<String>,
}

/// Hears of every connection (the host's audit).
pub trait NetworkObserver: Send + Sync {
    /// One connection ended or was refused.
    fn connection(&self, record: &ConnectionRecord);
}

/// Who is asked and who hears, for as long as this value lives; returned by
/// [`Attachments::attach`] (the sandbox's `Sandbox::attach_network`).
///
/// A connection cannot be traced to the command (or the run) that made
/// it, so with several attachments alive the newest is asked and told.
pub struct NetworkAttachment {
    inner: Arc<Attached>,
}

impl fmt::Debug for NetworkAttachment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NetworkAttachment").finish_non_exhaustive()
    }
}

impl NetworkAttachment {
    /// Waits until every connection that started while this attachment was
    /// the newest has been reported to its observer, for at most `limit`:
    /// a front end calls it before it lets go of the attachment, so the
    /// audit holds the last connection of the last command (which the
    /// proxy reports when the connection ends, after the command may
    /// already have exited). Returns whether all were reported.
    pub async fn settle(&self, limit: Duration) -> bool {
        let inner = &self.inner;
        tokio::time::timeout(limit, async {
            loop {
                let notified = inner.settled.notified();
                if inner.in_flight.load(Ordering::Acquire) == 0 {
                    return;
                }
                notified.await;
            }
        })
        .await
        .is_ok()
    }
}

pub(crate) struct Attached {
    pub(crate) consent: Option<Arc<dyn NetworkConsent>>,
    pub(crate) observer: Option<Arc<dyn NetworkObserver>>,
    /// Connections that started under this attachment and are not reported
    /// yet.
    pub(crate) in_flight: AtomicUsize,
    /// Told each time `in_flight` drops.
    pub(crate) settled: tokio::sync::Notify,
}

/// The attachments of a sandbox, newest last: the proxy asks and tells the
/// newest one alive.
#[derive(Default)]
pub struct Attachments {
    list: Mutex<Vec<Weak<Attached>>>,
}

impl fmt::Debug for Attachments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Attachments").finish_non_exhaustive()
    }
}

impl Attachments {
    /// Attaches `consent` and `observer` until the returned handle is
    /// dropped.
    pub fn attach(
        &self,
        consent: Option<Arc<dyn NetworkConsent>>,
        observer: Option<Arc<dyn NetworkObserver>>,
    ) -> NetworkAttachment {
        let inner = Arc::new(Attached {
            consent,
            observer,
            in_flight: AtomicUsize::new(0),
            settled: tokio::sync::Notify::new(),
        });
        let mut list = self.list.lock().unwrap_or_else(PoisonError::into_inner);
        list.retain(|w| w.strong_count() > 0);
        list.push(Arc::downgrade(&inner));
        NetworkAttachment { inner }
    }

    /// The newest attachment still alive.
    pub(crate) fn current(&self) -> Option<Arc<Attached>> {
        let list = self.list.lock().unwrap_or_else(PoisonError::into_inner);
        list.iter().rev().find_map(Weak::upgrade)
    }
}
