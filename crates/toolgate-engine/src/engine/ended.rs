//! Where a call ended inside the pipeline, before its audit: the result,
//! the step's decision, and what the call was known to be and do by then
//! ([`Ended`]); a refusal found by a helper step ([`PartialEnd`]).

use serde_json::Value;
use toolgate_core::{Effects, PathChange, ToolResult};

use super::Decision;
use crate::approval::ApprovalRecord;

/// Where a call ended inside the pipeline, before auditing.
pub(super) struct Ended {
    pub(super) result: ToolResult,
    pub(super) decision: Decision,
    pub(super) args: Value,
    /// What the call was declared to do; none when it ended before its
    /// effects were known.
    pub(super) effects: Effects,
    /// The confirmation rule that decided, if one did.
    pub(super) rule: Option<String>,
    /// The question a person was asked, if one was.
    pub(super) approval: Option<ApprovalRecord>,
    /// What the capture saw (step 7).
    pub(super) captured: Captured,
}

/// What the capture around a call saw.
#[derive(Debug, Default)]
pub(super) struct Captured {
    pub(super) before: Vec<PathChange>,
    pub(super) changes: Vec<PathChange>,
    pub(super) error: Option<String>,
}

impl Ended {
    pub(super) fn fail(decision: Decision, args: Value, error: impl Into<String>) -> Self {
        Self {
            result: ToolResult::failure(error),
            decision,
            args,
            effects: Effects::none(),
            rule: None,
            approval: None,
            captured: Captured::default(),
        }
    }

    pub(super) fn with_approval(mut self, approval: Option<ApprovalRecord>) -> Self {
        self.approval = approval;
        self
    }

    pub(super) fn with_effects(mut self, effects: Effects) -> Self {
        self.effects = effects;
        self
    }

    pub(super) fn with_rule(mut self, rule: Option<String>) -> Self {
        self.rule = rule;
        self
    }
}

/// A refusal found by a helper step; the caller attaches the arguments.
pub(super) struct PartialEnd(pub(super) Decision, pub(super) String);

impl PartialEnd {
    pub(super) fn with_args(self, args: Value) -> Ended {
        Ended::fail(self.0, args, self.1)
    }
}
