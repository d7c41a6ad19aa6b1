//! Scheduled jobs as a host runs them (`toolgate schedule run-due|daemon`).
//!
//! # Rules
//!
//! 1. A `message` job (a reminder) is delivered by its run: the message is
//!    the run's summary in the store (`toolgate schedule list` shows it)
//!    and the front end shows it as the job runs. It always succeeds.
//! 2. An `agent` job is a `toolgate run` of its text by its agent (the
//!    host's `build` when it names none) in a new session, in the
//!    `autonomous` prompt mode: nobody is there to answer, so calls that
//!    would need confirmation are refused by the headless approver, as in
//!    any run without a terminal. It succeeds when the run does; its
//!    summary is the run's final answer (or its error) and session id.
//! 3. A job whose agent cannot start (no model server, a bad agent name)
//!    fails with the reason and the hint, and the scheduler goes on; a
//!    one-shot job that failed is kept, disabled, with that run recorded,
//!    so its task is not lost (rule 3 of `toolgate_assistant::cron::run_due`).

use async_trait::async_trait;
use toolgate_agent::{Outcome, PromptMode};
use toolgate_assistant::cron::{DueJob, JobOutcome, JobRunner, JobTask};

use crate::assembly::host::Host;
use crate::run::{RunControls, RunRequest};

/// Runs due jobs on a [`Host`] (see the module's rules).
#[derive(Debug)]
pub struct HostJobRunner<'a> {
    host: &'a Host,
}

impl<'a> HostJobRunner<'a> {
    /// A runner over `host`.
    pub fn new(host: &'a Host) -> Self {
        Self { host }
    }
}

#[async_trait]
impl JobRunner for HostJobRunner<'_> {
    async fn run(&self, job: &DueJob) -> JobOutcome {
        match &job.task {
            JobTask::Message { text } => JobOutcome::ok(text.clone()),
            JobTask::Agent { agent, text } => {
                let mut request = RunRequest::new(text.clone());
                request.agent.clone_from(agent);
                request.prompt_mode = Some(PromptMode::Autonomous);
                let prepared = match self.host.prepare_run(request, None).await {
                    Ok(prepared) => prepared,
                    Err(error) => {
                        let hint = error.hint().map(|h| format!(" ({h})")).unwrap_or_default();
                        return JobOutcome::failed(format!(
                            "the agent could not start: {}{hint}",
                            toolgate_core::error_chain(&error)
                        ));
                    }
                };
                let session = prepared.session_id().to_owned();
                let report = prepared.run(RunControls::default()).await;
                self.host.flush().await;
                let text = report
                    .error
                    .clone()
                    .unwrap_or_else(|| report.final_text.trim().to_owned());
                let summary = format!("session {session}: {text}");
                if report.outcome == Outcome::Completed {
                    JobOutcome::ok(summary)
                } else {
                    JobOutcome::failed(summary)
                }
            }
            _ => JobOutcome::failed("this kind of job is not known to this toolgate"),
        }
    }
}
