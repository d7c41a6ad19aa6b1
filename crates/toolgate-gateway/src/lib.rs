//! What lets toolgate workers share one store (`docs/gateway.md`): the
//! pieces of the gate that live in the store rather than in a
//! process, so that any worker behind a load balancer can answer any
//! request.
//!
//! - [`StoreApprover`]: a call that needs a person waits in the store's
//!   [`ApprovalStore`](toolgate_store::ApprovalStore), with what the person
//!   is shown ([`StoredView`]); any process sharing the store — a web UI on
//!   another worker, another worker's approver — answers it, and the
//!   first answer wins.
//! - [`CallLedger`]: the store-backed [`Ledger`](toolgate_engine::Ledger)
//!   that runs a call carrying an idempotency key once among the workers,
//!   and answers a retry with the first run's result (or a retryable error
//!   while it runs, or when its worker died).
//!
//! - [`StoreRules`]: the confirmation rules saved in the store, which
//!   every gate applies beside its configuration's, read again only when
//!   the store tells of a change.
//!
//! - [`StoreAllows`]: "allow for the session" kept in the store, so that
//!   a client allowed a tool on one worker is not asked again on another.
//!
//! - [`StoreRate`]: each client's `rate_per_minute`, taken from one budget
//!   in the store by every worker.
//!
//! All work on any backend of the store (`SQLite` for processes on one
//! machine, `PostgreSQL` for workers on several); the host assembles them
//! when the configuration shares a store.

pub use allows::StoreAllows;
pub use approvals::{
    APPROVAL_TIMEOUT, StoreApprover, StoredView, asked_without_key, decided, worker_name,
};
pub use ledger::CallLedger;
pub use presence::presence;
pub use rate::StoreRate;
pub use rules::StoreRules;

mod allows;
mod approvals;
mod ledger;
mod presence;
mod rate;
mod rules;
