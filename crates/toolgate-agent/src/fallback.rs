//! Provider fallback (seed 002's `LLMClientWithFallback`): an
//! [`LlmClient`] over an ordered list of providers that moves on to the
//! next one when a provider fails, or when a request needs tools the
//! provider does not take.
//!
//! The host builds one [`FallbackClient`] per run: the configured model
//! first, then the `llm.fallback` entries ([`FallbackEntry`]), each
//! switch reported through a callback ([`ProviderSwitch`]) that becomes an
//! event and a session record.
//!
//! ```no_run
//! # fn f(local: std::sync::Arc<dyn toolgate_agent::LlmClient>,
//! #      hosted: std::sync::Arc<dyn toolgate_agent::LlmClient>) -> Result<(), toolgate_agent::FallbackError> {
//! use std::sync::Arc;
//! use toolgate_agent::FallbackClient;
//! let llm = FallbackClient::builder()
//!     .provider("qwen@127.0.0.1:8080", local, true)
//!     .provider("gpt-4o-mini@api.openai.com", hosted, true)
//!     .on_switch(Arc::new(|s| eprintln!("{} → {}: {}", s.from, s.to, s.reason)))
//!     .build()?;
//! # Ok(()) }
//! ```

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::llm::{
    AnthropicClient, ApiKey, HttpSettings, LlmClient, LlmError, LlmRequest, LlmResponse,
    OpenAiClient, TextSink,
};

/// Receives every provider switch, as it happens.
pub type SwitchCallback = Arc<dyn Fn(&ProviderSwitch) + Send + Sync>;

/// Provider switches waiting to be reported: the [`FallbackClient`]'s
/// callback ([`SwitchLog::callback`]) adds them as they happen, the agent
/// loop takes them after each model call
/// ([`AgentRunnerBuilder::switches`](crate::AgentRunnerBuilder::switches)),
/// emits them as events and records them in the session.
#[derive(Debug, Default)]
pub struct SwitchLog(std::sync::Mutex<Vec<ProviderSwitch>>);

impl SwitchLog {
    /// An empty log.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// A callback for [`FallbackClientBuilder::on_switch`] that adds each
    /// switch to this log.
    pub fn callback(self: &Arc<Self>) -> SwitchCallback {
        let log = Arc::clone(self);
        Arc::new(move |switch: &ProviderSwitch| {
            log.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(switch.clone());
        })
    }

    /// Takes the switches logged so far, oldest first.
    pub fn drain(&self) -> Vec<ProviderSwitch> {
        std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

/// The fallback moved a request from one provider to another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderSwitch {
    /// The provider left.
    pub from: String,
    /// The provider tried next.
    pub to: String,
    /// Why `from` was left.
    pub reason: SwitchReason,
    /// Whether `from` had already streamed text to the request's text sink
    /// before it failed: that text is not part of the answer, and a
    /// display that showed it should say so.
    pub partial_text: bool,
}

/// Why a provider was left.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SwitchReason {
    /// It failed after its own retries.
    Failed {
        /// The error, with its causes.
        error: String,
    },
    /// The request carries tools and the provider is declared
    /// `tools: false`.
    NoTools,
}

impl fmt::Display for SwitchReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Failed { error } => write!(f, "it failed: {error}"),
            Self::NoTools => f.write_str("the request needs tools and it takes none"),
        }
    }
}

/// Errors building a [`FallbackClient`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FallbackError {
    /// No provider was given.
    #[error("a fallback client needs at least one provider")]
    NoProviders,
    /// Two providers share a name, so switches could not tell them apart.
    #[error("two model providers are named `{name}`; give one a `name`")]
    DuplicateName {
        /// The name.
        name: String,
    },
    /// Every provider is declared `tools: false`, so no tool request could
    /// be served.
    #[error("no model provider takes tool requests; declare one with `tools: true`")]
    NoToolProvider,
}

/// Whether `error` is the provider's failure, so the next provider is
/// tried, rather than the request's, which every provider would refuse.
///
/// # Rules
///
/// 1. A body that says the request does not fit the model's context
///    (`context_length_exceeded`, "maximum context length", "prompt is too
///    long", llama.cpp's "exceeds the available context size", …), and HTTP
///    413, are the request's: the caller must make it smaller.
/// 2. Refused credentials ([`LlmError::Auth`]) are the provider's: each
///    provider has its own key, and the switch carries the refusal so a
///    wrong key is still seen.
/// 3. An unreachable server, a broken stream and an answer that does not
///    parse are the provider's.
/// 4. HTTP 429 and 5xx (the client's retries are spent), 404 (the model is
///    not served there) and 408 are the provider's.
/// 5. A 4xx whose body says the server cannot take tools (Ollama's "does
///    not support tools", llama.cpp's "requires --jinja", vLLM's
///    "--enable-auto-tool-choice") is the provider's.
/// 6. Any other 4xx is the request's: a malformed request is refused
///    everywhere, and trying it on every provider would only hide the
///    first answer.
pub fn is_provider_failure(error: &LlmError) -> bool {
    match error {
        LlmError::Auth { .. }
        | LlmError::Connect { .. }
        | LlmError::Stream { .. }
        | LlmError::Protocol(_) => true,
        LlmError::Http { status, body } => {
            let body = body.to_lowercase();
            if *status == 413 || CONTEXT_MARKERS.iter().any(|m| body.contains(m)) {
                return false;
            }
            let no_tools = body.contains("tool") && TOOL_MARKERS.iter().any(|m| body.contains(m));
            matches!(status, 404 | 408 | 429) || *status >= 500 || no_tools
        }
        // The request's size, not the provider: it was never sent.
        LlmError::TooLarge { .. } => false,
    }
}

/// Words of a refusal because the request exceeds the context (rule 1).
const CONTEXT_MARKERS: &[&str] = &[
    "context_length_exceeded",
    "context length",
    "context window",
    "context size",
    "maximum context",
    "exceed_context",
    "prompt is too long",
    "too many tokens",
];

/// Words of a refusal because the server takes no tools (rule 5), next to
/// the word "tool".
const TOOL_MARKERS: &[&str] = &["support", "jinja", "tool-call-parser", "auto-tool-choice"];

/// One provider of a [`FallbackClient`].
struct Slot {
    name: String,
    client: Arc<dyn LlmClient>,
    tools: bool,
}

/// An [`LlmClient`] that tries an ordered list of providers.
///
/// # Rules
///
/// 1. A request starts at the current provider (the first one until a
///    switch) and goes on down the list, wrapping around to the providers
///    before the current one; each provider is tried at most once per
///    request.
/// 2. A request that carries tools skips the providers declared without
///    tools; a request without tools may use any provider.
/// 3. A provider's error that [`is_provider_failure`] moves the request
///    on to the next provider. Any other error is returned at once. When
///    every provider has failed, the last error is returned.
/// 4. Each move to another provider is a [`ProviderSwitch`], given to the
///    `on_switch` callback before that provider is tried, and logged.
/// 5. Stickiness: the provider that answered — with an answer, or with an
///    error about the request — becomes the current one, where the next
///    requests start ([`FallbackClient::current`]). A provider that was
///    left is tried again only when the ones after it fail (rule 1), so a
///    run does not pay for a dead server's retries at every step. When
///    every provider fails, the current one stays.
/// 6. Retries are each provider's own (`llm.max_retries`); the fallback
///    adds none.
pub struct FallbackClient {
    providers: Vec<Slot>,
    current: AtomicUsize,
    on_switch: Option<SwitchCallback>,
}

/// Builds a [`FallbackClient`].
#[derive(Default)]
pub struct FallbackClientBuilder {
    providers: Vec<Slot>,
    on_switch: Option<SwitchCallback>,
}

impl fmt::Debug for FallbackClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let providers: Vec<(&str, bool)> = self.providers().collect();
        f.debug_struct("FallbackClient")
            .field("providers", &providers)
            .field("current", &self.current())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for FallbackClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.providers.iter().map(|s| s.name.as_str()).collect();
        f.debug_struct("FallbackClientBuilder")
            .field("providers", &names)
            .finish_non_exhaustive()
    }
}

impl FallbackClientBuilder {
    /// Appends a provider: its name in switches, its client (with its own
    /// retries), and whether it takes requests that carry tools.
    #[must_use]
    pub fn provider(
        mut self,
        name: impl Into<String>,
        client: Arc<dyn LlmClient>,
        supports_tools: bool,
    ) -> Self {
        self.providers.push(Slot {
            name: name.into(),
            client,
            tools: supports_tools,
        });
        self
    }

    /// Called with every switch (rule 4). By default, switches are only
    /// logged.
    #[must_use]
    pub fn on_switch(mut self, callback: SwitchCallback) -> Self {
        self.on_switch = Some(callback);
        self
    }

    /// The client, or why the list cannot serve: it is empty, two
    /// providers share a name, or none takes tools.
    pub fn build(self) -> Result<FallbackClient, FallbackError> {
        if self.providers.is_empty() {
            return Err(FallbackError::NoProviders);
        }
        for (i, slot) in self.providers.iter().enumerate() {
            if self.providers[..i].iter().any(|s| s.name == slot.name) {
                return Err(FallbackError::DuplicateName {
                    name: slot.name.clone(),
                });
            }
        }
        if !self.providers.iter().any(|s| s.tools) {
            return Err(FallbackError::NoToolProvider);
        }
        Ok(FallbackClient {
            providers: self.providers,
            current: AtomicUsize::new(0),
            on_switch: self.on_switch,
        })
    }
}

impl FallbackClient {
    /// A builder without providers.
    pub fn builder() -> FallbackClientBuilder {
        FallbackClientBuilder::default()
    }

    /// The name of the provider the next request starts at (rule 5).
    pub fn current(&self) -> &str {
        let i = self.current.load(Ordering::Relaxed);
        self.providers.get(i).map_or("", |s| s.name.as_str())
    }

    /// The providers in order: name, and whether it takes tools.
    pub fn providers(&self) -> impl Iterator<Item = (&str, bool)> {
        self.providers.iter().map(|s| (s.name.as_str(), s.tools))
    }

    fn switch(&self, from: usize, to: usize, reason: SwitchReason, partial_text: bool) {
        let switch = ProviderSwitch {
            from: self.providers[from].name.clone(),
            to: self.providers[to].name.clone(),
            reason,
            partial_text,
        };
        tracing::warn!(
            from = %switch.from,
            to = %switch.to,
            reason = %switch.reason,
            "switching model provider"
        );
        if let Some(callback) = &self.on_switch {
            callback(&switch);
        }
    }
}

#[async_trait]
impl LlmClient for FallbackClient {
    async fn complete(
        &self,
        request: &LlmRequest,
        on_text: TextSink<'_>,
    ) -> Result<LlmResponse, LlmError> {
        let needs_tools = !request.tools.is_empty();
        let count = self.providers.len();
        let start = self.current.load(Ordering::Relaxed).min(count - 1);
        // The provider the request is at, and why it is being left.
        let mut at = start;
        let mut leaving: Option<(SwitchReason, bool)> = None;
        let mut last_error = None;
        for i in (0..count).map(|k| (start + k) % count) {
            let slot = &self.providers[i];
            if needs_tools && !slot.tools {
                if i == at && leaving.is_none() {
                    leaving = Some((SwitchReason::NoTools, false));
                }
                continue;
            }
            if i != at {
                let (reason, partial) = leaving.take().unwrap_or((SwitchReason::NoTools, false));
                self.switch(at, i, reason, partial);
            }
            let streamed = AtomicBool::new(false);
            let sink = |text: &str| {
                streamed.store(true, Ordering::Relaxed);
                on_text(text);
            };
            match slot.client.complete(request, &sink).await {
                Ok(response) => {
                    self.current.store(i, Ordering::Relaxed);
                    return Ok(response);
                }
                Err(error) if !is_provider_failure(&error) => {
                    self.current.store(i, Ordering::Relaxed);
                    return Err(error);
                }
                Err(error) => {
                    let reason = SwitchReason::Failed {
                        error: toolgate_core::error_chain(&error),
                    };
                    leaving = Some((reason, streamed.load(Ordering::Relaxed)));
                    at = i;
                    last_error = Some(error);
                }
            }
        }
        // `build` guarantees a provider for every request; this is only
        // reached if that ever changes.
        Err(last_error.unwrap_or_else(|| {
            LlmError::Protocol("no configured model provider takes this request".to_owned())
        }))
    }
}

/// Which wire format a fallback provider speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// OpenAI-compatible chat completions (OpenAI, Ollama, llama.cpp, vLLM,
    /// LM Studio, `OpenRouter`).
    #[default]
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

impl ProviderKind {
    /// The base URL of the provider's own API.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::Openai => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com/v1",
        }
    }
}

/// One entry of `llm.fallback`: a provider tried when the ones before it
/// fail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FallbackEntry {
    /// `openai` or `anthropic`: the wire format. Default: openai.
    #[serde(default)]
    pub provider: ProviderKind,
    /// The server's base URL. Default: the provider's own API
    /// (`https://api.openai.com/v1`, `https://api.anthropic.com/v1`).
    #[serde(default)]
    pub base_url: Option<String>,
    /// The model name. Required.
    pub model: String,
    /// The environment variable that holds the API key (never the key
    /// itself). Default: none.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Whether the provider takes requests that carry tools. Default: true.
    #[serde(default = "yes")]
    pub tools: bool,
    /// The name switches report. Default: `MODEL@HOST[:PORT]`.
    #[serde(default)]
    pub name: Option<String>,
}

fn yes() -> bool {
    true
}

impl FallbackEntry {
    /// The base URL requests go to.
    pub fn base_url(&self) -> &str {
        self.base_url
            .as_deref()
            .unwrap_or_else(|| self.provider.default_base_url())
    }

    /// The name switches report: `name`, else `MODEL@HOST[:PORT]`.
    pub fn name(&self) -> String {
        if let Some(name) = &self.name {
            return name.clone();
        }
        let base = self.base_url();
        let authority = reqwest::Url::parse(base)
            .ok()
            .and_then(|u| {
                let host = u.host_str()?.to_owned();
                Some(match u.port() {
                    Some(port) => format!("{host}:{port}"),
                    None => host,
                })
            })
            .unwrap_or_else(|| base.to_owned());
        format!("{}@{authority}", self.model)
    }

    /// A client for this entry with `api_key` (read from `api_key_env` by
    /// the caller); timeouts, retries, streaming and the token limit come
    /// from `template` (the primary model's settings).
    pub fn client(&self, api_key: ApiKey, template: &HttpSettings) -> Arc<dyn LlmClient> {
        let own = HttpSettings::new(self.base_url(), self.model.clone(), api_key);
        let settings = HttpSettings {
            base_url: own.base_url,
            model: own.model,
            api_key: own.api_key,
            // A fallback server was not probed: its replies are not
            // constrained, and only Anthropic's wire is known to take a
            // cache marker.
            constrain: false,
            cache_prompt: self.provider == ProviderKind::Anthropic,
            ..template.clone()
        };
        match self.provider {
            ProviderKind::Openai => Arc::new(OpenAiClient::new(settings)),
            ProviderKind::Anthropic => Arc::new(AnthropicClient::new(settings)),
        }
    }
}
