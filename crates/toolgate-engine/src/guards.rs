//! Built-in guardrails (step 3).

use std::sync::Arc;

use async_trait::async_trait;
use toolgate_core::CommandClass;
use toolgate_policy::{CommandPolicy, VerdictKind};

use crate::stages::{CallView, GuardrailBlock, Guardrails};

/// The command rules that hold before anyone is asked: the blocklist
/// (every mode, yolo included) and `commands.allowed_only`.
///
/// # Rules
///
/// 1. Only calls of the command tool (by default `run_command`) with a
///    string `command` argument are looked at.
/// 2. A command the [`CommandPolicy`] blocks is refused, with its reason.
/// 3. With `allowed_only`, a command classified `dangerous` is refused too.
/// 4. Everything else passes; confirmation (step 5) decides by class.
///
/// Running here, at step 3, means a blocked command never reaches a hook or
/// a confirmation prompt: nobody is asked to approve what would be refused.
#[derive(Debug, Clone)]
pub struct CommandGuard {
    policy: Arc<CommandPolicy>,
    tool: String,
    allowed_only: bool,
}

impl CommandGuard {
    /// A guard classifying with `policy`; with `allowed_only`, `dangerous`
    /// commands are refused as well as blocked ones.
    pub fn new(policy: Arc<CommandPolicy>, allowed_only: bool) -> Self {
        Self {
            policy,
            tool: "run_command".to_owned(),
            allowed_only,
        }
    }
}

#[async_trait]
impl Guardrails for CommandGuard {
    async fn check(&self, call: &CallView<'_>) -> Result<(), GuardrailBlock> {
        if call.tool.name() != self.tool {
            return Ok(());
        }
        let Some(command) = call.args.get("command").and_then(serde_json::Value::as_str) else {
            return Ok(());
        };
        let verdict = self.policy.classify(command);
        match verdict.kind() {
            VerdictKind::Blocked => Err(GuardrailBlock {
                reason: format!(
                    "blocked command: {}; it is refused in every mode",
                    verdict.reason()
                ),
            }),
            VerdictKind::Class(CommandClass::Dangerous) if self.allowed_only => {
                Err(GuardrailBlock {
                    reason: format!(
                        "command classified dangerous ({}) and commands.allowed_only is on; only safe and dev commands may run",
                        verdict.reason()
                    ),
                })
            }
            VerdictKind::Class(_) => Ok(()),
        }
    }
}
