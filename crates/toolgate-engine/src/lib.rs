//! The execution gate of toolgate.
//!
//! [`ExecutionEngine::execute`] is the one function every tool call goes
//! through: lookup, schema validation, [`Guardrails`], [`PreToolUse`] hooks,
//! confirmation through an [`Approver`], dry-run, execution with a timeout,
//! [`PostToolUse`] hooks and the [`AuditLog`] — in that order, with a refusal
//! at any step ending the call there. The [`ExecutionEngine`] docs hold the
//! rules.
//!
//! Guardrails and hooks are traits here; the real implementations,
//! [`GuardrailsEngine`] (DESIGN.md §7) and [`HookExecutor`] (§6), plug in
//! through [`EngineBuilder`]. The agent loop fires the events the gate does not
//! (`session_start`, `pre_llm_call`, …) with [`HookExecutor::emit`], and runs
//! the quality gates with [`GuardrailsEngine::run_quality_gates`].
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use serde_json::json;
//! use toolgate_core::{Registry, Sensitivity, ToolCall, ToolContext, ToolResult, TypedTool};
//! use toolgate_engine::{Decision, ExecutionEngine};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct NoArgs {}
//!
//! struct Wipe;
//!
//! #[async_trait::async_trait]
//! impl TypedTool for Wipe {
//!     type Args = NoArgs;
//!     const NAME: &'static str = "wipe";
//!     const DESCRIPTION: &'static str = "Wipes something.";
//!     const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;
//!     async fn run(&self, _: NoArgs, _: &ToolContext) -> ToolResult {
//!         ToolResult::success("wiped")
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = Arc::new(Registry::new());
//! registry.register(Wipe)?;
//! // The default approver is headless: a sensitive call fails with a hint.
//! let engine = ExecutionEngine::builder(registry).build();
//! let run = engine.execute(ToolCall::new("1", "wipe", json!({}))).await;
//! assert_eq!(run.decision, Decision::NoApprover);
//! assert!(run.result.error.unwrap().contains("--mode yolo"));
//! # Ok(())
//! # }
//! ```

pub use approval::{
    Action, Answered, Approval, ApprovalRecord, ApprovalRequest, ApprovalScope, ApprovalView,
    Approver, Budget, FileSize, Folded, HeadlessApprover, Hidden, Line, Role, SharedAllows, fold,
};
pub use audit::{AuditLog, AuditRecord, AuditSink, FileChanged, Transfer};
pub use engine::{
    Decision, EngineBuilder, Execution, ExecutionEngine, SavedRuleSet, SavedRules, Stages,
};
pub use guardrails::{
    CodeRule, GuardrailsConfig, GuardrailsEngine, GuardrailsEngineBuilder, GuardrailsError,
    QualityGate, QualityGateReport, Severity,
};
pub use guards::CommandGuard;
pub use hooks::{
    About, HookConfigError, HookDecision, HookEvent, HookExecutor, HookExecutorBuilder,
    HookOutcome, HookRun, HookSpec, HooksConfig, OnFailure,
};
pub use once::{IDEMPOTENCY_KEY, Ledger, MAX_KEY_LEN, Once, RETRYABLE, RunClaim, check_key};
pub use plan_mode::{
    EnterPlanArgs, EnterPlanMode, ExitPlanArgs, ExitPlanMode, ModeCell, PLAN_EXITS, PLAN_METADATA,
    PLAN_MODE_INSTRUCTIONS, PlanAnswer, PlanRecord, PlanRequest, PlanVerdict, plan_mode_tools,
};
pub use stages::{
    CallView, GuardrailBlock, Guardrails, NoGuardrails, NoHooks, PostToolUse, PreToolOutcome,
    PreToolUse,
};

mod approval;
mod audit;
mod engine;
mod guardrails;
mod guards;
mod hooks;
mod once;
mod plan_mode;
mod stages;
