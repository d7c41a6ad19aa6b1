//! The scripted model server and workspace the run tests share: a
//! wiremock server on 127.0.0.1 answering chat completions from a script,
//! and a workspace whose `toolgate.yaml` points at it.

#![allow(
    dead_code,
    unreachable_pub,
    clippy::unwrap_used,
    reason = "each test file uses a part; a failed unwrap is a failed test"
)]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

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

pub(crate) async fn server(replies: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Script {
            replies,
            n: AtomicUsize::new(0),
        })
        .mount(&server)
        .await;
    server
}

/// The chat requests the server received, in order (toolgate also asks
/// `GET /v1/models` before a run, to fail fast when no server is there).
pub(crate) async fn chats(server: &MockServer) -> Vec<wiremock::Request> {
    server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.method == wiremock::http::Method::POST)
        .collect()
}

/// The chat requests' bodies, in order.
pub(crate) async fn chat_bodies(server: &MockServer) -> Vec<Value> {
    chats(server)
        .await
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

/// The names of the tools a chat request offers (none without `tools`).
pub(crate) fn offered(body: &Value) -> Vec<String> {
    body["tools"].as_array().map_or_else(Vec::new, |tools| {
        tools
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
            .collect()
    })
}

pub(crate) fn tool_call(id: &str, name: &str, args: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
            "content": null, "tool_calls": [{"id": id, "type": "function",
            "function": {"name": name, "arguments": args}}]}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10}
    }))
}

pub(crate) fn answer(text: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 200, "completion_tokens": 20}
    }))
}

/// `program` run in `cwd` with `home` as HOME, stdin closed, and nothing
/// from the caller's environment that toolgate reads: no XDG directories,
/// no `TOOLGATE_*`, no `RUST_LOG`.
pub(crate) fn clean_command(
    program: impl AsRef<std::ffi::OsStr>,
    cwd: &Path,
    home: &Path,
) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(cwd)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .stdin(Stdio::null());
    for (key, _) in std::env::vars() {
        if key.starts_with("TOOLGATE_") || key == "RUST_LOG" {
            cmd.env_remove(key);
        }
    }
    cmd
}

pub(crate) struct Ws {
    pub(crate) dir: tempfile::TempDir,
}

impl Ws {
    pub(crate) fn new(server: &MockServer) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("home")).unwrap();
        std::fs::write(
            dir.path().join("toolgate.yaml"),
            format!(
                "confirmation:\n  mode: yolo\nllm:\n  model: scripted\n  base_url: {}/v1\n  stream: false\n  max_retries: 0\n  api_key_env: TEST_LLM_KEY\n  input_price_per_mtok: 1.0\n  output_price_per_mtok: 2.0\n",
                server.uri()
            ),
        )
        .unwrap();
        Self { dir }
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) async fn run(&self, args: &[&str]) -> Output {
        let mut cmd = self.command(env!("CARGO_BIN_EXE_toolgate"));
        cmd.args(args);
        output(cmd).await
    }

    /// `program` in the workspace with a clean environment: our HOME, the
    /// test key, no `TOOLGATE_*` or `RUST_LOG` from the caller.
    pub(crate) fn command(&self, program: &str) -> Command {
        let mut cmd = clean_command(program, self.path(), &self.path().join("home"));
        cmd.env("TEST_LLM_KEY", "sk-very-secret");
        // The workspace file sets the model server, the key variable, the
        // mode, hooks and gates: trust it.
        cmd.env("TOOLGATE_TRUST_WORKSPACE", "1");
        cmd
    }
}

pub(crate) async fn output(mut cmd: Command) -> Output {
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
