//! The gate and scripted replies the agent-loop tests share (the model
//! server itself is `toolgate-test`'s).

#![allow(
    dead_code,
    unreachable_pub,
    clippy::unwrap_used,
    unused_imports,
    reason = "each test file uses a part; a failed unwrap is a failed test"
)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolgate_agent::{ApiKey, HttpSettings, LlmClient, OpenAiClient};
use toolgate_core::{Registry, Tool, Workspace};
use toolgate_engine::ExecutionEngine;
use toolgate_policy::{ConfirmationMode, ConfirmationPolicy};
use wiremock::{MockServer, ResponseTemplate};

/// The scripted model server (`toolgate-test`): the n-th request to
/// `endpoint` gets the n-th reply, the last one repeats.
pub(crate) async fn server(endpoint: &str, replies: Vec<ResponseTemplate>) -> MockServer {
    toolgate_test::model::server(endpoint, replies).await
}

pub(crate) fn tool_calls(calls: &[(&str, &str, &str)]) -> ResponseTemplate {
    toolgate_test::model::tool_calls_with_usage(calls, (10, 5))
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
    toolgate_test::model::answer_with_usage(text, (20, 7))
}

pub(crate) use toolgate_test::model::sse;

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

/// `run_command` as the loop sees it: declares the command it runs, runs
/// it with `sh -c` in the workspace, fails with its exit code.
pub(crate) struct Shell(pub(crate) std::path::PathBuf);

#[async_trait::async_trait]
impl toolgate_core::Tool for Shell {
    fn name(&self) -> &'static str {
        "run_command"
    }
    fn description(&self) -> &'static str {
        "Runs a command line."
    }
    fn args_schema(&self) -> Value {
        json!({"type": "object", "properties": {"command": {"type": "string"}},
               "required": ["command"]})
    }
    fn sensitivity(&self, _args: &Value) -> toolgate_core::Sensitivity {
        toolgate_core::Sensitivity::Sensitive
    }
    fn annotations(&self) -> toolgate_core::ToolAnnotations {
        toolgate_core::ToolAnnotations {
            runs_commands: true,
            ..toolgate_core::ToolAnnotations::from_sensitivity(
                toolgate_core::Sensitivity::Sensitive,
            )
        }
    }
    fn effects(&self, args: &Value) -> Result<toolgate_core::Effects, toolgate_core::EffectsError> {
        let command = args["command"].as_str().unwrap_or_default();
        Ok(toolgate_core::Effects::known([
            toolgate_core::Effect::command(command, None),
        ]))
    }
    async fn execute(
        &self,
        args: Value,
        _ctx: &toolgate_core::ToolContext,
    ) -> toolgate_core::ToolResult {
        let command = args["command"].as_str().unwrap_or_default();
        let out = std::process::Command::new("sh")
            .args(["-c", command])
            .current_dir(&self.0)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        match out.status.code() {
            Some(0) => toolgate_core::ToolResult::success(text),
            code => toolgate_core::ToolResult::failure(format!("exit code {}", code.unwrap_or(-1)))
                .with_output(text),
        }
    }
}
