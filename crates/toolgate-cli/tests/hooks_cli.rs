//! `toolgate hooks test`, and hooks and guardrails reaching `toolgate call`,
//! with the real binary in a temp workspace.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;

mod common;

struct Ws {
    dir: toolgate_test::TempHome,
}

impl Ws {
    fn new(config: &str) -> Self {
        let dir = toolgate_test::TempHome::new().unwrap();
        std::fs::write(dir.workspace().join("toolgate.yaml"), config).unwrap();
        Self { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.workspace().join(rel)
    }

    fn script(&self, rel: &str, body: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut cmd = self.dir.command(env!("CARGO_BIN_EXE_toolgate"));
        cmd.args(args);
        // The hooks under test are in the workspace file: trust it.
        cmd.env("TOOLGATE_TRUST_WORKSPACE", "1");
        cmd.output().unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const HOOKS: &str = "
hooks:
  pre_tool_use:
    - name: py-only
      command: python3 hooks/ctx.py
      file_patterns: ['**/*.py']
    - name: no-src
      command: ./hooks/deny.sh
      matcher: write_file|edit_file
";

fn hooks_ws() -> Ws {
    let ws = Ws::new(HOOKS);
    ws.script(
        "hooks/ctx.py",
        "import json, sys\nev = json.load(sys.stdin)\nprint(json.dumps({'additionalContext': 'python file ' + ev['tool_input']['path']}))\n",
    );
    ws.script(
        "hooks/deny.sh",
        "#!/usr/bin/env bash\necho \"$TOOLGATE_FILE is frozen\" >&2\nexit 2\n",
    );
    ws
}

#[test]
fn hooks_test_prints_each_decision() {
    let ws = hooks_ws();
    let out = ws.run(&[
        "hooks",
        "test",
        "pre_tool_use",
        "--tool",
        "write_file",
        "--input",
        r#"{"path": "src/a.py", "content": "x"}"#,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "py-only: allow (exit 0)\n  additionalContext: python file src/a.py\nno-src: block (exit 2): src/a.py is frozen\n"
    );
    // `*.py` patterns keep the python hook off README.md; read_file is not
    // matched by the anchored `write_file|edit_file`.
    let out = ws.run(&[
        "hooks",
        "test",
        "PreToolUse",
        "--tool",
        "read_file",
        "--input",
        r#"{"path": "README.md"}"#,
    ]);
    assert_eq!(
        text(&out.stdout),
        "no hook matched (2 configured for pre_tool_use)\n"
    );
}

#[test]
fn hooks_test_json() {
    let ws = hooks_ws();
    let out = ws.run(&[
        "--json",
        "hooks",
        "test",
        "pre_tool_use",
        "--tool",
        "edit_file",
        "--input",
        r#"{"path": "x.rs"}"#,
        "--file",
        "x.rs",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["event"], "PreToolUse");
    assert_eq!(v["hooks"].as_array().unwrap().len(), 1);
    assert_eq!(v["hooks"][0]["decision"], "block");
    assert_eq!(v["blocked"]["hook"], "no-src");
    assert_eq!(v["blocked"]["reason"], "x.rs is frozen");
}

#[test]
fn hooks_test_usage_errors() {
    let ws = hooks_ws();
    let out = ws.run(&["hooks", "test", "pre_toolz", "--tool", "x"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("unknown hook event `pre_toolz`"), "{err}");
    assert!(err.contains("hint: use one of: pre_tool_use"), "{err}");
    let out = ws.run(&["hooks", "test", "pre_tool_use"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("needs --tool"));
}

#[test]
fn call_goes_through_guardrails_then_hooks() {
    let ws = Ws::new(
        "
guardrails:
  protected_files: [Cargo.lock]
  sensitive_files: ['*.kdbx']
  blocked_commands: ['\\bcurl\\b']
hooks:
  pre_tool_use:
    - {name: marker, command: 'echo {file} >> hook.log'}
",
    );
    std::fs::write(ws.path("Cargo.lock"), "lock").unwrap();
    std::fs::write(ws.path("db.kdbx"), "secret").unwrap();
    let out = ws.run(&[
        "--mode",
        "yolo",
        "call",
        "write_file",
        r#"{"path": "Cargo.lock", "content": "x"}"#,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("protected file")
            || text(&out.stdout).contains("protected file")
    );
    assert_eq!(
        std::fs::read_to_string(ws.path("Cargo.lock")).unwrap(),
        "lock"
    );
    assert!(
        !ws.path("hook.log").exists(),
        "a hook ran after a guardrail block"
    );

    let out = ws.run(&["call", "read_file", r#"{"path": "db.kdbx"}"#]);
    assert_eq!(out.status.code(), Some(1));

    let out = ws.run(&[
        "--mode",
        "yolo",
        "call",
        "write_file",
        r#"{"path": "ok.txt", "content": "x"}"#,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(ws.path("hook.log")).unwrap(),
        "ok.txt\n"
    );

    let out = ws.run(&["classify", "curl http://127.0.0.1/"]);
    assert_eq!(text(&out.stdout).trim(), "blocked");
}

#[test]
fn config_check_knows_the_sections() {
    let ws = Ws::new("hooks:\n  pre_tool_use: [{name: a, command: 'true', colour: red}]\n");
    let out = ws.run(&["config", "check"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("hooks.pre_tool_use[0]"),
        "{}",
        text(&out.stderr)
    );
    let ws = Ws::new("guardrails:\n  max_files_modified: 3\n");
    let out = ws.run(&["config", "check"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("max_files_modified: 3"),
        "{}",
        text(&out.stdout)
    );
}
