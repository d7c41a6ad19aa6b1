//! The OpenAI-compatible client (`/chat/completions`, streamed or not): the
//! request, the reply decoded, token usage and llama.cpp's prompt timings.

use std::ops::ControlFlow;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::constrain::reply_schema;
use super::http::{HttpSettings, http_client, is_event_stream, post_with_retries};
use super::sse::for_each_event;
use super::watch::StreamWatch;
use super::{
    CallAssembler, LlmClient, LlmError, LlmRequest, LlmResponse, ModelToolCall, Role, TextSink,
    Usage, constrain, watched,
};

/// OpenAI-compatible chat completions.
#[derive(Debug)]
pub struct OpenAiClient {
    pub(super) settings: HttpSettings,
    pub(super) http: reqwest::Client,
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
        if request.penalize_repeats {
            body["frequency_penalty"] = json!(super::REPEAT_PENALTY);
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
    pub(super) fn constrained(&self, request: &LlmRequest) -> bool {
        self.settings.constrain && !request.tools.is_empty()
    }
}

/// A constrained reply decoded (see [`constrain`]): its call, or its
/// answer shown now (its JSON was not streamed). One the server stopped at
/// `max_tokens` is incomplete JSON, neither: it is a reply cut short
/// ([`LlmResponse::cut`]), not an answer.
pub(super) fn decode_reply(out: &mut LlmResponse, on_text: TextSink<'_>) {
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

pub(super) fn openai_usage(v: &Value) -> Option<Usage> {
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
pub(super) fn prompt_processed(v: &Value) -> Option<u64> {
    v["timings"]["prompt_n"].as_u64()
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
