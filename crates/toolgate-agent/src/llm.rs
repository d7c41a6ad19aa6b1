//! The provider-neutral model interface and its two wire formats.
//!
//! [`LlmClient`] is ours so the wire code can be replaced. [`OpenAiClient`]
//! speaks OpenAI-compatible chat completions (OpenAI, Ollama, llama.cpp
//! server, vLLM, LM Studio, OpenRouter); [`AnthropicClient`] speaks the
//! Anthropic Messages API. Both stream, reassemble tool-call deltas by index,
//! and retry 429/5xx/connection errors with exponential backoff that honours
//! `Retry-After`.

use std::fmt;
use std::ops::ControlFlow;
use std::pin::pin;
use std::time::Duration;

use async_trait::async_trait;
use eventsource_stream::{EventStream, EventStreamError};
use futures_util::{Stream, StreamExt};
use serde_json::{Value, json};
use watch::{StreamWatch, repeated_call};

pub use anthropic::AnthropicClient;
pub use constrain::{decode as decode_constrained, reply_rules, reply_schema};

mod anthropic;
mod constrain;
mod watch;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The system prompt.
    System,
    /// The person (or the loop speaking for them).
    User,
    /// The model.
    Assistant,
    /// A tool result.
    Tool,
}

/// A tool call the model asked for. `arguments` is the raw JSON text the
/// model produced: it may be malformed, and the loop answers that with a
/// tool error.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ModelToolCall {
    /// The model's id for the call.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model wrote them.
    pub arguments: String,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// The text (empty when an assistant message only calls tools).
    pub content: String,
    /// Tool calls of an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ModelToolCall>,
    /// For a tool message: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    /// A message with text only.
    pub fn text(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// A tool result answering call `id`.
    pub fn tool_result(id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: Role::Tool,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(id.into()),
        }
    }
}

/// Token counts of one model call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    /// Prompt tokens (cached ones included).
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens the server processed for this call, the rest coming
    /// from its prompt cache, when it says: llama.cpp's `timings.prompt_n`,
    /// OpenAI's `prompt_tokens` less `prompt_tokens_details.cached_tokens`,
    /// Anthropic's `input_tokens` plus `cache_creation_input_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processed_tokens: Option<u64>,
}

/// One model call.
#[derive(Debug, Clone)]
pub struct LlmRequest {
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// Tool schemas in OpenAI form (`{"type":"function","function":{…}}`);
    /// empty for the last call that must answer in text.
    pub tools: Vec<Value>,
    /// At most this many tokens in the answer, when the caller keeps the
    /// request inside a context window; else the client's `max_tokens`
    /// (Anthropic) or the server's default (OpenAI-compatible).
    pub max_tokens: Option<u32>,
    /// Whether the reply must call a tool that does not end the run: a
    /// constrained reply is then held to the calls of `tools` but
    /// [`FINISH`](crate::profile::FINISH), with no final answer (see
    /// [`reply_schema`]). The runner asks for it while the task names
    /// something the run has not looked at yet. Unconstrained requests
    /// are sent as they are.
    pub must_call: bool,
    /// Tools a constrained reply may not call this time (the runner bars
    /// a tool whose last call just repeated itself); they stay in the
    /// prompt. Unconstrained requests are sent as they are.
    pub barred: Vec<String>,
}

/// The model's answer.
#[derive(Debug, Clone, Default)]
pub struct LlmResponse {
    /// Text.
    pub content: String,
    /// Tool calls, in the order the model made them.
    pub tool_calls: Vec<ModelToolCall>,
    /// Why the model stopped (`stop`, `tool_calls`, `length`, …).
    pub finish_reason: Option<String>,
    /// Tokens, as reported by the server when it does.
    pub usage: Option<Usage>,
    /// Why toolgate stopped reading the reply before its end: it started
    /// repeating itself (the same block of lines or the same call four
    /// times in a row), or passed its token cap. The
    /// repeated copies are not kept.
    pub cut: Option<String>,
}

/// Receives streamed text as it arrives.
pub type TextSink<'a> = &'a (dyn Fn(&str) + Send + Sync);

/// Errors of a model call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The server refused the credentials (401/403).
    #[error("the model server refused the credentials (HTTP {status}); check the API key")]
    Auth {
        /// HTTP status.
        status: u16,
    },
    /// An HTTP error that retries did not fix.
    #[error("the model server answered HTTP {status}: {body}")]
    Http {
        /// HTTP status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The server could not be reached.
    #[error("cannot reach the model server at {url}")]
    Connect {
        /// The URL.
        url: String,
        /// The cause.
        #[source]
        source: reqwest::Error,
    },
    /// A streamed answer broke off.
    #[error("the model server's stream broke off")]
    Stream {
        /// The cause.
        #[source]
        source: reqwest::Error,
    },
    /// The answer did not parse.
    #[error("the model server sent an answer that does not parse: {0}")]
    Protocol(String),
    /// The request does not fit the model's context window even cut down
    /// as far as it goes, so it was not sent.
    #[error(
        "the request needs about {tokens} tokens, more than the {window}-token context window \
         leaves for it even after compression, so it was not sent; use a model with a larger \
         window, give the agent fewer tools, or shorten the system prompt and task"
    )]
    TooLarge {
        /// Tokens the request would take, counted conservatively.
        tokens: usize,
        /// The window.
        window: u32,
    },
}

/// A chat model.
#[async_trait]
pub trait LlmClient: Send + Sync {
    /// Sends one request; streamed text goes to `on_text` as it arrives.
    async fn complete(
        &self,
        request: &LlmRequest,
        on_text: TextSink<'_>,
    ) -> Result<LlmResponse, LlmError>;
}

/// An API key whose `Debug` never shows it.
#[derive(Clone, Default)]
pub struct ApiKey(Option<String>);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: Option<String>) -> Self {
        Self(key.filter(|k| !k.is_empty()))
    }

    /// The key itself, for a request header.
    pub(crate) fn expose(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "ApiKey(****)"
        } else {
            "ApiKey(none)"
        })
    }
}

/// The sampling temperature sent for tool use unless configured: 0.2.
///
/// Low, because a model that calls tools must copy names, paths and JSON
/// exactly; servers default to 0.7 to 1, and small local models then make
/// malformed or wrong calls far more often (measured on a 1.5B model: 4 of
/// 5 easy tasks solved at 0, 3 at the server's default). Not 0, because a
/// greedy model that meets the same conversation again writes the same
/// reply again, and a little sampling lets it leave a loop.
pub const DEFAULT_TEMPERATURE: f32 = 0.2;

/// Connection settings shared by both providers.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// Base URL, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// Model name.
    pub model: String,
    /// The API key.
    pub api_key: ApiKey,
    /// How long the server may stay silent: until the first byte of an
    /// answer, and between two reads of a streamed one (a slow local model
    /// that streams is not cut off halfway). Connecting has its own 10 s
    /// limit. By default, 120 s.
    pub request_timeout: Duration,
    /// Retries after the first attempt. By default, 3.
    pub max_retries: u32,
    /// First backoff delay, doubled each retry. By default, 500 ms.
    pub backoff: Duration,
    /// Stream the answer (SSE). By default, true.
    pub stream: bool,
    /// `max_tokens` to ask for (Anthropic requires one). By default, 4096.
    pub max_tokens: u32,
    /// Sampling temperature sent with every request; `None`: none is sent
    /// and the server's own default applies. By default,
    /// [`DEFAULT_TEMPERATURE`].
    pub temperature: Option<f32>,
    /// Constrain each reply that may call tools to one well-formed call
    /// or a final answer with a JSON schema the server enforces (see
    /// [`reply_schema`] for the wire format; OpenAI-compatible servers
    /// only). By default, false: tools are offered as `tools`.
    pub constrain: bool,
    /// Ask the server to keep the prompt cached between requests, whose
    /// prefix (system prompt, tools, earlier steps) the loop keeps the
    /// same: llama.cpp's `cache_prompt: true`; on the Anthropic wire,
    /// `cache_control` on the system prompt (which caches the tools before
    /// it too). By default, false (an OpenAI-compatible server that does
    /// not know the field may refuse it).
    pub cache_prompt: bool,
}

impl HttpSettings {
    /// Settings with the defaults above.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>, api_key: ApiKey) -> Self {
        Self {
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            model: model.into(),
            api_key,
            request_timeout: Duration::from_secs(120),
            max_retries: 3,
            backoff: Duration::from_millis(500),
            stream: true,
            max_tokens: 4096,
            temperature: Some(DEFAULT_TEMPERATURE),
            constrain: false,
            cache_prompt: false,
        }
    }
}

fn http_client(timeout: Duration) -> reqwest::Client {
    // reqwest is built without a default crypto provider (ring keeps the
    // build lean); installing it twice is harmless, so ignore the result.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(timeout.min(Duration::from_secs(10)))
        .read_timeout(timeout)
        .build()
        .unwrap_or_default()
}

/// POSTs `body` with retries; returns the successful response.
async fn post_with_retries(
    client: &reqwest::Client,
    settings: &HttpSettings,
    url: &str,
    headers: &[(&str, String)],
    body: &Value,
) -> Result<reqwest::Response, LlmError> {
    let mut attempt = 0u32;
    loop {
        let mut req = client.post(url).json(body);
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        let retry_after;
        match req.send().await {
            Ok(resp) if resp.status().is_success() => return Ok(resp),
            Ok(resp) => {
                let status = resp.status().as_u16();
                if status == 401 || status == 403 {
                    return Err(LlmError::Auth { status });
                }
                retry_after = resp
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(Duration::from_secs);
                let body = resp.text().await.unwrap_or_default();
                let retryable = status == 429 || status >= 500;
                if !retryable || attempt >= settings.max_retries {
                    // Redacted before it is cut, so a key cut in half
                    // cannot survive: servers echo the headers they got.
                    return Err(LlmError::Http {
                        status,
                        body: toolgate_core::redact(&body).chars().take(500).collect(),
                    });
                }
                tracing::warn!(status, attempt, "model server error; retrying");
            }
            Err(source) => {
                if attempt >= settings.max_retries || !(source.is_connect() || source.is_timeout())
                {
                    return Err(LlmError::Connect {
                        url: toolgate_core::redact(url).into_owned(),
                        source,
                    });
                }
                retry_after = None;
                tracing::warn!(attempt, "cannot reach the model server; retrying");
            }
        }
        let backoff = settings
            .backoff
            .saturating_mul(2u32.saturating_pow(attempt));
        tokio::time::sleep(retry_after.unwrap_or(backoff).min(Duration::from_secs(60))).await;
        attempt += 1;
    }
}

/// The `data` of each server-sent event in `bytes`, in order.
///
/// # Rules
///
/// 1. Bytes are decoded as UTF-8 across chunk boundaries: a character split
///    between two network reads is joined, never replaced by U+FFFD.
/// 2. Lines end in LF, CR LF or CR. An event ends at a blank line; its
///    `data:` lines are joined with LF (one space after the colon dropped).
/// 3. Comments (`: keep-alive`), `event:`, `id:` and `retry:` lines are
///    ignored (both providers repeat the event type inside the JSON). An
///    event whose data is empty (`data:` alone, a keep-alive) is dropped.
/// 4. One byte-order mark at the very start of the body is skipped.
/// 5. The end of the stream ends a last event that the server did not close
///    with a blank line.
/// 6. A transport error is [`LlmError::Stream`]; bytes that are not UTF-8
///    are [`LlmError::Protocol`] (reported when the stream ends, since the
///    decoder cannot tell them from a character still arriving).
///
/// The parsing is `eventsource-stream`'s, which follows the HTML
/// specification of `text/event-stream`. Its own BOM handling slices the
/// first string at byte 1, inside the three-byte BOM, and panics (upstream
/// pull request #10, unmerged in 0.2.3); so the body it sees always starts
/// with an empty line, which it never strips, and rule 4 is applied here,
/// on bytes.
fn sse_data<S, B>(bytes: S) -> impl Stream<Item = Result<String, LlmError>>
where
    S: Stream<Item = Result<B, reqwest::Error>>,
    B: AsRef<[u8]>,
{
    // Rule 5: a blank line after the last byte dispatches an unterminated
    // event, and is an empty line (no event) after a terminated one.
    let body = bytes
        .map(|chunk| chunk.map(Piece::Net))
        .chain(futures_util::stream::iter([Ok(Piece::Static(b"\n\n"))]));
    // Rule 4. `head` holds the first bytes while they may still be a BOM;
    // the two bytes of the terminator always settle it.
    let body = body.scan(Some(Vec::new()), |head, chunk| {
        let piece = match (head.as_mut(), chunk) {
            (Some(h), Ok(piece)) => {
                h.extend_from_slice(piece.as_ref());
                if h.len() < BOM.len() && BOM.starts_with(h) {
                    Ok(Piece::Held(Vec::new()))
                } else {
                    let mut h = std::mem::take(h);
                    *head = None;
                    if h.starts_with(BOM) {
                        h.drain(..BOM.len());
                    }
                    Ok(Piece::Held(h))
                }
            }
            (_, chunk) => chunk,
        };
        std::future::ready(Some(piece))
    });
    let body = futures_util::stream::iter([Ok(Piece::Static(b"\n"))]).chain(body);
    EventStream::new(body).filter_map(|event| {
        std::future::ready(match event {
            Ok(event) if event.data.is_empty() => None,
            Ok(event) => Some(Ok(event.data)),
            Err(EventStreamError::Transport(source)) => Some(Err(LlmError::Stream { source })),
            Err(EventStreamError::Utf8(e)) => Some(Err(LlmError::Protocol(format!(
                "the event stream is not UTF-8: {e}"
            )))),
            Err(EventStreamError::Parser(e)) => Some(Err(LlmError::Protocol(format!(
                "the event stream does not parse: {e}"
            )))),
        })
    })
}

/// The UTF-8 byte-order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A piece of a response body on its way to the event parser.
enum Piece<B> {
    /// As read from the network.
    Net(B),
    /// The start of the body, held back while it could be a BOM.
    Held(Vec<u8>),
    /// Bytes toolgate adds (the blank lines around the body).
    Static(&'static [u8]),
}

impl<B: AsRef<[u8]>> AsRef<[u8]> for Piece<B> {
    fn as_ref(&self) -> &[u8] {
        match self {
            Self::Net(b) => b.as_ref(),
            Self::Held(v) => v,
            Self::Static(s) => s,
        }
    }
}

/// Calls `f` with the data of each event of a streamed answer, until the
/// stream ends or `f` says the answer is complete.
async fn for_each_event(
    resp: reqwest::Response,
    mut f: impl FnMut(&str) -> Result<ControlFlow<()>, LlmError>,
) -> Result<(), LlmError> {
    let mut events = pin!(sse_data(resp.bytes_stream()));
    while let Some(data) = events.next().await {
        if f(&data?)?.is_break() {
            break;
        }
    }
    Ok(())
}

/// Reassembles streamed tool calls by index.
#[derive(Debug, Default)]
struct CallAssembler {
    calls: Vec<(usize, ModelToolCall)>,
}

impl CallAssembler {
    fn delta(&mut self, index: usize, id: Option<&str>, name: Option<&str>, args: Option<&str>) {
        let pos = if let Some(p) = self.calls.iter().position(|(i, _)| *i == index) {
            p
        } else {
            self.calls.push((
                index,
                ModelToolCall {
                    id: String::new(),
                    name: String::new(),
                    arguments: String::new(),
                },
            ));
            self.calls.len() - 1
        };
        let call = &mut self.calls[pos].1;
        // Some servers repeat the id and name in every delta: set, never append.
        if let Some(id) = id.filter(|s| !s.is_empty()) {
            id.clone_into(&mut call.id);
        }
        if let Some(name) = name.filter(|s| !s.is_empty()) {
            name.clone_into(&mut call.name);
        }
        if let Some(a) = args {
            call.arguments.push_str(a);
        }
    }

    fn finish(mut self) -> Vec<ModelToolCall> {
        self.calls.sort_by_key(|(i, _)| *i);
        self.calls
            .into_iter()
            .enumerate()
            .map(|(n, (_, mut c))| {
                if c.id.is_empty() {
                    c.id = format!("call_{n}");
                }
                c
            })
            .collect()
    }
}

/// Checks a streamed reply so far (see [`watch`]): why it is cut, when it
/// is; a reply cut for repeating its text keeps the first copy, and one cut
/// before it `ended` loses the call still arriving.
fn watched(
    watch: &mut StreamWatch,
    out: &mut LlmResponse,
    calls: &mut CallAssembler,
    ended: bool,
) -> Option<String> {
    if let Some((keep, why)) = watch.text(&out.content) {
        out.content.truncate(keep);
        return Some(why);
    }
    let complete = if ended {
        calls.calls.len()
    } else {
        calls.calls.len().saturating_sub(1)
    };
    let named = calls
        .calls
        .iter()
        .map(|(_, c)| (c.name.as_str(), c.arguments.as_str()));
    let mut why = repeated_call(named, complete);
    if why.is_none() {
        let bytes = out.content.len()
            + calls
                .calls
                .iter()
                .map(|(_, c)| c.arguments.len())
                .sum::<usize>();
        why = watch.over_cap(bytes);
        if why.is_some() {
            out.finish_reason = Some("length".to_owned());
        }
    }
    if why.is_some() {
        calls.calls.truncate(complete);
    }
    why
}

/// OpenAI-compatible chat completions.
#[derive(Debug)]
pub struct OpenAiClient {
    settings: HttpSettings,
    http: reqwest::Client,
}

impl OpenAiClient {
    /// A client for `settings`.
    pub fn new(settings: HttpSettings) -> Self {
        let http = http_client(settings.request_timeout);
        Self { settings, http }
    }

    /// The request body (the wire format).
    ///
    /// Assistant messages with tool calls send `content: ""`, never `null`,
    /// which some servers reject.
    pub fn body(&self, request: &LlmRequest) -> Value {
        let constrained = self.constrained(request);
        let plain;
        let conversation = if constrained {
            plain = constrain::plain_messages(&request.messages, &request.tools);
            &plain
        } else {
            &request.messages
        };
        let messages: Vec<Value> = conversation
            .iter()
            .map(|m| {
                let role = match m.role {
                    Role::System => "system",
                    Role::User => "user",
                    Role::Assistant => "assistant",
                    Role::Tool => "tool",
                };
                let mut v = json!({"role": role, "content": m.content});
                if !m.tool_calls.is_empty() {
                    v["tool_calls"] = m
                        .tool_calls
                        .iter()
                        .map(|c| {
                            json!({"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": c.arguments}})
                        })
                        .collect();
                }
                if let Some(id) = &m.tool_call_id {
                    v["tool_call_id"] = json!(id);
                }
                v
            })
            .collect();
        let mut body = json!({"model": self.settings.model, "messages": messages,
                              "stream": self.settings.stream});
        if let Some(max) = request.max_tokens {
            body["max_tokens"] = json!(max.min(self.settings.max_tokens));
        }
        if let Some(t) = self.settings.temperature {
            body["temperature"] = json!(t);
        }
        if self.settings.cache_prompt {
            body["cache_prompt"] = json!(true);
        }
        if constrained {
            body["response_format"] = json!({"type": "json_schema", "json_schema": {
                "name": "reply", "strict": true,
                "schema": reply_schema(&request.tools, request.must_call, &request.barred)}});
        } else if !request.tools.is_empty() {
            body["tools"] = json!(request.tools);
        }
        if self.settings.stream {
            body["stream_options"] = json!({"include_usage": true});
        }
        body
    }
}

impl OpenAiClient {
    /// Whether `request`'s reply is constrained (see [`constrain`]).
    fn constrained(&self, request: &LlmRequest) -> bool {
        self.settings.constrain && !request.tools.is_empty()
    }
}

/// A constrained reply decoded (see [`constrain`]): its call, or its
/// answer shown now (its JSON was not streamed). One the server stopped at
/// `max_tokens` is incomplete JSON, neither: it is a reply cut short
/// ([`LlmResponse::cut`]), not an answer.
fn decode_reply(out: &mut LlmResponse, on_text: TextSink<'_>) {
    let decoded = constrain::decode(&out.content);
    if decoded.is_none() && out.cut.is_none() && out.finish_reason.as_deref() == Some("length") {
        out.cut = Some("it reached its token limit before its JSON was complete".to_owned());
    }
    match decoded {
        Some(Ok(call)) => {
            out.content.clear();
            out.tool_calls = vec![call];
        }
        Some(Err(text)) => {
            on_text(&text);
            out.content = text;
        }
        None if !out.content.is_empty() => on_text(&out.content),
        None => {}
    }
}

fn openai_usage(v: &Value) -> Option<Usage> {
    let u = v.get("usage").filter(|u| u.is_object())?;
    let input = u["prompt_tokens"].as_u64().unwrap_or(0);
    let cached = u["prompt_tokens_details"]["cached_tokens"].as_u64();
    Some(Usage {
        input_tokens: input,
        output_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
        processed_tokens: prompt_processed(v).or(cached.map(|c| input.saturating_sub(c))),
    })
}

/// llama.cpp's count of the prompt tokens it processed (`timings.prompt_n`;
/// the rest came from its cache).
fn prompt_processed(v: &Value) -> Option<u64> {
    v["timings"]["prompt_n"].as_u64()
}

/// Whether the server answered with server-sent events (a stream).
fn is_event_stream(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("event-stream"))
}

#[async_trait]
impl LlmClient for OpenAiClient {
    async fn complete(
        &self,
        request: &LlmRequest,
        on_text: TextSink<'_>,
    ) -> Result<LlmResponse, LlmError> {
        let url = format!("{}/chat/completions", self.settings.base_url);
        let constrained = self.constrained(request);
        let mut headers = Vec::new();
        if let Some(key) = &self.settings.api_key.0 {
            headers.push(("authorization", format!("Bearer {key}")));
        }
        let resp = post_with_retries(
            &self.http,
            &self.settings,
            &url,
            &headers,
            &self.body(request),
        )
        .await?;
        let is_sse = is_event_stream(&resp);
        if !is_sse {
            let v: Value = resp
                .json()
                .await
                .map_err(|e| LlmError::Protocol(e.to_string()))?;
            let choice = &v["choices"][0];
            let msg = &choice["message"];
            let content = msg["content"].as_str().unwrap_or("").to_owned();
            if !content.is_empty() && !constrained {
                on_text(&content);
            }
            let tool_calls = msg["tool_calls"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .enumerate()
                        .map(|(n, c)| ModelToolCall {
                            id: c["id"]
                                .as_str()
                                .map_or_else(|| format!("call_{n}"), str::to_owned),
                            name: c["function"]["name"].as_str().unwrap_or("").to_owned(),
                            arguments: match &c["function"]["arguments"] {
                                Value::String(s) => s.clone(),
                                Value::Null => String::new(),
                                other => other.to_string(),
                            },
                        })
                        .collect()
                })
                .unwrap_or_default();
            let mut out = LlmResponse {
                content,
                tool_calls: Vec::new(),
                finish_reason: choice["finish_reason"].as_str().map(str::to_owned),
                usage: openai_usage(&v),
                cut: None,
            };
            // Read whole, but a reply that repeats itself is still cut to
            // its first copy.
            out.cut = StreamWatch::new(None)
                .text(&out.content)
                .map(|(keep, why)| {
                    out.content.truncate(keep);
                    why
                });
            out.tool_calls = tool_calls;
            if constrained && out.tool_calls.is_empty() {
                decode_reply(&mut out, on_text);
            }
            return Ok(out);
        }
        let mut out = LlmResponse::default();
        let mut processed = None;
        let mut calls = CallAssembler::default();
        let mut watch =
            StreamWatch::new(request.max_tokens.map(|m| m.min(self.settings.max_tokens)));
        for_each_event(resp, |data| {
            // The end of the answer, whatever the connection does next.
            if data.trim() == "[DONE]" {
                return Ok(ControlFlow::Break(()));
            }
            if let Some(why) = watched(&mut watch, &mut out, &mut calls, false) {
                out.cut = Some(why);
                return Ok(ControlFlow::Break(()));
            }
            let v: Value = serde_json::from_str(data)
                .map_err(|e| LlmError::Protocol(format!("bad stream event: {e}")))?;
            if let Some(u) = openai_usage(&v) {
                out.usage = Some(Usage {
                    processed_tokens: u.processed_tokens.or(processed),
                    ..u
                });
            }
            if let Some(n) = prompt_processed(&v) {
                processed = Some(n);
                if let Some(u) = &mut out.usage {
                    u.processed_tokens = Some(n);
                }
            }
            let Some(choice) = v["choices"].get(0) else {
                return Ok(ControlFlow::Continue(()));
            };
            let delta = &choice["delta"];
            if let Some(t) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                if !constrained {
                    on_text(t);
                }
                out.content.push_str(t);
            }
            if let Some(tcs) = delta["tool_calls"].as_array() {
                for (n, tc) in tcs.iter().enumerate() {
                    let index = tc["index"]
                        .as_u64()
                        .and_then(|i| usize::try_from(i).ok())
                        .unwrap_or(n);
                    calls.delta(
                        index,
                        tc["id"].as_str(),
                        tc["function"]["name"].as_str(),
                        tc["function"]["arguments"].as_str(),
                    );
                }
            }
            if let Some(f) = choice["finish_reason"].as_str() {
                out.finish_reason = Some(f.to_owned());
            }
            Ok(ControlFlow::Continue(()))
        })
        .await?;
        if out.cut.is_none() {
            out.cut = watched(&mut watch, &mut out, &mut calls, true);
        }
        out.tool_calls = calls.finish();
        if constrained && out.tool_calls.is_empty() {
            decode_reply(&mut out, on_text);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes `chunks` as one response body; the error text on failure.
    async fn decode(chunks: Vec<Vec<u8>>) -> Result<Vec<String>, String> {
        let bytes = futures_util::stream::iter(chunks.into_iter().map(Ok::<_, reqwest::Error>));
        sse_data(bytes)
            .map(|r| r.map_err(|e| e.to_string()))
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect()
    }

    /// Wire bytes and the event data they carry. Every payload holds
    /// characters of two, three and four bytes. The rows starting with a
    /// BOM are the regression test of `eventsource-stream`'s BOM panic.
    const WIRE_CASES: &[(&str, &[&str])] = &[
        (
            "data: {\"t\":\"café 日本 🦀\"}\n\n",
            &["{\"t\":\"café 日本 🦀\"}"],
        ),
        (
            "data: é\r\n\r\ndata:日本\r\rdata:  🦀\n\n",
            &["é", "日本", " 🦀"],
        ),
        ("data: ligne é\ndata: 日本\n\n", &["ligne é\n日本"]),
        (
            ": keep-alive é\n\nevent: ping\nid: 7\ndata: 🦀\n\n",
            &["🦀"],
        ),
        ("data:\n\ndata: 日本\n\n", &["日本"]),
        (
            "data: é\n\ndata: 🦀 last, unterminated",
            &["é", "🦀 last, unterminated"],
        ),
        ("\u{feff}data: 日本\r\n\r\n", &["日本"]),
        ("\u{feff}\u{feff}data: é\n\ndata: 日本\n\n", &["日本"]),
        ("data: \u{feff}🦀\n\n", &["\u{feff}🦀"]),
        ("\u{fb01}: x\ndata: 🦀\n\n", &["🦀"]),
        ("", &[]),
    ];

    #[tokio::test]
    async fn sse_data_is_whole_wherever_the_bytes_are_split() {
        for (wire, expected) in WIRE_CASES {
            let expected = &Ok(expected.iter().map(|&e| e.to_owned()).collect());
            let bytes = wire.as_bytes();
            assert_eq!(decode(vec![bytes.to_vec()]).await, *expected, "{wire:?}");
            // Every split into two and three chunks, including the ones
            // inside a character and the empty chunks at the ends.
            for i in 0..=bytes.len() {
                let two = vec![bytes[..i].to_vec(), bytes[i..].to_vec()];
                assert_eq!(decode(two).await, *expected, "{wire:?} split at {i}");
                for j in i..=bytes.len() {
                    let three = vec![
                        bytes[..i].to_vec(),
                        bytes[i..j].to_vec(),
                        bytes[j..].to_vec(),
                    ];
                    assert_eq!(decode(three).await, *expected, "{wire:?} split at {i}, {j}");
                }
            }
        }
    }

    #[tokio::test]
    async fn sse_data_one_byte_at_a_time() {
        for (wire, expected) in WIRE_CASES {
            let expected = &Ok(expected.iter().map(|&e| e.to_owned()).collect());
            let bytes: Vec<Vec<u8>> = wire.bytes().map(|b| vec![b]).collect();
            assert_eq!(decode(bytes).await, *expected, "{wire:?}");
        }
    }

    #[tokio::test]
    async fn sse_data_that_is_not_utf8_is_a_protocol_error() {
        let err = decode(vec![b"data: ok\n\ndata: \xff\xfe\n\n".to_vec()]).await;
        // The event before the bad bytes is delivered; the error follows.
        assert!(
            err.as_ref().is_err_and(|e| e.contains("not UTF-8")),
            "{err:?}"
        );
    }

    #[test]
    fn assembler_tolerates_repeated_id_and_name() {
        let mut a = CallAssembler::default();
        a.delta(0, Some("c1"), Some("read_file"), Some("{\"pa"));
        a.delta(0, Some("c1"), Some("read_file"), Some("th\":1}"));
        a.delta(1, None, Some("x"), None);
        let calls = a.finish();
        assert_eq!(calls[0].arguments, "{\"path\":1}");
        assert_eq!(calls[0].name, "read_file");
        assert_eq!(calls[1].id, "call_1");
    }

    #[test]
    fn api_key_debug_is_redacted() {
        let k = ApiKey::new(Some("sk-secret".into()));
        assert!(!format!("{k:?}").contains("secret"));
    }
}
