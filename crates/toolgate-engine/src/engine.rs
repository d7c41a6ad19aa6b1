//! The gate: every tool call goes through [`ExecutionEngine::execute`].

use std::any::Any;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use serde::Serialize;
use serde_json::Value;
use toolgate_core::{
    ChangeCapture, Effects, RegisteredTool, Registry, Sensitivity, ToolCall, ToolContext,
    ToolResult, TypedTool, Workspace,
};
use toolgate_policy::{
    ConfirmationMode, ConfirmationPolicy, ConfirmationRules, ModeCall, ModeDecision, RuleDecision,
};

use crate::approval::{
    Answered, Approval, ApprovalRecord, ApprovalRequest, ApprovalScope, ApprovalView, Approver,
    Subject,
};
use crate::audit::{AuditRecord, AuditSink, FileChanged, digest};
use crate::plan_mode::ModeCell;
use crate::stages::{CallView, Guardrails, PostToolUse, PreToolOutcome, PreToolUse};

pub use builder::EngineBuilder;
pub use outcome::{Decision, Execution};
pub use rules::{SavedRuleSet, SavedRules};

use changes::{may_write, report_changes, sync};
use ended::{Captured, Ended, PartialEnd};
use refusals::{plan_refusal, unasked};
use rules::RuleHit;

mod builder;
mod changes;
mod ended;
mod outcome;
mod refusals;
mod rules;

/// A description of an engine's steps ([`ExecutionEngine::stages`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Stages {
    /// The registered tools, sorted.
    pub tools: Vec<String>,
    /// Step 3.
    pub guardrails: Value,
    /// Step 4.
    pub pre_hooks: Value,
    /// Step 8.
    pub post_hooks: Value,
    /// Step 5: the confirmation mode.
    pub mode: String,
    /// Step 5: who is asked.
    pub approver: String,
    /// Step 5: the confirmation rules, in order.
    pub rules: Vec<String>,
    /// Step 5: where saved rules are read from at each call, if anywhere.
    pub saved_rules: Option<String>,
    /// Step 6.
    pub dry_run: bool,
    /// Step 7: the timeout of tools that set none, in milliseconds.
    pub default_timeout_ms: u64,
    /// Step 9: where records go.
    pub audit: Vec<String>,
    /// The session id.
    pub session_id: Option<String>,
}

/// The execution gate: the one function every tool call goes through, from
/// the agent loop, the CLI, the MCP server and the web UI.
///
/// # Rules
///
/// The steps run in this order, and a call refused at one step never reaches
/// the next:
///
/// 1. Look the tool up. Unknown → failure naming close names.
/// 2. Validate the arguments against the tool's JSON Schema. Invalid →
///    `invalid arguments for TOOL: …`, one sentence per problem.
/// 3. Guardrails. Refused → `guardrail: REASON`; hooks do not run.
/// 4. `pre_tool_use` hooks. Blocked → `blocked by hook NAME: REASON`. A hook's
///    `updatedInput` replaces the arguments, which then go through steps 2
///    and 3 again, so a hook cannot smuggle a forbidden call past them.
/// 5. Confirmation, in the mode read from the engine's [`ModeCell`] for this
///    call. First the [`ConfirmationRules`], with the [`SavedRules`] read
///    for this call if the engine has them (the stronger decision wins;
///    saved rules that cannot be read count as an `ask` rule), over the
///    call's tool, declared effects and the variables its commands set: a
///    `deny` rule refuses the call, dry-run or not
///    ([`Decision::RuleDenied`], `denied by rule N (…)`). Then, under `plan`, a call that is not
///    read-only by its declared effects is refused at once, whatever the
///    other rules say and dry-run or not ([`Decision::PlanMode`];
///    [`ExitPlanMode`](crate::ExitPlanMode) asks the person to lift it).
///    Then, unless dry-run: an `allow` rule skips
///    asking in every mode, `confirm-all` included; an `ask` rule asks in
///    every mode, `yolo` included, even after a session-wide allow; with no
///    rule the [`ConfirmationPolicy`] decides from the call's
///    [`Sensitivity`] (per call: `run_command` classifies its command) and
///    declared effects (`accept-edits` runs writes inside the workspace).
///    Under `dont-ask` nobody is ever asked: a call the mode would ask
///    about, or an `ask` rule matches, is refused at once
///    ([`Decision::NoApprover`]) with the `toolgate rules add` line that
///    would allow it, when one rule can.
///    The person is shown one [`ApprovalView`] of the call. Nobody to ask →
///    failure with a hint; denied → `cancelled by user` (the run goes on);
///    aborted → [`Decision::Aborted`] (the run ends, exit 130); allowed,
///    but the view built again differs (a file the call writes changed
///    meanwhile) → [`Decision::Changed`], not run. A session-wide allow
///    covers later calls of the same tool with the same sensitivity in the
///    same [`ApprovalScope`] only; questions are asked one at a time per
///    scope. Rules come after steps 3 and 4, so no rule
///    lifts a guardrail or a hook's block, and the tool still refuses what
///    it refuses when it runs (blocked commands) under the kernel sandbox.
/// 6. Dry-run → success `[DRY-RUN] would execute TOOL(ARGS)`.
/// 7. Execute, stopped after the tool's timeout (or the default). With a
///    [`ChangeCapture`] ([`EngineBuilder::capture`]), a call that may write
///    (anything but reads, network access and commands in the read-only
///    sandbox) runs alone, between two looks at the workspace: the first
///    says what changed since the last look ([`Execution::changed_before`]),
///    the second what the call changed ([`Execution::changes`]). A command
///    (or an opaque tool) says so in its result: a `files changed: …` line
///    and `files_changed` in the metadata; file tools say what they wrote
///    themselves. A background process's later writes are found by the next
///    look.
/// 8. `post_tool_use` hooks; what they return is appended to the output the
///    model sees.
/// 9. Audit: one `tracing` event (target `toolgate::audit`) and, when
///    configured, one JSONL line, flushed before the call returns.
/// 10. Return the result.
///
/// A panic anywhere in steps 1–8 (a buggy tool, a buggy stage) is caught and
/// becomes a failure result with [`Decision::Panicked`]; `execute` itself
/// never panics. (This relies on the default `panic = "unwind"`.)
pub struct ExecutionEngine {
    registry: Arc<Registry>,
    guardrails: Arc<dyn Guardrails>,
    pre_hooks: Arc<dyn PreToolUse>,
    post_hooks: Arc<dyn PostToolUse>,
    /// The confirmation mode, read per call: the plan-mode tools and front
    /// ends may change it while the engine runs.
    mode: ModeCell,
    rules: ConfirmationRules,
    /// Rules saved in a shared store, read at each call.
    saved_rules: Option<Arc<dyn SavedRules>>,
    approver: Arc<dyn Approver>,
    /// The approvals of [`execute`](Self::execute)'s callers; other
    /// clients bring their own ([`execute_in`](Self::execute_in)).
    scope: ApprovalScope,
    dry_run: bool,
    default_timeout: Duration,
    audit: Vec<Arc<dyn AuditSink>>,
    session_id: Option<String>,
    /// The named client whose calls this engine serves, for the audit.
    client: Option<String>,
    workspace: Option<Workspace>,
    capture: Option<Arc<dyn ChangeCapture>>,
    /// Held while a captured call runs, so that the changes of two calls
    /// are not mixed up.
    capture_lock: tokio::sync::Mutex<()>,
}

impl fmt::Debug for ExecutionEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecutionEngine")
            .field("mode", &self.mode.get())
            .field("rules", &self.rules)
            .field("dry_run", &self.dry_run)
            .field("default_timeout", &self.default_timeout)
            .field("audit", &self.audit)
            .finish_non_exhaustive()
    }
}

impl ExecutionEngine {
    /// Resolves once the audit records of every call so far are kept
    /// ([`AuditSink::settled`]).
    pub async fn audit_settled(&self) {
        for sink in &self.audit {
            sink.settled().await;
        }
    }

    /// The registry the engine serves.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// Whether the engine is in dry-run mode.
    pub fn is_dry_run(&self) -> bool {
        self.dry_run
    }

    /// The confirmation mode the gate applies now.
    pub fn mode(&self) -> ConfirmationMode {
        self.mode.get()
    }

    /// The cell the gate reads its mode from at each call: setting it
    /// changes the mode from the next call on (see [`ModeCell`]).
    pub fn mode_cell(&self) -> &ModeCell {
        &self.mode
    }

    /// The session id tools, hooks and the audit see.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The named client whose calls this engine serves, as the audit
    /// names it.
    pub fn client(&self) -> Option<&str> {
        self.client.as_deref()
    }

    /// What each step of this gate does: the guardrails and hooks in force,
    /// the confirmation mode and who is asked, dry-run, the default timeout,
    /// where audit records go, the session id and the registered tools.
    /// Front ends that must behave alike can be compared on it.
    pub fn stages(&self) -> Stages {
        Stages {
            tools: self
                .registry
                .list()
                .iter()
                .map(|t| t.name().to_owned())
                .collect(),
            guardrails: self.guardrails.describe(),
            pre_hooks: self.pre_hooks.describe(),
            post_hooks: self.post_hooks.describe(),
            mode: self.mode.get().to_string(),
            approver: self.approver.kind().to_owned(),
            rules: self.rules.rules().map(ToString::to_string).collect(),
            saved_rules: self.saved_rules.as_ref().map(|s| s.describe()),
            dry_run: self.dry_run,
            default_timeout_ms: u64::try_from(self.default_timeout.as_millis()).unwrap_or(u64::MAX),
            audit: self.audit.iter().map(|a| format!("{a:?}")).collect(),
            session_id: self.session_id.clone(),
        }
    }

    /// Runs one call through the gate, its approvals in the engine's own
    /// scope. See the [type docs](ExecutionEngine) for the steps.
    pub async fn execute(&self, call: ToolCall) -> Execution {
        self.execute_in(call, &self.scope).await
    }

    /// Runs one call through the gate for the client whose approvals
    /// `scope` holds (an MCP client's session, say): a session-wide allow
    /// it gives applies to its own calls only, and its questions do not
    /// hold up other scopes' calls.
    pub async fn execute_in(&self, call: ToolCall, scope: &ApprovalScope) -> Execution {
        self.run(call, scope, None).await
    }

    /// [`execute_in`](Self::execute_in) for a call with an idempotency
    /// key: an approver is asked under the key
    /// ([`ApprovalRequest::idempotency_key`]), and once the call is
    /// allowed, right before it runs, `claim` is asked whether it is this
    /// worker's to run. Not claimed, the call ends with the claim's result
    /// and [`Decision::RunElsewhere`], unaudited: it did not run here.
    pub async fn execute_claimed(
        &self,
        call: ToolCall,
        scope: &ApprovalScope,
        claim: &dyn crate::RunClaim,
    ) -> Execution {
        self.run(call, scope, Some(claim)).await
    }

    /// Audits `call`, which a worker that died was running, as
    /// [`Decision::Interrupted`] with `error`, and waits until it is kept
    /// (for the ledger that takes over a dead worker's call).
    pub async fn audit_interrupted(&self, call: &ToolCall, error: &str) {
        let ended = Ended::fail(Decision::Interrupted, call.arguments.clone(), error);
        self.audit(&call.id, &call.name, &ended, Duration::ZERO);
        self.audit_settled().await;
    }

    async fn run(
        &self,
        call: ToolCall,
        scope: &ApprovalScope,
        claim: Option<&dyn crate::RunClaim>,
    ) -> Execution {
        let started = Instant::now();
        let ToolCall {
            id,
            name,
            arguments,
        } = call;
        let pipeline =
            AssertUnwindSafe(self.pipeline(&id, &name, arguments, scope, claim)).catch_unwind();
        let ended = match pipeline.await {
            Ok(ended) => ended,
            Err(panic) => Ended::fail(
                Decision::Panicked,
                Value::Null,
                format!(
                    "internal error: the call of `{name}` panicked ({})",
                    panic_message(&*panic)
                ),
            ),
        };
        let duration = started.elapsed();
        if ended.decision != Decision::RunElsewhere {
            self.audit(&id, &name, &ended, duration);
        }
        Execution {
            result: ended.result,
            decision: ended.decision,
            duration,
            effects: ended.effects,
            rule: ended.rule,
            approval: ended.approval,
            changes: ended.captured.changes,
            changed_before: ended.captured.before,
            capture_error: ended.captured.error,
        }
    }

    async fn pipeline(
        &self,
        call_id: &str,
        name: &str,
        arguments: Value,
        scope: &ApprovalScope,
        claim: Option<&dyn crate::RunClaim>,
    ) -> Ended {
        // A call without arguments is a call with none.
        let mut args = if arguments.is_null() {
            toolgate_core::empty_args()
        } else {
            arguments
        };

        // 1. Look up.
        let entry = match self.registry.get(name) {
            Ok(entry) => entry,
            Err(error) => return Ended::fail(Decision::NotFound, args, error.to_string()),
        };

        // 2 + 3. Validate, work out the effects, then guardrails.
        let mut effects = match self.validate_and_guard(&entry, call_id, &args, None).await {
            Ok(effects) => effects,
            Err(ended) => return ended.with_args(args),
        };

        // 4. Pre hooks, and a second pass of 2 + 3 over a rewrite.
        let view = self.view(&entry, &args, &effects, call_id);
        let mut context = match self.pre_hooks.pre_tool_use(&view).await {
            PreToolOutcome::Block { hook, reason } => {
                return Ended::fail(
                    Decision::HookBlocked,
                    args,
                    format!("blocked by hook {hook}: {reason}"),
                )
                .with_effects(effects);
            }
            PreToolOutcome::Continue {
                updated_input,
                additional_context,
            } => {
                if let Some(updated) = updated_input {
                    args = updated;
                    effects = match self
                        .validate_and_guard(
                            &entry,
                            call_id,
                            &args,
                            Some("after a hook rewrote them"),
                        )
                        .await
                    {
                        Ok(effects) => effects,
                        Err(ended) => return ended.with_args(args),
                    };
                }
                additional_context
            }
        };
        context.extend(
            self.guardrails
                .notes(&self.view(&entry, &args, &effects, call_id))
                .await,
        );

        // 5. Rules, then confirmation (never in dry-run).
        let saved = match &self.saved_rules {
            Some(saved) => Some(saved.current().await),
            None => None,
        };
        let matched = rules::decide(&self.rules, saved.as_ref(), name, &effects);
        let rule = matched.map(|m| m.to_string());
        if let Some(m) = matched.filter(|m| m.decision() == RuleDecision::Deny) {
            return Ended::fail(
                Decision::RuleDenied,
                args,
                format!("denied by {}", m.placed()),
            )
            .with_effects(effects)
            .with_rule(rule);
        }
        // Plan mode refuses what is not read-only, whatever the rules say
        // and in dry-run too.
        let mode = self.mode.get();
        let sensitivity = entry.tool().sensitivity(&args);
        let call = ModeCall::new(sensitivity, &effects)
            .read_only_tool(entry.spec().annotations.read_only());
        if mode == ConfirmationMode::Plan
            && ConfirmationPolicy::new(mode).decide(call) == ModeDecision::Refuse
        {
            let exit = self.registry.has(crate::plan_mode::ExitPlanMode::NAME);
            return Ended::fail(Decision::PlanMode, args, plan_refusal(name, &effects, exit))
                .with_effects(effects)
                .with_rule(rule);
        }
        let mut approval = None;
        if !self.dry_run {
            let asked = Asked {
                entry: &entry,
                args: &args,
                effects: &effects,
                sensitivity,
                call_id,
                rule: matched.as_ref(),
                scope,
                mode,
                key: claim.map(crate::RunClaim::key),
            };
            match self.confirm(asked).await {
                Ok(record) => approval = record,
                Err((ended, record)) => {
                    return ended
                        .with_args(args)
                        .with_effects(effects)
                        .with_rule(rule)
                        .with_approval(record);
                }
            }
        }

        // 6. Dry-run.
        if self.dry_run {
            let result = ToolResult::success(format!("[DRY-RUN] would execute {name}({args})"))
                .with_metadata("dry_run", true);
            return Ended {
                result,
                decision: Decision::DryRun,
                args,
                effects,
                rule,
                approval,
                captured: Captured::default(),
            };
        }

        // A keyed call runs on one worker only: claimed here, or it ends.
        if let Some(claim) = claim
            && let Err(result) = claim.claim(name).await
        {
            return Ended {
                result,
                decision: Decision::RunElsewhere,
                args,
                effects,
                rule,
                approval,
                captured: Captured::default(),
            };
        }

        // 7. Execute, with a timeout and a panic guard.
        let timeout = entry.tool().timeout().unwrap_or(self.default_timeout);
        let mut ctx = ToolContext::new(call_id);
        if let Some(session) = &self.session_id {
            ctx = ctx.with_session(session.clone());
        }
        let run = AssertUnwindSafe(entry.tool().execute(args.clone(), &ctx)).catch_unwind();
        let capture = self.capture.as_ref().filter(|_| may_write(&effects));
        let held = match capture {
            Some(_) => Some(self.capture_lock.lock().await),
            None => None,
        };
        let mut captured = Captured::default();
        if let Some(capture) = capture {
            match sync(capture).await {
                Ok(before) => captured.before = before,
                Err(e) => captured.error = Some(e),
            }
        }
        let ran = tokio::time::timeout(timeout, run).await;
        if let Some(capture) = capture.filter(|_| captured.error.is_none()) {
            match sync(capture).await {
                Ok(changes) => captured.changes = changes,
                Err(e) => captured.error = Some(e),
            }
        }
        drop(held);
        let (mut result, decision) = match ran {
            Ok(Ok(result)) => (result, Decision::Executed),
            Ok(Err(panic)) => (
                ToolResult::failure(format!(
                    "internal error: tool `{name}` panicked ({}); this is a bug in the tool",
                    panic_message(&*panic)
                )),
                Decision::Panicked,
            ),
            Err(_) => (
                ToolResult::failure(format!(
                    "tool `{name}` timed out after {}s and was stopped",
                    timeout.as_secs_f64()
                )),
                Decision::TimedOut,
            ),
        };

        if capture.is_some() {
            report_changes(&mut result, &effects, &captured);
        }

        // 8. Post hooks, and guardrail bookkeeping.
        let view = self.view(&entry, &args, &effects, call_id);
        self.guardrails.observe(&view, &result).await;
        context.extend(self.post_hooks.post_tool_use(&view, &result).await);
        for text in context.iter().filter(|text| !text.is_empty()) {
            if !result.output.is_empty() && !result.output.ends_with('\n') {
                result.output.push('\n');
            }
            result.output.push_str(text);
        }
        Ended {
            result,
            decision,
            args,
            effects,
            rule,
            approval,
            captured,
        }
    }

    fn view<'a>(
        &'a self,
        entry: &'a RegisteredTool,
        args: &'a Value,
        effects: &'a Effects,
        call_id: &'a str,
    ) -> CallView<'a> {
        CallView {
            tool: entry,
            args,
            effects,
            call_id,
            session_id: self.session_id.as_deref(),
        }
    }

    async fn validate_and_guard(
        &self,
        entry: &RegisteredTool,
        call_id: &str,
        args: &Value,
        when: Option<&str>,
    ) -> Result<Effects, PartialEnd> {
        let when = when.map(|w| format!(" {w}")).unwrap_or_default();
        if let Err(problems) = entry.validate(args) {
            return Err(PartialEnd(
                Decision::InvalidArguments,
                format!("invalid arguments for `{}`{when}: {problems}", entry.name()),
            ));
        }
        let effects = entry.tool().effects(args).map_err(|error| {
            PartialEnd(
                Decision::InvalidArguments,
                format!("`{}` cannot run{when}: {error}", entry.name()),
            )
        })?;
        if let Err(block) = self
            .guardrails
            .check(&self.view(entry, args, &effects, call_id))
            .await
        {
            return Err(PartialEnd(
                Decision::Guardrail,
                format!("guardrail: {}", block.reason),
            ));
        }
        Ok(effects)
    }

    /// Step 5's question, when the rules or the mode want one: the answer
    /// (`Ok`, with the record of the question if one was asked), or where
    /// the call ends.
    async fn confirm(
        &self,
        asked: Asked<'_>,
    ) -> Result<Option<ApprovalRecord>, (PartialEnd, Option<ApprovalRecord>)> {
        let Asked {
            entry,
            args,
            effects,
            sensitivity,
            call_id,
            rule,
            scope,
            mode,
            key,
        } = asked;
        let name = entry.name();
        let ask = match rule.map(RuleHit::decision) {
            Some(RuleDecision::Allow) => false,
            Some(RuleDecision::Ask | RuleDecision::Deny) => true,
            None => match ConfirmationPolicy::new(mode).decide(
                ModeCall::new(sensitivity, effects)
                    .read_only_tool(entry.spec().annotations.read_only()),
            ) {
                ModeDecision::Run => false,
                ModeDecision::Ask => true,
                // `dont-ask`: refused at once, with the rule that would
                // let such a call run.
                ModeDecision::Refuse => {
                    return Err((
                        PartialEnd(Decision::NoApprover, unasked(name, effects, mode)),
                        None,
                    ));
                }
            },
        };
        if !ask {
            return Ok(None);
        }
        if let Some(rule) = rule.filter(|_| mode == ConfirmationMode::DontAsk) {
            return Err((
                PartialEnd(Decision::NoApprover, rule.refused_unasked(name, mode)),
                None,
            ));
        }
        // An `ask` rule asks every time: a session-wide allow given for the
        // tool does not cover it.
        if rule.is_none() && scope.allows(name, sensitivity).await {
            return Ok(None);
        }
        let _turn = scope.turn().await;
        let asking_rule = rule.map(ToString::to_string);
        let origin = entry.tool().origin();
        let describe = || {
            ApprovalView::build(
                Subject {
                    tool: name,
                    call_id,
                    args,
                    effects,
                    sensitivity,
                    rule: asking_rule.as_deref(),
                    origin: &origin,
                    scope: scope.name(),
                },
                self.workspace.as_ref(),
            )
        };
        let view = Arc::new(describe());
        let mut request = ApprovalRequest::new(&view, args, effects, sensitivity);
        request.idempotency_key = key;
        let started = Instant::now();
        let approval = self.approver.approve(&request).await;
        let record = |answer: Answered| {
            Some(ApprovalRecord {
                view: Arc::clone(&view),
                answer,
                waited: started.elapsed(),
            })
        };
        let allowed = match approval {
            Approval::Allow => Answered::Allow,
            Approval::AllowForSession => Answered::AllowForSession,
            Approval::Deny => {
                return Err((
                    PartialEnd(Decision::Denied, "cancelled by user".to_owned()),
                    record(Answered::Deny),
                ));
            }
            Approval::Abort => {
                return Err((
                    PartialEnd(
                        Decision::Aborted,
                        "aborted by user; the run stops here".to_owned(),
                    ),
                    record(Answered::Abort),
                ));
            }
            Approval::Unavailable(hint) => {
                let message = match rule {
                    Some(rule) => rule.nobody_to_ask(name),
                    None => format!("`{name}` needs confirmation under {mode}: {hint}"),
                };
                return Err((
                    PartialEnd(Decision::NoApprover, message),
                    record(Answered::Unavailable),
                ));
            }
        };
        // What the person allowed must be what runs: a file written, edited
        // or removed while they decided changes the call.
        let now = describe();
        if now != *view {
            return Err((
                PartialEnd(
                    Decision::Changed,
                    "what this call would do changed while the person decided (a file it \
                     touches was changed meanwhile), so it was not run; call it again to be \
                     asked anew"
                        .to_owned(),
                ),
                record(Answered::Changed),
            ));
        }
        if allowed == Answered::AllowForSession {
            scope.allow(name, sensitivity).await;
        }
        Ok(record(allowed))
    }

    fn audit(&self, call_id: &str, name: &str, ended: &Ended, duration: Duration) {
        let duration_us = u64::try_from(duration.as_micros()).unwrap_or(u64::MAX);
        tracing::info!(
            target: "toolgate::audit",
            tool = name,
            call_id,
            client = self.client.as_deref(),
            decision = ended.decision.as_str(),
            success = ended.result.success,
            duration_us,
            "tool call"
        );
        if self.audit.is_empty() {
            return;
        }
        let record = AuditRecord {
            ts: jiff::Timestamp::now().to_string(),
            call_id,
            session_id: self.session_id.as_deref(),
            client: self.client.as_deref(),
            tool: name,
            args_sha256: digest(&ended.args),
            decision: ended.decision.as_str(),
            success: ended.result.success,
            duration_us,
            error: ended.result.error.as_deref(),
            effects: ended.effects.summary(),
            rule: ended.rule.as_deref(),
            transfer: None,
            files_changed: ended
                .captured
                .changes
                .iter()
                .map(|c| FileChanged {
                    path: c.path.clone(),
                    change: c.kind(),
                })
                .collect(),
        };
        for sink in &self.audit {
            sink.record(&record);
        }
    }
}

/// The call step 5 may ask about.
#[derive(Clone, Copy)]
struct Asked<'a> {
    entry: &'a RegisteredTool,
    args: &'a Value,
    effects: &'a Effects,
    sensitivity: Sensitivity,
    call_id: &'a str,
    rule: Option<&'a RuleHit<'a>>,
    scope: &'a ApprovalScope,
    /// The mode read for this call.
    mode: ConfirmationMode,
    /// The call's idempotency key, if it has one.
    key: Option<&'a str>,
}

/// What a panic carried, as text (a tool that panics fails with it).
fn panic_message(panic: &(dyn Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "no message".to_owned()
    }
}
