//! Commands: `run_command` and `process` (seed 000 F13, seed 002 `exec`).
//!
//! `run_command` has five layers (DESIGN.md §9):
//!
//! 1. the blocklist, refused in every mode, yolo included;
//! 2. classification `safe` / `dev` / `dangerous` on the parsed command
//!    (`toolgate-policy`), which sets the call's sensitivity, so the gate asks
//!    for confirmation as seed 000's table says; with `allowed_only`,
//!    `dangerous` commands are refused outright;
//! 3. a timeout with stdin closed, output kept as head + tail, the process
//!    group killed ([`exec`]);
//! 4. `cwd` resolved through the [`Workspace`];
//! 5. the OS sandbox: Landlock confines writes to the workspace and the temp
//!    directory, and optionally denies TCP ([`sandbox`]).
//!
//! With `background: true` the command goes to the [`ProcessTable`] and the
//! `process` tool manages it.

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
    CommandClass, Sensitivity, ToolAnnotations, ToolContext, ToolResult, TypedTool, Workspace,
};
use toolgate_policy::{CommandPolicy, VerdictKind};

pub use process::{ProcessLimits, ProcessTable, ProcessTool};
pub use sandbox::SandboxStatus;

mod exec;
pub mod process;
pub mod sandbox;

/// Whether commands run under the OS sandbox.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SandboxMode {
    /// Landlock on Linux (the default).
    #[default]
    Landlock,
    /// No OS sandbox: only the other four layers.
    None,
}

/// How `run_command` runs commands.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CommandOptions {
    /// Refuse `dangerous` commands instead of asking (seed 000 `allowed_only`).
    pub allowed_only: bool,
    /// Lines of output kept per stream (head + tail).
    pub max_output_lines: usize,
    /// The OS sandbox.
    pub sandbox: SandboxMode,
    /// Refuse to run at all when the sandbox is asked for but the kernel
    /// cannot provide it.
    pub sandbox_required: bool,
    /// Deny TCP connections and binds from sandboxed commands.
    pub deny_network: bool,
}

impl Default for CommandOptions {
    fn default() -> Self {
        Self {
            allowed_only: false,
            max_output_lines: 200,
            sandbox: SandboxMode::Landlock,
            sandbox_required: false,
            deny_network: false,
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

    /// The OS sandbox. By default, Landlock.
    #[must_use]
    pub fn sandbox(mut self, mode: SandboxMode) -> Self {
        self.sandbox = mode;
        self
    }

    /// Refuse to run when the sandbox is asked for but unavailable. By
    /// default, off: commands run unsandboxed, with a warning said once.
    #[must_use]
    pub fn sandbox_required(mut self, yes: bool) -> Self {
        self.sandbox_required = yes;
        self
    }

    /// Deny TCP to sandboxed commands. By default, off.
    #[must_use]
    pub fn deny_network(mut self, yes: bool) -> Self {
        self.deny_network = yes;
        self
    }
}

/// Arguments of `run_command`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCommandArgs {
    /// The shell command line (run with `/bin/sh -c`).
    pub command: String,
    /// Working directory, relative to the workspace root (default: the root).
    pub cwd: Option<String>,
    /// Seconds before the command and everything it started are killed (1–600, default 30).
    #[serde(default = "default_timeout")]
    #[schemars(range(min = 1, max = 600))]
    pub timeout: u64,
    /// Extra environment variables for the command.
    pub env: Option<BTreeMap<String, String>>,
    /// Start it in the background and return a session id at once; manage it
    /// with the `process` tool (default false).
    #[serde(default)]
    pub background: bool,
}

fn default_timeout() -> u64 {
    30
}

/// The policy's answer, as `run_command` uses it.
enum Judgement {
    Blocked(String),
    Class(CommandClass, String),
}

/// `run_command`: runs a shell command through the five layers.
#[derive(Debug)]
pub struct RunCommand {
    workspace: Workspace,
    policy: Arc<CommandPolicy>,
    options: CommandOptions,
    table: Arc<ProcessTable>,
    status: SandboxStatus,
    warned: AtomicBool,
}

impl RunCommand {
    /// A `run_command` over `workspace`, classifying with `policy`, starting
    /// background commands into `table`.
    pub fn new(
        workspace: Workspace,
        policy: Arc<CommandPolicy>,
        options: CommandOptions,
        table: Arc<ProcessTable>,
    ) -> Self {
        Self {
            workspace,
            policy,
            options,
            table,
            status: SandboxStatus::detect(),
            warned: AtomicBool::new(false),
        }
    }

    fn judge(&self, command: &str) -> Judgement {
        let verdict = self.policy.classify(command);
        let reason = verdict.reason().to_owned();
        match verdict.kind() {
            VerdictKind::Class(class) => Judgement::Class(class, reason),
            VerdictKind::Blocked => Judgement::Blocked(reason),
        }
    }

    /// The directories a sandboxed command may write to.
    fn writable(&self) -> Vec<PathBuf> {
        let mut dirs = vec![self.workspace.root().to_owned(), std::env::temp_dir()];
        dirs.push(PathBuf::from("/tmp"));
        dirs.dedup();
        dirs
    }

    /// Builds the sandbox for one command, or says why there is none.
    fn restriction(&self) -> Result<(Option<sandbox::Restriction>, String), String> {
        if self.options.sandbox == SandboxMode::None {
            return Ok((None, "none (commands.sandbox: none)".to_owned()));
        }
        if !matches!(self.status, SandboxStatus::Available(_)) {
            if self.options.sandbox_required {
                return Err(format!(
                    "refusing to run unsandboxed: {}; commands.sandbox_required is true",
                    self.status.describe()
                ));
            }
            if !self.warned.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "{}; running commands without the OS sandbox",
                    self.status.describe()
                );
            }
            return Ok((None, format!("none ({})", self.status.describe())));
        }
        let deny_network = self.options.deny_network && self.status.can_deny_network();
        if self.options.deny_network && !deny_network && !self.warned.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(
                "{} cannot deny network access (TCP rules need ABI 4); the network stays open",
                self.status.describe()
            );
        }
        let restriction = sandbox::Restriction::new(&self.writable(), deny_network)
            .map_err(|error| format!("could not set up the sandbox: {error}"))?;
        let network = if deny_network { ", no TCP" } else { "" };
        Ok((
            Some(restriction),
            format!("{}{network}", self.status.describe()),
        ))
    }
}

#[async_trait]
impl TypedTool for RunCommand {
    type Args = RunCommandArgs;
    const NAME: &'static str = "run_command";
    const DESCRIPTION: &'static str = "Run a shell command in the workspace and return its output and exit code. \
        stdin is closed; output is cut to its first and last lines when long; the command and everything it \
        started are killed at `timeout` seconds. Read-only commands run at once; others may need confirmation; \
        destructive ones (rm -rf /, sudo, curl|sh, …) are always refused. background=true starts it and returns \
        a session id for the `process` tool.";
    const SENSITIVITY: Sensitivity = Sensitivity::Command(CommandClass::Dangerous);

    fn sensitivity(&self, args: &Value) -> Sensitivity {
        let command = args
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match self.judge(command) {
            Judgement::Class(class, _) => Sensitivity::Command(class),
            Judgement::Blocked(_) => Sensitivity::Command(CommandClass::Dangerous),
        }
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            open_world_hint: Some(true),
            ..ToolAnnotations::from_sensitivity(Sensitivity::Sensitive)
        }
    }

    fn timeout(&self) -> Option<Duration> {
        // The command's own timeout (at most 600 s) stops it; the gate's is
        // only a backstop.
        Some(Duration::from_secs(630))
    }

    async fn run(&self, args: RunCommandArgs, _ctx: &ToolContext) -> ToolResult {
        let class = match self.judge(&args.command) {
            Judgement::Blocked(reason) => {
                return ToolResult::failure(format!(
                    "blocked command: {reason}; it is refused in every mode"
                ));
            }
            Judgement::Class(CommandClass::Dangerous, reason) if self.options.allowed_only => {
                return ToolResult::failure(format!(
                    "command classified dangerous ({reason}) and commands.allowed_only is on; \
                     only safe and dev commands may run here"
                ));
            }
            Judgement::Class(class, _) => class,
        };
        let cwd = match self.resolve_cwd(args.cwd.as_deref()) {
            Ok(cwd) => cwd,
            Err(message) => return ToolResult::failure(message),
        };
        let (restriction, sandbox) = match self.restriction() {
            Ok(found) => found,
            Err(message) => return ToolResult::failure(message),
        };
        let env: Vec<(String, String)> = args.env.unwrap_or_default().into_iter().collect();
        let spec = exec::Spec {
            command: &args.command,
            cwd: &cwd,
            env: &env,
            timeout: Duration::from_secs(args.timeout.clamp(1, 600)),
            max_lines: self.options.max_output_lines.max(2),
            restriction: restriction.as_ref(),
        };
        let class_name = class_name(class);
        if args.background {
            return match self.table.start(&spec) {
                Ok((id, pid)) => ToolResult::success(format!(
                    "started in the background as {id} (pid {pid}); read its output with \
                     process(action=\"poll\", session_id=\"{id}\")"
                ))
                .with_metadata("session_id", id)
                .with_metadata("pid", pid)
                .with_metadata("class", class_name)
                .with_metadata("sandbox", sandbox),
                Err(message) => ToolResult::failure(message),
            };
        }
        let finished = match exec::run(&spec).await {
            Ok(finished) => finished,
            Err(error) => {
                return ToolResult::failure(format!("could not start the command: {error}"));
            }
        };
        report(&finished, args.timeout)
            .with_metadata("class", class_name)
            .with_metadata("sandbox", sandbox)
    }
}

impl RunCommand {
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

fn class_name(class: CommandClass) -> &'static str {
    match class {
        CommandClass::Safe => "safe",
        CommandClass::Dev => "dev",
        CommandClass::Dangerous => "dangerous",
    }
}

/// The result the model sees: stdout, then stderr, then how it ended.
fn report(finished: &exec::Finished, timeout: u64) -> ToolResult {
    let mut output = finished.stdout.clone();
    if !finished.stderr.is_empty() {
        if !output.is_empty() {
            output.push('\n');
        }
        output.push_str("[stderr]\n");
        output.push_str(&finished.stderr);
    }
    let ended = if finished.timed_out {
        format!("timed out after {timeout}s; the command and everything it started were killed")
    } else if let Some(code) = finished.exit_code {
        format!("exit code {code}")
    } else {
        format!("killed by signal {}", finished.signal.unwrap_or(0))
    };
    let result = if finished.exit_code == Some(0) && !finished.timed_out {
        let mut text = output;
        if text.is_empty() {
            "(no output; exit code 0)".clone_into(&mut text);
        }
        ToolResult::success(text)
    } else {
        ToolResult::failure(ended).with_output(output)
    };
    result
        .with_metadata("exit_code", finished.exit_code)
        .with_metadata("timed_out", finished.timed_out)
        .with_metadata(
            "duration_ms",
            u64::try_from(finished.duration.as_millis()).unwrap_or(u64::MAX),
        )
        .with_metadata("lines_cut", finished.lines_cut)
}
