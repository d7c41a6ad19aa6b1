//! Tool calls a model writes as text, against the scripted server: each
//! format small models use is run through the gate and sent back in proper
//! tool-call form; a tool not offered gets a tool error listing the offered
//! ones; prose and malformed JSON are not run; repeated calls are told and
//! end the run.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use std::sync::Arc;

use common::{answer, bodies, engine, server, settings};
use serde_json::Value;
use toolgate_agent::{AgentDef, AgentRunner, LlmClient, OpenAiClient, Outcome, RunReport};

fn build() -> AgentDef {
    AgentDef::builtin("build").unwrap()
}

/// (reply text, recovered calls as (tool, decision), final answer expected)
#[tokio::test]
async fn text_tool_calls_case_table() {
    let read = r#"{"path": "a.txt"}"#;
    let cases: Vec<(String, Vec<(&str, &str)>)> = vec![
        (
            format!(r#"{{"name": "read_file", "arguments": {read}}}"#),
            vec![("read_file", "executed")],
        ),
        (
            format!("```json\n{{\"name\": \"read_file\", \"arguments\": {read}}}\n```"),
            vec![("read_file", "executed")],
        ),
        (
            format!(
                "<tools>\n{{\"type\": \"function\", \"function\": {{\"name\": \"read_file\", \"arguments\": {read}}}}}\n</tools>"
            ),
            vec![("read_file", "executed")],
        ),
        (
            format!(
                "<tool_call>\n{{\"name\": \"read_file\", \"arguments\": {read}}}\n</tool_call>"
            ),
            vec![("read_file", "executed")],
        ),
        (
            format!("<|python_tag|>{{\"name\": \"read_file\", \"parameters\": {read}}}"),
            vec![("read_file", "executed")],
        ),
        (
            format!("[TOOL_CALLS] [{{\"name\": \"read_file\", \"arguments\": {read}}}]"),
            vec![("read_file", "executed")],
        ),
        // Several calls in one reply, in order.
        (
            format!(
                "<tool_call>{{\"name\": \"read_file\", \"arguments\": {read}}}</tool_call>\n<tool_call>{{\"name\": \"list_files\", \"arguments\": {{}}}}</tool_call>"
            ),
            vec![("read_file", "executed"), ("list_files", "executed")],
        ),
        // A tool that was not offered.
        (
            r#"{"name": "package.json", "arguments": {}}"#.to_owned(),
            vec![("package.json", "not_found")],
        ),
        // Malformed JSON inside a marker: the model is told.
        (
            r#"<tool_call>{"name": "read_file", "arguments": {"path": }</tool_call>"#.to_owned(),
            vec![("unreadable_tool_call", "malformed_tool_call")],
        ),
        // Prose that mentions tools, and bare malformed JSON: an answer.
        (
            "I read a.txt with read_file; it says hello.".to_owned(),
            vec![],
        ),
        (
            r#"{"name": "read_file", "arguments": {"path": }"#.to_owned(),
            vec![],
        ),
    ];
    for (reply, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
        let server = server(
            "/v1/chat/completions",
            vec![answer(&reply), answer("Done.")],
        )
        .await;
        let report = run_build(&server, dir.path(), "Read a.txt").await;
        assert_eq!(report.outcome, Outcome::Completed, "{reply}");
        let calls: Vec<(&str, &str)> = report
            .tool_calls
            .iter()
            .map(|c| (c.name.as_str(), c.decision.as_str()))
            .collect();
        assert_eq!(calls, expected, "{reply}");
        assert!(report.tool_calls.iter().all(|c| c.recovered), "{reply}");
        let reqs = bodies(&server).await;
        if expected.is_empty() {
            assert_eq!(reqs.len(), 1, "{reply}: the text is the answer");
            assert_eq!(report.final_text, reply);
            continue;
        }
        let messages = reqs[1]["messages"].as_array().unwrap();
        if expected[0].1 == "malformed_tool_call" {
            // Not sent back as a call: the reply as written, then the
            // error as the user's message.
            let assistant = &messages[2];
            assert_eq!(assistant["role"], "assistant", "{reply}");
            assert!(
                assistant["tool_calls"].as_array().is_none_or(Vec::is_empty),
                "{assistant}"
            );
            assert_eq!(assistant["content"], reply.as_str());
            let last = messages.last().unwrap();
            assert_eq!(last["role"], "user", "{reply}");
            assert!(
                last["content"]
                    .as_str()
                    .unwrap()
                    .contains("could not be read"),
                "{last}"
            );
            assert!(!reqs[1].to_string().contains("unreadable_tool_call"));
            continue;
        }
        // Sent back in proper tool-call form.
        let assistant = &messages[2];
        assert_eq!(assistant["role"], "assistant", "{reply}");
        let sent: Vec<&str> = assistant["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["function"]["name"].as_str().unwrap())
            .collect();
        let names: Vec<&str> = expected.iter().map(|(n, _)| *n).collect();
        assert_eq!(sent, names, "{reply}");
        let results: Vec<&Value> = messages.iter().filter(|m| m["role"] == "tool").collect();
        assert_eq!(results.len(), expected.len(), "{reply}");
        match expected[0].1 {
            "executed" => assert!(results[0]["content"].as_str().unwrap().contains("hello")),
            "not_found" => assert!(
                results[0]["content"]
                    .as_str()
                    .unwrap()
                    .contains("available tools: ")
                    && results[0]["content"]
                        .as_str()
                        .unwrap()
                        .contains("read_file"),
                "{results:?}"
            ),
            // Unreadable calls are checked above and never sent back.
            other => panic!("unexpected decision {other} for {reply}"),
        }
    }
}

#[tokio::test]
async fn text_calls_are_left_alone_when_switched_off() {
    let dir = tempfile::tempdir().unwrap();
    let reply = r#"{"name": "read_file", "arguments": {"path": "a.txt"}}"#;
    let server = server("/v1/chat/completions", vec![answer(reply)]).await;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, false)));
    let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), build())
        .recover_text_calls(false)
        .build()
        .run("Read a.txt", Vec::new())
        .await;
    assert!(report.tool_calls.is_empty());
    assert_eq!(report.final_text, reply);
}

#[tokio::test]
async fn a_repeated_call_is_pointed_out_and_ends_the_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    // The same call, spelled with other spacing, again and again.
    let server = server(
        "/v1/chat/completions",
        vec![
            answer(r#"{"name": "read_file", "arguments": {"path": "a.txt"}}"#),
            answer(r#"{"name":"read_file","arguments":{"path":"a.txt"}}"#),
            answer(r#"{"name": "read_file", "arguments": {"path" : "a.txt"}}"#),
            answer("Summary: I kept reading a.txt."),
        ],
    )
    .await;
    let report = run_build(&server, dir.path(), "Read a.txt").await;
    assert_eq!(report.outcome, Outcome::Repeating);
    assert_eq!(report.tool_calls.len(), 3);
    assert!(!report.tool_calls[0].output.contains("You already called"));
    assert!(
        report.tool_calls[1]
            .output
            .contains("You already called `read_file`")
    );
    assert!(report.tool_calls[2].output.contains("2 times in a row"));
    // A guard stopped the run: the summary is the log's, the model is not
    // asked for one.
    let reqs = bodies(&server).await;
    assert_eq!(reqs.len(), 3);
    assert!(
        report
            .final_text
            .starts_with("Stopped: the model made the same call with the same arguments 3 steps"),
        "{}",
        report.final_text
    );
    assert!(report.final_text.contains("not written by the model"));
    assert!(report.final_text.contains("3 made, 3 ran (0 failed)"));
    assert!(!report.final_text.contains("Summary: I kept reading"));
}

#[tokio::test]
async fn an_empty_reply_is_nudged_once_then_taken_as_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(
        "/v1/chat/completions",
        vec![answer(""), answer("The answer is 42."), answer("unused")],
    )
    .await;
    let report = run_build(&server, dir.path(), "What is the answer?").await;
    assert_eq!(report.outcome, Outcome::Completed);
    assert_eq!(report.final_text, "The answer is 42.");
    let reqs = bodies(&server).await;
    assert_eq!(reqs.len(), 2, "one nudge, then the answer");
    let last = reqs[1]["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"], toolgate_agent::EMPTY_REPLY_NUDGE);

    // A second empty reply in the same run is not nudged again: the run ends.
    let server = common::server(
        "/v1/chat/completions",
        vec![answer(" \n"), answer(""), answer("unused")],
    )
    .await;
    let report = run_build(&server, dir.path(), "What is the answer?").await;
    assert_eq!(report.outcome, Outcome::Completed);
    assert_eq!(report.final_text, "");
    assert_eq!(bodies(&server).await.len(), 2);
}

/// `task` run by the build agent in `dir` against the scripted `server`.
async fn run_build(server: &wiremock::MockServer, dir: &std::path::Path, task: &str) -> RunReport {
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(server, false)));
    AgentRunner::builder(llm, engine(dir, vec![]), build())
        .build()
        .run(task, Vec::new())
        .await
}
