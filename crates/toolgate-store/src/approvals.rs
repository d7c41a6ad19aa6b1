//! Pending approvals: calls waiting for a person's answer, kept in the
//! store so that any worker's UI or approver can answer them, and so that
//! an approved call runs once, whichever worker asks again.

use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::StoreError;

/// How often [`ApprovalStore::wait_for_change`] reads the approval again
/// by default (the `SQLite` backend: other processes' writes come with no
/// signal, so they are polled).
pub const APPROVAL_POLL: Duration = Duration::from_millis(250);

/// Where calls waiting for a person are kept, with the answer and, once the
/// call ran, its result.
///
/// The store keeps what the gate shows the person (`view`, the engine's
/// approval view) as given; what it means is the caller's. Times are
/// milliseconds since the Unix epoch, always the caller's clock.
///
/// # Rules
///
/// 1. Every call has an idempotency key, unique in the store:
///    [`ask_approval`](Self::ask_approval) with a key already asked changes
///    nothing and returns that approval ([`Asked::Existing`]), whatever its
///    state, so a client retrying a call (through another worker, after a
///    worker died) never asks twice.
/// 2. The first answer wins: [`answer_approval`](Self::answer_approval) on
///    an approval that is no longer pending changes nothing
///    ([`Answered::AlreadyAnswered`]). A pending approval past its
///    `expires` is not answered: it becomes [`ApprovalStatus::Expired`]
///    ([`Answered::Expired`]).
/// 3. An approved call runs once: [`claim_approved_run`](Self::claim_approved_run)
///    moves it from approved to running for one worker, atomically; every
///    other claim gets [`RunClaim::Taken`]. A call running on a worker that
///    died stays running: a retry is told so (it may have run) and does
///    not run it again.
/// 4. [`finish_approved_run`](Self::finish_approved_run) stores the
///    result (only the running worker's), so that a retry of a finished
///    call gets the result instead of a second run.
/// 5. [`wait_for_change`](Self::wait_for_change) returns as soon as the
///    approval has left the status the caller saw, whichever process
///    changed it: on `PostgreSQL` woken by `LISTEN/NOTIFY` (every change
///    of an approval sends a notification on the channel
///    [`APPROVALS_CHANNEL`], in the transaction that changes it), with a
///    slow poll as a safety net; on `SQLite` by polling every
///    [`APPROVAL_POLL`]. The caller does not know which.
/// 6. The same records are the ledger of keyed calls: a call that needs
///    nobody's approval is claimed by key with
///    [`claim_run`](Self::claim_run), which records it `running` if the
///    key is new, so that a key has one record whatever became of it.
/// 7. A worker that runs calls holds a lease
///    ([`hold_worker`](Self::hold_worker)) that ends with its process,
///    killed or not: on `PostgreSQL` a session-level advisory lock on a
///    connection of its own (the server frees it when the connection
///    closes); on `SQLite` an exclusive `flock` on a file beside the
///    database (the kernel frees it when the process exits).
///    [`worker_alive`](Self::worker_alive) asks without taking anything.
#[async_trait]
pub trait ApprovalStore: Send + Sync {
    /// Stores a pending approval, or returns the one asked with this key
    /// (rule 1).
    async fn ask_approval(&self, approval: &NewApproval) -> Result<Asked, StoreError>;

    /// One approval, or `None`.
    async fn approval(&self, id: i64) -> Result<Option<ApprovalRecord>, StoreError>;

    /// The approval asked with this key, or `None`.
    async fn approval_by_key(&self, key: &str) -> Result<Option<ApprovalRecord>, StoreError>;

    /// The approvals still pending and not expired at `now`, oldest first.
    async fn pending_approvals(&self, now: i64) -> Result<Vec<ApprovalRecord>, StoreError>;

    /// Answers a pending approval (rule 2).
    async fn answer_approval(&self, answer: &Answer) -> Result<Answered, StoreError>;

    /// Claims an approved call for `worker` to run (rule 3).
    async fn claim_approved_run(
        &self,
        id: i64,
        worker: &str,
        at: i64,
    ) -> Result<RunClaim, StoreError>;

    /// Stores the result of a call `worker` ran (rule 4); `false` when the
    /// call is not running on `worker`.
    async fn finish_approved_run(
        &self,
        id: i64,
        worker: &str,
        result: &Value,
        at: i64,
    ) -> Result<bool, StoreError>;

    /// Marks the approvals pending past their `expires` at `now` expired;
    /// returns how many.
    async fn expire_approvals(&self, now: i64) -> Result<u64, StoreError>;

    /// Claims the call keyed `run.key` for `run.worker` to run (rule 6):
    /// a key never seen is recorded `running` at once (nobody was asked),
    /// an approved one moves to `running`; otherwise [`RunClaim::Taken`]
    /// (running or done) or [`RunClaim::NotApproved`] (pending, denied,
    /// expired). Atomic: of workers claiming one key at once, one wins.
    async fn claim_run(&self, run: &NewRun) -> Result<RunClaim, StoreError>;

    /// Holds `worker` alive (rule 7) until the lease is dropped or the
    /// process ends, however it ends.
    async fn hold_worker(&self, worker: &str) -> Result<WorkerLease, StoreError>;

    /// Whether `worker` holds its lease now (rule 7).
    async fn worker_alive(&self, worker: &str) -> Result<bool, StoreError>;

    /// Waits until approval `id` is no longer in status `from`, or
    /// `timeout` has passed (rule 5): the approval as it is then (still in
    /// `from` on a timeout), or `None` when no approval has this id. By
    /// default, reads it every [`APPROVAL_POLL`].
    async fn wait_for_change(
        &self,
        id: i64,
        from: ApprovalStatus,
        timeout: Duration,
    ) -> Result<Option<ApprovalRecord>, StoreError> {
        let deadline = deadline_after(timeout);
        loop {
            let Some(record) = self.approval(id).await? else {
                return Ok(None);
            };
            let now = tokio::time::Instant::now();
            if record.status != from || now >= deadline {
                return Ok(Some(record));
            }
            tokio::time::sleep(APPROVAL_POLL.min(deadline - now)).await;
        }
    }
}

/// When a wait of `timeout` from now ends (far off, for a timeout no clock
/// can add). Plumbing both backends share (the `PostgreSQL` one is
/// `toolgate-store-postgres`).
#[doc(hidden)]
pub fn deadline_after(timeout: Duration) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    now.checked_add(timeout)
        .unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 60 * 60))
}

/// The `PostgreSQL` channel on which every change of an approval is
/// notified, its id as the payload (rule 5).
pub const APPROVALS_CHANNEL: &str = "toolgate_approvals";

/// Where an approval is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    /// Waiting for a person.
    Pending,
    /// Approved, not yet claimed to run.
    Approved,
    /// Denied: the call is refused.
    Denied,
    /// Nobody answered in time: the call is refused.
    Expired,
    /// Claimed by a worker, running (or its worker died while it ran).
    Running,
    /// Ran; its result is stored.
    Done,
}

names!(ApprovalStatus {
    Pending => "pending",
    Approved => "approved",
    Denied => "denied",
    Expired => "expired",
    Running => "running",
    Done => "done",
});

/// A call to ask a person about, for [`ApprovalStore::ask_approval`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewApproval {
    /// The call's idempotency key (rule 1).
    pub key: String,
    /// The agent session, if any.
    pub session_id: Option<String>,
    /// The tool's name.
    pub tool: String,
    /// What the person is shown, kept as given.
    pub view: Value,
    /// The worker holding the call while it waits.
    pub worker: String,
    /// When it was asked.
    pub created: i64,
    /// When an unanswered request lapses.
    pub expires: i64,
}

/// A stored approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRecord {
    /// Its id: unique, never reused.
    pub id: i64,
    /// See [`NewApproval::key`].
    pub key: String,
    /// See [`NewApproval::session_id`].
    pub session_id: Option<String>,
    /// See [`NewApproval::tool`].
    pub tool: String,
    /// See [`NewApproval::view`].
    pub view: Value,
    /// See [`NewApproval::worker`].
    pub worker: String,
    /// See [`NewApproval::created`].
    pub created: i64,
    /// See [`NewApproval::expires`].
    pub expires: i64,
    /// Where it is.
    pub status: ApprovalStatus,
    /// Who answered, once answered.
    pub answered_by: Option<String>,
    /// Whether the answer allows the tool for the rest of the asking
    /// client's session too (see [`Answer::for_session`]).
    pub for_session: bool,
    /// When it was answered (or expired).
    pub answered: Option<i64>,
    /// The worker that claimed the call to run it.
    pub runner: Option<String>,
    /// The id the runner's gate gave the call, once claimed.
    pub call_id: Option<String>,
    /// The call's result, once done.
    pub result: Option<Value>,
}

/// What [`ApprovalStore::ask_approval`] did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Asked {
    /// Stored, pending.
    New(ApprovalRecord),
    /// The key was asked before: that approval, unchanged.
    Existing(ApprovalRecord),
}

/// A keyed call to claim, for [`ApprovalStore::claim_run`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewRun {
    /// The call's idempotency key.
    pub key: String,
    /// The agent session, if any.
    pub session_id: Option<String>,
    /// The tool's name.
    pub tool: String,
    /// The worker that would run it.
    pub worker: String,
    /// When.
    pub at: i64,
    /// The id the worker's gate gives the call (its audit entry's).
    pub call_id: Option<String>,
}

/// A worker's hold on its liveness in the store
/// ([`ApprovalStore::hold_worker`]): dropped, the worker is gone.
pub struct WorkerLease(
    #[expect(dead_code, reason = "held for its Drop")] Box<dyn std::any::Any + Send + Sync>,
);

impl WorkerLease {
    /// The lease a backend returns: `held` keeps the worker's liveness
    /// (a lock, a connection, a task) until it is dropped.
    pub fn new(held: impl std::any::Any + Send + Sync) -> Self {
        Self(Box::new(held))
    }
}

impl std::fmt::Debug for WorkerLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WorkerLease")
    }
}

/// A person's answer, for [`ApprovalStore::answer_approval`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    /// The approval.
    pub id: i64,
    /// Approve (`true`) or deny.
    pub approve: bool,
    /// With `approve`: allow the tool, with the call's sensitivity, for
    /// the rest of the asking client's session too ("allow for the
    /// session"); what that means is the asking gate's.
    pub for_session: bool,
    /// Who answered (a user name, `ui@worker-2`).
    pub by: String,
    /// When.
    pub at: i64,
}

/// What [`ApprovalStore::answer_approval`] did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Answered {
    /// The answer is stored.
    Answered(ApprovalRecord),
    /// It was answered (or ran) before: unchanged.
    AlreadyAnswered(ApprovalRecord),
    /// It lapsed before the answer: now expired.
    Expired(ApprovalRecord),
    /// No approval has this id.
    NotFound,
}

/// What [`ApprovalStore::claim_approved_run`] did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RunClaim {
    /// The call is the caller's to run.
    Claimed(ApprovalRecord),
    /// It is not approved (pending, denied or expired).
    NotApproved(ApprovalRecord),
    /// Another claim took it: running, or done (with its result).
    Taken(ApprovalRecord),
    /// No approval has this id.
    NotFound,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_round_trip() {
        for status in [
            ApprovalStatus::Pending,
            ApprovalStatus::Approved,
            ApprovalStatus::Denied,
            ApprovalStatus::Expired,
            ApprovalStatus::Running,
            ApprovalStatus::Done,
        ] {
            assert_eq!(ApprovalStatus::from_name(status.as_str()), Some(status));
            assert_eq!(
                serde_json::to_value(status).ok(),
                Some(Value::from(status.as_str()))
            );
        }
        assert_eq!(ApprovalStatus::from_name("Pending"), None);
    }
}
