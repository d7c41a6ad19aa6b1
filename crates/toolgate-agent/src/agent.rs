//! Agent definitions: `build`, `plan`, `review` and custom agents.

use std::collections::BTreeMap;

use toolgate_core::Registry;

use crate::profile::Profile;
use crate::prompt::PromptMode;

/// Default step budget.
pub const DEFAULT_MAX_STEPS: u32 = 25;

/// Default number of identical calls in a row that ends a run.
pub const DEFAULT_MAX_REPEATED_CALLS: u32 = 3;

/// Default number of calls one reply may make; the rest are not run.
pub const DEFAULT_MAX_CALLS_PER_STEP: u32 = 8;

/// Who the model is asked to be and what it may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDef {
    /// The agent's name.
    pub name: String,
    /// The system prompt.
    pub system_prompt: String,
    /// Explicit tool names; `None` = every registered tool (filtered by
    /// `read_only`).
    pub allowed_tools: Option<Vec<String>>,
    /// Only read-only tools (by their annotations).
    pub read_only: bool,
    /// Confirmation mode (`yolo`, `confirm-sensitive`, `confirm-all`);
    /// `None` = the global one.
    pub mode: Option<String>,
    /// Step budget.
    pub max_steps: u32,
    /// The same call (tool and arguments) this many times in a row ends the
    /// run as partial. By default, 3.
    pub max_repeated_calls: u32,
    /// At most this many calls of one reply run (after identical calls of
    /// the reply are made one); the model is told which were not. By
    /// default, 8.
    pub max_calls_per_step: u32,
    /// How the agent is addressed. By default, a conversation.
    pub prompt_mode: PromptMode,
    /// Tools the agent never gets, even when `allowed_tools` or "every
    /// tool" would give them (seed 002's per-bot `disabledTools`).
    pub disabled_tools: Vec<String>,
    /// The agents it may hand work to with `delegate` and `collaborate`;
    /// empty: those tools are not offered (see [`crate::delegate`]).
    pub delegate_to: Vec<String>,
    /// How much of the runtime its model gets ([`Profile`]). By default,
    /// `auto`, which a runner treats as `standard` until
    /// [`AgentDef::with_model`] resolves it.
    pub profile: Profile,
    /// Whether a run looks before it answers and checks before it
    /// finishes (the runner's task checks). By default, yes.
    pub task_checks: bool,
}

/// A custom agent as written in the `agents` config section.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// The system prompt.
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// Tool names the agent may use.
    #[serde(default)]
    pub allowed_tools: Option<Vec<String>>,
    /// Confirmation mode.
    #[serde(default)]
    pub mode: Option<String>,
    /// Step budget.
    #[serde(default)]
    pub max_steps: Option<u32>,
    /// The same tool call this many times in a row ends the run as partial
    /// (default 3).
    #[serde(default)]
    pub max_repeated_calls: Option<u32>,
    /// At most this many calls of one reply run (default 8).
    #[serde(default)]
    pub max_calls_per_step: Option<u32>,
    /// `conversation` (default), `collaboration` or `autonomous`.
    #[serde(default)]
    pub prompt_mode: Option<PromptMode>,
    /// Tools the agent never gets.
    #[serde(default)]
    pub disabled_tools: Option<Vec<String>>,
    /// Agents it may delegate to and collaborate with.
    #[serde(default)]
    pub delegate_to: Option<Vec<String>>,
    /// `auto` (default), `small` or `standard`: how much of the runtime
    /// the model gets (a handful of tools, one call a step, short outputs
    /// and `finish` for `small`).
    #[serde(default)]
    pub profile: Option<Profile>,
    /// Whether a run must read the files and run the commands its task
    /// names before it answers, and see a command the task says must pass
    /// pass before it finishes (default true).
    #[serde(default)]
    pub task_checks: Option<bool>,
}

const BUILD_PROMPT: &str = "You are a careful software engineer working in the user's \
workspace through tools. Read before you edit, make small correct changes, and finish with a \
short summary of what you did.";
const PLAN_PROMPT: &str = "You are a planner. Read the workspace with the read-only tools and \
answer with a concrete, numbered plan. Do not change anything.";
const REVIEW_PROMPT: &str = "You are a code reviewer. Read the workspace with the read-only \
tools and answer with findings ordered by severity. Do not change anything.";

impl AgentDef {
    /// A built-in agent by name (`build`, `plan`, `review`).
    pub fn builtin(name: &str) -> Option<Self> {
        let (prompt, read_only, mode) = match name {
            "build" => (BUILD_PROMPT, false, None),
            "plan" => (PLAN_PROMPT, true, Some("yolo")),
            "review" => (REVIEW_PROMPT, true, Some("yolo")),
            _ => return None,
        };
        let mut def = Self::new(name, prompt);
        def.read_only = read_only;
        def.mode = mode.map(str::to_owned);
        Some(def)
    }

    /// An agent named `name` with `prompt`, every tool and the defaults.
    fn new(name: &str, prompt: &str) -> Self {
        Self {
            name: name.to_owned(),
            system_prompt: prompt.to_owned(),
            allowed_tools: None,
            read_only: false,
            mode: None,
            max_steps: DEFAULT_MAX_STEPS,
            max_repeated_calls: DEFAULT_MAX_REPEATED_CALLS,
            max_calls_per_step: DEFAULT_MAX_CALLS_PER_STEP,
            prompt_mode: PromptMode::default(),
            disabled_tools: Vec::new(),
            delegate_to: Vec::new(),
            profile: Profile::Auto,
            task_checks: true,
        }
    }

    /// Resolves `name` against the custom agents, then the built-ins. A
    /// custom agent with a built-in's name overrides the fields it sets.
    pub fn resolve(name: &str, custom: &BTreeMap<String, AgentConfig>) -> Option<Self> {
        let base = Self::builtin(name);
        let Some(cfg) = custom.get(name) else {
            return base;
        };
        let mut def = base.unwrap_or_else(|| Self::new(name, BUILD_PROMPT));
        if let Some(p) = &cfg.system_prompt {
            def.system_prompt.clone_from(p);
        }
        if let Some(t) = &cfg.allowed_tools {
            def.allowed_tools = Some(t.clone());
        }
        if let Some(m) = &cfg.mode {
            def.mode = Some(m.clone());
        }
        if let Some(n) = cfg.max_steps {
            def.max_steps = n;
        }
        if let Some(n) = cfg.max_repeated_calls {
            def.max_repeated_calls = n;
        }
        if let Some(n) = cfg.max_calls_per_step {
            def.max_calls_per_step = n.max(1);
        }
        if let Some(mode) = cfg.prompt_mode {
            def.prompt_mode = mode;
        }
        if let Some(tools) = &cfg.disabled_tools {
            def.disabled_tools.clone_from(tools);
        }
        if let Some(agents) = &cfg.delegate_to {
            def.delegate_to.clone_from(agents);
        }
        if let Some(profile) = cfg.profile {
            def.profile = profile;
        }
        if let Some(yes) = cfg.task_checks {
            def.task_checks = yes;
        }
        Some(def)
    }

    /// The agent for a model the server said `facts` about: its profile
    /// resolved ([`Profile::resolve`]); the small profile makes one call
    /// a step.
    #[must_use]
    pub fn with_model(mut self, facts: &crate::profile::ModelFacts) -> Self {
        self.profile = self.profile.resolve(facts);
        if self.profile == Profile::Small {
            self.max_calls_per_step = 1;
        }
        self
    }

    /// Whether the agent runs with the small profile.
    pub fn is_small(&self) -> bool {
        self.profile == Profile::Small
    }

    /// The agent as another agent runs it through `delegate` or
    /// `collaborate`: it cannot hand work on (no delegation tools, so no
    /// loop and no depth beyond one), it answers another agent
    /// ([`PromptMode::Collaboration`]), and with `collaboration_safe` only
    /// its read-only tools are offered.
    #[must_use]
    pub fn as_sub_agent(mut self, collaboration_safe: bool) -> Self {
        self.delegate_to.clear();
        self.prompt_mode = PromptMode::Collaboration;
        self.read_only |= collaboration_safe;
        self
    }

    /// Appends extra tools (e.g. MCP tools) to an explicit `allowed_tools`
    /// list. With no explicit list every tool is allowed already, so this
    /// changes nothing.
    #[must_use]
    pub fn with_extra_tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        if let Some(list) = &mut self.allowed_tools {
            for n in names {
                let n = n.into();
                if !list.contains(&n) {
                    list.push(n);
                }
            }
        }
        self
    }

    /// Whether the agent may call `tool` (it must also be registered, not
    /// be a diagnostic tool: those are never offered to a model, and be
    /// offered now: [`Tool::offered`](toolgate_core::Tool::offered)).
    /// `disabled_tools` always win; the delegation tools go only to an
    /// agent with `delegate_to`, whatever else says.
    pub fn allows(&self, registry: &Registry, tool: &str) -> bool {
        let Ok(entry) = registry.get(tool) else {
            return false;
        };
        if entry.tool().diagnostic()
            || !entry.tool().offered()
            || self.disabled_tools.iter().any(|t| t == tool)
        {
            return false;
        }
        if tool == crate::delegate::IMPROVE {
            return self.delegate_to.iter().any(|a| a == tool);
        }
        if crate::delegate::DELEGATION_TOOLS.contains(&tool) {
            return self
                .delegate_to
                .iter()
                .any(|a| a != crate::delegate::IMPROVE);
        }
        if self
            .allowed_tools
            .as_ref()
            .is_some_and(|l| !l.iter().any(|n| n == tool))
        {
            return false;
        }
        !self.read_only || entry.spec().annotations.read_only_hint == Some(true)
    }

    /// The names of the tools the agent may call, sorted.
    pub fn tool_names(&self, registry: &Registry) -> Vec<String> {
        registry
            .list()
            .iter()
            .map(|t| t.name().to_owned())
            .filter(|n| self.allows(registry, n))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_and_custom() {
        assert!(AgentDef::builtin("plan").is_some_and(|a| a.read_only));
        assert!(AgentDef::builtin("nope").is_none());
        let mut custom = BTreeMap::new();
        custom.insert(
            "docs".to_owned(),
            AgentConfig {
                allowed_tools: Some(vec!["read_file".into()]),
                max_steps: Some(3),
                ..AgentConfig::default()
            },
        );
        let d = AgentDef::resolve("docs", &custom).unwrap_or_else(|| unreachable!());
        assert_eq!(d.max_steps, 3);
        let d = d.with_extra_tools(["mcp__x"]);
        assert_eq!(
            d.allowed_tools,
            Some(vec!["read_file".to_owned(), "mcp__x".to_owned()])
        );
    }
}
