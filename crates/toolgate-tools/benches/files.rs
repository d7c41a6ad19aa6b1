//! File tools through the whole gate, on real files.
//!
//! - `read_file` of a 1 MiB file through all ten steps;
//! - `edit_file` on a 10 MB file (read, replace, atomic write, diff):
//!   target ≤ 50 ms.
//!
//! Run with `cargo bench -p toolgate-tools --bench files`.

#![allow(missing_docs, clippy::unwrap_used, reason = "benchmark harness")]

use std::fmt::Write as _;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolgate_core::{Registry, ToolCall, Workspace};
use toolgate_engine::ExecutionEngine;
use toolgate_policy::{ConfirmationMode, ConfirmationPolicy};
use toolgate_tools::{BuiltinOptions, builtin_tools};

fn text_of(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 100);
    let mut line = 0;
    while text.len() < bytes {
        line += 1;
        let _ = writeln!(
            text,
            "    let value_{line} = compute({line}, \"some text on line {line}\");"
        );
    }
    text
}

fn files(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("one_mib.rs"), text_of(1024 * 1024 - 200)).unwrap();
    std::fs::write(dir.path().join("ten_mb.rs"), text_of(10_000_000)).unwrap();

    let workspace = Workspace::builder(dir.path()).build().unwrap();
    let registry = Registry::new();
    for tool in builtin_tools(&workspace, &BuiltinOptions::default()) {
        registry.register_arc(tool).unwrap();
    }
    let engine = ExecutionEngine::builder(Arc::new(registry))
        .policy(ConfirmationPolicy::new(ConfirmationMode::Yolo))
        .build();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();

    c.bench_function("gate/read_file_1MiB", |b| {
        b.to_async(&runtime).iter(|| async {
            let run = engine
                .execute(ToolCall::new(
                    "b",
                    "read_file",
                    json!({"path": "one_mib.rs"}),
                ))
                .await;
            assert!(run.result.success);
            run
        });
    });

    // Flip one line back and forth so that every iteration is a real edit.
    let original = "let value_80000 = compute(80000,";
    let changed = "let VALUE_80000 = compute(80000,";
    let mut flipped = false;
    let mut group = c.benchmark_group("gate");
    group.sample_size(20);
    group.bench_function("edit_file_10MB", |b| {
        b.to_async(&runtime).iter(|| {
            let (old, new) = if flipped {
                (changed, original)
            } else {
                (original, changed)
            };
            flipped = !flipped;
            let call = ToolCall::new(
                "b",
                "edit_file",
                json!({"path": "ten_mb.rs", "old_str": old, "new_str": new}),
            );
            let engine = &engine;
            async move {
                let run = engine.execute(call).await;
                assert!(run.result.success, "{:?}", run.result.error);
                run
            }
        });
    });
    group.finish();
}

criterion_group!(benches, files);
criterion_main!(benches);
