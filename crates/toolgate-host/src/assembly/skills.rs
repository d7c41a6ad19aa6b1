//! Skills (`SKILL.md`, the open Agent Skills format) as a host serves them:
//! found once per host, offered as the `skills` tool group, their bodies
//! given on activation or with the first use of a tool they name.
//!
//! # Rules
//!
//! 1. Skills are found in `.agents/skills/*/` from the workspace up to its
//!    git root, in `~/.agents/skills/*/` and in `skills/*/` of toolgate's
//!    configuration directory, nearest first ([`toolgate_skills::discover`]).
//!    `skills.enabled: false` turns all of it off; `skills.disabled` drops
//!    skills by name.
//! 2. With at least one skill, the `skills` group holds the `skill` tool;
//!    its prompt block is the catalog: names and descriptions, never
//!    bodies.
//! 3. Each gate has its own [`Activations`] (one per run), shared by its
//!    `skill` tool and the run's lazy instructions ([`SkillInstructions`]),
//!    so a body reaches the model at most once per run.
//! 4. A skill's scripts run with `run_command` like any command; the user's
//!    skills directories outside the workspace are readable, never
//!    writable, by sandboxed processes.
//! 5. A broken skill is reported (`toolgate skills list`, `toolgate
//!    doctor`) and skipped; it never stops a run.

use std::path::PathBuf;
use std::sync::Arc;

use toolgate_agent::ToolInstructions;
use toolgate_core::{Group, GroupContext, GroupError, ToolGroup};
use toolgate_skills::{
    Activations, DiscoverOptions, Discovery, Skill, SkillTool, catalog_block, discover,
};

use crate::assembly::host::Host;
use crate::config::env_vars;
use crate::config::user_config_dir;

impl Host {
    /// Where skills are looked for: the workspace, the home directory
    /// (`HOME`) and toolgate's configuration directory.
    pub fn skill_options(&self) -> DiscoverOptions {
        let mut options = DiscoverOptions::new(self.workspace());
        if let Some(home) = self.home_dir() {
            options = options.home(home);
        }
        if let Some(dir) = user_config_dir(self.env()) {
            options = options.config_dir(dir);
        }
        options
    }

    /// The skills found (rule 1), once per host; empty when
    /// `skills.enabled` is false. Disabled skills are left out.
    pub fn skills(&self) -> &Discovery {
        self.skills.get_or_init(|| {
            let config = &self.config().skills;
            if !config.enabled {
                return Discovery::default();
            }
            let mut found = discover(&self.skill_options());
            found
                .skills
                .retain(|s| !config.disabled.iter().any(|d| d == &s.name));
            for error in &found.errors {
                tracing::info!(%error, "skill skipped");
            }
            found
        })
    }

    /// The user's skills directories that exist (home and configuration):
    /// readable by sandboxed processes (rule 4).
    pub(crate) fn user_skill_dirs(&self) -> Vec<PathBuf> {
        if !self.config().skills.enabled {
            return Vec::new();
        }
        self.skill_options()
            .roots()
            .into_iter()
            .filter(|root| root.origin != toolgate_skills::SkillOrigin::Workspace)
            .map(|root| root.path)
            .filter(|path| path.is_dir())
            .collect()
    }

    /// Where `toolgate skills create|install` writes: the workspace's
    /// `.agents/skills`, or with `user`, `~/.agents/skills`.
    pub fn skill_install_root(&self, user: bool) -> Option<PathBuf> {
        if user {
            self.home_dir()
                .map(|home| home.join(".agents").join("skills"))
        } else {
            Some(self.workspace().join(".agents").join("skills"))
        }
    }

    /// A fresh record of activations over the skills found (rule 3).
    pub fn skill_activations(&self) -> Activations {
        Activations::new(self.skills().skills.iter().cloned())
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.env_var(env_vars::HOME)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    }
}

/// Lazy instructions (seed 003): a skill's body with the result of the
/// first call of a tool the skill names in `allowed-tools`.
#[derive(Debug, Clone)]
pub struct SkillInstructions {
    activations: Activations,
}

impl SkillInstructions {
    /// Instructions from these activations (the gate's).
    pub fn new(activations: Activations) -> Self {
        Self { activations }
    }
}

impl ToolInstructions for SkillInstructions {
    fn on_tool_used(&self, tool: &str) -> Option<String> {
        let given = self.activations.on_tool_used(tool);
        if given.is_empty() {
            return None;
        }
        Some(
            given
                .into_iter()
                .map(|a| a.text)
                .collect::<Vec<_>>()
                .join("\n\n"),
        )
    }
}

/// The `skills` group: the `skill` tool over the skills found, their
/// catalog as its prompt block; nothing when none was found (or
/// `skills.enabled` is off). Parts: the skills found (`Vec<Skill>`) and the
/// gate's [`Activations`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SkillsGroup;

impl Group for SkillsGroup {
    fn name(&self) -> &'static str {
        "skills"
    }

    fn tool_names(&self) -> &'static [&'static str] {
        const NAMES: &[&str] = &[toolgate_skills::SkillTool::NAME];
        NAMES
    }

    fn build(&self, ctx: &GroupContext<'_>) -> Result<ToolGroup, GroupError> {
        let skills = ctx.part::<Vec<Skill>>()?;
        if skills.is_empty() {
            return Ok(ToolGroup::new(self.name(), "", Vec::new()));
        }
        Ok(ToolGroup::new(
            self.name(),
            catalog_block(&skills),
            vec![Arc::new(SkillTool::new(ctx.part::<Activations>()?))],
        ))
    }
}
