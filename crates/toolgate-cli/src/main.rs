//! The `toolgate` binary: the only part of toolgate that prints.
//!
//! stdout carries data only (results, JSON); diagnostics, prompts and errors
//! go to stderr. Exit codes (DESIGN.md §13): 0 success, 1 tool failure,
//! 2 usage or configuration error, 130 aborted by the user; `run` and
//! `sessions` follow DESIGN.md §11 (2 partial, 3 configuration error,
//! 4 authentication error, 5 timeout, 6 blocked: calls refused for lack of
//! an approver).

use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, anyhow};
use clap::Parser;
use toolgate_core::{
    CommandClass, RegisteredTool, SchemaFormat, Sensitivity, ToolCall, ToolResult,
};
use toolgate_engine::{Approver, Decision};
use toolgate_host::{
    Gate, GateTools, Host, HostBuilder, HostError, HostPart, Overrides, TrustPolicy, env_vars,
};
use toolgate_mcp::ServerState;
use toolgate_policy::ConfirmationMode;

use crate::approver::PromptApprover;
use crate::cli::{
    CallArgs, Cli, Command, ConfigCommand, GlobalArgs, HooksCommand, McpCommand, PromptCommand,
    ProviderArgs, StoreCommand, ToolsCommand,
};
use crate::render::{CliError, Exit};
use crate::trust_cmd::Ask;

mod approver;
mod cli;
mod doctor_cmd;
mod hooks_cmd;
mod init_cmd;
mod mcp_cmd;
mod render;
mod rewind_cmd;
mod rules_cmd;
mod run_cmd;
mod schedule_cmd;
mod sessions_cmd;
mod skills_cmd;
mod trust_cmd;
mod ui_cmd;

fn main() -> ExitCode {
    render::ColorChoice::from_args(std::env::args_os()).install();
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
    init_tracing(cli.global.verbose, cli.global.log_format);
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

fn init_tracing(verbose: u8, format: cli::LogFormat) {
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
    // Log lines quote servers, models and tools: each one goes through the
    // same cleaning as every other line for people (secrets redacted,
    // control characters neutralised), so the subscriber writes no colour
    // of its own either.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| LogLine(Vec::new()))
        .with_ansi(false);
    let _ = match format {
        cli::LogFormat::Text => builder.try_init(),
        // One JSON object per line, the fields of the spans an event is in
        // (a call's `client` and `call_id`) flattened beside its own: what
        // a log collector indexes. The cleaning of [`LogLine`] keeps it JSON
        // (it rewrites text inside strings only).
        cli::LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(true)
            .try_init(),
    };
}

/// One log event, written to stderr cleaned ([`render::clean`]) when the
/// subscriber is done with it.
struct LogLine(Vec<u8>);

impl Write for LogLine {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for LogLine {
    fn drop(&mut self) {
        if self.0.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(&self.0);
        let _ = io::stderr()
            .lock()
            .write_all(render::clean(&text).as_bytes());
    }
}

async fn run(mut cli: Cli) -> Result<Exit, CliError> {
    if let Command::Classify { command } = &mut cli.command {
        absorb_trailing_flags(command, &mut cli.global);
    }
    if let Command::Trust(args) = &cli.command {
        // It reads the workspace file itself and applies nothing.
        return trust_cmd::trust(&cli.global, args);
    }
    if let Command::Init(args) = &cli.command {
        // It writes the user's file first, then loads the configuration.
        return init_cmd::init(&cli.global, args).await;
    }
    if let Command::Rules(cmd) = &cli.command {
        // It edits the user's file only, and must work when a bad rule
        // keeps the configuration from loading.
        return rules_cmd::rules(&cli.global, cmd);
    }
    let agent_command = matches!(
        cli.command,
        Command::Run(_) | Command::Sessions(_) | Command::Schedule(_)
    );
    if let Command::Doctor(args) = &cli.command {
        if args.apparmor_profile {
            // Needs no configuration: it names this binary only.
            return doctor_cmd::apparmor_profile();
        }
        // A configuration that does not load is the first failed check.
        return match Setup::new(
            &cli.global,
            &ProviderArgs::default(),
            ask_for(&cli.command),
            &[],
        ) {
            Ok(setup) => doctor_cmd::doctor(&setup, args).await,
            Err(error) => Ok(doctor_cmd::config_failed(
                &error,
                cli.global.json && !cli.global.no_json,
            )),
        };
    }
    let setup = Setup::new(
        &cli.global,
        &provider_args(&cli.command),
        ask_for(&cli.command),
        parts_for(&cli.command),
    )
    .map_err(|mut e| {
        // DESIGN.md §11: the agent commands exit 3 on configuration errors.
        if agent_command && e.exit == Exit::Usage {
            e.exit = Exit::Config;
        }
        e
    })?;
    match cli.command {
        Command::Run(args) => run_cmd::run(&setup, args).await,
        Command::Sessions(cmd) => sessions_cmd::sessions(&setup, cmd).await,
        Command::Rewind(args) => rewind_cmd::rewind(&setup, &args).await,
        Command::Checkpoints(args) => rewind_cmd::checkpoints(&setup, &args).await,
        Command::Tools(ToolsCommand::List { agent }) => tools_list(&setup, agent.as_deref()).await,
        Command::Tools(review) => tools_review(&setup, review).await,
        Command::Call(args) => call(&setup, args).await,
        Command::Mcp(McpCommand::Serve(args)) => mcp_cmd::serve(&setup, args).await,
        Command::Mcp(McpCommand::List) => mcp_cmd::list(&setup).await,
        Command::Config(ConfigCommand::Check) => config_check(&setup),
        Command::Classify { command } => classify(&setup, &command).await,
        Command::Hooks(HooksCommand::Test(args)) => hooks_cmd::hooks_test(&setup, args).await,
        // Returned above, before any configuration was loaded.
        Command::Init(args) => init_cmd::init(&cli.global, &args).await,
        Command::Trust(args) => trust_cmd::trust(&cli.global, &args),
        Command::Rules(cmd) => rules_cmd::rules(&cli.global, &cmd),
        Command::Doctor(args) => doctor_cmd::doctor(&setup, &args).await,
        Command::Prompt(PromptCommand::Show { agent }) => prompt_show(&setup, &agent).await,
        Command::Schedule(cmd) => schedule_cmd::schedule(&setup, cmd).await,
        Command::Skills(cmd) => skills_cmd::skills(&setup, cmd).await,
        Command::Store(StoreCommand::Recover) => store_recover(&setup),
        Command::Store(StoreCommand::Migrate) => store_migrate(&setup).await,
        Command::Ui(args) => ui_cmd::ui(&setup, &cli.global, args).await,
    }
}

/// `--provider` and `--api-key-env` of the commands that take them.
fn provider_args(command: &Command) -> ProviderArgs {
    match command {
        Command::Run(args) => args.llm.clone(),
        Command::Ui(args) => args.llm.clone(),
        _ => ProviderArgs::default(),
    }
}

/// Whether a command may ask on the terminal about an untrusted workspace
/// file: never where stdin carries data (a prompt would eat it), nor where
/// the command only inspects (it reports the ignored keys instead).
fn ask_for(command: &Command) -> Ask {
    match command {
        Command::Call(args) if args.args.as_deref() == Some("-") => Ask::Never,
        Command::Mcp(McpCommand::Serve(args)) if args.http.is_none() => Ask::Never,
        Command::Config(_)
        | Command::Classify { .. }
        | Command::Trust(_)
        | Command::Init(_)
        | Command::Rules(_)
        | Command::Doctor(_)
        | Command::Skills(_)
        | Command::Store(_) => Ask::Never,
        _ => Ask::Terminal,
    }
}

/// The parts of the host a command asks for at load, checked there:
/// `call` runs one call through one gate, which always holds the workspace
/// view and the sandbox. The other commands build what they use on first
/// use (`tools list` needs the registry's specs only: no engine, audit or
/// store).
fn parts_for(command: &Command) -> &'static [HostPart] {
    match command {
        Command::Call(_) => &[HostPart::WorkspaceView, HostPart::Sandbox],
        _ => &[],
    }
}

/// Whether `--trust-workspace` (or its variable) trusts the workspace file
/// for this run.
fn forced_trust(global: &GlobalArgs) -> bool {
    global.trust_workspace && !global.no_trust_workspace
}

/// The host of the global flags, before it is loaded.
pub(crate) fn host_builder(
    global: &GlobalArgs,
    llm: &ProviderArgs,
    trust: TrustPolicy,
) -> Result<HostBuilder, HostError> {
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
        provider: llm.provider,
        api_key_env: llm.api_key_env.clone(),
    };
    Ok(Host::builder()
        .workspace(toolgate_host::resolve_workspace(
            global.workspace.as_deref(),
        )?)
        .config_file(global.config.clone())
        .overrides(overrides)
        .dry_run(global.dry_run && !global.no_dry_run)
        .trust(trust))
}

/// Loads the host again as the global flags say, never asking about
/// trust (the first load asked, and a yes is in the trust store): the web
/// UI takes a fresh host for each run, so rules and permissions changed
/// since it started apply.
pub(crate) fn host_factory(global: &GlobalArgs, llm: &ProviderArgs) -> toolgate_ui::HostFactory {
    let global = global.clone();
    let llm = llm.clone();
    Arc::new(move || {
        let trust = if forced_trust(&global) {
            TrustPolicy::ThisRun
        } else {
            TrustPolicy::StoreOnly
        };
        host_builder(&global, &llm, trust)?.load()
    })
}

/// What every subcommand starts from: the host (configuration, trust,
/// sandbox, and the one builder of gates) and how to print.
pub(crate) struct Setup {
    pub(crate) host: Arc<Host>,
    pub(crate) json: bool,
}

impl Setup {
    /// The host of the global flags, with `parts` built and checked at
    /// load ([`parts_for`]).
    pub(crate) fn new(
        global: &GlobalArgs,
        llm: &ProviderArgs,
        ask: Ask,
        parts: &[HostPart],
    ) -> Result<Self, CliError> {
        let trust = if forced_trust(global) {
            TrustPolicy::ThisRun
        } else {
            trust_cmd::policy(ask)
        };
        let host = host_builder(global, llm, trust)?
            .parts(parts.iter().copied())
            .load()?;
        if let Some(project) = &host.loaded().project {
            trust_cmd::warn_ignored(project, global, host.workspace());
        }
        if let Some(import) = &host.loaded().claude {
            trust_cmd::warn_claude(import, global, host.workspace());
        }
        Ok(Self {
            host: Arc::new(host),
            json: global.json && !global.no_json,
        })
    }

    /// A gate for a one-off front end (`call`, `tools list`, `mcp serve`):
    /// the configured mode, `interactive` asked unless the mode is yolo.
    pub(crate) async fn gate(
        &self,
        interactive: Option<Arc<dyn Approver>>,
    ) -> Result<Gate, CliError> {
        let gate = self.host.gate().interactive(interactive).build().await?;
        Ok(warn_failed_servers_of(gate))
    }

    /// The tools agents are offered, to show them (`tools list`, `prompt
    /// show`): the delegation tools included (they run only inside
    /// `toolgate run`); no gate, since nothing is called.
    pub(crate) async fn agent_tools(&self) -> Result<GateTools, CliError> {
        let tools = self.host.gate().delegation(true).tools().await?;
        warn_failed_servers(&tools.mcp_statuses);
        Ok(tools)
    }
}

/// `gate`, after a warning for each MCP server that failed to start.
fn warn_failed_servers_of(gate: Gate) -> Gate {
    warn_failed_servers(&gate.mcp_statuses);
    gate
}

/// A warning for each MCP server that failed to start.
fn warn_failed_servers(statuses: &[toolgate_mcp::ServerStatus]) {
    for status in statuses {
        if let ServerState::Failed(reason) = &status.state {
            render::note(&format!(
                "warning: MCP server `{}` skipped: {reason}",
                status.name
            ));
        }
    }
}

/// The workspace directory, canonical: `dir`, or the current directory.
pub(crate) fn resolve_workspace(dir: Option<&std::path::Path>) -> Result<PathBuf, CliError> {
    Ok(toolgate_host::resolve_workspace(dir)?)
}

async fn tools_list(setup: &Setup, agent: Option<&str>) -> Result<Exit, CliError> {
    let gate = setup.agent_tools().await?;
    gate.shutdown().await;
    let registry = &gate.registry;
    let mut tools = Vec::new();
    let def = setup
        .host
        .agent(agent.unwrap_or("build"))?
        .with_extra_tools(gate.extra_tool_names());
    for entry in registry.list() {
        if def.allows(registry, entry.name()) {
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
    if tools.is_empty() {
        render::note(&format!(
            "no tools for agent `{}`: its `allowed_tools` and the `tools` section enable none",
            agent.unwrap_or("build")
        ));
        return Ok(Exit::Success);
    }
    let mode = setup.host.mode_for(Some(&def))?;
    let width = tools.iter().map(|t| t.name().len()).max().unwrap_or(0);
    let mut text = String::new();
    for tool in &tools {
        let spec = tool.spec();
        let _ = writeln!(
            text,
            "{:width$}  {:8}  {}",
            tool.name(),
            asks(mode, tool),
            one_line(&spec.description)
        );
    }
    show(&text)?;
    render::note(asks_legend(mode));
    Ok(Exit::Success)
}

/// Whether a tool's calls ask for approval in `mode`. Command tools (their
/// spec says every call runs a command) ask by the command's class
/// (`toolgate classify`); the others by their [`Sensitivity`]: read-only
/// never asks under `confirm-sensitive`, sensitive does. The sensitivity is
/// the tool's own (for an MCP tool, the one its server's trust gives, not
/// the server's hints); a tool whose sensitivity depends on its arguments
/// (`process`: looking does not ask) shows that of a call without them,
/// the sensitive one. Under `accept-edits` the file-writing tools (their
/// spec says `writes_files`) ask only outside the workspace; under
/// `dont-ask` what would ask is refused; under `plan` everything but
/// read-only tools and safe commands is refused. Rules (`toolgate rules`)
/// may still allow or ask more.
fn asks(mode: ConfirmationMode, tool: &RegisteredTool) -> &'static str {
    let annotations = &tool.spec().annotations;
    let sensitivity = if annotations.runs_commands {
        Sensitivity::Command(CommandClass::Dangerous)
    } else {
        tool.tool().sensitivity(&serde_json::json!({}))
    };
    match (mode, sensitivity) {
        // Plan mode runs what is read-only by declaration and refuses the
        // rest, rules or not: a tool that declares itself read-only (an MCP
        // tool by its trusted server's `readOnlyHint`), and safe commands.
        (ConfirmationMode::Plan, Sensitivity::ReadOnly) if annotations.read_only() => "never",
        (ConfirmationMode::Yolo, _)
        | (
            ConfirmationMode::ConfirmSensitive
            | ConfirmationMode::AcceptEdits
            | ConfirmationMode::DontAsk,
            Sensitivity::ReadOnly,
        ) => "never",
        (
            ConfirmationMode::ConfirmSensitive
            | ConfirmationMode::AcceptEdits
            | ConfirmationMode::DontAsk
            | ConfirmationMode::Plan,
            Sensitivity::Command(_),
        ) => "by class",
        (ConfirmationMode::AcceptEdits, _) if annotations.writes_files => "outside",
        (ConfirmationMode::DontAsk | ConfirmationMode::Plan, _) => "refused",
        (
            ConfirmationMode::ConfirmAll
            | ConfirmationMode::ConfirmSensitive
            | ConfirmationMode::AcceptEdits,
            _,
        ) => "asks",
    }
}

/// What the middle column of `tools list` means in `mode`.
fn asks_legend(mode: ConfirmationMode) -> &'static str {
    match mode {
        ConfirmationMode::Yolo => {
            "mode yolo: no call asks for approval (blocked commands and guardrails still apply)"
        }
        ConfirmationMode::ConfirmSensitive => {
            "mode confirm-sensitive: `asks` tools ask before their calls that change something; \
             `by class` ask unless the command is safe (`toolgate classify CMD`); \
             rules (`toolgate rules`) may allow or ask more"
        }
        ConfirmationMode::ConfirmAll => "mode confirm-all: every call asks for approval",
        ConfirmationMode::AcceptEdits => {
            "mode accept-edits: `outside` tools write files inside the workspace unasked and ask \
             for other calls (outside it, deleting, renaming); `asks` tools ask before their \
             calls that change something; `by class` ask unless the command is safe \
             (`toolgate classify CMD`); rules (`toolgate rules`) may allow or ask more"
        }
        ConfirmationMode::DontAsk => {
            "mode dont-ask: nothing asks; `refused` tools are refused unless a rule allows the \
             call (the refusal names it); `by class` run safe commands and refuse the others; \
             `toolgate rules add` allows more"
        }
        ConfirmationMode::Plan => {
            "mode plan: only read-only calls run; `refused` tools are refused whatever the rules \
             say, until the person approves the model's plan (`exit_plan_mode`); `by class` run \
             safe commands (read-only sandbox) and refuse the others"
        }
    }
}

/// `toolgate tools pending|approve|reject`: the review of dynamic tools.
async fn tools_review(setup: &Setup, cmd: ToolsCommand) -> Result<Exit, CliError> {
    use toolgate_host::dynamic::review;
    let store = setup.host.store()?;
    let failed = |e: toolgate_host::dynamic::DynamicError| {
        CliError::new(Exit::Failure, anyhow::Error::new(e))
    };
    let text = match cmd {
        ToolsCommand::Pending => {
            let pending = review::pending(store.as_ref()).await.map_err(failed)?;
            review::render_pending(&pending, setup.json)
        }
        ToolsCommand::Approve { id } => {
            let config = &setup.host.config().tools.dynamic;
            review::render_review(
                &review::approve(store.as_ref(), config, id)
                    .await
                    .map_err(failed)?,
            )
        }
        ToolsCommand::Reject { id } => {
            review::render_review(&review::reject(store.as_ref(), id).await.map_err(failed)?)
        }
        ToolsCommand::List { .. } => String::new(),
    };
    show(&text)
}

/// `toolgate prompt show`: the system prompt on stdout, its size on stderr.
async fn prompt_show(setup: &Setup, agent: &str) -> Result<Exit, CliError> {
    let gate = setup.agent_tools().await?;
    gate.shutdown().await;
    let def = setup
        .host
        .agent(agent)?
        .with_extra_tools(gate.extra_tool_names());
    let report = setup.host.prompt_report(&def, &gate.registry)?;
    if setup.json {
        return out(&json_text(&report)?);
    }
    render::note(&format!(
        "≈{} tokens of system prompt + ≈{} tokens of tool schemas ({} tools) = ≈{} tokens before the task",
        report.prompt_tokens,
        report.tools_tokens,
        report.tools.len(),
        report.prompt_tokens + report.tools_tokens
    ));
    show_data(&format!("{}\n", report.prompt))
}

/// The first sentence of a description's first line.
fn one_line(description: &str) -> &str {
    toolgate_core::first_sentence(description.lines().next().unwrap_or_default())
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
    // Arguments read from stdin leave no terminal to ask on.
    let interactive = if from_stdin {
        None
    } else {
        PromptApprover::terminal().map(|p| Arc::new(p) as Arc<dyn Approver>)
    };
    // Only the tool's own group is built when the catalog has it.
    let gate = setup
        .host
        .gate()
        .interactive(interactive)
        .for_tool(args.tool.clone())
        .build()
        .await?;
    let gate = warn_failed_servers_of(gate);
    let run = gate
        .engine
        .execute(ToolCall::new("cli-1", args.tool, arguments))
        .await;
    gate.shutdown().await;
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
        show_data(&text)?;
    }
    if let Some(error) = &result.error {
        render::tool_error(error);
    }
    Ok(exit)
}

/// `toolgate store recover`: a damaged store moved aside, at the person's
/// request, so that the next command starts a new one. A store that opens,
/// or fails for another reason, is left alone.
fn store_recover(setup: &Setup) -> Result<Exit, CliError> {
    if let Some(url) = &setup.host.config().store.url {
        return Err(CliError::new(
            Exit::Usage,
            anyhow!("`toolgate store recover` moves a damaged SQLite file aside; this workspace's store is the PostgreSQL database {url}"),
        )
        .with_hint("repair a PostgreSQL database with its own tools (pg_dump, pg_restore)"));
    }
    let path = setup.host.store_path()?;
    let Err(error) = toolgate_store::SqliteStore::open(&path) else {
        render::note(&format!(
            "the store {} opens and is not damaged: nothing to recover",
            path.display()
        ));
        return Ok(Exit::Success);
    };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if error.fault(dir) != toolgate_store::Fault::Damaged {
        return Err(toolgate_host::HostError::Store {
            path,
            source: error,
        }
        .into());
    }
    let aside = toolgate_store::move_aside(&path).map_err(|source| {
        CliError::from(toolgate_host::HostError::Store {
            path: path.clone(),
            source,
        })
    })?;
    render::note(&format!(
        "moved the damaged store {} to {}; the next command starts a new, empty store",
        path.display(),
        aside.display()
    ));
    Ok(Exit::Success)
}

/// `toolgate store migrate`: the `PostgreSQL` store's schema created or
/// brought up to this toolgate's version (idempotent; several workers
/// migrating at once run each migration once).
async fn store_migrate(setup: &Setup) -> Result<Exit, CliError> {
    let Some(options) = setup.host.postgres_options()? else {
        return Err(CliError::new(
            Exit::Usage,
            anyhow!(
                "`toolgate store migrate` upgrades a PostgreSQL store, and `store.url` is not set"
            ),
        )
        .with_hint(
            "the SQLite store upgrades itself when it opens; for PostgreSQL, set \
             `store.url: postgres://USER@HOST:PORT/DATABASE`",
        ));
    };
    let done = toolgate_store_postgres::PostgresStore::migrate(&options)
        .await
        .map_err(|source| toolgate_host::HostError::Store {
            path: PathBuf::from(options.display_url()),
            source,
        })?;
    let url = options.display_url();
    if setup.json {
        let value = serde_json::json!({
            "store": url,
            "from": done.from,
            "to": done.to,
        });
        return show_data(&json_text(&value)?);
    }
    if done.from == done.to {
        render::note(&format!(
            "the store {url} is at schema version {}: nothing to do",
            done.to
        ));
    } else {
        render::note(&format!(
            "migrated the store {url} from schema version {} to {}",
            done.from, done.to
        ));
    }
    Ok(Exit::Success)
}

/// `toolgate classify`: the verdict on a command line, as `run_command`
/// would judge it with this configuration.
/// Global switches written after `classify`'s words (`classify ls -la
/// --json`) are toolgate's, as after any other command, unless the words
/// came after `--` (`classify -- ls --json` classifies `ls --json`).
fn absorb_trailing_flags(words: &mut Vec<String>, global: &mut GlobalArgs) {
    if std::env::args_os().any(|a| a == "--") {
        return;
    }
    while words.len() > 1 {
        let Some(last) = words.last() else { break };
        let flag = match last.as_str() {
            "--json" => &mut global.json,
            "--no-json" => &mut global.no_json,
            "--dry-run" => &mut global.dry_run,
            "--no-dry-run" => &mut global.no_dry_run,
            "--allow-commands" => &mut global.allow_commands,
            "--no-commands" => &mut global.no_commands,
            "--trust-workspace" => &mut global.trust_workspace,
            "--no-trust-workspace" => &mut global.no_trust_workspace,
            _ => break,
        };
        *flag = true;
        words.pop();
    }
}

/// The words of `classify` as one command line: a single argument as it
/// is (`'ls -la'`), several joined with the shell quoting each needs.
fn command_line(words: &[String]) -> String {
    if let [one] = words {
        return one.clone();
    }
    let quoted: Vec<String> = words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect();
    quoted.join(" ")
}

async fn classify(setup: &Setup, words: &[String]) -> Result<Exit, CliError> {
    let command = command_line(words);
    let judged = setup.host.judge_command(&command).await?;
    let verdict = &judged.verdict;
    if setup.json {
        let value = serde_json::json!({
            "command": command,
            "class": judged.label(),
            "reason": judged.guardrail.as_deref().unwrap_or(verdict.reason()),
            "classifier": verdict,
            "guardrail": judged.guardrail,
        });
        return out(&json_text(&value)?);
    }
    let color = render::stdout_color();
    let label = judged.label();
    let mut text = render::paint(render::class_style(label), label, color);
    text.push('\n');
    out(&text)?;
    match &judged.guardrail {
        Some(reason) if !verdict.is_blocked() => render::note(&format!(
            "run_command would refuse it: guardrail: {reason} (the classifier alone says {}: {})",
            verdict.label(),
            verdict.reason()
        )),
        _ if !verdict.reason().is_empty() => render::note(verdict.reason()),
        _ => {}
    }
    Ok(Exit::Success)
}

fn config_check(setup: &Setup) -> Result<Exit, CliError> {
    let host = &setup.host;
    let config = host.config();
    let text = if setup.json {
        // The configuration's own keys, plus `trust`: how the workspace file
        // was applied (null without one). Not a configuration key.
        let mut value =
            serde_json::to_value(config).map_err(|e| CliError::new(Exit::Failure, anyhow!(e)))?;
        if let Some(object) = value.as_object_mut() {
            let trust = host.loaded().project.as_ref().map(|p| {
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
    let project = host.loaded().project.as_ref();
    let sources: Vec<String> = host
        .loaded()
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
        host.workspace().display(),
        if sources.is_empty() { "" } else { ", " },
        sources.join(", ")
    ));
    // What the kernel enforces here, for every process toolgate starts.
    let sandbox = host.sandbox()?;
    render::note(&format!("sandbox: {}", sandbox.status()));
    render::note(&format!("limits: {}", sandbox.status().limits_line()));
    // Where commands may connect (`commands.network`).
    render::note(&format!("network: {}", sandbox.network_status()));
    show(&text)
}

pub(crate) fn json_text(value: &impl serde::Serialize) -> Result<String, CliError> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| CliError::new(Exit::Failure, anyhow!(e)))?;
    text.push('\n');
    Ok(text)
}

/// Writes text for people to stdout, neutralised
/// ([`toolgate_core::neutralize`]): listings and reports hold names and
/// descriptions written by MCP servers, skills and models, which must not
/// reach a terminal as escape sequences, nor a file the person later `cat`s.
pub(crate) fn show(text: &str) -> Result<Exit, CliError> {
    out(&toolgate_core::neutralize(text))
}

/// Writes data to stdout: exactly into a pipe or a file (it is another
/// program's input), neutralised on a terminal (a person reads it there).
pub(crate) fn show_data(text: &str) -> Result<Exit, CliError> {
    if io::IsTerminal::is_terminal(&io::stdout()) {
        show(text)
    } else {
        out(text)
    }
}

/// Writes data to stdout exactly (JSON, and what `show` and `show_data`
/// prepared). A closed pipe (`toolgate … | head`) is not an error.
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

    /// Assembly is the host's: no command builds its own gate, registry,
    /// guardrails, hooks, sandbox or MCP client (DESIGN.md §2, STYLE 8c).
    #[test]
    fn no_front_end_assembles_its_own_engine() {
        let forbidden = [
            "ExecutionEngine::builder",
            "GuardrailsEngine::builder",
            "HookExecutor::builder",
            "Sandbox::builder",
            "McpManager::new",
            "Registry::new",
            "builtin_tools(",
            "AgentRunner::builder",
        ];
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut checked = 0;
        for entry in std::fs::read_dir(&src).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            // The test's own list of names is not a use.
            let text = text
                .split("fn no_front_end_assembles_its_own_engine")
                .next()
                .unwrap();
            for needle in forbidden {
                assert!(
                    !text.contains(needle),
                    "{} calls {needle}: get it from toolgate_host::Host",
                    path.display()
                );
            }
            checked += 1;
        }
        assert!(checked >= 8, "read the CLI's sources ({checked} files)");
    }

    #[test]
    fn one_line_descriptions() {
        assert_eq!(one_line("Reads a file. Then more."), "Reads a file.");
        assert_eq!(one_line("No period\nsecond line"), "No period");
        assert_eq!(one_line("v1.2 is fine. Rest"), "v1.2 is fine.");
    }
}
