//! The loop's own checks of a call before the gate: can it be read, may
//! the agent use the tool, are its arguments an object, and the task
//! checks on writes (a whole file the run has not read, a file the task
//! keeps, lines a task that only adds would lose).

use serde_json::Value;
use toolgate_core::{Effects, Registry, ToolCall};

use super::AgentRunner;
use super::decision::LoopDecision;
use super::report::RunReport;
use super::tools::{Ended, UNREADABLE_CALL};
use crate::checks::TaskChecks;
use crate::llm::ModelToolCall;
use crate::profile::FINISH;

impl AgentRunner {
    /// The loop's own checks of a call, before the gate: whether it could
    /// be read, whether the agent may use the tool, whether its arguments
    /// are a JSON object. A tool the registry does not have is left to the
    /// gate, whose first step refuses it (see [`through_gate`](Self::through_gate)).
    pub(super) fn admit(
        &self,
        registry: &Registry,
        c: &ModelToolCall,
        report: &RunReport,
        checks: &TaskChecks,
    ) -> Result<ToolCall, Ended> {
        if c.name == UNREADABLE_CALL {
            let reason = serde_json::from_str::<Value>(&c.arguments)
                .ok()
                .and_then(|v| v["error"].as_str().map(str::to_owned))
                .unwrap_or_default();
            return Err(Ended::refused(
                LoopDecision::UnreadableCall,
                &format!(
                    "your tool call could not be read: {reason}. Write one JSON object: \
                     {{\"name\": \"TOOL\", \"arguments\": {{...}}}}"
                ),
            ));
        }
        if c.name == FINISH && self.agent.is_small() {
            return Err(Ended::refused(
                LoopDecision::MalformedArguments,
                "call finish with your final answer as a string: {\"answer\": \"...\"}",
            ));
        }
        let known = registry.has(&c.name);
        if known && !self.agent.allows(registry, &c.name) {
            return Err(Ended::refused(
                LoopDecision::NotAllowed,
                &format!(
                    "tool `{}` is not available to agent `{}`",
                    c.name, self.agent.name
                ),
            ));
        }
        let raw = if c.arguments.trim().is_empty() {
            "{}"
        } else {
            &c.arguments
        };
        let arguments = match serde_json::from_str::<Value>(raw) {
            Ok(v) if v.is_object() => v,
            // The gate refuses an unknown tool before it reads arguments.
            _ if !known => Value::Null,
            Ok(_) => {
                return Err(Ended::refused(
                    LoopDecision::MalformedArguments,
                    "the arguments must be a JSON object",
                ));
            }
            Err(e) => {
                return Err(Ended::refused(
                    LoopDecision::MalformedArguments,
                    &format!(
                        "the arguments are not valid JSON ({e}); send a JSON object matching \
                         the tool's schema"
                    ),
                ));
            }
        };
        // What the call declares, worked out once for the checks on writes
        // below (the small profile's, and the files the task keeps).
        let declared = (self.agent.is_small() || !checks.keep.is_empty())
            .then(|| registry.get(&c.name).ok()?.tool().effects(&arguments).ok())
            .flatten()
            .unwrap_or_else(Effects::none);
        if self.agent.is_small()
            && let Some(path) = unread_overwrite(&declared, report)
        {
            return Err(Ended::refused(
                LoopDecision::UnreadOverwrite,
                &format!(
                    "`{path}` exists and you have not read it yet: writing its whole content \
                     now would lose what it holds. Read it first, then write its whole new \
                     content."
                ),
            ));
        }
        if self.agent.is_small()
            && checks.change
            && let Some(rewrite) = Rewrite::of(&declared, report, self.workspace.as_deref())
        {
            // The same write made before and run: the repeat rule answers it.
            let made_before = report.tool_calls.iter().any(|r| {
                r.name == c.name && r.arguments == c.arguments && r.decision.executed() && r.success
            });
            if !made_before && rewrite.changes_nothing() {
                return Err(Ended::refused(
                    LoopDecision::NoChange,
                    &format!(
                        "this content is what `{}` holds now (only spaces, blank lines or \
                         quotes differ): it changes nothing. Write the change the task asks for.",
                        rewrite.path
                    ),
                ));
            }
            let dropped = rewrite.dropped();
            if checks.adds_only && !dropped.is_empty() {
                return Err(Ended::refused(
                    LoopDecision::DroppedLines,
                    &lost_lines_note(&rewrite.path, &dropped),
                ));
            }
        }
        if let Some(path) = kept_write(&declared, checks) {
            return Err(Ended::refused(
                LoopDecision::KeptFile,
                &format!(
                    "the task says not to change `{path}`. Leave it as it is: make the change \
                     the task asks for in another file."
                ),
            ));
        }
        Ok(ToolCall::new(c.id.clone(), c.name.clone(), arguments))
    }
}

/// The existing file a call that declares `effects` would replace whole
/// (a declared write that does not create the file and removes lines)
/// that no call of the run that ran has read by its exact path or
/// written: the small profile's model writes whole files, and one it has
/// not read it writes from nothing.
fn unread_overwrite(effects: &Effects, report: &RunReport) -> Option<String> {
    effects.list().iter().find_map(|e| match e {
        toolgate_core::Effect::Write { path, change }
            if !change.creates && change.lines_removed > 0 && !seen(report, path) =>
        {
            Some(path.clone())
        }
        _ => None,
    })
}

/// `text` without white space, its single quotes made double: what two
/// writings of the same code share (a small model rewrites `"` as `'`).
fn bare(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| if c == '\'' { '"' } else { c })
        .collect()
}

/// What a model is told when its new content drops lines of a file for a
/// task that only adds: the first five lines, and how many more.
fn lost_lines_note(path: &str, dropped: &[String]) -> String {
    let shown: Vec<String> = dropped.iter().take(5).map(|l| format!("`{l}`")).collect();
    let more = match dropped.len() - shown.len() {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!(
        "the task only asks to add, and this content drops {} line(s) `{path}` has: {}{more}. \
         Write the whole file again: every line it has now, unchanged, plus what the task adds.",
        dropped.len(),
        shown.join(", ")
    )
}

/// Whether a call of the run that ran has read `file` by its exact path
/// or written it.
fn seen(report: &RunReport, file: &str) -> bool {
    report
        .tool_calls
        .iter()
        .filter(|c| c.decision.executed())
        .flat_map(|c| c.effects.list())
        .any(|e| match e {
            toolgate_core::Effect::Read { path, .. }
            | toolgate_core::Effect::Write { path, .. } => path == file,
            _ => false,
        })
}

/// The file the task says to keep (rule 7 of `checks`) that a call
/// declaring `effects` writes, if any.
fn kept_write(effects: &Effects, checks: &TaskChecks) -> Option<String> {
    effects
        .changed_paths()
        .into_iter()
        .find_map(|p| checks.kept(p).map(str::to_owned))
}

/// A whole new content a call declares for an existing file the run has
/// already seen (read or written by a call that ran), with what the file
/// holds now. Only a seen file: what a refusal shows of it (the lines it
/// would lose) the model has had already, so no check here tells it more
/// of a file than the gate let it read.
struct Rewrite {
    path: String,
    before: String,
    content: String,
}

impl Rewrite {
    fn of(
        effects: &Effects,
        report: &RunReport,
        workspace: Option<&std::path::Path>,
    ) -> Option<Self> {
        let root = workspace?;
        effects.list().iter().find_map(|e| match e {
            toolgate_core::Effect::Write { path, change }
                if !change.creates && seen(report, path) =>
            {
                Some(Self {
                    path: path.clone(),
                    before: std::fs::read_to_string(root.join(path)).ok()?,
                    content: change.content.clone()?,
                })
            }
            _ => None,
        })
    }

    /// Whether the new content is the file again but for white space and
    /// the kind of quotes: a small model that cannot make a change writes
    /// the file back and says it did.
    fn changes_nothing(&self) -> bool {
        bare(&self.content) == bare(&self.before)
    }

    /// The lines of the file the new content drops (rule 8 of `checks`):
    /// compared as [`bare`] text, so a line written again with other
    /// spacing or quotes is kept; blank lines aside.
    fn dropped(&self) -> Vec<String> {
        let kept: std::collections::HashSet<String> = self.content.lines().map(bare).collect();
        self.before
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !kept.contains(&bare(l)))
            .map(str::to_owned)
            .collect()
    }
}
