//! What a run plugs in: lifecycle hooks, quality gates, tool refresh and
//! first-use instructions, and the recorder that keeps the run.

use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value;

#[cfg(doc)]
use super::events::AgentEvent;
use super::events::{RecordedEvent, ToolCallRecord};
use super::report::{RunReport, StepUsage};
use crate::llm::Message;

/// What a lifecycle hook decided.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookVerdict {
    /// `Some(reason)` blocks the action.
    pub block: Option<String>,
    /// Text added to the conversation as a user message.
    pub additional_context: Option<String>,
}

/// A point in a run's life at which the loop emits [`LifecycleHooks`].
///
/// Serialised (and [`as_str`](Self::as_str)) in `snake_case`:
/// `session_start`, `agent_stop`, …
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LifecycleEvent {
    /// The run starts (first of all).
    SessionStart,
    /// The agent starts, after `session_start`.
    AgentStart,
    /// Before each model call with tools; may block the run or add context.
    PreLlmCall,
    /// After each model call with tools.
    PostLlmCall,
    /// 80 % of the cost budget is spent (once a run).
    BudgetWarning,
    /// Old steps were summarised or old outputs elided.
    ContextCompress,
    /// The run ended with an error, before `agent_stop`.
    OnError,
    /// The agent stopped (the seeds' `agent_complete`).
    AgentStop,
    /// The run ends (last of all).
    SessionEnd,
}

impl LifecycleEvent {
    /// The event's name as hooks and payloads spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SessionStart => "session_start",
            Self::AgentStart => "agent_start",
            Self::PreLlmCall => "pre_llm_call",
            Self::PostLlmCall => "post_llm_call",
            Self::BudgetWarning => "budget_warning",
            Self::ContextCompress => "context_compress",
            Self::OnError => "on_error",
            Self::AgentStop => "agent_stop",
            Self::SessionEnd => "session_end",
        }
    }
}

impl std::fmt::Display for LifecycleEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Lifecycle hooks the loop emits (see [`LifecycleEvent`]).
#[async_trait]
pub trait LifecycleHooks: Send + Sync {
    /// Runs the hooks of `event`.
    async fn emit(&self, event: LifecycleEvent, payload: Value) -> HookVerdict;
}

/// One quality gate's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GateReport {
    /// The gate's name.
    pub name: String,
    /// Whether it passed.
    pub passed: bool,
    /// Whether a failure must be fixed before the run may end.
    pub required: bool,
    /// Its output.
    pub output: String,
}

/// Brings tools into the registry while a run goes on: dynamic tools a
/// person approved meanwhile, from any process.
#[async_trait]
pub trait ToolRefresh: Send + Sync {
    /// Loads what is new; whether the registry changed.
    async fn refresh(&self) -> bool;
}

/// Instructions that come with a tool's first use (seed 003's lazy
/// instructions: a skill's body arrives with the result of the first call
/// of a tool the skill names).
pub trait ToolInstructions: Send + Sync {
    /// The instructions to append to the result of a call of `tool` that
    /// ran, if any are due now; each is given at most once per run.
    fn on_tool_used(&self, tool: &str) -> Option<String>;
}

/// Quality gates run when the model says it is done.
#[async_trait]
pub trait QualityGates: Send + Sync {
    /// Runs every gate.
    async fn run(&self) -> Vec<GateReport>;
}

/// One completed step of a run, as a [`RunRecorder`] keeps it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct StepSnapshot<'a> {
    /// The step (0 for what is recorded before the first model call and
    /// after the last step).
    pub step: u32,
    /// From which index the stored conversation is replaced by
    /// [`messages`](Self::messages): the number of messages already
    /// recorded, or less when the context was compressed.
    pub messages_from: usize,
    /// The conversation from `messages_from` on.
    pub messages: &'a [Message],
    /// The tool calls made since the last snapshot.
    pub tool_calls: &'a [ToolCallRecord],
    /// The model calls' usage since the last snapshot.
    pub usage: &'a [StepUsage],
    /// The recorded events since the last snapshot.
    pub events: &'a [RecordedEvent],
}

/// Keeps a run as it goes, step by step, so that a crash loses at most the
/// step in flight (the host writes it to the session store).
///
/// # Rules
///
/// 1. [`step`](Self::step) is called once the task is in the conversation
///    (before the first model call), after every step whose tool results
///    are in, and once at the end of the run, before
///    [`finish`](Self::finish).
/// 2. A snapshot is a consistent conversation: never an assistant message
///    whose tool calls lack their results.
/// 3. An error is reported as an [`AgentEvent::Warning`]; what it did not
///    record is sent again with the next snapshot.
/// 4. A run aborted at once (the second Ctrl-C) gets no final snapshot: the
///    last one recorded is the last complete step.
#[async_trait]
pub trait RunRecorder: Send + Sync {
    /// Records a snapshot.
    async fn step(&self, snapshot: &StepSnapshot<'_>) -> Result<(), RecordError>;

    /// Records how the run ended.
    async fn finish(&self, report: &RunReport) -> Result<(), RecordError>;
}

/// Why a [`RunRecorder`] could not record (the loop reports it as an
/// [`AgentEvent::Warning`] with the whole chain of causes).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// Part of the run could not be encoded.
    #[error(transparent)]
    Encode(#[from] serde_json::Error),
    /// The store refused the write.
    #[error(transparent)]
    Store(Box<dyn std::error::Error + Send + Sync + 'static>),
}

impl RecordError {
    /// A store's error.
    pub fn store(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Store(Box::new(error))
    }
}

pub(super) struct NoHooks;

#[async_trait]
impl LifecycleHooks for NoHooks {
    async fn emit(&self, _event: LifecycleEvent, _payload: Value) -> HookVerdict {
        HookVerdict::default()
    }
}

pub(super) struct NoGates;

#[async_trait]
impl QualityGates for NoGates {
    async fn run(&self) -> Vec<GateReport> {
        Vec::new()
    }
}
