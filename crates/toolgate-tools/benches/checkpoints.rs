//! The cost of checkpoints in a 10,000-file workspace (100 directories of
//! 100 files of 1 KiB): the capture's walk when nothing changed (the cost
//! each captured call and each step pays), the first walk that keeps every
//! content (once per data directory) and the first walk of a process whose
//! data directory keeps them already (once per process), and `run_command` through the whole gate in
//! the kernel sandbox with and without capture: `true` (read-only profile,
//! which cannot write and so is never captured) and a write (standard
//! profile, captured before and after).
//!
//! Target: `run_command true` ≤ 5 ms without capture (the limits issue).
//!
//! Run with `cargo bench -p toolgate-tools --bench checkpoints`.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::print_stderr,
    reason = "benchmark harness"
)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolgate_core::{ChangeCapture as _, Registry, ToolCall, Workspace};
use toolgate_engine::ExecutionEngine;
use toolgate_policy::{ConfirmationMode, ConfirmationPolicy};
use toolgate_sandbox::{Sandbox, SandboxMode};
use toolgate_store::{BlobStore, WorkspaceTracker};
use toolgate_tools::command::CommandOptions;
use toolgate_tools::{BuiltinOptions, builtin_tools};

const DIRS: usize = 100;
const FILES: usize = 100;

fn fill(root: &Path) {
    for d in 0..DIRS {
        let dir = root.join(format!("d{d:03}"));
        std::fs::create_dir(&dir).unwrap();
        for f in 0..FILES {
            let body = format!("{d}/{f}\n").repeat(1024 / 8);
            std::fs::write(dir.join(format!("f{f:03}.txt")), body).unwrap();
        }
    }
}

fn engine(dir: &Path, capture: Option<Arc<WorkspaceTracker>>) -> ExecutionEngine {
    let workspace = Workspace::builder(dir).build().unwrap();
    let registry = Registry::new();
    let sandbox = Sandbox::builder(dir)
        .mode(SandboxMode::Full)
        .build()
        .unwrap();
    let options = BuiltinOptions::default()
        .commands(Some(CommandOptions::default()))
        .sandbox(sandbox);
    for tool in builtin_tools(&workspace, &options) {
        registry.register_arc(tool).unwrap();
    }
    let mut builder = ExecutionEngine::builder(Arc::new(registry))
        .policy(ConfirmationPolicy::new(ConfirmationMode::Yolo));
    if let Some(capture) = capture {
        builder = builder.capture(capture);
    }
    builder.build()
}

fn checkpoints(c: &mut Criterion) {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    fill(&ws);
    let blobs = dir.path().join("blobs");

    let mut group = c.benchmark_group("capture");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("first_walk_keeps_10k_files", |b| {
        b.iter_batched(
            || {
                let _ = std::fs::remove_dir_all(&blobs);
                WorkspaceTracker::new(&ws, BlobStore::new(&blobs))
            },
            |tracker| tracker.sync().unwrap(),
            BatchSize::PerIteration,
        );
    });
    // A new process in a data directory that keeps the contents already:
    // every file is hashed, none copied.
    group.bench_function("first_walk_contents_kept_10k_files", |b| {
        b.iter_batched(
            || WorkspaceTracker::new(&ws, BlobStore::new(&blobs)),
            |tracker| tracker.sync().unwrap(),
            BatchSize::PerIteration,
        );
    });
    group.finish();

    let tracker = Arc::new(WorkspaceTracker::new(&ws, BlobStore::new(&blobs)));
    tracker.sync().unwrap();
    c.bench_function("capture/walk_10k_files_unchanged", |b| {
        b.iter(|| assert!(tracker.sync().unwrap().is_empty()));
    });
    let one = ws.join("d050/f050.txt");
    // Criterion calls the closure more than once: the counter lives
    // outside it, so that every write changes the file.
    let n = std::sync::atomic::AtomicU64::new(0);
    c.bench_function("capture/walk_10k_files_one_changed", |b| {
        b.iter(|| {
            let next = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            std::fs::write(&one, next.to_string()).unwrap();
            assert_eq!(tracker.sync().unwrap().len(), 1);
        });
    });

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let without = engine(&ws, None);
    let with = engine(&ws, Some(Arc::clone(&tracker)));
    for (name, engine, command) in [
        ("gate/run_command_true_without_capture", &without, "true"),
        ("gate/run_command_true_with_capture", &with, "true"),
        (
            "gate/run_command_write_without_capture",
            &without,
            "true > out.txt",
        ),
        (
            "gate/run_command_write_with_capture",
            &with,
            "true > out.txt",
        ),
    ] {
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
}

criterion_group!(benches, checkpoints);
criterion_main!(benches);
