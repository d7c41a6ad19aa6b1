//! The host of toolgate: configuration, workspace trust, and the one place
//! where a front end gets everything it runs calls with.
//!
//! Every front end — the CLI's `call`, `run`, `mcp serve`, `hooks test`,
//! `sessions`, the web UI, a Rust program embedding toolgate — loads a
//! [`Host`] and asks it for its parts, so they cannot drift apart:
//!
//! - [`Config`] and its sections are the `toolgate.yaml` format (public,
//!   documented, `serde`), loaded in layers by [`HostBuilder::load`]
//!   (defaults, the workspace file, the user file, `TOOLGATE_*` variables,
//!   flags) with file-and-line errors ([`ConfigError`]).
//! - [`GROUPS`] is the group catalog: every tool group once, as a type
//!   implementing [`Group`](toolgate_core::Group). The `tools:` section
//!   ([`ToolsSection`]), the keys a workspace file may set untrusted
//!   ([`untrusted_tool_keys`]), the names no dynamic tool may take
//!   ([`reserved_names`]), routing categories and [`Host::tool_groups`] are
//!   derived from it. Adding a group is its file and one line there.
//! - [`trust`] decides which keys of a workspace file apply before the user
//!   trusts it ([`TrustPolicy`], [`TrustStore`]).
//! - [`Host::gate`] assembles the gate: the registry (built-in tools by
//!   their enable flags, MCP servers' tools), guardrails, hooks, the
//!   confirmation mode and approver, the audit with the session id. The
//!   rules are on [`Host`].
//! - [`StoreApprover`] asks through the store: a call's question waits
//!   there, answered from any process sharing it; [`CallLedger`] runs a
//!   call that carries an idempotency key once among the workers sharing
//!   the store.
//! - [`Host::own_state`] is toolgate's own state (configuration, trust
//!   store, store, audit): the file tools refuse it and the sandbox masks
//!   it, in every mode and wherever the workspace is ([`OwnState`]).
//!
//! # Example
//!
//! Load a workspace's `toolgate.yaml` and run one call through the same gate
//! the CLI uses:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("toolgate.yaml"), "tools:\n  timeout: 30\n")?;
//! std::fs::write(dir.path().join("notes.txt"), "hello\n")?;
//! let host = toolgate_host::Host::builder().workspace(dir.path()).load()?;
//! let gate = host.gate().build().await?;
//! let call = toolgate_core::ToolCall::new("1", "read_file", serde_json::json!({"path": "notes.txt"}));
//! let run = gate.engine.execute(call).await;
//! gate.shutdown().await;
//! assert!(run.result.output.contains("hello"));
//! # Ok(())
//! # }
//! ```

pub use assembly::catalog::{
    AgentLoopGroup, GROUPS, ToolsSection, reserved_names, untrusted_tool_keys,
};
pub use assembly::gate::{Gate, GateBuilder, GateTools};
pub use assembly::host::{
    Host, HostBuilder, HostPart, TrustPolicy, confirmation_rules_builder, resolve_workspace,
};
pub use assembly::llm::{LlmOverrides, ModelChoice, ModelClient};
pub use assembly::skills::{SkillInstructions, SkillsGroup};
pub use assembly::stores::{StorePlans, session_outcome};
pub use config::init::{InitError, LlmSetup, ProviderKind, Written};
pub use config::rules_file::{RulesFileError, UserRules};
pub use config::trust::{Trust, TrustError, TrustStore, TrustedFile};
pub use config::{
    AgentPermission, AuditSection, CheckpointsSection, CommandsSection, Config, ConfigError,
    ConfirmationSection, Constrain, EnvSection, LimitsSection, LlmProvider, LlmSection, LoadError,
    Loaded, Overrides, ProjectFile, ProjectStatus, SandboxSetting, SkillsSection, Source,
    StoreSection, Temperature, TextToolCalls, UiSection, WorkspaceSection, trust_store_path,
};
pub use doctor::{Check, CheckState, DoctorOptions};
pub use error::{ErrorKind, HostError};
pub use judge::CommandJudgement;
pub use network::{DomainLists, NETWORK_TOOL, NetworkSetting};
pub use own_state::{OwnKind, OwnPath, OwnState};
pub use prompt::PromptReport;
pub use rewind::{RewindOptions, RewindOutcome};
pub use run::{PreparedRun, RequestSize, RunControls, RunRequest, done_event};
pub use saved_rules::{SaveRuleError, save_rule_in_store};
pub use schedule::HostJobRunner;
pub use toolgate_assistant::inspect::SelfInspectGroup;
pub use toolgate_gateway::{
    APPROVAL_TIMEOUT, CallLedger, StoreAllows, StoreApprover, StoreRate, StoredView,
    asked_without_key, decided, worker_name,
};

pub use toolgate_core::ToggleSection;
pub use toolgate_tools::time::DateTimeSection;
pub use toolgate_web::{DownloadError, download_text};

pub use config::{claude, env_vars, reference, trust};

/// The review of dynamic tools (`toolgate tools pending|approve|reject`),
/// for front ends: they reach the tool crates through the host only.
pub mod dynamic {
    pub use toolgate_dynamic::{DynamicError, review};
}

/// The scheduler of the `cron` group (`toolgate schedule`), for front
/// ends: they reach the tool crates through the host only.
pub mod cron {
    pub use toolgate_assistant::cron::{
        DaemonReporter, OUTCOME_FAILED, RunReport, SchedulerError, daemon_with, describe_job,
        describe_run, run_due,
    };
}

mod assembly;
mod atomic;
mod claim;
mod config;
mod delegation;
mod doctor;
mod error;
pub mod judge;
pub mod network;
mod own_state;
mod prompt;
mod rewind;
mod run;
mod saved_rules;
mod schedule;
mod secrets;

impl Host {
    /// A builder for a gate over this host's configuration.
    pub fn gate(&self) -> GateBuilder<'_> {
        GateBuilder::new(self)
    }
}
