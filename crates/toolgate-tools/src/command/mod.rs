//! Commands: `run_command` and `process` (seed 000 F13, seed 002 `exec`).
//!
//! **The classifier decides whether to ask; the kernel decides what a
//! process can do.** `run_command` has five layers (DESIGN.md §9):
//!
//! 1. the blocklist, refused in every mode, yolo included;
//! 2. classification `safe` / `dev` / `dangerous` on the parsed command
//!    and its `env` (`toolgate-policy`), which sets the call's sensitivity,
//!    so the gate asks for confirmation as seed 000's table says; with
//!    `allowed_only`, `dangerous` commands are refused outright;
//! 3. a timeout with stdin closed, output kept as head + tail, everything
//!    it started killed;
//! 4. `cwd` resolved through the [`Workspace`];
//! 5. the kernel sandbox (`toolgate-sandbox`): a `safe` command runs in the
//!    read-only profile (nothing writable, no network, no program but the
//!    ones it names), anything else in the standard profile (writes in the
//!    workspace, policy files read-only); secrets, the home directory and
//!    other processes are out of reach in both. Where the kernel cannot
//!    provide the full sandbox, no command counts as `safe`: each one asks.
//!
//! With `background: true` the command goes to the [`ProcessTable`] and the
//! `process` tool manages it.
//!
//! A call declares the command line it starts ([`Effect::Command`]), with
//! its `cwd` when that is not the workspace root; `process write` declares
//! the text it sends as a command (a background shell runs it as one).
//! Blocked and dangerous commands are declared too: refusing them is the
//! policy's job.

/// The system-prompt block of the `commands` group.
pub const INSTRUCTIONS: &str = "## Commands
run_command runs one shell line in the workspace, in a sandbox. Read-only commands run at once; \
others may need the user's approval. Prefer the file and search tools for reading and editing \
files. For servers and long jobs use run_command with background: true, then the process tool.";

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use toolgate_core::{
    CommandClass, CommandPlan, Compact, Effect, Effects, EffectsError, SandboxProfile, Sensitivity,
    ToolAnnotations, ToolContext, ToolResult, TypedTool, Workspace, error_chain,
};
use toolgate_policy::{CommandPolicy, Verdict, VerdictKind};
use toolgate_sandbox::{
    Capture, Finished, Level, Profile, RunOptions, Sandbox, Spawn, outcome, with_run_metadata,
};

use crate::effects::named;

pub use process::{ProcessLimits, ProcessTable, ProcessTool};

pub mod process;

/// How `run_command` runs commands.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CommandOptions {
    /// Refuse `dangerous` commands instead of asking (seed 000 `allowed_only`).
    pub allowed_only: bool,
    /// Lines of output kept per stream (head + tail).
    pub max_output_lines: usize,
    /// Refuse to run at all when the kernel cannot provide the full
    /// sandbox, instead of asking before every command.
    pub sandbox_required: bool,
}

impl Default for CommandOptions {
    fn default() -> Self {
        Self {
            allowed_only: false,
            max_output_lines: 200,
            sandbox_required: false,
        }
    }
}

impl CommandOptions {
    /// Refuse `dangerous` commands instead of asking. By default, off.
    #[must_use]
    pub fn allowed_only(mut self, yes: bool) -> Self {
        self.allowed_only = yes;
        self
    }

    /// Lines of output kept per stream, half from the start and half from
    /// the end. By default, 200.
    #[must_use]
    pub fn max_output_lines(mut self, lines: usize) -> Self {
        self.max_output_lines = lines;
        self
    }

    /// Refuse to run when the full sandbox is unavailable. By default, off:
    /// every command then needs confirmation, and the missing pieces are
    /// said once.
    #[must_use]
    pub fn sandbox_required(mut self, yes: bool) -> Self {
        self.sandbox_required = yes;
        self
    }
}

/// Arguments of `run_command`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCommandArgs {
    /// The command line.
    pub command: String,
    /// Working directory, relative to the workspace.
    pub cwd: Option<String>,
    /// Seconds before it is killed.
    #[serde(default = "default_timeout")]
    #[schemars(range(min = 1, max = 600))]
    pub timeout: u64,
    /// Extra environment variables.
    pub env: Option<BTreeMap<String, String>>,
    /// Run in the background (see `process`).
    #[serde(default)]
    pub background: bool,
}

fn default_timeout() -> u64 {
    30
}

/// The built-in tools every call of which runs a command line it declares
/// (their [`TypedTool::RUNS_COMMANDS`]): what confirmation rules must know
/// before any tool is built. The invariant tests hold it to the specs.
pub const COMMAND_LINE_TOOLS: &[&str] = &[<RunCommand as TypedTool>::NAME];

/// `run_command`: runs a shell command through the five layers.
#[derive(Debug)]
pub struct RunCommand {
    workspace: Workspace,
    policy: Arc<CommandPolicy>,
    options: CommandOptions,
    table: Arc<ProcessTable>,
    sandbox: Sandbox,
    warned: AtomicBool,
}

impl RunCommand {
    /// A `run_command` over `workspace`, classifying with `policy`, running
    /// every command in `sandbox`, starting background commands into
    /// `table`.
    pub fn new(
        workspace: Workspace,
        policy: Arc<CommandPolicy>,
        options: CommandOptions,
        table: Arc<ProcessTable>,
        sandbox: Sandbox,
    ) -> Self {
        Self {
            workspace,
            policy,
            options,
            table,
            sandbox,
            warned: AtomicBool::new(false),
        }
    }

    fn judge(&self, command: &str, env: Option<&BTreeMap<String, String>>) -> Verdict {
        let names: Vec<&str> = env
            .map(|env| env.keys().map(String::as_str).collect())
            .unwrap_or_default();
        self.policy.classify_with_env(command, &names)
    }

    /// Whether a `safe` verdict may be trusted to run unasked: only when
    /// the kernel enforces the read-only profile. Says once when it does
    /// not.
    fn read_only_enforced(&self) -> bool {
        let status = self.sandbox.status();
        let enforced = status.enforces_read_only();
        if !enforced && !self.warned.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "every command will ask for confirmation: the sandbox cannot hold a read-only \
                 command to that here ({})",
                status.level_name()
            );
        }
        enforced
    }
}

#[async_trait]
impl TypedTool for RunCommand {
    type Args = RunCommandArgs;
    const NAME: &'static str = "run_command";
    const COMPACT: Option<Compact> = Some(Compact {
        description: "Run a shell command; returns output and exit code.",
        arguments: &["command"],
    });
    const DESCRIPTION: &'static str = "Run a bash command line in the workspace; returns its output and exit code. Read-only commands run at once, others may need the user's approval. background=true returns a session id for `process`.";
    const SENSITIVITY: Sensitivity = Sensitivity::Command(CommandClass::Dangerous);
    const RUNS_COMMANDS: bool = true;

    fn sensitivity(&self, args: &Value) -> Sensitivity {
        let command = args
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let env: Option<BTreeMap<String, String>> = args
            .get("env")
            .and_then(|env| serde_json::from_value(env.clone()).ok());
        match self.judge(command, env.as_ref()).kind() {
            // A read-only judgement only goes unasked when the kernel holds
            // it to that; otherwise it asks like a development command.
            VerdictKind::Class(CommandClass::Safe) if !self.read_only_enforced() => {
                Sensitivity::Command(CommandClass::Dev)
            }
            VerdictKind::Class(class) => Sensitivity::Command(class),
            VerdictKind::Blocked => Sensitivity::Command(CommandClass::Dangerous),
        }
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            open_world_hint: Some(true),
            ..ToolAnnotations::from_sensitivity(Sensitivity::Sensitive)
        }
    }

    fn effects(&self, args: &RunCommandArgs) -> Result<Effects, EffectsError> {
        let cwd = declared_cwd(&self.workspace, args.cwd.as_deref())?;
        let effect = Effect::command(args.command.clone(), cwd)
            .with_env(args.env.clone().unwrap_or_default())
            .with_plan(self.plan(&args.command, args.env.as_ref()));
        Ok(Effects::known([effect]))
    }

    fn timeout(&self) -> Option<Duration> {
        // The command's own timeout (at most 600 s) stops it; the gate's is
        // only a backstop.
        Some(Duration::from_secs(630))
    }

    async fn run(&self, args: RunCommandArgs, _ctx: &ToolContext) -> ToolResult {
        let verdict = self.judge(&args.command, args.env.as_ref());
        let class = match verdict.kind() {
            VerdictKind::Blocked => {
                return ToolResult::failure(format!(
                    "blocked command: {}; it is refused in every mode",
                    verdict.reason()
                ));
            }
            VerdictKind::Class(CommandClass::Dangerous) if self.options.allowed_only => {
                return ToolResult::failure(format!(
                    "command classified dangerous ({}) and commands.allowed_only is on; \
                     only safe and dev commands may run here",
                    verdict.reason()
                ));
            }
            VerdictKind::Class(class) => class,
        };
        let status = self.sandbox.status();
        if self.options.sandbox_required && status.level() != Level::Full {
            return ToolResult::failure(format!(
                "refusing to run: the sandbox is incomplete here ({status}) and \
                 commands.sandbox_required is true"
            ));
        }
        let cwd = match self.resolve_cwd(args.cwd.as_deref()) {
            Ok(cwd) => cwd,
            Err(message) => return ToolResult::failure(message),
        };
        let read_only = class == CommandClass::Safe && status.enforces_read_only();
        let profile = if read_only {
            Profile::ReadOnly {
                programs: verdict.programs().to_vec(),
            }
        } else {
            Profile::Standard
        };
        let spawn = Spawn::shell(&args.command)
            .cwd(cwd)
            .envs(args.env.unwrap_or_default())
            .profile(profile);
        let class_name = class.as_str();
        let profile_name = if read_only { "read-only" } else { "standard" };
        let sandbox = status.to_string();
        if args.background {
            // The `cwd` resolved above, so naming it cannot fail.
            let cwd = declared_cwd(&self.workspace, args.cwd.as_deref())
                .ok()
                .flatten();
            return match self.table.start(&self.sandbox, &spawn, &args.command, cwd) {
                Ok((id, pid)) => ToolResult::success(format!(
                    "started in the background as {id} (pid {pid}); read its output with \
                     process(action=\"poll\", session_id=\"{id}\")"
                ))
                .with_metadata("session_id", id)
                .with_metadata("pid", pid)
                .with_metadata("class", class_name)
                .with_metadata("profile", profile_name)
                .with_metadata("sandbox", sandbox),
                Err(message) => ToolResult::failure(message),
            };
        }
        let options = RunOptions::new(Duration::from_secs(args.timeout.clamp(1, 600)))
            .capture(Capture::Lines(self.options.max_output_lines.max(2)));
        let finished = match self.sandbox.run(&spawn, &options).await {
            Ok(finished) => finished,
            Err(error) => {
                return ToolResult::failure(format!(
                    "could not start the command: {}",
                    error_chain(&error)
                ));
            }
        };
        report(&finished, args.timeout)
            .with_metadata("class", class_name)
            .with_metadata("profile", profile_name)
            .with_metadata("sandbox", sandbox)
    }
}

impl RunCommand {
    /// How `command` will run, as [`run`](TypedTool::run) decides it: the
    /// class it asks by, the programs, the profile and the network.
    fn plan(&self, command: &str, env: Option<&BTreeMap<String, String>>) -> CommandPlan {
        let verdict = self.judge(command, env);
        let status = self.sandbox.status();
        let class = match verdict.kind() {
            VerdictKind::Class(CommandClass::Safe) if !self.read_only_enforced() => {
                CommandClass::Dev
            }
            VerdictKind::Class(class) => class,
            VerdictKind::Blocked => CommandClass::Dangerous,
        };
        let reason = if verdict.is_blocked() {
            format!("blocked: {}; it will be refused", verdict.reason())
        } else {
            verdict.reason().to_owned()
        };
        let read_only = class == CommandClass::Safe;
        let profile = match status.level() {
            Level::Full if read_only => SandboxProfile::ReadOnly,
            Level::Full => SandboxProfile::Standard,
            Level::LandlockOnly => SandboxProfile::Partial,
            Level::Off => SandboxProfile::Unconfined,
        };
        let programs = if verdict.programs().is_empty() {
            named_programs(command)
        } else {
            verdict.programs().to_vec()
        };
        let network = !read_only && (self.sandbox.network() || status.level() != Level::Full);
        CommandPlan::new(class, reason, programs, profile, network)
    }

    fn resolve_cwd(&self, cwd: Option<&str>) -> Result<PathBuf, String> {
        let path = self
            .workspace
            .resolve(cwd.unwrap_or("."))
            .map_err(|e| e.to_string())?;
        let display = self.workspace.display(&path);
        match self.workspace.metadata(&path) {
            Ok(meta) if meta.is_dir() => Ok(self.workspace.root().join(path.as_path())),
            Ok(_) => Err(format!("cwd `{display}` is not a directory")),
            Err(error) => Err(error.to_string()),
        }
    }
}

/// The programs a line names, each once, in order (builtins included): what
/// a person is told it runs when the policy did not list them.
fn named_programs(command: &str) -> Vec<String> {
    let Ok(parsed) = toolgate_policy::parse_command(command) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for simple in parsed.simple_commands() {
        let program = simple.program();
        if !simple.is_compound_part() && !program.is_empty() && !out.iter().any(|p| p == program) {
            out.push(program.to_owned());
        }
    }
    out
}

/// The `cwd` of a command as its effect names it: `None` for the workspace
/// root (the default), else the directory as the workspace names it, or as
/// written when it lies outside.
fn declared_cwd(workspace: &Workspace, cwd: Option<&str>) -> Result<Option<String>, EffectsError> {
    let Some(cwd) = cwd else {
        return Ok(None);
    };
    let dir = named(workspace, cwd)?;
    let is_root = dir
        .path
        .as_ref()
        .is_some_and(toolgate_core::WsPath::is_root);
    Ok((!is_root).then_some(dir.display))
}

/// The result the model sees: stdout, then stderr, then how it ended.
fn report(finished: &Finished, timeout: u64) -> ToolResult {
    with_run_metadata(outcome(finished, timeout, "the command"), finished)
}

/// The `commands` group: `run_command` and `process`, when
/// `options.commands` is set (the host's `commands.enabled`). Parts: the
/// [`Workspace`] and the [`BuiltinOptions`](crate::BuiltinOptions), whose
/// sandbox every command runs in (without one, there are no commands).
#[derive(Debug, Clone, Copy, Default)]
pub struct CommandsGroup;

impl CommandsGroup {
    /// The group's tools: none unless `options.commands` is set.
    pub fn tools(
        workspace: &Workspace,
        options: &crate::BuiltinOptions,
        sandbox: Sandbox,
    ) -> Vec<Arc<dyn toolgate_core::Tool>> {
        let Some(commands) = &options.commands else {
            return Vec::new();
        };
        let table = Arc::new(ProcessTable::new(options.process_limits));
        vec![
            Arc::new(RunCommand::new(
                workspace.clone(),
                Arc::clone(&options.command_policy),
                commands.clone(),
                Arc::clone(&table),
                sandbox,
            )),
            Arc::new(ProcessTool::new(table)),
        ]
    }
}

impl toolgate_core::Group for CommandsGroup {
    fn name(&self) -> &'static str {
        "commands"
    }

    fn tool_names(&self) -> &'static [&'static str] {
        &["run_command", "process"]
    }

    fn build(
        &self,
        ctx: &toolgate_core::GroupContext<'_>,
    ) -> Result<toolgate_core::ToolGroup, toolgate_core::GroupError> {
        let options = ctx.part::<crate::BuiltinOptions>()?;
        let tools = if options.commands.is_some() {
            let workspace = ctx.part::<Workspace>()?;
            options
                .sandbox_for(&workspace)
                .map(|sandbox| Self::tools(&workspace, &options, sandbox))
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        Ok(toolgate_core::ToolGroup::new(
            self.name(),
            INSTRUCTIONS,
            tools,
        ))
    }
}
