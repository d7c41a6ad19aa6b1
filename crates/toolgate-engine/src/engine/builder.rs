//! Configuring an engine: [`ExecutionEngine::builder`] and its setters.

use std::sync::Arc;
use std::time::Duration;

use toolgate_core::{ChangeCapture, Registry, Workspace};
use toolgate_policy::{ConfirmationPolicy, ConfirmationRules};

use super::{ExecutionEngine, SavedRules};
use crate::approval::{ApprovalScope, Approver, HeadlessApprover};
use crate::audit::{AuditLog, AuditSink};
use crate::plan_mode::ModeCell;
use crate::stages::{Guardrails, NoGuardrails, NoHooks, PostToolUse, PreToolUse};

/// Configures an [`ExecutionEngine`].
pub struct EngineBuilder {
    registry: Arc<Registry>,
    guardrails: Arc<dyn Guardrails>,
    pre_hooks: Arc<dyn PreToolUse>,
    post_hooks: Arc<dyn PostToolUse>,
    policy: ConfirmationPolicy,
    mode: Option<ModeCell>,
    rules: ConfirmationRules,
    saved_rules: Option<Arc<dyn SavedRules>>,
    approver: Arc<dyn Approver>,
    dry_run: bool,
    default_timeout: Duration,
    audit: Vec<Arc<dyn AuditSink>>,
    session_id: Option<String>,
    client: Option<String>,
    workspace: Option<Workspace>,
    capture: Option<Arc<dyn ChangeCapture>>,
    scope: String,
}

impl ExecutionEngine {
    /// A builder for an engine over `registry`.
    pub fn builder(registry: Arc<Registry>) -> EngineBuilder {
        EngineBuilder {
            registry,
            guardrails: Arc::new(NoGuardrails),
            pre_hooks: Arc::new(NoHooks),
            post_hooks: Arc::new(NoHooks),
            policy: ConfirmationPolicy::default(),
            mode: None,
            rules: ConfirmationRules::default(),
            saved_rules: None,
            approver: Arc::new(HeadlessApprover::default()),
            dry_run: false,
            default_timeout: Duration::from_secs(120),
            audit: Vec::new(),
            session_id: None,
            client: None,
            workspace: None,
            capture: None,
            scope: "this run".to_owned(),
        }
    }
}

impl EngineBuilder {
    /// Captures what each call that may write changes in the workspace
    /// (step 7): the result says which files it created, modified and
    /// deleted, and [`Execution::changes`](super::Execution::changes)
    /// carries the states for checkpoints. By default, none: nothing is
    /// captured.
    #[must_use]
    pub fn capture(mut self, capture: Arc<dyn ChangeCapture>) -> Self {
        self.capture = Some(capture);
        self
    }

    /// Sets the workspace the files a call writes are read from, to show
    /// the person the diff. By default, none: a write is shown with its
    /// new content only.
    #[must_use]
    pub fn workspace(mut self, workspace: Workspace) -> Self {
        self.workspace = Some(workspace);
        self
    }

    /// Names the scope of [`ExecutionEngine::execute`]'s approvals for
    /// people (see [`ApprovalScope`]). By default, `this run`.
    #[must_use]
    pub fn scope_name(mut self, name: impl Into<String>) -> Self {
        self.scope = name.into();
        self
    }

    /// Sets the guardrails (step 3). By default, none.
    #[must_use]
    pub fn guardrails(mut self, guardrails: Arc<dyn Guardrails>) -> Self {
        self.guardrails = guardrails;
        self
    }

    /// Sets the `pre_tool_use` hooks (step 4). By default, none.
    #[must_use]
    pub fn pre_hooks(mut self, hooks: Arc<dyn PreToolUse>) -> Self {
        self.pre_hooks = hooks;
        self
    }

    /// Sets the `post_tool_use` hooks (step 8). By default, none.
    #[must_use]
    pub fn post_hooks(mut self, hooks: Arc<dyn PostToolUse>) -> Self {
        self.post_hooks = hooks;
        self
    }

    /// Sets the confirmation policy (step 5): the mode the engine starts
    /// in. By default, `confirm-sensitive`.
    #[must_use]
    pub fn policy(mut self, policy: ConfirmationPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Shares the engine's mode with `cell` (the plan-mode tools, a front
    /// end's picker): the engine reads it at each call, and its mode is
    /// then the cell's, not [`policy`](Self::policy)'s. By default, a cell
    /// of its own, starting in the policy's mode
    /// ([`ExecutionEngine::mode_cell`]).
    #[must_use]
    pub fn mode_cell(mut self, cell: ModeCell) -> Self {
        self.mode = Some(cell);
        self
    }

    /// Sets the persistent allow/ask/deny rules consulted at step 5, before
    /// the mode (see [`ConfirmationRules`] for how they match). By default,
    /// none.
    #[must_use]
    pub fn rules(mut self, rules: ConfirmationRules) -> Self {
        self.rules = rules;
        self
    }

    /// Adds rules saved outside the configuration (in a store several
    /// workers share), read at every call and applied beside
    /// [`rules`](Self::rules) with the same precedence: `deny` beats `ask`
    /// beats `allow`, wherever each is kept. When they cannot be read, the
    /// call is asked as under an `ask` rule. By default, none.
    #[must_use]
    pub fn saved_rules(mut self, saved: Arc<dyn SavedRules>) -> Self {
        self.saved_rules = Some(saved);
        self
    }

    /// Sets who is asked when a call needs confirmation. By default, a
    /// [`HeadlessApprover`]: nobody, so such calls fail with a hint.
    #[must_use]
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// Sets dry-run (step 6): calls that pass steps 1–4 succeed with a
    /// `[DRY-RUN]` description instead of running, and nobody is asked.
    /// By default, off.
    #[must_use]
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }

    /// Sets how long a tool may run when it does not say (step 7).
    /// By default, 120 seconds.
    #[must_use]
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// Adds a JSONL audit file (step 9). By default, only the `tracing`
    /// event.
    #[must_use]
    pub fn audit(self, audit: AuditLog) -> Self {
        self.audit_sink(Arc::new(audit))
    }

    /// Adds a place audit records go (step 9): a store, a file. Every sink
    /// gets every record. By default, only the `tracing` event.
    #[must_use]
    pub fn audit_sink(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.audit.push(sink);
        self
    }

    /// Sets the session id passed to tools, stages and the audit log.
    /// By default, none.
    #[must_use]
    pub fn session_id(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }

    /// Names the client whose calls the engine serves (an MCP client of
    /// `mcp.http.clients`): every audit record and audit event carries it.
    /// By default, none.
    #[must_use]
    pub fn client(mut self, name: impl Into<String>) -> Self {
        self.client = Some(name.into());
        self
    }

    /// Builds the engine.
    pub fn build(self) -> ExecutionEngine {
        ExecutionEngine {
            registry: self.registry,
            guardrails: self.guardrails,
            pre_hooks: self.pre_hooks,
            post_hooks: self.post_hooks,
            mode: self
                .mode
                .unwrap_or_else(|| ModeCell::new(self.policy.mode())),
            rules: self.rules,
            saved_rules: self.saved_rules,
            approver: self.approver,
            scope: ApprovalScope::new(self.scope),
            dry_run: self.dry_run,
            default_timeout: self.default_timeout,
            audit: self.audit,
            session_id: self.session_id,
            client: self.client,
            workspace: self.workspace,
            capture: self.capture,
            capture_lock: tokio::sync::Mutex::new(()),
        }
    }
}
