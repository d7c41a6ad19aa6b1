//! [`AuditStore`] for [`PostgresStore`].

use async_trait::async_trait;
use tokio_postgres::types::ToSql;

use super::{Db as _, PostgresStore, begin, from_i64, from_json, to_i64, to_json};
use toolgate_store::{AuditEntry, AuditFilter, AuditStore, StoreError};

#[async_trait]
impl AuditStore for PostgresStore {
    /// One statement for the whole batch (arrays unnested), in one
    /// transaction.
    async fn append(&self, entries: &[AuditEntry]) -> Result<(), StoreError> {
        if entries.is_empty() {
            return Ok(());
        }
        let mut columns = Columns::default();
        for e in entries {
            columns.ts.push(e.ts.clone());
            columns.call_id.push(e.call_id.clone());
            columns.session_id.push(e.session_id.clone());
            columns.tool.push(e.tool.clone());
            columns.args_sha256.push(e.args_sha256.clone());
            columns.decision.push(e.decision.clone());
            columns.success.push(e.success);
            columns.duration_us.push(to_i64(e.duration_us));
            columns.error.push(e.error.clone());
            columns.effects.push(to_json(&e.effects)?);
            columns.client.push(e.client.clone());
        }
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        tx.execute(
            "INSERT INTO audit (ts, call_id, session_id, tool, args_sha256, decision, success,
                duration_us, error, effects, client)
             SELECT ts, call_id, session_id, tool, args_sha256, decision, success, duration_us,
                    error, effects, client
             FROM UNNEST($1::TEXT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::TEXT[],
                $6::TEXT[], $7::BOOLEAN[], $8::BIGINT[], $9::TEXT[], $10::TEXT[], $11::TEXT[])
                WITH ORDINALITY AS a (ts, call_id, session_id, tool, args_sha256, decision,
                    success, duration_us, error, effects, client, n)
             ORDER BY n",
            &[
                &columns.ts,
                &columns.call_id,
                &columns.session_id,
                &columns.tool,
                &columns.args_sha256,
                &columns.decision,
                &columns.success,
                &columns.duration_us,
                &columns.error,
                &columns.effects,
                &columns.client,
            ],
        )
        .await
        .db()?;
        tx.commit().await.db()
    }

    async fn recent(&self, filter: &AuditFilter) -> Result<Vec<AuditEntry>, StoreError> {
        let limit = to_i64(filter.limit);
        let args: [&(dyn ToSql + Sync); 5] = [
            &filter.decision,
            &filter.session_id,
            &filter.tool,
            &limit,
            &filter.call_id,
        ];
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT ts, call_id, session_id, tool, args_sha256, decision, success,
                        duration_us, error, effects, client
                 FROM audit
                 WHERE ($1::TEXT IS NULL OR decision = $1)
                   AND ($2::TEXT IS NULL OR session_id = $2)
                   AND ($3::TEXT IS NULL OR tool = $3)
                   AND ($5::TEXT IS NULL OR call_id = $5)
                 ORDER BY id DESC LIMIT $4",
                &args,
            )
            .await
            .db()?;
        rows.iter()
            .map(|r| {
                Ok(AuditEntry {
                    ts: r.get(0),
                    call_id: r.get(1),
                    session_id: r.get(2),
                    client: r.get(10),
                    tool: r.get(3),
                    args_sha256: r.get(4),
                    decision: r.get(5),
                    success: r.get(6),
                    duration_us: from_i64(r.get(7)),
                    error: r.get(8),
                    effects: from_json(r.get(9))?,
                })
            })
            .collect()
    }
}

/// A batch of entries, column by column.
#[derive(Default)]
struct Columns {
    ts: Vec<String>,
    call_id: Vec<String>,
    session_id: Vec<Option<String>>,
    tool: Vec<String>,
    args_sha256: Vec<String>,
    decision: Vec<String>,
    success: Vec<bool>,
    duration_us: Vec<i64>,
    error: Vec<Option<String>>,
    effects: Vec<String>,
    client: Vec<Option<String>>,
}
