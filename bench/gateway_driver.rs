//! Drives an MCP server over streamable HTTP with many clients at once, the
//! same way for every server measured (toolgate workers behind `HAProxy`, one
//! worker, the Node `server-everything`):
//!
//! - `--clients` clients, each its own MCP session, connect and make
//!   `--warmup` calls (which also check the call works);
//! - then all start together and make `--calls` calls each of one tool,
//!   one after the other; every call's latency is kept.
//!
//! Prints one JSON line: calls, seconds, calls per second (all calls over
//! the wall time of the timed phase), p50 and p99 latency in ms, errors.
//! The client is the one the gateway test uses
//! (`crates/toolgate-cli/tests/gateway/mcp_http.rs`): reqwest on tokio, a
//! few µs per call. Run through `bench/gateway.sh`.
//!
//! Usage: `gateway_driver --url URL --tool NAME [--args JSON] [--token T]
//! [--clients N] [--calls N] [--warmup N]`.

#![allow(
    clippy::print_stdout,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "a benchmark driver: prints its report, fails loudly"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[allow(
    dead_code,
    reason = "the gateway test's client; the driver uses part of it"
)]
#[path = "../crates/toolgate-cli/tests/gateway/mcp_http.rs"]
mod mcp_http;

use mcp_http::Mcp;

struct Options {
    url: String,
    token: String,
    tool: String,
    args: Value,
    clients: usize,
    calls: usize,
    warmup: usize,
}

fn options() -> Options {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let get = |name: &str| {
        args.iter().position(|a| a == name).map(|i| {
            args.get(i + 1)
                .unwrap_or_else(|| panic!("{name} needs a value"))
                .clone()
        })
    };
    Options {
        url: get("--url").expect("--url URL"),
        token: get("--token").unwrap_or_default(),
        tool: get("--tool").expect("--tool NAME"),
        args: serde_json::from_str(&get("--args").unwrap_or_else(|| "{}".into()))
            .expect("--args JSON"),
        clients: get("--clients").map_or(32, |v| v.parse().unwrap()),
        calls: get("--calls").map_or(200, |v| v.parse().unwrap()),
        warmup: get("--warmup").map_or(20, |v| v.parse().unwrap()),
    }
}

/// Connects, retrying for a while: a worker behind `HAProxy` may not be up.
async fn connect(http: &reqwest::Client, opts: &Options) -> Mcp {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match Mcp::connect(http, &opts.url, &opts.token).await {
            Ok(mcp) => return mcp,
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(failure) => panic!("cannot connect to {}: {failure}", opts.url),
        }
    }
}

/// One client: warm-up, wait for the others, then the timed calls; their
/// latencies and the number that failed.
async fn client(
    http: reqwest::Client,
    opts: Arc<Options>,
    barrier: Arc<tokio::sync::Barrier>,
) -> (Vec<Duration>, usize) {
    let mut mcp = connect(&http, &opts).await;
    for _ in 0..opts.warmup {
        let answer = mcp
            .call(&opts.tool, &opts.args, None)
            .await
            .unwrap_or_else(|e| panic!("warm-up {}: {e}", opts.tool));
        assert!(
            !answer.is_error(),
            "warm-up {}: {}",
            opts.tool,
            answer.text()
        );
    }
    barrier.wait().await;
    let mut latencies = Vec::with_capacity(opts.calls);
    let mut errors = 0;
    for _ in 0..opts.calls {
        let begin = Instant::now();
        match mcp.call(&opts.tool, &opts.args, None).await {
            Ok(answer) if !answer.is_error() => latencies.push(begin.elapsed()),
            _ => errors += 1,
        }
    }
    (latencies, errors)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank].as_secs_f64() * 1e3
}

fn main() {
    let opts = Arc::new(options());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let http = Mcp::http_client(Duration::from_secs(60));
        // Everyone waits here, and the timer starts when they all pass.
        let barrier = Arc::new(tokio::sync::Barrier::new(opts.clients + 1));
        let tasks: Vec<_> = (0..opts.clients)
            .map(|_| {
                tokio::spawn(client(
                    http.clone(),
                    Arc::clone(&opts),
                    Arc::clone(&barrier),
                ))
            })
            .collect();
        barrier.wait().await;
        let begin = Instant::now();
        let mut latencies = Vec::new();
        let mut errors = 0;
        for task in tasks {
            let (mine, failed) = task.await.unwrap();
            latencies.extend(mine);
            errors += failed;
        }
        let elapsed = begin.elapsed();
        latencies.sort();
        let calls = opts.clients * opts.calls;
        println!(
            "{}",
            json!({
                "clients": opts.clients,
                "calls": calls,
                "errors": errors,
                "seconds": elapsed.as_secs_f64(),
                "calls_per_sec": calls as f64 / elapsed.as_secs_f64(),
                "p50_ms": percentile(&latencies, 50.0),
                "p99_ms": percentile(&latencies, 99.0),
            })
        );
    });
}
