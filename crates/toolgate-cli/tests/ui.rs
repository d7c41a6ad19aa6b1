//! `toolgate ui` and `--approver ui` as whole processes: the URL line,
//! and calls of `toolgate run` answered over the UI's API against a
//! scripted model server on 127.0.0.1. (The page itself is driven in a
//! real browser by `ui_browser.rs`.)

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;

use common::{Ws, answer, chat_bodies, server, text, tool_call};

/// A `toolgate` process whose stderr (or stdout) lines arrive on a channel.
struct Proc {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Proc {
    fn spawn(ws: &Ws, args: &[&str], watch_stdout: bool) -> Self {
        let mut cmd = ws.command(env!("CARGO_BIN_EXE_toolgate"));
        cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let (tx, lines) = mpsc::channel();
        let stream: Box<dyn std::io::Read + Send> = if watch_stdout {
            Box::new(child.stdout.take().unwrap())
        } else {
            Box::new(child.stderr.take().unwrap())
        };
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self { child, lines }
    }

    /// The first `http://…?token=…` in the watched stream.
    fn url(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            let Ok(line) = self.lines.recv_timeout(left) else {
                break;
            };
            if let Some(at) = line.find("http://") {
                return line[at..].trim().to_owned();
            }
        }
        panic!("no URL printed");
    }

    fn wait(mut self) -> (i32, Vec<String>) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let rest: Vec<String> = self.lines.try_iter().collect();
                return (status.code().unwrap_or(-1), rest);
            }
            assert!(Instant::now() < deadline, "the process did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A signed-in client of a UI at `url`.
struct Page {
    base: String,
    cookie: String,
    client: reqwest::Client,
}

impl Page {
    async fn sign_in(url: &str) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let response = client.get(url).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 303);
        let cookie = response.headers()["set-cookie"].to_str().unwrap();
        let cookie = cookie.split(';').next().unwrap().to_owned();
        let base = url.split("/?").next().unwrap().to_owned();
        Self {
            base,
            cookie,
            client,
        }
    }

    async fn get(&self, path: &str) -> Value {
        let r = self
            .client
            .get(format!("{}{path}", self.base))
            .header("cookie", &self.cookie)
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "GET {path}: {}", r.status());
        r.json().await.unwrap()
    }

    async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let r = self
            .client
            .post(format!("{}{path}", self.base))
            .header("cookie", &self.cookie)
            .header("origin", &self.base)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    /// The pending approvals, once there are `n`.
    async fn pending(&self, n: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let pending = self.get("/api/approvals").await;
            let list = pending.as_array().unwrap().clone();
            if list.len() >= n {
                return list;
            }
            assert!(Instant::now() < deadline, "no approval came: {pending}");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

const EDIT: &str = r#"{"path":"a.txt","old_str":"old","new_str":"new"}"#;

/// A confirm-sensitive workspace with `a.txt` = `old text`, a `toolgate run
/// TASK --approver ui` in it, and a page signed in to its approval page.
async fn run_with_ui(model: &wiremock::MockServer, task: &str) -> (Ws, Proc, Page) {
    let ws = Ws::new(model);
    ws.set_mode("confirm-sensitive");
    std::fs::write(ws.path().join("a.txt"), "old text\n").unwrap();
    let proc = Proc::spawn(&ws, &["run", task, "--approver", "ui"], false);
    let page = Page::sign_in(&proc.url()).await;
    (ws, proc, page)
}

impl Page {
    /// Answers approval `id`: the status and the body.
    async fn answer(&self, id: &str, answer: &str) -> (u16, Value) {
        self.post(&format!("/api/approvals/{id}"), &json!({"answer": answer}))
            .await
    }
}

#[tokio::test]
async fn ui_prints_its_url_on_stdout_and_serves_the_page_behind_it() {
    let model = server(vec![answer("unused")]).await;
    let ws = Ws::new(&model);
    let proc = Proc::spawn(&ws, &["ui", "--addr", "127.0.0.1:0"], true);
    let url = proc.url();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.contains("/?token="),
        "{url}"
    );
    let page = Page::sign_in(&url).await;
    let state = page.get("/api/state").await;
    assert_eq!(state["approver_only"], false);
    assert!(
        state["agents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["name"] == "build")
    );
    // Sessions of the workspace's store are listed.
    assert!(page.get("/api/sessions").await.is_array());
}

#[tokio::test]
async fn ui_refuses_a_non_loopback_address_without_the_flag() {
    let model = server(vec![answer("unused")]).await;
    let ws = Ws::new(&model);
    let out = ws.run(&["ui", "--addr", "0.0.0.0:0"]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refusing to serve on 0.0.0.0") && err.contains("--allow-remote"),
        "{err}"
    );
}

#[tokio::test]
async fn run_with_the_ui_approver_shows_the_diff_and_an_allow_changes_the_file() {
    let model = server(vec![tool_call("e", "edit_file", EDIT), answer("Edited.")]).await;
    let (ws, proc, page) = run_with_ui(&model, "Edit a.txt").await;
    assert_eq!(page.get("/api/state").await["approver_only"], true);
    let pending = page.pending(1).await;
    let card = &pending[0];
    assert_eq!(card["tool"], "edit_file");
    assert_eq!(card["agent"], "build");
    assert!(card["session"].is_string(), "{card}");
    let diff = card["view"]["actions"][0]["diff"].as_str().unwrap();
    assert!(
        diff.contains("-old text") && diff.contains("+new text"),
        "{diff}"
    );
    assert_eq!(
        card["always"],
        json!({"tool": "edit_file", "path": "a.txt", "decision": "allow"})
    );
    // Nothing changed while waiting.
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "old text\n"
    );
    let id = card["id"].as_str().unwrap();
    let (status, body) = page.answer(id, "allow").await;
    assert_eq!(status, 200, "{body}");
    let (code, _) = proc.wait();
    assert_eq!(code, 0);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "new text\n"
    );
}

#[tokio::test]
async fn a_deny_from_the_ui_leaves_the_file_and_tells_the_model() {
    let model = server(vec![
        tool_call("e", "edit_file", EDIT),
        answer("Understood."),
    ])
    .await;
    let (ws, proc, page) = run_with_ui(&model, "Edit a.txt").await;
    let pending = page.pending(1).await;
    let id = pending[0]["id"].as_str().unwrap();
    let (status, _) = page.answer(id, "deny").await;
    assert_eq!(status, 200);
    // Answered once: a second answer is told so.
    let (again, body) = page.answer(id, "allow").await;
    assert_eq!(again, 409, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("answered already"),
        "{body}"
    );
    let (code, _) = proc.wait();
    assert_eq!(code, 0);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "old text\n"
    );
    let bodies = chat_bodies(&model).await;
    let told = bodies[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        told.to_lowercase().contains("cancelled by user") || told.to_lowercase().contains("denied"),
        "{told}"
    );
}

#[tokio::test]
async fn always_allow_saves_a_rule_that_the_next_run_obeys_without_asking() {
    let model = server(vec![
        tool_call("e", "edit_file", EDIT),
        answer("Edited."),
        tool_call(
            "e2",
            "edit_file",
            r#"{"path":"a.txt","old_str":"new","new_str":"newer"}"#,
        ),
        answer("Edited again."),
    ])
    .await;
    let (ws, proc, page) = run_with_ui(&model, "Edit a.txt").await;
    let pending = page.pending(1).await;
    let id = pending[0]["id"].as_str().unwrap();
    let (status, body) = page.answer(id, "always").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["rule"]["number"], 1, "{body}");
    assert_eq!(proc.wait().0, 0);
    let config =
        std::fs::read_to_string(ws.path().join("home/.config/toolgate/config.yaml")).unwrap();
    assert!(
        config.contains("edit_file") && config.contains("a.txt") && config.contains("allow"),
        "{config}"
    );
    let listed = ws.run(&["rules", "list"]).await;
    assert!(String::from_utf8_lossy(&listed.stdout).contains("allow edit_file path `a.txt`"));

    // The next run is not asked: it ends by itself under the UI approver.
    let proc = Proc::spawn(&ws, &["run", "Edit again", "--approver", "ui"], false);
    let (code, _) = proc.wait();
    assert_eq!(code, 0);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "newer text\n"
    );
}

#[tokio::test]
async fn mcp_serve_with_the_ui_approver_asks_the_page_not_the_client() {
    use std::io::Write as _;
    let model = server(vec![answer("unused")]).await;
    let ws = Ws::new(&model);
    ws.set_mode("confirm-sensitive");
    let mut cmd = ws.command(env!("CARGO_BIN_EXE_toolgate"));
    cmd.args(["mcp", "serve", "--approver", "ui"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, lines) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let (out_tx, replies) = mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if let Ok(value) = serde_json::from_str(&line) {
                let _ = out_tx.send(value);
            }
        }
    });
    let proc = Proc { child, lines };
    let url = proc.url();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "ui-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "write_file", "arguments": {"path": "m.txt", "content": "from mcp\n"}}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let page = Page::sign_in(&url).await;
    let pending = page.pending(1).await;
    assert_eq!(pending[0]["tool"], "write_file");
    assert!(pending[0]["session"].is_null());
    let diff = pending[0]["view"]["actions"][0]["diff"].as_str().unwrap();
    assert!(diff.contains("+from mcp"), "{diff}");
    // The card says which client asks.
    assert_eq!(pending[0]["view"]["scope"], "MCP client `ui-test` #1");
    let id = pending[0]["id"].as_str().unwrap();
    let (status, _) = page.answer(id, "allow").await;
    assert_eq!(status, 200);
    let deadline = Instant::now() + Duration::from_secs(30);
    let reply = loop {
        let left = deadline.checked_duration_since(Instant::now()).unwrap();
        let reply = replies.recv_timeout(left).unwrap();
        if reply["id"] == 2 {
            break reply;
        }
    };
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("m.txt")).unwrap(),
        "from mcp\n"
    );
    drop(stdin);
}

#[tokio::test]
async fn an_ask_rule_asks_in_yolo_and_its_card_names_the_rule() {
    let model = server(vec![tool_call("e", "edit_file", EDIT), answer("Edited.")]).await;
    // The workspace runs in yolo; the user's own rule asks for this file.
    let ws = Ws::new(&model);
    std::fs::write(ws.path().join("a.txt"), "old text\n").unwrap();
    let added = ws
        .run(&[
            "rules",
            "add",
            "--tool",
            "edit_file",
            "--path",
            "a.txt",
            "--decision",
            "ask",
        ])
        .await;
    assert_eq!(added.status.code(), Some(0));
    let proc = Proc::spawn(&ws, &["run", "Edit a.txt", "--approver", "ui"], false);
    let page = Page::sign_in(&proc.url()).await;
    let pending = page.pending(1).await;
    let why = pending[0]["why"].as_str().unwrap();
    assert!(
        why.contains("asked by rule 1 (ask edit_file path `a.txt`)"),
        "{why}"
    );
    let id = pending[0]["id"].as_str().unwrap();
    let (status, _) = page.answer(id, "deny").await;
    assert_eq!(status, 200);
    assert_eq!(proc.wait().0, 0);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "old text\n"
    );
}

#[tokio::test]
async fn a_running_session_cannot_be_started_twice_and_a_failed_start_frees_it() {
    let model = server(vec![tool_call("e", "edit_file", EDIT), answer("Done.")]).await;
    let ws = Ws::new(&model);
    ws.set_mode("confirm-sensitive");
    std::fs::write(ws.path().join("a.txt"), "old text\n").unwrap();
    let proc = Proc::spawn(&ws, &["ui", "--addr", "127.0.0.1:0"], true);
    let page = Page::sign_in(&proc.url()).await;
    let (status, body) = page
        .post(
            "/api/runs",
            &json!({"task": "Edit a.txt", "agent": "build"}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let session = body["session"].as_str().unwrap().to_owned();
    let pending = page.pending(1).await;
    assert_eq!(pending[0]["session"], session.as_str());
    // The same session again while it runs (a second tab): refused.
    let (again, body) = page
        .post("/api/runs", &json!({"task": "More", "session": session}))
        .await;
    assert_eq!(again, 409, "{body}");
    // Stop: the waiting call is denied, the run ends, the session is free.
    let (stopped, _) = page
        .post(&format!("/api/runs/{session}/stop"), &json!({}))
        .await;
    assert_eq!(stopped, 200);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !page.get("/api/state").await["runs"]
        .as_array()
        .unwrap()
        .is_empty()
    {
        assert!(Instant::now() < deadline, "the run did not end");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "old text\n"
    );
    // A start that fails (an unknown agent) leaves nothing reserved.
    let (failed, body) = page
        .post(
            "/api/runs",
            &json!({"task": "x", "agent": "nobody", "session": session}),
        )
        .await;
    assert!(failed >= 400, "{body}");
    assert!(body["error"].as_str().unwrap().contains("nobody"), "{body}");
    assert!(
        page.get("/api/state").await["runs"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    // Two tabs resume it at the same moment: one starts, one is refused.
    let resume = json!({"task": "Go on", "agent": "build", "session": session});
    let (a, b) = tokio::join!(
        page.post("/api/runs", &resume),
        page.post("/api/runs", &resume)
    );
    let mut statuses = [a.0, b.0];
    statuses.sort_unstable();
    assert_eq!(statuses, [202, 409], "{a:?} {b:?}");
}

#[tokio::test]
async fn a_plan_approved_on_the_page_continues_in_the_chosen_mode_and_the_write_runs() {
    let write = r#"{"path":"notes.txt","content":"planned\n"}"#;
    let model = server(vec![
        tool_call("w1", "write_file", write),
        tool_call(
            "p",
            "exit_plan_mode",
            r#"{"plan":"1. Write notes.txt.\n2. Stop."}"#,
        ),
        tool_call("w2", "write_file", write),
        answer("Done."),
    ])
    .await;
    let ws = Ws::new(&model);
    let proc = Proc::spawn(
        &ws,
        &["--mode", "plan", "run", "Add notes", "--approver", "ui"],
        false,
    );
    let page = Page::sign_in(&proc.url()).await;
    let pending = page.pending(1).await;
    let card = &pending[0];
    assert_eq!(card["kind"], "plan", "{card}");
    assert_eq!(card["tool"], "exit_plan_mode");
    assert_eq!(card["plan"], "1. Write notes.txt.\n2. Stop.");
    assert_eq!(
        card["choices"],
        json!(["accept-edits", "confirm-sensitive", "yolo"])
    );
    // The write before the plan was refused, never put to the page.
    assert!(!ws.path().join("notes.txt").exists());
    let id = card["id"].as_str().unwrap();
    // A plan is not a call: allow, and a mode it does not offer, are refused.
    let (status, body) = page.answer(id, "allow").await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = page
        .post(
            &format!("/api/approvals/{id}/plan"),
            &json!({"mode": "plan"}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = page
        .post(
            &format!("/api/approvals/{id}/plan"),
            &json!({"mode": "accept-edits"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["answer"], "approved");
    assert_eq!(body["mode"], "accept-edits");
    // accept-edits: the second write runs without a card.
    let (code, _) = proc.wait();
    assert_eq!(code, 0);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes.txt")).unwrap(),
        "planned\n"
    );
    let bodies = chat_bodies(&model).await;
    assert_eq!(bodies.len(), 4);
}

#[tokio::test]
async fn a_session_is_rewound_and_the_rewind_undone_from_the_page() {
    let model = server(vec![
        tool_call(
            "w",
            "write_file",
            r#"{"path":"made.txt","content":"made\n"}"#,
        ),
        answer("Done."),
    ])
    .await;
    let ws = Ws::new(&model);
    let out = ws.run(&["run", "Make a file", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let made = ws.path().join("made.txt");
    assert!(made.exists());
    let proc = Proc::spawn(&ws, &["ui", "--addr", "127.0.0.1:0"], true);
    let page = Page::sign_in(&proc.url()).await;
    let sessions = page.get("/api/sessions").await;
    let id = sessions[0]["id"].as_str().unwrap().to_owned();

    let listed = page.get(&format!("/api/sessions/{id}/checkpoints")).await;
    let first = &listed["checkpoints"][0];
    assert_eq!(first["step"], 1, "{listed}");
    assert_eq!(first["changes"][0]["path"], "made.txt", "{listed}");
    assert_eq!(first["changes"][0]["before"]["kind"], "absent", "{listed}");

    let rewind = format!("/api/sessions/{id}/rewind");
    let (status, body) = page.post(&rewind, &json!({"what": "everything"})).await;
    assert_eq!(status, 400, "{body}");
    assert!(made.exists());
    let (status, body) = page.post(&rewind, &json!({"to_step": 1})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["restored"][0]["path"], "made.txt", "{body}");
    assert!(!made.exists());
    let listed = page.get(&format!("/api/sessions/{id}/checkpoints")).await;
    assert_eq!(
        listed["checkpoints"][0]["rewound_by"], body["rewind_id"],
        "{listed}"
    );
    let (status, body) = page.post(&rewind, &json!({"undo": true})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(std::fs::read_to_string(&made).unwrap(), "made\n");
    let (status, body) = page.post(&rewind, &json!({"undo": true})).await;
    assert_eq!(status, 422, "nothing left to undo: {body}");
}

/// Lets a held model reply go however the test ends (a failed assertion
/// fails the test instead of hanging it).
struct LetGo(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Drop for LetGo {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The page of a `toolgate ui` refuses to rewind a session that another
/// process is running, naming that process, and changes nothing.
#[tokio::test]
async fn the_page_does_not_rewind_a_session_another_process_runs() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use toolgate_test::model::{Script, mount};

    let model = wiremock::MockServer::start().await;
    let (reached_tx, reached_rx) = mpsc::channel::<()>();
    let release = Arc::new(AtomicBool::new(false));
    let let_go = Arc::clone(&release);
    let _release = LetGo(Arc::clone(&release));
    // The run's second model call is held: the run is alive after step 1.
    let script = Script::new(vec![
        tool_call(
            "w",
            "write_file",
            r#"{"path":"made.txt","content":"made\n"}"#,
        ),
        answer("Done."),
    ])
    .before(1, move || {
        let _ = reached_tx.send(());
        while !let_go.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    mount(&model, "/v1/chat/completions", script).await;
    let ws = Ws::new(&model);
    let run = Proc::spawn(&ws, &["run", "Make a file"], false);
    tokio::task::spawn_blocking(move || reached_rx.recv())
        .await
        .unwrap()
        .expect("the run reaches its second model call");
    let ui = Proc::spawn(&ws, &["ui", "--addr", "127.0.0.1:0"], true);
    let page = Page::sign_in(&ui.url()).await;
    let sessions = page.get("/api/sessions").await;
    let id = sessions[0]["id"].as_str().unwrap().to_owned();
    let (status, body) = page
        .post(&format!("/api/sessions/{id}/rewind"), &json!({}))
        .await;
    assert_eq!(status, 409, "{body}");
    let pid = run.child.id();
    assert!(
        body.to_string()
            .contains(&format!("is running in process {pid}")),
        "{body}"
    );
    assert!(ws.path().join("made.txt").exists());
}
