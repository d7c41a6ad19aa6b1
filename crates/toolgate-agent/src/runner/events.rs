//! What a run reports as it goes: live events, the events a session keeps,
//! and the record of each tool call.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use serde_json::Value;
use toolgate_core::{Effects, PathChange};
use toolgate_engine::PlanRecord;

use super::decision::CallDecision;
use crate::fallback::ProviderSwitch;
use crate::routing::Routed;

/// Something that happened during a run, for live output.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum AgentEvent {
    /// A step begins.
    Step {
        /// 1-based step number.
        step: u32,
        /// The tools this step offers, when routing chose them (absent:
        /// every tool of the agent).
        #[serde(skip_serializing_if = "Option::is_none")]
        tools: Option<Vec<String>>,
    },
    /// Routing sorted the task into categories and chose the tools to
    /// offer (recorded in the session).
    Routed(Routed),
    /// The model fallback moved a request to another provider (recorded
    /// in the session).
    ProviderSwitch(ProviderSwitch),
    /// Something happened in a run this one delegated to (its steps, tool
    /// calls and text; the steps and calls are recorded in the session).
    Subagent {
        /// The agent the work was handed to.
        agent: String,
        /// What happened there.
        event: Box<AgentEvent>,
    },
    /// Streamed model text.
    Text {
        /// The new text.
        delta: String,
    },
    /// A tool call went through the gate.
    ToolCall(ToolCallRecord),
    /// Old steps were summarised or old tool outputs elided to keep the
    /// context small.
    ContextCompress {
        /// Characters removed.
        removed_chars: usize,
    },
    /// The model's reply was cut off before its end: it repeated itself or
    /// passed its token cap (recorded in the session).
    ReplyCut {
        /// The step.
        step: u32,
        /// Why.
        reason: String,
    },
    /// The run did not end on the model's answer: the task names a file
    /// not read or a command not run yet, or a command it says must pass
    /// failed; the model was told (recorded in the session).
    TaskCheck {
        /// The step.
        step: u32,
        /// What is missing or failing.
        reason: String,
    },
    /// A model call's tokens (step 0: a summarising call).
    Usage {
        /// The step.
        step: u32,
        /// Prompt tokens sent (cached ones included).
        input_tokens: u64,
        /// Completion tokens.
        output_tokens: u64,
        /// Prompt tokens the server processed, the rest coming from its
        /// cache, when it says.
        #[serde(skip_serializing_if = "Option::is_none")]
        processed_tokens: Option<u64>,
        /// Whether the counts are estimates (the server reported none).
        estimated: bool,
    },
    /// A quality gate failed and its output was fed back.
    GateFailed {
        /// The gate.
        name: String,
    },
    /// 80 % of the cost budget is spent.
    BudgetWarning {
        /// USD spent so far.
        spent_usd: f64,
        /// The budget in USD.
        budget_usd: f64,
    },
    /// The loop asks for a summary without tools.
    Summary {
        /// Why the loop stopped.
        reason: String,
    },
    /// Something the person should know that does not stop the run (the
    /// session could not be recorded, say).
    Warning {
        /// What happened.
        message: String,
    },
    /// The model presented a plan (`exit_plan_mode`) and the person
    /// answered: approved in a mode, kept planning, or nobody could be
    /// asked (recorded in the session as `plan`).
    Plan(PlanRecord),
}

impl AgentEvent {
    /// The events a session keeps besides messages and tool calls, as
    /// (kind, data): routing decisions, provider switches and replies cut
    /// short.
    fn recorded(&self) -> Option<(&'static str, Value)> {
        let kind = match self {
            Self::Routed(_) => "routed",
            Self::ProviderSwitch(_) => "provider_switch",
            Self::ReplyCut { .. } => "reply_cut",
            Self::TaskCheck { .. } => "task_check",
            Self::Plan(_) => "plan",
            Self::Subagent { event, .. } if event.recorded_within() => "subagent",
            _ => return None,
        };
        let mut data = serde_json::to_value(self).ok()?;
        if let Some(object) = data.as_object_mut() {
            object.remove("type");
        }
        Some((kind, data))
    }
}

impl AgentEvent {
    /// Whether a delegated run's event is kept in the caller's session:
    /// its steps, tool calls, routing and switches, not its streamed text.
    fn recorded_within(&self) -> bool {
        match self {
            Self::Step { .. } | Self::ToolCall(_) | Self::Routed(_) | Self::ProviderSwitch(_) => {
                true
            }
            Self::Subagent { event, .. } => event.recorded_within(),
            _ => false,
        }
    }
}

/// An event a session keeps, with the step it happened in.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RecordedEvent {
    /// The step (0: before the first model call).
    pub step: u32,
    /// `routed`, `provider_switch`, `reply_cut`, `plan` or `subagent`.
    pub kind: String,
    /// The event's fields.
    pub data: Value,
}

/// One tool call of a run.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ToolCallRecord {
    /// Step number.
    pub step: u32,
    /// The model's id.
    pub id: String,
    /// The tool.
    pub name: String,
    /// Arguments as the model wrote them.
    pub arguments: String,
    /// The gate's decision, or the loop's when the call never reached the
    /// gate (serialised as one string, see [`CallDecision`]).
    pub decision: CallDecision,
    /// Whether the tool succeeded.
    pub success: bool,
    /// Duration in milliseconds.
    pub duration_ms: u64,
    /// What the model saw.
    pub output: String,
    /// What the call was declared to do ([`Effects::summary`]: no write
    /// contents); none when it never reached the gate.
    #[serde(default)]
    pub effects: Effects,
    /// Whether the model wrote the call as text and the loop recovered it.
    #[serde(default)]
    pub recovered: bool,
    /// The question a person was asked about the call, their answer and
    /// how long they took (`{"view": …, "answer": …, "waited_ms": …}`, see
    /// [`toolgate_engine::ApprovalRecord`]); none when nobody was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Value>,
    /// Milliseconds of `duration_ms` the person took to answer.
    #[serde(default)]
    pub waited_ms: u64,
    /// What the call changed in the workspace, as the gate captured it
    /// (each path with its state before and after); empty when nothing
    /// changed or the gate does not capture.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files_changed: Vec<PathChange>,
    /// What changed in the workspace after the gate's previous capture and
    /// before this call ran (a background process, a person).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed_before: Vec<PathChange>,
    /// Why the gate could not capture what the call changed, when so: the
    /// call cannot be undone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture_error: Option<String>,
}

/// Receives [`AgentEvent`]s.
pub type EventSink = Arc<dyn Fn(&AgentEvent) + Send + Sync>;

/// Events waiting for the recorder, and the step they belong to.
#[derive(Debug, Default)]
pub(super) struct Recording {
    pending: Mutex<Vec<RecordedEvent>>,
    pub(super) step: AtomicU32,
}

impl Recording {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, Vec<RecordedEvent>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `e` for the recorder when the session records its kind.
    pub(super) fn keep(&self, e: &AgentEvent) {
        if let Some((kind, data)) = e.recorded() {
            self.lock().push(RecordedEvent {
                step: self.step.load(Ordering::Relaxed),
                kind: kind.to_owned(),
                data,
            });
        }
    }
}
