//! [`ApprovalStore`] for [`SqliteStore`].

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension as _, Row, params};
use serde_json::Value;

use super::{Db as _, SqliteStore, write_tx};
use crate::{
    Answer, Answered, ApprovalRecord, ApprovalStatus, ApprovalStore, Asked, NewApproval, NewRun,
    RunClaim, StoreError, WorkerLease,
};

const COLUMNS: &str = "id, key, session_id, tool, view, worker, created, expires, status,
    answered_by, answered, runner, result, for_session, call_id";

/// A row, its JSON and status still text.
struct Raw {
    record: ApprovalRecord,
    view: String,
    status: String,
    result: Option<String>,
}

fn raw(r: &Row<'_>) -> rusqlite::Result<Raw> {
    Ok(Raw {
        record: ApprovalRecord {
            id: r.get(0)?,
            key: r.get(1)?,
            session_id: r.get(2)?,
            tool: r.get(3)?,
            view: Value::Null,
            worker: r.get(5)?,
            created: r.get(6)?,
            expires: r.get(7)?,
            status: ApprovalStatus::Pending,
            answered_by: r.get(9)?,
            for_session: r.get(13)?,
            answered: r.get(10)?,
            call_id: r.get(14)?,
            runner: r.get(11)?,
            result: None,
        },
        view: r.get(4)?,
        status: r.get(8)?,
        result: r.get(12)?,
    })
}

fn decode(raw: Raw) -> Result<ApprovalRecord, StoreError> {
    let mut record = raw.record;
    record.view = serde_json::from_str(&raw.view).map_err(StoreError::Json)?;
    record.status = ApprovalStatus::from_name(&raw.status).ok_or_else(|| {
        StoreError::db(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("approvals.status holds an unknown value {:?}", raw.status),
        ))
    })?;
    record.result = raw
        .result
        .map(|r| serde_json::from_str(&r).map_err(StoreError::Json))
        .transpose()?;
    Ok(record)
}

fn get(
    conn: &Connection,
    clause: &str,
    arg: &dyn rusqlite::ToSql,
) -> Result<Option<ApprovalRecord>, StoreError> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM approvals WHERE {clause}"),
        [arg],
        raw,
    )
    .optional()
    .db()?
    .map(decode)
    .transpose()
}

fn by_id(conn: &Connection, id: i64) -> Result<Option<ApprovalRecord>, StoreError> {
    get(conn, "id = ?1", &id)
}

/// Reads back a row the transaction just wrote.
fn reread(conn: &Connection, id: i64) -> Result<ApprovalRecord, StoreError> {
    by_id(conn, id)?
        .ok_or_else(|| StoreError::Worker("an approval just written cannot be read back".into()))
}

#[async_trait]
impl ApprovalStore for SqliteStore {
    async fn ask_approval(&self, a: &NewApproval) -> Result<Asked, StoreError> {
        let a = a.clone();
        let view = serde_json::to_string(&a.view).map_err(StoreError::Json)?;
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            if let Some(existing) = get(&tx, "key = ?1", &a.key)? {
                return Ok(Asked::Existing(existing));
            }
            tx.execute(
                "INSERT INTO approvals (key, session_id, tool, view, worker, created, expires,
                    status)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending')",
                params![
                    a.key,
                    a.session_id,
                    a.tool,
                    view,
                    a.worker,
                    a.created,
                    a.expires
                ],
            )
            .db()?;
            let record = reread(&tx, tx.last_insert_rowid())?;
            tx.commit().db()?;
            Ok(Asked::New(record))
        })
        .await
    }

    async fn approval(&self, id: i64) -> Result<Option<ApprovalRecord>, StoreError> {
        self.with_conn(move |conn| by_id(conn, id)).await
    }

    async fn approval_by_key(&self, key: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        let key = key.to_owned();
        self.with_conn(move |conn| get(conn, "key = ?1", &key))
            .await
    }

    async fn pending_approvals(&self, now: i64) -> Result<Vec<ApprovalRecord>, StoreError> {
        self.with_conn(move |conn| {
            let mut st = conn
                .prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM approvals
                     WHERE status = 'pending' AND expires >= ?1 ORDER BY id"
                ))
                .db()?;
            let rows = st
                .query_map([now], raw)
                .db()?
                .collect::<Result<Vec<_>, _>>()
                .db()?;
            rows.into_iter().map(decode).collect()
        })
        .await
    }

    async fn answer_approval(&self, answer: &Answer) -> Result<Answered, StoreError> {
        let answer = answer.clone();
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let Some(record) = by_id(&tx, answer.id)? else {
                return Ok(Answered::NotFound);
            };
            if record.status != ApprovalStatus::Pending {
                return Ok(Answered::AlreadyAnswered(record));
            }
            if record.expires < answer.at {
                tx.execute(
                    "UPDATE approvals SET status = 'expired', answered = ?2 WHERE id = ?1",
                    params![answer.id, answer.at],
                )
                .db()?;
                let record = reread(&tx, answer.id)?;
                tx.commit().db()?;
                return Ok(Answered::Expired(record));
            }
            let status = if answer.approve {
                ApprovalStatus::Approved
            } else {
                ApprovalStatus::Denied
            };
            tx.execute(
                "UPDATE approvals SET status = ?2, answered_by = ?3, answered = ?4,
                    for_session = ?5
                 WHERE id = ?1",
                params![
                    answer.id,
                    status.as_str(),
                    answer.by,
                    answer.at,
                    answer.approve && answer.for_session
                ],
            )
            .db()?;
            let record = reread(&tx, answer.id)?;
            tx.commit().db()?;
            Ok(Answered::Answered(record))
        })
        .await
    }

    async fn claim_approved_run(
        &self,
        id: i64,
        worker: &str,
        _at: i64,
    ) -> Result<RunClaim, StoreError> {
        let worker = worker.to_owned();
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let Some(record) = by_id(&tx, id)? else {
                return Ok(RunClaim::NotFound);
            };
            match record.status {
                ApprovalStatus::Approved => {}
                ApprovalStatus::Running | ApprovalStatus::Done => {
                    return Ok(RunClaim::Taken(record));
                }
                _ => return Ok(RunClaim::NotApproved(record)),
            }
            tx.execute(
                "UPDATE approvals SET status = 'running', runner = ?2
                 WHERE id = ?1 AND status = 'approved'",
                params![id, worker],
            )
            .db()?;
            let record = reread(&tx, id)?;
            tx.commit().db()?;
            Ok(RunClaim::Claimed(record))
        })
        .await
    }

    async fn finish_approved_run(
        &self,
        id: i64,
        worker: &str,
        result: &Value,
        _at: i64,
    ) -> Result<bool, StoreError> {
        let worker = worker.to_owned();
        let result = serde_json::to_string(result).map_err(StoreError::Json)?;
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let changed = tx
                .execute(
                    "UPDATE approvals SET status = 'done', result = ?3
                     WHERE id = ?1 AND status = 'running' AND runner = ?2",
                    params![id, worker, result],
                )
                .db()?;
            tx.commit().db()?;
            Ok(changed == 1)
        })
        .await
    }

    async fn expire_approvals(&self, now: i64) -> Result<u64, StoreError> {
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let changed = tx
                .execute(
                    "UPDATE approvals SET status = 'expired', answered = ?1
                     WHERE status = 'pending' AND expires < ?1",
                    [now],
                )
                .db()?;
            tx.commit().db()?;
            Ok(changed as u64)
        })
        .await
    }

    async fn claim_run(&self, run: &NewRun) -> Result<RunClaim, StoreError> {
        let run = run.clone();
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let id = match get(&tx, "key = ?1", &run.key)? {
                None => {
                    tx.execute(
                        "INSERT INTO approvals (key, session_id, tool, view, worker, created,
                            expires, status, runner, call_id)
                         VALUES (?1, ?2, ?3, 'null', ?4, ?5, ?5, 'running', ?4, ?6)",
                        params![
                            run.key,
                            run.session_id,
                            run.tool,
                            run.worker,
                            run.at,
                            run.call_id
                        ],
                    )
                    .db()?;
                    tx.last_insert_rowid()
                }
                Some(record) => match record.status {
                    ApprovalStatus::Approved => {
                        tx.execute(
                            "UPDATE approvals SET status = 'running', runner = ?2, call_id = ?3
                             WHERE id = ?1",
                            params![record.id, run.worker, run.call_id],
                        )
                        .db()?;
                        record.id
                    }
                    ApprovalStatus::Running | ApprovalStatus::Done => {
                        return Ok(RunClaim::Taken(record));
                    }
                    _ => return Ok(RunClaim::NotApproved(record)),
                },
            };
            let record = reread(&tx, id)?;
            tx.commit().db()?;
            Ok(RunClaim::Claimed(record))
        })
        .await
    }

    async fn hold_worker(&self, worker: &str) -> Result<WorkerLease, StoreError> {
        super::workers::hold(self.path(), worker)
    }

    async fn worker_alive(&self, worker: &str) -> Result<bool, StoreError> {
        super::workers::alive(self.path(), worker)
    }
}
