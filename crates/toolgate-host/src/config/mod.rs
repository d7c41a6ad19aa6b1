//! Configuration: the typed sections, and loading them in layers.
//!
//! # Rules
//!
//! Layers are applied in this order, a later layer winning key by key
//! (mappings merge; scalars and lists replace):
//!
//! 1. built-in defaults;
//! 2. the workspace file, `WORKSPACE/toolgate.yaml` (or the file given by
//!    `--config` / `TOOLGATE_CONFIG`, which must exist) — only the keys
//!    [`crate::config::trust`] lets apply untrusted, unless the file is trusted;
//! 3. the user file, `$XDG_CONFIG_HOME/toolgate/config.yaml` or
//!    `~/.config/toolgate/config.yaml`;
//! 4. `TOOLGATE_<SECTION>__<KEY>` environment variables;
//! 5. command-line flags (`--mode`, `--dry-run`).
//!
//! Each layer is checked on its own before merging, so an unknown key or a
//! wrong type is reported with the layer it came from (file and line, or the
//! variable's name). Relative paths in the configuration are relative to the
//! workspace root.
//!
//! The workspace file is read once: the bytes hashed for the trust check
//! are the bytes parsed, so the file cannot change between the check and
//! the use.

mod commands;
pub mod env_vars;
mod error;
mod llm;
pub(crate) mod load;
pub(crate) mod network;
mod paths;
pub(crate) mod rules_file;
mod skills;
mod store;
pub mod trust;
mod ui;
mod workspace;
pub(crate) mod yaml_edit;

use serde::{Deserialize, Serialize};

pub use commands::{CommandsSection, EnvSection, LimitsSection, SandboxSetting};
pub use error::{ConfigError, LoadError, Source};
pub use llm::{LlmProvider, LlmSection, TextToolCalls};
pub(crate) use load::load;
pub use load::{Loaded, Overrides, ProjectFile, ProjectStatus};
pub use paths::trust_store_path;
pub(crate) use paths::{user_config_dir, user_config_path};
pub use skills::SkillsSection;
pub use store::{AuditSection, StoreSection};
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
