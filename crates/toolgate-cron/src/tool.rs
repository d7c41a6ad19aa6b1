//! The `cron` tool: add, list, remove, run and inspect scheduled jobs.

use std::fmt::Write as _;
use std::sync::Arc;

use async_trait::async_trait;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde_json::{Value, json};
use toolgate_core::{
    Effects, EffectsError, Sensitivity, ToolAnnotations, ToolContext, ToolResult, TypedTool,
};
use toolgate_store::{JobRecord, NewJob, RunRecord, ScheduleStore, Trigger};

use crate::args::CronArgs;
use crate::request::{AddRequest, AtSpec, JobRef, Request, ScheduleSpec, TaskKind};
use crate::schedule::{
    AT_PAST_TOLERANCE_MS, Schedule, ScheduleError, check_every, describe, next_run, parse_at,
    parse_cron, show_time, timestamp, zone,
};
use crate::{CronConfig, JobTask};

/// How many characters of a job's text `list` shows.
const PREVIEW_CHARS: usize = 60;

/// How many runs `status` shows.
const STATUS_RUNS: usize = 5;

/// `cron`: scheduled jobs, kept in the store and run by the scheduler
/// (`toolgate schedule daemon` or `run-due`; see [`crate::run_due`]).
///
/// # Rules
///
/// 1. `list` and `status` only read: they are read-only calls. `add`,
///    `remove` and `run` change the stored jobs: they are sensitive.
/// 2. The arguments are recovered as [`CronArgs`] describes (flattened
///    schedules, numbers as strings, action synonyms).
/// 3. `add` checks the schedule before storing it: the cron expression
///    and time zone parse and the expression matches some future time;
///    `every` is at least `min_every_ms`; `at` is not in the past (up to a
///    minute late is taken as "now"). Local `at` times and cron
///    expressions without `tz` use the configured zone.
/// 4. `add` refuses a new job when `max_jobs` are stored, text longer
///    than `max_text_chars`, and an agent outside `allowed_agents` (when
///    that list is not empty).
/// 5. `deleteAfterRun` defaults to true for `at` jobs and false otherwise;
///    an `at` job that is kept is disabled after its run (`list` with
///    `includeDisabled` shows it).
/// 6. `run` makes a job due now; the scheduler runs it at its next pass.
///    A job being run is not queued again.
/// 7. Jobs are named by id, or by name (case-insensitive, exact) when
///    exactly one job has it.
pub struct CronTool {
    config: CronConfig,
    store: Arc<dyn ScheduleStore>,
}

impl std::fmt::Debug for CronTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CronTool")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl CronTool {
    /// A `cron` tool over `store`, configured by `config`.
    pub fn new(config: CronConfig, store: Arc<dyn ScheduleStore>) -> Self {
        Self { config, store }
    }

    /// The zone for local times and for cron expressions without `tz`, and
    /// its name.
    fn default_zone(&self) -> Result<(String, TimeZone), ScheduleError> {
        match &self.config.timezone {
            Some(name) => Ok((name.clone(), zone(name)?)),
            None => Ok(system_zone()),
        }
    }

    async fn add(&self, req: AddRequest, now: Timestamp, ctx: &ToolContext) -> ToolResult {
        let (default_name, default_zone) = match self.default_zone() {
            Ok(found) => found,
            Err(e) => return ToolResult::failure(format!("the cron configuration is wrong: {e}")),
        };
        let (schedule, first) =
            match self.resolve(&req.schedule, now, (&default_name, &default_zone)) {
                Ok(found) => found,
                Err(e) => return ToolResult::failure(e.to_string()),
            };
        let task = match self.task(&req) {
            Ok(task) => task,
            Err(message) => return ToolResult::failure(message),
        };
        let jobs = match self.store.jobs().await {
            Ok(jobs) => jobs,
            Err(e) => return store_failure(&e),
        };
        if jobs.len() >= self.config.max_jobs {
            return ToolResult::failure(format!(
                "there are already {} scheduled jobs (the limit is {}); remove one first (action remove)",
                jobs.len(),
                self.config.max_jobs
            ));
        }
        let delete_after_run = req
            .delete_after_run
            .unwrap_or(matches!(schedule, Schedule::At { .. }));
        let name = req.name.clone().unwrap_or_else(|| preview(&req.text, 40));
        let (Ok(schedule_json), Ok(task_json)) =
            (serde_json::to_value(&schedule), serde_json::to_value(&task))
        else {
            return ToolResult::failure("internal error: the job cannot be encoded");
        };
        let new = NewJob {
            name,
            schedule: schedule_json,
            task: task_json,
            delete_after_run,
            session_id: ctx.session_id.clone(),
            created: now.as_millisecond(),
            next_run: Some(first.as_millisecond()),
        };
        let job = match self.store.add_job(&new).await {
            Ok(job) => job,
            Err(e) => return store_failure(&e),
        };
        let mut out = format!(
            "Added job {} \"{}\" ({}): {}. Next run: {}.",
            job.id,
            job.name,
            task.describe(),
            describe(&schedule, &default_zone),
            show_time(first, &default_zone),
        );
        if delete_after_run {
            out.push_str(" It is removed after its first run.");
        }
        ToolResult::success(out)
            .with_metadata("job_id", job.id)
            .with_metadata("next_run", first.to_string())
    }

    /// The schedule asked for, checked (rule 3), and its first run.
    fn resolve(
        &self,
        spec: &ScheduleSpec,
        now: Timestamp,
        (default_name, default_zone): (&str, &TimeZone),
    ) -> Result<(Schedule, Timestamp), ScheduleError> {
        let schedule = match spec {
            ScheduleSpec::At { at, tz } => {
                let local = match tz {
                    Some(name) => zone(name)?,
                    None => default_zone.clone(),
                };
                let at = match at {
                    AtSpec::Text(text) => parse_at(text, &local)?,
                    AtSpec::Ms(ms) => timestamp(*ms)?,
                };
                let late = now.as_millisecond() - at.as_millisecond();
                if late > AT_PAST_TOLERANCE_MS {
                    return Err(ScheduleError::AtInPast {
                        at: show_time(at, &local),
                        now: show_time(now, &local),
                    });
                }
                // Up to a minute late: due at once.
                let at = at.max(now);
                return Ok((
                    Schedule::At {
                        at_ms: at.as_millisecond(),
                    },
                    at,
                ));
            }
            ScheduleSpec::Every { every_ms } => {
                check_every(*every_ms, self.config.min_every_ms)?;
                Schedule::Every {
                    every_ms: *every_ms,
                    anchor_ms: now.as_millisecond(),
                }
            }
            ScheduleSpec::Cron { expr, tz } => {
                parse_cron(expr)?;
                let tz = match tz {
                    Some(name) => {
                        zone(name)?;
                        name.trim().to_owned()
                    }
                    None => default_name.to_owned(),
                };
                Schedule::Cron {
                    expr: expr.trim().to_owned(),
                    tz,
                }
            }
        };
        match next_run(&schedule, now)? {
            Some(first) => Ok((schedule, first)),
            None => Err(ScheduleError::NeverMatches {
                expr: describe(&schedule, default_zone),
            }),
        }
    }

    /// What the job does (rule 4).
    fn task(&self, req: &AddRequest) -> Result<JobTask, String> {
        let chars = req.text.chars().count();
        if chars > self.config.max_text_chars {
            return Err(format!(
                "`text` is {chars} characters; the limit is {}: shorten it",
                self.config.max_text_chars
            ));
        }
        match req.kind {
            TaskKind::Message => Ok(JobTask::Message {
                text: req.text.clone(),
            }),
            TaskKind::Agent => {
                let agent = req
                    .agent
                    .clone()
                    .or_else(|| self.config.default_agent.clone());
                let allowed = &self.config.allowed_agents;
                if !allowed.is_empty() {
                    let Some(name) = agent.as_deref() else {
                        return Err(format!(
                            "an agent job needs `agent`: one of {}",
                            allowed.join(", ")
                        ));
                    };
                    if !allowed.iter().any(|a| a == name) {
                        return Err(format!(
                            "agent `{name}` may not run scheduled jobs; use one of {}",
                            allowed.join(", ")
                        ));
                    }
                }
                Ok(JobTask::Agent {
                    agent,
                    text: req.text.clone(),
                })
            }
        }
    }

    /// The id of the job `job` names (rule 7).
    async fn find(&self, job: &JobRef) -> Result<i64, ToolResult> {
        let name = match job {
            JobRef::Id(id) => return Ok(*id),
            JobRef::Name(name) => name,
        };
        let jobs = self.store.jobs().await.map_err(|e| store_failure(&e))?;
        let matching: Vec<&JobRecord> = jobs
            .iter()
            .filter(|j| j.name.trim().eq_ignore_ascii_case(name))
            .collect();
        match matching.as_slice() {
            [one] => Ok(one.id),
            [] => Err(ToolResult::failure(format!(
                "no job is named \"{name}\"; call cron with action list to see the jobs and their ids"
            ))),
            many => Err(ToolResult::failure(format!(
                "{} jobs are named \"{name}\" (ids {}); give `jobId`",
                many.len(),
                many.iter()
                    .map(|j| j.id.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    async fn list(&self, include_disabled: bool, zone: &TimeZone) -> ToolResult {
        let jobs = match self.store.jobs().await {
            Ok(jobs) => jobs,
            Err(e) => return store_failure(&e),
        };
        let hidden = jobs.iter().filter(|j| !j.enabled).count();
        let shown: Vec<&JobRecord> = jobs
            .iter()
            .filter(|j| include_disabled || j.enabled)
            .collect();
        let mut out = if shown.is_empty() {
            "No scheduled jobs.".to_owned()
        } else {
            format!("{} scheduled job(s):", shown.len())
        };
        for job in &shown {
            let _ = write!(out, "\n- {}", describe_job(job, zone));
        }
        if !include_disabled && hidden > 0 {
            let _ = write!(
                out,
                "\n({hidden} finished or disabled job(s) hidden; includeDisabled: true shows them)"
            );
        }
        let ids: Vec<i64> = shown.iter().map(|j| j.id).collect();
        ToolResult::success(out).with_metadata("job_ids", json!(ids))
    }

    async fn remove(&self, job: &JobRef) -> ToolResult {
        let id = match self.find(job).await {
            Ok(id) => id,
            Err(result) => return result,
        };
        match self.store.remove_job(id).await {
            Ok(Some(job)) => {
                ToolResult::success(format!("Removed job {} \"{}\".", job.id, job.name))
                    .with_metadata("job_id", job.id)
            }
            Ok(None) => not_found(id),
            Err(e) => store_failure(&e),
        }
    }

    async fn run_now(&self, job: &JobRef, now: Timestamp, zone: &TimeZone) -> ToolResult {
        let id = match self.find(job).await {
            Ok(id) => id,
            Err(result) => return result,
        };
        match self.store.trigger(id, now.as_millisecond()).await {
            Ok(Trigger::Queued(job)) => ToolResult::success(format!(
                "Job {} \"{}\" is due now: the scheduler runs it at its next pass (within {} while `toolgate schedule daemon` runs, or at the next `toolgate schedule run-due`).",
                job.id,
                job.name,
                crate::schedule::human_ms(self.config.poll_interval_secs.saturating_mul(1_000)),
            ))
            .with_metadata("job_id", job.id),
            Ok(Trigger::Running { lease_until }) => ToolResult::failure(format!(
                "job {id} is running now (claimed until {}); it was not queued again",
                show_ms(lease_until, zone)
            )),
            Ok(Trigger::NotFound) => not_found(id),
            Ok(_) => ToolResult::failure("the store did something this tool does not know"),
            Err(e) => store_failure(&e),
        }
    }

    async fn status(&self, job: Option<&JobRef>, zone: &TimeZone) -> ToolResult {
        let mut out = String::new();
        let runs = match job {
            Some(job) => {
                let id = match self.find(job).await {
                    Ok(id) => id,
                    Err(result) => return result,
                };
                let (found, runs) = match (
                    self.store.job(id).await,
                    self.store.runs(Some(id), STATUS_RUNS).await,
                ) {
                    (Ok(found), Ok(runs)) => (found, runs),
                    (Err(e), _) | (_, Err(e)) => return store_failure(&e),
                };
                match found {
                    Some(job) => {
                        let _ = write!(out, "Job {}", describe_job(&job, zone));
                    }
                    // A removed job's history is still there.
                    None if !runs.is_empty() => {
                        let _ = write!(out, "Job {id} was removed.");
                    }
                    None => return not_found(id),
                }
                runs
            }
            None => match (
                self.store.jobs().await,
                self.store.runs(None, STATUS_RUNS).await,
            ) {
                (Ok(jobs), Ok(runs)) => {
                    summary(&mut out, &jobs, zone);
                    runs
                }
                (Err(e), _) | (_, Err(e)) => return store_failure(&e),
            },
        };
        if runs.is_empty() {
            out.push_str("\nNo runs yet.");
        } else {
            out.push_str("\nLatest runs:");
            for run in &runs {
                let _ = write!(out, "\n- {}", describe_run(run, zone));
            }
        }
        ToolResult::success(out)
    }
}

/// The overview `status` gives without a job.
fn summary(out: &mut String, jobs: &[JobRecord], zone: &TimeZone) {
    let enabled = jobs.iter().filter(|j| j.enabled).count();
    let _ = write!(
        out,
        "{} job(s), {enabled} enabled. Jobs run while the scheduler runs (`toolgate schedule daemon`, or `toolgate schedule run-due` for one pass).",
        jobs.len()
    );
    if let Some(next) = jobs
        .iter()
        .filter(|j| j.enabled)
        .filter_map(|j| j.next_run.map(|at| (at, j)))
        .min_by_key(|(at, _)| *at)
    {
        let _ = write!(
            out,
            "\nNext due: job {} \"{}\" at {}.",
            next.1.id,
            next.1.name,
            show_ms(next.0, zone)
        );
    }
}

/// A stored job on one line, times on `zone`'s clock, as `list` shows it:
/// `3 "plants" — message: "Water the plants" — cron `0 9 * * *` in
/// Europe/Madrid — next Mon 2026-05-04 09:00 CEST (+02:00)`.
pub fn describe_job(job: &JobRecord, zone: &TimeZone) -> String {
    let schedule = serde_json::from_value::<Schedule>(job.schedule.clone()).map_or_else(
        |_| "an unreadable schedule".to_owned(),
        |s| describe(&s, zone),
    );
    let task = serde_json::from_value::<JobTask>(job.task.clone()).map_or_else(
        |_| "an unreadable task".to_owned(),
        |t| format!("{}: \"{}\"", t.describe(), preview(t.text(), PREVIEW_CHARS)),
    );
    let mut line = format!("{} \"{}\" — {task} — {schedule}", job.id, job.name);
    match (job.enabled, job.next_run) {
        (true, Some(next)) => {
            let _ = write!(line, " — next {}", show_ms(next, zone));
        }
        _ => line.push_str(" — finished (disabled)"),
    }
    if job.lease_owner.is_some() {
        line.push_str(" — running now");
    }
    if let (Some(at), Some(outcome)) = (job.last_run, &job.last_outcome) {
        let _ = write!(line, " — last run {outcome} at {}", show_ms(at, zone));
    }
    if job.delete_after_run {
        line.push_str(" — removed after its run");
    }
    line
}

/// A run on one line, times on `zone`'s clock, as `status` shows it.
pub fn describe_run(run: &RunRecord, zone: &TimeZone) -> String {
    let mut line = format!(
        "job {} \"{}\": {} (due {}, started {}",
        run.job_id,
        run.job_name,
        run.outcome,
        show_ms(run.scheduled, zone),
        show_ms(run.started, zone)
    );
    if let Some(ended) = run.ended {
        let _ = write!(line, ", ended {}", show_ms(ended, zone));
    }
    line.push(')');
    if !run.summary.is_empty() {
        let _ = write!(line, ": {}", preview(&run.summary, 200));
    }
    line
}

fn show_ms(ms: i64, zone: &TimeZone) -> String {
    timestamp(ms).map_or_else(|_| format!("{ms} ms"), |ts| show_time(ts, zone))
}

/// The first `max` characters of `text` on one line, with `…` when cut.
pub(crate) fn preview(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// The system's time zone and its IANA name (UTC when it has none).
pub(crate) fn system_zone() -> (String, TimeZone) {
    let system = TimeZone::system();
    match system.iana_name() {
        Some(name) => (name.to_owned(), system.clone()),
        None => ("UTC".to_owned(), TimeZone::UTC),
    }
}

fn not_found(id: i64) -> ToolResult {
    ToolResult::failure(format!(
        "no job with id {id}; call cron with action list to see the jobs"
    ))
}

fn store_failure(error: &toolgate_store::StoreError) -> ToolResult {
    ToolResult::failure(format!(
        "the job store failed: {}",
        toolgate_core::error_chain(error)
    ))
}

/// Whether an `action` only reads (rule 1). Unknown actions count as
/// changes: they fail anyway, and never ask less than they should.
fn reads_only(args: &Value) -> bool {
    let Some(action) = args.get("action").and_then(Value::as_str) else {
        return false;
    };
    let probe = CronArgs {
        action: action.to_owned(),
        ..CronArgs::default()
    };
    matches!(
        probe.request(),
        Ok(Request::List { .. } | Request::Status(_))
    )
}

#[async_trait]
impl TypedTool for CronTool {
    type Args = CronArgs;
    const NAME: &'static str = "cron";
    const DESCRIPTION: &'static str = "Schedule reminders and recurring tasks. \
        Call get_datetime first: never guess the date. \
        Actions: add (needs schedule and text), list, remove (jobId), run (jobId: run now), status. \
        Schedules: at (once, ISO 8601 time), every (everyMs, at least a minute), cron (5 fields + tz). \
        Example: {\"action\": \"add\", \"name\": \"plants\", \"schedule\": {\"kind\": \"cron\", \"expr\": \"0 9 * * 1-5\", \"tz\": \"Europe/Madrid\"}, \"text\": \"Water the plants\"}. \
        kind message (default) shows text to the user; kind agent runs text as a task with `agent`.";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;

    fn sensitivity(&self, args: &Value) -> Sensitivity {
        if reads_only(args) {
            Sensitivity::ReadOnly
        } else {
            Sensitivity::Sensitive
        }
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            read_only_hint: Some(false),
            destructive_hint: Some(true),
            idempotent_hint: Some(false),
            open_world_hint: Some(false),
            ..ToolAnnotations::default()
        }
    }

    /// None: the jobs live in toolgate's own store; a job's run is a
    /// separate call of its own when the scheduler runs it.
    fn effects(&self, _args: &CronArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, args: CronArgs, ctx: &ToolContext) -> ToolResult {
        let request = match args.request() {
            Ok(request) => request,
            Err(message) => return ToolResult::failure(message),
        };
        let now = Timestamp::now();
        let display = self
            .default_zone()
            .map_or_else(|_| system_zone().1, |(_, zone)| zone);
        match request {
            Request::Add(req) => self.add(req, now, ctx).await,
            Request::List { include_disabled } => self.list(include_disabled, &display).await,
            Request::Remove(job) => self.remove(&job).await,
            Request::Run(job) => self.run_now(&job, now, &display).await,
            Request::Status(job) => self.status(job.as_ref(), &display).await,
        }
    }
}
