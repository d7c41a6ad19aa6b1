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
//!    allowed, well-formed and read-only, in order otherwise. Malformed
//!    arguments, a tool the agent may not use, or an unknown tool become a
//!    tool error the model sees. Results are appended as `tool` messages in
//!    call order, with the model's ids.
//! 4. At `max_steps`, the timeout, or a graceful interrupt, one last call is
//!    made without tools so the model can summarise.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::watch;
use toolgate_core::{Effects, SchemaFormat, ToolCall, error_chain};
use toolgate_engine::{Decision, ExecutionEngine};

use crate::agent::AgentDef;
use crate::context::{ContextBudget, DEFAULT_CONTEXT_WINDOW, fit, messages_bytes};
use crate::fallback::{ProviderSwitch, SwitchLog};
use crate::llm::{LlmClient, LlmError, LlmRequest, Message, ModelToolCall, Role, Usage};
use crate::recover::{TextCall, recover_tool_calls};
use crate::routing::{Routed, Router};

/// The user message sent after the first reply with neither tool calls nor
/// text (rule 2).
pub const EMPTY_REPLY_NUDGE: &str =
    "Your reply was empty. Continue the task: call a tool, or give your final answer.";

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

/// What has been recorded of a run so far.
#[derive(Debug, Default)]
struct Journal {
    /// Messages before this index are recorded as they stand.
    clean_until: usize,
    calls: usize,
    usage: usize,
    warned: bool,
}

struct NoHooks;

#[async_trait]
impl LifecycleHooks for NoHooks {
    async fn emit(&self, _event: &str, _payload: Value) -> HookVerdict {
        HookVerdict::default()
    }
}

struct NoGates;

#[async_trait]
impl QualityGates for NoGates {
    async fn run(&self) -> Vec<GateReport> {
        Vec::new()
    }
}

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
}

impl AgentEvent {
    /// The events a session keeps besides messages and tool calls, as
    /// (kind, data): routing decisions and provider switches.
    fn recorded(&self) -> Option<(&'static str, Value)> {
        let kind = match self {
            Self::Routed(_) => "routed",
            Self::ProviderSwitch(_) => "provider_switch",
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
    /// `routed` or `provider_switch`.
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
    /// The gate's decision (or `malformed_arguments` / `not_allowed`).
    pub decision: String,
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
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The model answered without tool calls.
    Completed,
    /// `max_steps` was reached (partial).
    MaxSteps,
    /// The time budget ran out.
    Timeout,
    /// The model made the same call with the same arguments too many times
    /// in a row (`max_repeated_calls`) (partial).
    Repeating,
    /// The cost budget ran out (partial).
    Budget,
    /// Stopped gracefully by the person (Ctrl-C).
    Interrupted,
    /// The person aborted at a confirmation prompt.
    Aborted,
    /// The model server refused the credentials.
    AuthFailed,
    /// The model call failed or a hook blocked the run.
    Failed,
    /// Calls the task needed were refused because nobody could be asked to
    /// approve them (no terminal, no approver): whatever the model said,
    /// the work was not done.
    Blocked,
}

impl Outcome {
    /// The outcome's name as sessions, reports and `--json` spell it
    /// (`completed`, `max_steps`, `blocked`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::MaxSteps => "max_steps",
            Self::Timeout => "timeout",
            Self::Repeating => "repeating",
            Self::Budget => "budget",
            Self::Interrupted => "interrupted",
            Self::Aborted => "aborted",
            Self::AuthFailed => "auth_failed",
            Self::Failed => "failed",
            Self::Blocked => "blocked",
        }
    }
}

/// Tokens and cost of one step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct StepUsage {
    /// Step number (0 for the summary call).
    pub step: u32,
    /// Tokens.
    pub usage: Usage,
    /// Whether the counts are estimates (~4 characters a token).
    pub estimated: bool,
    /// Cost in USD, when prices are configured.
    pub cost_usd: Option<f64>,
}

/// The result of a run.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct RunReport {
    /// How it ended.
    pub outcome: Outcome,
    /// The agent.
    pub agent: String,
    /// The task.
    pub task: String,
    /// The last answer of the model.
    pub final_text: String,
    /// Steps taken (model calls with tools).
    pub steps: u32,
    /// Per-step usage.
    pub step_usage: Vec<StepUsage>,
    /// Every tool call.
    pub tool_calls: Vec<ToolCallRecord>,
    /// The files successful calls changed, from their declared effects
    /// (written, deleted, either end of a rename), sorted.
    pub files_changed: Vec<String>,
    /// The error, when the run failed.
    pub error: Option<String>,
    /// The whole conversation.
    pub messages: Vec<Message>,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
}

impl RunReport {
    /// Total tokens (input, output).
    pub fn tokens(&self) -> (u64, u64) {
        self.step_usage.iter().fold((0, 0), |(i, o), s| {
            (i + s.usage.input_tokens, o + s.usage.output_tokens)
        })
    }

    /// Total cost, when prices are configured.
    pub fn cost_usd(&self) -> Option<f64> {
        self.step_usage
            .iter()
            .map(|s| s.cost_usd)
            .try_fold(0.0, |acc, c| c.map(|c| acc + c))
    }

    /// How many calls were refused because nobody could be asked to
    /// approve them ([`Outcome::Blocked`]).
    pub fn blocked_calls(&self) -> usize {
        self.tool_calls
            .iter()
            .filter(|c| c.decision == Decision::NoApprover.as_str())
            .count()
    }

    /// Milliseconds people took to answer questions during the run.
    pub fn waited_ms(&self) -> u64 {
        self.tool_calls.iter().map(|c| c.waited_ms).sum()
    }

    /// The report as JSON (without the conversation). Each tool call
    /// carries `waited_ms` (the person's part of `duration_ms`) and, when a
    /// person was asked, `approval` (what they were shown and answered).
    pub fn to_json(&self) -> Value {
        let (i, o) = self.tokens();
        json!({
            "outcome": self.outcome, "agent": self.agent, "task": self.task,
            "final_text": self.final_text, "steps": self.steps,
            "tokens": {"input": i, "output": o}, "cost_usd": self.cost_usd(),
            "tool_calls": self.tool_calls.iter().map(|c| {
                let mut call = json!({
                    "step": c.step, "id": c.id, "name": c.name, "decision": c.decision,
                    "success": c.success, "duration_ms": c.duration_ms,
                    "waited_ms": c.waited_ms});
                if let Some(approval) = &c.approval {
                    call["approval"] = approval.clone();
                }
                call
            }).collect::<Vec<_>>(),
            "blocked_calls": self.blocked_calls(),
            "files_changed": self.files_changed, "error": self.error,
            "duration_ms": self.duration_ms, "waited_ms": self.waited_ms(),
        })
    }

    /// The report as Markdown.
    pub fn to_markdown(&self) -> String {
        let (i, o) = self.tokens();
        let mut s = format!(
            "# toolgate run report\n\n- Task: {}\n- Agent: {}\n",
            self.task, self.agent
        );
        let _ = writeln!(s, "- Outcome: {:?}\n- Steps: {}", self.outcome, self.steps);
        let _ = writeln!(s, "- Tokens: {i} in, {o} out");
        if let Some(c) = self.cost_usd() {
            let _ = writeln!(s, "- Cost: ${c:.4}");
        }
        let _ = writeln!(
            s,
            "- Duration: {} ms ({} ms waiting for answers)\n\n## Tool calls\n",
            self.duration_ms,
            self.waited_ms()
        );
        let _ = writeln!(
            s,
            "| step | tool | decision | ok | ms | waited ms |\n|---|---|---|---|---|---|"
        );
        for c in &self.tool_calls {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} |",
                c.step,
                c.name,
                c.decision,
                c.success,
                c.duration_ms.saturating_sub(c.waited_ms),
                c.waited_ms
            );
        }
        let asked: Vec<&ToolCallRecord> = self
            .tool_calls
            .iter()
            .filter(|c| c.approval.is_some())
            .collect();
        if !asked.is_empty() {
            let _ = writeln!(s, "\n## Approvals\n");
            for c in asked {
                let approval = c.approval.as_ref().unwrap_or(&Value::Null);
                let _ = writeln!(
                    s,
                    "- step {} `{}`: {} after {} ms: {}",
                    c.step,
                    c.name,
                    approval["answer"].as_str().unwrap_or("?"),
                    c.waited_ms,
                    approval["view"]["reason"].as_str().unwrap_or("")
                );
                for action in approval["view"]["actions"].as_array().into_iter().flatten() {
                    let _ = writeln!(s, "  - {}", action["summary"].as_str().unwrap_or(""));
                }
            }
        }
        let _ = writeln!(s, "\n## Files changed\n");
        for f in &self.files_changed {
            let _ = writeln!(s, "- {f}");
        }
        let _ = writeln!(s, "\n## Answer\n\n{}", self.final_text);
        s
    }
}

/// Receives [`AgentEvent`]s.
pub type EventSink = Arc<dyn Fn(&AgentEvent) + Send + Sync>;

/// Configures an [`AgentRunner`].
pub struct AgentRunnerBuilder {
    llm: Arc<dyn LlmClient>,
    engine: Arc<ExecutionEngine>,
    agent: AgentDef,
    hooks: Arc<dyn LifecycleHooks>,
    gates: Arc<dyn QualityGates>,
    max_steps: Option<u32>,
    timeout: Option<Duration>,
    max_output_chars: Option<usize>,
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
    meter: Option<Arc<SpendMeter>>,
    refresh: Option<Arc<dyn ToolRefresh>>,
    instructions: Option<Arc<dyn ToolInstructions>>,
}

/// Routing of a run: the router, the client its classification call goes
/// to, and the previous turn's categories (sticky).
#[derive(Clone)]
struct Routing {
    router: Arc<Router>,
    classifier: Arc<dyn LlmClient>,
    previous: Vec<String>,
}

impl AgentRunnerBuilder {
    /// Asked before every step for tools that became available (dynamic
    /// tools approved during the run); the step then offers them, unless
    /// routing fixed the run's tools. By default, the tools are those of
    /// the run's start.
    #[must_use]
    pub fn refresh(mut self, refresh: Arc<dyn ToolRefresh>) -> Self {
        self.refresh = Some(refresh);
        self
    }

    /// Asked after each call that ran for instructions due with the tool's
    /// first use (a skill's body); they are appended to the result the
    /// model gets, after any truncation. By default, none.
    #[must_use]
    pub fn instructions(mut self, instructions: Arc<dyn ToolInstructions>) -> Self {
        self.instructions = Some(instructions);
        self
    }

    /// A spend meter shared with other runs (the runs this one delegates
    /// to, or the run that delegated to this one): the budget is checked
    /// against its total. By default, the run counts its own calls only.
    #[must_use]
    pub fn meter(mut self, meter: Arc<SpendMeter>) -> Self {
        self.meter = Some(meter);
        self
    }

    /// Where the model client reports provider switches (a
    /// [`FallbackClient`](crate::FallbackClient) built with
    /// [`SwitchLog::callback`]): after each model call the runner emits
    /// and records them. By default, none.
    #[must_use]
    pub fn switches(mut self, log: Arc<SwitchLog>) -> Self {
        self.switches = Some(log);
        self
    }

    /// Routes the task (seed 003): one call to `classifier` sorts it into
    /// categories and only the chosen tools are offered, every step of the
    /// run; `previous` are the categories of the session's previous turn.
    /// By default, every tool of the agent is offered.
    #[must_use]
    pub fn routing(
        mut self,
        router: Arc<Router>,
        classifier: Arc<dyn LlmClient>,
        previous: Vec<String>,
    ) -> Self {
        self.routing = Some(Routing {
            router,
            classifier,
            previous,
        });
        self
    }

    /// Lifecycle hooks. By default, none.
    #[must_use]
    pub fn hooks(mut self, hooks: Arc<dyn LifecycleHooks>) -> Self {
        self.hooks = hooks;
        self
    }

    /// Quality gates. By default, none.
    #[must_use]
    pub fn gates(mut self, gates: Arc<dyn QualityGates>) -> Self {
        self.gates = gates;
        self
    }

    /// Step budget. By default, the agent's `max_steps`.
    #[must_use]
    pub fn max_steps(mut self, n: u32) -> Self {
        self.max_steps = Some(n);
        self
    }

    /// Time budget of the run. By default, none.
    #[must_use]
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = Some(t);
        self
    }

    /// The model's context window and answer size ([`ContextBudget`]):
    /// every request stays inside it, and the thresholds below scale with
    /// it. By default, [`DEFAULT_CONTEXT_WINDOW`] tokens and answers of up
    /// to 4096 tokens.
    #[must_use]
    pub fn context(mut self, budget: ContextBudget) -> Self {
        self.context = budget;
        self
    }

    /// Longest tool output the model sees; longer ones keep head and tail.
    /// By default, a quarter of the context's input budget, at most 20,000
    /// characters.
    #[must_use]
    pub fn max_output_chars(mut self, n: usize) -> Self {
        self.max_output_chars = Some(n.max(200));
        self
    }

    /// Conversation size (bytes of messages) past which old steps are
    /// summarised (and, if that is not enough, old tool outputs elided).
    /// By default, three quarters of the context's input budget less the
    /// tool schemas.
    #[must_use]
    pub fn context_threshold_chars(mut self, n: usize) -> Self {
        self.context_threshold_chars = Some(n);
        self
    }

    /// Prices in USD per million input and output tokens. By default, none.
    #[must_use]
    pub fn prices(mut self, input_per_mtok: f64, output_per_mtok: f64) -> Self {
        self.prices = Some((input_per_mtok, output_per_mtok));
        self
    }

    /// Cost budget in USD (needs [`prices`](Self::prices)). At 80 % the
    /// `budget_warning` hook fires once; once it is spent, the run stops
    /// after one last call without tools for a summary. By default, none.
    #[must_use]
    pub fn budget_usd(mut self, usd: f64) -> Self {
        self.budget_usd = Some(usd);
        self
    }

    /// Live events. By default, none.
    #[must_use]
    pub fn events(mut self, sink: EventSink) -> Self {
        self.events = Some(sink);
        self
    }

    /// A flag that, once `true`, stops the run gracefully with a summary.
    #[must_use]
    pub fn cancel(mut self, rx: watch::Receiver<bool>) -> Self {
        self.cancel = Some(rx);
        self
    }

    /// A flag that, once `true`, stops the run at once: the model call or
    /// tool call in flight is dropped (its process killed), no summary is
    /// asked for, and the outcome is [`Outcome::Aborted`]. By default, none.
    #[must_use]
    pub fn abort(mut self, rx: watch::Receiver<bool>) -> Self {
        self.abort = Some(rx);
        self
    }

    /// Whether tool calls the model writes as text are recovered and run
    /// (see [`recover_tool_calls`]). By default, yes (`llm.text_tool_calls:
    /// auto`).
    #[must_use]
    pub fn recover_text_calls(mut self, yes: bool) -> Self {
        self.recover_text_calls = yes;
        self
    }

    /// Where the run is recorded step by step. By default, nowhere.
    #[must_use]
    pub fn recorder(mut self, recorder: Arc<dyn RunRecorder>) -> Self {
        self.recorder = Some(recorder);
        self
    }

    /// The runner.
    pub fn build(self) -> AgentRunner {
        AgentRunner {
            max_steps: self.max_steps.unwrap_or(self.agent.max_steps).max(1),
            llm: self.llm,
            engine: self.engine,
            agent: self.agent,
            hooks: self.hooks,
            gates: self.gates,
            timeout: self.timeout,
            max_output_chars: self
                .max_output_chars
                .unwrap_or_else(|| (self.context.input_bytes() / 4).clamp(200, 20_000)),
            context_threshold_chars: self.context_threshold_chars,
            context: self.context,
            prices: self.prices,
            budget_usd: self.budget_usd,
            events: self.events,
            cancel: self.cancel,
            abort: self.abort,
            recorder: self.recorder,
            recover_text_calls: self.recover_text_calls,
            switches: self.switches,
            routing: self.routing,
            meter: self.meter,
            refresh: self.refresh,
            instructions: self.instructions,
            recording: Arc::new(Recording::default()),
        }
    }
}

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
    /// Recorded events not yet handed to the recorder.
    recording: Arc<Recording>,
}

/// Events waiting for the recorder, and the step they belong to.
#[derive(Debug, Default)]
struct Recording {
    pending: Mutex<Vec<RecordedEvent>>,
    step: AtomicU32,
}

impl Recording {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<RecordedEvent>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `e` for the recorder when the session records its kind.
    fn keep(&self, e: &AgentEvent) {
        if let Some((kind, data)) = e.recorded() {
            self.lock().push(RecordedEvent {
                step: self.step.load(Ordering::Relaxed),
                kind: kind.to_owned(),
                data,
            });
        }
    }
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

/// The name given to a recovered call that could not be read, so that its
/// tool error reaches the model in proper tool-call form.
const UNREADABLE_CALL: &str = "unreadable_tool_call";

/// A call found in the model's text, as a structured call.
fn text_call(step: u32, n: usize, call: TextCall) -> ModelToolCall {
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

/// Identical calls in a row (same tool, same arguments), one per step: the
/// same call twice in one step is one call made twice at once, not a loop.
#[derive(Debug, Default)]
struct Repeats {
    last: Option<(String, String)>,
    /// The step the last call was made in.
    step: u32,
    /// How many steps in a row made the last call.
    count: u32,
}

impl Repeats {
    /// Counts the call; from its second step in a row, the result the model
    /// sees starts by saying so.
    fn note(&mut self, step: u32, name: &str, arguments: &str, text: String) -> String {
        // Compared on the parsed arguments, so spacing and key order do
        // not hide a repeat.
        let canonical = serde_json::from_str::<Value>(arguments)
            .map_or_else(|_| arguments.to_owned(), |v| v.to_string());
        let key = (name.to_owned(), canonical);
        if self.last.as_ref() != Some(&key) {
            self.last = Some(key);
            self.step = step;
            self.count = 1;
            return text;
        }
        if self.step != step {
            self.step = step;
            self.count += 1;
        }
        if self.count < 2 {
            return text;
        }
        format!(
            "[You already called `{name}` with these arguments {} times in a row, and the \
             result is the same as before. Do not call it again: use this result, call a \
             different tool, or give your answer.]\n{text}",
            self.count - 1
        )
    }
}

enum Stop {
    Done(Outcome),
    Summarise(Outcome),
    Fail(Outcome, String),
    /// The abort flag was set: stop at once.
    Aborted,
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
    /// A builder for a runner of `agent`.
    pub fn builder(
        llm: Arc<dyn LlmClient>,
        engine: Arc<ExecutionEngine>,
        agent: AgentDef,
    ) -> AgentRunnerBuilder {
        AgentRunnerBuilder {
            llm,
            engine,
            agent,
            hooks: Arc::new(NoHooks),
            gates: Arc::new(NoGates),
            max_steps: None,
            timeout: None,
            max_output_chars: None,
            context_threshold_chars: None,
            context: ContextBudget::new(DEFAULT_CONTEXT_WINDOW, 4096),
            prices: None,
            budget_usd: None,
            events: None,
            cancel: None,
            abort: None,
            recorder: None,
            recover_text_calls: true,
            switches: None,
            routing: None,
            meter: None,
            refresh: None,
            instructions: None,
        }
    }

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

    /// A sink that emits into this run as [`emit`](Self::emit) does: live
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
            // The last step's answer (and any summary) is recorded under
            // that step, so the store counts the steps the report does.
            self.record(report.steps, &messages, &report, &mut journal)
                .await;
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
    async fn call_model(
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

    /// The agent's tools as a call to an unknown tool lists them: names,
    /// then one line per tool with the first sentence of its description,
    /// so a small model can pick the right one next time.
    fn tool_menu(&self, registry: &toolgate_core::Registry) -> String {
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
    async fn run_tools(
        &self,
        step: u32,
        calls: &[ModelToolCall],
        recovered: bool,
        messages: &mut Vec<Message>,
        report: &mut RunReport,
        repeats: &mut Repeats,
    ) -> bool {
        let registry = self.engine.registry().clone();
        // Pre-check every call: Err = the tool error the model will see.
        let prepared: Vec<Result<ToolCall, (String, String)>> = calls
            .iter()
            .map(|c| {
                if c.name == UNREADABLE_CALL {
                    let reason = serde_json::from_str::<Value>(&c.arguments)
                        .ok()
                        .and_then(|v| v["error"].as_str().map(str::to_owned))
                        .unwrap_or_default();
                    return Err((
                        "malformed_tool_call".to_owned(),
                        format!(
                            "your tool call could not be read: {reason}. Write one JSON object: \
                             {{\"name\": \"TOOL\", \"arguments\": {{...}}}}"
                        ),
                    ));
                }
                if !registry.has(&c.name) {
                    return Err((
                        "not_found".to_owned(),
                        format!(
                            "unknown tool `{}`; available tools: {}",
                            c.name,
                            self.tool_menu(&registry)
                        ),
                    ));
                }
                if !self.agent.allows(&registry, &c.name) {
                    return Err((
                        "not_allowed".to_owned(),
                        format!("tool `{}` is not available to agent `{}`", c.name, self.agent.name),
                    ));
                }
                let raw = if c.arguments.trim().is_empty() { "{}" } else { &c.arguments };
                match serde_json::from_str::<Value>(raw) {
                    Ok(v) if v.is_object() => Ok(ToolCall::new(c.id.clone(), c.name.clone(), v)),
                    Ok(_) => Err((
                        "malformed_arguments".to_owned(),
                        "the arguments must be a JSON object".to_owned(),
                    )),
                    Err(e) => Err((
                        "malformed_arguments".to_owned(),
                        format!("the arguments are not valid JSON ({e}); send a JSON object matching the tool's schema"),
                    )),
                }
            })
            .collect();
        let all_read_only = prepared.iter().all(|p| {
            p.as_ref().is_ok_and(|c| {
                registry
                    .get(&c.name)
                    .is_ok_and(|t| t.spec().annotations.read_only_hint == Some(true))
            })
        });
        let mut results: Vec<Option<toolgate_engine::Execution>> = Vec::new();
        if all_read_only {
            let futs = prepared.iter().filter_map(|p| p.as_ref().ok()).map(|c| {
                let engine = self.engine.clone();
                let c = c.clone();
                async move { engine.execute(c).await }
            });
            results = futures_util::future::join_all(futs)
                .await
                .into_iter()
                .map(Some)
                .collect();
        } else {
            for p in &prepared {
                match p {
                    Ok(c) => {
                        let ex = self.engine.execute(c.clone()).await;
                        let aborted = ex.is_aborted();
                        results.push(Some(ex));
                        if aborted {
                            break;
                        }
                    }
                    Err(_) => results.push(None),
                }
            }
        }
        let mut results = results.into_iter();
        let mut aborted = false;
        let mut unreadable: Vec<String> = Vec::new();
        for (c, p) in calls.iter().zip(&prepared) {
            let (decision, success, text, ms, effects, approval) = match p {
                Err((d, msg)) => {
                    if !all_read_only {
                        results.next();
                    }
                    (
                        d.clone(),
                        false,
                        format!("error: {msg}"),
                        0,
                        Effects::none(),
                        None,
                    )
                }
                Ok(_) => match results.next().flatten() {
                    Some(ex) => {
                        aborted |= ex.is_aborted();
                        if ex.result.success && ex.decision == Decision::Executed {
                            report
                                .files_changed
                                .extend(ex.effects.changed_paths().into_iter().map(str::to_owned));
                        }
                        (
                            ex.decision.as_str().to_owned(),
                            ex.result.success,
                            ex.result.to_model_text(),
                            u64::try_from(ex.duration.as_millis()).unwrap_or(u64::MAX),
                            ex.effects.summary(),
                            ex.approval,
                        )
                    }
                    None => (
                        "aborted".to_owned(),
                        false,
                        "error: not run: the run was aborted".to_owned(),
                        0,
                        Effects::none(),
                        None,
                    ),
                },
            };
            let mut text = truncate_head_tail(&text, self.max_output_chars);
            if decision == "executed"
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
                decision,
                success,
                duration_ms: ms,
                output: text.clone(),
                effects,
                recovered,
                waited_ms: approval.as_ref().map_or(0, |a| {
                    u64::try_from(a.waited.as_millis()).unwrap_or(u64::MAX)
                }),
                approval: approval.and_then(|a| serde_json::to_value(a).ok()),
            };
            self.emit(&AgentEvent::ToolCall(record.clone()));
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

    /// Keeps the conversation under the context threshold: first the model
    /// summarises the completed old steps (everything between the task and
    /// the latest step, never splitting a step from its tool results) into
    /// one message; if that is not possible or not enough, old tool outputs
    /// beyond the last four are elided.
    async fn compress(
        &self,
        messages: &mut Vec<Message>,
        step: u32,
        report: &mut RunReport,
        journal: &mut Journal,
        tools_bytes: usize,
    ) {
        let size = |m: &[Message]| messages_bytes(m);
        let threshold = self.threshold(tools_bytes);
        let total = size(messages);
        if total <= threshold {
            return;
        }
        let mut summarised = 0;
        // The task is the first message after the system prompt; the latest
        // step starts at the last assistant message.
        let start = messages
            .iter()
            .position(|m| m.role != Role::System)
            .map_or(messages.len(), |i| i + 1);
        let end = messages
            .iter()
            .rposition(|m| m.role == Role::Assistant)
            .unwrap_or(0);
        if end > start
            && let Some(summary) = self
                .summarise_steps(&messages[start..end], step, report)
                .await
        {
            summarised = end - start;
            journal.clean_until = journal.clean_until.min(start);
            messages.splice(
                start..end,
                [Message::text(
                    Role::User,
                    format!("[Summary of the earlier steps of this run]\n{summary}"),
                )],
            );
        }
        let mut elided = 0;
        if size(messages) > threshold {
            let tool_idx: Vec<usize> = messages
                .iter()
                .enumerate()
                .filter(|(_, m)| m.role == Role::Tool)
                .map(|(i, _)| i)
                .collect();
            for &i in tool_idx.iter().rev().skip(4) {
                let m = &mut messages[i];
                if m.content.len() > 200 {
                    journal.clean_until = journal.clean_until.min(i);
                    elided += m.content.len();
                    let head: String = m.content.chars().take(120).collect();
                    m.content = format!("{head}\n[older output elided to save context]");
                }
            }
        }
        let removed = total.saturating_sub(size(messages));
        if summarised > 0 || elided > 0 {
            self.hooks
                .emit(
                    "context_compress",
                    json!({"removed_chars": removed, "summarised_messages": summarised}),
                )
                .await;
            self.emit(&AgentEvent::ContextCompress {
                removed_chars: removed,
            });
        }
    }

    /// Asks the model, without tools, for a summary of `old` steps. `None`
    /// when the call fails or comes back empty (the caller then elides).
    async fn summarise_steps(
        &self,
        old: &[Message],
        step: u32,
        report: &mut RunReport,
    ) -> Option<String> {
        let mut transcript = String::new();
        for m in old {
            let role = match m.role {
                Role::System => "system",
                Role::User => "user",
                Role::Assistant => "assistant",
                Role::Tool => "tool result",
            };
            let _ = writeln!(
                transcript,
                "[{role}] {}",
                truncate_head_tail(&m.content, 4_000)
            );
            for call in &m.tool_calls {
                let _ = writeln!(
                    transcript,
                    "[tool call] {}({})",
                    call.name,
                    truncate_head_tail(&call.arguments, 1_000)
                );
            }
        }
        let request = vec![
            Message::text(
                Role::System,
                "You compress the transcript of an agent's earlier steps so that it can go on \
                 working. Keep every fact it will need: files read or changed and what was \
                 found in them, decisions, errors, what is left to do. Be concise.",
            ),
            Message::text(
                Role::User,
                format!(
                    "Summarise these earlier steps:\n\n{}",
                    // The summary call must fit the window too.
                    truncate_head_tail(&transcript, self.context.input_bytes() / 2)
                ),
            ),
        ];
        let call = self.call_model(&request, Vec::new(), step, true, report);
        match tokio::time::timeout(Duration::from_secs(120), call).await {
            Ok(Ok(resp)) if !resp.content.trim().is_empty() => Some(resp.content),
            _ => None,
        }
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
