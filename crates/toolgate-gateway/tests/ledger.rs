//! `CallLedger`: a key is its client's and names one call (rule 7) — the
//! same key from another client, or with other arguments, runs as another
//! call and never gets the first one's result.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use toolgate_core::{Registry, Sensitivity, ToolCall, ToolContext, ToolResult, TypedTool};
use toolgate_engine::{ApprovalScope, ExecutionEngine, Ledger as _};
use toolgate_gateway::CallLedger;
use toolgate_store::{SqliteStore, Store};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {
    /// What to say.
    say: String,
}

/// Answers with how many times it ran, and what it was asked to say.
struct Counter(Arc<AtomicUsize>);

#[async_trait::async_trait]
impl TypedTool for Counter {
    type Args = Args;
    const NAME: &'static str = "count";
    const DESCRIPTION: &'static str = "Counts its runs.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    async fn run(&self, args: Args, _: &ToolContext) -> ToolResult {
        let n = self.0.fetch_add(1, Ordering::SeqCst) + 1;
        ToolResult::success(format!("run {n}: {}", args.say))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_is_its_clients_and_names_one_call() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(dir.path().join("s.db")).unwrap());
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = Arc::new(Registry::new());
    registry.register(Counter(Arc::clone(&runs))).unwrap();
    let engine = |client: &str| {
        ExecutionEngine::builder(Arc::clone(&registry))
            .client(client)
            .build()
    };
    let (alice, mallory) = (engine("alice"), engine("mallory"));
    let ledger = CallLedger::start(Arc::clone(&store), "w1").await.unwrap();
    let scope = ApprovalScope::new("test");
    let call = |say: &str| ToolCall::new("c", "count", json!({ "say": say }));
    let text = |once: toolgate_engine::Once| once.result.output;

    assert_eq!(
        text(ledger.execute(&alice, call("secret"), "k1", &scope).await),
        "run 1: secret"
    );
    // Alice's retry: her stored result, no run.
    assert_eq!(
        text(ledger.execute(&alice, call("secret"), "k1", &scope).await),
        "run 1: secret"
    );
    // Another client with her key: its own call, run, never her result.
    assert_eq!(
        text(ledger.execute(&mallory, call("secret"), "k1", &scope).await),
        "run 2: secret"
    );
    // Her key with other arguments: another call.
    assert_eq!(
        text(ledger.execute(&alice, call("other"), "k1", &scope).await),
        "run 3: other"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 3);
}
