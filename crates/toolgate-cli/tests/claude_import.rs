//! `confirmation.import: [claude]` as whole processes: a workspace's
//! `.claude/settings.json` (deny `Bash(git push:*)`, allow `Bash(npm run
//! test:*)`, deny `Read(./.env)`) decides `toolgate call` and a scripted
//! `toolgate run` once it is trusted, and applies nothing (and says so)
//! before; `toolgate rules list` shows each rule's origin and what could
//! not be mapped.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

mod common;

use common::{Ws, answer, server, text, tool_call};

const SETTINGS: &str = r#"{
  "permissions": {
    "allow": ["Bash(npm run test:*)", "Task"],
    "deny": ["Bash(git push:*)", "Read(./.env)"],
    "additionalDirectories": ["../docs"]
  }
}"#;

/// A workspace apart from its home; the user's own file turns the import
/// on (it is always trusted), the workspace has only Claude Code's
/// settings.
struct Project {
    dir: toolgate_test::TempHome,
}

impl Project {
    fn new(mode: &str) -> Self {
        let dir = toolgate_test::TempHome::builder()
            .workspace_dir("ws")
            .build()
            .unwrap();
        let user = dir.home().join(".config/toolgate/config.yaml");
        std::fs::create_dir_all(user.parent().unwrap()).unwrap();
        std::fs::write(
            &user,
            format!(
                "confirmation:\n  mode: {mode}\n  import: [claude]\nworkspace:\n  allow_sensitive: true\n"
            ),
        )
        .unwrap();
        let ws = dir.workspace();
        std::fs::create_dir_all(ws.join(".claude")).unwrap();
        std::fs::write(ws.join(".claude/settings.json"), SETTINGS).unwrap();
        std::fs::write(ws.join(".env"), "TOKEN=abc\n").unwrap();
        std::fs::write(
            ws.join("package.json"),
            r#"{"name": "p", "version": "1.0.0", "scripts": {"test": "echo tests-ran"}}"#,
        )
        .unwrap();
        Self { dir }
    }

    fn ws(&self) -> &Path {
        self.dir.workspace()
    }

    fn settings(&self) -> PathBuf {
        self.ws().join(".claude/settings.json")
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut cmd = self.dir.command(env!("CARGO_BIN_EXE_toolgate"));
        cmd.args(args);
        cmd.output().unwrap()
    }

    fn call(&self, mode: &str, tool: &str, args: &Value) -> Output {
        self.run(&["--mode", mode, "call", tool, &args.to_string()])
    }

    fn command(&self, mode: &str, line: &str) -> Output {
        self.call(mode, "run_command", &serde_json::json!({ "command": line }))
    }

    fn read_env(&self) -> Output {
        self.call("yolo", "read_file", &serde_json::json!({ "path": ".env" }))
    }
}

#[test]
fn trusted_claude_settings_decide_calls_and_untrusted_ones_apply_nothing() {
    let p = Project::new("yolo");

    // Untrusted: nothing applies, and every command says so.
    let out = p.read_env();
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{se}");
    assert!(text(&out.stdout).contains("TOKEN=abc"));
    assert!(
        se.contains("not applying the Claude Code settings in")
            && se.contains(".claude/settings.json")
            && se.contains("toolgate trust"),
        "{se}"
    );
    let out = p.command("yolo", "git push origin main");
    assert!(
        !text(&out.stderr).contains("denied by rule"),
        "{}",
        text(&out.stderr)
    );
    let out = p.run(&["rules", "list"]);
    let so = text(&out.stdout);
    assert!(
        so.contains("no rules imported from Claude Code settings"),
        "{so}"
    );
    assert!(so.contains("the workspace file is not trusted"), "{so}");
    let out = p.run(&["doctor"]);
    let so = text(&out.stdout);
    assert!(
        so.contains("! Claude Code settings: 0 rule(s) imported from 0 file(s)")
            && so.contains("the workspace file is not trusted"),
        "{so}"
    );

    // `toolgate trust` records the settings file, as it is now.
    let out = p.run(&["trust"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(".claude/settings.json"),
        "{}",
        text(&out.stdout)
    );

    // Trusted: deny → ask → allow as Claude Code reads them, in yolo too.
    let out = p.read_env();
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{se}");
    assert!(
        !text(&out.stdout).contains("TOKEN"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        se.contains("denied by rule 3 (deny * path `**/.env` (read only))"),
        "{se}"
    );
    assert!(!se.contains("not applying"), "{se}");
    for line in [
        "git push origin main",
        "git push --force",
        "ls && git push",
        "sh -c 'git push'",
        "git -C . push",
    ] {
        let out = p.command("yolo", line);
        let se = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{line}: {se}");
        assert!(
            se.contains("denied by rule 2 (deny * command `git push`)"),
            "{line}: {se}"
        );
    }
    // The allow rule: `npm run test` runs unasked where everything is asked.
    let out = p.command("confirm-all", "npm run test");
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert!(!se.contains("needs confirmation"), "{se}");
    assert!(
        so.contains("tests-ran") || se.contains("tests-ran"),
        "{so}\n{se}"
    );
    for line in ["npm run test; touch x", "npm run testx", "npm run build"] {
        let out = p.command("confirm-all", line);
        let se = text(&out.stderr);
        assert!(se.contains("needs confirmation"), "{line}: {se}");
    }
    assert!(!p.ws().join("x").exists());

    // `rules list`: each imported rule with its origin, and what was not.
    let out = p.run(&["rules", "list"]);
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let settings = p.settings().canonicalize().unwrap();
    let settings = settings.display();
    for want in [
        "imported from Claude Code settings:".to_owned(),
        "1  allow run_command command `npm run test`".to_owned(),
        format!("from {settings} permissions.allow[0] `Bash(npm run test:*)`"),
        "2  deny * command `git push`".to_owned(),
        format!("from {settings} permissions.deny[0] `Bash(git push:*)`"),
        "3  deny * path `**/.env` (read only)".to_owned(),
        format!("from {settings} permissions.deny[1] `Read(./.env)`"),
        "not imported:".to_owned(),
        format!("{settings} permissions.allow[1] `Task`: no toolgate tool or rule corresponds"),
        format!(
            "{settings} permissions.additionalDirectories[0] `../docs`: toolgate has no extra workspace directories"
        ),
    ] {
        assert!(so.contains(&want), "{want}\n{so}");
    }
    let out = p.run(&["doctor"]);
    let so = text(&out.stdout);
    assert!(
        so.contains("! Claude Code settings: 3 rule(s) imported from 1 file(s)")
            && so.contains("permissions.allow[1] `Task`: no toolgate tool"),
        "{so}"
    );
    let out = p.run(&["--json", "rules", "list"]);
    let v: Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(v["rules"][1]["origin"]["key"], "permissions.deny[0]", "{v}");
    assert_eq!(v["rules"][1]["number"], 2, "{v}");
    assert_eq!(v["rules"][1]["decision"], "deny", "{v}");
    assert_eq!(v["not_imported"].as_array().unwrap().len(), 2, "{v}");

    // A change to the file makes it untrusted again.
    std::fs::write(p.settings(), SETTINGS.replace("git push", "git pull")).unwrap();
    let out = p.read_env();
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{se}");
    assert!(se.contains("not applying the Claude Code settings"), "{se}");
}

#[test]
fn the_imported_mode_applies_only_when_ours_sets_none() {
    let p = Project::new("confirm-all");
    std::fs::write(
        p.settings(),
        r#"{"permissions": {"defaultMode": "dontAsk", "allow": ["Bash(npm run test:*)"]}}"#,
    )
    .unwrap();
    // confirm-all is set in the user's file: it wins over defaultMode, so
    // the call is asked for (and there is nobody to ask), not refused.
    let out = p.run(&[
        "--trust-workspace",
        "call",
        "run_command",
        r#"{"command": "touch made.txt"}"#,
    ]);
    let se = text(&out.stderr);
    assert!(
        se.contains("needs confirmation") && !se.contains("dont-ask"),
        "{se}"
    );
    let user = p.dir.home().join(".config/toolgate/config.yaml");
    std::fs::write(&user, "confirmation:\n  import: [claude]\n").unwrap();
    // dontAsk: what no rule allows is refused at once, never asked.
    let out = p.run(&[
        "--trust-workspace",
        "call",
        "run_command",
        r#"{"command": "touch made.txt"}"#,
    ]);
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{se}");
    assert!(se.contains("dont-ask"), "{se}");
    assert!(!p.ws().join("made.txt").exists());
    let out = p.run(&[
        "--trust-workspace",
        "call",
        "run_command",
        r#"{"command": "npm run test"}"#,
    ]);
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{se}");
    assert!(text(&out.stdout).contains("tests-ran"), "{se}");
    // A flag still wins.
    let out = p.run(&[
        "--trust-workspace",
        "--mode",
        "yolo",
        "call",
        "run_command",
        r#"{"command": "touch made.txt"}"#,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(p.ws().join("made.txt").exists());
}

/// A scripted `toolgate run` whose model tries a denied push and a read of
/// `.env`: both are refused by the imported rules, the allowed test runs.
#[tokio::test]
async fn a_scripted_run_is_decided_by_the_imported_rules() {
    let server = server(vec![
        tool_call("a", "run_command", r#"{"command":"git push origin main"}"#),
        tool_call("b", "read_file", r#"{"path":".env"}"#),
        tool_call("c", "run_command", r#"{"command":"npm run test"}"#),
        answer("Done."),
    ])
    .await;
    let ws = Ws::new(&server);
    let config = ws.path().join("toolgate.yaml");
    let text_config = std::fs::read_to_string(&config)
        .unwrap()
        .replace("mode: yolo", "mode: confirm-all\n  import: [claude]")
        + "workspace:\n  allow_sensitive: true\n";
    std::fs::write(&config, text_config).unwrap();
    std::fs::create_dir_all(ws.path().join(".claude")).unwrap();
    std::fs::write(ws.path().join(".claude/settings.json"), SETTINGS).unwrap();
    std::fs::write(ws.path().join(".env"), "TOKEN=abc\n").unwrap();
    std::fs::write(
        ws.path().join("package.json"),
        r#"{"name": "p", "version": "1.0.0", "scripts": {"test": "echo tests-ran"}}"#,
    )
    .unwrap();
    let out = ws
        .run(&[
            "run",
            "Push it",
            "--report",
            "json",
            "--report-file",
            "r.json",
        ])
        .await;
    let se = text(&out.stderr);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join("r.json")).unwrap())
            .unwrap_or_else(|e| panic!("{e}: {se}"));
    let calls = report["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 3, "{report}");
    let told = common::chat_bodies(&server).await;
    let told: Vec<String> = told.iter().map(ToString::to_string).collect();
    assert!(
        told[1].contains("denied by rule 2 (deny * command `git push`)"),
        "{}",
        told[1]
    );
    assert!(told[2].contains("denied by rule 3"), "{}", told[2]);
    assert!(!told[2].contains("TOKEN=abc"), "{}", told[2]);
    assert_eq!(calls[2]["decision"], "executed", "{}", calls[2]);
    assert!(told[3].contains("tests-ran"), "{}", told[3]);
}
