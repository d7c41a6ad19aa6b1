//! `toolgate rules` and the rules it saves, through the real binary: a rule
//! added to the user's file changes what `toolgate call` asks, refuses or
//! runs, and never lets through what the blocklist refuses.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// A workspace with its own HOME; stdin is not a terminal, so a call that
/// needs confirmation fails instead of asking.
struct Ws {
    dir: toolgate_test::TempHome,
}

impl Ws {
    fn new() -> Self {
        let dir = toolgate_test::TempHome::builder()
            .workspace_dir("ws")
            .build()
            .unwrap();
        Self { dir }
    }

    fn ws(&self) -> PathBuf {
        self.dir.workspace().to_path_buf()
    }

    fn user_file(&self) -> PathBuf {
        self.dir.home().join(".config/toolgate/config.yaml")
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = self.dir.command(env!("CARGO_BIN_EXE_toolgate"));
        cmd.args(args);
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// `toolgate rules add …`, which must succeed.
    fn add(&self, args: &[&str]) {
        let mut all = vec!["rules", "add"];
        all.extend_from_slice(args);
        let out = self.run(&all);
        assert_eq!(code(&out), 0, "{all:?}: {}", stderr(&out));
    }

    fn command(&self, mode: &str, line: &str) -> Output {
        let args = serde_json::json!({ "command": line }).to_string();
        self.run(&["--mode", mode, "call", "run_command", &args])
    }
}

fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn exists(path: &Path) -> bool {
    path.exists()
}

#[test]
fn an_allow_rule_runs_its_prefix_unasked_in_confirm_all_and_nothing_more() {
    let ws = Ws::new();
    // Without a rule, confirm-all needs a person, and there is none.
    let out = ws.command("confirm-all", "echo hi there");
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("needs confirmation"),
        "{}",
        stderr(&out)
    );

    ws.add(&[
        "--tool",
        "run_command",
        "--command",
        "echo hi",
        "--decision",
        "allow",
    ]);
    let out = ws.command("confirm-all", "echo hi there");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("hi there"), "{}", stdout(&out));

    for line in [
        "echo hi; touch x",
        "echo hi && touch x",
        "echo hi $(touch x)",
        "echo hi > x",
        "X=1 echo hi",
        "echo hix",
    ] {
        let out = ws.command("confirm-all", line);
        assert_eq!(code(&out), 1, "{line}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("needs confirmation"),
            "{line}: {}",
            stderr(&out)
        );
    }
    assert!(!exists(&ws.ws().join("x")));
}

#[test]
fn a_deny_rule_refuses_even_in_yolo() {
    let ws = Ws::new();
    ws.add(&[
        "--tool",
        "run_command",
        "--command",
        "touch",
        "--decision",
        "deny",
    ]);
    for line in ["touch x", "ls && touch x", "sh -c 'touch x'", "env touch x"] {
        let out = ws.command("yolo", line);
        assert_eq!(code(&out), 1, "{line}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("denied by rule 1 (deny run_command command `touch`)"),
            "{line}: {}",
            stderr(&out)
        );
    }
    assert!(!exists(&ws.ws().join("x")));
    let out = ws.command("yolo", "echo fine");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn an_allow_rule_never_lifts_the_blocklist() {
    let ws = Ws::new();
    ws.add(&[
        "--tool",
        "run_command",
        "--command",
        "rm",
        "--decision",
        "allow",
    ]);
    ws.add(&[
        "--tool",
        "run_command",
        "--command",
        "sudo",
        "--decision",
        "allow",
    ]);
    for line in ["rm -rf /", "sudo true"] {
        let out = ws.command("confirm-all", line);
        assert_eq!(code(&out), 1, "{line}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("blocked command"),
            "{line}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn list_add_and_remove_edit_only_the_rules_of_the_user_file() {
    let ws = Ws::new();
    let out = ws.run(&["rules", "list"]);
    assert_eq!(code(&out), 0);
    assert_eq!(stdout(&out), "");
    assert!(stderr(&out).contains("no rules in"), "{}", stderr(&out));

    std::fs::create_dir_all(ws.user_file().parent().unwrap()).unwrap();
    std::fs::write(ws.user_file(), "tools:\n  timeout: 7\n").unwrap();
    ws.add(&[
        "--tool",
        "write_file",
        "--path",
        "docs/**",
        "--decision",
        "allow",
    ]);
    ws.add(&[
        "--tool",
        "run_command",
        "--command",
        "git push",
        "--decision",
        "ask",
    ]);
    let out = ws.run(&["rules", "list"]);
    assert_eq!(
        stdout(&out),
        "1  allow write_file path `docs/**`\n2  ask run_command command `git push`\n"
    );
    let out = ws.run(&["--json", "rules", "list"]);
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        list,
        serde_json::json!([
            {"number": 1, "tool": "write_file", "path": "docs/**", "decision": "allow"},
            {"number": 2, "tool": "run_command", "command": "git push", "decision": "ask"},
        ])
    );

    let out = ws.run(&["rules", "remove", "1"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("removed rule 1 from "),
        "{}",
        stdout(&out)
    );
    let out = ws.run(&["rules", "remove", "5"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("there is no rule 5 (there are 1)"),
        "{}",
        stderr(&out)
    );

    let text = std::fs::read_to_string(ws.user_file()).unwrap();
    let doc: Value = serde_yaml_ng::from_str(&text).unwrap();
    assert_eq!(doc["tools"]["timeout"], 7);
    assert_eq!(doc["confirmation"]["rules"][0]["command"], "git push");
    assert_eq!(doc["confirmation"]["rules"].as_array().unwrap().len(), 1);
}

#[test]
fn rules_go_to_xdg_config_home_when_set() {
    let ws = Ws::new();
    let xdg = ws.dir.root().join("xdg");
    let out = ws
        .cmd(&["rules", "add", "--tool", "read_file", "--decision", "deny"])
        .env("XDG_CONFIG_HOME", &xdg)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(xdg.join("toolgate/config.yaml").is_file());
    assert!(!ws.user_file().exists());
}

#[test]
fn too_broad_allow_rules_are_refused_and_nothing_is_written() {
    let ws = Ws::new();
    let cases: &[&[&str]] = &[
        &["--tool", "run_command", "--decision", "allow"],
        &["--tool", "*", "--decision", "allow"],
        &["--tool", "*", "--path", "**", "--decision", "allow"],
        &[
            "--tool",
            "run_command",
            "--command",
            "ls; rm x",
            "--decision",
            "allow",
        ],
    ];
    for args in cases {
        let mut all = vec!["rules", "add"];
        all.extend_from_slice(args);
        let out = ws.run(&all);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("the rule was not added"),
            "{}",
            stderr(&out)
        );
    }
    let out = ws.run(&[
        "rules",
        "add",
        "--tool",
        "run_command",
        "--decision",
        "allow",
    ]);
    assert!(
        stderr(&out).contains("needs a command prefix"),
        "{}",
        stderr(&out)
    );
    let out = ws.run(&[
        "rules",
        "add",
        "--tool",
        "x",
        "--command",
        "ls",
        "--path",
        "a",
        "--decision",
        "deny",
    ]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(!ws.user_file().exists());
}

#[test]
fn a_broken_user_file_is_never_clobbered() {
    let ws = Ws::new();
    std::fs::create_dir_all(ws.user_file().parent().unwrap()).unwrap();
    for text in ["llm: [unclosed\n", "confirmation: {rules: 3}\n"] {
        std::fs::write(ws.user_file(), text).unwrap();
        for args in [
            &["rules", "add", "--tool", "read_file", "--decision", "deny"][..],
            &["rules", "remove", "1"][..],
        ] {
            let out = ws.run(args);
            assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
            assert!(stderr(&out).contains("left unchanged"), "{}", stderr(&out));
            assert_eq!(std::fs::read_to_string(ws.user_file()).unwrap(), text);
        }
    }
}

#[test]
fn a_bad_rule_written_by_hand_stops_calls_but_can_be_removed() {
    let ws = Ws::new();
    std::fs::create_dir_all(ws.user_file().parent().unwrap()).unwrap();
    std::fs::write(
        ws.user_file(),
        "confirmation:\n  rules:\n    - {tool: run_command, decision: allow}\n",
    )
    .unwrap();
    let out = ws.command("yolo", "echo hi");
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("rule 1 is too broad"),
        "{}",
        stderr(&out)
    );
    let out = ws.run(&["rules", "remove", "1"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = ws.command("yolo", "echo hi");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

/// `rules add --except` and `--exact`, through the real binary: a deny
/// with an exception lets through exactly the excepted command, never a
/// line that also does more; `rules list` shows the exception.
#[test]
fn a_deny_rule_with_an_exception_and_an_exact_allow_rule() {
    let ws = Ws::new();
    ws.add(&[
        "--tool",
        "*",
        "--command",
        "touch",
        "--except",
        "touch allowed.txt",
        "--decision",
        "deny",
    ]);
    ws.add(&[
        "--tool",
        "run_command",
        "--command",
        "echo hi",
        "--exact",
        "--decision",
        "allow",
    ]);
    let out = ws.run(&["rules", "list"]);
    assert_eq!(
        stdout(&out),
        "1  deny * command `touch` except `touch allowed.txt`\n2  allow run_command command `echo hi` (exact)\n"
    );
    let out = ws.command("yolo", "touch allowed.txt");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(exists(&ws.ws().join("allowed.txt")));
    std::fs::remove_file(ws.ws().join("allowed.txt")).unwrap();
    for line in [
        "touch other.txt",
        "touch allowed.txt other.txt",
        "touch allowed.txt; touch other.txt",
        "touch allowed.txt && touch other.txt",
        "sh -c 'touch allowed.txt other.txt'",
    ] {
        let out = ws.command("yolo", line);
        assert_eq!(code(&out), 1, "{line}: {}", stderr(&out));
        assert!(
            stderr(&out)
                .contains("denied by rule 1 (deny * command `touch` except `touch allowed.txt`)"),
            "{line}: {}",
            stderr(&out)
        );
    }
    assert!(!exists(&ws.ws().join("other.txt")));
    assert!(!exists(&ws.ws().join("allowed.txt")));
    // Exact: `echo hi` and nothing longer.
    let out = ws.command("confirm-all", "echo hi");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = ws.command("confirm-all", "echo hi there");
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("needs confirmation"),
        "{}",
        stderr(&out)
    );
}
