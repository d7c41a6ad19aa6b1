//! The registry served to MCP clients: [`McpServer`].

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use axum::serve::ListenerExt as _;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, DiscoverRequestMethod,
    DiscoverResult, ElicitRequestParams, ElicitationAction, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::{ElicitationMode, RequestContext, RoleServer};
use rmcp::{ErrorData, Peer, ServiceExt};
use serde_json::Value;
use toolgate_core::{RegisteredTool, ToolCall};
use toolgate_engine::{
    Approval, ApprovalRequest, ApprovalScope, Approver, ExecutionEngine, Ledger,
};

use crate::error::Error;
use crate::gateway::{self, Gateway, HttpOptions, Served};
use crate::http_guard;
use crate::stdio::LineTransport;

/// The newest protocol revision with the `initialize` handshake, which
/// every current peer negotiates: the newest over stdio and in session mode.
const PROTOCOL: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// The newest revision served over stateless HTTP: 2026-07-28, which has
/// no handshake and no sessions (`server/discover`, each request on its own).
const STATELESS_PROTOCOL: ProtocolVersion = ProtocolVersion::V_2026_07_28;

tokio::task_local! {
    /// The client whose call is going through the gate, for
    /// [`ElicitationApprover`].
    static CLIENT: Peer<RoleServer>;
}

/// Serves a registry to MCP clients, every call through the gate.
///
/// The tools listed are those of the engine's registry (optionally only the
/// [`allowed_tools`](McpServer::allowed_tools)), each with MCP annotations
/// derived from its sensitivity. `tools/call` runs
/// [`ExecutionEngine::execute`], so guardrails, hooks, confirmation and audit
/// apply; a refused or failed call comes back as a result with
/// `isError: true`, as MCP asks, never as a protocol error.
///
/// For confirmation, build the engine with an [`ElicitationApprover`]: it
/// asks the calling client by elicitation when the client declared it.
///
/// # Clients are told apart
///
/// A stdio client, and each streamable HTTP session in session mode
/// ([`HttpOptions::sessions`]), has its own [`ApprovalScope`]: "allow for
/// the session" given by one client covers that client's later calls only,
/// and one client's open question never holds up another client's calls.
/// Over stateless HTTP (the default) a request names its client by its
/// bearer token ([`HttpClient`](crate::HttpClient)); each named client has
/// its own scope on each worker, and every request without a named client's
/// token belongs to one anonymous client.
///
/// # Protocol
///
/// Over stdio and in session mode: versions up to 2025-11-25 with the
/// `initialize` handshake; a `server/discover` probe (the 2026-07-28 opener
/// that the Python SDK 2.x tries first) is answered with JSON-RPC -32601
/// and the connection stays open, so the client falls back to
/// `initialize`. Over stateless HTTP: 2026-07-28 as well, `server/discover`
/// answered; clients of earlier versions still `initialize`, get no
/// `Mcp-Session-Id`, and any request is served by any worker (one carrying
/// a session id some other server minted is served, not refused).
#[derive(Clone)]
pub struct McpServer {
    engine: Arc<ExecutionEngine>,
    allowed: Option<Arc<Vec<String>>>,
    calls: Arc<AtomicU64>,
    /// Client connections served so far (numbers the scopes).
    clients: Arc<AtomicU64>,
    /// This connection's approvals, named once the client is known.
    scope: Arc<OnceLock<ApprovalScope>>,
    /// Served over stateless HTTP: approvals are the client's (the
    /// gateway's scope for it), and no question can be put to the client.
    stateless: bool,
    /// What makes this process's call ids unlike another worker's.
    worker: Arc<str>,
    /// Where calls with an idempotency key are run once.
    ledger: Option<Arc<dyn Ledger>>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("allowed", &self.allowed)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server for the engine's registry.
    pub fn new(engine: Arc<ExecutionEngine>) -> Self {
        Self {
            engine,
            allowed: None,
            calls: Arc::new(AtomicU64::new(0)),
            clients: Arc::new(AtomicU64::new(0)),
            scope: Arc::new(OnceLock::new()),
            stateless: false,
            worker: Arc::from(""),
            ledger: None,
        }
    }

    /// Runs calls that carry an idempotency key
    /// (`params._meta["io.toolgate/idempotency-key"]`) through `ledger`,
    /// once among the workers sharing it. By default none: such calls run
    /// as any other.
    #[must_use]
    pub fn ledger(mut self, ledger: Option<Arc<dyn Ledger>>) -> Self {
        self.ledger = ledger;
        self
    }

    /// The server for a new client connection: the same tools and gate,
    /// approvals of its own.
    fn for_new_client(&self) -> Self {
        Self {
            scope: Arc::new(OnceLock::new()),
            ..self.clone()
        }
    }

    /// This connection's approval scope, named after the client's own name
    /// for itself (as it sent it at `initialize`) and its number here.
    fn scope(&self, peer: &Peer<RoleServer>) -> &ApprovalScope {
        self.scope.get_or_init(|| {
            let number = self.clients.fetch_add(1, Ordering::Relaxed) + 1;
            let name = peer.peer_info().map_or_else(
                || format!("MCP client #{number}"),
                |info| {
                    let name = toolgate_core::neutralize_line(&info.client_info.name);
                    format!("MCP client `{name}` #{number}")
                },
            );
            ApprovalScope::new(name)
        })
    }

    /// Serves only these tools. By default, every registered tool.
    #[must_use]
    pub fn allowed_tools(mut self, names: Option<Vec<String>>) -> Self {
        self.allowed = names.map(Arc::new);
        self
    }

    fn tools(&self, served: Option<&Served>) -> Vec<Arc<RegisteredTool>> {
        let (engine, allowed) = match served {
            Some(served) => (&served.engine, &served.allowed),
            None => (&self.engine, &self.allowed),
        };
        let registry = engine.registry();
        match allowed {
            None => registry.list(),
            Some(names) => registry.filter_by_names(names),
        }
    }

    fn is_allowed(&self, served: Option<&Served>, name: &str) -> bool {
        match served {
            Some(served) => served.is_allowed(name),
            None => self
                .allowed
                .as_ref()
                .is_none_or(|names| names.iter().any(|n| n == name)),
        }
    }

    /// The HTTP client a request came from, as the gateway identified it.
    fn served(context: &RequestContext<RoleServer>) -> Option<Arc<Served>> {
        context
            .extensions
            .get::<axum::http::request::Parts>()?
            .extensions
            .get::<Arc<Served>>()
            .cloned()
    }

    /// Serves one client on stdin/stdout until it disconnects.
    pub async fn serve_stdio(self) -> Result<(), Error> {
        let running = self
            .serve(stdio_transport())
            .await
            .map_err(|e| Error::Serve {
                what: "the stdio handshake failed".to_owned(),
                source: Box::new(e),
            })?;
        running.waiting().await.map_err(|e| Error::Serve {
            what: "the stdio session ended abnormally".to_owned(),
            source: Box::new(e),
        })?;
        Ok(())
    }

    /// Serves streamable HTTP at `http://ADDR/mcp` until `shutdown`
    /// resolves. With a `token`, every request must carry
    /// `Authorization: Bearer TOKEN`; an empty or blank token is refused
    /// ([`Error::EmptyToken`]) before anything listens. Requests must name a
    /// loopback `Host` unless `addr` is not a loopback address
    /// (DNS-rebinding protection). The other options are
    /// [`HttpOptions`]'s defaults.
    pub async fn serve_http(
        self,
        addr: SocketAddr,
        token: Option<String>,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), Error> {
        self.serve_http_with(addr, HttpOptions::new().token(token), shutdown, |_| {})
            .await
    }

    /// Serves streamable HTTP at `http://ADDR/mcp` as `options` say, calling
    /// `listening` with the bound address (the port chosen when `addr`'s is
    /// 0) once requests can be made.
    ///
    /// # Endpoints
    ///
    /// - `/mcp`: MCP. Each request is admitted by the rules of the
    ///   gateway (drain 503, token 401, limits 429).
    /// - `GET /healthz`: 200 while the process serves; no token needed.
    /// - `GET /readyz`: 200 when the worker should get traffic, else 503
    ///   with a one-line reason (draining, or the
    ///   [`Readiness`](crate::Readiness) check's); no token needed.
    ///
    /// # Shutdown
    ///
    /// When `shutdown` resolves the worker drains: `/readyz` and new MCP
    /// requests get 503 (with `Retry-After: 1`) at once, the requests in
    /// flight finish, for up to [`HttpOptions::drain_timeout`]; then
    /// whatever still runs is cancelled and this returns `Ok`.
    pub async fn serve_http_with(
        mut self,
        addr: SocketAddr,
        mut options: HttpOptions,
        shutdown: impl Future<Output = ()> + Send + 'static,
        listening: impl FnOnce(SocketAddr),
    ) -> Result<(), Error> {
        use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
        use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
        use rmcp::transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService,
        };
        let gateway = Arc::new(Gateway::new(
            &mut options,
            &self.engine,
            self.allowed.as_ref(),
        )?);
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Error::Serve {
                what: format!("could not listen on {addr}"),
                source: Box::new(e),
            })?;
        let bound = listener.local_addr().map_err(|e| Error::Serve {
            what: "could not read the bound address".to_owned(),
            source: Box::new(e),
        })?;
        tracing::info!("MCP server listening on http://{bound}/mcp");
        let sessions = options.sessions;
        let mut config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(sessions)
            .with_json_response(!sessions);
        if !addr.ip().is_loopback() {
            config = config.disable_allowed_hosts();
        }
        let cancel = config.cancellation_token.clone();
        self.stateless = !sessions;
        self.worker = Arc::from(worker_tag());
        let server = self;
        let mut router = if sessions {
            let service = StreamableHttpService::new(
                move || Ok(server.for_new_client()),
                Arc::new(LocalSessionManager::default()),
                config,
            );
            axum::Router::new()
                .nest_service("/mcp", service)
                .layer(axum::middleware::from_fn(http_guard::answer_discover))
                .layer(axum::middleware::from_fn(http_guard::answer_delete))
        } else {
            let service = StreamableHttpService::new(
                move || Ok(server.clone()),
                Arc::new(NeverSessionManager::default()),
                config,
            );
            axum::Router::new()
                .nest_service("/mcp", service)
                .layer(axum::middleware::from_fn(
                    http_guard::answer_stateless_delete,
                ))
        };
        // Outermost: nothing is read before the client is known and
        // admitted.
        router = router.layer(axum::middleware::from_fn({
            let gateway = Arc::clone(&gateway);
            move |request, next| gateway::admit(Arc::clone(&gateway), request, next)
        }));
        let router = router
            .route("/healthz", axum::routing::get(gateway::healthz))
            .route(
                "/readyz",
                axum::routing::get({
                    let gateway = Arc::clone(&gateway);
                    move || gateway::readyz(Arc::clone(&gateway))
                }),
            );
        let drain_timeout = options.drain_timeout;
        let drained = async move {
            shutdown.await;
            gateway.drain.start();
            tracing::info!(
                in_flight = gateway.drain.in_flight(),
                "draining: new requests get 503, calls in flight finish"
            );
            if tokio::time::timeout(drain_timeout, gateway.drain.idle())
                .await
                .is_err()
            {
                tracing::warn!(
                    in_flight = gateway.drain.in_flight(),
                    "drain timeout of {} s reached: the calls still in flight are cancelled",
                    drain_timeout.as_secs()
                );
            }
            cancel.cancel();
        };
        listening(bound);
        // Answers go out as soon as they are written: with Nagle's
        // algorithm on, a small answer after a small request waits for the
        // client's delayed ACK (about 40 ms on Linux) — most of a call's
        // latency through a load balancer.
        let listener = listener.tap_io(|tcp| {
            if let Err(error) = tcp.set_nodelay(true) {
                tracing::debug!("could not set TCP_NODELAY: {error}");
            }
        });
        axum::serve(listener, router)
            .with_graceful_shutdown(drained)
            .await
            .map_err(|e| Error::Serve {
                what: "the HTTP server failed".to_owned(),
                source: Box::new(e),
            })
    }
}

/// A short tag that tells this process's call ids from another worker's:
/// its process id and start time, in hex.
fn worker_tag() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{:x}{:05x}", std::process::id(), nanos & 0xf_ffff)
}

type BoxedRead = Box<dyn tokio::io::AsyncRead + Send + Unpin>;
type BoxedWrite = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;

/// stdin and stdout for the stdio transport. When they are pipes (as when an
/// MCP client spawns us) they are read and written as non-blocking pipes on
/// the runtime's reactor; tokio's `stdin()`/`stdout()` instead hand every
/// read and write to the blocking thread pool, a thread hop each way per
/// message that dominates a small call. Anything else (a terminal, a file)
/// falls back to tokio's handles. Framed by our [`LineTransport`].
fn stdio_transport() -> LineTransport<BoxedRead, BoxedWrite> {
    use std::os::fd::{AsFd, BorrowedFd};
    use tokio::net::unix::pipe;

    let dup = |fd: BorrowedFd<'_>| fd.try_clone_to_owned().ok().map(std::fs::File::from);
    let read: BoxedRead =
        match dup(std::io::stdin().as_fd()).and_then(|file| pipe::Receiver::from_file(file).ok()) {
            Some(pipe) => Box::new(pipe),
            None => Box::new(tokio::io::stdin()),
        };
    let write: BoxedWrite =
        match dup(std::io::stdout().as_fd()).and_then(|file| pipe::Sender::from_file(file).ok()) {
            Some(pipe) => Box::new(pipe),
            None => Box::new(tokio::io::stdout()),
        };
    LineTransport::new(read, write)
}

/// The MCP form of a tool: name, description, schema, annotations.
///
/// The four MCP hints are always sent, as toolgate reads the tool's own
/// declaration ([`ToolAnnotations`](toolgate_core::ToolAnnotations)): what
/// a tool leaves unsaid goes out as its safe reading (not read-only,
/// destructive, not idempotent, open world) rather than absent, so a client
/// that defaults differently from MCP still sees the careful answer.
/// toolgate's own kinds (writes files, runs commands) have no MCP form.
fn mcp_tool(entry: &RegisteredTool) -> rmcp::model::Tool {
    let spec = entry.spec();
    let schema = match &spec.parameters {
        Value::Object(map) => map.clone(),
        _ => serde_json::Map::new(),
    };
    let annotations = &spec.annotations;
    let mut hints = rmcp::model::ToolAnnotations::new();
    hints.title.clone_from(&annotations.title);
    hints.read_only_hint = Some(annotations.read_only());
    hints.destructive_hint = Some(annotations.destructive());
    hints.idempotent_hint = Some(annotations.idempotent());
    hints.open_world_hint = Some(annotations.open_world());
    rmcp::model::Tool::new(
        spec.name.clone(),
        spec.description.clone(),
        Arc::new(schema),
    )
    .with_annotations(hints)
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("toolgate", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(PROTOCOL)
            .with_instructions(
                "toolgate's tools. Every call goes through toolgate's gate: guardrails, hooks, \
                 confirmation and audit apply.",
            )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(if self.stateless {
            &STATELESS_PROTOCOL
        } else {
            &PROTOCOL
        }))
    }

    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        if !self.stateless {
            return Err(ErrorData::method_not_found::<DiscoverRequestMethod>());
        }
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let served = Self::served(&context);
        Ok(ListToolsResult {
            tools: self
                .tools(served.as_deref())
                .iter()
                .map(|t| mcp_tool(t))
                .collect(),
            ..ListToolsResult::default()
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        use tracing::Instrument as _;
        let name = request.name.to_string();
        let served = Self::served(&context);
        if !self.is_allowed(served.as_deref(), &name) {
            return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                "the tool `{name}` is not available to this client"
            ))])
            .into());
        }
        // rmcp moves a request's `_meta` to the context.
        let meta = request.meta.as_ref().unwrap_or(&context.meta);
        let key = match crate::once::idempotency_key(Some(meta)) {
            Ok(key) => key,
            Err(error) => return Ok(CallToolResult::error(vec![ContentBlock::text(error)]).into()),
        };
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let number = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let id = if self.stateless {
            format!("mcp-{}-{number}", self.worker)
        } else {
            format!("mcp-{number}")
        };
        let client = served.as_ref().and_then(|s| s.name.clone());
        let span = tracing::info_span!("mcp_call", call_id = %id, client = client.as_deref());
        let call = ToolCall::new(id, name, arguments);
        let engine = served.as_ref().map_or(&self.engine, |s| &s.engine);
        // Over stateless HTTP the client cannot be asked: no question can
        // reach it (the approver says so and how to allow); its approvals
        // are the gateway's scope for it.
        let stateless = served.as_ref().filter(|_| self.stateless);
        let scope = match stateless {
            Some(served) => &served.scope,
            None => self.scope(&context.peer),
        };
        let ledger = self.ledger.as_ref().zip(key);
        let run = async {
            match &ledger {
                Some((ledger, key)) => {
                    let once = ledger.execute(engine, call, key, scope).await;
                    (once.result, once.retryable)
                }
                None => (engine.execute_in(call, scope).await.result, false),
            }
        }
        .instrument(span);
        // Elicitation asks the client of this connection, when it has one.
        let (result, retry) = match stateless {
            Some(_) => run.await,
            None => CLIENT.scope(context.peer.clone(), run).await,
        };
        if stateless.is_some() {
            // A worker behind a load balancer may be killed right after
            // answering: the call's audit record is kept first.
            engine.audit_settled().await;
        }
        let content = if result.success {
            vec![ContentBlock::text(result.output)]
        } else {
            let mut text = result.error.unwrap_or_default();
            if !result.output.is_empty() {
                text = format!("{}\n{text}", result.output);
            }
            vec![ContentBlock::text(text)]
        };
        let result = if result.success {
            CallToolResult::success(content)
        } else {
            CallToolResult::error(content)
        };
        Ok(if retry {
            crate::once::retryable(result)
        } else {
            result
        }
        .into())
    }
}

/// The longest elicitation message sent: a client shows it whole.
const MAX_ELICITATION: usize = 256 * 1024;

/// Asks the MCP client that made the call, by elicitation (a yes/no form),
/// when the client declared the `elicitation` capability. Otherwise the call
/// fails with a message saying how to allow it.
#[derive(Debug, Clone)]
pub struct ElicitationApprover {
    hint: String,
}

impl ElicitationApprover {
    /// An approver whose refusals (client without elicitation) carry `hint`.
    pub fn new(hint: impl Into<String>) -> Self {
        Self { hint: hint.into() }
    }
}

impl Default for ElicitationApprover {
    fn default() -> Self {
        Self::new(
            "this call needs confirmation and the MCP client cannot be asked: it does not \
             support elicitation, or it is served over stateless HTTP, where no question can \
             reach it; restart `toolgate mcp serve` with `--mode yolo` (or give the client a \
             `mode` in `mcp.http.clients`) to allow such calls, answer them in the web UI \
             (`--approver ui`), or use a client that supports elicitation (over HTTP with \
             `--sessions`)",
        )
    }
}

#[async_trait]
impl Approver for ElicitationApprover {
    fn kind(&self) -> &'static str {
        "elicitation"
    }

    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval {
        let Ok(peer) = CLIENT.try_with(Clone::clone) else {
            return Approval::Unavailable(self.hint.clone());
        };
        if !peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            return Approval::Unavailable(self.hint.clone());
        }
        // The whole view, never a part: a client shows the message as it is,
        // and an approval must not be asked on a view that hides what runs.
        let message = request.view.text();
        if message.len() > MAX_ELICITATION {
            return Approval::Unavailable(format!(
                "what this call would do takes {} bytes to show, more than an elicitation \
                 message should carry ({MAX_ELICITATION}); answer it in the web UI \
                 (`--approver ui`) instead",
                message.len()
            ));
        }
        let params: ElicitRequestParams = match serde_json::from_value(serde_json::json!({
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "allow_for_session": {
                        "type": "boolean",
                        "title": "Allow this tool for the rest of the session",
                        "default": false
                    }
                }
            }
        })) {
            Ok(params) => params,
            Err(error) => {
                return Approval::Unavailable(format!("could not build the elicitation: {error}"));
            }
        };
        match peer.create_elicitation(params).await {
            Ok(answer) => match answer.action {
                ElicitationAction::Accept => {
                    let session = answer
                        .content
                        .as_ref()
                        .and_then(|c| c.get("allow_for_session"))
                        .and_then(Value::as_bool)
                        .unwrap_or(false);
                    if session {
                        Approval::AllowForSession
                    } else {
                        Approval::Allow
                    }
                }
                _ => Approval::Deny,
            },
            Err(error) => Approval::Unavailable(format!(
                "the MCP client could not be asked for confirmation ({error}); {}",
                self.hint
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn serve_http_refuses_an_empty_token() {
        for token in ["", "  ", "\t\n"] {
            let engine = ExecutionEngine::builder(Arc::new(toolgate_core::Registry::new())).build();
            let served = McpServer::new(Arc::new(engine))
                .serve_http(
                    "127.0.0.1:0".parse().expect("an address"),
                    Some(token.to_owned()),
                    async {},
                )
                .await;
            assert!(
                matches!(served, Err(Error::EmptyToken)),
                "{token:?}: {served:?}"
            );
        }
    }
}
