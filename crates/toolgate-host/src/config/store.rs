//! `audit:` and `store:` — where calls, sessions and the assistant tools'
//! data are recorded.

use std::num::NonZeroU64;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// `audit:`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuditSection {
    /// Where to append one JSON line per call. Default: no file.
    pub path: Option<PathBuf>,
    /// Whether every call is also recorded in the store (`toolgate audit`,
    /// the web UI's audit page). Default: true.
    pub store: bool,
}

impl AuditSection {
    /// A relative `path` made relative to the workspace root.
    pub(crate) fn anchor(&mut self, workspace: &Path) {
        anchor(&mut self.path, workspace);
    }
}

impl Default for AuditSection {
    fn default() -> Self {
        Self {
            path: None,
            store: true,
        }
    }
}

/// `store:`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreSection {
    /// The `SQLite` file. Default: `toolgate.db` in the user's data
    /// directory (`$XDG_DATA_HOME/toolgate`, else
    /// `~/.local/share/toolgate`), under `workspaces/NAME-HASH/`, one per
    /// workspace — never inside the workspace. Relative paths are relative
    /// to the workspace.
    pub path: Option<PathBuf>,
    /// A `PostgreSQL` database instead of the `SQLite` file, for workers on
    /// several machines sharing sessions, audit, memory, notes, tasks,
    /// schedules and dynamic tools: `postgres://USER@HOST:PORT/DATABASE`.
    /// Never with a password (refused): give it in the variable
    /// `password_env` names. Create its schema with `toolgate store
    /// migrate`. Checkpoint contents stay in the local data directory.
    /// Default: none (the `SQLite` file).
    pub url: Option<String>,
    /// The environment variable holding the `PostgreSQL` password of `url`,
    /// e.g. `TOOLGATE_PG_PASSWORD`. Default: none (the server asks for no
    /// password).
    pub password_env: Option<String>,
    /// How many seconds a call that needs a person's answer in the web UI
    /// waits for it (in the store, where any worker's page may answer)
    /// before it expires and is refused. At least 1. Default: 3600.
    pub approval_timeout_secs: NonZeroU64,
    /// How many seconds an "allow for the session" answered for a client
    /// of `toolgate mcp serve --http` holds, on every worker sharing the
    /// store (stateless clients have no session that ends). At least 1.
    /// Default: 28800 (eight hours).
    pub session_allow_secs: NonZeroU64,
    /// What each step of a session changed in the workspace, kept so that
    /// `toolgate rewind` can put it back.
    pub checkpoints: CheckpointsSection,
}

impl Default for StoreSection {
    fn default() -> Self {
        Self {
            path: None,
            url: None,
            password_env: None,
            approval_timeout_secs: NonZeroU64::new(3600).unwrap_or(NonZeroU64::MIN),
            session_allow_secs: NonZeroU64::new(8 * 3600).unwrap_or(NonZeroU64::MIN),
            checkpoints: CheckpointsSection::default(),
        }
    }
}

/// `store.checkpoints:` — the contents kept for `toolgate rewind`, in
/// `blobs/` beside the database, and how long.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CheckpointsSection {
    /// Whether the gate captures what each call that may write changes,
    /// keeping the contents for checkpoints. Paths the workspace's top
    /// `.gitignore` or `.git/info/exclude` ignore (build outputs,
    /// dependencies), `.git`, sensitive files and toolgate's own are not
    /// captured, so a rewind leaves them as they are. Default: true.
    pub enabled: bool,
    /// Files larger than this many MiB are not kept: a change to one is
    /// reported and cannot be undone. Default: 16.
    pub max_file_mb: u64,
    /// When the kept contents pass this many MiB, the oldest checkpoints
    /// are dropped until they fit. Default: 2048.
    pub max_total_mb: u64,
    /// Checkpoints older than this many days are dropped. Default: 30.
    pub max_age_days: u64,
    /// At most this many steps are kept, over all sessions of the
    /// workspace; the oldest go first. Default: 10000.
    pub max_steps: usize,
}

impl Default for CheckpointsSection {
    fn default() -> Self {
        Self {
            enabled: true,
            max_file_mb: 16,
            max_total_mb: 2048,
            max_age_days: 30,
            max_steps: 10_000,
        }
    }
}

impl StoreSection {
    /// A relative `path` made relative to the workspace root.
    pub(crate) fn anchor(&mut self, workspace: &Path) {
        anchor(&mut self.path, workspace);
    }
}

/// Relative paths in the configuration are relative to the workspace root,
/// not to the directory toolgate was started in.
fn anchor(path: &mut Option<PathBuf>, workspace: &Path) {
    if let Some(path) = path.as_mut().filter(|p| p.is_relative()) {
        *path = workspace.join(&*path);
    }
}
