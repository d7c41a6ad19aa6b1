//! What the streamable HTTP server keeps per worker, and answers before rmcp
//! sees a request: which client is calling ([`HttpClient`]), its rate and
//! concurrency limits, the drain on shutdown, and `/healthz` / `/readyz`.
//!
//! Nothing here is a session: a request names its client by its bearer
//! token, so any worker behind a load balancer answers any request.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt as _;
use tokio::sync::Notify;
use toolgate_engine::{ApprovalScope, ExecutionEngine, SharedAllows};

use crate::error::Error;
use crate::http_guard::same_bytes;

/// One client of the HTTP server, told apart from the others by its bearer
/// token: its name (the audit names it), the engine its calls go through
/// (its confirmation mode), the tools it may use and its limits.
///
/// Give the server its clients with [`HttpOptions::client`].
pub struct HttpClient {
    name: String,
    token: String,
    engine: Option<Arc<ExecutionEngine>>,
    allowed: Option<Vec<String>>,
    rate_per_minute: Option<u32>,
    max_concurrent: Option<u32>,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("HttpClient")
            .field("name", &self.name)
            .field("allowed", &self.allowed)
            .field("rate_per_minute", &self.rate_per_minute)
            .field("max_concurrent", &self.max_concurrent)
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    /// The client `name`, whose requests carry `Authorization: Bearer
    /// TOKEN`.
    pub fn new(name: impl Into<String>, token: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            token: token.into(),
            engine: None,
            allowed: None,
            rate_per_minute: None,
            max_concurrent: None,
        }
    }

    /// The engine the client's calls go through (built for its confirmation
    /// mode, its audit naming it). By default, the server's.
    #[must_use]
    pub fn engine(mut self, engine: Arc<ExecutionEngine>) -> Self {
        self.engine = Some(engine);
        self
    }

    /// Only these tools are listed to the client and run for it. By
    /// default, the server's ([`McpServer::allowed_tools`](crate::McpServer::allowed_tools)).
    #[must_use]
    pub fn allowed_tools(mut self, names: Option<Vec<String>>) -> Self {
        self.allowed = names;
        self
    }

    /// At most this many requests a minute, as a token bucket that holds
    /// one minute's worth (so a burst of that many passes at once). By
    /// default, no limit.
    #[must_use]
    pub fn rate_per_minute(mut self, rate: Option<u32>) -> Self {
        self.rate_per_minute = rate;
        self
    }

    /// At most this many requests of the client in flight at once on this
    /// worker. By default, no limit.
    #[must_use]
    pub fn max_concurrent(mut self, max: Option<u32>) -> Self {
        self.max_concurrent = max;
        self
    }
}

/// Whether this worker can do its work, asked by `GET /readyz` (a trivial
/// query of the store, say).
#[async_trait]
pub trait Readiness: Send + Sync {
    /// `Err` with a one-line reason when the worker should get no traffic.
    async fn check(&self) -> Result<(), String>;
}

/// How [`McpServer::serve_http_with`](crate::McpServer::serve_http_with)
/// serves.
///
/// By default: stateless (no `Mcp-Session-Id`), one anonymous client
/// without a token, a drain of 30 s on shutdown, and `/readyz` ready while
/// not draining.
pub struct HttpOptions {
    pub(crate) token: Option<String>,
    pub(crate) clients: Vec<HttpClient>,
    pub(crate) sessions: bool,
    pub(crate) drain_timeout: Duration,
    pub(crate) readiness: Option<Arc<dyn Readiness>>,
    pub(crate) session_allows: Option<Arc<dyn SharedAllows>>,
    pub(crate) shared_rate: Option<Arc<dyn SharedRate>>,
}

/// Where the clients' `rate_per_minute` budgets are kept, so that a
/// client's limit holds across every worker that takes from it.
#[async_trait::async_trait]
pub trait SharedRate: Send + Sync {
    /// Takes one request of `client`, whose limit is `per_minute`: `None`
    /// when taken, else how long until one is left; `Err` (what went
    /// wrong) when the budget cannot be reached.
    async fn take(&self, client: &str, per_minute: u32) -> Result<Option<Duration>, String>;
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("clients", &self.clients)
            .field("sessions", &self.sessions)
            .field("drain_timeout", &self.drain_timeout)
            .finish_non_exhaustive()
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            token: None,
            clients: Vec::new(),
            sessions: false,
            drain_timeout: Duration::from_secs(30),
            readiness: None,
            session_allows: None,
            shared_rate: None,
        }
    }
}

impl HttpOptions {
    /// The default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// The anonymous client must send `Authorization: Bearer TOKEN`. By
    /// default, with no [`client`](Self::client) either, every request is
    /// served; with clients, only theirs.
    #[must_use]
    pub fn token(mut self, token: Option<String>) -> Self {
        self.token = token;
        self
    }

    /// A named client. With any, every request must carry one of their
    /// tokens (or the anonymous [`token`](Self::token)). By default, none.
    #[must_use]
    pub fn client(mut self, client: HttpClient) -> Self {
        self.clients.push(client);
        self
    }

    /// Keeps `Mcp-Session-Id` sessions in this process, as servers did
    /// before the 2026-07-28 protocol: the client can then be asked by
    /// elicitation, but every request of a session must reach the worker
    /// that started it. By default, no sessions.
    #[must_use]
    pub fn sessions(mut self, yes: bool) -> Self {
        self.sessions = yes;
        self
    }

    /// How long calls in flight may still run once shutdown begins. By
    /// default, 30 s.
    #[must_use]
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// What `/readyz` checks besides the drain. By default, nothing.
    #[must_use]
    pub fn readiness(mut self, readiness: Arc<dyn Readiness>) -> Self {
        self.readiness = Some(readiness);
        self
    }

    /// Where each client's "allow for the session" answers are kept, so
    /// that they hold on every worker sharing it (keyed by the client's
    /// name). By default, nowhere: each worker remembers its own.
    #[must_use]
    pub fn session_allows(mut self, allows: Arc<dyn SharedAllows>) -> Self {
        self.session_allows = Some(allows);
        self
    }

    /// Where the clients' `rate_per_minute` budgets are taken from, so
    /// that each client's limit holds across every worker sharing it. By
    /// default, each worker keeps its own bucket per client.
    #[must_use]
    pub fn shared_rate(mut self, rate: Arc<dyn SharedRate>) -> Self {
        self.shared_rate = Some(rate);
        self
    }
}

/// A client as a request resolves to it: what [`McpServer`](crate::McpServer)
/// serves it, and its limits.
pub(crate) struct Served {
    /// `None` for the anonymous client.
    pub(crate) name: Option<String>,
    pub(crate) engine: Arc<ExecutionEngine>,
    pub(crate) allowed: Option<Arc<Vec<String>>>,
    /// Its "allow for the session" answers: on this worker, and in the
    /// shared store when there is one.
    pub(crate) scope: ApprovalScope,
    limits: Limits,
}

impl Served {
    pub(crate) fn is_allowed(&self, name: &str) -> bool {
        self.allowed
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == name))
    }
}

/// The clients of one server and its drain.
pub(crate) struct Gateway {
    named: Vec<(Vec<u8>, Arc<Served>)>,
    anonymous: Arc<Served>,
    /// The anonymous client's token; without one (and without named
    /// clients) everyone is the anonymous client.
    anonymous_token: Option<Vec<u8>>,
    pub(crate) drain: Arc<Drain>,
    readiness: Option<Arc<dyn Readiness>>,
}

impl Gateway {
    /// The clients of `options` (validated), the anonymous one served by
    /// `engine` with `allowed`.
    pub(crate) fn new(
        options: &mut HttpOptions,
        engine: &Arc<ExecutionEngine>,
        allowed: Option<&Arc<Vec<String>>>,
    ) -> Result<Self, Error> {
        if options
            .token
            .as_deref()
            .is_some_and(|t| t.trim().is_empty())
        {
            return Err(Error::EmptyToken);
        }
        let mut named: Vec<(Vec<u8>, Arc<Served>)> = Vec::new();
        for client in std::mem::take(&mut options.clients) {
            let problem = if client.token.trim().is_empty() {
                Some("its bearer token is empty; use a long random token".to_owned())
            } else if client.name.trim().is_empty() {
                Some("a client needs a name".to_owned())
            } else if let Some((_, other)) = named
                .iter()
                .find(|(_, s)| s.name.as_deref() == Some(client.name.as_str()))
            {
                other
                    .name
                    .as_ref()
                    .map(|n| format!("the name `{n}` is given twice"))
            } else if client.rate_per_minute == Some(0) || client.max_concurrent == Some(0) {
                Some("`rate_per_minute` and `max_concurrent` must be at least 1".to_owned())
            } else if named
                .iter()
                .any(|(token, _)| token.as_slice() == client.token.as_bytes())
                || options.token.as_deref() == Some(client.token.as_str())
            {
                Some("its bearer token is another client's too; give each its own".to_owned())
            } else {
                None
            };
            if let Some(reason) = problem {
                return Err(Error::Client {
                    client: client.name,
                    reason,
                });
            }
            let scope = ApprovalScope::new(format!(
                "MCP client `{}`",
                toolgate_core::neutralize_line(&client.name)
            ));
            let served = Served {
                scope: shared(scope, &client.name, options.session_allows.as_ref()),
                engine: client.engine.unwrap_or_else(|| Arc::clone(engine)),
                allowed: client.allowed.map(Arc::new).or_else(|| allowed.cloned()),
                limits: Limits::new(client.rate_per_minute, client.max_concurrent)
                    .shared(options.shared_rate.clone()),
                name: Some(client.name),
            };
            named.push((client.token.into_bytes(), Arc::new(served)));
        }
        let anonymous = Served {
            name: None,
            engine: Arc::clone(engine),
            allowed: allowed.cloned(),
            scope: shared(
                ApprovalScope::new("the MCP clients over HTTP"),
                "",
                options.session_allows.as_ref(),
            ),
            limits: Limits::new(None, None),
        };
        Ok(Self {
            named,
            anonymous: Arc::new(anonymous),
            anonymous_token: options.token.take().map(String::into_bytes),
            drain: Arc::new(Drain::default()),
            readiness: options.readiness.take(),
        })
    }

    /// The client a request's `Authorization` header names, if any.
    ///
    /// # Rules
    ///
    /// 1. The header must be `Authorization`, its value `Bearer ` (that
    ///    case, one space) followed by exactly a token's bytes.
    /// 2. Every named client's token is compared, in time that does not
    ///    depend on where a guess first differs (nor on which client it
    ///    matched), then the anonymous token.
    /// 3. Without named clients and without an anonymous token, every
    ///    request is the anonymous client's.
    fn identify(&self, headers: &HeaderMap) -> Option<Arc<Served>> {
        if self.named.is_empty() && self.anonymous_token.is_none() {
            return Some(Arc::clone(&self.anonymous));
        }
        let given = headers
            .get(header::AUTHORIZATION)
            .map(HeaderValue::as_bytes)
            .and_then(|v| v.strip_prefix(b"Bearer "))?;
        let mut found = None;
        for (token, served) in &self.named {
            if same_bytes(given, token) && found.is_none() {
                found = Some(served);
            }
        }
        if let Some(served) = found {
            return Some(Arc::clone(served));
        }
        self.anonymous_token
            .as_ref()
            .filter(|token| same_bytes(given, token))
            .map(|_| Arc::clone(&self.anonymous))
    }
}

/// Admits a request to `/mcp`, or answers it here.
///
/// # Rules
///
/// 1. While the worker drains: 503 with `Retry-After: 1`, so that a load
///    balancer or the client tries another worker.
/// 2. No token of a client: 401.
/// 3. Over the client's rate: 429 with `Retry-After` the seconds until its
///    bucket holds a request again.
/// 4. As many of the client's requests in flight on this worker as it may
///    have: 429 with `Retry-After: 1`.
/// 5. Otherwise the request goes on, knowing its client, and counts as in
///    flight until its response has been sent whole.
pub(crate) async fn admit(gateway: Arc<Gateway>, mut request: Request, next: Next) -> Response {
    // Counted before the drain is looked at: a drain that starts in
    // between then waits for this request.
    let in_flight = gateway.drain.enter();
    if gateway.drain.is_draining() {
        return unavailable("this worker is shutting down; retry on another\n");
    }
    let Some(served) = gateway.identify(request.headers()) else {
        return (StatusCode::UNAUTHORIZED, "missing or wrong bearer token\n").into_response();
    };
    let client_slot = match served
        .limits
        .admit(served.name.as_deref().unwrap_or_default(), Instant::now())
        .await
    {
        Ok(slot) => slot,
        Err(Limited::Rate(wait)) => {
            tracing::info!(client = served.name.as_deref(), "rate limited");
            return too_many(wait, "rate limit of this client reached; retry later\n");
        }
        Err(Limited::Concurrency) => {
            tracing::info!(client = served.name.as_deref(), "concurrency limited");
            return too_many(
                Duration::from_secs(1),
                "too many requests of this client in flight; retry later\n",
            );
        }
        Err(Limited::Unknown(error)) => {
            tracing::warn!(
                client = served.name.as_deref(),
                "the client's request budget cannot be read, so the request is refused: {error}"
            );
            return unavailable("this client's request budget cannot be read now; retry\n");
        }
    };
    request.extensions_mut().insert(served);
    // A session's standing `GET` stream (with `--sessions`) is no call: it
    // would hold the drain to its timeout.
    let standing = request.method() == axum::http::Method::GET;
    let response = next.run(request).await;
    // A streamed answer (server-sent events) is still being written when
    // the handler returns: the request stays in flight until it is done.
    let streamed = !standing
        && response
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if !streamed {
        return response;
    }
    let (parts, body) = response.into_parts();
    let held = (in_flight, client_slot);
    let body = body.into_data_stream().map(move |chunk| {
        let _ = &held;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(body))
}

fn unavailable(reason: &'static str) -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::RETRY_AFTER, HeaderValue::from_static("1"))],
        reason,
    )
        .into_response()
}

fn too_many(wait: Duration, reason: &'static str) -> Response {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    (
        StatusCode::TOO_MANY_REQUESTS,
        [(header::RETRY_AFTER, seconds.max(1).to_string())],
        reason,
    )
        .into_response()
}

/// `GET /healthz`: 200 while the process serves.
pub(crate) async fn healthz() -> Response {
    (StatusCode::OK, "ok\n").into_response()
}

/// `GET /readyz`: 200 when the worker should get traffic, else 503 with a
/// one-line reason: draining, or what the [`Readiness`] check said.
pub(crate) async fn readyz(gateway: Arc<Gateway>) -> Response {
    if gateway.drain.is_draining() {
        return (StatusCode::SERVICE_UNAVAILABLE, "draining\n").into_response();
    }
    if let Some(readiness) = &gateway.readiness
        && let Err(reason) = readiness.check().await
    {
        let line = toolgate_core::neutralize_line(&reason);
        return (StatusCode::SERVICE_UNAVAILABLE, format!("{line}\n")).into_response();
    }
    (StatusCode::OK, "ready\n").into_response()
}

/// The requests in flight on this worker, and whether it drains.
#[derive(Default)]
pub(crate) struct Drain {
    draining: AtomicBool,
    in_flight: Arc<AtomicUsize>,
    idle: Arc<Notify>,
}

impl Drain {
    fn enter(&self) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight {
            count: Arc::clone(&self.in_flight),
            idle: Some(Arc::clone(&self.idle)),
        }
    }

    pub(crate) fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// From now on, `/readyz` and new requests get 503.
    pub(crate) fn start(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// Resolves once no request is in flight.
    pub(crate) async fn idle(&self) {
        loop {
            let notified = self.idle.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.in_flight() == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// One request counted in flight until dropped.
struct InFlight {
    count: Arc<AtomicUsize>,
    idle: Option<Arc<Notify>>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.count.fetch_sub(1, Ordering::SeqCst) == 1
            && let Some(idle) = &self.idle
        {
            idle.notify_waiters();
        }
    }
}

/// Why a request was not admitted.
#[derive(Debug, PartialEq)]
enum Limited {
    /// The bucket is empty for this long.
    Rate(Duration),
    Concurrency,
    /// The shared budget could not be read.
    Unknown(String),
}

/// One client's limits: its concurrency on this worker, its rate here or
/// in the shared budget.
struct Limits {
    bucket: Option<Mutex<Bucket>>,
    rate: Option<u32>,
    shared: Option<Arc<dyn SharedRate>>,
    max_concurrent: Option<usize>,
    in_flight: Arc<AtomicUsize>,
}

impl Limits {
    fn new(rate_per_minute: Option<u32>, max_concurrent: Option<u32>) -> Self {
        Self {
            bucket: rate_per_minute
                .map(|rate| Mutex::new(Bucket::per_minute(rate, Instant::now()))),
            rate: rate_per_minute,
            shared: None,
            max_concurrent: max_concurrent.map(|m| usize::try_from(m).unwrap_or(usize::MAX)),
            in_flight: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Takes the rate from `shared` instead of this worker's bucket.
    fn shared(mut self, shared: Option<Arc<dyn SharedRate>>) -> Self {
        self.shared = shared;
        self
    }

    /// A slot for one request of `client`, or why there is none. The
    /// concurrency is looked at first, so a refused request takes nothing
    /// from the bucket.
    async fn admit(&self, client: &str, now: Instant) -> Result<Option<InFlight>, Limited> {
        let slot = match self.max_concurrent {
            None => None,
            Some(max) => {
                if self.in_flight.fetch_add(1, Ordering::SeqCst) >= max {
                    self.in_flight.fetch_sub(1, Ordering::SeqCst);
                    return Err(Limited::Concurrency);
                }
                Some(InFlight {
                    count: Arc::clone(&self.in_flight),
                    idle: None,
                })
            }
        };
        if let (Some(shared), Some(rate)) = (&self.shared, self.rate) {
            match shared.take(client, rate).await {
                Ok(None) => {}
                Ok(Some(wait)) => return Err(Limited::Rate(wait)),
                Err(error) => return Err(Limited::Unknown(error)),
            }
        } else if let Some(bucket) = &self.bucket {
            let mut bucket = bucket.lock().unwrap_or_else(PoisonError::into_inner);
            bucket.take(now).map_err(Limited::Rate)?;
        }
        Ok(slot)
    }
}

/// A token bucket: `capacity` requests at once, refilled at `per_second`.
#[derive(Debug)]
struct Bucket {
    capacity: f64,
    per_second: f64,
    tokens: f64,
    last: Instant,
}

impl Bucket {
    fn per_minute(rate: u32, now: Instant) -> Self {
        let capacity = f64::from(rate.max(1));
        Self {
            capacity,
            per_second: capacity / 60.0,
            tokens: capacity,
            last: now,
        }
    }

    /// Takes one request's worth, or says how long until there is one.
    fn take(&mut self, now: Instant) -> Result<(), Duration> {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.per_second).min(self.capacity);
        self.last = now;
        // A hair of slack: refills are sums of fractions.
        if self.tokens >= 1.0 - 1e-9 {
            self.tokens = (self.tokens - 1.0).max(0.0);
            Ok(())
        } else {
            Err(Duration::from_secs_f64(
                (1.0 - self.tokens) / self.per_second,
            ))
        }
    }
}

/// `scope`, keeping its allows in `allows` under the client's name (`""`
/// for the anonymous client), when there are shared allows.
fn shared(
    scope: ApprovalScope,
    client: &str,
    allows: Option<&Arc<dyn SharedAllows>>,
) -> ApprovalScope {
    match allows {
        Some(allows) => scope.shared(format!("mcp-http-client:{client}"), Arc::clone(allows)),
        None => scope,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bucket_passes_a_minutes_worth_then_refills() {
        let start = Instant::now();
        let mut bucket = Bucket::per_minute(3, start);
        // (seconds after start, passes, seconds to wait when refused)
        let cases: &[(u64, bool, f64)] = &[
            (0, true, 0.0),
            (0, true, 0.0),
            (0, true, 0.0),
            (0, false, 20.0),
            (10, false, 10.0),
            (20, true, 0.0),
            (20, false, 20.0),
            (100, true, 0.0),
            (100, true, 0.0),
            (100, true, 0.0),
            (100, false, 20.0),
        ];
        for (i, (at, passes, wait)) in cases.iter().enumerate() {
            let got = bucket.take(start + Duration::from_secs(*at));
            assert_eq!(got.is_ok(), *passes, "case {i}: {got:?}");
            if let Err(left) = got {
                assert!(
                    (left.as_secs_f64() - wait).abs() < 1e-3,
                    "case {i}: {left:?}"
                );
            }
        }
    }

    #[tokio::test]
    async fn concurrency_slots_are_given_back_when_dropped() {
        let limits = Limits::new(None, Some(2));
        let now = Instant::now();
        let first = limits.admit("c", now).await.unwrap();
        let second = limits.admit("c", now).await.unwrap();
        assert!(matches!(
            limits.admit("c", now).await,
            Err(Limited::Concurrency)
        ));
        drop(first);
        let third = limits.admit("c", now).await.unwrap();
        assert!(matches!(
            limits.admit("c", now).await,
            Err(Limited::Concurrency)
        ));
        drop((second, third));
        assert_eq!(limits.in_flight.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn a_refused_request_takes_nothing_from_the_bucket() {
        let limits = Limits::new(Some(1), Some(1));
        let now = Instant::now();
        let held = limits.admit("c", now).await.unwrap();
        assert!(matches!(
            limits.admit("c", now).await,
            Err(Limited::Concurrency)
        ));
        drop(held);
        assert!(matches!(
            limits.admit("c", now).await,
            Err(Limited::Rate(_))
        ));
    }

    /// A shared budget that refuses with a set answer, counting takes.
    struct Budget(Result<Option<Duration>, String>, AtomicUsize);

    #[async_trait::async_trait]
    impl SharedRate for Budget {
        async fn take(&self, client: &str, per_minute: u32) -> Result<Option<Duration>, String> {
            assert_eq!((client, per_minute), ("ci", 5));
            self.1.fetch_add(1, Ordering::SeqCst);
            self.0.clone()
        }
    }

    #[tokio::test]
    async fn a_shared_budget_replaces_the_workers_bucket() {
        let now = Instant::now();
        for (answer, want) in [
            (Ok(None), "admitted"),
            (Ok(Some(Duration::from_secs(7))), "rate 7s"),
            (Err("connection refused".to_owned()), "unknown"),
        ] {
            let budget = Arc::new(Budget(answer, AtomicUsize::new(0)));
            let limits = Limits::new(Some(5), Some(1))
                .shared(Some(Arc::clone(&budget) as Arc<dyn SharedRate>));
            // Taken from the shared budget every time, never from a bucket
            // here (which would refuse the sixth).
            for _ in 0..6 {
                let got = match limits.admit("ci", now).await {
                    Ok(_) => "admitted".to_owned(),
                    Err(Limited::Rate(wait)) => format!("rate {}s", wait.as_secs()),
                    Err(Limited::Unknown(_)) => "unknown".to_owned(),
                    Err(Limited::Concurrency) => "concurrency".to_owned(),
                };
                assert_eq!(got, want);
            }
            assert_eq!(budget.1.load(Ordering::SeqCst), 6);
            // A refusal gave its concurrency slot back.
            assert_eq!(limits.in_flight.load(Ordering::SeqCst), 0);
        }
    }

    #[tokio::test]
    async fn the_drain_waits_for_requests_in_flight() {
        let drain = Arc::new(Drain::default());
        let request = drain.enter();
        drain.start();
        assert!(drain.is_draining());
        let waiter = tokio::spawn({
            let drain = Arc::clone(&drain);
            async move { drain.idle().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        drop(request);
        waiter.await.unwrap();
        assert_eq!(drain.in_flight(), 0);
    }
}
