//! Delegation as `toolgate run` does it, against the scripted model
//! server: the caller gets the sub-agent's answer as the tool result, the
//! sub-agent is never offered the delegation tools, and its steps are
//! nested in the events and recorded in the session.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

mod common;

use serde_json::Value;

use common::{Ws, answer, chat_bodies, offered, server, text, tool_call};

fn append(ws: &Ws, yaml: &str) {
    let config = std::fs::read_to_string(ws.path().join("toolgate.yaml")).unwrap();
    std::fs::write(ws.path().join("toolgate.yaml"), format!("{config}{yaml}")).unwrap();
}

#[tokio::test]
async fn a_build_agent_delegates_to_review_and_gets_its_answer() {
    let server = server(vec![
        // build, step 1: hand the review over.
        tool_call(
            "d1",
            "delegate",
            r#"{"agent": "review", "task": "Review a.txt for typos"}"#,
        ),
        // review, step 1: read the file; step 2: answer.
        tool_call("r1", "read_file", r#"{"path": "a.txt"}"#),
        answer("One typo: 'teh' on line 1."),
        // build, step 2: done.
        answer("The review found one typo."),
    ])
    .await;
    let ws = Ws::new(&server);
    std::fs::write(ws.path().join("a.txt"), "teh cat\n").unwrap();
    append(&ws, "agents:\n  build:\n    delegate_to: [review]\n");

    let out = ws.run(&["--json", "run", "Get a.txt reviewed"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let requests = chat_bodies(&server).await;
    assert_eq!(requests.len(), 4);
    // The caller is offered delegate and collaborate …
    let caller = offered(&requests[0]);
    assert!(
        caller.contains(&"delegate".to_owned()) && caller.contains(&"collaborate".to_owned()),
        "{caller:?}"
    );
    // … the sub-agent never is, and it answers another agent.
    for sub in &requests[1..3] {
        let tools = offered(sub);
        assert!(
            !tools
                .iter()
                .any(|t| t == "delegate" || t == "collaborate" || t == "improve")
        );
        assert!(tools.contains(&"read_file".to_owned()), "{tools:?}");
        let system = sub["messages"][0]["content"].as_str().unwrap();
        assert!(system.contains("Another agent is asking you"), "{system}");
        assert!(system.contains("code reviewer"), "{system}");
    }
    assert_eq!(
        requests[1]["messages"][1]["content"],
        "Review a.txt for typos"
    );
    // The sub-agent's answer is the tool result the caller sees.
    let messages = requests[3]["messages"].as_array().unwrap();
    let result = messages.last().unwrap();
    assert_eq!(result["role"], "tool");
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("One typo: 'teh' on line 1."),
        "{result}"
    );

    // Its steps are nested in the events …
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let nested: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "subagent" && e["agent"] == "review")
        .collect();
    assert!(
        nested
            .iter()
            .any(|e| e["event"]["type"] == "tool_call" && e["event"]["name"] == "read_file"),
        "{nested:?}"
    );
    assert!(nested.iter().any(|e| e["event"]["type"] == "step"));
    let delegated = events
        .iter()
        .find(|e| e["type"] == "tool_call" && e["name"] == "delegate")
        .unwrap();
    assert_eq!(delegated["success"], true);
    let done = events.last().unwrap();
    assert_eq!(done["final_text"], "The review found one typo.");

    // … and recorded in the caller's session, with the step that delegated.
    let session = done["session"].as_str().unwrap();
    let shown = ws.run(&["--json", "sessions", "show", session]).await;
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let recorded: Vec<&Value> = shown["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "subagent")
        .collect();
    assert!(
        recorded
            .iter()
            .any(|e| e["step"] == 1 && e["data"]["event"]["name"] == "read_file"),
        "{recorded:?}"
    );
    assert!(
        recorded
            .iter()
            .all(|e| e["data"]["event"]["type"] != "text")
    );
}

#[tokio::test]
async fn delegation_cannot_loop_and_needs_a_run() {
    let server = server(vec![answer("unused")]).await;
    let ws = Ws::new(&server);
    append(&ws, "agents:\n  build:\n    delegate_to: [build]\n");
    let out = ws.run(&["run", "Anything"]).await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("cannot delegate to itself"),
        "{}",
        text(&out.stderr)
    );

    let ws = Ws::new(&server);
    append(&ws, "agents:\n  build:\n    delegate_to: [ghost]\n");
    let out = ws.run(&["run", "Anything"]).await;
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stderr).contains("there is no agent `ghost`"));

    // The delegation tools are offered only to agents that list
    // delegate_to, and `toolgate call` has none (they need a run).
    let ws = Ws::new(&server);
    append(&ws, "agents:\n  build:\n    delegate_to: [review]\n");
    let list = |agent: &'static str| {
        let ws = &ws;
        async move {
            text(&ws.run(&["tools", "list", "--agent", agent]).await.stdout)
                .lines()
                .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
                .collect::<Vec<_>>()
        }
    };
    assert!(list("build").await.contains(&"delegate".to_owned()));
    assert!(!list("review").await.contains(&"delegate".to_owned()));
    let call = ws
        .run(&[
            "--mode",
            "yolo",
            "call",
            "delegate",
            r#"{"agent": "review", "task": "x"}"#,
        ])
        .await;
    assert_eq!(call.status.code(), Some(1));
    assert!(
        text(&call.stderr).contains("unknown tool"),
        "{}",
        text(&call.stderr)
    );
}
