//! Approvals answered from any worker, as whole processes: two `toolgate
//! mcp serve --http --approver ui` workers on one store; a call made
//! through worker 1 waits for approval, worker 2's UI lists it and allows
//! it through its HTTP API, and the call's result reaches worker 1's
//! client. And calls with an idempotency key run once: a retried finished
//! call gets the stored result, a call waiting for approval on a killed
//! worker is taken over by the retry, a call running on a killed worker is
//! answered "may have run". "Always allow" answered on one worker's page
//! is saved in the shared store and applies on every worker, until
//! `toolgate rules remove --store` removes it. On `SQLite` (one file, two
//! processes) and on
//! `PostgreSQL`
//! (`TOOLGATE_TEST_PG_URL`, as `store_postgres.rs` needs; without it that
//! test fails, saying so).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;
#[path = "common/pg.rs"]
mod pg;

use common::{Ws, answer, server};

/// A worker: `toolgate mcp serve --http 127.0.0.1:0 --approver ui`, with
/// the MCP endpoint and the approval page it announced.
struct Worker {
    child: Child,
    mcp: String,
    page: String,
}

impl Worker {
    fn spawn(ws: &Ws, env: &[(&str, &str)]) -> Self {
        let (child, mcp, page) = start(ws, env, true);
        Self {
            child,
            mcp,
            page: page.unwrap(),
        }
    }

    /// A worker with no approver: what needs confirmation is refused.
    fn headless(ws: &Ws) -> Self {
        let (child, mcp, _) = start(ws, &[], false);
        Self {
            child,
            mcp,
            page: String::new(),
        }
    }
}

/// `toolgate mcp serve --http 127.0.0.1:0` (with `--approver ui` when
/// `page`): the process, its MCP endpoint, and its page's sign-in URL.
fn start(ws: &Ws, env: &[(&str, &str)], page: bool) -> (Child, String, Option<String>) {
    let mut cmd = ws.command(env!("CARGO_BIN_EXE_toolgate"));
    cmd.args(["mcp", "serve", "--http", "127.0.0.1:0"]);
    if page {
        cmd.args(["--approver", "ui"]);
    }
    cmd.envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let (tx, lines) = mpsc::channel::<String>();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let (mut mcp, mut sign_in) = (None, None);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    while mcp.is_none() || (page && sign_in.is_none()) {
        let left = deadline
            .checked_duration_since(Instant::now())
            .unwrap_or_else(|| panic!("the worker did not announce itself: {seen:?}"));
        let line = lines
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("the worker stopped: {seen:?}"));
        if let Some(at) = line.find("http://") {
            let url = line[at..].trim().to_owned();
            if url.contains("token=") {
                sign_in = Some(url);
            } else if url.ends_with("/mcp") {
                mcp = Some(url);
            }
        }
        seen.push(line);
    }
    (child, mcp.unwrap(), sign_in)
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// The JSON-RPC reply in an MCP HTTP response body (plain JSON, or the
/// `data:` lines of a server-sent event stream).
fn reply(body: &str) -> Value {
    if let Ok(value) = serde_json::from_str(body) {
        return value;
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|v| v.get("id").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC reply in {body:?}"))
}

/// An MCP client of one worker: initialized, its session id kept.
struct Client {
    http: reqwest::Client,
    url: String,
    session: Option<String>,
}

impl Client {
    async fn connect(url: &str) -> Self {
        let mut client = Self {
            http: http(),
            url: url.to_owned(),
            session: None,
        };
        let (session, init) = client
            .post(
                &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "worker-test", "version": "1"}}}),
            )
            .await;
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        client.session = session;
        client
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        client
    }

    /// Posts one message; the session id the server gave, and its reply
    /// (null for a notification).
    async fn post(&self, message: &Value) -> (Option<String>, Value) {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(message.to_string());
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        let response = request.send().await.unwrap();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let status = response.status();
        let body = response.text().await.unwrap();
        assert!(status.is_success(), "{status}: {body}");
        if message.get("id").is_none() {
            return (session, Value::Null);
        }
        (session, reply(&body))
    }
}

/// A signed-in client of an approval page.
struct Page {
    base: String,
    cookie: String,
    http: reqwest::Client,
}

impl Page {
    async fn sign_in(url: &str) -> Self {
        let http = http();
        let response = http.get(url).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 303);
        let cookie = response.headers()["set-cookie"].to_str().unwrap();
        let cookie = cookie.split(';').next().unwrap().to_owned();
        let base = url.split("/?").next().unwrap().to_owned();
        Self { base, cookie, http }
    }

    /// `GET /api/approvals`: the cards waiting for an answer.
    async fn approvals(&self) -> Vec<Value> {
        self.list("approvals").await
    }

    /// `GET /api/audit`: the newest entries of the store's audit.
    async fn audit(&self) -> Vec<Value> {
        self.list("audit").await
    }

    /// The JSON array `GET /api/WHAT` answers.
    async fn list(&self, what: &str) -> Vec<Value> {
        let r = self
            .http
            .get(format!("{}/api/{what}", self.base))
            .header("cookie", &self.cookie)
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
        let list: Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
        list.as_array().unwrap().clone()
    }

    /// `POST /api/rules`: the page's "add a rule".
    async fn add_rule(&self, rule: &Value) -> (u16, Value) {
        let r = self
            .http
            .post(format!("{}/api/rules", self.base))
            .header("cookie", &self.cookie)
            .header("origin", &self.base)
            .header("content-type", "application/json")
            .body(rule.to_string())
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let body = r.text().await.unwrap();
        (status, serde_json::from_str(&body).unwrap_or(Value::Null))
    }

    async fn answer(&self, id: &str, answer: &str) -> (u16, Value) {
        let r = self
            .http
            .post(format!("{}/api/approvals/{id}", self.base))
            .header("cookie", &self.cookie)
            .header("origin", &self.base)
            .header("content-type", "application/json")
            .body(json!({"answer": answer}).to_string())
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let body = r.text().await.unwrap();
        (status, serde_json::from_str(&body).unwrap_or(Value::Null))
    }
}

/// The whole scenario on `ws` (whose store both workers share).
async fn asked_on_one_worker_answered_on_another(ws: &Ws, env: &[(&str, &str)]) {
    let one = Worker::spawn(ws, env);
    let two = Worker::spawn(ws, env);
    let client = Client::connect(&one.mcp).await;
    let call = tokio::spawn(async move {
        client
            .post(
                &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "write_file",
                "arguments": {"path": "shared.txt", "content": "approved elsewhere\n"}}}),
            )
            .await
            .1
    });
    // Worker 2's page lists the question worker 1 asked.
    let page = Page::sign_in(&two.page).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let card = loop {
        if let Some(card) = page
            .approvals()
            .await
            .into_iter()
            .find(|c| c["tool"] == "write_file")
        {
            break card;
        }
        assert!(Instant::now() < deadline, "worker 2 never listed the call");
        assert!(!call.is_finished(), "the call ended unanswered");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let diff = card["view"]["actions"][0]["diff"].as_str().unwrap_or("");
    let content = card["view"]["actions"][0]["content"].as_str().unwrap_or("");
    assert!(
        diff.contains("approved elsewhere") || content.contains("approved elsewhere"),
        "{card}"
    );
    let id = card["id"].as_str().unwrap().to_owned();
    assert!(!std::fs::exists(ws.path().join("shared.txt")).unwrap());
    let (status, body) = page.answer(&id, "allow").await;
    assert_eq!(status, 200, "{body}");

    let reply = tokio::time::timeout(Duration::from_secs(60), call)
        .await
        .expect("the call's result reaches worker 1's client")
        .unwrap();
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("shared.txt")).unwrap(),
        "approved elsewhere\n"
    );
    // The first answer won: worker 1's page is told it was answered.
    let mine = Page::sign_in(&one.page).await;
    let (status, body) = mine.answer(&id, "deny").await;
    assert_eq!(status, 409, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("answered already"),
        "{body}"
    );
    assert!(mine.approvals().await.is_empty());
}

/// `scenario` on a `confirm-sensitive` workspace whose store is the
/// `SQLite` file.
async fn on_sqlite(scenario: impl AsyncFnOnce(&Ws)) {
    let model = server(vec![answer("unused")]).await;
    let ws = Ws::new(&model);
    ws.set_mode("confirm-sensitive");
    scenario(&ws).await;
}

/// `scenario` on a `confirm-sensitive` workspace whose store is a new
/// `PostgreSQL` database named after `db`, dropped after.
async fn on_postgres(db: &str, scenario: impl AsyncFnOnce(&Ws)) {
    let db = format!("{db}_{}", std::process::id());
    let url = pg::new_database(&db).await;
    let model = server(vec![answer("unused")]).await;
    let ws = postgres_ws(&model, &url).await;
    ws.set_mode("confirm-sensitive");
    scenario(&ws).await;
    pg::drop_database(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_asked_on_one_worker_is_answered_on_another_sqlite() {
    on_sqlite(async |ws| asked_on_one_worker_answered_on_another(ws, &[]).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_asked_on_one_worker_is_answered_on_another_postgres() {
    on_postgres("toolgate_shared", async |ws| {
        asked_on_one_worker_answered_on_another(ws, &[]).await;
    })
    .await;
}

/// A new database on the test server, named after `name` and this
/// process; its URL.
async fn new_database(name: &str) -> String {
    pg::new_database(&format!("{name}_{}", std::process::id())).await
}

/// A yolo workspace whose store is the database at `url`, migrated.
async fn postgres_ws(model: &wiremock::MockServer, url: &str) -> Ws {
    let ws = Ws::new(model);
    let config = ws.path().join("toolgate.yaml");
    let yaml = format!(
        "{}store:\n  url: {url}\n",
        std::fs::read_to_string(&config).unwrap()
    );
    std::fs::write(&config, yaml).unwrap();
    let migrated = ws.run(&["store", "migrate"]).await;
    assert_eq!(
        migrated.status.code(),
        Some(0),
        "{}",
        common::text(&migrated.stderr)
    );
    ws
}

// ---- No call runs twice: calls with an idempotency key. ----

/// A `tools/call` of `run_command` with an idempotency key.
fn keyed_command(id: u64, key: &str, command: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "run_command",
        "arguments": {"command": command},
        "_meta": {"io.toolgate/idempotency-key": key}}})
}

/// The text of a `tools/call` reply.
fn text_of(reply: &Value) -> String {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn a_retried_finished_call_gets_the_stored_result(ws: &Ws, env: &[(&str, &str)]) {
    let one = Worker::spawn(ws, env);
    let two = Worker::spawn(ws, env);
    let command = "echo ran >> once.log && echo done";
    let first = Client::connect(&one.mcp)
        .await
        .post(&keyed_command(2, "retry-1", command))
        .await
        .1;
    assert_eq!(first["result"]["isError"], false, "{first}");
    // The retry, through the other worker: the stored result, no run.
    let again = Client::connect(&two.mcp)
        .await
        .post(&keyed_command(2, "retry-1", command))
        .await
        .1;
    assert_eq!(again["result"], first["result"], "{again}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("once.log")).unwrap(),
        "ran\n"
    );
    // Without a key, a call runs each time.
    let plain = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "run_command", "arguments": {"command": command}}});
    Client::connect(&two.mcp).await.post(&plain).await;
    assert_eq!(
        std::fs::read_to_string(ws.path().join("once.log")).unwrap(),
        "ran\nran\n"
    );
    // A key that is not a string is refused.
    let bad = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "run_command", "arguments": {"command": command},
        "_meta": {"io.toolgate/idempotency-key": 7}}});
    let refused = Client::connect(&two.mcp).await.post(&bad).await.1;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
}

async fn a_waiting_call_of_a_killed_worker_is_taken_over(ws: &Ws, env: &[(&str, &str)]) {
    let mut one = Worker::spawn(ws, env);
    let two = Worker::spawn(ws, env);
    let command = "echo ran >> taken.log";
    let client = Client::connect(&one.mcp).await;
    let waiting = tokio::spawn(async move {
        let _ = client.post(&keyed_command(2, "take-over", command)).await;
    });
    let page = Page::sign_in(&two.page).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let id = loop {
        if let Some(card) = page.approvals().await.first() {
            break card["id"].as_str().unwrap().to_owned();
        }
        assert!(Instant::now() < deadline, "the call was never asked about");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // Worker 1 dies with the question open.
    one.child.kill().unwrap();
    one.child.wait().unwrap();
    waiting.abort();
    // The client retries through worker 2, which waits for the same
    // answer; a person answers it there; it runs once.
    let client = Client::connect(&two.mcp).await;
    let retry =
        tokio::spawn(async move { client.post(&keyed_command(2, "take-over", command)).await.1 });
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, body) = page.answer(&id, "allow").await;
        if status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "{status} {body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let reply = tokio::time::timeout(Duration::from_secs(60), retry)
        .await
        .expect("the retry is answered")
        .unwrap();
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("taken.log")).unwrap(),
        "ran\n"
    );
}

async fn a_call_running_on_a_killed_worker_may_have_run(ws: &Ws, env: &[(&str, &str)]) {
    let mut one = Worker::spawn(ws, env);
    let two = Worker::spawn(ws, env);
    let client = Client::connect(&one.mcp).await;
    let running = tokio::spawn(async move {
        let _ = client
            .post(&keyed_command(2, "killed-1", "touch started && sleep 120"))
            .await;
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::exists(ws.path().join("started")).unwrap() {
        assert!(Instant::now() < deadline, "the command never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    one.child.kill().unwrap();
    one.child.wait().unwrap();
    running.abort();
    let reply = Client::connect(&two.mcp)
        .await
        .post(&keyed_command(2, "killed-1", "touch started && sleep 120"))
        .await
        .1;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert!(text_of(&reply).contains("may have run"), "{reply}");
    assert!(
        reply["result"]["_meta"]["io.toolgate/retryable"].is_null(),
        "not to be retried: {reply}"
    );
    // The audit holds one entry for the call that may have run: worker 1
    // died before keeping one, so worker 2, which settled the call, wrote
    // it `interrupted` under worker 1's call id. A second retry gets the
    // same answer and writes nothing more.
    let again = Client::connect(&two.mcp)
        .await
        .post(&keyed_command(3, "killed-1", "touch started && sleep 120"))
        .await
        .1;
    assert_eq!(text_of(&again), text_of(&reply));
    let page = Page::sign_in(&two.page).await;
    let audit = page.audit().await;
    let interrupted: Vec<&Value> = audit
        .iter()
        .filter(|e| e["decision"] == "interrupted")
        .collect();
    assert_eq!(interrupted.len(), 1, "{audit:#?}");
    let entry = interrupted[0];
    assert_eq!(entry["tool"], "run_command");
    assert!(
        entry["error"].as_str().unwrap().contains("may have run"),
        "{entry}"
    );
    assert!(
        entry["call_id"].as_str().unwrap().starts_with("mcp-"),
        "{entry}"
    );
    let of_the_call = audit
        .iter()
        .filter(|e| e["args_sha256"] == entry["args_sha256"])
        .count();
    assert_eq!(of_the_call, 1, "{audit:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyed_calls_run_once_across_workers_sqlite() {
    let model = server(vec![answer("unused")]).await;
    let ws = Ws::new(&model);
    a_retried_finished_call_gets_the_stored_result(&ws, &[]).await;
    a_call_running_on_a_killed_worker_may_have_run(&ws, &[]).await;
    ws.set_mode("confirm-sensitive");
    a_waiting_call_of_a_killed_worker_is_taken_over(&ws, &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyed_calls_run_once_across_workers_postgres() {
    let url = new_database("toolgate_once").await;
    let model = server(vec![answer("unused")]).await;
    let ws = postgres_ws(&model, &url).await;
    a_retried_finished_call_gets_the_stored_result(&ws, &[]).await;
    // One audit row per run: the keyed call once, the call without a key
    // once; the retry none.
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let driver = tokio::spawn(connection);
    let rows: i64 = client
        .query_one(
            "SELECT COUNT(*) FROM audit WHERE tool = 'run_command' AND decision = 'executed'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(rows, 2);
    drop(client);
    driver.abort();
    a_call_running_on_a_killed_worker_may_have_run(&ws, &[]).await;
    ws.set_mode("confirm-sensitive");
    a_waiting_call_of_a_killed_worker_is_taken_over(&ws, &[]).await;
    let db = url.rsplit('/').next().unwrap().to_owned();
    pg::drop_database(&db).await;
}

// ---- Rules saved in the shared store apply on every worker. ----

/// A `tools/call` of `write_file`.
fn write_call(id: u64, content: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "write_file",
        "arguments": {"path": "ruled.txt", "content": content}}})
}

/// The first card of `page` for `write_file`, waiting for it.
async fn card_on(page: &Page) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(card) = page
            .approvals()
            .await
            .into_iter()
            .find(|c| c["tool"] == "write_file")
        {
            return card["id"].as_str().unwrap().to_owned();
        }
        assert!(Instant::now() < deadline, "the call was never listed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_allow_answered_on_one_worker_applies_on_every_worker_postgres() {
    let db = format!("toolgate_rules_{}", std::process::id());
    let url = pg::new_database(&db).await;
    let model = server(vec![answer("unused")]).await;
    let ws = postgres_ws(&model, &url).await;
    ws.set_mode("confirm-sensitive");
    let (one, two, three) = (
        Worker::spawn(&ws, &[]),
        Worker::spawn(&ws, &[]),
        Worker::spawn(&ws, &[]),
    );

    // A call on worker 1 asks; "Always allow" answered on worker 2's page.
    let client = Client::connect(&one.mcp).await;
    let call = tokio::spawn(async move { client.post(&write_call(2, "first\n")).await.1 });
    let page = Page::sign_in(&two.page).await;
    let id = card_on(&page).await;
    let (status, body) = page.answer(&id, "always").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["rule"]["source"], "store", "{body}");
    // A rule that does not build (`exact` without a `command`) is refused
    // before it reaches the store, where it would keep every saved rule
    // from applying.
    let (status, body) = page
        .add_rule(&json!({"tool": "run_command", "exact": true, "decision": "allow"}))
        .await;
    assert_eq!(status, 400, "{body}");
    let reply = tokio::time::timeout(Duration::from_secs(60), call)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(reply["result"]["isError"], false, "{reply}");

    // The same kind of call on worker 3 runs without asking.
    let client = Client::connect(&three.mcp).await;
    let reply = tokio::time::timeout(
        Duration::from_secs(30),
        client.post(&write_call(3, "second\n")),
    )
    .await
    .expect("worker 3 asked although the rule was saved")
    .1;
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("ruled.txt")).unwrap(),
        "second\n"
    );

    // `toolgate rules list` with the shared config shows it, from the store.
    let listed = ws.run(&["--json", "rules", "list"]).await;
    let list: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let stored: Vec<&Value> = list
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["source"] == "store")
        .collect();
    assert_eq!(stored.len(), 1, "{list}");
    // Saved in the store, not in the answering user's file.
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    assert_eq!(stored[0]["tool"], "write_file", "{list}");
    let rule_id = stored[0]["id"].as_i64().unwrap().to_string();
    let text = ws.run(&["rules", "list"]).await;
    assert!(
        common::text(&text.stdout).contains(&format!("store {rule_id}  ")),
        "{}",
        common::text(&text.stdout)
    );

    // Removed, the next call asks again.
    let removed = ws.run(&["rules", "remove", "--store", &rule_id]).await;
    assert_eq!(
        removed.status.code(),
        Some(0),
        "{}",
        common::text(&removed.stderr)
    );
    let again = ws.run(&["rules", "remove", "--store", &rule_id]).await;
    assert_ne!(again.status.code(), Some(0));
    assert!(common::text(&again.stderr).contains("no saved rule"));
    let call = tokio::spawn(async move { client.post(&write_call(4, "third\n")).await.1 });
    let page = Page::sign_in(&three.page).await;
    let id = card_on(&page).await;
    assert!(!call.is_finished(), "the call ran without asking");
    let (status, body) = page.answer(&id, "deny").await;
    assert_eq!(status, 200, "{body}");
    let reply = tokio::time::timeout(Duration::from_secs(60), call)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.path().join("ruled.txt")).unwrap(),
        "second\n",
        "{reply}"
    );
    drop((one, two, three));
    pg::drop_database(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saving_a_rule_in_an_unreachable_store_is_a_clear_error() {
    let model = server(vec![answer("unused")]).await;
    let ws = Ws::new(&model);
    let config = ws.path().join("toolgate.yaml");
    // Port 1 on the loopback: nothing listens there.
    let yaml = format!(
        "{}store:\n  url: postgres://toolgate@127.0.0.1:1/nowhere\n",
        std::fs::read_to_string(&config).unwrap()
    );
    std::fs::write(&config, yaml).unwrap();
    let added = ws
        .run(&[
            "rules",
            "add",
            "--tool",
            "write_file",
            "--path",
            "docs/**",
            "--decision",
            "allow",
            "--store",
        ])
        .await;
    assert_ne!(added.status.code(), Some(0));
    let stderr = common::text(&added.stderr);
    assert!(
        stderr.contains("the rules saved in the shared store cannot be reached"),
        "{stderr}"
    );
    // Listing says the same: the store's rules cannot be left out silently.
    let listed = ws.run(&["rules", "list"]).await;
    assert_ne!(listed.status.code(), Some(0));
    assert!(
        common::text(&listed.stderr).contains("cannot be reached"),
        "{}",
        common::text(&listed.stderr)
    );
}

/// A `tools/call` of `read_file`.
fn read_call(id: u64, path: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "read_file", "arguments": {"path": path}}})
}

/// Posts `call` until its reply satisfies `done`, for up to 10 seconds (a
/// rule saved by another process reaches a worker by a notification);
/// the last reply.
async fn until(client: &Client, call: &Value, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let reply = client.post(call).await.1;
        if done(&reply) || Instant::now() > deadline {
            return reply;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn refused(reply: &Value) -> bool {
    reply["result"]["isError"] == true
}

/// `toolgate rules add … --store` in `ws`, as a person would from any
/// host; the saved rule's id.
async fn add_store_rule(ws: &Ws, args: &[&str]) -> String {
    let mut all = vec!["rules", "add"];
    all.extend_from_slice(args);
    all.push("--store");
    let added = ws.run(&all).await;
    let out = common::text(&added.stdout);
    assert_eq!(
        added.status.code(),
        Some(0),
        "{out}{}",
        common::text(&added.stderr)
    );
    let listed = ws.run(&["--json", "rules", "list"]).await;
    let list: Value = serde_json::from_slice(&listed.stdout).unwrap();
    list.as_array()
        .unwrap()
        .iter()
        .filter(|r| r["source"] == "store")
        .map(|r| r["id"].as_i64().unwrap().to_string())
        .next_back()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_saved_in_the_store_apply_in_every_gate_without_an_approver_postgres() {
    let db = format!("toolgate_gate_rules_{}", std::process::id());
    let url = pg::new_database(&db).await;
    let model = server(vec![answer("unused")]).await;
    let ws = postgres_ws(&model, &url).await;
    ws.set_mode("confirm-sensitive");
    std::fs::write(ws.path().join("secret.txt"), "s3cr3t\n").unwrap();
    let worker = Worker::headless(&ws);
    let client = Client::connect(&worker.mcp).await;

    // Nobody to ask: the write is refused, the read runs.
    let reply = client.post(&write_call(2, "first\n")).await.1;
    assert!(refused(&reply), "{reply}");
    assert!(text_of(&reply).contains("needs confirmation"), "{reply}");
    let reply = client.post(&read_call(3, "secret.txt")).await.1;
    assert!(text_of(&reply).contains("s3cr3t"), "{reply}");

    // An allow saved from another process: the worker's gate runs the
    // write without asking anyone.
    let allow = add_store_rule(
        &ws,
        &[
            "--tool",
            "write_file",
            "--path",
            "ruled.txt",
            "--decision",
            "allow",
        ],
    )
    .await;
    let reply = until(&client, &write_call(4, "second\n"), |r| !refused(r)).await;
    assert!(!refused(&reply), "the saved allow did not apply: {reply}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("ruled.txt")).unwrap(),
        "second\n"
    );

    // A deny saved in the store stops a call no one would have been
    // asked about, naming the rule.
    let deny = add_store_rule(
        &ws,
        &[
            "--tool",
            "read_file",
            "--path",
            "secret.txt",
            "--decision",
            "deny",
        ],
    )
    .await;
    let reply = until(&client, &read_call(5, "secret.txt"), refused).await;
    let text = text_of(&reply);
    assert!(
        text.contains(&format!(
            "denied by store rule {deny} (deny read_file path `secret.txt`)"
        )),
        "{reply}"
    );
    assert!(!text.contains("s3cr3t"), "{reply}");

    // Removed: the write is refused again, the read runs again.
    for id in [&allow, &deny] {
        let removed = ws.run(&["rules", "remove", "--store", id]).await;
        assert_eq!(
            removed.status.code(),
            Some(0),
            "{}",
            common::text(&removed.stderr)
        );
    }
    let reply = until(&client, &write_call(6, "third\n"), refused).await;
    assert!(refused(&reply), "{reply}");
    let reply = until(&client, &read_call(7, "secret.txt"), |r| !refused(r)).await;
    assert!(text_of(&reply).contains("s3cr3t"), "{reply}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("ruled.txt")).unwrap(),
        "second\n"
    );
    drop(worker);
    pg::drop_database(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_approval_expires_after_the_configured_timeout() {
    let model = server(vec![answer("unused")]).await;
    let ws = Ws::new(&model);
    ws.set_mode("confirm-sensitive");
    let config = ws.path().join("toolgate.yaml");
    let yaml = std::fs::read_to_string(&config).unwrap();
    // Zero is refused when the configuration is read, naming the key.
    std::fs::write(
        &config,
        format!("{yaml}store:\n  approval_timeout_secs: 0\n"),
    )
    .unwrap();
    let listed = ws.run(&["tools", "list"]).await;
    assert_ne!(listed.status.code(), Some(0));
    let stderr = common::text(&listed.stderr);
    assert!(
        stderr.contains("`store.approval_timeout_secs`: invalid value: integer `0`"),
        "{stderr}"
    );

    std::fs::write(
        &config,
        format!("{yaml}store:\n  approval_timeout_secs: 1\n"),
    )
    .unwrap();
    let worker = Worker::spawn(&ws, &[]);
    let client = Client::connect(&worker.mcp).await;
    let started = Instant::now();
    let reply = tokio::time::timeout(
        Duration::from_secs(30),
        client.post(&write_call(2, "never\n")),
    )
    .await
    .expect("the approval did not expire")
    .1;
    assert!(refused(&reply), "{reply}");
    assert!(
        text_of(&reply).contains("within 1s, so it expired"),
        "{reply}"
    );
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert!(!ws.path().join("ruled.txt").exists());
}

/// "Allow for the session" answered for a call on worker 1 (through worker
/// 2's page) covers the client's next such call on worker 2 too.
async fn a_session_allow_holds_on_every_worker(ws: &Ws) {
    let (one, two) = (Worker::spawn(ws, &[]), Worker::spawn(ws, &[]));
    let client = Client::connect(&one.mcp).await;
    let call = tokio::spawn(async move { client.post(&write_call(2, "first\n")).await.1 });
    let page = Page::sign_in(&two.page).await;
    let id = card_on(&page).await;
    let (status, body) = page.answer(&id, "session").await;
    assert_eq!(status, 200, "{body}");
    let reply = tokio::time::timeout(Duration::from_secs(60), call)
        .await
        .unwrap()
        .unwrap();
    assert!(!refused(&reply), "{reply}");

    let client = Client::connect(&two.mcp).await;
    let reply = tokio::time::timeout(
        Duration::from_secs(30),
        client.post(&write_call(3, "second\n")),
    )
    .await
    .expect("worker 2 asked although the client allowed the tool for its session")
    .1;
    assert!(!refused(&reply), "{reply}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("ruled.txt")).unwrap(),
        "second\n"
    );
    assert!(page.approvals().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_allow_holds_on_every_worker_sqlite() {
    on_sqlite(async |ws| a_session_allow_holds_on_every_worker(ws).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_allow_holds_on_every_worker_postgres() {
    on_postgres("toolgate_session_allow", async |ws| {
        a_session_allow_holds_on_every_worker(ws).await;
    })
    .await;
}
