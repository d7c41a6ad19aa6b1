//! [`UiApprover`]: the gate's approver when a person answers in the web UI
//! — a call's card published to the open pages (or, with a shared store,
//! written there for any worker's UI), its answer awaited, and a card
//! dropped when its call goes away; [`Binding`] ties it to a run's session
//! and agent.

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use toolgate_engine::{Approval, ApprovalRequest, Approver, PlanAnswer, PlanRequest};
use toolgate_host::StoreApprover;
use toolgate_policy::RuleDecision;
use toolgate_store::ApprovalRecord;

use super::{Answer, Approvals, Reply};

/// What a run's approvals are tied to once it has started.
#[derive(Debug, Clone, Default)]
pub struct Binding {
    /// The session (none for `mcp serve`).
    pub session: Option<String>,
}

/// The approver the gate asks when the web UI answers.
pub struct UiApprover {
    pub(super) approvals: Arc<Approvals>,
    pub(super) agent: Option<String>,
    pub(super) binding: OnceLock<Binding>,
}

impl std::fmt::Debug for UiApprover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UiApprover")
            .field("agent", &self.agent)
            .finish_non_exhaustive()
    }
}

impl UiApprover {
    /// An approver for calls of `agent`'s run (none for `mcp serve`).
    pub fn new(approvals: Arc<Approvals>, agent: Option<String>) -> Self {
        Self {
            approvals,
            agent,
            binding: OnceLock::new(),
        }
    }

    /// Ties later approvals to a session and names MCP tools' servers
    /// (once; later calls are ignored).
    pub fn bind(&self, binding: Binding) {
        let _ = self.binding.set(binding);
    }
}

/// Takes a pending call out of the list when its wait is dropped (the run
/// was aborted).
pub(super) struct Abandon<'a> {
    pub(super) approvals: &'a Approvals,
    pub(super) key: u64,
}

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        self.approvals.abandon(self.key);
    }
}

impl UiApprover {
    /// Asks through the store too: the card `sN` is answered from this
    /// page or from any process sharing the store, whichever comes first.
    pub(super) async fn approve_shared(
        &self,
        shared: &StoreApprover,
        request: &ApprovalRequest<'_>,
        record: ApprovalRecord,
    ) -> Approval {
        let id = record.id;
        let (key, rx) = self.approvals.open(
            request,
            self.binding.get(),
            self.agent.as_deref(),
            Some(&record),
        );
        let abandon = Abandon {
            approvals: &self.approvals,
            key,
        };
        tokio::select! {
            reply = rx => {
                let (approval, answer) = match reply {
                    Ok(Reply::Allow) => (Approval::Allow, Answer::Allow),
                    Ok(Reply::Session) => (Approval::AllowForSession, Answer::Session),
                    Ok(Reply::Deny | Reply::Plan(_)) | Err(_) => (Approval::Deny, Answer::Deny),
                };
                // Answered here: written already, unless the run was
                // stopped (then it is denied in the store too).
                let _ = self.approvals.answer_stored(&format!("s{id}"), id, answer).await;
                drop(abandon);
                approval
            }
            approval = shared.wait(record) => {
                let name = match &approval {
                    Approval::Allow => "allow",
                    Approval::AllowForSession => "session",
                    Approval::Deny => "deny",
                    _ => "cancelled",
                };
                self.approvals.drop_card(key, name);
                drop(abandon);
                approval
            }
        }
    }
}

#[async_trait]
impl Approver for UiApprover {
    fn kind(&self) -> &'static str {
        "ui"
    }

    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval {
        match self.approvals.user_rule(request) {
            // An `ask` rule asks every time: an allow in the file does not
            // spare the card it asked for.
            Some(RuleDecision::Allow) if request.rule.is_none() => return Approval::Allow,
            Some(RuleDecision::Deny) => return Approval::Deny,
            _ => {}
        }
        if let Some(shared) = &self.approvals.shared {
            let session = self.binding.get().and_then(|b| b.session.as_deref());
            match shared.ask(request, session).await {
                Ok(record) => return self.approve_shared(shared, request, record).await,
                Err(error) => tracing::warn!(
                    "the question could not be recorded in the store, so only this page can \
                     answer it: {}",
                    toolgate_core::error_chain(&error)
                ),
            }
        }
        let (key, rx) =
            self.approvals
                .open(request, self.binding.get(), self.agent.as_deref(), None);
        let _abandon = Abandon {
            approvals: &self.approvals,
            key,
        };
        match rx.await {
            Ok(Reply::Allow) => Approval::Allow,
            Ok(Reply::Session) => Approval::AllowForSession,
            Ok(Reply::Deny | Reply::Plan(_)) | Err(_) => Approval::Deny,
        }
    }

    fn reviews_plans(&self) -> bool {
        true
    }

    /// The plan as a card on the page, answered with a mode or "keep
    /// planning"; a run that stops (the card cancelled) keeps planning.
    async fn approve_plan(&self, request: &PlanRequest<'_>) -> PlanAnswer {
        let (key, rx) =
            self.approvals
                .open_plan(request, self.binding.get(), self.agent.as_deref());
        let _abandon = Abandon {
            approvals: &self.approvals,
            key,
        };
        match rx.await {
            Ok(Reply::Plan(answer)) => answer,
            Ok(_) | Err(_) => PlanAnswer::KeepPlanning(String::new()),
        }
    }
}
