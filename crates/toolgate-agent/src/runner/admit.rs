//! The loop's own checks of a call before the gate: can it be read, may
//! the agent use the tool, are its arguments an object, and the task
//! checks on writes (a whole file the run has not read, a file the task
//! keeps, lines a task that only adds would lose).

use serde_json::Value;
use toolgate_core::{Registry, ToolCall};

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
        if self.agent.is_small()
            && let Some(path) = unread_overwrite(registry, &c.name, &arguments, report)
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
        // The same write made before and run: the repeat rule answers it.
        let made_before = || {
            report.tool_calls.iter().any(|r| {
                r.name == c.name && r.arguments == c.arguments && r.decision.executed() && r.success
            })
        };
        if self.agent.is_small()
            && checks.change
            && !made_before()
            && let Some(path) =
                same_content(registry, &c.name, &arguments, self.workspace.as_deref())
        {
            return Err(Ended::refused(
                LoopDecision::NoChange,
                &format!(
                    "this content is what `{path}` holds now (only spaces, blank lines or \
                     quotes differ): it changes nothing. Write the change the task asks for."
                ),
            ));
        }
        if self.agent.is_small()
            && checks.adds_only
            && let Some((path, dropped)) =
                dropped_lines(registry, &c.name, &arguments, self.workspace.as_deref())
        {
            let shown: Vec<String> = dropped.iter().take(5).map(|l| format!("`{l}`")).collect();
            let more = dropped.len().saturating_sub(shown.len());
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            return Err(Ended::refused(
                LoopDecision::DroppedLines,
                &format!(
                    "the task only asks to add, and this content drops {} line(s) `{path}` has: \
                     {}{more}. Write the whole file again: every line it has now, unchanged, \
                     plus what the task adds.",
                    dropped.len(),
                    shown.join(", ")
                ),
            ));
        }
        if let Some(path) = kept_write(registry, &c.name, &arguments, checks) {
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

/// The existing file a call of `name` with `arguments` would replace
/// whole (a declared write that does not create the file and removes
/// lines) that no call of the run that ran has read by its exact path or
/// written: the small profile's model writes whole files, and one it has
/// not read it writes from nothing.
fn unread_overwrite(
    registry: &Registry,
    name: &str,
    arguments: &Value,
    report: &RunReport,
) -> Option<String> {
    let effects = registry.get(name).ok()?.tool().effects(arguments).ok()?;
    let seen = |file: &str| {
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
    };
    effects.list().iter().find_map(|e| match e {
        toolgate_core::Effect::Write { path, change }
            if !change.creates && change.lines_removed > 0 && !seen(path) =>
        {
            Some(path.clone())
        }
        _ => None,
    })
}

/// The file the task says to keep (rule 7 of `checks`) that a call
/// declares a write to, if any.
fn kept_write(
    registry: &Registry,
    name: &str,
    arguments: &Value,
    checks: &TaskChecks,
) -> Option<String> {
    if checks.keep.is_empty() {
        return None;
    }
    let effects = registry.get(name).ok()?.tool().effects(arguments).ok()?;
    effects
        .changed_paths()
        .into_iter()
        .find_map(|p| checks.kept(p).map(str::to_owned))
}

/// The existing file a call declares a whole new content for that is the
/// file's content again but for white space and the kind of quotes: a
/// small model that cannot make a change writes the file back and says it
/// did.
fn same_content(
    registry: &Registry,
    name: &str,
    arguments: &Value,
    workspace: Option<&std::path::Path>,
) -> Option<String> {
    let root = workspace?;
    let effects = registry.get(name).ok()?.tool().effects(arguments).ok()?;
    let bare = |text: &str| -> String {
        text.chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| if c == '\'' { '"' } else { c })
            .collect()
    };
    effects.list().iter().find_map(|e| match e {
        toolgate_core::Effect::Write { path, change } if !change.creates => {
            let content = change.content.as_deref()?;
            let before = std::fs::read_to_string(root.join(path)).ok()?;
            (bare(content) == bare(&before)).then(|| path.clone())
        }
        _ => None,
    })
}

/// The file a call declares a whole new content for, with the lines of it
/// that the content drops (rule 8 of `checks`: compared without the white
/// space at their ends, blank lines aside), when it drops any.
fn dropped_lines(
    registry: &Registry,
    name: &str,
    arguments: &Value,
    workspace: Option<&std::path::Path>,
) -> Option<(String, Vec<String>)> {
    let root = workspace?;
    let effects = registry.get(name).ok()?.tool().effects(arguments).ok()?;
    effects.list().iter().find_map(|e| match e {
        toolgate_core::Effect::Write { path, change } if !change.creates => {
            let content = change.content.as_deref()?;
            let before = std::fs::read_to_string(root.join(path)).ok()?;
            let kept: std::collections::HashSet<&str> = content.lines().map(str::trim).collect();
            let dropped: Vec<String> = before
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !kept.contains(l))
                .map(str::to_owned)
                .collect();
            (!dropped.is_empty()).then(|| (path.clone(), dropped))
        }
        _ => None,
    })
}
