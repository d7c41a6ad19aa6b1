//! Agent sessions, written step by step.

use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::StoreError;

/// The outcome of a session whose current run has not finished (or whose
/// process died before it could say how the run ended).
pub const RUNNING: &str = "running";

/// Where agent sessions are kept: the conversation, the tool calls and the
/// token usage of every step, so that a run killed half-way can be resumed
/// from its last complete step.
///
/// Messages are opaque JSON values: the store keeps them in order and gives
/// them back unchanged, whatever the agent puts in them.
///
/// # Rules
///
/// 1. A session is created by its first [`begin`](Self::begin); every
///    `begin` (the first, and each resume) starts a new run, numbered 1, 2,
///    … per session, which becomes the session's *current run*. The session
///    is then [`RUNNING`], with the calling process's id.
/// 2. [`record_step`](Self::record_step) is atomic: the step's messages,
///    tool calls, usage and events are all stored, or (after an error or a
///    crash) none of them. A crash loses at most the step in flight.
/// 3. A step replaces the stored conversation from index `messages_from`
///    on: a normal step sends the messages it added
///    (`messages_from` = the number stored), a step that rewrote earlier
///    messages (context compression) sends a lower index and everything
///    from there. A `messages_from` beyond the number stored is refused
///    ([`StoreError::MessageGap`]): the conversation never has holes.
/// 4. Only the current run may record steps or finish
///    ([`StoreError::NotCurrentRun`]): when a second process resumes a
///    session, the first one's further writes are refused instead of
///    interleaving two conversations.
/// 5. [`finish`](Self::finish) stores the run's outcome and clears the
///    process id. A session whose process died stays [`RUNNING`] with the
///    dead process's id; callers that care check whether it is alive.
/// 6. Reading a session that does not exist is [`StoreError::NotFound`].
#[async_trait]
pub trait SessionStore: Send + Sync {
    /// Creates the session if it is new (else keeps it: a resumed session),
    /// starts a new run and marks the session running with this process's
    /// id.
    async fn begin(&self, session: &NewSession) -> Result<RunStart, StoreError>;

    /// Stores one complete step, in one transaction (see the rules above).
    async fn record_step(&self, step: &StepRecord) -> Result<(), StoreError>;

    /// Ends a run with `outcome` (`completed`, `failed`, `interrupted`, …).
    async fn finish(&self, session_id: &str, run: u32, outcome: &str) -> Result<(), StoreError>;

    /// Every session, most recently updated first.
    async fn list(&self) -> Result<Vec<SessionSummary>, StoreError>;

    /// One session's summary.
    async fn get(&self, session_id: &str) -> Result<SessionSummary, StoreError>;

    /// The stored conversation, in order.
    async fn messages(&self, session_id: &str) -> Result<Vec<Value>, StoreError>;

    /// Every stored tool call, in the order they were recorded.
    async fn tool_calls(&self, session_id: &str) -> Result<Vec<ToolCallRow>, StoreError>;

    /// Every stored event, in the order they were recorded.
    async fn events(&self, session_id: &str) -> Result<Vec<SessionEventRow>, StoreError>;
}

/// What [`SessionStore::begin`] needs to know.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewSession {
    /// The session id (see [`new_session_id`]).
    pub id: String,
    /// The agent. Kept from the first run when the session is resumed.
    pub agent: String,
    /// The task. The session keeps its first task.
    pub task: String,
}

/// What [`SessionStore::begin`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunStart {
    /// The new run's number (1 for a new session).
    pub run: u32,
    /// How many messages the session already stores (0 for a new session);
    /// a resumed run's first step appends from here.
    pub stored_messages: usize,
}

/// One complete step of a run, for [`SessionStore::record_step`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// The session.
    pub session_id: String,
    /// The run, as [`RunStart::run`] returned it.
    pub run: u32,
    /// The step's number within the run.
    pub step: u32,
    /// The index of the first message in `messages`: the stored
    /// conversation from here on is replaced.
    pub messages_from: usize,
    /// The messages from `messages_from` on.
    pub messages: Vec<Value>,
    /// The tool calls the step made, in order.
    pub tool_calls: Vec<ToolCallRow>,
    /// The model call's token usage, when known.
    pub usage: Option<UsageRow>,
    /// What else happened during the step, in order.
    #[serde(default)]
    pub events: Vec<SessionEvent>,
}

/// Something that happened during a step besides its messages and tool
/// calls: a provider switch, the tools routing chose, a sub-agent's step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionEvent {
    /// The step it happened in (0: before the first model call).
    pub step: u32,
    /// What kind of event (`provider_switch`, `routed`, …).
    pub kind: String,
    /// Its details, as the agent reported them.
    pub data: Value,
}

/// A stored [`SessionEvent`], with its run and time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionEventRow {
    /// The run it happened in.
    pub run: u32,
    /// When it was recorded, in milliseconds since the Unix epoch.
    pub at: i64,
    /// The event.
    #[serde(flatten)]
    pub event: SessionEvent,
}

/// One tool call of a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRow {
    /// The step that made the call.
    pub step: u32,
    /// The model's id for the call.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model wrote them.
    pub arguments: String,
    /// The gate's decision (or `malformed_arguments`, `not_allowed`, …).
    pub decision: String,
    /// Whether the tool succeeded.
    pub success: bool,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// What the model saw.
    pub output: String,
    /// The call's declared effects (`null` when unknown).
    pub effects: Value,
    /// Whether the call was recovered from the model's text rather than
    /// sent as a structured tool call.
    pub recovered: bool,
}

/// The token usage of a step's model call.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct UsageRow {
    /// Input (prompt) tokens.
    pub input_tokens: u64,
    /// Output (completion) tokens.
    pub output_tokens: u64,
    /// Whether the counts are estimates.
    pub estimated: bool,
    /// Cost in USD, when prices are configured.
    pub cost_usd: Option<f64>,
}

/// One row of `toolgate sessions list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSummary {
    /// The id.
    pub id: String,
    /// When the session was created, in milliseconds since the Unix epoch.
    pub created: i64,
    /// When it was last written, in milliseconds since the Unix epoch.
    ///
    /// Stamps are unique and increase with every write to the store: a
    /// write in the same millisecond as the previous one is stamped a
    /// millisecond later, so sorting by `updated` gives the exact order of
    /// the last writes.
    pub updated: i64,
    /// The agent of its first run.
    pub agent: String,
    /// Its first task.
    pub task: String,
    /// The last run's outcome, or [`RUNNING`].
    pub outcome: String,
    /// The process of the current run, while it is [`RUNNING`].
    pub pid: Option<u32>,
    /// Runs begun.
    pub runs: u32,
    /// Model steps recorded (step 1 and later), over all runs: the number
    /// each run's report gives, summed.
    pub steps: u64,
    /// Input tokens, over all steps.
    pub input_tokens: u64,
    /// Output tokens, over all steps.
    pub output_tokens: u64,
}

/// A new session id: time-based, unique per process and moment
/// (`s` + hex microseconds + 4 hex digits of the process id).
pub fn new_session_id() -> String {
    let micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros());
    format!("s{micros:x}{:04x}", std::process::id() & 0xffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_sort_by_time_and_are_ascii() {
        let a = new_session_id();
        let b = new_session_id();
        assert!(a.starts_with('s') && a.chars().all(|c| c.is_ascii_alphanumeric()));
        assert!(a.len() == b.len() && a <= b, "{a} then {b}");
    }
}
