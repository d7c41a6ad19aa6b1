//! [`ApprovalStore`] for [`PostgresStore`]: each change is one statement
//! whose `WHERE` holds the rule (first answer wins, one claim), so workers
//! answering or claiming at once cannot both succeed; each change notifies
//! [`APPROVALS_CHANNEL`] in its transaction, and waits are woken by it.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio_postgres::types::ToSql;
use tokio_postgres::{GenericClient, Row};

use super::{Db as _, PostgresStore, begin, from_json, to_json};
use toolgate_store::deadline_after;
use toolgate_store::{
    APPROVALS_CHANNEL, Answer, Answered, ApprovalRecord, ApprovalStatus, ApprovalStore, Asked,
    NewApproval, NewRun, RunClaim, StoreError, WorkerLease,
};

const COLUMNS: &str = "id, key, session_id, tool, view, worker, created, expires, status,
    answered_by, answered, runner, result, for_session, call_id";

/// How often a wait reads the approval again although no notification
/// came: the safety net for a notification lost while the `LISTEN`
/// connection was down.
const SLOW_POLL: Duration = Duration::from_secs(2);

/// Tells the waiters of every worker that approval `id` changed; sent when
/// the caller's transaction commits (at once outside one).
async fn notify(client: &impl GenericClient, id: i64) -> Result<(), StoreError> {
    client
        .execute(
            "SELECT pg_notify($1, $2)",
            &[&APPROVALS_CHANNEL, &id.to_string()],
        )
        .await
        .db()?;
    Ok(())
}

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
        for_session: r.get(13),
        answered: r.get(10),
        call_id: r.get(14),
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
            notify(&**client, record.id).await?;
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
            notify(&tx, answer.id).await?;
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
                "UPDATE approvals SET status = $2, answered_by = $3, answered = $4,
                    for_session = $5
                 WHERE id = $1 RETURNING {COLUMNS}"
            ),
            &[
                &answer.id,
                &status.as_str(),
                &answer.by,
                &answer.at,
                &(answer.approve && answer.for_session),
            ],
        )
        .await?;
        notify(&tx, answer.id).await?;
        tx.commit().await.db()?;
        Ok(Answered::Answered(written(record)?))
    }

    async fn claim_approved_run(
        &self,
        id: i64,
        worker: &str,
        _at: i64,
    ) -> Result<RunClaim, StoreError> {
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        let claimed = one(
            &tx,
            &format!(
                "UPDATE approvals SET status = 'running', runner = $2
                 WHERE id = $1 AND status = 'approved' RETURNING {COLUMNS}"
            ),
            &[&id, &worker],
        )
        .await?;
        if let Some(record) = claimed {
            notify(&tx, id).await?;
            tx.commit().await.db()?;
            return Ok(RunClaim::Claimed(record));
        }
        drop(tx);
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
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        let changed = tx
            .execute(
                "UPDATE approvals SET status = 'done', result = $3
                 WHERE id = $1 AND status = 'running' AND runner = $2",
                &[&id, &worker, &result],
            )
            .await
            .db()?;
        if changed == 1 {
            notify(&tx, id).await?;
        }
        tx.commit().await.db()?;
        Ok(changed == 1)
    }

    async fn expire_approvals(&self, now: i64) -> Result<u64, StoreError> {
        let client = self.client().await?;
        // One row per approval expired, each notified as it commits.
        client
            .execute(
                "WITH expired AS (
                    UPDATE approvals SET status = 'expired', answered = $1
                    WHERE status = 'pending' AND expires < $1 RETURNING id
                 )
                 SELECT pg_notify($2, id::text) FROM expired",
                &[&now, &APPROVALS_CHANNEL],
            )
            .await
            .db()
    }

    async fn claim_run(&self, run: &NewRun) -> Result<RunClaim, StoreError> {
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        // A new key is inserted running; an approved one becomes running;
        // any other state is left as it is (no row returned).
        let claimed = one(
            &tx,
            &format!(
                "INSERT INTO approvals (key, session_id, tool, view, worker, created, expires,
                    status, runner, call_id)
                 VALUES ($1, $2, $3, 'null', $4, $5, $5, 'running', $4, $6)
                 ON CONFLICT (key) DO UPDATE SET status = 'running', runner = EXCLUDED.runner,
                     call_id = EXCLUDED.call_id
                 WHERE approvals.status = 'approved'
                 RETURNING {COLUMNS}"
            ),
            &[
                &run.key,
                &run.session_id,
                &run.tool,
                &run.worker,
                &run.at,
                &run.call_id,
            ],
        )
        .await?;
        if let Some(record) = claimed {
            notify(&tx, record.id).await?;
            tx.commit().await.db()?;
            return Ok(RunClaim::Claimed(record));
        }
        drop(tx);
        let record = one(
            &**client,
            &format!("SELECT {COLUMNS} FROM approvals WHERE key = $1"),
            &[&run.key],
        )
        .await?;
        let record = written(record)?;
        Ok(match record.status {
            ApprovalStatus::Running | ApprovalStatus::Done => RunClaim::Taken(record),
            _ => RunClaim::NotApproved(record),
        })
    }

    async fn hold_worker(&self, worker: &str) -> Result<WorkerLease, StoreError> {
        self.hold(worker).await
    }

    async fn worker_alive(&self, worker: &str) -> Result<bool, StoreError> {
        self.alive(worker).await
    }

    async fn wait_for_change(
        &self,
        id: i64,
        from: ApprovalStatus,
        timeout: Duration,
    ) -> Result<Option<ApprovalRecord>, StoreError> {
        // Listening before the first read: a change made between the read
        // and the wait is not missed.
        let mut changes = self.listener.subscribe();
        let deadline = deadline_after(timeout);
        loop {
            let Some(record) = self.approval(id).await? else {
                return Ok(None);
            };
            let now = tokio::time::Instant::now();
            if record.status != from || now >= deadline {
                return Ok(Some(record));
            }
            let nap = SLOW_POLL.min(deadline - now);
            let _ = tokio::time::timeout(nap, changes.changed(id)).await;
        }
    }
}
