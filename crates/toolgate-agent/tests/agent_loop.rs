//! The agent loop against a scripted OpenAI-compatible (and Anthropic)
//! server on 127.0.0.1.

#![allow(
    clippy::unwrap_used,
    clippy::format_push_string,
    clippy::unnecessary_literal_bound,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolgate_agent::{
    AgentDef, AgentRunner, AnthropicClient, ApiKey, CallDecision, HttpSettings, LlmClient,
    LoopDecision, OpenAiClient, Outcome,
};
use toolgate_core::{Sensitivity, Tool, ToolAnnotations, ToolContext, ToolResult};
use toolgate_engine::Decision;
use wiremock::ResponseTemplate;

mod common;

use common::{answer, bodies, engine, reads_of_a, server, settings, sse, tool_calls};

fn build() -> AgentDef {
    AgentDef::builtin("build").unwrap()
}

/// `build` for tests that script the same call again and again to fill the
/// context or spend the budget: they are not about repeated calls.
fn scripted_loop() -> AgentDef {
    let mut agent = build();
    agent.max_repeated_calls = u32::MAX;
    agent
}

#[tokio::test]
async fn read_then_edit_then_answer_changes_the_file_and_sends_matching_tool_messages() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "hello world\n").unwrap();
    let server = server(
        "/v1/chat/completions",
        vec![
            tool_calls(&[("call_r", "read_file", r#"{"path":"hello.txt"}"#)]),
            tool_calls(&[(
                "call_e",
                "edit_file",
                r#"{"path":"hello.txt","old_str":"world","new_str":"toolgate"}"#,
            )]),
            answer("Done: greeted toolgate."),
        ],
    )
    .await;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, false)));
    let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), build())
        .build()
        .run("Greet toolgate instead of the world", Vec::new())
        .await;
    assert_eq!(report.outcome, Outcome::Completed, "{report:?}");
    assert_eq!(report.final_text, "Done: greeted toolgate.");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("hello.txt")).unwrap(),
        "hello toolgate\n"
    );
    assert_eq!(report.files_changed, vec!["hello.txt".to_owned()]);
    assert_eq!(report.tokens(), (40, 17));

    let reqs = bodies(&server).await;
    assert_eq!(reqs.len(), 3);
    // Every step offers the tools; the first message is the system prompt.
    assert!(reqs[0]["tools"].as_array().unwrap().len() > 3);
    assert_eq!(reqs[0]["messages"][0]["role"], "system");
    let m = reqs[2]["messages"].as_array().unwrap();
    let roles: Vec<&str> = m.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "tool"]
    );
    assert_eq!(m[2]["tool_calls"][0]["id"], "call_r");
    assert_eq!(m[2]["content"], "", "content is never null on the wire");
    assert_eq!(m[3]["tool_call_id"], "call_r");
    assert!(m[3]["content"].as_str().unwrap().contains("hello world"));
    assert_eq!(m[5]["tool_call_id"], "call_e");
    // The key goes in the header.
    let raw = server.received_requests().await.unwrap();
    assert_eq!(raw[0].headers["authorization"], "Bearer sk-test");
}

/// Where two read-only tools meet: `slow_b` waits for `slow_a` to start,
/// `slow_a` for `slow_b` to finish, so `b` ends first.
#[derive(Default)]
struct Meeting {
    a_started: tokio::sync::Notify,
    b_done: tokio::sync::Notify,
}

/// How long a tool waits for the other before it says it ran alone: far
/// more than two concurrent calls need, so only calls made one after the
/// other reach it.
const MEETING_DEADLINE: Duration = Duration::from_secs(20);

/// A read-only tool that succeeds only when the other one runs at the same
/// time.
struct Slow(&'static str, Arc<Meeting>);

#[async_trait]
impl Tool for Slow {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        "Waits for the other tool."
    }
    fn args_schema(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn sensitivity(&self, _args: &Value) -> Sensitivity {
        Sensitivity::ReadOnly
    }
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::from_sensitivity(Sensitivity::ReadOnly)
    }
    async fn execute(&self, _args: Value, _ctx: &ToolContext) -> ToolResult {
        let meeting = &self.1;
        let met = if self.0 == "slow_a" {
            meeting.a_started.notify_one();
            tokio::time::timeout(MEETING_DEADLINE, meeting.b_done.notified()).await
        } else {
            let met = tokio::time::timeout(MEETING_DEADLINE, meeting.a_started.notified()).await;
            meeting.b_done.notify_one();
            met
        };
        if met.is_err() {
            return ToolResult::failure(format!("{} ran alone", self.0));
        }
        ToolResult::success(format!("{} done", self.0))
    }
}

#[tokio::test]
async fn read_only_calls_of_one_step_run_concurrently_and_answer_in_call_order() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(
        "/v1/chat/completions",
        vec![
            tool_calls(&[("a", "slow_a", "{}"), ("b", "slow_b", "{}")]),
            answer("both done"),
        ],
    )
    .await;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, false)));
    let meeting = Arc::new(Meeting::default());
    let extra: Vec<Arc<dyn Tool>> = vec![
        Arc::new(Slow("slow_a", meeting.clone())),
        Arc::new(Slow("slow_b", meeting)),
    ];
    let runner = AgentRunner::builder(llm, engine(dir.path(), extra), build()).build();
    let report = runner.run("wait twice", Vec::new()).await;
    assert_eq!(report.outcome, Outcome::Completed);
    // Each call ran while the other did (one after the other, the first
    // would have waited in vain), and `b` finished first.
    let outputs: Vec<&str> = report
        .tool_calls
        .iter()
        .map(|c| c.output.as_str())
        .collect();
    assert_eq!(outputs, ["slow_a done", "slow_b done"]);
    let reqs = bodies(&server).await;
    let m = reqs[1]["messages"].as_array().unwrap();
    assert_eq!(m[3]["tool_call_id"], "a");
    assert_eq!(m[3]["content"], "slow_a done");
    assert_eq!(m[4]["tool_call_id"], "b");
}

#[tokio::test]
async fn malformed_arguments_and_unknown_tool_become_tool_errors_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(
        "/v1/chat/completions",
        vec![
            tool_calls(&[
                ("bad", "read_file", r#"{"path": "x"#),
                ("ghost", "teleport", "{}"),
            ]),
            answer("sorry"),
        ],
    )
    .await;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, false)));
    let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), build())
        .build()
        .run("try", Vec::new())
        .await;
    assert_eq!(report.outcome, Outcome::Completed);
    assert_eq!(
        report.tool_calls[0].decision,
        CallDecision::Loop(LoopDecision::MalformedArguments)
    );
    assert_eq!(
        report.tool_calls[1].decision,
        CallDecision::Gate(Decision::NotFound)
    );
    // Reports and sessions spell them as they always have.
    let json = report.to_json();
    assert_eq!(json["tool_calls"][0]["decision"], "malformed_arguments");
    assert_eq!(json["tool_calls"][1]["decision"], "not_found");
    let reqs = bodies(&server).await;
    let m = reqs[1]["messages"].as_array().unwrap();
    assert_eq!(m[3]["tool_call_id"], "bad");
    assert!(m[3]["content"].as_str().unwrap().contains("not valid JSON"));
    assert_eq!(m[4]["tool_call_id"], "ghost");
    assert!(
        m[4]["content"]
            .as_str()
            .unwrap()
            .contains("unknown tool `teleport`")
    );
}

#[tokio::test]
async fn max_steps_ends_with_one_summary_call_without_tools() {
    let (dir, server, llm) = reads_of_a(2, "summary: read a.txt twice").await;
    let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), build())
        .max_steps(2)
        .build()
        .run("loop", Vec::new())
        .await;
    assert_eq!(report.outcome, Outcome::MaxSteps);
    // The log's account first (two reads, nothing changed), then the
    // model's, marked as its own.
    let (log, model) = report
        .final_text
        .split_once("The model's account (not checked against the log):\n")
        .expect(&report.final_text);
    assert!(
        log.starts_with("Stopped: the step budget ran out."),
        "{log}"
    );
    assert!(log.contains("2 made, 2 ran (0 failed)"), "{log}");
    assert!(log.contains("Files changed: none."), "{log}");
    assert_eq!(model, "summary: read a.txt twice");
    let reqs = bodies(&server).await;
    assert_eq!(reqs.len(), 3);
    assert!(reqs[1].get("tools").is_some());
    assert!(
        reqs[2].get("tools").is_none(),
        "the summary call offers no tools"
    );
    let last = reqs[2]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("Do not call tools")
    );
}

#[tokio::test]
async fn a_429_is_retried_then_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(
        "/v1/chat/completions",
        vec![
            ResponseTemplate::new(429).insert_header("retry-after", "0"),
            ResponseTemplate::new(503),
            answer("ok"),
        ],
    )
    .await;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, false)));
    let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), build())
        .build()
        .run("hi", Vec::new())
        .await;
    assert_eq!(report.outcome, Outcome::Completed, "{report:?}");
    assert_eq!(report.final_text, "ok");
    assert_eq!(bodies(&server).await.len(), 3);
}

#[tokio::test]
async fn a_401_is_an_auth_failure_without_retries() {
    let dir = tempfile::tempdir().unwrap();
    let server = server("/v1/chat/completions", vec![ResponseTemplate::new(401)]).await;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, false)));
    let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), build())
        .build()
        .run("hi", Vec::new())
        .await;
    assert_eq!(report.outcome, Outcome::AuthFailed);
    assert!(!report.error.unwrap().contains("sk-test"));
    assert_eq!(bodies(&server).await.len(), 1);
}

#[tokio::test]
async fn streamed_tool_call_deltas_are_reassembled_despite_server_quirks() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.txt"), "streamed content").unwrap();
    // Text before the call, `content: null`, id and name repeated in every
    // delta, arguments split mid-string.
    let d = |v: Value| json!({"choices": [{"index": 0, "delta": v, "finish_reason": null}]});
    let tc = |args: &str| {
        json!({"content": null, "tool_calls": [{"index": 0, "id": "c1", "type": "function",
               "function": {"name": "read_file", "arguments": args}}]})
    };
    let step1 = sse(&[
        d(json!({"role": "assistant", "content": "Let me look. "})),
        d(tc("{\"pa")),
        d(tc("th\": \"s.")),
        d(tc("txt\"}")),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ]);
    // The second answer is cut by `length` in the middle of the arguments.
    let step2 = sse(&[
        d(tc("{\"path\": \"s.t")),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}),
    ]);
    let step3 = sse(&[
        d(json!({"content": "It says "})),
        d(json!({"content": "streamed content."})),
        json!({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}}),
    ]);
    let server = server("/v1/chat/completions", vec![step1, step2, step3]).await;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, true)));
    let streamed = Arc::new(std::sync::Mutex::new(String::new()));
    let s2 = streamed.clone();
    let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), build())
        .events(Arc::new(move |e| {
            if let toolgate_agent::AgentEvent::Text { delta } = e {
                s2.lock().unwrap().push_str(delta);
            }
        }))
        .build()
        .run("read s.txt", Vec::new())
        .await;
    assert_eq!(report.outcome, Outcome::Completed, "{report:?}");
    assert_eq!(report.tool_calls[0].arguments, r#"{"path": "s.txt"}"#);
    assert!(report.tool_calls[0].success);
    assert_eq!(
        report.tool_calls[1].decision,
        CallDecision::Loop(LoopDecision::MalformedArguments)
    );
    assert_eq!(report.final_text, "It says streamed content.");
    assert_eq!(
        *streamed.lock().unwrap(),
        "Let me look. It says streamed content."
    );
    let reqs = bodies(&server).await;
    assert_eq!(reqs[0]["stream"], true);
    let m = reqs[1]["messages"].as_array().unwrap();
    assert_eq!(m[2]["tool_calls"][0]["function"]["name"], "read_file");
    assert_eq!(m[3]["content"], "streamed content");
}

#[tokio::test]
async fn anthropic_wire_format_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("n.txt"), "anthropic").unwrap();
    let step1 = ResponseTemplate::new(200).set_body_json(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "tool_use",
        "content": [{"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "toolu_1", "name": "read_file",
                     "input": {"path": "n.txt"}}],
        "usage": {"input_tokens": 11, "output_tokens": 6}
    }));
    // The final answer streams.
    let events = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 30, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "It says anthropic."}}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ];
    let mut body = String::new();
    for e in &events {
        body.push_str(&format!(
            "event: {}\ndata: {e}\n\n",
            e["type"].as_str().unwrap()
        ));
    }
    let step2 = ResponseTemplate::new(200).set_body_raw(body, "text/event-stream");
    let server = server("/v1/messages", vec![step1, step2]).await;
    let llm: Arc<dyn LlmClient> = Arc::new(AnthropicClient::new(settings(&server, true)));
    let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), build())
        .build()
        .run("read n.txt", Vec::new())
        .await;
    assert_eq!(report.outcome, Outcome::Completed, "{report:?}");
    assert_eq!(report.final_text, "It says anthropic.");
    assert_eq!(report.tokens(), (41, 11));
    let raw = server.received_requests().await.unwrap();
    assert_eq!(raw[0].headers["x-api-key"], "sk-test");
    assert_eq!(raw[0].headers["anthropic-version"], "2023-06-01");
    let reqs = bodies(&server).await;
    assert!(reqs[0]["system"].as_str().unwrap().contains("engineer"));
    assert!(reqs[0]["tools"][0].get("input_schema").is_some());
    assert!(reqs[0]["max_tokens"].as_u64().is_some());
    let m = reqs[1]["messages"].as_array().unwrap();
    assert_eq!(m[1]["content"][1]["type"], "tool_use");
    assert_eq!(m[1]["content"][1]["input"]["path"], "n.txt");
    assert_eq!(m[2]["role"], "user");
    assert_eq!(m[2]["content"][0]["type"], "tool_result");
    assert_eq!(m[2]["content"][0]["tool_use_id"], "toolu_1");
    assert_eq!(m[2]["content"][0]["content"], "anthropic");
}

#[tokio::test]
async fn read_only_agents_see_and_may_call_only_read_only_tools() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(
        "/v1/chat/completions",
        vec![
            tool_calls(&[("w", "write_file", r#"{"path":"x.txt","content":"x"}"#)]),
            answer("ok"),
        ],
    )
    .await;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, false)));
    let report = AgentRunner::builder(
        llm,
        engine(dir.path(), vec![]),
        AgentDef::builtin("plan").unwrap(),
    )
    .build()
    .run("plan", Vec::new())
    .await;
    assert_eq!(
        report.tool_calls[0].decision,
        CallDecision::Loop(LoopDecision::NotAllowed)
    );
    assert_eq!(report.to_json()["tool_calls"][0]["decision"], "not_allowed");
    assert!(!dir.path().join("x.txt").exists());
    let reqs = bodies(&server).await;
    let names: Vec<&str> = reqs[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"read_file"));
    assert!(!names.contains(&"write_file") && !names.contains(&"edit_file"));
}

/// Keeps what a [`RunRecorder`] is given as a store would: the conversation
/// replaced from `messages_from` on, the steps and tool calls appended.
#[derive(Default)]
struct Journal {
    messages: std::sync::Mutex<Vec<toolgate_agent::Message>>,
    steps: std::sync::Mutex<Vec<(u32, usize, usize)>>,
    calls: std::sync::Mutex<Vec<String>>,
}

#[async_trait]
impl toolgate_agent::RunRecorder for Journal {
    async fn step(
        &self,
        s: &toolgate_agent::StepSnapshot<'_>,
    ) -> Result<(), toolgate_agent::RecordError> {
        let mut messages = self.messages.lock().unwrap();
        assert!(
            s.messages_from <= messages.len(),
            "no holes in the conversation"
        );
        messages.truncate(s.messages_from);
        messages.extend(s.messages.iter().cloned());
        self.steps
            .lock()
            .unwrap()
            .push((s.step, s.messages_from, s.messages.len()));
        self.calls
            .lock()
            .unwrap()
            .extend(s.tool_calls.iter().map(|c| c.name.clone()));
        Ok(())
    }

    async fn finish(
        &self,
        _report: &toolgate_agent::RunReport,
    ) -> Result<(), toolgate_agent::RecordError> {
        Ok(())
    }
}

#[tokio::test]
async fn a_run_is_recorded_step_by_step_and_resumed_from_the_record() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let server = server(
        "/v1/chat/completions",
        vec![
            tool_calls(&[("c1", "read_file", r#"{"path":"a.txt"}"#)]),
            answer("first"),
            answer("second"),
        ],
    )
    .await;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, false)));
    let eng = engine(dir.path(), vec![]);
    let journal = Arc::new(Journal::default());
    let r1 = AgentRunner::builder(llm.clone(), eng.clone(), build())
        .recorder(journal.clone())
        .build()
        .run("one", Vec::new())
        .await;
    // The task before the first model call, the tool step, the answer
    // (under its own step, 2: the store counts the steps the report does).
    assert_eq!(r1.steps, 2);
    assert_eq!(
        *journal.steps.lock().unwrap(),
        [(0, 0, 2), (1, 2, 2), (2, 4, 1)]
    );
    assert_eq!(*journal.calls.lock().unwrap(), ["read_file"]);
    assert_eq!(*journal.messages.lock().unwrap(), r1.messages);

    // Resumed from the record: only the new messages are recorded.
    let history = journal.messages.lock().unwrap().clone();
    let journal2 = Arc::new(Journal::default());
    *journal2.messages.lock().unwrap() = history.clone();
    let r2 = AgentRunner::builder(llm, eng, build())
        .recorder(journal2.clone())
        .build()
        .run("two", history)
        .await;
    assert_eq!(journal2.steps.lock().unwrap()[0], (0, 5, 1));
    assert_eq!(*journal2.messages.lock().unwrap(), r2.messages);
    let reqs = bodies(&server).await;
    let m = reqs[2]["messages"].as_array().unwrap();
    assert_eq!(m.len(), 6, "resumed with the recorded conversation: {m:?}");
    assert_eq!(m[4]["content"], "first");
}

/// A store that refuses every write, for a reason with a cause.
struct Refusing;

#[derive(Debug)]
struct Locked(std::io::Error);

impl std::fmt::Display for Locked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the session store is locked")
    }
}

impl std::error::Error for Locked {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

fn locked() -> toolgate_agent::RecordError {
    toolgate_agent::RecordError::store(Locked(std::io::Error::other("database is busy")))
}

#[async_trait]
impl toolgate_agent::RunRecorder for Refusing {
    async fn step(
        &self,
        _s: &toolgate_agent::StepSnapshot<'_>,
    ) -> Result<(), toolgate_agent::RecordError> {
        Err(locked())
    }

    async fn finish(
        &self,
        _report: &toolgate_agent::RunReport,
    ) -> Result<(), toolgate_agent::RecordError> {
        Err(locked())
    }
}

#[tokio::test]
async fn a_recorder_error_is_one_warning_with_its_causes_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let server = server(
        "/v1/chat/completions",
        vec![
            tool_calls(&[("c1", "read_file", r#"{"path":"a.txt"}"#)]),
            answer("done"),
        ],
    )
    .await;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, false)));
    let warnings = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = warnings.clone();
    let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), build())
        .recorder(Arc::new(Refusing))
        .events(Arc::new(move |e: &toolgate_agent::AgentEvent| {
            if let toolgate_agent::AgentEvent::Warning { message } = e {
                seen.lock().unwrap().push(message.clone());
            }
        }))
        .build()
        .run("read a", Vec::new())
        .await;
    assert_eq!(report.outcome, Outcome::Completed);
    assert_eq!(report.final_text, "done");
    // Three snapshots failed, but the person is told once, and once more
    // about the outcome.
    assert_eq!(
        *warnings.lock().unwrap(),
        [
            "the session was not recorded: the session store is locked: database is busy",
            "the session's outcome was not recorded: the session store is locked: database is busy",
        ]
    );
}

#[derive(Default)]
struct Recorder {
    events: std::sync::Mutex<Vec<String>>,
    block_llm: bool,
}

#[async_trait]
impl toolgate_agent::LifecycleHooks for Recorder {
    async fn emit(
        &self,
        event: toolgate_agent::LifecycleEvent,
        _payload: Value,
    ) -> toolgate_agent::HookVerdict {
        self.events.lock().unwrap().push(event.as_str().to_owned());
        toolgate_agent::HookVerdict {
            block: (self.block_llm && event == toolgate_agent::LifecycleEvent::PreLlmCall)
                .then(|| "no budget".to_owned()),
            additional_context: None,
        }
    }
}

/// Fails (required) the first time, passes after.
struct FlakyGate(AtomicUsize);

#[async_trait]
impl toolgate_agent::QualityGates for FlakyGate {
    async fn run(&self) -> Vec<toolgate_agent::GateReport> {
        let n = self.0.fetch_add(1, Ordering::SeqCst);
        vec![toolgate_agent::GateReport {
            name: "tests".into(),
            passed: n > 0,
            required: true,
            output: "1 test failed: it_works".into(),
        }]
    }
}

#[tokio::test]
async fn a_failing_required_gate_is_fed_back_and_lifecycle_events_are_emitted() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(
        "/v1/chat/completions",
        vec![answer("done?"), answer("done, tests pass")],
    )
    .await;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, false)));
    let hooks = Arc::new(Recorder::default());
    let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), build())
        .hooks(hooks.clone())
        .gates(Arc::new(FlakyGate(AtomicUsize::new(0))))
        .build()
        .run("fix it", Vec::new())
        .await;
    assert_eq!(report.outcome, Outcome::Completed);
    assert_eq!(report.final_text, "done, tests pass");
    let reqs = bodies(&server).await;
    assert_eq!(reqs.len(), 2);
    let last = reqs[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "user");
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("1 test failed: it_works")
    );
    let events = hooks.events.lock().unwrap().clone();
    assert_eq!(
        events,
        [
            "session_start",
            "agent_start",
            "pre_llm_call",
            "post_llm_call",
            "pre_llm_call",
            "post_llm_call",
            "agent_stop",
            "session_end"
        ]
    );
}

#[tokio::test]
async fn a_blocking_pre_llm_call_hook_fails_the_run_without_calling_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let server = server("/v1/chat/completions", vec![answer("never")]).await;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, false)));
    let hooks = Arc::new(Recorder {
        block_llm: true,
        ..Recorder::default()
    });
    let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), build())
        .hooks(hooks)
        .build()
        .run("x", Vec::new())
        .await;
    assert_eq!(report.outcome, Outcome::Failed);
    assert!(report.error.unwrap().contains("no budget"));
    assert!(bodies(&server).await.is_empty());
}

#[tokio::test]
async fn old_tool_outputs_are_elided_past_the_context_threshold() {
    let dir = tempfile::tempdir().unwrap();
    // Six different files: identical calls of one reply would run once.
    let calls: Vec<(String, &str, String)> = (0..6)
        .map(|i| {
            std::fs::write(dir.path().join(format!("big{i}.txt")), "x".repeat(3000)).unwrap();
            (
                format!("c{i}"),
                "read_file",
                format!(r#"{{"path":"big{i}.txt"}}"#),
            )
        })
        .collect();
    let calls: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|(a, b, c)| (a.as_str(), *b, c.as_str()))
        .collect();
    let server = server(
        "/v1/chat/completions",
        vec![tool_calls(&calls), answer("read")],
    )
    .await;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, false)));
    let hooks = Arc::new(Recorder::default());
    let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), scripted_loop())
        .hooks(hooks.clone())
        .context_threshold_chars(5000)
        .build()
        .run("read big.txt", Vec::new())
        .await;
    assert_eq!(report.outcome, Outcome::Completed);
    assert!(
        hooks
            .events
            .lock()
            .unwrap()
            .contains(&"context_compress".to_owned())
    );
    let reqs = bodies(&server).await;
    let m = reqs[1]["messages"].as_array().unwrap();
    assert!(m[3]["content"].as_str().unwrap().contains("elided"));
    assert!(m[4]["content"].as_str().unwrap().contains("elided"));
    assert_eq!(
        m[5]["content"].as_str().unwrap().len(),
        3000,
        "the last four stay whole"
    );
}

#[tokio::test]
async fn an_unreachable_server_is_retried_then_reported_with_its_url() {
    let dir = tempfile::tempdir().unwrap();
    // A port nobody listens on: bind, read the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut s = HttpSettings::new(
        format!("http://127.0.0.1:{port}/v1"),
        "m",
        ApiKey::default(),
    );
    s.backoff = Duration::from_millis(5);
    s.max_retries = 2;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(s));
    let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), build())
        .build()
        .run("hi", Vec::new())
        .await;
    assert_eq!(report.outcome, Outcome::Failed);
    let err = report.error.unwrap();
    assert!(
        err.contains(&format!(
            "cannot reach the model server at http://127.0.0.1:{port}"
        )),
        "{err}"
    );
}

#[tokio::test]
async fn a_spent_cost_budget_warns_at_80_percent_then_ends_with_a_summary() {
    // Each tool-call answer costs (10 in + 5 out) tokens at $1M/$2M per
    // million: 10 + 10 = $20. Budget $50: warned after the second call
    // ($40 >= $40), stopped before the fourth ($60 >= $50).
    let (dir, server, llm) = reads_of_a(3, "summary: out of budget").await;
    let hooks = Arc::new(Recorder::default());
    let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), scripted_loop())
        .prices(1_000_000.0, 2_000_000.0)
        .budget_usd(50.0)
        .hooks(hooks.clone())
        .build()
        .run("spend", Vec::new())
        .await;
    assert_eq!(report.outcome, Outcome::Budget);
    assert!(
        report
            .final_text
            .starts_with("Stopped: the cost budget ran out."),
        "{}",
        report.final_text
    );
    assert!(
        report
            .final_text
            .ends_with("(not checked against the log):\nsummary: out of budget"),
        "{}",
        report.final_text
    );
    let reqs = bodies(&server).await;
    assert_eq!(reqs.len(), 4, "three steps, then the summary");
    assert!(
        reqs[3].get("tools").is_none(),
        "the summary offers no tools"
    );
    let events = hooks.events.lock().unwrap().clone();
    let warnings: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| *e == "budget_warning")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(warnings.len(), 1, "{events:?}");
    // After the second model call, before the third.
    let post_calls: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| *e == "post_llm_call")
        .map(|(i, _)| i)
        .collect();
    assert!(
        post_calls[1] < warnings[0] && warnings[0] < post_calls[2],
        "{events:?}"
    );
}

#[tokio::test]
async fn completed_old_steps_are_summarised_by_the_model_past_the_context_threshold() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.txt"), "x".repeat(3000)).unwrap();
    let server = server(
        "/v1/chat/completions",
        vec![
            tool_calls(&[("c1", "read_file", r#"{"path":"big.txt"}"#)]),
            tool_calls(&[("c2", "read_file", r#"{"path":"big.txt"}"#)]),
            answer("SUMMARY: step 1 read big.txt (3000 x)."),
            answer("done"),
        ],
    )
    .await;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, false)));
    let hooks = Arc::new(Recorder::default());
    let texts = Arc::new(std::sync::Mutex::new(String::new()));
    let sink_texts = texts.clone();
    let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), scripted_loop())
        .hooks(hooks.clone())
        .context_threshold_chars(5000)
        .events(Arc::new(move |e: &toolgate_agent::AgentEvent| {
            if let toolgate_agent::AgentEvent::Text { delta } = e {
                sink_texts.lock().unwrap().push_str(delta);
            }
        }))
        .build()
        .run("read big.txt twice", Vec::new())
        .await;
    assert_eq!(report.outcome, Outcome::Completed);
    assert_eq!(report.final_text, "done");
    let reqs = bodies(&server).await;
    assert_eq!(reqs.len(), 4);
    // The third request is the summary: no tools, the old step's transcript.
    assert!(reqs[2].get("tools").is_none());
    let asked = reqs[2]["messages"][1]["content"].as_str().unwrap();
    assert!(asked.contains("[tool call] read_file"), "{asked}");
    // The fourth carries the summary in place of step 1, and step 2 whole.
    let m = reqs[3]["messages"].as_array().unwrap();
    let contents: Vec<&str> = m
        .iter()
        .map(|m| m["content"].as_str().unwrap_or(""))
        .collect();
    assert!(
        contents
            .iter()
            .any(|c| c.contains("SUMMARY: step 1 read big.txt")),
        "{contents:?}"
    );
    let tool_results: Vec<&Value> = m.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(tool_results.len(), 1, "only step 2's result is left");
    assert_eq!(tool_results[0]["tool_call_id"], "c2");
    // Whole (the same read twice in a row is pointed out before it).
    let kept = tool_results[0]["content"].as_str().unwrap();
    assert!(kept.ends_with(&"x".repeat(3000)), "{kept}");
    assert!(
        kept.starts_with("[You already called `read_file`"),
        "{kept}"
    );
    assert!(
        hooks
            .events
            .lock()
            .unwrap()
            .contains(&"context_compress".to_owned())
    );
    // The summary is not shown as the model's answer; the answer is.
    let shown = texts.lock().unwrap().clone();
    assert!(
        shown.contains("done") && !shown.contains("SUMMARY"),
        "{shown}"
    );
    assert_eq!(report.step_usage.len(), 4, "the summary call is counted");
}
