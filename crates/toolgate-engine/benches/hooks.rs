//! What hooks and guardrails add to a call: the guardrail step on a shell
//! command (parse, every operand checked against the sensitive patterns and
//! the disk), and one `pre_tool_use` hook process (`true`) per call.
//!
//! Run with `cargo bench -p toolgate-engine --bench hooks`.

#![allow(missing_docs, clippy::unwrap_used, reason = "benchmark harness")]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolgate_core::{Registry, ToolCall, Workspace};
use toolgate_engine::{
    ExecutionEngine, GuardrailsConfig, GuardrailsEngine, HookExecutor, HookSpec, HooksConfig,
    OnFailure,
};
use toolgate_policy::{ConfirmationMode, ConfirmationPolicy};

fn hooks(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("a.txt"), "a").unwrap();
    let workspace = Workspace::builder(&root).build().unwrap();
    let options = toolgate_tools::BuiltinOptions::default()
        .commands(Some(toolgate_tools::command::CommandOptions::default()));
    let registry = Registry::new();
    for tool in toolgate_tools::builtin_tools(&workspace, &options) {
        registry.register_arc(tool).unwrap();
    }
    let registry = Arc::new(registry);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let guardrails = Arc::new(
        GuardrailsEngine::builder(GuardrailsConfig::default(), &root)
            .build()
            .unwrap(),
    );

    // Dry-run: the guardrail step is all the work.
    let engine = ExecutionEngine::builder(Arc::clone(&registry))
        .guardrails(guardrails.clone())
        .policy(ConfirmationPolicy::new(ConfirmationMode::Yolo))
        .dry_run(true)
        .build();
    let args = json!({"command": "grep -rn TODO src a.txt | sort | head -n 20 > out.txt"});
    c.bench_function("guardrails/run_command_dry_run", |b| {
        b.to_async(&runtime)
            .iter(|| engine.execute(ToolCall::new("b", "run_command", args.clone())));
    });

    let config = HooksConfig {
        pre_tool_use: vec![HookSpec {
            name: "true".to_owned(),
            command: None,
            argv: Some(vec!["true".to_owned()]),
            matcher: None,
            file_patterns: Vec::new(),
            timeout: None,
            on_failure: OnFailure::Allow,
        }],
        ..HooksConfig::default()
    };
    let hooks = Arc::new(HookExecutor::builder(config, &root).build().unwrap());
    let engine = ExecutionEngine::builder(registry)
        .guardrails(guardrails)
        .pre_hooks(hooks)
        .policy(ConfirmationPolicy::new(ConfirmationMode::Yolo))
        .dry_run(true)
        .build();
    let args = json!({"path": "a.txt"});
    c.bench_function("hooks/one_pre_hook_process", |b| {
        b.to_async(&runtime)
            .iter(|| engine.execute(ToolCall::new("b", "read_file", args.clone())));
    });
}

criterion_group!(benches, hooks);
criterion_main!(benches);
