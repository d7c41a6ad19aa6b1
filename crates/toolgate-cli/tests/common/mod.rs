//! The workspace the run tests share: a temporary workspace and home
//! (`toolgate-test`) whose `toolgate.yaml` points at a scripted model
//! server on 127.0.0.1, and the binary run there with a clean environment.

#![allow(
    dead_code,
    unreachable_pub,
    unused_imports,
    clippy::unwrap_used,
    reason = "each test file uses a part; a failed unwrap is a failed test"
)]

use std::path::Path;
use std::process::{Command, Output};

use wiremock::{MockServer, ResponseTemplate};

pub(crate) use toolgate_test::clean_command;
pub(crate) use toolgate_test::model::{answer, chat_bodies, chats, offered, tool_call};

/// The scripted chat-completions server: the n-th chat request gets the
/// n-th reply, the last one repeats.
pub(crate) async fn server(replies: Vec<ResponseTemplate>) -> MockServer {
    toolgate_test::model::server("/v1/chat/completions", replies).await
}

pub(crate) struct Ws {
    pub(crate) dir: toolgate_test::TempHome,
}

impl Ws {
    pub(crate) fn new(server: &MockServer) -> Self {
        let dir = toolgate_test::TempHome::new().unwrap();
        std::fs::write(
            dir.workspace().join("toolgate.yaml"),
            format!(
                "confirmation:\n  mode: yolo\nllm:\n  model: scripted\n  base_url: {}/v1\n  stream: false\n  max_retries: 0\n  api_key_env: TEST_LLM_KEY\n  input_price_per_mtok: 1.0\n  output_price_per_mtok: 2.0\n",
                server.uri()
            ),
        )
        .unwrap();
        Self { dir }
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.workspace()
    }

    pub(crate) async fn run(&self, args: &[&str]) -> Output {
        let mut cmd = self.command(env!("CARGO_BIN_EXE_toolgate"));
        cmd.args(args);
        output(cmd).await
    }

    /// `program` in the workspace with a clean environment: our HOME, the
    /// test key, nothing else from the caller that toolgate reads.
    pub(crate) fn command(&self, program: &str) -> Command {
        let mut cmd = self.dir.command(program);
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
