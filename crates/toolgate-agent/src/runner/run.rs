//! A run from its task to its report, around the step loop: the start,
//! routing, recording, model calls and the closing summary.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolgate_core::error_chain;

use super::events::AgentEvent;
use super::lifecycle::LifecycleEvent;
use super::lifecycle::StepSnapshot;
use super::report::{Outcome, RunReport, StepUsage};
use super::{AgentRunner, estimate_tokens, flag_set};
use crate::context::{
    ENVELOPE_BYTES, WIRE_BYTES_PER_TOKEN, exceeds_context, fit, fit_wire, wire_messages_bytes,
};
use crate::llm::{LlmError, LlmRequest, Message, Role, Usage};

/// What has been recorded of a run so far.
#[derive(Debug, Default)]
pub(super) struct Journal {
    /// Messages before this index are recorded as they stand.
    pub(super) clean_until: usize,
    calls: usize,
    usage: usize,
    warned: bool,
}

/// Why the step loop ended.
pub(super) enum Stop {
    /// The run is over, with this outcome.
    Done(Outcome),
    /// One last call without tools summarises the run (rule 4).
    Summarise(Outcome),
    /// A guard stopped the run, for this reason: its summary is built
    /// from the log ([`RunReport::log_summary`]), not asked of the model.
    Guarded(Outcome, String),
    /// The run failed with this error.
    Fail(Outcome, String),
    /// The abort flag was set: stop at once.
    Aborted,
}

impl AgentRunner {
    /// Runs `task`, continuing `history` (a resumed session) when it is not
    /// empty.
    pub async fn run(&self, task: &str, history: Vec<Message>) -> RunReport {
        let started = Instant::now();
        let deadline = self.timeout.map(|t| started + t);
        let stored = history.len();
        let mut messages = history;
        if messages.is_empty() {
            messages.push(Message::text(
                Role::System,
                self.agent.system_prompt.clone(),
            ));
        }
        messages.push(Message::text(Role::User, task));
        let mut report = RunReport {
            outcome: Outcome::Completed,
            agent: self.agent.name.clone(),
            task: task.to_owned(),
            final_text: String::new(),
            steps: 0,
            step_usage: Vec::new(),
            tool_calls: Vec::new(),
            files_changed: Vec::new(),
            error: None,
            messages: Vec::new(),
            duration_ms: 0,
        };
        // The history (a resumed session's stored conversation) is recorded
        // already; the system prompt of a new session, the task and what
        // follows are not.
        let mut journal = Journal {
            clean_until: stored,
            ..Journal::default()
        };
        self.record(0, &messages, &report, &mut journal).await;
        let payload = json!({"agent": self.agent.name, "task": task});
        self.hooks
            .emit(LifecycleEvent::SessionStart, payload.clone())
            .await;
        self.hooks
            .emit(LifecycleEvent::AgentStart, payload.clone())
            .await;
        let offered = self.route(task).await;
        let stop = {
            let steps = self.steps(&mut messages, &mut report, deadline, &mut journal, offered);
            tokio::select! {
                stop = steps => stop,
                () = flag_set(self.abort.clone()) => Stop::Aborted,
            }
        };
        let mut aborted = false;
        match stop {
            Stop::Done(o) => report.outcome = o,
            Stop::Fail(o, e) => {
                report.outcome = o;
                // The error goes to reports, sessions and the terminal:
                // never with a secret in it (a URL's password, a key a
                // server echoed).
                report.error = Some(toolgate_core::redact(&e).into_owned());
            }
            Stop::Summarise(o) => {
                report.outcome = o;
                tokio::select! {
                    () = self.summarise(&mut messages, &mut report) => {}
                    () = flag_set(self.abort.clone()) => aborted = true,
                }
            }
            Stop::Guarded(o, reason) => {
                report.outcome = o;
                // Not a `summary` event: the model is not asked for one.
                self.emit(&AgentEvent::Warning {
                    message: format!("stopping: {reason}; the summary is built from the run's log"),
                });
                report.final_text = report.log_summary(&reason);
            }
            Stop::Aborted => aborted = true,
        }
        if aborted {
            report.outcome = Outcome::Aborted;
            report.error = Some("aborted: the run was stopped at once".to_owned());
        } else {
            // The last step's answer (and any summary) is recorded under
            // that step, so the store counts the steps the report does.
            self.record(report.steps, &messages, &report, &mut journal)
                .await;
        }
        if report.blocked_calls() > 0
            && matches!(
                report.outcome,
                Outcome::Completed | Outcome::MaxSteps | Outcome::Repeating | Outcome::Unverified
            )
        {
            report.outcome = Outcome::Blocked;
        }
        if let Some(error) = &report.error {
            let payload = json!({"agent": self.agent.name, "error": error});
            self.hooks.emit(LifecycleEvent::OnError, payload).await;
        }
        let end = json!({"agent": self.agent.name, "outcome": report.outcome});
        self.hooks
            .emit(LifecycleEvent::AgentStop, end.clone())
            .await;
        self.hooks.emit(LifecycleEvent::SessionEnd, end).await;
        report.messages = messages;
        report.files_changed.sort();
        report.files_changed.dedup();
        report.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        if let Some(recorder) = &self.recorder
            && let Err(error) = recorder.finish(&report).await
        {
            self.emit(&AgentEvent::Warning {
                message: format!(
                    "the session's outcome was not recorded: {}",
                    error_chain(&error)
                ),
            });
        }
        report
    }

    /// The tools routing chooses for `task`, or `None` without routing.
    async fn route(&self, task: &str) -> Option<Vec<String>> {
        let routing = self.routing.as_ref()?;
        let routed = routing
            .router
            .classify(routing.classifier.as_ref(), task, &routing.previous)
            .await;
        let tools = routed.tools.clone();
        self.emit(&AgentEvent::Routed(routed));
        Some(tools)
    }

    /// Hands what is not recorded yet to the recorder (see [`RunRecorder`]).
    pub(super) async fn record(
        &self,
        step: u32,
        messages: &[Message],
        report: &RunReport,
        journal: &mut Journal,
    ) {
        let Some(recorder) = &self.recorder else {
            return;
        };
        let from = journal.clean_until.min(messages.len());
        let calls = journal.calls.min(report.tool_calls.len());
        let usage = journal.usage.min(report.step_usage.len());
        let events = self.recording.lock().clone();
        let snapshot = StepSnapshot {
            step,
            messages_from: from,
            messages: &messages[from..],
            tool_calls: &report.tool_calls[calls..],
            usage: &report.step_usage[usage..],
            events: &events,
        };
        match recorder.step(&snapshot).await {
            Ok(()) => {
                self.recording.lock().drain(..events.len());
                journal.clean_until = messages.len();
                journal.calls = report.tool_calls.len();
                journal.usage = report.step_usage.len();
                journal.warned = false;
            }
            Err(error) => {
                if !std::mem::replace(&mut journal.warned, true) {
                    self.emit(&AgentEvent::Warning {
                        message: format!("the session was not recorded: {}", error_chain(&error)),
                    });
                }
            }
        }
    }

    /// One model call, its usage recorded for `step`. With `quiet`, the
    /// streamed text is not shown (a summary of old steps is not an answer).
    pub(super) async fn call_model(
        &self,
        messages: &[Message],
        offer: Asked,
        step: u32,
        quiet: bool,
        report: &mut RunReport,
    ) -> Result<crate::llm::LlmResponse, LlmError> {
        let events = if quiet { None } else { self.events.clone() };
        let sink = move |t: &str| {
            if let Some(s) = &events {
                s(&AgentEvent::Text {
                    delta: t.to_owned(),
                });
            }
        };
        // Rules 6 and 7 of `context`: never sent over the window; once
        // more, smaller, when the server says it was too large.
        let fixed = serde_json::to_string(&offer.tools).map_or(0, |t| t.len()) + ENVELOPE_BYTES;
        let mut request = LlmRequest {
            messages: messages.to_vec(),
            tools: offer.tools,
            max_tokens: Some(if self.agent.is_small() {
                self.context
                    .output_tokens()
                    .min(crate::profile::SMALL_REPLY_TOKENS)
            } else {
                self.context.output_tokens()
            }),
            must_call: offer.must_call,
            barred: offer.barred,
            penalize_repeats: offer.penalize_repeats,
        };
        self.fit_to_window(&mut request.messages, fixed)?;
        let mut retried = false;
        let resp = loop {
            let resp = self.llm.complete(&request, &sink).await;
            self.emit_switches();
            match resp {
                Err(e) if !retried && exceeds_context(&e).is_some() => {
                    retried = true;
                    // What was sent, shrunk by what the server said.
                    let factor = exceeds_context(&e).unwrap_or(0.75);
                    #[expect(clippy::cast_precision_loss, reason = "byte counts")]
                    let share = (wire_messages_bytes(&request.messages) + fixed) as f64
                        / self.context.wire_bytes(1.0).max(1) as f64;
                    let squeeze = share.min(self.squeeze()) * factor;
                    self.squeeze
                        .store(squeeze.to_bits(), std::sync::atomic::Ordering::Relaxed);
                    self.emit(&AgentEvent::Warning {
                        message: format!(
                            "the model server said the request exceeds its context window \
                             ({}); compressing harder and sending it once more",
                            error_chain(&e)
                        ),
                    });
                    self.fit_to_window(&mut request.messages, fixed)?;
                }
                r => break r?,
            }
        };
        let (usage, estimated) = if let Some(u) = resp.usage {
            (u, false)
        } else {
            let input: usize = messages.iter().map(|m| m.content.len()).sum();
            let output = resp.content.len()
                + resp
                    .tool_calls
                    .iter()
                    .map(|c| c.arguments.len())
                    .sum::<usize>();
            (
                Usage {
                    input_tokens: estimate_tokens(input),
                    output_tokens: estimate_tokens(output),
                    processed_tokens: None,
                },
                true,
            )
        };
        #[expect(clippy::cast_precision_loss, reason = "token counts fit easily")]
        let cost_usd = self.prices.map(|(pi, po)| {
            (usage.input_tokens as f64 * pi + usage.output_tokens as f64 * po) / 1_000_000.0
        });
        if let (Some(meter), Some(cost)) = (&self.meter, cost_usd) {
            meter.add(cost);
        }
        self.emit(&AgentEvent::Usage {
            step,
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            processed_tokens: usage.processed_tokens,
            estimated,
        });
        report.step_usage.push(StepUsage {
            step,
            usage,
            estimated,
            cost_usd,
        });
        Ok(resp)
    }

    /// The share of the window requests may use: 1 until the server
    /// refuses one as too large (rule 7 of `context`).
    pub(super) fn squeeze(&self) -> f64 {
        f64::from_bits(self.squeeze.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Trims `messages` until, with `fixed` bytes of tool schemas and
    /// envelope, the request fits the window (rule 6 of `context`); the
    /// index of the first message changed.
    pub(super) fn fit_to_window(
        &self,
        messages: &mut Vec<Message>,
        fixed: usize,
    ) -> Result<Option<usize>, LlmError> {
        fit_wire(messages, fixed, self.context.wire_bytes(self.squeeze())).map_err(|bytes| {
            LlmError::TooLarge {
                tokens: bytes.div_ceil(WIRE_BYTES_PER_TOKEN),
                window: self.context.window(),
            }
        })
    }

    /// Ends a run a budget stopped (steps, time, cost, an interrupt). The
    /// final text is the run's log ([`RunReport::log_summary`]): what
    /// changed and what ran is the runtime's to say, never the model's (a
    /// small model stopped mid-task claims the change it did not make). In
    /// the standard profile the model is then asked, without tools, for
    /// what is left, and its answer follows the log's, marked as its own;
    /// the small profile does not ask.
    async fn summarise(&self, messages: &mut Vec<Message>, report: &mut RunReport) {
        let reason = match report.outcome {
            Outcome::Timeout => "the time budget ran out",
            Outcome::Budget => "the cost budget ran out",
            Outcome::Interrupted => "the user interrupted the run",
            _ => "the step budget ran out",
        };
        report.final_text = report.log_summary(reason);
        if self.agent.is_small() {
            self.emit(&AgentEvent::Warning {
                message: format!("stopping: {reason}; the summary is built from the run's log"),
            });
            return;
        }
        self.emit(&AgentEvent::Summary {
            reason: reason.to_owned(),
        });
        messages.push(Message::text(
            Role::User,
            format!(
                "Stop here: {reason}. Do not call tools. Say in a few lines what is left to do \
                 and the state the workspace is in."
            ),
        ));
        fit(messages, self.context.input_bytes());
        let call = self.call_model(messages, Asked::default(), 0, false, report);
        let resp = tokio::time::timeout(Duration::from_secs(60), call).await;
        let account = match resp {
            Ok(Ok(r)) => {
                messages.push(Message::text(Role::Assistant, r.content.clone()));
                r.content
            }
            Ok(Err(e)) => format!("(none: {})", error_chain(&e)),
            Err(_) => "(none: the model did not answer in time)".into(),
        };
        let _ = write!(
            report.final_text,
            "The model's account (not checked against the log):\n{account}"
        );
    }
}

/// What one model call offers: the tools' schemas, and what a constrained
/// reply is held to ([`LlmRequest::must_call`], [`LlmRequest::barred`]).
/// By default, no tools: the reply is text.
#[derive(Debug, Default)]
pub(super) struct Asked {
    pub(super) tools: Vec<Value>,
    pub(super) must_call: bool,
    pub(super) barred: Vec<String>,
    pub(super) penalize_repeats: bool,
}
