//! Approvals: calls waiting for a person, answered from the page.
//!
//! The gate asks a [`UiApprover`]; it puts the call in the pending list
//! with everything the card shows ([`crate::describe`]), sends an
//! `approval` event, and waits. An answer from the page (or "Approve
//! all") resolves it; a run that stops cancels its pending calls (they are
//! denied); a call whose run is dropped leaves the list by itself.
//!
//! # Shared approvals
//!
//! When the server has a store ([`Approvals::new`] with a
//! [`StoreApprover`]), a call's question also waits in the store, under
//! the card id `sN` (`N`, the store's id): every UI sharing the store
//! (other workers', other processes' on one machine) lists it beside its
//! own cards, and any of them answers it. The first answer wins, in the
//! store: a later one, here or anywhere, is told the call was answered
//! already (`409`). The asking call takes whichever answer comes first,
//! from its own page or through the store. Plan cards stay local.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use toolgate_core::TypedTool as _;
use toolgate_engine::{ApprovalRequest, ExitPlanMode, PLAN_EXITS, PlanAnswer, PlanRequest};
use toolgate_host::{StoreApprover, StoredView, UserRules};
use toolgate_policy::{ConfirmationMode, ConfirmationRule, RuleDecision};
use toolgate_store::{Answered, ApprovalRecord, ApprovalStatus, Store};

use crate::describe::Describer;
use crate::hub::Hub;

pub use approver::{Binding, UiApprover};

mod approver;

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
    /// The card's id: the local number, or `sN` for a question waiting in
    /// the store as approval `N`.
    id: String,
    info: Arc<Value>,
    session: Option<String>,
    reply: oneshot::Sender<Reply>,
    /// The store's approval, when the question waits there too.
    stored: Option<i64>,
    /// Whether a dropped wait denies it in the store: not for a call with
    /// an idempotency key, whose retry waits for the same answer.
    release: bool,
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
    #[error("approval {0} was answered already (the first answer, from any worker, wins)")]
    AlreadyAnswered(String),
    #[error("the answer to approval {id} could not be written to the store: {error}")]
    Store { id: String, error: String },
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
    /// The store questions wait in too, when shared (see the module docs).
    shared: Option<StoreApprover>,
    /// The store where "Always allow" saves, and whose saved rules the
    /// rules page lists: only a store that several workers share
    /// (`store.url`); none on `SQLite`, where the file alone holds rules.
    saved_rules: Option<Arc<dyn Store>>,
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
    /// The pending list of a server; with `shared`, questions wait in its
    /// store too, and the store's pending approvals are listed.
    pub(crate) fn new(
        hub: Hub,
        describer: Describer,
        env: Vec<(String, String)>,
        shared: Option<StoreApprover>,
    ) -> Self {
        Self {
            next: AtomicU64::new(1),
            pending: Mutex::default(),
            hub,
            describer,
            env,
            shared,
            saved_rules: None,
        }
    }

    /// "Always allow" saves in `store`, and the rules page lists its rules
    /// (for a store several workers share, whose rules every gate applies).
    #[must_use]
    pub(crate) fn with_saved_rules(mut self, store: Arc<dyn Store>) -> Self {
        self.saved_rules = Some(store);
        self
    }

    /// The shared store rules are saved in, if any.
    pub(crate) fn saved_rules(&self) -> Option<&Arc<dyn Store>> {
        self.saved_rules.as_ref()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Pending>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The local key of card `id`, if it is this server's.
    fn local(&self, id: &str) -> Option<u64> {
        self.lock()
            .iter()
            .find(|(_, p)| p.id == id)
            .map(|(key, _)| *key)
    }

    /// Every pending approval, oldest first: this server's cards, then
    /// those waiting in the shared store for other processes.
    pub async fn pending(&self) -> Vec<Value> {
        let (mut cards, mine): (Vec<Value>, Vec<i64>) = {
            let pending = self.lock();
            (
                pending.values().map(|p| (*p.info).clone()).collect(),
                pending.values().filter_map(|p| p.stored).collect(),
            )
        };
        for (record, gone) in self.stored_pending().await {
            if !mine.contains(&record.id)
                && let Some(card) = stored_card(&record, gone)
            {
                cards.push(card);
            }
        }
        cards
    }

    /// The shared store's pending approvals other processes asked (none
    /// without a store; a store that cannot be read lists none, with a
    /// warning), each with whether its worker is gone. This process's own
    /// are its cards: one stored but not yet listed here is about to be,
    /// with what only this process knows (the agent). A question of a
    /// worker that is gone is left out when its call had no idempotency
    /// key (no retry can find it: nobody waits for the answer); with one,
    /// it is listed, marked, as the answer serves the client's retry.
    async fn stored_pending(&self) -> Vec<(ApprovalRecord, bool)> {
        let Some(shared) = &self.shared else {
            return Vec::new();
        };
        match shared.store().pending_approvals(store_now()).await {
            Ok(list) => {
                let mut alive: BTreeMap<String, bool> = BTreeMap::new();
                let mut listed = Vec::new();
                for record in list {
                    if record.worker == shared.worker() {
                        continue;
                    }
                    let live = if let Some(live) = alive.get(&record.worker) {
                        *live
                    } else {
                        // Unknown counts as alive: listed as before.
                        let live = shared
                            .store()
                            .worker_alive(&record.worker)
                            .await
                            .unwrap_or(true);
                        alive.insert(record.worker.clone(), live);
                        live
                    };
                    if live || !toolgate_host::asked_without_key(&record) {
                        listed.push((record, !live));
                    }
                }
                listed
            }
            Err(error) => {
                tracing::warn!(
                    "the store's pending approvals cannot be listed: {}",
                    toolgate_core::error_chain(&error)
                );
                Vec::new()
            }
        }
    }

    /// The card of a pending approval: this server's, or one waiting in
    /// the shared store.
    async fn card(&self, id: &str) -> Result<Arc<Value>, ResolveError> {
        let local = self
            .lock()
            .values()
            .find(|p| p.id == id)
            .map(|p| Arc::clone(&p.info));
        if let Some(info) = local {
            return Ok(info);
        }
        let record = self.stored(id).await?;
        if record.status != ApprovalStatus::Pending {
            return Err(ResolveError::AlreadyAnswered(id.to_owned()));
        }
        stored_card(&record, false)
            .map(Arc::new)
            .ok_or_else(|| ResolveError::NotPending(id.to_owned()))
    }

    /// The store's approval behind card `sN`.
    async fn stored(&self, id: &str) -> Result<ApprovalRecord, ResolveError> {
        let not_pending = || ResolveError::NotPending(id.to_owned());
        let (Some(shared), Some(n)) = (
            &self.shared,
            id.strip_prefix('s').and_then(|n| n.parse::<i64>().ok()),
        ) else {
            return Err(not_pending());
        };
        shared
            .store()
            .approval(n)
            .await
            .map_err(|e| ResolveError::Store {
                id: id.to_owned(),
                error: toolgate_core::error_chain(&e),
            })?
            .ok_or_else(not_pending)
    }

    /// The card's rule of a pending approval.
    pub(crate) async fn rule_of(&self, id: &str) -> Result<Option<ConfirmationRule>, ResolveError> {
        let info = self.card(id).await?;
        Ok(serde_json::from_value(info["always"].clone()).ok())
    }

    /// Writes `answer` to the store's approval `n` (card `id`): the first
    /// answer wins.
    async fn answer_stored(&self, id: &str, n: i64, answer: Answer) -> Result<(), ResolveError> {
        let Some(shared) = &self.shared else {
            return Err(ResolveError::NotPending(id.to_owned()));
        };
        let answered = shared
            .store()
            .answer_approval(&toolgate_store::Answer {
                id: n,
                approve: answer != Answer::Deny,
                for_session: answer == Answer::Session,
                by: format!("ui@{}", shared.worker()),
                at: store_now(),
            })
            .await
            .map_err(|e| ResolveError::Store {
                id: id.to_owned(),
                error: toolgate_core::error_chain(&e),
            })?;
        match answered {
            Answered::Answered(_) => Ok(()),
            Answered::AlreadyAnswered(_) => Err(ResolveError::AlreadyAnswered(id.to_owned())),
            _ => Err(ResolveError::NotPending(id.to_owned())),
        }
    }

    /// Answers approval `id`. For [`Answer::Always`] the caller has saved
    /// the card's rule in the user's file already. An answer that allows
    /// a call whose card was folded (it leaves part of what would run out)
    /// is refused unless the person has `seen` it whole. A card waiting in
    /// the store is answered there first: the first answer wins.
    pub(crate) async fn resolve(
        &self,
        id: &str,
        answer: Answer,
        seen: bool,
    ) -> Result<(), ResolveError> {
        let Some(key) = self.local(id) else {
            // Another process's question, waiting in the store.
            let info = self.card(id).await?;
            if answer != Answer::Deny && !seen && !info["folded"]["hidden"].is_null() {
                return Err(ResolveError::Unseen(id.to_owned()));
            }
            let record = self.stored(id).await?;
            self.answer_stored(id, record.id, answer).await?;
            self.hub.emit(&json!({
                "type": "approval_resolved",
                "id": id,
                "session": record.session_id,
                "answer": answer_name(answer),
            }));
            return Ok(());
        };
        let stored = {
            let pending = self.lock();
            let entry = pending
                .get(&key)
                .ok_or_else(|| ResolveError::NotPending(id.to_owned()))?;
            if !is_plan(&entry.info)
                && answer != Answer::Deny
                && !seen
                && !entry.info["folded"]["hidden"].is_null()
            {
                return Err(ResolveError::Unseen(id.to_owned()));
            }
            entry.stored
        };
        if let Some(n) = stored {
            self.answer_stored(id, n, answer).await?;
        }
        let pending = {
            let mut pending = self.lock();
            let Some(entry) = pending.get(&key) else {
                // Taken from the store meanwhile by the waiting call: the
                // answer is ours all the same.
                return if stored.is_some() {
                    Ok(())
                } else {
                    Err(ResolveError::NotPending(id.to_owned()))
                };
            };
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
                self.resolved(&removed.id, removed.session.as_deref(), "keep_planning");
                return Ok(());
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
        self.resolved(&pending.id, pending.session.as_deref(), answer_name(answer));
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
        let key = self
            .local(id)
            .ok_or_else(|| ResolveError::NotPending(id.to_owned()))?;
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
        self.resolved(&pending.id, pending.session.as_deref(), name);
        Ok(answer)
    }

    /// Refuses, for a folded card (one that leaves part of what would run
    /// out), an allowing answer that does not say the card was seen whole.
    pub(crate) async fn check_seen(&self, id: &str) -> Result<(), ResolveError> {
        let info = self.card(id).await?;
        if info["folded"]["hidden"].is_null() {
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
        for (_, p) in cancelled {
            let _ = p.reply.send(Reply::Deny);
            self.resolved(&p.id, p.session.as_deref(), "cancelled");
        }
    }

    fn resolved(&self, id: &str, session: Option<&str>, answer: &str) {
        self.hub.emit(&json!({
            "type": "approval_resolved",
            "id": id,
            "session": session,
            "answer": answer,
        }));
    }

    /// What the user's rules say about a call now, read afresh from their
    /// file: a rule saved with "Always allow" (or `toolgate rules add`)
    /// applies at once to the runs going on, whose gates read the rules
    /// when they started; a removed one stops applying. (The rules saved
    /// in a shared store need no such help: every gate reads them at each
    /// call.) `None` when no rule decides, or the file cannot be read:
    /// then the person is asked, as without rules.
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

    /// Lists `request` as pending (as store approval `stored`, when it
    /// waits there too) and tells the page; the receiver gets the
    /// person's reply.
    fn open(
        &self,
        request: &ApprovalRequest<'_>,
        binding: Option<&Binding>,
        agent: Option<&str>,
        stored: Option<&ApprovalRecord>,
    ) -> (u64, oneshot::Receiver<Reply>) {
        let session = binding.and_then(|b| b.session.clone());
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        let id = stored.map_or_else(|| key.to_string(), |r| format!("s{}", r.id));
        let mut info = crate::describe::describe(request);
        if let Some(object) = info.as_object_mut() {
            object.insert("id".into(), Value::from(id.clone()));
            object.insert("session".into(), json!(session));
            object.insert("agent".into(), json!(agent));
            object.insert("created".into(), Value::from(now_ms()));
            if let Some(record) = stored {
                object.insert("worker".into(), Value::from(record.worker.clone()));
            }
        }
        let release = request.idempotency_key.is_none();
        self.publish(key, id, info, session, stored.map(|r| r.id), release)
    }

    /// Lists `info` as pending under `key` and tells the page; the
    /// receiver gets the person's reply.
    fn publish(
        &self,
        key: u64,
        id: String,
        info: Value,
        session: Option<String>,
        stored: Option<i64>,
        release: bool,
    ) -> (u64, oneshot::Receiver<Reply>) {
        let (tx, rx) = oneshot::channel();
        let info = Arc::new(info);
        let mut event = (*info).clone();
        event["type"] = Value::from("approval");
        self.lock().insert(
            key,
            Pending {
                id,
                info,
                session,
                reply: tx,
                stored,
                release,
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
        self.publish(key, key.to_string(), info, session, None, false)
    }

    /// Removes card `key` if still listed (its call was answered through
    /// the store: `answer` says how).
    fn drop_card(&self, key: u64, answer: &str) {
        let removed = self.lock().remove(&key);
        if let Some(p) = removed {
            self.resolved(&p.id, p.session.as_deref(), answer);
        }
    }

    /// Removes `key` if still pending (its call was dropped).
    fn abandon(&self, key: u64) {
        let removed = self.lock().remove(&key);
        if let Some(p) = removed {
            self.resolved(&p.id, p.session.as_deref(), "cancelled");
            // Nobody waits for it any more: other processes stop listing
            // it.
            if let (Some(n), Some(shared), true) = (p.stored, &self.shared, p.release)
                && let Ok(runtime) = tokio::runtime::Handle::try_current()
            {
                let store = Arc::clone(shared.store());
                let by = format!("ui@{}", shared.worker());
                runtime.spawn(async move {
                    let _ = store
                        .answer_approval(&toolgate_store::Answer {
                            id: n,
                            approve: false,
                            for_session: false,
                            by,
                            at: store_now(),
                        })
                        .await;
                });
            }
        }
    }
}

impl Approvals {
    /// Tells the open pages about other processes' approvals as they come
    /// and go in the shared store (an `approval` event for a new one, an
    /// `approval_resolved` one, answer `answered`, for one gone), looking
    /// every `every` while a page listens. Returns at once without a store.
    pub(crate) async fn watch_store(self: Arc<Self>, every: std::time::Duration) {
        if self.shared.is_none() {
            return;
        }
        let mut known: BTreeMap<i64, Option<String>> = BTreeMap::new();
        loop {
            tokio::time::sleep(every).await;
            if !self.hub.has_listeners() {
                known.clear();
                continue;
            }
            let mine: Vec<i64> = self.lock().values().filter_map(|p| p.stored).collect();
            let now: Vec<(ApprovalRecord, bool)> = self
                .stored_pending()
                .await
                .into_iter()
                .filter(|(r, _)| !mine.contains(&r.id))
                .collect();
            for (record, gone) in &now {
                if known.contains_key(&record.id) {
                    continue;
                }
                if let Some(mut card) = stored_card(record, *gone) {
                    card["type"] = Value::from("approval");
                    self.hub.emit(&card);
                }
                known.insert(record.id, record.session_id.clone());
            }
            known.retain(|id, session| {
                let still = now.iter().any(|(r, _)| r.id == *id);
                if !still {
                    self.hub.emit(&json!({
                        "type": "approval_resolved",
                        "id": format!("s{id}"),
                        "session": session,
                        "answer": "answered",
                    }));
                }
                still
            });
        }
    }
}

/// The card of an approval another process asked, as the page shows its
/// own ([`crate::describe`]), from the view kept in the store, with
/// whether the worker waiting for it is gone; `None` when the store holds
/// no view this toolgate can read.
fn stored_card(record: &ApprovalRecord, worker_gone: bool) -> Option<Value> {
    let stored = StoredView::read(record)?;
    let mut card = crate::describe::describe_view(&stored.view, stored.always.as_ref());
    if let Some(object) = card.as_object_mut() {
        object.insert("id".into(), Value::from(format!("s{}", record.id)));
        object.insert("session".into(), json!(record.session_id));
        object.insert("agent".into(), Value::Null);
        object.insert("created".into(), Value::from(record.created));
        object.insert("worker".into(), Value::from(record.worker.clone()));
        object.insert("worker_gone".into(), Value::Bool(worker_gone));
    }
    Some(card)
}

/// Milliseconds since the Unix epoch, as the store keeps times.
fn store_now() -> i64 {
    i64::try_from(now_ms()).unwrap_or(i64::MAX)
}

/// Whether a pending entry is a plan card rather than a call's.
fn is_plan(info: &Value) -> bool {
    info["kind"] == "plan"
}

fn answer_name(answer: Answer) -> &'static str {
    match answer {
        Answer::Allow => "allow",
        Answer::Deny => "deny",
        Answer::Session => "session",
        Answer::Always => "always",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::{Change, Effect, Effects, Sensitivity};
    use toolgate_engine::{Approval, ApprovalView, Approver as _};

    fn approvals(home: &std::path::Path) -> Approvals {
        let describer = Describer::new(home.join("ws"));
        let env = vec![("HOME".to_owned(), home.display().to_string())];
        Approvals::new(Hub::new(), describer, env, None)
    }

    async fn first_pending(approvals: &Approvals) -> Option<String> {
        approvals
            .pending()
            .await
            .first()
            .and_then(|p| p["id"].as_str().map(str::to_owned))
    }

    /// The id of the first card, once there is one.
    async fn next_card(approvals: &Approvals) -> String {
        loop {
            if let Some(id) = first_pending(approvals).await {
                return id;
            }
            tokio::task::yield_now().await;
        }
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
                let id = next_card(&approvals).await;
                let rule = approvals.rule_of(&id).await.unwrap().unwrap();
                let mut file = UserRules::open_user(&approvals.env).unwrap();
                file.add(&rule).unwrap();
                file.save().unwrap();
                approvals.resolve(&id, Answer::Always, false).await.unwrap();
            })
        };
        assert_eq!(approver.approve(&request).await, Approval::Allow);
        page.await.unwrap();
        // The next call is allowed without a card.
        assert_eq!(approvals.user_rule(&request), Some(RuleDecision::Allow));
        assert_eq!(approver.approve(&request).await, Approval::Allow);
        assert!(approvals.pending().await.is_empty());
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
        assert!(approvals.pending().await.is_empty());
    }

    #[tokio::test]
    async fn a_file_allow_does_not_spare_a_card_an_ask_rule_asked_for() {
        let home = tempfile::tempdir().unwrap();
        let approvals = Arc::new(approvals(home.path()));
        let approver = UiApprover::new(Arc::clone(&approvals), None);
        let mut file = UserRules::open_user(&approvals.env).unwrap();
        file.add(&ConfirmationRule {
            tool: "write_file".into(),
            path: Some("a.txt".into()),
            decision: RuleDecision::Allow,
            ..ConfirmationRule::default()
        })
        .unwrap();
        file.save().unwrap();
        let effects = Effects::known([Effect::write("a.txt", Change::from_texts(None, "x"))]);
        let args = json!({"path": "a.txt", "content": "x"});
        let view = ApprovalView::new("write_file", "c1", &args, &effects, Sensitivity::Sensitive);
        // Asked by the mode: the file's allow answers.
        let request = ApprovalRequest::new(&view, &args, &effects, Sensitivity::Sensitive);
        assert_eq!(approver.approve(&request).await, Approval::Allow);
        // Asked by an `ask` rule (here one saved in the shared store): the
        // card is shown, as an `ask` rule beats an `allow` one.
        let mut asked = ApprovalRequest::new(&view, &args, &effects, Sensitivity::Sensitive);
        asked.rule = Some("store rule 3 (ask write_file)");
        let page = {
            let approvals = Arc::clone(&approvals);
            tokio::spawn(async move {
                let id = next_card(&approvals).await;
                approvals.resolve(&id, Answer::Deny, false).await.unwrap();
            })
        };
        assert_eq!(approver.approve(&asked).await, Approval::Deny);
        page.await.unwrap();
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
                let id = next_card(&approvals).await;
                let card = approvals.pending().await[0].clone();
                assert!(
                    card["folded"]["hidden"]["bytes"].as_u64().unwrap() > 9_000,
                    "{card}"
                );
                for answer in [Answer::Allow, Answer::Session, Answer::Always] {
                    assert!(matches!(
                        approvals.resolve(&id, answer, false).await,
                        Err(ResolveError::Unseen(_))
                    ));
                }
                assert!(matches!(
                    approvals.check_seen(&id).await,
                    Err(ResolveError::Unseen(_))
                ));
                approvals.resolve(&id, Answer::Allow, true).await.unwrap();
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
        assert!(approvals.pending().await.is_empty());
    }

    /// Two servers' lists over one store file (two processes sharing it).
    fn shared(home: &std::path::Path, worker: &str) -> Arc<Approvals> {
        let store = toolgate_store::SqliteStore::open(home.join("toolgate.db")).unwrap();
        let describer = Describer::new(home.join("ws"));
        let env = vec![("HOME".to_owned(), home.display().to_string())];
        Arc::new(Approvals::new(
            Hub::new(),
            describer,
            env,
            Some(StoreApprover::new(Arc::new(store), worker)),
        ))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stopped_workers_questions_are_listed_only_when_a_retry_can_find_them() {
        let home = tempfile::tempdir().unwrap();
        let there = shared(home.path(), "worker-2");
        let store: Arc<dyn Store> =
            Arc::new(toolgate_store::SqliteStore::open(home.path().join("toolgate.db")).unwrap());
        let effects = Effects::known([Effect::write("a.txt", Change::from_texts(None, "x"))]);
        let args = json!({"path": "a.txt", "content": "x"});
        let view = ApprovalView::new("write_file", "c1", &args, &effects, Sensitivity::Sensitive);
        let ask = |approver: StoreApprover, key: Option<&'static str>| {
            let (view, args, effects) = (view.clone(), args.clone(), effects.clone());
            async move {
                let mut request =
                    ApprovalRequest::new(&view, &args, &effects, Sensitivity::Sensitive);
                request.idempotency_key = key;
                approver.ask(&request, None).await.unwrap();
                approver
            }
        };
        // A worker that still waits, and one that stopped after asking a
        // call without a key and one with a key.
        let live = ask(StoreApprover::new(Arc::clone(&store), "worker-live"), None).await;
        let gone = ask(StoreApprover::new(Arc::clone(&store), "worker-gone"), None).await;
        let gone = ask(gone, Some("retry-me")).await;
        drop(gone);
        let listed = there.pending().await;
        let shown: Vec<(&str, bool)> = listed
            .iter()
            .map(|c| {
                (
                    c["worker"].as_str().unwrap(),
                    c["worker_gone"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            shown,
            [("worker-live", false), ("worker-gone", true)],
            "{listed:#?}"
        );
        drop(live);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_question_asked_here_is_answered_from_another_server_once() {
        let home = tempfile::tempdir().unwrap();
        let here = shared(home.path(), "worker-1");
        let there = shared(home.path(), "worker-2");
        let approver = UiApprover::new(Arc::clone(&here), None);
        let asking = tokio::spawn(async move {
            let effects = Effects::known([Effect::write("a.txt", Change::from_texts(None, "x"))]);
            let args = json!({"path": "a.txt", "content": "x"});
            let view =
                ApprovalView::new("write_file", "c1", &args, &effects, Sensitivity::Sensitive);
            let request = ApprovalRequest::new(&view, &args, &effects, Sensitivity::Sensitive);
            approver.approve(&request).await
        });
        // The other server lists it, with the card this one shows.
        let id = next_card(&there).await;
        assert!(id.starts_with('s'), "{id}");
        // This server lists its own question as its card, which it opens
        // just after recording it in the store (`stored_pending`): wait for
        // it, not for a race.
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        let mine = loop {
            let mine = here.pending().await;
            if !mine.is_empty() || tokio::time::Instant::now() > deadline {
                break mine;
            }
            tokio::task::yield_now().await;
        };
        let theirs = there.pending().await;
        assert_eq!(mine.len(), 1, "listed once here: {mine:?}");
        assert_eq!(theirs[0]["lines"], mine[0]["lines"]);
        assert_eq!(theirs[0]["always"], mine[0]["always"]);
        assert_eq!(theirs[0]["worker"], "worker-1");
        assert_eq!(theirs[0]["worker_gone"], false, "worker 1 waits for it");
        assert_eq!(
            there.rule_of(&id).await.unwrap().unwrap().path.as_deref(),
            Some("a.txt")
        );
        there.resolve(&id, Answer::Session, false).await.unwrap();
        assert_eq!(asking.await.unwrap(), Approval::AllowForSession);
        // Answered: a second answer, from either server, is refused.
        for approvals in [&here, &there] {
            assert!(matches!(
                approvals.resolve(&id, Answer::Deny, false).await,
                Err(ResolveError::AlreadyAnswered(_))
            ));
            assert!(approvals.pending().await.is_empty());
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_answer_here_is_written_to_the_store_first() {
        let home = tempfile::tempdir().unwrap();
        let here = shared(home.path(), "worker-1");
        let there = shared(home.path(), "worker-2");
        let approver = UiApprover::new(Arc::clone(&here), None);
        let asking = tokio::spawn(async move {
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
            approver.approve(&request).await
        });
        let id = next_card(&here).await;
        here.resolve(&id, Answer::Deny, false).await.unwrap();
        assert_eq!(asking.await.unwrap(), Approval::Deny);
        assert!(matches!(
            there.resolve(&id, Answer::Allow, false).await,
            Err(ResolveError::AlreadyAnswered(_))
        ));
    }
}
