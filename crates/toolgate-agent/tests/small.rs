//! The small-model profile against the scripted model server on
//! 127.0.0.1, with real files: a handful of compact tools, one call a
//! step, outputs cut by lines, `finish(answer)`, and a first request kept
//! under 1,200 tokens.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "test code: a failed unwrap is a failed test; the size is printed for the record"
)]

mod common;

use std::fmt::Write as _;
use std::sync::Arc;

use common::{answer, bodies, engine, server, settings, tool_calls};
use serde_json::Value;
use toolgate_agent::{
    AgentDef, AgentRunner, Environment, LlmClient, OpenAiClient, Outcome, Profile, PromptBuilder,
    RunReport, WIRE_BYTES_PER_TOKEN,
};
use wiremock::{MockServer, ResponseTemplate};

/// The build agent in the small profile, with the prompt the host gives
/// it (the compact one) for a workspace at `dir`.
fn small_agent(dir: &std::path::Path) -> AgentDef {
    let mut agent = AgentDef::builtin("build").unwrap();
    agent.profile = Profile::Small;
    let mut env = Environment::default();
    env.workspace = dir.display().to_string();
    agent.system_prompt = PromptBuilder::new(&agent.system_prompt)
        .edits(true)
        .environment(env)
        .compact(true)
        .build();
    agent
}

async fn run_small(server: &MockServer, dir: &std::path::Path, task: &str) -> RunReport {
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(server, false)));
    AgentRunner::builder(llm, engine(dir, vec![]), small_agent(dir))
        .build()
        .run(task, Vec::new())
        .await
}

/// [`run_small`] with the workspace known to the task checks: the files
/// the task names are read first, and writes are checked against the files.
async fn run_small_checked(server: &MockServer, dir: &std::path::Path, task: &str) -> RunReport {
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(server, false)));
    AgentRunner::builder(llm, engine(dir, vec![]), small_agent(dir))
        .workspace(dir)
        .build()
        .run(task, Vec::new())
        .await
}

fn finish(id: &str, answer: &str) -> ResponseTemplate {
    let args = serde_json::json!({ "answer": answer }).to_string();
    tool_calls(&[(id, "finish", &args)])
}

#[tokio::test]
async fn the_first_request_of_the_small_profile_is_small() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("version.txt"), "4.2.1\n").unwrap();
    let server = server("/v1/chat/completions", vec![finish("f", "4.2.1")]).await;
    let task = "What version does version.txt hold?";
    let report = run_small(&server, dir.path(), task).await;
    assert_eq!(report.outcome, Outcome::Completed, "{report:?}");
    let first = &bodies(&server).await[0];
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    // The test's gate has no `run_command` (it needs a sandbox): the
    // small tools it has, in the agent's order, then `finish`.
    assert_eq!(
        offered,
        [
            "list_files",
            "read_file",
            "search_code",
            "write_file",
            "finish"
        ]
    );
    // Counted as the window guard counts a request (bytes of JSON at
    // three a token), the whole body: prompt, task, schemas, envelope.
    let bytes = serde_json::to_string(first).unwrap().len();
    let tokens = bytes.div_ceil(WIRE_BYTES_PER_TOKEN);
    let schemas = serde_json::to_string(&first["tools"]).unwrap().len();
    println!(
        "small profile, first request: {tokens} tokens ({bytes} bytes, of which tool schemas \
         {schemas} bytes)"
    );
    assert!(tokens <= 1_200, "{tokens} tokens: {first}");
    // A reply may not run away: its cap is the small profile's.
    assert_eq!(first["max_tokens"], toolgate_agent::SMALL_REPLY_TOKENS);
    // One call per reply, as the prompt says too.
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("exactly one tool call per reply"),
        "{system}"
    );
}

struct Case {
    name: &'static str,
    replies: Vec<ResponseTemplate>,
    outcome: Outcome,
    final_text: &'static str,
    /// The calls that ran, by name.
    executed: Vec<&'static str>,
    /// What the second request's last message says (empty: not checked).
    told: &'static str,
}

#[tokio::test]
async fn small_profile_case_table() {
    let two = tool_calls(&[
        ("a", "read_file", r#"{"path": "big.txt"}"#),
        ("b", "list_files", r#"{"path": "."}"#),
    ]);
    let cases = vec![
        Case {
            name: "finish(answer) ends the run with its answer",
            replies: vec![
                tool_calls(&[("r", "read_file", r#"{"path": "version.txt"}"#)]),
                finish("f", "The version is 4.2.1."),
            ],
            outcome: Outcome::Completed,
            final_text: "The version is 4.2.1.",
            executed: vec!["read_file"],
            told: "4.2.1",
        },
        Case {
            name: "two calls in one reply: one runs",
            replies: vec![two, finish("f", "done")],
            outcome: Outcome::Completed,
            final_text: "done",
            executed: vec!["read_file"],
            told: "At most 1 calls of one reply run",
        },
        Case {
            name: "a long output is cut by lines, and says how many",
            replies: vec![
                tool_calls(&[("r", "read_file", r#"{"path": "big.txt"}"#)]),
                finish("f", "read"),
            ],
            outcome: Outcome::Completed,
            final_text: "read",
            executed: vec!["read_file"],
            told: "lines cut …]",
        },
        Case {
            name: "finish without an answer is refused, and the model goes on",
            replies: vec![
                tool_calls(&[("f1", "finish", r#"{"text": "done"}"#)]),
                finish("f2", "done"),
            ],
            outcome: Outcome::Completed,
            final_text: "done",
            executed: vec![],
            told: "call finish with your final answer",
        },
        Case {
            name: "a whole-file write of a file not read yet is refused",
            replies: vec![
                tool_calls(&[(
                    "w1",
                    "write_file",
                    r#"{"path": "version.txt", "content": "4.3.0\n"}"#,
                )]),
                tool_calls(&[("r", "read_file", r#"{"path": "version.txt"}"#)]),
                tool_calls(&[(
                    "w2",
                    "write_file",
                    r#"{"path": "version.txt", "content": "4.3.0\n"}"#,
                )]),
                finish("f", "done"),
            ],
            outcome: Outcome::Completed,
            final_text: "done",
            executed: vec!["read_file", "write_file"],
            told: "you have not read it yet",
        },
        Case {
            name: "a new file needs no read",
            replies: vec![
                tool_calls(&[(
                    "w",
                    "write_file",
                    r#"{"path": "new.txt", "content": "x\n"}"#,
                )]),
                finish("f", "done"),
            ],
            outcome: Outcome::Completed,
            final_text: "done",
            executed: vec!["write_file"],
            told: "",
        },
        Case {
            name: "a plain answer still ends the run",
            replies: vec![answer("4.2.1")],
            outcome: Outcome::Completed,
            final_text: "4.2.1",
            executed: vec![],
            told: "",
        },
    ];
    for case in cases {
        let name = case.name;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("version.txt"), "4.2.1\n").unwrap();
        let big = (1..=1000).fold(String::new(), |mut s, i| {
            let _ = writeln!(s, "line {i}");
            s
        });
        std::fs::write(dir.path().join("big.txt"), big).unwrap();
        let server = server("/v1/chat/completions", case.replies).await;
        let report = run_small(&server, dir.path(), "Look at the files.").await;
        assert_eq!(report.outcome, case.outcome, "{name}: {report:?}");
        assert_eq!(report.final_text, case.final_text, "{name}");
        let executed: Vec<&str> = report
            .tool_calls
            .iter()
            .filter(|c| c.decision.executed())
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(executed, case.executed, "{name}");
        // The conversation ends on the answer as text, not on a call.
        let last = report.messages.last().unwrap();
        assert_eq!(last.content, case.final_text, "{name}");
        assert!(last.tool_calls.is_empty(), "{name}");
        let reqs = bodies(&server).await;
        if !case.told.is_empty() {
            let messages = reqs[1]["messages"].as_array().unwrap();
            let said: Vec<&str> = messages
                .iter()
                .rev()
                .take(2)
                .filter_map(|m| m["content"].as_str())
                .collect();
            assert!(
                said.iter().any(|t| t.contains(case.told)),
                "{name}: {said:?}"
            );
        }
        // Every request of the run offers the same compact tools.
        for body in &reqs {
            assert_eq!(body["tools"], reqs[0]["tools"], "{name}");
        }
        let tool_results: Vec<&Value> = reqs
            .last()
            .unwrap()
            .get("messages")
            .and_then(Value::as_array)
            .map(|m| m.iter().filter(|m| m["role"] == "tool").collect())
            .unwrap_or_default();
        for result in tool_results {
            assert!(
                result["content"].as_str().unwrap().chars().count() < 4_200,
                "{name}"
            );
        }
    }
}

/// After a call that ran, the small profile tells the model its next move
/// at the end of the result: the answer for a question, the change for a
/// task that asks one (until a file changed), then `finish`. The first
/// result is the runtime's own read of the file the task names (`look_0`).
#[tokio::test]
async fn each_result_ends_with_the_next_move_the_task_needs() {
    // (task, replies, what the results end with, in order)
    let cases: &[(&str, Vec<ResponseTemplate>, &[&str])] = &[
        (
            "What version does version.txt hold?",
            vec![
                tool_calls(&[("r", "read_file", r#"{"path": "version.txt"}"#)]),
                finish("f", "4.2.1"),
            ],
            &[
                "call finish with the answer now.",
                "call finish with the answer now.",
            ],
        ),
        (
            "What version does version.txt hold?",
            vec![
                tool_calls(&[("m", "read_file", r#"{"path": "missing.txt"}"#)]),
                tool_calls(&[("r", "read_file", r#"{"path": "version.txt"}"#)]),
                finish("f", "4.2.1"),
            ],
            // A failed call answers no question: no move is suggested.
            &[
                "call finish with the answer now.",
                "",
                "call finish with the answer now.",
            ],
        ),
        (
            "In version.txt, change the version to 4.3.0.",
            vec![
                tool_calls(&[("m", "read_file", r#"{"path": "missing.txt"}"#)]),
                tool_calls(&[("r", "read_file", r#"{"path": "version.txt"}"#)]),
                tool_calls(&[(
                    "w",
                    "write_file",
                    r#"{"path": "version.txt", "content": "4.3.0\n"}"#,
                )]),
                finish("f", "4.3.0"),
            ],
            &[
                "write the file's whole new content with write_file. Else make the next call.",
                // A failed call while the change is to make: make it.
                "write the file's whole new content with write_file. Else make the next call.",
                "write the file's whole new content with write_file. Else make the next call.",
                "If the task is done, call finish with a short summary. Else make the next call.",
            ],
        ),
        (
            "Change the version in version.txt to 4.3.0, so that `cat version.txt` prints 4.3.0.",
            vec![
                tool_calls(&[("r", "read_file", r#"{"path": "version.txt"}"#)]),
                tool_calls(&[(
                    "w",
                    "write_file",
                    r#"{"path": "version.txt", "content": "4.3.0\n"}"#,
                )]),
                finish("f", "4.3.0"),
            ],
            &[
                "write the file's whole new content with write_file. Else make the next call.",
                "write the file's whole new content with write_file. Else make the next call.",
                // The command that must pass is the check to make.
                "Next: run `cat version.txt`; if it passes, call finish with a short summary.",
            ],
        ),
    ];
    for (task, replies, ends) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("version.txt"), "4.2.1\n").unwrap();
        let server = server("/v1/chat/completions", replies.clone()).await;
        let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, false)));
        let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), small_agent(dir.path()))
            .workspace(dir.path())
            .build()
            .run(task, Vec::new())
            .await;
        // The test's gate has no tool that runs commands: a task naming
        // one cannot complete here (the first results are what is checked).
        if !task.contains('`') {
            assert_eq!(report.outcome, Outcome::Completed, "{task}: {report:?}");
        }
        let last = bodies(&server).await.pop().unwrap();
        let results: Vec<&str> = last["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap())
            .collect();
        assert!(results.len() >= ends.len(), "{task}: {results:?}");
        for (result, end) in results.iter().zip(ends.iter()) {
            if end.is_empty() {
                assert!(!result.contains("\nIf this answers"), "{task}: {result}");
            } else {
                assert!(result.ends_with(end), "{task}: {result}");
            }
        }
    }
}

/// A small-profile run the step budget stops is summed up from its log, and
/// the model is not asked: a small model stopped mid-task claims the change
/// it never made ("I added a `--verbose` flag", with no file written).
#[tokio::test]
async fn a_small_run_out_of_steps_is_summed_up_from_its_log_not_by_the_model() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cli.py"), "import argparse\n").unwrap();
    let read = || tool_calls(&[("r", "read_file", r#"{"path": "cli.py"}"#)]);
    let run = || tool_calls(&[("l", "list_files", r#"{"path": "."}"#)]);
    let claim = answer("I added a --verbose flag to cli.py.");
    let server = server("/v1/chat/completions", vec![read(), run(), claim]).await;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, false)));
    let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), small_agent(dir.path()))
        .max_steps(2)
        .build()
        .run("Add a --verbose flag to cli.py.", Vec::new())
        .await;
    assert_eq!(report.outcome, Outcome::MaxSteps);
    let text = &report.final_text;
    assert!(
        text.starts_with("Stopped: the step budget ran out."),
        "{text}"
    );
    assert!(text.contains("Files changed: none."), "{text}");
    assert!(text.contains("2 made, 2 ran (0 failed)"), "{text}");
    assert!(!text.contains("--verbose"), "the model's claim: {text}");
    assert_eq!(bodies(&server).await.len(), 2, "no summary request");
}

/// (task, replies, the decisions of the calls w1 and w2, what the refusal
/// of w1 says, the file at the end)
type WriteCase = (
    &'static str,
    Vec<ResponseTemplate>,
    [&'static str; 2],
    &'static str,
    String,
);

/// The small profile's checks of a whole-file write, by task: one that
/// drops lines for a task that only adds (`dropped_lines`), one that writes
/// the file back as it was for a task that asks for a change (`no_change`);
/// and after a mere listing, the next move is to look inside the files.
#[tokio::test]
async fn small_profile_write_checks_case_table() {
    const CALC: &str = "def add(a, b):\n    return a + b\n";
    let write = |id: &'static str, content: &str| {
        let args = serde_json::json!({ "path": "calc.py", "content": content }).to_string();
        tool_calls(&[(id, "write_file", &args)])
    };
    let both = format!("{CALC}\n\ndef multiply(a, b):\n    return a * b\n");
    // The same, written with other spacing: no line of the file is lost.
    let respaced = "def multiply(a, b):\n    return a * b\n\ndef add(a,b):\n  return a+b\n";
    // (task, replies, the decisions of the calls w1 and w2, what the
    // refusal of w1 says, the file at the end)
    let cases: Vec<WriteCase> = vec![
        (
            "Add a function multiply(a, b) to calc.py.",
            vec![
                write("w1", "def multiply(a, b):\n    return a * b\n"),
                write("w2", &both),
                finish("f", "added"),
            ],
            ["dropped_lines", "executed"],
            "drops 2 line(s) `calc.py` has: `def add(a, b):`, `return a + b`",
            both.clone(),
        ),
        (
            "Add a function multiply(a, b) to calc.py.",
            vec![
                write("w1", respaced),
                write("w2", &both),
                finish("f", "added"),
            ],
            ["executed", "executed"],
            "",
            both.clone(),
        ),
        (
            "Add a function multiply(a, b) to calc.py.",
            vec![write("w1", &both), write("w2", &both), finish("f", "added")],
            ["executed", "repeated_change"],
            "",
            both.clone(),
        ),
        (
            "In calc.py, make add return a - b.",
            vec![
                write("w1", "def add(a,b):\n\n    return a+b"),
                write("w2", "def add(a, b):\n    return a - b\n"),
                finish("f", "done"),
            ],
            ["no_change", "executed"],
            "it changes nothing",
            "def add(a, b):\n    return a - b\n".to_owned(),
        ),
    ];
    for (task, replies, decisions, told, end) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("calc.py"), CALC).unwrap();
        let server = server("/v1/chat/completions", replies).await;
        let report = run_small_checked(&server, dir.path(), task).await;
        assert_eq!(report.outcome, Outcome::Completed, "{task}: {report:?}");
        for (id, decision) in ["w1", "w2"].iter().zip(decisions) {
            let call = report.tool_calls.iter().find(|c| c.id == *id).unwrap();
            assert_eq!(call.decision.as_str(), decision, "{task}: {}", call.output);
            if *id == "w1" && !told.is_empty() {
                assert!(call.output.contains(told), "{task}: {}", call.output);
            }
        }
        let now = std::fs::read_to_string(dir.path().join("calc.py")).unwrap();
        assert_eq!(now, end, "{task}");
    }

    // A file the run has not seen is refused as unread: nothing of what it
    // holds is shown to the model (a secret it may not read stays unread).
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("calc.py"), CALC).unwrap();
    std::fs::write(dir.path().join("keys.py"), "TOKEN = 'secret-value'\n").unwrap();
    let replies = vec![
        tool_calls(&[(
            "w1",
            "write_file",
            r#"{"path": "keys.py", "content": "x = 1\n"}"#,
        )]),
        finish("f", "done"),
    ];
    let secret = server("/v1/chat/completions", replies).await;
    let report =
        run_small_checked(&secret, dir.path(), "Add a function multiply to calc.py.").await;
    let call = report.tool_calls.iter().find(|c| c.id == "w1").unwrap();
    assert_eq!(
        call.decision.as_str(),
        "unread_overwrite",
        "{}",
        call.output
    );
    assert!(!call.output.contains("secret-value"), "{}", call.output);

    // A listing shows names only: look inside before writing.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/a.py"), "x = 1  # TODO: two\n").unwrap();
    let replies = vec![
        tool_calls(&[("l", "list_files", r#"{"path": "src"}"#)]),
        tool_calls(&[("s", "search_code", r#"{"pattern": "TODO", "path": "src"}"#)]),
        finish("f", "listed"),
    ];
    let server = server("/v1/chat/completions", replies).await;
    let task = "Find the TODO comments under src/ and write them to TODO.md.";
    run_small_checked(&server, dir.path(), task).await;
    let reqs = bodies(&server).await;
    let last_result = |body: &Value| {
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap().to_owned())
            .unwrap()
    };
    assert!(
        last_result(&reqs[1]).ends_with("what they hold."),
        "{}",
        last_result(&reqs[1])
    );
    assert!(
        last_result(&reqs[2]).contains("make the change the task asks for now"),
        "{}",
        last_result(&reqs[2])
    );
}
