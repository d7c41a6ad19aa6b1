//! The `cron` tool's arguments as models send them.
//!
//! Small models flatten nested objects (`kind`, `expr`, `tz` at the top
//! level instead of inside `schedule`), write numbers as strings, and use
//! synonyms for actions. The schema accepts those shapes, so validation
//! does not refuse them; [`CronArgs::request`] (in `request.rs`) recovers
//! the request they mean.

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;
use serde_json::Value;

/// Arguments of `cron`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CronArgs {
    /// `add`, `list`, `remove`, `run` (run a job now) or `status`.
    pub action: String,
    /// add: a short name for the job. remove/run/status: a job's name
    /// (instead of jobId).
    #[serde(default)]
    pub name: Option<String>,
    /// add: when the job runs. One of `{"kind": "at", "at":
    /// "2026-05-01T09:00:00+02:00"}`, `{"kind": "every", "everyMs":
    /// 3600000}`, `{"kind": "cron", "expr": "0 9 * * 1-5", "tz":
    /// "Europe/Madrid"}`.
    #[serde(default)]
    pub schedule: Option<ScheduleArg>,
    /// add: the reminder text (kind `message`) or the task for the agent
    /// (kind `agent`).
    #[serde(default)]
    pub text: Option<String>,
    /// add: `message` (show the text to the user at that time; the
    /// default) or `agent` (run the text as a task).
    #[serde(default)]
    pub kind: Option<String>,
    /// add, kind `agent`: the agent that runs the task.
    #[serde(default)]
    pub agent: Option<String>,
    /// add: remove the job after its first run (default: true for `at`,
    /// false otherwise).
    #[serde(default)]
    #[schemars(schema_with = "lenient_bool")]
    pub delete_after_run: Option<Value>,
    /// remove/run/status: the job's id, as `list` shows it.
    #[serde(default)]
    #[schemars(schema_with = "lenient_int")]
    pub job_id: Option<Value>,
    /// list: also show finished and disabled jobs.
    #[serde(default)]
    #[schemars(schema_with = "lenient_bool")]
    pub include_disabled: Option<Value>,
    /// Same as `schedule.at`.
    #[serde(default)]
    pub at: Option<String>,
    /// Same as `schedule.atMs`.
    #[serde(default)]
    #[schemars(schema_with = "lenient_int")]
    pub at_ms: Option<Value>,
    /// Same as `schedule.everyMs`.
    #[serde(default)]
    #[schemars(schema_with = "lenient_int")]
    pub every_ms: Option<Value>,
    /// Same as `schedule.every`.
    #[serde(default)]
    #[schemars(schema_with = "lenient_int")]
    pub every: Option<Value>,
    /// Same as `schedule.expr`.
    #[serde(default)]
    pub expr: Option<String>,
    /// Same as `schedule.cron`.
    #[serde(default)]
    pub cron: Option<String>,
    /// Same as `schedule.tz`.
    #[serde(default)]
    pub tz: Option<String>,
}

/// A schedule as an object, or as one string (a cron expression, an
/// interval like `5m`, or an ISO 8601 time).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ScheduleArg {
    /// `"0 9 * * 1-5"`, `"every 5m"`, `"2026-05-01T09:00:00+02:00"`.
    Text(String),
    /// `{"kind": …, …}`.
    Object(ScheduleObject),
}

/// A schedule object.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScheduleObject {
    /// `at` (once), `every` (interval) or `cron` (expression).
    #[serde(default)]
    pub kind: Option<String>,
    /// kind `at`: ISO 8601 date and time, with an offset
    /// (`2026-05-01T09:00:00+02:00`) or without one for the local zone.
    #[serde(default)]
    pub at: Option<String>,
    /// kind `at`: milliseconds since 1970-01-01 UTC, instead of `at`.
    #[serde(default)]
    #[schemars(schema_with = "lenient_int")]
    pub at_ms: Option<Value>,
    /// kind `every`: the interval in milliseconds (at least 60000).
    #[serde(default)]
    #[schemars(schema_with = "lenient_int")]
    pub every_ms: Option<Value>,
    /// kind `every`: the interval with a unit (`5m`, `2h`, `1d`), instead
    /// of everyMs.
    #[serde(default)]
    #[schemars(schema_with = "lenient_int")]
    pub every: Option<Value>,
    /// kind `cron`: 5 fields, minute hour day-of-month month day-of-week
    /// (`0 9 * * 1-5`: 09:00 on weekdays).
    #[serde(default)]
    pub expr: Option<String>,
    /// kind `cron`: the expression, instead of expr.
    #[serde(default)]
    pub cron: Option<String>,
    /// IANA time zone of a cron expression or a local `at` time
    /// (`Europe/Madrid`); default: the configured zone.
    #[serde(default)]
    pub tz: Option<String>,
}

fn lenient_int(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": ["integer", "string", "null"]})
}

fn lenient_bool(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": ["boolean", "string", "integer", "null"]})
}
