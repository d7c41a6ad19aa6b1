//! `skills:` — discovery of skills (`SKILL.md`) and the `skill` tool.

use serde::{Deserialize, Serialize};

/// The `skills` section of the configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct SkillsSection {
    /// Whether skills are discovered and the `skill` tool offered. Default:
    /// true.
    pub enabled: bool,
    /// Skill names never offered. Default: none.
    pub disabled: Vec<String>,
}

impl Default for SkillsSection {
    fn default() -> Self {
        Self {
            enabled: true,
            disabled: Vec::new(),
        }
    }
}
