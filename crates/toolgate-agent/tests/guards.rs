//! The loop's guards against the scripted model server on 127.0.0.1, with
//! real files: one reply's calls deduplicated and capped, a reply that
//! repeats itself or runs past its token cap cut off and the model told,
//! and a repeated call that changes something not run again.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use std::fmt::Write as _;
use std::sync::Arc;

use common::{Shell, answer, bodies, engine, server, settings, sse, tool_calls};
use serde_json::{Value, json};
use toolgate_agent::{
    AgentDef, AgentRunner, ContextBudget, LlmClient, OpenAiClient, Outcome, RunReport,
};
use wiremock::{MockServer, ResponseTemplate};

const READ: &str = r#"{"path": "a.txt"}"#;
const SEARCH: &str = r#"{"pattern": "hello"}"#;

/// `task` run by the build agent in `dir` against `server`.
async fn run(
    server: &MockServer,
    dir: &std::path::Path,
    stream: bool,
    context: Option<ContextBudget>,
) -> RunReport {
    run_seen(server, dir, stream, context).await.0
}

/// [`run`], and the events it emitted, as their JSON.
async fn run_seen(
    server: &MockServer,
    dir: &std::path::Path,
    stream: bool,
    context: Option<ContextBudget>,
) -> (RunReport, Vec<Value>) {
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(server, stream)));
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let mut builder = AgentRunner::builder(
        llm,
        engine(dir, vec![]),
        AgentDef::builtin("build").unwrap(),
    )
    .events(Arc::new(move |e: &toolgate_agent::AgentEvent| {
        sink.lock().unwrap().push(serde_json::to_value(e).unwrap());
    }));
    if let Some(c) = context {
        builder = builder.context(c);
    }
    let report = builder.build().run("Look at a.txt", Vec::new()).await;
    let seen = seen.lock().unwrap().clone();
    (report, seen)
}

/// A streamed reply of text, in chunks of `chunk` characters.
fn streamed_text(text: &str, chunk: usize) -> ResponseTemplate {
    let chars: Vec<char> = text.chars().collect();
    let mut events: Vec<Value> = chars
        .chunks(chunk)
        .map(|c| {
            let t: String = c.iter().collect();
            json!({"choices": [{"index": 0, "delta": {"content": t}}]})
        })
        .collect();
    events.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}));
    sse(&events)
}

/// A streamed reply of tool calls, one event each.
fn streamed_calls(calls: &[(&str, &str)]) -> ResponseTemplate {
    let mut events: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| {
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i,
                "id": format!("c{i}"), "type": "function",
                "function": {"name": name, "arguments": args}}]}}]})
        })
        .collect();
    events.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}));
    sse(&events)
}

struct Case {
    name: &'static str,
    reply: ResponseTemplate,
    stream: bool,
    context: Option<ContextBudget>,
    /// The calls run, as (tool, decision), then the others' decisions
    /// with how many.
    executed: Vec<&'static str>,
    not_run: Vec<(&'static str, usize)>,
    /// What the next request tells the model (empty: nothing).
    told: &'static str,
}

#[tokio::test]
async fn one_reply_guards_case_table() {
    let runaway_pairs: Vec<(&str, &str, &str)> = (0..160)
        .map(|i| {
            if i % 2 == 0 {
                ("x", "read_file", READ)
            } else {
                ("x", "search_code", SEARCH)
            }
        })
        .collect();
    let ids: Vec<String> = (0..160).map(|i| format!("c{i}")).collect();
    let runaway: Vec<(&str, &str, &str)> = runaway_pairs
        .iter()
        .zip(&ids)
        .map(|((_, n, a), id)| (id.as_str(), *n, *a))
        .collect();
    // 80 read_file then 80 search_code, on one line: nothing repeats line
    // by line, so the reply is read whole and deduplicated.
    let one_line: Vec<String> = (0..160)
        .map(|i| {
            if i < 80 {
                format!(r#"{{"name": "read_file", "arguments": {READ}}}"#)
            } else {
                format!(r#"{{"name": "search_code", "arguments": {SEARCH}}}"#)
            }
        })
        .collect();
    let one_line = format!("[TOOL_CALLS] [{}]", one_line.join(", "));
    // The same two calls written as text, one per line, 80 times each.
    let lines = format!(
        "<tool_call>{{\"name\": \"read_file\", \"arguments\": {READ}}}</tool_call>\n\
         <tool_call>{{\"name\": \"search_code\", \"arguments\": {SEARCH}}}</tool_call>\n"
    )
    .repeat(80);
    let distinct: Vec<String> = (0..12)
        .map(|i| format!(r#"{{"pattern": "word{i}"}}"#))
        .collect();
    let distinct_ids: Vec<String> = (0..12).map(|i| format!("d{i}")).collect();
    let twelve: Vec<(&str, &str, &str)> = distinct
        .iter()
        .zip(&distinct_ids)
        .map(|(a, id)| (id.as_str(), "search_code", a.as_str()))
        .collect();
    let prose = (0..300).fold(String::new(), |mut s, i| {
        let _ = write!(s, "Sentence {i} of an answer that goes on. ");
        s
    });
    let cases = vec![
        Case {
            name: "160 structured calls, 80 x 2 the same",
            reply: tool_calls(&runaway),
            stream: false,
            context: None,
            executed: vec!["read_file", "search_code"],
            not_run: vec![("duplicate_call", 158)],
            told: "each call ran once",
        },
        Case {
            name: "160 calls recovered from one line of text",
            reply: answer(&one_line),
            stream: false,
            context: None,
            executed: vec!["read_file", "search_code"],
            not_run: vec![("duplicate_call", 158)],
            told: "`read_file` x79, `search_code` x79",
        },
        Case {
            name: "160 calls written line by line: cut after the first copy",
            reply: answer(&lines),
            stream: false,
            context: None,
            executed: vec!["read_file", "search_code"],
            not_run: vec![],
            told: "cut off because it repeated the same 2-line block",
        },
        Case {
            name: "the same, streamed",
            reply: streamed_text(&lines, 37),
            stream: true,
            context: None,
            executed: vec!["read_file", "search_code"],
            not_run: vec![],
            told: "cut off because it repeated the same 2-line block",
        },
        Case {
            name: "one call streamed again and again",
            reply: streamed_calls(&[("read_file", READ); 40]),
            stream: true,
            context: None,
            executed: vec!["read_file"],
            not_run: vec![("duplicate_call", 3)],
            told: "made the same call `read_file` 4 times",
        },
        Case {
            name: "12 distinct calls: 8 run",
            reply: tool_calls(&twelve),
            stream: false,
            context: None,
            executed: vec!["search_code"; 8],
            not_run: vec![("over_call_limit", 4)],
            told: "At most 8 calls of one reply run",
        },
        Case {
            name: "a streamed answer past its cap of 100 tokens",
            reply: streamed_text(&prose, 20),
            stream: true,
            context: Some(ContextBudget::new(8192, 100)),
            executed: vec![],
            not_run: vec![],
            told: "passed the cap of 100 tokens",
        },
        Case {
            name: "two different calls: both run, nothing said",
            reply: tool_calls(&[("a", "read_file", READ), ("b", "search_code", SEARCH)]),
            stream: false,
            context: None,
            executed: vec!["read_file", "search_code"],
            not_run: vec![],
            told: "",
        },
    ];
    for case in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
        let server = server(
            "/v1/chat/completions",
            vec![case.reply, answer("a.txt says hello.")],
        )
        .await;
        let (report, events) = run_seen(&server, dir.path(), case.stream, case.context).await;
        let name = case.name;
        // A cut is in the step's record, with why.
        let cuts: Vec<&Value> = events.iter().filter(|e| e["type"] == "reply_cut").collect();
        if case.told.contains("cut off")
            || case.told.contains("cap of")
            || case.told.contains("4 times")
        {
            assert_eq!(cuts.len(), 1, "{name}: {events:?}");
            assert_eq!(cuts[0]["step"], 1, "{name}");
            assert!(!cuts[0]["reason"].as_str().unwrap().is_empty(), "{name}");
        } else {
            assert!(cuts.is_empty(), "{name}: {cuts:?}");
        }
        // What did not run is in the events too, with its decision.
        let not_run_events = events
            .iter()
            .filter(|e| e["type"] == "tool_call" && e["decision"] != "executed")
            .count();
        assert_eq!(
            not_run_events,
            case.not_run.iter().map(|(_, n)| n).sum::<usize>(),
            "{name}"
        );
        assert_eq!(report.outcome, Outcome::Completed, "{name}");
        assert_eq!(report.final_text, "a.txt says hello.", "{name}");
        let executed: Vec<&str> = report
            .tool_calls
            .iter()
            .filter(|c| c.decision.executed())
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(executed, case.executed, "{name}");
        let mut not_run: Vec<(&str, usize)> = Vec::new();
        for c in report.tool_calls.iter().filter(|c| !c.decision.executed()) {
            match not_run.iter_mut().find(|(d, _)| *d == c.decision.as_str()) {
                Some((_, n)) => *n += 1,
                None => not_run.push((c.decision.as_str(), 1)),
            }
        }
        assert_eq!(not_run, case.not_run, "{name}");
        let reqs = bodies(&server).await;
        assert_eq!(reqs.len(), 2, "{name}");
        // The second request carries only the calls that ran, each with
        // its result, then what the model is told.
        let messages = reqs[1]["messages"].as_array().unwrap();
        let sent: usize = messages
            .iter()
            .filter_map(|m| m["tool_calls"].as_array())
            .map(Vec::len)
            .sum();
        let results = messages.iter().filter(|m| m["role"] == "tool").count();
        assert_eq!(sent, case.executed.len(), "{name}");
        assert_eq!(results, case.executed.len(), "{name}");
        let last = messages.last().unwrap();
        if case.told.is_empty() {
            assert_eq!(last["role"], "tool", "{name}");
        } else {
            assert_eq!(last["role"], "user", "{name}");
            let text = last["content"].as_str().unwrap();
            assert!(text.contains(case.told), "{name}: {text}");
        }
        // The reply as kept holds no repeated copies.
        let assistant = messages.iter().find(|m| m["role"] == "assistant").unwrap();
        assert!(
            assistant["content"].as_str().unwrap_or("").len() < 2_000,
            "{name}: {assistant}"
        );
        if let Some(c) = case.context {
            assert_eq!(reqs[0]["max_tokens"], c.output_tokens(), "{name}");
        }
    }
}

/// A tool that is not read-only, whose `peek` calls declare no effect
/// (as `process` polling does): each call counts.
struct Peek(std::sync::atomic::AtomicUsize);

#[async_trait::async_trait]
impl toolgate_core::Tool for Peek {
    fn name(&self) -> &'static str {
        "peek"
    }
    fn description(&self) -> &'static str {
        "Polls."
    }
    fn args_schema(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn sensitivity(&self, _args: &Value) -> toolgate_core::Sensitivity {
        toolgate_core::Sensitivity::ReadOnly
    }
    fn annotations(&self) -> toolgate_core::ToolAnnotations {
        toolgate_core::ToolAnnotations::from_sensitivity(toolgate_core::Sensitivity::Sensitive)
    }
    fn effects(
        &self,
        _args: &Value,
    ) -> Result<toolgate_core::Effects, toolgate_core::EffectsError> {
        Ok(toolgate_core::Effects::none())
    }
    async fn execute(
        &self,
        _args: Value,
        _ctx: &toolgate_core::ToolContext,
    ) -> toolgate_core::ToolResult {
        let n = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        toolgate_core::ToolResult::success(format!("poll {n}"))
    }
}

#[tokio::test]
async fn a_repeated_look_runs_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(
        "/v1/chat/completions",
        vec![
            tool_calls(&[("p1", "peek", "{}")]),
            tool_calls(&[("p2", "peek", "{}")]),
            answer("Done."),
        ],
    )
    .await;
    let peek = Arc::new(Peek(std::sync::atomic::AtomicUsize::new(0)));
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, false)));
    let tool: Arc<dyn toolgate_core::Tool> = peek.clone();
    let report = AgentRunner::builder(
        llm,
        engine(dir.path(), vec![tool]),
        AgentDef::builtin("build").unwrap(),
    )
    .build()
    .run("Poll", Vec::new())
    .await;
    let decisions: Vec<&str> = report
        .tool_calls
        .iter()
        .map(|c| c.decision.as_str())
        .collect();
    assert_eq!(decisions, ["executed", "executed"]);
    assert_eq!(peek.0.load(std::sync::atomic::Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_repeated_append_runs_once() {
    let append = r#"{"path": "notes.txt", "content": "one line\n", "mode": "append"}"#;
    // (the model's calls, step by step; the file's content at the end;
    // the decisions)
    let cases: Vec<(Vec<ResponseTemplate>, &str, Vec<&str>)> = vec![
        // The same append in three steps in a row: run once.
        (
            vec![
                tool_calls(&[("w1", "write_file", append)]),
                tool_calls(&[("w2", "write_file", append)]),
                tool_calls(&[("w3", "write_file", append)]),
            ],
            "one line\n",
            vec!["executed", "repeated_change", "repeated_change"],
        ),
        // A read in between changes nothing: still not run again.
        (
            vec![
                tool_calls(&[("w1", "write_file", append)]),
                tool_calls(&[("r1", "read_file", r#"{"path": "notes.txt"}"#)]),
                tool_calls(&[("w2", "write_file", append)]),
            ],
            "one line\n",
            vec!["executed", "executed", "repeated_change"],
        ),
        // Another change in between: the append runs again.
        (
            vec![
                tool_calls(&[("w1", "write_file", append)]),
                tool_calls(&[(
                    "o1",
                    "write_file",
                    r#"{"path": "other.txt", "content": "x"}"#,
                )]),
                tool_calls(&[("w2", "write_file", append)]),
            ],
            "one line\none line\n",
            vec!["executed", "executed", "executed"],
        ),
    ];
    for (mut replies, content, decisions) in cases {
        let dir = tempfile::tempdir().unwrap();
        replies.push(answer("Done."));
        let server = server("/v1/chat/completions", replies).await;
        let report = run(&server, dir.path(), false, None).await;
        let got: Vec<&str> = report
            .tool_calls
            .iter()
            .map(|c| c.decision.as_str())
            .collect();
        assert_eq!(got, decisions);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("notes.txt")).unwrap_or_default(),
            content,
            "{decisions:?}"
        );
        for c in report
            .tool_calls
            .iter()
            .filter(|c| c.decision.as_str() == "repeated_change")
        {
            assert!(
                c.output.contains("Not run again") && c.output.contains("created `notes.txt`"),
                "{}",
                c.output
            );
        }
    }
}

/// A model server with a 16,384-token window that counts a token for every
/// `tenths` tenths of a byte of the request body, refuses a request over its
/// window as llama.cpp or OpenAI do (`refusal`), and otherwise answers from
/// its script. It keeps the size of every request.
struct WindowServer {
    tenths: usize,
    refusal: Refusal,
    script: Vec<ResponseTemplate>,
    answered: std::sync::atomic::AtomicUsize,
    sizes: Arc<std::sync::Mutex<Vec<usize>>>,
}

const WINDOW: usize = 16_384;

impl wiremock::Respond for WindowServer {
    fn respond(&self, req: &wiremock::Request) -> ResponseTemplate {
        let tokens = (req.body.len() * 10).div_ceil(self.tenths);
        self.sizes.lock().unwrap().push(tokens);
        if tokens > WINDOW {
            return (self.refusal)(tokens);
        }
        let i = self
            .answered
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.script[i.min(self.script.len() - 1)].clone()
    }
}

/// How a server refuses a request of so many tokens.
type Refusal = fn(usize) -> ResponseTemplate;

fn llama_refusal(tokens: usize) -> ResponseTemplate {
    ResponseTemplate::new(400).set_body_json(json!({"error": {"code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error", "n_prompt_tokens": tokens, "n_ctx": WINDOW}}))
}

fn openai_refusal(tokens: usize) -> ResponseTemplate {
    ResponseTemplate::new(400).set_body_json(json!({"error": {
        "message": format!("This model's maximum context length is {WINDOW} tokens. However, your messages resulted in {tokens} tokens."),
        "type": "invalid_request_error", "code": "context_length_exceeded"}}))
}

#[tokio::test]
async fn no_request_over_the_reported_window_case_table() {
    // (server's tenths of a byte a token, its refusal, requests it
    // refuses, outcome)
    let cases: Vec<(usize, Refusal, usize, Outcome)> = vec![
        // Counting as toolgate does: nothing over the window is sent.
        (30, llama_refusal, 0, Outcome::Completed),
        (40, llama_refusal, 0, Outcome::Completed),
        // A server that counts more tokens than toolgate: one refusal,
        // then a harder compression and one more try that fits.
        (15, llama_refusal, 1, Outcome::Completed),
        (15, openai_refusal, 1, Outcome::Completed),
        // A server whose window cannot hold even the first request: it is
        // refused once, and not sent again when toolgate cannot make it
        // fit; the run fails saying so.
        (1, llama_refusal, 1, Outcome::Failed),
    ];
    for (tenths, refusal, refused, outcome) in cases {
        let dir = tempfile::tempdir().unwrap();
        // Six files of code whose quotes and line ends JSON escapes: their
        // results overflow the window.
        let calls: Vec<(String, String)> = (0..6)
            .map(|i| {
                let body = "say(\"x\")\n".repeat(3_000);
                std::fs::write(dir.path().join(format!("f{i}.py")), body).unwrap();
                (format!("c{i}"), format!(r#"{{"path": "f{i}.py"}}"#))
            })
            .collect();
        let calls: Vec<(&str, &str, &str)> = calls
            .iter()
            .map(|(id, a)| (id.as_str(), "read_file", a.as_str()))
            .collect();
        let sizes = Arc::new(std::sync::Mutex::new(Vec::new()));
        let server = MockServer::start().await;
        wiremock::Mock::given(wiremock::matchers::method("POST"))
            .and(wiremock::matchers::path("/v1/chat/completions"))
            .respond_with(WindowServer {
                tenths,
                refusal,
                script: vec![tool_calls(&calls), answer("Read them.")],
                answered: std::sync::atomic::AtomicUsize::new(0),
                sizes: Arc::clone(&sizes),
            })
            .mount(&server)
            .await;
        let report = run(
            &server,
            dir.path(),
            false,
            Some(ContextBudget::new(16_384, 4096)),
        )
        .await;
        let sizes = sizes.lock().unwrap().clone();
        let over = sizes.iter().filter(|&&t| t > WINDOW).count();
        let case = format!("{tenths} tenths of a byte a token: {sizes:?}");
        assert_eq!(over, refused, "{case}");
        assert_eq!(report.outcome, outcome, "{case}: {:?}", report.error);
        if outcome == Outcome::Completed {
            assert_eq!(report.final_text, "Read them.", "{case}");
            // The results overflowed the window: they were trimmed.
            assert!(
                report
                    .tool_calls
                    .iter()
                    .filter(|c| c.decision.executed())
                    .count()
                    == 6,
                "{case}"
            );
        } else {
            let error = report.error.unwrap_or_default();
            assert!(
                error.contains("context window") && error.contains("not sent"),
                "{case}: {error}"
            );
        }
    }
}

/// A required quality gate that always fails, or always passes.
struct Gate(bool);

#[async_trait::async_trait]
impl toolgate_agent::QualityGates for Gate {
    async fn run(&self) -> Vec<toolgate_agent::GateReport> {
        vec![toolgate_agent::GateReport {
            name: "tests".into(),
            passed: self.0,
            required: true,
            output: if self.0 { "ok" } else { "1 test failed" }.into(),
        }]
    }
}

#[tokio::test]
async fn a_guard_stopped_run_case_table() {
    let append = r#"{"path": "notes.txt", "content": "TODO: one\n", "mode": "append"}"#;
    let read = r#"{"path": "notes.txt"}"#;
    let fail = r#"{"command": "echo failing; exit 3"}"#;
    let check = r#"{"command": "grep -q TODO notes.txt"}"#;
    let write = |id: &'static str| tool_calls(&[(id, "write_file", append)]);
    // (steps, gate passes, outcome, the summary holds, and not)
    let cases: Vec<(Vec<ResponseTemplate>, bool, Outcome, Vec<&str>)> = vec![
        // The change succeeded and the model kept making it: done.
        (
            vec![write("w1"), write("w2"), write("w3")],
            true,
            Outcome::Completed,
            vec![
                "kept repeating a change that had already succeeded",
                "Files changed: notes.txt.",
                "`write_file` x2: repeated_change",
            ],
        ),
        // The same, but the quality gate fails: not done.
        (
            vec![write("w1"), write("w2"), write("w3")],
            false,
            Outcome::Repeating,
            vec!["same call with the same arguments 3 steps in a row"],
        ),
        // Reading again and again is no sign of being done.
        (
            vec![
                write("w0"),
                tool_calls(&[("r1", "read_file", read)]),
                tool_calls(&[("r2", "read_file", read)]),
                tool_calls(&[("r3", "read_file", read)]),
            ],
            true,
            Outcome::Repeating,
            vec!["Files changed: notes.txt.", "4 made, 4 ran (0 failed)"],
        ),
        // A command failed and never ran again successfully: not done, and
        // the summary says how it ended.
        (
            vec![
                tool_calls(&[("c1", "run_command", fail)]),
                write("w1"),
                write("w2"),
                write("w3"),
            ],
            true,
            Outcome::Repeating,
            vec![
                "`echo failing; exit 3`: exit code 3",
                "Files changed: notes.txt.",
                "1 failed",
            ],
        ),
        // The command failed, the change fixed it, the command passed (a
        // command may change files: the append after it runs again), then
        // the append repeated: done.
        (
            vec![
                tool_calls(&[("c1", "run_command", check)]),
                write("w1"),
                tool_calls(&[("c2", "run_command", check)]),
                write("w2"),
                write("w3"),
                write("w4"),
            ],
            true,
            Outcome::Completed,
            vec![
                "step 1: `grep -q TODO notes.txt`: exit code 2",
                "step 3: `grep -q TODO notes.txt`: exit code 0",
            ],
        ),
        // Looking again and again in turns, with nothing changed between:
        // a loop too, though no call follows itself.
        (
            vec![
                tool_calls(&[("r1", "read_file", read)]),
                tool_calls(&[("c1", "run_command", check)]),
                tool_calls(&[("r2", "read_file", read)]),
                tool_calls(&[("c2", "run_command", check)]),
                tool_calls(&[("r3", "read_file", read)]),
            ],
            true,
            Outcome::Repeating,
            vec![
                "calls it had already made, with no file changed since, 3 steps in a row",
                "Files changed: none.",
            ],
        ),
    ];
    for (mut replies, gate, outcome, holds) in cases {
        let dir = tempfile::tempdir().unwrap();
        let n = replies.len();
        // What a model might claim when asked for a summary: never asked.
        replies.push(answer("I fixed main.py and all 12 tests pass."));
        let server = server("/v1/chat/completions", replies).await;
        let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, false)));
        let shell: Arc<dyn toolgate_core::Tool> = Arc::new(Shell(dir.path().to_owned()));
        let report = AgentRunner::builder(
            llm,
            engine(dir.path(), vec![shell]),
            AgentDef::builtin("build").unwrap(),
        )
        .gates(Arc::new(Gate(gate)))
        .build()
        .run("Write the TODO note", Vec::new())
        .await;
        let text = &report.final_text;
        assert_eq!(report.outcome, outcome, "{text}");
        assert_eq!(bodies(&server).await.len(), n, "no summary asked: {text}");
        assert!(text.contains("built from the run's log"), "{text}");
        assert!(
            !text.contains("main.py") && !text.contains("12 tests"),
            "{text}"
        );
        for h in &holds {
            assert!(text.contains(h), "{h:?} not in {text}");
        }
        // A call made again since the last change says so, with the step
        // it was first made.
        if holds[0].starts_with("calls it had already made") {
            for (i, c) in report.tool_calls.iter().enumerate().skip(2) {
                let said = format!("You made this same call at step {}", i % 2 + 1);
                assert!(c.output.starts_with(&format!("[{said}")), "{}", c.output);
            }
        }
        // Each append that ran left one line, no more.
        let appends = report
            .tool_calls
            .iter()
            .filter(|c| c.name == "write_file" && c.decision.executed())
            .count();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("notes.txt")).unwrap_or_default(),
            "TODO: one\n".repeat(appends)
        );
    }
}

#[tokio::test]
async fn a_low_temperature_is_sent_unless_told_otherwise() {
    // (temperature setting, what the request carries)
    let cases = [
        (None, None),
        (Some(Some(0.0)), Some(json!(0.0))),
        (Some(None), None::<Value>),
    ];
    for (set, carried) in cases {
        let dir = tempfile::tempdir().unwrap();
        let server = server("/v1/chat/completions", vec![answer("hi")]).await;
        let mut s = settings(&server, false);
        let expected = match set {
            // The default.
            None => Some(json!(toolgate_agent::DEFAULT_TEMPERATURE)),
            Some(t) => {
                s.temperature = t;
                carried
            }
        };
        let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(s));
        AgentRunner::builder(
            llm,
            engine(dir.path(), vec![]),
            AgentDef::builtin("build").unwrap(),
        )
        .build()
        .run("hi", Vec::new())
        .await;
        let body = &bodies(&server).await[0];
        assert_eq!(body.get("temperature").cloned(), expected, "{set:?}");
    }
    assert!((toolgate_agent::DEFAULT_TEMPERATURE - 0.2).abs() < f32::EPSILON);
}

#[tokio::test]
async fn an_anthropic_stream_that_repeats_itself_is_cut() {
    let line = "I will read a.txt with the read_file tool now, once more.\n";
    let mut events =
        vec![json!({"type": "message_start", "message": {"usage": {"input_tokens": 5}}})];
    for _ in 0..80 {
        events.push(json!({"type": "content_block_delta", "index": 0,
                           "delta": {"type": "text_delta", "text": line}}));
    }
    events.push(json!({"type": "message_stop"}));
    let server = server("/v1/messages", vec![sse(&events)]).await;
    let client = toolgate_agent::AnthropicClient::new(settings(&server, true));
    let request = toolgate_agent::LlmRequest {
        messages: vec![toolgate_agent::Message::text(
            toolgate_agent::Role::User,
            "hi",
        )],
        tools: Vec::new(),
        max_tokens: Some(1000),
        must_call: false,
        barred: Vec::new(),
        penalize_repeats: false,
    };
    let resp = client.complete(&request, &|_| {}).await.unwrap();
    assert_eq!(resp.content, line);
    assert!(
        resp.cut
            .as_deref()
            .is_some_and(|c| c.contains("repeated the same 1-line block")),
        "{:?}",
        resp.cut
    );
}

/// A reply that writes one line of code over and over: the stream watch
/// cuts it at its first copy.
fn looping_reply() -> String {
    "Let me write it.\n".to_owned()
        + &"def multiply(first, second):  return first * second\n".repeat(8)
}

/// A reply cut off for repeating itself is no answer; the next request
/// asks the server to penalise repeated tokens, and the one after it no
/// longer does.
#[tokio::test]
async fn the_request_after_a_cut_reply_penalises_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let looping = looping_reply();
    let server = server(
        "/v1/chat/completions",
        vec![
            answer(&looping),
            tool_calls(&[("l", "list_files", r#"{"path": "."}"#)]),
            answer("done"),
        ],
    )
    .await;
    let report = run(&server, dir.path(), false, None).await;
    assert_eq!(report.final_text, "done");
    let reqs = bodies(&server).await;
    assert_eq!(reqs.len(), 3);
    let penalty: Vec<&Value> = reqs.iter().map(|r| &r["frequency_penalty"]).collect();
    assert_eq!(
        penalty,
        [
            &Value::Null,
            &json!(toolgate_agent::REPEAT_PENALTY),
            &Value::Null
        ]
    );
}

/// Replies cut off again and again end the run as repeating, summed up
/// from the log: each costs a whole reply, and the next one loops too.
#[tokio::test]
async fn replies_cut_three_times_in_a_row_end_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let looping = looping_reply();
    let server = server(
        "/v1/chat/completions",
        vec![
            answer(&looping),
            answer(&looping),
            answer(&looping),
            answer("never"),
        ],
    )
    .await;
    let report = run(&server, dir.path(), false, None).await;
    assert_eq!(report.outcome, Outcome::Repeating, "{}", report.final_text);
    assert!(
        report
            .final_text
            .starts_with("Stopped: the model's replies were cut off 3 times in a row"),
        "{}",
        report.final_text
    );
    assert_eq!(bodies(&server).await.len(), 3);
}
