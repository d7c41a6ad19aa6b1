//! [`SessionStore`] for [`SqliteStore`].

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension as _, Row, params};
use serde_json::Value;

use super::{Db as _, SqliteStore, from_i64, now_ms, to_i64, write_tx};

use crate::session::RUNNING;
use crate::{
    NewSession, RunStart, SessionEvent, SessionEventRow, SessionStore, SessionSummary, StepRecord,
    StoreError, ToolCallRow,
};

/// A step, serialised on the caller's thread and moved to the worker.
struct StepRows {
    session_id: String,
    run: u32,
    step: u32,
    from: usize,
    /// (role, JSON) of each message.
    messages: Vec<(Option<String>, String)>,
    tool_calls: Vec<(ToolCallRow, String)>,
    usage: Option<crate::UsageRow>,
    /// (step, kind, JSON) of each event.
    events: Vec<(u32, String, String)>,
}

impl StepRows {
    fn new(step: &StepRecord) -> Result<Self, StoreError> {
        let json = |v: &Value| serde_json::to_string(v).map_err(StoreError::Json);
        Ok(Self {
            session_id: step.session_id.clone(),
            run: step.run,
            step: step.step,
            from: step.messages_from,
            messages: step
                .messages
                .iter()
                .map(|m| {
                    let role = m.get("role").and_then(Value::as_str).map(str::to_owned);
                    Ok((role, json(m)?))
                })
                .collect::<Result<_, StoreError>>()?,
            tool_calls: step
                .tool_calls
                .iter()
                .map(|c| Ok((c.clone(), json(&c.effects)?)))
                .collect::<Result<_, StoreError>>()?,
            usage: step.usage,
            events: step
                .events
                .iter()
                .map(|e| Ok((e.step, e.kind.clone(), json(&e.data)?)))
                .collect::<Result<_, StoreError>>()?,
        })
    }
}

#[async_trait]
impl SessionStore for SqliteStore {
    async fn begin(&self, session: &NewSession) -> Result<RunStart, StoreError> {
        let session = session.clone();
        let pid = std::process::id();
        self.with_conn(move |conn| begin(conn, &session, pid)).await
    }

    async fn record_step(&self, step: &StepRecord) -> Result<(), StoreError> {
        let rows = StepRows::new(step)?;
        self.with_conn(move |conn| record_step(conn, &rows)).await
    }

    async fn finish(&self, session_id: &str, run: u32, outcome: &str) -> Result<(), StoreError> {
        let (id, outcome) = (session_id.to_owned(), outcome.to_owned());
        self.with_conn(move |conn| finish(conn, &id, run, &outcome))
            .await
    }

    async fn list(&self) -> Result<Vec<SessionSummary>, StoreError> {
        self.with_conn(|conn| {
            let mut st = conn
                .prepare(&format!("{SUMMARY} ORDER BY s.updated DESC, s.rowid DESC"))
                .db()?;
            st.query_map([], summary)
                .db()?
                .collect::<Result<_, _>>()
                .db()
        })
        .await
    }

    async fn get(&self, session_id: &str) -> Result<SessionSummary, StoreError> {
        let id = session_id.to_owned();
        self.with_conn(move |conn| {
            conn.query_row(&format!("{SUMMARY} WHERE s.id = ?1"), [&id], summary)
                .optional()
                .db()?
                .ok_or(StoreError::NotFound(id))
        })
        .await
    }

    async fn messages(&self, session_id: &str) -> Result<Vec<Value>, StoreError> {
        let id = session_id.to_owned();
        self.with_conn(move |conn| {
            // One read transaction: the existence check and the rows come
            // from the same snapshot.
            let tx = conn.transaction().db()?;
            current_run(&tx, &id)?;
            let mut st = tx
                .prepare("SELECT json FROM messages WHERE session_id = ?1 ORDER BY seq")
                .db()?;
            let texts = st
                .query_map([&id], |r| r.get::<_, String>(0))
                .db()?
                .collect::<Result<Vec<_>, _>>()
                .db()?;
            texts
                .iter()
                .map(|t| serde_json::from_str(t).map_err(StoreError::Json))
                .collect()
        })
        .await
    }

    async fn events(&self, session_id: &str) -> Result<Vec<SessionEventRow>, StoreError> {
        let id = session_id.to_owned();
        self.with_conn(move |conn| {
            let tx = conn.transaction().db()?;
            current_run(&tx, &id)?;
            let mut st = tx
                .prepare(
                    "SELECT run, at, step, kind, data FROM session_events
                     WHERE session_id = ?1 ORDER BY id",
                )
                .db()?;
            let rows = st
                .query_map([&id], |r| {
                    Ok((
                        r.get::<_, u32>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, u32>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                    ))
                })
                .db()?
                .collect::<Result<Vec<_>, _>>()
                .db()?;
            rows.into_iter()
                .map(|(run, at, step, kind, data)| {
                    Ok(SessionEventRow {
                        run,
                        at,
                        event: SessionEvent {
                            step,
                            kind,
                            data: serde_json::from_str(&data).map_err(StoreError::Json)?,
                        },
                    })
                })
                .collect()
        })
        .await
    }

    async fn tool_calls(&self, session_id: &str) -> Result<Vec<ToolCallRow>, StoreError> {
        let id = session_id.to_owned();
        self.with_conn(move |conn| {
            let tx = conn.transaction().db()?;
            current_run(&tx, &id)?;
            let mut st = tx
                .prepare(
                    "SELECT step, call_id, name, arguments, decision, success, duration_ms,
                            output, effects, recovered
                     FROM tool_calls WHERE session_id = ?1 ORDER BY id",
                )
                .db()?;
            let rows = st
                .query_map([&id], |r| {
                    Ok((
                        ToolCallRow {
                            step: from_i64(r.get(0)?),
                            call_id: r.get(1)?,
                            name: r.get(2)?,
                            arguments: r.get(3)?,
                            decision: r.get(4)?,
                            success: r.get(5)?,
                            duration_ms: from_i64(r.get(6)?),
                            output: r.get(7)?,
                            effects: Value::Null,
                            recovered: r.get(9)?,
                        },
                        r.get::<_, String>(8)?,
                    ))
                })
                .db()?
                .collect::<Result<Vec<_>, _>>()
                .db()?;
            rows.into_iter()
                .map(|(mut row, effects)| {
                    row.effects = serde_json::from_str(&effects).map_err(StoreError::Json)?;
                    Ok(row)
                })
                .collect()
        })
        .await
    }
}

/// The columns of a [`SessionSummary`], read by [`summary`].
const SUMMARY: &str = "SELECT s.id, s.created, s.updated, s.agent, s.task, s.outcome, s.pid,
        s.runs, COALESCE(t.steps, 0), COALESCE(t.input_tokens, 0), COALESCE(t.output_tokens, 0)
    FROM sessions s LEFT JOIN (
        SELECT session_id,
               -- A run records step 0 when it starts and when it ends (the
               -- task, the final messages): those are not model steps, and
               -- counting them made `sessions` say 2 more than `run`.
               COUNT(DISTINCT CASE WHEN step > 0 THEN run || ':' || step END) AS steps,
               SUM(input_tokens) AS input_tokens,
               SUM(output_tokens) AS output_tokens
        FROM steps GROUP BY session_id
    ) t ON t.session_id = s.id";

fn summary(r: &Row<'_>) -> rusqlite::Result<SessionSummary> {
    Ok(SessionSummary {
        id: r.get(0)?,
        created: r.get(1)?,
        updated: r.get(2)?,
        agent: r.get(3)?,
        task: r.get(4)?,
        outcome: r.get(5)?,
        pid: r
            .get::<_, Option<i64>>(6)?
            .and_then(|p| u32::try_from(p).ok()),
        runs: from_i64(r.get(7)?),
        steps: from_i64(r.get(8)?),
        input_tokens: from_i64(r.get(9)?),
        output_tokens: from_i64(r.get(10)?),
    })
}

fn begin(conn: &mut Connection, s: &NewSession, pid: u32) -> Result<RunStart, StoreError> {
    let tx = write_tx(conn)?;
    let run: i64 = tx
        .query_row(
            "INSERT INTO sessions (id, created, updated, agent, task, outcome, pid, runs)
             VALUES (?1, ?2, ?2, ?3, ?4, ?5, ?6, 1)
             ON CONFLICT (id) DO UPDATE SET runs = runs + 1, outcome = excluded.outcome,
                pid = excluded.pid, updated = excluded.updated
             RETURNING runs",
            params![s.id, stamp(&tx)?, s.agent, s.task, RUNNING, pid],
            |r| r.get(0),
        )
        .db()?;
    let stored = stored_messages(&tx, &s.id)?;
    tx.commit().db()?;
    Ok(RunStart {
        run: from_i64(run),
        stored_messages: stored,
    })
}

fn record_step(conn: &mut Connection, s: &StepRows) -> Result<(), StoreError> {
    let tx = write_tx(conn)?;
    check_run(&tx, &s.session_id, s.run)?;
    let stored = stored_messages(&tx, &s.session_id)?;
    if s.from > stored {
        return Err(StoreError::MessageGap {
            session_id: s.session_id.clone(),
            from: s.from,
            stored,
        });
    }
    if s.from < stored {
        tx.execute(
            "DELETE FROM messages WHERE session_id = ?1 AND seq >= ?2",
            params![s.session_id, to_i64(s.from)],
        )
        .db()?;
    }
    {
        let mut insert = tx
            .prepare_cached(
                "INSERT INTO messages (session_id, seq, role, json) VALUES (?1, ?2, ?3, ?4)",
            )
            .db()?;
        for (i, (role, json)) in s.messages.iter().enumerate() {
            insert
                .execute(params![s.session_id, to_i64(s.from + i), role, json])
                .db()?;
        }
    }
    tx.execute(
        "INSERT INTO steps (session_id, run, step, recorded, input_tokens, output_tokens,
                            estimated, cost_usd)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            s.session_id,
            s.run,
            s.step,
            now_ms(),
            s.usage.map(|u| to_i64(u.input_tokens)),
            s.usage.map(|u| to_i64(u.output_tokens)),
            s.usage.map(|u| u.estimated),
            s.usage.and_then(|u| u.cost_usd),
        ],
    )
    .db()?;
    {
        let mut insert = tx
            .prepare_cached(
                "INSERT INTO tool_calls (session_id, run, step, call_id, name, arguments,
                    decision, success, duration_ms, output, effects, recovered)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            )
            .db()?;
        for (c, effects) in &s.tool_calls {
            insert
                .execute(params![
                    s.session_id,
                    s.run,
                    c.step,
                    c.call_id,
                    c.name,
                    c.arguments,
                    c.decision,
                    c.success,
                    to_i64(c.duration_ms),
                    c.output,
                    effects,
                    c.recovered,
                ])
                .db()?;
        }
    }
    {
        let mut insert = tx
            .prepare_cached(
                "INSERT INTO session_events (session_id, run, step, at, kind, data)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .db()?;
        let at = now_ms();
        for (step, kind, data) in &s.events {
            insert
                .execute(params![s.session_id, s.run, step, at, kind, data])
                .db()?;
        }
    }
    touch(&tx, &s.session_id)?;
    tx.commit().db()
}

fn finish(conn: &mut Connection, id: &str, run: u32, outcome: &str) -> Result<(), StoreError> {
    let tx = write_tx(conn)?;
    check_run(&tx, id, run)?;
    tx.execute(
        "UPDATE sessions SET outcome = ?2, pid = NULL WHERE id = ?1",
        params![id, outcome],
    )
    .db()?;
    touch(&tx, id)?;
    tx.commit().db()
}

/// The session's current run, or [`StoreError::NotFound`].
fn current_run(conn: &Connection, id: &str) -> Result<u32, StoreError> {
    conn.query_row("SELECT runs FROM sessions WHERE id = ?1", [id], |r| {
        r.get::<_, i64>(0)
    })
    .optional()
    .db()?
    .map(from_i64)
    .ok_or_else(|| StoreError::NotFound(id.to_owned()))
}

/// Refuses a run that is not the session's current one.
fn check_run(conn: &Connection, id: &str, run: u32) -> Result<(), StoreError> {
    let current = current_run(conn, id)?;
    if run == current {
        Ok(())
    } else {
        Err(StoreError::NotCurrentRun {
            session_id: id.to_owned(),
            run,
            current,
        })
    }
}

/// How many messages the session stores. The conversation has no holes
/// (a step may not start beyond its end), so this is the highest index + 1.
fn stored_messages(conn: &Connection, id: &str) -> Result<usize, StoreError> {
    conn.query_row(
        "SELECT COALESCE(MAX(seq) + 1, 0) FROM messages WHERE session_id = ?1",
        [id],
        |r| r.get::<_, i64>(0),
    )
    .db()
    .map(from_i64)
}

/// Marks the session as written now.
fn touch(conn: &Connection, id: &str) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE sessions SET updated = ?2 WHERE id = ?1",
        params![id, stamp(conn)?],
    )
    .db()
    .map(drop)
}

/// The time of a write: now in milliseconds, but always after every
/// session's `updated`, so that `list` shows sessions in the exact order
/// they were last written — also when two writes fall in the same
/// millisecond, or two processes' clocks disagree. (Called inside the write
/// transaction, which excludes other writers.)
fn stamp(conn: &Connection) -> Result<i64, StoreError> {
    conn.query_row(
        "SELECT MAX(?1, COALESCE(MAX(updated) + 1, 0)) FROM sessions",
        [now_ms()],
        |r| r.get(0),
    )
    .db()
}
