//! The client for Anthropic Messages (`POST /v1/messages`, streamed or not).

use std::ops::ControlFlow;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{
    CallAssembler, HttpSettings, LlmClient, LlmError, LlmRequest, LlmResponse, ModelToolCall, Role,
    StreamWatch, TextSink, Usage, for_each_event, http_client, is_event_stream, post_with_retries,
    watched,
};

/// Anthropic Messages.
#[derive(Debug)]
pub struct AnthropicClient {
    settings: HttpSettings,
    http: reqwest::Client,
}

impl AnthropicClient {
    /// A client for `settings`.
    pub fn new(settings: HttpSettings) -> Self {
        let http = http_client(settings.request_timeout);
        Self { settings, http }
    }

    /// The request body (the wire format): the system prompt goes in
    /// `system`, tool calls are `tool_use` blocks, results are `tool_result`
    /// blocks in a user message (consecutive results share one message).
    pub fn body(&self, request: &LlmRequest) -> Value {
        let mut system = String::new();
        let mut messages: Vec<Value> = Vec::new();
        for m in &request.messages {
            match m.role {
                Role::System => {
                    if !system.is_empty() {
                        system.push('\n');
                    }
                    system.push_str(&m.content);
                }
                Role::User => messages.push(
                    json!({"role": "user", "content": [{"type": "text", "text": m.content}]}),
                ),
                Role::Assistant => {
                    let mut blocks = Vec::new();
                    if !m.content.is_empty() {
                        blocks.push(json!({"type": "text", "text": m.content}));
                    }
                    for c in &m.tool_calls {
                        let input: Value =
                            serde_json::from_str(&c.arguments).unwrap_or_else(|_| json!({}));
                        blocks.push(
                            json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}),
                        );
                    }
                    messages.push(json!({"role": "assistant", "content": blocks}));
                }
                Role::Tool => {
                    let block = json!({"type": "tool_result",
                        "tool_use_id": m.tool_call_id.clone().unwrap_or_default(),
                        "content": m.content});
                    let appended = messages.last_mut().is_some_and(|last| {
                        let is_results =
                            last["role"] == "user" && last["content"][0]["type"] == "tool_result";
                        if is_results && let Some(a) = last["content"].as_array_mut() {
                            a.push(block.clone());
                            return true;
                        }
                        false
                    });
                    if !appended {
                        messages.push(json!({"role": "user", "content": [block]}));
                    }
                }
            }
        }
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                let f = &t["function"];
                json!({"name": f["name"], "description": f["description"],
                       "input_schema": f["parameters"]})
            })
            .collect();
        let max_tokens = request.max_tokens.map_or(self.settings.max_tokens, |m| {
            m.min(self.settings.max_tokens)
        });
        let mut body = json!({"model": self.settings.model, "max_tokens": max_tokens,
                              "messages": messages, "stream": self.settings.stream});
        if !system.is_empty() && self.settings.cache_prompt {
            // One breakpoint after the system prompt caches the tools and
            // the system prompt, which every request of a run repeats.
            body["system"] = json!([{"type": "text", "text": system,
                                     "cache_control": {"type": "ephemeral"}}]);
        } else if !system.is_empty() {
            body["system"] = json!(system);
        }
        if let Some(t) = self.settings.temperature {
            body["temperature"] = json!(t);
        }
        if !tools.is_empty() {
            body["tools"] = json!(tools);
        }
        body
    }
}

/// Anthropic's usage: `input_tokens` counts only what is neither read
/// from nor written to the cache; the prompt is all three.
fn anthropic_usage(u: &Value, usage: &mut Usage) {
    if let Some(i) = u["input_tokens"].as_u64() {
        let read = u["cache_read_input_tokens"].as_u64().unwrap_or(0);
        let written = u["cache_creation_input_tokens"].as_u64().unwrap_or(0);
        usage.input_tokens = i + read + written;
        usage.processed_tokens = Some(i + written);
    }
    if let Some(o) = u["output_tokens"].as_u64() {
        usage.output_tokens = o;
    }
}

#[async_trait]
impl LlmClient for AnthropicClient {
    async fn complete(
        &self,
        request: &LlmRequest,
        on_text: TextSink<'_>,
    ) -> Result<LlmResponse, LlmError> {
        let url = format!("{}/messages", self.settings.base_url);
        let mut headers = vec![("anthropic-version", "2023-06-01".to_owned())];
        if let Some(key) = &self.settings.api_key.0 {
            headers.push(("x-api-key", key.clone()));
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
        let mut out = LlmResponse::default();
        let mut usage = Usage::default();
        if !is_sse {
            let v: Value = resp
                .json()
                .await
                .map_err(|e| LlmError::Protocol(e.to_string()))?;
            for b in v["content"].as_array().into_iter().flatten() {
                match b["type"].as_str() {
                    Some("text") => {
                        let t = b["text"].as_str().unwrap_or("");
                        on_text(t);
                        out.content.push_str(t);
                    }
                    Some("tool_use") => out.tool_calls.push(ModelToolCall {
                        id: b["id"].as_str().unwrap_or("").to_owned(),
                        name: b["name"].as_str().unwrap_or("").to_owned(),
                        arguments: b["input"].to_string(),
                    }),
                    _ => {}
                }
            }
            out.finish_reason = v["stop_reason"].as_str().map(str::to_owned);
            anthropic_usage(&v["usage"], &mut usage);
            out.usage = Some(usage);
            return Ok(out);
        }
        let mut calls = CallAssembler::default();
        let cap = request.max_tokens.map_or(self.settings.max_tokens, |m| {
            m.min(self.settings.max_tokens)
        });
        let mut watch = StreamWatch::new(Some(cap));
        for_each_event(resp, |data| {
            if let Some(why) = watched(&mut watch, &mut out, &mut calls, false) {
                out.cut = Some(why);
                return Ok(ControlFlow::Break(()));
            }
            let v: Value = serde_json::from_str(data)
                .map_err(|e| LlmError::Protocol(format!("bad stream event: {e}")))?;
            let index = v["index"]
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .unwrap_or(0);
            match v["type"].as_str() {
                Some("message_start") => anthropic_usage(&v["message"]["usage"], &mut usage),
                Some("content_block_start") if v["content_block"]["type"] == "tool_use" => {
                    let b = &v["content_block"];
                    calls.delta(index, b["id"].as_str(), b["name"].as_str(), None);
                }
                Some("content_block_delta") => {
                    let d = &v["delta"];
                    if let Some(t) = d["text"].as_str() {
                        on_text(t);
                        out.content.push_str(t);
                    }
                    if let Some(p) = d["partial_json"].as_str() {
                        calls.delta(index, None, None, Some(p));
                    }
                }
                Some("message_delta") => {
                    if let Some(r) = v["delta"]["stop_reason"].as_str() {
                        out.finish_reason = Some(r.to_owned());
                    }
                    anthropic_usage(&v["usage"], &mut usage);
                }
                Some("message_stop") => return Ok(ControlFlow::Break(())),
                Some("error") => {
                    return Err(LlmError::Protocol(
                        toolgate_core::redact(&v["error"].to_string()).into_owned(),
                    ));
                }
                _ => {}
            }
            Ok(ControlFlow::Continue(()))
        })
        .await?;
        if out.cut.is_none() {
            out.cut = watched(&mut watch, &mut out, &mut calls, true);
        }
        out.tool_calls = calls
            .finish()
            .into_iter()
            .map(|mut c| {
                if c.arguments.is_empty() {
                    "{}".clone_into(&mut c.arguments);
                }
                c
            })
            .collect();
        out.usage = Some(usage);
        Ok(out)
    }
}
