//! The command line (DESIGN.md §13).

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use toolgate_host::ProviderKind;
use toolgate_policy::{ConfirmationMode, RuleDecision};

use crate::env_vars;

/// A safe, fast runtime for LLM agents' tools.
#[derive(Debug, Parser)]
#[command(name = "toolgate", version, propagate_version = true)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Flags accepted before or after the subcommand.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Global options")]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each flag and its --no- partner is a bool"
)]
pub(crate) struct GlobalArgs {
    /// The workspace directory tools work in [default: the current directory].
    #[arg(long, global = true, env = env_vars::TOOLGATE_WORKSPACE, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,

    /// Configuration file to use instead of WORKSPACE/toolgate.yaml.
    #[arg(long, global = true, env = env_vars::TOOLGATE_CONFIG, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,

    /// When to ask before running a call [default: confirm-sensitive, or the config's].
    #[arg(long, global = true, env = env_vars::TOOLGATE_MODE, value_parser = mode_parser(), value_name = "MODE")]
    pub(crate) mode: Option<ConfirmationMode>,

    /// Describe what would run instead of running it; never asks for confirmation.
    #[arg(long, global = true, env = env_vars::TOOLGATE_DRY_RUN, value_parser = clap::builder::BoolishValueParser::new())]
    pub(crate) dry_run: bool,

    /// Run for real (the default). Wins over `--dry-run` and `TOOLGATE_DRY_RUN`.
    #[arg(long, global = true)]
    pub(crate) no_dry_run: bool,

    /// Print machine-readable JSON on stdout.
    #[arg(long, global = true)]
    pub(crate) json: bool,

    /// Print human-readable text (the default). Wins over --json.
    #[arg(long, global = true)]
    pub(crate) no_json: bool,

    /// Register `run_command` and `process` even if the configuration disables them.
    #[arg(long, global = true)]
    pub(crate) allow_commands: bool,

    /// Do not register `run_command` and `process`. Wins over `--allow-commands`.
    #[arg(long, global = true)]
    pub(crate) no_commands: bool,

    /// Apply the workspace configuration fully for this run, trusted or not; records nothing (for CI).
    #[arg(long, global = true, env = env_vars::TOOLGATE_TRUST_WORKSPACE, value_parser = clap::builder::BoolishValueParser::new())]
    pub(crate) trust_workspace: bool,

    /// Apply the trust-only keys of the workspace configuration only if it is trusted (the default).
    /// Wins over `--trust-workspace` and `TOOLGATE_TRUST_WORKSPACE`.
    #[arg(long, global = true)]
    pub(crate) no_trust_workspace: bool,

    /// When to colour the output [default: auto: on a terminal, unless `NO_COLOR` is set].
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = crate::render::ColorChoice::Auto, hide_default_value = true)]
    pub(crate) color: crate::render::ColorChoice,

    /// More diagnostics on stderr (-v: info, -vv: debug, -vvv: trace).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,

    /// How diagnostics are written on stderr: text, or json (one JSON object per line, for log collectors).
    #[arg(long, global = true, value_enum, env = env_vars::TOOLGATE_LOG_FORMAT, value_name = "FORMAT", default_value_t = LogFormat::Text)]
    pub(crate) log_format: LogFormat,
}

/// How diagnostics are written on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LogFormat {
    /// Lines for people.
    Text,
    /// One JSON object per line: time, level, target, message, fields, and the spans' fields (a call's client and call id).
    Json,
}

/// The confirmation modes, each with what it does in `--help`.
fn mode_parser() -> impl clap::builder::TypedValueParser<Value = ConfirmationMode> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser as _};
    PossibleValuesParser::new(
        ConfirmationMode::ALL.map(|mode| PossibleValue::new(mode.as_str()).help(mode.summary())),
    )
    .try_map(|name| name.parse::<ConfirmationMode>())
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Choose a model provider: write it to your config file and check it works.
    #[command(visible_alias = "setup")]
    Init(InitArgs),
    /// List the available tools.
    #[command(subcommand)]
    Tools(ToolsCommand),
    /// Run one tool call through the full gate and print its result.
    Call(CallArgs),
    /// Inspect the configuration.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Print how `run_command` would judge a command: blocked, safe, dev or dangerous.
    Classify {
        /// The command line: one quoted argument (`'ls -la'`) or its words (`ls -la`, `-- ls -la`).
        #[arg(required = true, num_args = 1.., allow_hyphen_values = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Work with the configured lifecycle hooks.
    #[command(subcommand)]
    Hooks(HooksCommand),
    /// Serve toolgate's tools over MCP, or inspect the configured MCP servers.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Run an agent on a task with a model; every tool call goes through the gate.
    Run(RunArgs),
    /// Put the workspace (and/or the conversation) back as it was before a step of a session; undo that.
    Rewind(RewindArgs),
    /// The steps of a session with the files each changed, for `toolgate rewind`.
    Checkpoints(CheckpointsArgs),
    /// List, show and resume saved agent sessions.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Trust a workspace's configuration file as it is now, so its hooks, MCP servers and policy apply.
    Trust(TrustArgs),
    /// Your persistent confirmation rules (allow, ask or deny a tool, command prefix or path).
    #[command(subcommand)]
    Rules(RulesCommand),
    /// Check the configuration, trust, sandbox, store, model server and MCP servers; say how to fix each problem.
    Doctor(DoctorArgs),
    /// Show the system prompt an agent gets.
    #[command(subcommand)]
    Prompt(PromptCommand),
    /// The jobs the `cron` tool scheduled: list them, run the due ones, or keep running them.
    #[command(subcommand)]
    Schedule(ScheduleCommand),
    /// Skills (SKILL.md): list the ones found, show one, create or install one.
    #[command(subcommand)]
    Skills(SkillsCommand),
    /// The store of sessions, audit, notes, tasks and schedules of this workspace.
    #[command(subcommand)]
    Store(StoreCommand),
    /// The local web app: chat with agents, approve their calls, see sessions, rules, MCP, sandbox and audit.
    Ui(UiArgs),
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("what").args(["code", "conversation", "both"]))]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one of three choices, and each flag with its --no- partner"
)]
pub(crate) struct RewindArgs {
    /// The session [default: the most recently updated].
    pub(crate) session: Option<String>,
    /// Put things back as they were before step N [default: undo the last step that changed anything].
    #[arg(long, value_name = "N", conflicts_with = "undo")]
    pub(crate) to_step: Option<u32>,
    /// Rewind the workspace's files only (the default).
    #[arg(long)]
    pub(crate) code: bool,
    /// Rewind the conversation only: a resumed run continues from before the step.
    #[arg(long)]
    pub(crate) conversation: bool,
    /// Rewind both the files and the conversation.
    #[arg(long)]
    pub(crate) both: bool,
    /// Also put back files changed since by someone else (listed as conflicts otherwise).
    #[arg(long, overrides_with = "no_force")]
    pub(crate) force: bool,
    /// Leave files changed since by someone else alone (the default). Wins over --force.
    #[arg(long)]
    pub(crate) no_force: bool,
    /// Undo the session's last rewind.
    #[arg(long, overrides_with = "no_undo")]
    pub(crate) undo: bool,
    /// Rewind rather than undo (the default). Wins over --undo.
    #[arg(long)]
    pub(crate) no_undo: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CheckpointsArgs {
    /// The session [default: the most recently updated].
    pub(crate) session: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    /// The provider [default: asked on a terminal].
    #[arg(long, value_parser = provider_parser(), value_name = "PROVIDER")]
    pub(crate) provider: Option<ProviderKind>,
    /// The server's base URL [default: the provider's].
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,
    /// The model [default: the provider's, or the one a local server serves].
    #[arg(long, value_name = "MODEL")]
    pub(crate) model: Option<String>,
    /// The environment variable that holds the API key (its name, never the key) [default: the provider's].
    #[arg(long, value_name = "VAR")]
    pub(crate) api_key_env: Option<String>,
    /// Replace the `llm` section of an existing config file (its other sections are kept).
    #[arg(long)]
    pub(crate) force: bool,
    /// Keep an existing config file as it is (the default). Wins over --force.
    #[arg(long)]
    pub(crate) no_force: bool,
}

/// `--provider` and `--api-key-env` of `run` and `ui`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ProviderArgs {
    /// The model provider: its URL, key variable and wire format (overrides `llm.*`).
    #[arg(long, value_parser = provider_parser(), value_name = "PROVIDER")]
    pub(crate) provider: Option<ProviderKind>,
    /// The environment variable that holds the API key (overrides `llm.api_key_env`).
    #[arg(long, value_name = "VAR")]
    pub(crate) api_key_env: Option<String>,
}

/// The provider names, each with its description in `--help`.
fn provider_parser() -> impl clap::builder::TypedValueParser<Value = ProviderKind> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser as _};
    PossibleValuesParser::new(
        ProviderKind::ALL.map(|kind| PossibleValue::new(kind.name()).help(kind.description())),
    )
    .try_map(|name| name.parse::<ProviderKind>())
}

#[derive(Debug, Args)]
pub(crate) struct UiArgs {
    /// Where to listen; port 0 picks a free one. Loopback unless --allow-remote.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub(crate) addr: SocketAddr,
    /// Open the URL in the default browser.
    #[arg(long)]
    pub(crate) open: bool,
    /// Allow a non-loopback --addr (anyone with the printed URL can then run agents here).
    #[arg(long)]
    pub(crate) allow_remote: bool,
    #[command(flatten)]
    pub(crate) llm: ProviderArgs,
}

/// Who answers a call that needs confirmation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum ApproverChoice {
    /// The terminal toolgate runs in (`run`), or the MCP client through elicitation (`mcp serve`).
    #[default]
    Default,
    /// The web UI: a local page (its URL printed on stderr) with Allow/Deny buttons.
    Ui,
}

#[derive(Debug, Subcommand)]
pub(crate) enum SkillsCommand {
    /// The skills found, nearest first, and the ones that could not be read (with file and line).
    List,
    /// One skill: where it is, its frontmatter and its instructions.
    Show {
        /// The skill's name.
        name: String,
    },
    /// Write a new skill from a template: .agents/skills/NAME/SKILL.md in the workspace.
    Create {
        /// The name: lowercase letters, digits and hyphens, e.g. `release-notes`.
        name: String,
        /// What the skill is for and when to use it (the model sees this).
        #[arg(long, short)]
        description: String,
        /// Write to ~/.agents/skills instead of the workspace.
        #[arg(long)]
        user: bool,
    },
    /// Install a skill from a directory (or its SKILL.md) or from the URL of a SKILL.md.
    Install {
        /// A skill directory, a SKILL.md file, or an http(s) URL of a SKILL.md.
        source: String,
        /// Install into ~/.agents/skills instead of the workspace.
        #[arg(long)]
        user: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum RulesCommand {
    /// The rules in your config file, numbered, then those saved in a shared store (`store.url`) by id; --json: an array of rules, each with its `source` (`file` or `store`).
    List,
    /// Add a rule to your config file (~/.config/toolgate/config.yaml), or with --store to the shared store.
    Add(RulesAddArgs),
    /// Remove rule N (as `toolgate rules list` numbers it) from your config file, or with --store the store's rule of id N.
    Remove {
        /// The rule's number, from 1 (with --store: its id in the store).
        number: usize,
        /// Remove a rule saved in the shared store (`store.url`), by the id `toolgate rules list` shows.
        #[arg(long)]
        store: bool,
    },
}

#[derive(Debug, Args)]
pub(crate) struct RulesAddArgs {
    /// The tool's exact name (`run_command`, `write_file`, …), `*` for every tool, or a name ending in `*` (`mcp_github_*`).
    #[arg(long, value_name = "TOOL")]
    pub(crate) tool: String,
    /// A command prefix in shell words (`git status`), matched word by word on the parsed command.
    #[arg(long, value_name = "PREFIX", conflicts_with = "path")]
    pub(crate) command: Option<String>,
    /// A glob over the workspace-relative paths the call reads or changes (`docs/**`).
    #[arg(long, value_name = "GLOB", conflicts_with = "domain")]
    pub(crate) path: Option<String>,
    /// With --path: only reads (`read`) or only changes (`write`) count.
    #[arg(long, value_parser = ["read", "write"], value_name = "ACCESS", requires = "path")]
    pub(crate) access: Option<String>,
    /// A host the call reaches (`example.com`, `*.example.com`).
    #[arg(long, value_name = "HOST", conflicts_with = "command")]
    pub(crate) domain: Option<String>,
    /// With --command: the command must be these words and nothing more.
    #[arg(long, requires = "command", overrides_with = "no_exact")]
    pub(crate) exact: bool,
    /// With --command: the command may be followed by more words (the default).
    #[arg(long, overrides_with = "exact")]
    pub(crate) no_exact: bool,
    /// A pattern in the form of the rule's own that the rule does not apply to (repeatable).
    #[arg(long = "except", value_name = "PATTERN")]
    pub(crate) except: Vec<String>,
    /// What the rule decides: allow (never ask), ask (ask even in yolo) or deny (refuse).
    #[arg(long, value_parser = decision_parser(), value_name = "DECISION")]
    pub(crate) decision: RuleDecision,
    /// Save the rule in the shared store (`store.url`), where every worker applies it, instead of your config file.
    #[arg(long)]
    pub(crate) store: bool,
}

/// The rule decisions, each with what it does in `--help`.
fn decision_parser() -> impl clap::builder::TypedValueParser<Value = RuleDecision> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser as _};
    let decision = |d: RuleDecision, help: &'static str| PossibleValue::new(d.as_str()).help(help);
    PossibleValuesParser::new([
        decision(RuleDecision::Allow, "Never ask"),
        decision(RuleDecision::Ask, "Ask, even in yolo"),
        decision(RuleDecision::Deny, "Refuse"),
    ])
    .try_map(|name| name.parse::<RuleDecision>())
}

#[derive(Debug, Subcommand)]
pub(crate) enum ScheduleCommand {
    /// Every scheduled job and the latest runs.
    List,
    /// Run the jobs that are due now, once (for a system cron or timer), and exit.
    RunDue,
    /// Run jobs as they come due until Ctrl-C.
    Daemon,
}

#[derive(Debug, Subcommand)]
pub(crate) enum StoreCommand {
    /// Move a damaged store aside (renamed, never deleted) so the next command starts a new one.
    Recover,
    /// Create or upgrade the schema of the postgres store (`store.url`); every worker checks it at start.
    Migrate,
}

#[derive(Debug, Subcommand)]
pub(crate) enum PromptCommand {
    /// Print the assembled system prompt of an agent, and its size with the tool schemas.
    Show {
        /// The agent [default: build].
        #[arg(long, default_value = "build", value_name = "NAME")]
        agent: String,
    },
}

#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// Print the AppArmor profile that lets this toolgate make user namespaces (Ubuntu 24.04 and later), and exit.
    #[arg(long)]
    pub(crate) apparmor_profile: bool,
    /// The model to check (overrides `llm.model`).
    #[arg(long, value_name = "MODEL")]
    pub(crate) model: Option<String>,
    /// The model server to check (overrides `llm.base_url`).
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,
    /// Also ask the model for one tiny tool call, to see whether it makes structured tool calls.
    #[arg(long)]
    pub(crate) check_tools: bool,
    /// Do not make the tool-calling check (the default). Wins over --check-tools.
    #[arg(long)]
    pub(crate) no_check_tools: bool,
}

#[derive(Debug, Args)]
pub(crate) struct TrustArgs {
    /// The workspace whose `toolgate.yaml` to trust [default: --workspace, or the current
    /// directory]. With `--config FILE`, FILE is trusted instead.
    #[arg(value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
    /// Stop trusting it.
    #[arg(long, conflicts_with = "list")]
    pub(crate) revoke: bool,
    /// List the trusted files and whether each is unchanged since.
    #[arg(long, conflicts_with = "dir")]
    pub(crate) list: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum HooksCommand {
    /// Run the configured hooks of EVENT for a synthetic event and print each decision.
    Test(HooksTestArgs),
}

#[derive(Debug, Args)]
pub(crate) struct HooksTestArgs {
    /// The event: `pre_tool_use`, `post_tool_use`, `session_start`, … (or `PreToolUse`, …).
    pub(crate) event: String,
    /// The tool the synthetic call is for (needed by the tool events).
    #[arg(long, value_name = "NAME")]
    pub(crate) tool: Option<String>,
    /// The tool input (or, for other events, the payload) as a JSON object [default: {}].
    #[arg(long, value_name = "JSON")]
    pub(crate) input: Option<String>,
    /// A file the call is about (repeatable) [default: the files the tool declares for --input].
    #[arg(long = "file", value_name = "PATH")]
    pub(crate) files: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum McpCommand {
    /// Serve the tools to an MCP client, every call through the gate (stdio by default).
    Serve(ServeArgs),
    /// Show each configured MCP server, its state and its tools.
    List,
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Serve streamable HTTP at ADDR (endpoint `/mcp`) instead of stdio, e.g. 127.0.0.1:8765.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<SocketAddr>,
    /// Require `Authorization: Bearer <value of VAR>` on every HTTP request.
    #[arg(long, value_name = "VAR", requires = "http")]
    pub(crate) token_env: Option<String>,
    /// Only the tools this agent may use (build, plan, review).
    #[arg(long, value_name = "NAME")]
    pub(crate) agent: Option<String>,
    /// Who answers calls that need confirmation: the MCP client (elicitation), or the web UI.
    #[arg(long, value_enum, default_value = "default", value_name = "WHO")]
    pub(crate) approver: ApproverChoice,
    /// Where the approval page listens with --approver ui.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub(crate) ui_addr: SocketAddr,
    /// Keep `Mcp-Session-Id` sessions in this process (one worker only), so that clients can be asked by elicitation.
    #[arg(long, requires = "http")]
    pub(crate) sessions: bool,
    /// Keep no sessions: any worker answers any request (the default). Wins over --sessions.
    #[arg(long)]
    pub(crate) no_sessions: bool,
    /// On SIGTERM or Ctrl-C, how long calls in flight may still run before the server exits.
    #[arg(long, value_name = "SECS", default_value_t = 30, requires = "http")]
    pub(crate) drain_timeout: u64,
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The task, in words.
    pub(crate) task: String,
    /// The agent: build, plan, review, or one from the `agents` config section.
    #[arg(long, default_value = "build", value_name = "NAME")]
    pub(crate) agent: String,
    /// The model (overrides `llm.model`).
    #[arg(long, value_name = "MODEL")]
    pub(crate) model: Option<String>,
    /// The model server's base URL (overrides `llm.base_url`).
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,
    #[command(flatten)]
    pub(crate) llm: ProviderArgs,
    /// Step budget (overrides the agent's `max_steps`).
    #[arg(long, value_name = "N")]
    pub(crate) max_steps: Option<u32>,
    /// Time budget of the whole run, in seconds.
    #[arg(long, value_name = "SECS")]
    pub(crate) timeout: Option<u64>,
    /// Cost budget in USD (overrides `llm.budget_usd`; needs the prices).
    #[arg(long, value_name = "USD")]
    pub(crate) budget: Option<f64>,
    /// Continue this session (see `toolgate sessions list`).
    #[arg(long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// Write a report of the run.
    #[arg(long, value_name = "FORMAT")]
    pub(crate) report: Option<ReportFormat>,
    /// Where to write the report [default: stdout after the answer].
    #[arg(long, value_name = "PATH")]
    pub(crate) report_file: Option<std::path::PathBuf>,
    /// Who answers calls that need confirmation: this terminal, or the web UI (its URL printed on stderr).
    #[arg(long, value_enum, default_value = "default", value_name = "WHO")]
    pub(crate) approver: ApproverChoice,
    /// Where the approval page listens with --approver ui.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub(crate) ui_addr: SocketAddr,
}

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ReportFormat {
    /// One JSON object.
    Json,
    /// A Markdown document.
    Markdown,
}

#[derive(Debug, Subcommand)]
pub(crate) enum SessionsCommand {
    /// Saved sessions, newest first.
    List,
    /// One session's conversation and tool calls.
    Show {
        /// The session id.
        id: String,
    },
    /// Continue a session with a new task.
    Resume {
        /// The session id.
        id: String,
        /// What to do next [default: "Continue."].
        task: Option<String>,
        /// The agent.
        #[arg(long, default_value = "build", value_name = "NAME")]
        agent: String,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum ToolsCommand {
    /// Names and one-line descriptions; with --json, the `OpenAI` function schemas.
    List {
        /// Only the tools this agent may use (build, plan, review).
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
    },
    /// Dynamic tools waiting for review, with their source and the static analysis.
    Pending,
    /// Approve a pending dynamic tool: running agents load it at their next step.
    Approve {
        /// The tool's id, as `tools pending` shows it.
        id: i64,
    },
    /// Reject a dynamic tool (pending or approved); it never runs again.
    Reject {
        /// The tool's id.
        id: i64,
    },
}

#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The tool's name.
    pub(crate) tool: String,
    /// The arguments as a JSON object, or `-` to read them from stdin [default: {}].
    pub(crate) args: Option<String>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Validate the configuration layers and print the effective configuration.
    Check,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn global_flags_go_before_or_after_the_subcommand() {
        for argv in [
            &["toolgate", "--json", "--mode", "yolo", "call", "echo", "{}"][..],
            &["toolgate", "call", "echo", "{}", "--json", "--mode", "yolo"][..],
        ] {
            let cli = Cli::try_parse_from(argv).unwrap();
            assert!(cli.global.json);
            assert_eq!(cli.global.mode, Some(ConfirmationMode::Yolo));
        }
        // The `--no-` form wins wherever it stands.
        for argv in [
            &["toolgate", "--dry-run", "config", "check", "--no-dry-run"][..],
            &["toolgate", "--no-dry-run", "config", "check", "--dry-run"][..],
        ] {
            let cli = Cli::try_parse_from(argv).unwrap();
            assert!(cli.global.no_dry_run, "{argv:?}");
        }
    }

    #[test]
    fn every_boolean_flag_has_a_no_partner() {
        let command = Cli::command();
        let longs: Vec<&str> = command
            .get_arguments()
            .filter_map(|a| a.get_long())
            .collect();
        for arg in command.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            let is_switch = matches!(arg.get_action(), clap::ArgAction::SetTrue);
            // Seed 000 names this pair: --allow-commands / --no-commands.
            let partner = if long == "allow-commands" {
                "no-commands".to_owned()
            } else {
                format!("no-{long}")
            };
            if is_switch && !long.starts_with("no-") {
                assert!(
                    longs.contains(&partner.as_str()),
                    "--{long} has no --no-{long}"
                );
            }
        }
    }
}
