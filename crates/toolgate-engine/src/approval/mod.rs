//! Step 5: asking a person.
//!
//! The gate builds one [`ApprovalView`] of the call (what it would do, made
//! concrete) and hands it to an [`Approver`] inside an [`ApprovalRequest`];
//! the answer is kept in the call's [`ApprovalScope`] and reported in an
//! [`ApprovalRecord`].

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value;
use toolgate_core::{Effects, Sensitivity};

use crate::plan_mode::{PlanAnswer, PlanRequest};

pub use render::{Budget, Folded, Hidden, Line, Role, fold};
pub use scope::{ApprovalScope, SharedAllows};
pub(crate) use view::Subject;
pub use view::{Action, ApprovalView, FileSize};

mod render;
mod scope;
mod view;

/// A call waiting for approval.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ApprovalRequest<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The arguments it will run with.
    pub args: &'a Value,
    /// What it will do, as declared (rules match on it).
    pub effects: &'a Effects,
    /// Why it needs approval.
    pub sensitivity: Sensitivity,
    /// The call's id.
    pub call_id: &'a str,
    /// The `confirmation.rules` rule that asks, when a rule does rather
    /// than the mode (`rule 2 (ask run_command command `git push`)`).
    pub rule: Option<&'a str>,
    /// What the person is shown: the one description every front end
    /// renders.
    pub view: &'a ApprovalView,
    /// The call's idempotency key, when its client gave one
    /// ([`ExecutionEngine::execute_claimed`](crate::ExecutionEngine::execute_claimed)):
    /// an approver that keeps questions in a store asks under it, so that
    /// a retry of the call waits for the same answer.
    pub idempotency_key: Option<&'a str>,
}

impl<'a> ApprovalRequest<'a> {
    /// A request for the call `view` describes, with its declared
    /// `effects`, `args` and `sensitivity`.
    pub fn new(
        view: &'a ApprovalView,
        args: &'a Value,
        effects: &'a Effects,
        sensitivity: Sensitivity,
    ) -> Self {
        Self {
            tool: &view.tool,
            args,
            effects,
            sensitivity,
            call_id: &view.call_id,
            rule: view.rule.as_deref(),
            view,
            idempotency_key: None,
        }
    }

    /// The environment variables the call sets for the commands it runs,
    /// as confirmation rules match them.
    pub fn env_names(&self) -> Vec<&'a str> {
        self.effects.env_names()
    }

    /// Why the call needs a person, in words, for any front end's prompt:
    /// the rule that asks, the command's class and why, or what kind of
    /// call it is.
    pub fn reason(&self) -> &'a str {
        &self.view.reason
    }
}

/// What became of a question, for reports and events.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ApprovalRecord {
    /// What the person was shown.
    pub view: Arc<ApprovalView>,
    /// What they answered.
    pub answer: Answered,
    /// How long the question waited for them.
    #[serde(rename = "waited_ms", serialize_with = "millis")]
    pub waited: Duration,
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// An answer, as reports name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Answered {
    /// Allowed once.
    Allow,
    /// Allowed for the rest of the session.
    AllowForSession,
    /// Denied.
    Deny,
    /// The run was aborted.
    Abort,
    /// Nobody could be asked.
    Unavailable,
    /// Allowed, but what the call would do changed while the person
    /// decided, so it did not run.
    Changed,
}

/// A person's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Approval {
    /// Run this call.
    Allow,
    /// Run this call and, for the rest of the session, every call of the same
    /// tool with the same sensitivity (so allowing a `dev` command never
    /// allows a `dangerous` one).
    AllowForSession,
    /// Do not run this call; the run goes on.
    Deny,
    /// Stop the whole run (exit code 130).
    Abort,
    /// Nobody can be asked (no terminal, no UI). The string says how to allow
    /// the call another way.
    Unavailable(String),
}

/// Whoever approves calls: a terminal prompt, the web UI, an MCP client
/// through elicitation, or nobody.
///
/// The gate asks one question at a time per [`ApprovalScope`]; an
/// approver serving several scopes (the web UI, MCP elicitation) may be
/// asked by several at once, and must not make one wait for another.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Asks about one call.
    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval;

    /// Shows a model's plan (`exit_plan_mode`) and asks how the run goes
    /// on: in one of the request's modes, or still planning. By default,
    /// [`PlanAnswer::Unavailable`]: this approver cannot show a plan.
    async fn approve_plan(&self, _request: &PlanRequest<'_>) -> PlanAnswer {
        PlanAnswer::Unavailable(format!(
            "the {} approver cannot show a plan to a person",
            self.kind()
        ))
    }

    /// Whether [`approve_plan`](Self::approve_plan) puts plans to a person,
    /// so a run may enter plan mode (it could not leave it otherwise). By
    /// default, no.
    fn reviews_plans(&self) -> bool {
        false
    }

    /// Who is asked (`terminal`, `ui`, `elicitation`, `headless`), for
    /// [`ExecutionEngine::stages`](crate::ExecutionEngine::stages). By
    /// default, the type's name.
    fn kind(&self) -> &'static str {
        std::any::type_name::<Self>()
    }
}

/// The approver for runs with nobody to ask: every call that needs
/// confirmation fails with a message saying how to allow it.
#[derive(Debug, Clone)]
pub struct HeadlessApprover {
    hint: String,
}

impl HeadlessApprover {
    /// A headless approver whose refusals carry `hint` (how to allow the
    /// call another way).
    pub fn new(hint: impl Into<String>) -> Self {
        Self { hint: hint.into() }
    }
}

impl Default for HeadlessApprover {
    /// Refusals that point at `--mode yolo` and `--dry-run`, the CLI's ways
    /// out.
    fn default() -> Self {
        Self::new(
            "nobody can be asked for confirmation here (stdin is not a terminal); \
             rerun with `--mode yolo` to allow it, or with `--dry-run` to see what would run",
        )
    }
}

#[async_trait]
impl Approver for HeadlessApprover {
    async fn approve(&self, _request: &ApprovalRequest<'_>) -> Approval {
        Approval::Unavailable(self.hint.clone())
    }

    fn kind(&self) -> &'static str {
        "headless"
    }
}
