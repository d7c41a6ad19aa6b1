//! Configuration data: the typed sections of `toolgate.yaml`, loading them
//! in layers, workspace trust, and the small edits toolgate makes to the
//! files. Nothing here starts or assembles the runtime (a section at most
//! converts itself into the value a library takes, as
//! [`LimitsSection::to_limits`] does); building the registry, the gate,
//! the model client and the stores from a [`Config`] is
//! [`Host`](crate::Host)'s (the `assembly` module).
//!
//! # Where things are
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | [`Config`], the whole file: one field per top-level section |
//! | `workspace.rs` | `workspace:` and `confirmation:` |
//! | `claude.rs` | `confirmation.import: [claude]`: Claude Code's settings read as rules and a mode |
//! | `commands.rs` | `commands:` with `env`, `sandbox` and `limits` |
//! | `network.rs` | `commands.network` and its three forms |
//! | `llm.rs` | `llm:`, the model client's settings |
//! | `store.rs` | `audit:` and `store:`, where things are recorded |
//! | `skills.rs` | `skills:` |
//! | `init.rs` | a model provider written to the user's file (`toolgate init`, `--provider`) |
//! | `ui.rs` | `ui:`, what the web UI saves |
//! | `load.rs` | the layers, [`Loaded`], [`Overrides`] (flags), [`ProjectFile`] |
//! | `error.rs` | [`LoadError`], [`ConfigError`]: which key, which layer, why |
//! | `paths.rs` | where the user's configuration and trust store live |
//! | `trust/` | the keys a workspace file may set before it is trusted (`mod.rs`), what the others would run (`review.rs`), the trust store (`store.rs`) |
//! | `reference.rs` | every key with its default and trust, as data (the generated `docs/config-keys.md`) |
//! | `env_vars.rs` | every environment variable toolgate reads |
//! | `rules_file.rs` (over the crate `toolgate-yaml-edit`) | edits of the user's file that keep its comments |
//!
//! Sections owned by another crate are that crate's types, used here as
//! they are: `hooks` and `guardrails` ([`toolgate_engine`]), `mcp`
//! ([`toolgate_mcp`]), `agents` and `routing` ([`toolgate_agent`]). The
//! `tools:` section is derived from the group catalog ([`crate::GROUPS`]):
//! a tool group's options are its own section type, in its own crate.
//!
//! # Adding a key
//!
//! 1. Add the field, with a doc comment that ends with its default
//!    (`Default: 120.`), to the section's type in the file above; give the
//!    default in the type's `Default`. A new top-level section is a new
//!    file with its type, a field of [`Config`], a line in the table above
//!    and a re-export in the crate root. A tool group's option goes on the
//!    group's section type instead.
//! 2. Validate it where it is read: a `deserialize_with` function or a
//!    type with its own `Deserialize` (see `llm.temperature`,
//!    `commands.limits`, `commands.network`), so a bad value is reported
//!    with its file and line, not later by whatever uses it.
//! 3. Decide trust: a key that runs a program or loosens policy needs
//!    nothing (it needs trust by default); a key that only tightens policy
//!    or is cosmetic goes in [`trust::APPLIES_UNTRUSTED`].
//! 4. Regenerate `docs/config-keys.md`, the table of every key with its
//!    default and trust that `reference.rs` reads off the defaults
//!    (`crates/toolgate-cli/tests/docs.rs` says how).
//!
//! How the layers combine, and in what order, is the `# Rules` section of
//! `load.rs`.

pub mod claude;
mod commands;
pub mod env_vars;
mod error;
pub(crate) mod init;
mod llm;
mod load;
pub(crate) mod network;
mod paths;
pub mod reference;
pub(crate) mod rules_file;
mod skills;
mod store;
pub mod trust;
mod ui;
mod workspace;

use serde::{Deserialize, Serialize};

pub use commands::{CommandsSection, EnvSection, LimitsSection, SandboxSetting};
pub use error::{ConfigError, LoadError, Source};
pub use llm::{Constrain, LlmProvider, LlmSection, Temperature, TextToolCalls};
pub(crate) use load::load;
pub use load::{Loaded, Overrides, ProjectFile, ProjectStatus};
pub use paths::trust_store_path;
pub(crate) use paths::{user_config_dir, user_config_path};
pub use skills::SkillsSection;
pub use store::{AuditSection, CheckpointsSection, StoreSection};
pub use ui::{AgentPermission, UiSection};
pub use workspace::{ConfirmationSection, WorkspaceSection};

/// The whole configuration.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// The workspace and file access.
    pub workspace: WorkspaceSection,
    /// When to ask before running a call.
    pub confirmation: ConfirmationSection,
    /// The JSONL audit file, and whether calls are audited in the store.
    pub audit: AuditSection,
    /// Where sessions, the audit and the assistant tools' data are kept.
    pub store: StoreSection,
    /// `run_command` and background processes.
    pub commands: CommandsSection,
    /// Per-tool options.
    pub tools: crate::assembly::catalog::ToolsSection,
    /// Lifecycle hooks (DESIGN.md §6).
    pub hooks: toolgate_engine::HooksConfig,
    /// Deterministic guardrails (DESIGN.md §7).
    pub guardrails: toolgate_engine::GuardrailsConfig,
    /// MCP servers whose tools are used as local tools.
    pub mcp: toolgate_mcp::McpConfig,
    /// The model `toolgate run` talks to.
    pub llm: LlmSection,
    /// Custom agents (and overrides of `build`, `plan`, `review`).
    pub agents: std::collections::BTreeMap<String, toolgate_agent::AgentConfig>,
    /// Intent routing: one cheap model call picks the tool categories a
    /// task needs, and only their tools are offered (off by default).
    pub routing: toolgate_agent::RoutingConfig,
    /// Skills (`SKILL.md`): discovery and the `skill` tool.
    pub skills: SkillsSection,
    /// The web UI (`toolgate ui`): each agent's permission toggle.
    pub ui: UiSection,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::NetworkSetting;

    #[test]
    fn every_allowed_key_exists() {
        // The allow-list names real keys: a typo there would silently keep
        // a key trust-only, and a rename would drop it from the list.
        let defaults = serde_yaml_ng::to_value(Config::default()).unwrap();
        // Keys of a value's mapping form (`commands.network: {deny: …}`).
        let mut other = Config::default();
        other.commands.network = NetworkSetting::Domains(crate::network::DomainLists::default());
        let other = serde_yaml_ng::to_value(other).unwrap();
        let agent = serde_yaml_ng::to_value(toolgate_agent::AgentConfig::default()).unwrap();
        let groups = crate::untrusted_tool_keys();
        for pattern in trust::APPLIES_UNTRUSTED
            .iter()
            .copied()
            .chain(groups.iter().map(String::as_str))
        {
            let found = match pattern.strip_prefix("agents.*.") {
                Some(field) => agent.get(field).is_some(),
                None => [&defaults, &other].into_iter().any(|config| {
                    pattern
                        .split('.')
                        .try_fold(config, |v, seg| v.get(seg))
                        .is_some()
                }),
            };
            assert!(found, "{pattern} is not a configuration key");
        }
    }
}
