//! The HTTP side both model clients share: connection settings, the client,
//! a request posted with retries on rate limits, overload and lost
//! connections, and whether an answer is a stream.

use std::time::Duration;

use serde_json::Value;

use super::{ApiKey, DEFAULT_TEMPERATURE, LlmError};

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
    /// [`reply_schema`](super::reply_schema) for the wire format; OpenAI-compatible servers
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

pub(super) fn http_client(timeout: Duration) -> reqwest::Client {
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
pub(super) async fn post_with_retries(
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

/// Whether the server answered with server-sent events (a stream).
pub(super) fn is_event_stream(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("event-stream"))
}
