//! The `cron` tool through the gate, and the scheduler over a real
//! `SQLite` store.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use toolgate_core::{Registry, SchemaFormat, Sensitivity, ToolCall, check_tool_name};
use toolgate_cron::{
    self as cron, CronConfig, DueJob, JobOutcome, JobRunner, JobTask, OUTCOME_FAILED,
    OUTCOME_MISSED, OUTCOME_OK, Schedule, SchedulerOptions,
};
use toolgate_engine::{Decision, ExecutionEngine};
use toolgate_policy::{ConfirmationMode, ConfirmationPolicy};
use toolgate_store::{
    Claim, ClaimedJob, JobRecord, NewJob, RunEnd, RunRecord, ScheduleStore, SqliteStore,
    StoreError, Trigger,
};

struct Fixture {
    _dir: tempfile::TempDir,
    store: Arc<SqliteStore>,
    engine: ExecutionEngine,
}

fn fixture_with(config: CronConfig, mode: ConfirmationMode) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(dir.path().join("toolgate.db")).unwrap());
    let registry = Registry::new();
    for tool in cron::tools(&config, Arc::clone(&store) as Arc<dyn ScheduleStore>) {
        registry.register_arc(tool).unwrap();
    }
    let engine = ExecutionEngine::builder(Arc::new(registry))
        .policy(ConfirmationPolicy::new(mode))
        .session_id("s-test")
        .build();
    Fixture {
        _dir: dir,
        store,
        engine,
    }
}

fn config() -> CronConfig {
    CronConfig {
        timezone: Some("Europe/Madrid".to_owned()),
        ..CronConfig::default()
    }
}

fn fixture() -> Fixture {
    fixture_with(config(), ConfirmationMode::Yolo)
}

impl Fixture {
    async fn call(&self, args: Value) -> (Decision, toolgate_core::ToolResult) {
        let run = self
            .engine
            .execute(ToolCall::new("c", "cron", args.clone()))
            .await;
        (run.decision, run.result)
    }

    async fn ok(&self, args: Value) -> toolgate_core::ToolResult {
        let (decision, result) = self.call(args.clone()).await;
        assert!(result.success, "{args}: {decision:?} {result:?}");
        result
    }

    async fn error(&self, args: Value) -> String {
        let (_, result) = self.call(args.clone()).await;
        assert!(!result.success, "{args} should fail: {result:?}");
        result.error.unwrap()
    }
}

fn in_an_hour() -> String {
    (Timestamp::now() + SignedDuration::from_hours(1)).to_string()
}

#[test]
fn the_tool_is_well_formed() {
    let f = fixture();
    let entry = f.engine.registry().get("cron").unwrap();
    let spec = entry.spec();
    assert!(check_tool_name(&spec.name).is_ok());
    assert!(jsonschema::meta::is_valid(&spec.parameters));
    assert_eq!(spec.parameters["type"], "object");
    assert_eq!(spec.parameters["additionalProperties"], false);
    assert_eq!(spec.parameters["required"], json!(["action"]));
    // The flattened fields are declared, so validation lets them through.
    for field in [
        "kind",
        "expr",
        "at",
        "everyMs",
        "tz",
        "jobId",
        "deleteAfterRun",
    ] {
        assert!(
            spec.parameters["properties"].get(field).is_some(),
            "{field}"
        );
    }
    let mcp = spec.export(SchemaFormat::Mcp);
    assert_eq!(mcp["annotations"]["readOnlyHint"], false);
    assert!(spec.description.contains("get_datetime"));
    assert!(cron::INSTRUCTIONS.contains("get_datetime"));
    // Effects: none outside toolgate's store, for every action.
    for args in [
        json!({"action": "list"}),
        json!({"action": "add", "cron": "0 9 * * *", "text": "x"}),
    ] {
        let effects = entry.tool().effects(&args).unwrap();
        assert!(effects.list().is_empty() && !effects.is_opaque());
    }
}

#[tokio::test]
async fn reading_actions_are_read_only_and_changes_ask_first() {
    let f = fixture_with(config(), ConfirmationMode::ConfirmSensitive);
    let entry = f.engine.registry().get("cron").unwrap();
    let cases: &[(Value, Sensitivity)] = &[
        (json!({"action": "list"}), Sensitivity::ReadOnly),
        (json!({"action": "ls"}), Sensitivity::ReadOnly),
        (json!({"action": "status"}), Sensitivity::ReadOnly),
        (
            json!({"action": "status", "jobId": 1}),
            Sensitivity::ReadOnly,
        ),
        (
            json!({"action": "add", "cron": "0 9 * * *", "text": "x"}),
            Sensitivity::Sensitive,
        ),
        (
            json!({"action": "remove", "jobId": 1}),
            Sensitivity::Sensitive,
        ),
        (json!({"action": "run", "jobId": 1}), Sensitivity::Sensitive),
        (json!({"action": "whatever"}), Sensitivity::Sensitive),
    ];
    for (args, expected) in cases {
        assert_eq!(entry.tool().sensitivity(args), *expected, "{args}");
    }
    // Headless: a list runs, an add needs someone to approve it.
    let (decision, result) = f.call(json!({"action": "list"})).await;
    assert_eq!(decision, Decision::Executed);
    assert_eq!(result.output, "No scheduled jobs.");
    let (decision, _) = f
        .call(json!({"action": "add", "cron": "0 9 * * *", "text": "x"}))
        .await;
    assert_eq!(decision, Decision::NoApprover);
    assert!(f.store.jobs().await.unwrap().is_empty());
}

#[tokio::test]
async fn flattened_calls_pass_the_gate_and_are_stored_as_asked() {
    let f = fixture();
    let at = in_an_hour();
    let calls = [
        json!({"action": "add", "name": "plants", "schedule": {"kind": "cron", "expr": "0 9 * * 1-5", "tz": "America/New_York"}, "text": "Water the plants"}),
        json!({"action": "create", "kind": "cron", "expr": "30 7 * * *", "text": "Stretch"}),
        json!({"action": "add", "kind": "every", "everyMs": "3600000", "text": "Drink water", "deleteAfterRun": "false"}),
        json!({"action": "add", "schedule": {"kind": "at"}, "at": at, "kind": "message", "text": "Call mom"}),
        json!({"action": "add", "schedule": "every 2h", "agent": "review", "text": "Review open PRs"}),
    ];
    for args in &calls {
        f.ok(args.clone()).await;
    }
    let jobs = f.store.jobs().await.unwrap();
    let schedules: Vec<Schedule> = jobs
        .iter()
        .map(|j| serde_json::from_value(j.schedule.clone()).unwrap())
        .collect();
    assert_eq!(
        schedules[0],
        serde_json::from_value(
            json!({"kind": "cron", "expr": "0 9 * * 1-5", "tz": "America/New_York"})
        )
        .unwrap()
    );
    // No tz: the configured zone.
    assert_eq!(jobs[1].schedule["tz"], "Europe/Madrid");
    assert_eq!(jobs[2].schedule["every_ms"], 3_600_000);
    assert_eq!(jobs[3].schedule["kind"], "at");
    assert_eq!(jobs[4].schedule["every_ms"], 7_200_000);
    let tasks: Vec<JobTask> = jobs
        .iter()
        .map(|j| serde_json::from_value(j.task.clone()).unwrap())
        .collect();
    assert_eq!(
        tasks[4],
        serde_json::from_value(
            json!({"kind": "agent", "agent": "review", "text": "Review open PRs"})
        )
        .unwrap()
    );
    assert_eq!(tasks[3].describe(), "message");
    // deleteAfterRun: true by default for `at` only.
    let deletes: Vec<bool> = jobs.iter().map(|j| j.delete_after_run).collect();
    assert_eq!(deletes, [false, false, false, true, false]);
    // The creating session is kept for the host.
    assert!(
        jobs.iter()
            .all(|j| j.session_id.as_deref() == Some("s-test"))
    );
    // The `at` job is due at the asked instant.
    assert_eq!(
        jobs[3].next_run,
        Some(at.parse::<Timestamp>().unwrap().as_millisecond())
    );

    let list = f.ok(json!({"action": "list"})).await;
    assert!(
        list.output.starts_with("5 scheduled job(s):"),
        "{}",
        list.output
    );
    assert!(
        list.output
            .contains("1 \"plants\" — message: \"Water the plants\" — cron `0 9 * * 1-5` in America/New_York — next "),
        "{}",
        list.output
    );
    assert!(
        list.output
            .contains("agent review: \"Review open PRs\" — every 2h")
    );
}

#[tokio::test]
async fn bad_schedules_and_jobs_are_refused_with_what_to_do() {
    let f = fixture_with(
        CronConfig {
            timezone: Some("America/New_York".to_owned()),
            max_text_chars: 20,
            allowed_agents: vec!["review".to_owned()],
            ..CronConfig::default()
        },
        ConfirmationMode::Yolo,
    );
    let two_hours_ago = (Timestamp::now() - SignedDuration::from_hours(2)).to_string();
    let cases: &[(Value, &str)] = &[
        (
            json!({"action": "add", "at": two_hours_ago, "text": "x"}),
            "is in the past (it is now",
        ),
        (
            json!({"action": "add", "at": "2020-01-01T09:00", "text": "x"}),
            "call get_datetime and give a future time",
        ),
        (
            json!({"action": "add", "at": "2026-05-01", "text": "x"}),
            "has no time of day",
        ),
        (
            json!({"action": "add", "cron": "0 9 * *", "text": "x"}),
            "has 4 fields; use 5",
        ),
        (
            json!({"action": "add", "cron": "0 25 * * *", "text": "x"}),
            "invalid cron expression `0 25 * * *`",
        ),
        (
            json!({"action": "add", "cron": "0 0 30 2 *", "text": "x"}),
            "never matches",
        ),
        (
            json!({"action": "add", "cron": "0 9 * * *", "tz": "Mars/Olympus", "text": "x"}),
            "unknown time zone `Mars/Olympus`",
        ),
        (
            json!({"action": "add", "everyMs": 1000, "text": "x"}),
            "`everyMs` 1000 is too short: the minimum is 60000 ms (1m)",
        ),
        (
            json!({"action": "add", "everyMs": 60000, "text": "this text is far too long"}),
            "the limit is 20",
        ),
        (
            json!({"action": "add", "everyMs": 60000, "agent": "build", "text": "x"}),
            "agent `build` may not run scheduled jobs; use one of review",
        ),
        (
            json!({"action": "add", "everyMs": 60000, "kind": "agent", "text": "x"}),
            "an agent job needs `agent`",
        ),
        (
            json!({"action": "remove", "jobId": 99}),
            "no job with id 99",
        ),
        (json!({"action": "run", "jobId": 99}), "no job with id 99"),
        (
            json!({"action": "status", "jobId": 99}),
            "no job with id 99",
        ),
        (
            json!({"action": "remove", "name": "nothing"}),
            "no job is named \"nothing\"",
        ),
        (json!({"action": "explode"}), "unknown action `explode`"),
    ];
    for (args, expected) in cases {
        let error = f.error(args.clone()).await;
        assert!(error.contains(expected), "{args}: {error}");
    }
    // Validation by the gate (before the tool): an unknown field.
    let (decision, result) = f
        .call(json!({"action": "add", "frequency": "daily", "text": "x"}))
        .await;
    assert_eq!(decision, Decision::InvalidArguments);
    assert!(result.error.unwrap().contains("frequency"));
    assert!(
        f.store.jobs().await.unwrap().is_empty(),
        "nothing was stored"
    );
}

#[tokio::test]
async fn at_a_moment_ago_is_due_now_and_the_job_limit_holds() {
    let f = fixture_with(
        CronConfig {
            max_jobs: 2,
            ..config()
        },
        ConfirmationMode::Yolo,
    );
    let before = Timestamp::now();
    let just_now = (before - SignedDuration::from_secs(20)).to_string();
    let added = f
        .ok(json!({"action": "add", "at": just_now, "text": "now"}))
        .await;
    let job = f.store.jobs().await.unwrap().remove(0);
    assert!(
        job.next_run.unwrap() >= before.as_millisecond(),
        "{added:?}"
    );
    f.ok(json!({"action": "add", "everyMs": 60000, "text": "b"}))
        .await;
    let error = f
        .error(json!({"action": "add", "everyMs": 60000, "text": "c"}))
        .await;
    assert!(
        error.contains("there are already 2 scheduled jobs (the limit is 2)"),
        "{error}"
    );
}

#[tokio::test]
async fn remove_run_and_status_by_id_and_by_name() {
    let f = fixture();
    for name in ["Plants", "plants", "Mail"] {
        f.ok(json!({"action": "add", "name": name, "cron": "0 9 * * *", "text": "x"}))
            .await;
    }
    let error = f.error(json!({"action": "remove", "name": "PLANTS"})).await;
    assert!(
        error.contains("2 jobs are named \"PLANTS\" (ids 1, 2); give `jobId`"),
        "{error}"
    );
    let removed = f.ok(json!({"action": "remove", "jobId": "job-2"})).await;
    assert_eq!(removed.output, "Removed job 2 \"plants\".");
    // Now the name is unique.
    let run = f.ok(json!({"action": "run", "name": "PLANTS"})).await;
    assert!(
        run.output.starts_with("Job 1 \"Plants\" is due now"),
        "{}",
        run.output
    );
    let job = f.store.job(1).await.unwrap().unwrap();
    assert!(job.next_run.unwrap() <= Timestamp::now().as_millisecond());

    let status = f.ok(json!({"action": "status"})).await;
    assert!(
        status.output.starts_with("2 job(s), 2 enabled."),
        "{}",
        status.output
    );
    assert!(status.output.contains("Next due: job 1 \"Plants\""));
    assert!(status.output.ends_with("No runs yet."));

    // After a run, status shows it; a job being run is not queued again.
    let claimed = f
        .store
        .claim_due(&Claim {
            owner: "other".into(),
            now: Timestamp::now().as_millisecond(),
            lease_ms: 60_000,
            limit: 1,
        })
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    let busy = f.error(json!({"action": "run", "jobId": 1})).await;
    assert!(busy.contains("job 1 is running now"), "{busy}");
    let one = f.ok(json!({"action": "status", "jobId": 1})).await;
    assert!(one.output.starts_with("Job 1 \"Plants\""), "{}", one.output);
    assert!(one.output.contains("running now"));
    assert!(
        one.output
            .contains("Latest runs:\n- job 1 \"Plants\": running")
    );
}

// ----------------------------------------------------------------- scheduler

/// A runner that records what it ran and answers with a fixed outcome.
#[derive(Default)]
struct Recorder {
    ran: Mutex<Vec<DueJob>>,
    fail: bool,
}

#[async_trait]
impl JobRunner for Recorder {
    async fn run(&self, job: &DueJob) -> JobOutcome {
        self.ran.lock().unwrap().push(job.clone());
        if self.fail {
            JobOutcome::failed("the agent could not finish")
        } else {
            JobOutcome::ok(format!("did: {}", job.task.text()))
        }
    }
}

impl Recorder {
    fn ran(&self) -> Vec<i64> {
        self.ran.lock().unwrap().iter().map(|j| j.id).collect()
    }
}

fn ts(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn store() -> (tempfile::TempDir, Arc<SqliteStore>) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(dir.path().join("toolgate.db")).unwrap());
    (dir, store)
}

async fn add(
    store: &SqliteStore,
    schedule: &Value,
    next_run: &str,
    delete_after_run: bool,
) -> JobRecord {
    store
        .add_job(&NewJob {
            name: format!("job at {next_run}"),
            schedule: schedule.clone(),
            task: json!({"kind": "message", "text": "hello"}),
            delete_after_run,
            session_id: None,
            created: 0,
            next_run: Some(ts(next_run).as_millisecond()),
        })
        .await
        .unwrap()
}

fn every_5m() -> Value {
    json!({"kind": "every", "every_ms": 300_000, "anchor_ms": ts("2026-01-05T00:00:00Z").as_millisecond()})
}

/// A one-shot job whose run failed (its agent could not start) is kept,
/// disabled, with the failure recorded: its task is not lost. One that
/// succeeds is removed.
#[tokio::test]
async fn a_failed_one_shot_job_is_kept_and_marked_failed() {
    let (_dir, store) = store();
    let at = json!({"kind": "at", "at_ms": ts("2026-01-05T08:00:00Z").as_millisecond()});
    let job = add(&store, &at, "2026-01-05T08:00:00Z", true).await;
    let runner = Recorder {
        fail: true,
        ..Recorder::default()
    };
    let options = SchedulerOptions::default().owner("A");
    let now = ts("2026-01-05T08:00:10Z");
    let runs = cron::run_due(store.as_ref(), &runner, now, &options)
        .await
        .unwrap();
    assert_eq!(runs[0].outcome, OUTCOME_FAILED);
    let kept = store.job(job.id).await.unwrap().expect("the job is kept");
    assert_eq!(kept.task, json!({"kind": "message", "text": "hello"}));
    assert!(!kept.enabled, "{kept:?}");
    let history = store.runs(Some(job.id), 10).await.unwrap();
    assert_eq!(history[0].outcome, OUTCOME_FAILED);
    assert!(
        history[0].summary.contains("could not finish"),
        "{history:?}"
    );

    // The same job run by hand, successfully: now it is removed.
    let ok = add(&store, &at, "2026-01-05T08:00:00Z", true).await;
    cron::run_due(store.as_ref(), &Recorder::default(), now, &options)
        .await
        .unwrap();
    assert!(store.job(ok.id).await.unwrap().is_none());
}

#[tokio::test]
async fn a_due_job_runs_once_and_its_schedule_goes_on() {
    let (_dir, store) = store();
    let job = add(&store, &every_5m(), "2026-01-05T08:00:00Z", false).await;
    let runner = Recorder::default();
    let options = SchedulerOptions::default().owner("A");

    // Not due yet: nothing runs.
    let runs = cron::run_due(
        store.as_ref(),
        &runner,
        ts("2026-01-05T07:59:59Z"),
        &options,
    )
    .await
    .unwrap();
    assert!(runs.is_empty() && runner.ran().is_empty());

    let now = ts("2026-01-05T08:00:10Z");
    let runs = cron::run_due(store.as_ref(), &runner, now, &options)
        .await
        .unwrap();
    assert_eq!(runner.ran(), [job.id]);
    assert_eq!(runs[0].outcome, OUTCOME_OK);
    assert_eq!(runs[0].summary, "did: hello");
    assert_eq!(runs[0].next_run, Some(ts("2026-01-05T08:05:00Z")));
    assert!(runs[0].lease_held);
    let scheduled = runner.ran.lock().unwrap()[0].scheduled;
    assert_eq!(scheduled, ts("2026-01-05T08:00:00Z"));

    // The same pass time again: the job is not due any more.
    cron::run_due(store.as_ref(), &runner, now, &options)
        .await
        .unwrap();
    assert_eq!(runner.ran().len(), 1);

    let stored = store.job(job.id).await.unwrap().unwrap();
    assert_eq!(
        stored.next_run,
        Some(ts("2026-01-05T08:05:00Z").as_millisecond())
    );
    assert_eq!((stored.lease_owner, stored.runs), (None, 1));
    let record: Vec<RunRecord> = store.runs(Some(job.id), 10).await.unwrap();
    assert_eq!(record[0].outcome, OUTCOME_OK);
    assert_eq!(record[0].started, now.as_millisecond());
    assert!(record[0].ended.unwrap() >= now.as_millisecond());
}

#[tokio::test]
async fn missed_runs_run_once_within_the_grace_window_and_never_in_a_burst() {
    let (_dir, store) = store();
    let options = SchedulerOptions::default()
        .owner("A")
        .grace(Duration::from_secs(3_600));
    let runner = Recorder::default();

    // Down for 50 minutes: ten occurrences missed, one run now, then the
    // next five-minute mark.
    let recent = add(&store, &every_5m(), "2026-01-05T08:00:00Z", false).await;
    let runs = cron::run_due(
        store.as_ref(),
        &runner,
        ts("2026-01-05T08:50:30Z"),
        &options,
    )
    .await
    .unwrap();
    assert_eq!(runner.ran(), [recent.id]);
    assert_eq!(runs[0].next_run, Some(ts("2026-01-05T08:55:00Z")));
    store.remove_job(recent.id).await.unwrap();

    // Down for three hours: beyond the grace window, the run is recorded
    // as missed and does not happen; the schedule resumes.
    let old = add(&store, &every_5m(), "2026-01-05T08:00:00Z", false).await;
    let runs = cron::run_due(
        store.as_ref(),
        &runner,
        ts("2026-01-05T11:02:00Z"),
        &options,
    )
    .await
    .unwrap();
    assert_eq!(runner.ran(), [recent.id], "the missed job did not run");
    assert_eq!(runs[0].outcome, OUTCOME_MISSED);
    assert!(
        runs[0]
            .summary
            .starts_with("missed by 3h 2m: no scheduler was running at its time, and that is beyond the 1h grace window"),
        "{}",
        runs[0].summary
    );
    assert_eq!(runs[0].next_run, Some(ts("2026-01-05T11:05:00Z")));
    let record = store.runs(Some(old.id), 10).await.unwrap();
    assert_eq!(record[0].outcome, OUTCOME_MISSED);

    // A one-shot job missed beyond the window: recorded, then finished.
    let at = json!({"kind": "at", "at_ms": ts("2026-01-05T06:00:00Z").as_millisecond()});
    let once = add(&store, &at, "2026-01-05T06:00:00Z", false).await;
    cron::run_due(
        store.as_ref(),
        &runner,
        ts("2026-01-05T11:03:00Z"),
        &options,
    )
    .await
    .unwrap();
    let once = store.job(once.id).await.unwrap().unwrap();
    assert_eq!((once.enabled, once.next_run), (false, None));
    assert_eq!(once.last_outcome.as_deref(), Some(OUTCOME_MISSED));
}

#[tokio::test]
async fn failed_one_shot_jobs_are_kept_finished_and_failures_are_recorded() {
    let (_dir, store) = store();
    let at = json!({"kind": "at", "at_ms": ts("2026-01-05T08:00:00Z").as_millisecond()});
    let deleted = add(&store, &at, "2026-01-05T08:00:00Z", true).await;
    let kept = add(&store, &at, "2026-01-05T08:00:00Z", false).await;
    let recurring = add(&store, &every_5m(), "2026-01-05T08:00:00Z", false).await;
    let runner = Recorder {
        fail: true,
        ..Recorder::default()
    };
    let options = SchedulerOptions::default().owner("A");
    let runs = cron::run_due(
        store.as_ref(),
        &runner,
        ts("2026-01-05T08:00:01Z"),
        &options,
    )
    .await
    .unwrap();
    assert_eq!(runner.ran(), [deleted.id, kept.id, recurring.id]);
    assert!(runs.iter().all(|r| r.outcome == OUTCOME_FAILED));
    // deleteAfterRun removes a job after a successful run only: a failed
    // one is kept, disabled, so its task is not lost.
    let failed = store.job(deleted.id).await.unwrap().unwrap();
    assert_eq!((failed.enabled, failed.next_run), (false, None));
    assert_eq!(failed.last_outcome.as_deref(), Some(OUTCOME_FAILED));
    let kept = store.job(kept.id).await.unwrap().unwrap();
    assert_eq!((kept.enabled, kept.next_run), (false, None));
    // A failure does not stop a recurring job.
    let recurring = store.job(recurring.id).await.unwrap().unwrap();
    assert_eq!(
        recurring.next_run,
        Some(ts("2026-01-05T08:05:00Z").as_millisecond())
    );
    let record = store.runs(Some(deleted.id), 1).await.unwrap();
    assert_eq!(
        (record[0].outcome.as_str(), record[0].summary.as_str()),
        (OUTCOME_FAILED, "the agent could not finish")
    );
}

#[tokio::test]
async fn an_unreadable_job_is_recorded_failed_and_disabled() {
    let (_dir, store) = store();
    let broken = add(
        &store,
        &json!({"kind": "fortnightly"}),
        "2026-01-05T08:00:00Z",
        false,
    )
    .await;
    let runner = Recorder::default();
    let options = SchedulerOptions::default().owner("A");
    let runs = cron::run_due(
        store.as_ref(),
        &runner,
        ts("2026-01-05T08:00:01Z"),
        &options,
    )
    .await
    .unwrap();
    assert!(runner.ran().is_empty());
    assert_eq!(runs[0].outcome, OUTCOME_FAILED);
    assert!(
        runs[0]
            .summary
            .contains("its stored schedule cannot be read")
    );
    assert!(!store.job(broken.id).await.unwrap().unwrap().enabled);
}

#[tokio::test]
async fn cron_jobs_are_rescheduled_on_the_wall_clock_across_a_dst_change() {
    let (_dir, store) = store();
    let schedule = json!({"kind": "cron", "expr": "30 2 * * *", "tz": "America/New_York"});
    // Due 2026-03-07 02:30 EST; the next day 02:30 is skipped by the clocks.
    let job = add(&store, &schedule, "2026-03-07T07:30:00Z", false).await;
    let runner = Recorder::default();
    let options = SchedulerOptions::default().owner("A");
    let runs = cron::run_due(
        store.as_ref(),
        &runner,
        ts("2026-03-07T07:30:00Z"),
        &options,
    )
    .await
    .unwrap();
    // 03:00 EDT, the first instant after the jump.
    assert_eq!(runs[0].next_run, Some(ts("2026-03-08T07:00:00Z")));
    let runs = cron::run_due(
        store.as_ref(),
        &runner,
        ts("2026-03-08T07:00:00Z"),
        &options,
    )
    .await
    .unwrap();
    assert_eq!(runs[0].next_run, Some(ts("2026-03-09T06:30:00Z")));
    assert_eq!(runner.ran(), [job.id, job.id]);
}

/// A store that reports every lease renewal, over a real one.
struct Renewals {
    inner: Arc<SqliteStore>,
    renewed: mpsc::UnboundedSender<bool>,
}

#[async_trait]
impl ScheduleStore for Renewals {
    async fn add_job(&self, job: &NewJob) -> Result<JobRecord, StoreError> {
        self.inner.add_job(job).await
    }
    async fn job(&self, id: i64) -> Result<Option<JobRecord>, StoreError> {
        self.inner.job(id).await
    }
    async fn jobs(&self) -> Result<Vec<JobRecord>, StoreError> {
        self.inner.jobs().await
    }
    async fn remove_job(&self, id: i64) -> Result<Option<JobRecord>, StoreError> {
        self.inner.remove_job(id).await
    }
    async fn trigger(&self, id: i64, at: i64) -> Result<Trigger, StoreError> {
        self.inner.trigger(id, at).await
    }
    async fn claim_due(&self, claim: &Claim) -> Result<Vec<ClaimedJob>, StoreError> {
        self.inner.claim_due(claim).await
    }
    async fn renew_lease(&self, job_id: i64, owner: &str, until: i64) -> Result<bool, StoreError> {
        let held = self.inner.renew_lease(job_id, owner, until).await?;
        let _ = self.renewed.send(held);
        Ok(held)
    }
    async fn finish_run(&self, end: &RunEnd) -> Result<bool, StoreError> {
        self.inner.finish_run(end).await
    }
    async fn runs(&self, job_id: Option<i64>, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        self.inner.runs(job_id, limit).await
    }
    async fn next_due(&self) -> Result<Option<i64>, StoreError> {
        self.inner.next_due().await
    }
}

/// A runner that holds its run until the lease was renewed twice, and
/// meanwhile checks that another scheduler cannot take the job.
struct Slow {
    store: Arc<SqliteStore>,
    renewed: tokio::sync::Mutex<mpsc::UnboundedReceiver<bool>>,
    first_lease_until: i64,
    stolen: Mutex<Option<usize>>,
}

#[async_trait]
impl JobRunner for Slow {
    async fn run(&self, _job: &DueJob) -> JobOutcome {
        let mut renewed = self.renewed.lock().await;
        for _ in 0..2 {
            assert_eq!(renewed.recv().await, Some(true));
        }
        // Past the first lease: without the renewals, B could claim it.
        let claimed = self
            .store
            .claim_due(&Claim {
                owner: "B".into(),
                now: self.first_lease_until + 1,
                lease_ms: 1_000,
                limit: 10,
            })
            .await
            .unwrap();
        *self.stolen.lock().unwrap() = Some(claimed.len());
        JobOutcome::ok("slow but done")
    }
}

#[tokio::test]
async fn a_run_longer_than_its_lease_keeps_it() {
    let (_dir, store) = store();
    let now = Timestamp::now();
    let schedule =
        json!({"kind": "every", "every_ms": 3_600_000, "anchor_ms": now.as_millisecond()});
    store
        .add_job(&NewJob {
            name: "slow".into(),
            schedule,
            task: json!({"kind": "agent", "agent": null, "text": "think"}),
            delete_after_run: false,
            session_id: None,
            created: now.as_millisecond(),
            next_run: Some(now.as_millisecond()),
        })
        .await
        .unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    let lease = Duration::from_millis(60);
    let runner = Slow {
        store: Arc::clone(&store),
        renewed: tokio::sync::Mutex::new(rx),
        first_lease_until: now.as_millisecond() + 60,
        stolen: Mutex::new(None),
    };
    let watched = Renewals {
        inner: Arc::clone(&store),
        renewed: tx,
    };
    let options = SchedulerOptions::default().owner("A").lease(lease);
    let runs = cron::run_due(&watched, &runner, now, &options)
        .await
        .unwrap();
    assert_eq!(*runner.stolen.lock().unwrap(), Some(0), "B took the job");
    assert_eq!(runs[0].outcome, OUTCOME_OK);
    assert!(runs[0].lease_held);
}

/// A runner that tells the test each time it runs a job.
struct Signal(mpsc::UnboundedSender<i64>);

#[async_trait]
impl JobRunner for Signal {
    async fn run(&self, job: &DueJob) -> JobOutcome {
        let _ = self.0.send(job.id);
        JobOutcome::ok("signalled")
    }
}

#[tokio::test]
async fn the_daemon_runs_jobs_as_they_fall_due_and_stops_when_told() {
    let (_dir, store) = store();
    let now = Timestamp::now();
    // Due now, and one that falls due 200 ms later (the daemon sleeps
    // until then, not a whole poll interval).
    for (name, delay) in [("now", 0), ("soon", 200)] {
        store
            .add_job(&NewJob {
                name: name.into(),
                schedule: json!({"kind": "at", "at_ms": now.as_millisecond() + delay}),
                task: json!({"kind": "message", "text": name}),
                delete_after_run: true,
                session_id: None,
                created: now.as_millisecond(),
                next_run: Some(now.as_millisecond() + delay),
            })
            .await
            .unwrap();
    }
    let (ran_tx, mut ran) = mpsc::unbounded_channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let runner = Signal(ran_tx);
    let options = SchedulerOptions::default()
        .owner("daemon")
        .poll_interval(Duration::from_secs(3_600));
    let store_for_daemon = Arc::clone(&store);
    let daemon = tokio::spawn(async move {
        cron::daemon(store_for_daemon.as_ref(), &runner, &options, async {
            let _ = stop_rx.await;
        })
        .await;
    });
    assert_eq!(ran.recv().await, Some(1));
    assert_eq!(ran.recv().await, Some(2));
    stop_tx.send(()).unwrap();
    daemon.await.unwrap();
    assert!(store.jobs().await.unwrap().is_empty());
    assert_eq!(store.runs(None, 10).await.unwrap().len(), 2);
}
