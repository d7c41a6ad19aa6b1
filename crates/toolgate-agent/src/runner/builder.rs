//! [`AgentRunnerBuilder`]: what a run is given, with its defaults.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use toolgate_engine::ExecutionEngine;

use super::events::{EventSink, Recording};
use super::lifecycle::{
    LifecycleHooks, NoGates, NoHooks, QualityGates, RunRecorder, ToolInstructions, ToolRefresh,
};
use super::{AgentRunner, SpendMeter};
use crate::agent::AgentDef;
use crate::context::{ContextBudget, DEFAULT_CONTEXT_WINDOW};
use crate::fallback::SwitchLog;
use crate::llm::LlmClient;
use crate::routing::Router;

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
    workspace: Option<std::path::PathBuf>,
}

/// Routing of a run: the router, the client its classification call goes
/// to, and the previous turn's categories (sticky).
#[derive(Clone)]
pub(super) struct Routing {
    pub(super) router: Arc<Router>,
    pub(super) classifier: Arc<dyn LlmClient>,
    pub(super) previous: Vec<String>,
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
    /// asked for, and the outcome is [`Outcome::Aborted`](crate::Outcome::Aborted). By default, none.
    #[must_use]
    pub fn abort(mut self, rx: watch::Receiver<bool>) -> Self {
        self.abort = Some(rx);
        self
    }

    /// Whether tool calls the model writes as text are recovered and run
    /// (see [`recover_tool_calls`](crate::recover_tool_calls)). By default, yes (`llm.text_tool_calls:
    /// auto`).
    #[must_use]
    pub fn recover_text_calls(mut self, yes: bool) -> Self {
        self.recover_text_calls = yes;
        self
    }

    /// The workspace root, where the files a task names are looked up for
    /// the task checks (see [`TaskChecks`](crate::TaskChecks)). By
    /// default, none: only the commands a task names are checked.
    #[must_use]
    pub fn workspace(mut self, root: impl Into<std::path::PathBuf>) -> Self {
        self.workspace = Some(root.into());
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
            workspace: self.workspace,
            recording: Arc::new(Recording::default()),
            squeeze: std::sync::atomic::AtomicU64::new(1.0f64.to_bits()),
        }
    }
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
            workspace: None,
        }
    }
}
