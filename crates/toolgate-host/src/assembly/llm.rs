//! The model client of a host: which server, which model, which key.

use std::sync::Arc;
use std::time::Duration;

use toolgate_agent::{
    AnthropicClient, ApiKey, DEFAULT_CONTEXT_WINDOW, FallbackClient, HttpSettings, LlmClient,
    LocalServer, ModelFacts, OpenAiClient, ProbeError, ProbeRequest, Provider, ServedModel,
    ServerKind, SwitchLog, detect_local_servers,
};

use crate::assembly::host::Host;
use crate::config::{Constrain, LlmProvider};
use crate::error::HostError;

/// Flags that win over `llm.model` and `llm.base_url`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LlmOverrides {
    /// `--model`.
    pub model: Option<String>,
    /// `--base-url`.
    pub base_url: Option<String>,
}

impl LlmOverrides {
    /// Overrides of the model and the server.
    pub fn new(model: Option<String>, base_url: Option<String>) -> Self {
        Self { model, base_url }
    }
}

/// The model a run talks to, and how it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ModelChoice {
    /// The wire format.
    pub provider: LlmProvider,
    /// The server's base URL.
    pub base_url: String,
    /// The model.
    pub model: String,
    /// The server software the probe before a run recognised, if any:
    /// whether replies are constrained ([`Host::constrain`]) and the
    /// prompt cache asked for (llama.cpp) follow from it.
    pub server: Option<ServerKind>,
}

/// The base URL of a provider's own API.
pub(crate) fn provider_url(provider: LlmProvider) -> &'static str {
    match provider {
        LlmProvider::Openai => "https://api.openai.com/v1",
        LlmProvider::Anthropic => "https://api.anthropic.com/v1",
    }
}

/// A run's model client, and the log its provider switches go to (with
/// `llm.fallback`).
pub type ModelClient = (Arc<dyn LlmClient>, Option<Arc<SwitchLog>>);

impl Host {
    /// The API key of `llm.api_key_env`, when one is configured.
    pub(crate) fn api_key(&self) -> Result<ApiKey, HostError> {
        let Some(var) = &self.config().llm.api_key_env else {
            return Ok(ApiKey::new(None));
        };
        match self.env_var(var) {
            Some(key) if !key.trim().is_empty() => Ok(ApiKey::new(Some(key.to_owned()))),
            found => Err(HostError::KeyMissing {
                var: var.clone(),
                empty: found.is_some(),
            }),
        }
    }

    /// The client for `choice`, with the `llm.*` timeouts, retries,
    /// streaming and token limit.
    pub fn llm_client(&self, choice: &ModelChoice) -> Result<Arc<dyn LlmClient>, HostError> {
        let settings = self.http_settings(choice)?;
        Ok(match choice.provider {
            LlmProvider::Openai => Arc::new(OpenAiClient::new(settings)),
            LlmProvider::Anthropic => Arc::new(AnthropicClient::new(settings)),
        })
    }

    /// The HTTP settings of `choice`: its server, model and key, and the
    /// `llm.*` timeouts, retries, streaming and token limit.
    fn http_settings(&self, choice: &ModelChoice) -> Result<HttpSettings, HostError> {
        let llm = &self.config().llm;
        let mut settings = HttpSettings::new(
            choice.base_url.clone(),
            choice.model.clone(),
            self.api_key()?,
        );
        settings.request_timeout = Duration::from_secs(llm.timeout.max(1));
        settings.max_retries = llm.max_retries;
        settings.stream = llm.stream;
        settings.max_tokens = llm.max_tokens;
        settings.temperature = llm.temperature.sent();
        settings.constrain = self.constrain(choice, choice.server);
        // llama.cpp's `cache_prompt`, Anthropic's `cache_control`: the
        // loop keeps each request's prefix the same, so each step pays
        // for what is new.
        settings.cache_prompt = choice.provider == LlmProvider::Anthropic
            || choice.server == Some(ServerKind::LlamaCpp);
        Ok(settings)
    }

    /// The run's model client with `llm.fallback` behind it, and the log
    /// its provider switches go to; `choice`'s own client and no log when
    /// there is no fallback.
    ///
    /// # Rules
    ///
    /// 1. The configured model is tried first, then each entry in order
    ///    (the fallback client's rules: which errors switch, stickiness,
    ///    `tools: false`).
    /// 2. An entry's key is read from its `api_key_env` now: a variable
    ///    that is not set is an error before the run, naming the entry.
    /// 3. Entries share the run's timeouts, retries, streaming and token
    ///    limit.
    pub fn model_client(&self, choice: &ModelChoice) -> Result<ModelClient, HostError> {
        let primary = self.llm_client(choice)?;
        let entries = &self.config().llm.fallback;
        if entries.is_empty() {
            return Ok((primary, None));
        }
        let template = self.http_settings(choice)?;
        // MODEL@HOST[:PORT], as the entries are named.
        let host = choice
            .base_url
            .split_once("://")
            .map_or(choice.base_url.as_str(), |(_, rest)| rest)
            .split('/')
            .next()
            .unwrap_or_default();
        let log = SwitchLog::new();
        let mut builder = FallbackClient::builder()
            .provider(format!("{}@{host}", choice.model), primary, true)
            .on_switch(log.callback());
        for entry in entries {
            let key = match &entry.api_key_env {
                None => ApiKey::new(None),
                Some(var) => match self.env_var(var) {
                    Some(key) if !key.is_empty() => ApiKey::new(Some(key.to_owned())),
                    _ => {
                        return Err(HostError::Fallback(format!(
                            "the environment variable {var} (api_key_env of `{}`) is not set",
                            entry.name()
                        )));
                    }
                },
            };
            builder = builder.provider(entry.name(), entry.client(key, &template), entry.tools);
        }
        let client = builder
            .build()
            .map_err(|e| HostError::Fallback(toolgate_core::error_chain(&e)))?;
        Ok((Arc::new(client), Some(log)))
    }
}

/// How long the first-run probes wait for a server.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

impl Host {
    /// Which model a run talks to, checked before the run starts so that a
    /// missing server fails in seconds with what to do.
    ///
    /// # Rules
    ///
    /// 1. The server is `--base-url`, else `llm.base_url`. Without one: the
    ///    provider's own API when the provider is `anthropic` or an API key
    ///    is configured (`llm.api_key_env`); otherwise the usual local
    ///    servers are tried at once (Ollama, llama.cpp, LM Studio, vLLM on
    ///    their default ports) and the first that serves a model is used.
    /// 2. The model is `--model`, else `llm.model`; without one, the model
    ///    the server serves when it serves exactly one.
    /// 3. The server's model list is asked for first (one request, 2 s): a
    ///    refused connection or a timeout is
    ///    [`HostError::Unreachable`]; refused credentials are
    ///    [`HostError::AuthRefused`]; a server that does not list models
    ///    (HTTP 404) is used as configured.
    /// 4. Nothing found is [`HostError::NoModel`], naming what was tried;
    ///    but [`HostError::ModelUntrusted`] when the workspace file sets
    ///    `llm.*` keys that were ignored because it is not trusted. A server
    ///    serving several models, none named, is [`HostError::ChooseModel`].
    pub async fn choose_model(&self, overrides: &LlmOverrides) -> Result<ModelChoice, HostError> {
        let llm = &self.config().llm;
        let provider = llm.provider;
        let model = overrides.model.clone().or_else(|| llm.model.clone());
        let base_url = overrides.base_url.clone().or_else(|| llm.base_url.clone());
        let hosted = provider == LlmProvider::Anthropic || llm.api_key_env.is_some();
        let (base_url, listed) = match base_url {
            Some(url) => {
                let listed = self.list_models(provider, &url).await?;
                (url, listed)
            }
            None if hosted => {
                let url = provider_url(provider).to_owned();
                let listed = self.list_models(provider, &url).await?;
                (url, listed)
            }
            None => {
                let found = detect_local_servers(PROBE_TIMEOUT).await;
                let tried: Vec<String> = found.iter().map(ToString::to_string).collect();
                let Some(up) = found.into_iter().find(LocalServer::is_up) else {
                    return Err(self.no_model(model, tried));
                };
                let models = up.models.unwrap_or_default();
                (up.base_url, Some(models))
            }
        };
        let model = match (model, listed) {
            (Some(model), _) => model,
            (None, Some(models)) if models.len() == 1 => models[0].id.clone(),
            (None, Some(models)) if !models.is_empty() => {
                return Err(HostError::ChooseModel {
                    base_url,
                    served: models.into_iter().map(|m| m.id).collect(),
                });
            }
            (None, _) => return Err(HostError::UnnamedModel { base_url }),
        };
        Ok(ModelChoice {
            provider,
            base_url,
            model,
            server: None,
        })
    }

    /// The context window of `choice`, in tokens: what the server says
    /// (llama.cpp `/props`, Ollama `/api/show`, vLLM's model list), else
    /// `llm.context_window`, else [`DEFAULT_CONTEXT_WINDOW`]; with where it
    /// came from, and what the server reported about the model (for
    /// `agents.*.profile: auto` and `llm.constrain: auto`).
    pub async fn context_window(&self, choice: &ModelChoice) -> (u32, String, ModelFacts) {
        let provider = match choice.provider {
            LlmProvider::Openai => Provider::OpenAi,
            LlmProvider::Anthropic => Provider::Anthropic,
        };
        let mut request = ProbeRequest::new(provider, &choice.base_url)
            .model(&choice.model)
            .timeout(PROBE_TIMEOUT);
        if let Ok(key) = self.api_key() {
            request = request.api_key(key);
        }
        let found = toolgate_agent::probe(&request).await;
        let facts = found.facts();
        if let Ok(window) = found.context_window {
            return (
                u32::try_from(window.tokens).unwrap_or(u32::MAX),
                window.source.to_string(),
                facts,
            );
        }
        match self.config().llm.context_window {
            Some(tokens) => (tokens, "llm.context_window".to_owned(), facts),
            None => (DEFAULT_CONTEXT_WINDOW, "the default".to_owned(), facts),
        }
    }

    /// Whether replies are constrained for a server the probe found to
    /// be `kind`: `llm.constrain: auto` and a server that takes a JSON
    /// schema ([`ServerKind::takes_json_schema`]), on the OpenAI wire.
    pub fn constrain(&self, choice: &ModelChoice, kind: Option<ServerKind>) -> bool {
        self.config().llm.constrain == Constrain::Auto
            && choice.provider == LlmProvider::Openai
            && kind.is_some_and(ServerKind::takes_json_schema)
    }

    /// Why no local server was found: the workspace file's ignored
    /// `llm.*` keys first (they would have named the server), else nothing
    /// configured.
    fn no_model(&self, model: Option<String>, tried: Vec<String>) -> HostError {
        if let Some(project) = &self.loaded().project {
            let keys: Vec<String> = project
                .ignored()
                .iter()
                .filter(|k| k.starts_with("llm."))
                .cloned()
                .collect();
            if !keys.is_empty() {
                return HostError::ModelUntrusted {
                    file: project.file.clone(),
                    keys,
                };
            }
        }
        HostError::NoModel { model, tried }
    }

    /// The models `base_url` serves (`None` when it does not list them),
    /// or why it cannot be used (rule 3 of [`Host::choose_model`]).
    async fn list_models(
        &self,
        provider: LlmProvider,
        base_url: &str,
    ) -> Result<Option<Vec<ServedModel>>, HostError> {
        let provider = match provider {
            LlmProvider::Openai => Provider::OpenAi,
            LlmProvider::Anthropic => Provider::Anthropic,
        };
        let request = ProbeRequest::new(provider, base_url)
            .api_key(self.api_key()?)
            .timeout(PROBE_TIMEOUT);
        match toolgate_agent::list_models(&request).await {
            Ok(models) => Ok(Some(models)),
            Err(
                error @ (ProbeError::Refused { .. }
                | ProbeError::Timeout { .. }
                | ProbeError::Connect { .. }
                | ProbeError::InvalidUrl { .. }),
            ) => Err(HostError::Unreachable {
                base_url: base_url.to_owned(),
                // The URL is in the message already.
                reason: match error {
                    ProbeError::Refused { .. } => "connection refused".to_owned(),
                    ProbeError::Timeout { after, .. } => {
                        format!("no answer within {} ms", after.as_millis())
                    }
                    other => other.to_string(),
                },
            }),
            Err(error @ ProbeError::Auth { .. }) => Err(HostError::AuthRefused {
                reason: error.to_string(),
            }),
            Err(_) => Ok(None),
        }
    }
}
