//! `toolgate run` and `toolgate sessions` as whole processes against a
//! scripted OpenAI-compatible server on 127.0.0.1.

#![allow(
    clippy::unwrap_used,
    clippy::format_push_string,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use wiremock::ResponseTemplate;

mod common;

use common::{Ws, answer, chats, output, server, text, tool_call};

#[tokio::test]
async fn run_reads_edits_answers_exits_0_and_the_session_can_be_listed_shown_and_resumed() {
    let server = server(vec![
        tool_call("r", "read_file", r#"{"path":"a.txt"}"#),
        tool_call(
            "e",
            "edit_file",
            r#"{"path":"a.txt","old_str":"old","new_str":"new"}"#,
        ),
        answer("Replaced old with new."),
        answer("Resumed and done."),
    ])
    .await;
    let ws = Ws::new(&server);
    std::fs::write(ws.path().join("a.txt"), "old text\n").unwrap();
    let out = ws
        .run(&[
            "run",
            "Replace old with new",
            "--report",
            "json",
            "--report-file",
            "r.json",
        ])
        .await;
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout: {so}\nstderr: {se}");
    assert!(so.contains("Replaced old with new."));
    assert!(se.contains("read_file [executed]"), "{se}");
    assert!(se.contains("edit_file [executed]"), "{se}");
    assert!(se.contains("files changed: a.txt"), "{se}");
    assert!(!so.contains("sk-very-secret") && !se.contains("sk-very-secret"));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "new text\n"
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(report["outcome"], "completed");
    assert_eq!(report["steps"], 3);
    assert_eq!(report["tokens"]["input"], 400);
    assert_eq!(report["tool_calls"].as_array().unwrap().len(), 2);
    // 400 in at $1/M + 40 out at $2/M.
    assert!((report["cost_usd"].as_f64().unwrap() - 0.00048).abs() < 1e-9);

    let out = ws.run(&["sessions", "list", "--json"]).await;
    assert_eq!(out.status.code(), Some(0));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);
    let id = list[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(list[0]["task"], "Replace old with new");
    assert_eq!(list[0]["outcome"], "completed");
    // The same count as the run's report (the start and end records of a
    // run are not steps).
    assert_eq!(list[0]["steps"], report["steps"]);

    let out = ws.run(&["sessions", "show", &id]).await;
    let so = text(&out.stdout);
    assert!(
        so.contains("read_file(") && so.contains("Replaced old with new."),
        "{so}"
    );

    let out = ws.run(&["sessions", "resume", &id, "Anything else?"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Resumed and done."));
    // The resumed call carried the whole saved conversation.
    let reqs = chats(&server).await;
    let last: Value = serde_json::from_slice(&reqs.last().unwrap().body).unwrap();
    let msgs = last["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 8, "{msgs:?}");
    assert_eq!(msgs[7]["content"], "Anything else?");
    assert_eq!(reqs[0].headers["authorization"], "Bearer sk-very-secret");

    let out = ws.run(&["--json", "sessions", "list"]).await;
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list[0]["steps"], 4, "3 steps, then 1 resumed");

    let out = ws.run(&["sessions", "show", "nope"]).await;
    assert_eq!(out.status.code(), Some(1));
    let se = text(&out.stderr);
    assert!(
        se.starts_with("error: there is no session `nope` in this workspace's store\n"),
        "{se}"
    );
    assert!(se.contains("sessions list"), "{se}");
}

#[tokio::test]
async fn max_steps_exits_2_partial_after_a_summary() {
    let server = server(vec![
        tool_call("r", "read_file", r#"{"path":"a.txt"}"#),
        answer("Summary: I read a.txt."),
    ])
    .await;
    let ws = Ws::new(&server);
    std::fs::write(ws.path().join("a.txt"), "x").unwrap();
    let out = ws.run(&["run", "Loop", "--max-steps", "1", "--json"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    // The run's size first (system prompt and tool schemas), then the steps.
    assert_eq!(types[..2], ["start", "step"]);
    // The same start event the web UI sends (its API.md).
    assert_eq!(lines[0]["agent"], "build");
    assert_eq!(lines[0]["task"], "Loop");
    assert!(lines[0]["session"].is_string() && lines[0]["request"]["tools"].is_array());
    assert!(
        types.contains(&"tool_call") && types.contains(&"summary"),
        "{types:?}"
    );
    let done = lines.last().unwrap();
    assert_eq!(done["type"], "done");
    assert_eq!(done["outcome"], "max_steps");
    let summary = done["final_text"].as_str().unwrap();
    assert!(
        summary.starts_with("Stopped: the step budget ran out.")
            && summary.ends_with("(not checked against the log):\nSummary: I read a.txt."),
        "{summary}"
    );
}

#[tokio::test]
async fn timeout_exits_5() {
    let server = server(vec![
        answer("too late").set_delay(Duration::from_secs(5)),
        answer("Summary after timeout."),
    ])
    .await;
    let ws = Ws::new(&server);
    let out = ws.run(&["run", "Slow", "--timeout", "1"]).await;
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Summary after timeout."));
}

#[tokio::test]
async fn auth_failure_exits_4_and_missing_model_exits_3() {
    let server = server(vec![ResponseTemplate::new(401)]).await;
    let ws = Ws::new(&server);
    let out = ws.run(&["run", "hi"]).await;
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("sk-very-secret"));

    std::fs::write(ws.path().join("toolgate.yaml"), "llm:\n  stream: false\n").unwrap();
    let out = ws.run(&["run", "hi"]).await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("`toolgate init`"));

    std::fs::write(ws.path().join("toolgate.yaml"), "llm:\n  modle: x\n").unwrap();
    let out = ws.run(&["run", "hi"]).await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));

    let out = ws
        .run(&["run", "hi", "--agent", "ghost", "--model", "m"])
        .await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
}

#[cfg(unix)]
#[tokio::test]
async fn first_ctrl_c_stops_gracefully_with_a_summary_and_exits_2() {
    let server = server(vec![
        answer("too late").set_delay(Duration::from_secs(10)),
        answer("Summary after interrupt."),
    ])
    .await;
    let ws = Ws::new(&server);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.args(["run", "Slow"])
        .current_dir(ws.path())
        .env("HOME", ws.path().join("home"))
        .env("TEST_LLM_KEY", "k")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("TOOLGATE_CONFIG")
        .env_remove("TOOLGATE_MODE")
        .env("TOOLGATE_TRUST_WORKSPACE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    let pid = child.id().to_string();
    // Wait until the model call is in flight (the server holds it).
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while chats(&server).await.is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the model was not called within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let status = Command::new("kill").args(["-INT", &pid]).status().unwrap();
    assert!(status.success());
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Summary after interrupt."));
    assert!(text(&out.stderr).contains("interrupted"));
}

#[tokio::test]
async fn run_fires_the_configured_lifecycle_hooks_and_feeds_a_failing_quality_gate_back() {
    let server = server(vec![
        answer("Done."),
        tool_call("w", "write_file", r#"{"path":"done.txt","content":"ok\n"}"#),
        answer("Done now."),
    ])
    .await;
    let ws = Ws::new(&server);
    let log =
        r#"[{name: log, command: 'echo "$TOOLGATE_EVENT $TOOLGATE_SESSION_ID" >> events.log'}]"#;
    let mut config = std::fs::read_to_string(ws.path().join("toolgate.yaml")).unwrap();
    config.push_str(&format!(
        "hooks:\n  session_start: {log}\n  pre_llm_call: {log}\n  agent_complete: {log}\n  session_end: {log}\n  pre_tool_use: {log}\n\
         guardrails:\n  quality_gates:\n    - {{name: done-file, command: 'test -f done.txt', required: true}}\n"
    ));
    std::fs::write(ws.path().join("toolgate.yaml"), config).unwrap();

    // A task that names no file to create: the quality gate, not the task
    // checks, is what finds done.txt missing.
    let out = ws.run(&["run", "Finish the job", "--json"]).await;
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout: {so}\nstderr: {se}");
    let lines: Vec<Value> = so
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "gate_failed" && l["name"] == "done-file"),
        "{so}"
    );
    let done = lines.last().unwrap();
    assert_eq!(done["outcome"], "completed", "{so}");
    let session = done["session"].as_str().unwrap();

    // The gate's failure went back to the model before it wrote the file.
    let reqs = chats(&server).await;
    assert_eq!(reqs.len(), 3);
    let second: Value = serde_json::from_slice(&reqs[1].body).unwrap();
    let fed_back = second["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(fed_back.contains("[done-file]"), "{fed_back}");

    let events = std::fs::read_to_string(ws.path().join("events.log")).unwrap();
    let names: Vec<&str> = events
        .lines()
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "SessionStart",
            "PreLLMCall",
            "PreLLMCall",
            "PreToolUse",
            "PreLLMCall",
            "AgentComplete",
            "SessionEnd"
        ],
        "{events}"
    );
    assert!(
        events.lines().all(|l| l.ends_with(session)),
        "every hook saw session {session}:\n{events}"
    );
}

#[tokio::test]
async fn a_spent_budget_exits_2_after_a_summary_and_a_budget_without_prices_exits_3() {
    let server = server(vec![
        tool_call("r1", "read_file", r#"{"path":"a.txt"}"#),
        tool_call("r2", "read_file", r#"{"path":"a.txt"}"#),
        answer("Summary: budget spent."),
    ])
    .await;
    let ws = Ws::new(&server);
    std::fs::write(ws.path().join("a.txt"), "x").unwrap();
    // Each call costs 100 in at $1/M + 10 out at $2/M = $0.00012.
    let out = ws.run(&["run", "Spend", "--budget", "0.0002"]).await;
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "stdout: {so}\nstderr: {se}");
    assert!(se.contains("budget warning: $0.0002 of $0.0002"), "{se}");
    assert!(se.contains("the cost budget ran out"), "{se}");
    assert!(so.contains("Summary: budget spent."), "{so}");
    assert_eq!(chats(&server).await.len(), 3);

    let config = std::fs::read_to_string(ws.path().join("toolgate.yaml")).unwrap();
    let unpriced: Vec<&str> = config
        .lines()
        .filter(|l| !l.contains("price_per_mtok"))
        .collect();
    std::fs::write(ws.path().join("toolgate.yaml"), unpriced.join("\n")).unwrap();
    let out = ws.run(&["run", "Spend", "--budget", "1"]).await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("cannot be enforced"));
    assert_eq!(
        chats(&server).await.len(),
        3,
        "no model call without a countable budget"
    );
}

/// On a terminal a spinner shows while the model is slow, and is erased
/// before the answer is printed.
#[tokio::test]
async fn a_spinner_shows_on_a_terminal_while_the_model_thinks() {
    let server = server(vec![
        answer("Slow answer.").set_delay(Duration::from_millis(700)),
    ])
    .await;
    let ws = Ws::new(&server);
    let bin = env!("CARGO_BIN_EXE_toolgate");
    let mut cmd = ws.command("script");
    cmd.args(["-qec", &format!("{bin} run 'Think'"), "/dev/null"]);
    // The clean environment has no TERM; a spinner needs a terminal that
    // can erase a line.
    cmd.env("TERM", "xterm-256color");
    let out = output(cmd).await;
    let tty = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{tty}");
    let spin = tty
        .find("thinking… step 1")
        .unwrap_or_else(|| panic!("{tty}"));
    let answer = tty.find("Slow answer.").unwrap();
    // indicatif clears the line with `ESC [2K` (or `ESC [K`).
    let erase = tty[spin..answer]
        .rfind("\x1b[2K")
        .or_else(|| tty[spin..answer].rfind("\x1b[K"))
        .map(|i| spin + i);
    assert!(
        erase.is_some_and(|e| e < answer),
        "the spinner line is erased before the answer: {tty:?}"
    );
}

/// With nobody to ask, refused edits make the run `blocked`: not
/// `completed` because the model said it was done.
#[tokio::test]
async fn a_run_whose_edits_nobody_could_approve_ends_blocked_with_a_hint() {
    let server = server(vec![
        tool_call(
            "e",
            "edit_file",
            r#"{"path":"a.txt","old_str":"old","new_str":"new"}"#,
        ),
        answer("I fixed the file."),
        tool_call(
            "e",
            "edit_file",
            r#"{"path":"a.txt","old_str":"old","new_str":"new"}"#,
        ),
        answer("I fixed the file."),
    ])
    .await;
    let ws = Ws::new(&server);
    ws.set_mode("confirm-sensitive");
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
    assert!(se.contains("edit_file [no_approver]"), "{se}");
    assert!(se.contains("\nblocked · "), "{se}");
    assert!(
        se.contains("error: 1 tool call was refused because nobody could be asked to approve it"),
        "{se}"
    );
    let hint = se.lines().find(|l| l.starts_with("hint: ")).unwrap();
    for way in [
        "--approver ui",
        "--mode yolo",
        "confirmation.rules",
        "--dry-run",
    ] {
        assert!(hint.contains(way), "{way}: {hint}");
    }
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "old text\n"
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(report["outcome"], "blocked");
    assert_eq!(report["blocked_calls"], 1);
    assert_eq!(report["tool_calls"][0]["approval"]["answer"], "unavailable");

    let out = ws.run(&["sessions", "list", "--json"]).await;
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list[0]["outcome"], "blocked", "{list}");

    // --json says the same in its done event.
    let out = ws.run(&["run", "Fix the typo", "--json"]).await;
    assert_eq!(out.status.code(), Some(6));
    let done: Value = serde_json::from_str(text(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(
        (done["type"].as_str(), done["outcome"].as_str()),
        (Some("done"), Some("blocked"))
    );
}

/// A model server's error that echoes the key, and a base URL with a
/// password and a token: none of them reaches stdout, stderr, the report
/// or `self_inspect`.
#[tokio::test]
async fn secrets_never_reach_the_terminal_the_report_or_the_model() {
    let echo = ResponseTemplate::new(400).set_body_json(serde_json::json!({"error": {
        "message": "invalid request; you sent Authorization: Bearer sk-very-secret",
        "echo": {"authorization": "Bearer sk-very-secret", "api_key": "sk-very-secret"}}}));
    let server = server(vec![echo]).await;
    let ws = Ws::new(&server);
    let config = std::fs::read_to_string(ws.path().join("toolgate.yaml")).unwrap();
    let base = format!("{}/v1", server.uri());
    let with_password = base.replacen("http://", "http://zed-user-77:PASS-w0rd-9@", 1);
    std::fs::write(
        ws.path().join("toolgate.yaml"),
        config.replace(&base, &with_password),
    )
    .unwrap();
    let out = ws
        .run(&["run", "Hi", "--report", "json", "--report-file", "r.json"])
        .await;
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    let report = std::fs::read_to_string(ws.path().join("r.json")).unwrap();
    assert_ne!(out.status.code(), Some(0), "{se}");
    assert!(se.contains("HTTP 400"), "{se}");
    for (what, shown) in [("stdout", &so), ("stderr", &se), ("report", &report)] {
        for secret in ["sk-very-secret", "PASS-w0rd-9"] {
            assert!(!shown.contains(secret), "{secret} in {what}: {shown}");
        }
    }
    assert!(se.contains("[redacted]"), "{se}");

    // A URL with credential parameters too, as self_inspect shows it.
    let with_token = format!("{with_password}?token=tok-123456&api_key=key-654321&model=m");
    std::fs::write(
        ws.path().join("toolgate.yaml"),
        config.replace(&base, &with_token) + "tools:\n  self_inspect: {enabled: true}\n",
    )
    .unwrap();
    let out = ws
        .run(&["call", "self_inspect", r#"{"what":"config"}"#])
        .await;
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for secret in ["zed-user-77", "PASS-w0rd-9", "tok-123456", "key-654321"] {
        assert!(!shown.contains(secret), "{secret} in self_inspect: {shown}");
    }
    assert!(shown.contains("model=m"), "{shown}");
}
