//! How the loop judges a run's progress, and what it tells the model next:
//! whether a person or a rule steered the run, what the task names that the
//! run has not looked at or run, whether a change is still pending, which
//! calls changed something, and the nudge after each step.

use serde_json::Value;
use toolgate_engine::Decision;

use super::{AgentRunner, Progress};
use crate::llm::Role;

/// Whether a person or a rule refused a call of the run, or nothing runs
/// (dry-run): the run is not free to do what the task names, and an
/// answer stands.
pub(super) fn steered(p: &Progress<'_>) -> bool {
    p.report.tool_calls.iter().any(|c| {
        [
            Decision::Denied,
            Decision::RuleDenied,
            Decision::NoApprover,
            Decision::DryRun,
        ]
        .iter()
        .any(|d| c.decision == (*d).into())
    })
}

/// The files the task names that the run has not looked at, and the
/// commands it names that the run has not run.
pub(super) fn missing(p: &Progress<'_>) -> (Vec<String>, Vec<String>) {
    let ran: Vec<_> = p
        .report
        .tool_calls
        .iter()
        .filter(|c| c.decision.executed())
        .map(|c| (&c.effects, c.arguments.as_str(), c.success))
        .collect();
    let (files, commands) = p.checks.missing(&ran);
    let owned = |l: Vec<&str>| l.into_iter().map(str::to_owned).collect();
    (owned(files), owned(commands))
}

/// Whether the task asks for a change (rule 6 of `checks`) and no call
/// of the model's changed something yet.
pub(super) fn change_pending(p: &Progress<'_>) -> bool {
    p.checks.change && !p.changed
}

impl AgentRunner {
    /// Whether a call that ran and succeeded changed something a task may
    /// ask for: it declared a write, or changed a file that is not a cache
    /// (running `python3` writes `__pycache__/`, which is no change a task
    /// asks for), or it is a tool that is not read-only and runs no command
    /// (it changed what is not a file: a tool it made, a note, a task).
    pub(super) fn changes_something(&self, c: &crate::runner::ToolCallRecord) -> bool {
        if !(c.decision.executed() && c.success) {
            return false;
        }
        let registry = self.engine.registry();
        let effects = c.effects.list();
        let only_reads = !effects.is_empty()
            && effects
                .iter()
                .all(|e| matches!(e, toolgate_core::Effect::Read { .. }));
        let changes_no_file = registry
            .get(&c.name)
            .is_ok_and(|t| !t.spec().annotations.read_only())
            && !only_reads
            && !effects
                .iter()
                .any(|e| matches!(e, toolgate_core::Effect::Command { .. }));
        changed_files(c) || changes_no_file
    }
}

/// Whether a call ran, succeeded and changed a file that is not a cache:
/// one it declared a write to, or one the gate saw change (a command).
pub(in crate::runner) fn changed_files(c: &crate::runner::ToolCallRecord) -> bool {
    c.decision.executed()
        && c.success
        && (!c.effects.changed_paths().is_empty()
            || c.files_changed.iter().any(|f| !is_cache(&f.path)))
}

/// Whether `path` (workspace-relative, `/`-separated) is in a cache a
/// tool writes on its own: `__pycache__/`, `.pytest_cache/`, `.cache/`,
/// a `.pyc` file.
pub(in crate::runner) fn is_cache(path: &str) -> bool {
    std::path::Path::new(path)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("pyc"))
        || path
            .split('/')
            .any(|c| c == "__pycache__" || c == ".cache" || c.ends_with("_cache"))
}

/// What the small profile tells the model after a call that ran and
/// succeeded (or ran and failed, while the change is to make), at the end
/// of its result (the last of the results from
/// `before` on): the next move the task needs — the change it asks for,
/// or `finish` (rule 7 of the runner). A small model that is not told
/// tends to make the same call again. While a file the task names is
/// unread, the move is to read it: a model that changes a file it has not
/// read writes it from nothing.
pub(super) fn next_move(p: &mut Progress<'_>, before: usize) {
    let (unread, _) = missing(p);
    let read_first = unread
        .first()
        .map(|f| format!("Next: read `{f}`, which the task names."))
        .or_else(|| (change_pending(p) && !looked_inside(p)).then(|| NEXT_LOOK.to_owned()));
    let next = if change_pending(p) {
        NEXT_CHANGE
    } else if p.checks.change {
        NEXT_DONE
    } else {
        NEXT_ANSWER
    };
    // Once changed, a command the task says must pass is the check to
    // make before `finish`.
    let check = p
        .checks
        .must_pass
        .first()
        .filter(|_| next == NEXT_DONE)
        .map(|m| {
            format!(
                "Next: run `{}`; if it passes, call finish with a short summary.",
                m.command
            )
        });
    let read_first = read_first.or(check);
    let Some(last) = p.messages[before..]
        .iter_mut()
        .rev()
        .find(|m| m.role == Role::Tool)
    else {
        return;
    };
    // Ids are unique within a reply only: the result's call is the latest
    // record with its id.
    let ran = p
        .report
        .tool_calls
        .iter()
        .rev()
        .find(|c| Some(&c.id) == last.tool_call_id.as_ref())
        .map(|c| (c.decision.executed(), c.success));
    // A call that failed (a test that fails) tells a task asking for a
    // change what to change; for a question it answers nothing.
    match ran {
        Some((true, true)) => {}
        Some((true, false)) if next == NEXT_CHANGE => {}
        _ => return,
    }
    last.content.push('\n');
    last.content.push_str(read_first.as_deref().unwrap_or(next));
}

/// Whether a call that ran has read a file's content or searched the
/// files (arguments with a `pattern`): a listing shows names only, and a
/// model that changes files after a listing writes them from nothing.
fn looked_inside(p: &Progress<'_>) -> bool {
    p.report
        .tool_calls
        .iter()
        .filter(|c| c.decision.executed() && c.success)
        .any(|c| {
            c.effects
                .list()
                .iter()
                .any(|e| matches!(e, toolgate_core::Effect::Read { tree: false, .. }))
                || serde_json::from_str::<Value>(&c.arguments)
                    .is_ok_and(|v| v.get("pattern").is_some())
        })
}

/// [`next_move`] while the task asks for a change and the run has only
/// listed files.
pub(super) const NEXT_LOOK: &str = "Next: look inside the files the task is about: search \
    them with search_code, or read one with read_file. Do not write before you have seen what \
    they hold.";

/// [`next_move`] while the task asks for a change not made yet.
pub(super) const NEXT_CHANGE: &str = "Next: if you have what you need, make the change the \
    task asks for now: write the file's whole new content with write_file. Else make the next call.";

/// [`next_move`] once the change is made.
pub(super) const NEXT_DONE: &str =
    "If the task is done, call finish with a short summary. Else make the next call.";

/// [`next_move`] for a task that asks no change.
pub(super) const NEXT_ANSWER: &str = "If this answers the task, call finish with the answer now.";

/// The answer of a `finish` call's arguments, when they hold one.
pub(super) fn finish_answer(arguments: &str) -> Option<String> {
    let v: Value = serde_json::from_str(arguments).ok()?;
    v.get("answer")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::is_cache;

    #[test]
    fn caches_are_no_change_a_task_asks_for() {
        let cases: &[(&str, bool)] = &[
            ("src/__pycache__/calc.cpython-311.pyc", true),
            ("__pycache__", true),
            ("calc.pyc", true),
            (".pytest_cache/v/cache/lastfailed", true),
            ("node/.cache/x", true),
            ("src/calc.py", false),
            ("TODO.md", false),
            ("src/cache.py", false),
        ];
        for (path, cache) in cases {
            assert_eq!(is_cache(path), *cache, "{path}");
        }
    }
}
