//! The plan an agent keeps for its session as it works (`update_plan`,
//! Codex's `update_plan`, Claude Code's `TodoWrite`), and [`PlanBook`], where
//! it is kept.
//!
//! The trait lives here, below every tool crate, so that `update_plan` (a
//! coding tool in `toolgate-tools`) keeps plans in toolgate's store without
//! the tool crate compiling the store and `SQLite`: the host hands it a
//! [`PlanBook`] over the store.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// Why a [`PlanBook`] could not keep or read a plan.
pub type PlanBookError = Box<dyn std::error::Error + Send + Sync>;

/// Where the plan of each agent session is kept.
///
/// # Rules
///
/// 1. A session has at most one plan; [`set_plan`](Self::set_plan)
///    replaces it whole.
/// 2. A session id is any string.
/// 3. The book keeps what it is given: checking a plan (one step in
///    progress at most, …) is the caller's job.
#[async_trait]
pub trait PlanBook: Send + Sync {
    /// Replaces the plan of `session_id`.
    async fn set_plan(&self, session_id: &str, plan: &Plan) -> Result<(), PlanBookError>;

    /// The current plan of `session_id`, if it has one.
    async fn plan(&self, session_id: &str) -> Result<Option<Plan>, PlanBookError>;
}

/// Where a step of a plan stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Not started.
    Pending,
    /// Being worked on (one step at most).
    InProgress,
    /// Finished.
    Completed,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanStep {
    /// What the step does, in a line.
    pub step: String,
    /// Where it stands.
    pub status: StepStatus,
}

/// An agent's plan for its session.
///
/// # Wire format
///
/// `{"steps": [{"step": "…", "status": "pending|in_progress|completed"}],
/// "explanation": "…"|null, "updated": <ms since the epoch>}`: stored like
/// this, and put like this in `update_plan`'s result metadata (`plan`), so
/// front ends read it without knowing this type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// The steps, in order.
    pub steps: Vec<PlanStep>,
    /// Why the plan changed, as the agent said.
    pub explanation: Option<String>,
    /// When it was set, in milliseconds since the Unix epoch.
    pub updated: i64,
}

impl Plan {
    /// The plan as a checklist, one step a line: `[x]` completed, `[>]` in
    /// progress, `[ ]` pending, under a line that counts the completed
    /// steps.
    pub fn checklist(&self) -> String {
        let done = self
            .steps
            .iter()
            .filter(|s| s.status == StepStatus::Completed)
            .count();
        let mut out = format!("Plan ({done}/{} done):", self.steps.len());
        if self.steps.is_empty() {
            out.push_str(" (no steps)");
        }
        for step in &self.steps {
            let mark = match step.status {
                StepStatus::Completed => "[x]",
                StepStatus::InProgress => "[>]",
                StepStatus::Pending => "[ ]",
            };
            out.push('\n');
            out.push_str(mark);
            out.push(' ');
            out.push_str(&step.step);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checklist_marks_each_status() {
        let step = |step: &str, status| PlanStep {
            step: step.into(),
            status,
        };
        let plan = Plan {
            steps: vec![
                step("read the test", StepStatus::Completed),
                step("fix the parser", StepStatus::InProgress),
                step("run the tests", StepStatus::Pending),
            ],
            explanation: None,
            updated: 0,
        };
        assert_eq!(
            plan.checklist(),
            "Plan (1/3 done):\n[x] read the test\n[>] fix the parser\n[ ] run the tests"
        );
        let empty = Plan {
            steps: vec![],
            explanation: None,
            updated: 0,
        };
        assert_eq!(empty.checklist(), "Plan (0/0 done): (no steps)");
    }
}
