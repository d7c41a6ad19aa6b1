//! The task checks on an answer (rule 8 of the runner): what the task
//! names that the run has not looked at, created or renamed yet, the
//! change it asks for, the commands that must pass; and how a refused
//! answer goes back to the model.

use super::progress::{change_pending, missing, steered};
use super::{AgentRunner, MAX_CHECK_REFUSALS, Progress, State, Stop};
use crate::llm::{Message, Role};
use crate::runner::events::AgentEvent;
use crate::runner::report::Outcome;

impl AgentRunner {
    /// The task checks (rule 8): `None` when the answer may end the run,
    /// else the state after telling the model what is missing or failing.
    pub(super) async fn check_task(&self, step: u32, p: &mut Progress<'_>) -> Option<State> {
        if p.checks.is_empty() || steered(p) {
            return None;
        }
        let (files, commands) = missing(p);
        if !files.is_empty() || !commands.is_empty() {
            let quoted = |l: &[String]| {
                l.iter()
                    .map(|x| format!("`{x}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let mut missing = Vec::new();
            if !files.is_empty() {
                missing.push(format!("read {}", quoted(&files)));
            }
            if !commands.is_empty() {
                missing.push(format!("run {}", quoted(&commands)));
            }
            let reason = format!(
                "the task names what the run has not looked at yet: {}",
                missing.join("; ")
            );
            let told = format!(
                "Not done yet: your task names things you have not looked at. First {}, \
                 then answer from what you find.",
                missing.join(", and ")
            );
            return Some(self.refuse(step, p, reason, told).await);
        }
        let absent: Vec<String> = self
            .workspace
            .as_deref()
            .map(|root| p.checks.not_created(root))
            .unwrap_or_default()
            .into_iter()
            .map(|f| format!("`{f}`"))
            .collect();
        if !absent.is_empty() {
            let absent = absent.join(", ");
            let reason = format!("the task asks for {absent}, which does not exist");
            let told = format!(
                "Not done yet: the task asks for {absent}, and it does not exist. Create it \
                 with your tools, then answer."
            );
            return Some(self.refuse(step, p, reason, told).await);
        }
        if let Some(root) = self.workspace.as_deref()
            && let Some((rename, found)) = p.checks.leftovers(root).into_iter().next()
        {
            let places: Vec<String> = found
                .iter()
                .take(5)
                .map(|(file, lines)| {
                    let lines: Vec<String> = lines.iter().map(ToString::to_string).collect();
                    format!("`{file}` (line {})", lines.join(", "))
                })
                .collect();
            let (from, to) = (&rename.from, &rename.to);
            let reason = format!(
                "the task renames `{from}`, and it is still in {}",
                places.join(", ")
            );
            let told = format!(
                "Not done yet: the task renames `{from}` to `{to}`, and `{from}` is still in {}. \
                 Change it there too, then answer.",
                places.join(", ")
            );
            return Some(self.refuse(step, p, reason, told).await);
        }
        // A command that must pass says more than whether a file changed.
        if change_pending(p) && p.checks.must_pass.is_empty() {
            let reason = "the task asks for a change, and no file has changed".to_owned();
            let told = "Not done yet: the task asks for a change, and no file has changed. Make \
                        the change with your tools (write the file's whole new content), then \
                        answer."
                .to_owned();
            return Some(self.refuse(step, p, reason, told).await);
        }
        for (n, must) in p.checks.must_pass.clone().iter().enumerate() {
            let Some((passed, output)) = self.run_check(step, n, must, p.report).await else {
                self.emit(&AgentEvent::Warning {
                    message: format!(
                        "the task says `{}` must pass, but the agent has no tool that runs \
                         commands: not checked",
                        must.command
                    ),
                });
                continue;
            };
            if passed {
                continue;
            }
            let what = match &must.prints {
                Some(text) => format!("`{}` must pass and print `{text}`", must.command),
                None => format!("`{}` must pass", must.command),
            };
            let reason = format!("the task says {what}, and it does not");
            let told = format!(
                "Not finished: the task says {what}. I ran it and it does not:\n{output}\n\
                 Fix the cause, then answer again."
            );
            return Some(self.refuse(step, p, reason, told).await);
        }
        None
    }

    /// Whether the task names a file the run has not looked at yet, or a
    /// command it has not run and can: the next reply is held to tool
    /// calls (rule 8).
    pub(super) fn must_look(&self, p: &Progress<'_>) -> bool {
        if p.checks.is_empty() || steered(p) {
            return false;
        }
        let (files, commands) = missing(p);
        !files.is_empty() || (!commands.is_empty() && self.runs_commands()) || change_pending(p)
    }

    /// Refuses an answer for the task checks: the model is told `told`,
    /// up to [`MAX_CHECK_REFUSALS`] times; then the run ends
    /// [`Outcome::Unverified`] with `reason`.
    async fn refuse(&self, step: u32, p: &mut Progress<'_>, reason: String, told: String) -> State {
        self.emit(&AgentEvent::TaskCheck {
            step,
            reason: reason.clone(),
        });
        if p.check_refusals >= MAX_CHECK_REFUSALS {
            p.finish = None;
            p.report.error = Some(format!(
                "the run ended on an answer the task checks did not accept: {reason}"
            ));
            return State::Stopped(Stop::Done(Outcome::Unverified));
        }
        p.check_refusals += 1;
        Self::refuse_finish(p, told);
        self.next_step(step, p).await
    }

    /// Tells the model why the run did not end on its answer: as the
    /// result of its `finish` call when it made one, else as a user
    /// message.
    pub(super) fn refuse_finish(p: &mut Progress<'_>, text: String) {
        match p.finish.take() {
            Some(call) => p.messages.push(Message::tool_result(call.id, text)),
            None => p.messages.push(Message::text(Role::User, text)),
        }
    }
}
