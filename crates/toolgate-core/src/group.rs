//! A group of tools switched on and off together, with its block of the
//! system prompt.

use std::sync::Arc;

use crate::Tool;

/// A group of tools that is switched on and off together, with the block of
/// instructions the system prompt carries when the group's tools are
/// offered (seed 002's `SystemPromptBuilder` blocks).
#[derive(Clone)]
#[non_exhaustive]
pub struct ToolGroup {
    /// The group's name, as in `tools.<group>.enabled`.
    pub name: &'static str,
    /// Instructions for the model; empty when the tools' own descriptions
    /// say enough.
    pub instructions: std::borrow::Cow<'static, str>,
    /// The tools.
    pub tools: Vec<Arc<dyn Tool>>,
}

impl std::fmt::Debug for ToolGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.tools.iter().map(|t| t.name()).collect();
        f.debug_struct("ToolGroup")
            .field("name", &self.name)
            .field("tools", &names)
            .finish_non_exhaustive()
    }
}

impl ToolGroup {
    /// A group of `tools`.
    pub fn new(
        name: &'static str,
        instructions: impl Into<std::borrow::Cow<'static, str>>,
        tools: Vec<Arc<dyn Tool>>,
    ) -> Self {
        Self {
            name,
            instructions: instructions.into(),
            tools,
        }
    }
}
