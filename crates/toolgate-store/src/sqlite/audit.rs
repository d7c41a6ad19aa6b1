//! [`AuditStore`] for [`SqliteStore`].

use std::fmt::Write as _;

use async_trait::async_trait;
use rusqlite::params;
use rusqlite::types::Value as SqlValue;
use serde_json::Value;

use super::{Db as _, SqliteStore, from_i64, to_i64, write_tx};
use crate::{AuditEntry, AuditFilter, AuditStore, StoreError};

#[async_trait]
impl AuditStore for SqliteStore {
    async fn append(&self, entries: &[AuditEntry]) -> Result<(), StoreError> {
        if entries.is_empty() {
            return Ok(());
        }
        // Serialised here, moved to the worker: the caller keeps its slice.
        let rows = entries
            .iter()
            .map(|e| {
                Ok((
                    e.clone(),
                    serde_json::to_string(&e.effects).map_err(StoreError::Json)?,
                ))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        self.with_audit(move |conn| {
            let tx = write_tx(conn)?;
            {
                let mut insert = tx
                    .prepare_cached(
                        "INSERT INTO audit (ts, call_id, session_id, tool, args_sha256, decision,
                            success, duration_us, error, effects, client)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                    )
                    .db()?;
                for (e, effects) in &rows {
                    insert
                        .execute(params![
                            e.ts,
                            e.call_id,
                            e.session_id,
                            e.tool,
                            e.args_sha256,
                            e.decision,
                            e.success,
                            to_i64(e.duration_us),
                            e.error,
                            effects,
                            e.client,
                        ])
                        .db()?;
                }
            }
            tx.commit().db()
        })
        .await
    }

    async fn recent(&self, filter: &AuditFilter) -> Result<Vec<AuditEntry>, StoreError> {
        let mut sql = String::from(
            "SELECT ts, call_id, session_id, tool, args_sha256, decision, success, duration_us,
                    error, effects, client
             FROM audit",
        );
        let mut args = Vec::new();
        for (column, value) in [
            ("decision", &filter.decision),
            ("session_id", &filter.session_id),
            ("tool", &filter.tool),
            ("call_id", &filter.call_id),
        ] {
            if let Some(value) = value {
                args.push(SqlValue::Text(value.clone()));
                let _ = write!(
                    sql,
                    " {} {column} = ?{}",
                    if args.len() == 1 { "WHERE" } else { "AND" },
                    args.len()
                );
            }
        }
        args.push(SqlValue::Integer(to_i64(filter.limit)));
        let _ = write!(sql, " ORDER BY id DESC LIMIT ?{}", args.len());
        self.with_audit(move |conn| {
            let mut st = conn.prepare_cached(&sql).db()?;
            let rows = st
                .query_map(rusqlite::params_from_iter(args), |r| {
                    Ok((
                        AuditEntry {
                            ts: r.get(0)?,
                            call_id: r.get(1)?,
                            session_id: r.get(2)?,
                            client: r.get(10)?,
                            tool: r.get(3)?,
                            args_sha256: r.get(4)?,
                            decision: r.get(5)?,
                            success: r.get(6)?,
                            duration_us: from_i64(r.get(7)?),
                            error: r.get(8)?,
                            effects: Value::Null,
                        },
                        r.get::<_, String>(9)?,
                    ))
                })
                .db()?
                .collect::<Result<Vec<_>, _>>()
                .db()?;
            rows.into_iter()
                .map(|(mut entry, effects)| {
                    entry.effects = serde_json::from_str(&effects).map_err(StoreError::Json)?;
                    Ok(entry)
                })
                .collect()
        })
        .await
    }
}
