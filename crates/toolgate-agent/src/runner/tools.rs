//! The tool calls of one step: through the gate, then into the
//! conversation and the report.

use std::fmt::Write as _;

use serde_json::{Value, json};
use toolgate_core::{Effects, PathChange, Registry, ToolCall};
use toolgate_engine::{ApprovalRecord, Decision, Execution, PLAN_METADATA, PlanRecord};

use super::decision::{CallDecision, LoopDecision};
use super::events::{AgentEvent, ToolCallRecord};
use super::report::RunReport;
use super::{AgentRunner, truncate_head_tail};
use crate::checks::{MustPass, TaskChecks};
use crate::llm::{Message, ModelToolCall, Role};
use crate::profile::{SMALL_OUTPUT_CHARS, trim_lines};
use crate::recover::TextCall;

/// The name given to a recovered call that could not be read, so that its
/// tool error reaches the model in proper tool-call form.
pub(super) const UNREADABLE_CALL: &str = "unreadable_tool_call";

/// A call found in the model's text, as a structured call.
pub(super) fn text_call(step: u32, n: usize, call: TextCall) -> ModelToolCall {
    let id = format!("recovered_{step}_{n}");
    match call {
        TextCall::Call { name, arguments } => ModelToolCall {
            id,
            name,
            arguments,
        },
        TextCall::Malformed { reason } => ModelToolCall {
            id,
            name: UNREADABLE_CALL.to_owned(),
            arguments: json!({ "error": reason }).to_string(),
        },
    }
}

/// A call as repeats are told apart: its tool and its arguments as
/// canonical JSON, so spacing and key order do not hide a repeat.
fn call_key(name: &str, arguments: &str) -> (String, String) {
    let canonical = serde_json::from_str::<Value>(arguments)
        .map_or_else(|_| arguments.to_owned(), |v| v.to_string());
    (name.to_owned(), canonical)
}

/// The calls of one reply that run, and the ones that do not with why:
/// each distinct call (tool and canonical arguments) once, in the order
/// the model made them, then at most `cap` of them.
pub(super) fn sift(
    calls: Vec<ModelToolCall>,
    cap: usize,
) -> (Vec<ModelToolCall>, Vec<(ModelToolCall, LoopDecision)>) {
    let mut seen = std::collections::HashSet::new();
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    for c in calls {
        if !seen.insert(call_key(&c.name, &c.arguments)) {
            dropped.push((c, LoopDecision::Duplicate));
        } else if kept.len() >= cap {
            dropped.push((c, LoopDecision::OverCallLimit));
        } else {
            kept.push(c);
        }
    }
    (kept, dropped)
}

/// What the model is told about the calls of its reply that did not run.
pub(super) fn dropped_note(dropped: &[(ModelToolCall, LoopDecision)], cap: usize) -> String {
    let count = |d: LoopDecision| {
        let mut names: Vec<(String, usize)> = Vec::new();
        for (c, _) in dropped.iter().filter(|(_, why)| *why == d) {
            match names.iter_mut().find(|(n, _)| *n == c.name) {
                Some((_, k)) => *k += 1,
                None => names.push((c.name.clone(), 1)),
            }
        }
        names
            .iter()
            .map(|(n, k)| format!("`{n}` x{k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut note = String::new();
    let duplicates = count(LoopDecision::Duplicate);
    if !duplicates.is_empty() {
        let _ = write!(
            note,
            "Your reply made the same call more than once ({duplicates} more): each call ran \
             once. "
        );
    }
    let over = count(LoopDecision::OverCallLimit);
    if !over.is_empty() {
        let _ = write!(
            note,
            "At most {cap} calls of one reply run; these did not: {over}. Make the calls you \
             still need in your next reply. "
        );
    }
    note.trim_end().to_owned()
}

/// Identical calls in a row (same tool, same arguments), one per step: the
/// same call twice in one step is one call made twice at once, not a loop.
/// Also the last call that changed something, which is not run again
/// while nothing else changed.
#[derive(Debug, Default)]
pub(super) struct Repeats {
    last: Option<(String, String)>,
    /// The step the last call was made in.
    step: u32,
    /// How many steps in a row made the last call.
    pub(super) count: u32,
    /// The last call of a tool that is not read-only that ran and
    /// succeeded: its key, its step and its result.
    change: Option<((String, String), u32, String)>,
    /// The calls made since a call last changed a file, with their step.
    since_change: Vec<((String, String), u32)>,
    /// The tool of the last step's call that repeated one made since the
    /// last change (not the step before it: that is [`count`](Self::count)),
    /// and that step.
    again: Option<(String, u32)>,
    /// How many steps in a row made a call they had made since the last
    /// change, in a row or not (a loop of two reads and a command).
    pub(super) stale: u32,
    /// The last step counted in [`stale`](Self::stale).
    stale_at: Option<u32>,
}

impl Repeats {
    /// The result of the same changing call made earlier, when no other
    /// changing call ran since: (its step, its result).
    fn earlier_change(&self, name: &str, arguments: &str) -> Option<(u32, &str)> {
        let (key, step, text) = self.change.as_ref()?;
        (*key == call_key(name, arguments)).then_some((*step, text.as_str()))
    }

    /// The step of the last changing call that ran and succeeded and is
    /// not to run again, if any.
    pub(super) fn change_step(&self) -> Option<u32> {
        self.change.as_ref().map(|(_, step, _)| *step)
    }

    /// Remembers a changing call that went through the gate: one that ran
    /// and succeeded is not run again; after any other, the next changing
    /// call runs.
    fn changed(&mut self, step: u32, name: &str, arguments: &str, ended: &Ended) {
        self.change = (ended.decision.executed() && ended.success)
            .then(|| (call_key(name, arguments), step, ended.text.clone()));
    }

    /// A call of step `step` changed a file: what was made before may
    /// give another result now.
    pub(super) fn files_changed(&mut self, step: u32) {
        self.since_change.retain(|(_, s)| *s == step);
        self.stale = 0;
        self.stale_at = None;
    }

    /// The tools step `step` may not call when replies are constrained
    /// (rule 6): the one whose call the step before made for at least the
    /// second time in a row, and the one whose call the step before made
    /// again since the last change.
    pub(super) fn barred(&self, step: u32) -> Vec<String> {
        let mut barred = Vec::new();
        if let Some((name, _)) = &self.last
            && self.count >= 2
            && self.step + 1 == step
        {
            barred.push(name.clone());
        }
        if let Some((name, at)) = &self.again
            && at + 1 == step
            && !barred.contains(name)
        {
            barred.push(name.clone());
        }
        barred
    }

    /// Counts step `step` as one that repeated a call (once a step).
    fn stale_step(&mut self, step: u32) {
        match self.stale_at {
            Some(at) if at == step => {}
            Some(at) if at + 1 == step => self.stale += 1,
            _ => self.stale = 1,
        }
        self.stale_at = Some(step);
    }

    /// Counts the call; from its second step in a row, the result the model
    /// sees starts by saying so, and so does the result of a call made
    /// again since the last change.
    pub(super) fn note(&mut self, step: u32, name: &str, arguments: &str, text: String) -> String {
        let key = call_key(name, arguments);
        let earlier = self
            .since_change
            .iter()
            .find(|(k, s)| *k == key && *s < step)
            .map(|(_, s)| *s);
        if !self.since_change.iter().any(|(k, _)| *k == key) {
            self.since_change.push((key.clone(), step));
        }
        if earlier.is_some() {
            self.again = Some((name.to_owned(), step));
            self.stale_step(step);
        }
        if self.last.as_ref() != Some(&key) {
            self.last = Some(key);
            self.step = step;
            self.count = 1;
            return match earlier {
                Some(at) => format!(
                    "[You made this same call at step {at}, and no file has changed since: \
                     the result is the same. Do not call it again: use what it gave. Next, do \
                     what the task asks with it: change a file, or give your answer.]\n{text}"
                ),
                None => text,
            };
        }
        if self.step != step {
            self.step = step;
            self.count += 1;
        }
        if self.count < 2 {
            return text;
        }
        self.stale_step(step);
        format!(
            "[You already called `{name}` with these arguments {} times in a row, and the \
             result is the same as before. Do not call it again: you have what it gives. \
             Next, do what the task asks with it: change a file, run a command, or give \
             your answer.]\n{text}",
            self.count - 1
        )
    }
}

impl AgentRunner {
    /// The agent's tools as a call to an unknown tool lists them: names,
    /// then one line per tool with the first sentence of its description,
    /// so a small model can pick the right one next time.
    fn tool_menu(&self, registry: &Registry) -> String {
        let names = self.agent.tool_names(registry);
        let mut menu = names.join(", ");
        menu.push_str(". Call one of them by its exact name:");
        for name in &names {
            let Ok(tool) = registry.get(name) else {
                continue;
            };
            let first = toolgate_core::first_sentence(&tool.spec().description);
            let _ = write!(menu, "\n- {name}: {first}");
        }
        menu
    }

    /// Runs the calls of one step; returns whether the person aborted.
    /// `recovered`: the calls were written as text and recovered.
    ///
    /// Each call is admitted by the loop ([`admit`](Self::admit)) and then
    /// goes through the gate, concurrently when every call was admitted and
    /// is read-only, in order otherwise (after an abort the rest do not
    /// run). Each call's outcome is recorded, in call order.
    #[expect(
        clippy::too_many_arguments,
        reason = "the step's calls and what they read and write; a struct of them would only be taken apart here"
    )]
    pub(super) async fn run_tools(
        &self,
        step: u32,
        calls: &[ModelToolCall],
        recovered: bool,
        messages: &mut Vec<Message>,
        report: &mut RunReport,
        repeats: &mut Repeats,
        checks: &TaskChecks,
    ) -> bool {
        let registry = self.engine.registry().clone();
        // Each call with what the loop made of it, then with how it ended.
        let admitted: Vec<(&ModelToolCall, Result<ToolCall, Ended>)> = calls
            .iter()
            .map(|c| (c, self.admit(&registry, c, report, checks)))
            .collect();
        let concurrent = admitted.iter().all(|(_, a)| {
            a.as_ref().is_ok_and(|c| {
                registry
                    .get(&c.name)
                    .is_ok_and(|t| t.spec().annotations.read_only_hint == Some(true))
            })
        });
        let ended: Vec<(&ModelToolCall, Ended)> = if concurrent {
            let registry = &registry;
            let gated = admitted.into_iter().map(|(c, a)| async move {
                match a {
                    Ok(call) => (c, self.through_gate(registry, call).await),
                    Err(refused) => (c, refused),
                }
            });
            futures_util::future::join_all(gated).await
        } else {
            let mut ended = Vec::with_capacity(calls.len());
            let mut aborted = false;
            for (c, a) in admitted {
                let changes = registry
                    .get(&c.name)
                    .is_ok_and(|t| !t.spec().annotations.read_only());
                let e = match a {
                    Err(refused) => refused,
                    Ok(_) if aborted => {
                        Ended::refused(LoopDecision::NotRun, "not run: the run was aborted")
                    }
                    Ok(_)
                        if let Some((when, earlier)) =
                            repeats.earlier_change(&c.name, &c.arguments) =>
                    {
                        Ended::repeated(&c.name, when, earlier)
                    }
                    Ok(call) => {
                        let e = self.through_gate(&registry, call).await;
                        // A call that changes something: a tool that is not
                        // read-only, and a call whose declared effects are
                        // more than reads (`process` polling is not).
                        if changes && !e.effects.is_read_only() {
                            repeats.changed(step, &c.name, &c.arguments, &e);
                        }
                        e
                    }
                };
                aborted |= e.decision == CallDecision::Gate(Decision::Aborted);
                ended.push((c, e));
            }
            ended
        };
        let aborted = ended
            .iter()
            .any(|(_, e)| e.decision == CallDecision::Gate(Decision::Aborted));
        let mut unreadable: Vec<String> = Vec::new();
        for (c, e) in ended {
            if e.success && e.decision.executed() {
                report
                    .files_changed
                    .extend(e.effects.changed_paths().into_iter().map(str::to_owned));
            }
            let captured = e.captured.map(|c| *c).unwrap_or_default();
            report
                .files_changed
                .extend(captured.changes.iter().map(|c| c.path.clone()));
            let mut text = if self.agent.is_small() {
                trim_lines(&e.text, self.max_output_chars.min(SMALL_OUTPUT_CHARS))
            } else {
                truncate_head_tail(&e.text, self.max_output_chars)
            };
            if e.decision.executed()
                && let Some(more) = self
                    .instructions
                    .as_ref()
                    .and_then(|i| i.on_tool_used(&c.name))
            {
                text.push_str("\n\n");
                text.push_str(&more);
            }
            let text = repeats.note(step, &c.name, &c.arguments, text);
            let record = ToolCallRecord {
                step,
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
                decision: e.decision,
                success: e.success,
                duration_ms: e.duration_ms,
                output: text.clone(),
                effects: e.effects.summary(),
                recovered,
                waited_ms: e.approval.as_ref().map_or(0, |a| {
                    u64::try_from(a.waited.as_millis()).unwrap_or(u64::MAX)
                }),
                approval: e.approval.and_then(|a| serde_json::to_value(a).ok()),
                files_changed: captured.changes,
                changed_before: captured.changed_before,
                capture_error: captured.error,
            };
            if super::steps::changed_files(&record) {
                repeats.files_changed(step);
            }
            self.emit(&AgentEvent::ToolCall(record.clone()));
            if let Some(plan) = e.plan {
                self.emit(&AgentEvent::Plan(*plan));
            }
            report.tool_calls.push(record);
            if c.name == UNREADABLE_CALL {
                unreadable.push(text);
            } else {
                messages.push(Message::tool_result(c.id.clone(), text));
            }
        }
        if !unreadable.is_empty() {
            messages.push(Message::text(Role::User, unreadable.join("\n")));
        }
        aborted
    }

    /// Runs the command a task says must pass (`must`, the `n`-th) through
    /// the gate with the agent's tool that runs commands, recorded like
    /// the model's calls: whether it passed (ran, succeeded and printed
    /// what it must), and its output as the model sees it. `None` when
    /// the agent has no tool that runs commands.
    pub(super) async fn run_check(
        &self,
        step: u32,
        n: usize,
        must: &MustPass,
        report: &mut RunReport,
    ) -> Option<(bool, String)> {
        let registry = self.engine.registry().clone();
        let tool = self.command_tool(&registry)?;
        let arguments = json!({ "command": must.command });
        let id = format!("check_{step}_{n}");
        let (ok, raw, text) = self
            .own_call(step, id, tool.name(), arguments, report)
            .await;
        let passed = ok
            && must
                .prints
                .as_ref()
                .is_none_or(|p| raw.contains(p.as_str()));
        Some((passed, text))
    }

    /// A call the runtime makes for the model (a check, a first look),
    /// through the gate like any other, recorded as a call of step `step`
    /// with `id`: whether it ran and succeeded, its whole output, and the
    /// output cut as the small profile cuts it.
    pub(super) async fn own_call(
        &self,
        step: u32,
        id: String,
        name: &str,
        arguments: Value,
        report: &mut RunReport,
    ) -> (bool, String, String) {
        let registry = self.engine.registry().clone();
        let call = ToolCall::new(id.clone(), name, arguments.clone());
        let e = self.through_gate(&registry, call).await;
        let ok = e.decision.executed() && e.success;
        let text = trim_lines(&e.text, self.max_output_chars.min(SMALL_OUTPUT_CHARS));
        let captured = e.captured.map(|c| *c).unwrap_or_default();
        report
            .files_changed
            .extend(captured.changes.iter().map(|c| c.path.clone()));
        let record = ToolCallRecord {
            step,
            id,
            name: name.to_owned(),
            arguments: arguments.to_string(),
            decision: e.decision,
            success: e.success,
            duration_ms: e.duration_ms,
            output: text.clone(),
            effects: e.effects.summary(),
            recovered: false,
            waited_ms: 0,
            approval: e.approval.and_then(|a| serde_json::to_value(a).ok()),
            files_changed: captured.changes,
            changed_before: captured.changed_before,
            capture_error: captured.error,
        };
        self.emit(&AgentEvent::ToolCall(record.clone()));
        report.tool_calls.push(record);
        (ok, e.text, text)
    }

    /// The agent's tool that runs commands, if it has one.
    fn command_tool(
        &self,
        registry: &Registry,
    ) -> Option<std::sync::Arc<toolgate_core::RegisteredTool>> {
        registry
            .list()
            .into_iter()
            .find(|t| t.spec().annotations.runs_commands && self.agent.allows(registry, t.name()))
    }

    /// Whether the agent has a tool that runs commands.
    pub(super) fn runs_commands(&self) -> bool {
        self.command_tool(self.engine.registry()).is_some()
    }

    /// Records the calls of step `step`'s reply that did not run (see
    /// [`sift`]): in the report and the events, not in the conversation.
    pub(super) fn record_dropped(
        &self,
        step: u32,
        dropped: &[(ModelToolCall, LoopDecision)],
        recovered: bool,
        report: &mut RunReport,
    ) {
        for (c, why) in dropped {
            let output = match why {
                LoopDecision::Duplicate => "not run: the same call came earlier in this reply",
                _ => "not run: the reply made more calls than one reply may",
            };
            let record = ToolCallRecord {
                step,
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
                decision: (*why).into(),
                success: false,
                duration_ms: 0,
                output: output.to_owned(),
                effects: Effects::none(),
                recovered,
                waited_ms: 0,
                approval: None,
                files_changed: Vec::new(),
                changed_before: Vec::new(),
                capture_error: None,
            };
            self.emit(&AgentEvent::ToolCall(record.clone()));
            report.tool_calls.push(record);
        }
    }

    /// One call through the gate. An unknown tool's error lists the
    /// agent's tools, one line each, for the model's next try.
    pub(super) async fn through_gate(&self, registry: &Registry, call: ToolCall) -> Ended {
        let name = call.name.clone();
        let execution = self.engine.execute(call).await;
        let mut ended = Ended::from(execution);
        if ended.decision == CallDecision::Gate(Decision::NotFound) {
            ended.text = format!(
                "error: unknown tool `{name}`; available tools: {}",
                self.tool_menu(registry)
            );
        }
        ended
    }
}

/// How one call of a step ended, at the gate or before it.
pub(super) struct Ended {
    decision: CallDecision,
    success: bool,
    /// What the model sees, before truncation.
    text: String,
    duration_ms: u64,
    /// What the call was declared to do (with write contents).
    effects: Effects,
    approval: Option<ApprovalRecord>,
    /// A plan the person answered, when the tool put one to them (boxed:
    /// rare, and large beside the rest).
    plan: Option<Box<PlanRecord>>,
    /// What the gate captured (boxed: most calls capture nothing).
    captured: Option<Box<Captured>>,
}

/// What the gate captured around a call: what it changed, what changed
/// before it, or why the capture failed.
#[derive(Default)]
struct Captured {
    changes: Vec<PathChange>,
    changed_before: Vec<PathChange>,
    error: Option<String>,
}

impl Ended {
    /// A call the loop refused: the model sees `error: MESSAGE`.
    pub(super) fn refused(decision: LoopDecision, message: &str) -> Self {
        Self {
            decision: decision.into(),
            success: false,
            text: format!("error: {message}"),
            duration_ms: 0,
            effects: Effects::none(),
            approval: None,
            plan: None,
            captured: None,
        }
    }
}

impl Ended {
    /// A changing call made again with nothing changed since step `when`:
    /// not run, the earlier result returned.
    fn repeated(name: &str, when: u32, earlier: &str) -> Self {
        Self {
            decision: LoopDecision::RepeatedChange.into(),
            success: false,
            text: format!(
                "[Not run again: you made this same `{name}` call in step {when} and nothing \
                 has changed since; running it again would repeat its change. Its result then \
                 was:]\n{earlier}"
            ),
            duration_ms: 0,
            effects: Effects::none(),
            approval: None,
            plan: None,
            captured: None,
        }
    }
}

impl From<Execution> for Ended {
    fn from(ex: Execution) -> Self {
        Self {
            decision: ex.decision.into(),
            success: ex.result.success,
            text: ex.result.to_model_text(),
            duration_ms: u64::try_from(ex.duration.as_millis()).unwrap_or(u64::MAX),
            plan: ex
                .result
                .metadata
                .get(PLAN_METADATA)
                .and_then(|v| serde_json::from_value(v.clone()).ok())
                .map(Box::new),
            effects: ex.effects,
            approval: ex.approval,
            captured: (!ex.changes.is_empty()
                || !ex.changed_before.is_empty()
                || ex.capture_error.is_some())
            .then(|| {
                Box::new(Captured {
                    changes: ex.changes,
                    changed_before: ex.changed_before,
                    error: ex.capture_error,
                })
            }),
        }
    }
}
