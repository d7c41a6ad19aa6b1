//! Approvals: calls waiting for a person, answered from the page.
//!
//! The gate asks a [`UiApprover`]; it puts the call in the pending list
//! with everything the card shows ([`crate::describe`]), sends an
//! `approval` event, and waits. An answer from the page (or "Approve
//! all") resolves it; a run that stops cancels its pending calls (they are
//! denied); a call whose run is dropped leaves the list by itself.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use toolgate_core::TypedTool as _;
use toolgate_engine::{
    Approval, ApprovalRequest, Approver, ExitPlanMode, PLAN_EXITS, PlanAnswer, PlanRequest,
};
use toolgate_host::UserRules;
use toolgate_policy::{ConfirmationMode, ConfirmationRule, RuleDecision};

use crate::describe::Describer;
use crate::hub::Hub;

/// A person's answer on the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Answer {
    /// Run this call.
    Allow,
    /// Do not run it; the model is told.
    Deny,
    /// Run it, and every later call of the same tool with the same
    /// sensitivity in this session.
    Session,
    /// Save the card's rule in the user's config, then run it.
    Always,
}

struct Pending {
    info: Arc<Value>,
    session: Option<String>,
    reply: oneshot::Sender<Reply>,
}

/// What the waiting call (or plan) gets.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Reply {
    Allow,
    Session,
    Deny,
    /// The answer to a plan card.
    Plan(PlanAnswer),
}

/// Why an answer was not taken.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ResolveError {
    #[error("approval {0} is not pending (answered already, or its run stopped)")]
    NotPending(String),
    #[error("no rule can be saved for this call: answer allow, or allow for the session")]
    NoRule,
    #[error(
        "approval {0} leaves part of what the call would run out of its card: show everything \
         before allowing it"
    )]
    Unseen(String),
    #[error(
        "approval {0} is a plan: approve it with the mode to go on in, or keep the model \
         planning (POST /api/approvals/{0}/plan)"
    )]
    IsPlan(String),
    #[error("approval {0} is a call, not a plan: answer it with allow, deny, session or always")]
    NotPlan(String),
    #[error("{0} is not a mode this plan can go on in (choose one of its `choices`)")]
    NotAChoice(String),
}

/// The pending calls of every run this server serves.
pub struct Approvals {
    next: AtomicU64,
    pending: Mutex<BTreeMap<u64, Pending>>,
    hub: Hub,
    describer: Describer,
    /// The environment the user's config file is found from.
    env: Vec<(String, String)>,
}

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approvals").finish_non_exhaustive()
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Approvals {
    pub(crate) fn new(hub: Hub, describer: Describer, env: Vec<(String, String)>) -> Self {
        Self {
            next: AtomicU64::new(1),
            pending: Mutex::default(),
            hub,
            describer,
            env,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Pending>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every pending approval, oldest first.
    pub fn pending(&self) -> Vec<Value> {
        self.lock().values().map(|p| (*p.info).clone()).collect()
    }

    /// The card's rule of a pending approval.
    pub(crate) fn rule_of(&self, id: &str) -> Result<Option<ConfirmationRule>, ResolveError> {
        let key = parse_id(id)?;
        let pending = self.lock();
        let info = &pending
            .get(&key)
            .ok_or_else(|| ResolveError::NotPending(id.to_owned()))?
            .info;
        Ok(serde_json::from_value(info["always"].clone()).ok())
    }

    /// Answers approval `id`. For [`Answer::Always`] the caller has saved
    /// the card's rule in the user's file already. An answer that allows
    /// a call whose card was folded (it leaves part of what would run out)
    /// is refused unless the person has `seen` it whole.
    pub(crate) fn resolve(&self, id: &str, answer: Answer, seen: bool) -> Result<(), ResolveError> {
        let key = parse_id(id)?;
        let pending = {
            let mut pending = self.lock();
            let entry = pending
                .get(&key)
                .ok_or_else(|| ResolveError::NotPending(id.to_owned()))?;
            if is_plan(&entry.info) {
                // Deny keeps the model planning; nothing else fits a plan.
                if answer != Answer::Deny {
                    return Err(ResolveError::IsPlan(id.to_owned()));
                }
                let removed = pending
                    .remove(&key)
                    .ok_or_else(|| ResolveError::NotPending(id.to_owned()))?;
                drop(pending);
                let _ = removed
                    .reply
                    .send(Reply::Plan(PlanAnswer::KeepPlanning(String::new())));
                self.resolved(key, removed.session.as_deref(), "keep_planning");
                return Ok(());
            }
            if answer != Answer::Deny && !seen && !entry.info["folded"]["hidden"].is_null() {
                return Err(ResolveError::Unseen(id.to_owned()));
            }
            pending
                .remove(&key)
                .ok_or_else(|| ResolveError::NotPending(id.to_owned()))?
        };
        let reply = match answer {
            Answer::Allow | Answer::Always => Reply::Allow,
            Answer::Session => Reply::Session,
            Answer::Deny => Reply::Deny,
        };
        let _ = pending.reply.send(reply);
        self.resolved(key, pending.session.as_deref(), answer_name(answer));
        Ok(())
    }

    /// Answers plan `id`: go on in `mode` (one of the card's choices), or,
    /// without one, keep the model planning with `feedback`.
    pub(crate) fn resolve_plan(
        &self,
        id: &str,
        mode: Option<ConfirmationMode>,
        feedback: Option<String>,
    ) -> Result<PlanAnswer, ResolveError> {
        let key = parse_id(id)?;
        let pending = {
            let mut pending = self.lock();
            let entry = pending
                .get(&key)
                .ok_or_else(|| ResolveError::NotPending(id.to_owned()))?;
            if !is_plan(&entry.info) {
                return Err(ResolveError::NotPlan(id.to_owned()));
            }
            if let Some(mode) = mode
                && !PLAN_EXITS.contains(&mode)
            {
                return Err(ResolveError::NotAChoice(mode.to_string()));
            }
            pending
                .remove(&key)
                .ok_or_else(|| ResolveError::NotPending(id.to_owned()))?
        };
        let answer = match mode {
            Some(mode) => PlanAnswer::Continue(mode),
            None => PlanAnswer::KeepPlanning(feedback.unwrap_or_default()),
        };
        let _ = pending.reply.send(Reply::Plan(answer.clone()));
        let name = match &answer {
            PlanAnswer::Continue(mode) => mode.as_str(),
            _ => "keep_planning",
        };
        self.resolved(key, pending.session.as_deref(), name);
        Ok(answer)
    }

    /// Refuses, for a folded card (one that leaves part of what would run
    /// out), an allowing answer that does not say the card was seen whole.
    pub(crate) fn check_seen(&self, id: &str) -> Result<(), ResolveError> {
        let key = parse_id(id)?;
        let pending = self.lock();
        let entry = pending
            .get(&key)
            .ok_or_else(|| ResolveError::NotPending(id.to_owned()))?;
        if entry.info["folded"]["hidden"].is_null() {
            Ok(())
        } else {
            Err(ResolveError::Unseen(id.to_owned()))
        }
    }

    /// Denies every pending call of `session` (its run is stopping).
    pub(crate) fn cancel_session(&self, session: &str) {
        let cancelled: Vec<(u64, Pending)> = {
            let mut pending = self.lock();
            let keys: Vec<u64> = pending
                .iter()
                .filter(|(_, p)| p.session.as_deref() == Some(session))
                .map(|(k, _)| *k)
                .collect();
            keys.into_iter()
                .filter_map(|k| pending.remove(&k).map(|p| (k, p)))
                .collect()
        };
        for (key, p) in cancelled {
            let _ = p.reply.send(Reply::Deny);
            self.resolved(key, p.session.as_deref(), "cancelled");
        }
    }

    fn resolved(&self, key: u64, session: Option<&str>, answer: &str) {
        self.hub.emit(&json!({
            "type": "approval_resolved",
            "id": key.to_string(),
            "session": session,
            "answer": answer,
        }));
    }

    /// What the user's rules say about a call now, read afresh from their
    /// file: a rule saved with "Always allow" (or `toolgate rules add`)
    /// applies at once to the runs going on, whose gates read the rules
    /// when they started; a removed one stops applying. `None` when no
    /// rule decides (or the file cannot be read: then the person is
    /// asked, as without rules).
    pub(crate) fn user_rule(&self, request: &ApprovalRequest<'_>) -> Option<RuleDecision> {
        let rules = UserRules::open_user(&self.env).ok()?.rules().ok()?;
        if rules.is_empty() {
            return None;
        }
        let mut builder = toolgate_host::confirmation_rules_builder();
        builder.rules(rules);
        if let Some(root) = self.describer.workspace().to_str() {
            builder.root(root);
        }
        let rules = builder.build().ok()?;
        rules
            .evaluate(request.tool, request.effects)
            .map(|m| m.decision())
    }

    fn open(
        &self,
        request: &ApprovalRequest<'_>,
        binding: Option<&Binding>,
        agent: Option<&str>,
    ) -> (u64, oneshot::Receiver<Reply>) {
        let session = binding.and_then(|b| b.session.clone());
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        let mut info = crate::describe::describe(request);
        if let Some(object) = info.as_object_mut() {
            object.insert("id".into(), Value::from(key.to_string()));
            object.insert("session".into(), json!(session));
            object.insert("agent".into(), json!(agent));
            object.insert("created".into(), Value::from(now_ms()));
        }
        self.publish(key, info, session)
    }

    /// Lists `info` as pending under `key` and tells the page; the
    /// receiver gets the person's reply.
    fn publish(
        &self,
        key: u64,
        info: Value,
        session: Option<String>,
    ) -> (u64, oneshot::Receiver<Reply>) {
        let (tx, rx) = oneshot::channel();
        let info = Arc::new(info);
        let mut event = (*info).clone();
        event["type"] = Value::from("approval");
        self.lock().insert(
            key,
            Pending {
                info,
                session,
                reply: tx,
            },
        );
        self.hub.emit(&event);
        (key, rx)
    }

    /// Puts a plan on the list: the card shows the plan as text and the
    /// modes it may go on in.
    fn open_plan(
        &self,
        request: &PlanRequest<'_>,
        binding: Option<&Binding>,
        agent: Option<&str>,
    ) -> (u64, oneshot::Receiver<Reply>) {
        let session = binding.and_then(|b| b.session.clone());
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        let choices: Vec<&str> = request.choices.iter().map(|m| m.as_str()).collect();
        let info = json!({
            "kind": "plan",
            "id": key.to_string(),
            "session": session,
            "agent": agent,
            "created": now_ms(),
            "tool": ExitPlanMode::NAME,
            "why": "the model proposes this plan and asks to leave plan mode",
            "plan": request.plan,
            "choices": choices,
        });
        self.publish(key, info, session)
    }

    /// Removes `key` if still pending (its call was dropped).
    fn abandon(&self, key: u64) {
        let removed = self.lock().remove(&key);
        if let Some(p) = removed {
            self.resolved(key, p.session.as_deref(), "cancelled");
        }
    }
}

/// Whether a pending entry is a plan card rather than a call's.
fn is_plan(info: &Value) -> bool {
    info["kind"] == "plan"
}

fn parse_id(id: &str) -> Result<u64, ResolveError> {
    id.parse()
        .map_err(|_| ResolveError::NotPending(id.to_owned()))
}

fn answer_name(answer: Answer) -> &'static str {
    match answer {
        Answer::Allow => "allow",
        Answer::Deny => "deny",
        Answer::Session => "session",
        Answer::Always => "always",
    }
}

/// What a run's approvals are tied to once it has started.
#[derive(Debug, Clone, Default)]
pub struct Binding {
    /// The session (none for `mcp serve`).
    pub session: Option<String>,
}

/// The approver the gate asks when the web UI answers.
pub struct UiApprover {
    approvals: Arc<Approvals>,
    agent: Option<String>,
    binding: OnceLock<Binding>,
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
struct Abandon<'a> {
    approvals: &'a Approvals,
    key: u64,
}

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        self.approvals.abandon(self.key);
    }
}

#[async_trait]
impl Approver for UiApprover {
    fn kind(&self) -> &'static str {
        "ui"
    }

    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval {
        match self.approvals.user_rule(request) {
            Some(RuleDecision::Allow) => return Approval::Allow,
            Some(RuleDecision::Deny) => return Approval::Deny,
            _ => {}
        }
        let (key, rx) = self
            .approvals
            .open(request, self.binding.get(), self.agent.as_deref());
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

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::{Change, Effect, Effects, Sensitivity};
    use toolgate_engine::ApprovalView;

    fn approvals(home: &std::path::Path) -> Approvals {
        let describer = Describer::new(home.join("ws"));
        let env = vec![("HOME".to_owned(), home.display().to_string())];
        Approvals::new(Hub::new(), describer, env)
    }

    fn first_pending(approvals: &Approvals) -> Option<String> {
        approvals
            .pending()
            .first()
            .and_then(|p| p["id"].as_str().map(str::to_owned))
    }

    #[tokio::test]
    async fn a_saved_rule_applies_at_once_and_a_removed_one_stops() {
        let home = tempfile::tempdir().unwrap();
        let approvals = Arc::new(approvals(home.path()));
        let effects = Effects::known([Effect::write("a.txt", Change::from_texts(None, "x"))]);
        let args = json!({"path": "a.txt", "content": "x"});
        let view = ApprovalView::new("write_file", "c1", &args, &effects, Sensitivity::Sensitive);
        let request = ApprovalRequest::new(&view, &args, &effects, Sensitivity::Sensitive);
        assert_eq!(approvals.user_rule(&request), None);
        let approver = UiApprover::new(Arc::clone(&approvals), Some("build".into()));
        // The page answers "Always allow": the server saves the card's
        // rule, then resolves.
        let page = {
            let approvals = Arc::clone(&approvals);
            tokio::spawn(async move {
                let id = loop {
                    if let Some(id) = first_pending(&approvals) {
                        break id;
                    }
                    tokio::task::yield_now().await;
                };
                let rule = approvals.rule_of(&id).unwrap().unwrap();
                let mut file = UserRules::open_user(&approvals.env).unwrap();
                file.add(&rule).unwrap();
                file.save().unwrap();
                approvals.resolve(&id, Answer::Always, false).unwrap();
            })
        };
        assert_eq!(approver.approve(&request).await, Approval::Allow);
        page.await.unwrap();
        // The next call is allowed without a card.
        assert_eq!(approvals.user_rule(&request), Some(RuleDecision::Allow));
        assert_eq!(approver.approve(&request).await, Approval::Allow);
        assert!(approvals.pending().is_empty());
        // Removed from the file (here, as `toolgate rules remove` does):
        // asked again.
        let mut file = UserRules::open_user(&approvals.env).unwrap();
        file.remove(1).unwrap();
        file.save().unwrap();
        assert_eq!(approvals.user_rule(&request), None);
        // A deny rule added meanwhile refuses without a card.
        let mut file = UserRules::open_user(&approvals.env).unwrap();
        file.add(&ConfirmationRule {
            tool: "*".into(),
            command: None,
            path: Some("a.txt".into()),
            decision: RuleDecision::Deny,
            ..ConfirmationRule::default()
        })
        .unwrap();
        file.save().unwrap();
        assert_eq!(approver.approve(&request).await, Approval::Deny);
        assert!(approvals.pending().is_empty());
    }

    #[tokio::test]
    async fn a_folded_card_is_not_allowed_unseen() {
        let home = tempfile::tempdir().unwrap();
        let approvals = Arc::new(approvals(home.path()));
        let approver = UiApprover::new(Arc::clone(&approvals), None);
        let long = format!("echo {} END", "x".repeat(10_000));
        let effects = Effects::known([Effect::command(long, None)]);
        let args = json!({});
        let view = ApprovalView::new("run_command", "c1", &args, &effects, Sensitivity::Sensitive);
        let request = ApprovalRequest::new(&view, &args, &effects, Sensitivity::Sensitive);
        let page = {
            let approvals = Arc::clone(&approvals);
            tokio::spawn(async move {
                let id = loop {
                    if let Some(id) = first_pending(&approvals) {
                        break id;
                    }
                    tokio::task::yield_now().await;
                };
                let card = approvals.pending()[0].clone();
                assert!(
                    card["folded"]["hidden"]["bytes"].as_u64().unwrap() > 9_000,
                    "{card}"
                );
                for answer in [Answer::Allow, Answer::Session, Answer::Always] {
                    assert!(matches!(
                        approvals.resolve(&id, answer, false),
                        Err(ResolveError::Unseen(_))
                    ));
                }
                assert!(matches!(
                    approvals.check_seen(&id),
                    Err(ResolveError::Unseen(_))
                ));
                approvals.resolve(&id, Answer::Allow, true).unwrap();
            })
        };
        assert_eq!(approver.approve(&request).await, Approval::Allow);
        page.await.unwrap();
    }

    #[tokio::test]
    async fn a_dropped_wait_leaves_the_pending_list() {
        let home = tempfile::tempdir().unwrap();
        let approvals = Arc::new(approvals(home.path()));
        let approver = UiApprover::new(Arc::clone(&approvals), None);
        let effects = Effects::Opaque;
        let args = json!({});
        let view = ApprovalView::new(
            "mcp_fs_write",
            "c1",
            &args,
            &effects,
            Sensitivity::Sensitive,
        );
        let request = ApprovalRequest::new(&view, &args, &effects, Sensitivity::Sensitive);
        let waited = tokio::time::timeout(
            std::time::Duration::from_millis(50),
            approver.approve(&request),
        )
        .await;
        assert!(waited.is_err(), "nobody answered, so the call waited");
        assert!(approvals.pending().is_empty(), "{:?}", approvals.pending());
    }
}
