//! The interfaces the gate's pluggable steps implement.
//!
//! Guardrails (step 3), `pre_tool_use` hooks (step 4) and `post_tool_use`
//! hooks (step 8) are separate components; the gate only knows them through
//! these traits. The defaults ([`NoGuardrails`], [`NoHooks`]) do nothing.

use async_trait::async_trait;
use serde_json::Value;
use toolgate_core::{Effects, RegisteredTool, ToolResult};

/// What a stage sees of the call in progress.
#[derive(Debug, Clone, Copy)]
pub struct CallView<'a> {
    /// The tool being called.
    pub tool: &'a RegisteredTool,
    /// The arguments as they stand at this step (after any hook rewrite).
    pub args: &'a Value,
    /// What the call will do, worked out by the tool from these arguments.
    /// Stages decide on these, never on the tool's name.
    pub effects: &'a Effects,
    /// The call's id.
    pub call_id: &'a str,
    /// The agent session, if any.
    pub session_id: Option<&'a str>,
}

/// A guardrail refusal: why the call may not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardrailBlock {
    /// The reason, shown to the model as `guardrail: <reason>`.
    pub reason: String,
}

/// Step 3: deterministic rules the model cannot switch off.
///
/// Runs before any hook, and again on arguments rewritten by a hook, so a
/// hook can never smuggle a forbidden call past it.
#[async_trait]
pub trait Guardrails: Send + Sync {
    /// Refuses the call, or lets it through.
    async fn check(&self, call: &CallView<'_>) -> Result<(), GuardrailBlock>;

    /// Told about every executed call and its result (for limits such as
    /// `max_files_modified`). By default, does nothing.
    async fn observe(&self, _call: &CallView<'_>, _result: &ToolResult) {}

    /// Warnings about a call that may run (a `warn` code rule), appended to
    /// its result. Asked once, on the arguments that will run. By default,
    /// none.
    async fn notes(&self, _call: &CallView<'_>) -> Vec<String> {
        Vec::new()
    }

    /// What this stage enforces, for [`ExecutionEngine::stages`](crate::ExecutionEngine::stages).
    /// By default, the type's name.
    fn describe(&self) -> Value {
        Value::from(std::any::type_name::<Self>())
    }
}

/// What the `pre_tool_use` hooks decided.
#[derive(Debug, Clone, PartialEq)]
pub enum PreToolOutcome {
    /// No objection.
    Continue {
        /// New arguments to use instead (`updatedInput`). The gate validates
        /// and guardrail-checks them again.
        updated_input: Option<Value>,
        /// Text to append to the result the model sees (`additionalContext`).
        additional_context: Vec<String>,
    },
    /// The call must not run.
    Block {
        /// The hook that blocked it.
        hook: String,
        /// Why, shown to the model.
        reason: String,
    },
}

impl PreToolOutcome {
    /// No objection, no rewrite, no context.
    pub fn allow() -> Self {
        Self::Continue {
            updated_input: None,
            additional_context: Vec::new(),
        }
    }
}

/// Step 4: hooks that run before a call and may block or rewrite it.
#[async_trait]
pub trait PreToolUse: Send + Sync {
    /// Runs the hooks that match this call.
    async fn pre_tool_use(&self, call: &CallView<'_>) -> PreToolOutcome;

    /// What this stage runs, for [`ExecutionEngine::stages`](crate::ExecutionEngine::stages).
    /// By default, the type's name.
    fn describe(&self) -> Value {
        Value::from(std::any::type_name::<Self>())
    }
}

/// Step 8: hooks that run after a call and may add to its result.
#[async_trait]
pub trait PostToolUse: Send + Sync {
    /// Runs the hooks that match this call; returns the texts to append to the
    /// result the model sees (`additionalContext`, failing hooks' output).
    async fn post_tool_use(&self, call: &CallView<'_>, result: &ToolResult) -> Vec<String>;

    /// What this stage runs, for [`ExecutionEngine::stages`](crate::ExecutionEngine::stages).
    /// By default, the type's name.
    fn describe(&self) -> Value {
        Value::from(std::any::type_name::<Self>())
    }
}

/// Guardrails that allow everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoGuardrails;

#[async_trait]
impl Guardrails for NoGuardrails {
    async fn check(&self, _call: &CallView<'_>) -> Result<(), GuardrailBlock> {
        Ok(())
    }
}

/// Hooks that do nothing, before or after.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

#[async_trait]
impl PreToolUse for NoHooks {
    async fn pre_tool_use(&self, _call: &CallView<'_>) -> PreToolOutcome {
        PreToolOutcome::allow()
    }
}

#[async_trait]
impl PostToolUse for NoHooks {
    async fn post_tool_use(&self, _call: &CallView<'_>, _result: &ToolResult) -> Vec<String> {
        Vec::new()
    }
}
