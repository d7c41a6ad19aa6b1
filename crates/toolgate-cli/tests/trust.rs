//! Workspace trust as whole processes: an untrusted `toolgate.yaml` runs
//! nothing and loosens nothing until the user trusts it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// A hook that leaves a marker file when it runs.
const HOOK: &str = "hooks:\n  pre_tool_use:\n    - {name: marker, command: 'touch hook-ran'}\n";

struct Ws {
    dir: toolgate_test::TempHome,
}

impl Ws {
    /// A workspace `ws/` with `config` as its `toolgate.yaml`, and an empty
    /// home `home/` beside it for the user file and the trust store.
    fn new(config: &str) -> Self {
        let dir = toolgate_test::TempHome::builder()
            .workspace_dir("ws")
            .build()
            .unwrap();
        let ws = Self { dir };
        ws.config(config);
        ws
    }

    fn root(&self) -> PathBuf {
        self.dir.workspace().to_path_buf()
    }

    fn home(&self) -> PathBuf {
        self.dir.home()
    }

    fn config(&self, yaml: &str) {
        std::fs::write(self.root().join("toolgate.yaml"), yaml).unwrap();
    }

    fn store(&self) -> PathBuf {
        self.home().join(".config/toolgate/trusted.json")
    }

    fn marker(&self) -> bool {
        let path = self.root().join("hook-ran");
        let ran = path.exists();
        if ran {
            std::fs::remove_file(path).unwrap();
        }
        ran
    }

    /// `program` in the workspace with a private HOME and no `TOOLGATE_*`
    /// variables from the outside.
    fn command(&self, program: &str) -> Command {
        self.dir.command(program)
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = self.command(env!("CARGO_BIN_EXE_toolgate"));
        cmd.args(args);
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// The binary on a pseudo-terminal (`script`), `answer` typed at it.
    fn run_on_terminal(&self, args: &str, answer: &str) -> Output {
        let bin = env!("CARGO_BIN_EXE_toolgate");
        let mut cmd = self.command("script");
        cmd.args(["-qec", &format!("{bin} {args}"), "/dev/null"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let mut child = cmd
            .spawn()
            .expect("`script` (util-linux) runs the binary on a pseudo-terminal");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(answer.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace('\r', "")
}

fn code(output: &Output) -> i32 {
    output.status.code().unwrap_or(-1)
}

/// A read-only call: it needs no confirmation, and its `pre_tool_use`
/// hooks run before it.
const CALL: [&str; 3] = ["call", "get_datetime", "{}"];

#[test]
fn an_untrusted_hook_does_not_run_until_the_workspace_is_trusted() {
    let ws = Ws::new(HOOK);
    let out = ws.run(&CALL);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert!(!ws.marker(), "an untrusted hook ran");
    let err = text(&out.stderr);
    let file = ws.root().canonicalize().unwrap().join("toolgate.yaml");
    assert_eq!(
        err.matches("warning:").count(),
        1,
        "one warning, not one per key: {err}"
    );
    assert!(
        err.contains(&format!(
            "warning: ignoring hooks.pre_tool_use in {}: the workspace configuration is not trusted",
            file.display()
        )),
        "{err}"
    );
    assert!(
        err.contains("hint: run `toolgate trust` to apply them"),
        "{err}"
    );

    // `toolgate trust` records the file and says what it runs.
    let trust = ws.run(&["trust"]);
    assert_eq!(code(&trust), 0, "{}", text(&trust.stderr));
    let said = text(&trust.stdout);
    assert!(
        said.starts_with(&format!("trusted {} (sha256 ", file.display())),
        "{said}"
    );
    assert!(
        said.contains("  hooks.pre_tool_use:\n    marker: sh -c 'touch hook-ran'\n"),
        "{said}"
    );
    let out = ws.run(&CALL);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert!(ws.marker(), "a trusted hook did not run");
    assert!(
        !text(&out.stderr).contains("warning"),
        "{}",
        text(&out.stderr)
    );

    // Any change to the file, a comment included, needs trust again.
    ws.config(&format!("{HOOK}# changed\n"));
    let out = ws.run(&CALL);
    assert!(!ws.marker(), "a changed file kept its trust");
    assert!(text(&out.stderr).contains("ignoring hooks.pre_tool_use"));
    let list = text(&ws.run(&["trust", "--list"]).stdout);
    assert!(
        list.starts_with(&format!("{}  changed  trusted ", file.display())),
        "{list}"
    );

    // --revoke forgets it; the old content is no longer trusted either.
    ws.config(HOOK);
    ws.run(&CALL);
    assert!(ws.marker(), "the trusted content is trusted again");
    let revoke = ws.run(&["trust", "--revoke"]);
    assert_eq!(
        text(&revoke.stdout),
        format!("no longer trusted: {}\n", file.display())
    );
    ws.run(&CALL);
    assert!(!ws.marker(), "a revoked file kept its trust");
}

#[test]
fn trust_workspace_flag_and_variable_apply_without_recording() {
    let ws = Ws::new(HOOK);
    let out = ws.run(&["--trust-workspace", "call", "get_datetime", "{}"]);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert!(ws.marker(), "--trust-workspace did not apply the hook");
    assert!(
        !text(&out.stderr).contains("warning"),
        "{}",
        text(&out.stderr)
    );

    for value in ["1", "true"] {
        let out = ws
            .cmd(&CALL)
            .env("TOOLGATE_TRUST_WORKSPACE", value)
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", text(&out.stderr));
        assert!(
            ws.marker(),
            "TOOLGATE_TRUST_WORKSPACE={value} did not apply"
        );
    }
    // --no-trust-workspace wins over the variable.
    ws.cmd(&[&CALL[..], &["--no-trust-workspace"]].concat())
        .env("TOOLGATE_TRUST_WORKSPACE", "1")
        .output()
        .unwrap();
    assert!(!ws.marker(), "--no-trust-workspace lost");
    ws.cmd(&CALL)
        .env("TOOLGATE_TRUST_WORKSPACE", "0")
        .output()
        .unwrap();
    assert!(!ws.marker(), "TOOLGATE_TRUST_WORKSPACE=0 trusted");

    assert!(!ws.store().exists(), "nothing is recorded");
    ws.run(&CALL);
    assert!(!ws.marker(), "the next plain run is untrusted again");
}

#[test]
fn an_untrusted_yolo_mode_is_ignored() {
    let ws = Ws::new("confirmation:\n  mode: yolo\n");
    let out = ws.run(&["call", "echo", r#"{"message":"hi"}"#]);
    assert_eq!(code(&out), 1);
    let err = text(&out.stderr);
    assert!(err.contains("ignoring confirmation.mode"), "{err}");
    assert!(
        err.contains("`echo` needs confirmation under confirm-sensitive"),
        "{err}"
    );
    assert_eq!(text(&out.stdout), "");
    // Trusted, the mode applies.
    let out = ws.run(&["--trust-workspace", "call", "echo", r#"{"message":"hi"}"#]);
    assert_eq!(text(&out.stdout), "hi\n", "{}", text(&out.stderr));
}

#[test]
fn an_untrusted_mcp_server_is_not_started() {
    let ws = Ws::new(
        "mcp:\n  servers:\n    evil:\n      command: /bin/sh\n      args: [-c, 'touch server-ran']\n",
    );
    for args in [&["tools", "list"][..], &["mcp", "list"], &CALL] {
        let out = ws.run(args);
        assert_eq!(code(&out), 0, "{args:?}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("ignoring mcp.servers"),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            !ws.root().join("server-ran").exists(),
            "{args:?} started an untrusted MCP server"
        );
    }
    // Trusted, it is started (and fails, being no MCP server).
    ws.run(&["--trust-workspace", "mcp", "list"]);
    assert!(ws.root().join("server-ran").exists());
}

#[test]
fn config_check_shows_what_was_ignored() {
    let ws = Ws::new(
        "llm:\n  model: m\n  base_url: http://127.0.0.1:9/v1\n  api_key_env: MY_KEY\naudit:\n  path: /tmp/elsewhere.jsonl\n\
         workspace:\n  allow_sensitive: true\n  max_file_size: 10\nguardrails:\n  protected_files: [Cargo.lock]\n  \
         quality_gates: [{name: t, command: 'true'}]\nagents:\n  docs: {mode: yolo, max_steps: 3}\n",
    );
    let out = ws.run(&["config", "check", "--json"]);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let config: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ignored = [
        "llm.base_url",
        "llm.api_key_env",
        "audit.path",
        "workspace.allow_sensitive",
        "guardrails.quality_gates",
        "agents.docs.mode",
    ];
    assert_eq!(config["trust"]["ignored"], serde_json::json!(ignored));
    assert_eq!(config["trust"]["state"], "untrusted");
    assert_eq!(config["trust"]["sha256"].as_str().unwrap().len(), 64);
    // Ignored…
    assert_eq!(config["llm"]["base_url"], Value::Null);
    assert_eq!(config["llm"]["api_key_env"], Value::Null);
    assert_eq!(config["audit"]["path"], Value::Null);
    assert_eq!(config["workspace"]["allow_sensitive"], false);
    assert_eq!(config["guardrails"]["quality_gates"], serde_json::json!([]));
    assert_eq!(config["agents"]["docs"]["mode"], Value::Null);
    // …while the keys that only tighten apply.
    assert_eq!(config["llm"]["model"], "m");
    assert_eq!(config["workspace"]["max_file_size"], 10);
    assert_eq!(
        config["guardrails"]["protected_files"],
        serde_json::json!(["Cargo.lock"])
    );
    assert_eq!(config["agents"]["docs"]["max_steps"], 3);

    let text_out = ws.run(&["config", "check"]);
    let err = text(&text_out.stderr);
    assert!(
        err.contains(&format!("(not trusted: {} ignored)", ignored.join(", "))),
        "{err}"
    );

    // Trusted for the run: everything applies, nothing is ignored.
    let out = ws.run(&["config", "check", "--json", "--trust-workspace"]);
    let config: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(config["llm"]["base_url"], "http://127.0.0.1:9/v1");
    assert_eq!(config["trust"]["state"], "this-run");
    assert_eq!(config["trust"]["ignored"], serde_json::json!([]));

    // A file with nothing that needs trust asks for none.
    ws.config("tools:\n  timeout: 5\n");
    let out = ws.run(&["config", "check", "--json"]);
    assert!(!text(&out.stderr).contains("warning"));
    let config: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(config["trust"]["state"], "not-needed");
}

/// The same rules for `--config FILE` and `TOOLGATE_CONFIG`; the user's own
/// file is always trusted.
#[test]
fn explicit_config_files_need_trust_and_the_user_file_does_not() {
    let ws = Ws::new("");
    std::fs::write(ws.dir.root().join("other.yaml"), HOOK).unwrap();
    let other = ws.dir.root().join("other.yaml");
    let other = other.to_str().unwrap();
    let out = ws.run(&["--config", other, "call", "get_datetime", "{}"]);
    assert!(!ws.marker(), "an untrusted --config hook ran");
    assert!(
        text(&out.stderr).contains(&format!(
            "hint: run `toolgate --config {other} trust` to apply them"
        )),
        "{}",
        text(&out.stderr)
    );
    ws.cmd(&CALL)
        .env("TOOLGATE_CONFIG", other)
        .output()
        .unwrap();
    assert!(!ws.marker(), "an untrusted TOOLGATE_CONFIG hook ran");
    let trust = ws.run(&["--config", other, "trust"]);
    assert_eq!(code(&trust), 0, "{}", text(&trust.stderr));
    ws.run(&["--config", other, "call", "get_datetime", "{}"]);
    assert!(ws.marker(), "a trusted --config hook did not run");

    let user = ws.home().join(".config/toolgate");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(user.join("config.yaml"), HOOK).unwrap();
    let out = ws.run(&CALL);
    assert!(ws.marker(), "the user's own hook did not run");
    assert!(
        !text(&out.stderr).contains("warning"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn the_store_follows_xdg_config_home_and_a_corrupt_one_is_an_error() {
    let ws = Ws::new(HOOK);
    let xdg = ws.dir.root().join("xdg");
    let out = ws
        .cmd(&["trust"])
        .env("XDG_CONFIG_HOME", &xdg)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let store = xdg.join("toolgate/trusted.json");
    let record: Value = serde_json::from_slice(&std::fs::read(&store).unwrap()).unwrap();
    assert_eq!(record["version"], 1);
    assert_eq!(
        Path::new(record["trusted"][0]["path"].as_str().unwrap()),
        ws.root().canonicalize().unwrap().join("toolgate.yaml")
    );
    ws.cmd(&CALL).env("XDG_CONFIG_HOME", &xdg).output().unwrap();
    assert!(ws.marker());

    std::fs::write(&store, "{\"version\": 1, \"trusted\": [").unwrap();
    let out = ws.cmd(&CALL).env("XDG_CONFIG_HOME", &xdg).output().unwrap();
    assert_eq!(code(&out), 2);
    assert!(!ws.marker());
    let err = text(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "error: the trust store {} is corrupt\n  Caused by: ",
            store.display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("hint: fix or delete {}", store.display())),
        "{err}"
    );
    // A workspace that needs no trust does not read the store.
    ws.config("tools:\n  timeout: 5\n");
    let out = ws.cmd(&CALL).env("XDG_CONFIG_HOME", &xdg).output().unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
}

#[test]
fn trust_without_a_file_and_list_and_json() {
    let ws = Ws::new("");
    std::fs::remove_file(ws.root().join("toolgate.yaml")).unwrap();
    let out = ws.run(&["trust"]);
    assert_eq!(code(&out), 2);
    assert!(
        text(&out.stderr).contains("there is no configuration file to trust"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        text(&ws.run(&["trust", "--list"]).stderr),
        "no workspace configuration is trusted\n"
    );

    // DIR names another workspace; --json reports the review.
    ws.config(HOOK);
    let elsewhere = ws.dir.root();
    let out = ws
        .command(env!("CARGO_BIN_EXE_toolgate"))
        .current_dir(elsewhere)
        .args(["trust", "ws", "--json"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["trust_only_keys"][0]["key"], "hooks.pre_tool_use");
    assert_eq!(
        report["trust_only_keys"][0]["programs"][0]["run"],
        "sh -c 'touch hook-ran'"
    );
    let list: Value =
        serde_json::from_slice(&ws.run(&["trust", "--list", "--json"]).stdout).unwrap();
    assert_eq!(list[0]["state"], "unchanged");
    // A warning elsewhere names the workspace in its hint.
    let out = ws
        .command(env!("CARGO_BIN_EXE_toolgate"))
        .current_dir(elsewhere)
        .args(["--workspace", "ws", "--no-trust-workspace"])
        .args(CALL)
        .output()
        .unwrap();
    assert!(ws.marker(), "{}", text(&out.stderr));
    ws.run(&["trust", "--revoke"]);
    let out = ws
        .command(env!("CARGO_BIN_EXE_toolgate"))
        .current_dir(elsewhere)
        .args(["--workspace", "ws"])
        .args(CALL)
        .output()
        .unwrap();
    let root = ws.root().canonicalize().unwrap();
    assert!(
        text(&out.stderr).contains(&format!("run `toolgate trust {}`", root.display())),
        "{}",
        text(&out.stderr)
    );
}

/// On a terminal toolgate shows what would run and asks; yes is recorded
/// and applied, anything else applies the rest only.
#[test]
fn terminal_prompt_trusts_on_yes_only() {
    let ws = Ws::new(&format!(
        "{HOOK}mcp:\n  servers:\n    files: {{command: /bin/true, args: [-y, '/']}}\n\
         guardrails:\n  quality_gates: [{{name: tests, command: cargo test}}]\nconfirmation:\n  mode: yolo\n"
    ));
    let args = "call get_datetime '{}'";
    for answer in ["n\n", "\n", "maybe\n", ""] {
        let out = ws.run_on_terminal(args, answer);
        let tty = text(&out.stdout);
        assert_eq!(code(&out), 0, "{answer:?}: {tty}");
        assert!(!ws.marker(), "{answer:?}: the hook ran");
        assert!(
            tty.contains("Trust this configuration? [y/N]"),
            "{answer:?}: {tty}"
        );
        assert!(
            tty.contains("ignoring hooks.pre_tool_use, mcp.servers, guardrails.quality_gates, confirmation.mode"),
            "{answer:?}: {tty}"
        );
        assert!(!ws.store().exists(), "{answer:?}: a no was recorded");
    }

    let out = ws.run_on_terminal(args, "y\n");
    let tty = text(&out.stdout);
    assert_eq!(code(&out), 0, "{tty}");
    for shown in [
        "is not trusted",
        "  hooks.pre_tool_use:\n    marker: sh -c 'touch hook-ran'\n",
        "  mcp.servers:\n    files: /bin/true -y /\n",
        "  guardrails.quality_gates:\n    tests: sh -c 'cargo test'\n",
        "  confirmation.mode: \"yolo\"\n",
    ] {
        assert!(tty.contains(shown), "{shown:?} not in: {tty}");
    }
    assert!(ws.marker(), "yes did not apply the hook: {tty}");
    assert!(ws.store().exists(), "yes was not recorded");
    // Recorded: the next run neither asks nor warns.
    let out = ws.run_on_terminal(args, "");
    let tty = text(&out.stdout);
    assert!(ws.marker(), "{tty}");
    assert!(!tty.contains("Trust this configuration?"), "{tty}");
}

/// No prompt where stdin carries data: `call TOOL -` on a terminal reads
/// its arguments, never a trust answer.
#[test]
fn no_prompt_when_stdin_carries_the_arguments() {
    let ws = Ws::new(HOOK);
    let out = ws.run_on_terminal("call get_datetime - --json", "{}\n\u{4}");
    let tty = text(&out.stdout);
    assert!(!tty.contains("Trust this configuration?"), "{tty}");
    assert!(!ws.marker(), "{tty}");
    assert!(tty.contains("ignoring hooks.pre_tool_use"), "{tty}");
    assert!(tty.contains("\"success\": true"), "{tty}");
}
