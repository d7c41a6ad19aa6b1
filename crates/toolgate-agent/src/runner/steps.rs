//! The step loop as a state machine.
//!
//! A run moves through named [`State`]s; [`AgentRunner::transition`] holds
//! every transition, one method per state, each returning the next state:
//!
//! - `Prepare(n)` → `Ask(n)`, or `Stopped`: interrupted, budget spent, a
//!   `pre_llm_call` hook blocked, or `n` past `max_steps`.
//! - `Ask(n)` → `Answered(n)`, or `Stopped`: the deadline, an interrupt,
//!   the model call failed.
//! - `Answered(n)` → `Calling(n)` (tool calls), `Finishing(n)` (an answer),
//!   or `Prepare(n+1)` (the run's first empty reply, nudged).
//! - `Finishing(n)` → `Stopped` (done), or `Prepare(n+1)` (a required
//!   quality gate failed).
//! - `Calling(n)` → `Prepare(n+1)`, or `Stopped`: the person aborted, the
//!   call repeats, the deadline.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::{Value, json};
use toolgate_core::{Registry, SchemaFormat, error_chain};

use super::decision::LoopDecision;
use super::events::AgentEvent;
use super::lifecycle::LifecycleEvent;
use super::report::{Outcome, RunReport};
use super::run::{Asked, Journal, Stop};
use super::tools::{Repeats, UNREADABLE_CALL, dropped_note, sift, text_call};
use super::{AgentRunner, EMPTY_REPLY_NUDGE, sleep_until};
use crate::checks::{TaskChecks, on_path};
use crate::context::{ENVELOPE_BYTES, fit, messages_bytes};
use crate::llm::{LlmError, LlmResponse, Message, ModelToolCall, Role};
use crate::profile::FINISH;

/// How many answers the task checks refuse before the run ends
/// [`Outcome::Unverified`].
pub(super) const MAX_CHECK_REFUSALS: u32 = 3;

/// How many steps a run's replies may be held to tool calls while the task
/// names something not looked at yet (rule 8).
pub(super) const MAX_HELD_STEPS: u32 = 6;

use crate::recover::recover_tool_calls;

pub(super) use progress::changed_files;
use progress::{change_pending, finish_answer, next_move};

mod look;
mod progress;
mod task;

/// Where the step loop is.
enum State {
    /// Step `n` is next: the stop checks (interrupt, budget), new tools,
    /// compression and the `pre_llm_call` hook.
    Prepare(u32),
    /// Step `n` asks the model, with the tools on offer.
    Ask(u32),
    /// The model answered step `n`; calls it wrote as text are recovered.
    Answered(u32, LlmResponse),
    /// The model answered step `n` without tool calls: the quality gates
    /// decide whether the run is done.
    Finishing(u32),
    /// Step `n`'s tool calls go through the gate.
    Calling {
        step: u32,
        calls: Vec<ModelToolCall>,
        /// The calls were written as text and recovered.
        recovered: bool,
        /// The calls of the reply that do not run, with why.
        dropped: Vec<(ModelToolCall, LoopDecision)>,
        /// What the model is told after the results: why calls did not
        /// run, why its reply was cut.
        note: Option<String>,
    },
    /// The loop is over.
    Stopped(Stop),
}

/// The tools a step offers the model.
struct Offer {
    /// Their names: the ones routing chose, or every tool of the agent.
    names: Vec<String>,
    /// Their schemas, as sent.
    schemas: Vec<Value>,
    /// The schemas' size in bytes, which the context budget leaves room for.
    bytes: usize,
    /// Whether routing chose them: then they stay fixed for the run.
    routed: bool,
}

impl Offer {
    /// The tools `names` offer; with `small`, the small profile's handful
    /// of them and `finish`, in compact schemas.
    fn new(registry: &Registry, names: Vec<String>, routed: bool, small: bool) -> Self {
        let (names, schemas) = if small {
            crate::profile::small_offer(registry, &names)
        } else {
            let schemas = registry.schemas(Some(&names), SchemaFormat::OpenAi);
            (names, schemas)
        };
        let bytes = serde_json::to_string(&schemas).map_or(0, |t| t.len());
        Self {
            names,
            schemas,
            bytes,
            routed,
        }
    }
}

/// What the loop carries from state to state.
struct Progress<'a> {
    messages: &'a mut Vec<Message>,
    report: &'a mut RunReport,
    journal: &'a mut Journal,
    deadline: Option<Instant>,
    offer: Offer,
    /// Identical calls in a row (`max_repeated_calls`).
    repeats: Repeats,
    /// Whether the 80 % budget warning was given (once a run).
    budget_warned: bool,
    /// Whether an empty reply was answered with [`EMPTY_REPLY_NUDGE`]
    /// (once a run).
    nudged: bool,
    /// The `finish` call of the reply being finished, if it came as one.
    finish: Option<ModelToolCall>,
    /// What the task names, for the task checks.
    checks: TaskChecks,
    /// How many times the task checks refused an answer.
    check_refusals: u32,
    /// How many steps the replies were held to tool calls, the task
    /// naming what the run had not looked at yet.
    held: u32,
    /// Whether a call of the run changed something (see
    /// [`AgentRunner::changes_something`]).
    changed: bool,
    /// Why the last reply was cut off, when it was: the next request
    /// penalises repeats ([`crate::LlmRequest::penalize_repeats`]).
    cut_before: Option<String>,
    /// How many replies in a row were cut off without a call.
    cuts_in_a_row: u32,
}

impl AgentRunner {
    /// The steps of a run; `offered`: the tools routing chose (`None`:
    /// every tool of the agent).
    pub(super) async fn steps(
        &self,
        messages: &mut Vec<Message>,
        report: &mut RunReport,
        deadline: Option<Instant>,
        journal: &mut Journal,
        offered: Option<Vec<String>>,
    ) -> Stop {
        let registry = self.engine.registry();
        let mut checks = if self.agent.task_checks {
            TaskChecks::from_task(&report.task, self.workspace.as_deref(), &on_path)
        } else {
            TaskChecks::default()
        };
        // The change check is the small profile's (a larger model that
        // answers a change task in words is taken at its word); an agent
        // that cannot change anything (plan, review) answers with words.
        checks.change &= self.agent.is_small()
            && self.agent.tool_names(registry).iter().any(|n| {
                registry
                    .get(n)
                    .is_ok_and(|t| !t.spec().annotations.read_only())
            });
        let routed = offered.is_some();
        let names = offered.unwrap_or_else(|| self.agent.tool_names(registry));
        let offer = Offer::new(registry, names, routed, self.agent.is_small());
        let first = messages_bytes(&messages[..messages.len().min(2)]);
        if let Err(reason) = self.context.check_start(offer.bytes + first) {
            return Stop::Fail(Outcome::Failed, reason);
        }
        let mut progress = Progress {
            messages,
            report,
            journal,
            deadline,
            offer,
            repeats: Repeats::default(),
            budget_warned: false,
            nudged: false,
            finish: None,
            checks,
            check_refusals: 0,
            held: 0,
            changed: false,
            cut_before: None,
            cuts_in_a_row: 0,
        };
        self.look_first(&mut progress).await;
        let mut state = State::Prepare(1);
        loop {
            state = match self.transition(state, &mut progress).await {
                State::Stopped(stop) => return stop,
                next => next,
            };
        }
    }

    /// Every transition of the loop: the state after `state`.
    async fn transition(&self, state: State, p: &mut Progress<'_>) -> State {
        match state {
            State::Prepare(step) if step > self.max_steps => {
                State::Stopped(Stop::Summarise(Outcome::MaxSteps))
            }
            State::Prepare(step) => self.prepare(step, p).await,
            State::Ask(step) => self.ask(step, p).await,
            State::Answered(step, reply) => self.answered(step, reply, p).await,
            State::Finishing(step) => self.finishing(step, p).await,
            State::Calling {
                step,
                calls,
                recovered,
                dropped,
                note,
            } => {
                self.calling(step, &calls, recovered, &dropped, note, p)
                    .await
            }
            State::Stopped(stop) => State::Stopped(stop),
        }
    }

    /// [`State::Prepare`].
    async fn prepare(&self, step: u32, p: &mut Progress<'_>) -> State {
        if self.cancelled() {
            return State::Stopped(Stop::Summarise(Outcome::Interrupted));
        }
        if let Some(refresh) = &self.refresh
            && refresh.refresh().await
            && !p.offer.routed
        {
            let registry = self.engine.registry();
            p.offer = Offer::new(
                registry,
                self.agent.tool_names(registry),
                false,
                self.agent.is_small(),
            );
        }
        if let (Some(budget), Some(spent)) = (self.budget_usd, self.spent(p.report))
            && spent >= budget
        {
            return State::Stopped(Stop::Summarise(Outcome::Budget));
        }
        self.compress(p.messages, step, p.report, p.journal, p.offer.bytes)
            .await;
        // Whatever compression did, the request fits the window.
        if let Some(from) = fit(
            p.messages,
            self.context.input_bytes().saturating_sub(p.offer.bytes),
        ) {
            p.journal.clean_until = p.journal.clean_until.min(from);
        }
        // And as the server will count it (rule 6 of `context`).
        match self.fit_to_window(p.messages, p.offer.bytes + ENVELOPE_BYTES) {
            Ok(Some(from)) => p.journal.clean_until = p.journal.clean_until.min(from),
            Ok(None) => {}
            Err(e) => return State::Stopped(Stop::Fail(Outcome::Failed, e.to_string())),
        }
        let verdict = self
            .hooks
            .emit(
                LifecycleEvent::PreLlmCall,
                json!({"step": step, "messages": p.messages.len()}),
            )
            .await;
        if let Some(reason) = verdict.block {
            return State::Stopped(Stop::Fail(
                Outcome::Failed,
                format!("blocked by pre_llm_call hook: {reason}"),
            ));
        }
        if let Some(ctx) = verdict.additional_context {
            p.messages.push(Message::text(Role::User, ctx));
        }
        State::Ask(step)
    }

    /// [`State::Ask`]: the model call, which the deadline or a graceful
    /// interrupt cuts short.
    async fn ask(&self, step: u32, p: &mut Progress<'_>) -> State {
        self.recording.step.store(step, Ordering::Relaxed);
        self.emit(&AgentEvent::Step {
            step,
            tools: p.offer.routed.then(|| p.offer.names.clone()),
        });
        p.report.steps = step;
        let must_call = p.held < MAX_HELD_STEPS && self.must_look(p);
        p.held += u32::from(must_call);
        let mut barred = p.repeats.barred(step);
        // A run that repeats a look while the change its task asks for is
        // still to make is held to the calls that change something (or
        // finish): looking again has not helped. (A repeated command bars
        // only itself: the model may not have read anything yet.)
        let registry = self.engine.registry();
        let looked_again = barred.iter().any(|n| {
            registry
                .get(n)
                .is_ok_and(|t| t.spec().annotations.read_only())
        });
        if looked_again && change_pending(p) {
            barred.extend(
                p.offer
                    .names
                    .iter()
                    .filter(|n| {
                        registry
                            .get(n)
                            .is_ok_and(|t| t.spec().annotations.read_only())
                    })
                    .cloned(),
            );
        }
        let asked = Asked {
            tools: p.offer.schemas.clone(),
            must_call,
            barred,
            penalize_repeats: p.cut_before.take().is_some(),
        };
        let call = self.call_model(p.messages, asked, step, false, p.report);
        let mut cancel = self.cancel.clone();
        let cancelled = async move {
            match &mut cancel {
                Some(c) => {
                    let _ = c.wait_for(|v| *v).await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        let resp = tokio::select! {
            r = call => r,
            () = sleep_until(p.deadline) => return State::Stopped(Stop::Summarise(Outcome::Timeout)),
            () = cancelled => return State::Stopped(Stop::Summarise(Outcome::Interrupted)),
        };
        let resp = match resp {
            Ok(r) => r,
            Err(e @ LlmError::Auth { .. }) => {
                return State::Stopped(Stop::Fail(Outcome::AuthFailed, e.to_string()));
            }
            Err(e) => return State::Stopped(Stop::Fail(Outcome::Failed, error_chain(&e))),
        };
        self.hooks
            .emit(
                LifecycleEvent::PostLlmCall,
                json!({"step": step, "content": resp.content, "tool_calls": resp.tool_calls.len()}),
            )
            .await;
        if let (false, Some(budget), Some(spent)) =
            (p.budget_warned, self.budget_usd, self.spent(p.report))
            && spent >= 0.8 * budget
        {
            p.budget_warned = true;
            let payload = json!({"spent_usd": spent, "budget_usd": budget});
            self.hooks
                .emit(LifecycleEvent::BudgetWarning, payload)
                .await;
            self.emit(&AgentEvent::BudgetWarning {
                spent_usd: spent,
                budget_usd: budget,
            });
        }
        State::Answered(step, resp)
    }

    /// [`State::Answered`]: the reply joins the conversation; where it
    /// goes next depends on its calls.
    async fn answered(&self, step: u32, mut resp: LlmResponse, p: &mut Progress<'_>) -> State {
        let mut recovered = false;
        // The reply as the model wrote it, when calls were taken out of
        // its text.
        let mut written = None;
        if resp.tool_calls.is_empty() && self.recover_text_calls && !p.offer.schemas.is_empty() {
            let found = recover_tool_calls(&resp.content);
            if !found.calls.is_empty() {
                recovered = true;
                written = Some(std::mem::replace(&mut resp.content, found.text));
                resp.tool_calls = found
                    .calls
                    .into_iter()
                    .enumerate()
                    .map(|(n, call)| text_call(step, n, call))
                    .collect();
            }
        }
        // Guards on one reply: identical calls run once, at most
        // `max_calls_per_step` run, and the model is told of the rest and
        // of a reply cut short.
        let cap = if self.agent.is_small() {
            1
        } else {
            self.agent.max_calls_per_step.max(1) as usize
        };
        let (kept, dropped) = sift(std::mem::take(&mut resp.tool_calls), cap);
        resp.tool_calls = kept;
        // `finish(answer)` (small profile) is an answer the loop checks
        // before the run ends; one whose arguments cannot be read goes to
        // `run_tools`, which refuses it.
        p.finish = None;
        if p.offer.names.iter().any(|n| n == FINISH)
            && let [call] = resp.tool_calls.as_slice()
            && call.name == FINISH
            && let Some(answer) = finish_answer(&call.arguments)
        {
            p.finish = Some(call.clone());
            resp.content = answer;
        }
        let mut note = dropped_note(&dropped, cap);
        p.cut_before.clone_from(&resp.cut);
        if let Some(why) = &resp.cut {
            self.emit(&AgentEvent::ReplyCut {
                step,
                reason: why.clone(),
            });
            if !note.is_empty() {
                note.push(' ');
            }
            let _ = write!(
                note,
                "Your reply was cut off because {why}. Do not repeat yourself: make each call \
                 you need once, or give your final answer."
            );
        }
        let note = (!note.is_empty()).then_some(note);
        // A call that could not be read is not sent back as a call (a
        // model shown a call named `unreadable_tool_call` copies it): the
        // reply keeps its text as written, and the error follows as a user
        // message (see `run_tools`).
        let readable: Vec<ModelToolCall> = resp
            .tool_calls
            .iter()
            .filter(|c| c.name != UNREADABLE_CALL)
            .cloned()
            .collect();
        let content = match written {
            Some(written) if readable.len() != resp.tool_calls.len() => written,
            _ => resp.content.clone(),
        };
        p.messages.push(Message {
            role: Role::Assistant,
            content,
            tool_calls: readable,
            tool_call_id: None,
        });
        if resp.cut.is_none() || !resp.tool_calls.is_empty() {
            p.cuts_in_a_row = 0;
        }
        if p.finish.is_some() {
            p.report.final_text.clone_from(&resp.content);
            return State::Finishing(step);
        }
        if !resp.tool_calls.is_empty() {
            return State::Calling {
                step,
                calls: resp.tool_calls,
                recovered,
                dropped,
                note,
            };
        }
        if let Some(note) = note {
            // A reply cut short is no answer: the model is told and goes
            // on, unless its replies keep being cut (each one costs a
            // whole reply's tokens, and the next is as likely to loop).
            p.cuts_in_a_row += u32::from(resp.cut.is_some());
            p.messages.push(Message::text(Role::User, note));
            if p.cuts_in_a_row >= self.agent.max_repeated_calls.max(2) {
                self.record(step, p.messages, p.report, p.journal).await;
                return State::Stopped(Stop::Guarded(
                    Outcome::Repeating,
                    format!(
                        "the model's replies were cut off {} times in a row, the last because {}",
                        p.cuts_in_a_row,
                        resp.cut.as_deref().unwrap_or("it was cut")
                    ),
                ));
            }
            return self.next_step(step, p).await;
        }
        if resp.content.trim().is_empty() && !p.nudged {
            p.nudged = true;
            p.messages
                .push(Message::text(Role::User, EMPTY_REPLY_NUDGE.to_owned()));
            return self.next_step(step, p).await;
        }
        p.report.final_text.clone_from(&resp.content);
        State::Finishing(step)
    }

    /// [`State::Finishing`]: done unless a required quality gate fails;
    /// its output is fed back and the loop goes on.
    async fn finishing(&self, step: u32, p: &mut Progress<'_>) -> State {
        if let Some(refused) = self.check_task(step, p).await {
            return refused;
        }
        let failing: Vec<_> = self
            .gates
            .run()
            .await
            .into_iter()
            .filter(|g| g.required && !g.passed)
            .collect();
        if failing.is_empty() {
            // A `finish` call that ends the run stays in the conversation
            // as the answer it carries.
            if p.finish.take().is_some()
                && let Some(last) = p.messages.last_mut()
            {
                *last = Message::text(Role::Assistant, p.report.final_text.clone());
            }
            return State::Stopped(Stop::Done(Outcome::Completed));
        }
        let mut text = String::from("Quality gates failed; fix these before finishing:\n");
        for g in failing {
            self.emit(&AgentEvent::GateFailed {
                name: g.name.clone(),
            });
            let _ = writeln!(text, "[{}]\n{}", g.name, g.output);
        }
        Self::refuse_finish(p, text);
        self.next_step(step, p).await
    }

    /// [`State::Calling`]: the calls go through the gate; an abort, too
    /// many repeats or the deadline end the loop.
    async fn calling(
        &self,
        step: u32,
        calls: &[ModelToolCall],
        recovered: bool,
        dropped: &[(ModelToolCall, LoopDecision)],
        note: Option<String>,
        p: &mut Progress<'_>,
    ) -> State {
        let before = p.messages.len();
        let recorded = p.report.tool_calls.len();
        let aborted = self
            .run_tools(
                step,
                calls,
                recovered,
                p.messages,
                p.report,
                &mut p.repeats,
                &p.checks,
            )
            .await;
        p.changed |= p.report.tool_calls[recorded..]
            .iter()
            .any(|c| self.changes_something(c));
        if self.agent.is_small() {
            next_move(p, before);
        }
        self.record_dropped(step, dropped, recovered, p.report);
        if let Some(note) = note {
            p.messages.push(Message::text(Role::User, note));
        }
        self.record(step, p.messages, p.report, p.journal).await;
        if aborted {
            return State::Stopped(Stop::Fail(
                Outcome::Aborted,
                "aborted at a confirmation prompt".into(),
            ));
        }
        if p.repeats.count >= self.agent.max_repeated_calls.max(2) {
            if self.done_before_repeating(p).await {
                return State::Stopped(Stop::Guarded(
                    Outcome::Completed,
                    "the model kept repeating a change that had already succeeded, with no \
                     failure since and the quality gates passing"
                        .to_owned(),
                ));
            }
            return State::Stopped(Stop::Guarded(
                Outcome::Repeating,
                format!(
                    "the model made the same call with the same arguments {} steps in a row",
                    p.repeats.count
                ),
            ));
        }
        if p.repeats.stale >= self.agent.max_repeated_calls.max(2) {
            return State::Stopped(Stop::Guarded(
                Outcome::Repeating,
                format!(
                    "the model made calls it had already made, with no file changed since, {} \
                     steps in a row",
                    p.repeats.stale
                ),
            ));
        }
        if p.deadline.is_some_and(|d| Instant::now() >= d) {
            return State::Stopped(Stop::Summarise(Outcome::Timeout));
        }
        after(step)
    }

    /// Whether the task was done when the repeated-call guard stopped the
    /// run. "Done" is the runtime's to check, not the model's to say: the
    /// repeated call is a change that already ran and succeeded (so the
    /// repeats were refused, nothing ran twice), every call since that
    /// change ran and succeeded or was such a refusal, every call of the
    /// run that failed or was refused (a test command, say) ran again
    /// later and succeeded, and every required quality gate passes. A run looping
    /// on reads, or on a call that failed, is not done.
    async fn done_before_repeating(&self, p: &Progress<'_>) -> bool {
        let calls = &p.report.tool_calls;
        let Some(since) = p.repeats.change_step() else {
            return false;
        };
        let repeated_change = calls
            .last()
            .is_some_and(|c| c.decision == LoopDecision::RepeatedChange.into());
        let clean = calls.iter().filter(|c| c.step >= since).all(|c| {
            (c.decision.executed() && c.success)
                || c.decision == LoopDecision::RepeatedChange.into()
                || c.decision == LoopDecision::Duplicate.into()
        });
        // A call that failed or was refused (the loop's guards aside)
        // counts as settled when the same call ran later and succeeded.
        let guard = |c: &super::ToolCallRecord| {
            [
                LoopDecision::RepeatedChange,
                LoopDecision::Duplicate,
                LoopDecision::OverCallLimit,
            ]
            .iter()
            .any(|d| c.decision == (*d).into())
        };
        let fixed = calls.iter().enumerate().all(|(i, c)| {
            (c.decision.executed() && c.success)
                || guard(c)
                || calls[i + 1..].iter().any(|later| {
                    later.decision.executed()
                        && later.success
                        && later.name == c.name
                        && later.arguments == c.arguments
                })
        });
        if !(repeated_change && clean && fixed) {
            return false;
        }
        self.gates
            .run()
            .await
            .iter()
            .all(|g| g.passed || !g.required)
    }

    /// Records step `step` and moves to the next.
    async fn next_step(&self, step: u32, p: &mut Progress<'_>) -> State {
        self.record(step, p.messages, p.report, p.journal).await;
        after(step)
    }
}

/// The state after step `step`: the next one's preparation.
fn after(step: u32) -> State {
    step.checked_add(1).map_or(
        State::Stopped(Stop::Summarise(Outcome::MaxSteps)),
        State::Prepare,
    )
}
