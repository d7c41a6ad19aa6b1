//! The system prompt of an agent, as `toolgate run` sends it.

use std::path::Path;

use toolgate_agent::{AgentDef, ContextBudget, Environment, PromptBuilder};
use toolgate_core::{Registry, SchemaFormat, TypedTool};
use toolgate_engine::{ExitPlanMode, PLAN_MODE_INSTRUCTIONS};

use crate::assembly::host::Host;
use crate::error::HostError;

/// The tool whose offer brings the instructions on creating tools.
const CREATE_TOOL: &str = <toolgate_dynamic::CreateTool as TypedTool>::NAME;

/// What an agent's first request carries beside the task: the system prompt
/// and the tool schemas, with their estimated sizes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct PromptReport {
    /// The system prompt.
    pub prompt: String,
    /// Its estimated size in tokens.
    pub prompt_tokens: usize,
    /// The tools offered, sorted.
    pub tools: Vec<String>,
    /// The estimated size of their schemas in tokens.
    pub tools_tokens: usize,
}

impl Host {
    /// The system prompt of `agent` over `registry`, offered the tools it
    /// may call there: its role, the edit hierarchy when one of them
    /// writes files (its spec says so:
    /// [`ToolAnnotations::writes_files`](toolgate_core::ToolAnnotations::writes_files)),
    /// the environment, the instruction blocks of the groups it has tools
    /// of, and the workspace's `AGENTS.md` (rules on
    /// [`PromptBuilder`](toolgate_agent::PromptBuilder)); for the small
    /// profile, the compact prompt.
    pub fn system_prompt(
        &self,
        agent: &AgentDef,
        registry: &Registry,
    ) -> Result<String, HostError> {
        let offered = agent.tool_names(registry);
        let edits = offered.iter().any(|t| {
            registry
                .get(t)
                .is_ok_and(|e| e.spec().annotations.writes_files)
        });
        let mut builder = PromptBuilder::new(&agent.system_prompt)
            .mode(agent.prompt_mode)
            .edits(edits)
            .environment(self.environment())
            .persona(self.persona()?)
            .agents_md(self.agents_md())
            .compact(agent.is_small());
        if offered.iter().any(|t| t == CREATE_TOOL) {
            builder = builder.block(toolgate_dynamic::INSTRUCTIONS);
        }
        // Offered only while the run is in plan mode: it starts there.
        if offered
            .iter()
            .any(|t| t == <ExitPlanMode as TypedTool>::NAME)
        {
            builder = builder.block(PLAN_MODE_INSTRUCTIONS);
        }
        for group in self.group_outlines()? {
            if group.tools.iter().any(|t| offered.contains(t)) {
                builder = builder.block(group.instructions.clone());
            }
        }
        Ok(builder.build())
    }

    /// The system prompt and tool schemas `agent` would get, with their
    /// sizes (`toolgate prompt show`), over `registry`.
    pub fn prompt_report(
        &self,
        agent: &AgentDef,
        registry: &Registry,
    ) -> Result<PromptReport, HostError> {
        let tools = agent.tool_names(registry);
        let prompt = self.system_prompt(agent, registry)?;
        let (tools, schemas) = if agent.is_small() {
            toolgate_agent::small_offer(registry, &tools)
        } else {
            let schemas = registry.schemas(Some(&tools), SchemaFormat::OpenAi);
            (tools, schemas)
        };
        let schema_bytes = serde_json::to_string(&schemas).map_or(0, |s| s.len());
        Ok(PromptReport {
            prompt_tokens: ContextBudget::tokens(prompt.len()),
            prompt,
            tools_tokens: ContextBudget::tokens(schema_bytes),
            tools,
        })
    }

    /// Facts about where the agent works.
    fn environment(&self) -> Environment {
        let zone = self
            .config()
            .tools
            .datetime
            .timezone
            .as_deref()
            .and_then(|z| jiff::tz::TimeZone::get(z).ok())
            .unwrap_or_else(jiff::tz::TimeZone::system);
        let now = jiff::Timestamp::now().to_zoned(zone.clone());
        let zone_name = zone.iana_name().unwrap_or("local time").to_owned();
        let sandbox = match self.sandbox() {
            Ok(sandbox) => format!("{} (commands run confined)", sandbox.status().level_name()),
            Err(_) => "unavailable (commands cannot run)".to_owned(),
        };
        let mut env = Environment::default();
        env.workspace = self.workspace().display().to_string();
        std::env::consts::OS.clone_into(&mut env.os);
        "bash".clone_into(&mut env.shell);
        env.now = format!("{} {zone_name}", now.strftime("%A %Y-%m-%d %H:%M"));
        env.git = in_git_repository(self.workspace());
        env.sandbox = sandbox;
        env
    }

    /// The persona files as the prompt carries them, when the persona
    /// group is enabled and they say something.
    fn persona(&self) -> Result<Option<String>, HostError> {
        if !self.config().tools.persona.enabled {
            return Ok(None);
        }
        Ok(toolgate_assistant::memory::persona::persona_prompt(
            &self.persona_dir()?,
        ))
    }

    /// The workspace's `AGENTS.md`, when it has one.
    fn agents_md(&self) -> Option<String> {
        let path = self.workspace().join("AGENTS.md");
        let bytes = std::fs::read(path).ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// Whether `dir` or a parent holds a `.git`.
fn in_git_repository(dir: &Path) -> bool {
    dir.ancestors().any(|d| d.join(".git").exists())
}
