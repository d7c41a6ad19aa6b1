//! The scheduler: claims due jobs from the store with a lease, runs them
//! through a [`JobRunner`], records each run and computes the next.

use std::future::Future;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use toolgate_store::{AfterRun, Claim, ClaimedJob, RunEnd, ScheduleStore, StoreError};

use crate::schedule::{Schedule, human_ms, next_run, timestamp};
use crate::tool::preview;

/// The shortest sleep between two passes of [`daemon`].
const MIN_SLEEP: Duration = Duration::from_millis(10);

/// The outcome of a run that did what it should.
pub const OUTCOME_OK: &str = "ok";
/// The outcome of a run that failed.
pub const OUTCOME_FAILED: &str = "failed";
/// The outcome recorded for an occurrence missed beyond the grace window.
pub const OUTCOME_MISSED: &str = "missed";

/// What a job does, as stored.
///
/// # Wire format
///
/// JSON with a `kind` tag: `{"kind": "message", "text": "Water the
/// plants"}`, `{"kind": "agent", "agent": "review", "text": "Summarise
/// yesterday's commits"}` (`agent` is `null` for the host's default).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum JobTask {
    /// A message recorded for the user (a reminder).
    Message {
        /// The message.
        text: String,
    },
    /// A task run by an agent.
    Agent {
        /// The agent; `None` for the host's default.
        agent: Option<String>,
        /// The task.
        text: String,
    },
}

impl JobTask {
    /// The message or the task.
    pub fn text(&self) -> &str {
        match self {
            Self::Message { text } | Self::Agent { text, .. } => text,
        }
    }

    /// `message`, or `agent NAME` / `agent (default)`.
    pub fn describe(&self) -> String {
        match self {
            Self::Message { .. } => "message".to_owned(),
            Self::Agent { agent: Some(a), .. } => format!("agent {a}"),
            Self::Agent { agent: None, .. } => "agent (default)".to_owned(),
        }
    }
}

/// A job the scheduler claimed and asks a [`JobRunner`] to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueJob {
    /// The job's id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// What it does.
    pub task: JobTask,
    /// When it runs.
    pub schedule: Schedule,
    /// The time this run was due.
    pub scheduled: Timestamp,
    /// The run's id in the store.
    pub run_id: i64,
    /// The agent session that created the job, if any.
    pub session_id: Option<String>,
}

/// How a run went, as its [`JobRunner`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobOutcome {
    /// Whether the job did what it should.
    pub success: bool,
    /// A short summary of its output (kept up to 2,000 characters).
    pub summary: String,
}

impl JobOutcome {
    /// A run that succeeded.
    pub fn ok(summary: impl Into<String>) -> Self {
        Self {
            success: true,
            summary: summary.into(),
        }
    }

    /// A run that failed.
    pub fn failed(summary: impl Into<String>) -> Self {
        Self {
            success: false,
            summary: summary.into(),
        }
    }
}

/// Runs a due job: the host runs the agent or records the message.
///
/// `run` never panics; a failure is a [`JobOutcome`] with `success:
/// false`. It may take long (an agent run): the scheduler renews the job's
/// lease meanwhile.
#[async_trait]
pub trait JobRunner: Send + Sync {
    /// Runs `job` once.
    async fn run(&self, job: &DueJob) -> JobOutcome;
}

/// Errors of the scheduler.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SchedulerError {
    /// The store failed.
    #[error("the schedule store failed")]
    Store(#[source] StoreError),
}

/// How a scheduler runs.
///
/// The defaults come from [`CronConfig`](crate::CronConfig) via
/// [`CronConfig::scheduler_options`](crate::CronConfig::scheduler_options).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedulerOptions {
    owner: String,
    lease: Duration,
    grace: Duration,
    poll: Duration,
    max_runs_per_pass: usize,
}

impl Default for SchedulerOptions {
    fn default() -> Self {
        Self {
            owner: new_owner_id(),
            lease: Duration::from_secs(300),
            grace: Duration::from_secs(3_600),
            poll: Duration::from_secs(30),
            max_runs_per_pass: 100,
        }
    }
}

impl SchedulerOptions {
    /// Sets the id this scheduler's leases carry; it must differ between
    /// schedulers sharing a store. By default, a new id from the process
    /// id and the time (`sched-PID-MICROS`).
    #[must_use]
    pub fn owner(mut self, owner: impl Into<String>) -> Self {
        self.owner = owner.into();
        self
    }

    /// Sets how long a claim holds before another scheduler may take the
    /// job over; a running job's lease is renewed every third of it. By
    /// default, 5 minutes.
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(10));
        self
    }

    /// Sets how late a run may start (see [`run_due`]). By default, 1 hour.
    #[must_use]
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Sets the longest sleep of [`daemon`] between passes. By default, 30
    /// seconds.
    #[must_use]
    pub fn poll_interval(mut self, poll: Duration) -> Self {
        self.poll = poll.max(Duration::from_millis(10));
        self
    }

    /// Sets how many jobs one pass runs at most. By default, 100.
    #[must_use]
    pub fn max_runs_per_pass(mut self, max: usize) -> Self {
        self.max_runs_per_pass = max.max(1);
        self
    }

    /// The id of this scheduler's leases.
    pub fn owner_id(&self) -> &str {
        &self.owner
    }
}

/// A new scheduler id: `sched-PID-MICROS` (hex).
pub fn new_owner_id() -> String {
    let micros = Timestamp::now().as_microsecond();
    format!("sched-{}-{micros:x}", std::process::id())
}

/// One run of a pass, as [`run_due`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunReport {
    /// The job.
    pub job_id: i64,
    /// Its name.
    pub name: String,
    /// The run's id.
    pub run_id: i64,
    /// `ok`, `failed` or `missed`.
    pub outcome: String,
    /// The summary recorded.
    pub summary: String,
    /// When the job runs next, if it does.
    pub next_run: Option<Timestamp>,
    /// Whether the lease was still held when the run ended (if not, another
    /// scheduler took the job over and the job was left to it).
    pub lease_held: bool,
}

/// Claims and runs every job due at `now`, one at a time, and returns what
/// ran.
///
/// # Rules
///
/// 1. Jobs are claimed one at a time, each with a lease in the store
///    ([`ScheduleStore::claim_due`]), and run before the next is claimed,
///    so no claimed job waits behind another while its lease runs out.
///    Another scheduler on the same store never claims a job this one
///    holds; a long run's lease is renewed every third of the lease.
/// 2. Missed runs: a job is due once however many of its times passed
///    while no scheduler ran. If it is late by at most the grace window
///    (default 1 hour) it runs once now; if later, it does not run: the
///    occurrence is recorded as `missed`. Either way its schedule then
///    resumes at its first time after the run: there is never a burst of
///    catch-up runs.
/// 3. After a run, a job with `deleteAfterRun` is removed only when the
///    run succeeded: a one-shot job that failed (its agent could not start,
///    say) or was missed is kept, disabled, with its last run saying why,
///    so its task is never lost. Otherwise a job with a next time is due
///    then (the first time after the run ended); one without (an `at`
///    job) is kept disabled.
/// 4. A job whose stored schedule or task cannot be read is recorded as
///    `failed` and disabled, rather than claimed again and again.
/// 5. At most `max_runs_per_pass` jobs run in one pass; the rest wait for
///    the next.
pub async fn run_due(
    store: &dyn ScheduleStore,
    runner: &dyn JobRunner,
    now: Timestamp,
    options: &SchedulerOptions,
) -> Result<Vec<RunReport>, SchedulerError> {
    let mut reports = Vec::new();
    let lease_ms = i64::try_from(options.lease.as_millis()).unwrap_or(i64::MAX);
    while reports.len() < options.max_runs_per_pass {
        let claim = Claim {
            owner: options.owner.clone(),
            now: now.as_millisecond(),
            lease_ms,
            limit: 1,
        };
        let Some(claimed) = store
            .claim_due(&claim)
            .await
            .map_err(SchedulerError::Store)?
            .into_iter()
            .next()
        else {
            break;
        };
        reports.push(run_claimed(store, runner, now, options, claimed).await?);
    }
    Ok(reports)
}

async fn run_claimed(
    store: &dyn ScheduleStore,
    runner: &dyn JobRunner,
    now: Timestamp,
    options: &SchedulerOptions,
    claimed: ClaimedJob,
) -> Result<RunReport, SchedulerError> {
    let started = Instant::now();
    let job = &claimed.job;
    let late_ms = u64::try_from(now.as_millisecond() - claimed.scheduled).unwrap_or(0);
    let decoded = serde_json::from_value::<Schedule>(job.schedule.clone())
        .map_err(|e| format!("its stored schedule cannot be read ({e})"))
        .and_then(|schedule| {
            serde_json::from_value::<JobTask>(job.task.clone())
                .map(|task| (schedule, task))
                .map_err(|e| format!("its stored task cannot be read ({e})"))
        });
    // Rules 2 and 4: run it, or record why not.
    let (outcome, summary, schedule) = match decoded {
        Err(message) => (OUTCOME_FAILED, message, None),
        Ok((schedule, _)) if Duration::from_millis(late_ms) > options.grace => {
            let summary = format!(
                "missed by {}: no scheduler was running at its time, and that is beyond the {} grace window, so it did not run",
                human_ms(late_ms),
                human_ms(u64::try_from(options.grace.as_millis()).unwrap_or(u64::MAX)),
            );
            (OUTCOME_MISSED, summary, Some(schedule))
        }
        Ok((schedule, task)) => {
            let due = DueJob {
                id: job.id,
                name: job.name.clone(),
                task,
                schedule: schedule.clone(),
                scheduled: timestamp(claimed.scheduled).unwrap_or(now),
                run_id: claimed.run_id,
                session_id: job.session_id.clone(),
            };
            let result = run_with_lease(store, runner, options, &due).await;
            let outcome = if result.success {
                OUTCOME_OK
            } else {
                OUTCOME_FAILED
            };
            (outcome, result.summary, Some(schedule))
        }
    };
    // Rule 3.
    let ended = ended_at(now, started);
    let then = match &schedule {
        _ if job.delete_after_run && outcome == OUTCOME_OK => AfterRun::Delete,
        None => AfterRun::Finish,
        Some(schedule) => match next_run(schedule, ended) {
            Ok(Some(next)) => AfterRun::Reschedule(next.as_millisecond()),
            Ok(None) => AfterRun::Finish,
            Err(error) => {
                tracing::warn!(job = job.id, "the job has no next run: {error}");
                AfterRun::Finish
            }
        },
    };
    let summary = preview_summary(&summary);
    let end = RunEnd {
        job_id: job.id,
        run_id: claimed.run_id,
        owner: options.owner.clone(),
        ended: ended.as_millisecond(),
        outcome: outcome.to_owned(),
        summary: summary.clone(),
        then,
    };
    let lease_held = store
        .finish_run(&end)
        .await
        .map_err(SchedulerError::Store)?;
    if !lease_held {
        tracing::warn!(
            job = job.id,
            "the job's lease expired during its run and another scheduler took it over"
        );
    }
    Ok(RunReport {
        job_id: job.id,
        name: job.name.clone(),
        run_id: claimed.run_id,
        outcome: outcome.to_owned(),
        summary,
        next_run: match then {
            AfterRun::Reschedule(at) => timestamp(at).ok(),
            _ => None,
        },
        lease_held,
    })
}

/// Runs the job, renewing its lease every third of the lease meanwhile.
async fn run_with_lease(
    store: &dyn ScheduleStore,
    runner: &dyn JobRunner,
    options: &SchedulerOptions,
    job: &DueJob,
) -> JobOutcome {
    let renew_every = options.lease / 3;
    let renew = async {
        let mut held = true;
        loop {
            tokio::time::sleep(renew_every).await;
            if !held {
                continue;
            }
            let until = Timestamp::now().as_millisecond()
                + i64::try_from(options.lease.as_millis()).unwrap_or(i64::MAX / 2);
            match store.renew_lease(job.id, &options.owner, until).await {
                Ok(true) => {}
                Ok(false) => {
                    held = false;
                    tracing::warn!(job = job.id, "lost the lease of a running job");
                }
                Err(error) => tracing::warn!(
                    job = job.id,
                    "cannot renew a running job's lease: {}",
                    toolgate_core::error_chain(&error)
                ),
            }
        }
    };
    tokio::select! {
        outcome = runner.run(job) => outcome,
        () = renew => JobOutcome::failed("internal error: the lease renewal stopped"),
    }
}

/// `now` plus the time the run took: the pass's clock moved on with it.
fn ended_at(now: Timestamp, started: Instant) -> Timestamp {
    let elapsed = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX / 2);
    timestamp(now.as_millisecond().saturating_add(elapsed)).unwrap_or(now)
}

/// The summary kept for a run: at most 2,000 characters.
fn preview_summary(summary: &str) -> String {
    const MAX: usize = 2_000;
    if summary.chars().count() <= MAX {
        return summary.to_owned();
    }
    preview(summary, MAX)
}

/// What [`daemon_with`] reports after each pass.
pub trait DaemonReporter: Send + Sync {
    /// A pass ran these jobs (maybe none).
    fn pass(&self, runs: &[RunReport]) {
        let _ = runs;
    }

    /// A pass failed (the store could not be reached); the daemon goes on.
    fn error(&self, error: &SchedulerError) {
        let _ = error;
    }
}

/// A reporter that logs passes with `tracing`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TracingReporter;

impl DaemonReporter for TracingReporter {
    fn pass(&self, runs: &[RunReport]) {
        for run in runs {
            tracing::info!(
                job = run.job_id,
                name = %run.name,
                outcome = %run.outcome,
                "scheduled job ran"
            );
        }
    }

    fn error(&self, error: &SchedulerError) {
        tracing::warn!(
            "a scheduler pass failed: {}",
            toolgate_core::error_chain(error)
        );
    }
}

/// Runs [`run_due`] until `stop` completes, logging with `tracing`.
///
/// See [`daemon_with`].
pub async fn daemon(
    store: &dyn ScheduleStore,
    runner: &dyn JobRunner,
    options: &SchedulerOptions,
    stop: impl Future<Output = ()>,
) {
    daemon_with(store, runner, options, &TracingReporter, stop).await;
}

/// Runs [`run_due`] until `stop` completes, telling `reporter` about
/// every pass.
///
/// # Rules
///
/// 1. Each pass runs what is due at its start ([`run_due`]); then the
///    daemon sleeps until the next job can be claimed
///    ([`ScheduleStore::next_due`]) or for the poll interval, whichever
///    is sooner, so jobs added by other processes are seen within one
///    poll interval.
/// 2. A pass that fails (the store is locked or gone) is reported and
///    retried after the poll interval; the daemon does not stop for it.
/// 3. `stop` is honoured between passes and while sleeping: a run in
///    progress finishes (and is recorded) first.
pub async fn daemon_with(
    store: &dyn ScheduleStore,
    runner: &dyn JobRunner,
    options: &SchedulerOptions,
    reporter: &dyn DaemonReporter,
    stop: impl Future<Output = ()>,
) {
    let mut stop = std::pin::pin!(stop);
    loop {
        let failed = match run_due(store, runner, Timestamp::now(), options).await {
            Ok(runs) => {
                reporter.pass(&runs);
                false
            }
            Err(error) => {
                reporter.error(&error);
                true
            }
        };
        let wait = if failed {
            options.poll
        } else {
            match store.next_due().await {
                Ok(Some(at)) => {
                    let ms = at.saturating_sub(Timestamp::now().as_millisecond());
                    Duration::from_millis(u64::try_from(ms).unwrap_or(0)).min(options.poll)
                }
                Ok(None) => options.poll,
                Err(error) => {
                    reporter.error(&SchedulerError::Store(error));
                    options.poll
                }
            }
        };
        // A pass in progress is not cut short, but a sleep is (rule 3).
        // The floor keeps a store that says "due now" without letting the
        // job be claimed from spinning the CPU.
        tokio::select! {
            () = &mut stop => return,
            () = tokio::time::sleep(wait.max(MIN_SLEEP)) => {}
        }
    }
}
