//! The usual local model servers, asked at once which models they serve.

use std::fmt;
use std::time::Duration;

use futures_util::future::join_all;

use super::{ProbeError, ProbeRequest, Prober, Provider, ServedModel, ServerKind, kind_from_list};

/// The usual local model servers and their OpenAI-compatible base URLs.
pub const LOCAL_SERVERS: &[(ServerKind, &str)] = &[
    (ServerKind::Ollama, "http://127.0.0.1:11434/v1"),
    (ServerKind::LlamaCpp, "http://127.0.0.1:8080/v1"),
    (ServerKind::LmStudio, "http://127.0.0.1:1234/v1"),
    (ServerKind::Vllm, "http://127.0.0.1:8000/v1"),
];

/// What was found at one candidate address.
///
/// Its `Display` is one clause for a person: `Ollama at
/// http://127.0.0.1:11434/v1: connection refused`, `llama.cpp at
/// http://127.0.0.1:8080/v1: up, serving qwen2.5-coder`.
#[derive(Debug)]
pub struct LocalServer {
    /// The server usually found there.
    pub expected: ServerKind,
    /// The base URL tried.
    pub base_url: String,
    /// The server actually found, when recognisable.
    pub kind: Option<ServerKind>,
    /// Its models, or why they could not be listed.
    pub models: Result<Vec<ServedModel>, ProbeError>,
}

impl LocalServer {
    /// Whether it answered with a model list that has at least one model.
    pub fn is_up(&self) -> bool {
        self.models.as_ref().is_ok_and(|m| !m.is_empty())
    }
}

impl fmt::Display for LocalServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}: ", self.expected, self.base_url)?;
        match &self.models {
            Ok(models) => {
                f.write_str("up")?;
                if let Some(kind) = self.kind.filter(|k| *k != self.expected) {
                    write!(f, " ({kind})")?;
                }
                if models.is_empty() {
                    f.write_str(", serving no model")
                } else {
                    let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
                    write!(f, ", serving {}", ids.join(", "))
                }
            }
            Err(ProbeError::Refused { .. }) => f.write_str("connection refused"),
            Err(ProbeError::Timeout { after, .. }) => {
                write!(f, "no answer within {} ms", after.as_millis())
            }
            Err(e) => write!(f, "{e}"),
        }
    }
}

/// Lists the models of each candidate `(expected kind, base URL)` at once,
/// each request bounded by `timeout`. The results are in the candidates'
/// order.
pub async fn detect_servers(
    candidates: &[(ServerKind, &str)],
    timeout: Duration,
) -> Vec<LocalServer> {
    join_all(candidates.iter().map(|&(expected, base)| async move {
        let request = ProbeRequest::new(Provider::OpenAi, base).timeout(timeout);
        let base_url = base.trim_end_matches('/').to_owned();
        let models = match Prober::new(&request, &base_url) {
            Ok(prober) => prober.models().await,
            Err(e) => Err(e),
        };
        LocalServer {
            expected,
            kind: models.as_deref().ok().and_then(kind_from_list),
            base_url,
            models,
        }
    }))
    .await
}

/// Asks the usual local servers ([`LOCAL_SERVERS`]: Ollama, llama.cpp, LM
/// Studio, vLLM) at once which models they serve; for the first-run
/// message ("tried Ollama at …: connection refused; …") and to pick a
/// server when none is configured.
pub async fn detect_local_servers(timeout: Duration) -> Vec<LocalServer> {
    detect_servers(LOCAL_SERVERS, timeout).await
}
