//! `toolgate schedule list|run-due|daemon`: the jobs the `cron` tool
//! stored, run by this host ([`toolgate_host::HostJobRunner`]: reminders
//! are shown, agent jobs run unattended in the `autonomous` prompt mode).

use std::fmt::Write as _;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use toolgate_host::cron::{
    DaemonReporter, OUTCOME_FAILED, RunReport, SchedulerError, describe_job, describe_run, run_due,
};
use toolgate_host::{HostError, HostJobRunner};

use crate::Setup;
use crate::cli::ScheduleCommand;
use crate::render::{CliError, Exit};
use crate::{json_text, out, render, show};

/// `toolgate schedule …`.
pub(crate) async fn schedule(setup: &Setup, cmd: ScheduleCommand) -> Result<Exit, CliError> {
    let store = setup.host.store()?;
    let cron = &setup.host.config().tools.cron;
    let zone = cron
        .timezone
        .as_deref()
        .and_then(|z| TimeZone::get(z).ok())
        .unwrap_or_else(TimeZone::system);
    let store_error = |source| {
        CliError::from(HostError::Store {
            path: store.location().to_owned(),
            source,
        })
    };
    match cmd {
        ScheduleCommand::List => {
            let jobs = store.jobs().await.map_err(store_error)?;
            let runs = store.runs(None, 10).await.map_err(store_error)?;
            if setup.json {
                return out(&json_text(
                    &serde_json::json!({"jobs": jobs, "runs": runs}),
                )?);
            }
            let mut text = String::new();
            if jobs.is_empty() {
                // On stderr, as every empty list says so: stdout carries
                // the list only.
                render::note("no scheduled jobs: the `cron` tool adds them (tools.cron.enabled)");
            }
            for job in &jobs {
                let _ = writeln!(text, "{}", describe_job(job, &zone));
            }
            if !runs.is_empty() {
                text.push_str("\nRecent runs:\n");
                for run in &runs {
                    let _ = writeln!(text, "  {}", describe_run(run, &zone));
                }
            }
            show(&text)
        }
        ScheduleCommand::RunDue => {
            let runner = HostJobRunner::new(&setup.host);
            let reports = run_due(
                store.as_ref(),
                &runner,
                Timestamp::now(),
                &cron.scheduler_options(),
            )
            .await
            .map_err(|e| CliError::new(Exit::Failure, anyhow::Error::new(e)))?;
            let mut text = String::new();
            for report in &reports {
                let _ = writeln!(text, "{}", run_line(report));
            }
            if reports.is_empty() {
                render::note("no job is due");
            }
            show(&text)?;
            Ok(if reports.iter().any(|r| r.outcome == OUTCOME_FAILED) {
                Exit::Failure
            } else {
                Exit::Success
            })
        }
        ScheduleCommand::Daemon => {
            let runner = HostJobRunner::new(&setup.host);
            let options = cron.scheduler_options();
            render::note(&format!(
                "scheduler {} running on {}; Ctrl-C stops it after the job in progress",
                options.owner_id(),
                store.location().display()
            ));
            let stop = async {
                let _ = tokio::signal::ctrl_c().await;
            };
            toolgate_host::cron::daemon_with(store.as_ref(), &runner, &options, &Printer, stop)
                .await;
            Ok(Exit::Success)
        }
    }
}

/// One run as `run-due` and the daemon print it.
fn run_line(report: &RunReport) -> String {
    let mut line = format!(
        "job {} \"{}\": {}",
        report.job_id, report.name, report.outcome
    );
    if !report.summary.is_empty() {
        let _ = write!(line, " — {}", report.summary);
    }
    line
}

/// The daemon's runs on stdout, its store errors on stderr.
struct Printer;

impl DaemonReporter for Printer {
    fn pass(&self, runs: &[RunReport]) {
        for report in runs {
            let _ = show(&format!("{}\n", run_line(report)));
        }
    }

    fn error(&self, error: &SchedulerError) {
        render::note(&format!(
            "warning: a scheduler pass failed: {}",
            toolgate_core::error_chain(error)
        ));
    }
}
