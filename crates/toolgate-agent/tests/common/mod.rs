//! The scripted model server and the gate the agent-loop tests share.

#![allow(
    dead_code,
    unreachable_pub,
    clippy::unwrap_used,
    clippy::format_push_string,
    reason = "each test file uses a part; a failed unwrap is a failed test"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolgate_agent::{ApiKey, HttpSettings, LlmClient, OpenAiClient};
use toolgate_core::{Registry, Tool, Workspace};
use toolgate_engine::ExecutionEngine;
use toolgate_policy::{ConfirmationMode, ConfirmationPolicy};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Answers the n-th request with the n-th template (the last one repeats).
pub(crate) struct Script {
    pub(crate) replies: Vec<ResponseTemplate>,
    pub(crate) n: AtomicUsize,
}

impl Respond for Script {
    fn respond(&self, _req: &Request) -> ResponseTemplate {
        let i = self.n.fetch_add(1, Ordering::SeqCst);
        self.replies[i.min(self.replies.len() - 1)].clone()
    }
}

pub(crate) async fn server(endpoint: &str, replies: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(endpoint))
        .respond_with(Script {
            replies,
            n: AtomicUsize::new(0),
        })
        .mount(&server)
        .await;
    server
}

pub(crate) fn tool_calls(calls: &[(&str, &str, &str)]) -> ResponseTemplate {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
        })
        .collect();
    ResponseTemplate::new(200).set_body_json(json!({
        "choices": [{"index": 0, "finish_reason": "tool_calls",
                     "message": {"role": "assistant", "content": null, "tool_calls": calls}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}
    }))
}

/// A workspace holding `a.txt`, and a model that reads it in `n` steps and
/// then answers `last`.
pub(crate) async fn reads_of_a(
    n: usize,
    last: &str,
) -> (tempfile::TempDir, MockServer, Arc<dyn LlmClient>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let server = server("/v1/chat/completions", reads_of_a_then(n, last)).await;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, false)));
    (dir, server, llm)
}

/// `n` steps that each read `a.txt`, then the final answer `last`.
pub(crate) fn reads_of_a_then(n: usize, last: &str) -> Vec<ResponseTemplate> {
    let mut replies: Vec<ResponseTemplate> = (1..=n)
        .map(|i| tool_calls(&[(&format!("r{i}"), "read_file", r#"{"path":"a.txt"}"#)]))
        .collect();
    replies.push(answer(last));
    replies
}

pub(crate) fn answer(text: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 7}
    }))
}

pub(crate) fn sse(events: &[Value]) -> ResponseTemplate {
    let mut body = String::new();
    for e in events {
        body.push_str(&format!("data: {e}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

pub(crate) fn settings(server: &MockServer, stream: bool) -> HttpSettings {
    let mut s = HttpSettings::new(
        format!("{}/v1", server.uri()),
        "test-model",
        ApiKey::new(Some("sk-test".into())),
    );
    s.stream = stream;
    s.backoff = Duration::from_millis(10);
    s
}

pub(crate) fn engine(dir: &std::path::Path, extra: Vec<Arc<dyn Tool>>) -> Arc<ExecutionEngine> {
    let ws = Workspace::builder(dir).build().unwrap();
    let registry = Registry::new();
    for t in toolgate_tools::builtin_tools(&ws, &toolgate_tools::BuiltinOptions::default()) {
        registry.register_arc(t).unwrap();
    }
    for t in extra {
        registry.register_arc(t).unwrap();
    }
    Arc::new(
        ExecutionEngine::builder(Arc::new(registry))
            .policy(ConfirmationPolicy::new(ConfirmationMode::Yolo))
            .build(),
    )
}

pub(crate) async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}
