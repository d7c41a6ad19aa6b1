//! [`ScheduleStore`] for [`PostgresStore`].

use async_trait::async_trait;
use tokio_postgres::{GenericClient, Row};

use super::{Db as _, PostgresStore, begin, from_i64, from_json, to_i64, to_json};
use toolgate_store::{
    AfterRun, Claim, ClaimedJob, JobRecord, NewJob, RunEnd, RunRecord, ScheduleStore, StoreError,
    Trigger,
};
use toolgate_store::{RUN_ABANDONED, RUN_RUNNING};

/// Runs kept per job (the newest).
const RUNS_KEPT: i64 = 100;

const JOB_COLUMNS: &str = "id, name, schedule, task, delete_after_run, session_id, created,
    enabled, next_run, lease_owner, lease_until, last_run, last_outcome, runs";

const RUN_COLUMNS: &str =
    "id, job_id, job_name, owner, scheduled, started, ended, outcome, summary";

fn job_row(r: &Row) -> Result<JobRecord, StoreError> {
    Ok(JobRecord {
        id: r.get(0),
        name: r.get(1),
        schedule: from_json(r.get(2))?,
        task: from_json(r.get(3))?,
        delete_after_run: r.get(4),
        session_id: r.get(5),
        created: r.get(6),
        enabled: r.get(7),
        next_run: r.get(8),
        lease_owner: r.get(9),
        lease_until: r.get(10),
        last_run: r.get(11),
        last_outcome: r.get(12),
        runs: from_i64(r.get(13)),
    })
}

fn run_row(r: &Row) -> RunRecord {
    RunRecord {
        id: r.get(0),
        job_id: r.get(1),
        job_name: r.get(2),
        owner: r.get(3),
        scheduled: r.get(4),
        started: r.get(5),
        ended: r.get(6),
        outcome: r.get(7),
        summary: r.get(8),
    }
}

async fn get_job(
    client: &impl GenericClient,
    id: i64,
    lock: bool,
) -> Result<Option<JobRecord>, StoreError> {
    let lock = if lock { " FOR UPDATE" } else { "" };
    client
        .query_opt(
            &format!("SELECT {JOB_COLUMNS} FROM schedule_jobs WHERE id = $1{lock}"),
            &[&id],
        )
        .await
        .db()?
        .as_ref()
        .map(job_row)
        .transpose()
}

#[async_trait]
impl ScheduleStore for PostgresStore {
    async fn add_job(&self, job: &NewJob) -> Result<JobRecord, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_one(
                &format!(
                    "INSERT INTO schedule_jobs (name, schedule, task, enabled, delete_after_run,
                        session_id, created, updated, next_run)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8)
                     RETURNING {JOB_COLUMNS}"
                ),
                &[
                    &job.name,
                    &to_json(&job.schedule)?,
                    &to_json(&job.task)?,
                    &job.next_run.is_some(),
                    &job.delete_after_run,
                    &job.session_id,
                    &job.created,
                    &job.next_run,
                ],
            )
            .await
            .db()?;
        job_row(&row)
    }

    async fn job(&self, id: i64) -> Result<Option<JobRecord>, StoreError> {
        let client = self.client().await?;
        get_job(&**client, id, false).await
    }

    async fn jobs(&self) -> Result<Vec<JobRecord>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                &format!("SELECT {JOB_COLUMNS} FROM schedule_jobs ORDER BY id"),
                &[],
            )
            .await
            .db()?;
        rows.iter().map(job_row).collect()
    }

    async fn remove_job(&self, id: i64) -> Result<Option<JobRecord>, StoreError> {
        let client = self.client().await?;
        client
            .query_opt(
                &format!("DELETE FROM schedule_jobs WHERE id = $1 RETURNING {JOB_COLUMNS}"),
                &[&id],
            )
            .await
            .db()?
            .as_ref()
            .map(job_row)
            .transpose()
    }

    async fn trigger(&self, id: i64, at: i64) -> Result<Trigger, StoreError> {
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        let Some(job) = get_job(&tx, id, true).await? else {
            return Ok(Trigger::NotFound);
        };
        if job.lease_owner.is_some() && job.lease_until >= at {
            return Ok(Trigger::Running {
                lease_until: job.lease_until,
            });
        }
        let row = tx
            .query_one(
                &format!(
                    "UPDATE schedule_jobs SET enabled = TRUE, next_run = $2, updated = $2
                     WHERE id = $1 RETURNING {JOB_COLUMNS}"
                ),
                &[&id, &at],
            )
            .await
            .db()?;
        let job = job_row(&row)?;
        tx.commit().await.db()?;
        Ok(Trigger::Queued(Box::new(job)))
    }

    async fn claim_due(&self, claim: &Claim) -> Result<Vec<ClaimedJob>, StoreError> {
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        // The claimable rows are locked as they are chosen; rows another
        // scheduler is claiming right now are skipped, not waited for, and
        // the lease condition is checked again on the locked rows.
        let rows = tx
            .query(
                &format!(
                    "UPDATE schedule_jobs SET lease_owner = $1, lease_until = $2 + $3
                     WHERE id IN (
                        SELECT id FROM schedule_jobs
                        WHERE enabled AND next_run IS NOT NULL AND next_run <= $2
                              AND (lease_owner IS NULL OR lease_until < $2)
                        ORDER BY next_run, id LIMIT $4
                        FOR UPDATE SKIP LOCKED)
                       AND (lease_owner IS NULL OR lease_until < $2)
                     RETURNING {JOB_COLUMNS}"
                ),
                &[
                    &claim.owner,
                    &claim.now,
                    &claim.lease_ms.max(1),
                    &to_i64(claim.limit),
                ],
            )
            .await
            .db()?;
        let mut claimed = Vec::with_capacity(rows.len());
        for row in &rows {
            let job = job_row(row)?;
            let scheduled = job.next_run.unwrap_or(claim.now);
            tx.execute(
                "UPDATE schedule_runs SET outcome = $2, ended = $3,
                    summary = 'the lease expired before the run ended: the scheduler running it stopped'
                 WHERE job_id = $1 AND outcome = $4",
                &[&job.id, &RUN_ABANDONED, &claim.now, &RUN_RUNNING],
            )
            .await
            .db()?;
            let run_id: i64 = tx
                .query_one(
                    "INSERT INTO schedule_runs (job_id, job_name, owner, scheduled, started,
                        outcome)
                     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                    &[
                        &job.id,
                        &job.name,
                        &claim.owner,
                        &scheduled,
                        &claim.now,
                        &RUN_RUNNING,
                    ],
                )
                .await
                .db()?
                .get(0);
            claimed.push(ClaimedJob {
                job,
                run_id,
                scheduled,
            });
        }
        tx.commit().await.db()?;
        claimed.sort_by_key(|c| (c.scheduled, c.job.id));
        Ok(claimed)
    }

    async fn renew_lease(&self, job_id: i64, owner: &str, until: i64) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let changed = client
            .execute(
                "UPDATE schedule_jobs SET lease_until = $3 WHERE id = $1 AND lease_owner = $2",
                &[&job_id, &owner, &until],
            )
            .await
            .db()?;
        Ok(changed == 1)
    }

    async fn finish_run(&self, end: &RunEnd) -> Result<bool, StoreError> {
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        // The job's row first (locked), as a claim locks it.
        let held = tx
            .query_opt(
                "SELECT 1 FROM schedule_jobs WHERE id = $1 AND lease_owner = $2 FOR UPDATE",
                &[&end.job_id, &end.owner],
            )
            .await
            .db()?
            .is_some();
        tx.execute(
            "UPDATE schedule_runs SET ended = $3, outcome = $4, summary = $5
             WHERE id = $1 AND owner = $2",
            &[
                &end.run_id,
                &end.owner,
                &end.ended,
                &end.outcome,
                &end.summary,
            ],
        )
        .await
        .db()?;
        if held {
            match end.then {
                AfterRun::Delete => {
                    tx.execute("DELETE FROM schedule_jobs WHERE id = $1", &[&end.job_id])
                        .await
                        .db()?;
                }
                then => {
                    let next = match then {
                        AfterRun::Reschedule(at) => Some(at),
                        _ => None,
                    };
                    tx.execute(
                        "UPDATE schedule_jobs SET enabled = $2, next_run = $3,
                            lease_owner = NULL, lease_until = 0, last_run = $4,
                            last_outcome = $5, runs = runs + 1, updated = $4
                         WHERE id = $1",
                        &[
                            &end.job_id,
                            &next.is_some(),
                            &next,
                            &end.ended,
                            &end.outcome,
                        ],
                    )
                    .await
                    .db()?;
                }
            }
        }
        tx.execute(
            "DELETE FROM schedule_runs WHERE job_id = $1 AND id <= (
                SELECT id FROM schedule_runs WHERE job_id = $1 ORDER BY id DESC
                LIMIT 1 OFFSET $2)",
            &[&end.job_id, &RUNS_KEPT],
        )
        .await
        .db()?;
        tx.commit().await.db()?;
        Ok(held)
    }

    async fn runs(&self, job_id: Option<i64>, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                &format!(
                    "SELECT {RUN_COLUMNS} FROM schedule_runs
                     WHERE $1::BIGINT IS NULL OR job_id = $1 ORDER BY id DESC LIMIT $2"
                ),
                &[&job_id, &to_i64(limit)],
            )
            .await
            .db()?;
        Ok(rows.iter().map(run_row).collect())
    }

    async fn next_due(&self) -> Result<Option<i64>, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT MIN(CASE WHEN lease_owner IS NULL THEN next_run
                                 ELSE GREATEST(next_run, lease_until + 1) END)
                 FROM schedule_jobs
                 WHERE enabled AND next_run IS NOT NULL",
                &[],
            )
            .await
            .db()?;
        Ok(row.get(0))
    }
}
