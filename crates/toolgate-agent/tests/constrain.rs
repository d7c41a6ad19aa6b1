//! Constrained replies against the scripted model server on 127.0.0.1:
//! the request carries a JSON schema the server would enforce (a valid
//! JSON Schema that the script's replies, and only well-formed calls of
//! offered tools or an answer, match), and the replies decode into calls.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use std::sync::Arc;

use common::{answer, bodies, engine, server, settings, sse};
use serde_json::{Value, json};
use toolgate_agent::{AgentDef, AgentRunner, LlmClient, OpenAiClient, Outcome};

const CALL: &str = r#"{"tool": "read_file", "arguments": {"path": "a.txt"}}"#;
const FINAL: &str = r#"{"final": "a.txt says hello."}"#;

/// A streamed reply of `text` in chunks of 7 characters.
fn streamed(text: &str) -> wiremock::ResponseTemplate {
    let chars: Vec<char> = text.chars().collect();
    let mut events: Vec<Value> = chars
        .chunks(7)
        .map(|c| json!({"choices": [{"index": 0, "delta": {"content": c.iter().collect::<String>()}}]}))
        .collect();
    events.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}));
    sse(&events)
}

#[tokio::test]
async fn constrained_requests_carry_a_schema_and_replies_decode_into_calls() {
    for stream in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
        let replies = if stream {
            vec![streamed(CALL), streamed(FINAL)]
        } else {
            vec![answer(CALL), answer(FINAL)]
        };
        let server = server("/v1/chat/completions", replies).await;
        let mut s = settings(&server, stream);
        s.constrain = true;
        let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(s));
        let shown = Arc::new(std::sync::Mutex::new(String::new()));
        let sink = Arc::clone(&shown);
        let engine = engine(dir.path(), vec![]);
        let agent = AgentDef::builtin("build").unwrap();
        let offered = agent.tool_names(engine.registry());
        let report = AgentRunner::builder(llm, engine, agent)
            .events(Arc::new(move |e: &toolgate_agent::AgentEvent| {
                if let toolgate_agent::AgentEvent::Text { delta } = e {
                    sink.lock().unwrap().push_str(delta);
                }
            }))
            .build()
            .run("What does a.txt say?", Vec::new())
            .await;
        assert_eq!(report.outcome, Outcome::Completed, "{report:?}");
        assert_eq!(report.final_text, "a.txt says hello.");
        // The call's JSON is not shown as text; the answer is.
        assert_eq!(*shown.lock().unwrap(), "a.txt says hello.");
        let ran: Vec<(&str, &str)> = report
            .tool_calls
            .iter()
            .filter(|c| c.decision.executed())
            .map(|c| (c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(ran, [("read_file", r#"{"path":"a.txt"}"#)]);

        let reqs = bodies(&server).await;
        let first = &reqs[0];
        assert!(first.get("tools").is_none(), "{first}");
        let format = &first["response_format"];
        assert_eq!(format["type"], "json_schema");
        assert_eq!(format["json_schema"]["name"], "reply");
        let schema = &format["json_schema"]["schema"];
        assert!(jsonschema::meta::is_valid(schema), "{schema}");
        let validator = jsonschema::validator_for(schema).unwrap();
        // One branch per offered tool, and the answer.
        assert_eq!(schema["anyOf"].as_array().unwrap().len(), offered.len() + 1);
        let valid = [
            CALL,
            FINAL,
            r#"{"tool": "write_file", "arguments": {"path": "b.txt", "content": "x"}}"#,
            r#"{"tool": "list_files", "arguments": {}}"#,
        ];
        for reply in valid {
            let v: Value = serde_json::from_str(reply).unwrap();
            assert!(validator.is_valid(&v), "{reply} should match");
            assert!(
                toolgate_agent::decode_constrained(reply).is_some(),
                "{reply}"
            );
        }
        let invalid = [
            r#"{"tool": "read_file", "arguments": {}}"#,
            r#"{"tool": "read_file", "arguments": {"path": 3}}"#,
            r#"{"tool": "no_such_tool", "arguments": {}}"#,
            r#"{"tool": "read_file", "arguments": {"path": "a"}, "also": 1}"#,
            r#"{"final": 3}"#,
            r#""just text""#,
        ];
        for reply in invalid {
            let v: Value = serde_json::from_str(reply).unwrap();
            assert!(!validator.is_valid(&v), "{reply} should not match");
        }
        // The model is told the format and the tools, once, in the system
        // prompt; the conversation is plain text in that format.
        let system = first["messages"][0]["content"].as_str().unwrap();
        assert!(
            system.contains("Reply with exactly one JSON object"),
            "{system}"
        );
        assert!(system.contains("\n- read_file("), "{system}");
        let second = reqs[1]["messages"].as_array().unwrap();
        assert!(
            second
                .iter()
                .all(|m| m["role"] != "tool" && m.get("tool_calls").is_none())
        );
        let call: Value = serde_json::from_str(second[2]["content"].as_str().unwrap()).unwrap();
        assert_eq!(call, serde_json::from_str::<Value>(CALL).unwrap());
        assert_eq!(second[3]["role"], "user");
        assert!(
            second[3]["content"]
                .as_str()
                .unwrap()
                .starts_with("Result of read_file:\n"),
            "{}",
            second[3]
        );
        // The prefix is the same in both requests.
        assert_eq!(first["messages"][0], second[0]);
    }
}

/// A server that ignores the schema: its text is recovered as before.
#[tokio::test]
async fn text_recovery_stays_the_fallback() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    let text =
        "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}</tool_call>";
    let server = server(
        "/v1/chat/completions",
        vec![answer(text), answer("It says hello.")],
    )
    .await;
    let mut s = settings(&server, false);
    s.constrain = true;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(s));
    let report = AgentRunner::builder(
        llm,
        engine(dir.path(), vec![]),
        AgentDef::builtin("build").unwrap(),
    )
    .build()
    .run("What does a.txt say?", Vec::new())
    .await;
    assert_eq!(report.final_text, "It says hello.");
    assert!(report.tool_calls[0].recovered && report.tool_calls[0].decision.executed());
}

/// The schema a constrained request carries, as a validator.
fn validator(body: &Value) -> jsonschema::Validator {
    let schema = &body["response_format"]["json_schema"]["schema"];
    assert!(jsonschema::meta::is_valid(schema), "{schema}");
    jsonschema::validator_for(schema).unwrap()
}

/// Look before answering, enforced: the small profile reads the first
/// three files a task names before the first step (`look_N` calls); while
/// a file the task names is still unread, a constrained request offers
/// only the calls that do not end the run — no `finish`, no final answer —
/// so a model that would answer from nothing has to look first. Once it
/// has, both are offered again; a task that names nothing, or task checks
/// turned off, hold nothing and read nothing.
#[tokio::test]
async fn a_reply_is_held_to_tool_calls_until_the_named_file_is_read() {
    const READ: &str = r#"{"tool": "read_file", "arguments": {"path": "src/config.py"}}"#;
    const FINISH: &str = r#"{"tool": "finish", "arguments": {"answer": "8472"}}"#;
    // (task, task checks on, whether the first request is held, the files
    // the runtime read first)
    let four = "Which of a.txt, b.txt, c.txt and src/config.py sets a port?";
    let cases: [(&str, bool, bool, &[&str]); 4] = [
        (
            "What port does src/config.py set?",
            true,
            false,
            &["src/config.py"],
        ),
        (four, true, true, &["a.txt", "b.txt", "c.txt"]),
        ("What port does the config set?", true, false, &[]),
        ("What port does src/config.py set?", false, false, &[]),
    ];
    for (task, checks, held, looked) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/config.py"), "PORT = 8472\n").unwrap();
        for f in ["a.txt", "b.txt", "c.txt"] {
            std::fs::write(dir.path().join(f), "nothing here\n").unwrap();
        }
        let server = server("/v1/chat/completions", vec![answer(READ), answer(FINISH)]).await;
        let mut s = settings(&server, false);
        s.constrain = true;
        let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(s));
        let mut agent = AgentDef::builtin("build").unwrap();
        agent.profile = toolgate_agent::Profile::Small;
        agent.task_checks = checks;
        let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), agent)
            .workspace(dir.path())
            .build()
            .run(task, Vec::new())
            .await;
        assert_eq!(report.outcome, Outcome::Completed, "{task}: {report:?}");
        assert_eq!(report.final_text, "8472", "{task}");
        let reqs = bodies(&server).await;
        assert_eq!(reqs.len(), 2, "{task}");
        let read_first: Vec<String> = report
            .tool_calls
            .iter()
            .filter(|c| c.id.starts_with("look_") && c.decision.executed() && c.success)
            .map(|c| serde_json::from_str::<Value>(&c.arguments).unwrap()["path"].to_string())
            .collect();
        let expected: Vec<String> = looked.iter().map(|f| format!("\"{f}\"")).collect();
        assert_eq!(read_first, expected, "{task}");
        // What the runtime read is in the first request, as calls and
        // results.
        let first_text = reqs[0]["messages"].to_string();
        assert_eq!(
            first_text.contains("PORT = 8472"),
            looked.contains(&"src/config.py"),
            "{task}"
        );
        let first = validator(&reqs[0]);
        let answers = [FINISH, FINAL];
        for reply in answers {
            let v: Value = serde_json::from_str(reply).unwrap();
            assert_eq!(first.is_valid(&v), !held, "{task}: {reply}");
        }
        assert!(
            first.is_valid(&serde_json::from_str(READ).unwrap()),
            "{task}"
        );
        // After the read, the run may end.
        let second = validator(&reqs[1]);
        for reply in answers {
            let v: Value = serde_json::from_str(reply).unwrap();
            assert!(second.is_valid(&v), "{task}: {reply}");
        }
        // Holding the reply changes the schema only: the prompt, and with
        // it the server's cached prefix, stays the same.
        assert_eq!(reqs[0]["messages"][0], reqs[1]["messages"][0], "{task}");
    }
}

/// A model that makes the same call again: with constrained replies the
/// step after the repeat may not call that tool at all, so the third
/// identical read cannot be written; the prompt stays the same.
#[tokio::test]
async fn a_tool_whose_call_just_repeated_is_barred_for_the_next_step() {
    const READ: &str = r#"{"tool": "read_file", "arguments": {"path": "a.txt"}}"#;
    const LIST: &str = r#"{"tool": "list_files", "arguments": {}}"#;
    const FINISH: &str = r#"{"tool": "finish", "arguments": {"answer": "hello"}}"#;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    let replies = vec![answer(READ), answer(READ), answer(LIST), answer(FINISH)];
    let server = server("/v1/chat/completions", replies).await;
    let mut s = settings(&server, false);
    s.constrain = true;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(s));
    let mut agent = AgentDef::builtin("build").unwrap();
    agent.profile = toolgate_agent::Profile::Small;
    let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), agent)
        .build()
        .run("Look at the files.", Vec::new())
        .await;
    assert_eq!(report.outcome, Outcome::Completed, "{report:?}");
    assert_eq!(report.final_text, "hello");
    let reqs = bodies(&server).await;
    assert_eq!(reqs.len(), 4);
    let read: Value = serde_json::from_str(READ).unwrap();
    // (request, whether it may read) — the step after the repeat may not;
    // the one after that may again.
    for (n, may_read) in [(0, true), (1, true), (2, false), (3, true)] {
        let schema = validator(&reqs[n]);
        assert_eq!(schema.is_valid(&read), may_read, "request {n}");
        for other in [LIST, FINISH] {
            assert!(
                schema.is_valid(&serde_json::from_str(other).unwrap()),
                "request {n}"
            );
        }
        assert_eq!(
            reqs[n]["messages"][0], reqs[0]["messages"][0],
            "request {n}"
        );
    }
    // The repeated read was told what to do next.
    assert!(
        report.tool_calls[1].output.contains("Do not call it again"),
        "{}",
        report.tool_calls[1].output
    );
}

/// A model that reads again while the change its task asks for is still to
/// make: the step after the repeat offers no read-only tool at all, only
/// the calls that change something; once the change is made, `finish` is
/// offered again.
#[tokio::test]
async fn a_change_task_that_repeats_a_read_is_held_to_changing_calls() {
    const READ: &str = r#"{"tool": "read_file", "arguments": {"path": "a.txt"}}"#;
    const LIST: &str = r#"{"tool": "list_files", "arguments": {}}"#;
    const WRITE: &str =
        r#"{"tool": "write_file", "arguments": {"path": "a.txt", "content": "bye\n"}}"#;
    const FINISH: &str = r#"{"tool": "finish", "arguments": {"answer": "done"}}"#;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    let replies = vec![answer(READ), answer(READ), answer(WRITE), answer(FINISH)];
    let server = server("/v1/chat/completions", replies).await;
    let mut s = settings(&server, false);
    s.constrain = true;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(s));
    let mut agent = AgentDef::builtin("build").unwrap();
    agent.profile = toolgate_agent::Profile::Small;
    let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), agent)
        .workspace(dir.path())
        .build()
        .run("In a.txt, change hello to bye.", Vec::new())
        .await;
    assert_eq!(report.outcome, Outcome::Completed, "{report:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "bye\n"
    );
    let reqs = bodies(&server).await;
    assert_eq!(reqs.len(), 4);
    let held = validator(&reqs[2]);
    for (reply, offered) in [(READ, false), (LIST, false), (WRITE, true)] {
        let v: Value = serde_json::from_str(reply).unwrap();
        assert_eq!(held.is_valid(&v), offered, "{reply}");
    }
    // Changed: the run may end.
    assert!(validator(&reqs[3]).is_valid(&serde_json::from_str(FINISH).unwrap()));
}

/// A constrained reply the server stopped at `max_tokens` is incomplete
/// JSON: neither a call nor the answer. The run does not end on it; the
/// model is told its reply was cut and goes on.
#[tokio::test]
async fn a_reply_stopped_at_its_token_limit_is_cut_not_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    let partial = r#"{"tool": "write_file", "arguments": {"path": "a.txt", "content": "aaaa"#;
    let stopped = wiremock::ResponseTemplate::new(200).set_body_json(json!({
        "id": "x", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "length",
                     "message": {"role": "assistant", "content": partial}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1024, "total_tokens": 1034}}));
    let server = server("/v1/chat/completions", vec![stopped, answer(FINAL)]).await;
    let mut s = settings(&server, false);
    s.constrain = true;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(s));
    let report = AgentRunner::builder(
        llm,
        engine(dir.path(), vec![]),
        AgentDef::builtin("build").unwrap(),
    )
    .build()
    .run("Say what a.txt holds.", Vec::new())
    .await;
    assert_eq!(report.outcome, Outcome::Completed, "{report:?}");
    assert_eq!(report.final_text, "a.txt says hello.");
    let reqs = bodies(&server).await;
    assert_eq!(reqs.len(), 2);
    let last = reqs[1]["messages"].as_array().unwrap().last().unwrap();
    let told = last["content"].as_str().unwrap();
    assert!(told.contains("Your reply was cut off"), "{told}");
    assert!(!dir.path().join("a.txt").exists());
}

/// A repeated call that is no look (a write that fails, twice) bars only
/// its own tool: the model may not have read anything yet, so the reads
/// stay offered.
#[tokio::test]
async fn a_repeated_call_that_is_no_look_bars_only_its_tool() {
    const BAD: &str = r#"{"tool": "write_file", "arguments": {"path": "d", "content": "x"}}"#;
    const READ: &str = r#"{"tool": "read_file", "arguments": {"path": "a.txt"}}"#;
    const WRITE: &str =
        r#"{"tool": "write_file", "arguments": {"path": "a.txt", "content": "bye\n"}}"#;
    const FINISH: &str = r#"{"tool": "finish", "arguments": {"answer": "done"}}"#;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    let replies = vec![
        answer(BAD),
        answer(BAD),
        answer(READ),
        answer(WRITE),
        answer(FINISH),
    ];
    let server = server("/v1/chat/completions", replies).await;
    let mut s = settings(&server, false);
    s.constrain = true;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(s));
    let mut agent = AgentDef::builtin("build").unwrap();
    agent.profile = toolgate_agent::Profile::Small;
    let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), agent)
        .workspace(dir.path())
        .build()
        .run("In a.txt, change hello to bye.", Vec::new())
        .await;
    assert_eq!(report.outcome, Outcome::Completed, "{report:?}");
    let reqs = bodies(&server).await;
    let after_repeat = validator(&reqs[2]);
    assert!(after_repeat.is_valid(&serde_json::from_str(READ).unwrap()));
    assert!(!after_repeat.is_valid(&serde_json::from_str(WRITE).unwrap()));
}
