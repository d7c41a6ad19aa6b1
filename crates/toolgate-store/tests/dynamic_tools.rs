//! Dynamic tools in a real `SQLite` file: created by one store object and
//! reviewed through another (as the CLI would, in another process), with
//! the name and per-agent rules held under concurrent creation.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a panic is a test failure"
)]

use std::sync::Arc;

use serde_json::json;
use toolgate_store::{
    Created, DynamicToolKind, DynamicToolRecord, DynamicToolScope, DynamicToolStatus,
    DynamicToolStore, NewDynamicTool, SqliteStore, StatusChange,
};

fn new(name: &str, agent: &str, scope: DynamicToolScope) -> NewDynamicTool {
    NewDynamicTool {
        name: name.to_owned(),
        description: format!("the {name} tool"),
        kind: DynamicToolKind::Command,
        interpreter: None,
        source: "git log -n {{count}}".to_owned(),
        parameters: json!({"type": "object", "properties": {"count": {"type": "integer"}}}),
        scope,
        created_by: agent.to_owned(),
        session_id: Some("s1".to_owned()),
        advice: json!([{"category": "process", "reason": "runs git"}]),
    }
}

async fn create(store: &SqliteStore, tool: &NewDynamicTool, max: usize) -> DynamicToolRecord {
    match store.create_dynamic_tool(tool, max).await.unwrap() {
        Created::Created(record) => *record,
        other => panic!("{} was not created: {other:?}", tool.name),
    }
}

async fn set(store: &SqliteStore, id: i64, status: DynamicToolStatus) -> StatusChange {
    store.set_dynamic_tool_status(id, status).await.unwrap()
}

fn names(records: &[DynamicToolRecord]) -> Vec<&str> {
    records.iter().map(|r| r.name.as_str()).collect()
}

#[tokio::test]
async fn a_tool_round_trips_and_is_reviewed_from_another_connection() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    let agent_side = SqliteStore::open(&path).unwrap();
    let script = NewDynamicTool {
        kind: DynamicToolKind::Script,
        interpreter: Some("python3".to_owned()),
        source: "import json, sys\nprint(json.load(sys.stdin))\n".to_owned(),
        session_id: None,
        ..new("echo_args", "build", DynamicToolScope::Global)
    };
    let created = create(&agent_side, &script, 20).await;
    assert_eq!(created.status, DynamicToolStatus::Pending);
    assert_eq!(created.created, created.updated);

    // The reviewer's store object (the CLI) reads exactly what was written.
    let reviewer = SqliteStore::open(&path).unwrap();
    let stored = reviewer.dynamic_tool(created.id).await.unwrap().unwrap();
    assert_eq!(stored, created);
    assert_eq!(
        names(
            &reviewer
                .list_dynamic_tools(Some(DynamicToolStatus::Pending))
                .await
                .unwrap()
        ),
        ["echo_args"]
    );
    assert!(
        reviewer
            .dynamic_tool(created.id + 1)
            .await
            .unwrap()
            .is_none()
    );

    let StatusChange::Changed(approved) =
        set(&reviewer, created.id, DynamicToolStatus::Approved).await
    else {
        panic!("approval refused");
    };
    assert_eq!(approved.status, DynamicToolStatus::Approved);
    assert!(approved.updated > approved.created);
    // The agent's connection sees the approval.
    assert_eq!(
        names(
            &agent_side
                .approved_dynamic_tools_for("build")
                .await
                .unwrap()
        ),
        ["echo_args"]
    );
    assert!(
        agent_side
            .list_dynamic_tools(Some(DynamicToolStatus::Pending))
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn status_changes_follow_the_rules() {
    use DynamicToolStatus::{Approved, Pending, Rejected};
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("toolgate.db")).unwrap();
    // (from, to, the status after, whether the change is refused as final)
    let cases: &[(
        DynamicToolStatus,
        DynamicToolStatus,
        DynamicToolStatus,
        bool,
    )] = &[
        (Pending, Approved, Approved, false),
        (Pending, Rejected, Rejected, false),
        (Pending, Pending, Pending, false),
        (Approved, Approved, Approved, false),
        (Approved, Rejected, Rejected, false),
        (Approved, Pending, Pending, false),
        (Rejected, Rejected, Rejected, false),
        (Rejected, Approved, Rejected, true),
        (Rejected, Pending, Rejected, true),
    ];
    for (i, (from, to, after, refused)) in cases.iter().enumerate() {
        let tool = create(
            &store,
            &new(&format!("tool_{i}"), "build", DynamicToolScope::Agent),
            100,
        )
        .await;
        match from {
            Pending => {}
            Approved => assert!(matches!(
                set(&store, tool.id, Approved).await,
                StatusChange::Changed(_)
            )),
            Rejected => assert!(matches!(
                set(&store, tool.id, Rejected).await,
                StatusChange::Changed(_)
            )),
        }
        let change = set(&store, tool.id, *to).await;
        let record = match &change {
            StatusChange::Changed(r) => {
                assert!(!refused, "{from:?} -> {to:?} should be refused");
                r
            }
            StatusChange::Final(r) => {
                assert!(refused, "{from:?} -> {to:?} was refused");
                r
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(record.status, *after, "{from:?} -> {to:?}");
        let stored = store.dynamic_tool(tool.id).await.unwrap().unwrap();
        assert_eq!(stored.status, *after, "{from:?} -> {to:?} as stored");
    }
    assert_eq!(set(&store, 9_999, Approved).await, StatusChange::NotFound);
}

#[tokio::test]
async fn names_are_unique_among_live_tools_and_a_rejection_frees_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("toolgate.db")).unwrap();
    let first = create(
        &store,
        &new("git_recent", "build", DynamicToolScope::Agent),
        20,
    )
    .await;
    // Pending: taken, whoever asks.
    let again = store
        .create_dynamic_tool(&new("git_recent", "review", DynamicToolScope::Global), 20)
        .await
        .unwrap();
    assert_eq!(
        again,
        Created::NameTaken {
            id: first.id,
            status: DynamicToolStatus::Pending
        }
    );
    // Approved: still taken.
    set(&store, first.id, DynamicToolStatus::Approved).await;
    let again = store
        .create_dynamic_tool(&new("git_recent", "build", DynamicToolScope::Agent), 20)
        .await
        .unwrap();
    assert_eq!(
        again,
        Created::NameTaken {
            id: first.id,
            status: DynamicToolStatus::Approved
        }
    );
    // Rejected (withdrawn): the name is free, and the old record stays.
    set(&store, first.id, DynamicToolStatus::Rejected).await;
    let second = create(
        &store,
        &new("git_recent", "build", DynamicToolScope::Agent),
        20,
    )
    .await;
    assert!(second.id > first.id);
    let all = store.list_dynamic_tools(None).await.unwrap();
    let statuses: Vec<(i64, DynamicToolStatus)> = all.iter().map(|r| (r.id, r.status)).collect();
    assert_eq!(
        statuses,
        [
            (first.id, DynamicToolStatus::Rejected),
            (second.id, DynamicToolStatus::Pending)
        ]
    );
    // The rejected one cannot come back to share the name.
    assert!(matches!(
        set(&store, first.id, DynamicToolStatus::Approved).await,
        StatusChange::Final(_)
    ));
}

#[tokio::test]
async fn each_agent_has_its_own_limit_and_rejected_tools_do_not_count() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("toolgate.db")).unwrap();
    let a = create(&store, &new("a1", "build", DynamicToolScope::Agent), 3).await;
    create(&store, &new("a2", "build", DynamicToolScope::Global), 3).await;
    let a3 = create(&store, &new("a3", "build", DynamicToolScope::Agent), 3).await;
    set(&store, a3.id, DynamicToolStatus::Approved).await;
    assert_eq!(
        store
            .create_dynamic_tool(&new("a4", "build", DynamicToolScope::Agent), 3)
            .await
            .unwrap(),
        Created::LimitReached { count: 3 }
    );
    // Another agent is not held by build's tools.
    create(&store, &new("r1", "review", DynamicToolScope::Agent), 3).await;
    // A rejected tool gives its place back.
    set(&store, a.id, DynamicToolStatus::Rejected).await;
    create(&store, &new("a4", "build", DynamicToolScope::Agent), 3).await;
    // A limit of zero refuses every tool.
    assert_eq!(
        store
            .create_dynamic_tool(&new("z", "plan", DynamicToolScope::Agent), 0)
            .await
            .unwrap(),
        Created::LimitReached { count: 0 }
    );
}

#[tokio::test]
async fn approved_tools_are_filtered_by_scope() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("toolgate.db")).unwrap();
    let tools = [
        ("build_own", "build", DynamicToolScope::Agent, true),
        ("build_global", "build", DynamicToolScope::Global, true),
        ("review_own", "review", DynamicToolScope::Agent, true),
        ("review_global", "review", DynamicToolScope::Global, true),
        ("build_pending", "build", DynamicToolScope::Global, false),
    ];
    for (name, agent, scope, approve) in tools {
        let record = create(&store, &new(name, agent, scope), 20).await;
        if approve {
            set(&store, record.id, DynamicToolStatus::Approved).await;
        }
    }
    let cases: &[(&str, &[&str])] = &[
        ("build", &["build_own", "build_global", "review_global"]),
        ("review", &["build_global", "review_own", "review_global"]),
        ("plan", &["build_global", "review_global"]),
    ];
    for (agent, expected) in cases {
        let approved = store.approved_dynamic_tools_for(agent).await.unwrap();
        assert_eq!(names(&approved), *expected, "{agent}");
    }
}

/// Two processes' stores creating the same name, and filling an agent's
/// last places, at the same moment: the write lock lets exactly one win
/// each race.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_creations_cannot_share_a_name_or_pass_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    let stores: Vec<Arc<SqliteStore>> = (0..4)
        .map(|_| Arc::new(SqliteStore::open(&path).unwrap()))
        .collect();

    let barrier = Arc::new(tokio::sync::Barrier::new(stores.len()));
    let mut tasks = Vec::new();
    for (i, store) in stores.iter().enumerate() {
        let store = Arc::clone(store);
        let barrier = Arc::clone(&barrier);
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let tool = new("same_name", &format!("agent{i}"), DynamicToolScope::Agent);
            store.create_dynamic_tool(&tool, 20).await.unwrap()
        }));
    }
    let mut created = 0;
    for task in tasks {
        match task.await.unwrap() {
            Created::Created(_) => created += 1,
            Created::NameTaken { .. } => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(created, 1);

    let barrier = Arc::new(tokio::sync::Barrier::new(stores.len()));
    let mut tasks = Vec::new();
    for (i, store) in stores.iter().enumerate() {
        let store = Arc::clone(store);
        let barrier = Arc::clone(&barrier);
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let mut won = 0;
            for j in 0..5 {
                let tool = new(&format!("t_{i}_{j}"), "build", DynamicToolScope::Agent);
                if let Created::Created(_) = store.create_dynamic_tool(&tool, 7).await.unwrap() {
                    won += 1;
                }
            }
            won
        }));
    }
    let mut total = 0;
    for task in tasks {
        total += task.await.unwrap();
    }
    assert_eq!(total, 7);
    let live = stores[0]
        .list_dynamic_tools(Some(DynamicToolStatus::Pending))
        .await
        .unwrap()
        .iter()
        .filter(|r| r.created_by == "build")
        .count();
    assert_eq!(live, 7);
}

#[test]
fn a_row_another_program_broke_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    let store = SqliteStore::open(&path).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let record = runtime.block_on(create(
        &store,
        &new("broken", "build", DynamicToolScope::Agent),
        20,
    ));
    let conn = rusqlite_connection(&path);
    conn.execute(
        "UPDATE dynamic_tools SET parameters = '{not json' WHERE id = ?1",
        [record.id],
    )
    .unwrap();
    let error = runtime.block_on(store.dynamic_tool(record.id)).unwrap_err();
    assert_eq!(error.to_string(), "stored data is not valid JSON");
    // The CHECK constraints keep unknown statuses out in the first place.
    let refused = conn.execute(
        "UPDATE dynamic_tools SET status = 'maybe' WHERE id = ?1",
        [record.id],
    );
    assert!(refused.is_err());
}

fn rusqlite_connection(path: &std::path::Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}

/// A store written before dynamic tools existed (schema version 7) gains
/// the table on open, and keeps what it held.
#[tokio::test]
async fn a_version_7_store_gains_the_table_and_keeps_its_data() {
    use toolgate_store::{NewNote, NoteStore};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    let store = SqliteStore::open(&path).unwrap();
    let note = store
        .create_note(&NewNote {
            title: "kept".to_owned(),
            body: "across the upgrade".to_owned(),
        })
        .await
        .unwrap();
    drop(store);
    // Back to version 7: migration 8 is this table's (9 the session
    // events', 10 the checkpoints', 11 the approvals', 12 moved the audit
    // table out of the store, 14 the saved rules', 15 the session
    // allows', 16 the clients' buckets).
    let conn = rusqlite_connection(&path);
    conn.execute_batch(
        "DROP TABLE dynamic_tools; DROP TABLE session_events; DROP TABLE checkpoints;
         DROP TABLE rewinds; DROP TABLE approvals; DROP TABLE rules; DROP TABLE session_allows;
         DROP TABLE client_buckets;
         CREATE TABLE audit (id INTEGER PRIMARY KEY, ts TEXT NOT NULL, call_id TEXT NOT NULL,
            session_id TEXT, tool TEXT NOT NULL, args_sha256 TEXT NOT NULL,
            decision TEXT NOT NULL, success INTEGER NOT NULL, duration_us INTEGER NOT NULL,
            error TEXT, effects TEXT NOT NULL);
         PRAGMA user_version = 7;",
    )
    .unwrap();
    drop(conn);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.note(note.id).await.unwrap().unwrap().title, "kept");
    create(
        &store,
        &new("after_upgrade", "build", DynamicToolScope::Agent),
        20,
    )
    .await;
    let version: i64 = rusqlite_connection(&path)
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, toolgate_store::SCHEMA_VERSION);
}
