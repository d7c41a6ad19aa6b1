//! Handing work to other agents (seed 002's `delegate_to_bot`,
//! `collaborate` and `improve`; seed 004's hand-offs).
//!
//! # Rules
//!
//! 1. `delegate(agent, task)` runs another configured agent on a sub-task
//!    and returns its final answer as the tool result. `collaborate(action,
//!    …)` keeps a multi-turn exchange with another agent under a session
//!    id. `improve(focus)` hands the persona and memory files to the
//!    built-in `improve` agent. These are the *delegation tools*.
//! 2. Only an agent whose configuration lists `delegate_to` is offered the
//!    delegation tools, and it may reach only the agents listed there.
//! 3. The agent that receives the work never has the delegation tools
//!    ([`AgentDef::as_sub_agent`](crate::AgentDef::as_sub_agent)): there
//!    is no loop and no depth beyond one, by construction. An agent never
//!    lists itself (the host refuses such a configuration).
//! 4. The work runs inside the caller's limits: the caller's gate (its
//!    confirmation mode, approver, guardrails, hooks and audit — every call
//!    of the sub-agent goes through it), the caller's deadline, and one
//!    budget for both (a shared [`SpendMeter`]).
//! 5. The sub-agent's steps and tool calls reach the caller's events
//!    nested ([`AgentEvent::Subagent`]), and are recorded in the caller's
//!    session with the step that delegated.
//! 6. `collaborate`'s other side gets only its read-only tools
//!    (collaboration-safe): it can look, not change anything.
//! 7. The tools work only inside an agent run that the host entered in
//!    the [`DelegationHub`]; anywhere else (an MCP client, `toolgate
//!    call`) they fail with a message saying so.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolgate_core::{
    Effects, EffectsError, Sensitivity, ToolContext, ToolResult, TypedTool, error_chain,
};

use crate::llm::Message;
use crate::runner::{AgentEvent, EventSink, Outcome, SpendMeter};

/// `delegate`.
pub const DELEGATE: &str = "delegate";
/// `collaborate`.
pub const COLLABORATE: &str = "collaborate";
/// `improve`.
pub const IMPROVE: &str = "improve";
/// The delegation tools (rule 1).
pub const DELEGATION_TOOLS: [&str; 3] = [DELEGATE, COLLABORATE, IMPROVE];

/// How long a delegation call may take at most; the caller's deadline
/// usually ends it sooner (rule 4).
const CALL_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// What a sub-run is asked to do.
#[derive(Clone)]
#[non_exhaustive]
pub struct SubRun {
    /// The agent to run.
    pub agent: String,
    /// The task, or the next message of a collaboration.
    pub task: String,
    /// The earlier turns of a collaboration (empty for `delegate`).
    pub history: Vec<Message>,
    /// Only read-only tools (rule 6).
    pub collaboration_safe: bool,
    /// Where its events go, already nested for the caller.
    pub events: EventSink,
    /// The caller's deadline.
    pub deadline: Option<Instant>,
    /// The spend shared with the caller.
    pub meter: Arc<SpendMeter>,
}

impl std::fmt::Debug for SubRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubRun")
            .field("agent", &self.agent)
            .field("task", &self.task)
            .field("collaboration_safe", &self.collaboration_safe)
            .finish_non_exhaustive()
    }
}

/// How a sub-run ended.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SubResult {
    /// Its final answer.
    pub answer: String,
    /// How it ended.
    pub outcome: Outcome,
    /// Steps taken.
    pub steps: u32,
    /// The conversation after the run (the next turn of a collaboration
    /// continues it).
    pub messages: Vec<Message>,
    /// The error, when it failed.
    pub error: Option<String>,
}

impl SubResult {
    /// A finished sub-run.
    pub fn new(answer: String, outcome: Outcome, steps: u32, messages: Vec<Message>) -> Self {
        Self {
            answer,
            outcome,
            steps,
            messages,
            error: None,
        }
    }

    /// With the error it ended with.
    #[must_use]
    pub fn error(mut self, error: Option<String>) -> Self {
        self.error = error;
        self
    }
}

/// Runs other agents for the delegation tools; the host implements it.
#[async_trait]
pub trait SubAgents: Send + Sync {
    /// A line about `agent` for `collaborate`'s `discover`, or `None` when
    /// there is no such agent.
    fn describe(&self, agent: &str) -> Option<String>;

    /// Runs `run` to its end.
    async fn run(&self, run: SubRun) -> Result<SubResult, SubAgentError>;

    /// Runs the built-in `improve` agent on `focus` (rule 1), after a
    /// backup; `Err` says why it cannot.
    async fn improve(&self, focus: &str, events: EventSink) -> Result<SubResult, SubAgentError>;
}

/// Why a [`SubAgents`] could not run the work; the delegation tool's result
/// says so, with its causes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SubAgentError {
    /// No agent of that name is configured.
    #[error("there is no agent `{0}` to hand work to")]
    UnknownAgent(String),
    /// `improve` is not set up for the caller.
    #[error("`improve` is not available to this agent")]
    ImproveUnavailable,
    /// The backup `improve` makes first failed; nothing was changed.
    #[error("the backup failed, nothing was changed")]
    Backup(#[source] std::io::Error),
}

/// The run that delegates: who it is, where its events go, its limits.
#[derive(Clone)]
#[non_exhaustive]
pub struct ParentRun {
    /// The caller's name.
    pub agent: String,
    /// The agents it may reach (rule 2).
    pub delegate_to: Vec<String>,
    /// The caller's event sink (events are nested before they go there).
    pub events: EventSink,
    /// The caller's deadline.
    pub deadline: Option<Instant>,
    /// The spend shared with the caller.
    pub meter: Arc<SpendMeter>,
    /// Who runs the agents.
    pub agents: Arc<dyn SubAgents>,
}

impl ParentRun {
    /// The caller `agent` that may reach `delegate_to`.
    pub fn new(
        agent: impl Into<String>,
        delegate_to: Vec<String>,
        events: EventSink,
        agents: Arc<dyn SubAgents>,
    ) -> Self {
        Self {
            agent: agent.into(),
            delegate_to,
            events,
            deadline: None,
            meter: SpendMeter::new(),
            agents,
        }
    }

    /// The caller's deadline.
    #[must_use]
    pub fn deadline(mut self, deadline: Option<Instant>) -> Self {
        self.deadline = deadline;
        self
    }

    /// The spend meter shared with the caller.
    #[must_use]
    pub fn meter(mut self, meter: Arc<SpendMeter>) -> Self {
        self.meter = meter;
        self
    }

    /// The caller's sink, nesting the events of `agent`'s run (rule 5).
    fn nested(&self, agent: &str) -> EventSink {
        let parent = Arc::clone(&self.events);
        let agent = agent.to_owned();
        Arc::new(move |e: &AgentEvent| {
            parent(&AgentEvent::Subagent {
                agent: agent.clone(),
                event: Box::new(e.clone()),
            });
        })
    }

    /// Refuses an agent the caller may not reach (rule 2).
    fn check(&self, agent: &str) -> Result<(), String> {
        if self.delegate_to.iter().any(|a| a == agent) {
            Ok(())
        } else {
            Err(format!(
                "`{agent}` is not an agent {} may hand work to; it may reach: {}",
                self.agent,
                self.delegate_to.join(", ")
            ))
        }
    }
}

/// A collaboration in progress.
#[derive(Debug, Clone)]
struct Collaboration {
    agent: String,
    messages: Vec<Message>,
}

/// The agent runs that may delegate, by session id, and their
/// collaborations (rule 7).
#[derive(Default)]
pub struct DelegationHub {
    parents: Mutex<HashMap<String, ParentRun>>,
    collaborations: Mutex<HashMap<String, Collaboration>>,
    next: Mutex<u64>,
}

impl std::fmt::Debug for DelegationHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DelegationHub").finish_non_exhaustive()
    }
}

/// Leaves the hub when dropped: the run is over.
#[must_use = "the run leaves the hub when this is dropped"]
pub struct Entered {
    hub: Arc<DelegationHub>,
    session: String,
}

impl Drop for Entered {
    fn drop(&mut self) {
        self.hub
            .parents
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.session);
    }
}

impl DelegationHub {
    /// An empty hub.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Enters the run of session `session` until the guard is dropped.
    pub fn enter(self: &Arc<Self>, session: impl Into<String>, parent: ParentRun) -> Entered {
        let session = session.into();
        self.parents
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(session.clone(), parent);
        Entered {
            hub: Arc::clone(self),
            session,
        }
    }

    /// The run a call belongs to.
    fn parent(&self, ctx: &ToolContext) -> Result<ParentRun, String> {
        let parents = self.parents.lock().unwrap_or_else(PoisonError::into_inner);
        ctx.session_id
            .as_ref()
            .and_then(|s| parents.get(s))
            .cloned()
            .ok_or_else(|| {
                "this tool works only inside an agent run that may delegate (`toolgate run` \
                 with an agent that lists `delegate_to`)"
                    .to_owned()
            })
    }

    fn collaboration(&self, id: &str) -> Option<Collaboration> {
        self.collaborations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    fn new_collaboration_id(&self) -> String {
        let mut next = self.next.lock().unwrap_or_else(PoisonError::into_inner);
        *next += 1;
        format!("collab-{next}")
    }
}

/// The text a finished sub-run gives back to the caller.
fn result_of(agent: &str, result: &SubResult, extra: Option<(&str, &str)>) -> ToolResult {
    let mut output = String::new();
    if let Some((key, value)) = extra {
        let _ = write!(output, "{key}: {value}\n\n");
    }
    output.push_str(result.answer.trim());
    let metadata = json!({"agent": agent, "outcome": result.outcome, "steps": result.steps});
    let finished = result.outcome == Outcome::Completed;
    let mut tool_result = if finished {
        ToolResult::success(output)
    } else {
        let reason = result.error.clone().unwrap_or_else(|| {
            format!(
                "{agent} stopped before finishing ({})",
                serde_json::to_value(result.outcome)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            )
        });
        ToolResult::failure(format!("{reason}; its last answer: {}", output.trim()))
    };
    if let Some(object) = metadata.as_object() {
        for (key, value) in object {
            tool_result = tool_result.with_metadata(key, value.clone());
        }
    }
    tool_result
}

/// Arguments of `delegate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DelegateArgs {
    /// The agent to hand the task to.
    pub agent: String,
    /// The task, complete: the agent sees nothing else.
    pub task: String,
}

/// `delegate` (rules on the module).
#[derive(Debug, Clone)]
pub struct DelegateTool {
    hub: Arc<DelegationHub>,
}

impl DelegateTool {
    /// A `delegate` over `hub`.
    pub fn new(hub: Arc<DelegationHub>) -> Self {
        Self { hub }
    }
}

#[async_trait]
impl TypedTool for DelegateTool {
    type Args = DelegateArgs;
    const NAME: &'static str = DELEGATE;
    const DESCRIPTION: &'static str = "Hand a self-contained task to another agent and get its \
        final answer. Example: {\"agent\": \"review\", \"task\": \"Review src/app.py for bugs\"}";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn timeout(&self) -> Option<Duration> {
        Some(CALL_TIMEOUT)
    }

    /// None of its own: every call the sub-agent makes goes through the
    /// gate with its own effects (rule 4).
    fn effects(&self, _args: &DelegateArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, args: DelegateArgs, ctx: &ToolContext) -> ToolResult {
        let parent = match self.hub.parent(ctx) {
            Ok(parent) => parent,
            Err(message) => return ToolResult::failure(message),
        };
        if let Err(message) = parent.check(&args.agent) {
            return ToolResult::failure(message);
        }
        let run = SubRun {
            agent: args.agent.clone(),
            task: args.task,
            history: Vec::new(),
            collaboration_safe: false,
            events: parent.nested(&args.agent),
            deadline: parent.deadline,
            meter: Arc::clone(&parent.meter),
        };
        match parent.agents.run(run).await {
            Ok(result) => result_of(&args.agent, &result, None),
            Err(error) => ToolResult::failure(error_chain(&error)),
        }
    }
}

/// What `collaborate` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CollaborateAction {
    /// List the agents one can collaborate with.
    Discover,
    /// Send a message, in a new exchange or `session_id`'s.
    Send,
    /// End the exchange `session_id`.
    EndSession,
}

/// Arguments of `collaborate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CollaborateArgs {
    /// `discover`, `send` or `end_session`.
    pub action: CollaborateAction,
    /// send: the agent to talk to (for a new exchange).
    #[serde(default)]
    pub agent: Option<String>,
    /// send: your message.
    #[serde(default)]
    pub message: Option<String>,
    /// send (to continue) and `end_session`: the exchange's id.
    #[serde(default)]
    pub session_id: Option<String>,
}

/// `collaborate` (rules on the module).
#[derive(Debug, Clone)]
pub struct CollaborateTool {
    hub: Arc<DelegationHub>,
}

impl CollaborateTool {
    /// A `collaborate` over `hub`.
    pub fn new(hub: Arc<DelegationHub>) -> Self {
        Self { hub }
    }

    async fn send(&self, parent: &ParentRun, args: CollaborateArgs) -> ToolResult {
        let Some(message) = args.message.filter(|m| !m.trim().is_empty()) else {
            return ToolResult::failure("send needs a `message`");
        };
        let (id, earlier) = if let Some(id) = &args.session_id {
            let Some(open) = self.hub.collaboration(id) else {
                return ToolResult::failure(format!(
                    "no exchange `{id}` is open; start one with send and an `agent`"
                ));
            };
            (id.clone(), open)
        } else {
            let Some(agent) = args.agent.clone() else {
                return ToolResult::failure(
                    "send needs an `agent` (for a new exchange) or a `session_id`",
                );
            };
            let fresh = Collaboration {
                agent,
                messages: Vec::new(),
            };
            (self.hub.new_collaboration_id(), fresh)
        };
        if let Err(reason) = parent.check(&earlier.agent) {
            return ToolResult::failure(reason);
        }
        let run = SubRun {
            agent: earlier.agent.clone(),
            task: message,
            history: earlier.messages,
            collaboration_safe: true,
            events: parent.nested(&earlier.agent),
            deadline: parent.deadline,
            meter: Arc::clone(&parent.meter),
        };
        match parent.agents.run(run).await {
            Ok(result) => {
                self.hub
                    .collaborations
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(
                        id.clone(),
                        Collaboration {
                            agent: earlier.agent.clone(),
                            messages: result.messages.clone(),
                        },
                    );
                result_of(&earlier.agent, &result, Some(("session_id", &id)))
            }
            Err(error) => ToolResult::failure(error_chain(&error)),
        }
    }
}

#[async_trait]
impl TypedTool for CollaborateTool {
    type Args = CollaborateArgs;
    const NAME: &'static str = COLLABORATE;
    const DESCRIPTION: &'static str = "Talk with another agent over several turns (it can read, \
        not change anything): action discover lists agents; send starts or continues an exchange \
        (keep the session_id it returns); end_session closes it.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn timeout(&self) -> Option<Duration> {
        Some(CALL_TIMEOUT)
    }

    fn effects(&self, _args: &CollaborateArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, args: CollaborateArgs, ctx: &ToolContext) -> ToolResult {
        let parent = match self.hub.parent(ctx) {
            Ok(parent) => parent,
            Err(message) => return ToolResult::failure(message),
        };
        match args.action {
            CollaborateAction::Discover => {
                let lines: Vec<String> = parent
                    .delegate_to
                    .iter()
                    .filter(|a| a.as_str() != IMPROVE)
                    .filter_map(|a| parent.agents.describe(a).map(|d| format!("- {a}: {d}")))
                    .collect();
                ToolResult::success(lines.join("\n"))
            }
            CollaborateAction::Send => self.send(&parent, args).await,
            CollaborateAction::EndSession => {
                let Some(id) = args.session_id else {
                    return ToolResult::failure("end_session needs the `session_id`");
                };
                let removed = self
                    .hub
                    .collaborations
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&id);
                match removed {
                    Some(_) => ToolResult::success(format!("exchange {id} ended")),
                    None => ToolResult::failure(format!("no exchange `{id}` is open")),
                }
            }
        }
    }
}

/// Arguments of `improve`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImproveArgs {
    /// What to improve in your persona or memory, e.g. "tone of answers".
    pub focus: String,
}

/// `improve` (rules on the module): offered when the caller lists
/// `improve` in `delegate_to` (`delegate` and `collaborate` when it lists
/// any other agent).
#[derive(Debug, Clone)]
pub struct ImproveTool {
    hub: Arc<DelegationHub>,
}

impl ImproveTool {
    /// An `improve` over `hub`.
    pub fn new(hub: Arc<DelegationHub>) -> Self {
        Self { hub }
    }
}

#[async_trait]
impl TypedTool for ImproveTool {
    type Args = ImproveArgs;
    const NAME: &'static str = IMPROVE;
    const DESCRIPTION: &'static str = "Have the improve agent revise your persona and memory \
        files (SOUL.md, IDENTITY.md, GOALS.md, memory/) on one focus; a backup is made first.";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;

    fn timeout(&self) -> Option<Duration> {
        Some(CALL_TIMEOUT)
    }

    fn effects(&self, _args: &ImproveArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, args: ImproveArgs, ctx: &ToolContext) -> ToolResult {
        let parent = match self.hub.parent(ctx) {
            Ok(parent) => parent,
            Err(message) => return ToolResult::failure(message),
        };
        if let Err(message) = parent.check(IMPROVE) {
            return ToolResult::failure(message);
        }
        match parent
            .agents
            .improve(&args.focus, parent.nested(IMPROVE))
            .await
        {
            Ok(result) => result_of(IMPROVE, &result, None),
            Err(error) => ToolResult::failure(error_chain(&error)),
        }
    }
}
