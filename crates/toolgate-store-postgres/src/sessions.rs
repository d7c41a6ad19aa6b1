//! [`SessionStore`] for [`PostgresStore`].

use async_trait::async_trait;
use serde_json::Value;
use tokio_postgres::{GenericClient, Row};

use super::{Db as _, PostgresStore, begin, from_i64, from_json, now_ms, stamp, to_i64, to_json};
use toolgate_store::RUNNING;
use toolgate_store::{
    NewSession, RunStart, SessionEvent, SessionEventRow, SessionStore, SessionSummary, StepRecord,
    StoreError, ToolCallRow,
};

/// The columns of a [`SessionSummary`], read by [`summary`].
pub(super) const SUMMARY: &str = "SELECT s.id, s.created, s.updated, s.agent, s.task, s.outcome,
        s.pid, s.runs, COALESCE(t.steps, 0)::BIGINT, COALESCE(t.input_tokens, 0)::BIGINT,
        COALESCE(t.output_tokens, 0)::BIGINT
    FROM sessions s LEFT JOIN (
        SELECT session_id,
               -- Step 0 (a run's start and end) is not a model step.
               COUNT(DISTINCT CASE WHEN step > 0 THEN run || ':' || step END) AS steps,
               SUM(input_tokens) AS input_tokens,
               SUM(output_tokens) AS output_tokens
        FROM steps GROUP BY session_id
    ) t ON t.session_id = s.id";

fn summary(r: &Row) -> SessionSummary {
    SessionSummary {
        id: r.get(0),
        created: r.get(1),
        updated: r.get(2),
        agent: r.get(3),
        task: r.get(4),
        outcome: r.get(5),
        pid: r
            .get::<_, Option<i64>>(6)
            .and_then(|p| u32::try_from(p).ok()),
        runs: from_i64(r.get(7)),
        steps: from_i64(r.get(8)),
        input_tokens: from_i64(r.get(9)),
        output_tokens: from_i64(r.get(10)),
    }
}

#[async_trait]
impl SessionStore for PostgresStore {
    async fn begin(&self, session: &NewSession) -> Result<RunStart, StoreError> {
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        // The session's row first, then the clock (as every write does:
        // one order of locks, no deadlock); `touch` gives the stamp.
        let now = now_ms();
        let pid = i64::from(std::process::id());
        let run: i64 = tx
            .query_one(
                "INSERT INTO sessions (id, created, updated, agent, task, outcome, pid, runs)
                 VALUES ($1, $2, $2, $3, $4, $5, $6, 1)
                 ON CONFLICT (id) DO UPDATE SET runs = sessions.runs + 1,
                    outcome = excluded.outcome, pid = excluded.pid, updated = excluded.updated
                 RETURNING runs",
                &[
                    &session.id,
                    &now,
                    &session.agent,
                    &session.task,
                    &RUNNING,
                    &pid,
                ],
            )
            .await
            .db()?
            .get(0);
        let at = touch(&tx, &session.id).await?;
        if run == 1 {
            tx.execute(
                "UPDATE sessions SET created = $2 WHERE id = $1",
                &[&session.id, &at],
            )
            .await
            .db()?;
        }
        let stored = stored_messages(&tx, &session.id).await?;
        tx.commit().await.db()?;
        Ok(RunStart {
            run: from_i64(run),
            stored_messages: stored,
        })
    }

    async fn record_step(&self, s: &StepRecord) -> Result<(), StoreError> {
        let messages = s
            .messages
            .iter()
            .map(|m| {
                let role = m.get("role").and_then(Value::as_str).map(str::to_owned);
                Ok((role, to_json(m)?))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        // The session's row, locked: a concurrent `begin` (a resume) waits
        // for this step, or this step sees the new run.
        check_run(&tx, &s.session_id, s.run, true).await?;
        let stored = stored_messages(&tx, &s.session_id).await?;
        if s.messages_from > stored {
            return Err(StoreError::MessageGap {
                session_id: s.session_id.clone(),
                from: s.messages_from,
                stored,
            });
        }
        if s.messages_from < stored {
            tx.execute(
                "DELETE FROM messages WHERE session_id = $1 AND seq >= $2",
                &[&s.session_id, &to_i64(s.messages_from)],
            )
            .await
            .db()?;
        }
        if !messages.is_empty() {
            let seqs: Vec<i64> = (0..messages.len())
                .map(|i| to_i64(s.messages_from + i))
                .collect();
            let (roles, jsons): (Vec<Option<String>>, Vec<String>) = messages.into_iter().unzip();
            tx.execute(
                "INSERT INTO messages (session_id, seq, role, json)
                 SELECT $1, seq, role, json FROM UNNEST($2::BIGINT[], $3::TEXT[], $4::TEXT[])
                    AS m (seq, role, json)",
                &[&s.session_id, &seqs, &roles, &jsons],
            )
            .await
            .db()?;
        }
        let run = i64::from(s.run);
        tx.execute(
            "INSERT INTO steps (session_id, run, step, recorded, input_tokens, output_tokens,
                                estimated, cost_usd)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            &[
                &s.session_id,
                &run,
                &i64::from(s.step),
                &now_ms(),
                &s.usage.map(|u| to_i64(u.input_tokens)),
                &s.usage.map(|u| to_i64(u.output_tokens)),
                &s.usage.map(|u| u.estimated),
                &s.usage.and_then(|u| u.cost_usd),
            ],
        )
        .await
        .db()?;
        for c in &s.tool_calls {
            tx.execute(
                "INSERT INTO tool_calls (session_id, run, step, call_id, name, arguments,
                    decision, success, duration_ms, output, effects, recovered)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
                &[
                    &s.session_id,
                    &run,
                    &i64::from(c.step),
                    &c.call_id,
                    &c.name,
                    &c.arguments,
                    &c.decision,
                    &c.success,
                    &to_i64(c.duration_ms),
                    &c.output,
                    &to_json(&c.effects)?,
                    &c.recovered,
                ],
            )
            .await
            .db()?;
        }
        let at = now_ms();
        for e in &s.events {
            tx.execute(
                "INSERT INTO session_events (session_id, run, step, at, kind, data)
                 VALUES ($1, $2, $3, $4, $5, $6)",
                &[
                    &s.session_id,
                    &run,
                    &i64::from(e.step),
                    &at,
                    &e.kind,
                    &to_json(&e.data)?,
                ],
            )
            .await
            .db()?;
        }
        touch(&tx, &s.session_id).await?;
        tx.commit().await.db()
    }

    async fn finish(&self, session_id: &str, run: u32, outcome: &str) -> Result<(), StoreError> {
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        check_run(&tx, session_id, run, true).await?;
        tx.execute(
            "UPDATE sessions SET outcome = $2, pid = NULL WHERE id = $1",
            &[&session_id, &outcome],
        )
        .await
        .db()?;
        touch(&tx, session_id).await?;
        tx.commit().await.db()
    }

    async fn list(&self) -> Result<Vec<SessionSummary>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                &format!("{SUMMARY} ORDER BY s.updated DESC, s.id DESC"),
                &[],
            )
            .await
            .db()?;
        Ok(rows.iter().map(summary).collect())
    }

    async fn get(&self, session_id: &str) -> Result<SessionSummary, StoreError> {
        let client = self.client().await?;
        client
            .query_opt(&format!("{SUMMARY} WHERE s.id = $1"), &[&session_id])
            .await
            .db()?
            .map(|r| summary(&r))
            .ok_or_else(|| StoreError::NotFound(session_id.to_owned()))
    }

    async fn messages(&self, session_id: &str) -> Result<Vec<Value>, StoreError> {
        let mut client = self.client().await?;
        // One transaction, repeatable read: the existence check and the rows
        // come from the same snapshot.
        let tx = snapshot(&mut client).await?;
        current_run(&tx, session_id, false).await?;
        let rows = tx
            .query(
                "SELECT json FROM messages WHERE session_id = $1 ORDER BY seq",
                &[&session_id],
            )
            .await
            .db()?;
        rows.iter().map(|r| from_json(r.get(0))).collect()
    }

    async fn tool_calls(&self, session_id: &str) -> Result<Vec<ToolCallRow>, StoreError> {
        let mut client = self.client().await?;
        let tx = snapshot(&mut client).await?;
        current_run(&tx, session_id, false).await?;
        let rows = tx
            .query(
                "SELECT step, call_id, name, arguments, decision, success, duration_ms,
                        output, effects, recovered
                 FROM tool_calls WHERE session_id = $1 ORDER BY id",
                &[&session_id],
            )
            .await
            .db()?;
        rows.iter()
            .map(|r| {
                Ok(ToolCallRow {
                    step: from_i64(r.get(0)),
                    call_id: r.get(1),
                    name: r.get(2),
                    arguments: r.get(3),
                    decision: r.get(4),
                    success: r.get(5),
                    duration_ms: from_i64(r.get(6)),
                    output: r.get(7),
                    effects: from_json(r.get(8))?,
                    recovered: r.get(9),
                })
            })
            .collect()
    }

    async fn events(&self, session_id: &str) -> Result<Vec<SessionEventRow>, StoreError> {
        let mut client = self.client().await?;
        let tx = snapshot(&mut client).await?;
        current_run(&tx, session_id, false).await?;
        let rows = tx
            .query(
                "SELECT run, at, step, kind, data FROM session_events
                 WHERE session_id = $1 ORDER BY id",
                &[&session_id],
            )
            .await
            .db()?;
        rows.iter()
            .map(|r| {
                Ok(SessionEventRow {
                    run: from_i64(r.get(0)),
                    at: r.get(1),
                    event: SessionEvent {
                        step: from_i64(r.get(2)),
                        kind: r.get(3),
                        data: from_json(r.get(4))?,
                    },
                })
            })
            .collect()
    }
}

/// A read-only transaction whose reads all see one snapshot.
pub(super) async fn snapshot(
    client: &mut deadpool_postgres::Object,
) -> Result<tokio_postgres::Transaction<'_>, StoreError> {
    let client: &mut tokio_postgres::Client = client;
    client
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await
        .db()
}

/// The session's current run, or [`StoreError::NotFound`]; with `lock`,
/// its row stays locked until the transaction ends.
async fn current_run(client: &impl GenericClient, id: &str, lock: bool) -> Result<u32, StoreError> {
    let sql = if lock {
        "SELECT runs FROM sessions WHERE id = $1 FOR UPDATE"
    } else {
        "SELECT runs FROM sessions WHERE id = $1"
    };
    client
        .query_opt(sql, &[&id])
        .await
        .db()?
        .map(|r| from_i64(r.get(0)))
        .ok_or_else(|| StoreError::NotFound(id.to_owned()))
}

/// Refuses a run that is not the session's current one.
async fn check_run(
    client: &impl GenericClient,
    id: &str,
    run: u32,
    lock: bool,
) -> Result<(), StoreError> {
    let current = current_run(client, id, lock).await?;
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

/// How many messages the session stores (the highest index + 1: the
/// conversation has no holes).
pub(super) async fn stored_messages(
    client: &impl GenericClient,
    id: &str,
) -> Result<usize, StoreError> {
    let row = client
        .query_one(
            "SELECT COALESCE(MAX(seq) + 1, 0)::BIGINT FROM messages WHERE session_id = $1",
            &[&id],
        )
        .await
        .db()?;
    Ok(from_i64(row.get(0)))
}

/// Marks the session as written now; returns the stamp.
async fn touch(client: &impl GenericClient, id: &str) -> Result<i64, StoreError> {
    let now = stamp(client, "sessions").await?;
    client
        .execute(
            "UPDATE sessions SET updated = $2 WHERE id = $1",
            &[&id, &now],
        )
        .await
        .db()?;
    Ok(now)
}
