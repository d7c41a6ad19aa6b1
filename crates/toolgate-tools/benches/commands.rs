//! `run_command` overhead through the whole gate, in the kernel sandbox:
//! `true` (judged read-only: the read-only profile, its own network
//! namespace), a write (the standard profile, placeholders and protected
//! mounts), and without the sandbox; next to spawning `sh -c true` directly
//! and to the peer, bubblewrap (what Codex starts per command on Linux) with
//! a comparable profile, when `bwrap` is installed.
//!
//! Each standard-profile case is also run with a network policy
//! (`commands.network: {allow: [...]}`), whose processes join the sandbox's
//! network namespace (two `setns` before their own namespaces): the cost of
//! the proxy on, next to off. A read-only command never joins it.
//!
//! Targets: median ≤ 5 ms for both sandboxed cases.
//!
//! Run with `cargo bench -p toolgate-tools --bench commands`. After
//! criterion's report, the medians of a same-run comparison and their ratios
//! are printed to stderr.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::print_stderr,
    reason = "benchmark harness"
)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolgate_core::{Registry, ToolCall, Workspace};
use toolgate_engine::ExecutionEngine;
use toolgate_policy::{ConfirmationMode, ConfirmationPolicy};
use toolgate_sandbox::{NetworkPolicy, Sandbox, SandboxMode};
use toolgate_tools::command::CommandOptions;
use toolgate_tools::{BuiltinOptions, builtin_tools};

fn engine(dir: &Path, mode: SandboxMode, proxied: bool) -> ExecutionEngine {
    let workspace = Workspace::builder(dir).build().unwrap();
    let registry = Registry::new();
    let mut builder = Sandbox::builder(dir).mode(mode);
    if proxied {
        let policy = NetworkPolicy::builder()
            .allow(["example.com"])
            .build()
            .unwrap();
        builder = builder.network_policy(policy);
    }
    let sandbox = builder.build().unwrap();
    eprintln!("sandbox {mode:?}: {}", sandbox.status());
    if proxied {
        eprintln!("network: {}", sandbox.network_status());
    }
    let options = BuiltinOptions::default()
        .commands(Some(CommandOptions::default()))
        .sandbox(sandbox);
    for tool in builtin_tools(&workspace, &options) {
        registry.register_arc(tool).unwrap();
    }
    ExecutionEngine::builder(Arc::new(registry))
        .policy(ConfirmationPolicy::new(ConfirmationMode::Yolo))
        .build()
}

/// Rounds of the same-run comparison, and calls per case per round.
const ROUNDS: usize = 5;
const PER_ROUND: usize = 40;

/// The cases: name, sandbox mode, with a network policy, command.
const CASES: &[(&str, SandboxMode, bool, &str)] = &[
    (
        "gate/run_command_true_read_only",
        SandboxMode::Full,
        false,
        "true",
    ),
    (
        "gate/run_command_write_standard",
        SandboxMode::Full,
        false,
        "true > out.txt",
    ),
    (
        "gate/run_command_write_standard_proxied",
        SandboxMode::Full,
        true,
        "true > out.txt",
    ),
    (
        "gate/run_command_true_no_sandbox",
        SandboxMode::Off,
        false,
        "true",
    ),
];

fn bwrap_args(dir: &Path) -> Vec<String> {
    let dir = dir.display().to_string();
    [
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--bind",
        &dir,
        &dir,
        "--unshare-pid",
        "--unshare-user",
        "--unshare-ipc",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--chdir",
        &dir,
        "/bin/sh",
        "-c",
        "true",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

fn has_bwrap() -> bool {
    std::process::Command::new("bwrap")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn commands(c: &mut Criterion) {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let engines: Vec<_> = CASES
        .iter()
        .map(|(name, mode, proxied, command)| {
            (*name, engine(dir.path(), *mode, *proxied), *command)
        })
        .collect();
    for (name, engine, command) in &engines {
        c.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| async {
                let run = engine
                    .execute(ToolCall::new(
                        "b",
                        "run_command",
                        json!({"command": command}),
                    ))
                    .await;
                assert!(run.result.success, "{:?}", run.result);
                run
            });
        });
    }
    c.bench_function("direct/sh_c_true", |b| {
        b.iter(|| {
            std::process::Command::new("/bin/sh")
                .args(["-c", "true"])
                .status()
                .unwrap()
        });
    });
    let bwrap = has_bwrap();
    if bwrap {
        let args = bwrap_args(dir.path());
        c.bench_function("peer/bwrap_sh_c_true", |b| {
            b.iter(|| {
                let status = std::process::Command::new("bwrap")
                    .args(&args)
                    .status()
                    .unwrap();
                assert!(status.success());
            });
        });
    } else {
        eprintln!("peer: bwrap is not installed (apt-get install bubblewrap); no peer comparison");
    }

    // A same-run comparison, rounds interleaved so a slow spell of a shared
    // machine hits every case alike.
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); engines.len() + 1];
    for _ in 0..ROUNDS {
        for (i, (_, engine, command)) in engines.iter().enumerate() {
            for _ in 0..PER_ROUND {
                let started = Instant::now();
                let run = runtime.block_on(engine.execute(ToolCall::new(
                    "b",
                    "run_command",
                    json!({"command": command}),
                )));
                assert!(run.result.success);
                samples[i].push(started.elapsed());
            }
        }
        if bwrap {
            let args = bwrap_args(dir.path());
            for _ in 0..PER_ROUND {
                let started = Instant::now();
                std::process::Command::new("bwrap")
                    .args(&args)
                    .status()
                    .unwrap();
                samples[engines.len()].push(started.elapsed());
            }
        }
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v.get(v.len() / 2).copied().unwrap_or_default()
    };
    let peer = median(&mut samples[engines.len()]);
    for (i, (name, _, _)) in engines.iter().enumerate() {
        let m = median(&mut samples[i]);
        if bwrap {
            eprintln!(
                "same-run median {name}: {m:?} (bwrap `sh -c true`: {peer:?}, ratio {:.2})",
                m.as_secs_f64() / peer.as_secs_f64()
            );
        } else {
            eprintln!("same-run median {name}: {m:?}");
        }
    }
}

criterion_group!(benches, commands);
criterion_main!(benches);
