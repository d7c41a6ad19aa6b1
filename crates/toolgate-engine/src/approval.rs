//! Step 5: asking a person.

use async_trait::async_trait;
use serde_json::Value;
use toolgate_core::{Effects, Sensitivity};

/// A call waiting for approval.
#[derive(Debug, Clone, Copy)]
pub struct ApprovalRequest<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The arguments it will run with.
    pub args: &'a Value,
    /// What it will do (for showing the person: the diff of a write, the
    /// command line).
    pub effects: &'a Effects,
    /// Why it needs approval.
    pub sensitivity: Sensitivity,
    /// The call's id.
    pub call_id: &'a str,
    /// The `confirmation.rules` rule that asks, when a rule does rather
    /// than the mode (`rule 2 (ask run_command command `git push`)`).
    pub rule: Option<&'a str>,
}

impl<'a> ApprovalRequest<'a> {
    /// The environment variables the call sets for the commands it runs
    /// (`run_command`'s `env`), as confirmation rules match them.
    pub fn env_names(&self) -> Vec<&'a str> {
        env_names(self.args)
    }

    /// Why the call needs a person, in words, for any front end's prompt:
    /// the rule that asks, the command's class, or what kind of call it is.
    pub fn reason(&self) -> String {
        if let Some(rule) = self.rule {
            return format!("asked by {rule} in confirmation.rules");
        }
        match self.sensitivity {
            Sensitivity::ReadOnly => "confirm-all asks for every call".to_owned(),
            Sensitivity::Command(class) => format!("command classified {}", class.as_str()),
            _ if self.effects.is_opaque() => {
                "what it does cannot be known in advance (an MCP or dynamic tool)".to_owned()
            }
            _ => "it can change things".to_owned(),
        }
    }
}

/// The names of a call's `env` argument (`run_command`'s variables).
pub(crate) fn env_names(args: &Value) -> Vec<&str> {
    args.get("env")
        .and_then(Value::as_object)
        .map(|env| env.keys().map(String::as_str).collect())
        .unwrap_or_default()
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
/// The gate calls approvers one at a time, so an implementation does not
/// need to guard against two prompts at once.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Asks about one call.
    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval;

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
