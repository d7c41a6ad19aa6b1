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
    /// A database server's store has an older schema than this toolgate
    /// needs; `toolgate store migrate` upgrades it.
    #[error(
        "the store {database} has schema version {found} and this toolgate needs version {required}: run `toolgate store migrate` (with the same `store.url`) to upgrade it"
    )]
    MigrationNeeded {
        /// The database, as configured (its URL).
        database: String,
        /// Its schema version (0: no toolgate schema yet).
        found: i64,
        /// The version this build needs.
        required: i64,
    },
    /// A database server's store was written by a newer toolgate. It is not
    /// touched.
    #[error(
        "the store {database} was written by a newer toolgate (schema version {found}; this toolgate knows versions up to {supported}); it was left untouched"
    )]
    NewerDatabase {
        /// The database, as configured (its URL).
        database: String,
        /// Its schema version.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// The database server cannot be reached or refused the login.
    #[error(
        "cannot connect to the store {database}; check that the server runs, that `store.url` names it, and the password in the variable `store.password_env` names"
    )]
    Connect {
        /// The database, as configured (its URL).
        database: String,
        /// The cause.
        #[source]
        source: BackendError,
    },
    /// The store's settings are wrong (the message says which and how to
    /// fix them).
    #[error("{0}")]
    Config(String),
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
    /// A database driver's error (for a backend's own errors).
    pub fn db(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Database(Box::new(error))
    }

    /// What kind of failure this is, for a message that says what to do
    /// (see [`Fault`]). `dir` is the directory of the database, whose free
    /// space tells a full disk from another I/O error.
    pub fn fault(&self, dir: Option<&std::path::Path>) -> Fault {
        match self {
            Self::Open { source, .. } => source.fault(dir),
            Self::NewerSchema { .. } | Self::NewerDatabase { .. } => Fault::Newer,
            Self::Io { source, .. } => io_fault(source, dir),
            Self::Database(source) | Self::Worker(source) => {
                if let Some(rusqlite::Error::SqliteFailure(e, _)) =
                    source.downcast_ref::<rusqlite::Error>()
                {
                    use rusqlite::ErrorCode as C;
                    return match e.code {
                        C::DatabaseCorrupt | C::NotADatabase => Fault::Damaged,
                        C::DiskFull => Fault::NoSpace,
                        C::ReadOnly | C::PermissionDenied | C::CannotOpen => {
                            if disk_full(dir) {
                                Fault::NoSpace
                            } else {
                                Fault::Permission
                            }
                        }
                        C::DatabaseBusy | C::DatabaseLocked => Fault::Busy,
                        // `disk I/O error`: a full disk shows up here too
                        // (SQLite cannot grow the `-shm` file: xShmMap).
                        C::SystemIoFailure if disk_full(dir) => Fault::NoSpace,
                        _ => Fault::Other,
                    };
                }
                source
                    .downcast_ref::<std::io::Error>()
                    .map_or(Fault::Other, |e| io_fault(e, dir))
            }
            _ => Fault::Other,
        }
    }
}

/// The kinds of store failure a person can do something about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// The file is not a database, or its pages are damaged.
    Damaged,
    /// The disk holding it is full.
    NoSpace,
    /// It (or its directory) may not be read or written by this user.
    Permission,
    /// Another process holds it locked.
    Busy,
    /// A newer toolgate wrote it.
    Newer,
    /// Anything else.
    Other,
}

fn io_fault(error: &std::io::Error, dir: Option<&std::path::Path>) -> Fault {
    match error.raw_os_error() {
        Some(code) if code == rustix::io::Errno::NOSPC.raw_os_error() => Fault::NoSpace,
        Some(code)
            if [
                rustix::io::Errno::ACCESS,
                rustix::io::Errno::PERM,
                rustix::io::Errno::ROFS,
            ]
            .iter()
            .any(|e| e.raw_os_error() == code) =>
        {
            Fault::Permission
        }
        _ if disk_full(dir) => Fault::NoSpace,
        _ => Fault::Other,
    }
}

/// Whether the file system of `dir` has no room left for an ordinary user
/// (less than 64 KiB, or no free inodes).
fn disk_full(dir: Option<&std::path::Path>) -> bool {
    let Some(dir) = dir else { return false };
    rustix::fs::statvfs(dir).is_ok_and(|s| {
        s.f_bavail.saturating_mul(s.f_frsize) < 64 * 1024 || (s.f_files > 0 && s.f_favail == 0)
    })
}
