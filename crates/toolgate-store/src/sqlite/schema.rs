//! The `SQLite` schema and its migrations.
//!
//! The schema's version is `PRAGMA user_version`: the number of migrations
//! applied. Migrations are an ordered list and only ever appended to; a
//! feature that needs tables (memory, notes, schedules) adds one at the
//! end.
//!
//! Version 0 is both an empty file and a database written by the
//! unversioned `toolgate-agent` session store: migration 1 is that store's
//! exact `CREATE TABLE IF NOT EXISTS` statements, so on an old database it
//! changes nothing, and migration 2 rebuilds its tables into today's shape,
//! keeping their rows. Every new database takes the same path, so the
//! upgrade of old ones is exercised on every first open.

use std::path::Path;

use rusqlite::{Connection, Transaction, TransactionBehavior};

use super::Db as _;
use crate::StoreError;

/// The migrations, in order: `MIGRATIONS[i]` takes the schema from version
/// `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: the unversioned session store of toolgate-agent (session.rs), as it
    // wrote it.
    "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, created INTEGER,
        updated INTEGER, agent TEXT, task TEXT, outcome TEXT);
     CREATE TABLE IF NOT EXISTS messages (session_id TEXT, seq INTEGER, role TEXT,
        json TEXT, PRIMARY KEY (session_id, seq));
     CREATE TABLE IF NOT EXISTS steps (session_id TEXT, run INTEGER, step INTEGER,
        input_tokens INTEGER, output_tokens INTEGER, estimated INTEGER, cost_usd REAL);
     CREATE TABLE IF NOT EXISTS tool_calls (session_id TEXT, run INTEGER, step INTEGER,
        call_id TEXT, name TEXT, arguments TEXT, decision TEXT, success INTEGER,
        duration_ms INTEGER, output TEXT);",
    // 2: sessions written step by step. SQLite cannot add constraints to a
    // table, so the tables are rebuilt: renamed away, created anew, copied,
    // dropped. Times become milliseconds; a session gets its run count (the
    // highest run its steps and tool calls name) and the pid of a running
    // run; tool calls get their effects and whether they were recovered.
    "ALTER TABLE sessions RENAME TO legacy_sessions;
     ALTER TABLE messages RENAME TO legacy_messages;
     ALTER TABLE steps RENAME TO legacy_steps;
     ALTER TABLE tool_calls RENAME TO legacy_tool_calls;

     CREATE TABLE sessions (
        id TEXT PRIMARY KEY NOT NULL,
        created INTEGER NOT NULL,
        updated INTEGER NOT NULL,
        agent TEXT NOT NULL,
        task TEXT NOT NULL,
        outcome TEXT NOT NULL,
        pid INTEGER,
        runs INTEGER NOT NULL
     );
     CREATE INDEX sessions_updated ON sessions (updated);
     CREATE TABLE messages (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        role TEXT,
        json TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
     ) WITHOUT ROWID;
     CREATE TABLE steps (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        run INTEGER NOT NULL,
        step INTEGER NOT NULL,
        recorded INTEGER,
        input_tokens INTEGER,
        output_tokens INTEGER,
        estimated INTEGER,
        cost_usd REAL
     );
     CREATE INDEX steps_session ON steps (session_id, run, step);
     CREATE TABLE tool_calls (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        run INTEGER NOT NULL,
        step INTEGER NOT NULL,
        call_id TEXT NOT NULL,
        name TEXT NOT NULL,
        arguments TEXT NOT NULL,
        decision TEXT NOT NULL,
        success INTEGER NOT NULL,
        duration_ms INTEGER NOT NULL,
        output TEXT NOT NULL,
        effects TEXT NOT NULL DEFAULT 'null',
        recovered INTEGER NOT NULL DEFAULT 0
     );
     CREATE INDEX tool_calls_session ON tool_calls (session_id, id);

     INSERT INTO sessions (id, created, updated, agent, task, outcome, pid, runs)
        SELECT s.id, COALESCE(s.created, 0) * 1000, COALESCE(s.updated, s.created, 0) * 1000,
               COALESCE(s.agent, ''), COALESCE(s.task, ''), COALESCE(s.outcome, 'unknown'), NULL,
               MAX(1,
                   COALESCE((SELECT MAX(run) FROM legacy_steps WHERE session_id = s.id), 0),
                   COALESCE((SELECT MAX(run) FROM legacy_tool_calls WHERE session_id = s.id), 0))
        FROM legacy_sessions s WHERE s.id IS NOT NULL;
     INSERT INTO messages (session_id, seq, role, json)
        SELECT session_id, seq, role, json FROM legacy_messages
        WHERE session_id IN (SELECT id FROM sessions) AND seq IS NOT NULL AND json IS NOT NULL;
     INSERT INTO steps (session_id, run, step, recorded, input_tokens, output_tokens,
                        estimated, cost_usd)
        SELECT session_id, COALESCE(run, 1), COALESCE(step, 0), NULL, input_tokens,
               output_tokens, estimated, cost_usd
        FROM legacy_steps WHERE session_id IN (SELECT id FROM sessions) ORDER BY rowid;
     INSERT INTO tool_calls (session_id, run, step, call_id, name, arguments, decision,
                             success, duration_ms, output)
        SELECT session_id, COALESCE(run, 1), COALESCE(step, 0), COALESCE(call_id, ''),
               COALESCE(name, ''), COALESCE(arguments, ''), COALESCE(decision, ''),
               COALESCE(success, 0), COALESCE(duration_ms, 0), COALESCE(output, '')
        FROM legacy_tool_calls WHERE session_id IN (SELECT id FROM sessions) ORDER BY rowid;

     DROP TABLE legacy_tool_calls;
     DROP TABLE legacy_steps;
     DROP TABLE legacy_messages;
     DROP TABLE legacy_sessions;",
    // 3: the gate's audit trail. `id` is the order of appending. Only the
    // session and tool filters get an index: an index per column would
    // slow down the appends that happen on every tool call.
    "CREATE TABLE audit (
        id INTEGER PRIMARY KEY,
        ts TEXT NOT NULL,
        call_id TEXT NOT NULL,
        session_id TEXT,
        tool TEXT NOT NULL,
        args_sha256 TEXT NOT NULL,
        decision TEXT NOT NULL,
        success INTEGER NOT NULL,
        duration_us INTEGER NOT NULL,
        error TEXT,
        effects TEXT NOT NULL
     );
     CREATE INDEX audit_session ON audit (session_id, id);
     CREATE INDEX audit_tool ON audit (tool, id);",
    // 4: the memory index (memory.rs). Sources (a file, a session, a note)
    // with the fingerprint their feeder last saw; their chunks; an
    // external-content FTS5 index of the chunks' text (`detail=none`: only
    // which chunks hold a word is asked, see sqlite/memory.rs) and the
    // counts BM25 needs, both kept in step by triggers.
    "CREATE TABLE memory_sources (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        indexed INTEGER NOT NULL,
        UNIQUE (kind, name)
     );
     CREATE TABLE memory_chunks (
        id INTEGER PRIMARY KEY,
        source INTEGER NOT NULL REFERENCES memory_sources (id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        len INTEGER NOT NULL,
        text TEXT NOT NULL
     );
     CREATE INDEX memory_chunks_source ON memory_chunks (source);
     CREATE VIRTUAL TABLE memory_fts USING fts5 (
        text, content = 'memory_chunks', content_rowid = 'id',
        tokenize = 'porter unicode61 remove_diacritics 2', detail = none
     );
     CREATE TABLE memory_stats (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        chunks INTEGER NOT NULL,
        tokens INTEGER NOT NULL
     );
     INSERT INTO memory_stats (id, chunks, tokens) VALUES (1, 0, 0);
     CREATE TRIGGER memory_chunks_insert AFTER INSERT ON memory_chunks BEGIN
        INSERT INTO memory_fts (rowid, text) VALUES (new.id, new.text);
        UPDATE memory_stats SET chunks = chunks + 1, tokens = tokens + new.len WHERE id = 1;
     END;
     CREATE TRIGGER memory_chunks_delete AFTER DELETE ON memory_chunks BEGIN
        INSERT INTO memory_fts (memory_fts, rowid, text) VALUES ('delete', old.id, old.text);
        UPDATE memory_stats SET chunks = chunks - 1, tokens = tokens - old.len WHERE id = 1;
     END;",
    // 5: notes, and their full-text index. The index is an FTS5 table over
    // the notes table's own rows (external content), kept in step by
    // triggers, so that no write can change a note without its index
    // entry. `remove_diacritics 2` makes `cafe` find `café`.
    "CREATE TABLE notes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        created INTEGER NOT NULL,
        updated INTEGER NOT NULL
     );
     CREATE INDEX notes_updated ON notes (updated);
     CREATE VIRTUAL TABLE notes_fts USING fts5 (
        title, body, content = 'notes', content_rowid = 'id',
        tokenize = 'unicode61 remove_diacritics 2'
     );
     CREATE TRIGGER notes_fts_insert AFTER INSERT ON notes BEGIN
        INSERT INTO notes_fts (rowid, title, body) VALUES (new.id, new.title, new.body);
     END;
     CREATE TRIGGER notes_fts_delete AFTER DELETE ON notes BEGIN
        INSERT INTO notes_fts (notes_fts, rowid, title, body)
            VALUES ('delete', old.id, old.title, old.body);
     END;
     CREATE TRIGGER notes_fts_update AFTER UPDATE OF title, body ON notes BEGIN
        INSERT INTO notes_fts (notes_fts, rowid, title, body)
            VALUES ('delete', old.id, old.title, old.body);
        INSERT INTO notes_fts (rowid, title, body) VALUES (new.id, new.title, new.body);
     END;",
    // 6: projects, their tasks and activity log (seed 003), and the plan of
    // each agent session. Statuses and priorities are checked here too, so
    // that another writer cannot store a value the readers do not know.
    // Plans are keyed by any session id, not tied to the sessions table.
    "CREATE TABLE projects (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
        description TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('active', 'paused', 'done', 'archived')),
        created INTEGER NOT NULL,
        updated INTEGER NOT NULL
     );
     CREATE TABLE tasks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        title TEXT NOT NULL,
        description TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('todo', 'in_progress', 'done', 'blocked')),
        priority TEXT NOT NULL CHECK (priority IN ('low', 'medium', 'high')),
        created INTEGER NOT NULL,
        updated INTEGER NOT NULL
     );
     CREATE INDEX tasks_project ON tasks (project_id, status);
     CREATE TABLE project_activity (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        task_id INTEGER,
        at INTEGER NOT NULL,
        action TEXT NOT NULL,
        detail TEXT NOT NULL
     );
     CREATE INDEX project_activity_project ON project_activity (project_id, id);
     CREATE TABLE session_plans (
        session_id TEXT PRIMARY KEY NOT NULL,
        plan TEXT NOT NULL,
        updated INTEGER NOT NULL
     ) WITHOUT ROWID;",
    // 7: scheduled jobs (`cron`) and their runs. Times are milliseconds.
    // A job is claimable when enabled, due (`next_run <= now`) and its
    // lease expired (`lease_until < now`); the partial index serves that
    // query and `next_due`. Runs are not tied to their job by a foreign key:
    // the history of a removed job is kept.
    "CREATE TABLE schedule_jobs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        schedule TEXT NOT NULL,
        task TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        delete_after_run INTEGER NOT NULL,
        session_id TEXT,
        created INTEGER NOT NULL,
        updated INTEGER NOT NULL,
        next_run INTEGER,
        lease_owner TEXT,
        lease_until INTEGER NOT NULL DEFAULT 0,
        last_run INTEGER,
        last_outcome TEXT,
        runs INTEGER NOT NULL DEFAULT 0
     );
     CREATE INDEX schedule_jobs_due ON schedule_jobs (next_run) WHERE enabled = 1;
     CREATE TABLE schedule_runs (
        id INTEGER PRIMARY KEY,
        job_id INTEGER NOT NULL,
        job_name TEXT NOT NULL,
        owner TEXT NOT NULL,
        scheduled INTEGER NOT NULL,
        started INTEGER NOT NULL,
        ended INTEGER,
        outcome TEXT NOT NULL,
        summary TEXT NOT NULL DEFAULT ''
     );
     CREATE INDEX schedule_runs_job ON schedule_runs (job_id, id);",
    // 8: dynamic tools (dynamic_tools.rs), pending until a person reviews
    // them. A name is unique among the tools that are not rejected (the
    // partial index); a rejected tool keeps its row as the review's record.
    // Kinds, scopes and statuses are checked here too, so that another
    // writer cannot store a value the readers do not know.
    "CREATE TABLE dynamic_tools (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        description TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('command', 'script')),
        interpreter TEXT,
        source TEXT NOT NULL,
        parameters TEXT NOT NULL,
        scope TEXT NOT NULL CHECK (scope IN ('agent', 'global')),
        created_by TEXT NOT NULL,
        session_id TEXT,
        advice TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
        created INTEGER NOT NULL,
        updated INTEGER NOT NULL
     );
     CREATE UNIQUE INDEX dynamic_tools_live_name ON dynamic_tools (name)
        WHERE status <> 'rejected';
     CREATE INDEX dynamic_tools_status ON dynamic_tools (status, id);",
    // 9: what happened during a run besides messages and tool calls (a
    // provider switch, the tools routing chose, a sub-agent's steps), kept
    // with the step it happened in.
    "CREATE TABLE session_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        run INTEGER NOT NULL,
        step INTEGER NOT NULL,
        at INTEGER NOT NULL,
        kind TEXT NOT NULL,
        data TEXT NOT NULL
     );
     CREATE INDEX session_events_session ON session_events (session_id, id);",
    // 10: checkpoints, what each step changed in the workspace (the
    // states before and after of each path, contents by hash in the blob
    // store beside the database), and the rewinds made from them.
    "CREATE TABLE checkpoints (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        step INTEGER NOT NULL,
        run INTEGER NOT NULL,
        run_step INTEGER NOT NULL,
        recorded INTEGER NOT NULL,
        messages_from INTEGER NOT NULL,
        changes TEXT NOT NULL,
        incomplete TEXT,
        rewound_by INTEGER,
        PRIMARY KEY (session_id, step)
     ) WITHOUT ROWID;
     CREATE INDEX checkpoints_recorded ON checkpoints (recorded);
     CREATE TABLE rewinds (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        to_step INTEGER NOT NULL,
        created INTEGER NOT NULL,
        code INTEGER NOT NULL,
        conversation INTEGER NOT NULL,
        changes TEXT NOT NULL,
        messages TEXT NOT NULL,
        undone INTEGER NOT NULL DEFAULT 0
     );
     CREATE INDEX rewinds_session ON rewinds (session_id, id);",
    // 11: calls waiting for a person (approvals.rs), by idempotency key;
    // answered from any process sharing the store, run once.
    "CREATE TABLE approvals (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        key TEXT NOT NULL UNIQUE,
        session_id TEXT,
        tool TEXT NOT NULL,
        view TEXT NOT NULL,
        worker TEXT NOT NULL,
        created INTEGER NOT NULL,
        expires INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN
            ('pending', 'approved', 'denied', 'expired', 'running', 'done')),
        answered_by TEXT,
        answered INTEGER,
        runner TEXT,
        result TEXT
     );
     CREATE INDEX approvals_pending ON approvals (status, id);",
    // 12: the audit moves to a file of its own (rule 6 of `SqliteStore`);
    // `move_audit_out` copied its rows there before this runs.
    "DROP TABLE audit;",
    // 13: whether an approval's answer allows the tool for the rest of the
    // asking client's session ("allow for the session", answered from any
    // process).
    "ALTER TABLE approvals ADD COLUMN for_session INTEGER NOT NULL DEFAULT 0;",
    // 14: saved confirmation rules (rules.rs), shared by the processes
    // sharing the store.
    "CREATE TABLE rules (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        rule TEXT NOT NULL,
        saved_by TEXT NOT NULL,
        saved INTEGER NOT NULL
     );",
    // 15: "allow for the session" answers (rules.rs), honoured by every
    // process sharing the store until they expire.
    "CREATE TABLE session_allows (
        scope TEXT NOT NULL,
        tool TEXT NOT NULL,
        sensitivity TEXT NOT NULL,
        granted_by TEXT NOT NULL,
        granted INTEGER NOT NULL,
        expires INTEGER NOT NULL,
        PRIMARY KEY (scope, tool, sensitivity)
     );",
    // 16: each client's request budget (`rate_per_minute`, limits.rs),
    // shared by the processes sharing the store.
    "CREATE TABLE client_buckets (
        client TEXT PRIMARY KEY,
        tokens REAL NOT NULL,
        at INTEGER NOT NULL
     );",
    // 17: the id a runner's gate gave a keyed call, so that a retry after
    // the runner died can find (or write) its audit entry.
    "ALTER TABLE approvals ADD COLUMN call_id TEXT;",
];

/// The store version whose migration drops the audit table: every version
/// from 3 up to it has one.
const AUDIT_MOVED: i64 = 12;

/// The migrations of the audit file, as [`MIGRATIONS`] are the store's.
const AUDIT_MIGRATIONS: &[&str] = &[
    // 1: the gate's audit trail, as the store kept it (migration 3), and
    // what was moved into it from the store: the row count and last id of
    // each store audit table copied, so that a move interrupted after the
    // copy is not copied twice.
    "CREATE TABLE audit (
        id INTEGER PRIMARY KEY,
        ts TEXT NOT NULL,
        call_id TEXT NOT NULL,
        session_id TEXT,
        tool TEXT NOT NULL,
        args_sha256 TEXT NOT NULL,
        decision TEXT NOT NULL,
        success INTEGER NOT NULL,
        duration_us INTEGER NOT NULL,
        error TEXT,
        effects TEXT NOT NULL
     );
     CREATE INDEX audit_session ON audit (session_id, id);
     CREATE INDEX audit_tool ON audit (tool, id);
     CREATE TABLE moved (rows INTEGER NOT NULL, last_id INTEGER NOT NULL);",
    // 2: the audit names the client that made a call (a named client of
    // `mcp.http.clients`); NULL for calls of nobody in particular.
    "ALTER TABLE audit ADD COLUMN client TEXT;",
];

/// The schema version this build writes.
#[expect(
    clippy::cast_possible_wrap,
    reason = "a handful of migrations, far from i64::MAX"
)]
pub(crate) const VERSION: i64 = MIGRATIONS.len() as i64;

/// The database's schema version.
pub(crate) fn version(conn: &Connection) -> Result<i64, StoreError> {
    conn.pragma_query_value(None, "user_version", |r| r.get(0))
        .db()
}

/// Brings the schema of `conn` up to [`VERSION`], or refuses a newer one.
/// `before` runs in the migration's transaction with the version found,
/// before the first migration.
///
/// The check and the migrations run in one `IMMEDIATE` transaction (it
/// takes the write lock at once), so two processes opening an old file at
/// the same moment do not both migrate it: the second waits, then finds
/// the work done.
pub(crate) fn migrate(
    conn: &mut Connection,
    path: &Path,
    before: impl FnOnce(&Transaction<'_>, i64) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    run_migrations(conn, path, MIGRATIONS, before)
}

/// [`migrate`] for the audit file (rule 6 of `SqliteStore`).
pub(crate) fn migrate_audit(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    run_migrations(conn, path, AUDIT_MIGRATIONS, |_, _| Ok(()))
}

fn run_migrations(
    conn: &mut Connection,
    path: &Path,
    migrations: &[&str],
    before: impl FnOnce(&Transaction<'_>, i64) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let newest = i64::try_from(migrations.len()).unwrap_or(i64::MAX);
    let refuse = |found| StoreError::NewerSchema {
        path: path.to_owned(),
        found,
        supported: newest,
    };
    let found = version(conn)?;
    if found == newest {
        return Ok(());
    }
    if found > newest {
        return Err(refuse(found));
    }
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .db()?;
    let found = version(&tx)?;
    if found == newest {
        return Ok(());
    }
    if found > newest {
        return Err(refuse(found));
    }
    before(&tx, found)?;
    let start = usize::try_from(found).unwrap_or(0);
    for (i, sql) in migrations.iter().enumerate().skip(start) {
        tx.execute_batch(sql).db()?;
        tracing::debug!(version = i + 1, path = %path.display(), "schema migrated");
    }
    tx.pragma_update(None, "user_version", newest).db()?;
    tx.commit().db()
}

/// Copies the audit rows of a store at version `found` (inside its
/// migration, `store`) into the audit file at `audit`, opened with `open`,
/// before migration [`AUDIT_MOVED`] drops them (rule 6 of `SqliteStore`).
///
/// One transaction on the audit file copies the rows and records their
/// count and last id in `moved`: a migration interrupted after that commit
/// finds its table recorded and copies nothing again. The rows keep their
/// ids when the audit file has none yet (the usual case: the first process
/// of the new version migrates the store before anything appends to the
/// audit); otherwise they are appended after the rows already there.
pub(crate) fn move_audit_out(
    store: &Transaction<'_>,
    found: i64,
    audit: &Path,
    open: impl FnOnce(&Path) -> Result<Connection, StoreError>,
) -> Result<(), StoreError> {
    if !(3..AUDIT_MOVED).contains(&found) {
        return Ok(());
    }
    let (rows, last_id): (i64, i64) = store
        .query_row(
            "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM audit",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .db()?;
    let mut conn = open(audit)?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .db()?;
    let done: bool = tx
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM moved WHERE rows = ?1 AND last_id = ?2)",
            [rows, last_id],
            |r| r.get(0),
        )
        .db()?;
    if done || rows == 0 {
        return Ok(());
    }
    let empty: bool = tx
        .query_row("SELECT NOT EXISTS (SELECT 1 FROM audit)", [], |r| r.get(0))
        .db()?;
    {
        let columns = "ts, call_id, session_id, tool, args_sha256, decision, success, \
                       duration_us, error, effects";
        let mut select = store
            .prepare(&format!("SELECT id, {columns} FROM audit ORDER BY id"))
            .db()?;
        let mut insert = tx
            .prepare(&format!(
                "INSERT INTO audit (id, {columns})
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
            ))
            .db()?;
        let mut found_rows = select.query([]).db()?;
        while let Some(row) = found_rows.next().db()? {
            let mut values: Vec<rusqlite::types::Value> =
                (0..11).map(|i| row.get(i)).collect::<Result<_, _>>().db()?;
            if !empty && let Some(id) = values.first_mut() {
                *id = rusqlite::types::Value::Null;
            }
            insert.execute(rusqlite::params_from_iter(values)).db()?;
        }
    }
    tx.execute(
        "INSERT INTO moved (rows, last_id) VALUES (?1, ?2)",
        [rows, last_id],
    )
    .db()?;
    tx.commit().db()
}
