//! Diagnostic tools, for checking a setup end to end.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

use toolgate_core::{
    Effects, EffectsError, Group, GroupContext, GroupError, Sensitivity, ToggleSection, Tool,
    ToolContext, ToolGroup, ToolResult, TypedTool,
};

/// The `diagnostics` group: `echo`, switched by `tools.echo.enabled`;
/// callable, never offered to a model, never a routing category.
#[derive(Debug, Clone, Copy, Default)]
pub struct DiagnosticsGroup;

impl Group for DiagnosticsGroup {
    fn name(&self) -> &'static str {
        "diagnostics"
    }

    fn section_key(&self) -> Option<&'static str> {
        Some("echo")
    }

    fn untrusted_keys(&self) -> &'static [&'static str] {
        &["enabled"]
    }

    fn tool_names(&self) -> &'static [&'static str] {
        &["echo"]
    }

    fn routed(&self) -> bool {
        false
    }

    fn build(&self, ctx: &GroupContext<'_>) -> Result<ToolGroup, GroupError> {
        let tools: Vec<Arc<dyn Tool>> = if ctx.section::<ToggleSection>()?.enabled {
            vec![Arc::new(Echo)]
        } else {
            Vec::new()
        };
        Ok(ToolGroup::new(self.name(), "", tools))
    }
}

/// Arguments of `echo`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EchoArgs {
    /// The text to send back.
    pub message: String,
    /// How many times to repeat it, one per line (1–100).
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 100))]
    pub repeat: u32,
}

fn one() -> u32 {
    1
}

/// `echo`: returns its message.
///
/// Marked sensitive on purpose, so that a call exercises the whole
/// confirmation path (prompt, headless refusal, dry-run, yolo) without
/// touching anything.
#[derive(Debug, Clone, Copy, Default)]
pub struct Echo;

#[async_trait]
impl TypedTool for Echo {
    type Args = EchoArgs;
    const NAME: &'static str = "echo";
    const DESCRIPTION: &'static str = "Diagnostic: return `message` unchanged (repeated `repeat` times). \
        It changes nothing but is marked sensitive, so it asks for confirmation like a write would.";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;
    const DIAGNOSTIC: bool = true;

    /// None: it is sensitive only to exercise confirmation.
    fn effects(&self, _args: &EchoArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, args: EchoArgs, _ctx: &ToolContext) -> ToolResult {
        let lines = vec![args.message.as_str(); args.repeat as usize];
        ToolResult::success(lines.join("\n"))
            .with_metadata("bytes", args.message.len() * lines.len())
    }
}
