//! The proxy server: a thread of its own with a tokio runtime, serving the
//! two listeners that live in the sandbox's network namespace.
//!
//! It runs on its own thread so that it serves whatever runtime (or none)
//! the sandbox's user has, and outlives none of them: it stops when the
//! sandbox is dropped.
//!
//! # Limits
//!
//! - A client has [`HANDSHAKE_TIMEOUT`] from its first byte to a complete
//!   request (HTTP head, or SOCKS greeting and request); at most
//!   [`MAX_HANDSHAKES`] clients may be in that phase at once, and others are
//!   closed at once. So a slowloris holds nothing for long, and cannot pile
//!   up tasks.
//! - At most [`MAX_CONNECTIONS`] connections at once; the next waits in the
//!   kernel's accept queue.
//! - A question to a person waits at most [`CONSENT_TIMEOUT`]; questions
//!   about the same host are asked once; at most [`MAX_QUESTIONS`] hosts
//!   may wait for an answer at once, and a connection to a further one is
//!   refused.
//! - Resolving a name takes at most [`RESOLVE_TIMEOUT`], connecting to one
//!   address at most [`CONNECT_TIMEOUT`], and at most [`MAX_ADDRESSES`]
//!   addresses are tried.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OnceCell, Semaphore};

use super::policy::{self, Judgement, Listed, Target};
use super::socks::{self, SocksTarget, reply};
use super::{
    Attached, Attachments, ConnectionRecord, ConsentAnswer, Decision, NetworkPolicy, Protocol, http,
};
use consent::consent;

mod consent;

/// See the [limits](self).
pub(crate) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// See the [limits](self).
pub(crate) const MAX_HANDSHAKES: usize = 64;
/// See the [limits](self).
pub(crate) const MAX_CONNECTIONS: usize = 512;
/// See the [limits](self).
pub(crate) const CONSENT_TIMEOUT: Duration = Duration::from_secs(600);
/// See the [limits](self).
pub(crate) const MAX_QUESTIONS: usize = 8;
/// See the [limits](self).
pub(crate) const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);
/// See the [limits](self).
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// See the [limits](self).
pub(crate) const MAX_ADDRESSES: usize = 4;

/// A running proxy. Dropping it stops the server thread.
#[derive(Debug)]
pub struct Proxy {
    http_port: u16,
    socks_port: u16,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// What the server's tasks share.
struct Shared {
    policy: NetworkPolicy,
    attachments: Arc<Attachments>,
    next_id: AtomicU64,
    /// Hosts a person allowed, or refused, for the sandbox's life.
    allowed: Mutex<HashSet<String>>,
    refused: Mutex<HashSet<String>>,
    /// Questions waiting for a person, by host.
    questions: Mutex<HashMap<String, Arc<OnceCell<Option<ConsentAnswer>>>>>,
    handshakes: Arc<Semaphore>,
}

impl Proxy {
    /// Starts serving two listeners on a thread of its own: `http` (HTTP
    /// `CONNECT` and absolute-form requests) and `socks` (SOCKS5), both
    /// non-blocking, judging every connection by `policy` and asking and
    /// telling the newest of `attachments`. The caller decides where they
    /// listen (the sandbox: on `127.0.0.1` inside the network namespace it
    /// made).
    pub fn start(
        http: std::net::TcpListener,
        socks: std::net::TcpListener,
        policy: NetworkPolicy,
        attachments: Arc<Attachments>,
    ) -> std::io::Result<Self> {
        let http_port = http.local_addr()?.port();
        let socks_port = socks.local_addr()?.port();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .thread_name("toolgate-net-proxy")
            .build()?;
        let shared = Arc::new(Shared {
            policy,
            attachments,
            next_id: AtomicU64::new(1),
            allowed: Mutex::default(),
            refused: Mutex::default(),
            questions: Mutex::default(),
            handshakes: Arc::new(Semaphore::new(MAX_HANDSHAKES)),
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("toolgate-net-proxy".to_owned())
            .spawn(move || {
                runtime.block_on(async move {
                    let (http, socks) =
                        match (TcpListener::from_std(http), TcpListener::from_std(socks)) {
                            (Ok(h), Ok(s)) => (h, s),
                            (Err(error), _) | (_, Err(error)) => {
                                tracing::error!(%error, "the network proxy could not start");
                                return;
                            }
                        };
                    tokio::select! {
                        () = serve(shared, http, socks) => {}
                        _ = stopped => {}
                    }
                });
            })?;
        Ok(Self {
            http_port,
            socks_port,
            _stop: stop,
        })
    }

    /// The port of the HTTP listener.
    pub fn http_port(&self) -> u16 {
        self.http_port
    }

    /// The port of the SOCKS5 listener.
    pub fn socks_port(&self) -> u16 {
        self.socks_port
    }
}

async fn serve(shared: Arc<Shared>, http: TcpListener, socks: TcpListener) {
    let connections = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok(permit) = Arc::clone(&connections).acquire_owned().await else {
            return;
        };
        let (stream, kind) = tokio::select! {
            r = http.accept() => (r, Protocol::HttpForward),
            r = socks.accept() => (r, Protocol::Socks5),
        };
        let stream = match stream {
            Ok((stream, _)) => stream,
            Err(error) => {
                // EMFILE and friends: wait a little rather than spin.
                tracing::warn!(%error, "the network proxy could not accept a connection");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let _permit = permit;
            let Ok(handshake) = Arc::clone(&shared.handshakes).try_acquire_owned() else {
                tracing::warn!(
                    target: "toolgate::network",
                    "too many connections are still sending their request; one was closed"
                );
                return;
            };
            match kind {
                Protocol::Socks5 => serve_socks(&shared, stream, handshake).await,
                _ => serve_http(&shared, stream, handshake).await,
            }
        });
    }
}

/// A refusal, as each protocol says it.
struct Refusal {
    decision: Decision,
    message: String,
    http: (u16, &'static str),
    socks: u8,
}

impl Refusal {
    fn new(decision: Decision, message: String) -> Self {
        let (http, socks) = match decision {
            Decision::BadRequest => ((400, "Bad Request"), reply::HOST_UNREACHABLE),
            _ => ((403, "Forbidden"), reply::NOT_ALLOWED),
        };
        Self {
            decision,
            message,
            http,
            socks,
        }
    }

    /// Allowed, but the host could not be reached.
    fn unreachable(decision: Decision, message: String, socks: u8) -> Self {
        let http = if socks == reply::TTL_EXPIRED {
            (504, "Gateway Timeout")
        } else {
            (502, "Bad Gateway")
        };
        Self {
            decision,
            message,
            http,
            socks,
        }
    }
}

/// A connection being followed; reported once, when it is dropped (so a
/// connection cut short by the sandbox going away is reported too), to the
/// attachment that was the newest when it started, which counts it in
/// flight until then.
struct Tracked {
    attached: Option<Arc<Attached>>,
    record: ConnectionRecord,
    started: Instant,
}

impl Tracked {
    fn new(shared: &Shared, protocol: Protocol) -> Self {
        let attached = shared.attachments.current();
        if let Some(a) = &attached {
            a.in_flight.fetch_add(1, Ordering::AcqRel);
        }
        Self {
            attached,
            record: ConnectionRecord {
                id: shared.next_id.fetch_add(1, Ordering::Relaxed),
                protocol,
                host: String::new(),
                port: 0,
                decision: Decision::BadRequest,
                peer: None,
                sent: 0,
                received: 0,
                duration: Duration::ZERO,
                error: None,
            },
            started: Instant::now(),
        }
    }

    fn refused(&mut self, refusal: &Refusal) {
        self.record.decision = refusal.decision;
        self.record.error = Some(refusal.message.clone());
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let r = &mut self.record;
        r.duration = self.started.elapsed();
        tracing::info!(
            target: "toolgate::network",
            id = r.id,
            protocol = r.protocol.as_str(),
            host = %r.host,
            port = r.port,
            decision = r.decision.as_str(),
            peer = ?r.peer,
            sent = r.sent,
            received = r.received,
            duration_ms = u64::try_from(r.duration.as_millis()).unwrap_or(u64::MAX),
            error = r.error.as_deref().unwrap_or(""),
            "connection"
        );
        if let Some(attached) = &self.attached {
            if let Some(observer) = &attached.observer {
                observer.connection(r);
            }
            attached.in_flight.fetch_sub(1, Ordering::AcqRel);
            attached.settled.notify_waiters();
        }
    }
}

/// Reads until the head is complete; returns the head and what followed it.
async fn read_head(stream: &mut TcpStream) -> Result<(Vec<u8>, Vec<u8>), http::HeadError> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        let n = stream
            .read(&mut chunk)
            .await
            .map_err(|_| http::HeadError::Malformed("the connection failed"))?;
        if n == 0 {
            return Err(http::HeadError::Malformed(
                "the client closed before its request ended",
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = http::head_end(&buf)? {
            let rest = buf.split_off(end);
            return Ok((buf, rest));
        }
    }
}

async fn serve_http(
    shared: &Shared,
    mut client: TcpStream,
    handshake: tokio::sync::OwnedSemaphorePermit,
) {
    let mut tracked = Tracked::new(shared, Protocol::HttpForward);
    let head = tokio::time::timeout(HANDSHAKE_TIMEOUT, read_head(&mut client)).await;
    drop(handshake);
    let parsed = match head {
        Err(_) => Err(http::HeadError::Malformed(
            "the request head did not arrive in time",
        )),
        Ok(Err(error)) => Err(error),
        Ok(Ok((head, rest))) => http::parse(&head).map(|r| (r, rest)),
    };
    let (request, rest) = match parsed {
        Ok(ok) => ok,
        Err(error) => {
            let (code, reason) = error.status();
            let body = format!("toolgate's network proxy: {}\n", error.reason());
            let _ = client.write_all(&http::response(code, reason, &body)).await;
            tracked.refused(&Refusal::new(
                Decision::BadRequest,
                error.reason().to_owned(),
            ));
            return;
        }
    };
    let (host, port, forward) = match request {
        http::Request::Connect { host, port } => {
            tracked.record.protocol = Protocol::HttpConnect;
            (host, port, None)
        }
        http::Request::Forward { host, port, head } => (host, port, Some(head)),
    };
    tracked.record.host.clone_from(&host);
    tracked.record.port = port;
    let protocol = tracked.record.protocol;
    let opened = open(shared, &mut tracked, protocol, &host, port).await;
    let mut upstream = match opened {
        Ok(upstream) => upstream,
        Err(refusal) => {
            let (code, reason) = refusal.http;
            let body = format!("{}\n", refusal.message);
            let _ = client.write_all(&http::response(code, reason, &body)).await;
            tracked.refused(&refusal);
            return;
        }
    };
    let first: Vec<u8> = match forward {
        None => {
            if client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await
                .is_err()
            {
                return;
            }
            rest
        }
        Some(mut head) => {
            head.extend_from_slice(&rest);
            head
        }
    };
    splice(&mut tracked, client, &mut upstream, &first).await;
}

async fn serve_socks(
    shared: &Shared,
    mut client: TcpStream,
    handshake: tokio::sync::OwnedSemaphorePermit,
) {
    let mut tracked = Tracked::new(shared, Protocol::Socks5);
    let request = tokio::time::timeout(HANDSHAKE_TIMEOUT, socks_handshake(&mut client)).await;
    drop(handshake);
    let (target, rest) = match request {
        Ok(Ok(ok)) => ok,
        Ok(Err(error)) => {
            if let Some(code) = error.reply {
                let bytes = if code == 0xff {
                    vec![5, 0xff]
                } else {
                    socks::reply_bytes(code).to_vec()
                };
                let _ = client.write_all(&bytes).await;
            }
            tracked.refused(&Refusal::new(Decision::BadRequest, error.reason.to_owned()));
            return;
        }
        Err(_) => {
            tracked.refused(&Refusal::new(
                Decision::BadRequest,
                "the SOCKS request did not arrive in time".to_owned(),
            ));
            return;
        }
    };
    let (host, port) = target.host_port();
    tracked.record.host.clone_from(&host);
    tracked.record.port = port;
    let host = match target {
        SocksTarget::V6(addr, _) => format!("[{addr}]"),
        _ => host,
    };
    match open(shared, &mut tracked, Protocol::Socks5, &host, port).await {
        Ok(mut upstream) => {
            if client
                .write_all(&socks::reply_bytes(reply::SUCCEEDED))
                .await
                .is_err()
            {
                return;
            }
            splice(&mut tracked, client, &mut upstream, &rest).await;
        }
        Err(refusal) => {
            let _ = client.write_all(&socks::reply_bytes(refusal.socks)).await;
            tracked.refused(&refusal);
        }
    }
}

/// The greeting, the method choice, and the request; returns the target
/// and any bytes that came after the request.
async fn socks_handshake(
    client: &mut TcpStream,
) -> Result<(SocksTarget, Vec<u8>), socks::SocksError> {
    let closed = socks::SocksError {
        reply: None,
        reason: "the client closed before its request ended",
    };
    let mut buf = Vec::with_capacity(300);
    let mut chunk = [0u8; 512];
    let used = loop {
        if let Some(len) = socks::greeting(&buf)? {
            break len;
        }
        let n = client.read(&mut chunk).await.map_err(|_| closed)?;
        if n == 0 {
            return Err(closed);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    buf.drain(..used);
    client.write_all(&[5, 0]).await.map_err(|_| closed)?;
    loop {
        if let Some((target, len)) = socks::request(&buf)? {
            return Ok((target, buf.split_off(len)));
        }
        if buf.len() > 262 {
            return Err(socks::SocksError {
                reply: Some(reply::GENERAL_FAILURE),
                reason: "the request is too long",
            });
        }
        let n = client.read(&mut chunk).await.map_err(|_| closed)?;
        if n == 0 {
            return Err(closed);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Copies both ways until both sides are done, counting bytes.
async fn splice(
    tracked: &mut Tracked,
    mut client: TcpStream,
    upstream: &mut TcpStream,
    first: &[u8],
) {
    if !first.is_empty() {
        if let Err(error) = upstream.write_all(first).await {
            tracked.record.error = Some(format!("writing to the host failed: {error}"));
            return;
        }
        tracked.record.sent += first.len() as u64;
    }
    match tokio::io::copy_bidirectional(&mut client, upstream).await {
        Ok((sent, received)) => {
            tracked.record.sent += sent;
            tracked.record.received += received;
        }
        Err(error) => tracked.record.error = Some(format!("the connection failed: {error}")),
    }
}

/// Judges `host:port` and, when it is allowed, connects to it (see the
/// [`NetworkPolicy`] rules).
async fn open(
    shared: &Shared,
    tracked: &mut Tracked,
    protocol: Protocol,
    host: &str,
    port: u16,
) -> Result<TcpStream, Refusal> {
    let policy = &shared.policy;
    let hint = policy.hint();
    let target = policy::target(host).map_err(|why| {
        Refusal::new(
            Decision::BadRequest,
            format!("toolgate refused the connection to `{host}`: {why}"),
        )
    })?;
    tracked.record.host = target.to_string();
    let shown = format!("{target}:{port}");
    let listed = match policy.judge(&target, port) {
        Judgement::Denied(entry) => {
            return Err(Refusal::new(
                Decision::DenyListed,
                format!(
                    "toolgate refused the connection to {shown}: denied by `{entry}` in the network policy"
                ),
            ));
        }
        Judgement::UnlistedAddress => {
            return Err(Refusal::new(
                Decision::UnlistedAddress,
                format!(
                    "toolgate refused the connection to {shown}: an address is reached only when \
                     the allow list names it; {hint}"
                ),
            ));
        }
        Judgement::Allowed(listed) => {
            tracked.record.decision = Decision::Listed;
            listed
        }
        Judgement::Unlisted => {
            let Target::Name(name) = &target else {
                return Err(Refusal::new(
                    Decision::UnlistedAddress,
                    format!("{shown} is not listed"),
                ));
            };
            let answer =
                consent(shared, name, port, protocol)
                    .await
                    .map_err(|(decision, why)| {
                        Refusal::new(
                            decision,
                            format!("toolgate refused the connection to {shown}: {why}; {hint}"),
                        )
                    })?;
            tracked.record.decision = Decision::Approved(answer);
            Listed::Broadly
        }
    };
    let addrs: Vec<IpAddr> = match &target {
        Target::Addr(addr) => vec![*addr],
        Target::Name(name) => {
            let resolved =
                tokio::time::timeout(RESOLVE_TIMEOUT, policy.resolver.resolve(name, port)).await;
            match resolved {
                Ok(Ok(addrs)) if !addrs.is_empty() => addrs,
                Ok(Ok(_)) => {
                    return Err(Refusal::unreachable(
                        tracked.record.decision,
                        format!("toolgate could not resolve `{name}`: no addresses"),
                        reply::HOST_UNREACHABLE,
                    ));
                }
                Ok(Err(error)) => {
                    return Err(Refusal::unreachable(
                        tracked.record.decision,
                        format!("toolgate could not resolve `{name}`: {error}"),
                        reply::HOST_UNREACHABLE,
                    ));
                }
                Err(_) => {
                    return Err(Refusal::unreachable(
                        tracked.record.decision,
                        format!("toolgate could not resolve `{name}` in time"),
                        reply::TTL_EXPIRED,
                    ));
                }
            }
        }
    };
    let addrs = policy
        .check_addresses(&addrs, port, listed)
        .map_err(|refusal| {
            let decision = match refusal {
                policy::AddressRefusal::Denied(..) => Decision::DenyListed,
                policy::AddressRefusal::Special(..) => Decision::SpecialAddress,
            };
            Refusal::new(
                decision,
                format!("toolgate refused the connection to {shown}: {refusal}"),
            )
        })?;
    let mut last = None;
    for addr in addrs.into_iter().take(MAX_ADDRESSES) {
        let peer = SocketAddr::new(addr, port);
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(peer)).await {
            Ok(Ok(stream)) => {
                let _ = stream.set_nodelay(true);
                tracked.record.peer = Some(peer);
                return Ok(stream);
            }
            Ok(Err(error)) => {
                let code = if error.kind() == std::io::ErrorKind::ConnectionRefused {
                    reply::CONNECTION_REFUSED
                } else {
                    reply::HOST_UNREACHABLE
                };
                last = Some((format!("connecting to {peer} failed: {error}"), code));
            }
            Err(_) => {
                last = Some((
                    format!("connecting to {peer} timed out"),
                    reply::TTL_EXPIRED,
                ));
            }
        }
    }
    let (message, code) = last.unwrap_or_else(|| {
        (
            "no address to connect to".to_owned(),
            reply::HOST_UNREACHABLE,
        )
    });
    Err(Refusal::unreachable(
        tracked.record.decision,
        format!("toolgate could not reach {shown}: {message}"),
        code,
    ))
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    /// A proxy listening on the host's loopback (the namespace is not
    /// what is tested here).
    fn local(policy: NetworkPolicy) -> (Proxy, SocketAddr, SocketAddr) {
        let http = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let socks = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        http.set_nonblocking(true).unwrap();
        socks.set_nonblocking(true).unwrap();
        let (h, s) = (http.local_addr().unwrap(), socks.local_addr().unwrap());
        let proxy = Proxy::start(http, socks, policy, Arc::default()).unwrap();
        (proxy, h, s)
    }

    async fn exchange(addr: SocketAddr, send: &[u8]) -> Vec<u8> {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(send).await.unwrap();
        let mut out = Vec::new();
        let _ = stream.read_to_end(&mut out).await;
        out
    }

    fn status(reply: &[u8]) -> String {
        String::from_utf8_lossy(reply)
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned()
    }

    #[tokio::test]
    async fn bad_requests_get_the_status_they_deserve() {
        let (_proxy, http, _) = local(NetworkPolicy::builder().build().unwrap());
        let mut huge = b"GET http://a.test/ HTTP/1.1\r\nX: ".to_vec();
        huge.resize(http::MAX_HEAD + 10, b'a');
        let cases: &[(&[u8], &str)] = &[
            (
                b"CONNECT a.test HTTP/1.1\r\n\r\n",
                "HTTP/1.1 400 Bad Request",
            ),
            (
                b"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
                "HTTP/1.1 400 Bad Request",
            ),
            (
                b"GET https://a.test/ HTTP/1.1\r\n\r\n",
                "HTTP/1.1 501 Not Implemented",
            ),
            (&huge, "HTTP/1.1 431 Request Header Fields Too Large"),
            (
                b"CONNECT 10.0.0.1:22 HTTP/1.1\r\n\r\n",
                "HTTP/1.1 403 Forbidden",
            ),
            (
                b"CONNECT unlisted.test:443 HTTP/1.1\r\n\r\n",
                "HTTP/1.1 403 Forbidden",
            ),
            (
                b"CONNECT 2130706433:80 HTTP/1.1\r\n\r\n",
                "HTTP/1.1 400 Bad Request",
            ),
        ];
        for (send, expected) in cases {
            let reply = exchange(http, send).await;
            assert_eq!(
                status(&reply),
                *expected,
                "{:?}",
                String::from_utf8_lossy(&send[..send.len().min(60)])
            );
        }
    }

    #[tokio::test]
    async fn socks_refusals_use_their_reply_codes() {
        let (_proxy, _, socks) = local(NetworkPolicy::builder().build().unwrap());
        let cases: &[(&[u8], &[u8])] = &[
            // Only username/password offered: no acceptable method.
            (b"\x05\x01\x02", b"\x05\xff"),
            // BIND.
            (
                b"\x05\x01\x00\x05\x02\x00\x01\x7f\x00\x00\x01\x00\x50",
                b"\x05\x00\x05\x07",
            ),
            // UDP ASSOCIATE.
            (
                b"\x05\x01\x00\x05\x03\x00\x01\x00\x00\x00\x00\x00\x00",
                b"\x05\x00\x05\x07",
            ),
            // An unknown address type.
            (b"\x05\x01\x00\x05\x01\x00\x09", b"\x05\x00\x05\x08"),
            // An unlisted name, nobody to ask: not allowed by ruleset.
            (
                b"\x05\x01\x00\x05\x01\x00\x03\x0bexample.com\x01\xbb",
                b"\x05\x00\x05\x02",
            ),
            // An unlisted address.
            (
                b"\x05\x01\x00\x05\x01\x00\x01\x0a\x00\x00\x01\x00\x16",
                b"\x05\x00\x05\x02",
            ),
        ];
        for (send, expected) in cases {
            let reply = exchange(socks, send).await;
            assert_eq!(
                &reply[..expected.len().min(reply.len())],
                *expected,
                "{send:?}"
            );
        }
    }

    /// A slowloris: connections that never finish their request. Past
    /// `MAX_HANDSHAKES`, a new one is closed at once; the proxy still
    /// serves once they are gone.
    #[tokio::test]
    async fn idle_clients_cannot_pile_up() {
        let (_proxy, http, _) = local(NetworkPolicy::builder().build().unwrap());
        let mut idle = Vec::new();
        for _ in 0..MAX_HANDSHAKES {
            let mut stream = TcpStream::connect(http).await.unwrap();
            // One byte: the connection is accepted and waits for the rest.
            stream.write_all(b"G").await.unwrap();
            idle.push(stream);
        }
        // Each idle client is in the handshake phase once the proxy
        // answers a probe sent after it; the probe itself must be closed
        // at once, without a reply.
        let reply = loop {
            let reply = exchange(http, b"CONNECT a.test:1 HTTP/1.1\r\n\r\n").await;
            if reply.is_empty() {
                break reply;
            }
            // A probe served before the idle ones were all accepted.
            tokio::task::yield_now().await;
        };
        assert!(reply.is_empty());
        drop(idle);
        let reply = loop {
            let reply = exchange(http, b"CONNECT a.test:1 HTTP/1.1\r\n\r\n").await;
            if !reply.is_empty() {
                break reply;
            }
            tokio::task::yield_now().await;
        };
        assert_eq!(status(&reply), "HTTP/1.1 403 Forbidden");
    }
}
