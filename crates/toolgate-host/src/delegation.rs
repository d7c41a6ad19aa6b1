//! Delegation as a host runs it: the delegation tools in the gate, and the
//! agents they run ([`toolgate_agent::delegate`] has the rules).
//!
//! # Rules
//!
//! 1. A delegated agent runs with the caller's model client, context
//!    window, prices and budget (one [`SpendMeter`] for both), through the
//!    caller's gate: its own `mode` is not used, the caller's confirmation
//!    mode and approver are. Its system prompt is built like any agent's,
//!    in the `collaboration` prompt mode, for the tools it is offered.
//! 2. `improve` runs the built-in `improve` agent over the persona
//!    directory (`SOUL.md`, `IDENTITY.md`, `GOALS.md`, `memory/`) as its
//!    only workspace, with the file tools and no commands, after copying
//!    those files to `backups/<time>/` in the same directory. Its calls go
//!    through a gate of their own with the caller's confirmation mode (the
//!    same cell: plan mode entered or left applies there too) and
//!    approver, and the same audit.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use toolgate_agent::delegate::{
    CollaborateTool, DelegateTool, DelegationHub, IMPROVE, ImproveTool, SubAgentError, SubAgents,
    SubResult, SubRun,
};
use toolgate_agent::{AgentDef, AgentRunner, ContextBudget, EventSink, LlmClient, PromptMode};
use toolgate_core::{Registry, Workspace};
use toolgate_engine::{Approver, ExecutionEngine};
use toolgate_policy::{ConfirmationMode, ConfirmationPolicy};
use toolgate_tools::BuiltinOptions;

use crate::assembly::gate::Gate;
use crate::assembly::host::Host;
use crate::error::HostError;

/// The role of the built-in `improve` agent.
const IMPROVE_PROMPT: &str = "You improve an assistant's persona and memory files: SOUL.md \
(how it behaves), IDENTITY.md (who it is), GOALS.md (its goals, as checkboxes) and the daily \
logs in memory/. Read them first. Make small, concrete edits that serve the focus you are \
given; keep what is still true; never add secrets. Finish with a short list of what you \
changed.";

/// What a run that may delegate needs to run other agents.
pub(crate) struct RunLimits {
    pub(crate) llm: Arc<dyn LlmClient>,
    pub(crate) context: ContextBudget,
    pub(crate) prices: Option<(f64, f64)>,
    pub(crate) budget_usd: Option<f64>,
    pub(crate) recover_text_calls: bool,
    pub(crate) mode: ConfirmationMode,
    pub(crate) interactive: Option<Arc<dyn Approver>>,
}

impl Host {
    /// Registers the delegation tools in `registry` when some agent lists
    /// `delegate_to`, and returns their hub.
    pub(crate) fn register_delegation(
        &self,
        registry: &Registry,
    ) -> Result<Option<Arc<DelegationHub>>, HostError> {
        let agents = &self.config().agents;
        if agents
            .values()
            .all(|a| a.delegate_to.as_ref().is_none_or(Vec::is_empty))
        {
            return Ok(None);
        }
        let hub = DelegationHub::new();
        registry
            .register(DelegateTool::new(Arc::clone(&hub)))
            .map_err(HostError::Registry)?;
        registry
            .register(CollaborateTool::new(Arc::clone(&hub)))
            .map_err(HostError::Registry)?;
        if self.config().tools.persona.enabled {
            registry
                .register(ImproveTool::new(Arc::clone(&hub)))
                .map_err(HostError::Registry)?;
        }
        Ok(Some(hub))
    }

    /// The agents `caller` may hand work to, ready to run (rule 1).
    pub(crate) fn sub_agents(
        &self,
        caller: &AgentDef,
        gate: &Gate,
        limits: RunLimits,
    ) -> Result<Arc<HostSubAgents>, HostError> {
        let mut agents = HashMap::new();
        for name in caller.delegate_to.iter().filter(|n| n.as_str() != IMPROVE) {
            let base = self.agent(name)?.with_extra_tools(gate.extra_tool_names());
            let mut variants = Vec::with_capacity(2);
            for safe in [false, true] {
                let mut def = base.clone().as_sub_agent(safe);
                def.system_prompt = self.system_prompt(&def, &gate.registry)?;
                variants.push(def);
            }
            let safe = variants.pop();
            let full = variants.pop();
            if let (Some(full), Some(safe)) = (full, safe) {
                agents.insert(name.clone(), (full, safe));
            }
        }
        let improve = if caller.delegate_to.iter().any(|n| n == IMPROVE) {
            Some(self.improve_setup(&limits, gate.engine.mode_cell())?)
        } else {
            None
        };
        Ok(Arc::new(HostSubAgents {
            agents,
            engine: Arc::clone(&gate.engine),
            limits,
            improve,
        }))
    }

    /// The `improve` agent's gate and directory (rule 2). Its gate reads
    /// the caller's `mode` cell, so plan mode entered or left by the caller
    /// holds there too.
    fn improve_setup(
        &self,
        limits: &RunLimits,
        mode: &toolgate_engine::ModeCell,
    ) -> Result<ImproveSetup, HostError> {
        let dir = self.persona_dir()?;
        toolgate_core::private_files::create_dir_all(&dir).map_err(|source| {
            HostError::Workspace {
                path: dir.clone(),
                source,
            }
        })?;
        let workspace = Workspace::builder(&dir)
            .sensitive_patterns(Vec::<String>::new())
            .protected_patterns(["/backups/**".to_owned(), "/toolgate.db*".to_owned()])
            .private_modes(true)
            .build()
            .map_err(|e| HostError::ToolGroup {
                group: "persona",
                reason: toolgate_core::error_chain(&e),
            })?;
        let registry = Arc::new(Registry::new());
        for group in toolgate_tools::builtin_groups(&workspace, &BuiltinOptions::default()) {
            if group.name != "files" {
                continue;
            }
            for tool in group.tools {
                registry.register_arc(tool).map_err(HostError::Registry)?;
            }
        }
        let mut builder = ExecutionEngine::builder(Arc::clone(&registry))
            .policy(ConfirmationPolicy::new(limits.mode))
            .mode_cell(mode.clone())
            .rules(self.confirmation_rules().clone())
            .approver(self.approver(limits.mode, limits.interactive.clone()))
            .dry_run(self.dry_run())
            .default_timeout(Duration::from_secs(self.config().tools.timeout.max(1)))
            .workspace(workspace.clone());
        if let Some(saved) = self.saved_rules()? {
            builder = builder.saved_rules(saved);
        }
        if let Some(file) = self.audit_file()? {
            builder = builder.audit(file);
        }
        if let Some(store) = self.store_audit()? {
            builder = builder.audit_sink(store);
        }
        let mut agent = AgentDef::builtin("build").ok_or_else(|| HostError::UnknownAgent {
            name: "build".to_owned(),
            known: self.agent_names(),
        })?;
        IMPROVE.clone_into(&mut agent.name);
        agent.system_prompt = toolgate_agent::PromptBuilder::new(IMPROVE_PROMPT)
            .mode(PromptMode::Collaboration)
            .edits(true)
            .build();
        agent.prompt_mode = PromptMode::Collaboration;
        Ok(ImproveSetup {
            dir,
            engine: Arc::new(builder.build()),
            agent,
        })
    }
}

/// The `improve` agent, its directory and gate.
struct ImproveSetup {
    dir: PathBuf,
    engine: Arc<ExecutionEngine>,
    agent: AgentDef,
}

/// Runs the agents a caller may hand work to (rules on the module).
pub(crate) struct HostSubAgents {
    /// By name: the agent with its tools, and its collaboration-safe form.
    agents: HashMap<String, (AgentDef, AgentDef)>,
    engine: Arc<ExecutionEngine>,
    limits: RunLimits,
    improve: Option<ImproveSetup>,
}

impl HostSubAgents {
    /// A runner of `agent` on `engine` inside the caller's limits.
    fn runner(
        &self,
        engine: Arc<ExecutionEngine>,
        agent: AgentDef,
        events: EventSink,
        deadline: Option<Instant>,
        meter: Arc<toolgate_agent::SpendMeter>,
    ) -> AgentRunner {
        let limits = &self.limits;
        let mut builder = AgentRunner::builder(Arc::clone(&limits.llm), engine, agent)
            .events(events)
            .meter(meter)
            .context(limits.context)
            .recover_text_calls(limits.recover_text_calls);
        if let Some(deadline) = deadline {
            builder = builder.timeout(deadline.saturating_duration_since(Instant::now()));
        }
        if let Some((input, output)) = limits.prices {
            builder = builder.prices(input, output);
        }
        if let Some(budget) = limits.budget_usd {
            builder = builder.budget_usd(budget);
        }
        builder.build()
    }
}

#[async_trait]
impl SubAgents for HostSubAgents {
    fn describe(&self, agent: &str) -> Option<String> {
        let (def, _) = self.agents.get(agent)?;
        let role = def
            .system_prompt
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with("Another agent"))
            .unwrap_or_default();
        Some(role.chars().take(160).collect())
    }

    async fn run(&self, run: SubRun) -> Result<SubResult, SubAgentError> {
        let Some((full, safe)) = self.agents.get(&run.agent) else {
            return Err(SubAgentError::UnknownAgent(run.agent));
        };
        let agent = if run.collaboration_safe { safe } else { full };
        let runner = self.runner(
            Arc::clone(&self.engine),
            agent.clone(),
            run.events,
            run.deadline,
            run.meter,
        );
        let report = runner.run(&run.task, run.history).await;
        Ok(SubResult::new(
            report.final_text,
            report.outcome,
            report.steps,
            report.messages,
        )
        .error(report.error))
    }

    async fn improve(&self, focus: &str, events: EventSink) -> Result<SubResult, SubAgentError> {
        let Some(setup) = &self.improve else {
            return Err(SubAgentError::ImproveUnavailable);
        };
        let backup = back_up(&setup.dir).map_err(SubAgentError::Backup)?;
        let runner = self.runner(
            Arc::clone(&setup.engine),
            setup.agent.clone(),
            events,
            None,
            toolgate_agent::SpendMeter::new(),
        );
        let report = runner.run(&format!("Focus: {focus}"), Vec::new()).await;
        let answer = format!(
            "{}\n\n(backup of the files before: {})",
            report.final_text.trim(),
            backup.display()
        );
        Ok(
            SubResult::new(answer, report.outcome, report.steps, report.messages)
                .error(report.error),
        )
    }
}

/// Copies the persona files and `memory/` of `dir` to
/// `dir/backups/<time>/`, and returns that directory.
fn back_up(dir: &Path) -> std::io::Result<PathBuf> {
    let stamp = jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%S%.3fZ")
        .to_string();
    let target = dir.join("backups").join(stamp);
    toolgate_core::private_files::create_dir_all(&target)?;
    for name in ["SOUL.md", "IDENTITY.md", "GOALS.md"] {
        let from = dir.join(name);
        if from.is_file() {
            std::fs::copy(&from, target.join(name))?;
        }
    }
    let memory = dir.join("memory");
    if memory.is_dir() {
        toolgate_core::private_files::create_dir_all(&target.join("memory"))?;
        for entry in std::fs::read_dir(&memory)? {
            let entry = entry?;
            if entry.file_type()?.is_file() {
                std::fs::copy(entry.path(), target.join("memory").join(entry.file_name()))?;
            }
        }
    }
    Ok(target)
}
