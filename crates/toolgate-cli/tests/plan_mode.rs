//! Plan mode as whole processes: `toolgate run --mode plan` against the
//! scripted model server, the plan approved on a pseudo-terminal (or
//! nobody there to approve it), `toolgate call` and `tools list`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use serde_json::Value;

mod common;

use common::{Ws, answer, chat_bodies, offered, server, text, tool_call};

const WRITE: &str = r#"{"path":"notes.txt","content":"planned\n"}"#;
const PLAN: &str = r#"{"plan":"1. Write notes.txt with one line.\n2. Nothing else."}"#;

/// The one session the workspace holds, as `sessions show --json` prints it.
async fn only_session(ws: &Ws) -> Value {
    let out = ws.run(&["--json", "sessions", "list"]).await;
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = list[0]["id"].as_str().unwrap().to_owned();
    let out = ws.run(&["--json", "sessions", "show", &id]).await;
    serde_json::from_slice(&out.stdout).unwrap()
}

/// What the model was told in reply to its call `id`, in request `n`.
fn told(bodies: &[Value], n: usize, id: &str) -> String {
    let reply = bodies[n]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .unwrap_or_else(|| panic!("no reply to {id} in request {n}"));
    reply["content"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_plan_approved_on_the_terminal_continues_in_accept_edits_and_the_write_runs() {
    let server = server(vec![
        tool_call("w1", "write_file", WRITE),
        tool_call("p", "exit_plan_mode", PLAN),
        tool_call("w2", "write_file", WRITE),
        answer("Wrote notes.txt."),
    ])
    .await;
    let ws = Ws::new(&server);
    let (out, tty) = ws.on_tty("--mode plan run 'Add notes'", "1\n").await;
    assert_eq!(out.status.code(), Some(0), "{tty}");
    // The person saw the plan as text, and the modes to go on in.
    assert!(
        tty.contains("the model proposes this plan and asks to leave plan mode"),
        "{tty}"
    );
    assert!(
        tty.contains("  1. Write notes.txt with one line.\n  2. Nothing else.\n"),
        "{tty}"
    );
    assert!(
        tty.contains("[1] accept-edits [2] confirm-sensitive [3] yolo / [k]eep planning"),
        "{tty}"
    );
    assert!(
        tty.contains("plan approved: the run goes on in mode accept-edits"),
        "{tty}"
    );
    // No call question was asked: the refused write never asked, the
    // second ran unasked under accept-edits.
    assert!(!tty.contains("[y]es"), "{tty}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes.txt")).unwrap(),
        "planned\n"
    );

    let bodies = chat_bodies(&server).await;
    assert_eq!(bodies.len(), 4);
    // Step 1 in plan mode: exit is offered, enter is not.
    let first = offered(&bodies[0]);
    assert!(first.iter().any(|t| t == "exit_plan_mode"), "{first:?}");
    assert!(!first.iter().any(|t| t == "enter_plan_mode"), "{first:?}");
    // The system prompt says plan mode is on.
    let system = bodies[0]["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("Plan mode is on"), "{system}");
    let refused = told(&bodies, 1, "w1");
    assert!(refused.contains("plan mode is on"), "{refused}");
    assert!(refused.contains("`exit_plan_mode`"), "{refused}");
    assert!(told(&bodies, 2, "p").contains("accept-edits"));
    // After the plan: the offer follows the mode.
    let after = offered(&bodies[2]);
    assert!(!after.iter().any(|t| t == "exit_plan_mode"), "{after:?}");
    assert!(after.iter().any(|t| t == "enter_plan_mode"), "{after:?}");

    // The session keeps the plan and the answer.
    let session = only_session(&ws).await;
    let calls = session["tool_calls"].as_array().unwrap();
    assert_eq!(calls[0]["decision"], "plan_mode", "{calls:?}");
    assert_eq!(calls[2]["decision"], "executed", "{calls:?}");
    let events = session["events"].as_array().unwrap();
    let plan = events
        .iter()
        .find(|e| e["kind"] == "plan")
        .expect("a plan event");
    assert_eq!(plan["data"]["answer"], "approved", "{plan}");
    assert_eq!(plan["data"]["mode"], "accept-edits", "{plan}");
    assert_eq!(
        plan["data"]["plan"],
        "1. Write notes.txt with one line.\n2. Nothing else."
    );
    assert_eq!(session["session"]["outcome"], "completed");
    let id = session["session"]["id"].as_str().unwrap();
    let shown = ws.run(&["sessions", "show", id]).await;
    let shown = text(&shown.stdout);
    assert!(shown.contains("plan {"), "{shown}");
    assert!(shown.contains("accept-edits"), "{shown}");
}

#[tokio::test]
async fn kept_planning_on_the_terminal_the_model_gets_the_feedback_and_nothing_is_written() {
    let server = server(vec![
        tool_call("p", "exit_plan_mode", PLAN),
        tool_call("w", "write_file", WRITE),
        answer("I will revise the plan."),
    ])
    .await;
    let ws = Ws::new(&server);
    let (out, tty) = ws
        .on_tty("--mode plan run 'Add notes'", "k\nalso add a README\n")
        .await;
    assert_eq!(out.status.code(), Some(0), "{tty}");
    assert!(tty.contains("plan not approved yet"), "{tty}");
    let bodies = chat_bodies(&server).await;
    let feedback = told(&bodies, 1, "p");
    assert!(feedback.contains("also add a README"), "{feedback}");
    assert!(told(&bodies, 2, "w").contains("plan mode is on"));
    assert!(!ws.path().join("notes.txt").exists());
}

#[tokio::test]
async fn headless_a_plan_cannot_be_approved_and_the_run_stays_read_only() {
    let server = server(vec![
        tool_call("p", "exit_plan_mode", PLAN),
        tool_call("w", "write_file", WRITE),
        answer("Here is the plan instead."),
    ])
    .await;
    let ws = Ws::new(&server);
    ws.set_mode("plan");
    let out = ws
        .run(&[
            "--json",
            "run",
            "Add notes",
            "--report",
            "json",
            "--report-file",
            "r.json",
        ])
        .await;
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{se}");
    let bodies = chat_bodies(&server).await;
    let unavailable = told(&bodies, 1, "p");
    assert!(unavailable.contains("plan mode stays on"), "{unavailable}");
    assert!(unavailable.contains("nobody"), "{unavailable}");
    assert!(told(&bodies, 2, "w").contains("plan mode is on"));
    assert!(!ws.path().join("notes.txt").exists());
    // The --json events carry what became of the plan.
    let plan = text(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "plan")
        .expect("a plan event on stdout");
    assert_eq!(plan["answer"], "unavailable", "{plan}");
    assert!(
        plan["plan"]
            .as_str()
            .unwrap()
            .starts_with("1. Write notes.txt")
    );
    let report = std::fs::read_to_string(ws.path().join("r.json")).unwrap();
    let report: Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["tool_calls"][1]["decision"], "plan_mode");
    // Nobody can take the run out of plan mode, so no model is offered the
    // way in when it starts elsewhere.
    let bodies_before = bodies.len();
    let out = ws.run(&["--mode", "confirm-sensitive", "run", "Go"]).await;
    assert!(out.status.code().is_some());
    let bodies = chat_bodies(&server).await;
    let tools = offered(&bodies[bodies_before]);
    assert!(!tools.iter().any(|t| t.ends_with("plan_mode")), "{tools:?}");
}

#[tokio::test]
async fn call_in_plan_mode_refuses_a_write_with_exit_1_and_runs_a_read() {
    let server = server(vec![answer("unused")]).await;
    let ws = Ws::new(&server);
    let out = ws
        .run(&["--mode", "plan", "--json", "call", "write_file", WRITE])
        .await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["success"], false);
    let error = result["error"].as_str().unwrap();
    assert!(error.contains("plan mode is on"), "{error}");
    assert!(!ws.path().join("notes.txt").exists());

    std::fs::write(ws.path().join("a.txt"), "hello\n").unwrap();
    let out = ws
        .run(&["--mode", "plan", "call", "read_file", r#"{"path":"a.txt"}"#])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("hello"));
    let out = ws
        .run(&[
            "--mode",
            "plan",
            "call",
            "run_command",
            r#"{"command":"cargo build"}"#,
        ])
        .await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("plan mode is on"));
}

#[tokio::test]
async fn plan_mode_from_an_agent_and_in_tools_list() {
    let server = server(vec![answer("unused")]).await;
    let ws = Ws::new(&server);
    let path = ws.path().join("toolgate.yaml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    config.push_str("agents:\n  planner:\n    system_prompt: Plans.\n    mode: plan\n");
    std::fs::write(&path, config).unwrap();
    let out = ws.run(&["tools", "list", "--agent", "planner"]).await;
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{se}");
    let column = |tool: &str| -> String {
        let line = so
            .lines()
            .find(|l| l.split_whitespace().next() == Some(tool))
            .unwrap_or_else(|| panic!("{tool} in {so}"));
        line[tool.len()..].trim_start().to_owned()
    };
    assert!(column("read_file").starts_with("never"), "{so}");
    assert!(column("write_file").starts_with("refused"), "{so}");
    assert!(column("run_command").starts_with("by class"), "{so}");
    assert!(se.contains("mode plan:"), "{se}");
}

#[tokio::test]
async fn with_routing_a_run_in_plan_mode_keeps_exit_plan_mode_offered() {
    // The classification answers `search`; the step offers the search
    // tools, and exit_plan_mode whatever the categories.
    let server = server(vec![answer("search"), answer("Here is the plan.")]).await;
    let ws = Ws::new(&server);
    let path = ws.path().join("toolgate.yaml");
    let config = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        format!("{config}routing:\n  enabled: true\n  max_tools: 3\n"),
    )
    .unwrap();
    let out = ws
        .run(&["--mode", "plan", "run", "Where is load_config defined?"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let bodies = chat_bodies(&server).await;
    let tools = offered(&bodies[1]);
    assert!(tools.iter().any(|t| t == "exit_plan_mode"), "{tools:?}");
    assert!(
        tools.iter().any(|t| t == "search_code" || t == "grep"),
        "{tools:?}"
    );
}

/// The decision of every tool call of the only session, in order.
async fn decisions(ws: &Ws) -> Vec<String> {
    let session = only_session(ws).await;
    session["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["decision"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_resumed_session_goes_on_in_the_mode_its_plan_was_approved_into() {
    let server = server(vec![
        tool_call("p", "exit_plan_mode", PLAN),
        answer("Approved; I will write it next."),
        tool_call("w", "write_file", WRITE),
        answer("Wrote notes.txt."),
    ])
    .await;
    let ws = Ws::new(&server);
    // Configured to ask before writes: only accept-edits writes unasked
    // where nobody can be asked.
    ws.set_mode("confirm-sensitive");
    let (out, tty) = ws.on_tty("--mode plan run 'Add notes'", "1\n").await;
    assert_eq!(out.status.code(), Some(0), "{tty}");
    assert!(
        tty.contains("the run goes on in mode accept-edits"),
        "{tty}"
    );
    let id = only_session(&ws).await["session"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = ws.run(&["sessions", "resume", &id, "Write it"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(decisions(&ws).await.last().unwrap(), "executed");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes.txt")).unwrap(),
        "planned\n"
    );
}

#[tokio::test]
async fn a_session_left_in_plan_mode_resumes_in_plan_mode_unless_mode_is_given() {
    let server = server(vec![
        tool_call("p", "exit_plan_mode", PLAN),
        answer("Here is the plan."),
        tool_call("w1", "write_file", WRITE),
        answer("Refused."),
        tool_call("w2", "write_file", WRITE),
        answer("Wrote notes.txt."),
    ])
    .await;
    // The workspace's mode is yolo: only plan mode refuses the write.
    let ws = Ws::new(&server);
    let out = ws.run(&["--mode", "plan", "run", "Plan notes"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let id = only_session(&ws).await["session"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = ws.run(&["sessions", "resume", &id, "Write it"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(decisions(&ws).await.last().unwrap(), "plan_mode");
    assert!(!ws.path().join("notes.txt").exists());
    // `--mode` given: it wins.
    let out = ws
        .run(&["--mode", "yolo", "sessions", "resume", &id, "Write it"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(decisions(&ws).await.last().unwrap(), "executed");
    assert!(ws.path().join("notes.txt").exists());
}
