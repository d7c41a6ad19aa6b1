//! A process recording steps is killed with SIGKILL; its steps are intact.
//!
//! This test binary has no harness: run plainly, it is the test, and starts
//! itself again as the child (with [`CHILD_DB`] set), which records steps
//! forever and prints a line after each. The test kills the child as soon
//! as it reads the line for step 2 — the child is then writing step 3 —
//! reopens the database and checks that every step it finds is complete
//! and nothing of a step is there without the rest.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a test binary without the test harness (so not cfg(test)): a panic is a failure"
)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use toolgate_store::{
    NewSession, RUNNING, SessionStore as _, SqliteStore, StepRecord, ToolCallRow, UsageRow,
};

/// Set in the child: the database to write.
const CHILD_DB: &str = "TOOLGATE_STORE_CRASH_DB";
const SESSION: &str = "crashing";
/// A large message, so that a step's transaction takes a while to write.
const PAYLOAD: usize = 256 * 1024;

/// The two messages step `k` appends (at `2(k-1)` and `2(k-1) + 1`).
fn messages_of(k: u32) -> [Value; 2] {
    let filler = char::from(b'a' + u8::try_from(k % 26).unwrap());
    [
        json!({"role": "assistant", "content": format!("step {k}"), "filler": filler.to_string().repeat(PAYLOAD)}),
        json!({"role": "tool", "tool_call_id": format!("c{k}"), "content": format!("result {k}")}),
    ]
}

fn call_of(k: u32) -> ToolCallRow {
    ToolCallRow {
        step: k,
        call_id: format!("c{k}"),
        name: "run_command".to_owned(),
        arguments: format!(r#"{{"command":"echo {k}"}}"#),
        decision: "allowed".to_owned(),
        success: true,
        duration_ms: u64::from(k),
        output: format!("result {k}"),
        effects: json!({"commands": [format!("echo {k}")]}),
        recovered: false,
    }
}

fn child(db: &str) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = SqliteStore::open(db).unwrap();
        let start = store
            .begin(&NewSession {
                id: SESSION.to_owned(),
                agent: "build".to_owned(),
                task: "crash".to_owned(),
            })
            .await
            .unwrap();
        let mut stdout = std::io::stdout();
        // Bounded, in case the parent never kills.
        for k in 1..=10_000 {
            store
                .record_step(&StepRecord {
                    session_id: SESSION.to_owned(),
                    run: start.run,
                    step: k,
                    messages_from: 2 * (k as usize - 1),
                    messages: messages_of(k).to_vec(),
                    tool_calls: vec![call_of(k)],
                    usage: Some(UsageRow {
                        input_tokens: 1000,
                        output_tokens: 10,
                        estimated: true,
                        cost_usd: None,
                    }),
                    events: Vec::new(),
                })
                .await
                .unwrap();
            writeln!(stdout, "step {k} recorded").unwrap();
            stdout.flush().unwrap();
        }
    });
}

fn parent() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("toolgate.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(CHILD_DB, &db)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    loop {
        let line = lines
            .next()
            .expect("the child exited before recording step 2")
            .unwrap();
        if line == "step 2 recorded" {
            break;
        }
    }
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt as _;
        assert_eq!(status.signal(), Some(9), "{status:?}");
    }
    drop(lines);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let found = runtime.block_on(async {
        let store = SqliteStore::open(&db).unwrap();
        let summary = store.get(SESSION).await.unwrap();
        assert_eq!(summary.outcome, RUNNING);
        assert_eq!(summary.pid, Some(child.id()));
        let steps = u32::try_from(summary.steps).unwrap();
        assert!(steps >= 2, "{summary:?}");
        assert_eq!(summary.input_tokens, 1000 * u64::from(steps));

        let expected: Vec<Value> = (1..=steps).flat_map(messages_of).collect();
        let messages = store.messages(SESSION).await.unwrap();
        assert!(
            messages == expected,
            "{} steps but {} messages, or not those recorded",
            steps,
            messages.len()
        );
        let calls: Vec<ToolCallRow> = (1..=steps).map(call_of).collect();
        assert_eq!(store.tool_calls(SESSION).await.unwrap(), calls);

        // The session can be resumed from there.
        let start = store
            .begin(&NewSession {
                id: SESSION.to_owned(),
                agent: "build".to_owned(),
                task: "resume".to_owned(),
            })
            .await
            .unwrap();
        assert_eq!(start.run, 2);
        assert_eq!(start.stored_messages, expected.len());
        steps
    });
    println!(
        "test sigkill_mid_run_keeps_every_complete_step ... ok ({found} complete steps found)"
    );
}

fn main() {
    match std::env::var(CHILD_DB) {
        Ok(db) => child(&db),
        Err(_) => parent(),
    }
}
