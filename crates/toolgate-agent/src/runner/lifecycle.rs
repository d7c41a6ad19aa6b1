//! What a run plugs in: lifecycle hooks, quality gates, tool refresh and
//! first-use instructions, and the recorder that keeps the run.

use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value;

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

/// Lifecycle hooks the loop emits (`session_start`, `session_end`,
/// `agent_start`, `agent_stop`, `pre_llm_call`, `post_llm_call`,
/// `context_compress`).
#[async_trait]
pub trait LifecycleHooks: Send + Sync {
    /// Runs the hooks of `event`.
    async fn emit(&self, event: &str, payload: Value) -> HookVerdict;
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
    async fn step(&self, snapshot: &StepSnapshot<'_>) -> Result<(), String>;

    /// Records how the run ended.
    async fn finish(&self, report: &RunReport) -> Result<(), String>;
}

pub(super) struct NoHooks;

#[async_trait]
impl LifecycleHooks for NoHooks {
    async fn emit(&self, _event: &str, _payload: Value) -> HookVerdict {
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
