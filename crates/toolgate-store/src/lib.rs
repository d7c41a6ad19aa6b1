//! Persistence for toolgate: agent sessions written step by step, and the
//! gate's audit trail, behind small async traits; `SQLite` by default.
//!
//! - [`SessionStore`]: a session's conversation, tool calls and token usage,
//!   stored one complete step at a time ([`SessionStore::record_step`]), so
//!   that a run killed in the middle loses at most the step in flight and
//!   can be resumed from the last complete one.
//! - [`AuditStore`]: the gate's append-only audit entries; the gate queues
//!   them on an [`AuditWriter`], which writes them in batches on a thread of
//!   its own.
//! - [`MemoryIndex`]: full-text search (BM25) over what an agent remembers
//!   — memory files, notes, session history — indexed incrementally by
//!   fingerprint; [`SessionHistory`] reads the sessions it is fed from.
//! - [`NoteStore`]: the assistant's notes, with full-text search.
//! - [`TaskStore`]: projects, their tasks and an activity log of every
//!   change; [`PlanStore`]: the plan each agent session keeps as it works.
//! - [`ScheduleStore`]: scheduled jobs and the record of their runs, claimed
//!   with leases so that schedulers sharing a store never run a job twice.
//! - [`DynamicToolStore`]: tools agents wrote at run time, pending until a
//!   person approves or rejects them.
//! - [`ApprovalStore`]: calls waiting for a person, answered from any
//!   worker, and run once (an idempotency key per call).
//! - [`CheckpointStore`]: what each step of a session changed in the
//!   workspace (every path's state before and after) and the rewinds made;
//!   [`WorkspaceTracker`] captures the changes, keeping every content in a
//!   content-addressed [`BlobStore`] beside the database, and
//!   [`checkpoint::restore`] puts them back with a conflict check.
//! - [`SqliteStore`]: every trait in one `SQLite` file that several toolgate
//!   processes can share, with a versioned schema that upgrades the old
//!   `.toolgate/sessions.db` of `toolgate-agent`.
//! - `PostgresStore`, in the crate `toolgate-store-postgres`: every trait
//!   in one `PostgreSQL` database that workers on several machines share,
//!   with numbered migrations run by `toolgate store migrate` and checked
//!   when it opens. A crate of its own, so that a library user who wants
//!   `SQLite` alone does not compile it.
//! - [`default_path`] and [`data_dir_from_env`]: where that file lives — in
//!   the user's data directory, one per workspace, never in the repository.
//!
//! The traits are backend-neutral: payloads are JSON values (messages,
//! effects), errors are [`StoreError`], and no database type appears in a
//! signature, so another crate can implement them (`toolgate-store-postgres`
//! does); `tests/suite` holds both backends to the same trait-level tests
//! (the `PostgreSQL` run is that crate's `tests/suite.rs`). Further kinds of records (notes, schedules) are
//! meant to be further traits beside these, each with its module and its
//! migration.
//!
//! # Example
//!
//! ```
//! use serde_json::json;
//! use toolgate_store::{NewSession, RUNNING, SessionStore, SqliteStore, StepRecord};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let store = SqliteStore::open(dir.path().join("toolgate.db"))?;
//!
//! let start = store
//!     .begin(&NewSession {
//!         id: "s1".into(),
//!         agent: "build".into(),
//!         task: "fix the failing test".into(),
//!     })
//!     .await?;
//! store
//!     .record_step(&StepRecord {
//!         session_id: "s1".into(),
//!         run: start.run,
//!         step: 1,
//!         messages_from: start.stored_messages,
//!         messages: vec![
//!             json!({"role": "user", "content": "fix the failing test"}),
//!             json!({"role": "assistant", "content": "Done."}),
//!         ],
//!         tool_calls: vec![],
//!         usage: None,
//!         events: Vec::new(),
//!     })
//!     .await?;
//!
//! let sessions = store.list().await?;
//! assert_eq!((sessions[0].id.as_str(), sessions[0].outcome.as_str()), ("s1", RUNNING));
//! assert_eq!(sessions[0].steps, 1);
//! let messages = store.messages("s1").await?;
//! assert_eq!(messages[1]["content"], "Done.");
//! # Ok(())
//! # }
//! ```

#[doc(hidden)]
pub use approvals::deadline_after;
pub use approvals::{
    APPROVAL_POLL, APPROVALS_CHANNEL, Answer, Answered, ApprovalRecord, ApprovalStatus,
    ApprovalStore, Asked, NewApproval, NewRun, RunClaim, WorkerLease,
};
pub use audit::{AuditEntry, AuditFilter, AuditStore};
pub use checkpoint::blobs::{BlobStore, GcReport};
pub use checkpoint::restore::{Conflict, Restore, RestorePlan};
pub use checkpoint::tracker::{DEFAULT_MAX_FILE, Exclude, WorkspaceTracker};
pub use checkpoint::{Checkpoint, CheckpointStore, NewCheckpoint, NewRewind, RewindRecord};
pub use dynamic_tools::{
    Created, DynamicToolKind, DynamicToolRecord, DynamicToolScope, DynamicToolStatus,
    DynamicToolStore, NewDynamicTool, StatusChange,
};
pub use error::{BackendError, Fault, StoreError};
pub use limits::{Budget, LimitStore};
pub use memory::{
    MemoryApplied, MemoryChunk, MemoryHit, MemoryIndex, MemoryQuery, MemoryUpdate, SessionChange,
    SessionHistory, SessionMessage, SourceId,
};
pub use notes::{NewNote, Note, NoteHit, NoteStore, NoteUpdate, query_words};
pub use paths::{DB_FILE, WORKSPACE_FILE, data_dir_from_env, default_path};
pub use rules::{NewRule, RULES_CHANNEL, RuleStore, SavedRule, SessionAllow};
pub use schedules::{
    AfterRun, Claim, ClaimedJob, JobRecord, NewJob, RUN_ABANDONED, RUN_RUNNING, RunEnd, RunRecord,
    ScheduleStore, Trigger,
};
pub use session::{
    NewSession, RUNNING, RunStart, SessionEvent, SessionEventRow, SessionStore, SessionSummary,
    StepRecord, ToolCallRow, UsageRow, new_session_id,
};
pub use sqlite::{
    SCHEMA_VERSION, SqliteStore, WAL_PAGES, aside_path, audit_path, move_aside, store_files,
};
pub use tasks::{
    Activity, NewProject, NewTask, Plan, PlanStep, PlanStore, Priority, Project, ProjectKey,
    ProjectStatus, ProjectSummary, ProjectUpdate, StepStatus, Task, TaskFilter, TaskStatus,
    TaskStore, TaskUpdate, UnknownName,
};
pub use writer::{AuditWriter, AuditWriterBuilder};

/// Every store trait in one object, whichever the backend: what a host
/// holds (`Arc<dyn Store>`) and hands out as the single traits it needs.
pub trait Store:
    SessionStore
    + AuditStore
    + MemoryIndex
    + SessionHistory
    + NoteStore
    + TaskStore
    + PlanStore
    + ScheduleStore
    + DynamicToolStore
    + CheckpointStore
    + ApprovalStore
    + RuleStore
    + LimitStore
    + std::fmt::Debug
{
    /// Where the store is, for messages: the `SQLite` file, or the
    /// database's URL (which holds no password).
    fn location(&self) -> &std::path::Path;

    /// An [`AuditWriter`] with default settings over this store, writing
    /// on a connection of its own.
    fn audit_writer(&self) -> Result<AuditWriter, StoreError>;
}

impl Store for SqliteStore {
    fn location(&self) -> &std::path::Path {
        self.path()
    }

    fn audit_writer(&self) -> Result<AuditWriter, StoreError> {
        SqliteStore::audit_writer(self)
    }
}

/// `as_str`, `from_name`, `Display` and `FromStr` for an enum of stored
/// names (statuses, kinds, scopes).
macro_rules! names {
    ($type:ty { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $type {
            /// The stored name (`snake_case`).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $name),+
                }
            }

            /// The value [`as_str`](Self::as_str) names `name`.
            pub fn from_name(name: &str) -> Option<Self> {
                name.parse().ok()
            }
        }

        impl std::fmt::Display for $type {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $type {
            type Err = $crate::UnknownName;

            fn from_str(s: &str) -> Result<Self, $crate::UnknownName> {
                match s {
                    $($name => Ok(Self::$variant),)+
                    _ => Err($crate::UnknownName(s.to_owned())),
                }
            }
        }
    };
}

mod approvals;
mod audit;
pub mod checkpoint;
mod dynamic_tools;
mod error;
mod limits;
mod memory;
mod notes;
mod paths;
mod private;
mod rules;
mod schedules;
mod session;
mod sqlite;
mod tasks;
mod writer;
