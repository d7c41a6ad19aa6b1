//! Drives a stdio MCP server the same way for every server measured:
//!
//! - cold start: spawn → `initialize` → first `tools/list` answer, best and
//!   median of `--runs` fresh processes;
//! - throughput: `--calls` sequential `tools/call` of one tool in one
//!   session, calls per second.
//!
//! Two clients, chosen with `--client`:
//!
//! - `lean` (the default): a minimal synchronous JSON-RPC client on blocking
//!   pipes. It writes each request as one line, reads lines until the answer
//!   with its id, and parses every line it reads with `serde_json`. It costs a
//!   few µs per call, so the numbers are the server's.
//! - `rmcp`: the official Rust SDK's client (tokio, a task and channels per
//!   request). It costs more CPU per call than `toolgate mcp serve` does, so
//!   it measures client and server together.
//!
//! Usage: `mcp_driver --tool NAME --args JSON [--client lean|rmcp] [--runs N]
//! [--calls N] -- CMD ARGS…`. Prints one JSON line. Run through `bench/mcp.sh`.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::cast_precision_loss,
    reason = "a benchmark driver: prints its report, fails loudly"
)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

struct Options {
    tool: String,
    args: Map<String, Value>,
    runs: usize,
    calls: usize,
    server: Vec<String>,
}

/// What one client measured.
struct Measured {
    starts: Vec<Duration>,
    elapsed: Duration,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let split = args.iter().position(|a| a == "--").expect("-- CMD ARGS");
    let options = &args[1..split];
    let get = |name: &str| {
        options
            .iter()
            .position(|a| a == name)
            .map(|i| options[i + 1].clone())
    };
    let opts = Options {
        tool: get("--tool").expect("--tool NAME"),
        args: serde_json::from_str(&get("--args").unwrap_or_else(|| "{}".into()))
            .expect("--args JSON"),
        runs: get("--runs").map_or(10, |v| v.parse().unwrap()),
        calls: get("--calls").map_or(2000, |v| v.parse().unwrap()),
        server: args[split + 1..].to_vec(),
    };
    let client = get("--client").unwrap_or_else(|| "lean".into());
    let measured = match client.as_str() {
        "lean" => lean::measure(&opts),
        "rmcp" => rmcp_client::measure(&opts),
        other => panic!("--client {other}: expected lean or rmcp"),
    };

    let mut starts = measured.starts;
    starts.sort();
    println!(
        "{}",
        json!({
            "client": client,
            "cold_start_ms_median": starts[starts.len() / 2].as_secs_f64() * 1e3,
            "cold_start_ms_best": starts[0].as_secs_f64() * 1e3,
            "cold_starts_ms": starts.iter().map(|d| d.as_secs_f64() * 1e3).collect::<Vec<_>>(),
            "calls": opts.calls,
            "calls_per_sec": opts.calls as f64 / measured.elapsed.as_secs_f64(),
        })
    );
}

/// Warm-up calls before the timed ones, which also check the call works.
const WARM_UP: usize = 50;

mod lean {
    use super::{
        BufRead, BufReader, Child, ChildStdin, ChildStdout, Command, Instant, Measured, Options,
        Stdio, Value, WARM_UP, Write, json,
    };

    struct Session {
        child: Child,
        stdin: ChildStdin,
        stdout: BufReader<ChildStdout>,
        next_id: u64,
        line: String,
    }

    impl Session {
        /// Spawns the server and completes the `initialize` handshake.
        fn start(argv: &[String]) -> Self {
            let mut child = Command::new(&argv[0])
                .args(&argv[1..])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn the server");
            let stdin = child.stdin.take().unwrap();
            let stdout = BufReader::new(child.stdout.take().unwrap());
            let mut session = Self {
                child,
                stdin,
                stdout,
                next_id: 0,
                line: String::new(),
            };
            session.request(
                "initialize",
                &json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "mcp_driver", "version": "1"},
                }),
            );
            session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
            session
        }

        fn send(&mut self, message: &Value) {
            let mut bytes = serde_json::to_vec(message).unwrap();
            bytes.push(b'\n');
            self.stdin.write_all(&bytes).expect("write to the server");
        }

        /// Sends one request and returns its `result`, skipping notifications
        /// and refusing any request the server makes of us.
        fn request(&mut self, method: &str, params: &Value) -> Value {
            self.next_id += 1;
            let id = self.next_id;
            self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
            loop {
                self.line.clear();
                let read = self.stdout.read_line(&mut self.line).expect("read");
                assert!(read > 0, "the server closed its stdout during {method}");
                let mut message: Value = serde_json::from_str(&self.line).expect("JSON-RPC line");
                if message.get("method").is_some() {
                    if let Some(their_id) = message.get("id").cloned() {
                        self.send(&json!({"jsonrpc": "2.0", "id": their_id,
                            "error": {"code": -32601, "message": "not supported"}}));
                    }
                    continue;
                }
                if message["id"] != id {
                    continue;
                }
                if let Some(error) = message.get("error") {
                    panic!("{method}: {error}");
                }
                return message["result"].take();
            }
        }

        fn close(mut self) {
            drop(self.stdin);
            let _ = self.child.wait();
        }
    }

    pub(super) fn measure(opts: &Options) -> Measured {
        let mut starts = Vec::new();
        for _ in 0..opts.runs {
            let begin = Instant::now();
            let mut session = Session::start(&opts.server);
            let tools = session.request("tools/list", &json!({}));
            starts.push(begin.elapsed());
            let listed = tools["tools"].as_array().expect("tools/list result");
            assert!(
                listed.iter().any(|t| t["name"] == opts.tool.as_str()),
                "no tool {}",
                opts.tool
            );
            session.close();
        }

        let mut session = Session::start(&opts.server);
        let params = json!({"name": opts.tool, "arguments": opts.args});
        let mut call = || {
            let result = session.request("tools/call", &params);
            assert_ne!(result["isError"], true, "{result}");
        };
        for _ in 0..WARM_UP {
            call();
        }
        let begin = Instant::now();
        for _ in 0..opts.calls {
            call();
        }
        let elapsed = begin.elapsed();
        session.close();
        Measured { starts, elapsed }
    }
}

mod rmcp_client {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::TokioChildProcess;

    use super::{Instant, Measured, Options, Stdio, WARM_UP};

    fn command(argv: &[String]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(&argv[0]);
        cmd.args(&argv[1..]);
        cmd
    }

    pub(super) fn measure(opts: &Options) -> Measured {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(run(opts))
    }

    async fn run(opts: &Options) -> Measured {
        let spawn = || {
            TokioChildProcess::builder(command(&opts.server))
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
                .0
        };
        let mut starts = Vec::new();
        for _ in 0..opts.runs {
            let begin = Instant::now();
            let mut client = ().serve(spawn()).await.expect("initialize");
            let tools = client.peer().list_tools(None).await.expect("tools/list");
            starts.push(begin.elapsed());
            assert!(
                tools.tools.iter().any(|t| t.name == opts.tool),
                "no tool {}",
                opts.tool
            );
            let _ = client.close().await;
        }

        let mut client = ().serve(spawn()).await.expect("initialize");
        let peer = client.peer().clone();
        let params =
            CallToolRequestParams::new(opts.tool.clone()).with_arguments(opts.args.clone());
        for _ in 0..WARM_UP {
            let result = peer.call_tool(params.clone()).await.expect("tools/call");
            assert_ne!(result.is_error, Some(true), "{result:?}");
        }
        let begin = Instant::now();
        for _ in 0..opts.calls {
            let result = peer.call_tool(params.clone()).await.expect("tools/call");
            assert_ne!(result.is_error, Some(true), "{result:?}");
        }
        let elapsed = begin.elapsed();
        let _ = client.close().await;
        Measured { starts, elapsed }
    }
}
