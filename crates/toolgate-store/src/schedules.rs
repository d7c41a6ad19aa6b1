//! Scheduled jobs and their runs, claimed with leases.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::StoreError;

/// The outcome of a run that has been claimed and has not ended.
pub const RUN_RUNNING: &str = "running";

/// The outcome given to a run whose lease expired before it ended: the
/// process running it stopped (or lost the store) and another claimed the
/// job again.
pub const RUN_ABANDONED: &str = "abandoned";

/// Where scheduled jobs (`cron` jobs) are kept, and the record of their
/// runs.
///
/// The store knows when a job is due ([`JobRecord::next_run`]) and who is
/// running it (its lease); what a schedule means and what a job does are
/// the caller's: [`NewJob::schedule`] and [`NewJob::task`] are opaque JSON
/// values, kept and given back unchanged. Times are milliseconds since the
/// Unix epoch, always the caller's clock (so tests can choose it).
///
/// # Rules
///
/// 1. A job is *due* at `now` when it is enabled, has a `next_run` and
///    `next_run <= now`. It can be *claimed* when it is due and has no
///    lease, or its lease has expired (`lease_until < now`).
/// 2. [`claim_due`](Self::claim_due) is atomic: one statement sets the
///    lease (`owner`, `lease_until = now + lease`) on exactly the jobs that
///    can be claimed at that moment, so of any number of schedulers sharing
///    the store, one claims a due job and the others do not see it until
///    the lease expires. Each claim opens a run record ([`RUN_RUNNING`]).
/// 3. A claim whose predecessor's lease expired without an end marks the
///    predecessor's run [`RUN_ABANDONED`]: its process died or stalled.
/// 4. Only the lease's owner changes the job after a run
///    ([`finish_run`](Self::finish_run)): it reschedules, finishes or
///    deletes the job and clears the lease. A scheduler that lost its lease
///    still records how its run ended, and leaves the job to the new owner.
///    [`renew_lease`](Self::renew_lease) keeps a long run's lease.
/// 5. Runs are kept after their job is removed; each job keeps its newest
///    100 runs.
#[async_trait]
pub trait ScheduleStore: Send + Sync {
    /// Stores a new job and returns it with its id.
    async fn add_job(&self, job: &NewJob) -> Result<JobRecord, StoreError>;

    /// One job, or `None` when there is no job with this id.
    async fn job(&self, id: i64) -> Result<Option<JobRecord>, StoreError>;

    /// Every job, enabled or not, by id.
    async fn jobs(&self) -> Result<Vec<JobRecord>, StoreError>;

    /// Removes a job and returns it, or `None` when there was none. A run
    /// in progress ends normally; its end is recorded, and the job stays
    /// removed.
    async fn remove_job(&self, id: i64) -> Result<Option<JobRecord>, StoreError>;

    /// Makes a job due at `at` (enabling it if it was finished), for a run
    /// now rather than at its next time.
    async fn trigger(&self, id: i64, at: i64) -> Result<Trigger, StoreError>;

    /// Claims the jobs due at `claim.now` (rules 1 to 3), oldest due
    /// first, at most `claim.limit` of them.
    async fn claim_due(&self, claim: &Claim) -> Result<Vec<ClaimedJob>, StoreError>;

    /// Extends a lease `owner` holds on a job until `until`. `false` when
    /// the lease is no longer `owner`'s (another scheduler claimed the job
    /// after it expired, or the job was removed).
    async fn renew_lease(&self, job_id: i64, owner: &str, until: i64) -> Result<bool, StoreError>;

    /// Records how a run ended and, if the lease is still the run's
    /// owner's, applies [`RunEnd::then`] to the job and clears the lease.
    /// Returns whether the lease was still held.
    async fn finish_run(&self, end: &RunEnd) -> Result<bool, StoreError>;

    /// The newest runs, newest first: of one job, or of every job.
    async fn runs(&self, job_id: Option<i64>, limit: usize) -> Result<Vec<RunRecord>, StoreError>;

    /// When the next job can be claimed: the earliest time at which an
    /// enabled job is due and not leased (`next_run`, or for a leased job
    /// `max(next_run, lease_until + 1)`), or `None` when no job will ever
    /// be due.
    async fn next_due(&self) -> Result<Option<i64>, StoreError>;
}

/// A job to store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewJob {
    /// A name for people and models.
    pub name: String,
    /// When it runs, as the scheduler describes it (opaque here).
    pub schedule: Value,
    /// What it does, as the scheduler describes it (opaque here).
    pub task: Value,
    /// Whether the job is removed after its first run.
    pub delete_after_run: bool,
    /// The agent session that created it, if any.
    pub session_id: Option<String>,
    /// When it was created.
    pub created: i64,
    /// Its first run; `None` stores it finished (disabled).
    pub next_run: Option<i64>,
}

/// A stored job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    /// Its id: unique, never reused.
    pub id: i64,
    /// See [`NewJob::name`].
    pub name: String,
    /// See [`NewJob::schedule`].
    pub schedule: Value,
    /// See [`NewJob::task`].
    pub task: Value,
    /// See [`NewJob::delete_after_run`].
    pub delete_after_run: bool,
    /// See [`NewJob::session_id`].
    pub session_id: Option<String>,
    /// See [`NewJob::created`].
    pub created: i64,
    /// Whether it will run again: a one-shot job that ran is kept
    /// disabled (unless it is deleted after its run).
    pub enabled: bool,
    /// When it is due next; `None` when disabled.
    pub next_run: Option<i64>,
    /// The scheduler holding its lease, while one does.
    pub lease_owner: Option<String>,
    /// When the lease expires (0: never leased, or released).
    pub lease_until: i64,
    /// When its last run ended.
    pub last_run: Option<i64>,
    /// How its last run ended.
    pub last_outcome: Option<String>,
    /// How many runs ended while the lease was held.
    pub runs: u64,
}

/// What [`ScheduleStore::trigger`] did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Trigger {
    /// The job is due at the time asked for.
    Queued(Box<JobRecord>),
    /// No job has this id.
    NotFound,
    /// The job is being run; its lease holds until this time.
    Running {
        /// The lease's expiry.
        lease_until: i64,
    },
}

/// What [`ScheduleStore::claim_due`] claims.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    /// The claiming scheduler, unique among those sharing the store.
    pub owner: String,
    /// The time of the claim.
    pub now: i64,
    /// How long the lease lasts, in milliseconds.
    pub lease_ms: i64,
    /// At most this many jobs.
    pub limit: usize,
}

/// A job claimed for a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimedJob {
    /// The job, with its lease.
    pub job: JobRecord,
    /// The run record opened for this claim.
    pub run_id: i64,
    /// The time the run was due (the job's `next_run` when claimed).
    pub scheduled: i64,
}

/// How a run ended, for [`ScheduleStore::finish_run`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunEnd {
    /// The job.
    pub job_id: i64,
    /// The run, as [`ClaimedJob::run_id`] gave it.
    pub run_id: i64,
    /// The scheduler that claimed it.
    pub owner: String,
    /// When it ended.
    pub ended: i64,
    /// How it ended (`ok`, `failed`, `missed`, …).
    pub outcome: String,
    /// A short summary of its output.
    pub summary: String,
    /// What happens to the job.
    pub then: AfterRun,
}

/// What happens to a job after a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum AfterRun {
    /// It is due again at this time.
    Reschedule(i64),
    /// It stays, disabled: it will not run again unless triggered.
    Finish,
    /// It is removed.
    Delete,
}

/// One run of a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The run's id.
    pub id: i64,
    /// The job.
    pub job_id: i64,
    /// The job's name when it ran.
    pub job_name: String,
    /// The scheduler that claimed it.
    pub owner: String,
    /// When it was due.
    pub scheduled: i64,
    /// When it was claimed.
    pub started: i64,
    /// When it ended; `None` while [`RUN_RUNNING`].
    pub ended: Option<i64>,
    /// How it ended, or [`RUN_RUNNING`] / [`RUN_ABANDONED`].
    pub outcome: String,
    /// A short summary of its output.
    pub summary: String,
}
