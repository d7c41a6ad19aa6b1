//! Calls run once among workers: [`CallLedger`], the store-backed
//! [`Ledger`](toolgate_engine::Ledger).
//!
//! One record per idempotency key, in the approvals table (its states are
//! those of [`ApprovalStatus`]); see `docs/postgres.md`, "No call runs
//! twice", for what a retry gets in each state.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use sha2::{Digest as _, Sha256};
use toolgate_core::{ToolCall, ToolResult};
use toolgate_engine::{ApprovalScope, ExecutionEngine, Ledger, Once, RunClaim};
use toolgate_store::{
    ApprovalRecord, ApprovalStatus, AuditFilter, NewRun, RunClaim as Claimed, Store, StoreError,
    WorkerLease,
};

use crate::approvals::now_ms;

/// How long a retry waits at a time for a call running on a live worker,
/// before it checks again that the worker lives.
const RUNNING_CHECK: Duration = Duration::from_secs(2);

/// How long a retry waits for a call running on a live worker before it
/// is told to retry later (longer than any tool's timeout).
const LONGEST_RUN_WAIT: Duration = Duration::from_secs(15 * 60);

/// The store-backed ledger of a worker: it holds the worker alive in the
/// store for its life (a `PostgreSQL` advisory lock on a connection of
/// its own, an `flock`ed file beside a `SQLite` store), and answers keyed
/// calls from the store.
///
/// # Rules
///
/// 1. A key never seen runs through the gate; right before it runs, the
///    worker claims it (one record, status `running`, this worker the
///    runner), and stores its result (`done`) when it ends.
/// 2. A key whose call is `done` gets the stored result: no run, no audit.
/// 3. A key `pending` or `approved` (its worker alive or not) runs through
///    this worker's gate: the approver waits for the same answer, and of
///    the workers that then claim it, one runs it; the others wait for its
///    result (rule 4).
/// 4. A key `running` on a live worker waits for the result; on a worker
///    that is gone, it is answered with an error saying the call may have
///    run and must be checked (kept as its result); it is never run again.
/// 5. A key `denied` or `expired` is refused again, unrun.
/// 6. A store that cannot be read or written answers with a retryable
///    error.
/// 7. A key is its client's and names one call: it is kept with the name
///    of the client the engine serves (none for the anonymous client) and
///    a digest of the call's tool and arguments, so the same key from
///    another client, or with another tool or other arguments, is another
///    call — never answered with this one's result.
/// 8. The audit holds one entry per call that may have run: a call whose
///    worker died before its entry was kept is audited `interrupted`, under
///    the dead worker's call id, by the worker that settles it (rule 4).
pub struct CallLedger {
    store: Arc<dyn Store>,
    worker: String,
    _lease: Arc<WorkerLease>,
}

impl std::fmt::Debug for CallLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallLedger")
            .field("worker", &self.worker)
            .finish_non_exhaustive()
    }
}

impl CallLedger {
    /// The ledger of `worker` over `store`, holding the worker alive.
    pub async fn start(
        store: Arc<dyn Store>,
        worker: impl Into<String>,
    ) -> Result<Self, StoreError> {
        let worker = worker.into();
        let lease = crate::presence(&store, &worker).await?;
        Ok(Self {
            store,
            worker,
            _lease: lease,
        })
    }

    /// The worker this ledger runs calls as.
    pub fn worker(&self) -> &str {
        &self.worker
    }

    /// What a call kept under `kept` (the client's key, rule 7) gets
    /// before the gate: `None` to run it (rule 1, 3), or its answer (rules
    /// 2, 4, 5, 6).
    async fn look(&self, kept: &str, asked: &Asked<'_>) -> Option<Once> {
        let key = asked.key;
        let deadline = tokio::time::Instant::now() + LONGEST_RUN_WAIT;
        loop {
            let record = match self.store.approval_by_key(kept).await {
                Ok(None) => return None,
                Ok(Some(record)) => record,
                Err(error) => return Some(unreachable(&error)),
            };
            match record.status {
                ApprovalStatus::Pending | ApprovalStatus::Approved => return None,
                ApprovalStatus::Done => return Some(stored(&record, key)),
                ApprovalStatus::Denied => {
                    return Some(Once::done(ToolResult::failure(format!(
                        "this call (idempotency key `{key}`) was denied when it was asked \
                         (approval {}); it was not run",
                        record.id
                    ))));
                }
                ApprovalStatus::Expired => {
                    return Some(Once::done(ToolResult::failure(format!(
                        "nobody answered this call (idempotency key `{key}`, approval {}) in \
                         time; it was not run. Make it again with a new key to be asked anew",
                        record.id
                    ))));
                }
                ApprovalStatus::Running => {
                    let runner = record.runner.clone().unwrap_or_default();
                    match self.store.worker_alive(&runner).await {
                        Ok(true) if tokio::time::Instant::now() >= deadline => {
                            return Some(Once::retry(format!(
                                "this call (idempotency key `{key}`) is still running on worker \
                                 {runner}; retry it with the same key to get its result"
                            )));
                        }
                        Ok(true) => {}
                        Ok(false) => return Some(self.interrupted(&record, &runner, asked).await),
                        Err(error) => return Some(unreachable(&error)),
                    }
                    if let Err(error) = self
                        .store
                        .wait_for_change(record.id, ApprovalStatus::Running, RUNNING_CHECK)
                        .await
                    {
                        return Some(unreachable(&error));
                    }
                }
            }
        }
    }
}

/// A keyed call as the client made it.
struct Asked<'a> {
    engine: &'a ExecutionEngine,
    call: &'a ToolCall,
    /// The client's key.
    key: &'a str,
}

impl CallLedger {
    /// The answer to a retry of `record`, which was running on `runner`,
    /// now gone (rule 4). The first worker to find it so settles it (its
    /// stored result becomes this answer) and, unless the runner's audit
    /// entry was kept before it died, audits it as interrupted (rule 8).
    async fn interrupted(&self, record: &ApprovalRecord, runner: &str, asked: &Asked<'_>) -> Once {
        let answer = may_have_run(asked.key, runner);
        let result = serde_json::to_value(&answer.result).unwrap_or_default();
        match self
            .store
            .finish_approved_run(record.id, runner, &result, now_ms())
            .await
        {
            Ok(true) => {}
            // Settled by another worker meanwhile (who audits it), or
            // not to be read: the answer stands.
            Ok(false) => return answer,
            Err(error) => {
                tracing::warn!(
                    "call `{}` of the stopped worker {runner} could not be settled: {}",
                    asked.key,
                    toolgate_core::error_chain(&error)
                );
                return answer;
            }
        }
        let Some(call_id) = &record.call_id else {
            return answer;
        };
        match self
            .store
            .recent(&AuditFilter::newest(1).call_id(call_id.clone()))
            .await
        {
            Ok(kept) if kept.is_empty() => {
                let mut call = asked.call.clone();
                call.id.clone_from(call_id);
                let error = answer.result.error.clone().unwrap_or_default();
                asked.engine.audit_interrupted(&call, &error).await;
            }
            Ok(_) => {}
            Err(error) => tracing::warn!(
                "the audit of call {call_id} of the stopped worker {runner} cannot be read, so \
                 it is not audited as interrupted: {}",
                toolgate_core::error_chain(&error)
            ),
        }
        answer
    }
}

/// The key under which the call `key` of `client` is kept (rule 7).
fn kept_key(client: Option<&str>, call: &ToolCall, key: &str) -> String {
    let mut digest = Sha256::new();
    digest.update(call.name.as_bytes());
    digest.update([0]);
    digest.update(call.arguments.to_string().as_bytes());
    let digest = digest.finalize();
    let call = u64::from_be_bytes(digest[..8].try_into().unwrap_or_default());
    format!("{}\u{1f}{call:016x}\u{1f}{key}", client.unwrap_or_default())
}

/// The stored result of a finished call.
fn stored(record: &ApprovalRecord, key: &str) -> Once {
    match record
        .result
        .clone()
        .and_then(|r| serde_json::from_value::<ToolResult>(r).ok())
    {
        Some(result) => Once::done(result),
        None => Once::done(ToolResult::failure(format!(
            "this call (idempotency key `{key}`) ran, but its result could not be read back"
        ))),
    }
}

fn unreachable(error: &StoreError) -> Once {
    Once::retry(format!(
        "the store that records calls cannot be reached ({}); nothing was run: retry the call \
         with the same idempotency key",
        toolgate_core::error_chain(error)
    ))
}

fn may_have_run(key: &str, runner: &str) -> Once {
    Once::done(ToolResult::failure(format!(
        "this call (idempotency key `{key}`) was running on worker {runner}, which stopped \
         before it finished: it may have run, in part or whole. It is not run again; check \
         its effects before making it again with a new key"
    )))
}

/// What the claim before the run found.
#[derive(Default)]
enum Found {
    /// The gate ended the call before it was to run.
    #[default]
    NotAsked,
    /// This worker runs it: approval (ledger record) `id`.
    Ran(i64),
    /// Another worker runs or ran it.
    Elsewhere,
    /// Not claimed, and this is the answer.
    Refused(Once),
}

struct Claim<'a> {
    ledger: &'a CallLedger,
    /// The key kept in the store (rule 7).
    key: &'a str,
    /// The client's key, as messages name it.
    shown: &'a str,
    /// The id this worker's gate gives the call.
    call_id: String,
    found: Mutex<Found>,
}

impl Claim<'_> {
    fn set(&self, found: Found) {
        *self.found.lock().unwrap_or_else(PoisonError::into_inner) = found;
    }

    fn take(&self) -> Found {
        std::mem::take(&mut *self.found.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

#[async_trait]
impl RunClaim for Claim<'_> {
    fn key(&self) -> &str {
        self.key
    }

    async fn claim(&self, tool: &str) -> Result<(), ToolResult> {
        let claimed = self
            .ledger
            .store
            .claim_run(&NewRun {
                key: self.key.to_owned(),
                session_id: None,
                tool: tool.to_owned(),
                worker: self.ledger.worker.clone(),
                at: now_ms(),
                call_id: Some(self.call_id.clone()),
            })
            .await;
        let refused = match claimed {
            Ok(Claimed::Claimed(record)) => {
                self.set(Found::Ran(record.id));
                return Ok(());
            }
            Ok(Claimed::Taken(_)) => {
                self.set(Found::Elsewhere);
                return Err(ToolResult::failure("run by another worker"));
            }
            Ok(Claimed::NotApproved(record)) if record.status == ApprovalStatus::Pending => {
                Once::retry(format!(
                    "this call (idempotency key `{}`) waits for a person's answer (approval \
                     {}); retry it with the same key to wait for that answer",
                    self.shown, record.id
                ))
            }
            Ok(Claimed::NotApproved(record)) => Once::done(ToolResult::failure(format!(
                "this call (idempotency key `{}`) was refused when it was asked (approval {}, \
                 {}); it was not run",
                self.shown, record.id, record.status
            ))),
            Ok(_) => Once::retry("the ledger answered in a way this toolgate does not know"),
            Err(error) => unreachable(&error),
        };
        let result = refused.result.clone();
        self.set(Found::Refused(refused));
        Err(result)
    }
}

#[async_trait]
impl Ledger for CallLedger {
    async fn execute(
        &self,
        engine: &ExecutionEngine,
        call: ToolCall,
        key: &str,
        scope: &ApprovalScope,
    ) -> Once {
        let kept = kept_key(engine.client(), &call, key);
        let asked = Asked {
            engine,
            call: &call,
            key,
        };
        if let Some(answer) = self.look(&kept, &asked).await {
            return answer;
        }
        let claim = Claim {
            ledger: self,
            key: &kept,
            shown: key,
            call_id: call.id.clone(),
            found: Mutex::new(Found::NotAsked),
        };
        let run = engine.execute_claimed(call.clone(), scope, &claim).await;
        match claim.take() {
            Found::NotAsked => Once::done(run.result),
            Found::Ran(id) => {
                let stored = serde_json::to_value(&run.result).unwrap_or_default();
                match self
                    .store
                    .finish_approved_run(id, &self.worker, &stored, now_ms())
                    .await
                {
                    Ok(true) => {}
                    Ok(false) => tracing::warn!(
                        "the result of call `{key}` was not stored: its record is no longer \
                         this worker's"
                    ),
                    Err(error) => tracing::warn!(
                        "the result of call `{key}` could not be stored ({}); a retry will be \
                         told it may have run",
                        toolgate_core::error_chain(&error)
                    ),
                }
                Once::done(run.result)
            }
            Found::Elsewhere => self.look(&kept, &asked).await.unwrap_or_else(|| {
                Once::retry("the call was claimed elsewhere and is not finished; retry it")
            }),
            Found::Refused(answer) => answer,
        }
    }
}
