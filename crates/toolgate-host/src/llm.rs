//! The model client of a host: which server, which model, which key.

use std::sync::Arc;
use std::time::Duration;

use toolgate_agent::{AnthropicClient, ApiKey, HttpSettings, LlmClient, OpenAiClient};

use crate::config::LlmProvider;
use crate::error::HostError;
use crate::host::Host;

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
}

/// The base URL of a provider's own API.
pub(crate) fn provider_url(provider: LlmProvider) -> &'static str {
    match provider {
        LlmProvider::Openai => "https://api.openai.com/v1",
        LlmProvider::Anthropic => "https://api.anthropic.com/v1",
    }
}

impl Host {
    /// The API key of `llm.api_key_env`, when one is configured.
    pub(crate) fn api_key(&self) -> Result<ApiKey, HostError> {
        let Some(var) = &self.config().llm.api_key_env else {
            return Ok(ApiKey::new(None));
        };
        match self.env_var(var) {
            Some(key) if !key.is_empty() => Ok(ApiKey::new(Some(key.to_owned()))),
            _ => Err(HostError::KeyMissing { var: var.clone() }),
        }
    }

    /// The client for `choice`, with the `llm.*` timeouts, retries,
    /// streaming and token limit.
    pub fn llm_client(&self, choice: &ModelChoice) -> Result<Arc<dyn LlmClient>, HostError> {
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
        Ok(match choice.provider {
            LlmProvider::Openai => Arc::new(OpenAiClient::new(settings)),
            LlmProvider::Anthropic => Arc::new(AnthropicClient::new(settings)),
        })
    }
}

impl Host {
    /// Which model a run talks to: `--model` / `--base-url`, then `llm.model`
    /// / `llm.base_url`, then the provider's own API.
    pub async fn choose_model(&self, overrides: &LlmOverrides) -> Result<ModelChoice, HostError> {
        let llm = &self.config().llm;
        let base_url = overrides
            .base_url
            .clone()
            .or_else(|| llm.base_url.clone())
            .unwrap_or_else(|| provider_url(llm.provider).to_owned());
        let model = overrides
            .model
            .clone()
            .or_else(|| llm.model.clone())
            .ok_or(HostError::NoModel { tried: Vec::new() })?;
        Ok(ModelChoice {
            provider: llm.provider,
            base_url,
            model,
        })
    }
}
