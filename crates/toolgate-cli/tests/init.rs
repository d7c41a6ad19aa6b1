//! `toolgate init` and the errors that say why there is no model, as whole
//! processes: a temporary HOME, a scripted model server on 127.0.0.1, and
//! ports nothing listens on. Nothing here reaches the internet: a hosted
//! provider's check stops at its unset key variable.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_yaml_ng::Value;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use common::{answer, output, text};

const BIN: &str = env!("CARGO_BIN_EXE_toolgate");

/// A workspace with an empty HOME inside it.
struct Home {
    dir: toolgate_test::TempHome,
}

impl Home {
    fn new() -> Self {
        let dir = toolgate_test::TempHome::new().unwrap();
        Self { dir }
    }

    fn ws(&self) -> &Path {
        self.dir.workspace()
    }

    fn config_file(&self) -> PathBuf {
        self.ws().join("home/.config/toolgate/config.yaml")
    }

    fn command(&self, args: &[&str]) -> Command {
        // A clean environment: a key of the caller's must not send a test
        // to a hosted API.
        let mut cmd = self.dir.command(BIN);
        cmd.args(args);
        cmd
    }

    fn config(&self) -> Value {
        serde_yaml_ng::from_str(&std::fs::read_to_string(self.config_file()).unwrap()).unwrap()
    }
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn run_blocking(mut cmd: Command) -> Output {
    cmd.output().unwrap()
}

#[tokio::test]
async fn init_openai_then_run_reaches_the_server_with_the_key_from_the_named_variable() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .and(header("authorization", "Bearer sk-from-my-key"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            serde_json::json!({"object": "list", "data": [{"id": "scripted", "object": "model"}]}),
        ))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer sk-from-my-key"))
        .respond_with(answer("Hello from the scripted model."))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(401).set_body_string("wrong key"))
        .mount(&server)
        .await;
    let home = Home::new();
    let url = format!("{}/v1", server.uri());
    let mut init = home.command(&[
        "init",
        "--provider",
        "openai",
        "--api-key-env",
        "MY_KEY",
        "--base-url",
        &url,
        "--model",
        "scripted",
    ]);
    init.env("MY_KEY", "sk-from-my-key");
    let out = output(init).await;
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{se}");
    // It says what it wrote where, and checked the server with the key.
    let file = home.config_file();
    assert!(se.contains(&format!("✓ wrote {}", file.display())), "{se}");
    assert!(se.contains("api_key_env: MY_KEY"), "{se}");
    assert!(
        se.contains(&format!("✓ model server: {url} reachable")),
        "{se}"
    );
    assert!(!se.contains("sk-from-my-key"), "{se}");

    let mut run = home.command(&["run", "Say hello"]);
    run.env("MY_KEY", "sk-from-my-key")
        .env("TOOLGATE_LLM__STREAM", "false")
        .env("TOOLGATE_LLM__MAX_RETRIES", "0");
    let out = output(run).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(text(&out.stdout).contains("Hello from the scripted model."));
    let chats = common::chats(&server).await;
    assert_eq!(chats.len(), 1);
    let body: serde_json::Value = serde_json::from_slice(&chats[0].body).unwrap();
    assert_eq!(body["model"], "scripted");
}

/// (flags, provider, `base_url`, model, `api_key_env`)
type Case<'a> = (
    &'a [&'a str],
    &'a str,
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
);

#[test]
fn each_provider_kind_writes_its_own_llm_section() {
    let port = closed_port();
    let compatible = format!("http://127.0.0.1:{port}/v1");
    let cases: &[Case] = &[
        (
            &["--provider", "ollama"],
            "openai",
            "http://127.0.0.1:11434/v1",
            None,
            None,
        ),
        (
            &["--provider", "llamacpp", "--model", "qwen"],
            "openai",
            "http://127.0.0.1:8080/v1",
            Some("qwen"),
            None,
        ),
        (
            &["--provider", "openai"],
            "openai",
            "https://api.openai.com/v1",
            Some("gpt-4.1-mini"),
            Some("OPENAI_API_KEY"),
        ),
        (
            &["--provider", "anthropic"],
            "anthropic",
            "https://api.anthropic.com/v1",
            Some("claude-sonnet-4-5"),
            Some("ANTHROPIC_API_KEY"),
        ),
        (
            &["--provider", "openrouter", "--api-key-env", "OR_KEY"],
            "openai",
            "https://openrouter.ai/api/v1",
            Some("openai/gpt-4.1-mini"),
            Some("OR_KEY"),
        ),
        (
            &[
                "--provider",
                "openai-compatible",
                "--base-url",
                &compatible,
                "--model",
                "m",
            ],
            "openai",
            &compatible,
            Some("m"),
            None,
        ),
    ];
    for (flags, provider, base_url, model, key) in cases {
        let home = Home::new();
        let mut cmd = home.command(&["init"]);
        cmd.args(*flags);
        for var in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OR_KEY"] {
            cmd.env_remove(var);
        }
        let out = run_blocking(cmd);
        let se = text(&out.stderr);
        // Written, then checked: nothing serves there, or the key is unset.
        assert_eq!(out.status.code(), Some(1), "{flags:?}: {se}");
        assert!(se.contains("✓ wrote "), "{flags:?}: {se}");
        assert!(se.contains("✗ "), "{flags:?}: {se}");
        let llm = &home.config()["llm"];
        assert_eq!(llm["provider"].as_str(), Some(*provider), "{flags:?}");
        assert_eq!(llm["base_url"].as_str(), Some(*base_url), "{flags:?}");
        assert_eq!(llm["model"].as_str(), *model, "{flags:?}");
        assert_eq!(llm["api_key_env"].as_str(), *key, "{flags:?}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(home.config_file())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{flags:?}");
        }
        // The file loads: `config check` accepts it.
        let out = run_blocking(home.command(&["config", "check"]));
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
}

#[test]
fn init_keeps_an_existing_file_without_force_and_needs_a_provider_without_a_terminal() {
    let home = Home::new();
    let file = home.config_file();
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let rules = "confirmation:\n  rules:\n  - tool: read_file\n    decision: allow\n";
    std::fs::write(&file, rules).unwrap();

    let out = run_blocking(home.command(&["init", "--provider", "ollama"]));
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert!(
        se.contains("already exists") && se.contains("--force"),
        "{se}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), rules);

    // --force replaces `llm` and keeps the rules.
    let out = run_blocking(home.command(&["setup", "--provider", "ollama", "--force"]));
    assert!(text(&out.stderr).contains("replaced the `llm` section"));
    let config = home.config();
    assert_eq!(config["llm"]["base_url"], "http://127.0.0.1:11434/v1");
    assert_eq!(config["confirmation"]["rules"][0]["tool"], "read_file");

    // No terminal and no --provider: the flags are named, nothing written.
    let other = Home::new();
    let out = run_blocking(other.command(&["init"]));
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert!(
        se.contains("--provider")
            && se.contains("ollama, llamacpp, openai, anthropic, openrouter, openai-compatible"),
        "{se}"
    );
    assert!(!other.config_file().exists());
    // A bad provider names the valid ones (clap).
    let out = run_blocking(other.command(&["init", "--provider", "gpt"]));
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert!(se.contains("openai-compatible"), "{se}");
}

/// `run hello` in `home` with `flags`: exit code and stderr.
fn run_hello(home: &Home, flags: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut cmd = home.command(&["run", "hello"]);
    cmd.args(flags);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run_blocking(cmd);
    (out.status.code(), text(&out.stderr))
}

/// The last line of an error: the hint, with the one command.
fn hint(stderr: &str) -> &str {
    stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("hint: "))
        .unwrap_or_default()
}

#[test]
fn no_model_when_nothing_is_configured_says_so_and_ends_with_toolgate_init() {
    let home = Home::new();
    let (code, se) = run_hello(&home, &[], &[]);
    assert_eq!(code, Some(3), "{se}");
    assert!(
        se.starts_with("error: no model is configured and no local model server answers"),
        "{se}"
    );
    assert!(hint(&se).ends_with("run `toolgate init` to choose a provider (Ollama, llama.cpp, OpenAI, Anthropic, OpenRouter or any OpenAI-compatible URL)"), "{se}");
}

#[test]
fn no_model_when_the_url_given_is_down_names_the_url() {
    let home = Home::new();
    let url = format!("http://127.0.0.1:{}/v1", closed_port());
    let (code, se) = run_hello(&home, &["--base-url", &url, "--model", "m"], &[]);
    assert_eq!(code, Some(3), "{se}");
    assert!(
        se.starts_with(&format!(
            "error: the model server at {url} cannot be reached: connection refused\n"
        )),
        "{se}"
    );
    assert!(hint(&se).ends_with("`toolgate init --force`"), "{se}");
}

#[test]
fn no_model_when_the_server_is_set_in_an_untrusted_workspace_file_names_it_and_toolgate_trust() {
    let home = Home::new();
    let url = format!("http://127.0.0.1:{}/v1", closed_port());
    std::fs::write(
        home.ws().join("toolgate.yaml"),
        format!("llm:\n  model: m\n  base_url: {url}\n"),
    )
    .unwrap();
    let file = home.ws().canonicalize().unwrap().join("toolgate.yaml");
    let (code, se) = run_hello(&home, &[], &[]);
    assert_eq!(code, Some(3), "{se}");
    assert!(
        se.contains(&format!(
            "error: the model server is set in {} (llm.base_url), which is not trusted",
            file.display()
        )),
        "{se}"
    );
    assert!(
        hint(&se).ends_with(&format!(
            "`toolgate trust {}`",
            file.parent().unwrap().display()
        )),
        "{se}"
    );
}

#[test]
fn no_model_when_the_key_variable_is_unset_or_empty_names_it() {
    let home = Home::new();
    let url = format!("http://127.0.0.1:{}/v1", closed_port());
    let flags = [
        "--provider",
        "openai-compatible",
        "--api-key-env",
        "MY_KEY",
        "--base-url",
        &url,
    ];
    // `--provider openai-compatible` takes its URL from --base-url.
    for (env, said) in [(&[][..], "is not set"), (&[("MY_KEY", "")][..], "is empty")] {
        let (code, se) = run_hello(&home, &flags, env);
        assert_eq!(code, Some(4), "{se}");
        assert!(
            se.starts_with(&format!(
                "error: the environment variable MY_KEY (llm.api_key_env) {said}\n"
            )),
            "{se}"
        );
        assert!(
            hint(&se).ends_with("`read -rs MY_KEY && export MY_KEY`"),
            "{se}"
        );
    }
}

#[test]
fn run_provider_flag_points_at_the_provider_and_its_key_variable() {
    // `--provider openai` without OPENAI_API_KEY: stopped at the key,
    // before any request to api.openai.com.
    let home = Home::new();
    let (code, se) = run_hello(&home, &["--provider", "openai"], &[]);
    assert_eq!(code, Some(4), "{se}");
    assert!(se.contains("OPENAI_API_KEY"), "{se}");
    let (code, se) = run_hello(
        &home,
        &["--provider", "anthropic", "--api-key-env", "THEIRS"],
        &[],
    );
    assert_eq!(code, Some(4), "{se}");
    assert!(se.contains("THEIRS (llm.api_key_env) is not set"), "{se}");
}

#[tokio::test]
async fn on_a_terminal_init_asks_for_the_provider_and_its_settings() {
    let home = Home::new();
    let url = format!("http://127.0.0.1:{}/v1", closed_port());
    // `script` (util-linux) runs it on a pseudo-terminal; the answers are
    // typed ahead: the provider by name, the model's default, a variable.
    let mut cmd = home.dir.command("script");
    cmd.args([
        "-qec",
        &format!("{BIN} --color never init --base-url {url}"),
        "/dev/null",
    ])
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let out = tokio::task::spawn_blocking(move || {
        use std::io::Write as _;
        let mut child = cmd
            .spawn()
            .expect("`script` (util-linux) runs the binary on a pseudo-terminal");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"openai\n\nMY_KEY\n")
            .unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    let tty = text(&out.stdout).replace('\r', "");
    for asked in [
        "Which model provider?",
        "  3) openai",
        "Number or name [1]: ",
        "Model [gpt-4.1-mini]: ",
        "Variable holding the API key [OPENAI_API_KEY]: ",
        "✗ api key: the environment variable MY_KEY (llm.api_key_env) is not set",
    ] {
        assert!(tty.contains(asked), "{asked:?} not in\n{tty}");
    }
    // --base-url was given: not asked.
    assert!(!tty.contains("Base URL ["), "{tty}");
    let llm = &home.config()["llm"];
    assert_eq!(llm["provider"], "openai");
    assert_eq!(llm["base_url"].as_str(), Some(url.as_str()));
    assert_eq!(llm["model"], "gpt-4.1-mini");
    assert_eq!(llm["api_key_env"], "MY_KEY");
}
