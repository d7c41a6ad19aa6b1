//! The model clients of toolgate: the provider-neutral model interface,
//! its two wire formats, and the [`probe`] of model servers. The agent loop
//! (`toolgate-agent`) drives them and re-exports what its users need.
//!
//! [`LlmClient`] is ours so the wire code can be replaced. [`OpenAiClient`]
//! speaks OpenAI-compatible chat completions (OpenAI, Ollama, llama.cpp
//! server, vLLM, LM Studio, OpenRouter); [`AnthropicClient`] speaks the
//! Anthropic Messages API. Both stream, reassemble tool-call deltas by index,
//! and retry 429/5xx/connection errors with exponential backoff that honours
//! `Retry-After`.

use std::fmt;

use async_trait::async_trait;
use serde_json::Value;

pub use anthropic::AnthropicClient;
pub use constrain::{decode as decode_constrained, reply_rules, reply_schema};
pub use http::HttpSettings;
pub use openai::OpenAiClient;

use http::{http_client, is_event_stream, post_with_retries};
use sse::for_each_event;
use watch::{StreamWatch, repeated_call};

mod anthropic;
mod constrain;
mod http;
mod openai;
mod sse;
mod watch;

pub mod probe;

/// The loop's own tool that ends a run with an answer (small profile).
pub const FINISH: &str = "finish";

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
    /// [`FINISH`], with no final answer (see
    /// [`reply_schema`]). The runner asks for it while the task names
    /// something the run has not looked at yet. Unconstrained requests
    /// are sent as they are.
    pub must_call: bool,
    /// Tools a constrained reply may not call this time (the runner bars
    /// a tool whose last call just repeated itself); they stay in the
    /// prompt. Unconstrained requests are sent as they are.
    pub barred: Vec<String>,
    /// The reply before this one was cut off for repeating itself (or for
    /// running to its cap): an OpenAI-compatible request asks the server
    /// to penalise tokens already written ([`REPEAT_PENALTY`] as
    /// `frequency_penalty`), so a model that decodes near-greedily does not
    /// write the same loop again.
    pub penalize_repeats: bool,
}

/// The `frequency_penalty` of a request after a reply was cut
/// ([`LlmRequest::penalize_repeats`]): mild, as the JSON of a call repeats
/// its own tokens by nature.
pub const REPEAT_PENALTY: f32 = 0.3;

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

/// Errors of a model call. Not `#[non_exhaustive]`: the agent's fallback
/// judges every kind (`is_provider_failure`), and a new one must be judged
/// there too.
#[derive(Debug, thiserror::Error)]
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

#[cfg(test)]
mod tests {
    use super::*;

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
