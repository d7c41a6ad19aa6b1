//! Assembling a gate: the registry with MCP tools, guardrails, hooks, the
//! approver and the audit, in one place for every front end.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use serde_yaml_ng::{Mapping, Value as Yaml};
use toolgate_core::Registry;
use toolgate_engine::{
    Approver, AuditSink, ExecutionEngine, GuardrailsEngine, HookExecutor, plan_mode_tools,
};
use toolgate_mcp::{AddServerTool, McpManager, McpServerConfig, ServerRecorder, ServerStatus};
use toolgate_policy::{ConfirmationMode, ConfirmationPolicy};
use toolgate_sandbox::{NetworkAttachment, NetworkConsent, NetworkObserver};
use toolgate_skills::SkillTool;

use crate::assembly::host::Host;
use crate::error::HostError;
use crate::network::{ApproverConsent, AuditObserver, NetworkSetting};
use toolgate_assistant::inspect::SelfInspect;
use toolgate_dynamic::registry_names;

/// Builds a [`Gate`] from a [`Host`] ([`Host::gate`]).
pub struct GateBuilder<'h> {
    host: &'h Host,
    interactive: Option<Arc<dyn Approver>>,
    mode: Option<ConfirmationMode>,
    session_id: Option<String>,
    mcp: bool,
    delegation: bool,
    agent: Option<String>,
    audit: Vec<Arc<dyn AuditSink>>,
    for_tool: Option<String>,
    plan_tools: bool,
}

impl std::fmt::Debug for GateBuilder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GateBuilder")
            .field("mode", &self.mode)
            .field("session_id", &self.session_id)
            .field("mcp", &self.mcp)
            .finish_non_exhaustive()
    }
}

impl<'h> GateBuilder<'h> {
    pub(crate) fn new(host: &'h Host) -> Self {
        Self {
            host,
            interactive: None,
            mode: None,
            session_id: None,
            mcp: true,
            delegation: false,
            agent: None,
            audit: Vec::new(),
            for_tool: None,
            plan_tools: false,
        }
    }

    /// The gate serves calls of one tool, `name` (`toolgate call`): when a
    /// group of the catalog offers it, only that group is built, and no MCP
    /// server is started nor any other tool registered; a call of another
    /// tool then finds no such tool. When no group offers it (an MCP or a
    /// dynamic tool, or a name that does not exist), the gate holds every
    /// tool, as without this. The engine in front, and so every step a
    /// call goes through, is the same. By default, every tool.
    #[must_use]
    pub fn for_tool(mut self, name: impl Into<String>) -> Self {
        self.for_tool = Some(name.into());
        self
    }

    /// The agent the gate serves: with `tools.dynamic`, its `create_tool`
    /// and the approved dynamic tools it may use are registered. By
    /// default, `build`.
    #[must_use]
    pub fn agent(mut self, name: impl Into<String>) -> Self {
        self.agent = Some(name.into());
        self
    }

    /// Registers the delegation tools (`delegate`, `collaborate`, and
    /// `improve` with the persona group) when some agent lists
    /// `delegate_to`: for gates that run agents, or show what an agent is
    /// offered. They work only inside an agent run (rules on
    /// [`toolgate_agent::delegate`]), so a gate that serves MCP clients or
    /// `toolgate call` leaves them out. By default, out.
    #[must_use]
    pub fn delegation(mut self, yes: bool) -> Self {
        self.delegation = yes;
        self
    }

    /// Registers the plan-mode tools, `exit_plan_mode` and
    /// `enter_plan_mode` ([`toolgate_engine::plan_mode_tools`]), over the
    /// engine's mode: for gates that run agents. Plans are put to the front
    /// end's [`interactive`](Self::interactive) approver, unless the mode
    /// the gate starts in is `dont-ask` (which never asks anyone): without
    /// one, `exit_plan_mode` says nobody can approve the plan and
    /// `enter_plan_mode` is never offered. A gate serving MCP clients or
    /// `toolgate call` leaves them out: its mode is the process's, and its
    /// callers' plans are theirs to show. By default, out.
    #[must_use]
    pub fn plan_mode_tools(mut self, yes: bool) -> Self {
        self.plan_tools = yes;
        self
    }

    /// The front end's way to ask a person (terminal prompt, web UI, MCP
    /// elicitation). It is used unless the mode is `yolo`. By default,
    /// none: calls that need confirmation fail with a hint.
    #[must_use]
    pub fn interactive(mut self, approver: Option<Arc<dyn Approver>>) -> Self {
        self.interactive = approver;
        self
    }

    /// The confirmation mode, from [`Host::mode_for`] for an agent. By
    /// default, `Host::mode_for(None)`: `--mode`, else
    /// `confirmation.mode`.
    #[must_use]
    pub fn mode(mut self, mode: ConfirmationMode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// The session the gate's calls belong to: tools, hooks and every audit
    /// record see it. By default, none.
    #[must_use]
    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    /// Whether the configured MCP servers are started and their tools
    /// registered. By default, yes.
    #[must_use]
    pub fn mcp(mut self, yes: bool) -> Self {
        self.mcp = yes;
        self
    }

    /// Another place audit records go, besides the configured ones. By
    /// default, none.
    #[must_use]
    pub fn audit_sink(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.audit.push(sink);
        self
    }

    /// The tools the gate would hold, without the gate: the registry of
    /// the configured groups, the delegation tools when asked for, the MCP
    /// servers' tools (a server that fails is skipped and reported in
    /// [`GateTools::mcp_statuses`]), the agent's dynamic tools,
    /// `self_inspect` and `mcp_add_server`. For front ends that show tools
    /// and run none (`toolgate tools list`, `toolgate prompt show`): no
    /// engine, guardrails, hooks, approver or audit is built, so none of
    /// them can run a call. Call [`GateTools::shutdown`] before exiting.
    pub async fn tools(self) -> Result<GateTools, HostError> {
        self.register_tools().await
    }

    /// Starts the MCP servers (a server that fails is skipped and reported
    /// in [`Gate::mcp_statuses`]) and builds the gate: the tools of
    /// [`tools`](Self::tools) behind the engine.
    pub async fn build(self) -> Result<Gate, HostError> {
        let host = self.host;
        let mode = match self.mode {
            Some(mode) => mode,
            None => host.mode_for(None)?,
        };
        let tools = self.register_tools().await?;
        let network = match attach_network(host, mode, &self) {
            Ok(network) => network,
            Err(error) => {
                tools.shutdown().await;
                return Err(error);
            }
        };
        let reviewer = self
            .interactive
            .clone()
            .filter(|_| self.plan_tools && mode != ConfirmationMode::DontAsk);
        let plan_tools = self.plan_tools;
        let assembled = assemble(host, &tools.registry, mode, self, None).and_then(|parts| {
            if plan_tools {
                let (exit, enter) = plan_mode_tools(parts.0.mode_cell(), reviewer);
                tools.registry.register(exit).map_err(HostError::Registry)?;
                tools
                    .registry
                    .register(enter)
                    .map_err(HostError::Registry)?;
            }
            Ok(parts)
        });
        match assembled {
            Ok(parts) => Ok(Gate {
                network,
                registry: tools.registry,
                engine: Arc::new(parts.0),
                guardrails: parts.1,
                hooks: parts.2,
                mcp: tools.mcp,
                mcp_statuses: tools.mcp_statuses,
                delegation: tools.delegation,
                skills: tools.skills,
                capture: host.change_capture(),
            }),
            Err(error) => {
                tools.shutdown().await;
                Err(error)
            }
        }
    }

    /// The registry with every tool of the gate, in the order they were
    /// always registered: the groups, delegation, MCP, dynamic,
    /// `self_inspect`, `mcp_add_server`.
    async fn register_tools(&self) -> Result<GateTools, HostError> {
        let host = self.host;
        let skills = host.skill_activations();
        if let Some(name) = &self.for_tool
            && let Some(group) = host.group_of_tool(name, skills.clone())?
        {
            let registry = Registry::new();
            for tool in group.tools {
                registry.register_arc(tool).map_err(HostError::Registry)?;
            }
            return Ok(GateTools {
                registry: Arc::new(registry),
                mcp: McpManager::new(Arc::new(Registry::new()), host.sandbox()?),
                mcp_statuses: Vec::new(),
                delegation: None,
                skills,
            });
        }
        let registry = host.registry_with(skills.clone())?;
        let delegation = self
            .delegation
            .then(|| host.register_delegation(&registry))
            .transpose()?
            .flatten();
        let manager = McpManager::new(Arc::clone(&registry), host.sandbox()?);
        let statuses = if self.mcp {
            manager.start(&host.config().mcp).await
        } else {
            Vec::new()
        };
        let tools = GateTools {
            registry,
            mcp: manager,
            mcp_statuses: statuses,
            delegation,
            skills,
        };
        match self.register_more(&tools).await {
            Ok(()) => Ok(tools),
            Err(error) => {
                tools.shutdown().await;
                Err(error)
            }
        }
    }

    /// The tools registered after the MCP servers started: dynamic tools,
    /// `self_inspect` (whose health report names the servers) and
    /// `mcp_add_server`.
    async fn register_more(&self, tools: &GateTools) -> Result<(), HostError> {
        let host = self.host;
        let registry = &tools.registry;
        register_dynamic(host, registry, self.agent.as_deref()).await?;
        let config = host.config();
        if config.tools.self_inspect.enabled {
            let sandbox = host.sandbox().map_or_else(
                |e| json!({"error": toolgate_core::error_chain(&e)}),
                |s| json!({"level": s.status().level_name(), "network": s.network_status().to_string()}),
            );
            let health = json!({"sandbox": sandbox, "mcp_servers": tools.mcp_statuses});
            let config = serde_json::to_value(config).unwrap_or_default();
            let inspect = SelfInspect::new(config, health, Arc::clone(registry));
            registry.register(inspect).map_err(HostError::Registry)?;
        }
        if self.mcp && config.mcp.add_server_tool {
            let recorder = Arc::new(ConfigFileRecorder {
                path: host.loaded().project_file.clone(),
            });
            registry
                .register(AddServerTool::new(Arc::clone(&tools.mcp), recorder))
                .map_err(HostError::Registry)?;
        }
        Ok(())
    }
}

/// With a domain policy (`commands.network: {allow, deny}`): who the
/// sandbox's proxy asks about unlisted hosts (this gate's approver, unless
/// the mode never asks, `yolo` or `dont-ask`: see [`crate::network`]) and where it audits
/// connections (this gate's audit), for as long as the gate lives.
fn attach_network(
    host: &Host,
    mode: ConfirmationMode,
    options: &GateBuilder<'_>,
) -> Result<Option<NetworkAttachment>, HostError> {
    if !matches!(host.config().commands.network, NetworkSetting::Domains(_)) {
        return Ok(None);
    }
    let consent = match &options.interactive {
        Some(approver) if !mode.never_asks() => {
            let consent =
                ApproverConsent::new(Arc::clone(approver), tokio::runtime::Handle::current());
            Some(Arc::new(consent) as Arc<dyn NetworkConsent>)
        }
        _ => None,
    };
    let mut sinks: Vec<Arc<dyn AuditSink>> = Vec::new();
    if let Some(file) = host.audit_file()? {
        sinks.push(Arc::new(file));
    }
    if let Some(store) = host.store_audit()? {
        sinks.push(store);
    }
    sinks.extend(options.audit.iter().cloned());
    let observer = AuditObserver::new(sinks, options.session_id.clone());
    Ok(Some(host.sandbox()?.attach_network(
        consent,
        Some(Arc::new(observer) as Arc<dyn NetworkObserver>),
    )))
}

/// `create_tool` for `agent`, and the approved dynamic tools, when
/// `tools.dynamic.enabled`.
async fn register_dynamic(
    host: &Host,
    registry: &Arc<Registry>,
    agent: Option<&str>,
) -> Result<(), HostError> {
    if !host.config().tools.dynamic.enabled {
        return Ok(());
    }
    let agent = agent.unwrap_or("build");
    let dynamic = host.dynamic_tools()?;
    if let Some(group) = dynamic.group(agent, registry_names(registry)) {
        for tool in group.tools {
            registry.register_arc(tool).map_err(HostError::Registry)?;
        }
    }
    let report = dynamic
        .sync(registry, agent)
        .await
        .map_err(|e| HostError::ToolGroup {
            group: "dynamic",
            reason: toolgate_core::error_chain(&e),
        })?;
    for skipped in &report.skipped {
        tracing::warn!(
            "dynamic tool `{}` (id {}) left out: {}",
            skipped.name,
            skipped.id,
            skipped.reason
        );
    }
    Ok(())
}

/// The engine in front of `registry`, with the guardrails and hooks it
/// holds; its audit names `client` when there is one.
fn assemble(
    host: &Host,
    registry: &Arc<Registry>,
    mode: ConfirmationMode,
    options: GateBuilder<'_>,
    client: Option<&str>,
) -> Result<(ExecutionEngine, Arc<GuardrailsEngine>, Arc<HookExecutor>), HostError> {
    let config = host.config();
    let guardrails = host.guardrails()?;
    let hooks = host.hooks(options.session_id.as_deref())?;
    let mut builder = ExecutionEngine::builder(Arc::clone(registry))
        .guardrails(Arc::clone(&guardrails) as Arc<dyn toolgate_engine::Guardrails>)
        .pre_hooks(Arc::clone(&hooks) as Arc<dyn toolgate_engine::PreToolUse>)
        .post_hooks(Arc::clone(&hooks) as Arc<dyn toolgate_engine::PostToolUse>)
        .policy(ConfirmationPolicy::new(mode))
        .rules(host.confirmation_rules().clone())
        .approver(host.approver(mode, options.interactive))
        .dry_run(host.dry_run())
        .default_timeout(Duration::from_secs(config.tools.timeout.max(1)))
        .workspace(host.workspace_view()?);
    if let Some(capture) = host.change_capture() {
        builder = builder.capture(capture);
    }
    if let Some(saved) = host.saved_rules()? {
        builder = builder.saved_rules(saved);
    }
    if let Some(client) = client {
        builder = builder.client(client);
    }
    if let Some(id) = &options.session_id {
        builder = builder
            .session_id(id.clone())
            .scope_name(format!("the run of session {id}"));
    }
    if let Some(file) = host.audit_file()? {
        builder = builder.audit(file);
    }
    if let Some(store) = host.store_audit()? {
        builder = builder.audit_sink(store);
    }
    for sink in options.audit {
        builder = builder.audit_sink(sink);
    }
    Ok((builder.build(), guardrails, hooks))
}

impl Host {
    /// A second engine in front of a gate's `registry`, for one named
    /// client of `toolgate mcp serve --http` (`mcp.http.clients`): the
    /// same guardrails, hooks, rules, approver and audit as
    /// [`GateBuilder::build`]'s, the client's own confirmation `mode`, and
    /// every audit record naming `client`. The tools are the registry's
    /// (nothing is started or registered again).
    pub fn client_engine(
        &self,
        registry: &Arc<Registry>,
        client: &str,
        mode: ConfirmationMode,
        interactive: Option<Arc<dyn Approver>>,
    ) -> Result<ExecutionEngine, HostError> {
        let options = GateBuilder::new(self).interactive(interactive);
        assemble(self, registry, mode, options, Some(client)).map(|parts| parts.0)
    }

    /// Starts every configured MCP server, lists how each went, and stops
    /// them (`toolgate mcp list`, `toolgate doctor`).
    pub async fn mcp_statuses(&self) -> Result<Vec<ServerStatus>, HostError> {
        let manager = McpManager::new(Arc::new(Registry::new()), self.sandbox()?);
        let statuses = manager.start(&self.config().mcp).await;
        manager.shutdown().await;
        Ok(statuses)
    }
}

/// Everything a front end runs calls through: the gate and the parts the
/// agent loop also uses (hooks for lifecycle events, guardrails for quality
/// gates). Call [`shutdown`](Self::shutdown) before exiting so the MCP
/// servers stop cleanly.
pub struct Gate {
    /// The tools: built-ins and MCP tools.
    pub registry: Arc<Registry>,
    /// The gate every call goes through.
    pub engine: Arc<ExecutionEngine>,
    /// The guardrails inside the gate (quality gates run from them).
    pub guardrails: Arc<GuardrailsEngine>,
    /// The hooks inside the gate (the agent loop emits lifecycle events).
    pub hooks: Arc<HookExecutor>,
    /// The MCP client side.
    pub mcp: Arc<McpManager>,
    /// How each configured MCP server started.
    pub mcp_statuses: Vec<ServerStatus>,
    /// Where agent runs that may delegate are entered, when the delegation
    /// tools are registered ([`GateBuilder::delegation`]).
    pub delegation: Option<Arc<toolgate_agent::delegate::DelegationHub>>,
    /// Which skills this gate's `skill` tool has given the model; the run's
    /// lazy instructions ([`SkillInstructions`](crate::SkillInstructions))
    /// share it.
    pub skills: toolgate_skills::Activations,
    /// The capture of what calls change in the workspace, when on
    /// (`store.checkpoints.enabled`): the engine's, shared so that a run
    /// can look once more at its end for what background processes wrote.
    pub capture: Option<Arc<toolgate_store::WorkspaceTracker>>,
    /// The proxy asks this gate's approver and audits into its audit, as
    /// long as the gate lives.
    network: Option<NetworkAttachment>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("engine", &self.engine)
            .field("mcp_statuses", &self.mcp_statuses)
            .finish_non_exhaustive()
    }
}

/// The tools of a gate without the gate ([`GateBuilder::tools`]): what a
/// front end that lists tools needs, and nothing that runs them.
pub struct GateTools {
    /// The tools: built-ins and MCP tools.
    pub registry: Arc<Registry>,
    /// The MCP client side.
    pub mcp: Arc<McpManager>,
    /// How each configured MCP server started.
    pub mcp_statuses: Vec<ServerStatus>,
    /// The delegation hub, when the delegation tools are registered
    /// ([`GateBuilder::delegation`]).
    pub delegation: Option<Arc<toolgate_agent::delegate::DelegationHub>>,
    /// The activations of the `skill` tool.
    pub skills: toolgate_skills::Activations,
}

impl std::fmt::Debug for GateTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GateTools")
            .field("mcp_statuses", &self.mcp_statuses)
            .finish_non_exhaustive()
    }
}

impl GateTools {
    /// The tools an agent gets on top of its own list (see
    /// [`Gate::extra_tool_names`]).
    pub fn extra_tool_names(&self) -> Vec<String> {
        extra_tool_names(&self.mcp, &self.registry)
    }

    /// Stops the MCP servers.
    pub async fn shutdown(&self) {
        self.mcp.shutdown().await;
    }
}

/// The MCP servers' tools and, when skills are offered, `skill`.
fn extra_tool_names(mcp: &McpManager, registry: &Registry) -> Vec<String> {
    let mut extra = mcp.tool_names();
    if registry.has(SkillTool::NAME) {
        extra.push(SkillTool::NAME.to_owned());
    }
    extra
}

impl Gate {
    /// The tools an agent gets on top of its own list: the MCP servers'
    /// tools and, when skills are offered, `skill` (see
    /// [`AgentDef::with_extra_tools`](toolgate_agent::AgentDef::with_extra_tools)).
    pub fn extra_tool_names(&self) -> Vec<String> {
        extra_tool_names(&self.mcp, &self.registry)
    }

    /// Stops the MCP servers.
    /// Waits (up to 2 s) for the proxy to report the connections of this
    /// gate's commands to its audit, and stops the MCP servers.
    pub async fn shutdown(&self) {
        if let Some(network) = &self.network
            && !network.settle(NETWORK_SETTLE).await
        {
            tracing::warn!(
                "connections still open after {} s are not in the audit",
                NETWORK_SETTLE.as_secs()
            );
        }
        self.mcp.shutdown().await;
    }
}

/// How long [`Gate::shutdown`] waits for connections still open.
const NETWORK_SETTLE: Duration = Duration::from_secs(2);

/// Records servers added at run time in the workspace configuration file.
#[derive(Debug)]
struct ConfigFileRecorder {
    path: PathBuf,
}

impl ServerRecorder for ConfigFileRecorder {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    /// Adds `mcp.servers.NAME` to the YAML file, keeping the rest, and
    /// replaces the file atomically ([`crate::atomic::write_atomic`]).
    fn record(&self, name: &str, server: &McpServerConfig) -> Result<(), String> {
        let path = &self.path;
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("could not read {}: {e}", path.display())),
        };
        let mut root: Yaml = if text.trim().is_empty() {
            Yaml::Mapping(Mapping::new())
        } else {
            serde_yaml_ng::from_str(&text)
                .map_err(|e| format!("could not parse {}: {e}", path.display()))?
        };
        let entry = serde_yaml_ng::to_value(server).map_err(|e| e.to_string())?;
        let Yaml::Mapping(map) = &mut root else {
            return Err(format!("{} is not a YAML mapping", path.display()));
        };
        let mcp = map
            .entry(Yaml::String("mcp".into()))
            .or_insert_with(|| Yaml::Mapping(Mapping::new()));
        let Yaml::Mapping(mcp) = mcp else {
            return Err("`mcp` in the configuration is not a mapping".to_owned());
        };
        let servers = mcp
            .entry(Yaml::String("servers".into()))
            .or_insert_with(|| Yaml::Mapping(Mapping::new()));
        let Yaml::Mapping(servers) = servers else {
            return Err("`mcp.servers` in the configuration is not a mapping".to_owned());
        };
        servers.insert(Yaml::String(name.to_owned()), entry);
        let out = serde_yaml_ng::to_string(&root).map_err(|e| e.to_string())?;
        crate::atomic::write_atomic(path, out.as_bytes())
            .map_err(|e| format!("could not write {}: {e}", path.display()))
    }
}
