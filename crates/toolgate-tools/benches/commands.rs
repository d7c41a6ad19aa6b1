//! `run_command` overhead: `true` through the whole gate, in the Landlock
//! sandbox and without it, next to spawning `sh -c true` directly.
//! Target: median ≤ 5 ms with the sandbox.
//!
//! Run with `cargo bench -p toolgate-tools --bench commands`.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::print_stderr,
    reason = "benchmark harness"
)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolgate_core::{Registry, ToolCall, Workspace};
use toolgate_engine::ExecutionEngine;
use toolgate_policy::{ConfirmationMode, ConfirmationPolicy};
use toolgate_tools::command::{CommandOptions, SandboxMode, SandboxStatus};
use toolgate_tools::{BuiltinOptions, builtin_tools};

fn engine(dir: &std::path::Path, sandbox: SandboxMode) -> ExecutionEngine {
    let workspace = Workspace::builder(dir).build().unwrap();
    let registry = Registry::new();
    let options =
        BuiltinOptions::default().commands(Some(CommandOptions::default().sandbox(sandbox)));
    for tool in builtin_tools(&workspace, &options) {
        registry.register_arc(tool).unwrap();
    }
    ExecutionEngine::builder(Arc::new(registry))
        .policy(ConfirmationPolicy::new(ConfirmationMode::Yolo))
        .build()
}

fn commands(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    eprintln!("sandbox: {}", SandboxStatus::detect().describe());
    for (name, mode) in [
        ("gate/run_command_true_landlock", SandboxMode::Landlock),
        ("gate/run_command_true_no_sandbox", SandboxMode::None),
    ] {
        let engine = engine(dir.path(), mode);
        c.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| async {
                let run = engine
                    .execute(ToolCall::new(
                        "b",
                        "run_command",
                        json!({"command": "true"}),
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
}

criterion_group!(benches, commands);
criterion_main!(benches);
