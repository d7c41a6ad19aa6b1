//! [`CheckpointStore`] for [`PostgresStore`].

use std::collections::HashSet;

use async_trait::async_trait;
use serde_json::Value;
use toolgate_core::PathChange;

use super::sessions::stored_messages;
use super::{Db as _, PostgresStore, begin, from_i64, from_json, now_ms, to_i64, to_json};
use toolgate_store::StoreError;
use toolgate_store::checkpoint::{
    Checkpoint, CheckpointStore, NewCheckpoint, NewRewind, RewindRecord, hash_of,
};

#[async_trait]
impl CheckpointStore for PostgresStore {
    async fn record_checkpoint(&self, c: &NewCheckpoint) -> Result<u32, StoreError> {
        let changes = to_json(&c.changes)?;
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        // The session's row, locked: its steps are numbered one at a time.
        if tx
            .query_opt(
                "SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE",
                &[&c.session_id],
            )
            .await
            .db()?
            .is_none()
        {
            return Err(StoreError::NotFound(c.session_id.clone()));
        }
        let step: i64 = tx
            .query_one(
                "INSERT INTO checkpoints (session_id, step, run, run_step, recorded,
                    messages_from, changes, incomplete)
                 SELECT $1, COALESCE(MAX(step), 0) + 1, $2, $3, $4, $5, $6, $7
                 FROM checkpoints WHERE session_id = $1
                 RETURNING step",
                &[
                    &c.session_id,
                    &i64::from(c.run),
                    &i64::from(c.run_step),
                    &now_ms(),
                    &to_i64(c.messages_from),
                    &changes,
                    &c.incomplete,
                ],
            )
            .await
            .db()?
            .get(0);
        tx.commit().await.db()?;
        Ok(from_i64(step))
    }

    async fn extend_checkpoint(
        &self,
        session_id: &str,
        step: u32,
        changes: &[PathChange],
    ) -> Result<(), StoreError> {
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        let json: String = tx
            .query_opt(
                "SELECT changes FROM checkpoints WHERE session_id = $1 AND step = $2 FOR UPDATE",
                &[&session_id, &i64::from(step)],
            )
            .await
            .db()?
            .ok_or_else(|| StoreError::NotFound(session_id.to_owned()))?
            .get(0);
        let mut all: Vec<PathChange> = from_json(&json)?;
        all.extend_from_slice(changes);
        tx.execute(
            "UPDATE checkpoints SET changes = $1 WHERE session_id = $2 AND step = $3",
            &[&to_json(&all)?, &session_id, &i64::from(step)],
        )
        .await
        .db()?;
        tx.commit().await.db()
    }

    async fn checkpoints(&self, session_id: &str) -> Result<Vec<Checkpoint>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT step, run, run_step, recorded, messages_from, changes, incomplete,
                        rewound_by
                 FROM checkpoints WHERE session_id = $1 ORDER BY step",
                &[&session_id],
            )
            .await
            .db()?;
        rows.iter()
            .map(|r| {
                Ok(Checkpoint {
                    step: from_i64(r.get(0)),
                    run: from_i64(r.get(1)),
                    run_step: from_i64(r.get(2)),
                    recorded: r.get(3),
                    messages_from: from_i64(r.get(4)),
                    changes: from_json(r.get(5))?,
                    incomplete: r.get(6),
                    rewound_by: r.get(7),
                })
            })
            .collect()
    }

    async fn record_rewind(&self, r: &NewRewind) -> Result<i64, StoreError> {
        let changes = to_json(&r.changes)?;
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        let mut removed: Vec<Value> = Vec::new();
        if r.conversation {
            let from: i64 = tx
                .query_opt(
                    "SELECT messages_from FROM checkpoints WHERE session_id = $1 AND step = $2",
                    &[&r.session_id, &i64::from(r.to_step)],
                )
                .await
                .db()?
                .ok_or_else(|| StoreError::NotFound(r.session_id.clone()))?
                .get(0);
            let rows = tx
                .query(
                    "DELETE FROM messages WHERE session_id = $1 AND seq >= $2 RETURNING seq, json",
                    &[&r.session_id, &from],
                )
                .await
                .db()?;
            let mut cut: Vec<(i64, Value)> = rows
                .iter()
                .map(|row| Ok((row.get(0), from_json(row.get(1))?)))
                .collect::<Result<_, StoreError>>()?;
            cut.sort_by_key(|(seq, _)| *seq);
            removed = cut.into_iter().map(|(_, m)| m).collect();
        }
        let id: i64 = tx
            .query_one(
                "INSERT INTO rewinds (session_id, to_step, created, code, conversation, changes,
                    messages)
                 VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                &[
                    &r.session_id,
                    &i64::from(r.to_step),
                    &now_ms(),
                    &r.code,
                    &r.conversation,
                    &changes,
                    &to_json(&removed)?,
                ],
            )
            .await
            .db()?
            .get(0);
        tx.execute(
            "UPDATE checkpoints SET rewound_by = $1
             WHERE session_id = $2 AND step >= $3 AND rewound_by IS NULL",
            &[&id, &r.session_id, &i64::from(r.to_step)],
        )
        .await
        .db()?;
        tx.commit().await.db()?;
        Ok(id)
    }

    async fn last_rewind(&self, session_id: &str) -> Result<Option<RewindRecord>, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT id, session_id, to_step, created, code, conversation, changes, messages,
                        undone
                 FROM rewinds WHERE session_id = $1 AND NOT undone
                 ORDER BY id DESC LIMIT 1",
                &[&session_id],
            )
            .await
            .db()?;
        row.map(|r| {
            Ok(RewindRecord {
                id: r.get(0),
                session_id: r.get(1),
                to_step: from_i64(r.get(2)),
                created: r.get(3),
                code: r.get(4),
                conversation: r.get(5),
                changes: from_json(r.get(6))?,
                messages: from_json(r.get(7))?,
                undone: r.get(8),
            })
        })
        .transpose()
    }

    async fn undo_rewind(&self, id: i64) -> Result<(), StoreError> {
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        let row = tx
            .query_opt(
                "SELECT session_id, messages FROM rewinds WHERE id = $1 AND NOT undone FOR UPDATE",
                &[&id],
            )
            .await
            .db()?
            .ok_or_else(|| StoreError::NotFound(format!("rewind {id}")))?;
        let session_id: String = row.get(0);
        let messages: Vec<Value> = from_json(row.get(1))?;
        if !messages.is_empty() {
            let stored = to_i64(stored_messages(&tx, &session_id).await?);
            for (i, m) in messages.iter().enumerate() {
                let role = m.get("role").and_then(Value::as_str);
                tx.execute(
                    "INSERT INTO messages (session_id, seq, role, json) VALUES ($1, $2, $3, $4)",
                    &[&session_id, &(stored + to_i64(i)), &role, &to_json(m)?],
                )
                .await
                .db()?;
            }
        }
        tx.execute(
            "UPDATE checkpoints SET rewound_by = NULL WHERE rewound_by = $1",
            &[&id],
        )
        .await
        .db()?;
        tx.execute("UPDATE rewinds SET undone = TRUE WHERE id = $1", &[&id])
            .await
            .db()?;
        tx.commit().await.db()
    }

    async fn checkpoint_count(&self) -> Result<usize, StoreError> {
        let client = self.client().await?;
        let n: i64 = client
            .query_one("SELECT COUNT(*) FROM checkpoints", &[])
            .await
            .db()?
            .get(0);
        Ok(from_i64(n))
    }

    async fn referenced_hashes(&self) -> Result<HashSet<String>, StoreError> {
        let client = self.client().await?;
        let mut out = HashSet::new();
        for sql in [
            "SELECT changes FROM checkpoints",
            "SELECT changes FROM rewinds WHERE NOT undone",
        ] {
            for row in client.query(sql, &[]).await.db()? {
                let changes: Vec<PathChange> = from_json(row.get(0))?;
                for c in &changes {
                    out.extend(hash_of(&c.before).map(str::to_owned));
                    out.extend(hash_of(&c.after).map(str::to_owned));
                }
            }
        }
        Ok(out)
    }

    async fn prune_checkpoints(&self, older_than: i64, keep: usize) -> Result<usize, StoreError> {
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        let mut deleted = tx
            .execute(
                "DELETE FROM checkpoints WHERE recorded < $1",
                &[&older_than],
            )
            .await
            .db()?;
        deleted += tx
            .execute(
                "DELETE FROM checkpoints WHERE (session_id, step) IN (
                    SELECT session_id, step FROM checkpoints ORDER BY recorded DESC
                    OFFSET $1)",
                &[&to_i64(keep)],
            )
            .await
            .db()?;
        tx.commit().await.db()?;
        Ok(from_i64(to_i64(deleted)))
    }
}
