//! The `plan` group: `update_plan`, the checklist an agent keeps for its
//! session as it works (Codex's `update_plan`, Claude Code's `TodoWrite`).
//!
//! The plan is the agent's own working state, not the user's data, so
//! `update_plan` is `ReadOnly` and annotated read-only: read-only agents
//! (`plan`, `review`) may keep a plan too. It declares no [`Effects`]: it
//! touches nothing but the [`PlanBook`] (or this process's memory).
//!
//! # Rules
//!
//! 1. `update_plan` replaces the whole plan of the calling session
//!    (`ToolContext::session_id`); a call without a session, or a tool
//!    without a [`PlanBook`], keeps its plan in this process only.
//! 2. A plan has at most `max_steps` steps (30 by default), each one line
//!    of at most 300 characters, and at most one `in_progress`.
//! 3. The result's output is the plan as a checklist and its metadata
//!    `plan` is the [`Plan`] as JSON, for front ends to show;
//!    [`UpdatePlan::current`] and [`PlanBook::plan`] read a plan back.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate_core::{
    Effects, EffectsError, Group, GroupContext, GroupError, Plan, PlanBook, PlanStep, Sensitivity,
    StepStatus, Tool, ToolAnnotations, ToolContext, ToolGroup, ToolResult, TypedTool,
};

/// The system-prompt block of the `plan` group.
pub const INSTRUCTIONS: &str = "## Your plan
- For work with several steps, call `update_plan` first with the steps, then again each time a step starts or finishes.
- Send the whole plan every time; exactly one step is in_progress while you work; mark steps completed as soon as they are done.
- Skip the plan for a single quick step.
";

/// The most steps a plan may have, unless configured.
pub const DEFAULT_MAX_STEPS: usize = 30;

/// `tools.plan:`
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PlanSection {
    /// Whether `update_plan` is offered. Default: unset, which keeps the
    /// behaviour of configurations written before the plan had a section
    /// of its own: offered with the `tasks` group, unless `tools.tasks.plan`
    /// is false ([`PlanDefaults`]).
    pub enabled: Option<bool>,
}

/// A part: what the plan follows when `tools.plan.enabled` is unset, and
/// the most steps a plan may have (the host reads both from `tools.tasks`:
/// `enabled && plan`, `max_plan_steps`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanDefaults {
    /// Whether `update_plan` is offered when `tools.plan.enabled` is unset.
    pub enabled: bool,
    /// The most steps a plan may have.
    pub max_steps: usize,
}

impl Default for PlanDefaults {
    fn default() -> Self {
        Self {
            enabled: false,
            max_steps: DEFAULT_MAX_STEPS,
        }
    }
}

/// The `plan` group: `update_plan`. Parts: [`PlanDefaults`], and the
/// [`PlanBook`] plans are kept in (`Arc<dyn PlanBook>`; without one, plans
/// stay in the process).
#[derive(Debug, Clone, Copy, Default)]
pub struct PlanGroup;

impl Group for PlanGroup {
    fn name(&self) -> &'static str {
        "plan"
    }

    fn section_key(&self) -> Option<&'static str> {
        Some("plan")
    }

    fn untrusted_keys(&self) -> &'static [&'static str] {
        &[""]
    }

    fn tool_names(&self) -> &'static [&'static str] {
        &["update_plan"]
    }

    fn build(&self, ctx: &GroupContext<'_>) -> Result<ToolGroup, GroupError> {
        let section = ctx.section::<PlanSection>()?;
        let defaults = ctx.part::<PlanDefaults>().unwrap_or_default();
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        if section.enabled.unwrap_or(defaults.enabled) {
            let book = match ctx.part::<Arc<dyn PlanBook>>() {
                Ok(book) => Some(book),
                Err(GroupError::MissingPart { .. }) => None,
                Err(error) => return Err(error),
            };
            tools.push(Arc::new(
                UpdatePlan::new(book).max_steps(defaults.max_steps),
            ));
        }
        Ok(ToolGroup::new(self.name(), INSTRUCTIONS, tools))
    }
}

/// Where a step of the plan stands, as a call gives it.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepStatusArg {
    /// Not started.
    Pending,
    /// Being worked on now (one step at most).
    InProgress,
    /// Finished.
    Completed,
}

impl From<StepStatusArg> for StepStatus {
    fn from(status: StepStatusArg) -> Self {
        match status {
            StepStatusArg::Pending => Self::Pending,
            StepStatusArg::InProgress => Self::InProgress,
            StepStatusArg::Completed => Self::Completed,
        }
    }
}

/// One step, as a call gives it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanStepArg {
    /// What the step does, in one short line.
    pub step: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: StepStatusArg,
}

/// Arguments of `update_plan`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdatePlanArgs {
    /// The whole plan, in order. It replaces the previous one.
    pub steps: Vec<PlanStepArg>,
    /// Why the plan changed, in a sentence (optional).
    pub explanation: Option<String>,
}

/// The longest step text, in characters.
const MAX_STEP_CHARS: usize = 300;

/// The longest explanation, in characters.
const MAX_EXPLANATION_CHARS: usize = 1_000;

/// `update_plan`: replaces the calling session's plan (rule 4).
pub struct UpdatePlan {
    store: Option<Arc<dyn PlanBook>>,
    /// Plans kept in this process: the plan of calls without a session
    /// (key `None`), and every plan when there is no store.
    local: Mutex<HashMap<Option<String>, Plan>>,
    max_steps: usize,
}

impl std::fmt::Debug for UpdatePlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpdatePlan")
            .field("store", &self.store.is_some())
            .field("max_steps", &self.max_steps)
            .finish_non_exhaustive()
    }
}

impl UpdatePlan {
    /// An `update_plan` that keeps session plans in `store` (`None`: in
    /// this process only).
    pub fn new(store: Option<Arc<dyn PlanBook>>) -> Self {
        Self {
            store,
            local: Mutex::new(HashMap::new()),
            max_steps: DEFAULT_MAX_STEPS,
        }
    }

    /// Sets the most steps a plan may have. By default, 30.
    #[must_use]
    pub fn max_steps(mut self, max: usize) -> Self {
        self.max_steps = max;
        self
    }

    /// The current plan of `session` (`None`: the process-local plan of
    /// calls without a session).
    pub async fn current(&self, session: Option<&str>) -> Result<Option<Plan>, String> {
        if let (Some(store), Some(session)) = (&self.store, session) {
            return store
                .plan(session)
                .await
                .map_err(|e| toolgate_core::error_chain(&*e));
        }
        let local = self.local.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(local.get(&session.map(str::to_owned)).cloned())
    }

    fn check(&self, args: UpdatePlanArgs) -> Result<Plan, String> {
        if args.steps.len() > self.max_steps {
            return Err(format!(
                "the plan has {} steps; at most {} are allowed: merge small steps",
                args.steps.len(),
                self.max_steps
            ));
        }
        let mut steps = Vec::with_capacity(args.steps.len());
        let mut in_progress = Vec::new();
        for (i, step) in args.steps.into_iter().enumerate() {
            let text = step.step.trim();
            if text.is_empty() {
                return Err(format!("step {} is empty", i + 1));
            }
            if text.contains('\n') {
                return Err(format!("step {} must be one line", i + 1));
            }
            if text.chars().count() > MAX_STEP_CHARS {
                return Err(format!(
                    "step {} is longer than {MAX_STEP_CHARS} characters: keep steps short",
                    i + 1
                ));
            }
            let status = StepStatus::from(step.status);
            if status == StepStatus::InProgress {
                in_progress.push(i + 1);
            }
            steps.push(PlanStep {
                step: text.to_owned(),
                status,
            });
        }
        if in_progress.len() > 1 {
            return Err(format!(
                "steps {} are all in_progress; at most one step may be in_progress at a time",
                in_progress
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let explanation = args
            .explanation
            .map(|e| e.trim().to_owned())
            .filter(|e| !e.is_empty());
        if explanation
            .as_ref()
            .is_some_and(|e| e.chars().count() > MAX_EXPLANATION_CHARS)
        {
            return Err(format!(
                "the explanation is longer than {MAX_EXPLANATION_CHARS} characters"
            ));
        }
        let updated = jiff::Timestamp::now().as_millisecond();
        Ok(Plan {
            steps,
            explanation,
            updated,
        })
    }
}

#[async_trait]
impl TypedTool for UpdatePlan {
    type Args = UpdatePlanArgs;
    const NAME: &'static str = "update_plan";
    const DESCRIPTION: &'static str = "Set your plan for this task as a checklist; it replaces \
        the previous plan, so send every step each time. Each step: `step` (one short line) and \
        `status` pending, in_progress or completed; at most one in_progress. Example: \
        {\"steps\": [{\"step\": \"Read the failing test\", \"status\": \"completed\"}, \
        {\"step\": \"Fix the parser\", \"status\": \"in_progress\"}, \
        {\"step\": \"Run the tests\", \"status\": \"pending\"}]}";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            // The plan is the agent's own working state (see the module
            // docs), so read-only agents may keep one.
            read_only_hint: Some(true),
            destructive_hint: Some(false),
            idempotent_hint: Some(true),
            open_world_hint: Some(false),
            ..ToolAnnotations::default()
        }
    }

    /// None: it writes toolgate's own store (or memory) only.
    fn effects(&self, _args: &UpdatePlanArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, args: UpdatePlanArgs, ctx: &ToolContext) -> ToolResult {
        let plan = match self.check(args) {
            Ok(plan) => plan,
            Err(message) => return ToolResult::failure(message),
        };
        let session = ctx.session_id.as_deref();
        match (&self.store, session) {
            (Some(store), Some(session)) => {
                if let Err(error) = store.set_plan(session, &plan).await {
                    return ToolResult::failure(format!(
                        "the store failed: {}",
                        toolgate_core::error_chain(&*error)
                    ));
                }
            }
            _ => {
                self.local
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(session.map(str::to_owned), plan.clone());
            }
        }
        let mut out = plan.checklist();
        if let Some(explanation) = &plan.explanation {
            let _ = write!(out, "\nWhy: {explanation}");
        }
        let mut result = ToolResult::success(out)
            .with_metadata("plan", serde_json::to_value(&plan).unwrap_or_default());
        if let Some(session) = session {
            result = result.with_metadata("session_id", session);
        }
        result
    }
}
