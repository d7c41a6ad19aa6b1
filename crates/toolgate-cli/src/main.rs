//! The `toolgate` binary: the only part of toolgate that prints.
//!
//! stdout carries data only (results, JSON); diagnostics, prompts and errors
//! go to stderr. Exit codes (DESIGN.md §13): 0 success, 1 tool failure,
//! 2 usage or configuration error, 130 aborted by the user; `run` and
//! `sessions` follow DESIGN.md §11 (2 partial, 3 configuration error,
//! 4 authentication error, 5 timeout).

use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, anyhow};
use clap::Parser;
use toolgate_core::{Registry, SchemaFormat, ToolCall, ToolResult, Workspace};
use toolgate_engine::{Approver, AuditLog, Decision, ExecutionEngine, HeadlessApprover};
use toolgate_policy::{CommandPolicy, ConfirmationMode, ConfirmationPolicy};
use toolgate_sandbox::{EnvPolicy, Sandbox, SandboxMode};
use toolgate_tools::BuiltinOptions;
use toolgate_tools::command::{CommandOptions, ProcessLimits};

use crate::approver::PromptApprover;
use crate::cli::{
    CallArgs, Cli, Command, ConfigCommand, GlobalArgs, HooksCommand, McpCommand, ToolsCommand,
};
use crate::config::{ConfigError, Loaded, NetworkSetting, Overrides, SandboxSetting};
use crate::render::{CliError, Exit};
use crate::trust_cmd::Ask;

mod approver;
mod cli;
mod config;
mod env_vars;
mod hooks_cmd;
mod mcp_cmd;
mod render;
mod run_cmd;
mod sessions_cmd;
mod trust;
mod trust_cmd;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // clap prints help and version to stdout, usage errors to stderr.
            let _ = error.print();
            return if error.use_stderr() {
                Exit::Usage.into()
            } else {
                Exit::Success.into()
            };
        }
    };
    init_tracing(cli.global.verbose);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            render::error(&CliError::new(
                Exit::Failure,
                anyhow!(error).context("could not start the async runtime"),
            ));
            return Exit::Failure.into();
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(exit) => exit.into(),
        Err(error) => {
            render::error(&error);
            error.exit.into()
        }
    }
}

fn init_tracing(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let filter = std::env::var(env_vars::TOOLGATE_LOG)
        .or_else(|_| std::env::var(env_vars::RUST_LOG))
        .ok()
        .and_then(|spec| EnvFilter::try_new(spec).ok())
        .unwrap_or_else(|| {
            EnvFilter::new(match verbose {
                // rmcp warns about every error it answers (a client's
                // probe of a newer protocol, say); those are not ours.
                0 => "warn,rmcp=error",
                1 => "info",
                2 => "debug",
                _ => "trace",
            })
        });
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(io::IsTerminal::is_terminal(&io::stderr()))
        .try_init();
}

async fn run(cli: Cli) -> Result<Exit, CliError> {
    if let Command::Trust(args) = &cli.command {
        // It reads the workspace file itself and applies nothing.
        return trust_cmd::trust(&cli.global, args);
    }
    let agent_command = matches!(cli.command, Command::Run(_) | Command::Sessions(_));
    let setup = Setup::new(&cli.global, ask_for(&cli.command)).map_err(|mut e| {
        // DESIGN.md §11: the agent commands exit 3 on configuration errors.
        if agent_command && e.exit == Exit::Usage {
            e.exit = Exit::Config;
        }
        e
    })?;
    match cli.command {
        Command::Run(args) => run_cmd::run(&setup, args).await,
        Command::Sessions(cmd) => sessions_cmd::sessions(&setup, cmd).await,
        Command::Tools(ToolsCommand::List { agent }) => tools_list(&setup, agent.as_deref()).await,
        Command::Call(args) => call(&setup, args).await,
        Command::Mcp(McpCommand::Serve(args)) => mcp_cmd::serve(&setup, args).await,
        Command::Mcp(McpCommand::List) => mcp_cmd::list(&setup).await,
        Command::Config(ConfigCommand::Check) => config_check(&setup),
        Command::Classify { command } => classify(&setup, &command),
        Command::Hooks(HooksCommand::Test(args)) => hooks_cmd::hooks_test(&setup, args).await,
        // Returned above, before any configuration was loaded.
        Command::Trust(args) => trust_cmd::trust(&cli.global, &args),
    }
}

/// Whether a command may ask on the terminal about an untrusted workspace
/// file: never where stdin carries data (a prompt would eat it), nor where
/// the command only inspects (it reports the ignored keys instead).
fn ask_for(command: &Command) -> Ask {
    match command {
        Command::Call(args) if args.args.as_deref() == Some("-") => Ask::Never,
        Command::Mcp(McpCommand::Serve(args)) if args.http.is_none() => Ask::Never,
        Command::Config(_) | Command::Classify { .. } | Command::Trust(_) => Ask::Never,
        _ => Ask::Terminal,
    }
}

/// The workspace directory, canonical: `dir`, or the current directory.
pub(crate) fn resolve_workspace(dir: Option<&PathBuf>) -> Result<PathBuf, CliError> {
    let workspace = match dir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| {
            CliError::usage(anyhow!(e).context("could not read the current directory"))
        })?,
    };
    let workspace = workspace.canonicalize().map_err(|e| {
        CliError::usage(anyhow!(e).context(format!(
            "the workspace {} cannot be used",
            workspace.display()
        )))
        .with_hint("pass an existing directory with --workspace")
    })?;
    if !workspace.is_dir() {
        return Err(CliError::usage(anyhow!(
            "the workspace {} is not a directory",
            workspace.display()
        )));
    }
    Ok(workspace)
}

/// What every subcommand starts from.
struct Setup {
    workspace: PathBuf,
    /// `--mode` as given on the command line (it beats an agent's mode).
    mode_flag: Option<ConfirmationMode>,
    pub(crate) loaded: Loaded,
    command_policy: Arc<CommandPolicy>,
    dry_run: bool,
    pub(crate) json: bool,
    /// The one sandbox every process of this run is started in, made on
    /// first use.
    sandbox: std::sync::OnceLock<Sandbox>,
}

impl Setup {
    fn new(global: &GlobalArgs, ask: Ask) -> Result<Self, CliError> {
        let workspace = resolve_workspace(global.workspace.as_ref())?;
        let env: Vec<(String, String)> = std::env::vars().collect();
        let commands = if global.no_commands {
            Some(false)
        } else if global.allow_commands {
            Some(true)
        } else {
            None
        };
        let overrides = Overrides {
            mode: global.mode,
            commands,
        };
        let force_trust = global.trust_workspace && !global.no_trust_workspace;
        let store = config::trust_store_path(&env);
        let loaded = config::load(
            &workspace,
            global.config.as_deref(),
            &env,
            &overrides,
            |project| trust_cmd::decide(project, force_trust, store.as_deref(), ask),
        )
        .map_err(|error| {
            if let Some(hint) = error
                .downcast_ref::<trust::TrustError>()
                .map(trust::TrustError::hint)
            {
                return CliError::usage(error).with_hint(hint);
            }
            let hint = error
                .downcast_ref::<ConfigError>()
                .and_then(|e| e.hint.clone());
            let mut error = CliError::usage(error.context("invalid configuration"));
            if let Some(hint) = hint {
                error = error.with_hint(hint);
            }
            error
        })?;
        if let Some(project) = &loaded.project {
            trust_cmd::warn_ignored(project, global, &workspace);
        }
        let command_policy = CommandPolicy::builder()
            .blocked_patterns(
                loaded
                    .config
                    .commands
                    .blocked_patterns
                    .iter()
                    .chain(&loaded.config.guardrails.blocked_commands)
                    .cloned(),
            )
            .build()
            .map_err(|e| {
                CliError::usage(anyhow!(e).context("invalid configuration")).with_hint(
                    "fix `commands.blocked_patterns` and `guardrails.blocked_commands`: each entry is a regular expression",
                )
            })?;
        Ok(Self {
            workspace,
            mode_flag: global.mode,
            loaded,
            command_policy: Arc::new(command_policy),
            dry_run: global.dry_run && !global.no_dry_run,
            json: global.json && !global.no_json,
            sandbox: std::sync::OnceLock::new(),
        })
    }

    /// The sandbox every process toolgate starts runs in: commands,
    /// background processes, hooks, quality gates, MCP servers.
    pub(crate) fn sandbox(&self) -> Result<Sandbox, CliError> {
        if let Some(sandbox) = self.sandbox.get() {
            return Ok(sandbox.clone());
        }
        let sandbox = build_sandbox(&self.workspace, &self.loaded).map_err(|e| {
            CliError::usage(anyhow!(e).context("the sandbox cannot be set up"))
                .with_hint("check `commands.readable`, `commands.writable` and the sensitive and protected patterns")
        })?;
        Ok(self.sandbox.get_or_init(|| sandbox).clone())
    }

    pub(crate) fn registry(&self) -> Result<Arc<Registry>, CliError> {
        let config = &self.loaded.config;
        let registry = Registry::new();
        let workspace = Workspace::builder(&self.workspace)
            .sensitive_patterns(
                toolgate_core::DEFAULT_SENSITIVE_PATTERNS
                    .iter()
                    .map(|p| (*p).to_owned())
                    .chain(config.guardrails.sensitive_files.iter().cloned()),
            )
            // toolgate's and git's own files, plus the configured ones: the
            // file tools refuse to change them even where the guardrails step
            // would not see it (a path through a symlink to a directory that
            // does not exist yet).
            .protected_patterns(
                toolgate_core::DEFAULT_PROTECTED_PATTERNS
                    .iter()
                    .map(|p| (*p).to_owned())
                    .chain(config.guardrails.protected_files.iter().cloned()),
            )
            .allow_sensitive(config.workspace.allow_sensitive)
            .build()
            .map_err(|e| {
                CliError::usage(anyhow!(e).context("the workspace cannot be used")).with_hint(
                    "fix `guardrails.sensitive_files` and `guardrails.protected_files`: each entry is a glob",
                )
            })?;
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
        let options = BuiltinOptions::default()
            .default_timezone(config.tools.datetime.timezone.clone())
            .max_file_size(config.workspace.max_file_size)
            .allow_delete(config.workspace.allow_delete)
            .commands(command_options)
            .command_policy(Arc::clone(&self.command_policy))
            .process_limits(limits)
            .sandbox(self.sandbox()?);
        for tool in toolgate_tools::builtin_tools(&workspace, &options) {
            let enabled = match tool.name() {
                "get_datetime" => config.tools.datetime.enabled,
                "echo" => config.tools.echo.enabled,
                _ => true,
            };
            if enabled {
                registry
                    .register_arc(tool)
                    .map_err(|e| CliError::new(Exit::Failure, anyhow!(e)))?;
            }
        }
        Ok(Arc::new(registry))
    }

    pub(crate) fn engine(
        &self,
        registry: Arc<Registry>,
        approver: Arc<dyn Approver>,
    ) -> Result<ExecutionEngine, CliError> {
        let gatekeepers = Gatekeepers {
            guardrails: Arc::new(hooks_cmd::guardrails(self)?),
            hooks: Arc::new(hooks_cmd::hooks(self, None)?),
        };
        self.engine_with(
            registry,
            approver,
            self.loaded.config.confirmation.mode,
            &gatekeepers,
        )
    }

    /// The engine with an explicit confirmation mode (an agent's own mode)
    /// and guardrails and hooks the caller keeps using (the agent loop's
    /// lifecycle events and quality gates).
    pub(crate) fn engine_with(
        &self,
        registry: Arc<Registry>,
        approver: Arc<dyn Approver>,
        mode: ConfirmationMode,
        gatekeepers: &Gatekeepers,
    ) -> Result<ExecutionEngine, CliError> {
        let config = &self.loaded.config;
        let hooks = Arc::clone(&gatekeepers.hooks);
        let mut builder = ExecutionEngine::builder(registry)
            .guardrails(Arc::clone(&gatekeepers.guardrails) as Arc<dyn toolgate_engine::Guardrails>)
            .pre_hooks(Arc::clone(&hooks) as Arc<dyn toolgate_engine::PreToolUse>)
            .post_hooks(hooks)
            .policy(ConfirmationPolicy::new(mode))
            .approver(approver)
            .dry_run(self.dry_run)
            .default_timeout(Duration::from_secs(config.tools.timeout.max(1)));
        if let Some(path) = &config.audit.path {
            let audit = AuditLog::open(path).map_err(|e| {
                CliError::usage(
                    anyhow!(e).context(format!("could not open the audit file {}", path.display())),
                )
                .with_hint("fix `audit.path` in the configuration, or remove it")
            })?;
            builder = builder.audit(audit);
        }
        Ok(builder.build())
    }
}

/// The sandbox of a configuration (see [`Setup::sandbox`]).
fn build_sandbox(
    workspace: &std::path::Path,
    loaded: &Loaded,
) -> Result<Sandbox, toolgate_sandbox::SandboxError> {
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
    // A configuration file given with --config inside the workspace is a
    // policy file too.
    let project_file =
        std::fs::canonicalize(&loaded.project_file).unwrap_or_else(|_| loaded.project_file.clone());
    if let Ok(rel) = project_file.strip_prefix(workspace)
        && !rel.as_os_str().is_empty()
    {
        protected.push(format!("/{}", glob_escape(&rel.to_string_lossy())));
    }
    let mut builder = Sandbox::builder(workspace)
        .mode(match commands.sandbox {
            SandboxSetting::Full => SandboxMode::Full,
            SandboxSetting::Landlock => SandboxMode::LandlockOnly,
            SandboxSetting::None => SandboxMode::Off,
        })
        .network(commands.network == NetworkSetting::Allow)
        .sensitive_patterns(sensitive)
        .protected_patterns(protected)
        .readable(commands.readable.iter().map(PathBuf::from))
        .writable(commands.writable.iter().map(PathBuf::from))
        .deny_read(commands.deny_read.iter().map(PathBuf::from))
        .env_policy(env);
    if let Some(home) = &commands.home_readable {
        builder = builder.home_readable(home.iter().cloned());
    }
    builder.build()
}

/// `text` with glob metacharacters escaped, to match it literally.
fn glob_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The guardrails and hooks of one gate.
pub(crate) struct Gatekeepers {
    pub(crate) guardrails: Arc<toolgate_engine::GuardrailsEngine>,
    pub(crate) hooks: Arc<toolgate_engine::HookExecutor>,
}

async fn tools_list(setup: &Setup, agent: Option<&str>) -> Result<Exit, CliError> {
    let (registry, mcp) = setup.registry_with_mcp().await?;
    mcp.shutdown().await;
    let mut tools = Vec::new();
    let def =
        run_cmd::agent_def(setup, agent.unwrap_or("build"))?.with_extra_tools(mcp.tool_names());
    for entry in registry.list() {
        if def.allows(&registry, entry.name()) {
            tools.push(entry);
        }
    }
    if setup.json {
        let schemas: Vec<_> = tools
            .iter()
            .map(|t| t.spec().export(SchemaFormat::OpenAi))
            .collect();
        return out(&json_text(&schemas)?);
    }
    let width = tools.iter().map(|t| t.name().len()).max().unwrap_or(0);
    let mut text = String::new();
    for tool in &tools {
        let _ = writeln!(
            text,
            "{:width$}  {}",
            tool.name(),
            one_line(&tool.spec().description)
        );
    }
    out(&text)
}

/// The first sentence of a description.
fn one_line(description: &str) -> &str {
    let first = description.lines().next().unwrap_or_default();
    match first.find(". ") {
        Some(at) => &first[..=at],
        None => first,
    }
}

async fn call(setup: &Setup, args: CallArgs) -> Result<Exit, CliError> {
    let from_stdin = args.args.as_deref() == Some("-");
    let text = match args.args.as_deref() {
        None => "{}".to_owned(),
        Some("-") => {
            let mut text = String::new();
            io::stdin().read_to_string(&mut text).map_err(|e| {
                CliError::usage(anyhow!(e).context("could not read the arguments from stdin"))
            })?;
            text
        }
        Some(text) => text.to_owned(),
    };
    let arguments: serde_json::Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(error) => {
            let result = ToolResult::failure(format!(
                "invalid JSON arguments: {error}; pass a JSON object such as '{{\"path\": \"src/main.rs\"}}'"
            ));
            return print_result(setup, &result, Decision::InvalidArguments);
        }
    };
    let (registry, mcp) = setup.registry_with_mcp().await?;
    let approver: Arc<dyn Approver> = match (setup.loaded.config.confirmation.mode, from_stdin) {
        (ConfirmationMode::Yolo, _) | (_, true) => Arc::new(HeadlessApprover::default()),
        _ => match PromptApprover::terminal() {
            Some(prompt) => Arc::new(prompt),
            None => Arc::new(HeadlessApprover::default()),
        },
    };
    let engine = match setup.engine(registry, approver) {
        Ok(engine) => engine,
        Err(error) => {
            mcp.shutdown().await;
            return Err(error);
        }
    };
    let run = engine
        .execute(ToolCall::new("cli-1", args.tool, arguments))
        .await;
    mcp.shutdown().await;
    print_result(setup, &run.result, run.decision)
}

fn print_result(setup: &Setup, result: &ToolResult, decision: Decision) -> Result<Exit, CliError> {
    let exit = if decision == Decision::Aborted {
        Exit::Aborted
    } else if result.success {
        Exit::Success
    } else {
        Exit::Failure
    };
    if setup.json {
        out(&json_text(result)?)?;
        return Ok(exit);
    }
    if !result.output.is_empty() {
        let mut text = result.output.clone();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        out(&text)?;
    }
    if let Some(error) = &result.error {
        render::tool_error(error);
    }
    Ok(exit)
}

/// `toolgate classify`: the verdict on a command line, as `run_command`
/// would judge it with this configuration.
fn classify(setup: &Setup, command: &str) -> Result<Exit, CliError> {
    let verdict = setup.command_policy.classify(command);
    if setup.json {
        let value = serde_json::json!({"command": command, "class": verdict.label(), "reason": verdict.reason()});
        return out(&json_text(&value)?);
    }
    out(&format!("{}\n", verdict.label()))
}

fn config_check(setup: &Setup) -> Result<Exit, CliError> {
    let config = &setup.loaded.config;
    let text = if setup.json {
        // The configuration's own keys, plus `trust`: how the workspace file
        // was applied (null without one). Not a configuration key.
        let mut value =
            serde_json::to_value(config).map_err(|e| CliError::new(Exit::Failure, anyhow!(e)))?;
        if let Some(object) = value.as_object_mut() {
            let trust = setup.loaded.project.as_ref().map(|p| {
                serde_json::json!({
                    "file": p.file,
                    "sha256": p.sha256,
                    "state": p.trust,
                    "trust_only_keys": p.trust_only_keys,
                    "ignored": p.ignored(),
                })
            });
            object.insert("trust".to_owned(), trust.into());
        }
        json_text(&value)?
    } else {
        serde_yaml_ng::to_string(config)
            .context("could not print the configuration")
            .map_err(|e| CliError::new(Exit::Failure, e))?
    };
    let project = setup.loaded.project.as_ref();
    let sources: Vec<String> = setup
        .loaded
        .sources
        .iter()
        .enumerate()
        .map(|(i, source)| match project {
            // The workspace file is the first file layer when there is one.
            Some(p) if i == 0 && !p.ignored().is_empty() => {
                format!("{source} (not trusted: {} ignored)", p.ignored().join(", "))
            }
            _ => source.to_string(),
        })
        .collect();
    render::note(&format!(
        "configuration is valid (workspace {}; layers: defaults{}{})",
        setup.workspace.display(),
        if sources.is_empty() { "" } else { ", " },
        sources.join(", ")
    ));
    // What the kernel enforces here, for every process toolgate starts.
    render::note(&format!("sandbox: {}", setup.sandbox()?.status()));
    out(&text)
}

pub(crate) fn json_text(value: &impl serde::Serialize) -> Result<String, CliError> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| CliError::new(Exit::Failure, anyhow!(e)))?;
    text.push('\n');
    Ok(text)
}

/// Writes data to stdout. A closed pipe (`toolgate … | head`) is not an error.
pub(crate) fn out(text: &str) -> Result<Exit, CliError> {
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Ok(Exit::Success),
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(Exit::Success),
        Err(error) => Err(CliError::new(
            Exit::Failure,
            anyhow!(error).context("could not write to stdout"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_commands_may_ask_for_trust() {
        let cases: &[(&[&str], Ask)] = &[
            (&["call", "echo", "{}"], Ask::Terminal),
            (&["call", "echo"], Ask::Terminal),
            (&["call", "echo", "-"], Ask::Never),
            (&["mcp", "serve"], Ask::Never),
            (&["mcp", "serve", "--http", "127.0.0.1:1"], Ask::Terminal),
            (&["mcp", "list"], Ask::Terminal),
            (&["tools", "list"], Ask::Terminal),
            (&["run", "task"], Ask::Terminal),
            (&["sessions", "list"], Ask::Terminal),
            (&["hooks", "test", "session_start"], Ask::Terminal),
            (&["config", "check"], Ask::Never),
            (&["classify", "ls"], Ask::Never),
            (&["trust"], Ask::Never),
        ];
        for (args, expected) in cases {
            let cli = Cli::try_parse_from(std::iter::once(&"toolgate").chain(*args)).unwrap();
            assert_eq!(ask_for(&cli.command), *expected, "{args:?}");
        }
    }

    #[test]
    fn one_line_descriptions() {
        assert_eq!(one_line("Reads a file. Then more."), "Reads a file.");
        assert_eq!(one_line("No period\nsecond line"), "No period");
        assert_eq!(one_line("v1.2 is fine. Rest"), "v1.2 is fine.");
    }
}
