//! A run from its task to its report: the step loop.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolgate_core::{SchemaFormat, error_chain};

use super::events::AgentEvent;
use super::lifecycle::StepSnapshot;
use super::report::{Outcome, RunReport, StepUsage};
use super::tools::{Repeats, UNREADABLE_CALL, text_call};
use super::{AgentRunner, EMPTY_REPLY_NUDGE, estimate_tokens, flag_set, sleep_until};
use crate::context::{fit, messages_bytes};
use crate::llm::{LlmError, LlmRequest, Message, ModelToolCall, Role, Usage};
use crate::recover::recover_tool_calls;

/// What has been recorded of a run so far.
#[derive(Debug, Default)]
pub(super) struct Journal {
    /// Messages before this index are recorded as they stand.
    pub(super) clean_until: usize,
    calls: usize,
    usage: usize,
    warned: bool,
}

enum Stop {
    Done(Outcome),
    Summarise(Outcome),
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
        self.hooks.emit("session_start", payload.clone()).await;
        self.hooks.emit("agent_start", payload.clone()).await;
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
            Stop::Aborted => aborted = true,
        }
        if aborted {
            report.outcome = Outcome::Aborted;
            report.error = Some("aborted: the run was stopped at once".to_owned());
        } else {
            self.record(0, &messages, &report, &mut journal).await;
        }
        if report.blocked_calls() > 0
            && matches!(
                report.outcome,
                Outcome::Completed | Outcome::MaxSteps | Outcome::Repeating
            )
        {
            report.outcome = Outcome::Blocked;
        }
        if let Some(error) = &report.error {
            let payload = json!({"agent": self.agent.name, "error": error});
            self.hooks.emit("on_error", payload).await;
        }
        let end = json!({"agent": self.agent.name, "outcome": report.outcome});
        self.hooks.emit("agent_stop", end.clone()).await;
        self.hooks.emit("session_end", end).await;
        report.messages = messages;
        report.files_changed.sort();
        report.files_changed.dedup();
        report.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        if let Some(recorder) = &self.recorder
            && let Err(error) = recorder.finish(&report).await
        {
            self.emit(&AgentEvent::Warning {
                message: format!("the session's outcome was not recorded: {error}"),
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
    async fn record(
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
                        message: format!("the session was not recorded: {error}"),
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
        tools: Vec<Value>,
        step: u32,
        quiet: bool,
        report: &mut RunReport,
    ) -> Result<crate::llm::LlmResponse, LlmError> {
        let request = LlmRequest {
            messages: messages.to_vec(),
            tools,
            max_tokens: Some(self.context.output_tokens()),
        };
        let events = if quiet { None } else { self.events.clone() };
        let sink = move |t: &str| {
            if let Some(s) = &events {
                s(&AgentEvent::Text {
                    delta: t.to_owned(),
                });
            }
        };
        let resp = self.llm.complete(&request, &sink).await;
        self.emit_switches();
        let resp = resp?;
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
        report.step_usage.push(StepUsage {
            step,
            usage,
            estimated,
            cost_usd,
        });
        Ok(resp)
    }

    /// The steps of a run; `offered`: the tools routing chose (`None`:
    /// every tool of the agent).
    async fn steps(
        &self,
        messages: &mut Vec<Message>,
        report: &mut RunReport,
        deadline: Option<Instant>,
        journal: &mut Journal,
        offered: Option<Vec<String>>,
    ) -> Stop {
        let registry = self.engine.registry().clone();
        let routed = offered.is_some();
        let mut names = offered.unwrap_or_else(|| self.agent.tool_names(&registry));
        let mut tools = registry.schemas(Some(&names), SchemaFormat::OpenAi);
        let mut tools_bytes = serde_json::to_string(&tools).map_or(0, |t| t.len());
        let first = messages_bytes(&messages[..messages.len().min(2)]);
        if let Err(reason) = self.context.check_start(tools_bytes + first) {
            return Stop::Fail(Outcome::Failed, reason);
        }
        let mut warned = false;
        let mut repeats = Repeats::default();
        let mut nudged = false;
        for step in 1..=self.max_steps {
            if self.cancelled() {
                return Stop::Summarise(Outcome::Interrupted);
            }
            if let Some(refresh) = &self.refresh
                && refresh.refresh().await
                && !routed
            {
                names = self.agent.tool_names(&registry);
                tools = registry.schemas(Some(&names), SchemaFormat::OpenAi);
                tools_bytes = serde_json::to_string(&tools).map_or(0, |t| t.len());
            }
            if let (Some(budget), Some(spent)) = (self.budget_usd, self.spent(report))
                && spent >= budget
            {
                return Stop::Summarise(Outcome::Budget);
            }
            self.compress(messages, step, report, journal, tools_bytes)
                .await;
            // Whatever compression did, the request fits the window.
            if let Some(from) = fit(
                messages,
                self.context.input_bytes().saturating_sub(tools_bytes),
            ) {
                journal.clean_until = journal.clean_until.min(from);
            }
            let verdict = self
                .hooks
                .emit(
                    "pre_llm_call",
                    json!({"step": step, "messages": messages.len()}),
                )
                .await;
            if let Some(reason) = verdict.block {
                return Stop::Fail(
                    Outcome::Failed,
                    format!("blocked by pre_llm_call hook: {reason}"),
                );
            }
            if let Some(ctx) = verdict.additional_context {
                messages.push(Message::text(Role::User, ctx));
            }
            self.recording.step.store(step, Ordering::Relaxed);
            self.emit(&AgentEvent::Step {
                step,
                tools: routed.then(|| names.clone()),
            });
            report.steps = step;
            let call = self.call_model(messages, tools.clone(), step, false, report);
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
                () = sleep_until(deadline) => return Stop::Summarise(Outcome::Timeout),
                () = cancelled => return Stop::Summarise(Outcome::Interrupted),
            };
            let resp = match resp {
                Ok(r) => r,
                Err(e @ LlmError::Auth { .. }) => {
                    return Stop::Fail(Outcome::AuthFailed, e.to_string());
                }
                Err(e) => return Stop::Fail(Outcome::Failed, error_chain(&e)),
            };
            self.hooks
                .emit(
                    "post_llm_call",
                    json!({"step": step, "content": resp.content, "tool_calls": resp.tool_calls.len()}),
                )
                .await;
            if let (false, Some(budget), Some(spent)) =
                (warned, self.budget_usd, self.spent(report))
                && spent >= 0.8 * budget
            {
                warned = true;
                let payload = json!({"spent_usd": spent, "budget_usd": budget});
                self.hooks.emit("budget_warning", payload).await;
                self.emit(&AgentEvent::BudgetWarning {
                    spent_usd: spent,
                    budget_usd: budget,
                });
            }
            let mut resp = resp;
            let mut recovered = false;
            // The reply as the model wrote it, when calls were taken out
            // of its text.
            let mut written = None;
            if resp.tool_calls.is_empty() && self.recover_text_calls && !tools.is_empty() {
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
            // A call that could not be read is not sent back as a call (a
            // model shown a call named `unreadable_tool_call` copies it):
            // the reply keeps its text as written, and the error follows as
            // a user message (see `run_tools`).
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
            messages.push(Message {
                role: Role::Assistant,
                content,
                tool_calls: readable,
                tool_call_id: None,
            });
            if resp.tool_calls.is_empty() && resp.content.trim().is_empty() && !nudged {
                nudged = true;
                messages.push(Message::text(Role::User, EMPTY_REPLY_NUDGE.to_owned()));
                self.record(step, messages, report, journal).await;
                continue;
            }
            if resp.tool_calls.is_empty() {
                report.final_text.clone_from(&resp.content);
                let failing: Vec<_> = self
                    .gates
                    .run()
                    .await
                    .into_iter()
                    .filter(|g| g.required && !g.passed)
                    .collect();
                if failing.is_empty() {
                    return Stop::Done(Outcome::Completed);
                }
                let mut text = String::from("Quality gates failed; fix these before finishing:\n");
                for g in failing {
                    self.emit(&AgentEvent::GateFailed {
                        name: g.name.clone(),
                    });
                    let _ = writeln!(text, "[{}]\n{}", g.name, g.output);
                }
                messages.push(Message::text(Role::User, text));
                self.record(step, messages, report, journal).await;
                continue;
            }
            let aborted = self
                .run_tools(
                    step,
                    &resp.tool_calls,
                    recovered,
                    messages,
                    report,
                    &mut repeats,
                )
                .await;
            self.record(step, messages, report, journal).await;
            if aborted {
                return Stop::Fail(Outcome::Aborted, "aborted at a confirmation prompt".into());
            }
            if repeats.count >= self.agent.max_repeated_calls.max(2) {
                return Stop::Summarise(Outcome::Repeating);
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Stop::Summarise(Outcome::Timeout);
            }
        }
        Stop::Summarise(Outcome::MaxSteps)
    }

    async fn summarise(&self, messages: &mut Vec<Message>, report: &mut RunReport) {
        let reason = match report.outcome {
            Outcome::Timeout => "the time budget ran out",
            Outcome::Budget => "the cost budget ran out",
            Outcome::Interrupted => "the user interrupted the run",
            Outcome::Repeating => {
                "you repeated the same tool call with the same arguments too many times"
            }
            _ => "the step budget ran out",
        };
        self.emit(&AgentEvent::Summary {
            reason: reason.to_owned(),
        });
        messages.push(Message::text(
            Role::User,
            format!(
                "Stop here: {reason}. Do not call tools. Summarise what you did, what is left, \
                 and the state the workspace is in."
            ),
        ));
        fit(messages, self.context.input_bytes());
        let call = self.call_model(messages, Vec::new(), 0, false, report);
        let resp = tokio::time::timeout(Duration::from_secs(60), call).await;
        match resp {
            Ok(Ok(r)) => {
                report.final_text.clone_from(&r.content);
                messages.push(Message::text(Role::Assistant, r.content));
            }
            Ok(Err(e)) => {
                report.final_text = format!("(no summary: {})", error_chain(&e));
            }
            Err(_) => report.final_text = "(no summary: the model did not answer in time)".into(),
        }
    }
}
