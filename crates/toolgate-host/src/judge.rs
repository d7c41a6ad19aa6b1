//! How `run_command` would judge a command line before running it: the
//! classifier's verdict, then the guardrails the gate applies to the call
//! (sensitive and protected files, `guardrails.blocked_commands`, the
//! allow-list), so that `toolgate classify` says what the gate would do.

use serde::Serialize;
use serde_json::json;
use toolgate_engine::{CallView, Guardrails as _};
use toolgate_policy::Verdict;

use crate::assembly::host::Host;
use crate::error::HostError;

/// The tool whose calls are judged.
const RUN_COMMAND: &str = <toolgate_tools::command::RunCommand as toolgate_core::TypedTool>::NAME;

/// What `run_command` would do with a command line.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct CommandJudgement {
    /// The classifier's verdict (`blocked`, `safe`, `dev`, `dangerous`).
    pub verdict: Verdict,
    /// Why a guardrail would refuse the call, when one would (the words the
    /// model is shown after `guardrail: `).
    pub guardrail: Option<String>,
}

impl CommandJudgement {
    /// `blocked` when the classifier or a guardrail refuses it, else the
    /// class.
    pub fn label(&self) -> &'static str {
        if self.guardrail.is_some() {
            "blocked"
        } else {
            self.verdict.label()
        }
    }
}

impl Host {
    /// Judges `command` as a `run_command` call would be judged.
    ///
    /// # Rules
    ///
    /// 1. The classifier's verdict is always given
    ///    ([`CommandPolicy::classify`](toolgate_policy::CommandPolicy::classify)).
    /// 2. Then the call's effects, as `run_command` declares them, go
    ///    through the configured guardrails; a refusal is
    ///    [`CommandJudgement::guardrail`]. Where `run_command` is not
    ///    registered (`commands.enabled: false`), or its arguments cannot
    ///    be read, only rule 1 applies.
    pub async fn judge_command(&self, command: &str) -> Result<CommandJudgement, HostError> {
        let verdict = self.command_policy().classify(command);
        let registry = self.registry()?;
        let Ok(entry) = registry.get(RUN_COMMAND) else {
            return Ok(CommandJudgement {
                verdict,
                guardrail: None,
            });
        };
        let args = json!({ "command": command });
        let Ok(effects) = entry.tool().effects(&args) else {
            return Ok(CommandJudgement {
                verdict,
                guardrail: None,
            });
        };
        let guardrails = self.guardrails()?;
        let view = CallView {
            tool: &entry,
            args: &args,
            effects: &effects,
            call_id: "classify",
            session_id: None,
        };
        let guardrail = guardrails.check(&view).await.err().map(|b| b.reason);
        Ok(CommandJudgement { verdict, guardrail })
    }
}
