//! Remote MCP tools as local tools: [`McpManager`] and the tool adapter.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{Peer, ServiceExt};
use serde::Serialize;
use serde_json::Value;
use tokio::io::AsyncBufReadExt;
use toolgate_core::{
    Registry, Sensitivity, Tool, ToolAnnotations, ToolContext, ToolOrigin, ToolResult, error_chain,
};
use toolgate_sandbox::{Lease, Sandbox, Spawn};

use crate::config::{McpConfig, McpServerConfig};
use crate::error::Error;
use crate::names::local_name;

type Client = RunningService<RoleClient, ()>;

/// How a configured server ended up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "reason")]
#[non_exhaustive]
pub enum ServerState {
    /// Connected; its tools are registered.
    Connected,
    /// It could not be started; its tools are missing (fail-open).
    Failed(String),
    /// `enabled: false` in the configuration.
    Disabled,
}

/// A configured server, its state and the local names of its tools.
#[derive(Debug, Clone, Serialize)]
pub struct ServerStatus {
    /// The server's name in the configuration.
    pub name: String,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// Whether it is connected.
    #[serde(flatten)]
    pub state: ServerState,
    /// `(local name, remote name)` of each registered tool, sorted.
    pub tools: Vec<(String, String)>,
}

/// Connects to the configured MCP servers and registers their tools.
///
/// Servers start concurrently, each within its `startup_timeout`. A server
/// that fails is skipped with a `tracing` warning and reported in its
/// [`ServerStatus`] (fail-open): the other servers and the built-in tools
/// still work. Call [`shutdown`](McpManager::shutdown) before exit so server
/// processes are stopped cleanly; dropping the manager also kills them.
pub struct McpManager {
    registry: Arc<Registry>,
    sandbox: Sandbox,
    connections: Mutex<BTreeMap<String, Arc<Connection>>>,
    tool_names: Mutex<Vec<String>>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpManager")
            .field("tools", &self.tool_names())
            .finish_non_exhaustive()
    }
}

impl McpManager {
    /// A manager that registers remote tools into `registry` and starts
    /// stdio servers in `sandbox` (the standard profile, in the workspace,
    /// with the server's `env`, `readable` and `writable` added).
    pub fn new(registry: Arc<Registry>, sandbox: Sandbox) -> Arc<Self> {
        Arc::new(Self {
            registry,
            sandbox,
            connections: Mutex::new(BTreeMap::new()),
            tool_names: Mutex::new(Vec::new()),
        })
    }

    /// Starts every enabled server of `config` concurrently and registers
    /// their tools. Never fails: see each server's [`ServerStatus`].
    pub async fn start(&self, config: &McpConfig) -> Vec<ServerStatus> {
        let starts = config.servers.iter().map(|(name, server)| async move {
            if !server.enabled {
                return Err(ServerStatus {
                    name: name.clone(),
                    transport: transport_name(server),
                    state: ServerState::Disabled,
                    tools: Vec::new(),
                });
            }
            Ok((
                name.clone(),
                server.clone(),
                start(&self.sandbox, name, server).await,
            ))
        });
        let results = futures_util::future::join_all(starts).await;
        let mut statuses = Vec::new();
        for result in results {
            match result {
                Err(status) => statuses.push(status),
                Ok((name, server, started)) => {
                    statuses.push(self.settle(&name, server, started));
                }
            }
        }
        statuses
    }

    /// Connects one more server at run time and registers its tools.
    pub async fn add(&self, name: &str, server: McpServerConfig) -> ServerStatus {
        let started = start(&self.sandbox, name, &server).await;
        self.settle(name, server, started)
    }

    fn settle(
        &self,
        name: &str,
        server: McpServerConfig,
        started: Result<Started, Error>,
    ) -> ServerStatus {
        let transport = transport_name(&server);
        match started {
            Err(error) => {
                let reason = error_chain(&error);
                tracing::info!("MCP server `{name}` skipped: {reason}");
                ServerStatus {
                    name: name.to_owned(),
                    transport,
                    state: ServerState::Failed(reason),
                    tools: Vec::new(),
                }
            }
            Ok(started) => {
                let tools = self.register(name, server, started);
                ServerStatus {
                    name: name.to_owned(),
                    transport,
                    state: ServerState::Connected,
                    tools,
                }
            }
        }
    }

    fn register(
        &self,
        name: &str,
        server: McpServerConfig,
        started: Started,
    ) -> Vec<(String, String)> {
        let Started {
            client,
            lease,
            tools: remote_tools,
        } = started;
        let connection = Arc::new(Connection {
            name: name.to_owned(),
            config: server,
            sandbox: self.sandbox.clone(),
            client: tokio::sync::Mutex::new(Some((client, lease))),
            restarted: AtomicBool::new(false),
        });
        let mut taken: HashSet<String> = self
            .registry
            .list()
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        let mut registered = Vec::new();
        for remote in remote_tools {
            let remote_name = remote.name.to_string();
            if !connection.config.tool_enabled(&remote_name) {
                continue;
            }
            let local = local_name(name, &remote_name, &taken);
            let tool = RemoteTool::new(local.clone(), &remote, Arc::clone(&connection));
            match self.registry.register(tool) {
                Ok(()) => {
                    taken.insert(local.clone());
                    registered.push((local, remote_name));
                }
                Err(error) => {
                    tracing::warn!("MCP server `{name}`: tool `{remote_name}` skipped: {error}");
                }
            }
        }
        registered.sort();
        self.tool_names
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(registered.iter().map(|(local, _)| local.clone()));
        let previous = self
            .connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_owned(), connection);
        if let Some(previous) = previous {
            tokio::spawn(async move { previous.close().await });
        }
        registered
    }

    /// The local names of every registered remote tool, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        let mut names = self
            .tool_names
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        names.sort();
        names
    }

    /// Whether a server of that name is connected.
    pub fn has_server(&self, name: &str) -> bool {
        self.connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(name)
    }

    /// Closes every connection: stdio servers get their stdin closed and are
    /// waited for briefly, then killed.
    pub async fn shutdown(&self) {
        let connections: Vec<_> = std::mem::take(
            &mut *self
                .connections
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
        .into_values()
        .collect();
        futures_util::future::join_all(connections.iter().map(|c| c.close())).await;
    }
}

/// A program that exists but cannot be found inside the sandbox is hidden
/// by it (it lives under a home directory or `/tmp`): say what to do.
fn hidden_hint(name: &str, command: &str, error: std::io::Error) -> std::io::Error {
    let exists = Path::new(command).is_absolute() && Path::new(command).exists();
    if error.kind() == std::io::ErrorKind::NotFound && exists {
        return std::io::Error::new(
            error.kind(),
            format!(
                "{error}; the sandbox hides where it is installed: add that directory to \
                 `mcp.servers.{name}.readable`"
            ),
        );
    }
    error
}

fn transport_name(server: &McpServerConfig) -> &'static str {
    if server.url.is_some() {
        "http"
    } else {
        "stdio"
    }
}

/// A connected server: the client, what its process holds, its tools.
struct Started {
    client: Client,
    lease: Lease,
    tools: Vec<rmcp::model::Tool>,
}

/// Connects and lists the tools, within the startup timeout.
async fn start(sandbox: &Sandbox, name: &str, server: &McpServerConfig) -> Result<Started, Error> {
    let timeout = server.startup_timeout();
    let work = async {
        let (client, lease) = connect(sandbox, name, server).await?;
        let tools = client
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| Error::Protocol {
                server: name.to_owned(),
                stage: "tools/list",
                source: Box::new(e),
            })?;
        Ok(Started {
            client,
            lease,
            tools,
        })
    };
    match tokio::time::timeout(timeout, work).await {
        Ok(result) => result,
        Err(_) => Err(Error::StartupTimeout {
            server: name.to_owned(),
            seconds: timeout.as_secs(),
        }),
    }
}

async fn connect(
    sandbox: &Sandbox,
    name: &str,
    server: &McpServerConfig,
) -> Result<(Client, Lease), Error> {
    let config_error = |reason: &str| Error::Config {
        server: name.to_owned(),
        reason: reason.to_owned(),
    };
    let protocol = |e: rmcp::service::ClientInitializeError| Error::Protocol {
        server: name.to_owned(),
        stage: "initialize",
        source: match http_failure(&e) {
            Some(cause) => format!("{e}: {cause}").into(),
            None => Box::new(e),
        },
    };
    match (&server.command, &server.url) {
        (Some(_), Some(_)) => Err(config_error(
            "set either `command` (stdio) or `url` (streamable HTTP), not both",
        )),
        (None, None) => Err(config_error(
            "set `command` (stdio) or `url` (streamable HTTP)",
        )),
        (Some(command), None) => {
            // Like every process toolgate starts: the sandbox's standard
            // profile (which also ties it to toolgate's life), a built
            // environment plus the server's own `env`.
            let spawn = Spawn::program(command, &server.args)
                .envs(server.env.iter().map(|(k, v)| (k.clone(), v.clone())))
                .readable(server.readable.iter().map(PathBuf::from))
                .writable(server.writable.iter().map(PathBuf::from));
            let (cmd, lease) = sandbox
                .prepare(&spawn)
                .map_err(|source| Error::Spawn {
                    server: name.to_owned(),
                    command: command.clone(),
                    source: std::io::Error::other(error_chain(&source)),
                })?
                .into_parts();
            let (transport, stderr) = TokioChildProcess::builder(cmd)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|source| Error::Spawn {
                    server: name.to_owned(),
                    command: command.clone(),
                    source: hidden_hint(name, command, source),
                })?;
            if let Some(stderr) = stderr {
                // The server's own diagnostics: kept out of our stdout, shown
                // with `-vv`.
                let server_name = name.to_owned();
                tokio::spawn(async move {
                    let mut lines = tokio::io::BufReader::new(stderr).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        tracing::debug!(server = %server_name, "{line}");
                    }
                });
            }
            let client = ().serve(transport).await.map_err(protocol)?;
            Ok((client, lease))
        }
        (None, Some(url)) => {
            if !url.starts_with("https://") && !url.starts_with("http://") {
                return Err(config_error(
                    "`url` must start with `https://` or `http://`",
                ));
            }
            if server.ca_cert.is_some() && !url.starts_with("https://") {
                return Err(config_error(
                    "`ca_cert` is for an `https://` url; remove it or use https",
                ));
            }
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            if let Some(var) = &server.token_env {
                let token = std::env::var(var).map_err(|_| {
                    config_error(&format!(
                        "`token_env` names `{var}`, which is not set; export it or remove `token_env`"
                    ))
                })?;
                config = config.auth_header(token);
            }
            let client = http_client(server).map_err(|e| config_error(&e))?;
            let transport = StreamableHttpClientTransport::with_client(client, config);
            let client = ().serve(transport).await.map_err(protocol)?;
            Ok((client, Lease::empty()))
        }
    }
}

/// Why an HTTP request failed, from the reqwest error that rmcp's
/// `initialize` error holds but does not chain as its source (so a refused
/// certificate would otherwise read as just "error sending request").
fn http_failure(error: &rmcp::service::ClientInitializeError) -> Option<String> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let rmcp::service::ClientInitializeError::TransportError { error, .. } = error else {
        return None;
    };
    match error
        .error
        .downcast_ref::<StreamableHttpError<reqwest::Error>>()?
    {
        StreamableHttpError::Client(e) => {
            let chain = error_chain(e);
            // The first link is rmcp's message already.
            let cause = chain
                .split_once(": ")
                .map_or(chain.as_str(), |(_, rest)| rest);
            Some(if cause.contains("certificate") {
                format!(
                    "{cause} (for a private or self-signed CA, name its PEM file in the server's `ca_cert`)"
                )
            } else {
                cause.to_owned()
            })
        }
        _ => None,
    }
}

/// The HTTP client for one server: TLS through rustls with the system's
/// certificate authorities plus the server's `ca_cert`; no redirects
/// followed, so a bearer token never goes anywhere but `url`; no idle
/// connections kept (as rmcp's own client).
fn http_client(server: &McpServerConfig) -> Result<reqwest::Client, String> {
    // reqwest is built with rustls but without a default crypto provider
    // (toolgate-agent's choice too); its client constructor panics unless
    // one is installed. A second install is a no-op.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .redirect(reqwest::redirect::Policy::none());
    if let Some(path) = &server.ca_cert {
        let pem =
            std::fs::read(path).map_err(|e| format!("`ca_cert` `{path}` cannot be read: {e}"))?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| format!("`ca_cert` `{path}` is not a PEM certificate file: {e}"))?;
        if certs.is_empty() {
            return Err(format!(
                "`ca_cert` `{path}` holds no certificate; give a PEM file with `BEGIN CERTIFICATE` blocks"
            ));
        }
        builder = builder.tls_certs_merge(certs);
    }
    builder
        .build()
        .map_err(|e| format!("cannot build the HTTPS client: {}", error_chain(&e)))
}

/// One connected server, shared by its tools.
struct Connection {
    name: String,
    config: McpServerConfig,
    sandbox: Sandbox,
    /// The client, and what its server process holds (placeholders of the
    /// sandbox) for as long as it runs.
    client: tokio::sync::Mutex<Option<(Client, Lease)>>,
    restarted: AtomicBool,
}

impl Connection {
    async fn peer(&self) -> Option<Peer<RoleClient>> {
        let client = self.client.lock().await;
        client
            .as_ref()
            .map(|(c, _)| c)
            .filter(|c| !c.is_closed() && !c.peer().is_transport_closed())
            .map(|c| c.peer().clone())
    }

    /// Reconnects, once in the connection's life.
    async fn restart(&self) -> Result<Peer<RoleClient>, String> {
        if self.restarted.swap(true, Ordering::SeqCst) {
            return Err(format!(
                "the MCP server `{}` stopped and was already restarted once; restart toolgate",
                self.name
            ));
        }
        tracing::warn!("MCP server `{}` stopped; restarting it", self.name);
        let mut slot = self.client.lock().await;
        if let Some((mut old, _lease)) = slot.take() {
            let _ = old.close_with_timeout(Duration::from_secs(1)).await;
        }
        match start(&self.sandbox, &self.name, &self.config).await {
            Ok(started) => {
                let peer = started.client.peer().clone();
                *slot = Some((started.client, started.lease));
                Ok(peer)
            }
            Err(error) => Err(format!(
                "the MCP server `{}` stopped and could not be restarted: {}",
                self.name,
                error_chain(&error)
            )),
        }
    }

    async fn call(&self, tool: &str, args: Value) -> ToolResult {
        let arguments = match args {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let peer = match self.peer().await {
            Some(peer) => peer,
            None => match self.restart().await {
                Ok(peer) => peer,
                Err(message) => return ToolResult::failure(message),
            },
        };
        let timeout = self.config.call_timeout();
        let first = tokio::time::timeout(timeout, peer.call_tool(params.clone())).await;
        let outcome = match first {
            Ok(Err(ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                match self.restart().await {
                    Ok(peer) => tokio::time::timeout(timeout, peer.call_tool(params)).await,
                    Err(message) => return ToolResult::failure(message),
                }
            }
            other => other,
        };
        match outcome {
            Ok(Ok(result)) => result_to_tool_result(&result),
            Ok(Err(error)) => ToolResult::failure(format!(
                "the MCP server `{}` failed the call: {}",
                self.name,
                error_chain(&error)
            )),
            Err(_) => ToolResult::failure(format!(
                "the MCP server `{}` did not answer within {} s (raise `call_timeout`)",
                self.name,
                timeout.as_secs()
            )),
        }
    }

    async fn close(&self) {
        if let Some((mut client, _lease)) = self.client.lock().await.take() {
            let _ = client.close_with_timeout(Duration::from_secs(2)).await;
        }
    }
}

/// Turns an MCP tool result into ours: text parts joined by newlines, other
/// parts described, `isError: true` a failure.
pub(crate) fn result_to_tool_result(result: &CallToolResult) -> ToolResult {
    let mut parts = Vec::new();
    for block in &result.content {
        let Ok(value) = serde_json::to_value(block) else {
            continue;
        };
        parts.push(describe_content(&value));
    }
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    let text = parts.join("\n");
    if result.is_error == Some(true) {
        ToolResult::failure(if text.is_empty() {
            "the MCP tool reported an error".to_owned()
        } else {
            text
        })
    } else {
        ToolResult::success(text)
    }
}

fn describe_content(value: &Value) -> String {
    let field = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
    match value.get("type").and_then(Value::as_str) {
        Some("text") => field(value, "text"),
        Some("image") => format!(
            "[image: {}, {} bytes of base64]",
            field(value, "mimeType"),
            field(value, "data").len()
        ),
        Some("audio") => format!(
            "[audio: {}, {} bytes of base64]",
            field(value, "mimeType"),
            field(value, "data").len()
        ),
        Some("resource") => {
            let resource = value.get("resource").cloned().unwrap_or_default();
            let uri = field(&resource, "uri");
            match resource.get("text").and_then(Value::as_str) {
                Some(text) => format!("[resource {uri}]\n{text}"),
                None => format!("[resource {uri}: {} binary]", field(&resource, "mimeType")),
            }
        }
        Some("resource_link") => {
            format!(
                "[resource link: {} ({})]",
                field(value, "uri"),
                field(value, "name")
            )
        }
        _ => value.to_string(),
    }
}

/// A remote tool used as a local one.
struct RemoteTool {
    local: String,
    remote: String,
    description: String,
    schema: Value,
    sensitivity: Sensitivity,
    annotations: ToolAnnotations,
    connection: Arc<Connection>,
}

impl RemoteTool {
    fn new(local: String, remote: &rmcp::model::Tool, connection: Arc<Connection>) -> Self {
        let sensitivity = if connection.config.trusted {
            Sensitivity::ReadOnly
        } else {
            Sensitivity::Sensitive
        };
        let description = remote
            .description
            .as_deref()
            .filter(|d| !d.trim().is_empty())
            .map_or_else(
                || {
                    format!(
                        "The tool `{}` of the MCP server `{}`.",
                        remote.name, connection.name
                    )
                },
                str::to_owned,
            );
        let annotations = declared(remote, connection.config.trusted);
        Self {
            local,
            remote: remote.name.to_string(),
            description,
            schema: Value::Object((*remote.input_schema).clone()),
            sensitivity,
            annotations,
            connection,
        }
    }
}

/// What a remote tool declares about its calls, as toolgate's
/// [`ToolAnnotations`].
///
/// # Rules
///
/// 1. MCP's hints (`readOnlyHint`, `destructiveHint`, `idempotentHint`,
///    `openWorldHint`) are the server's word. A server the configuration
///    trusts is taken at its word, hint by hint.
/// 2. A server it does not trust is not: its tools are read the safe way
///    whatever they say (not read-only, destructive, not idempotent, open
///    world), so a hint can never earn an untrusted tool a place among a
///    read-only agent's tools.
/// 3. A hint the server leaves out is read the safe way, MCP's own
///    default: a tool without `readOnlyHint: true` is not read-only, one
///    without `destructiveHint: false` is destructive, one without
///    `openWorldHint: false` reaches the open world.
/// 4. No MCP hint says a tool writes workspace files or runs command
///    lines, so a remote tool declares neither; what one call does is
///    [`Effects::Opaque`](toolgate_core::Effects::Opaque).
/// 5. The title is the annotations' title, else the tool's.
fn declared(remote: &rmcp::model::Tool, trusted: bool) -> ToolAnnotations {
    let hints = remote.annotations.as_ref().filter(|_| trusted);
    let said = ToolAnnotations {
        read_only_hint: hints.and_then(|h| h.read_only_hint),
        destructive_hint: hints.and_then(|h| h.destructive_hint),
        idempotent_hint: hints.and_then(|h| h.idempotent_hint),
        open_world_hint: hints.and_then(|h| h.open_world_hint),
        ..ToolAnnotations::default()
    };
    ToolAnnotations {
        title: remote
            .annotations
            .as_ref()
            .and_then(|a| a.title.clone())
            .or_else(|| remote.title.clone()),
        read_only_hint: Some(said.read_only()),
        destructive_hint: Some(said.destructive()),
        idempotent_hint: Some(said.idempotent()),
        open_world_hint: Some(said.open_world()),
        ..ToolAnnotations::default()
    }
}

#[async_trait]
impl Tool for RemoteTool {
    fn name(&self) -> &str {
        &self.local
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn args_schema(&self) -> Value {
        self.schema.clone()
    }

    fn sensitivity(&self, _args: &Value) -> Sensitivity {
        self.sensitivity
    }

    fn annotations(&self) -> ToolAnnotations {
        self.annotations.clone()
    }

    fn origin(&self) -> ToolOrigin {
        ToolOrigin::Mcp {
            server: self.connection.name.clone(),
            tool: self.remote.clone(),
        }
    }

    fn timeout(&self) -> Option<Duration> {
        // The connection enforces `call_timeout` itself; give the gate a
        // little more so our message, not the gate's, reports it.
        Some(self.connection.config.call_timeout() + Duration::from_secs(5))
    }

    async fn execute(&self, args: Value, _ctx: &ToolContext) -> ToolResult {
        self.connection.call(&self.remote, args).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_hints_become_declared_kinds_the_safe_way() {
        use rmcp::model::ToolAnnotations as Hints;
        let tool = |hints: Option<Hints>| {
            let tool = rmcp::model::Tool::new("t", "d", serde_json::Map::new());
            match hints {
                Some(hints) => tool.with_annotations(hints),
                None => tool,
            }
        };
        let reader = Hints::from_raw(None, Some(true), None, Some(true), Some(false));
        let mender = Hints::from_raw(None, Some(false), Some(false), None, None);
        // (hints, trusted, (read_only, destructive, idempotent, open_world))
        let safe = (false, true, false, true);
        let cases = [
            (None, true, safe),
            (Some(Hints::new()), true, safe),
            (Some(reader.clone()), true, (true, false, true, false)),
            (Some(mender.clone()), true, (false, false, false, true)),
            // An untrusted server is not taken at its word.
            (Some(reader), false, safe),
            (Some(mender), false, safe),
            (None, false, safe),
        ];
        for (hints, trusted, want) in cases {
            let declared = declared(&tool(hints.clone()), trusted);
            let got = (
                declared.read_only(),
                declared.destructive(),
                declared.idempotent(),
                declared.open_world(),
            );
            assert_eq!(got, want, "{hints:?} trusted={trusted}");
            assert!(!declared.writes_files && !declared.runs_commands);
        }
        let titled = tool(Some(Hints::with_title("Read it")));
        assert_eq!(declared(&titled, false).title.as_deref(), Some("Read it"));
    }

    #[test]
    fn content_is_turned_into_text() {
        let result: CallToolResult = serde_json::from_value(serde_json::json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a", "text": "body"}},
                {"type": "resource_link", "uri": "file:///b", "name": "b"}
            ]
        }))
        .unwrap();
        let out = result_to_tool_result(&result);
        assert!(out.success);
        assert_eq!(
            out.output,
            "hello\n[image: image/png, 4 bytes of base64]\n[resource file:///a]\nbody\n[resource link: file:///b (b)]"
        );
        let failed: CallToolResult = serde_json::from_value(serde_json::json!({
            "content": [{"type": "text", "text": "no such file"}], "isError": true
        }))
        .unwrap();
        let out = result_to_tool_result(&failed);
        assert!(!out.success);
        assert_eq!(out.error.as_deref(), Some("no such file"));
    }
}
