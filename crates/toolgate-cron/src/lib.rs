//! Scheduled jobs (seed 002 `cron`): the `cron` tool and the scheduler
//! that runs the jobs.
//!
//! - [`CronTool`]: `add` / `list` / `remove` / `run` / `status` jobs, with
//!   schedules `at` (once), `every` (interval) and `cron` (5 fields in an
//!   IANA time zone), kept in a [`ScheduleStore`].
//! - [`next_run`]: when a [`Schedule`] runs next, daylight-saving changes
//!   included.
//! - [`run_due`] and [`daemon`]: claim due jobs with a lease in the store
//!   (so several schedulers on one store never run a job twice), run them
//!   through a [`JobRunner`] (the host runs the agent or records the
//!   message), record each run and schedule the next.
//! - [`CronConfig`]: the `tools.cron` section of `toolgate.yaml`;
//!   [`tools`] builds the group from it; [`INSTRUCTIONS`] is its
//!   system-prompt block.
//!
//! # Why a crate of its own
//!
//! The scheduler is a product beside the assistant's tools: a daemon with
//! leases in the store, cron expressions evaluated in IANA zones (croner,
//! jiff) and a runner the host plugs in, used by `toolgate schedule` as
//! much as by the `cron` tool, and it shares nothing with the other
//! assistant groups. Apart, each crate stays a size one person can read
//! (`toolgate-assistant` was over 10k lines with it) and the scheduler is
//! tested on its own. `toolgate-assistant` re-exports this crate as
//! `toolgate_assistant::cron`, so its users see no change.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//!
//! use async_trait::async_trait;
//! use serde_json::json;
//! use toolgate_core::ToolContext;
//! use toolgate_store::{ScheduleStore, SqliteStore};
//! use toolgate_cron::{self as cron, CronConfig, DueJob, JobOutcome, JobRunner};
//!
//! struct Reminders;
//!
//! #[async_trait]
//! impl JobRunner for Reminders {
//!     async fn run(&self, job: &DueJob) -> JobOutcome {
//!         JobOutcome::ok(format!("reminded: {}", job.task.text()))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let store: Arc<dyn ScheduleStore> = Arc::new(SqliteStore::open(dir.path().join("t.db"))?);
//! let tools = cron::tools(&CronConfig::default(), Arc::clone(&store));
//! let added = tools[0]
//!     .execute(
//!         json!({"action": "add", "everyMs": 3_600_000, "text": "stretch"}),
//!         &ToolContext::new("c1"),
//!     )
//!     .await;
//! assert!(added.success, "{added:?}");
//!
//! // An hour and a minute later, one pass runs the job once.
//! let later = jiff::Timestamp::now() + jiff::SignedDuration::from_mins(61);
//! let options = CronConfig::default().scheduler_options();
//! let runs = cron::run_due(store.as_ref(), &Reminders, later, &options).await?;
//! assert_eq!(runs.len(), 1);
//! assert_eq!(runs[0].summary, "reminded: stretch");
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toolgate_core::Tool;
use toolgate_store::ScheduleStore;

pub use args::{CronArgs, ScheduleArg, ScheduleObject};
pub use schedule::{
    AT_PAST_TOLERANCE_MS, MAX_EVERY_MS, Schedule, ScheduleError, describe, human_ms, next_run,
    parse_at, parse_cron, parse_interval, show_time,
};
pub use scheduler::{
    DaemonReporter, DueJob, JobOutcome, JobRunner, JobTask, OUTCOME_FAILED, OUTCOME_MISSED,
    OUTCOME_OK, RunReport, SchedulerError, SchedulerOptions, TracingReporter, daemon, daemon_with,
    new_owner_id, run_due,
};
pub use tool::{CronTool, describe_job, describe_run};

mod args;
mod request;
mod schedule;
mod scheduler;
mod tool;

/// The system-prompt block for the `cron` group (seed 002's
/// `cronToolInstructions`).
pub const INSTRUCTIONS: &str = "\
## Scheduled jobs (cron tool)
- Before scheduling, call get_datetime to learn the current date, time and time zone. Never guess them.
- One-time reminder: action add, schedule {\"kind\": \"at\", \"at\": \"2026-05-01T09:00:00+02:00\"} (ISO 8601 with the offset), text = the reminder.
- Repeating: schedule {\"kind\": \"every\", \"everyMs\": 3600000} (milliseconds, at least 60000), or {\"kind\": \"cron\", \"expr\": \"0 9 * * 1-5\", \"tz\": \"Europe/Madrid\"} (minute hour day month weekday).
- kind \"message\" (default) shows the text to the user at that time; kind \"agent\" runs the text as a task, with `agent` naming who runs it.
- To remove or run a job, call action list first and use its jobId.
- Tell the user what you scheduled and when it runs next, as the tool reported it.";

/// The `tools.cron` section of `toolgate.yaml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CronConfig {
    /// Whether the `cron` tool is registered. Default: false (seed 002
    /// enables it; toolgate keeps assistant groups opt-in).
    pub enabled: bool,
    /// The IANA zone for local `at` times, for cron expressions without
    /// `tz`, and for the times the tool shows. Default: the system's zone.
    pub timezone: Option<String>,
    /// The shortest `every` interval, in milliseconds. Default: 60000 (one
    /// minute).
    pub min_every_ms: u64,
    /// The most jobs the store may hold (finished ones included). Default:
    /// 100.
    pub max_jobs: usize,
    /// The longest job text, in characters. Default: 4000.
    pub max_text_chars: usize,
    /// The agent of `agent` jobs that name none. Default: none (the host's
    /// default agent).
    pub default_agent: Option<String>,
    /// The agents `agent` jobs may name; empty allows any. Default: empty.
    pub allowed_agents: Vec<String>,
    /// How late, in seconds, a missed run may still start; later ones are
    /// recorded as missed and skipped (see [`run_due`]). Default: 3600.
    pub missed_grace_secs: u64,
    /// The longest sleep of the daemon between passes, in seconds.
    /// Default: 30.
    pub poll_interval_secs: u64,
    /// How long a claimed job is leased, in seconds, before another
    /// scheduler may take it over; renewed while it runs. Default: 300.
    pub lease_secs: u64,
}

impl Default for CronConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            timezone: None,
            min_every_ms: 60_000,
            max_jobs: 100,
            max_text_chars: 4_000,
            default_agent: None,
            allowed_agents: Vec::new(),
            missed_grace_secs: 3_600,
            poll_interval_secs: 30,
            lease_secs: 300,
        }
    }
}

impl CronConfig {
    /// Checks what can be checked before a call: the configured time
    /// zone is known.
    pub fn validate(&self) -> Result<(), ScheduleError> {
        if let Some(zone) = &self.timezone {
            schedule::zone(zone)?;
        }
        Ok(())
    }

    /// The scheduler's options from this configuration, with a new owner
    /// id ([`new_owner_id`]).
    pub fn scheduler_options(&self) -> SchedulerOptions {
        SchedulerOptions::default()
            .grace(Duration::from_secs(self.missed_grace_secs))
            .poll_interval(Duration::from_secs(self.poll_interval_secs))
            .lease(Duration::from_secs(self.lease_secs))
    }
}

/// The `cron` group: the `cron` tool over `store`. (Whether to register it
/// is the host's call, from [`CronConfig::enabled`].)
pub fn tools(config: &CronConfig, store: Arc<dyn ScheduleStore>) -> Vec<Arc<dyn Tool>> {
    vec![Arc::new(CronTool::new(config.clone(), store))]
}

/// The `cron` group, `tools.cron` (off by default; agent runs later, unattended, so it needs trust). Part: `Arc<dyn ScheduleStore>`.
#[derive(Debug, Clone, Copy, Default)]
pub struct CronGroup;

impl toolgate_core::Group for CronGroup {
    fn name(&self) -> &'static str {
        "cron"
    }

    fn section_key(&self) -> Option<&'static str> {
        Some("cron")
    }

    fn tool_names(&self) -> &'static [&'static str] {
        &["cron"]
    }

    fn build(
        &self,
        ctx: &toolgate_core::GroupContext<'_>,
    ) -> Result<toolgate_core::ToolGroup, toolgate_core::GroupError> {
        let section = ctx.section::<CronConfig>()?;
        if !section.enabled {
            return Ok(toolgate_core::ToolGroup::new(
                "cron",
                INSTRUCTIONS,
                Vec::new(),
            ));
        }
        section
            .validate()
            .map_err(|e| toolgate_core::GroupError::Config(Box::new(e)))?;
        let tools = tools(section, ctx.part::<Arc<dyn ScheduleStore>>()?);
        Ok(toolgate_core::ToolGroup::new("cron", INSTRUCTIONS, tools))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_section_has_defaults_and_refuses_unknown_keys() {
        let empty: CronConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(empty, CronConfig::default());
        assert!(!empty.enabled);
        let set: CronConfig = serde_json::from_value(serde_json::json!({
            "enabled": true, "timezone": "Europe/Madrid", "min_every_ms": 300_000,
            "allowed_agents": ["review"], "missed_grace_secs": 60
        }))
        .unwrap();
        assert_eq!(set.min_every_ms, 300_000);
        assert_eq!(set.max_jobs, 100, "unset keys keep their defaults");
        assert!(set.validate().is_ok());
        let error = serde_json::from_str::<CronConfig>(r#"{"grace": 5}"#).unwrap_err();
        assert!(
            error.to_string().contains("unknown field `grace`"),
            "{error}"
        );
        let bad_zone = CronConfig {
            timezone: Some("Mars/Olympus".into()),
            ..CronConfig::default()
        };
        assert!(
            bad_zone
                .validate()
                .unwrap_err()
                .to_string()
                .contains("Mars/Olympus")
        );
        // Serialized back, it reads the same.
        let text = serde_json::to_string(&set).unwrap();
        assert_eq!(serde_json::from_str::<CronConfig>(&text).unwrap(), set);
    }
}
