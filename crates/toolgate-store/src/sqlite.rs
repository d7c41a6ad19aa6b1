//! The `SQLite` backend: one file, safe to share between processes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::config::DbConfig;
use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::paths::{self, WORKSPACE_FILE};
use crate::private;
use crate::{AuditWriter, StoreError};

mod approvals;
mod audit;
mod checkpoints;
mod dynamic_tools;
mod limits;
mod memory;
mod notes;
mod rules;
mod schedules;
mod schema;
mod sessions;
mod tasks;
mod workers;

/// How long a statement waits for another connection's write lock before it
/// fails with `database is locked`.
///
/// Writes are short (one step, one audit batch), so waiting this long means
/// another process is stuck, not busy.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The pages of write-ahead log past which a commit checkpoints it, and a
/// closing connection empties it (rule 2 of [`SqliteStore`]): small, since
/// every process that opens the store with no other process holding it
/// reads the whole log back.
pub const WAL_PAGES: i64 = 16;

/// The schema version this build of toolgate writes (`PRAGMA
/// user_version`). Databases with a higher version are refused.
pub const SCHEMA_VERSION: i64 = schema::VERSION;

/// A store in one `SQLite` file; implements [`SessionStore`],
/// [`AuditStore`], [`MemoryIndex`], [`SessionHistory`], [`NoteStore`],
/// [`TaskStore`], [`PlanStore`], [`ScheduleStore`] and
/// [`DynamicToolStore`].
///
/// Cloning is cheap: clones share one connection. Each operation runs on
/// tokio's blocking thread pool when called inside a tokio runtime
/// (current-thread or multi-thread), so that a slow disk or a lock held by
/// another process never stalls the runtime; outside a runtime it runs on
/// the calling thread. An operation whose future is dropped still
/// completes (or rolls back) on its own.
///
/// # Rules
///
/// 1. The file and its parent directories are created if missing, private
///    to the user whatever the umask: the file `0600`, the directories
///    `0700`. The database and its `-wal`, `-shm` and `-journal` files are
///    tightened to `0600` when found looser (said in a `tracing` info
///    line); `SQLite` gives the files it creates beside the database the
///    database's own mode.
/// 2. The journal is a write-ahead log (WAL): readers never wait for a
///    writer, and a process killed at any point (`kill -9`) leaves the last
///    committed transaction intact and the one in flight rolled back.
///    `synchronous = NORMAL`: a committed transaction survives the process;
///    a power cut may lose the last few, and never corrupts the file.
///    A short log is not checkpointed on close: it stays beside the
///    database, and the next process to open the file reads it back (a
///    one-off command would otherwise, for its one row, copy the log into
///    the file, sync both and delete the log). A connection that wrote and
///    finds [`WAL_PAGES`] pages or more in the log on close checkpoints it
///    and empties it, unless another process is reading (it then
///    checkpoints in its turn): the log a process reads back stays short.
///    Within a process, the commit that brings the log past [`WAL_PAGES`]
///    pages checkpoints it. A copy of the store is the database with its
///    `-wal` file (or `VACUUM INTO`).
/// 3. Every write takes the write lock when it begins (`BEGIN IMMEDIATE`)
///    and waits up to 10 seconds for another connection to release it, so
///    any number of toolgate processes can share the file. (A deferred
///    transaction that reads first and writes later cannot wait: if another
///    connection wrote in between, `SQLite` fails it with `database is
///    locked` at once, since waiting would not make its snapshot current.
///    See <https://www.sqlite.org/lang_transaction.html>.)
/// 4. Foreign keys are enforced.
/// 5. The schema is versioned (`PRAGMA user_version`) and migrated on open:
///    a database of the unversioned `toolgate-agent` session store is
///    upgraded in place, keeping its sessions; a database written by a
///    newer toolgate is refused ([`StoreError::NewerSchema`]) before
///    anything in it is changed.
/// 6. The audit is a file of its own beside the database ([`audit_path`]),
///    with the same rules: appending an entry reads that file's small
///    schema, not the store's fifty tables, indexes and triggers (a
///    quarter of a one-off `toolgate call`'s instructions). A store written
///    before the split has its audit moved there by the migration, once,
///    even if interrupted (a marker in the audit file says the rows came).
///
/// [`SessionStore`]: crate::SessionStore
/// [`AuditStore`]: crate::AuditStore
/// [`MemoryIndex`]: crate::MemoryIndex
/// [`SessionHistory`]: crate::SessionHistory
/// [`ScheduleStore`]: crate::ScheduleStore
/// [`NoteStore`]: crate::NoteStore
/// [`TaskStore`]: crate::TaskStore
/// [`PlanStore`]: crate::PlanStore
/// [`DynamicToolStore`]: crate::DynamicToolStore
#[derive(Debug, Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    /// The store's connection, and whether its settings (rule 2) were
    /// applied: they read the whole schema, which a process that only
    /// appends to the audit (a one-off `toolgate call`) never needs, so
    /// they wait for the first statement on it.
    conn: Mutex<(Connection, bool)>,
    /// The audit file's connection (rule 6), opened on first use.
    audit: Mutex<Option<Connection>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        let (conn, settled) = self.conn.get_mut().unwrap_or_else(PoisonError::into_inner);
        // An unsettled connection ran no statement: it wrote nothing, and a
        // checkpoint would read the schema it was spared.
        if *settled {
            fold_log(conn, &self.path);
        }
        let audit = self.audit.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let Some(conn) = audit {
            fold_log(conn, &audit_path(&self.path));
        }
    }
}

/// Checkpoints the log of the database at `path` and empties it when it
/// holds [`WAL_PAGES`] pages or more, without waiting for other readers
/// (rule 2).
fn fold_log(conn: &Connection, path: &Path) {
    // A frame is a page (4 KiB, `SQLite`'s default) and a 24-byte header,
    // after a 32-byte file header.
    let frames = std::fs::metadata(companion(path, "-wal"))
        .map_or(0, |m| m.len().saturating_sub(32) / (4096 + 24));
    if frames < u64::try_from(WAL_PAGES).unwrap_or(u64::MAX) {
        return;
    }
    let folded = conn.busy_timeout(Duration::ZERO).and_then(|()| {
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            r.get::<_, i64>(0)
        })
    });
    match folded {
        Ok(0) => {}
        Ok(_) => {
            tracing::debug!(path = %path.display(), "log not emptied: another process reads it");
        }
        Err(error) => {
            tracing::debug!(path = %path.display(), %error, "log not checkpointed");
        }
    }
}

impl SqliteStore {
    /// Opens (creating it if needed) the store at `path`.
    ///
    /// This blocks while the file is opened and migrated; in async code, it
    /// is meant for start-up.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        Self::open_retrying(path).map_err(|e| match e {
            e @ (StoreError::NewerSchema { .. } | StoreError::Io { .. }) => e,
            e => StoreError::Open {
                path: path.to_owned(),
                source: Box::new(e),
            },
        })
    }

    /// [`open_at`](Self::open_at), again while another connection holds the
    /// lock it needs. Switching a new file to WAL, and a migration racing
    /// another process's, can fail with `SQLITE_BUSY` at once instead of
    /// waiting in the busy handler (`SQLite` returns it without waiting where
    /// waiting could deadlock), so the whole sequence is retried, for as
    /// long as the busy timeout.
    fn open_retrying(path: &Path) -> Result<Self, StoreError> {
        let started = std::time::Instant::now();
        loop {
            match Self::open_at(path) {
                Err(error) if is_busy(&error) && started.elapsed() < BUSY_TIMEOUT => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                other => return other,
            }
        }
    }

    fn open_at(path: &Path) -> Result<Self, StoreError> {
        let mut conn = open_file(path)?;
        // Refuse a newer schema before anything below writes to the file
        // (switching to WAL rewrites its header).
        let found = schema::version(&conn)?;
        if found > schema::VERSION {
            return Err(StoreError::NewerSchema {
                path: path.to_owned(),
                found,
                supported: schema::VERSION,
            });
        }
        let settled = found < schema::VERSION;
        if settled {
            settle(&conn)?;
            let audit = audit_path(path);
            schema::migrate(&mut conn, path, |tx, found| {
                schema::move_audit_out(tx, found, &audit, open_audit)
            })?;
        }
        Ok(Self {
            inner: Arc::new(Inner {
                path: path.to_owned(),
                conn: Mutex::new((conn, settled)),
                audit: Mutex::new(None),
            }),
        })
    }

    /// Opens the store of `workspace` in toolgate's data directory (see
    /// [`default_path`](crate::default_path)), and writes the workspace's
    /// canonical path in a `workspace` text file next to the database.
    pub fn open_for_workspace(data_dir: &Path, workspace: &Path) -> Result<Self, StoreError> {
        let path = paths::default_path(data_dir, workspace);
        let store = Self::open(&path)?;
        // The data directory and its `workspaces/` hold every workspace's
        // store: the user's only, also when an older toolgate made them.
        let workspaces = data_dir.join("workspaces");
        for dir in [data_dir, workspaces.as_path()]
            .into_iter()
            .chain(path.parent())
        {
            private::tighten(dir).map_err(|source| StoreError::Io {
                path: dir.to_owned(),
                source,
            })?;
        }
        if let Some(dir) = path.parent() {
            let file = dir.join(WORKSPACE_FILE);
            let text = format!("{}\n", paths::canonical(workspace).display());
            // Written only when it changes: two processes opening the store
            // at once then write the same bytes at most.
            let io_error = |source| StoreError::Io {
                path: file.clone(),
                source,
            };
            if std::fs::read_to_string(&file).ok().as_deref() != Some(text.as_str()) {
                private::create_file(&file).map_err(io_error)?;
                std::fs::write(&file, text).map_err(io_error)?;
            }
            private::tighten(&file).map_err(io_error)?;
        }
        Ok(store)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// An [`AuditWriter`] with default settings over a second connection to
    /// this file, so that its batches do not wait behind this store's
    /// session queries.
    pub fn audit_writer(&self) -> Result<AuditWriter, StoreError> {
        AuditWriter::builder(Arc::new(Self::open(self.path())?)).build()
    }

    /// Runs `f` on the audit file's connection (rule 6), opening it first
    /// if need be, on tokio's blocking pool when there is a runtime.
    async fn with_audit<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
        T: Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        run_blocking(move || {
            let mut guard = inner.audit.lock().unwrap_or_else(PoisonError::into_inner);
            let conn = match &mut *guard {
                Some(conn) => conn,
                empty => empty.insert(open_audit(&audit_path(&inner.path))?),
            };
            f(conn)
        })
        .await
    }

    /// Runs `f` on the connection, on tokio's blocking pool when there is
    /// a runtime.
    async fn with_conn<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
        T: Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        let job = move || {
            // A poisoned lock means a job panicked; its transaction was
            // rolled back when it unwound, so the connection is usable.
            let mut guard = inner.conn.lock().unwrap_or_else(PoisonError::into_inner);
            let (conn, settled) = &mut *guard;
            if !*settled {
                settle(conn)?;
                *settled = true;
            }
            f(conn)
        };
        run_blocking(job).await
    }
}

/// Runs `job` on tokio's blocking pool when there is a runtime, else here.
async fn run_blocking<T, F>(job: F) -> Result<T, StoreError>
where
    F: FnOnce() -> Result<T, StoreError> + Send + 'static,
    T: Send + 'static,
{
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle
            .spawn_blocking(job)
            .await
            .map_err(|e| StoreError::Worker(Box::new(e)))?,
        Err(_) => job(),
    }
}

/// Opens the `SQLite` file at `path`, creating it and its directories
/// private (rule 1), with the busy timeout (rule 3) and nothing read yet.
fn open_file(path: &Path) -> Result<Connection, StoreError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        private::create_dir_all(dir).map_err(|source| StoreError::Io {
            path: dir.to_owned(),
            source,
        })?;
    }
    // Made (or tightened) before SQLite opens it: SQLite would create it
    // `0644` under the usual umask, and copies its mode to the `-wal`
    // and `-shm` files.
    let io_error = |path: &Path| {
        let path = path.to_owned();
        move |source| StoreError::Io { path, source }
    };
    private::create_file(path).map_err(io_error(path))?;
    for suffix in private::COMPANIONS {
        let file = companion(path, suffix);
        private::tighten(&file).map_err(io_error(&file))?;
    }
    let conn = Connection::open(path).db()?;
    conn.busy_timeout(BUSY_TIMEOUT).db()?;
    // Also before `settle`: a connection that only read the version must
    // not checkpoint and delete the log on close either (rule 2).
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
        .db()?;
    Ok(conn)
}

/// `path` with `suffix` appended to its file name.
fn companion(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The settings of a connection (rules 2 and 4).
fn settle(conn: &Connection) -> Result<(), StoreError> {
    conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))
        .db()?;
    conn.pragma_update(None, "synchronous", "NORMAL").db()?;
    conn.pragma_update(None, "wal_autocheckpoint", WAL_PAGES)
        .db()?;
    conn.pragma_update(None, "journal_size_limit", 1 << 20)
        .db()?;
    conn.pragma_update(None, "foreign_keys", true).db()?;
    Ok(())
}

/// Where the audit of the store at `path` is kept (rule 6): beside it,
/// `-audit` added to the file's stem (`toolgate.db` → `toolgate-audit.db`).
pub fn audit_path(path: &Path) -> PathBuf {
    let stem = path.file_stem().unwrap_or(path.as_os_str());
    let mut name = stem.to_owned();
    name.push("-audit");
    if let Some(ext) = path.extension() {
        name.push(".");
        name.push(ext);
    }
    path.with_file_name(name)
}

/// The files of the store at `path`: the database, its audit file, and
/// the `-wal`, `-shm` and `-journal` files `SQLite` keeps beside each
/// (`true` for those).
pub fn store_files(path: &Path) -> Vec<(PathBuf, bool)> {
    let mut files = Vec::new();
    for db in [path.to_owned(), audit_path(path)] {
        for suffix in private::COMPANIONS {
            files.push((companion(&db, suffix), true));
        }
        files.push((db, false));
    }
    files
}

/// Opens the audit file at `path` (rule 6), settled and migrated.
fn open_audit(path: &Path) -> Result<Connection, StoreError> {
    let mut conn = open_file(path)?;
    settle(&conn)?;
    schema::migrate_audit(&mut conn, path)?;
    Ok(conn)
}

/// A write transaction that holds the write lock from its start (rule 3).
fn write_tx(conn: &mut Connection) -> Result<Transaction<'_>, StoreError> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
        .db()
}

/// Converts the driver's errors into [`StoreError::Database`].
/// Whether `error` is `SQLite`'s "busy" or "locked".
/// Where a damaged store at `path` is moved by [`move_aside`]: the first
/// of `FILE.damaged`, `FILE.damaged.2`, `FILE.damaged.3`, … that does not
/// exist (nothing is ever overwritten). An error can name it before the
/// person agrees to the move.
pub fn aside_path(path: &Path) -> PathBuf {
    let named = |n: u32| {
        let mut name = path.as_os_str().to_owned();
        name.push(if n == 1 {
            ".damaged".to_owned()
        } else {
            format!(".damaged.{n}")
        });
        PathBuf::from(name)
    };
    (1..u32::MAX)
        .map(named)
        .find(|p| std::fs::symlink_metadata(p).is_err())
        .unwrap_or_else(|| named(u32::MAX))
}

/// Moves the store at `path` (with its `-wal`, `-shm` and `-journal`) to
/// [`aside_path`], so that the next open starts an empty store, and returns
/// where the database went. Nothing is deleted: the damaged file stays for
/// the person to inspect or recover with other tools. Only ever called at
/// a person's request (`toolgate store recover`).
pub fn move_aside(path: &Path) -> Result<PathBuf, StoreError> {
    let aside = aside_path(path);
    let io_error = |p: &Path| {
        let p = p.to_owned();
        move |source| StoreError::Io { path: p, source }
    };
    std::fs::rename(path, &aside).map_err(io_error(path))?;
    for suffix in private::COMPANIONS {
        let mut from = path.as_os_str().to_owned();
        from.push(suffix);
        let from = PathBuf::from(from);
        if std::fs::symlink_metadata(&from).is_ok() {
            let mut to = aside.as_os_str().to_owned();
            to.push(suffix);
            std::fs::rename(&from, PathBuf::from(to)).map_err(io_error(&from))?;
        }
    }
    Ok(aside)
}

fn is_busy(error: &StoreError) -> bool {
    let StoreError::Database(source) = error else {
        return false;
    };
    matches!(
        source.downcast_ref::<rusqlite::Error>(),
        Some(rusqlite::Error::SqliteFailure(e, _))
            if matches!(e.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

trait Db<T> {
    fn db(self) -> Result<T, StoreError>;
}

impl<T> Db<T> for rusqlite::Result<T> {
    fn db(self) -> Result<T, StoreError> {
        self.map_err(StoreError::db)
    }
}

/// Milliseconds since the Unix epoch.
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// An unsigned count as `SQLite` stores it (saturating).
fn to_i64(n: impl TryInto<i64>) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}

/// A stored count back (negative values, never written, read as 0).
fn from_i64<T: TryFrom<i64> + Default>(n: i64) -> T {
    T::try_from(n).unwrap_or_default()
}
