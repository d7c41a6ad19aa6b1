//! The `toolgate` binary: the only part of toolgate that prints.
//!
//! stdout carries data only (results, JSON); diagnostics, prompts and errors
//! go to stderr. Exit codes (DESIGN.md §13): 0 success, 1 tool failure,
//! 2 usage or configuration error, 130 aborted by the user; `run` and
//! `sessions` follow DESIGN.md §11 (2 partial, 3 configuration error,
//! 4 authentication error, 5 timeout, 6 blocked: calls refused for lack of
//! an approver).

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::anyhow;
use clap::Parser;
use toolgate_engine::Approver;
use toolgate_host::{
    Gate, GateTools, Host, HostBuilder, HostError, HostPart, Overrides, TrustPolicy, env_vars,
};
use toolgate_mcp::ServerState;

use crate::cli::{
    Cli, Command, ConfigCommand, GlobalArgs, HooksCommand, McpCommand, PromptCommand, ProviderArgs,
    StoreCommand, ToolsCommand,
};
use crate::render::{CliError, Exit};
use crate::trust_cmd::Ask;

use call_cmd::call;
use classify_cmd::{absorb_trailing_flags, classify};
use config_cmd::config_check;
use store_cmd::{store_migrate, store_recover};
use tools_cmd::{prompt_show, tools_list, tools_review};

mod approver;
mod call_cmd;
mod classify_cmd;
mod cli;
mod config_cmd;
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
mod store_cmd;
mod tools_cmd;
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
        return rules_cmd::rules(&cli.global, cmd).await;
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
        Command::Rules(cmd) => rules_cmd::rules(&cli.global, &cmd).await,
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
}
