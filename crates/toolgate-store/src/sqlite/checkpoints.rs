//! [`CheckpointStore`] for [`SqliteStore`].

use std::collections::HashSet;

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension as _, params};
use serde_json::Value;
use toolgate_core::PathChange;

use super::{Db as _, SqliteStore, from_i64, now_ms, to_i64, write_tx};
use crate::StoreError;
use crate::checkpoint::{
    Checkpoint, CheckpointStore, NewCheckpoint, NewRewind, RewindRecord, hash_of,
};

fn to_json<T: serde::Serialize>(v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(StoreError::Json)
}

fn from_json<T: serde::de::DeserializeOwned>(s: &str) -> Result<T, StoreError> {
    serde_json::from_str(s).map_err(StoreError::Json)
}

#[async_trait]
impl CheckpointStore for SqliteStore {
    async fn record_checkpoint(&self, c: &NewCheckpoint) -> Result<u32, StoreError> {
        let c = c.clone();
        let changes = to_json(&c.changes)?;
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let exists: Option<i64> = tx
                .query_row(
                    "SELECT 1 FROM sessions WHERE id = ?1",
                    [&c.session_id],
                    |r| r.get(0),
                )
                .optional()
                .db()?;
            if exists.is_none() {
                return Err(StoreError::NotFound(c.session_id.clone()));
            }
            let last: i64 = tx
                .query_row(
                    "SELECT COALESCE(MAX(step), 0) FROM checkpoints WHERE session_id = ?1",
                    [&c.session_id],
                    |r| r.get(0),
                )
                .db()?;
            let step = last + 1;
            tx.execute(
                "INSERT INTO checkpoints (session_id, step, run, run_step, recorded,
                    messages_from, changes, incomplete)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    c.session_id,
                    step,
                    c.run,
                    c.run_step,
                    now_ms(),
                    to_i64(c.messages_from),
                    changes,
                    c.incomplete
                ],
            )
            .db()?;
            tx.commit().db()?;
            Ok(from_i64(step))
        })
        .await
    }

    async fn extend_checkpoint(
        &self,
        session_id: &str,
        step: u32,
        changes: &[PathChange],
    ) -> Result<(), StoreError> {
        let (id, more) = (session_id.to_owned(), changes.to_vec());
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let json: String = tx
                .query_row(
                    "SELECT changes FROM checkpoints WHERE session_id = ?1 AND step = ?2",
                    params![id, step],
                    |r| r.get(0),
                )
                .optional()
                .db()?
                .ok_or_else(|| StoreError::NotFound(id.clone()))?;
            let mut all: Vec<PathChange> = from_json(&json)?;
            all.extend(more);
            tx.execute(
                "UPDATE checkpoints SET changes = ?1 WHERE session_id = ?2 AND step = ?3",
                params![to_json(&all)?, id, step],
            )
            .db()?;
            tx.commit().db()?;
            Ok(())
        })
        .await
    }

    async fn checkpoints(&self, session_id: &str) -> Result<Vec<Checkpoint>, StoreError> {
        let id = session_id.to_owned();
        self.with_conn(move |conn| checkpoints(conn, &id)).await
    }

    async fn record_rewind(&self, r: &NewRewind) -> Result<i64, StoreError> {
        let r = r.clone();
        let changes = to_json(&r.changes)?;
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let mut removed: Vec<Value> = Vec::new();
            if r.conversation {
                let from: Option<i64> = tx
                    .query_row(
                        "SELECT messages_from FROM checkpoints WHERE session_id = ?1 AND step = ?2",
                        params![r.session_id, r.to_step],
                        |row| row.get(0),
                    )
                    .optional()
                    .db()?;
                let from = from.ok_or_else(|| StoreError::NotFound(r.session_id.clone()))?;
                {
                    let mut q = tx
                        .prepare(
                            "SELECT json FROM messages WHERE session_id = ?1 AND seq >= ?2
                             ORDER BY seq",
                        )
                        .db()?;
                    let rows = q
                        .query_map(params![r.session_id, from], |row| row.get::<_, String>(0))
                        .db()?;
                    for json in rows {
                        removed.push(from_json(&json.db()?)?);
                    }
                }
                tx.execute(
                    "DELETE FROM messages WHERE session_id = ?1 AND seq >= ?2",
                    params![r.session_id, from],
                )
                .db()?;
            }
            tx.execute(
                "INSERT INTO rewinds (session_id, to_step, created, code, conversation, changes,
                    messages)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    r.session_id,
                    r.to_step,
                    now_ms(),
                    r.code,
                    r.conversation,
                    changes,
                    to_json(&removed)?
                ],
            )
            .db()?;
            let id = tx.last_insert_rowid();
            tx.execute(
                "UPDATE checkpoints SET rewound_by = ?1
                 WHERE session_id = ?2 AND step >= ?3 AND rewound_by IS NULL",
                params![id, r.session_id, r.to_step],
            )
            .db()?;
            tx.commit().db()?;
            Ok(id)
        })
        .await
    }

    async fn last_rewind(&self, session_id: &str) -> Result<Option<RewindRecord>, StoreError> {
        let id = session_id.to_owned();
        self.with_conn(move |conn| {
            let row = conn
                .query_row(
                    "SELECT id, session_id, to_step, created, code, conversation, changes,
                        messages, undone
                     FROM rewinds WHERE session_id = ?1 AND undone = 0
                     ORDER BY id DESC LIMIT 1",
                    [&id],
                    |r| {
                        Ok((
                            r.get::<_, i64>(0)?,
                            r.get::<_, String>(1)?,
                            r.get::<_, i64>(2)?,
                            r.get::<_, i64>(3)?,
                            r.get::<_, bool>(4)?,
                            r.get::<_, bool>(5)?,
                            r.get::<_, String>(6)?,
                            r.get::<_, String>(7)?,
                            r.get::<_, bool>(8)?,
                        ))
                    },
                )
                .optional()
                .db()?;
            row.map(
                |(
                    id,
                    session_id,
                    to_step,
                    created,
                    code,
                    conversation,
                    changes,
                    messages,
                    undone,
                )| {
                    Ok(RewindRecord {
                        id,
                        session_id,
                        to_step: from_i64(to_step),
                        created,
                        code,
                        conversation,
                        changes: from_json(&changes)?,
                        messages: from_json(&messages)?,
                        undone,
                    })
                },
            )
            .transpose()
        })
        .await
    }

    async fn undo_rewind(&self, id: i64) -> Result<(), StoreError> {
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let (session_id, messages): (String, String) = tx
                .query_row(
                    "SELECT session_id, messages FROM rewinds WHERE id = ?1 AND undone = 0",
                    [id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .db()?
                .ok_or_else(|| StoreError::NotFound(format!("rewind {id}")))?;
            let messages: Vec<Value> = from_json(&messages)?;
            if !messages.is_empty() {
                let stored: i64 = tx
                    .query_row(
                        "SELECT COUNT(*) FROM messages WHERE session_id = ?1",
                        [&session_id],
                        |r| r.get(0),
                    )
                    .db()?;
                let mut insert = tx
                    .prepare(
                        "INSERT INTO messages (session_id, seq, role, json) VALUES (?1, ?2, ?3, ?4)",
                    )
                    .db()?;
                for (i, m) in messages.iter().enumerate() {
                    let role = m.get("role").and_then(Value::as_str);
                    insert
                        .execute(params![session_id, stored + to_i64(i), role, to_json(m)?])
                        .db()?;
                }
            }
            tx.execute("UPDATE checkpoints SET rewound_by = NULL WHERE rewound_by = ?1", [id])
                .db()?;
            tx.execute("UPDATE rewinds SET undone = 1 WHERE id = ?1", [id])
                .db()?;
            tx.commit().db()?;
            Ok(())
        })
        .await
    }

    async fn checkpoint_count(&self) -> Result<usize, StoreError> {
        self.with_conn(|conn| {
            let n: i64 = conn
                .query_row("SELECT COUNT(*) FROM checkpoints", [], |r| r.get(0))
                .db()?;
            Ok(from_i64(n))
        })
        .await
    }

    async fn referenced_hashes(&self) -> Result<HashSet<String>, StoreError> {
        self.with_conn(|conn| {
            let mut out = HashSet::new();
            for sql in [
                "SELECT changes FROM checkpoints",
                "SELECT changes FROM rewinds WHERE undone = 0",
            ] {
                let mut q = conn.prepare(sql).db()?;
                let rows = q.query_map([], |r| r.get::<_, String>(0)).db()?;
                for json in rows {
                    let changes: Vec<PathChange> = from_json(&json.db()?)?;
                    for c in &changes {
                        out.extend(hash_of(&c.before).map(str::to_owned));
                        out.extend(hash_of(&c.after).map(str::to_owned));
                    }
                }
            }
            Ok(out)
        })
        .await
    }

    async fn prune_checkpoints(&self, older_than: i64, keep: usize) -> Result<usize, StoreError> {
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let mut deleted = tx
                .execute("DELETE FROM checkpoints WHERE recorded < ?1", [older_than])
                .db()?;
            deleted += tx
                .execute(
                    "DELETE FROM checkpoints WHERE (session_id, step) IN (
                        SELECT session_id, step FROM checkpoints ORDER BY recorded DESC
                        LIMIT -1 OFFSET ?1)",
                    [to_i64(keep)],
                )
                .db()?;
            tx.commit().db()?;
            Ok(deleted)
        })
        .await
    }
}

fn checkpoints(conn: &Connection, session_id: &str) -> Result<Vec<Checkpoint>, StoreError> {
    let mut q = conn
        .prepare(
            "SELECT step, run, run_step, recorded, messages_from, changes, incomplete, rewound_by
             FROM checkpoints WHERE session_id = ?1 ORDER BY step",
        )
        .db()?;
    let rows = q
        .query_map([session_id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, Option<String>>(6)?,
                r.get::<_, Option<i64>>(7)?,
            ))
        })
        .db()?;
    let mut out = Vec::new();
    for row in rows {
        let (step, run, run_step, recorded, messages_from, changes, incomplete, rewound_by) =
            row.db()?;
        out.push(Checkpoint {
            step: from_i64(step),
            run: from_i64(run),
            run_step: from_i64(run_step),
            recorded,
            messages_from: from_i64(messages_from),
            changes: from_json(&changes)?,
            incomplete,
            rewound_by,
        });
    }
    Ok(out)
}
