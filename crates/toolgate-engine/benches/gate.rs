//! The gate's own overhead: a no-op tool through all ten steps, with empty
//! guardrails and hooks, the headless approver (never reached: the tool is
//! read-only), and the audit log writing every line to `io::sink()`.
//!
//! Target (issue "Foundation"): median ≤ 10 µs per call. Run with
//! `cargo bench -p toolgate-engine --bench gate`.

#![allow(missing_docs, clippy::unwrap_used, reason = "benchmark harness")]

use std::sync::Arc;

use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use serde::Deserialize;
use serde_json::json;
use toolgate_core::{Registry, Sensitivity, ToolCall, ToolContext, ToolResult, TypedTool};
use toolgate_engine::{AuditLog, ExecutionEngine};

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoopArgs {
    /// A path-like argument, so validation has real work to do.
    path: String,
    /// An optional number.
    #[expect(dead_code, reason = "validated and decoded, never read")]
    limit: Option<u32>,
}

struct Noop;

#[async_trait]
impl TypedTool for Noop {
    type Args = NoopArgs;
    const NAME: &'static str = "noop";
    const DESCRIPTION: &'static str = "Does nothing.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    async fn run(&self, args: NoopArgs, _: &ToolContext) -> ToolResult {
        ToolResult::success(args.path)
    }
}

fn gate(c: &mut Criterion) {
    let registry = Arc::new(Registry::new());
    registry.register(Noop).unwrap();
    let engine = ExecutionEngine::builder(registry)
        .audit(AuditLog::to_writer(std::io::sink()))
        .build();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let args = json!({"path": "src/main.rs", "limit": 10});

    c.bench_function("gate/noop_all_ten_steps", |b| {
        b.to_async(&runtime)
            .iter(|| engine.execute(ToolCall::new("bench", "noop", args.clone())));
    });

    let registry = Arc::new(Registry::new());
    registry.register(Noop).unwrap();
    let bare = ExecutionEngine::builder(registry).build();
    c.bench_function("gate/noop_without_audit_file", |b| {
        b.to_async(&runtime)
            .iter(|| bare.execute(ToolCall::new("bench", "noop", args.clone())));
    });

    // What the gate adds: the same tool called directly, no gate.
    let tool = Noop;
    let ctx = ToolContext::new("bench");
    c.bench_function("direct/noop_execute", |b| {
        b.to_async(&runtime)
            .iter(|| toolgate_core::Tool::execute(&tool, args.clone(), &ctx));
    });
}

criterion_group!(benches, gate);
criterion_main!(benches);
