//! `toolgate mcp serve --http` as a gateway worker, as whole processes:
//! stateless (any worker answers any request of a client), clients told
//! apart by their tokens (tools, mode, audit, limits), `/healthz` and
//! `/readyz`, the drain on SIGTERM and JSON logs. With a store on
//! `PostgreSQL` (`TOOLGATE_TEST_PG_URL`), a client's rate holds across the
//! workers.
//!
//! The Python SDK peer is installed by `.ci/run` into `.ci/venv` (or the
//! `.ci` directory named by `TOOLGATE_MCP_PEERS`). A missing peer fails the
//! test: run `.ci/run`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "common/pg.rs"]
mod pg;

fn peers() -> PathBuf {
    std::env::var_os("TOOLGATE_MCP_PEERS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci"),
        PathBuf::from,
    )
}

fn python() -> PathBuf {
    let path = peers().join("venv/bin/python");
    assert!(
        path.exists(),
        "MCP peer {} is not installed; run `.ci/run` (it installs the pinned peers into .ci/)",
        path.display()
    );
    path
}

struct Ws {
    dir: toolgate_test::TempHome,
}

impl Ws {
    fn new() -> Self {
        let dir = toolgate_test::TempHome::builder()
            .workspace_dir("ws")
            .build()
            .unwrap();
        std::fs::write(dir.workspace().join("hello.txt"), "hello from toolgate\n").unwrap();
        Self { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.workspace().to_path_buf()
    }

    fn config(&self, yaml: &str) {
        std::fs::write(self.root().join("toolgate.yaml"), yaml).unwrap();
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = self.dir.command(env!("CARGO_BIN_EXE_toolgate"));
        cmd.args(args).env("TOOLGATE_TRUST_WORKSPACE", "1");
        cmd
    }
}

/// One `toolgate mcp serve --http 127.0.0.1:0` process, and what it has
/// written on stderr so far. Killed when dropped, pass or fail.
struct Worker {
    child: Child,
    port: u16,
    stderr: Arc<Mutex<Vec<String>>>,
    ended: mpsc::Receiver<()>,
}

impl Worker {
    fn start(ws: &Ws, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut all = vec!["mcp", "serve", "--http", "127.0.0.1:0"];
        all.extend_from_slice(args);
        let mut cmd = ws.cmd(&all);
        cmd.envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (port_tx, port_rx) = mpsc::channel();
        let (ended_tx, ended) = mpsc::channel();
        let lines = BufReader::new(child.stderr.take().unwrap());
        let seen = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in lines.lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix("listening on http://127.0.0.1:") {
                    let port: u16 = url.trim_end_matches("/mcp").parse().unwrap();
                    let _ = port_tx.send(port);
                }
                seen.lock().unwrap().push(line);
            }
            let _ = ended_tx.send(());
        });
        let port = port_rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no listening line: {:?}", stderr.lock().unwrap()));
        Self {
            child,
            port,
            stderr,
            ended,
        }
    }

    fn stderr(&self) -> Vec<String> {
        self.stderr.lock().unwrap().clone()
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer: status, lower-case header lines, body.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }
}

/// One HTTP/1.1 request; `extra` is more header lines, each ending in \r\n.
fn request(port: u16, method: &str, path: &str, body: &str, extra: &str) -> Answer {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = String::new();
    let _ = stream.read_to_string(&mut raw);
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((raw.as_str(), ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {raw:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect::<Vec<_>>();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Answer {
        status,
        headers,
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

fn mcp(port: u16, token: Option<&str>, body: &Value, extra: &str) -> Answer {
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    request(
        port,
        "POST",
        "/mcp",
        &body.to_string(),
        &format!("{auth}{extra}"),
    )
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
}

fn list_tools() -> Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
}

fn call(tool: &str, arguments: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}})
}

/// The text and `isError` of a `tools/call` answer.
fn outcome(answer: &Answer) -> (String, bool) {
    assert_eq!(answer.status, 200, "{answer:?}");
    let result = &answer.json()["result"];
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    (text.to_owned(), result["isError"] == true)
}

fn tool_names(answer: &Answer) -> Vec<String> {
    assert_eq!(answer.status, 200, "{answer:?}");
    let mut names: Vec<String> = answer.json()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

/// A session id as another server would mint it.
const FOREIGN_SESSION: &str = "Mcp-Session-Id: 3f9c2a7e-minted-by-another-worker\r\n\
                               MCP-Protocol-Version: 2025-11-25\r\n";

#[test]
fn one_client_is_served_by_two_workers_on_one_store() {
    let ws = Ws::new();
    let mut a = Worker::start(&ws, &[], &[]);
    let mut b = Worker::start(&ws, &[], &[]);

    // The handshake of a client of an earlier version: answered, and no
    // session is made.
    let init = mcp(a.port, None, &initialize(), "");
    assert_eq!(init.status, 200, "{init:?}");
    assert_eq!(init.header("mcp-session-id"), None, "{init:?}");
    assert_eq!(init.json()["result"]["protocolVersion"], "2025-11-25");

    // Its next requests go to the other worker, and back, carrying a
    // session id some other server minted: all served.
    let read = mcp(
        b.port,
        None,
        &call("read_file", &json!({"path": "hello.txt"})),
        FOREIGN_SESSION,
    );
    assert_eq!(outcome(&read), ("hello from toolgate\n".to_owned(), false));
    let listed = tool_names(&mcp(a.port, None, &list_tools(), FOREIGN_SESSION));
    assert!(listed.contains(&"read_file".to_owned()), "{listed:?}");
    assert_eq!(
        tool_names(&mcp(b.port, None, &list_tools(), FOREIGN_SESSION)),
        listed
    );
    // Ending that session is no failure either.
    let ended = request(a.port, "DELETE", "/mcp", "", FOREIGN_SESSION);
    assert_eq!(ended.status, 200, "{ended:?}");

    // The 2026-07-28 opener is answered.
    let discover = json!({"jsonrpc": "2.0", "id": "d1", "method": "server/discover", "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}}});
    let found = mcp(
        b.port,
        None,
        &discover,
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n",
    );
    assert_eq!(found.status, 200, "{found:?}");
    let versions = found.json()["result"]["supportedVersions"].to_string();
    assert!(
        versions.contains("2026-07-28") && versions.contains("2025-11-25"),
        "{found:?}"
    );

    // The official SDK, which opens with `server/discover`, against each.
    for worker in [&a, &b] {
        let output = Command::new(python())
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/py_client.py"))
            .args(["http", &worker.url()])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let report: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
        assert_eq!(report["protocol_version"], "2026-07-28", "{report}");
        assert_eq!(report["read"]["text"], "hello from toolgate\n", "{report}");
        assert_eq!(report["refused"]["is_error"], true, "{report}");
        // Nobody can be asked over stateless HTTP: a sensitive call is
        // refused, saying how to allow it.
        assert_eq!(report["write"]["is_error"], true, "{report}");
        let why = report["write"]["text"].as_str().unwrap();
        assert!(
            why.contains("stateless HTTP") && why.contains("--approver ui"),
            "{why}"
        );
    }
    assert!(!ws.root().join("new.txt").exists());

    // Both audited into the one store, and no two calls share an id.
    for worker in [&mut a, &mut b] {
        Command::new("kill")
            .args(["-TERM", &worker.child.id().to_string()])
            .status()
            .unwrap();
        assert!(worker.child.wait().unwrap().success());
    }
    let entries = audit_of(&ws);
    let ids: std::collections::BTreeSet<&str> =
        entries.iter().map(|e| e.call_id.as_str()).collect();
    assert_eq!(ids.len(), entries.len(), "{entries:#?}");
    let workers: std::collections::BTreeSet<&str> = ids
        .iter()
        .filter_map(|id| id.strip_prefix("mcp-")?.rsplit_once('-').map(|(w, _)| w))
        .collect();
    assert_eq!(workers.len(), 2, "{ids:?}");
}

const CLIENTS: &str = "mcp:
  http:
    clients:
      - name: ci
        token_env: CI_TOKEN
        tools: [read_file, write_file, list_files]
        mode: yolo
      - name: bot
        token_env: BOT_TOKEN
        tools: [read_file, write_file]
      - name: slow
        token_env: SLOW_TOKEN
        tools: [read_file]
        rate_per_minute: 2
";

const TOKENS: &[(&str, &str)] = &[
    ("CI_TOKEN", "ci-token-0123456789"),
    ("BOT_TOKEN", "bot-token-0123456789"),
    ("SLOW_TOKEN", "slow-token-0123456789"),
];

#[test]
fn clients_are_told_apart_by_their_tokens() {
    let ws = Ws::new();
    ws.config(CLIENTS);
    let mut worker = Worker::start(&ws, &[], TOKENS);
    let port = worker.port;
    let (ci, bot, slow) = (
        Some("ci-token-0123456789"),
        Some("bot-token-0123456789"),
        Some("slow-token-0123456789"),
    );

    // No token, a wrong one, one of another length: 401.
    for token in [None, Some("ci-token-0123456780"), Some("ci")] {
        let refused = mcp(port, token, &list_tools(), "");
        assert_eq!(refused.status, 401, "{token:?}: {refused:?}");
    }
    // Health needs no token.
    assert_eq!(request(port, "GET", "/healthz", "", "").status, 200);
    let ready = request(port, "GET", "/readyz", "", "");
    assert_eq!(
        (ready.status, ready.body.as_str()),
        (200, "ready\n"),
        "{ready:?}"
    );

    // Each its own tools.
    assert_eq!(
        tool_names(&mcp(port, ci, &list_tools(), "")),
        ["list_files", "read_file", "write_file"]
    );
    assert_eq!(
        tool_names(&mcp(port, bot, &list_tools(), "")),
        ["read_file", "write_file"]
    );
    let (text, error) = outcome(&mcp(port, bot, &call("list_files", &json!({})), ""));
    assert!(
        error && text.contains("not available to this client"),
        "{text}"
    );

    // Each its own mode: ci's yolo writes, bot's confirm-sensitive cannot
    // ask anyone and refuses.
    let write = |token, path: &str| {
        let args = json!({"path": path, "content": "x\n"});
        outcome(&mcp(port, token, &call("write_file", &args), ""))
    };
    assert!(!write(ci, "from-ci.txt").1);
    let (text, error) = write(bot, "from-bot.txt");
    assert!(error && text.contains("needs confirmation"), "{text}");
    assert!(ws.root().join("from-ci.txt").exists());
    assert!(!ws.root().join("from-bot.txt").exists());

    // slow may make 2 requests a minute; the third gets 429 with a wait.
    let read = call("read_file", &json!({"path": "hello.txt"}));
    for _ in 0..2 {
        assert!(!outcome(&mcp(port, slow, &read, "")).1);
    }
    let limited = mcp(port, slow, &read, "");
    assert_eq!(limited.status, 429, "{limited:?}");
    let wait: u64 = limited.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=30).contains(&wait), "{limited:?}");
    // The others are not held up by it.
    assert!(!outcome(&mcp(port, bot, &read, "")).1);

    // The audit names the client of each call (flushed at exit).
    Command::new("kill")
        .args(["-TERM", &worker.child.id().to_string()])
        .status()
        .unwrap();
    assert!(worker.child.wait().unwrap().success());
    let entries = audit_of(&ws);
    let by = |client: &str, tool: &str| {
        entries
            .iter()
            .filter(|e| e.client.as_deref() == Some(client) && e.tool == tool)
            .map(|e| e.decision.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(by("ci", "write_file").len(), 1, "{entries:#?}");
    assert_eq!(by("bot", "write_file").len(), 1, "{entries:#?}");
    assert_eq!(by("slow", "read_file").len(), 2, "{entries:#?}");
    assert_eq!(by("bot", "read_file").len(), 1, "{entries:#?}");
    assert!(entries.iter().all(|e| e.client.is_some()), "{entries:#?}");
}

/// The audit entries of the workspace's one `SQLite` store, newest first.
fn audit_of(ws: &Ws) -> Vec<toolgate_store::AuditEntry> {
    use toolgate_store::{AuditFilter, AuditStore as _, SqliteStore};
    let store = find(ws.dir.root(), "toolgate.db");
    assert_eq!(store.len(), 1, "{store:?}");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = SqliteStore::open(&store[0]).unwrap();
        store.recent(&AuditFilter::newest(1000)).await.unwrap()
    })
}

/// Every file named `name` under `dir`.
fn find(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(find(&path, name));
        } else if path.file_name().is_some_and(|n| n == name) {
            found.push(path);
        }
    }
    found
}

/// SIGTERM while a slow call runs (the client's one call allowed in
/// flight: a second gets 429): the worker turns unready and refuses new
/// requests at once, the call in flight is answered, then the process
/// exits 0. Its logs are JSON lines naming the call's client.
#[test]
fn sigterm_drains_calls_in_flight_then_exits() {
    let ws = Ws::new();
    ws.config(
        "mcp:\n  http:\n    clients:\n      - name: ci\n        token_env: CI_TOKEN\n        mode: yolo\n        max_concurrent: 1\n",
    );
    let mut worker = Worker::start(
        &ws,
        &["--drain-timeout", "60", "-v"],
        &[
            ("CI_TOKEN", "ci-token-0123456789"),
            ("TOOLGATE_LOG_FORMAT", "json"),
        ],
    );
    let port = worker.port;
    let token = Some("ci-token-0123456789");

    let slow = std::thread::spawn(move || {
        let args = json!({"command": "touch started && sleep 3 && echo finished"});
        mcp(port, token, &call("run_command", &args), "")
    });
    // The call is in flight once its command has started.
    let started = ws.root().join("started");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !started.exists() {
        assert!(Instant::now() < deadline, "the slow call never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    // One call of this client in flight is all it may have on a worker.
    let busy = mcp(port, token, &list_tools(), "");
    assert_eq!(busy.status, 429, "{busy:?}");
    assert_eq!(busy.header("retry-after"), Some("1"), "{busy:?}");
    Command::new("kill")
        .args(["-TERM", &worker.child.id().to_string()])
        .status()
        .unwrap();
    // Unready as soon as the signal is handled.
    let ready = loop {
        let ready = request(port, "GET", "/readyz", "", "");
        if ready.status != 200 {
            break ready;
        }
        assert!(Instant::now() < deadline, "readyz never turned 503");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!((ready.status, ready.body.as_str()), (503, "draining\n"));
    assert!(
        !slow.is_finished(),
        "the call ended before the drain was seen"
    );
    let refused = mcp(port, token, &list_tools(), "");
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.header("retry-after"), Some("1"), "{refused:?}");
    assert_eq!(request(port, "GET", "/healthz", "", "").status, 200);

    let (text, error) = outcome(&slow.join().unwrap());
    assert!(!error && text.contains("finished"), "{text}");
    assert!(worker.child.wait().unwrap().success());
    worker.ended.recv_timeout(Duration::from_secs(30)).unwrap();

    // Every log line is a JSON object; the call's lines name its client
    // and its call id.
    let lines = worker.stderr();
    let logs: Vec<Value> = lines
        .iter()
        .filter(|l| !l.starts_with("listening on "))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let audit = logs
        .iter()
        .find(|l| l["target"] == "toolgate::audit" && l["tool"] == "run_command")
        .unwrap_or_else(|| panic!("no audit event: {lines:#?}"));
    assert_eq!(audit["client"], "ci", "{audit}");
    let span = audit["spans"]
        .as_array()
        .and_then(|spans| spans.iter().find(|s| s["name"] == "mcp_call"))
        .unwrap_or_else(|| panic!("no call span: {audit}"));
    assert_eq!(span["client"], "ci", "{audit}");
    assert!(
        span["call_id"].as_str().unwrap().starts_with("mcp-"),
        "{audit}"
    );
    // The call finished within the drain: nothing was cut off.
    assert!(
        logs.iter()
            .all(|l| !l.to_string().contains("drain timeout")),
        "{lines:#?}"
    );
    assert!(
        logs.iter().any(|l| l["message"]
            .as_str()
            .is_some_and(|m| m.contains("draining"))),
        "{lines:#?}"
    );
}

/// Two clients with one token cannot be told apart: refused at start, as a
/// configuration error naming the client.
#[test]
fn clients_sharing_a_token_are_refused_at_start() {
    let ws = Ws::new();
    ws.config(
        "mcp:\n  http:\n    clients:\n      - name: ci\n        token_env: CI_TOKEN\n      \
         - name: bot\n        token_env: BOT_TOKEN\n",
    );
    let output = ws
        .cmd(&["mcp", "serve", "--http", "127.0.0.1:0"])
        .env("CI_TOKEN", "same-token-0123456789")
        .env("BOT_TOKEN", "same-token-0123456789")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("MCP client `bot`") && stderr.contains("another client's"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_rate_holds_across_workers_sharing_a_postgres_store() {
    let db = format!("toolgate_rate_{}", std::process::id());
    let url = pg::new_database(&db).await;
    let ws = Ws::new();
    ws.config(&format!("{CLIENTS}store:\n  url: {url}\n"));
    let migrated = ws.cmd(&["store", "migrate"]).output().unwrap();
    assert!(migrated.status.success(), "{migrated:?}");
    let (one, two) = (
        Worker::start(&ws, &[], TOKENS),
        Worker::start(&ws, &[], TOKENS),
    );
    let slow = Some("slow-token-0123456789");
    let read = call("read_file", &json!({"path": "hello.txt"}));
    // Two a minute for the client, wherever its requests land: one on
    // each worker, then both refuse.
    assert!(!outcome(&mcp(one.port, slow, &read, "")).1);
    assert!(!outcome(&mcp(two.port, slow, &read, "")).1);
    for worker in [&one, &two] {
        let limited = mcp(worker.port, slow, &read, "");
        assert_eq!(limited.status, 429, "{limited:?}");
        let wait: u64 = limited.header("retry-after").unwrap().parse().unwrap();
        assert!((1..=30).contains(&wait), "{limited:?}");
    }
    // Another client has its own budget.
    let bot = Some("bot-token-0123456789");
    assert!(!outcome(&mcp(two.port, bot, &read, "")).1);
    drop((one, two));
    pg::drop_database(&db).await;
}
