//! The requests a probe makes of a server, each answered as the error a
//! person can act on when it fails: the models it serves (waiting while one
//! loads), how large a model's window is (llama.cpp's props, Ollama's
//! show), whether it is Ollama, and whether a model answers a tool call.

use std::time::Duration;

use serde_json::{Value, json};

use super::error::ProbeError;
use super::{
    ContextSource, ContextWindow, LOADING_POLL, ProbeRequest, Provider, ServedModel, ServerKind,
    TOOL_CHECK_MAX_TOKENS,
};
use crate::ModelToolCall;

/// One probe's client, URLs and credentials.
pub(super) struct Prober<'a> {
    pub(super) http: reqwest::Client,
    pub(super) request: &'a ProbeRequest,
    /// The base URL, without a trailing `/`.
    pub(super) base: String,
    /// The base URL without a trailing `/v1`.
    pub(super) root: String,
    /// A parameter count an answer told on the way (Ollama's
    /// `/api/show`).
    /// 0: none.
    pub(super) parameters: std::sync::atomic::AtomicU64,
}

impl<'a> Prober<'a> {
    pub(super) fn new(request: &'a ProbeRequest, base: &str) -> Result<Self, ProbeError> {
        let invalid = |source| ProbeError::InvalidUrl {
            url: base.to_owned(),
            source,
        };
        let url = reqwest::Url::parse(base).map_err(|e| invalid(Box::new(e)))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid("the scheme is not http or https".into()));
        }
        // reqwest is built without a default crypto provider; installing
        // it twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(request.timeout)
            .connect_timeout(request.timeout)
            .build()
            .map_err(|source| ProbeError::Client { source })?;
        Ok(Self {
            http,
            request,
            base: base.to_owned(),
            root: base.strip_suffix("/v1").unwrap_or(base).to_owned(),
            parameters: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// A request with the provider's credentials.
    pub(super) fn authed(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let key = self.request.api_key.expose();
        match self.request.provider {
            Provider::Anthropic => {
                let req = req.header("anthropic-version", "2023-06-01");
                match key {
                    Some(k) => req.header("x-api-key", k),
                    None => req,
                }
            }
            Provider::OpenAi => match key {
                Some(k) => req.bearer_auth(k),
                None => req,
            },
        }
    }

    /// Sends `req` to `url` and parses the JSON answer.
    pub(super) async fn json(
        &self,
        req: reqwest::RequestBuilder,
        url: &str,
        timeout: Duration,
        expected: &'static str,
    ) -> Result<Value, ProbeError> {
        let resp = self
            .authed(req)
            .send()
            .await
            .map_err(|e| request_error(url, timeout, e))?;
        let status = resp.status().as_u16();
        if status == 401 || status == 403 {
            return Err(ProbeError::Auth {
                url: url.to_owned(),
                status,
            });
        }
        if !resp.status().is_success() {
            let body = resp.text().await.unwrap_or_default();
            return Err(ProbeError::Status {
                url: url.to_owned(),
                status,
                body: body.trim().chars().take(300).collect(),
            });
        }
        let bytes = resp
            .bytes()
            .await
            .map_err(|e| request_error(url, timeout, e))?;
        serde_json::from_slice(&bytes).map_err(|_| ProbeError::Malformed {
            url: url.to_owned(),
            expected,
        })
    }

    pub(super) async fn get(&self, url: &str, expected: &'static str) -> Result<Value, ProbeError> {
        self.json(self.http.get(url), url, self.request.timeout, expected)
            .await
    }

    pub(super) async fn post(
        &self,
        url: &str,
        body: &Value,
        timeout: Duration,
        expected: &'static str,
    ) -> Result<Value, ProbeError> {
        let req = self.http.post(url).json(body).timeout(timeout);
        self.json(req, url, timeout, expected).await
    }

    /// The model list once the server has loaded its model (rule 1).
    pub(super) async fn models_when_loaded(&self) -> Result<Vec<ServedModel>, ProbeError> {
        let until = tokio::time::Instant::now() + self.request.loading_wait;
        loop {
            match self.models().await {
                Err(ProbeError::Status { status: 503, .. })
                    if tokio::time::Instant::now() + LOADING_POLL < until =>
                {
                    tokio::time::sleep(LOADING_POLL).await;
                }
                other => return other,
            }
        }
    }

    pub(super) async fn models(&self) -> Result<Vec<ServedModel>, ProbeError> {
        let url = format!("{}/models", self.base);
        let list = self.get(&url, "a model list").await?;
        let malformed = || ProbeError::Malformed {
            url: url.clone(),
            expected: "a model list",
        };
        let entries = list["data"].as_array().ok_or_else(malformed)?;
        entries
            .iter()
            .map(|e| {
                Some(ServedModel {
                    id: e["id"].as_str()?.to_owned(),
                    owned_by: e["owned_by"].as_str().map(str::to_owned),
                    context_length: e["max_model_len"]
                        .as_u64()
                        .or_else(|| e["context_length"].as_u64()),
                    parameters: e["meta"]["n_params"].as_u64(),
                })
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(malformed)
    }

    /// The context window (rule 4 of [`probe`]), and the kind an answer
    /// revealed.
    pub(super) async fn context_window(
        &self,
        kind: Option<ServerKind>,
        models: Option<&Vec<ServedModel>>,
        model: Option<&str>,
    ) -> (Result<ContextWindow, ProbeError>, Option<ServerKind>) {
        let listed = models
            .into_iter()
            .flatten()
            .find(|m| Some(m.id.as_str()) == model)
            .and_then(|m| m.context_length);
        if let Some(tokens) = listed {
            let source = ContextSource::ModelList;
            return (Ok(ContextWindow { tokens, source }), None);
        }
        if matches!(kind, None | Some(ServerKind::LlamaCpp)) {
            match self.llama_cpp_props().await {
                Ok(Some(window)) => return (Ok(window), Some(ServerKind::LlamaCpp)),
                // A known llama.cpp whose /props fails says why; an
                // unknown server without /props may be Ollama.
                Err(e) if kind.is_some() => return (Err(e), None),
                Ok(None) | Err(_) => {}
            }
        }
        let ollama = match kind {
            Some(ServerKind::Ollama) => true,
            None => self.is_ollama().await,
            Some(_) => false,
        };
        if !ollama {
            return (Err(ProbeError::ContextUnknown), None);
        }
        let found = kind.is_none().then_some(ServerKind::Ollama);
        let Some(model) = model else {
            let reason = "no model to ask Ollama about";
            return (Err(ProbeError::NotChecked { reason }), found);
        };
        (self.ollama_show(model).await, found)
    }

    pub(super) async fn llama_cpp_props(&self) -> Result<Option<ContextWindow>, ProbeError> {
        let url = format!("{}/props", self.root);
        let props = self.get(&url, "llama.cpp properties").await?;
        let n_ctx = props["default_generation_settings"]["n_ctx"]
            .as_u64()
            .or_else(|| props["n_ctx"].as_u64());
        Ok(n_ctx.map(|tokens| ContextWindow {
            tokens,
            source: ContextSource::LlamaCppProps,
        }))
    }

    pub(super) async fn is_ollama(&self) -> bool {
        let url = format!("{}/api/version", self.root);
        self.get(&url, "an Ollama version")
            .await
            .is_ok_and(|v| v["version"].is_string())
    }

    pub(super) async fn ollama_show(&self, model: &str) -> Result<ContextWindow, ProbeError> {
        let url = format!("{}/api/show", self.root);
        let body = json!({ "model": model });
        let show = self
            .post(
                &url,
                &body,
                self.request.timeout,
                "an Ollama model description",
            )
            .await?;
        let num_ctx = show["parameters"].as_str().and_then(|p| {
            p.lines().find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next() == Some("num_ctx")).then(|| words.next()?.parse().ok())?
            })
        });
        let info = &show["model_info"];
        if let Some(n) = info["general.parameter_count"].as_u64() {
            self.parameters
                .store(n, std::sync::atomic::Ordering::Relaxed);
        }
        if let Some(tokens) = num_ctx {
            let source = ContextSource::OllamaNumCtx;
            return Ok(ContextWindow { tokens, source });
        }
        let by_arch = info["general.architecture"]
            .as_str()
            .and_then(|arch| info[format!("{arch}.context_length")].as_u64());
        let any = || {
            info.as_object()?
                .iter()
                .find(|(k, _)| k.ends_with(".context_length"))
                .and_then(|(_, v)| v.as_u64())
        };
        by_arch
            .or_else(any)
            .map(|tokens| ContextWindow {
                tokens,
                source: ContextSource::OllamaModelInfo,
            })
            .ok_or(ProbeError::ContextUnknown)
    }

    /// The tool check (rule 5 of [`probe`]).
    pub(super) async fn tool_call(
        &self,
        model: &str,
        kind: Option<ServerKind>,
    ) -> Result<ModelToolCall, ProbeError> {
        const PROMPT: &str = "What is 2 + 3? Do not answer yourself: call the add tool.";
        const DESCRIPTION: &str = "Adds two integers and returns their sum.";
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"]
        });
        let timeout = self.request.tool_timeout;
        let max = TOOL_CHECK_MAX_TOKENS;
        match self.request.provider {
            Provider::OpenAi => {
                let url = format!("{}/chat/completions", self.base);
                // OpenAI's own API refuses `max_tokens` for its newer
                // models; the servers people run locally know only it.
                let limit = if kind == Some(ServerKind::OpenAi) {
                    "max_completion_tokens"
                } else {
                    "max_tokens"
                };
                let body = json!({
                    "model": model,
                    "messages": [{"role": "user", "content": PROMPT}],
                    "tools": [{"type": "function", "function": {
                        "name": "add", "description": DESCRIPTION, "parameters": schema}}],
                    limit: max,
                    "stream": false,
                });
                let answer = self.post(&url, &body, timeout, "a chat completion").await?;
                let choice = &answer["choices"][0];
                let message = &choice["message"];
                if let Some(call) = message["tool_calls"].as_array().and_then(|a| a.first()) {
                    return Ok(ModelToolCall {
                        id: call["id"].as_str().unwrap_or_default().to_owned(),
                        name: call["function"]["name"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                        arguments: match &call["function"]["arguments"] {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        },
                    });
                }
                if !message.is_object() {
                    return Err(ProbeError::Malformed {
                        url,
                        expected: "a chat completion",
                    });
                }
                no_call(
                    message["content"].as_str().unwrap_or_default(),
                    choice["finish_reason"] == "length",
                )
            }
            Provider::Anthropic => {
                let url = format!("{}/messages", self.base);
                let body = json!({
                    "model": model,
                    "max_tokens": max,
                    "messages": [{"role": "user", "content": PROMPT}],
                    "tools": [{"name": "add", "description": DESCRIPTION, "input_schema": schema}],
                });
                let answer = self.post(&url, &body, timeout, "a message").await?;
                let Some(blocks) = answer["content"].as_array() else {
                    return Err(ProbeError::Malformed {
                        url,
                        expected: "a message",
                    });
                };
                if let Some(call) = blocks.iter().find(|b| b["type"] == "tool_use") {
                    return Ok(ModelToolCall {
                        id: call["id"].as_str().unwrap_or_default().to_owned(),
                        name: call["name"].as_str().unwrap_or_default().to_owned(),
                        arguments: call["input"].to_string(),
                    });
                }
                let text: String = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
                no_call(&text, answer["stop_reason"] == "max_tokens")
            }
        }
    }
}

/// The tool check's failure when the answer holds no tool call.
pub(super) fn no_call(text: &str, cut: bool) -> Result<ModelToolCall, ProbeError> {
    if cut {
        return Err(ProbeError::Truncated {
            max_tokens: TOOL_CHECK_MAX_TOKENS,
        });
    }
    Err(ProbeError::TextOnly {
        text: text.trim().chars().take(200).collect(),
    })
}

/// A failed request as a reason.
pub(super) fn request_error(url: &str, timeout: Duration, e: reqwest::Error) -> ProbeError {
    let origin = reqwest::Url::parse(url)
        .map_or_else(|_| url.to_owned(), |u| u.origin().ascii_serialization());
    if e.is_timeout() {
        ProbeError::Timeout {
            url: url.to_owned(),
            after: timeout,
        }
    } else if is_refused(&e) {
        ProbeError::Refused { url: origin }
    } else if e.is_connect() {
        ProbeError::Connect {
            url: origin,
            source: e,
        }
    } else {
        ProbeError::Connect {
            url: url.to_owned(),
            source: e,
        }
    }
}

/// Whether an error was caused by a refused connection (the I/O error is
/// a few sources down, under reqwest's and hyper's).
pub(super) fn is_refused(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(e);
    while let Some(err) = cause {
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return true;
        }
        cause = err.source();
    }
    false
}
