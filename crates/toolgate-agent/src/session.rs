//! Sessions in an embedded `SQLite` database.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, params};

use crate::llm::Message;
use crate::runner::RunReport;

/// Errors of the session store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// `SQLite` failed.
    #[error("session database error")]
    Db(#[from] rusqlite::Error),
    /// A stored message does not parse.
    #[error("stored session data does not parse")]
    Json(#[from] serde_json::Error),
    /// No such session.
    #[error("no session with id `{0}`; list them with `toolgate sessions list`")]
    NotFound(String),
    /// The database directory cannot be created.
    #[error("cannot create the session directory")]
    Io(#[from] std::io::Error),
}

/// One row of `sessions list`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SessionSummary {
    /// Id.
    pub id: String,
    /// Seconds since the epoch of the last update.
    pub updated: i64,
    /// The agent.
    pub agent: String,
    /// The first task.
    pub task: String,
    /// The outcome of the last run.
    pub outcome: String,
    /// Total input tokens.
    pub input_tokens: i64,
    /// Total output tokens.
    pub output_tokens: i64,
}

/// The session database.
#[derive(Debug)]
pub struct SessionStore {
    conn: Connection,
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0))
}

impl SessionStore {
    /// Opens (creating) the database at `path`.
    pub fn open(path: &Path) -> Result<Self, SessionError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let conn = Connection::open(path)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, created INTEGER,
                updated INTEGER, agent TEXT, task TEXT, outcome TEXT);
             CREATE TABLE IF NOT EXISTS messages (session_id TEXT, seq INTEGER, role TEXT,
                json TEXT, PRIMARY KEY (session_id, seq));
             CREATE TABLE IF NOT EXISTS steps (session_id TEXT, run INTEGER, step INTEGER,
                input_tokens INTEGER, output_tokens INTEGER, estimated INTEGER, cost_usd REAL);
             CREATE TABLE IF NOT EXISTS tool_calls (session_id TEXT, run INTEGER, step INTEGER,
                call_id TEXT, name TEXT, arguments TEXT, decision TEXT, success INTEGER,
                duration_ms INTEGER, output TEXT);",
        )?;
        Ok(Self { conn })
    }

    /// A new session id (time-based, unique per process and moment).
    pub fn new_id() -> String {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("s{:x}{:04x}", nanos / 1_000, std::process::id() & 0xffff)
    }

    /// Saves a run: replaces the conversation, appends steps and tool calls.
    pub fn save_run(&mut self, id: &str, report: &RunReport) -> Result<(), SessionError> {
        let tx = self.conn.transaction()?;
        let t = now();
        let outcome = serde_json::to_value(report.outcome)?;
        let outcome = outcome.as_str().unwrap_or("unknown").to_owned();
        tx.execute(
            "INSERT INTO sessions (id, created, updated, agent, task, outcome)
             VALUES (?1, ?2, ?2, ?3, ?4, ?5)
             ON CONFLICT(id) DO UPDATE SET updated = ?2, outcome = ?5",
            params![id, t, report.agent, report.task, outcome],
        )?;
        let run: i64 = tx.query_row(
            "SELECT COALESCE(MAX(run), 0) + 1 FROM steps WHERE session_id = ?1",
            params![id],
            |r| r.get(0),
        )?;
        tx.execute("DELETE FROM messages WHERE session_id = ?1", params![id])?;
        for (seq, m) in report.messages.iter().enumerate() {
            tx.execute(
                "INSERT INTO messages (session_id, seq, role, json) VALUES (?1, ?2, ?3, ?4)",
                params![
                    id,
                    i64::try_from(seq).unwrap_or(i64::MAX),
                    serde_json::to_value(m.role)?.as_str().unwrap_or(""),
                    serde_json::to_string(m)?
                ],
            )?;
        }
        for s in &report.step_usage {
            tx.execute(
                "INSERT INTO steps VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    id,
                    run,
                    s.step,
                    i64::try_from(s.usage.input_tokens).unwrap_or(i64::MAX),
                    i64::try_from(s.usage.output_tokens).unwrap_or(i64::MAX),
                    s.estimated,
                    s.cost_usd
                ],
            )?;
        }
        for c in &report.tool_calls {
            tx.execute(
                "INSERT INTO tool_calls VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    id,
                    run,
                    c.step,
                    c.id,
                    c.name,
                    c.arguments,
                    c.decision,
                    c.success,
                    i64::try_from(c.duration_ms).unwrap_or(i64::MAX),
                    c.output
                ],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Every session, newest first.
    pub fn list(&self) -> Result<Vec<SessionSummary>, SessionError> {
        let mut st = self.conn.prepare(
            "SELECT s.id, s.updated, s.agent, s.task, s.outcome,
                    COALESCE((SELECT SUM(input_tokens) FROM steps WHERE session_id = s.id), 0),
                    COALESCE((SELECT SUM(output_tokens) FROM steps WHERE session_id = s.id), 0)
             FROM sessions s ORDER BY s.updated DESC, s.id DESC",
        )?;
        let rows = st.query_map([], |r| {
            Ok(SessionSummary {
                id: r.get(0)?,
                updated: r.get(1)?,
                agent: r.get(2)?,
                task: r.get(3)?,
                outcome: r.get(4)?,
                input_tokens: r.get(5)?,
                output_tokens: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One session's summary.
    pub fn get(&self, id: &str) -> Result<SessionSummary, SessionError> {
        self.list()?
            .into_iter()
            .find(|s| s.id == id)
            .ok_or_else(|| SessionError::NotFound(id.to_owned()))
    }

    /// The stored conversation of a session.
    pub fn messages(&self, id: &str) -> Result<Vec<Message>, SessionError> {
        self.get(id)?;
        let mut st = self
            .conn
            .prepare("SELECT json FROM messages WHERE session_id = ?1 ORDER BY seq")?;
        let rows = st.query_map(params![id], |r| r.get::<_, String>(0))?;
        let mut out = Vec::new();
        for j in rows {
            out.push(serde_json::from_str(&j?)?);
        }
        Ok(out)
    }

    /// The stored tool calls of a session: (step, name, decision, success).
    pub fn tool_calls(&self, id: &str) -> Result<Vec<(i64, String, String, bool)>, SessionError> {
        let mut st = self.conn.prepare(
            "SELECT step, name, decision, success FROM tool_calls WHERE session_id = ?1
             ORDER BY run, rowid",
        )?;
        let rows = st.query_map(params![id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
