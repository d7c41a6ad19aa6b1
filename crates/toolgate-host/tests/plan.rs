//! `update_plan` (a coding tool of `toolgate-tools`) through the gate,
//! keeping its plans in a real `SQLite` store through the host's
//! [`StorePlans`].

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions: a panic is a test failure"
)]

use std::sync::Arc;

use serde_json::{Value, json};
use toolgate_core::{Registry, StepStatus, ToolCall};
use toolgate_engine::{Decision, Execution, ExecutionEngine};
use toolgate_host::StorePlans;
use toolgate_store::{Plan, PlanStore, SqliteStore, StepStatus as StoredStatus};
use toolgate_tools::plan::UpdatePlan;

fn registry_with(store: &Arc<SqliteStore>, max_steps: usize) -> Arc<Registry> {
    let registry = Registry::new();
    let plans = Arc::new(StorePlans::new(Arc::clone(store) as Arc<dyn PlanStore>));
    registry
        .register(UpdatePlan::new(Some(plans)).max_steps(max_steps))
        .unwrap();
    Arc::new(registry)
}

fn registry(store: &Arc<SqliteStore>) -> Arc<Registry> {
    registry_with(store, 30)
}

fn open(dir: &tempfile::TempDir) -> Arc<SqliteStore> {
    Arc::new(SqliteStore::open(dir.path().join("toolgate.db")).unwrap())
}

async fn call(gate: &ExecutionEngine, tool: &str, args: Value) -> Execution {
    gate.execute(ToolCall::new("t", tool, args)).await
}

async fn ok(gate: &ExecutionEngine, tool: &str, args: Value) -> (String, Value) {
    let out = call(gate, tool, args.clone()).await;
    assert_eq!(
        out.decision,
        Decision::Executed,
        "{tool} {args}: {:?}",
        out.result
    );
    assert!(out.result.success, "{tool} {args}: {:?}", out.result.error);
    assert!(out.effects.list().is_empty(), "{tool}: {:?}", out.effects);
    (out.result.output, Value::Object(out.result.metadata))
}

async fn refused(gate: &ExecutionEngine, tool: &str, args: Value) -> String {
    let out = call(gate, tool, args.clone()).await;
    assert!(!out.result.success, "{tool} {args}: {}", out.result.output);
    out.result.error.unwrap()
}

fn steps(steps: &[(&str, &str)]) -> Value {
    json!({"steps": steps.iter().map(|(s, st)| json!({"step": s, "status": st})).collect::<Vec<_>>()})
}

#[tokio::test]
async fn the_plan_is_replaced_per_session_and_readable_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    let registry = registry(&store);
    let session = |id: &str| {
        ExecutionEngine::builder(Arc::clone(&registry))
            .session_id(id)
            .build()
    };
    let s1 = session("s1");
    let s2 = session("s2");

    let (text, meta) = ok(
        &s1,
        "update_plan",
        steps(&[
            ("Read the failing test", "in_progress"),
            ("Fix the parser", "pending"),
        ]),
    )
    .await;
    assert_eq!(
        text,
        "Plan (0/2 done):\n[>] Read the failing test\n[ ] Fix the parser"
    );
    assert_eq!(meta["plan"]["steps"][0]["status"], "in_progress");
    assert_eq!(meta["session_id"], "s1");
    ok(&s2, "update_plan", steps(&[("Deploy", "pending")])).await;

    let mut second = steps(&[
        ("Read the failing test", "completed"),
        ("Fix the parser", "in_progress"),
        ("Run the tests", "pending"),
    ]);
    second["explanation"] = json!("the parser drops the last token");
    let (text, meta) = ok(&s1, "update_plan", second).await;
    assert_eq!(
        text,
        "Plan (1/3 done):\n[x] Read the failing test\n[>] Fix the parser\n[ ] Run the tests\nWhy: the parser drops the last token"
    );

    // The front end reads the plan of a session from the store, as the
    // metadata showed it.
    let reader = SqliteStore::open(dir.path().join("toolgate.db")).unwrap();
    let plan: Plan = reader.plan("s1").await.unwrap().unwrap();
    assert_eq!(serde_json::to_value(&plan).unwrap(), meta["plan"]);
    let statuses: Vec<StoredStatus> = plan.steps.iter().map(|s| s.status).collect();
    assert_eq!(
        statuses,
        [
            StoredStatus::Completed,
            StoredStatus::InProgress,
            StoredStatus::Pending
        ]
    );
    assert_eq!(
        reader.plan("s2").await.unwrap().unwrap().steps[0].step,
        "Deploy"
    );

    // A refused plan changes nothing.
    let error = refused(
        &s1,
        "update_plan",
        steps(&[("a", "in_progress"), ("b", "pending"), ("c", "in_progress")]),
    )
    .await;
    assert_eq!(
        error,
        "steps 1, 3 are all in_progress; at most one step may be in_progress at a time"
    );
    assert_eq!(reader.plan("s1").await.unwrap().unwrap(), plan);

    // An empty plan clears it.
    let (text, _) = ok(&s1, "update_plan", json!({"steps": []})).await;
    assert_eq!(text, "Plan (0/0 done): (no steps)");
    assert!(reader.plan("s1").await.unwrap().unwrap().steps.is_empty());
}

#[tokio::test]
async fn without_a_session_the_plan_stays_in_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    let gate = ExecutionEngine::builder(registry(&store)).build();
    ok(&gate, "update_plan", steps(&[("only here", "pending")])).await;
    // Nothing in the store under any id.
    let conn = rusqlite_count(&dir);
    assert_eq!(conn, 0);

    // The tool itself, without a store, keeps every plan in the process.
    let local = UpdatePlan::new(None);
    let ctx = toolgate_core::ToolContext::new("c").with_session("s9");
    let result = toolgate_core::Tool::execute(&local, steps(&[("x", "completed")]), &ctx).await;
    assert!(result.success, "{:?}", result.error);
    let plan = local.current(Some("s9")).await.unwrap().unwrap();
    assert_eq!(plan.steps[0].status, StepStatus::Completed);
    assert!(local.current(None).await.unwrap().is_none());
}

#[tokio::test]
async fn plan_limits() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    let gate = ExecutionEngine::builder(registry_with(&store, 3))
        .session_id("s")
        .build();
    let long = "x".repeat(301);
    let cases: Vec<(Value, &str)> = vec![
        (
            steps(&[
                ("a", "pending"),
                ("b", "pending"),
                ("c", "pending"),
                ("d", "pending"),
            ]),
            "the plan has 4 steps; at most 3",
        ),
        (steps(&[("  ", "pending")]), "step 1 is empty"),
        (
            steps(&[("a", "pending"), ("b\nc", "pending")]),
            "step 2 must be one line",
        ),
        (
            steps(&[(long.as_str(), "pending")]),
            "longer than 300 characters",
        ),
    ];
    for (args, message) in cases {
        let error = refused(&gate, "update_plan", args.clone()).await;
        assert!(error.contains(message), "{args}: {error}");
    }
    let out = call(&gate, "update_plan", steps(&[("a", "done")])).await;
    assert_eq!(out.decision, Decision::InvalidArguments);
    assert_eq!(store.plan("s").await.unwrap(), None);
}

/// How many plans the store file holds, read with a connection of its own.
fn rusqlite_count(dir: &tempfile::TempDir) -> i64 {
    let conn = rusqlite::Connection::open(dir.path().join("toolgate.db")).unwrap();
    conn.query_row("SELECT COUNT(*) FROM session_plans", [], |r| r.get(0))
        .unwrap()
}
