//! Approvals that wait in the store: [`StoreApprover`].
//!
//! A call that needs a person is recorded in the host's
//! [`ApprovalStore`](toolgate_store::ApprovalStore) with what the person is
//! shown ([`StoredView`]), and its gate waits for the answer there. Any
//! process sharing the store — a web UI on another worker, another
//! worker's approver — can list it and answer it; the first answer wins.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use toolgate_engine::{Approval, ApprovalRequest, ApprovalView, Approver};
use toolgate_policy::ConfirmationRule;
use toolgate_store::{
    ApprovalRecord, ApprovalStatus, Asked, NewApproval, Store, StoreError, WorkerLease,
};

/// How long a question waits for its answer by default before it expires
/// and the call is refused.
pub const APPROVAL_TIMEOUT: Duration = Duration::from_secs(60 * 60);

/// The longest single wait for a change, in milliseconds (a day).
const LONGEST_WAIT_MS: u64 = 24 * 60 * 60 * 1000;

/// How long a wait pauses after the store could not be read, before it
/// reads again (until the approval expires).
const RETRY: Duration = Duration::from_secs(1);

/// What a stored approval's `view` holds: what the person is shown.
///
/// # Wire format
///
/// `{"view": VIEW, "always": RULE}`: `view` is the gate's
/// [`ApprovalView`] as it serializes; `always` is the narrow
/// `confirmation.rules` rule an "Always allow" answer saves (a
/// [`ConfirmationRule`]), or null when no narrow rule covers the call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StoredView {
    /// The gate's description of the call.
    pub view: ApprovalView,
    /// The rule "Always allow" saves, when one narrow rule covers the call.
    pub always: Option<ConfirmationRule>,
}

impl StoredView {
    /// What `request` shows a person.
    pub fn of(request: &ApprovalRequest<'_>) -> Self {
        Self {
            view: request.view.clone(),
            always: toolgate_policy::narrow_allow_rule_for(request.tool, request.effects),
        }
    }

    /// The view a stored approval holds; `None` when it holds something
    /// else (written by another program, or a later toolgate).
    pub fn read(record: &ApprovalRecord) -> Option<Self> {
        serde_json::from_value(record.view.clone()).ok()
    }
}

/// The approver whose questions wait in the store, answered from any
/// process that shares it.
///
/// # Rules
///
/// 1. [`ask`](Self::ask) records the call as pending under its
///    idempotency key when it has one (a retry of it, through any worker,
///    then waits for the same answer), else under a key new to the store
///    (this worker's name, the call's id and a counter), with its
///    [`StoredView`], expiring after the [`timeout`](Self::timeout).
/// 2. [`wait`](Self::wait) returns the first answer given, by whichever
///    process: approved → allow (or allow for the session, when the answer
///    says so), denied → deny. It is woken as the store's
///    [`wait_for_change`](toolgate_store::ApprovalStore::wait_for_change)
///    says (`LISTEN/NOTIFY` on `PostgreSQL`, a poll on `SQLite`).
/// 3. Unanswered at its expiry, the approval is marked expired in the
///    store (answers after that are refused) and the call is refused,
///    saying so. A store that cannot be read is read again every second
///    until then.
/// 4. A store that cannot be written when asking leaves nobody to ask:
///    the call is refused, naming the store's error.
/// 5. From its first question on, the approver holds its worker alive in
///    the store ([`presence`](crate::presence)), so that a page listing
///    the question can tell when the worker waiting for it is gone.
pub struct StoreApprover {
    store: Arc<dyn Store>,
    worker: String,
    timeout: Duration,
    /// Held from the first question on, so that other workers listing it
    /// can tell whether this one still waits for the answer (rule 5).
    presence: tokio::sync::OnceCell<Arc<WorkerLease>>,
}

/// Questions asked by this process, numbering their keys (rule 1).
static ASKED: AtomicU64 = AtomicU64::new(0);

impl std::fmt::Debug for StoreApprover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreApprover")
            .field("worker", &self.worker)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl StoreApprover {
    /// An approver over `store`, asking as `worker` (see [`worker_name`]).
    pub fn new(store: Arc<dyn Store>, worker: impl Into<String>) -> Self {
        Self {
            store,
            worker: worker.into(),
            timeout: APPROVAL_TIMEOUT,
            presence: tokio::sync::OnceCell::new(),
        }
    }

    /// How long a question waits before it expires. By default,
    /// [`APPROVAL_TIMEOUT`] (an hour).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The worker this approver asks as.
    pub fn worker(&self) -> &str {
        &self.worker
    }

    /// The store the questions wait in.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Records `request` as pending for `session` (rule 1).
    pub async fn ask(
        &self,
        request: &ApprovalRequest<'_>,
        session: Option<&str>,
    ) -> Result<ApprovalRecord, StoreError> {
        if let Err(error) = self
            .presence
            .get_or_try_init(|| crate::presence(&self.store, &self.worker))
            .await
        {
            tracing::warn!(
                "this worker cannot show itself alive in the store, so other pages may take \
                 its questions for a stopped worker's: {}",
                toolgate_core::error_chain(&error)
            );
        }
        let n = ASKED.fetch_add(1, Ordering::Relaxed) + 1;
        let view = serde_json::to_value(StoredView::of(request)).map_err(StoreError::Json)?;
        let created = now_ms();
        let timeout = i64::try_from(self.timeout.as_millis()).unwrap_or(i64::MAX);
        let asked = self
            .store
            .ask_approval(&NewApproval {
                key: request.idempotency_key.map_or_else(
                    || format!("{}/{}/{n}", self.worker, request.call_id),
                    str::to_owned,
                ),
                session_id: session.map(str::to_owned),
                tool: request.tool.to_owned(),
                view,
                worker: self.worker.clone(),
                created,
                expires: created.saturating_add(timeout),
            })
            .await?;
        Ok(match asked {
            Asked::New(record) | Asked::Existing(record) => record,
            _ => {
                return Err(StoreError::Worker(
                    "the store answered a question in a way this toolgate does not know".into(),
                ));
            }
        })
    }

    /// Waits for the answer to `record` (rules 2 and 3).
    pub async fn wait(&self, mut record: ApprovalRecord) -> Approval {
        loop {
            if let Some(answer) = decided(&record) {
                return answer;
            }
            let now = now_ms();
            if now > record.expires {
                // Lapsed: marked expired, unless an answer came first.
                if let Err(error) = self.store.expire_approvals(now).await {
                    tracing::warn!(
                        "approval {} lapsed and could not be marked expired: {}",
                        record.id,
                        toolgate_core::error_chain(&error)
                    );
                    return expired(&record);
                }
                return match self.store.approval(record.id).await {
                    Ok(Some(now)) if now.status != ApprovalStatus::Pending => {
                        decided(&now).unwrap_or_else(|| expired(&now))
                    }
                    _ => expired(&record),
                };
            }
            // At most a day at a time: an approval that never expires
            // still waits in steps a clock can add.
            let left = u64::try_from(record.expires - now)
                .unwrap_or(0)
                .saturating_add(1)
                .min(LONGEST_WAIT_MS);
            match self
                .store
                .wait_for_change(
                    record.id,
                    ApprovalStatus::Pending,
                    Duration::from_millis(left),
                )
                .await
            {
                Ok(Some(now)) => record = now,
                Ok(None) => {
                    return Approval::Unavailable(format!(
                        "approval {} is no longer in the store {}, so nobody can answer it",
                        record.id,
                        self.store.location().display()
                    ));
                }
                Err(error) => {
                    tracing::warn!(
                        "waiting for approval {}: the store could not be read ({}); trying again",
                        record.id,
                        toolgate_core::error_chain(&error)
                    );
                    tokio::time::sleep(RETRY).await;
                }
            }
        }
    }
}

#[async_trait]
impl Approver for StoreApprover {
    fn kind(&self) -> &'static str {
        "store"
    }

    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval {
        match self.ask(request, None).await {
            Ok(record) => self.wait(record).await,
            Err(error) => Approval::Unavailable(format!(
                "the question could not be recorded in the store {} ({}); nobody can be asked \
                 until it is reachable",
                self.store.location().display(),
                toolgate_core::error_chain(&error)
            )),
        }
    }
}

/// The answer a stored approval holds, once it has one: approved (or
/// running, or done) allows it, for the session when the answer said so;
/// denied denies it; expired leaves nobody to ask. `None` while pending.
pub fn decided(record: &ApprovalRecord) -> Option<Approval> {
    match record.status {
        ApprovalStatus::Pending => None,
        ApprovalStatus::Approved | ApprovalStatus::Running | ApprovalStatus::Done => {
            Some(if record.for_session {
                Approval::AllowForSession
            } else {
                Approval::Allow
            })
        }
        ApprovalStatus::Denied => Some(Approval::Deny),
        ApprovalStatus::Expired => Some(expired(record)),
    }
}

fn expired(record: &ApprovalRecord) -> Approval {
    let waited = Duration::from_millis(u64::try_from(record.expires - record.created).unwrap_or(0));
    Approval::Unavailable(format!(
        "nobody answered approval {} within {}s, so it expired; make the call again to be \
         asked anew",
        record.id,
        waited.as_secs()
    ))
}

/// Whether `record` was asked by a call without an idempotency key (its
/// key is the one [`StoreApprover::ask`] made up): once its worker is
/// gone, no retry can find it, so nobody waits for its answer.
pub fn asked_without_key(record: &ApprovalRecord) -> bool {
    record
        .key
        .strip_prefix(record.worker.as_str())
        .is_some_and(|rest| rest.starts_with('/'))
}

/// A name for this process among the workers sharing a store: the host
/// name, the process id and the start time, so that a restarted process
/// (which may get the same pid) is a new worker.
pub fn worker_name() -> String {
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "localhost".to_owned());
        let started = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros());
        format!("{host}-{}-{started:x}", std::process::id())
    })
    .clone()
}

/// Milliseconds since the Unix epoch: the store's times.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
