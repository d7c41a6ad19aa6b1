//! The step loop.
//!
//! # Rules
//!
//! 1. Each step emits `pre_llm_call`, calls the model with the agent's tool
//!    schemas, then emits `post_llm_call`.
//! 2. No tool calls: quality gates run; a failing required gate is fed back
//!    as a user message and the loop goes on; otherwise the run is done.
//!    A reply with neither tool calls nor text is no answer: the first one
//!    of a run gets [`EMPTY_REPLY_NUDGE`] and the loop goes on (small local
//!    models sometimes stop mid-task with an empty reply).
//! 3. Tool calls run through the gate — concurrently when every call is
//!    allowed, well-formed and read-only, in order otherwise. Arguments
//!    that are not a JSON object and a tool the agent may not use are
//!    refused by the loop ([`LoopDecision`]); an unknown tool is refused by
//!    the gate, and the model is shown the agent's tools. Either way the
//!    model sees a tool error. Results are appended as `tool` messages in
//!    call order, with the model's ids.
//! 4. At `max_steps`, the timeout, the cost budget or a graceful interrupt,
//!    the run is summed up from its log (files changed, commands and how
//!    they ended, calls that did not run); in the standard profile one last
//!    call without tools then asks the model what is left, and its answer
//!    follows the log's, marked as unchecked.
//! 5. Guards on one reply: identical calls of a reply (same tool, same
//!    canonical JSON arguments) run once, and at most
//!    `max_calls_per_step` of them run ([`LoopDecision::Duplicate`],
//!    [`LoopDecision::OverCallLimit`]); a reply that repeats itself or
//!    passes its `max_tokens` is cut off by the client
//!    ([`AgentEvent::ReplyCut`]). The calls that did not run are recorded,
//!    not sent back; the model is told about them, and about a cut, in a
//!    user message after the results. A cut reply without calls is no
//!    answer: the loop goes on.
//! 6. A call that changes something — a tool that is not read-only by its
//!    annotations, and declared effects beyond reads (writes, commands,
//!    opaque) — made again with the same arguments while no other such call
//!    ran since the first one succeeded, is not run again: the model gets
//!    the earlier result and is told why ([`LoopDecision::RepeatedChange`]).
//!    A call that only looks (`process` polling) runs every time. Any
//!    call made in two steps in a row is told so with its result; with
//!    constrained replies, the next step may not call that tool
//!    ([`crate::LlmRequest::barred`]): the model goes on with what it has
//!    instead of looking again; while a change the task asks for is still
//!    to make, no read-only tool either.
//! 7. In the small profile ([`crate::Profile::Small`]) the offer is the
//!    profile's compact tools and `finish`, one call of a reply runs, and
//!    outputs are cut by lines; a `finish(answer)` call is the run's
//!    answer and goes where an answer goes (rule 2): the run ends on it
//!    only when the checks pass, and is told why not as the call's
//!    result. A `finish` without an `answer` string is refused.
//! 8. Task checks (`agents.*.task_checks`, on by default; what a task
//!    names is [`crate::TaskChecks`]): an answer does not end the run
//!    while a file the task names has not been read or a command it names
//!    not run by a call that ran, nor while a file it asks to create
//!    (rule 9 of `crate::checks`) does not exist; then each command the
//!    task says must
//!    pass is run through the gate (recorded as a call of the step) and
//!    must succeed and print what the task says; in the small profile, a
//!    task that asks for a change (rule 6 of `crate::checks`) must have
//!    changed something. Otherwise the model is
//!    told what is missing or the command's output
//!    ([`AgentEvent::TaskCheck`]) and goes on; after three such refusals
//!    the run ends [`Outcome::Unverified`], saying why. Quality gates run
//!    after the task checks pass. While a file the task names has not been
//!    looked at (or a command it names not run, with a tool that runs
//!    commands), each request asks for a tool call
//!    ([`crate::LlmRequest::must_call`]): a constrained reply can then only
//!    be a call that is not `finish`, for at most six steps of a run.
//!    Once a person or a rule refused a call
//!    of the run (denied, no approver, a `deny` rule) or in a dry run,
//!    the task checks step aside: the run is not free to do what the task
//!    names.
//!
//! The loop is in `steps` (a state machine), the run around it in `run`; the calls of a step in `tools`; keeping the
//! context small in `compress`; what a run reports in `events` and
//! `report`; what it plugs in (hooks, gates, recorder) in `lifecycle`; its
//! configuration in `builder`.

mod admit;
mod builder;
mod compress;
mod decision;
mod events;
mod lifecycle;
mod report;
mod run;
mod steps;
mod tools;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use toolgate_engine::ExecutionEngine;

use crate::agent::AgentDef;
use crate::context::ContextBudget;
use crate::fallback::SwitchLog;
use crate::llm::LlmClient;

pub use builder::AgentRunnerBuilder;
use builder::Routing;
pub use decision::{CallDecision, LoopDecision};
use events::Recording;
pub use events::{AgentEvent, EventSink, RecordedEvent, ToolCallRecord};
pub use lifecycle::{
    GateReport, HookVerdict, LifecycleEvent, LifecycleHooks, QualityGates, RecordError,
    RunRecorder, StepSnapshot, ToolInstructions, ToolRefresh,
};
pub use report::{Outcome, RunReport, StepUsage};

/// The user message sent after the first reply with neither tool calls nor
/// text (rule 2).
pub const EMPTY_REPLY_NUDGE: &str =
    "Your reply was empty. Continue the task: call a tool, or give your final answer.";

/// Runs an agent against a model through the gate.
pub struct AgentRunner {
    llm: Arc<dyn LlmClient>,
    engine: Arc<ExecutionEngine>,
    agent: AgentDef,
    hooks: Arc<dyn LifecycleHooks>,
    gates: Arc<dyn QualityGates>,
    max_steps: u32,
    timeout: Option<Duration>,
    max_output_chars: usize,
    context_threshold_chars: Option<usize>,
    context: ContextBudget,
    prices: Option<(f64, f64)>,
    budget_usd: Option<f64>,
    events: Option<EventSink>,
    cancel: Option<watch::Receiver<bool>>,
    abort: Option<watch::Receiver<bool>>,
    recorder: Option<Arc<dyn RunRecorder>>,
    recover_text_calls: bool,
    switches: Option<Arc<SwitchLog>>,
    routing: Option<Routing>,
    /// The spend shared with delegated runs, when there are any.
    meter: Option<Arc<SpendMeter>>,
    refresh: Option<Arc<dyn ToolRefresh>>,
    instructions: Option<Arc<dyn ToolInstructions>>,
    /// The workspace root, for the task checks.
    workspace: Option<std::path::PathBuf>,
    /// Recorded events not yet handed to the recorder.
    recording: Arc<Recording>,
    /// The share of the window requests may use, as `f64` bits: 1 until
    /// the server refuses a request as too large.
    squeeze: std::sync::atomic::AtomicU64,
}

/// What a run and the runs it delegates to spend together, in USD: one
/// budget for the whole tree.
#[derive(Debug, Default)]
pub struct SpendMeter(Mutex<f64>);

impl SpendMeter {
    /// A meter at zero.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Adds a model call's cost.
    pub fn add(&self, usd: f64) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) += usd;
    }

    /// The spend so far.
    pub fn total(&self) -> f64 {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Resolves once `flag` is `true`; never without a flag (or once its sender
/// is gone without setting it).
async fn flag_set(flag: Option<watch::Receiver<bool>>) {
    match flag {
        Some(mut rx) => {
            if rx.wait_for(|v| *v).await.is_err() {
                std::future::pending::<()>().await;
            }
        }
        None => std::future::pending::<()>().await,
    }
}

/// Keeps the head and tail of `s` when it is longer than `max` characters.
pub fn truncate_head_tail(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_owned();
    }
    let keep = max / 2;
    let head: String = s.chars().take(keep).collect();
    let tail: String = s.chars().skip(n - keep).collect();
    format!(
        "{head}\n[... {} characters truncated ...]\n{tail}",
        n - 2 * keep
    )
}

fn estimate_tokens(s: usize) -> u64 {
    u64::try_from(s.div_ceil(4)).unwrap_or(u64::MAX)
}

impl AgentRunner {
    /// Bytes of messages past which the loop compresses (rule 5 of
    /// [`crate::context`]).
    fn threshold(&self, tools_bytes: usize) -> usize {
        self.context_threshold_chars
            .unwrap_or_else(|| (self.context.input_bytes().saturating_sub(tools_bytes)) * 3 / 4)
    }

    fn emit(&self, e: &AgentEvent) {
        self.recording.keep(e);
        if let Some(s) = &self.events {
            s(e);
        }
    }

    /// A sink that emits into this run as the runner itself does: live
    /// to the run's sink, and into the session when the kind is recorded.
    /// A delegated run's events come back this way, nested.
    pub fn event_sink(&self) -> EventSink {
        let recording = Arc::clone(&self.recording);
        let events = self.events.clone();
        Arc::new(move |e: &AgentEvent| {
            recording.keep(e);
            if let Some(s) = &events {
                s(e);
            }
        })
    }

    /// What the run has spent: the shared meter's total when it has one
    /// (delegated runs included), else its own calls'.
    fn spent(&self, report: &RunReport) -> Option<f64> {
        match &self.meter {
            Some(meter) if self.prices.is_some() => Some(meter.total()),
            _ => report.cost_usd(),
        }
    }

    /// Emits the provider switches of the model call that just returned.
    fn emit_switches(&self) {
        if let Some(log) = &self.switches {
            for switch in log.drain() {
                self.emit(&AgentEvent::ProviderSwitch(switch));
            }
        }
    }

    fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| *c.borrow())
    }

    /// The names of the tools this runner offers the model.
    pub fn tool_names(&self) -> BTreeSet<String> {
        self.agent
            .tool_names(self.engine.registry())
            .into_iter()
            .collect()
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d.into()).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_head_and_tail() {
        let s = format!("{}{}", "a".repeat(500), "z".repeat(500));
        let t = truncate_head_tail(&s, 200);
        assert!(t.starts_with("aaa") && t.ends_with("zzz"));
        assert!(t.contains("800 characters truncated"));
        assert_eq!(truncate_head_tail("short", 200), "short");
    }
}
