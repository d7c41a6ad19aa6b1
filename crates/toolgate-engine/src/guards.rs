//! Built-in guardrails (step 3).

use std::sync::Arc;

use async_trait::async_trait;
use toolgate_core::{CommandClass, Effect};
use toolgate_policy::{CommandPolicy, VerdictKind};

use crate::stages::{CallView, GuardrailBlock, Guardrails};

/// The command rules that hold before anyone is asked: the blocklist
/// (every mode, yolo included) and `commands.allowed_only`.
///
/// # Rules
///
/// 1. Every command line among the call's declared effects
///    ([`Effect::Command`]: a command `run_command` starts, text written to a
///    background process's stdin) is judged, whichever tool declares it.
/// 2. A command the [`CommandPolicy`] blocks is refused, with its reason.
/// 3. With `allowed_only`, a command classified `dangerous` is refused too.
/// 4. Everything else passes; confirmation (step 5) decides by class.
///
/// Running here, at step 3, means a blocked command never reaches a hook or
/// a confirmation prompt: nobody is asked to approve what would be refused.
#[derive(Debug, Clone)]
pub struct CommandGuard {
    policy: Arc<CommandPolicy>,
    allowed_only: bool,
}

impl CommandGuard {
    /// A guard classifying with `policy`; with `allowed_only`, `dangerous`
    /// commands are refused as well as blocked ones.
    pub fn new(policy: Arc<CommandPolicy>, allowed_only: bool) -> Self {
        Self {
            policy,
            allowed_only,
        }
    }
}

#[async_trait]
impl Guardrails for CommandGuard {
    async fn check(&self, call: &CallView<'_>) -> Result<(), GuardrailBlock> {
        for effect in call.effects.list() {
            if let Effect::Command { command, .. } = effect {
                self.judge(command)?;
            }
        }
        Ok(())
    }
}

impl CommandGuard {
    fn judge(&self, command: &str) -> Result<(), GuardrailBlock> {
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
