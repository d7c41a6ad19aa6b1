//! [`ApprovalStore`] for [`PostgresStore`]: each change is one statement
//! whose `WHERE` holds the rule (first answer wins, one claim), so workers
//! answering or claiming at once cannot both succeed.

use async_trait::async_trait;
use serde_json::Value;
use tokio_postgres::types::ToSql;
use tokio_postgres::{GenericClient, Row};

use super::{Db as _, PostgresStore, begin, from_json, to_json};
use crate::{
    Answer, Answered, ApprovalRecord, ApprovalStatus, ApprovalStore, Asked, NewApproval, RunClaim,
    StoreError,
};

const COLUMNS: &str = "id, key, session_id, tool, view, worker, created, expires, status,
    answered_by, answered, runner, result";

fn decode(r: &Row) -> Result<ApprovalRecord, StoreError> {
    let status: &str = r.get(8);
    Ok(ApprovalRecord {
        id: r.get(0),
        key: r.get(1),
        session_id: r.get(2),
        tool: r.get(3),
        view: from_json(r.get(4))?,
        worker: r.get(5),
        created: r.get(6),
        expires: r.get(7),
        status: ApprovalStatus::from_name(status).ok_or_else(|| {
            StoreError::db(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("approvals.status holds an unknown value {status:?}"),
            ))
        })?,
        answered_by: r.get(9),
        answered: r.get(10),
        runner: r.get(11),
        result: r
            .get::<_, Option<&str>>(12)
            .map(from_json::<Value>)
            .transpose()?,
    })
}

async fn one(
    client: &impl GenericClient,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Option<ApprovalRecord>, StoreError> {
    client
        .query_opt(sql, params)
        .await
        .db()?
        .as_ref()
        .map(decode)
        .transpose()
}

async fn by_id(
    client: &impl GenericClient,
    id: i64,
    lock: bool,
) -> Result<Option<ApprovalRecord>, StoreError> {
    let lock = if lock { " FOR UPDATE" } else { "" };
    one(
        client,
        &format!("SELECT {COLUMNS} FROM approvals WHERE id = $1{lock}"),
        &[&id],
    )
    .await
}

/// Reads back a row the transaction just wrote.
fn written(record: Option<ApprovalRecord>) -> Result<ApprovalRecord, StoreError> {
    record.ok_or_else(|| StoreError::Worker("an approval just written cannot be read back".into()))
}

#[async_trait]
impl ApprovalStore for PostgresStore {
    async fn ask_approval(&self, a: &NewApproval) -> Result<Asked, StoreError> {
        let view = to_json(&a.view)?;
        let client = self.client().await?;
        // Inserted unless the key exists; then the existing row. A racing
        // insert of the same key makes ON CONFLICT skip ours, and the
        // select below sees theirs (it committed before our insert
        // returned).
        let inserted = one(
            &**client,
            &format!(
                "INSERT INTO approvals (key, session_id, tool, view, worker, created, expires,
                    status)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending')
                 ON CONFLICT (key) DO NOTHING RETURNING {COLUMNS}"
            ),
            &[
                &a.key,
                &a.session_id,
                &a.tool,
                &view,
                &a.worker,
                &a.created,
                &a.expires,
            ],
        )
        .await?;
        if let Some(record) = inserted {
            return Ok(Asked::New(record));
        }
        let existing = one(
            &**client,
            &format!("SELECT {COLUMNS} FROM approvals WHERE key = $1"),
            &[&a.key],
        )
        .await?;
        Ok(Asked::Existing(written(existing)?))
    }

    async fn approval(&self, id: i64) -> Result<Option<ApprovalRecord>, StoreError> {
        let client = self.client().await?;
        by_id(&**client, id, false).await
    }

    async fn approval_by_key(&self, key: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        let client = self.client().await?;
        one(
            &**client,
            &format!("SELECT {COLUMNS} FROM approvals WHERE key = $1"),
            &[&key],
        )
        .await
    }

    async fn pending_approvals(&self, now: i64) -> Result<Vec<ApprovalRecord>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                &format!(
                    "SELECT {COLUMNS} FROM approvals
                     WHERE status = 'pending' AND expires >= $1 ORDER BY id"
                ),
                &[&now],
            )
            .await
            .db()?;
        rows.iter().map(decode).collect()
    }

    async fn answer_approval(&self, answer: &Answer) -> Result<Answered, StoreError> {
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        let Some(record) = by_id(&tx, answer.id, true).await? else {
            return Ok(Answered::NotFound);
        };
        if record.status != ApprovalStatus::Pending {
            return Ok(Answered::AlreadyAnswered(record));
        }
        if record.expires < answer.at {
            let record = one(
                &tx,
                &format!(
                    "UPDATE approvals SET status = 'expired', answered = $2 WHERE id = $1
                     RETURNING {COLUMNS}"
                ),
                &[&answer.id, &answer.at],
            )
            .await?;
            tx.commit().await.db()?;
            return Ok(Answered::Expired(written(record)?));
        }
        let status = if answer.approve {
            ApprovalStatus::Approved
        } else {
            ApprovalStatus::Denied
        };
        let record = one(
            &tx,
            &format!(
                "UPDATE approvals SET status = $2, answered_by = $3, answered = $4 WHERE id = $1
                 RETURNING {COLUMNS}"
            ),
            &[&answer.id, &status.as_str(), &answer.by, &answer.at],
        )
        .await?;
        tx.commit().await.db()?;
        Ok(Answered::Answered(written(record)?))
    }

    async fn claim_approved_run(
        &self,
        id: i64,
        worker: &str,
        _at: i64,
    ) -> Result<RunClaim, StoreError> {
        let client = self.client().await?;
        let claimed = one(
            &**client,
            &format!(
                "UPDATE approvals SET status = 'running', runner = $2
                 WHERE id = $1 AND status = 'approved' RETURNING {COLUMNS}"
            ),
            &[&id, &worker],
        )
        .await?;
        if let Some(record) = claimed {
            return Ok(RunClaim::Claimed(record));
        }
        Ok(match by_id(&**client, id, false).await? {
            None => RunClaim::NotFound,
            Some(record)
                if matches!(
                    record.status,
                    ApprovalStatus::Running | ApprovalStatus::Done
                ) =>
            {
                RunClaim::Taken(record)
            }
            Some(record) => RunClaim::NotApproved(record),
        })
    }

    async fn finish_approved_run(
        &self,
        id: i64,
        worker: &str,
        result: &Value,
        _at: i64,
    ) -> Result<bool, StoreError> {
        let result = to_json(result)?;
        let client = self.client().await?;
        let changed = client
            .execute(
                "UPDATE approvals SET status = 'done', result = $3
                 WHERE id = $1 AND status = 'running' AND runner = $2",
                &[&id, &worker, &result],
            )
            .await
            .db()?;
        Ok(changed == 1)
    }

    async fn expire_approvals(&self, now: i64) -> Result<u64, StoreError> {
        let client = self.client().await?;
        client
            .execute(
                "UPDATE approvals SET status = 'expired', answered = $1
                 WHERE status = 'pending' AND expires < $1",
                &[&now],
            )
            .await
            .db()
    }
}
