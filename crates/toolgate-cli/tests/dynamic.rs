//! Dynamic tools as `toolgate run` and the review commands use them: a
//! model creates a tool, it stays pending, a person approves it from
//! another process, and the running agent is offered it at its next step;
//! its argument cannot add a command.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

mod common;

use serde_json::Value;
use toolgate_store::{DynamicToolStatus, DynamicToolStore, SqliteStore};
use toolgate_test::model::{self, Script};
use wiremock::MockServer;

use common::{Ws, answer, chat_bodies, offered, text, tool_call};

/// Approves dynamic tool 1 in the store at `db`, as `toolgate tools
/// approve` would from another process.
fn approve(db: &std::path::Path) {
    let db = db.to_owned();
    // The model server's runtime calls this: the store gets a runtime of
    // its own, on a thread of its own.
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let store = SqliteStore::open(&db).unwrap();
        runtime
            .block_on(store.set_dynamic_tool_status(1, DynamicToolStatus::Approved))
            .unwrap();
    })
    .join()
    .unwrap();
}

#[tokio::test]
async fn a_tool_made_by_the_model_runs_only_after_approval_and_takes_no_extra_command() {
    let server = MockServer::start().await;
    let ws = Ws::new(&server);
    let data = ws.path().join("home/.local/share/toolgate");
    let db = toolgate_store::default_path(&data, &ws.path().canonicalize().unwrap());
    // The model: creates a tool; then, while "someone" approves it in the
    // store, reads the time; then calls the new tool; then answers.
    let script = Script::new(vec![
        tool_call(
            "c1",
            "create_tool",
            r#"{"name": "say_back", "description": "Print the message back.", "type": "command", "source": "printf [%s] {{msg}}", "parameters": {"type": "object", "properties": {"msg": {"type": "string"}}}}"#,
        ),
        tool_call("c2", "get_datetime", "{}"),
        tool_call("c3", "say_back", r#"{"msg": "a; touch pwned"}"#),
        answer("Done."),
    ])
    .before(1, move || approve(&db));
    model::mount(&server, "/v1/chat/completions", script).await;
    let config = std::fs::read_to_string(ws.path().join("toolgate.yaml")).unwrap();
    std::fs::write(
        ws.path().join("toolgate.yaml"),
        format!("{config}tools:\n  dynamic: {{enabled: true}}\n"),
    )
    .unwrap();

    let out = ws
        .run(&["--json", "run", "Make a tool that prints back a message"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let requests = chat_bodies(&server).await;
    assert_eq!(requests.len(), 4);
    // Pending: not offered at step 2; approved meanwhile: offered at step 3.
    assert!(offered(&requests[0]).contains(&"create_tool".to_owned()));
    assert!(!offered(&requests[1]).contains(&"say_back".to_owned()));
    assert!(offered(&requests[2]).contains(&"say_back".to_owned()));
    // The argument is one argv word: printed back, nothing else ran.
    let result = requests[3]["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(result["role"], "tool");
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("[a; touch pwned]"),
        "{result}"
    );
    assert!(!ws.path().join("pwned").exists());

    // The review commands: nothing pending now; the tool, after a restart,
    // is callable; rejected, it is gone.
    let pending = ws.run(&["--json", "tools", "pending"]).await;
    assert_eq!(pending.status.code(), Some(0), "{}", text(&pending.stderr));
    let listed: Value = serde_json::from_slice(&pending.stdout).unwrap();
    assert_eq!(listed, serde_json::json!([]));
    let called = ws
        .run(&["--mode", "yolo", "call", "say_back", r#"{"msg": "$(id)"}"#])
        .await;
    assert_eq!(called.status.code(), Some(0), "{}", text(&called.stderr));
    assert_eq!(text(&called.stdout).trim(), "[$(id)]");
    let rejected = ws.run(&["tools", "reject", "1"]).await;
    assert_eq!(
        rejected.status.code(),
        Some(0),
        "{}",
        text(&rejected.stderr)
    );
    let gone = ws
        .run(&["--mode", "yolo", "call", "say_back", r#"{"msg": "x"}"#])
        .await;
    assert_eq!(gone.status.code(), Some(1));
    assert!(
        text(&gone.stderr).contains("unknown tool"),
        "{}",
        text(&gone.stderr)
    );
}

#[tokio::test]
async fn a_pending_tool_is_listed_for_review_and_cannot_be_called() {
    let server = common::server(vec![
        tool_call(
            "c1",
            "create_tool",
            r#"{"name": "count_lines", "description": "Count lines.", "type": "script", "interpreter": "python3", "source": "import sys, json\nprint(len(json.load(sys.stdin)['text'].splitlines()))", "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}"#,
        ),
        answer("Created; it needs your approval."),
    ])
    .await;
    let ws = Ws::new(&server);
    let config = std::fs::read_to_string(ws.path().join("toolgate.yaml")).unwrap();
    std::fs::write(
        ws.path().join("toolgate.yaml"),
        format!("{config}tools:\n  dynamic: {{enabled: true}}\n"),
    )
    .unwrap();
    let out = ws.run(&["run", "Make a line counter"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let pending = ws.run(&["--json", "tools", "pending"]).await;
    let listed: Value = serde_json::from_slice(&pending.stdout).unwrap();
    let tool = &listed[0];
    assert_eq!(
        (
            tool["name"].as_str(),
            tool["type"].as_str(),
            tool["status"].as_str()
        ),
        (Some("count_lines"), Some("script"), Some("pending"))
    );
    assert!(tool["source"].as_str().unwrap().contains("splitlines"));
    assert!(tool["id"].is_i64());
    let call = ws
        .run(&[
            "--mode",
            "yolo",
            "call",
            "count_lines",
            r#"{"text": "a\nb"}"#,
        ])
        .await;
    assert_eq!(call.status.code(), Some(1));
    assert!(
        text(&call.stderr).contains("unknown tool"),
        "{}",
        text(&call.stderr)
    );
    let approved = ws.run(&["tools", "approve", &tool["id"].to_string()]).await;
    assert_eq!(
        approved.status.code(),
        Some(0),
        "{}",
        text(&approved.stderr)
    );
    let call = ws
        .run(&[
            "--mode",
            "yolo",
            "call",
            "count_lines",
            r#"{"text": "a\nb\nc"}"#,
        ])
        .await;
    assert_eq!(call.status.code(), Some(0), "{}", text(&call.stderr));
    assert_eq!(text(&call.stdout).trim(), "3");
}
