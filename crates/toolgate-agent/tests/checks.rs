//! Look before answering, check before finishing: runs against the
//! scripted model server on 127.0.0.1 in a real workspace, whose task names
//! a file, a command, or a command that must pass.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use std::sync::Arc;

use common::{Shell, answer, bodies, engine, server, settings, tool_calls};
use serde_json::Value;
use toolgate_agent::{AgentDef, AgentRunner, LlmClient, OpenAiClient, Outcome, Profile, RunReport};
use wiremock::ResponseTemplate;

const CHECK: &str = "[ \"$(cat value.txt)\" = 2 ] && echo ok || { echo \"value.txt holds $(cat value.txt), want 2\"; exit 1; }\n";

struct Case {
    name: &'static str,
    task: &'static str,
    small: bool,
    checks: bool,
    replies: Vec<ResponseTemplate>,
    outcome: Outcome,
    final_text: &'static str,
    /// What the model was told after each refused answer, in order.
    told: Vec<&'static str>,
    /// The commands the task checks ran, with whether they passed.
    checked: Vec<bool>,
    /// Every call must be confirmed, and nobody can be asked.
    nobody_to_ask: bool,
}

fn finish(id: &str, answer: &str) -> ResponseTemplate {
    let args = serde_json::json!({ "answer": answer }).to_string();
    tool_calls(&[(id, "finish", &args)])
}

fn read(id: &str, path: &str) -> ResponseTemplate {
    tool_calls(&[(id, "read_file", &format!(r#"{{"path": "{path}"}}"#))])
}

fn shell(id: &str, command: &str) -> ResponseTemplate {
    let args = serde_json::json!({ "command": command }).to_string();
    tool_calls(&[(id, "run_command", &args)])
}

fn write(id: &str, path: &str, content: &str) -> ResponseTemplate {
    let args = serde_json::json!({ "path": path, "content": content }).to_string();
    tool_calls(&[(id, "write_file", &args)])
}

#[tokio::test]
async fn task_checks_case_table() {
    let fix = "Fix value.txt so that `sh check.sh` prints ok.";
    let cases = vec![
        Case {
            name: "an answer before reading the named file is refused once",
            task: "What version does version.txt hold?",
            small: false,
            checks: true,
            replies: vec![answer("1.0"), read("r", "version.txt"), answer("4.2.1")],
            outcome: Outcome::Completed,
            final_text: "4.2.1",
            told: vec!["First read `version.txt`"],
            checked: vec![],
            nobody_to_ask: false,
        },
        Case {
            name: "a model that never looks ends unverified after three refusals",
            task: "What version does version.txt hold?",
            small: false,
            checks: true,
            replies: vec![answer("1.0")],
            outcome: Outcome::Unverified,
            final_text: "1.0",
            told: vec!["First read `version.txt`"; 3],
            checked: vec![],
            nobody_to_ask: false,
        },
        Case {
            name: "a named command must be run before the answer",
            task: "Run `sh check.sh` and tell me what it says.",
            small: false,
            checks: true,
            replies: vec![
                answer("It says ok."),
                shell("s", "sh check.sh"),
                answer("fails"),
            ],
            outcome: Outcome::Completed,
            final_text: "fails",
            told: vec!["First run `sh check.sh`"],
            checked: vec![],
            nobody_to_ask: false,
        },
        Case {
            name: "an answer while the command that must pass fails is refused with its output",
            task: fix,
            small: false,
            checks: true,
            replies: vec![
                read("r", "value.txt"),
                shell("s", "sh check.sh"),
                answer("Done."),
                write("w", "value.txt", "2"),
                answer("Fixed: value.txt holds 2."),
            ],
            outcome: Outcome::Completed,
            final_text: "Fixed: value.txt holds 2.",
            told: vec!["value.txt holds 1, want 2"],
            checked: vec![false, true],
            nobody_to_ask: false,
        },
        Case {
            name: "finish refuses while its check fails (small profile)",
            task: fix,
            small: true,
            checks: true,
            replies: vec![
                read("r", "value.txt"),
                shell("s", "sh check.sh"),
                finish("f1", "Done."),
                write("w", "value.txt", "2"),
                finish("f2", "Fixed."),
            ],
            outcome: Outcome::Completed,
            final_text: "Fixed.",
            told: vec!["must pass and print `ok`"],
            checked: vec![false, true],
            nobody_to_ask: false,
        },
        Case {
            name: "a check that keeps failing ends unverified",
            task: fix,
            small: true,
            checks: true,
            replies: vec![
                read("r", "value.txt"),
                shell("s", "sh check.sh"),
                finish("f1", "Done."),
            ],
            outcome: Outcome::Unverified,
            final_text: "Done.",
            told: vec!["want 2"; 3],
            checked: vec![false; 4],
            nobody_to_ask: false,
        },
        Case {
            name: "a task that asks for a change is not done before a file changed (small)",
            task: "In value.txt, change 1 to 2.",
            small: true,
            checks: true,
            replies: vec![
                read("r", "value.txt"),
                answer("Changed it."),
                write("w", "value.txt", "2"),
                answer("value.txt holds 2."),
            ],
            outcome: Outcome::Completed,
            final_text: "value.txt holds 2.",
            told: vec!["the task asks for a change, and no file has changed"],
            checked: vec![],
            nobody_to_ask: false,
        },
        Case {
            name: "task_checks off: the first answer ends the run",
            task: "What version does version.txt hold?",
            small: false,
            checks: false,
            replies: vec![answer("1.0")],
            outcome: Outcome::Completed,
            final_text: "1.0",
            told: vec![],
            checked: vec![],
            nobody_to_ask: false,
        },
        Case {
            name: "a task that names nothing is not checked",
            task: "Say hello.",
            small: false,
            checks: true,
            replies: vec![answer("hello")],
            outcome: Outcome::Completed,
            final_text: "hello",
            told: vec![],
            checked: vec![],
            nobody_to_ask: false,
        },
        Case {
            name: "once a call was refused for want of an approver, the checks step aside",
            task: "What version does version.txt hold?",
            small: false,
            checks: true,
            replies: vec![read("r", "version.txt"), answer("I could not read it.")],
            outcome: Outcome::Blocked,
            final_text: "I could not read it.",
            told: vec![],
            checked: vec![],
            nobody_to_ask: true,
        },
    ];
    for case in cases {
        let name = case.name;
        let (report, reqs) = run(&case).await;
        assert_eq!(report.outcome, case.outcome, "{name}: {report:?}");
        assert_eq!(report.final_text, case.final_text, "{name}");
        if case.outcome == Outcome::Unverified {
            let error = report.error.as_deref().unwrap_or_default();
            assert!(error.contains("task checks"), "{name}: {error}");
        }
        // What the model was told, read from the requests that followed.
        let told: Vec<String> = reqs
            .iter()
            .skip(1)
            .filter_map(|r| {
                let last = r["messages"].as_array().unwrap().last().unwrap();
                let text = last["content"].as_str().unwrap_or_default();
                (text.starts_with("Not done yet") || text.starts_with("Not finished"))
                    .then(|| text.to_owned())
            })
            .collect();
        assert_eq!(told.len(), case.told.len(), "{name}: {told:?}");
        for (said, want) in told.iter().zip(&case.told) {
            assert!(said.contains(want), "{name}: {said}");
        }
        let checked: Vec<bool> = report
            .tool_calls
            .iter()
            .filter(|c| c.id.starts_with("check_"))
            .map(|c| c.success)
            .collect();
        assert_eq!(checked, case.checked, "{name}");
    }
}

async fn run(case: &Case) -> (RunReport, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("version.txt"), "4.2.1\n").unwrap();
    std::fs::write(dir.path().join("value.txt"), "1").unwrap();
    std::fs::write(dir.path().join("check.sh"), CHECK).unwrap();
    run_in(case, dir.path()).await
}

/// [`run`] in the workspace `dir`.
async fn run_in(case: &Case, dir: &std::path::Path) -> (RunReport, Vec<Value>) {
    let server = server("/v1/chat/completions", case.replies.clone()).await;
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(settings(&server, false)));
    let shell: Arc<dyn toolgate_core::Tool> = Arc::new(Shell(dir.to_owned()));
    let mut agent = AgentDef::builtin("build").unwrap();
    agent.task_checks = case.checks;
    if case.small {
        agent.profile = Profile::Small;
    }
    let mut engine = engine(dir, vec![shell]);
    if case.nobody_to_ask {
        engine = Arc::new(
            toolgate_engine::ExecutionEngine::builder(Arc::clone(engine.registry()))
                .policy(toolgate_policy::ConfirmationPolicy::new(
                    toolgate_policy::ConfirmationMode::ConfirmAll,
                ))
                .build(),
        );
    }
    let report = AgentRunner::builder(llm, engine, agent)
        .workspace(dir)
        .max_steps(10)
        .build()
        .run(case.task, Vec::new())
        .await;
    let reqs = bodies(&server).await;
    (report, reqs)
}

/// A file the task says not to change is not written, in any profile; with
/// the task checks off it is.
#[tokio::test]
async fn a_file_the_task_says_to_keep_is_not_written() {
    for (small, checks) in [(false, true), (true, true), (false, false)] {
        let case = Case {
            name: "kept",
            task: "Fix value.txt so that `sh check.sh` prints ok, without changing version.txt.",
            small,
            checks,
            replies: vec![
                read("r1", "value.txt"),
                read("r2", "version.txt"),
                write("w1", "version.txt", "2"),
                write("w2", "value.txt", "2"),
                if small {
                    finish("f", "Fixed.")
                } else {
                    answer("Fixed.")
                },
            ],
            outcome: Outcome::Completed,
            final_text: "Fixed.",
            told: vec![],
            checked: vec![],
            nobody_to_ask: false,
        };
        let (report, _) = run(&case).await;
        assert_eq!(report.outcome, Outcome::Completed, "{report:?}");
        let kept = report.tool_calls.iter().find(|c| c.id == "w1").unwrap();
        if checks {
            assert_eq!(kept.decision.as_str(), "kept_file", "small: {small}");
            assert!(
                kept.output
                    .contains("the task says not to change `version.txt`"),
                "{}",
                kept.output
            );
            assert_eq!(report.files_changed, ["value.txt"], "small: {small}");
        } else {
            assert!(kept.decision.executed() && kept.success, "{kept:?}");
        }
    }
}

/// A file the task asks to create must exist before the run ends: an
/// answer claiming it is refused with what is missing, in every profile.
#[tokio::test]
async fn a_file_the_task_asks_to_create_must_exist_before_the_answer() {
    for small in [false, true] {
        let done = |id: &str, text: &str| {
            if small {
                finish(id, text)
            } else {
                answer(text)
            }
        };
        let case = Case {
            name: "creates",
            task: "Read value.txt and write its number to a new file copy.txt.",
            small,
            checks: true,
            replies: vec![
                read("r", "value.txt"),
                done("f1", "I wrote copy.txt."),
                write("w", "copy.txt", "1"),
                done("f2", "copy.txt holds 1."),
            ],
            outcome: Outcome::Completed,
            final_text: "copy.txt holds 1.",
            told: vec![],
            checked: vec![],
            nobody_to_ask: false,
        };
        let (report, reqs) = run(&case).await;
        assert_eq!(report.outcome, Outcome::Completed, "{report:?}");
        assert_eq!(report.final_text, "copy.txt holds 1.");
        let told = reqs[2]["messages"].to_string();
        assert!(
            told.contains("the task asks for `copy.txt`, and it does not exist"),
            "small: {small}: {told}"
        );
    }
}

/// A rename is not done while the old name is still in the scope the task
/// names: the model is told where, and finishes once it is gone.
#[tokio::test]
async fn a_rename_is_not_done_while_the_old_name_is_left() {
    let case = Case {
        name: "rename",
        task: "Rename get_value to fetch_value in lib/.",
        small: true,
        checks: true,
        replies: vec![
            read("r1", "lib/a.py"),
            write("w1", "lib/a.py", "def fetch_value():\n    return 1\n"),
            finish("f1", "Renamed."),
            read("r2", "lib/b.py"),
            write("w2", "lib/b.py", "from a import fetch_value\n"),
            finish("f2", "Renamed in both."),
        ],
        outcome: Outcome::Completed,
        final_text: "Renamed in both.",
        told: vec![],
        checked: vec![],
        nobody_to_ask: false,
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("lib")).unwrap();
    std::fs::write(
        dir.path().join("lib/a.py"),
        "def get_value():\n    return 1\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("lib/b.py"), "from a import get_value\n").unwrap();
    let (report, reqs) = run_in(&case, dir.path()).await;
    assert_eq!(report.outcome, Outcome::Completed, "{report:?}");
    assert_eq!(report.final_text, "Renamed in both.");
    let told = reqs[3]["messages"].to_string();
    assert!(
        told.contains("`get_value` is still in `lib/b.py` (line 1)"),
        "{told}"
    );
}
