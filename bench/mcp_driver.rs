//! Drives a stdio MCP server the same way for every server measured:
//!
//! - cold start: spawn → `initialize` → first `tools/list` answer, best and
//!   median of `--runs` fresh processes;
//! - throughput: `--calls` sequential `tools/call` of one tool in one
//!   session, calls per second.
//!
//! Usage: `mcp_driver --tool NAME --args JSON [--runs N] [--calls N] -- CMD ARGS…`
//! Prints one JSON line. Run through `bench/mcp.sh`.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_precision_loss,
    reason = "a benchmark driver: prints its report, fails loudly"
)]

use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;

fn command(argv: &[String]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    cmd
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let split = args.iter().position(|a| a == "--").expect("-- CMD ARGS");
    let (options, server) = (&args[1..split], &args[split + 1..]);
    let get = |name: &str| {
        options
            .iter()
            .position(|a| a == name)
            .map(|i| options[i + 1].clone())
    };
    let tool = get("--tool").expect("--tool NAME");
    let tool_args: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&get("--args").unwrap_or_else(|| "{}".into())).expect("--args JSON");
    let runs: usize = get("--runs").map_or(10, |v| v.parse().unwrap());
    let calls: usize = get("--calls").map_or(2000, |v| v.parse().unwrap());

    let mut starts = Vec::new();
    for _ in 0..runs {
        let begin = Instant::now();
        let transport = TokioChildProcess::builder(command(server))
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
            .0;
        let mut client = ().serve(transport).await.expect("initialize");
        let tools = client.peer().list_tools(None).await.expect("tools/list");
        starts.push(begin.elapsed());
        assert!(tools.tools.iter().any(|t| t.name == tool), "no tool {tool}");
        let _ = client.close().await;
    }

    let transport = TokioChildProcess::builder(command(server))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
        .0;
    let mut client = ().serve(transport).await.expect("initialize");
    let peer = client.peer().clone();
    let params = CallToolRequestParams::new(tool.clone()).with_arguments(tool_args);
    // Warm up, and check the call works.
    for _ in 0..50 {
        let result = peer.call_tool(params.clone()).await.expect("tools/call");
        assert_ne!(result.is_error, Some(true), "{result:?}");
    }
    let begin = Instant::now();
    for _ in 0..calls {
        let result = peer.call_tool(params.clone()).await.expect("tools/call");
        assert_ne!(result.is_error, Some(true), "{result:?}");
    }
    let elapsed = begin.elapsed();
    let _ = client.close().await;

    let best = *starts.iter().min().unwrap();
    println!(
        "{}",
        serde_json::json!({
            "cold_start_ms_median": median(starts).as_secs_f64() * 1e3,
            "cold_start_ms_best": best.as_secs_f64() * 1e3,
            "calls": calls,
            "calls_per_sec": calls as f64 / elapsed.as_secs_f64(),
        })
    );
}
