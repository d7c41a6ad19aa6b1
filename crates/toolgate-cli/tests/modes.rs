//! The confirmation modes `accept-edits` and `dont-ask` as whole processes:
//! `toolgate call`, `toolgate run` against the scripted model server, on a
//! pseudo-terminal and with stdin closed, `tools list` and the config keys.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::process::Output;

use serde_json::Value;

mod common;

use common::{Ws, answer, server, text, tool_call};

/// The `toolgate rules add …` line inside a refusal, without its backticks.
fn rules_add_line(error: &str) -> &str {
    let start = error.find("`toolgate rules add").expect(error) + 1;
    let len = error[start..].find('`').unwrap();
    &error[start..start + len]
}

/// Runs a `toolgate rules add` line as the person would paste it (through
/// the shell, so its quoting is checked too).
async fn paste(ws: &Ws, line: &str) -> Output {
    let bin = env!("CARGO_BIN_EXE_toolgate");
    let mut cmd = ws.command("sh");
    let line = line.replacen("toolgate", bin, 1);
    cmd.args(["-c", &line]);
    common::output(cmd).await
}

#[tokio::test]
async fn dont_ask_call_refuses_at_once_naming_the_rule_and_the_rule_pasted_lets_it_run() {
    let server = server(vec![answer("unused")]).await;
    let ws = Ws::new(&server);
    let args = r#"{"path": "notes/todo.txt", "content": "x\n"}"#;
    let out = ws
        .run(&["--mode", "dont-ask", "call", "write_file", args])
        .await;
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{se}");
    assert!(se.contains("the mode dont-ask never asks"), "{se}");
    assert!(!ws.path().join("notes/todo.txt").exists());
    let line = rules_add_line(&se).to_owned();
    assert_eq!(
        line,
        "toolgate rules add --tool write_file --path notes/todo.txt --decision allow"
    );

    // Reading is what confirm-sensitive runs unasked: dont-ask runs it.
    std::fs::write(ws.path().join("a.txt"), "hello\n").unwrap();
    let out = ws
        .run(&[
            "--mode",
            "dont-ask",
            "call",
            "read_file",
            r#"{"path":"a.txt"}"#,
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("hello"));

    let added = paste(&ws, &line).await;
    assert_eq!(added.status.code(), Some(0), "{}", text(&added.stderr));
    let out = ws
        .run(&["--mode", "dont-ask", "call", "write_file", args])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes/todo.txt")).unwrap(),
        "x\n"
    );
}

#[tokio::test]
async fn dont_ask_never_prompts_on_a_terminal_where_confirm_sensitive_does() {
    let server = server(vec![answer("unused")]).await;
    let ws = Ws::new(&server);
    let call = r#"call run_command '{"command": "touch made.txt"}'"#;
    // The control: confirm-sensitive asks on the terminal (answered no).
    let (out, tty) = ws
        .on_tty(&format!("--mode confirm-sensitive {call}"), "n\n")
        .await;
    assert!(tty.contains("[y]es"), "{tty}");
    assert_eq!(out.status.code(), Some(1), "{tty}");
    // dont-ask: no question, refused at once, even with a terminal there.
    let (out, tty) = ws.on_tty(&format!("--mode dont-ask {call}"), "y\n").await;
    assert!(!tty.contains("[y]es"), "{tty}");
    assert!(
        tty.contains("--tool run_command --command 'touch made.txt' --exact --decision allow"),
        "{tty}"
    );
    assert_eq!(out.status.code(), Some(1), "{tty}");
    assert!(!ws.path().join("made.txt").exists());
}

#[tokio::test]
async fn a_dont_ask_run_is_refused_unasked_exits_6_and_the_suggested_rule_completes_it() {
    let edit = || {
        tool_call(
            "e",
            "edit_file",
            r#"{"path":"a.txt","old_str":"old","new_str":"new"}"#,
        )
    };
    let server = server(vec![
        edit(),
        answer("I fixed the file."),
        edit(),
        answer("I fixed the file."),
    ])
    .await;
    let ws = Ws::new(&server);
    ws.set_mode("dont-ask");
    std::fs::write(ws.path().join("a.txt"), "old text\n").unwrap();
    let out = ws
        .run(&[
            "run",
            // Names no file: the task checks stay out of this test.
            "Fix the typo",
            "--report",
            "json",
            "--report-file",
            "r.json",
        ])
        .await;
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{se}");
    assert!(
        se.contains("error: 1 tool call was refused under --mode dont-ask, which never asks"),
        "{se}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "old text\n"
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(report["outcome"], "blocked");
    let call = &report["tool_calls"][0];
    assert_eq!(call["decision"], "no_approver", "{call}");
    assert!(call["approval"].is_null(), "nobody was asked: {call}");
    // The hint gives the line; the model was told the same.
    let hint = se.lines().find(|l| l.starts_with("hint: ")).unwrap();
    let line = rules_add_line(hint).to_owned();
    assert_eq!(
        line,
        "toolgate rules add --tool edit_file --path a.txt --decision allow"
    );
    let told = common::chat_bodies(&server).await;
    let told = told[1].to_string();
    assert!(
        told.contains("never asks") && told.contains(&line),
        "{told}"
    );

    let added = paste(&ws, &line).await;
    assert_eq!(added.status.code(), Some(0), "{}", text(&added.stderr));
    let out = ws.run(&["run", "Fix the typo"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "new text\n"
    );
}

#[tokio::test]
async fn an_accept_edits_run_edits_unasked_and_still_refuses_a_dev_command_headless() {
    let server = server(vec![
        tool_call(
            "e",
            "edit_file",
            r#"{"path":"a.txt","old_str":"old","new_str":"new"}"#,
        ),
        tool_call("c", "run_command", r#"{"command":"touch made.txt"}"#),
        answer("Done."),
    ])
    .await;
    let ws = Ws::new(&server);
    std::fs::write(ws.path().join("a.txt"), "old text\n").unwrap();
    let out = ws
        .run(&[
            "--mode",
            "accept-edits",
            "run",
            "Fix a.txt",
            "--report",
            "json",
        ])
        .await;
    let se = text(&out.stderr);
    assert!(se.contains("edit_file [executed]"), "{se}");
    assert!(se.contains("run_command [no_approver]"), "{se}");
    assert_eq!(out.status.code(), Some(6), "{se}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "new text\n"
    );
    assert!(!ws.path().join("made.txt").exists());
}

#[tokio::test]
async fn agents_mode_and_tools_list_know_the_new_modes() {
    let server = server(vec![answer("unused")]).await;
    let ws = Ws::new(&server);
    let path = ws.path().join("toolgate.yaml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    config.push_str(
        "agents:\n  ci:\n    system_prompt: CI.\n    mode: dont-ask\n  editor:\n    system_prompt: Edits.\n    mode: accept-edits\n",
    );
    std::fs::write(&path, config).unwrap();
    ws.set_mode("confirm-sensitive");
    let column = |listing: &str, tool: &str| -> String {
        let line = listing
            .lines()
            .find(|l| l.split_whitespace().next() == Some(tool))
            .unwrap_or_else(|| panic!("{tool} in {listing}"));
        line[tool.len()..].trim_start().to_owned()
    };
    for (agent, expected) in [
        (
            "ci",
            [
                ("read_file", "never"),
                ("write_file", "refused"),
                ("run_command", "by class"),
            ],
        ),
        (
            "editor",
            [
                ("read_file", "never"),
                ("write_file", "outside"),
                ("run_command", "by class"),
            ],
        ),
    ] {
        let out = ws.run(&["tools", "list", "--agent", agent]).await;
        let (so, se) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "{se}");
        for (tool, asks) in expected {
            assert!(column(&so, tool).starts_with(asks), "{agent} {tool}: {so}");
        }
        let mode = if agent == "ci" {
            "dont-ask"
        } else {
            "accept-edits"
        };
        assert!(se.contains(&format!("mode {mode}:")), "{se}");
    }

    // A mode nobody knows is refused with the list of those there are.
    let out = ws.run(&["--mode", "dontask", "tools", "list"]).await;
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert!(
        se.contains("accept-edits") && se.contains("dont-ask"),
        "{se}"
    );
}
