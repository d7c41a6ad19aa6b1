//! Two scheduler daemons in two processes on one store run every due job
//! exactly once.
//!
//! The daemon processes are this test binary run again
//! (`cron_daemon_child`, ignored in normal runs), each a
//! [`toolgate_cron::daemon`] over the store file, with a runner that
//! appends `JOB OWNER` to a shared file. They talk to the test over
//! lines: on stdout `cron-child: ready`, `running ID`, `ran ID`,
//! `pass N`; on stdin `go`, `continue`, and end of input to stop.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "test code: a failed unwrap is a failed test; the child reports on stdout"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use async_trait::async_trait;
use jiff::Timestamp;
use serde_json::json;
use toolgate_cron::{self as cron, DaemonReporter, DueJob, JobOutcome, JobRunner, RunReport};
use toolgate_store::{NewJob, ScheduleStore as _, SqliteStore};

const CHILD_DB: &str = "TOOLGATE_CRON_CHILD_DB";
const CHILD_RUNS: &str = "TOOLGATE_CRON_CHILD_RUNS";
const CHILD_OWNER: &str = "TOOLGATE_CRON_CHILD_OWNER";
const PREFIX: &str = "cron-child: ";
const ONE_SHOT: i64 = 20;
const RECURRING: i64 = 20;

/// How long the test waits for any line from a child before it gives up:
/// a guard against a hang, never a way to wait for something.
const STALL: Duration = Duration::from_secs(120);

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{PREFIX}{line}").unwrap();
    out.flush().unwrap();
}

/// Appends `JOB OWNER` to the runs file; the first run waits for the
/// test's `continue`, so that both daemons are seen holding a job at once.
struct AppendRunner {
    runs: PathBuf,
    owner: String,
    hold_first: tokio::sync::Mutex<Option<tokio::sync::oneshot::Receiver<()>>>,
}

#[async_trait]
impl JobRunner for AppendRunner {
    async fn run(&self, job: &DueJob) -> JobOutcome {
        if let Some(release) = self.hold_first.lock().await.take() {
            say(&format!("running {}", job.id));
            release.await.unwrap();
        }
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&self.runs)
            .unwrap();
        // One write per line: appends of a few bytes are atomic.
        file.write_all(format!("{} {}\n", job.id, self.owner).as_bytes())
            .unwrap();
        file.sync_all().unwrap();
        say(&format!("ran {}", job.id));
        JobOutcome::ok(format!("ran by {}", self.owner))
    }
}

struct SayPasses;

impl DaemonReporter for SayPasses {
    fn pass(&self, runs: &[RunReport]) {
        say(&format!("pass {}", runs.len()));
    }

    fn error(&self, error: &cron::SchedulerError) {
        say(&format!("error {}", toolgate_core::error_chain(error)));
    }
}

/// The daemon process (run by the test below through this binary).
#[test]
#[ignore = "a helper process: run by two_daemon_processes_run_each_due_job_exactly_once"]
fn cron_daemon_child() {
    let (Ok(db), Ok(runs), Ok(owner)) = (
        std::env::var(CHILD_DB),
        std::env::var(CHILD_RUNS),
        std::env::var(CHILD_OWNER),
    ) else {
        println!(
            "only meaningful as the child of two_daemon_processes_run_each_due_job_exactly_once"
        );
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let store = SqliteStore::open(&db).unwrap();
        // stdin: `go`, `continue`, then end of input.
        let (lines_tx, mut lines) = tokio::sync::mpsc::unbounded_channel::<String>();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        say("ready");
        assert_eq!(lines.recv().await.as_deref(), Some("go"));
        let (release_tx, release_rx) = tokio::sync::oneshot::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            assert_eq!(lines.recv().await.as_deref(), Some("continue"));
            release_tx.send(()).unwrap();
            while lines.recv().await.is_some() {}
            let _ = stop_tx.send(());
        });
        let runner = AppendRunner {
            runs: PathBuf::from(runs),
            owner: owner.clone(),
            hold_first: tokio::sync::Mutex::new(Some(release_rx)),
        };
        let options = cron::SchedulerOptions::default()
            .owner(owner)
            .poll_interval(Duration::from_millis(50));
        cron::daemon_with(&store, &runner, &options, &SayPasses, async {
            let _ = stop_rx.await;
        })
        .await;
        say("stopped");
    });
}

struct Daemon {
    child: Child,
    stdin: Option<ChildStdin>,
}

fn spawn(index: usize, db: &Path, runs: &Path, lines: &mpsc::Sender<(usize, String)>) -> Daemon {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "cron_daemon_child",
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD_DB, db)
        .env(CHILD_RUNS, runs)
        .env(CHILD_OWNER, format!("daemon{index}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let lines = lines.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            // libtest may print its own text on the same line first.
            if let Some(at) = line.find(PREFIX) {
                let _ = lines.send((index, line[at + PREFIX.len()..].to_owned()));
            }
        }
    });
    let stdin = child.stdin.take();
    Daemon { child, stdin }
}

impl Daemon {
    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }
}

/// Waits until `done` holds, reading the children's lines as they come.
fn wait_for(
    lines: &mpsc::Receiver<(usize, String)>,
    seen: &mut Vec<(usize, String)>,
    what: &str,
    done: impl Fn(&[(usize, String)]) -> bool,
) {
    while !done(seen) {
        let line = lines.recv_timeout(STALL).unwrap_or_else(|_| {
            panic!("no line from the daemons while waiting for {what}; seen {seen:?}")
        });
        assert!(!line.1.starts_with("error"), "{line:?}");
        seen.push(line);
    }
}

fn count(seen: &[(usize, String)], child: usize, prefix: &str) -> usize {
    seen.iter()
        .filter(|(i, l)| *i == child && l.starts_with(prefix))
        .count()
}

#[test]
fn two_daemon_processes_run_each_due_job_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("toolgate.db");
    let runs = dir.path().join("runs.txt");
    let now = Timestamp::now().as_millisecond();
    let mut ids = BTreeSet::new();
    {
        let store = Arc::new(SqliteStore::open(&db).unwrap());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            for k in 0..ONE_SHOT + RECURRING {
                let (schedule, delete) = if k < ONE_SHOT {
                    (json!({"kind": "at", "at_ms": now - 1_000}), true)
                } else {
                    (
                        json!({"kind": "every", "every_ms": 3_600_000, "anchor_ms": now - 3_600_000}),
                        false,
                    )
                };
                let job = store
                    .add_job(&NewJob {
                        name: format!("job{k}"),
                        schedule,
                        task: json!({"kind": "message", "text": format!("job {k}")}),
                        delete_after_run: delete,
                        session_id: None,
                        created: now - 3_600_000,
                        next_run: Some(now - 1_000),
                    })
                    .await
                    .unwrap();
                ids.insert(job.id);
            }
        });
    }

    let (tx, lines) = mpsc::channel();
    let mut daemons = [spawn(0, &db, &runs, &tx), spawn(1, &db, &runs, &tx)];
    let mut seen = Vec::new();
    wait_for(&lines, &mut seen, "both ready", |s| {
        (0..2).all(|c| count(s, c, "ready") == 1)
    });
    for daemon in &mut daemons {
        daemon.send("go");
    }
    // Both hold a job at the same moment: they really run side by side.
    wait_for(&lines, &mut seen, "both running a job", |s| {
        (0..2).all(|c| count(s, c, "running") == 1)
    });
    for daemon in &mut daemons {
        daemon.send("continue");
    }
    // A pass ends when nothing more can be claimed; once both have ended
    // one, every job has been claimed and run by one of them.
    wait_for(&lines, &mut seen, "a pass of each", |s| {
        (0..2).all(|c| count(s, c, "pass") >= 1)
    });
    for daemon in &mut daemons {
        daemon.stdin = None;
    }
    for daemon in &mut daemons {
        assert!(daemon.child.wait().unwrap().success());
    }
    // The children are gone: drain what they said last.
    drop(tx);
    seen.extend(lines.iter());
    for c in 0..2 {
        assert_eq!(count(&seen, c, "stopped"), 1, "{seen:?}");
    }

    let text = std::fs::read_to_string(&runs).unwrap();
    let mut per_job: BTreeMap<i64, Vec<&str>> = BTreeMap::new();
    for line in text.lines() {
        let (id, owner) = line.split_once(' ').unwrap();
        per_job.entry(id.parse().unwrap()).or_default().push(owner);
    }
    let twice: Vec<_> = per_job.iter().filter(|(_, o)| o.len() > 1).collect();
    assert!(twice.is_empty(), "jobs run more than once: {twice:?}");
    assert_eq!(
        per_job.keys().copied().collect::<BTreeSet<_>>(),
        ids,
        "every due job ran"
    );
    for owner in ["daemon0", "daemon1"] {
        assert!(
            per_job.values().any(|o| o[0] == owner),
            "{owner} ran nothing: {per_job:?}"
        );
    }

    // The store agrees: one-shot jobs removed, recurring ones due in an
    // hour, one run each, all `ok`, no lease left.
    let store = SqliteStore::open(&db).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let jobs = store.jobs().await.unwrap();
        assert_eq!(jobs.len(), usize::try_from(RECURRING).unwrap());
        for job in &jobs {
            assert_eq!((job.runs, job.lease_owner.as_deref()), (1, None));
            assert_eq!(job.next_run, Some(now + 3_600_000));
        }
        let records = store.runs(None, 1_000).await.unwrap();
        assert_eq!(records.len(), ids.len());
        assert!(records.iter().all(|r| r.outcome == cron::OUTCOME_OK));
    });
}
