//! The registry served to MCP clients: [`McpServer`].

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
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
use crate::http_guard;
use crate::stdio::LineTransport;

/// The newest protocol revision we speak: the last one with the
/// `initialize` handshake, which every current peer negotiates.
const PROTOCOL: ProtocolVersion = ProtocolVersion::V_2025_11_25;

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
/// Each client connection (a stdio client, each streamable HTTP session)
/// has its own [`ApprovalScope`]: "allow for the session" given by one
/// client covers that client's later calls only, and one client's open
/// question never holds up another client's calls. A stateless HTTP
/// request (no session) is a client of its own.
///
/// # Protocol
///
/// Protocol versions up to 2025-11-25 with the `initialize` handshake. A
/// `server/discover` probe (the 2026-07-28 opener that the Python SDK 2.x
/// tries first) is answered with JSON-RPC -32601, over stdio by the
/// handler and over HTTP before rmcp sees it, and the connection stays open,
/// so the client falls back to `initialize`.
#[derive(Clone)]
pub struct McpServer {
    engine: Arc<ExecutionEngine>,
    allowed: Option<Arc<Vec<String>>>,
    calls: Arc<AtomicU64>,
    /// Client connections served so far (numbers the scopes).
    clients: Arc<AtomicU64>,
    /// This connection's approvals, named once the client is known.
    scope: Arc<OnceLock<ApprovalScope>>,
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

    fn tools(&self) -> Vec<Arc<RegisteredTool>> {
        let registry = self.engine.registry();
        match &self.allowed {
            None => registry.list(),
            Some(names) => registry.filter_by_names(names),
        }
    }

    fn is_allowed(&self, name: &str) -> bool {
        self.allowed
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == name))
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
    /// (DNS-rebinding protection).
    pub async fn serve_http(
        self,
        addr: SocketAddr,
        token: Option<String>,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), Error> {
        self.serve_http_announced(addr, token, shutdown, |_| {})
            .await
    }

    /// [`McpServer::serve_http`], calling `listening` with the bound
    /// address (the port chosen when `addr`'s is 0) once requests can be
    /// made: a front end says where it listens.
    pub async fn serve_http_announced(
        self,
        addr: SocketAddr,
        token: Option<String>,
        shutdown: impl Future<Output = ()> + Send + 'static,
        listening: impl FnOnce(SocketAddr),
    ) -> Result<(), Error> {
        use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
        use rmcp::transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService,
        };
        if token.as_deref().is_some_and(|t| t.trim().is_empty()) {
            return Err(Error::EmptyToken);
        }
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
        let mut config = StreamableHttpServerConfig::default();
        if !addr.ip().is_loopback() {
            config = config.disable_allowed_hosts();
        }
        let server = self;
        let service = StreamableHttpService::new(
            move || Ok(server.for_new_client()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let mut router = axum::Router::new()
            .nest_service("/mcp", service)
            .layer(axum::middleware::from_fn(http_guard::answer_discover))
            .layer(axum::middleware::from_fn(http_guard::answer_delete));
        if let Some(token) = token.map(Arc::new) {
            // Outermost: nothing is read before the token is checked.
            router = router.layer(axum::middleware::from_fn(move |request, next| {
                http_guard::require_token(Arc::clone(&token), request, next)
            }));
        }
        listening(bound);
        axum::serve(listener, router)
            .with_graceful_shutdown(shutdown)
            .await
            .map_err(|e| Error::Serve {
                what: "the HTTP server failed".to_owned(),
                source: Box::new(e),
            })
    }
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
        Cow::Borrowed(ProtocolVersion::known_up_to(&PROTOCOL))
    }

    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        Err(ErrorData::method_not_found::<DiscoverRequestMethod>())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult {
            tools: self.tools().iter().map(|t| mcp_tool(t)).collect(),
            ..ListToolsResult::default()
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if !self.is_allowed(&name) {
            return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                "the tool `{name}` is not available to this agent"
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
        let id = format!("mcp-{}", self.calls.fetch_add(1, Ordering::Relaxed) + 1);
        let call = ToolCall::new(id, name, arguments);
        let scope = self.scope(&context.peer);
        let (result, retry) = if let (Some(ledger), Some(key)) = (&self.ledger, key) {
            let once = ledger.execute(&self.engine, call, &key, scope);
            let once = CLIENT.scope(context.peer.clone(), once).await;
            (once.result, once.retryable)
        } else {
            let run = self.engine.execute_in(call, scope);
            (CLIENT.scope(context.peer.clone(), run).await.result, false)
        };
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
            "this call needs confirmation and the MCP client does not support elicitation; \
             restart `toolgate mcp serve` with `--mode yolo` to allow such calls, \
             or use a client that supports elicitation",
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
