//! What the host gives every run, as whole processes against the scripted
//! model server: the session id on every audit record, sessions that
//! survive `kill -9`, nothing left in the user's repository, a first run
//! without a model server that says what to do, and `toolgate doctor`.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Ws, answer, chats, server, text, tool_call};
use serde_json::{Value, json};
use toolgate_store::{AuditFilter, AuditStore, SqliteStore};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The store the binary uses for `ws` (its data directory is `ws/home`).
fn store(ws: &Ws) -> SqliteStore {
    let data = ws.path().join("home/.local/share/toolgate");
    let db = toolgate_store::default_path(&data, &ws.path().canonicalize().unwrap());
    SqliteStore::open(db).unwrap()
}

/// The `done` event of a `--json` run.
fn done(stdout: &str) -> Value {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "done")
        .unwrap_or_else(|| panic!("no done event in {stdout}"))
}

#[tokio::test]
async fn every_audit_record_of_a_run_carries_its_session_id() {
    let server = server(vec![
        tool_call("r", "read_file", r#"{"path":"a.txt"}"#),
        tool_call("w", "write_file", r#"{"path":"b.txt","content":"x\n"}"#),
        answer("Done."),
    ])
    .await;
    let ws = Ws::new(&server);
    std::fs::write(ws.path().join("a.txt"), "old\n").unwrap();
    let config = std::fs::read_to_string(ws.path().join("toolgate.yaml")).unwrap();
    std::fs::write(
        ws.path().join("toolgate.yaml"),
        format!("{config}audit:\n  path: logs/audit.jsonl\n"),
    )
    .unwrap();
    let out = ws.run(&["--json", "run", "Copy it"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let session = done(&text(&out.stdout))["session"]
        .as_str()
        .unwrap()
        .to_owned();

    // The JSONL file: one line per call, each with the session.
    let lines = std::fs::read_to_string(ws.path().join("logs/audit.jsonl")).unwrap();
    let records: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2, "{lines}");
    for record in &records {
        assert_eq!(record["session_id"], json!(session), "{record}");
    }
    assert_eq!(records[1]["effects"]["known"][0]["path"], "b.txt");

    // The store's audit: the same calls, the same session.
    let audit = store(&ws)
        .recent(&AuditFilter::newest(10).session_id(session.clone()))
        .await
        .unwrap();
    let tools: Vec<&str> = audit.iter().map(|e| e.tool.as_str()).collect();
    assert_eq!(tools, ["write_file", "read_file"]);
}

#[tokio::test]
async fn a_run_killed_after_its_second_step_is_listed_and_resumed_with_both_steps() {
    // Two steps with tool calls, then a model that never answers: when the
    // third request arrives, both steps are recorded.
    let server = server(vec![
        tool_call("c1", "read_file", r#"{"path":"a.txt"}"#),
        tool_call("c2", "read_file", r#"{"path":"b.txt"}"#),
        answer("never seen").set_delay(Duration::from_secs(300)),
    ])
    .await;
    let ws = Ws::new(&server);
    std::fs::write(ws.path().join("a.txt"), "alpha\n").unwrap();
    std::fs::write(ws.path().join("b.txt"), "beta\n").unwrap();
    let mut cmd = ws.command(env!("CARGO_BIN_EXE_toolgate"));
    cmd.args(["run", "Read both"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let waited = Instant::now();
    while chats(&server).await.len() < 3 {
        assert!(
            waited.elapsed() < Duration::from_secs(60),
            "the run never reached its third step"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let status = Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );

    let out = ws.run(&["--json", "sessions", "list"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let list: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list.len(), 1, "{list:?}");
    let session = list[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(list[0]["outcome"], "killed", "{list:?}");
    assert!(list[0]["steps"].as_u64().unwrap() >= 2, "{list:?}");

    // Resumed against a server that answers: the request carries both steps.
    let again = common::server(vec![answer("Both read.")]).await;
    let config = std::fs::read_to_string(ws.path().join("toolgate.yaml")).unwrap();
    std::fs::write(
        ws.path().join("toolgate.yaml"),
        config.replace(&server.uri(), &again.uri()),
    )
    .unwrap();
    let out = ws.run(&["sessions", "resume", &session, "Go on"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Both read."));
    let reqs = chats(&again).await;
    let body: Value = serde_json::from_slice(&reqs[0].body).unwrap();
    let messages = body["messages"].as_array().unwrap();
    let results: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert!(
        results.len() == 2 && results[0].contains("alpha") && results[1].contains("beta"),
        "{messages:?}"
    );
    assert_eq!(messages.last().unwrap()["content"], "Go on");
    let out = ws.run(&["--json", "sessions", "list"]).await;
    let list: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list[0]["outcome"], "completed", "{list:?}");
}

#[tokio::test]
async fn a_run_leaves_nothing_in_a_git_workspace() {
    let server = server(vec![
        tool_call("c", "run_command", r#"{"command":"git status --short"}"#),
        answer("Clean."),
    ])
    .await;
    let ws = Ws::new(&server);
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(ws.path())
            .env("HOME", ws.path().join("home"))
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    git(&["init", "-q"]);
    // The test's own files are not toolgate's: commit them.
    std::fs::write(ws.path().join(".gitignore"), "home/\n").unwrap();
    git(&["add", "-A"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "start",
    ]);
    let out = ws.run(&["run", "Is the tree clean?"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(git(&["status", "--porcelain", "--ignored"]), "!! home/\n");
    assert!(!ws.path().join(".toolgate").exists());
}

#[test]
fn with_no_model_server_run_fails_fast_and_says_how_to_get_a_model() {
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        // Configured, but not running.
        (
            &[
                "--base-url",
                &format!("http://127.0.0.1:{port}/v1"),
                "--model",
                "m",
            ],
            "cannot be reached",
        ),
        // Nothing configured: the usual local servers are tried.
        (&[], "Ollama at http://127.0.0.1:11434/v1"),
    ];
    for (flags, said) in cases {
        let mut cmd = common::clean_command(env!("CARGO_BIN_EXE_toolgate"), dir.path(), dir.path());
        cmd.args(["run", "hello"])
            .args(*flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let started = Instant::now();
        // A bound, not a measurement: the run must not sit in retries.
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > Duration::from_secs(5) {
                let _ = child.kill();
                panic!("`toolgate run {flags:?}` did not exit within 5 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let out = child.wait_with_output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(status.code(), Some(3), "{err}");
        assert!(err.contains(said), "{err}");
        // The hint ends with the one command that fixes it.
        let hint = err
            .lines()
            .find(|l| l.starts_with("hint: "))
            .unwrap_or_default();
        assert!(hint.contains("`toolgate init"), "{err}");
    }
}

/// A scripted llama.cpp: the model list, `/props`, and a chat endpoint
/// that answers the tool check with a structured call.
async fn llama_cpp() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "object": "list",
            "data": [{"id": "scripted", "object": "model", "owned_by": "llamacpp"}]
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/props"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "default_generation_settings": {"n_ctx": 4096}
        })))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(tool_call("t", "add", r#"{"a":2,"b":3}"#))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn doctor_checks_a_running_model_server_and_a_stopped_one() {
    let running = llama_cpp().await;
    let ws = Ws::new(&running);
    let out = ws.run(&["doctor", "--check-tools"]).await;
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{so}\n{}", text(&out.stderr));
    for line in [
        "✓ configuration: valid (defaults, ",
        "✓ workspace trust: ",
        "sandbox: ",
        "network: the host's network, every destination",
        "✓ store: ",
        "✓ model server: ",
        "✓ model: scripted is served",
        "✓ context window: 4096 tokens",
        "✓ constrained replies: each reply held to one tool call or an answer by a JSON schema (llama.cpp)",
        "✓ agent profile: build runs small (auto: a 4096-token window)",
        "✓ tool calling: structured tool calls",
    ] {
        assert!(so.contains(line), "{line:?} missing from\n{so}");
    }

    // The same configuration with the server stopped: a port nothing
    // listens on any more (wiremock keeps dropped servers alive in a pool).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let uri = format!("http://127.0.0.1:{port}");
    let config = std::fs::read_to_string(ws.path().join("toolgate.yaml")).unwrap();
    std::fs::write(
        ws.path().join("toolgate.yaml"),
        config.replace(&running.uri(), &uri),
    )
    .unwrap();
    let out = ws.run(&["doctor"]).await;
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{so}");
    assert!(
        so.contains(&format!(
            "✗ model server: the model server at {uri}/v1 cannot be reached"
        )),
        "{so}"
    );
    assert!(so.contains("    fix: "), "{so}");
    // JSON: one object per check.
    let out = ws.run(&["--json", "doctor"]).await;
    let checks: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        checks
            .iter()
            .any(|c| c["state"] == "fail" && c["fix"].is_string())
    );
}

/// A scripted llama.cpp that declares a 4,096-token window and, for 30
/// steps, asks to read a 20 KB file; it records every chat request.
struct Reader {
    n: std::sync::atomic::AtomicUsize,
    bodies: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
}

impl wiremock::Respond for Reader {
    fn respond(&self, request: &wiremock::Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let summarising = summarising(&body);
        self.bodies.lock().unwrap().push(body);
        if summarising {
            return answer("Earlier steps: read big.txt, a long text about a fox.");
        }
        let n = self.n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if n < 30 {
            tool_call(&format!("c{n}"), "read_file", r#"{"path":"big.txt"}"#)
        } else {
            answer("Read it thirty times.")
        }
    }
}

#[tokio::test]
async fn a_long_run_never_sends_a_request_over_a_4096_token_window() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/props"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "default_generation_settings": {"n_ctx": 4096}
        })))
        .mount(&server)
        .await;
    let bodies = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Reader {
            n: std::sync::atomic::AtomicUsize::new(0),
            bodies: bodies.clone(),
        })
        .mount(&server)
        .await;
    let ws = Ws::new(&server);
    // Lines of text, 20 KB: every step's output is five times the window.
    let line = "The quick brown fox jumps over the lazy dog, again and again.\n";
    std::fs::write(ws.path().join("big.txt"), line.repeat(330)).unwrap();
    let config = std::fs::read_to_string(ws.path().join("toolgate.yaml")).unwrap();
    std::fs::write(
        ws.path().join("toolgate.yaml"),
        format!(
            "{config}agents:\n  reader:\n    allowed_tools: [read_file, list_files]\n    max_steps: 40\n    max_repeated_calls: 100\n"
        ),
    )
    .unwrap();
    let out = ws.run(&["run", "Read big.txt", "--agent", "reader"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let bodies = bodies.lock().unwrap();
    assert_eq!(
        bodies.len(),
        31 + compressions(&bodies),
        "every step reached the model"
    );
    for (i, body) in bodies.iter().enumerate() {
        // The window's measure: the request's tokens at 3.5 bytes a token
        // (toolgate's conservative estimate; real tokenizers average about
        // 4 on this text) plus the answer it asks room for.
        let bytes = serde_json::to_string(body).unwrap().len();
        let answer = body["max_tokens"].as_u64().unwrap();
        let tokens = (bytes as u64 * 2).div_ceil(7) + answer;
        assert!(
            tokens <= 4096,
            "request {i}: {bytes} bytes + {answer} tokens = {tokens}"
        );
    }
}

/// Whether a request asks for a summary: it offers no tools, neither as
/// `tools` nor held to a reply schema (`llm.constrain`).
fn summarising(body: &Value) -> bool {
    body.get("tools").is_none() && body.get("response_format").is_none()
}

/// The summarising calls among `bodies` (no tools offered, not the last).
fn compressions(bodies: &[Value]) -> usize {
    bodies[..bodies.len() - 1]
        .iter()
        .filter(|b| summarising(b))
        .count()
}

/// A llama.cpp reply whose content is `content`, with usage and timings.
fn llama_reply(content: &str, prompt: u64, processed: u64) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 9},
        "timings": {"prompt_n": processed}
    }))
}

/// What the host decides from a llama.cpp that reports a 1.5B model and a
/// 16k window: the small profile (`auto`), replies held to a JSON schema
/// (`llm.constrain: auto`), `cache_prompt`, and the processed tokens in
/// the report; the runtime reads the file the task names before the first
/// step, and the run ends by `finish` once the change is made.
#[tokio::test]
async fn a_small_model_on_llama_cpp_gets_the_small_profile_constrained_replies_and_the_cache() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "object": "list",
            "data": [{"id": "scripted", "object": "model", "owned_by": "llamacpp",
                      "meta": {"n_params": 1_543_714_304_u64, "n_ctx_train": 32768}}]
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/props"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "default_generation_settings": {"n_ctx": 16384}
        })))
        .mount(&server)
        .await;
    toolgate_test::model::mount(
        &server,
        "/v1/chat/completions",
        toolgate_test::model::Script::new(vec![
            // An answer before the change: refused by the task checks.
            llama_reply(
                r#"{"tool": "finish", "arguments": {"answer": "done"}}"#,
                700,
                700,
            ),
            llama_reply(
                r#"{"tool": "write_file", "arguments": {"path": "version.txt", "content": "4.3.0\n"}}"#,
                780,
                80,
            ),
            llama_reply(
                r#"{"tool": "finish", "arguments": {"answer": "4.3.0"}}"#,
                830,
                50,
            ),
        ]),
    )
    .await;
    let ws = Ws::new(&server);
    std::fs::write(ws.path().join("version.txt"), "4.2.1\n").unwrap();
    let out = ws
        .run(&[
            "--json",
            "run",
            "In version.txt, change the version to 4.3.0.",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let done: Value = serde_json::from_str(text(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(done["outcome"], "completed", "{done}");
    assert_eq!(done["final_text"], "4.3.0");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("version.txt")).unwrap(),
        "4.3.0\n"
    );
    // The runtime's own read came first, as a call of the run.
    let look = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "tool_call")
        .unwrap();
    assert_eq!(look["id"], "look_0", "{look}");
    assert_eq!(look["name"], "read_file", "{look}");
    assert_eq!(done["tokens"]["processed"], 830);
    let bodies = toolgate_test::model::chat_bodies(&server).await;
    assert_eq!(bodies.len(), 3);
    for body in &bodies {
        assert_eq!(body["cache_prompt"], true, "{body}");
        assert!(body.get("tools").is_none(), "{body}");
        assert_eq!(body["response_format"]["type"], "json_schema");
    }
    let tools = |body: &Value| -> Vec<String> {
        body["response_format"]["json_schema"]["schema"]["anyOf"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|b| b["properties"]["tool"]["const"].as_str())
            .map(str::to_owned)
            .collect()
    };
    // The change not made: the first two replies may only call a tool (a
    // real server would not have let the model answer "done"); once it is
    // made, `finish` is offered.
    let looking = [
        "list_files",
        "read_file",
        "run_command",
        "search_code",
        "write_file",
    ];
    assert_eq!(tools(&bodies[0]), looking);
    assert_eq!(tools(&bodies[2]), [&looking[..], &["finish"]].concat());
    let first = bodies[0]["messages"].to_string();
    assert!(first.contains("Result of read_file:\\n4.2.1"), "{first}");
    let system = bodies[0]["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("exactly one tool call per reply"),
        "{system}"
    );
    assert!(
        system.contains("Reply with exactly one JSON object"),
        "{system}"
    );
    // The refused finish came back as its result, in plain text.
    let told = bodies[1]["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(told["role"], "user");
    assert!(
        told["content"]
            .as_str()
            .unwrap()
            .starts_with("Result of finish:\nNot done yet"),
        "{told}"
    );
}
