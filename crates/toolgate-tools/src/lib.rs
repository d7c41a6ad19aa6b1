//! The built-in tools of toolgate, grouped by area.
//!
//! Each tool is a [`TypedTool`](toolgate_core::TypedTool): a `serde` +
//! `schemars` argument struct that refuses unknown fields, a static or
//! per-call sensitivity, and a `run` that turns every failure into a
//! [`ToolResult`](toolgate_core::ToolResult) the model can read.
//!
//! Every tool also declares what a call will do before it runs
//! ([`TypedTool::effects`](toolgate_core::TypedTool::effects)): the files it
//! reads, writes (with the content it would leave), deletes or renames, and
//! the commands it starts, worked out with the same code `run` uses (the
//! same path resolution, patch parser and matcher). The gate's guardrails,
//! hooks and reports read those effects, never the tool's name.
//!
//! | module | tools |
//! |---|---|
//! | [`fs`] | `read_file`, `write_file`, `delete_file`, `list_files` |
//! | [`files`] | the `files` group: [`fs`] and [`editing`]'s tools together |
//! | [`editing`] | `edit_file`, `apply_patch` (over the pure [`edit`] and [`patch`] engines) |
//! | [`search`] | `search_code`, `grep`, `find_files` (in process, on ripgrep's crates) |
//! | [`command`] | `run_command`, `process` (background sessions) |
//! | [`time`] | `get_datetime` |
//! | [`convert_time`] | `convert_time` (a time shown in another zone; off by default) |
//! | [`plan`] | `update_plan` (the session's checklist, kept in a [`PlanBook`](toolgate_core::PlanBook)) |
//! | [`diag`] | `echo` |
//!
//! Each group is one type implementing [`Group`](toolgate_core::Group)
//! ([`files::FilesGroup`], [`search::SearchGroup`],
//! [`command::CommandsGroup`], [`time::DateTimeGroup`],
//! [`diag::DiagnosticsGroup`], [`plan::PlanGroup`]), listed in the host's
//! catalog; [`builtin_tools`] lists them, configured, for a registry
//! without a host.
//!
//! # Example
//!
//! ```
//! use toolgate_core::{Registry, Workspace};
//! use toolgate_tools::{BuiltinOptions, builtin_tools};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let workspace = Workspace::builder(dir.path()).build()?;
//! let registry = Registry::new();
//! for tool in builtin_tools(&workspace, &BuiltinOptions::default()) {
//!     registry.register_arc(tool)?;
//! }
//! assert!(registry.has("read_file") && registry.has("apply_patch"));
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use toolgate_core::{Tool, ToolGroup, Workspace};
use toolgate_policy::CommandPolicy;
use toolgate_sandbox::Sandbox;

mod bounded;
pub mod command;
pub mod convert_time;
pub mod diag;
pub mod edit;
pub mod editing;
mod effects;
pub mod files;
pub mod fs;
pub mod patch;
pub mod plan;
pub mod search;
pub mod time;

/// Options for the built-in tools.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BuiltinOptions {
    /// The IANA time zone `get_datetime` uses when the call names none.
    pub default_timezone: Option<String>,
    /// The largest file `read_file` returns whole, in bytes.
    pub max_file_size: u64,
    /// Whether `delete_file` is offered, and `apply_patch` may apply a
    /// patch that deletes files.
    pub allow_delete: bool,
    /// How `run_command` runs commands; `None` leaves `run_command` and
    /// `process` out.
    pub commands: Option<command::CommandOptions>,
    /// How commands are classified and which are blocked.
    pub command_policy: Arc<CommandPolicy>,
    /// Limits of the background-process table.
    pub process_limits: command::ProcessLimits,
    /// The sandbox commands run in.
    pub sandbox: Option<Sandbox>,
}

impl Default for BuiltinOptions {
    fn default() -> Self {
        Self {
            default_timezone: None,
            max_file_size: 1024 * 1024,
            allow_delete: false,
            commands: None,
            command_policy: Arc::new(CommandPolicy::default()),
            process_limits: command::ProcessLimits::default(),
            sandbox: None,
        }
    }
}

impl BuiltinOptions {
    /// Sets the default time zone of `get_datetime`. By default, the
    /// system's zone.
    #[must_use]
    pub fn default_timezone(mut self, zone: Option<String>) -> Self {
        self.default_timezone = zone;
        self
    }

    /// Sets the largest file `read_file` returns whole (larger files are
    /// read in pages). By default, 1 MiB.
    #[must_use]
    pub fn max_file_size(mut self, bytes: u64) -> Self {
        self.max_file_size = bytes;
        self
    }

    /// Sets whether `delete_file` is offered, and whether `apply_patch` may
    /// apply a patch that deletes files. By default, neither.
    #[must_use]
    pub fn allow_delete(mut self, allow: bool) -> Self {
        self.allow_delete = allow;
        self
    }

    /// Registers `run_command` and `process`, running commands as
    /// `options` says. By default, they are not registered.
    #[must_use]
    pub fn commands(mut self, options: Option<command::CommandOptions>) -> Self {
        self.commands = options;
        self
    }

    /// Sets the command policy (blocklist, classification). By default, the
    /// built-in one.
    #[must_use]
    pub fn command_policy(mut self, policy: Arc<CommandPolicy>) -> Self {
        self.command_policy = policy;
        self
    }

    /// Sets the sandbox commands run in (`toolgate-sandbox`). By default, a
    /// sandbox of their own over the workspace with the default settings;
    /// pass the front end's shared one so that hooks, MCP servers and
    /// commands are configured alike.
    #[must_use]
    pub fn sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// Sets the limits of the background-process table. By default, 8
    /// sessions, finished ones kept 30 minutes, 256 KiB of output each.
    #[must_use]
    pub fn process_limits(mut self, limits: command::ProcessLimits) -> Self {
        self.process_limits = limits;
        self
    }
}

impl BuiltinOptions {
    /// The sandbox the tools' processes (commands, GNU `patch`) run in:
    /// the configured one, else one of their own over `workspace` (`None`,
    /// with an error logged, where none can be built).
    pub fn sandbox_for(&self, workspace: &Workspace) -> Option<Sandbox> {
        match &self.sandbox {
            Some(sandbox) => Some(sandbox.clone()),
            None => Sandbox::builder(workspace.root())
                .build()
                .inspect_err(|error| {
                    tracing::error!(
                        "run_command, process and GNU patch are not available: {}",
                        toolgate_core::error_chain(error)
                    );
                })
                .ok(),
        }
    }
}

/// Every built-in tool, working in `workspace` and configured by `options`.
pub fn builtin_tools(workspace: &Workspace, options: &BuiltinOptions) -> Vec<Arc<dyn Tool>> {
    builtin_groups(workspace, options)
        .into_iter()
        .flat_map(|g| g.tools)
        .collect()
}

/// The built-in tools by group: `files` (read, write, delete, list, edit,
/// patch), `search`, `datetime`, `diagnostics` (`echo`, never offered to a
/// model) and `commands` (when `options.commands` is set), as the host's
/// catalog builds them with every section at its default.
pub fn builtin_groups(workspace: &Workspace, options: &BuiltinOptions) -> Vec<ToolGroup> {
    // Every process a tool starts (commands, GNU `patch`) runs in the
    // sandbox: the configured one, or one of their own.
    let sandbox = options.sandbox_for(workspace);
    let mut groups = vec![
        ToolGroup::new(
            "files",
            fs::INSTRUCTIONS,
            files::FilesGroup::tools(workspace, options, sandbox.as_ref()),
        ),
        ToolGroup::new(
            "search",
            search::INSTRUCTIONS,
            search::SearchGroup::tools(workspace),
        ),
        ToolGroup::new(
            "datetime",
            time::INSTRUCTIONS,
            vec![Arc::new(time::GetDateTime::new(
                options.default_timezone.clone(),
            ))],
        ),
        ToolGroup::new("diagnostics", "", vec![Arc::new(diag::Echo)]),
    ];
    if let Some(sandbox) = sandbox {
        let tools = command::CommandsGroup::tools(workspace, options, sandbox);
        if !tools.is_empty() {
            groups.push(ToolGroup::new("commands", command::INSTRUCTIONS, tools));
        }
    }
    groups
}
