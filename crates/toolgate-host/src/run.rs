//! Agent runs: everything `toolgate run`, `sessions resume` and the web UI
//! need to run an agent on a task, recorded step by step in the store.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::sync::watch;
use toolgate_agent::delegate::{DelegationHub, ParentRun};
use toolgate_agent::{
    AgentDef, AgentRunner, ContextBudget, EventSink, GuardrailGates, LifecycleHooks, LlmClient,
    Message, Router, RunReport, SpendMeter, SwitchLog, ToolRefresh, messages_bytes,
};
use toolgate_core::SchemaFormat;
use toolgate_dynamic::DynamicTools;
use toolgate_engine::Approver;
use toolgate_policy::ConfirmationMode;
use toolgate_store::{NewSession, Store};

use crate::assembly::gate::Gate;
use crate::assembly::host::Host;
use crate::assembly::llm::{LlmOverrides, ModelChoice};
use crate::config::TextToolCalls;
use crate::delegation::{HostSubAgents, RunLimits};
use crate::error::HostError;

use record::{StoreRecorder, given_skills, session_mode_of};

mod record;

/// What a run is asked to do.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RunRequest {
    /// The task (for a resumed session: the next instruction).
    pub task: String,
    /// The agent. By default, `build`.
    pub agent: Option<String>,
    /// A session to continue, by id. By default, a new session.
    pub session: Option<String>,
    /// `--model` and `--base-url`.
    pub llm: LlmOverrides,
    /// Step budget. By default, the agent's.
    pub max_steps: Option<u32>,
    /// Time budget. By default, none.
    pub timeout: Option<Duration>,
    /// Cost budget in USD (`--budget`). By default, `llm.budget_usd`.
    pub budget_usd: Option<f64>,
    /// How the agent is addressed. By default, the agent's own mode
    /// (`agents.<name>.prompt_mode`); a scheduled job runs `autonomous`.
    pub prompt_mode: Option<toolgate_agent::PromptMode>,
    /// The confirmation mode, over the agent's own (the web UI's
    /// per-agent toggle). The `--mode` flag still wins, and so does the
    /// mode a resumed session was left in by plan mode (still planning, or
    /// the mode the person chose when approving its plan).
    pub mode: Option<toolgate_policy::ConfirmationMode>,
}

impl RunRequest {
    /// A request to run `task`.
    pub fn new(task: impl Into<String>) -> Self {
        Self {
            task: task.into(),
            ..Self::default()
        }
    }
}

/// How a front end watches and steers a run.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct RunControls {
    /// Live events (streamed text, tool calls, …).
    pub events: Option<EventSink>,
    /// Once `true`: stop gracefully after a summary (the first Ctrl-C, the
    /// UI's Stop button).
    pub stop: Option<watch::Receiver<bool>>,
    /// Once `true`: stop at once (the second Ctrl-C).
    pub abort: Option<watch::Receiver<bool>>,
}

impl std::fmt::Debug for RunControls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunControls").finish_non_exhaustive()
    }
}

/// A run ready to start: the session exists in the store, the gate is
/// built (MCP servers started), the model is chosen.
pub struct PreparedRun {
    session_id: String,
    run: u32,
    agent: AgentDef,
    model: ModelChoice,
    llm: Arc<dyn LlmClient>,
    gate: Gate,
    store: Arc<dyn Store>,
    history: Vec<Message>,
    request: RunRequest,
    prices: Option<(f64, f64)>,
    budget_usd: Option<f64>,
    recover_text_calls: bool,
    context: ContextBudget,
    size: RequestSize,
    switches: Option<Arc<SwitchLog>>,
    routing: Option<RunRouting>,
    delegation: Option<(Arc<DelegationHub>, Arc<HostSubAgents>)>,
    refresh: Option<Arc<dyn ToolRefresh>>,
    workspace: std::path::PathBuf,
    /// The caps on checkpoints, applied when the run ends.
    checkpoints: crate::config::CheckpointsSection,
    /// The session's mode as its `mode` events leave it, before this run.
    recorded_mode: Option<ConfirmationMode>,
    /// The run's claim on its session, released when the run ends.
    _claim: crate::claim::SessionClaim,
}

/// Loads dynamic tools approved during a run into its registry.
struct DynamicRefresh {
    dynamic: Arc<DynamicTools>,
    registry: Arc<toolgate_core::Registry>,
    agent: String,
}

#[async_trait]
impl ToolRefresh for DynamicRefresh {
    async fn refresh(&self) -> bool {
        match self.dynamic.sync(&self.registry, &self.agent).await {
            Ok(report) => !report.loaded.is_empty(),
            Err(error) => {
                tracing::warn!(
                    "dynamic tools were not refreshed: {}",
                    toolgate_core::error_chain(&error)
                );
                false
            }
        }
    }
}

/// What a run's offer of tools follows between steps: dynamic tools
/// approved meanwhile, and the confirmation mode, whose change (plan mode
/// entered or left) changes which plan-mode tools are offered
/// ([`Tool::offered`](toolgate_core::Tool::offered)).
struct RunRefresh {
    dynamic: Option<DynamicRefresh>,
    mode: toolgate_engine::ModeCell,
    seen: std::sync::Mutex<toolgate_policy::ConfirmationMode>,
}

#[async_trait]
impl ToolRefresh for RunRefresh {
    async fn refresh(&self) -> bool {
        let loaded = match &self.dynamic {
            Some(dynamic) => dynamic.refresh().await,
            None => false,
        };
        let now = self.mode.get();
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let changed = *seen != now;
        *seen = now;
        loaded || changed
    }
}

/// A run's routing: the router, the classifying client, the previous
/// turn's categories.
struct RunRouting {
    router: Arc<Router>,
    classifier: Arc<dyn LlmClient>,
    previous: Vec<String>,
}

/// What every request of a run carries besides the conversation: the
/// system prompt and the tool schemas (estimated tokens), and the window
/// they must fit in.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct RequestSize {
    /// The system prompt's estimated size in tokens.
    pub prompt_tokens: usize,
    /// The tool schemas' estimated size in tokens.
    pub tools_tokens: usize,
    /// The tools offered, sorted.
    pub tools: Vec<String>,
    /// The model's context window in tokens.
    pub window: u32,
}

impl std::fmt::Debug for PreparedRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedRun")
            .field("session_id", &self.session_id)
            .field("run", &self.run)
            .field("agent", &self.agent.name)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl Host {
    /// Prepares a run: resolves the agent, its confirmation mode, the model
    /// and the budget (errors here change nothing), then opens the session
    /// (a new one, or the stored conversation of `request.session`) and
    /// builds the gate with the session's id. `interactive` is the front
    /// end's way to ask a person.
    pub async fn prepare_run(
        &self,
        request: RunRequest,
        interactive: Option<Arc<dyn Approver>>,
    ) -> Result<PreparedRun, HostError> {
        let agent = self.agent(request.agent.as_deref().unwrap_or("build"))?;
        let own_mode = self.mode_for(Some(&agent))?;
        let (prices, budget_usd) = self.costs(request.budget_usd)?;
        let mut model = self.choose_model(&request.llm).await?;
        let (window, _source, facts) = self.context_window(&model).await;
        model.server = facts.kind;
        let (llm, switches) = self.model_client(&model)?;
        let agent = agent.with_model(&facts);
        let context = ContextBudget::new(window, self.config().llm.max_tokens);
        let store = self.store()?;
        let store_error = |source| HostError::Store {
            path: store.location().to_owned(),
            source,
        };
        let mut previous_categories = Vec::new();
        let mut session_mode = None;
        let (session_id, history) = match &request.session {
            Some(id) => {
                let stored = store.messages(id).await.map_err(store_error)?;
                let history = stored
                    .into_iter()
                    .map(serde_json::from_value)
                    .collect::<Result<Vec<Message>, _>>()
                    .map_err(|e| store_error(toolgate_store::StoreError::Json(e)))?;
                // Sticky categories: the last turn's, when it was routed.
                let events = store.events(id).await.map_err(store_error)?;
                session_mode = session_mode_of(&events);
                if let Some(routed) = events.iter().rev().find(|e| e.event.kind == "routed") {
                    previous_categories = routed.event.data["categories"]
                        .as_array()
                        .map(|c| {
                            c.iter()
                                .filter_map(|v| v.as_str().map(str::to_owned))
                                .collect()
                        })
                        .unwrap_or_default();
                }
                (id.clone(), history)
            }
            None => (toolgate_store::new_session_id(), Vec::new()),
        };
        // Held until the run ends, so that no other process rewinds the
        // session under it (rules in `claim`).
        let claim = self.claim_session(&session_id)?;
        // The `--mode` flag, then the mode a resumed session was left in by
        // plan mode, then the front end's choice, then the agent's own.
        let mode = match (self.mode_flag(), session_mode, request.mode) {
            (Some(_), _, _) | (None, None, None) => own_mode,
            (None, Some(mode), _) | (None, None, Some(mode)) => mode,
        };
        // What the session's record of its mode starts from: the mode it
        // was left in, else this run's mode, which is only worth a record
        // when it is plan mode (a session started in plan mode resumes in
        // it; one never in plan mode follows the configuration).
        let recorded_mode = session_mode.or((mode != ConfirmationMode::Plan).then_some(mode));
        let gate = self
            .gate()
            .mode(mode)
            .session_id(session_id.clone())
            .interactive(interactive.clone())
            .delegation(true)
            .plan_mode_tools(true)
            .agent(agent.name.clone())
            .build()
            .await?;
        let started = store
            .begin(&NewSession {
                id: session_id.clone(),
                agent: agent.name.clone(),
                task: request.task.clone(),
            })
            .await;
        let run = match started {
            Ok(start) => start.run,
            Err(source) => {
                gate.shutdown().await;
                return Err(store_error(source));
            }
        };
        let mut agent = agent.with_extra_tools(gate.extra_tool_names());
        if let Some(mode) = request.prompt_mode {
            agent.prompt_mode = mode;
        }
        let offered = agent.tool_names(&gate.registry);
        agent.system_prompt = match self.system_prompt(&agent, &gate.registry) {
            Ok(prompt) => prompt,
            Err(error) => {
                gate.shutdown().await;
                return Err(error);
            }
        };
        // The prompt, the task and the tool schemas must fit the window
        // with room to work: say so now rather than after a refused call.
        let recover_text_calls = self.config().llm.text_tool_calls == TextToolCalls::Auto;
        let dynamic = if self.config().tools.dynamic.enabled {
            match self.dynamic_tools() {
                Ok(dynamic) => Some(DynamicRefresh {
                    dynamic,
                    registry: Arc::clone(&gate.registry),
                    agent: agent.name.clone(),
                }),
                Err(error) => {
                    gate.shutdown().await;
                    let _ = store.finish(&session_id, run, "failed").await;
                    return Err(error);
                }
            }
        } else {
            None
        };
        let refresh: Option<Arc<dyn ToolRefresh>> = Some(Arc::new(RunRefresh {
            dynamic,
            mode: gate.engine.mode_cell().clone(),
            seen: std::sync::Mutex::new(gate.engine.mode()),
        }));
        let delegation = match (&gate.delegation, agent.delegate_to.is_empty()) {
            (Some(hub), false) => {
                let limits = RunLimits {
                    llm: Arc::clone(&llm),
                    context,
                    prices,
                    budget_usd,
                    recover_text_calls,
                    mode,
                    interactive,
                };
                match self.sub_agents(&agent, &gate, limits) {
                    Ok(agents) => Some((Arc::clone(hub), agents)),
                    Err(error) => {
                        gate.shutdown().await;
                        let _ = store.finish(&session_id, run, "failed").await;
                        return Err(error);
                    }
                }
            }
            _ => None,
        };
        let routing = match self.router(&gate, &offered, &llm, &model, previous_categories) {
            Ok(routing) => routing,
            Err(error) => {
                gate.shutdown().await;
                let _ = store.finish(&session_id, run, "failed").await;
                return Err(error);
            }
        };
        let (offered, schemas) = if agent.is_small() {
            toolgate_agent::small_offer(&gate.registry, &offered)
        } else {
            let schemas = gate.registry.schemas(Some(&offered), SchemaFormat::OpenAi);
            (offered, schemas)
        };
        let schema_bytes = serde_json::to_string(&schemas).map_or(0, |t| t.len());
        let size = RequestSize {
            prompt_tokens: ContextBudget::tokens(agent.system_prompt.len()),
            tools_tokens: ContextBudget::tokens(schema_bytes),
            tools: offered,
            window: context.window(),
        };
        let fixed = schema_bytes
            + agent.system_prompt.len()
            + request.task.len()
            + messages_bytes(&history);
        if let Err(reason) = context.check_start(fixed) {
            gate.shutdown().await;
            let _ = store.finish(&session_id, run, "failed").await;
            return Err(HostError::ContextTooSmall(reason));
        }
        Ok(PreparedRun {
            session_id,
            run,
            agent,
            model,
            llm,
            gate,
            store,
            history,
            request,
            prices,
            budget_usd,
            recover_text_calls,
            context,
            size,
            switches,
            routing,
            delegation,
            refresh,
            workspace: self.workspace().to_owned(),
            checkpoints: self.config().store.checkpoints.clone(),
            recorded_mode,
            _claim: claim,
        })
    }

    /// The router of a run when `routing.enabled` (rules on
    /// [`Router`]): the tool groups the agent has tools of, MCP tools as one
    /// `mcp` category, classified by `routing.model` on the run's server or
    /// else by the run's model; `previous` are the last turn's categories.
    fn router(
        &self,
        gate: &Gate,
        offered: &[String],
        llm: &Arc<dyn LlmClient>,
        model: &ModelChoice,
        previous: Vec<String>,
    ) -> Result<Option<RunRouting>, HostError> {
        let config = &self.config().routing;
        if !config.enabled {
            return Ok(None);
        }
        let mut groups: Vec<(String, Vec<String>)> = self
            .group_outlines()?
            .iter()
            .filter(|g| crate::assembly::catalog::routed(g.name))
            .map(|g| (g.name.to_owned(), g.tools.clone()))
            .collect();
        let mcp = gate.mcp.tool_names();
        if !mcp.is_empty() {
            groups.push(("mcp".to_owned(), mcp));
        }
        // A run that starts in plan mode must keep its way out whatever the
        // categories: a routed offer is fixed for the run.
        let exit = <toolgate_engine::ExitPlanMode as toolgate_core::TypedTool>::NAME;
        let pinned = offered.iter().filter(|t| *t == exit).cloned();
        let router = Router::builder(groups)
            .config(config)
            .pinned(pinned)
            .available(offered.iter().cloned())
            .build()
            .map_err(HostError::Routing)?;
        let classifier = match &config.model {
            Some(name) => {
                let mut choice = model.clone();
                choice.model.clone_from(name);
                self.llm_client(&choice)?
            }
            None => Arc::clone(llm),
        };
        Ok(Some(RunRouting {
            router: Arc::new(router),
            classifier,
            previous,
        }))
    }

    /// The prices from `llm:`, and the budget (`budget` over
    /// `llm.budget_usd`), which needs them to be enforced.
    #[expect(
        clippy::type_complexity,
        reason = "two optional pairs, named at the use"
    )]
    fn costs(&self, budget: Option<f64>) -> Result<(Option<(f64, f64)>, Option<f64>), HostError> {
        let llm = &self.config().llm;
        let prices = (llm.input_price_per_mtok.is_some() || llm.output_price_per_mtok.is_some())
            .then(|| {
                (
                    llm.input_price_per_mtok.unwrap_or(0.0),
                    llm.output_price_per_mtok.unwrap_or(0.0),
                )
            });
        let budget_usd = budget.or(llm.budget_usd);
        if let Some(budget) = budget_usd
            && (prices.is_none() || !budget.is_finite() || budget <= 0.0)
        {
            return Err(HostError::Budget(budget));
        }
        Ok((prices, budget_usd))
    }
}

impl PreparedRun {
    /// The session's id.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The agent, with the MCP tools it may use.
    pub fn agent(&self) -> &AgentDef {
        &self.agent
    }

    /// The model the run talks to.
    pub fn model(&self) -> &ModelChoice {
        &self.model
    }

    /// The `start` event every front end sends first (`run --json`, the
    /// web UI): the session, agent, model, task and the request's size.
    pub fn start_event(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "start",
            "session": self.session_id,
            "agent": self.agent.name,
            "model": self.model.model,
            "task": self.request.task,
            "request": self.size,
        })
    }

    /// The size of the system prompt and tool schemas every request carries.
    pub fn request_size(&self) -> &RequestSize {
        &self.size
    }

    /// The gate the run's calls go through.
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// Runs the agent to the end, recording every step in the store (a
    /// crash loses at most the step in flight), then stops the MCP servers.
    pub async fn run(self, controls: RunControls) -> RunReport {
        let recorder = Arc::new(StoreRecorder {
            store: Arc::clone(&self.store),
            session_id: self.session_id.clone(),
            run: self.run,
            capture: self.gate.capture.clone(),
            last_checkpoint: std::sync::Mutex::new(None),
            mode: self.gate.engine.mode_cell().clone(),
            recorded_mode: std::sync::Mutex::new(self.recorded_mode),
        });
        let gates = GuardrailGates::new(Arc::clone(&self.gate.guardrails), &self.workspace);
        let meter = SpendMeter::new();
        let (name, delegate_to) = (self.agent.name.clone(), self.agent.delegate_to.clone());
        let mut builder = AgentRunner::builder(self.llm, Arc::clone(&self.gate.engine), self.agent)
            .meter(Arc::clone(&meter))
            .hooks(Arc::clone(&self.gate.hooks) as Arc<dyn LifecycleHooks>)
            .gates(Arc::new(gates))
            .recorder(recorder)
            .recover_text_calls(self.recover_text_calls)
            .context(self.context)
            .workspace(self.workspace.clone());
        if let Some(events) = controls.events {
            builder = builder.events(events);
        }
        if let Some(log) = self.switches {
            builder = builder.switches(log);
        }
        if let Some(refresh) = self.refresh {
            builder = builder.refresh(refresh);
        }
        if !self.gate.skills.names().is_empty() {
            // A resumed session has the bodies it was given already.
            self.gate.skills.restore(given_skills(&self.history));
            builder = builder.instructions(Arc::new(crate::SkillInstructions::new(
                self.gate.skills.clone(),
            )));
        }
        if let Some(routing) = self.routing {
            builder = builder.routing(routing.router, routing.classifier, routing.previous);
        }
        if let Some(stop) = controls.stop {
            builder = builder.cancel(stop);
        }
        if let Some(abort) = controls.abort {
            builder = builder.abort(abort);
        }
        if let Some(n) = self.request.max_steps {
            builder = builder.max_steps(n);
        }
        if let Some(t) = self.request.timeout {
            builder = builder.timeout(t);
        }
        if let Some((input, output)) = self.prices {
            builder = builder.prices(input, output);
        }
        if let Some(budget) = self.budget_usd {
            builder = builder.budget_usd(budget);
        }
        let runner = builder.build();
        // A run that may delegate is entered in the hub for as long as it
        // runs: its delegation calls find their limits and events there.
        let entered = self.delegation.map(|(hub, agents)| {
            let deadline = self.request.timeout.map(|t| Instant::now() + t);
            let parent = ParentRun::new(name, delegate_to, runner.event_sink(), agents)
                .deadline(deadline)
                .meter(meter);
            hub.enter(self.session_id.clone(), parent)
        });
        let report = runner.run(&self.request.task, self.history).await;
        drop(entered);
        if let Some(capture) = &self.gate.capture {
            crate::rewind::apply_caps(self.store.as_ref(), capture, &self.checkpoints).await;
        }
        self.gate.shutdown().await;
        report
    }
}

/// The `done` event every front end sends last: the run's report with the
/// session.
pub fn done_event(session: &str, report: &RunReport) -> serde_json::Value {
    let mut done = report.to_json();
    done["type"] = serde_json::Value::from("done");
    done["session"] = serde_json::Value::from(session);
    done
}

#[cfg(test)]
mod tests {
    use toolgate_agent::{Message, ModelToolCall, Role};

    use super::given_skills;

    fn assistant_calling(id: &str, name: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: String::new(),
            tool_calls: vec![ModelToolCall {
                id: id.to_owned(),
                name: name.to_owned(),
                arguments: "{}".to_owned(),
            }],
            tool_call_id: None,
        }
    }

    #[test]
    fn given_skills_reads_skill_results_and_lazy_frames_only() {
        let history = vec![
            assistant_calling("1", "skill"),
            Message::tool_result("1", "# Skill: pdf\nDirectory: /s/pdf\n\nUse pdftk."),
            assistant_calling("2", "read_file"),
            // A file that merely looks like a skill frame is not one.
            Message::tool_result("2", "# Skill: fake\nDirectory: /x\n\nbody"),
            assistant_calling("3", "read_file"),
            Message::tool_result(
                "3",
                "a,b\n\n# Skill: csv\n(given because `read_file` was used, which this skill covers)\nDirectory: /s/csv",
            ),
            Message::text(Role::User, "# Skill: typed\n(given because nothing)"),
        ];
        assert_eq!(given_skills(&history), vec!["pdf", "csv"]);
    }
}
