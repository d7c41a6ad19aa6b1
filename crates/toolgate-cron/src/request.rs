//! The one request the `cron` tool's arguments ([`CronArgs`], in
//! `args.rs`) mean.
//!
//! Small models flatten nested objects (`kind`, `expr`, `tz` at the top
//! level instead of inside `schedule`), write numbers as strings, and use
//! synonyms for actions. The schema accepts those shapes (so validation
//! does not refuse them) and [`CronArgs::request`] recovers the request.

use serde_json::Value;

use crate::args::{CronArgs, ScheduleArg};
use crate::schedule::parse_interval;

/// What a `cron` call asks for, once recovered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Request {
    /// Add a job.
    Add(AddRequest),
    /// List the jobs.
    List {
        /// Finished and disabled jobs too.
        include_disabled: bool,
    },
    /// Remove a job.
    Remove(JobRef),
    /// Run a job now.
    Run(JobRef),
    /// The scheduler's status, or one job's.
    Status(Option<JobRef>),
}

/// A job, by id or by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JobRef {
    Id(i64),
    Name(String),
}

/// A job to add, before its schedule is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AddRequest {
    pub(crate) name: Option<String>,
    pub(crate) schedule: ScheduleSpec,
    pub(crate) kind: TaskKind,
    pub(crate) text: String,
    pub(crate) agent: Option<String>,
    pub(crate) delete_after_run: Option<bool>,
}

/// What a job does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskKind {
    Message,
    Agent,
}

/// A schedule as asked for, before it is parsed and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ScheduleSpec {
    At { at: AtSpec, tz: Option<String> },
    Every { every_ms: u64 },
    Cron { expr: String, tz: Option<String> },
}

/// An `at` time as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AtSpec {
    Text(String),
    Ms(i64),
}

/// The schedule fields gathered from `schedule` and the top level.
#[derive(Debug, Default)]
struct Fields {
    kind: Option<String>,
    at: Option<String>,
    at_ms: Option<Value>,
    every: Option<Value>,
    expr: Option<String>,
    tz: Option<String>,
}

impl CronArgs {
    /// The request these arguments mean.
    ///
    /// # Rules
    ///
    /// 1. `action` is read case-insensitively, with common synonyms
    ///    (`create` → add, `delete`/`cancel` → remove, `trigger` → run, …).
    /// 2. Schedule fields may sit inside `schedule` or at the top level;
    ///    `cron` is a synonym of `expr`, `every` of `everyMs` (with units:
    ///    `5m`); the same field given in both places must agree.
    ///    `schedule` may also be one string: a cron expression (5 fields or
    ///    `@daily`), an interval (`5m`, `every 2h`, `300000`), or an
    ///    ISO 8601 time.
    /// 3. A top-level `kind` of `at`, `every` or `cron` is the schedule's
    ///    kind (flattened); `message` or `agent` (and `reminder`, `task`)
    ///    is the job's.
    /// 4. Without a schedule kind, the fields given decide it; fields of
    ///    two kinds are refused.
    /// 5. Numbers may be strings (`"300000"`), booleans may be strings
    ///    (`"true"`, `"yes"`) or 0/1, job ids may be written `#3` or
    ///    `job-3`.
    /// 6. A job is an `agent` task when `kind` says so or an `agent` is
    ///    named, else a `message`.
    pub(crate) fn request(self) -> Result<Request, String> {
        let action = self
            .action
            .trim()
            .to_ascii_lowercase()
            .replace(['-', ' '], "_");
        match action.as_str() {
            "add" | "create" | "new" | "schedule" | "set" | "add_job" => {
                self.add().map(Request::Add)
            }
            "list" | "ls" | "show" | "jobs" | "list_jobs" => Ok(Request::List {
                include_disabled: bool_field("includeDisabled", self.include_disabled.as_ref())?
                    .unwrap_or(false),
            }),
            "remove" | "delete" | "cancel" | "rm" | "del" | "remove_job" => self
                .job_ref()?
                .map(Request::Remove)
                .ok_or_else(|| needs_job("remove")),
            "run" | "trigger" | "run_now" | "runnow" | "execute" | "run_job" => self
                .job_ref()?
                .map(Request::Run)
                .ok_or_else(|| needs_job("run")),
            "status" | "info" | "get" | "describe" => self.job_ref().map(Request::Status),
            _ => Err(format!(
                "unknown action `{}`; use add, list, remove, run or status",
                self.action
            )),
        }
    }

    fn job_ref(&self) -> Result<Option<JobRef>, String> {
        if let Some(value) = self.job_id.as_ref().filter(|v| !v.is_null()) {
            let id = match value {
                Value::Number(n) => n.as_i64(),
                Value::String(s) => {
                    let s = s.trim().to_ascii_lowercase();
                    let digits = s
                        .trim_start_matches('#')
                        .trim_start_matches("job")
                        .trim_start_matches(['-', '_', ' ', '#']);
                    digits.parse().ok()
                }
                _ => None,
            };
            return id.map(|id| Some(JobRef::Id(id))).ok_or_else(|| {
                format!("`jobId` {value} is not a job id; use the number `list` shows")
            });
        }
        Ok(present(self.name.as_deref()).map(|name| JobRef::Name(name.to_owned())))
    }

    fn add(self) -> Result<AddRequest, String> {
        let mut job_kind = None;
        let mut fields = Fields::default();
        match self.schedule {
            Some(ScheduleArg::Object(object)) => {
                fields = Fields {
                    kind: object.kind,
                    at: object.at,
                    at_ms: object.at_ms,
                    every: one_of("everyMs", "every", object.every_ms, object.every)?,
                    expr: one_of("expr", "cron", object.expr, object.cron)?,
                    tz: object.tz,
                };
            }
            Some(ScheduleArg::Text(text)) => fields = schedule_text(&text),
            None => {}
        }
        // Rule 3: a top-level `kind` is the schedule's or the job's.
        if let Some(kind) = present(self.kind.as_deref()) {
            match kind.to_ascii_lowercase().as_str() {
                "at" | "once" | "every" | "interval" | "cron" => {
                    merge("kind", &mut fields.kind, Some(kind.to_owned()))?;
                }
                "message" | "reminder" | "notify" | "systemevent" | "system_event" => {
                    job_kind = Some(TaskKind::Message);
                }
                "agent" | "task" | "agentturn" | "agent_turn" | "prompt" => {
                    job_kind = Some(TaskKind::Agent);
                }
                _ => {
                    return Err(format!(
                        "unknown kind `{kind}`; the job's kind is `message` or `agent`, a schedule's kind is `at`, `every` or `cron`"
                    ));
                }
            }
        }
        merge("at", &mut fields.at, self.at)?;
        merge_value("atMs", &mut fields.at_ms, self.at_ms)?;
        merge_value(
            "everyMs",
            &mut fields.every,
            one_of("everyMs", "every", self.every_ms, self.every)?,
        )?;
        merge(
            "expr",
            &mut fields.expr,
            one_of("expr", "cron", self.expr, self.cron)?,
        )?;
        merge("tz", &mut fields.tz, self.tz)?;

        let schedule = schedule_spec(fields)?;
        let text = present(self.text.as_deref())
            .ok_or("add needs `text`: the reminder to show, or the task for the agent")?
            .to_owned();
        let agent = present(self.agent.as_deref()).map(str::to_owned);
        let kind = job_kind.unwrap_or(if agent.is_some() {
            TaskKind::Agent
        } else {
            TaskKind::Message
        });
        Ok(AddRequest {
            name: present(self.name.as_deref()).map(str::to_owned),
            schedule,
            kind,
            text,
            agent,
            delete_after_run: bool_field("deleteAfterRun", self.delete_after_run.as_ref())?,
        })
    }
}

fn needs_job(action: &str) -> String {
    format!(
        "{action} needs `jobId` (or the job's `name`); call cron with action list to see the jobs"
    )
}

/// `Some` non-blank, trimmed text.
fn present(text: Option<&str>) -> Option<&str> {
    text.map(str::trim).filter(|t| !t.is_empty())
}

/// A field that has a synonym (`expr` / `cron`): either, or both if equal.
fn one_of<T: PartialEq + std::fmt::Debug>(
    name: &str,
    synonym: &str,
    a: Option<T>,
    b: Option<T>,
) -> Result<Option<T>, String> {
    match (a, b) {
        (Some(a), Some(b)) if a != b => Err(format!(
            "`{name}` and `{synonym}` say different things ({a:?} and {b:?}); give one"
        )),
        (a, b) => Ok(a.or(b)),
    }
}

/// Fills `slot` from the top level, refusing a different value.
fn merge(name: &str, slot: &mut Option<String>, top: Option<String>) -> Result<(), String> {
    let top = top.filter(|t| !t.trim().is_empty());
    match (slot.as_deref().map(str::trim), top) {
        (Some(inner), Some(top)) if !inner.eq_ignore_ascii_case(top.trim()) => Err(format!(
            "`{name}` is given twice, inside `schedule` ({inner:?}) and at the top level ({top:?}); give it once"
        )),
        (None, Some(top)) => {
            *slot = Some(top);
            Ok(())
        }
        _ => Ok(()),
    }
}

fn merge_value(name: &str, slot: &mut Option<Value>, top: Option<Value>) -> Result<(), String> {
    let top = top.filter(|v| !v.is_null());
    match (slot.as_ref().filter(|v| !v.is_null()), top) {
        (Some(inner), Some(top)) if *inner != top => Err(format!(
            "`{name}` is given twice, inside `schedule` ({inner}) and at the top level ({top}); give it once"
        )),
        (None, Some(top)) => {
            *slot = Some(top);
            Ok(())
        }
        _ => Ok(()),
    }
}

/// A schedule given as one string (rule 2).
fn schedule_text(text: &str) -> Fields {
    let text = text.trim();
    let lower = text.to_ascii_lowercase();
    if text.starts_with('@') || text.split_whitespace().count() == 5 {
        return Fields {
            expr: Some(text.to_owned()),
            ..Fields::default()
        };
    }
    let interval = lower
        .strip_prefix("every")
        .map_or(lower.as_str(), str::trim);
    if parse_interval(interval).is_some() {
        return Fields {
            every: Some(Value::String(interval.to_owned())),
            ..Fields::default()
        };
    }
    Fields {
        at: Some(text.to_owned()),
        ..Fields::default()
    }
}

/// Rule 4: the schedule the fields describe.
fn schedule_spec(fields: Fields) -> Result<ScheduleSpec, String> {
    let at = present(fields.at.as_deref()).is_some()
        || fields.at_ms.as_ref().is_some_and(|v| !v.is_null());
    let every = fields.every.as_ref().is_some_and(|v| !v.is_null());
    let cron = present(fields.expr.as_deref()).is_some();
    let kind = match fields
        .kind
        .as_deref()
        .map(|k| k.trim().to_ascii_lowercase())
    {
        Some(k) if k == "at" || k == "once" => "at",
        Some(k) if k == "every" || k == "interval" => "every",
        Some(k) if k == "cron" => "cron",
        Some(k) => {
            return Err(format!(
                "unknown schedule kind `{k}`; use `at` (once), `every` (interval) or `cron`"
            ));
        }
        None => match (at, every, cron) {
            (true, false, false) => "at",
            (false, true, false) => "every",
            (false, false, true) => "cron",
            (false, false, false) => {
                return Err("add needs a schedule: `at` (ISO 8601 time), `everyMs` (interval) or `expr` (cron, 5 fields)".to_owned());
            }
            _ => {
                return Err("give one schedule: `at`, `everyMs` or `expr`, not several".to_owned());
            }
        },
    };
    let others = match kind {
        "at" => every || cron,
        "every" => at || cron,
        _ => at || every,
    };
    if others {
        return Err(format!(
            "the schedule is `{kind}` but fields of another kind are given too; give only the `{kind}` fields"
        ));
    }
    match kind {
        "at" => {
            let at = match (
                present(fields.at.as_deref()),
                fields.at_ms.filter(|v| !v.is_null()),
            ) {
                (Some(text), None) => AtSpec::Text(text.to_owned()),
                (None, Some(ms)) => AtSpec::Ms(int_field("atMs", &ms)?),
                (Some(_), Some(_)) => return Err("give `at` or `atMs`, not both".to_owned()),
                (None, None) => {
                    return Err("a schedule of kind `at` needs `at`: an ISO 8601 time such as `2026-05-01T09:00:00+02:00`".to_owned());
                }
            };
            Ok(ScheduleSpec::At { at, tz: fields.tz })
        }
        "every" => {
            let value = fields
                .every
                .filter(|v| !v.is_null())
                .ok_or("a schedule of kind `every` needs `everyMs`: the interval in milliseconds (3600000 = 1 hour)")?;
            Ok(ScheduleSpec::Every {
                every_ms: interval_field(&value)?,
            })
        }
        _ => {
            let expr = present(fields.expr.as_deref())
                .ok_or("a schedule of kind `cron` needs `expr`: 5 fields such as `0 9 * * 1-5`")?
                .to_owned();
            Ok(ScheduleSpec::Cron {
                expr,
                tz: fields.tz,
            })
        }
    }
}

/// An integer given as a number or a string.
fn int_field(name: &str, value: &Value) -> Result<i64, String> {
    let parsed = match value {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| {
                    #[expect(
                        clippy::cast_possible_truncation,
                        reason = "checked to be a small whole number"
                    )]
                    let i = f as i64;
                    i
                })
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    };
    parsed.ok_or_else(|| format!("`{name}` must be a whole number, got {value}"))
}

/// An interval: milliseconds as a number or string, or a duration with
/// units (`5m`).
fn interval_field(value: &Value) -> Result<u64, String> {
    let parsed = match value {
        Value::String(s) => parse_interval(s.trim().trim_start_matches("every").trim()),
        other => int_field("everyMs", other)
            .ok()
            .and_then(|i| u64::try_from(i).ok()),
    };
    parsed.ok_or_else(|| {
        format!("`everyMs` must be a number of milliseconds (e.g. 3600000) or a duration like `5m`, got {value}")
    })
}

/// A boolean given as a boolean, a string or 0/1.
fn bool_field(name: &str, value: Option<&Value>) -> Result<Option<bool>, String> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let parsed = match value {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_i64() {
            Some(1) => Some(true),
            Some(0) => Some(false),
            _ => None,
        },
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "y" | "1" | "on" => Some(true),
            "false" | "no" | "n" | "0" | "off" | "" => Some(false),
            _ => None,
        },
        _ => None,
    };
    parsed
        .map(Some)
        .ok_or_else(|| format!("`{name}` must be true or false, got {value}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn add(schedule: ScheduleSpec, kind: TaskKind) -> Request {
        Request::Add(AddRequest {
            name: None,
            schedule,
            kind,
            text: "water the plants".to_owned(),
            agent: None,
            delete_after_run: None,
        })
    }

    fn cron(expr: &str, tz: Option<&str>) -> ScheduleSpec {
        ScheduleSpec::Cron {
            expr: expr.to_owned(),
            tz: tz.map(str::to_owned),
        }
    }

    fn at(text: &str) -> ScheduleSpec {
        ScheduleSpec::At {
            at: AtSpec::Text(text.to_owned()),
            tz: None,
        }
    }

    fn every(ms: u64) -> ScheduleSpec {
        ScheduleSpec::Every { every_ms: ms }
    }

    fn parse(args: &Value) -> Result<Request, String> {
        serde_json::from_value::<CronArgs>(args.clone())
            .map_err(|e| format!("decode: {e}"))?
            .request()
    }

    const M: TaskKind = TaskKind::Message;

    /// Every shape below means the same as its canonical form.
    #[test]
    fn flattened_and_loose_arguments_are_recovered() {
        let madrid = Some("Europe/Madrid");
        let cases: Vec<(Value, Request)> = vec![
            // The canonical shape.
            (
                json!({"action": "add", "schedule": {"kind": "cron", "expr": "0 9 * * *", "tz": "Europe/Madrid"}, "text": "water the plants"}),
                add(cron("0 9 * * *", madrid), M),
            ),
            // Flattened: kind, expr, tz at the top level.
            (
                json!({"action": "add", "kind": "cron", "expr": "0 9 * * *", "tz": "Europe/Madrid", "text": "water the plants"}),
                add(cron("0 9 * * *", madrid), M),
            ),
            // Half flattened: tz outside, expr under its synonym.
            (
                json!({"action": "add", "schedule": {"kind": "cron", "cron": "0 9 * * *"}, "tz": "Europe/Madrid", "text": "water the plants"}),
                add(cron("0 9 * * *", madrid), M),
            ),
            // No kind at all: the fields decide.
            (
                json!({"action": "add", "cron": "0 9 * * *", "text": "water the plants"}),
                add(cron("0 9 * * *", None), M),
            ),
            // The same field in both places, agreeing.
            (
                json!({"action": "add", "schedule": {"expr": "0 9 * * *"}, "expr": "0 9 * * *", "text": "water the plants"}),
                add(cron("0 9 * * *", None), M),
            ),
            // Schedule as one string.
            (
                json!({"action": "add", "schedule": "0 9 * * 1-5", "tz": "Europe/Madrid", "text": "water the plants"}),
                add(cron("0 9 * * 1-5", madrid), M),
            ),
            (
                json!({"action": "add", "schedule": "@daily", "text": "water the plants"}),
                add(cron("@daily", None), M),
            ),
            (
                json!({"action": "add", "schedule": "every 2h", "text": "water the plants"}),
                add(every(7_200_000), M),
            ),
            (
                json!({"action": "add", "schedule": "2026-05-01T09:00:00+02:00", "text": "water the plants"}),
                add(at("2026-05-01T09:00:00+02:00"), M),
            ),
            // Intervals: numbers as strings, floats, units.
            (
                json!({"action": "add", "kind": "every", "everyMs": "300000", "text": "water the plants"}),
                add(every(300_000), M),
            ),
            (
                json!({"action": "add", "everyMs": 300_000.0, "text": "water the plants"}),
                add(every(300_000), M),
            ),
            (
                json!({"action": "add", "schedule": {"kind": "every", "every": "5m"}, "text": "water the plants"}),
                add(every(300_000), M),
            ),
            (
                json!({"action": "add", "schedule": {"kind": "interval"}, "every": 60000, "text": "water the plants"}),
                add(every(60_000), M),
            ),
            // `at`, flattened, and as milliseconds in a string.
            (
                json!({"action": "add", "at": "2026-05-01T09:00", "text": "water the plants"}),
                add(at("2026-05-01T09:00"), M),
            ),
            (
                json!({"action": "add", "schedule": {"kind": "at"}, "atMs": "1777618800000", "text": "water the plants"}),
                add(
                    ScheduleSpec::At {
                        at: AtSpec::Ms(1_777_618_800_000),
                        tz: None,
                    },
                    M,
                ),
            ),
            // The job's kind at the top level beside a flattened schedule.
            (
                json!({"action": "add", "kind": "message", "at": "2026-05-01T09:00", "text": "water the plants"}),
                add(at("2026-05-01T09:00"), M),
            ),
            // Synonyms, case and null fields.
            (
                json!({"action": " Create ", "schedule": {"kind": "CRON", "expr": "0 9 * * *", "tz": null}, "name": null, "text": "water the plants", "jobId": null}),
                add(cron("0 9 * * *", None), M),
            ),
            // Lists, removals, runs, status.
            (
                json!({"action": "list"}),
                Request::List {
                    include_disabled: false,
                },
            ),
            (
                json!({"action": "ls", "includeDisabled": "yes"}),
                Request::List {
                    include_disabled: true,
                },
            ),
            (
                json!({"action": "list", "includeDisabled": 1}),
                Request::List {
                    include_disabled: true,
                },
            ),
            (
                json!({"action": "remove", "jobId": 3}),
                Request::Remove(JobRef::Id(3)),
            ),
            (
                json!({"action": "delete", "jobId": "3"}),
                Request::Remove(JobRef::Id(3)),
            ),
            (
                json!({"action": "cancel", "jobId": "job-3"}),
                Request::Remove(JobRef::Id(3)),
            ),
            (
                json!({"action": "remove", "jobId": "#3"}),
                Request::Remove(JobRef::Id(3)),
            ),
            (
                json!({"action": "remove", "name": " Plants "}),
                Request::Remove(JobRef::Name("Plants".into())),
            ),
            (
                json!({"action": "run_now", "jobId": 7}),
                Request::Run(JobRef::Id(7)),
            ),
            (
                json!({"action": "Run-Now", "jobId": 7}),
                Request::Run(JobRef::Id(7)),
            ),
            (json!({"action": "status"}), Request::Status(None)),
            (
                json!({"action": "status", "jobId": 2}),
                Request::Status(Some(JobRef::Id(2))),
            ),
        ];
        for (args, expected) in cases {
            assert_eq!(parse(&args), Ok(expected), "{args}");
        }
    }

    #[test]
    fn job_kind_agent_and_delete_after_run() {
        let cases: &[(Value, TaskKind, Option<&str>, Option<bool>)] = &[
            (json!({"kind": "agent"}), TaskKind::Agent, None, None),
            (
                json!({"agent": "review"}),
                TaskKind::Agent,
                Some("review"),
                None,
            ),
            (
                json!({"kind": "task", "agent": "plan"}),
                TaskKind::Agent,
                Some("plan"),
                None,
            ),
            (json!({"kind": "reminder"}), TaskKind::Message, None, None),
            (
                json!({"deleteAfterRun": true}),
                TaskKind::Message,
                None,
                Some(true),
            ),
            (
                json!({"deleteAfterRun": "false"}),
                TaskKind::Message,
                None,
                Some(false),
            ),
            (
                json!({"deleteAfterRun": 0}),
                TaskKind::Message,
                None,
                Some(false),
            ),
        ];
        for (extra, kind, agent, delete) in cases {
            let mut args = json!({"action": "add", "cron": "0 9 * * *", "text": "x"});
            for (k, v) in extra.as_object().unwrap() {
                args[k] = v.clone();
            }
            let Ok(Request::Add(add)) = parse(&args) else {
                panic!("{args}");
            };
            assert_eq!(
                (add.kind, add.agent.as_deref(), add.delete_after_run),
                (*kind, *agent, *delete),
                "{args}"
            );
        }
    }

    #[test]
    fn what_cannot_be_recovered_is_refused_with_a_hint() {
        let cases: &[(Value, &str)] = &[
            (
                json!({"action": "frobnicate"}),
                "unknown action `frobnicate`; use add, list, remove, run or status",
            ),
            (
                json!({"action": "add", "text": "x"}),
                "add needs a schedule",
            ),
            (
                json!({"action": "add", "cron": "0 9 * * *"}),
                "add needs `text`",
            ),
            (
                json!({"action": "add", "cron": "0 9 * * *", "text": "  "}),
                "add needs `text`",
            ),
            (
                json!({"action": "add", "at": "2026-05-01T09:00", "everyMs": 60000, "text": "x"}),
                "give one schedule",
            ),
            (
                json!({"action": "add", "kind": "cron", "text": "x"}),
                "needs `expr`",
            ),
            (
                json!({"action": "add", "kind": "every", "text": "x"}),
                "needs `everyMs`",
            ),
            (
                json!({"action": "add", "kind": "at", "text": "x"}),
                "needs `at`",
            ),
            (
                json!({"action": "add", "kind": "cron", "everyMs": 60000, "text": "x"}),
                "the schedule is `cron` but fields of another kind",
            ),
            (
                json!({"action": "add", "kind": "weekly", "text": "x"}),
                "unknown kind `weekly`",
            ),
            (
                json!({"action": "add", "schedule": {"kind": "weekly"}, "text": "x"}),
                "unknown schedule kind `weekly`",
            ),
            (
                json!({"action": "add", "everyMs": "five minutes", "text": "x"}),
                "`everyMs` must be a number of milliseconds",
            ),
            (
                json!({"action": "add", "everyMs": -5, "text": "x"}),
                "`everyMs` must be a number",
            ),
            (
                json!({"action": "add", "atMs": "soon", "text": "x"}),
                "`atMs` must be a whole number",
            ),
            (
                json!({"action": "add", "schedule": {"tz": "UTC", "expr": "0 9 * * *"}, "tz": "Europe/Madrid", "text": "x"}),
                "`tz` is given twice",
            ),
            (
                json!({"action": "add", "expr": "0 9 * * *", "cron": "0 10 * * *", "text": "x"}),
                "`expr` and `cron` say different things",
            ),
            (
                json!({"action": "add", "cron": "0 9 * * *", "text": "x", "deleteAfterRun": "maybe"}),
                "`deleteAfterRun` must be true or false",
            ),
            (json!({"action": "remove"}), "remove needs `jobId`"),
            (json!({"action": "run", "name": " "}), "run needs `jobId`"),
            (
                json!({"action": "remove", "jobId": "plants"}),
                "is not a job id",
            ),
            (
                json!({"action": "add", "schedule": {"kind": "cron", "when": "9am"}, "text": "x"}),
                "decode:",
            ),
            (
                json!({"action": "add", "frequency": "daily", "text": "x"}),
                "unknown field `frequency`",
            ),
        ];
        for (args, expected) in cases {
            let error = parse(args).unwrap_err();
            assert!(error.contains(expected), "{args}: {error}");
        }
    }
}
