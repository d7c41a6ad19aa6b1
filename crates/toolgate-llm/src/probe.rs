//! Probing model servers: is one reachable, which models it serves, how
//! large its context window is, whether it calls tools.
//!
//! [`probe`] answers these for one base URL, [`detect_local_servers`] asks
//! the usual local servers at once. Both are quick (every request has a
//! timeout), never print, and return every failure as data: a
//! [`ProbeError`] whose message is a reason a person can act on.

use std::fmt;
use std::time::Duration;

use crate::{ApiKey, ModelToolCall};

pub use error::ProbeError;
pub use local::{LOCAL_SERVERS, LocalServer, detect_local_servers, detect_servers};

use prober::Prober;

mod error;
mod local;
mod prober;

/// The wire format a server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI-compatible chat completions (OpenAI, Ollama, llama.cpp
    /// server, vLLM, LM Studio, OpenRouter).
    OpenAi,
    /// The Anthropic Messages API.
    Anthropic,
}

/// The software behind a base URL, when it can be recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerKind {
    /// Ollama.
    Ollama,
    /// llama.cpp's `llama-server`.
    LlamaCpp,
    /// vLLM.
    Vllm,
    /// LM Studio.
    LmStudio,
    /// OpenAI's API.
    OpenAi,
    /// Anthropic's API.
    Anthropic,
}

impl ServerKind {
    /// Whether the server constrains a chat reply to a JSON schema sent as
    /// OpenAI's `response_format` (llama.cpp, vLLM, Ollama): what
    /// `llm.constrain: auto` turns on constrained replies for.
    pub fn takes_json_schema(self) -> bool {
        matches!(self, Self::LlamaCpp | Self::Vllm | Self::Ollama)
    }
}

impl fmt::Display for ServerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Ollama => "Ollama",
            Self::LlamaCpp => "llama.cpp",
            Self::Vllm => "vLLM",
            Self::LmStudio => "LM Studio",
            Self::OpenAi => "OpenAI",
            Self::Anthropic => "Anthropic",
        })
    }
}

/// A model a server lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedModel {
    /// The name to put in requests.
    pub id: String,
    /// `owned_by`, as OpenAI-compatible servers fill it (`llamacpp`,
    /// `vllm`, `library` for Ollama, …).
    pub owned_by: Option<String>,
    /// The context window the list states (vLLM's `max_model_len`,
    /// OpenRouter's `context_length`).
    pub context_length: Option<u64>,
    /// The parameter count the list states (llama.cpp's `meta.n_params`).
    pub parameters: Option<u64>,
}

/// Where a context window was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContextSource {
    /// The model list (vLLM's `max_model_len`, `context_length`).
    ModelList,
    /// llama.cpp's `GET /props`: the context the server was started with.
    LlamaCppProps,
    /// Ollama's `POST /api/show`: the `num_ctx` parameter set for the model.
    OllamaNumCtx,
    /// Ollama's `POST /api/show`: the model's own `context_length`. Ollama
    /// may run it with a smaller default `num_ctx`.
    OllamaModelInfo,
}

impl fmt::Display for ContextSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ModelList => "the model list",
            Self::LlamaCppProps => "llama.cpp /props",
            Self::OllamaNumCtx => "the model's num_ctx parameter in Ollama",
            Self::OllamaModelInfo => "the model's context_length in Ollama",
        })
    }
}

/// A context window in tokens, and where it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextWindow {
    /// Tokens.
    pub tokens: u64,
    /// Where the number comes from.
    pub source: ContextSource,
}

/// What to probe. By default: no model, no API key, 2 s per request, no
/// tool check.
#[derive(Debug, Clone)]
pub struct ProbeRequest {
    provider: Provider,
    base_url: String,
    model: Option<String>,
    api_key: ApiKey,
    timeout: Duration,
    check_tools: bool,
    tool_timeout: Duration,
    loading_wait: Duration,
}

/// How often a probe asks again a server that answered 503 (rule 1 of
/// [`probe`]).
const LOADING_POLL: Duration = Duration::from_millis(250);

impl ProbeRequest {
    /// A probe of the server at `base_url` (`http://127.0.0.1:8080/v1`,
    /// `https://api.anthropic.com/v1`).
    pub fn new(provider: Provider, base_url: impl Into<String>) -> Self {
        Self {
            provider,
            base_url: base_url.into(),
            model: None,
            api_key: ApiKey::default(),
            timeout: Duration::from_secs(2),
            check_tools: false,
            tool_timeout: Duration::from_secs(60),
            loading_wait: Duration::from_secs(30),
        }
    }

    /// How long to wait for a server whose model list answers 503 — a
    /// llama.cpp or vLLM server still loading its model — asking again
    /// every 250 ms (rule 1 of [`probe`]). By default, 30 s.
    #[must_use]
    pub fn loading_wait(mut self, wait: Duration) -> Self {
        self.loading_wait = wait;
        self
    }

    /// The model that should be served. By default, none: the context
    /// window and the tool check use the first model listed.
    #[must_use]
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into()).filter(|m| !m.is_empty());
        self
    }

    /// The API key. By default, none.
    #[must_use]
    pub fn api_key(mut self, key: ApiKey) -> Self {
        self.api_key = key;
        self
    }

    /// The timeout of each request but the tool check's, connection
    /// included. By default, 2 s. A probe makes at most four such requests,
    /// one after the other, and only one when nothing listens.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Whether to check tool calling, which costs one small model call. By
    /// default, false.
    #[must_use]
    pub fn check_tools(mut self, yes: bool) -> Self {
        self.check_tools = yes;
        self
    }

    /// The timeout of the tool check's model call (a local model may have
    /// to load first). By default, 60 s.
    #[must_use]
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.tool_timeout = timeout;
        self
    }
}

/// What a probe found; every check holds its result or why it failed.
#[derive(Debug)]
pub struct ServerProbe {
    /// The base URL probed, without a trailing `/`.
    pub base_url: String,
    /// The server software, when recognisable.
    pub kind: Option<ServerKind>,
    /// The models it serves. Any error but a connection error means the
    /// server is reachable (see [`ServerProbe::reachable`]).
    pub models: Result<Vec<ServedModel>, ProbeError>,
    /// Whether the configured model is served: the served name it matched.
    /// `None` when no model was configured.
    pub model: Option<Result<String, ProbeError>>,
    /// The model the context window and the tool check are about.
    pub probed_model: Option<String>,
    /// The context window.
    pub context_window: Result<ContextWindow, ProbeError>,
    /// The tool check: the call the model made. `None` when not asked.
    pub tools: Option<Result<ModelToolCall, ProbeError>>,
    /// The probed model's parameter count, when the server says: the
    /// model list's `meta.n_params` (llama.cpp), or Ollama's
    /// `general.parameter_count`.
    pub parameters: Option<u64>,
}

impl ServerProbe {
    /// What the server reported about the probed model: its context
    /// window and parameter count (for `profile: auto`).
    pub fn facts(&self) -> ModelFacts {
        let listed = self.models.as_ref().ok().and_then(|models| {
            models
                .iter()
                .find(|m| Some(&m.id) == self.probed_model.as_ref())
                .and_then(|m| m.parameters)
        });
        let parameters = listed.or(self.parameters);
        let window = self.context_window.as_ref().ok().map(|w| w.tokens);
        ModelFacts::new(window, parameters).served_by(self.kind)
    }

    /// Whether a server answered at the base URL (even with an error).
    pub fn reachable(&self) -> bool {
        !matches!(
            self.models,
            Err(ProbeError::InvalidUrl { .. }
                | ProbeError::Refused { .. }
                | ProbeError::Timeout { .. }
                | ProbeError::Connect { .. }
                | ProbeError::Client { .. })
        )
    }
}

/// The tool check's token limit.
const TOOL_CHECK_MAX_TOKENS: u32 = 128;

/// Probes the server `request` names.
///
/// # Rules
///
/// 1. The models come from `GET {base}/models` (with `x-api-key` and
///    `anthropic-version` for Anthropic, a bearer token otherwise). A
///    refused connection, a timeout, 401/403 and other statuses are
///    reasons; when the server cannot be reached or refuses the
///    credentials, nothing else is asked. A 503 (a server still loading
///    its model: what it reports then is not yet what it serves) is asked
///    again until it answers otherwise or
///    [`ProbeRequest::loading_wait`] has passed.
/// 2. The kind comes from `owned_by` in the list (`llamacpp`, `vllm`,
///    `library` = Ollama, `organization_owner` = LM Studio, `system` /
///    `openai` = OpenAI), from the provider for Anthropic, and otherwise
///    from the checks below that answer (`/props` = llama.cpp,
///    `/api/version` = Ollama).
/// 3. The configured model is served when the list has it exactly, or,
///    without a `:tag`, with Ollama's default tag `:latest`. The probed
///    model is the matched one, else the configured one when the list
///    could not be read, else the first listed.
/// 4. The context window is the first of: the list's `max_model_len` or
///    `context_length` for the probed model; for llama.cpp (or an unknown
///    server), `GET {root}/props` → `default_generation_settings.n_ctx` or
///    `n_ctx`; for Ollama (or an unknown server whose `/api/version`
///    answers), `POST {root}/api/show` → the `num_ctx` parameter when set,
///    else `model_info["<arch>.context_length"]`. The root is the base
///    URL without a trailing `/v1`. Anything else is unknown.
/// 5. The tool check (only when asked) is one non-streamed call with one
///    tool (`add`) and a prompt that needs it, at most 128 tokens: a
///    structured tool call passes; text alone is "answers in text only".
///    It is skipped when the configured model is not served.
///
/// ```no_run
/// # async fn f() {
/// use toolgate_llm::probe::{ProbeRequest, Provider, probe};
/// let request = ProbeRequest::new(Provider::OpenAi, "http://127.0.0.1:11434/v1").model("llama3.2");
/// let found = probe(&request).await;
/// if let Some(Err(reason)) = &found.model {
///     eprintln!("{}: {reason}", found.base_url);
/// }
/// # }
/// ```
pub async fn probe(request: &ProbeRequest) -> ServerProbe {
    let base_url = request.base_url.trim_end_matches('/').to_owned();
    let (prober, models) = match Prober::new(request, &base_url) {
        Ok(p) => {
            let models = p.models_when_loaded().await;
            (Some(p), models)
        }
        Err(e) => (None, Err(e)),
    };
    let mut out = ServerProbe {
        base_url,
        kind: None,
        models,
        model: None,
        probed_model: None,
        context_window: Err(ProbeError::ContextUnknown),
        tools: None,
        parameters: None,
    };
    let Some(prober) = prober else {
        return out.not_checked(request, "the server cannot be reached");
    };
    match &out.models {
        Err(ProbeError::Auth { .. }) => {
            return out.not_checked(request, "the server refused the credentials");
        }
        Err(_) if !out.reachable() => {
            return out.not_checked(request, "the server cannot be reached");
        }
        _ => {}
    }
    out.kind = match (&out.models, request.provider) {
        (Ok(_), Provider::Anthropic) => Some(ServerKind::Anthropic),
        (Ok(models), Provider::OpenAi) => kind_from_list(models),
        (Err(_), _) => None,
    };
    out.model = request.model.as_ref().map(|m| match &out.models {
        Ok(models) => match_model(m, models).ok_or_else(|| ProbeError::ModelNotServed {
            model: m.clone(),
            available: models.iter().map(|s| s.id.clone()).collect(),
        }),
        Err(_) => Err(ProbeError::NotChecked {
            reason: "the server did not list its models",
        }),
    });
    out.probed_model = match (&out.model, &out.models) {
        (Some(Ok(id)), _) => Some(id.clone()),
        (Some(Err(ProbeError::ModelNotServed { .. })), _) | (None, Err(_)) => None,
        (Some(Err(_)), _) => request.model.clone(),
        (None, Ok(models)) => models.first().map(|m| m.id.clone()),
    };
    let (context, kind) = prober
        .context_window(
            out.kind,
            out.models.as_ref().ok(),
            out.probed_model.as_deref(),
        )
        .await;
    out.context_window = context;
    out.kind = out.kind.or(kind);
    out.parameters =
        Some(prober.parameters.load(std::sync::atomic::Ordering::Relaxed)).filter(|n| *n > 0);
    if request.check_tools {
        out.tools = Some(match &out.probed_model {
            Some(model) => prober.tool_call(model, out.kind).await,
            None if matches!(out.model, Some(Err(_))) => Err(ProbeError::NotChecked {
                reason: "the configured model is not served",
            }),
            None => Err(ProbeError::NotChecked {
                reason: "no model to ask",
            }),
        });
    }
    out
}

impl ServerProbe {
    /// Marks every check after the model list as not made, for `reason`.
    fn not_checked(mut self, request: &ProbeRequest, reason: &'static str) -> Self {
        let not = || ProbeError::NotChecked { reason };
        self.model = request.model.as_ref().map(|_| Err(not()));
        self.context_window = Err(not());
        self.tools = request.check_tools.then(|| Err(not()));
        self
    }
}

/// The kind `owned_by` names, when all listed models agree on one.
fn kind_from_list(models: &[ServedModel]) -> Option<ServerKind> {
    let mut kinds = models.iter().filter_map(|m| match m.owned_by.as_deref() {
        Some("llamacpp") => Some(ServerKind::LlamaCpp),
        Some("vllm") => Some(ServerKind::Vllm),
        Some("library" | "ollama") => Some(ServerKind::Ollama),
        Some("organization_owner") => Some(ServerKind::LmStudio),
        Some("system" | "openai" | "openai-internal") => Some(ServerKind::OpenAi),
        _ => None,
    });
    let first = kinds.next()?;
    kinds.all(|k| k == first).then_some(first)
}

/// The served name `configured` refers to (rule 3 of [`probe`]).
fn match_model(configured: &str, models: &[ServedModel]) -> Option<String> {
    let latest = (!configured.contains(':')).then(|| format!("{configured}:latest"));
    models
        .iter()
        .find(|m| m.id == configured)
        .or_else(|| {
            let latest = latest.as_deref()?;
            models.iter().find(|m| m.id == latest)
        })
        .map(|m| m.id.clone())
}

/// The models the server `request` names serves: one `GET {base}/models`
/// (rule 1 of [`probe`]), nothing else. For a quick check before a run.
pub async fn list_models(request: &ProbeRequest) -> Result<Vec<ServedModel>, ProbeError> {
    let base_url = request.base_url.trim_end_matches('/').to_owned();
    Prober::new(request, &base_url)?.models().await
}

/// What a model server reported about the model a run talks to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ModelFacts {
    /// The context window in tokens, when the server said.
    pub window: Option<u64>,
    /// The parameter count, when the server said (llama.cpp's
    /// `/v1/models` `meta.n_params`, Ollama's `general.parameter_count`).
    pub parameters: Option<u64>,
    /// The server software, when it could be recognised.
    pub kind: Option<ServerKind>,
}

impl ModelFacts {
    /// Facts of a model with this window and parameter count.
    pub fn new(window: Option<u64>, parameters: Option<u64>) -> Self {
        Self {
            window,
            parameters,
            kind: None,
        }
    }

    /// These facts, served by `kind`.
    #[must_use]
    pub fn served_by(mut self, kind: Option<ServerKind>) -> Self {
        self.kind = kind;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(ids: &[(&str, Option<&str>)]) -> Vec<ServedModel> {
        ids.iter()
            .map(|(id, owner)| ServedModel {
                id: (*id).to_owned(),
                owned_by: owner.map(str::to_owned),
                context_length: None,
                parameters: None,
            })
            .collect()
    }

    #[test]
    fn configured_model_matching() {
        let served = listed(&[
            ("llama3.2:latest", None),
            ("qwen2.5-coder:7b", None),
            ("org/Model-7B", None),
        ]);
        let cases: &[(&str, Option<&str>)] = &[
            ("llama3.2:latest", Some("llama3.2:latest")),
            ("llama3.2", Some("llama3.2:latest")),
            ("qwen2.5-coder:7b", Some("qwen2.5-coder:7b")),
            ("qwen2.5-coder", None),
            ("qwen2.5-coder:14b", None),
            ("org/Model-7B", Some("org/Model-7B")),
            ("org/model-7b", None),
            ("llama3", None),
        ];
        for (configured, expected) in cases {
            assert_eq!(
                match_model(configured, &served).as_deref(),
                *expected,
                "{configured}"
            );
        }
    }

    #[test]
    fn kind_from_owned_by() {
        type Case<'a> = (&'a [(&'a str, Option<&'a str>)], Option<ServerKind>);
        let cases: &[Case<'_>] = &[
            (&[("m", Some("llamacpp"))], Some(ServerKind::LlamaCpp)),
            (&[("m", Some("vllm"))], Some(ServerKind::Vllm)),
            (
                &[("a", Some("library")), ("b", Some("library"))],
                Some(ServerKind::Ollama),
            ),
            (
                &[("m", Some("organization_owner"))],
                Some(ServerKind::LmStudio),
            ),
            (
                &[("gpt", Some("system")), ("o", Some("openai"))],
                Some(ServerKind::OpenAi),
            ),
            (&[("a", Some("library")), ("b", Some("vllm"))], None),
            (&[("a", Some("someone"))], None),
            (&[("a", None), ("b", Some("vllm"))], Some(ServerKind::Vllm)),
            (&[], None),
        ];
        for (models, expected) in cases {
            assert_eq!(kind_from_list(&listed(models)), *expected, "{models:?}");
        }
    }
}
