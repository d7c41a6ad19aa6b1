//! [`ScheduleStore`] for [`SqliteStore`].

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension as _, Row, params};

use super::{Db as _, SqliteStore, from_i64, to_i64, write_tx};
use crate::schedules::{RUN_ABANDONED, RUN_RUNNING};
use crate::{
    AfterRun, Claim, ClaimedJob, JobRecord, NewJob, RunEnd, RunRecord, ScheduleStore, StoreError,
    Trigger,
};

/// Runs kept per job (rule 5 of [`ScheduleStore`]).
const RUNS_KEPT: i64 = 100;

/// The columns of a [`JobRecord`], read by [`job_row`] (after
/// [`decode_job`]).
const JOB_COLUMNS: &str = "id, name, schedule, task, delete_after_run, session_id, created,
    enabled, next_run, lease_owner, lease_until, last_run, last_outcome, runs";

/// The columns of a [`RunRecord`], read by [`run_row`].
const RUN_COLUMNS: &str =
    "id, job_id, job_name, owner, scheduled, started, ended, outcome, summary";

/// A job row with its JSON columns still text: decoded off the row, so
/// that a JSON error is a [`StoreError::Json`], not a driver error.
struct RawJob {
    record: JobRecord,
    schedule: String,
    task: String,
}

fn job_row(r: &Row<'_>) -> rusqlite::Result<RawJob> {
    Ok(RawJob {
        record: JobRecord {
            id: r.get(0)?,
            name: r.get(1)?,
            schedule: serde_json::Value::Null,
            task: serde_json::Value::Null,
            delete_after_run: r.get(4)?,
            session_id: r.get(5)?,
            created: r.get(6)?,
            enabled: r.get(7)?,
            next_run: r.get(8)?,
            lease_owner: r.get(9)?,
            lease_until: r.get(10)?,
            last_run: r.get(11)?,
            last_outcome: r.get(12)?,
            runs: from_i64(r.get(13)?),
        },
        schedule: r.get(2)?,
        task: r.get(3)?,
    })
}

fn decode_job(raw: RawJob) -> Result<JobRecord, StoreError> {
    let mut job = raw.record;
    job.schedule = serde_json::from_str(&raw.schedule).map_err(StoreError::Json)?;
    job.task = serde_json::from_str(&raw.task).map_err(StoreError::Json)?;
    Ok(job)
}

fn run_row(r: &Row<'_>) -> rusqlite::Result<RunRecord> {
    Ok(RunRecord {
        id: r.get(0)?,
        job_id: r.get(1)?,
        job_name: r.get(2)?,
        owner: r.get(3)?,
        scheduled: r.get(4)?,
        started: r.get(5)?,
        ended: r.get(6)?,
        outcome: r.get(7)?,
        summary: r.get(8)?,
    })
}

fn get_job(conn: &Connection, id: i64) -> Result<Option<JobRecord>, StoreError> {
    conn.query_row(
        &format!("SELECT {JOB_COLUMNS} FROM schedule_jobs WHERE id = ?1"),
        [id],
        job_row,
    )
    .optional()
    .db()?
    .map(decode_job)
    .transpose()
}

#[async_trait]
impl ScheduleStore for SqliteStore {
    async fn add_job(&self, job: &NewJob) -> Result<JobRecord, StoreError> {
        let schedule = serde_json::to_string(&job.schedule).map_err(StoreError::Json)?;
        let task = serde_json::to_string(&job.task).map_err(StoreError::Json)?;
        let job = job.clone();
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let id: i64 = tx
                .query_row(
                    "INSERT INTO schedule_jobs (name, schedule, task, enabled, delete_after_run,
                        session_id, created, updated, next_run)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8)
                     RETURNING id",
                    params![
                        job.name,
                        schedule,
                        task,
                        job.next_run.is_some(),
                        job.delete_after_run,
                        job.session_id,
                        job.created,
                        job.next_run,
                    ],
                    |r| r.get(0),
                )
                .db()?;
            let stored = get_job(&tx, id)?;
            tx.commit().db()?;
            stored.ok_or_else(|| {
                StoreError::Worker("the job just inserted cannot be read back".into())
            })
        })
        .await
    }

    async fn job(&self, id: i64) -> Result<Option<JobRecord>, StoreError> {
        self.with_conn(move |conn| get_job(conn, id)).await
    }

    async fn jobs(&self) -> Result<Vec<JobRecord>, StoreError> {
        self.with_conn(|conn| {
            let mut st = conn
                .prepare_cached(&format!(
                    "SELECT {JOB_COLUMNS} FROM schedule_jobs ORDER BY id"
                ))
                .db()?;
            let raw = st
                .query_map([], job_row)
                .db()?
                .collect::<Result<Vec<_>, _>>()
                .db()?;
            raw.into_iter().map(decode_job).collect()
        })
        .await
    }

    async fn remove_job(&self, id: i64) -> Result<Option<JobRecord>, StoreError> {
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let job = get_job(&tx, id)?;
            tx.execute("DELETE FROM schedule_jobs WHERE id = ?1", [id])
                .db()?;
            tx.commit().db()?;
            Ok(job)
        })
        .await
    }

    async fn trigger(&self, id: i64, at: i64) -> Result<Trigger, StoreError> {
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let Some(job) = get_job(&tx, id)? else {
                return Ok(Trigger::NotFound);
            };
            if job.lease_owner.is_some() && job.lease_until >= at {
                return Ok(Trigger::Running {
                    lease_until: job.lease_until,
                });
            }
            tx.execute(
                "UPDATE schedule_jobs SET enabled = 1, next_run = ?2, updated = ?2
                 WHERE id = ?1",
                params![id, at],
            )
            .db()?;
            let job = get_job(&tx, id)?;
            tx.commit().db()?;
            Ok(job.map_or(Trigger::NotFound, |job| Trigger::Queued(Box::new(job))))
        })
        .await
    }

    async fn claim_due(&self, claim: &Claim) -> Result<Vec<ClaimedJob>, StoreError> {
        let claim = claim.clone();
        self.with_conn(move |conn| claim_due(conn, &claim)).await
    }

    async fn renew_lease(&self, job_id: i64, owner: &str, until: i64) -> Result<bool, StoreError> {
        let owner = owner.to_owned();
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let changed = tx
                .execute(
                    "UPDATE schedule_jobs SET lease_until = ?3
                     WHERE id = ?1 AND lease_owner = ?2",
                    params![job_id, owner, until],
                )
                .db()?;
            tx.commit().db()?;
            Ok(changed == 1)
        })
        .await
    }

    async fn finish_run(&self, end: &RunEnd) -> Result<bool, StoreError> {
        let end = end.clone();
        self.with_conn(move |conn| finish_run(conn, &end)).await
    }

    async fn runs(&self, job_id: Option<i64>, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        self.with_conn(move |conn| {
            let mut st = conn
                .prepare_cached(&format!(
                    "SELECT {RUN_COLUMNS} FROM schedule_runs
                     WHERE ?1 IS NULL OR job_id = ?1 ORDER BY id DESC LIMIT ?2"
                ))
                .db()?;
            st.query_map(params![job_id, to_i64(limit)], run_row)
                .db()?
                .collect::<Result<_, _>>()
                .db()
        })
        .await
    }

    async fn next_due(&self) -> Result<Option<i64>, StoreError> {
        self.with_conn(|conn| {
            conn.query_row(
                "SELECT MIN(CASE WHEN lease_owner IS NULL THEN next_run
                                 ELSE MAX(next_run, lease_until + 1) END)
                 FROM schedule_jobs
                 WHERE enabled = 1 AND next_run IS NOT NULL",
                [],
                |r| r.get(0),
            )
            .db()
        })
        .await
    }
}

/// Rules 1 to 3 of [`ScheduleStore`], in one write transaction: the lease
/// is taken by one `UPDATE … WHERE lease_until < now` (or no lease), so even
/// without the transaction's lock two claimers could not both take a job.
fn claim_due(conn: &mut Connection, claim: &Claim) -> Result<Vec<ClaimedJob>, StoreError> {
    let tx = write_tx(conn)?;
    let raw = {
        let mut st = tx
            .prepare_cached(&format!(
                "UPDATE schedule_jobs SET lease_owner = ?1, lease_until = ?2 + ?3
                 WHERE id IN (
                    SELECT id FROM schedule_jobs
                    WHERE enabled = 1 AND next_run IS NOT NULL AND next_run <= ?2
                          AND (lease_owner IS NULL OR lease_until < ?2)
                    ORDER BY next_run, id LIMIT ?4)
                   AND (lease_owner IS NULL OR lease_until < ?2)
                 RETURNING {JOB_COLUMNS}"
            ))
            .db()?;
        st.query_map(
            params![
                claim.owner,
                claim.now,
                claim.lease_ms.max(1),
                to_i64(claim.limit)
            ],
            job_row,
        )
        .db()?
        .collect::<Result<Vec<_>, _>>()
        .db()?
    };
    let mut claimed = Vec::with_capacity(raw.len());
    for raw in raw {
        let job = decode_job(raw)?;
        let scheduled = job.next_run.unwrap_or(claim.now);
        tx.execute(
            "UPDATE schedule_runs SET outcome = ?2, ended = ?3,
                summary = 'the lease expired before the run ended: the scheduler running it stopped'
             WHERE job_id = ?1 AND outcome = ?4",
            params![job.id, RUN_ABANDONED, claim.now, RUN_RUNNING],
        )
        .db()?;
        let run_id: i64 = tx
            .query_row(
                "INSERT INTO schedule_runs (job_id, job_name, owner, scheduled, started, outcome)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
                params![
                    job.id,
                    job.name,
                    claim.owner,
                    scheduled,
                    claim.now,
                    RUN_RUNNING
                ],
                |r| r.get(0),
            )
            .db()?;
        claimed.push(ClaimedJob {
            job,
            run_id,
            scheduled,
        });
    }
    tx.commit().db()?;
    claimed.sort_by_key(|c| (c.scheduled, c.job.id));
    Ok(claimed)
}

/// Rule 4 of [`ScheduleStore`].
fn finish_run(conn: &mut Connection, end: &RunEnd) -> Result<bool, StoreError> {
    let tx = write_tx(conn)?;
    tx.execute(
        "UPDATE schedule_runs SET ended = ?3, outcome = ?4, summary = ?5
         WHERE id = ?1 AND owner = ?2",
        params![end.run_id, end.owner, end.ended, end.outcome, end.summary],
    )
    .db()?;
    let held: bool = tx
        .query_row(
            "SELECT COUNT(*) FROM schedule_jobs WHERE id = ?1 AND lease_owner = ?2",
            params![end.job_id, end.owner],
            |r| r.get::<_, i64>(0),
        )
        .db()?
        == 1;
    if held {
        match end.then {
            AfterRun::Delete => {
                tx.execute("DELETE FROM schedule_jobs WHERE id = ?1", [end.job_id])
                    .db()?;
            }
            then => {
                let next = match then {
                    AfterRun::Reschedule(at) => Some(at),
                    _ => None,
                };
                tx.execute(
                    "UPDATE schedule_jobs SET enabled = ?2, next_run = ?3, lease_owner = NULL,
                        lease_until = 0, last_run = ?4, last_outcome = ?5, runs = runs + 1,
                        updated = ?4
                     WHERE id = ?1",
                    params![end.job_id, next.is_some(), next, end.ended, end.outcome],
                )
                .db()?;
            }
        }
    }
    // Each job keeps its newest runs only (rule 5).
    tx.execute(
        "DELETE FROM schedule_runs WHERE job_id = ?1 AND id <= (
            SELECT id FROM schedule_runs WHERE job_id = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)",
        params![end.job_id, RUNS_KEPT],
    )
    .db()?;
    tx.commit().db()?;
    Ok(held)
}
