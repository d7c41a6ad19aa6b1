//! System prompts built from parts (seed 002's `SystemPromptBuilder`).
//!
//! # Rules
//!
//! The prompt is these parts, in this order, each only when it applies:
//!
//! 1. The preamble of the prompt mode: `autonomous` says nobody will answer
//!    questions and the work goes on to the end; `collaboration` says
//!    another agent is the one asking; `conversation` adds nothing.
//! 2. The agent's role (its `system_prompt`).
//! 3. The edit hierarchy of seed 000, when the agent may edit files:
//!    `edit_file` for one block, then `apply_patch`, then `write_file`.
//! 4. Facts about the environment: workspace root, operating system,
//!    shell, date and time zone, whether the workspace is a git repository,
//!    and the sandbox commands run in.
//! 5. One instruction block per tool group the agent is offered tools of.
//! 6. The persona (`SOUL.md`, `IDENTITY.md`, open goals), when that group
//!    is enabled.
//! 7. The workspace's `AGENTS.md`, cut to [`AGENTS_MD_CAP`] bytes.
//!
//! Parts are separated by a blank line; nothing is repeated.
//!
//! A compact prompt ([`PromptBuilder::compact`], the small profile) is the
//! preamble, the role, [`SMALL_RULES`], the workspace root on one line and
//! `AGENTS.md` cut to [`AGENTS_MD_SMALL_CAP`] bytes: no edit hierarchy,
//! other environment facts, group blocks or persona.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// The most of a workspace's `AGENTS.md` a prompt carries.
pub const AGENTS_MD_CAP: usize = 4096;

/// The most of a workspace's `AGENTS.md` a compact prompt carries.
pub const AGENTS_MD_SMALL_CAP: usize = 1024;

/// How a small-profile model is told to work.
pub const SMALL_RULES: &str = "Work in small steps: make exactly one tool call per reply, then wait for its result. Read a file before you answer about it or change it. To change a file, write its whole new content with write_file. Never invent file contents, versions or results: look them up. When the task is done, call finish with your answer.";

/// How an agent is addressed (seed 002's prompt modes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PromptMode {
    /// A person asks and reads the answers. The default.
    #[default]
    Conversation,
    /// Another agent asks (delegation, collaboration).
    Collaboration,
    /// Nobody is watching: the agent works to the end on its own (a
    /// scheduled job).
    Autonomous,
}

/// Facts about where the agent works (rule 4).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Environment {
    /// The workspace root.
    pub workspace: String,
    /// The operating system (`linux`).
    pub os: String,
    /// The shell commands run in (`bash`).
    pub shell: String,
    /// The date, time and time zone (`2026-11-25 18:55 Europe/Madrid`).
    pub now: String,
    /// Whether the workspace is a git repository.
    pub git: bool,
    /// What the sandbox enforces, in a few words.
    pub sandbox: String,
}

/// Builds a system prompt from parts (see the module's rules).
#[derive(Debug, Clone, Default)]
pub struct PromptBuilder {
    mode: PromptMode,
    role: String,
    edits: bool,
    environment: Option<Environment>,
    blocks: Vec<String>,
    persona: Option<String>,
    agents_md: Option<String>,
    compact: bool,
}

impl PromptBuilder {
    /// A prompt for an agent whose role is `role`.
    pub fn new(role: impl Into<String>) -> Self {
        Self {
            role: role.into(),
            ..Self::default()
        }
    }

    /// The prompt mode. By default, [`PromptMode::Conversation`].
    #[must_use]
    pub fn mode(mut self, mode: PromptMode) -> Self {
        self.mode = mode;
        self
    }

    /// Whether the agent may edit files (rule 3). By default, no.
    #[must_use]
    pub fn edits(mut self, yes: bool) -> Self {
        self.edits = yes;
        self
    }

    /// The environment facts (rule 4). By default, none.
    #[must_use]
    pub fn environment(mut self, environment: Environment) -> Self {
        self.environment = Some(environment);
        self
    }

    /// Adds the instruction block of a tool group (rule 5); a block given
    /// twice is kept once.
    #[must_use]
    pub fn block(mut self, text: impl Into<String>) -> Self {
        let text = text.into();
        if !text.trim().is_empty() && !self.blocks.contains(&text) {
            self.blocks.push(text);
        }
        self
    }

    /// The persona (rule 6). By default, none.
    #[must_use]
    pub fn persona(mut self, text: Option<String>) -> Self {
        self.persona = text.filter(|t| !t.trim().is_empty());
        self
    }

    /// The workspace's `AGENTS.md` (rule 7), cut to [`AGENTS_MD_CAP`] bytes.
    /// By default, none.
    #[must_use]
    pub fn agents_md(mut self, text: Option<String>) -> Self {
        self.agents_md = text.filter(|t| !t.trim().is_empty());
        self
    }

    /// Whether the prompt is the compact one of the small profile (see
    /// the module's rules). By default, no.
    #[must_use]
    pub fn compact(mut self, yes: bool) -> Self {
        self.compact = yes;
        self
    }

    /// The prompt.
    pub fn build(&self) -> String {
        if self.compact {
            return self.build_compact();
        }
        let mut parts: Vec<String> = self.preamble().map(str::to_owned).into_iter().collect();
        if !self.role.trim().is_empty() {
            parts.push(self.role.trim().to_owned());
        }
        if self.edits {
            parts.push(
                "To change files, prefer in this order:\n\
                 1. edit_file: replace one exact block of text (best for one change).\n\
                 2. apply_patch: several changes, or a diff you already have.\n\
                 3. write_file: a new file, or rewriting a whole file.\n\
                 Read a file before you edit it."
                    .to_owned(),
            );
        }
        if let Some(env) = &self.environment {
            let mut text = String::from("Environment:\n");
            let _ = writeln!(text, "- workspace: {}", env.workspace);
            let _ = writeln!(text, "- system: {}, shell {}", env.os, env.shell);
            let _ = writeln!(text, "- now: {}", env.now);
            let _ = writeln!(
                text,
                "- git repository: {}",
                if env.git { "yes" } else { "no" }
            );
            let _ = write!(text, "- sandbox: {}", env.sandbox);
            parts.push(text);
        }
        parts.extend(self.blocks.iter().map(|b| b.trim().to_owned()));
        if let Some(persona) = &self.persona {
            parts.push(persona.trim().to_owned());
        }
        self.push_agents_md(&mut parts, AGENTS_MD_CAP);
        parts.join("\n\n")
    }

    /// The preamble of the prompt mode (rule 1), if any.
    fn preamble(&self) -> Option<&'static str> {
        match self.mode {
            PromptMode::Conversation => None,
            PromptMode::Collaboration => Some(
                "Another agent is asking you for help. Answer it directly and briefly; it \
                 cannot see your tool calls, only your final answer.",
            ),
            PromptMode::Autonomous => Some(
                "You are working on your own: nobody will answer questions or confirm \
                 anything. Decide, act with your tools, and keep going until the task is done; \
                 then say what you did.",
            ),
        }
    }

    /// The compact prompt (the module's last paragraph).
    fn build_compact(&self) -> String {
        let mut parts: Vec<String> = self.preamble().map(str::to_owned).into_iter().collect();
        if !self.role.trim().is_empty() {
            parts.push(self.role.trim().to_owned());
        }
        parts.push(SMALL_RULES.to_owned());
        if let Some(env) = &self.environment {
            parts.push(format!("Workspace: {}", env.workspace));
        }
        self.push_agents_md(&mut parts, AGENTS_MD_SMALL_CAP);
        parts.join("\n\n")
    }

    /// `AGENTS.md` cut to `cap` bytes (rule 7).
    fn push_agents_md(&self, parts: &mut Vec<String>, cap: usize) {
        if let Some(agents) = &self.agents_md {
            let mut text = agents.trim().to_owned();
            if text.len() > cap {
                let mut end = cap;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text.truncate(end);
                text.push_str("\n[… AGENTS.md cut here]");
            }
            parts.push(format!(
                "Instructions from the workspace's AGENTS.md:\n{text}"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_in_order_and_only_when_they_apply() {
        let env = Environment {
            workspace: "/w".into(),
            os: "linux".into(),
            shell: "bash".into(),
            now: "2026-11-25 18:55 UTC".into(),
            git: true,
            sandbox: "full".into(),
        };
        let prompt = PromptBuilder::new("You are a builder.")
            .mode(PromptMode::Autonomous)
            .edits(true)
            .environment(env)
            .block("## Search\nUse grep.")
            .block("## Search\nUse grep.")
            .persona(Some("I am Ada.".into()))
            .agents_md(Some("x".repeat(AGENTS_MD_CAP + 100)))
            .build();
        let at = |s: &str| prompt.find(s).unwrap_or_else(|| panic!("{s} missing"));
        assert!(at("working on your own") < at("You are a builder."));
        assert!(at("You are a builder.") < at("1. edit_file"));
        assert!(at("1. edit_file") < at("- workspace: /w"));
        assert!(at("- git repository: yes") < at("## Search"));
        assert_eq!(prompt.matches("## Search").count(), 1);
        assert!(at("## Search") < at("I am Ada."));
        assert!(at("I am Ada.") < at("AGENTS.md:"));
        assert!(prompt.ends_with("[… AGENTS.md cut here]"));
        assert!(prompt.len() < AGENTS_MD_CAP + 1000);

        let plain = PromptBuilder::new("Plan.").build();
        assert_eq!(plain, "Plan.");

        let small = PromptBuilder::new("You are a builder.")
            .edits(true)
            .environment(Environment {
                workspace: "/w".into(),
                ..Environment::default()
            })
            .block("## Search\nUse grep.")
            .persona(Some("I am Ada.".into()))
            .agents_md(Some("x".repeat(AGENTS_MD_CAP)))
            .compact(true)
            .build();
        assert!(small.starts_with("You are a builder.\n\nWork in small steps"));
        assert!(small.contains("\n\nWorkspace: /w\n\n"), "{small}");
        for absent in ["edit_file", "## Search", "I am Ada.", "- system:"] {
            assert!(!small.contains(absent), "{absent} in {small}");
        }
        assert!(small.len() < AGENTS_MD_SMALL_CAP + SMALL_RULES.len() + 200);
    }
}
