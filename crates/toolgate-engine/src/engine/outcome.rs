//! What a call came to: its [`Decision`] (one per step of the gate that can
//! end a call) and the [`Execution`] the caller gets back.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toolgate_core::{Effects, PathChange, ToolResult};

use crate::approval::ApprovalRecord;

/// What the gate decided about a call: the step it ended at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Decision {
    /// Step 1: no such tool.
    NotFound,
    /// Step 2: the arguments do not fit the schema (or a hook's rewrite
    /// does not).
    InvalidArguments,
    /// Step 3: a guardrail refused the call.
    Guardrail,
    /// Step 4: a `pre_tool_use` hook blocked the call.
    HookBlocked,
    /// Step 5: confirmation was needed and nobody could be asked: no
    /// approver, or the mode `dont-ask`, which never asks.
    NoApprover,
    /// Step 5: the person said no.
    Denied,
    /// Step 5: the person aborted the whole run.
    Aborted,
    /// Step 5: a `deny` rule of `confirmation.rules` refused the call.
    RuleDenied,
    /// Step 5: plan mode is on and the call is not read-only, so it was
    /// refused without asking; the model is told to present its plan.
    PlanMode,
    /// Step 5: allowed, but what the call would do changed while the
    /// person decided (a file it writes was edited meanwhile), so it did
    /// not run.
    Changed,
    /// Step 6: dry-run; nothing was executed.
    DryRun,
    /// Step 7: the tool ran (its result may still be a failure).
    Executed,
    /// Step 7: the tool ran past its timeout and was stopped.
    TimedOut,
    /// The tool (or a stage) panicked; the gate turned it into a failure.
    Panicked,
    /// Step 7: the call's idempotency key was claimed by another worker
    /// (or the ledger could not be asked), so it did not run here; not
    /// audited ([`ExecutionEngine::execute_claimed`](super::ExecutionEngine::execute_claimed)).
    RunElsewhere,
    /// The worker that ran a keyed call died before its audit entry was
    /// kept; written by the worker that took the call over
    /// ([`ExecutionEngine::audit_interrupted`](super::ExecutionEngine::audit_interrupted)).
    /// The call may have run, in part or whole.
    Interrupted,
}

impl Decision {
    /// The `snake_case` name used in audit records and JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NotFound => "not_found",
            Self::InvalidArguments => "invalid_arguments",
            Self::Guardrail => "guardrail",
            Self::HookBlocked => "hook_blocked",
            Self::NoApprover => "no_approver",
            Self::Denied => "denied",
            Self::Aborted => "aborted",
            Self::RuleDenied => "rule_denied",
            Self::PlanMode => "plan_mode",
            Self::Changed => "changed",
            Self::DryRun => "dry_run",
            Self::Executed => "executed",
            Self::TimedOut => "timed_out",
            Self::Panicked => "panicked",
            Self::RunElsewhere => "run_elsewhere",
            Self::Interrupted => "interrupted",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A call after it went through the gate.
#[derive(Debug, Clone)]
pub struct Execution {
    /// What the model sees.
    pub result: ToolResult,
    /// The step the call ended at.
    pub decision: Decision,
    /// Wall time through the gate.
    pub duration: Duration,
    /// What the call was declared to do ([`Effects`]); none when it ended
    /// before they were worked out (unknown tool, invalid arguments).
    /// Whether they happened is [`decision`](Self::decision) plus
    /// `result.success`.
    pub effects: Effects,
    /// The confirmation rule that decided whether to ask (or refused), as
    /// `rule N (DECISION TOOL …)`; `None` when no rule matched and the mode
    /// decided, or the call ended before step 5.
    pub rule: Option<String>,
    /// The question put to a person, their answer and how long it took
    /// them; `None` when nobody was asked.
    pub approval: Option<ApprovalRecord>,
    /// What the call changed in the workspace, when the engine captures
    /// ([`EngineBuilder::capture`](super::EngineBuilder::capture)) and the call may write.
    pub changes: Vec<PathChange>,
    /// What changed in the workspace since the last capture and before
    /// this call ran: a background process, a person.
    pub changed_before: Vec<PathChange>,
    /// Why the capture failed, when it did: the changes are then unknown.
    pub capture_error: Option<String>,
}

impl Execution {
    /// How long the call took apart from the time a person took to answer.
    pub fn run_time(&self) -> Duration {
        let waited = self.approval.as_ref().map_or(Duration::ZERO, |a| a.waited);
        self.duration.saturating_sub(waited)
    }

    /// Whether the person aborted the run: the caller should stop (exit 130).
    pub fn is_aborted(&self) -> bool {
        self.decision == Decision::Aborted
    }
}
