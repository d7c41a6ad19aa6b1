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
