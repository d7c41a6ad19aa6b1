//! The workspace the run tests share: a temporary workspace and home
//! (`toolgate-test`) whose `toolgate.yaml` points at a scripted model
//! server on 127.0.0.1, and the binary run there with a clean environment.

#![allow(
    dead_code,
    unreachable_pub,
    unused_imports,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "each test file uses a part; a failed unwrap is a failed test"
)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

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

    /// The workspace's `confirmation.mode` set to `mode` instead of yolo.
    pub(crate) fn set_mode(&self, mode: &str) {
        let path = self.path().join("toolgate.yaml");
        let config = std::fs::read_to_string(&path)
            .unwrap()
            .replace("mode: yolo", &format!("mode: {mode}"));
        std::fs::write(path, config).unwrap();
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

    /// `toolgate ARGS` on a pseudo-terminal (util-linux `script`) whose
    /// input is `typed` and then closed; the output and everything the
    /// terminal got, without carriage returns.
    pub(crate) async fn on_tty(&self, args: &str, typed: &str) -> (Output, String) {
        let bin = env!("CARGO_BIN_EXE_toolgate");
        let mut cmd = self.command("script");
        cmd.args(["-qec", &format!("{bin} {args}"), "/dev/null"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let typed = typed.to_owned();
        let output = tokio::task::spawn_blocking(move || {
            let mut child = cmd
                .spawn()
                .expect("`script` (util-linux) runs the binary on a pseudo-terminal");
            child
                .stdin
                .take()
                .unwrap()
                .write_all(typed.as_bytes())
                .unwrap();
            child.wait_with_output().unwrap()
        })
        .await
        .unwrap();
        let tty = text(&output.stdout).replace('\r', "");
        (output, tty)
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
