//! A small MCP client over streamable HTTP, written for load: the gateway
//! test runs 64 of them at once and must see every failure as it is (a
//! refused connection, a 502 from the load balancer, a 503 from a draining
//! worker, an unknown session), so that it can retry what may be retried.
//! The official SDKs hide those behind their own reconnect logic.
//!
//! It speaks the 2025-11-25 protocol: `initialize`, then every request with
//! the `Mcp-Session-Id` the server gave (none when the server gives none, as
//! a stateless one may). An answer may come as JSON or as an event stream;
//! the stream is read only until the answer with the request's id, so a
//! server that keeps it open costs nothing.

use std::time::Duration;

use serde_json::{Value, json};

/// The protocol version sent in `initialize` and on every request.
pub(crate) const PROTOCOL: &str = "2025-11-25";
/// Where `_meta` carries an idempotency key (issue 30).
pub(crate) const IDEMPOTENCY_KEY: &str = "io.toolgate/idempotency-key";
/// The `_meta` flag of a result the client should retry (issue 30).
pub(crate) const RETRYABLE: &str = "io.toolgate/retryable";

/// Why a request got no answer.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The connection failed or broke (nothing, or half an answer, came).
    Transport(String),
    /// An HTTP status other than 200/202, with the body's start.
    Status(u16, String),
    /// A JSON-RPC error answer.
    Rpc(Value),
    /// Something that is not MCP came back.
    Protocol(String),
}

impl Failure {
    /// Whether the same request may simply be sent again: the connection
    /// failed, the load balancer found no worker (502, 504), or a worker
    /// refused it while draining (503).
    pub(crate) fn is_retryable(&self) -> bool {
        matches!(self, Self::Transport(_) | Self::Status(502..=504, _))
    }

    /// Whether the server does not know the session (a worker that kept
    /// it in memory died): a new session is needed.
    pub(crate) fn is_lost_session(&self) -> bool {
        matches!(self, Self::Status(404, _))
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Transport(e) => write!(f, "transport: {e}"),
            Self::Status(code, body) => write!(f, "HTTP {code}: {body}"),
            Self::Rpc(error) => write!(f, "JSON-RPC error: {error}"),
            Self::Protocol(what) => write!(f, "protocol: {what}"),
        }
    }
}

/// An answer, and which worker gave it when the load balancer says so
/// (`X-Toolgate-Worker`, set by docs/deployment.md's `HAProxy` example).
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub(crate) result: Value,
    pub(crate) worker: Option<String>,
}

impl Answer {
    /// The text content of a `tools/call` result.
    pub(crate) fn text(&self) -> String {
        self.result["content"]
            .as_array()
            .map(|parts| {
                parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default()
    }

    pub(crate) fn is_error(&self) -> bool {
        self.result["isError"] == true
    }

    /// Whether the result asks to be retried.
    pub(crate) fn is_retryable(&self) -> bool {
        self.result["_meta"][RETRYABLE] == true
    }
}

/// One MCP client connection: a session on the server (when it keeps one).
pub(crate) struct Mcp {
    http: reqwest::Client,
    url: String,
    token: String,
    session: Option<String>,
    next_id: u64,
}

impl Mcp {
    /// An HTTP client for many [`Mcp`]s: keep-alive connections, and a
    /// timeout per request long enough for a call to wait for its approval.
    /// (It installs rustls' provider, which reqwest needs even for plain
    /// HTTP in this build.)
    pub(crate) fn http_client(timeout: Duration) -> reqwest::Client {
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::builder()
            .timeout(timeout)
            .pool_max_idle_per_host(256)
            .no_proxy()
            .build()
            .unwrap()
    }

    /// Connects: `initialize`, then `notifications/initialized`.
    pub(crate) async fn connect(
        http: &reqwest::Client,
        url: &str,
        token: &str,
    ) -> Result<Self, Failure> {
        let mut mcp = Self {
            http: http.clone(),
            url: url.to_owned(),
            token: token.to_owned(),
            session: None,
            next_id: 0,
        };
        mcp.request(
            "initialize",
            json!({
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "toolgate-gateway-test", "version": "1"},
            }),
        )
        .await?;
        mcp.notify("notifications/initialized").await?;
        Ok(mcp)
    }

    /// `tools/call NAME ARGS`, with `_meta` when given.
    pub(crate) async fn call(
        &mut self,
        name: &str,
        arguments: &Value,
        meta: Option<&Value>,
    ) -> Result<Answer, Failure> {
        let mut params = json!({"name": name, "arguments": arguments});
        if let Some(meta) = meta {
            params["_meta"] = meta.clone();
        }
        self.request("tools/call", params).await
    }

    fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", format!("Bearer {}", self.token))
            .header("mcp-protocol-version", PROTOCOL)
            .body(body.to_string());
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        request
    }

    async fn notify(&mut self, method: &str) -> Result<(), Failure> {
        let body = json!({"jsonrpc": "2.0", "method": method});
        let response = self
            .post(&body)
            .send()
            .await
            .map_err(|e| Failure::Transport(chain(&e)))?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            let text = response.text().await.unwrap_or_default();
            return Err(Failure::Status(status, start_of(&text)));
        }
        Ok(())
    }

    /// One request; its `result`.
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Result<Answer, Failure> {
        self.next_id += 1;
        let id = self.next_id;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut response = self
            .post(&body)
            .send()
            .await
            .map_err(|e| Failure::Transport(chain(&e)))?;
        let status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let worker = header("x-toolgate-worker");
        let is_stream = header("content-type").is_some_and(|t| t.starts_with("text/event-stream"));
        if let Some(session) = header("mcp-session-id") {
            self.session = Some(session);
        }
        if status != 200 {
            let text = response.text().await.unwrap_or_default();
            return Err(Failure::Status(status, start_of(&text)));
        }
        let message = if is_stream {
            let mut events = EventReader::default();
            loop {
                let chunk = response
                    .chunk()
                    .await
                    .map_err(|e| Failure::Transport(chain(&e)))?;
                let Some(chunk) = chunk else {
                    return Err(Failure::Transport(format!(
                        "the event stream of {method} ended without its answer"
                    )));
                };
                if let Some(message) = events.push(&chunk, id) {
                    break message;
                }
            }
        } else {
            let bytes = response
                .bytes()
                .await
                .map_err(|e| Failure::Transport(chain(&e)))?;
            serde_json::from_slice::<Value>(&bytes).map_err(|e| {
                Failure::Protocol(format!(
                    "{method}: not JSON ({e}): {}",
                    start_of(&String::from_utf8_lossy(&bytes))
                ))
            })?
        };
        if let Some(error) = message.get("error") {
            return Err(Failure::Rpc(error.clone()));
        }
        match message.get("result") {
            Some(result) => Ok(Answer {
                result: result.clone(),
                worker,
            }),
            None => Err(Failure::Protocol(format!(
                "{method}: no result in {message}"
            ))),
        }
    }
}

/// Server-sent events as they arrive; [`push`](Self::push) returns the
/// JSON-RPC answer with the wanted id once its event is complete.
#[derive(Default)]
struct EventReader {
    buffer: Vec<u8>,
}

impl EventReader {
    fn push(&mut self, chunk: &[u8], id: u64) -> Option<Value> {
        // A carriage return never appears unescaped in JSON: dropping them
        // all turns `\r\n` line ends into `\n` ones, even across chunks.
        self.buffer.extend(chunk.iter().filter(|&&b| b != b'\r'));
        loop {
            let end = self.buffer.windows(2).position(|w| w == b"\n\n")?;
            let event = String::from_utf8_lossy(&self.buffer[..end]).into_owned();
            self.buffer.drain(..end + 2);
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            if data.is_empty() {
                continue;
            }
            let Ok(message) = serde_json::from_str::<Value>(&data.join("\n")) else {
                continue;
            };
            if message["id"] == id
                && (message.get("result").is_some() || message.get("error").is_some())
            {
                return Some(message);
            }
        }
    }
}

/// An error with its causes, on one line.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn start_of(text: &str) -> String {
    text.chars().take(300).collect()
}
