//! [`Host`]: the loaded configuration of one workspace, and everything built
//! from it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use toolgate_agent::AgentDef;
use toolgate_core::{Registry, Workspace};
use toolgate_dynamic::DynamicTools;
use toolgate_engine::Approver;
use toolgate_engine::{AuditLog, CommandGuard, GuardrailsEngine, HeadlessApprover, HookExecutor};
use toolgate_policy::{CommandPolicy, ConfirmationMode, ConfirmationRules, RuleDecision};
use toolgate_sandbox::{EnvPolicy, Sandbox, SandboxMode};
use toolgate_tools::BuiltinOptions;
use toolgate_tools::command::{CommandOptions, ProcessLimits};

use crate::config::{Config, Loaded, Overrides, SandboxSetting};
use crate::error::HostError;
use crate::network::NetworkSetting;

pub use builder::{
    HostBuilder, HostPart, TrustPolicy, confirmation_rules_builder, resolve_workspace,
};

mod builder;

/// One workspace's configuration, loaded and checked, and the one place
/// where every front end gets its parts: the sandbox, the registry, the
/// guardrails and hooks, the gate ([`Host::gate`]), the agents and the model
/// client.
///
/// # Rules
///
/// 1. Every process any part starts runs in the one [`Sandbox`] of the host
///    ([`Host::sandbox`]), built once from `commands.*` and the guardrail
///    patterns.
/// 2. The confirmation mode of a gate is `--mode` when given, else the
///    agent's `mode`, else `confirmation.mode` ([`Host::mode_for`]).
/// 3. Who is asked is decided in one place ([`Host::approver`]): nobody in
///    `dont-ask`, nor in `yolo` (unless an `ask` rule of
///    `confirmation.rules` needs someone);
///    otherwise the front end's interactive approver (terminal, web UI, MCP
///    elicitation), or, without one, a headless approver whose refusals say
///    how to allow the call.
/// 4. Every gate consults the same `confirmation.rules`
///    ([`Host::confirmation_rules`]) before its mode.
pub struct Host {
    workspace: PathBuf,
    mode_flag: Option<ConfirmationMode>,
    loaded: Loaded,
    env: Vec<(String, String)>,
    command_policy: Arc<CommandPolicy>,
    rules: ConfirmationRules,
    dry_run: bool,
    sandbox: OnceLock<Sandbox>,
    /// [`Host::workspace_view`], its glob sets compiled once.
    workspace_view: OnceLock<Workspace>,
    pub(crate) store: OnceLock<Arc<dyn toolgate_store::Store>>,
    pub(crate) dynamic: OnceLock<Arc<DynamicTools>>,
    pub(crate) store_audit: OnceLock<Arc<crate::assembly::stores::StoreAudit>>,
    /// [`Host::saved_rules`], one per host: its gates share what was read.
    pub(crate) saved_rules: OnceLock<Arc<toolgate_gateway::StoreRules>>,
    /// [`Host::change_capture`], one per host: every gate's captures share
    /// its record of the workspace.
    pub(crate) capture: OnceLock<Option<Arc<toolgate_store::WorkspaceTracker>>>,
    pub(crate) skills: OnceLock<toolgate_skills::Discovery>,
    /// [`Host::group_outlines`], built once.
    group_outlines: OnceLock<Vec<GroupOutline>>,
    /// [`Host::store_path`] once found: every path derived from the
    /// store's place asks for it, and finding it canonicalizes the
    /// workspace.
    pub(crate) store_path: OnceLock<PathBuf>,
    /// [`Host::own_state`], computed once.
    pub(crate) own_state: OnceLock<crate::OwnState>,
}

/// What the prompt and the router need of a tool group: its name, its
/// prompt block and its tools' names (not the tools themselves).
#[derive(Debug, Clone)]
pub(crate) struct GroupOutline {
    pub(crate) name: &'static str,
    pub(crate) instructions: std::borrow::Cow<'static, str>,
    pub(crate) tools: Vec<String>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("workspace", &self.workspace)
            .field("mode_flag", &self.mode_flag)
            .field("dry_run", &self.dry_run)
            .finish_non_exhaustive()
    }
}

impl Host {
    /// A builder. See [`HostBuilder`] for the defaults.
    pub fn builder() -> HostBuilder {
        HostBuilder {
            workspace: None,
            config_file: None,
            env: None,
            overrides: Overrides::default(),
            dry_run: false,
            trust: TrustPolicy::StoreOnly,
            parts: Vec::new(),
        }
    }

    /// The workspace root, canonical.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The effective configuration.
    pub fn config(&self) -> &Config {
        &self.loaded.config
    }

    /// The configuration with the layers that made it and the workspace
    /// file's trust.
    pub fn loaded(&self) -> &Loaded {
        &self.loaded
    }

    /// The environment the host was loaded with.
    pub fn env(&self) -> &[(String, String)] {
        &self.env
    }

    /// One variable of [`env`](Self::env).
    pub fn env_var(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The command policy: blocklist (built-in and configured) and
    /// classification.
    pub fn command_policy(&self) -> &Arc<CommandPolicy> {
        &self.command_policy
    }

    /// The persistent allow/ask/deny rules of `confirmation.rules`, which
    /// every gate this host builds consults (step 5).
    pub fn confirmation_rules(&self) -> &ConfirmationRules {
        &self.rules
    }

    /// Whether gates are built in dry-run mode.
    pub fn dry_run(&self) -> bool {
        self.dry_run
    }

    /// The sandbox every process toolgate starts runs in: commands,
    /// background processes, hooks, quality gates, MCP servers. Built on
    /// first use.
    pub fn sandbox(&self) -> Result<Sandbox, HostError> {
        if let Some(sandbox) = self.sandbox.get() {
            return Ok(sandbox.clone());
        }
        let own = self.own_state();
        self.prepare_own_state(&own);
        let sandbox = sandbox_builder(&self.workspace, &self.loaded, &self.policy_files())?
            .readable(self.user_skill_dirs())
            .private(own.private().map(Path::to_path_buf))
            .build()
            .map_err(HostError::Sandbox)?;
        Ok(self.sandbox.get_or_init(|| sandbox).clone())
    }

    /// Dynamic tools (`tools.dynamic`): one per host, sharing the store;
    /// their programs run in the configured sandbox with the network off.
    pub fn dynamic_tools(&self) -> Result<Arc<DynamicTools>, HostError> {
        if let Some(dynamic) = self.dynamic.get() {
            return Ok(Arc::clone(dynamic));
        }
        let own = self.own_state();
        self.prepare_own_state(&own);
        let builder = sandbox_builder(&self.workspace, &self.loaded, &self.policy_files())?
            .readable(self.user_skill_dirs())
            .private(own.private().map(Path::to_path_buf));
        let store: Arc<dyn toolgate_store::DynamicToolStore> = self.store()?;
        let dynamic = DynamicTools::new(self.config().tools.dynamic.clone(), store, builder)
            .map_err(|e| HostError::ToolGroup {
                group: "dynamic",
                reason: toolgate_core::error_chain(&e),
            })?
            .command_policy(Arc::clone(&self.command_policy));
        Ok(Arc::clone(self.dynamic.get_or_init(|| Arc::new(dynamic))))
    }

    /// The file tools' view of the workspace: the default and configured
    /// sensitive patterns (refused to every tool unless
    /// `workspace.allow_sensitive`), protected patterns (never written), and
    /// toolgate's own state ([`own_state`](Self::own_state)), refused to
    /// every tool, read or write, wherever it lies. Built once per host
    /// (its glob sets are the costliest part of a start): the file tools,
    /// the search tools, the commands and every gate share it.
    pub fn workspace_view(&self) -> Result<Workspace, HostError> {
        if let Some(view) = self.workspace_view.get() {
            return Ok(view.clone());
        }
        let view = self.build_workspace_view()?;
        Ok(self.workspace_view.get_or_init(|| view).clone())
    }

    fn build_workspace_view(&self) -> Result<Workspace, HostError> {
        let config = self.config();
        Workspace::builder(&self.workspace)
            .sensitive_patterns(
                toolgate_core::DEFAULT_SENSITIVE_PATTERNS
                    .iter()
                    .map(|p| (*p).to_owned())
                    .chain(config.guardrails.sensitive_files.iter().cloned()),
            )
            // toolgate's and git's own files, plus the configured ones: the
            // file tools refuse to change them even where the guardrails
            // step would not see it (a path through a symlink to a directory
            // that does not exist yet).
            .protected_patterns(
                toolgate_core::DEFAULT_PROTECTED_PATTERNS
                    .iter()
                    .map(|p| (*p).to_owned())
                    .chain(config.guardrails.protected_files.iter().cloned())
                    .chain(self.policy_files()),
            )
            .private_paths(self.own_state().private().map(Path::to_path_buf))
            .allow_sensitive(config.workspace.allow_sensitive)
            .build()
            .map_err(HostError::Patterns)
    }

    /// The read-only part of toolgate's own state that lies inside the
    /// workspace ([`OwnKind::ReadOnly`](crate::OwnKind::ReadOnly): the
    /// user's skills, when the workspace is the home directory), as
    /// anchored patterns. They are protected like `toolgate.yaml`: the file
    /// tools never write them and processes see them read-only, so a model
    /// cannot plant a skill for later runs. (Everything else of toolgate's
    /// own — configuration, store, audit, `--config` — is private, refused
    /// to reads too: see [`own_state`](Self::own_state).)
    pub fn policy_files(&self) -> Vec<String> {
        let own = self.own_state();
        let mut out = Vec::new();
        for path in own.read_only() {
            let path = canonical_lenient(path);
            if let Ok(rel) = path.strip_prefix(&self.workspace)
                && !rel.as_os_str().is_empty()
            {
                let pattern = format!("/{}", toolgate_policy::escape_glob(&rel.to_string_lossy()));
                if !out.contains(&pattern) {
                    out.push(pattern);
                }
            }
        }
        out
    }

    /// The outline of each of [`tool_groups`](Self::tool_groups), built
    /// once per host: every run's system prompt (its delegates' too) and
    /// router read it, instead of building every tool again.
    pub(crate) fn group_outlines(&self) -> Result<&[GroupOutline], HostError> {
        if let Some(outlines) = self.group_outlines.get() {
            return Ok(outlines);
        }
        let outlines = self
            .tool_groups()?
            .into_iter()
            .map(|g| GroupOutline {
                name: g.name,
                tools: g.tools.iter().map(|t| t.name().to_owned()).collect(),
                instructions: g.instructions,
            })
            .collect();
        Ok(self.group_outlines.get_or_init(|| outlines))
    }

    /// The options of the built-in tools (`files`, `commands`): the
    /// workspace and command sections, the command policy, the sandbox.
    pub(crate) fn builtin_options(&self) -> Result<BuiltinOptions, HostError> {
        let config = self.config();
        let commands = &config.commands;
        let command_options = commands.enabled.then(|| {
            CommandOptions::default()
                .allowed_only(commands.allowed_only)
                .max_output_lines(commands.max_output_lines)
                .sandbox_required(commands.sandbox_required)
        });
        let limits = ProcessLimits {
            max_sessions: commands.max_sessions.max(1),
            finished_ttl: Duration::from_secs(commands.session_ttl),
            output_cap: commands.session_output_cap.max(1024),
        };
        Ok(BuiltinOptions::default()
            .default_timezone(config.tools.datetime.timezone.clone())
            .max_file_size(config.workspace.max_file_size)
            .allow_delete(config.workspace.allow_delete)
            .commands(command_options)
            .command_policy(Arc::clone(&self.command_policy))
            .process_limits(limits)
            .sandbox(self.sandbox()?))
    }

    /// The tools the configuration enables, in a new registry (no MCP
    /// tools: [`Host::gate`] adds those).
    pub fn registry(&self) -> Result<Arc<Registry>, HostError> {
        self.registry_with(self.skill_activations())
    }

    /// [`registry`](Self::registry) with the `skill` tool recording into
    /// `activations` (the run's, shared with its lazy instructions).
    pub(crate) fn registry_with(
        &self,
        activations: toolgate_skills::Activations,
    ) -> Result<Arc<Registry>, HostError> {
        let registry = Registry::new();
        for group in self.tool_groups_with(activations)? {
            for tool in group.tools {
                registry.register_arc(tool).map_err(HostError::Registry)?;
            }
        }
        Ok(Arc::new(registry))
    }

    /// The guardrails of the configuration (DESIGN.md §7), with the
    /// command blocklist inside.
    pub fn guardrails(&self) -> Result<Arc<GuardrailsEngine>, HostError> {
        let config = self.config();
        // The same sensitive list as the workspace view's: compiled once.
        let view = self.workspace_view()?;
        GuardrailsEngine::builder(config.guardrails.clone(), &self.workspace)
            .compiled_sensitive(view.sensitive_set().clone())
            .command_guard(CommandGuard::new(
                Arc::clone(&self.command_policy),
                config.commands.allowed_only,
            ))
            .allow_sensitive(config.workspace.allow_sensitive)
            .protected_patterns(self.policy_files())
            .sandbox(self.sandbox()?)
            .build()
            .map(Arc::new)
            .map_err(HostError::Guardrails)
    }

    /// The hooks of the configuration, seeing `session_id`.
    pub fn hooks(&self, session_id: Option<&str>) -> Result<Arc<HookExecutor>, HostError> {
        let mut builder = HookExecutor::builder(self.config().hooks.clone(), &self.workspace)
            .sandbox(self.sandbox()?);
        if let Some(id) = session_id {
            builder = builder.session_id(id);
        }
        builder.build().map(Arc::new).map_err(HostError::Hooks)
    }

    /// The JSONL audit file, when `audit.path` is set.
    pub(crate) fn audit_file(&self) -> Result<Option<AuditLog>, HostError> {
        let Some(path) = &self.config().audit.path else {
            return Ok(None);
        };
        AuditLog::open(path)
            .map(Some)
            .map_err(|source| HostError::Audit {
                path: path.clone(),
                source,
            })
    }

    /// The agent called `name`: a custom agent from `agents:`, else a
    /// built-in (`build`, `plan`, `review`).
    ///
    /// Its `delegate_to` must name other agents that exist (or `improve`
    /// when the persona group is on): an agent never lists itself, so no
    /// call can loop back (delegated agents never delegate further).
    pub fn agent(&self, name: &str) -> Result<AgentDef, HostError> {
        let def = AgentDef::resolve(name, &self.config().agents).ok_or_else(|| {
            HostError::UnknownAgent {
                name: name.to_owned(),
                known: self.agent_names(),
            }
        })?;
        for target in &def.delegate_to {
            let reason = if target == name {
                "an agent cannot delegate to itself".to_owned()
            } else if target == toolgate_agent::delegate::IMPROVE {
                if self.config().tools.persona.enabled {
                    continue;
                }
                "`improve` needs `tools.persona.enabled: true`".to_owned()
            } else if AgentDef::resolve(target, &self.config().agents).is_some() {
                continue;
            } else {
                format!("there is no agent `{target}`")
            };
            return Err(HostError::Delegation {
                agent: name.to_owned(),
                reason,
            });
        }
        Ok(def)
    }

    /// Every agent name: the built-ins, then the configured ones.
    pub fn agent_names(&self) -> Vec<String> {
        let mut names: Vec<String> = ["build", "plan", "review"]
            .iter()
            .map(|n| (*n).to_owned())
            .collect();
        for name in self.config().agents.keys() {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        names
    }

    /// The `--mode` flag, when given: it decides every gate's mode.
    pub fn mode_flag(&self) -> Option<ConfirmationMode> {
        self.mode_flag
    }

    /// The confirmation mode of a gate for `agent` (rule 2 of the
    /// [type docs](Self)).
    pub fn mode_for(&self, agent: Option<&AgentDef>) -> Result<ConfirmationMode, HostError> {
        if let Some(mode) = self.mode_flag {
            return Ok(mode);
        }
        match agent.and_then(|a| a.mode.as_deref().map(|m| (a, m))) {
            Some((agent, mode)) => mode.parse().map_err(|reason| HostError::AgentMode {
                agent: agent.name.clone(),
                reason,
            }),
            None => Ok(self.config().confirmation.mode),
        }
    }

    /// The web UI's permission of `agent` and the mode its runs get: its
    /// `ui.permissions` toggle, else what its own mode amounts to (`yolo`
    /// is `full`, `plan` is `plan`); the `--mode` flag decides the mode
    /// when given.
    pub fn ui_permission(
        &self,
        agent: &AgentDef,
    ) -> Result<(crate::AgentPermission, ConfirmationMode), HostError> {
        let own = self.mode_for(Some(agent))?;
        let chosen = self.config().ui.permissions.get(&agent.name).copied();
        let permission = chosen.unwrap_or(match own {
            ConfirmationMode::Yolo => crate::AgentPermission::Full,
            ConfirmationMode::Plan => crate::AgentPermission::Plan,
            _ => crate::AgentPermission::Sandbox,
        });
        let mode = self
            .mode_flag
            .or(chosen.map(crate::AgentPermission::mode))
            .unwrap_or(own);
        Ok((permission, mode))
    }

    /// Who is asked under `mode` (rule 3 of the [type docs](Self)):
    /// `interactive` is the front end's own approver, if it has one.
    pub fn approver(
        &self,
        mode: ConfirmationMode,
        interactive: Option<Arc<dyn Approver>>,
    ) -> Arc<dyn Approver> {
        let nobody = mode == ConfirmationMode::DontAsk
            || (mode == ConfirmationMode::Yolo && !self.rules.contains(RuleDecision::Ask));
        match interactive {
            Some(approver) if !nobody => approver,
            _ => Arc::new(HeadlessApprover::default()),
        }
    }
}

/// The sandbox of a configuration, before it is built.
fn sandbox_builder(
    workspace: &Path,
    loaded: &Loaded,
    policy_files: &[String],
) -> Result<toolgate_sandbox::SandboxBuilder, HostError> {
    let config = &loaded.config;
    let commands = &config.commands;
    // The variables toolgate reads keys from never reach a process unless
    // listed by exact name in `commands.env.inherit`.
    let secret_names: Vec<String> = config
        .llm
        .api_key_env
        .iter()
        .chain(
            config
                .mcp
                .servers
                .values()
                .filter_map(|s| s.token_env.as_ref()),
        )
        .cloned()
        .collect();
    let env = EnvPolicy::new()
        .inherit(commands.env.inherit.iter().cloned())
        .set(commands.env.set.clone())
        .secret_names(secret_names);
    let sensitive: Vec<String> = if config.workspace.allow_sensitive {
        Vec::new()
    } else {
        toolgate_core::DEFAULT_SENSITIVE_PATTERNS
            .iter()
            .map(|p| (*p).to_owned())
            .chain(config.guardrails.sensitive_files.iter().cloned())
            .collect()
    };
    let mut protected = config.guardrails.protected_files.clone();
    // toolgate's own files inside the workspace are policy files too.
    protected.extend(policy_files.iter().cloned());
    let mut builder = Sandbox::builder(workspace)
        .mode(match commands.sandbox {
            SandboxSetting::Full => SandboxMode::Full,
            SandboxSetting::Landlock => SandboxMode::LandlockOnly,
            SandboxSetting::None => SandboxMode::Off,
        })
        .network(commands.network != NetworkSetting::Deny)
        .sensitive_patterns(sensitive)
        .protected_patterns(protected)
        .readable(commands.readable.iter().map(PathBuf::from))
        .writable(commands.writable.iter().map(PathBuf::from))
        .deny_read(commands.deny_read.iter().map(PathBuf::from))
        .env_policy(env)
        .limits(commands.limits.to_limits().map_err(HostError::Limits)?);
    if let Some(home) = &commands.home_readable {
        builder = builder.home_readable(home.iter().cloned());
    }
    if let NetworkSetting::Domains(lists) = &commands.network {
        match lists.policy() {
            Ok(policy) => builder = builder.network_policy(policy),
            // The lists were read when the configuration was loaded; should
            // one still not read, fail closed.
            Err(error) => {
                tracing::warn!("commands.network: {error}; commands get no network");
                builder = builder.network(false);
            }
        }
    }
    Ok(builder)
}

/// `path` with symlinks resolved as far as it exists (the store's
/// directory may not exist yet).
fn canonical_lenient(path: &Path) -> PathBuf {
    if let Ok(path) = std::fs::canonicalize(path) {
        return path;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if parent != path => canonical_lenient(parent).join(name),
        _ => path.to_owned(),
    }
}
