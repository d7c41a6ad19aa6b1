//! MCP interop with real peers nobody here wrote: the official Python SDK as
//! a client of `toolgate mcp serve`, and `@modelcontextprotocol/server-everything`
//! and `mcp-server-time` as servers for our client.
//!
//! The peers are installed by `.ci/run` into `.ci/venv` and
//! `.ci/node/node_modules` (or the `.ci` directory named by
//! `TOOLGATE_MCP_PEERS`). A missing peer fails the test: run `.ci/run`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The `.ci` directory holding the installed peers.
fn peers() -> PathBuf {
    std::env::var_os("TOOLGATE_MCP_PEERS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci"),
        PathBuf::from,
    )
}

fn peer(relative: &str) -> PathBuf {
    let path = peers().join(relative);
    assert!(
        path.exists(),
        "MCP peer {} is not installed; run `.ci/run` (it installs the pinned peers into .ci/)",
        path.display()
    );
    path
}

fn python() -> PathBuf {
    peer("venv/bin/python")
}
fn everything() -> PathBuf {
    peer("node/node_modules/.bin/mcp-server-everything")
}
fn time_server() -> PathBuf {
    peer("venv/bin/mcp-server-time")
}

fn py_client() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/py_client.py")
}

struct Ws {
    dir: toolgate_test::TempHome,
}

impl Ws {
    /// A workspace `ws/` with `hello.txt`, a home beside it, and
    /// `outside.txt` outside both.
    fn new() -> Self {
        let dir = toolgate_test::TempHome::builder()
            .workspace_dir("ws")
            .build()
            .unwrap();
        std::fs::write(dir.workspace().join("hello.txt"), "hello from toolgate\n").unwrap();
        std::fs::write(dir.root().join("outside.txt"), "secret\n").unwrap();
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
        cmd.args(args);
        // The MCP servers under test are in the workspace file: trust it.
        cmd.env("TOOLGATE_TRUST_WORKSPACE", "1");
        // The peers are installed in the checkout, which may be anywhere the
        // sandbox hides (a clone under /tmp or a home directory): show them.
        let peers = peers().canonicalize().unwrap();
        cmd.env(
            "TOOLGATE_COMMANDS__READABLE",
            format!("[\"{}\"]", peers.display()),
        );
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// `toolgate call TOOL ARGS --mode yolo`, which must succeed: its stdout.
    fn call_yolo(&self, tool: &str, args: &str) -> String {
        let out = self.run(&["call", tool, args, "--mode", "yolo"]);
        assert_eq!(out.status.code(), Some(0), "{tool}: {}", text(&out.stderr));
        text(&out.stdout)
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs the Python SDK client script in `ws` and parses its JSON report.
/// Its environment is the harness's clean one: a `toolgate` it starts over
/// stdio (which gets the SDK's default environment, `HOME` among it) sees
/// the workspace's home, never the caller's.
fn py(ws: &Ws, args: &[&str]) -> Value {
    py_with_stderr(ws, args).0
}

/// [`py`], and what the SDK logged on stderr.
fn py_with_stderr(ws: &Ws, args: &[&str]) -> (Value, String) {
    let output = ws
        .dir
        .command(python())
        .arg(py_client())
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "python client failed:\n{}",
        text(&output.stderr)
    );
    let stdout = text(&output.stdout);
    let report = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("bad JSON from the python client ({e}): {stdout}"));
    (report, text(&output.stderr))
}

/// What the Python client saw of our server, which it reached with
/// `protocol` (2025-11-25 over stdio, 2026-07-28 over stateless HTTP).
fn check_python_report(report: &Value, protocol: &str) {
    assert_eq!(report["protocol_version"], protocol, "{report}");
    let tools = &report["tools"];
    assert_eq!(tools["read_file"]["read_only"], true, "{report}");
    assert_eq!(tools["write_file"]["read_only"], false, "{report}");
    assert_eq!(tools["write_file"]["destructive"], true, "{report}");
    // Every hint goes out, each as the tool declares it: read_file says
    // it is idempotent and stays in the workspace; write_file says nothing
    // about repeating, which reads as not idempotent.
    assert_eq!(tools["read_file"]["destructive"], false, "{report}");
    assert_eq!(tools["read_file"]["idempotent"], true, "{report}");
    assert_eq!(tools["read_file"]["open_world"], false, "{report}");
    assert_eq!(tools["write_file"]["idempotent"], false, "{report}");
    assert_eq!(tools["run_command"]["open_world"], true, "{report}");
    assert_eq!(report["read"]["is_error"], false, "{report}");
    assert_eq!(report["read"]["text"], "hello from toolgate\n");
    assert_eq!(report["refused"]["is_error"], true);
    assert!(
        report["refused"]["text"]
            .as_str()
            .unwrap()
            .contains("leaves the workspace"),
        "{report}"
    );
    assert_eq!(report["unknown"]["is_error"], true);
}

#[test]
fn python_sdk_over_stdio_goes_through_the_gate() {
    let ws = Ws::new();
    let root = ws.root();
    let report = py(
        &ws,
        &[
            "stdio",
            env!("CARGO_BIN_EXE_toolgate"),
            root.to_str().unwrap(),
        ],
    );
    check_python_report(&report, "2025-11-25");
    // No elicitation declared: the sensitive call is refused with a way out.
    assert_eq!(report["write"]["is_error"], true);
    let message = report["write"]["text"].as_str().unwrap();
    assert!(
        message.contains("does not support elicitation") && message.contains("--mode yolo"),
        "{message}"
    );
    assert!(!root.join("new.txt").exists());
}

/// `dont-ask` in the user's config: the server never elicits, even from a
/// client that supports it, and the refusal names the rule to add.
#[test]
fn under_dont_ask_mcp_serve_never_elicits_and_names_the_rule() {
    let ws = Ws::new();
    let root = ws.root();
    let config = ws.dir.home().join(".config/toolgate/config.yaml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "confirmation:\n  mode: dont-ask\n").unwrap();
    let bin = env!("CARGO_BIN_EXE_toolgate");
    let report = py(
        &ws,
        &["stdio", bin, root.to_str().unwrap(), "--elicit", "accept"],
    );
    assert_eq!(report["write"]["is_error"], true, "{report}");
    assert_eq!(report["elicitations"].as_array().unwrap().len(), 0);
    let message = report["write"]["text"].as_str().unwrap();
    assert!(
        message.contains("the mode dont-ask never asks")
            && message
                .contains("toolgate rules add --tool write_file --path new.txt --decision allow"),
        "{message}"
    );
    assert!(!root.join("new.txt").exists());
    // What confirm-sensitive runs unasked still runs.
    assert_eq!(report["read"]["is_error"], false, "{report}");
}

/// `plan` in the user's config: the server refuses what is not read-only
/// without eliciting, tells the client plan mode is on, and runs reads;
/// it offers no plan-mode tool (its mode is the process's).
#[test]
fn under_plan_mcp_serve_refuses_writing_tools_and_runs_reads() {
    let ws = Ws::new();
    let root = ws.root();
    let config = ws.dir.home().join(".config/toolgate/config.yaml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "confirmation:\n  mode: plan\n").unwrap();
    let bin = env!("CARGO_BIN_EXE_toolgate");
    let report = py(
        &ws,
        &["stdio", bin, root.to_str().unwrap(), "--elicit", "accept"],
    );
    assert_eq!(report["write"]["is_error"], true, "{report}");
    assert_eq!(report["elicitations"].as_array().unwrap().len(), 0);
    let message = report["write"]["text"].as_str().unwrap();
    assert!(
        message.contains("plan mode is on") && message.contains("only they can turn plan mode off"),
        "{message}"
    );
    assert!(!message.contains("exit_plan_mode"), "{message}");
    assert!(!root.join("new.txt").exists());
    assert_eq!(report["read"]["is_error"], false, "{report}");
    let tools = report["tools"].to_string();
    assert!(!tools.contains("plan_mode"), "{tools}");
}

#[test]
fn python_sdk_elicitation_confirms_or_cancels_a_sensitive_call() {
    let ws = Ws::new();
    let root = ws.root();
    let bin = env!("CARGO_BIN_EXE_toolgate");
    let declined = py(
        &ws,
        &["stdio", bin, root.to_str().unwrap(), "--elicit", "decline"],
    );
    assert_eq!(declined["write"]["is_error"], true);
    assert_eq!(declined["write"]["text"], "cancelled by user");
    assert_eq!(declined["elicitations"].as_array().unwrap().len(), 1);
    assert!(!root.join("new.txt").exists());

    let accepted = py(
        &ws,
        &["stdio", bin, root.to_str().unwrap(), "--elicit", "accept"],
    );
    assert_eq!(accepted["write"]["is_error"], false, "{accepted}");
    let asked = accepted["elicitations"][0].as_str().unwrap();
    assert!(asked.contains("write_file"), "{asked}");
    assert_eq!(
        std::fs::read_to_string(root.join("new.txt")).unwrap(),
        "written\n"
    );
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for_port(port: u16, child: &mut Child) {
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the server exited before listening"
        );
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "port {port} never opened"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kills the child when the test ends, pass or fail.
struct Reap(Child);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn raw_post(port: u16, auth: Option<&str>) -> String {
    raw_post_body(
        port,
        auth,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        "",
    )
}

/// One HTTP POST to /mcp; `extra` is more header lines, each ending in \r\n.
fn raw_post_body(port: u16, auth: Option<&str>, body: &str, extra: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let auth = auth.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{auth}{extra}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response
}

#[test]
fn python_sdk_over_streamable_http_with_a_bearer_token() {
    let ws = Ws::new();
    // Port 0: the server says which port it took.
    let mut cmd = ws.cmd(&[
        "mcp",
        "serve",
        "--http",
        "127.0.0.1:0",
        "--token-env",
        "MCP_TOKEN",
    ]);
    cmd.env("MCP_TOKEN", "t0ken-for-tests")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut server = Reap(cmd.spawn().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.0.stderr.take().unwrap()),
        &mut first,
    )
    .unwrap();
    let url = first
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("no listening line: {first:?}"))
        .trim_end()
        .to_owned();
    let addr = url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap()
        .to_owned();
    let port: u16 = addr.rsplit_once(':').unwrap().1.parse().unwrap();

    let unauthorized = raw_post(port, None);
    assert!(unauthorized.starts_with("HTTP/1.1 401"), "{unauthorized}");
    let wrong = raw_post(port, Some("nope"));
    assert!(wrong.starts_with("HTTP/1.1 401"), "{wrong}");

    // The 2026-07-28 opener is answered: stateless HTTP serves that
    // version (over stdio it gets method-not-found).
    let probe = raw_post_body(
        port,
        Some("t0ken-for-tests"),
        r#"{"jsonrpc":"2.0","id":"d1","method":"server/discover","params":{"_meta":{
            "io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n",
    );
    assert!(probe.starts_with("HTTP/1.1 200"), "{probe}");
    assert!(
        probe.contains(r#""id":"d1""#) && probe.contains(r#""supportedVersions""#),
        "{probe}"
    );
    // Without the token even the probe is refused.
    let probe = raw_post_body(
        port,
        None,
        r#"{"jsonrpc":"2.0","id":"d1","method":"server/discover"}"#,
        "",
    );
    assert!(probe.starts_with("HTTP/1.1 401"), "{probe}");

    let (report, logged) = py_with_stderr(&ws, &["http", &url, "--token", "t0ken-for-tests"]);
    check_python_report(&report, "2026-07-28");
    assert_eq!(report["write"]["is_error"], true);
    // The session's DELETE at disconnect is answered as the SDK expects
    // (200 or 204; rmcp's 202 made it log a failure).
    assert!(!logged.contains("Session termination failed"), "{logged}");
}

/// Three clients at once on one HTTP server: an approval belongs to the
/// client that gave it, and one client's open question holds up nobody
/// else.
#[test]
fn approvals_belong_to_the_client_that_gave_them() {
    let ws = Ws::new();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    // Elicitation needs a session to carry the question and its answer.
    let mut cmd = ws.cmd(&["mcp", "serve", "--http", &addr, "--sessions"]);
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let mut server = Reap(cmd.spawn().unwrap());
    wait_for_port(port, &mut server.0);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/three_clients.py");
    let output = Command::new(python())
        .arg(script)
        .arg(format!("http://{addr}/mcp"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("bad JSON ({e}): {stdout}"));
    let root = ws.root();

    // B and C were served while A's question was open.
    assert_eq!(report["stalled"], false, "{report}");
    assert_eq!(report["a_still_open"], true, "{report}");
    for read in report["b_reads"].as_array().unwrap() {
        assert_eq!(read["text"], "hello from toolgate\n", "{report}");
    }
    assert_eq!(report["c_read"]["is_error"], false, "{report}");

    // A allowed for its session: both of A's writes ran, asked once.
    assert_eq!(report["a_first"]["is_error"], false, "{report}");
    assert_eq!(report["a_second"]["is_error"], false, "{report}");
    assert_eq!(report["a_asked"].as_array().unwrap().len(), 1, "{report}");
    assert!(root.join("a1.txt").exists() && root.join("a2.txt").exists());
    // What A was asked is the whole description, not JSON.
    let asked = report["a_asked"][0].as_str().unwrap();
    assert!(
        asked.contains("allow `write_file`? it changes files")
            && asked.contains("write a1.txt: creates a new file of 1 line (7 bytes)")
            && asked.contains("+from A"),
        "{asked}"
    );

    // B was asked for each of its own writes, declined, and nothing ran.
    assert_eq!(report["b_asked"].as_array().unwrap().len(), 2, "{report}");
    assert_eq!(report["b_write"]["text"], "cancelled by user", "{report}");
    assert_eq!(report["b_second"]["text"], "cancelled by user", "{report}");
    // C cannot be asked: refused, before and after A's allow.
    for key in ["c_write", "c_second"] {
        assert_eq!(report[key]["is_error"], true, "{report}");
        assert!(
            report[key]["text"]
                .as_str()
                .unwrap()
                .contains("does not support elicitation"),
            "{report}"
        );
    }
    for file in ["b.txt", "b2.txt", "c.txt", "c2.txt"] {
        assert!(!root.join(file).exists(), "{file} was written");
    }
}

#[test]
fn mcp_serve_refuses_a_public_address_without_a_token() {
    let ws = Ws::new();
    let output = ws.run(&["mcp", "serve", "--http", "0.0.0.0:1"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("without a bearer token"),
        "{}",
        text(&output.stderr)
    );
}

fn client_config(ws: &Ws, extra: &str) {
    ws.config(&format!(
        "mcp:\n  servers:\n    everything:\n      command: {}\n      args: [stdio]\n    \
         time:\n      command: {}\n    broken:\n      command: /nonexistent/mcp-server\n{extra}",
        everything().display(),
        time_server().display(),
    ));
}

#[test]
fn remote_tools_are_local_tools_and_a_broken_server_is_skipped() {
    let ws = Ws::new();
    client_config(&ws, "");
    let list = ws.run(&["tools", "list"]);
    assert_eq!(list.status.code(), Some(0), "{}", text(&list.stderr));
    let names = text(&list.stdout);
    for name in [
        "mcp_everything_echo",
        "mcp_everything_get-sum",
        "mcp_time_get_current_time",
        "read_file",
    ] {
        assert!(
            names.lines().any(|l| l.starts_with(name)),
            "{name} missing:\n{names}"
        );
    }
    let warning = text(&list.stderr);
    assert!(
        warning.contains("warning: MCP server `broken` skipped")
            && warning.contains("/nonexistent/mcp-server"),
        "{warning}"
    );

    assert_eq!(
        ws.call_yolo("mcp_everything_echo", r#"{"message":"hi"}"#),
        "Echo: hi\n"
    );

    let sum = ws.call_yolo("mcp_everything_get-sum", r#"{"a":2,"b":40}"#);
    assert!(sum.contains("42"), "{sum}");

    let time = ws.run(&[
        "call",
        "mcp_time_get_current_time",
        r#"{"timezone":"UTC"}"#,
        "--mode",
        "yolo",
        "--json",
    ]);
    let result: Value = serde_json::from_slice(&time.stdout).unwrap();
    assert_eq!(result["success"], true, "{result}");
    assert!(
        result["output"]
            .as_str()
            .unwrap()
            .contains("\"timezone\": \"UTC\"")
    );

    // Remote tools are sensitive by default: no terminal, no yolo → refused.
    let refused = ws.run(&["call", "mcp_everything_echo", r#"{"message":"hi"}"#]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(text(&refused.stderr).contains("needs confirmation"));

    // Arguments are checked against the remote inputSchema before the call.
    let invalid = ws.run(&[
        "call",
        "mcp_everything_echo",
        r#"{"mesage":"hi"}"#,
        "--mode",
        "yolo",
    ]);
    assert_eq!(invalid.status.code(), Some(1));
    assert!(
        text(&invalid.stderr).contains("invalid arguments for `mcp_everything_echo`"),
        "{}",
        text(&invalid.stderr)
    );
}

#[test]
fn mcp_list_shows_states_and_tools() {
    let ws = Ws::new();
    client_config(
        &ws,
        "    off:\n      command: /bin/false\n      enabled: false\n",
    );
    let output = ws.run(&["mcp", "list", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let statuses: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    let by_name = |name: &str| {
        statuses
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing"))
            .clone()
    };
    assert_eq!(by_name("everything")["state"], "connected");
    assert_eq!(by_name("everything")["tools"].as_array().unwrap().len(), 13);
    assert_eq!(by_name("time")["state"], "connected");
    assert_eq!(by_name("broken")["state"], "failed");
    assert!(
        by_name("broken")["reason"]
            .as_str()
            .unwrap()
            .contains("could not run")
    );
    assert_eq!(by_name("off")["state"], "disabled");

    let human = text(&ws.run(&["mcp", "list"]).stdout);
    assert!(
        human.contains("everything (stdio): connected, 13 tools"),
        "{human}"
    );
    assert!(human.contains("  mcp_everything_echo  (echo)"), "{human}");
    assert!(human.contains("broken (stdio): failed:"), "{human}");
}

#[test]
fn enabled_and_disabled_tools_and_trusted_servers() {
    let ws = Ws::new();
    ws.config(&format!(
        "mcp:\n  servers:\n    everything:\n      command: {}\n      args: [stdio]\n      \
         enabled_tools: [echo, get-sum]\n      disabled_tools: [get-sum]\n      trusted: true\n",
        everything().display(),
    ));
    let names = text(&ws.run(&["tools", "list"]).stdout);
    let mcp: Vec<&str> = names.lines().filter(|l| l.starts_with("mcp_")).collect();
    assert_eq!(mcp.len(), 1, "{names}");
    assert!(mcp[0].starts_with("mcp_everything_echo"));
    // Trusted: not sensitive, so it runs without yolo.
    let echo = ws.run(&["call", "mcp_everything_echo", r#"{"message":"ok"}"#]);
    assert_eq!(text(&echo.stdout), "Echo: ok\n", "{}", text(&echo.stderr));
}

#[test]
fn streamable_http_server_everything() {
    let ws = Ws::new();
    let port = free_port();
    let mut cmd = Command::new(everything());
    cmd.arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut server = Reap(cmd.spawn().unwrap());
    wait_for_port(port, &mut server.0);
    ws.config(&format!(
        "mcp:\n  servers:\n    everything:\n      url: http://127.0.0.1:{port}/mcp\n"
    ));
    assert_eq!(
        ws.call_yolo("mcp_everything_echo", r#"{"message":"over http"}"#),
        "Echo: over http\n"
    );
}

/// A private CA and a certificate it signs for 127.0.0.1, made by `openssl`
/// into `dir`: (ca.pem, cert.pem, key.pem).
fn test_certificates(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl (installed by .ci/run)");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            text(&out.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-x509"][..],
            &ec,
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=toolgate test CA",
            ],
        ]
        .concat(),
    );
    openssl(
        &[
            &["req"][..],
            &ec,
            &[
                "-keyout",
                "key.pem",
                "-out",
                "leaf.csr",
                "-subj",
                "/CN=127.0.0.1",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        dir.join("leaf.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "cert.pem",
        "-days",
        "2",
        "-extfile",
        "leaf.ext",
    ]);
    (
        dir.join("ca.pem"),
        dir.join("cert.pem"),
        dir.join("key.pem"),
    )
}

#[test]
fn https_server_with_a_private_ca() {
    let ws = Ws::new();
    let (ca, cert, key) = test_certificates(ws.dir.root());
    let port = free_port();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/tls_server.py");
    let mut cmd = Command::new(python());
    cmd.arg(script)
        .arg(port.to_string())
        .arg(&cert)
        .arg(&key)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut server = Reap(cmd.spawn().unwrap());
    wait_for_port(port, &mut server.0);
    let url = format!("https://127.0.0.1:{port}/mcp");

    // Trusting the private CA: the remote tool works.
    ws.config(&format!(
        "mcp:\n  servers:\n    tls:\n      url: {url}\n      ca_cert: {}\n",
        ca.display()
    ));
    assert_eq!(
        ws.call_yolo("mcp_tls_shout", r#"{"text":"over tls"}"#),
        "OVER TLS\n"
    );

    // Without it the certificate is refused: the server is skipped, named
    // with the reason, and the rest of toolgate works.
    ws.config(&format!("mcp:\n  servers:\n    tls:\n      url: {url}\n"));
    let list = ws.run(&["mcp", "list"]);
    let listed = text(&list.stdout);
    assert!(
        listed.contains("tls") && listed.to_lowercase().contains("certificate"),
        "{listed}"
    );
    assert!(!listed.contains("mcp_tls_shout"), "{listed}");

    // A CA file that is not one, and `ca_cert` on plain http, are config
    // errors that say what to do.
    std::fs::write(ws.dir.root().join("junk.pem"), "not a certificate\n").unwrap();
    ws.config(&format!(
        "mcp:\n  servers:\n    tls:\n      url: {url}\n      ca_cert: {}\n",
        ws.dir.root().join("junk.pem").display()
    ));
    let listed = text(&ws.run(&["mcp", "list"]).stdout);
    assert!(listed.contains("holds no certificate"), "{listed}");
    ws.config(&format!(
        "mcp:\n  servers:\n    tls:\n      url: http://127.0.0.1:{port}/mcp\n      ca_cert: {}\n",
        ca.display()
    ));
    let listed = text(&ws.run(&["mcp", "list"]).stdout);
    assert!(
        listed.contains("`ca_cert` is for an `https://` url"),
        "{listed}"
    );
}

fn pid_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // A zombie nobody reaps (PID 1 in some containers) is dead too.
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Configures `everything` behind `sh -c SCRIPT` (`{server}` in `script` is
/// the server command).
fn shell_wrapped_server(ws: &Ws, script: &str) {
    let script = script.replace("{server}", &everything().display().to_string());
    ws.config(&format!(
        "mcp:\n  servers:\n    everything:\n      command: /bin/sh\n      args:\n        - -c\n        \
         - {script}\n",
    ));
}

/// The processes working in the workspace other than `except`: the MCP
/// server and what it started (a sandboxed process does not know its PID
/// outside its namespace, so it cannot write it down; its working directory
/// is the workspace).
fn processes_in(ws: &Ws, except: &[u32]) -> Vec<u32> {
    let root = ws.root().canonicalize().unwrap();
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if except.contains(&pid) || pid == std::process::id() || !pid_alive(pid) {
            continue;
        }
        if std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd == root) {
            pids.push(pid);
        }
    }
    pids
}

/// Waits for `pid` to be gone: it dies at once when it does (the kernel
/// signals it), so the deadline only bounds a failure; 20 s, not "about
/// now", because a loaded two-core CI machine can be slow to schedule.
fn assert_dies(pid: u32, what: &str) {
    let start = Instant::now();
    while pid_alive(pid) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "server process {pid} outlived {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until the MCP server of `ws` (started by toolgate `me`) is up:
/// `count` processes in the workspace; returns them.
fn wait_for_server(ws: &Ws, me: u32, count: usize) -> Vec<u32> {
    let start = Instant::now();
    loop {
        let pids = processes_in(ws, &[me]);
        if pids.len() >= count {
            return pids;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the server never started: {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `toolgate mcp serve` with its MCP server up (`count` processes in the
/// workspace), and those processes.
fn serve_until_up(ws: &Ws, count: usize) -> (Reap, Vec<u32>) {
    let mut serve = ws.cmd(&["mcp", "serve"]);
    serve
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let toolgate = Reap(serve.spawn().unwrap());
    let pids = wait_for_server(ws, toolgate.0.id(), count);
    (toolgate, pids)
}

#[test]
fn server_children_are_gone_after_toolgate_exits() {
    let ws = Ws::new();
    shell_wrapped_server(&ws, "exec {server} stdio");
    assert_eq!(
        ws.call_yolo("mcp_everything_echo", r#"{"message":"bye"}"#),
        "Echo: bye\n"
    );
    // A server of a toolgate that ends on its own (its stdin closed): the
    // sandbox's keeper and node.
    let (mut toolgate, pids) = serve_until_up(&ws, 2);
    drop(toolgate.0.stdin.take());
    toolgate.0.wait().unwrap();
    for pid in pids {
        assert_dies(pid, "toolgate");
    }
}

/// Even a `kill -9` of toolgate, which closes nothing, takes the MCP
/// servers with it (`PR_SET_PDEATHSIG` on the sandbox's keeper, whose death
/// ends the server's PID namespace) — also one that would outlive the end
/// of its stdin: here a shell that sleeps on after its server exits.
#[test]
fn server_children_die_with_a_killed_toolgate() {
    let ws = Ws::new();
    shell_wrapped_server(&ws, "{server} stdio; sleep 300");
    // The keeper, the shell, node: all three up.
    let (mut toolgate, pids) = serve_until_up(&ws, 3);
    toolgate.0.kill().unwrap(); // SIGKILL
    toolgate.0.wait().unwrap();
    for pid in pids {
        assert_dies(pid, "a killed toolgate");
    }
}

#[test]
fn mcp_add_server_connects_and_persists() {
    let ws = Ws::new();
    ws.config("mcp:\n  add_server_tool: true\n");
    let args = serde_json::json!({"name": "time", "command": time_server()}).to_string();
    let added = ws.run(&["call", "mcp_add_server", &args, "--mode", "yolo"]);
    assert_eq!(added.status.code(), Some(0), "{}", text(&added.stderr));
    let out = text(&added.stdout);
    assert!(
        out.contains("connected `time` with 2 tools") && out.contains("mcp_time_get_current_time"),
        "{out}"
    );
    let saved = std::fs::read_to_string(ws.root().join("toolgate.yaml")).unwrap();
    assert!(saved.contains("add_server_tool: true"), "{saved}");
    assert!(
        saved.contains("time:") && saved.contains("mcp-server-time"),
        "{saved}"
    );
    // The next run has it from the configuration.
    let list = text(&ws.run(&["tools", "list"]).stdout);
    assert!(list.contains("mcp_time_get_current_time"), "{list}");

    // Sensitive: refused without confirmation.
    let refused = ws.run(&["call", "mcp_add_server", &args]);
    assert_eq!(refused.status.code(), Some(1));
    // Off by default.
    ws.config("");
    let absent = ws.run(&["call", "mcp_add_server", &args, "--mode", "yolo"]);
    assert!(
        text(&absent.stderr).contains("unknown tool"),
        "{}",
        text(&absent.stderr)
    );
}

/// `toolgate run` offers MCP tools to the model and runs them through the
/// gate; a read-only agent gets only the trusted (read-only) ones.
#[tokio::test]
async fn an_agent_run_calls_mcp_tools_and_plan_gets_only_trusted_ones() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    let llm = MockServer::start().await;
    let call = serde_json::json!({
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
            "content": null, "tool_calls": [{"id": "t1", "type": "function", "function": {
                "name": "mcp_time_get_current_time", "arguments": "{\"timezone\":\"UTC\"}"}}]}}]
    });
    let done = serde_json::json!({
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "It is now."}}]
    });
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(call))
        .up_to_n_times(1)
        .mount(&llm)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(done))
        .mount(&llm)
        .await;

    let ws = Ws::new();
    ws.config(&format!(
        "llm:\n  model: scripted\n  base_url: {}/v1\n  stream: false\n  max_retries: 0\n\
         mcp:\n  servers:\n    everything:\n      command: {}\n      args: [stdio]\n    \
         time:\n      command: {}\n      trusted: true\n",
        llm.uri(),
        everything().display(),
        time_server().display(),
    ));
    let mut cmd = ws.cmd(&["run", "What time is it?", "--agent", "plan"]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout: {so}\nstderr: {se}");
    assert!(se.contains("mcp_time_get_current_time [executed]"), "{se}");

    let reqs: Vec<_> = llm
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.method == wiremock::http::Method::POST)
        .collect();
    let first: Value = serde_json::from_slice(&reqs[0].body).unwrap();
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        offered.contains(&"mcp_time_get_current_time"),
        "{offered:?}"
    );
    assert!(offered.contains(&"read_file"), "{offered:?}");
    assert!(
        !offered.iter().any(|n| n.starts_with("mcp_everything_")),
        "untrusted MCP tools are not read-only: {offered:?}"
    );
    assert!(!offered.contains(&"write_file"), "{offered:?}");
    let second: Value = serde_json::from_slice(&reqs[1].body).unwrap();
    let result = second["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        result.contains("UTC") && result.contains("datetime"),
        "{result}"
    );
}

/// Regression: `--token-env VAR` with `VAR` set but empty served with an
/// empty bearer token, which `Authorization: Bearer ` satisfies.
#[test]
fn mcp_serve_refuses_an_empty_token() {
    let ws = Ws::new();
    for (addr, token) in [
        ("127.0.0.1:1", ""),
        ("127.0.0.1:1", "   "),
        ("0.0.0.0:1", ""),
        ("0.0.0.0:1", " \t"),
    ] {
        let child = ws
            .cmd(&["mcp", "serve", "--http", addr, "--token-env", "MCP_TOKEN"])
            .env("MCP_TOKEN", token)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let (done, exited) = std::sync::mpsc::channel();
        std::thread::spawn(move || done.send(child.wait_with_output()));
        // It must exit by itself; a server that started would not. The
        // deadline only turns a regression into a failure instead of a hang.
        let Ok(output) = exited.recv_timeout(Duration::from_secs(60)) else {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            panic!("{addr} {token:?}: still serving with an empty token");
        };
        let output = output.unwrap();
        let status = output.status;
        let stderr = text(&output.stderr);
        assert_eq!(status.code(), Some(2), "{addr} {token:?}: {stderr}");
        assert!(
            stderr.contains("`--token-env MCP_TOKEN`: the variable is empty")
                && stderr.contains("export MCP_TOKEN=<a long random token>"),
            "{addr} {token:?}: {stderr}"
        );
    }
}

#[test]
fn a_server_the_sandbox_hides_is_reported_with_what_to_do() {
    let ws = Ws::new();
    // Installed under the home directory, which the sandbox hides.
    let server = ws.dir.home().join("bin/my-server");
    std::fs::create_dir_all(server.parent().unwrap()).unwrap();
    std::fs::write(&server, "#!/bin/sh\nexec cat\n").unwrap();
    std::fs::set_permissions(&server, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    ws.config(&format!(
        "mcp:\n  servers:\n    hidden:\n      command: {}\n      startup_timeout: 5\n",
        server.display()
    ));
    let output = ws.run(&["mcp", "list", "--json"]);
    let statuses: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(statuses[0]["state"], "failed", "{statuses:?}");
    let reason = statuses[0]["reason"].as_str().unwrap();
    assert!(reason.contains("mcp.servers.hidden.readable"), "{reason}");
}
