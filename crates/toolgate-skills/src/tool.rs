//! The `skill` tool: the model asks for a skill's instructions by name.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use toolgate_core::{
    Effect, Effects, EffectsError, Sensitivity, Tool, ToolAnnotations, ToolContext, ToolResult,
    schema_for_args,
};

use crate::activate::Activations;

/// The most skill names listed in the tool's description; the catalog in
/// the system prompt has them all.
const MAX_NAMES_IN_DESCRIPTION: usize = 30;

/// Arguments of `skill`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillArgs {
    /// The skill's name, exactly as listed, e.g. `pdf-forms`.
    pub name: String,
}

/// `skill`: gives the model a skill's instructions
/// ([`Activations::activate`]).
///
/// Read-only and never asks for confirmation: it reads the skill's
/// SKILL.md, which it declares as an [`Effect::Read`] (so the sensitive-file
/// rules apply to it like to any read), and lists the skill's directory.
/// The SKILL.md path is absolute; the gate places it inside or outside the
/// workspace. An unknown name is a failed call whose message lists the
/// names there are.
#[derive(Debug, Clone)]
pub struct SkillTool {
    activations: Activations,
    description: String,
}

impl SkillTool {
    /// The tool's name: what the model calls and what the host and the
    /// agent loop look for in a run's history.
    pub const NAME: &'static str = "skill";

    /// The tool over these activations. Its description lists the skills'
    /// names as they are now.
    pub fn new(activations: Activations) -> Self {
        let names = activations.names();
        let mut description = String::from(
            "Load a skill: its instructions for a specific job. \
             Call it before starting a task a skill covers, e.g. {\"name\": \"pdf-forms\"}. ",
        );
        if names.is_empty() {
            description.push_str("No skills are installed.");
        } else {
            description.push_str("Skills: ");
            description.push_str(
                &names
                    .iter()
                    .take(MAX_NAMES_IN_DESCRIPTION)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
            );
            if names.len() > MAX_NAMES_IN_DESCRIPTION {
                description.push_str(", … (see the skills list)");
            }
            description.push('.');
        }
        Self {
            activations,
            description,
        }
    }
}

#[async_trait]
impl Tool for SkillTool {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn args_schema(&self) -> Value {
        schema_for_args::<SkillArgs>()
    }

    fn sensitivity(&self, _args: &Value) -> Sensitivity {
        Sensitivity::ReadOnly
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            title: Some("Load a skill".to_owned()),
            // The second call with the same name only says "already active".
            idempotent_hint: Some(true),
            ..ToolAnnotations::from_sensitivity(Sensitivity::ReadOnly)
        }
    }

    /// A read of the skill's SKILL.md; nothing for an unknown name, which
    /// fails without reading anything.
    fn effects(&self, args: &Value) -> Result<Effects, EffectsError> {
        let args = SkillArgs::deserialize(args)
            .map_err(|error| EffectsError::new(format!("invalid arguments: {error}")))?;
        Ok(match self.activations.skill(&args.name) {
            Some(skill) => Effects::known([Effect::read(skill.file.display().to_string())]),
            None => Effects::none(),
        })
    }

    async fn execute(&self, args: Value, _ctx: &ToolContext) -> ToolResult {
        let args = match SkillArgs::deserialize(&args) {
            Ok(args) => args,
            Err(error) => return ToolResult::failure(format!("invalid arguments: {error}")),
        };
        match self.activations.activate(&args.name) {
            Ok(activated) => ToolResult::success(activated.text)
                .with_metadata("skill", activated.name)
                .with_metadata("already_active", activated.already_active),
            Err(error) => ToolResult::failure(error.to_string()),
        }
    }
}
