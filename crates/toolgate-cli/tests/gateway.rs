//! The team deployment of docs/deployment.md as whole processes: one
//! `PostgreSQL`, `toolgate store migrate`, three `toolgate mcp serve --http`
//! workers behind `HAProxy` running the page's own example configuration
//! (`.ci/haproxy.sh`), 64 MCP clients making 50 calls each — reads, and
//! appends that need a person's approval, each with an idempotency key —
//! and one worker killed with `SIGKILL` in the middle. Then:
//!
//! - every call got an answer (after retrying, with the same key, what
//!   failed to reach a worker or came back retryable);
//! - every append's line is in its file exactly once (at most once for a
//!   call answered "may have run", which is counted and reported);
//! - the audit in `PostgreSQL` holds one `executed` row per line written,
//!   and as many read rows as reads ran;
//! - approvals were answered through one worker's UI for calls held by the
//!   others;
//! - a session started on one worker host is listed and resumed on another.
//!
//! Needs `PostgreSQL` (`TOOLGATE_TEST_PG_URL`, from `.ci/pg.sh start`) and
//! `HAProxy` (Debian's `haproxy`); `.ci/run` provides both. Without either the
//! test fails, saying so.
//!
//! The workers must be stateless (issue 30: no session affinity, approvals
//! and idempotency keys in the store). To develop against a toolgate whose
//! workers are not, `TOOLGATE_GATEWAY_AFFINITY=1` puts `HAProxy`'s stickiness
//! on `Mcp-Session-Id`, answers each approval through the worker holding it,
//! and does not ask for cross-worker approvals; without it, such a toolgate
//! fails the test at once with that advice.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "test code: a failed unwrap is a failed test; the figures of the run go to stderr"
)]

#[path = "common/pg.rs"]
mod pg;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pg::{connect, new_database};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

mod common;
#[path = "gateway/mcp_http.rs"]
mod mcp_http;

use mcp_http::{IDEMPOTENCY_KEY, Mcp};

const WORKERS: usize = 3;
const CLIENTS: usize = 64;
const CALLS: usize = 50;
/// Every fifth call of a client is an append that needs approval.
const WRITE_EVERY: usize = 5;
/// The worker killed in the middle (not the one whose UI answers).
const VICTIM: usize = 1;
/// The worker whose UI answers every approval (stateless mode).
const APPROVING_UI: usize = 0;
const TOKEN: &str = "gateway-test-token-0123456789abcdef";
const HELLO: &str = "hello from the shared workspace\n";
/// How long the whole load may take before the test gives up and says
/// what was still open.
const LOAD_DEADLINE: Duration = Duration::from_secs(120);

/// What each client is doing now, and the approver's last troubles: the
/// message when the load does not finish in time.
static CLIENT_STATE: Mutex<BTreeMap<usize, String>> = Mutex::new(BTreeMap::new());
static APPROVER_TROUBLE: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn stuck() -> String {
    let state = CLIENT_STATE.lock().unwrap();
    let trouble = APPROVER_TROUBLE.lock().unwrap();
    let clients: Vec<String> = state
        .iter()
        .filter(|(_, s)| !s.starts_with("done"))
        .take(8)
        .map(|(c, s)| format!("client {c}: {s}"))
        .collect();
    let last: Vec<&String> = trouble.iter().rev().take(8).collect();
    format!(
        "clients not done, e.g.:\n{}\napprover's last troubles: {last:?}\n(an append waits \
         for its approval: without TOOLGATE_GATEWAY_AFFINITY=1 the approver answers only \
         through w{}'s page, which must list the calls every worker holds)",
        clients.join("\n"),
        APPROVING_UI + 1
    )
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn check_haproxy() {
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .chain([PathBuf::from("/usr/sbin")])
        .any(|dir| dir.join("haproxy").is_file());
    assert!(
        found,
        "haproxy is not installed: the gateway test runs the workers behind it. \
         Install Debian's haproxy (apt-get install haproxy) or run .ci/run"
    );
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A child process killed when the test ends, pass or fail, with what it
/// wrote on stderr kept for failure messages.
struct Proc {
    name: String,
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl Proc {
    /// Spawns `cmd` (stderr piped); each stderr line is kept and offered to
    /// `watch`, whose non-`None` answers are sent on the returned channel.
    fn spawn(
        name: &str,
        mut cmd: Command,
        watch: impl Fn(&str) -> Option<String> + Send + 'static,
    ) -> (Self, std::sync::mpsc::Receiver<String>) {
        cmd.stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let kept = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(found) = watch(&line) {
                    let _ = tx.send(found);
                }
                kept.lock().unwrap().push(line);
            }
        });
        (
            Self {
                name: name.to_owned(),
                child,
                log,
            },
            rx,
        )
    }

    /// The last lines of its stderr, and whether (how) it exited.
    fn report(&mut self) -> String {
        let status = match self.child.try_wait() {
            Ok(Some(status)) => format!("exited ({status})"),
            _ => "running".to_owned(),
        };
        let log = self.log.lock().unwrap();
        let tail: Vec<&str> = log
            .iter()
            .rev()
            .take(30)
            .rev()
            .map(String::as_str)
            .collect();
        format!(
            "--- {} ({status}), last stderr lines:\n{}",
            self.name,
            tail.join("\n")
        )
    }

    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One `toolgate mcp serve --http` and its approval page.
struct Worker {
    proc: Proc,
    /// `http://127.0.0.1:PORT` (the MCP endpoint is `/mcp`).
    base: String,
    /// The approval page's sign-in URL (token included).
    ui: String,
}

/// The first `http://…` in `line`, without what follows it.
fn url_in(line: &str) -> Option<String> {
    let start = line.find("http://")?;
    let url: String = line[start..]
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '"' && *c != '\'')
        .collect();
    Some(url)
}

fn start_worker(setup: &Setup, index: usize) -> Worker {
    let name = format!("worker w{}", index + 1);
    let mut cmd = setup.toolgate(index);
    cmd.args([
        "mcp",
        "serve",
        "--http",
        "127.0.0.1:0",
        "--token-env",
        "GATEWAY_TEST_TOKEN",
        "--approver",
        "ui",
        "--ui-addr",
        "127.0.0.1:0",
    ])
    .env("GATEWAY_TEST_TOKEN", TOKEN);
    let (mut proc, lines) = Proc::spawn(&name, cmd, |line| {
        if line.contains("listening on") {
            url_in(line).map(|u| format!("mcp {u}"))
        } else if line.contains("asked at") {
            url_in(line).map(|u| format!("ui {u}"))
        } else {
            None
        }
    });
    let (mut base, mut ui) = (None, None);
    let deadline = Instant::now() + Duration::from_secs(60);
    while base.is_none() || ui.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(found) => {
                if let Some(url) = found.strip_prefix("mcp ") {
                    base = Some(url.trim_end_matches("/mcp").to_owned());
                } else if let Some(url) = found.strip_prefix("ui ") {
                    ui = Some(url.to_owned());
                }
            }
            Err(wait) => panic!(
                "{name} did not say where it listens (its MCP endpoint and its approval page) \
                 within 60 s ({wait})\n{}",
                proc.report()
            ),
        }
    }
    Worker {
        proc,
        base: base.unwrap(),
        ui: ui.unwrap(),
    }
}

/// The shared workspace, the worker hosts' homes, the database.
struct Setup {
    dir: toolgate_test::TempHome,
    db_url: String,
}

impl Setup {
    fn workspace(&self) -> &Path {
        self.dir.workspace()
    }

    /// The home of worker host `index`: each host has its own, as on
    /// separate machines; only the workspace (a shared volume) and the
    /// database are shared.
    fn home(&self, index: usize) -> PathBuf {
        let home = self.dir.root().join(format!("host{}", index + 1));
        std::fs::create_dir_all(&home).unwrap();
        home
    }

    /// `toolgate` as host `index` runs it: its home, the shared workspace.
    fn toolgate(&self, index: usize) -> Command {
        let mut cmd = self.dir.command(env!("CARGO_BIN_EXE_toolgate"));
        cmd.env("HOME", self.home(index))
            .env("TOOLGATE_TRUST_WORKSPACE", "1")
            .env("GATEWAY_PG_PASSWORD", "not-checked-by-a-trust-server")
            .env("TEST_LLM_KEY", "sk-gateway-test");
        cmd
    }
}

/// What one call came to.
#[derive(Debug, Clone)]
struct Outcome {
    client: usize,
    call: usize,
    kind: Kind,
    /// The final answer's text, or why there was none.
    text: String,
    /// Whether the final answer was a success.
    ok: bool,
    /// No answer at all (gave up, or a failure that is not retryable).
    failed: bool,
    /// Answered "may have run" (its worker died while running it).
    maybe_ran: bool,
    /// Requests sent for it beyond the first.
    retries: usize,
    /// The worker that gave the final answer (`HAProxy`'s header).
    worker: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read,
    Time,
    Append,
}

fn kind_of(call: usize) -> Kind {
    match call % WRITE_EVERY {
        0 => Kind::Append,
        1 | 3 => Kind::Read,
        _ => Kind::Time,
    }
}

/// The line call `call` of client `client` appends, and its file.
fn line_of(client: usize, call: usize) -> (String, String) {
    (
        format!("gw c{client:02} n{call:02}"),
        format!("out/c{client:02}.txt"),
    )
}

/// The arguments of an append, keys in sorted order: the audit's
/// `args_sha256` is the digest of the arguments as JSON, and sorted keys
/// are how `serde_json` writes a map whether or not it keeps their order.
fn append_args(client: usize, call: usize) -> Value {
    let (line, path) = line_of(client, call);
    json!({"content": format!("{line}\n"), "mode": "append", "path": path})
}

fn sha256_hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    Sha256::digest(bytes)
        .iter()
        .fold(String::new(), |mut hex, b| {
            let _ = write!(hex, "{b:02x}");
            hex
        })
}

/// Whether an error says the call may have run (its worker died while
/// running it), in any of the ways one would put it.
fn says_may_have_run(text: &str) -> bool {
    let text = text.to_lowercase();
    [
        "may have run",
        "may have been run",
        "might have run",
        "may already have run",
    ]
    .iter()
    .any(|words| text.contains(words))
}

/// One MCP client's 50 calls, each retried until it has an answer.
async fn client_run(
    index: usize,
    http: reqwest::Client,
    url: String,
    done: Arc<AtomicUsize>,
    halfway: Arc<tokio::sync::Notify>,
) -> Vec<Outcome> {
    let mut outcomes = Vec::with_capacity(CALLS);
    let mut mcp: Option<Mcp> = None;
    let run = std::process::id();
    for call in 0..CALLS {
        let kind = kind_of(call);
        let (tool, args, meta) = match kind {
            Kind::Read => ("read_file", json!({"path": "hello.txt"}), None),
            Kind::Time => ("get_datetime", json!({}), None),
            Kind::Append => (
                "write_file",
                append_args(index, call),
                Some(json!({IDEMPOTENCY_KEY: format!("gw-{run}-c{index:02}-n{call:02}")})),
            ),
        };
        let mut outcome = Outcome {
            client: index,
            call,
            kind,
            text: String::new(),
            ok: false,
            failed: true,
            maybe_ran: false,
            retries: 0,
            worker: None,
        };
        let mut attempts = 0;
        loop {
            attempts += 1;
            CLIENT_STATE.lock().unwrap().insert(
                index,
                format!(
                    "call {call} ({tool}), attempt {attempts}, last: {}",
                    outcome.text
                ),
            );
            if attempts > 60 {
                outcome.text = format!("gave up after 60 attempts; last: {}", outcome.text);
                break;
            }
            if attempts > 1 {
                outcome.retries += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            if mcp.is_none() {
                match Mcp::connect(&http, &url, TOKEN).await {
                    Ok(session) => mcp = Some(session),
                    Err(failure) => {
                        outcome.text = format!("connect: {failure}");
                        if failure.is_retryable() {
                            continue;
                        }
                        break;
                    }
                }
            }
            let session = mcp.as_mut().unwrap();
            match session.call(tool, &args, meta.as_ref()).await {
                Ok(answer) if answer.is_retryable() => {
                    outcome.text = format!("retryable result: {}", answer.text());
                }
                Ok(answer) => {
                    outcome.text = answer.text();
                    outcome.ok = !answer.is_error();
                    outcome.failed = false;
                    outcome.maybe_ran = answer.is_error() && says_may_have_run(&outcome.text);
                    outcome.worker = answer.worker;
                    break;
                }
                Err(failure) if failure.is_lost_session() => {
                    // The worker that kept this session in memory is gone.
                    outcome.text = failure.to_string();
                    mcp = None;
                }
                Err(failure) if failure.is_retryable() => {
                    outcome.text = failure.to_string();
                }
                Err(failure) => {
                    outcome.text = failure.to_string();
                    break;
                }
            }
        }
        outcomes.push(outcome);
        if call + 1 == CALLS {
            CLIENT_STATE
                .lock()
                .unwrap()
                .insert(index, "done".to_owned());
        }
        if done.fetch_add(1, Ordering::SeqCst) + 1 == CLIENTS * CALLS / 2 {
            halfway.notify_one();
        }
    }
    outcomes
}

/// A signed-in session on one worker's approval page.
struct Ui {
    index: usize,
    origin: String,
    cookie: String,
}

async fn sign_in(http: &reqwest::Client, index: usize, url: &str) -> Ui {
    let response = http
        .get(url)
        .send()
        .await
        .unwrap_or_else(|e| panic!("the approval page of w{} ({url}): {e}", index + 1));
    assert_eq!(
        response.status().as_u16(),
        303,
        "signing in to the approval page of w{} ({url})",
        index + 1
    );
    let cookie = response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|v| {
            v.split(';')
                .next()
                .filter(|c| c.starts_with("toolgate_ui="))
        })
        .unwrap_or_else(|| panic!("the approval page of w{} set no cookie", index + 1))
        .to_owned();
    let origin = url.split("/?").next().unwrap().to_owned();
    Ui {
        index,
        origin,
        cookie,
    }
}

impl Ui {
    async fn pending(&self, http: &reqwest::Client) -> Option<Vec<Value>> {
        let response = http
            .get(format!("{}/api/approvals", self.origin))
            .header("cookie", &self.cookie)
            .send()
            .await
            .ok()?;
        serde_json::from_slice(&response.bytes().await.ok()?).ok()
    }

    async fn allow(&self, http: &reqwest::Client, id: &str) -> u16 {
        http.post(format!("{}/api/approvals/{id}", self.origin))
            .header("cookie", &self.cookie)
            .header("origin", &self.origin)
            .header("content-type", "application/json")
            .body(json!({"answer": "allow", "seen": true}).to_string())
            .send()
            .await
            .map_or(0, |r| r.status().as_u16())
    }
}

/// What the approver did: for each append (by its line), the worker whose
/// UI allowed it.
#[derive(Debug, Default)]
struct Approved {
    by_line: HashMap<String, usize>,
    refused: Vec<String>,
}

/// A person at the approval pages, allowing every pending append. When
/// the workers share their approvals, only worker `APPROVING_UI`'s page is
/// used: every call, whichever worker holds it, must be listed and answered
/// there. Otherwise each live worker's page answers its own calls (an
/// approval's id is then only unique per worker). Polls until `stop`.
async fn approver(
    http: reqwest::Client,
    uis: Vec<Ui>,
    alive: Arc<Vec<AtomicBool>>,
    shared: bool,
    stop: Arc<AtomicBool>,
) -> Approved {
    let line = regex::Regex::new(r"gw c\d\d n\d\d").unwrap();
    let mut approved = Approved::default();
    let mut answered: HashSet<(usize, String)> = HashSet::new();
    while !stop.load(Ordering::SeqCst) {
        for ui in &uis {
            if !alive[ui.index].load(Ordering::SeqCst) || (shared && ui.index != APPROVING_UI) {
                continue;
            }
            let Some(pending) = ui.pending(&http).await else {
                APPROVER_TROUBLE
                    .lock()
                    .unwrap()
                    .push(format!("listing the approvals of w{} failed", ui.index + 1));
                continue;
            };
            for item in pending {
                let Some(id) = item["id"].as_str() else {
                    continue;
                };
                let text = item.to_string();
                // The card's diff may show the file's earlier lines as
                // context: the line being appended is the client's last.
                let Some(found) = line.find_iter(&text).map(|m| m.as_str()).max() else {
                    approved
                        .refused
                        .push(format!("an approval that is not one of ours: {text}"));
                    continue;
                };
                let key = (ui.index, id.to_owned());
                if answered.contains(&key) {
                    continue;
                }
                let status = ui.allow(&http, id).await;
                if status == 200 {
                    answered.insert(key);
                    approved.by_line.insert(found.to_owned(), ui.index);
                } else {
                    APPROVER_TROUBLE.lock().unwrap().push(format!(
                        "allowing {id} through w{}: HTTP {status}",
                        ui.index + 1
                    ));
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    approved
}

/// Sends SIGTERM (a drain) to `proc` and waits for it to exit.
fn terminate(proc: &mut Proc) {
    let pid = proc.child.id().to_string();
    let status = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(status.success(), "kill -TERM {pid}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = proc.child.try_wait().unwrap() {
            assert!(
                status.success(),
                "a drained worker exits with success\n{}",
                proc.report()
            );
            return;
        }
        assert!(
            Instant::now() < deadline,
            "did not exit within 60 s of SIGTERM\n{}",
            proc.report()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_behind_haproxy_survive_a_killed_worker() {
    check_haproxy();
    let affinity = std::env::var("TOOLGATE_GATEWAY_AFFINITY").is_ok_and(|v| v == "1");
    let db = format!("toolgate_gateway_{}", std::process::id());
    let db_url = new_database(&db).await;
    let model = common::server(vec![
        common::answer("Started on host 1."),
        common::answer("Resumed on host 3."),
    ])
    .await;

    let dir = toolgate_test::TempHome::builder()
        .workspace_dir("workspace")
        .build()
        .unwrap();
    std::fs::write(dir.workspace().join("hello.txt"), HELLO).unwrap();
    std::fs::write(
        dir.workspace().join("toolgate.yaml"),
        format!(
            "store:\n  url: {db_url}\n  password_env: GATEWAY_PG_PASSWORD\n\
             confirmation:\n  mode: confirm-sensitive\n\
             llm:\n  model: scripted\n  base_url: {}/v1\n  stream: false\n  max_retries: 0\n  \
             api_key_env: TEST_LLM_KEY\n",
            model.uri()
        ),
    )
    .unwrap();
    let setup = Setup { dir, db_url };

    // The schema, once, from one host.
    let out = common::output({
        let mut cmd = setup.toolgate(0);
        cmd.args(["store", "migrate"]);
        cmd
    })
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "toolgate store migrate: {}",
        common::text(&out.stderr)
    );

    let mut workers: Vec<Worker> = (0..WORKERS).map(|i| start_worker(&setup, i)).collect();
    let http = Mcp::http_client(Duration::from_secs(120));

    // The workers must be the stateless ones of issue 30.
    let ready = http
        .get(format!("{}/readyz", workers[0].base))
        .send()
        .await
        .map(|r| r.status().as_u16());
    match (ready, affinity) {
        (Ok(200), _) | (Ok(_), true) => {}
        (Ok(code), false) => panic!(
            "GET /readyz of a worker answered {code}, not 200: this toolgate's `mcp serve \
             --http` has no unauthenticated readiness check, and keeps MCP sessions and \
             approvals in memory, so a load balancer without affinity cannot spread its \
             clients (issue 30, stateless workers). To develop this test against it, set \
             TOOLGATE_GATEWAY_AFFINITY=1"
        ),
        (Err(e), _) => panic!(
            "GET /readyz of w1 failed: {e}\n{}",
            workers[0].proc.report()
        ),
    }

    // HAProxy with the configuration of docs/deployment.md.
    let front = free_port();
    let mut haproxy_cmd = Command::new(repo().join(".ci/haproxy.sh"));
    haproxy_cmd
        .arg("run")
        .arg(setup.dir.root().join("haproxy"))
        .arg(front.to_string())
        .args(
            workers
                .iter()
                .map(|w| w.base.trim_start_matches("http://").to_owned()),
        )
        .env("HAPROXY_AFFINITY", if affinity { "1" } else { "0" });
    let (mut haproxy, _) = Proc::spawn("haproxy", haproxy_cmd, |_| None);
    let url = format!("http://127.0.0.1:{front}/mcp");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match Mcp::connect(&http, &url, TOKEN).await {
            Ok(_) => break,
            Err(failure) => {
                assert!(
                    haproxy.alive(),
                    "haproxy exited: {failure}\n{}",
                    haproxy.report()
                );
                assert!(
                    Instant::now() < deadline,
                    "no MCP session through HAProxy within 30 s: {failure}\n{}\n{}",
                    haproxy.report(),
                    workers[0].proc.report()
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }

    // The approver, at every page (the killed worker's page goes with it).
    let ui_http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let mut uis = Vec::new();
    for (i, worker) in workers.iter().enumerate() {
        uis.push(sign_in(&ui_http, i, &worker.ui).await);
    }
    let alive: Arc<Vec<AtomicBool>> =
        Arc::new((0..WORKERS).map(|_| AtomicBool::new(true)).collect());
    let stop = Arc::new(AtomicBool::new(false));
    let approving = tokio::spawn(approver(
        ui_http.clone(),
        uis,
        Arc::clone(&alive),
        !affinity,
        Arc::clone(&stop),
    ));

    // The load, and the kill halfway through it.
    let started = Instant::now();
    let done = Arc::new(AtomicUsize::new(0));
    let halfway = Arc::new(tokio::sync::Notify::new());
    let clients: Vec<_> = (0..CLIENTS)
        .map(|i| {
            tokio::spawn(client_run(
                i,
                http.clone(),
                url.clone(),
                Arc::clone(&done),
                Arc::clone(&halfway),
            ))
        })
        .collect();
    let killed_at = tokio::select! {
        () = halfway.notified() => {
            alive[VICTIM].store(false, Ordering::SeqCst);
            workers[VICTIM].proc.child.kill().unwrap();
            workers[VICTIM].proc.child.wait().unwrap();
            done.load(Ordering::SeqCst)
        }
        () = tokio::time::sleep(LOAD_DEADLINE) => {
            panic!(
                "half the calls ({} of {}) were not answered within {LOAD_DEADLINE:?}\n{}",
                done.load(Ordering::SeqCst),
                CLIENTS * CALLS,
                reports(&mut workers, &mut haproxy)
            );
        }
    };
    let all = futures_join(clients);
    let outcomes: Vec<Outcome> = match tokio::time::timeout(LOAD_DEADLINE, all).await {
        Ok(outcomes) => outcomes,
        Err(elapsed) => panic!(
            "the calls were not all answered within {LOAD_DEADLINE:?} ({elapsed}: {} of {} done)\n{}",
            done.load(Ordering::SeqCst),
            CLIENTS * CALLS,
            reports(&mut workers, &mut haproxy)
        ),
    };
    let load_time = started.elapsed();
    stop.store(true, Ordering::SeqCst);
    let approved = approving.await.unwrap();
    for (i, worker) in workers.iter_mut().enumerate() {
        if i != VICTIM {
            assert!(
                worker.proc.alive(),
                "a worker that was not killed died\n{}",
                worker.proc.report()
            );
        }
    }

    // Every call has an answer.
    assert_eq!(outcomes.len(), CLIENTS * CALLS);
    let failed: Vec<&Outcome> = outcomes.iter().filter(|o| o.failed).collect();
    assert!(
        failed.is_empty(),
        "{} calls got no answer, e.g. {:#?}\n{}",
        failed.len(),
        &failed[..failed.len().min(5)],
        reports(&mut workers, &mut haproxy)
    );
    assert!(approved.refused.is_empty(), "{:?}", approved.refused);
    for o in &outcomes {
        match o.kind {
            Kind::Read => assert!(o.ok && o.text == HELLO, "a read: {o:?}"),
            Kind::Time => assert!(o.ok && !o.text.is_empty(), "get_datetime: {o:?}"),
            Kind::Append => assert!(o.ok || o.maybe_ran, "an append: {o:?}"),
        }
    }

    // Every append's line is in its file once; "may have run" at most once.
    let mut lines_in_files: HashMap<String, usize> = HashMap::new();
    for client in 0..CLIENTS {
        let (_, path) = line_of(client, 0);
        let text = std::fs::read_to_string(setup.workspace().join(&path)).unwrap_or_default();
        for line in text.lines() {
            *lines_in_files.entry(line.to_owned()).or_default() += 1;
        }
    }
    let mut maybe_ran = 0;
    // By the digest of its arguments: (audit rows wanted, the line, the
    // worker that answered). One row per append that ran or may have run:
    // `executed`, or `interrupted` when its worker died before its row was
    // kept (written by the worker that settled it).
    let mut expected: BTreeMap<String, (usize, String, Option<String>)> = BTreeMap::new();
    for o in outcomes.iter().filter(|o| o.kind == Kind::Append) {
        let (line, _) = line_of(o.client, o.call);
        let times = lines_in_files.remove(&line).unwrap_or(0);
        if o.maybe_ran {
            maybe_ran += 1;
            assert!(
                times <= 1,
                "`{line}` (answered may-have-run) is in its file {times} times"
            );
        } else {
            assert_eq!(times, 1, "`{line}` is in its file {times} times: {o:?}");
        }
        let rows = if o.maybe_ran { 1 } else { times };
        expected.insert(
            sha256_hex(append_args(o.client, o.call).to_string().as_bytes()),
            (rows, line, o.worker.clone()),
        );
    }
    assert!(
        lines_in_files.is_empty(),
        "lines nobody asked for: {lines_in_files:?}"
    );

    // Approvals: every append that ran was allowed through a page; with
    // shared approvals, some through the page of a worker other than the
    // one holding the call.
    let writes: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| o.kind == Kind::Append && o.ok)
        .collect();
    let mut cross = 0;
    for o in &writes {
        let (line, _) = line_of(o.client, o.call);
        let by = approved.by_line.get(&line);
        if let (Some(by), Some(worker)) = (by, &o.worker)
            && *worker != format!("w{}", by + 1)
        {
            cross += 1;
        }
    }
    if !affinity {
        assert!(
            cross > 0,
            "no call was allowed through another worker's page than the one holding it \
             ({} appends; did HAProxy set X-Toolgate-Worker?)",
            writes.len()
        );
    }
    let served: BTreeMap<String, usize> = outcomes.iter().fold(BTreeMap::new(), |mut counts, o| {
        *counts
            .entry(o.worker.clone().unwrap_or_else(|| "?".to_owned()))
            .or_default() += 1;
        counts
    });

    // A session started on host 1 is listed and resumed on host 3.
    let out = common::output({
        let mut cmd = setup.toolgate(0);
        cmd.args(["run", "Where are you?"]);
        cmd
    })
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", common::text(&out.stderr));
    assert!(common::text(&out.stdout).contains("Started on host 1."));
    let out = common::output({
        let mut cmd = setup.toolgate(2);
        cmd.args(["--json", "sessions", "list"]);
        cmd
    })
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", common::text(&out.stderr));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
    let id = list[0]["id"].as_str().unwrap().to_owned();
    let out = common::output({
        let mut cmd = setup.toolgate(2);
        cmd.args(["sessions", "resume", &id, "And now?"]);
        cmd
    })
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", common::text(&out.stderr));
    assert!(common::text(&out.stdout).contains("Resumed on host 3."));

    // The survivors drain on SIGTERM, writing what their audit has queued.
    drop(haproxy);
    for (i, worker) in workers.iter_mut().enumerate() {
        if i != VICTIM {
            terminate(&mut worker.proc);
        }
    }

    // The audit: one executed row per line written, none for the rest.
    let client = connect(&setup.db_url).await;
    let rows = client
        .query(
            "SELECT args_sha256, COUNT(*) FROM audit WHERE tool = 'write_file' \
             AND decision IN ('executed', 'interrupted') GROUP BY args_sha256",
            &[],
        )
        .await
        .unwrap();
    let mut audited: HashMap<String, usize> = rows
        .iter()
        .map(|r| {
            (
                r.get::<_, String>(0),
                usize::try_from(r.get::<_, i64>(1)).unwrap(),
            )
        })
        .collect();
    let mut wrong = Vec::new();
    for (digest, (wanted, line, worker)) in &expected {
        let rows = audited.remove(digest).unwrap_or(0);
        if rows != *wanted {
            wrong.push(format!(
                "`{line}`: {rows} audit rows, {wanted} wanted, answered by {worker:?}"
            ));
        }
    }
    assert!(
        wrong.is_empty() && audited.is_empty(),
        "the audit does not hold one row per append that may have run (w{} was killed): \
         {} wrong, e.g. {:?}; rows of no append of ours: {:?}",
        VICTIM + 1,
        wrong.len(),
        &wrong[..wrong.len().min(5)],
        audited.keys().take(5).collect::<Vec<_>>()
    );
    let reads_answered = outcomes.iter().filter(|o| o.kind != Kind::Append).count();
    let reads_retried: usize = outcomes
        .iter()
        .filter(|o| o.kind != Kind::Append)
        .map(|o| o.retries)
        .sum();
    let read_rows = usize::try_from(
        client
            .query_one(
                "SELECT COUNT(*) FROM audit WHERE tool IN ('read_file', 'get_datetime') \
                 AND decision = 'executed'",
                &[],
            )
            .await
            .unwrap()
            .get::<_, i64>(0),
    )
    .unwrap();
    // A read sent to the killed worker may have run there unanswered: at
    // most one row more per retry.
    let victim = format!("w{}", VICTIM + 1);
    let reads_by_victim = outcomes
        .iter()
        .filter(|o| o.kind != Kind::Append && o.worker.as_deref() == Some(victim.as_str()))
        .count();
    assert!(
        (reads_answered..=reads_answered + reads_retried).contains(&read_rows),
        "{read_rows} executed read rows for {reads_answered} reads answered \
         ({reads_retried} retries; {reads_by_victim} answered by {victim}, killed: fewer rows \
         than answers are audit entries it had not committed yet)"
    );

    let retries: usize = outcomes.iter().map(|o| o.retries).sum();
    eprintln!(
        "gateway: {} calls by {CLIENTS} clients in {load_time:.1?} ({} affinity), w{} killed \
         after {killed_at}; {retries} retries; {maybe_ran} answered may-have-run; \
         {} appends, {cross} allowed through another worker's page; served by {served:?}",
        CLIENTS * CALLS,
        if affinity { "with" } else { "without" },
        VICTIM + 1,
        writes.len(),
    );

    drop(client);
    pg::drop_database(&db).await;
}

/// Every process's stderr tail, for a failure message.
fn reports(workers: &mut [Worker], haproxy: &mut Proc) -> String {
    let mut text: Vec<String> = vec![stuck()];
    text.extend(workers.iter_mut().map(|w| w.proc.report()));
    text.push(haproxy.report());
    text.join("\n")
}

/// The clients' outcomes, in client order.
async fn futures_join(clients: Vec<tokio::task::JoinHandle<Vec<Outcome>>>) -> Vec<Outcome> {
    let mut all = Vec::new();
    for client in clients {
        all.extend(client.await.unwrap());
    }
    all
}
