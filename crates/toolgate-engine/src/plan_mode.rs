//! Plan mode: the mode a run is in as a cell the gate reads per call, and
//! the two tools that move a run into and out of `plan`.
//!
//! # Rules
//!
//! 1. The gate reads its [`ModeCell`] at step 5 of every call, so a change
//!    applies from the next call of the same run on. Under
//!    [`ConfirmationMode::Plan`] only read-only calls run (rule 6 of
//!    [`ConfirmationPolicy`](toolgate_policy::ConfirmationPolicy)); the
//!    rest are refused at once with [`Decision::PlanMode`](crate::Decision::PlanMode)
//!    and a message telling the model to call [`ExitPlanMode`] with its plan.
//! 2. [`ExitPlanMode`] (`exit_plan_mode(plan)`) shows the plan to the person
//!    through [`Approver::approve_plan`]: they pick the mode the run goes on
//!    in ([`PLAN_EXITS`]), or keep it planning with feedback for the model.
//!    With nobody who can review a plan (headless, `dont-ask`, an approver
//!    that cannot show one) it fails with a message saying so, and the run
//!    stays in plan mode. Outside plan mode it fails and changes nothing.
//! 3. [`EnterPlanMode`] (`enter_plan_mode()`) puts the run in plan mode.
//!    It is offered ([`Tool::offered`]) only outside plan mode and only when
//!    someone can approve the way out (an approver whose
//!    [`reviews_plans`](Approver::reviews_plans) is true), so a model can
//!    never lock a run it cannot leave; [`ExitPlanMode`] is offered only in
//!    plan mode. An agent's `disabled_tools` can take either away.
//! 4. Both are read-only tools that declare no effects: they change no file,
//!    start nothing and reach nothing, so plan mode runs them.
//! 5. Every answer to a plan is returned in the result's metadata under
//!    [`PLAN_METADATA`] as a [`PlanRecord`], which the agent loop keeps with
//!    the session.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate_core::{
    Effects, EffectsError, Sensitivity, ToolContext, ToolResult, TypedTool, neutralize,
};
use toolgate_policy::ConfirmationMode;

use crate::approval::Approver;

/// The confirmation mode of a gate, shared with whoever may change it (the
/// plan-mode tools, a front end's mode picker): the gate reads it per call.
#[derive(Debug, Clone)]
pub struct ModeCell(Arc<AtomicU8>);

impl ModeCell {
    /// A cell holding `mode`.
    pub fn new(mode: ConfirmationMode) -> Self {
        Self(Arc::new(AtomicU8::new(index(mode))))
    }

    /// The mode now.
    pub fn get(&self) -> ConfirmationMode {
        let at = usize::from(self.0.load(Ordering::SeqCst));
        // Only `index` writes the cell, so the index is always in range.
        ConfirmationMode::ALL
            .get(at)
            .copied()
            .unwrap_or(ConfirmationMode::Plan)
    }

    /// Sets the mode; returns the one it replaces.
    pub fn set(&self, mode: ConfirmationMode) -> ConfirmationMode {
        let before = usize::from(self.0.swap(index(mode), Ordering::SeqCst));
        ConfirmationMode::ALL
            .get(before)
            .copied()
            .unwrap_or(ConfirmationMode::Plan)
    }
}

fn index(mode: ConfirmationMode) -> u8 {
    let at = ConfirmationMode::ALL
        .iter()
        .position(|m| *m == mode)
        .unwrap_or(0);
    u8::try_from(at).unwrap_or(0)
}

/// The modes a person may pick to leave plan mode, in the order they are
/// offered: edits without asking, the default, or nothing asked.
pub const PLAN_EXITS: [ConfirmationMode; 3] = [
    ConfirmationMode::AcceptEdits,
    ConfirmationMode::ConfirmSensitive,
    ConfirmationMode::Yolo,
];

/// A plan waiting for a person.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct PlanRequest<'a> {
    /// The plan as the model wrote it, neutralised (control characters and
    /// escape sequences shown as visible escapes, line breaks kept).
    pub plan: &'a str,
    /// The modes the person may pick to go on ([`PLAN_EXITS`]).
    pub choices: &'a [ConfirmationMode],
    /// The call's id.
    pub call_id: &'a str,
}

/// A person's answer to a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanAnswer {
    /// Approved: the run goes on in this mode (one of the choices).
    Continue(ConfirmationMode),
    /// Not yet: the run stays in plan mode, and the model is told this
    /// (empty when the person said nothing).
    KeepPlanning(String),
    /// Nobody can review a plan here; the string says why.
    Unavailable(String),
}

/// What the system prompt of a run that starts in plan mode tells the
/// model (the host adds it when [`ExitPlanMode`] is offered).
pub const PLAN_MODE_INSTRUCTIONS: &str = "Plan mode is on: only reading, listing, searching \
    and safe read-only commands run; any call that would change something is refused. Explore \
    what you need, then call exit_plan_mode with a concrete, step-by-step plan. The person \
    approves it and chooses how you go on, or tells you what to change.";

/// The name of the metadata a plan's answer is returned under.
pub const PLAN_METADATA: &str = "plan_review";

/// What the person made of a plan, as records name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PlanVerdict {
    /// Approved: the run went on in [`PlanRecord::mode`].
    Approved,
    /// Not yet: the run stayed in plan mode.
    KeepPlanning,
    /// Nobody could review it: the run stayed in plan mode.
    Unavailable,
}

/// What became of a plan (rule 5): kept with the session, shown by
/// `toolgate sessions show` and in `--json` events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PlanRecord {
    /// The plan as the model wrote it.
    pub plan: String,
    /// `approved`, `keep_planning` or `unavailable`.
    pub answer: PlanVerdict,
    /// The mode the run went on in, when approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ConfirmationMode>,
    /// What the person told the model, when they kept it planning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
}

/// The arguments of [`ExitPlanMode`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExitPlanArgs {
    /// The plan for the person to approve: what you will change and how,
    /// step by step (Markdown is fine).
    pub plan: String,
}

/// The arguments of [`EnterPlanMode`]: none.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnterPlanArgs {}

/// `exit_plan_mode(plan)`: asks the person to approve the plan and to pick
/// the mode the run goes on in (rule 2).
pub struct ExitPlanMode {
    mode: ModeCell,
    approver: Option<Arc<dyn Approver>>,
}

impl std::fmt::Debug for ExitPlanMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExitPlanMode")
            .field("mode", &self.mode.get())
            .finish_non_exhaustive()
    }
}

/// `enter_plan_mode()`: puts the run in plan mode (rule 3).
pub struct EnterPlanMode {
    mode: ModeCell,
    approver: Option<Arc<dyn Approver>>,
}

impl std::fmt::Debug for EnterPlanMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnterPlanMode")
            .field("mode", &self.mode.get())
            .finish_non_exhaustive()
    }
}

/// The two plan-mode tools over `mode`, the cell the gate reads, with the
/// person who reviews plans (`None`: nobody, so plans are refused and
/// `enter_plan_mode` is never offered).
pub fn plan_mode_tools(
    mode: &ModeCell,
    approver: Option<Arc<dyn Approver>>,
) -> (ExitPlanMode, EnterPlanMode) {
    (
        ExitPlanMode {
            mode: mode.clone(),
            approver: approver.clone(),
        },
        EnterPlanMode {
            mode: mode.clone(),
            approver,
        },
    )
}

fn record(plan: &str, answer: PlanVerdict) -> PlanRecord {
    PlanRecord {
        plan: plan.to_owned(),
        answer,
        mode: None,
        feedback: None,
    }
}

fn with_record(result: ToolResult, record: &PlanRecord) -> ToolResult {
    match serde_json::to_value(record) {
        Ok(value) => result.with_metadata(PLAN_METADATA, value),
        Err(_) => result,
    }
}

#[async_trait]
impl TypedTool for ExitPlanMode {
    type Args = ExitPlanArgs;
    const NAME: &'static str = "exit_plan_mode";
    const DESCRIPTION: &'static str = "Presents your plan to the person and asks to leave plan \
        mode. Call it when you have finished exploring and know what you will change. The person \
        approves the plan and picks how the run goes on (then you may edit and run commands), or \
        keeps you planning with feedback.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn effects(&self, _args: &ExitPlanArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, args: ExitPlanArgs, ctx: &ToolContext) -> ToolResult {
        if self.mode.get() != ConfirmationMode::Plan {
            return ToolResult::failure(format!(
                "plan mode is not on (the mode is {}): go on with the task",
                self.mode.get()
            ));
        }
        let plan = args.plan.trim();
        if plan.is_empty() {
            return ToolResult::failure(
                "the plan is empty: write what you will change and how, then call \
                 exit_plan_mode again",
            );
        }
        let unavailable = |why: &str| {
            let result = ToolResult::failure(format!(
                "plan mode stays on: {why}; nobody can approve the plan here, so answer with \
                 the plan as your final reply instead"
            ));
            with_record(result, &record(plan, PlanVerdict::Unavailable))
        };
        let Some(approver) = &self.approver else {
            return unavailable("this run has nobody to review plans (no terminal or web UI)");
        };
        let shown = neutralize(plan);
        let request = PlanRequest {
            plan: &shown,
            choices: &PLAN_EXITS,
            call_id: &ctx.call_id,
        };
        let answer = approver.approve_plan(&request).await;
        if self.mode.get() != ConfirmationMode::Plan {
            // The mode changed elsewhere while the person read the plan
            // (a front end's picker): that choice stands.
            return ToolResult::success(format!(
                "Plan mode was turned off meanwhile; the run goes on in mode {}.",
                self.mode.get()
            ));
        }
        match answer {
            PlanAnswer::Continue(mode) if PLAN_EXITS.contains(&mode) => {
                self.mode.set(mode);
                let result = ToolResult::success(format!(
                    "The person approved your plan. Plan mode is off; the run goes on in mode \
                     {mode}. Carry out the plan now."
                ))
                .with_metadata("mode", mode.as_str());
                let mut rec = record(plan, PlanVerdict::Approved);
                rec.mode = Some(mode);
                with_record(result, &rec)
            }
            PlanAnswer::Continue(mode) => unavailable(&format!(
                "the approver answered with the mode {mode}, which is not one of the choices"
            )),
            PlanAnswer::KeepPlanning(feedback) => {
                let feedback = feedback.trim();
                let said = if feedback.is_empty() {
                    String::new()
                } else {
                    format!(" The person says: {feedback}")
                };
                let result = ToolResult::failure(format!(
                    "The person did not approve the plan yet: plan mode stays on. Keep \
                     exploring and revise the plan, then call exit_plan_mode again.{said}"
                ));
                let mut rec = record(plan, PlanVerdict::KeepPlanning);
                rec.feedback = (!feedback.is_empty()).then(|| feedback.to_owned());
                with_record(result, &rec)
            }
            PlanAnswer::Unavailable(why) => unavailable(&why),
        }
    }

    fn offered(&self) -> bool {
        self.mode.get() == ConfirmationMode::Plan
    }
}

#[async_trait]
impl TypedTool for EnterPlanMode {
    type Args = EnterPlanArgs;
    const NAME: &'static str = "enter_plan_mode";
    const DESCRIPTION: &'static str = "Switches to plan mode: from now on only reading, \
        searching and safe read-only commands run, until you present a plan with \
        exit_plan_mode and the person approves it. Use it before a large or risky change \
        whose approach the person should agree to first.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn effects(&self, _args: &EnterPlanArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, _args: EnterPlanArgs, _ctx: &ToolContext) -> ToolResult {
        if !self.reviewed() {
            return ToolResult::failure(
                "plan mode is not available here: nobody can approve a plan to leave it",
            );
        }
        let before = self.mode.set(ConfirmationMode::Plan);
        if before == ConfirmationMode::Plan {
            return ToolResult::success("Plan mode is on already.");
        }
        ToolResult::success(format!(
            "Plan mode is on (it was {before}): only read-only calls run. Explore, then call \
             exit_plan_mode with your plan."
        ))
        .with_metadata("mode", ConfirmationMode::Plan.as_str())
    }

    fn offered(&self) -> bool {
        self.mode.get() != ConfirmationMode::Plan && self.reviewed()
    }
}

impl EnterPlanMode {
    /// Whether someone can approve a plan to leave plan mode again.
    fn reviewed(&self) -> bool {
        self.approver.as_ref().is_some_and(|a| a.reviews_plans())
    }
}
