//! The one error type of the store.

use std::path::PathBuf;

/// A boxed error from a backend (the database driver, a worker thread).
///
/// Boxed so that no backend's types appear in this crate's API: a
/// `PostgreSQL` backend reports through the same variants as `SQLite`.
pub type BackendError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Errors of every store and of the [`AuditWriter`](crate::AuditWriter).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No session with this id.
    #[error("no session with id `{0}`; list them with `toolgate sessions list`")]
    NotFound(String),
    /// A step or the end of a run was reported for a run that is not the
    /// session's current one: another process has resumed the session since
    /// (or the run was never begun).
    #[error("run {run} is not the current run of session `{session_id}` (run {current} is)")]
    NotCurrentRun {
        /// The session.
        session_id: String,
        /// The run the caller reported.
        run: u32,
        /// The session's current run.
        current: u32,
    },
    /// A step would leave a hole in the stored conversation.
    #[error(
        "session `{session_id}` stores {stored} messages; a step cannot replace them from index {from}"
    )]
    MessageGap {
        /// The session.
        session_id: String,
        /// The step's `messages_from`.
        from: usize,
        /// How many messages are stored.
        stored: usize,
    },
    /// The database was written by a newer toolgate. It is not touched.
    #[error(
        "{} was written by a newer toolgate (schema version {found}; this toolgate knows versions up to {supported}); it was left untouched",
        path.display()
    )]
    NewerSchema {
        /// The database file.
        path: PathBuf,
        /// Its schema version.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// The database file cannot be opened, set up or migrated.
    #[error("cannot open the store at {}", path.display())]
    Open {
        /// The database file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: Box<StoreError>,
    },
    /// The database failed.
    #[error("database error")]
    Database(#[source] BackendError),
    /// Stored data is not valid JSON.
    #[error("stored data is not valid JSON")]
    Json(#[source] serde_json::Error),
    /// A file or directory next to the database cannot be created or read.
    #[error("cannot create or read {}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A background worker (a blocking task, the audit writer's thread)
    /// failed or is gone.
    #[error("a store worker failed")]
    Worker(#[source] BackendError),
    /// Audit entries were lost since the last
    /// [`flush`](crate::AuditWriter::flush): dropped because the queue was
    /// full, or not written because the store failed (the failure was logged
    /// with `tracing` when it happened).
    #[error(
        "{dropped} audit entries were dropped (queue full) and {failed} could not be written since the last flush"
    )]
    AuditLost {
        /// Entries dropped because the queue was full.
        dropped: u64,
        /// Entries the store failed to write.
        failed: u64,
    },
}

impl StoreError {
    /// A database driver's error.
    pub(crate) fn db(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Database(Box::new(error))
    }
}
