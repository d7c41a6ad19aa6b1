//! Schema versions: the unversioned database of the old `toolgate-agent`
//! session store is upgraded with its sessions; a newer one is refused and
//! left as it was.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions: a panic is a test failure"
)]

mod common;

use common::message;
use rusqlite::{Connection, params};
use serde_json::{Value, json};
use toolgate_store::{
    NewSession, SCHEMA_VERSION, SessionStore, SqliteStore, StepRecord, StoreError, ToolCallRow,
};

/// The `CREATE` statements of crates/toolgate-agent/src/session.rs, as they
/// were before this crate existed.
const OLD_SCHEMA: &str =
    "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, created INTEGER,
                updated INTEGER, agent TEXT, task TEXT, outcome TEXT);
             CREATE TABLE IF NOT EXISTS messages (session_id TEXT, seq INTEGER, role TEXT,
                json TEXT, PRIMARY KEY (session_id, seq));
             CREATE TABLE IF NOT EXISTS steps (session_id TEXT, run INTEGER, step INTEGER,
                input_tokens INTEGER, output_tokens INTEGER, estimated INTEGER, cost_usd REAL);
             CREATE TABLE IF NOT EXISTS tool_calls (session_id TEXT, run INTEGER, step INTEGER,
                call_id TEXT, name TEXT, arguments TEXT, decision TEXT, success INTEGER,
                duration_ms INTEGER, output TEXT);";

/// Messages as the old store serialised `toolgate_agent::Message`.
fn old_messages() -> Vec<Value> {
    vec![
        json!({"role": "system", "content": "You are a coding agent.", "tool_calls": []}),
        json!({"role": "user", "content": "fix the test", "tool_calls": []}),
        json!({"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_1", "name": "read_file", "arguments": "{\"path\":\"a.rs\"}"}]}),
        json!({"role": "tool", "content": "fn main() {}", "tool_call_id": "call_1", "tool_calls": []}),
    ]
}

/// Writes an old database the way the old `save_run` did: two runs of
/// session `old`, and a second session `older`.
fn write_old_database(path: &std::path::Path) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(OLD_SCHEMA).unwrap();
    let session = "INSERT INTO sessions (id, created, updated, agent, task, outcome)
                   VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
    conn.execute(
        session,
        params![
            "older",
            1_600_000_000,
            1_600_000_050,
            "plan",
            "look around",
            "failed"
        ],
    )
    .unwrap();
    conn.execute(
        session,
        params![
            "old",
            1_700_000_000,
            1_700_000_100,
            "build",
            "fix the test",
            "completed"
        ],
    )
    .unwrap();
    for (seq, m) in old_messages().iter().enumerate() {
        conn.execute(
            "INSERT INTO messages (session_id, seq, role, json) VALUES (?1, ?2, ?3, ?4)",
            params![
                "old",
                i64::try_from(seq).unwrap(),
                m["role"].as_str(),
                m.to_string()
            ],
        )
        .unwrap();
    }
    let step = "INSERT INTO steps VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
    conn.execute(step, params!["old", 1, 1, 120, 30, false, 0.01])
        .unwrap();
    conn.execute(step, params!["old", 1, 0, 80, 20, true, None::<f64>])
        .unwrap();
    conn.execute(step, params!["old", 2, 1, 50, 5, false, 0.02])
        .unwrap();
    let call = "INSERT INTO tool_calls VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";
    conn.execute(
        call,
        params![
            "old",
            1,
            1,
            "call_1",
            "read_file",
            "{\"path\":\"a.rs\"}",
            "allowed",
            true,
            12,
            "fn main() {}"
        ],
    )
    .unwrap();
    conn.execute(
        call,
        params![
            "old",
            2,
            1,
            "call_2",
            "run_command",
            "{\"command\":\"rm -rf /\"}",
            "blocked",
            false,
            0,
            "blocked command"
        ],
    )
    .unwrap();
    assert_eq!(user_version(&conn), 0);
}

fn user_version(conn: &Connection) -> i64 {
    conn.pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap()
}

#[tokio::test]
async fn the_old_unversioned_session_database_is_migrated_with_its_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    write_old_database(&path);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(
        user_version(&Connection::open(&path).unwrap()),
        SCHEMA_VERSION
    );

    let list = store.list().await.unwrap();
    let ids: Vec<_> = list.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["old", "older"]);
    let old = &list[0];
    assert_eq!(
        (old.created, old.updated),
        (1_700_000_000_000, 1_700_000_100_000)
    );
    assert_eq!(
        (old.agent.as_str(), old.task.as_str(), old.outcome.as_str()),
        ("build", "fix the test", "completed")
    );
    // Step 1 of each run: the step-0 row records a run's start or end, and
    // is not a model step (its tokens still count).
    assert_eq!((old.pid, old.runs, old.steps), (None, 2, 2));
    assert_eq!((old.input_tokens, old.output_tokens), (250, 55));
    let older = &list[1];
    assert_eq!(
        (older.outcome.as_str(), older.runs, older.steps),
        ("failed", 1, 0)
    );

    assert_eq!(store.messages("old").await.unwrap(), old_messages());
    assert!(store.messages("older").await.unwrap().is_empty());
    let calls = store.tool_calls("old").await.unwrap();
    assert_eq!(
        calls,
        [
            ToolCallRow {
                step: 1,
                call_id: "call_1".to_owned(),
                name: "read_file".to_owned(),
                arguments: "{\"path\":\"a.rs\"}".to_owned(),
                decision: "allowed".to_owned(),
                success: true,
                duration_ms: 12,
                output: "fn main() {}".to_owned(),
                effects: Value::Null,
                recovered: false,
            },
            ToolCallRow {
                step: 1,
                call_id: "call_2".to_owned(),
                name: "run_command".to_owned(),
                arguments: "{\"command\":\"rm -rf /\"}".to_owned(),
                decision: "blocked".to_owned(),
                success: false,
                duration_ms: 0,
                output: "blocked command".to_owned(),
                effects: Value::Null,
                recovered: false,
            }
        ]
    );

    // Resuming continues after the old runs and messages.
    let start = store
        .begin(&NewSession {
            id: "old".to_owned(),
            agent: "build".to_owned(),
            task: "more".to_owned(),
        })
        .await
        .unwrap();
    assert_eq!((start.run, start.stored_messages), (3, 4));
    store
        .record_step(&StepRecord {
            session_id: "old".to_owned(),
            run: 3,
            step: 1,
            messages_from: 4,
            messages: vec![message("user", "more")],
            tool_calls: vec![],
            usage: None,
            events: Vec::new(),
        })
        .await
        .unwrap();
    assert_eq!(store.messages("old").await.unwrap().len(), 5);

    // A second open finds the current version and changes nothing.
    drop(store);
    let again = SqliteStore::open(&path).unwrap();
    assert_eq!(again.get("old").await.unwrap().runs, 3);
}

#[tokio::test]
async fn a_database_of_a_newer_toolgate_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    let newer = SCHEMA_VERSION + 1;
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE things_of_the_future (x INTEGER); INSERT INTO things_of_the_future VALUES (1);")
            .unwrap();
        conn.pragma_update(None, "user_version", newer).unwrap();
    }
    let before = std::fs::read(&path).unwrap();

    let err = SqliteStore::open(&path).unwrap_err();
    assert!(
        matches!(
            &err,
            StoreError::NewerSchema { found, supported, .. }
                if *found == newer && *supported == SCHEMA_VERSION
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{} was written by a newer toolgate (schema version {newer}; this toolgate knows \
             versions up to {SCHEMA_VERSION}); it was left untouched",
            path.display()
        )
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let conn = Connection::open(&path).unwrap();
    let journal: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(journal, "delete");
    let tables: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, 1);
}

#[tokio::test]
async fn a_new_database_gets_the_current_version_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep").join("er").join("toolgate.db");
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.path(), path);
    let conn = Connection::open(&path).unwrap();
    assert_eq!(user_version(&conn), SCHEMA_VERSION);
    let journal: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(journal, "wal");
    // No table of the old schema is left over.
    let legacy: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'legacy_%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(legacy, 0);
}

#[tokio::test]
async fn the_workspace_store_lives_in_the_data_dir_with_a_note_of_its_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("my repo");
    std::fs::create_dir(&workspace).unwrap();
    let data = dir.path().join("data");

    let store = SqliteStore::open_for_workspace(&data, &workspace).unwrap();
    assert_eq!(
        store.path(),
        toolgate_store::default_path(&data, &workspace)
    );
    assert!(store.path().starts_with(data.join("workspaces")));
    let note = store.path().with_file_name(toolgate_store::WORKSPACE_FILE);
    assert_eq!(
        std::fs::read_to_string(note).unwrap(),
        format!("{}\n", workspace.canonicalize().unwrap().display())
    );
    store.begin(&common::new_session("s1")).await.unwrap();
    let again = SqliteStore::open_for_workspace(&data, &workspace).unwrap();
    assert_eq!(again.list().await.unwrap().len(), 1);
}

#[test]
fn files_that_cannot_be_a_store_are_reported_with_their_path() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.db");
    std::fs::write(&garbage, vec![0x5a_u8; 8192]).unwrap();
    let blocker = dir.path().join("a-file");
    std::fs::write(&blocker, "not a directory").unwrap();
    let under_file = blocker.join("toolgate.db");

    let cases: &[(&std::path::Path, &str)] = &[
        (dir.path(), "cannot open the store at"),
        (&garbage, "cannot open the store at"),
        (&under_file, "cannot create or read"),
    ];
    for (path, message) in cases {
        let err = SqliteStore::open(path).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with(message), "{path:?}: {text}");
        let shown = if matches!(err, StoreError::Io { .. }) {
            blocker.display().to_string()
        } else {
            path.display().to_string()
        };
        assert!(text.contains(&shown), "{path:?}: {text}");
        assert!(std::error::Error::source(&err).is_some(), "{err:?}");
    }
    // The garbage is left as it was.
    assert_eq!(std::fs::read(&garbage).unwrap(), vec![0x5a_u8; 8192]);
}

/// The audit table a store of versions 3 to 11 held, as migration 3 made it.
const OLD_AUDIT: &str = "CREATE TABLE audit (id INTEGER PRIMARY KEY, ts TEXT NOT NULL,
    call_id TEXT NOT NULL, session_id TEXT, tool TEXT NOT NULL, args_sha256 TEXT NOT NULL,
    decision TEXT NOT NULL, success INTEGER NOT NULL, duration_us INTEGER NOT NULL,
    error TEXT, effects TEXT NOT NULL)";

/// Undoes what the migrations after 11 did besides dropping the audit
/// table (13 added the approvals' `for_session`, 14 the saved rules, 15
/// the session allows, 16 the clients' buckets, 17 the runs' call ids), and
/// says version 11.
fn back_to_version_11(conn: &Connection) {
    conn.execute_batch(
        "ALTER TABLE approvals DROP COLUMN for_session; DROP TABLE rules; \
         DROP TABLE session_allows; DROP TABLE client_buckets; \
         ALTER TABLE approvals DROP COLUMN call_id; PRAGMA user_version = 11;",
    )
    .unwrap();
}

/// A current store taken back to version 11, its audit table holding
/// `rows` entries with ids 10, 20, 30, …
fn store_of_version_11(path: &std::path::Path, rows: usize) {
    drop(SqliteStore::open(path).unwrap());
    // Opening made no audit file: it is made on the first entry.
    assert!(!toolgate_store::audit_path(path).exists());
    for suffix in ["-wal", "-shm"] {
        let mut name = toolgate_store::audit_path(path).into_os_string();
        name.push(suffix);
        let _ = std::fs::remove_file(name);
    }
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(OLD_AUDIT).unwrap();
    for i in 1..=rows {
        let id = i64::try_from(i * 10).unwrap();
        conn.execute(
            "INSERT INTO audit VALUES (?1, 'ts', ?2, NULL, 'read_file', 'h', 'allowed', 1, 5, NULL, 'null')",
            params![id, format!("old-{i}")],
        )
        .unwrap();
    }
    back_to_version_11(&conn);
}

fn audit_call_ids(store: &SqliteStore) -> Vec<String> {
    use toolgate_store::{AuditFilter, AuditStore as _};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut entries = runtime
        .block_on(store.recent(&AuditFilter::newest(usize::MAX)))
        .unwrap();
    entries.reverse();
    entries.into_iter().map(|e| e.call_id).collect()
}

/// Rule 6 of `SqliteStore`: the audit of an older store moves to the audit
/// file with its ids and order, the store keeps no audit table, and a
/// move interrupted after the copy (the store still at version 11) does
/// not copy twice; rows of another table are appended after those there.
#[test]
fn the_audit_of_an_older_store_moves_to_its_own_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    store_of_version_11(&path, 3);
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(audit_call_ids(&store), ["old-1", "old-2", "old-3"]);
    drop(store);
    let conn = Connection::open(&path).unwrap();
    assert_eq!(user_version(&conn), SCHEMA_VERSION);
    let audit_tables: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name = 'audit'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(audit_tables, 0, "the store kept its audit table");
    let audit = Connection::open(toolgate_store::audit_path(&path)).unwrap();
    let ids: Vec<i64> = audit
        .prepare("SELECT id FROM audit ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(ids, [10, 20, 30]);
    drop(audit);

    // Interrupted: the copy committed, the store's migration did not.
    conn.execute_batch(OLD_AUDIT).unwrap();
    for (id, call) in [(10, "old-1"), (20, "old-2"), (30, "old-3")] {
        conn.execute(
            "INSERT INTO audit VALUES (?1, 'ts', ?2, NULL, 'read_file', 'h', 'allowed', 1, 5, NULL, 'null')",
            params![id, call],
        )
        .unwrap();
    }
    back_to_version_11(&conn);
    drop(conn);
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(audit_call_ids(&store), ["old-1", "old-2", "old-3"]);
    drop(store);

    // Another old table (a backup put back): its rows come after.
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(OLD_AUDIT).unwrap();
    conn.execute(
        "INSERT INTO audit VALUES (10, 'ts', 'restored', NULL, 'read_file', 'h', 'allowed', 1, 5, NULL, 'null')",
        [],
    )
    .unwrap();
    back_to_version_11(&conn);
    drop(conn);
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(
        audit_call_ids(&store),
        ["old-1", "old-2", "old-3", "restored"]
    );
}

/// Rule 6: a process that only appends to the audit never reads the
/// store's schema — the store's file is opened, its version checked, and
/// nothing else; a store whose schema is unreadable still takes audit
/// entries, and fails at its first own statement.
#[tokio::test]
async fn appending_to_the_audit_does_not_read_the_store_schema() {
    use toolgate_store::{AuditStore as _, NoteStore as _};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    drop(SqliteStore::open(&path).unwrap());
    {
        // A schema SQLite cannot parse: every statement that reads it fails.
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA writable_schema = ON;").unwrap();
        conn.execute(
            "UPDATE sqlite_master SET sql = 'CREATE TABLE notes (' WHERE name = 'notes'",
            [],
        )
        .unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    store.append(&[common::audit_entry(1)]).await.unwrap();
    assert!(store.note(1).await.is_err());
}
