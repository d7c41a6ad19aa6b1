//! The project tools through the gate, over a real `SQLite` store.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions: a panic is a test failure"
)]

use std::sync::Arc;

use serde_json::{Value, json};
use toolgate_assistant::tasks::{self, TasksConfig};
use toolgate_core::{Registry, ToolCall};
use toolgate_engine::{Decision, Execution, ExecutionEngine};
use toolgate_policy::{ConfirmationMode, ConfirmationPolicy};
use toolgate_store::{ProjectKey, SqliteStore, TaskFilter, TaskStatus, TaskStore};

fn enabled() -> TasksConfig {
    TasksConfig {
        enabled: true,
        ..TasksConfig::default()
    }
}

fn registry(store: &Arc<SqliteStore>, config: &TasksConfig) -> Arc<Registry> {
    let registry = Registry::new();
    for tool in tasks::tools(config, Arc::clone(store) as Arc<dyn TaskStore>) {
        registry.register_arc(tool).unwrap();
    }
    Arc::new(registry)
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

#[tokio::test]
async fn projects_and_tasks_through_the_gate_with_their_activity() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    let registry = registry(&store, &enabled());
    let gate = ExecutionEngine::builder(Arc::clone(&registry)).build();

    let (text, meta) = ok(
        &gate,
        "create_project",
        json!({"name": "Kitchen", "description": "renovation"}),
    )
    .await;
    let kitchen = meta["project"]["id"].as_i64().unwrap();
    assert_eq!(text, format!("Created project #{kitchen} \"Kitchen\"."));
    let error = refused(&gate, "create_project", json!({"name": "kitchen"})).await;
    assert!(error.contains("already exists"), "{error}");

    // A project by name (any case), by id, or by `#id`.
    let (_, meta) = ok(
        &gate,
        "add_task",
        json!({"project": "KITCHEN", "title": "Order tiles", "priority": "high"}),
    )
    .await;
    let tiles = meta["task"]["id"].as_i64().unwrap();
    let (_, meta) = ok(
        &gate,
        "add_task",
        json!({"project": kitchen, "title": "Paint walls"}),
    )
    .await;
    let paint = meta["task"]["id"].as_i64().unwrap();
    let (text, _) = ok(
        &gate,
        "add_task",
        json!({"project": format!("#{kitchen}"), "title": "Fix the sink", "status": "blocked", "priority": "low"}),
    )
    .await;
    assert!(
        text.contains("[blocked] (low) Fix the sink — project \"Kitchen\""),
        "{text}"
    );
    let error = refused(
        &gate,
        "add_task",
        json!({"project": "Garage", "title": "x"}),
    )
    .await;
    assert!(error.starts_with("there is no project `Garage`"), "{error}");

    ok(
        &gate,
        "update_task",
        json!({"id": tiles, "status": "in_progress", "note": "asked two shops"}),
    )
    .await;
    ok(&gate, "update_task", json!({"id": paint, "status": "done"})).await;

    // Open tasks: in progress first, then by priority; done ones left out.
    let (text, meta) = ok(&gate, "list_tasks", json!({"project": "Kitchen"})).await;
    let titles: Vec<&str> = meta["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Order tiles", "Fix the sink"], "{text}");
    let (_, meta) = ok(&gate, "list_tasks", json!({"status": "done"})).await;
    assert_eq!(meta["tasks"][0]["id"], paint);

    let (text, _) = ok(&gate, "list_projects", json!({})).await;
    assert!(
        text.contains(&format!(
            "#{kitchen} Kitchen [active] — 2 open, 1 done — renovation"
        )),
        "{text}"
    );

    // Deleting asks: refused without anyone to ask, done in yolo.
    let out = call(&gate, "delete_task", json!({"id": paint})).await;
    assert_eq!(out.decision, Decision::NoApprover);
    assert!(store.task(paint).await.unwrap().is_some());
    let yolo = ExecutionEngine::builder(Arc::clone(&registry))
        .policy(ConfirmationPolicy::new(ConfirmationMode::Yolo))
        .build();
    ok(&yolo, "delete_task", json!({"id": paint})).await;
    assert!(store.task(paint).await.unwrap().is_none());

    ok(
        &gate,
        "update_project",
        json!({"project": "Kitchen", "status": "paused", "note": "waiting for the tiles"}),
    )
    .await;

    // The log: every change, newest first, with times.
    let (text, meta) = ok(&gate, "project_activity", json!({"project": "kitchen"})).await;
    let actions: Vec<&str> = meta["activity"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        [
            "project_updated",
            "task_deleted",
            "task_updated",
            "task_updated",
            "task_added",
            "task_added",
            "task_added",
            "project_created",
        ],
        "{text}"
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        format!("Activity of project #{kitchen} \"Kitchen\" (newest first):")
    );
    assert!(
        lines[1].ends_with(
            "UTC  project_updated  status active → paused — note: waiting for the tiles"
        ),
        "{text}"
    );
    assert!(
        lines[4].ends_with(&format!(
            "task_updated  task #{tiles} \"Order tiles\": status todo → in_progress — note: asked two shops"
        )),
        "{text}"
    );
    // The store agrees with what the tool showed.
    let stored = store.activity(kitchen, 100).await.unwrap();
    assert_eq!(stored.len(), 8);
    let (_, meta) = ok(
        &gate,
        "project_activity",
        json!({"project": kitchen, "limit": 2}),
    )
    .await;
    assert_eq!(meta["activity"].as_array().unwrap().len(), 2);
    let project = store
        .project(&ProjectKey::Id(kitchen))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(project.status.as_str(), "paused");
    assert_eq!(
        store.task(tiles).await.unwrap().unwrap().status,
        TaskStatus::InProgress
    );
}

#[tokio::test]
async fn bad_task_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    let config = TasksConfig {
        max_title_chars: 12,
        max_text_chars: 5,
        ..enabled()
    };
    let gate = ExecutionEngine::builder(registry(&store, &config)).build();
    ok(&gate, "create_project", json!({"name": "P"})).await;
    let cases: &[(&str, Value, &str)] = &[
        (
            "create_project",
            json!({"name": " "}),
            "the project name is empty",
        ),
        (
            "add_task",
            json!({"project": "P", "title": "two\nlines"}),
            "must be one line",
        ),
        (
            "add_task",
            json!({"project": "P", "title": "thirteen char"}),
            "the task title is 13 characters; at most 12",
        ),
        (
            "add_task",
            json!({"project": "P", "title": "t", "description": "123456"}),
            "the description is 6 characters; at most 5",
        ),
        ("update_task", json!({"id": 1}), "nothing to change"),
        (
            "update_task",
            json!({"id": 42, "status": "done"}),
            "there is no task #42",
        ),
        (
            "update_project",
            json!({"project": "P"}),
            "nothing to change",
        ),
        (
            "project_activity",
            json!({"project": 77}),
            "there is no project `77`",
        ),
    ];
    for (tool, args, message) in cases {
        let error = refused(&gate, tool, args.clone()).await;
        assert!(error.contains(message), "{tool} {args}: {error}");
    }
    // Statuses and priorities outside the lists never reach the tool.
    for (tool, args) in [
        (
            "add_task",
            json!({"project": "P", "title": "t", "priority": "urgent"}),
        ),
        ("update_task", json!({"id": 1, "status": "waiting"})),
        (
            "update_project",
            json!({"project": "P", "status": "closed"}),
        ),
    ] {
        let out = call(&gate, tool, args).await;
        assert_eq!(out.decision, Decision::InvalidArguments, "{tool}");
    }
    assert!(
        store
            .list_tasks(&TaskFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
}

#[test]
fn the_group_is_off_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    assert!(
        tasks::tools(
            &TasksConfig::default(),
            Arc::clone(&store) as Arc<dyn TaskStore>
        )
        .is_empty()
    );
    let names: Vec<String> = tasks::tools(&enabled(), Arc::clone(&store) as Arc<dyn TaskStore>)
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(names.len(), 8, "{names:?}");
    assert!(!names.contains(&"update_plan".to_owned()));
}
