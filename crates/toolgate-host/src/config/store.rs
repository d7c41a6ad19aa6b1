//! `audit:` and `store:` — where calls, sessions and the assistant tools'
//! data are recorded.

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
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreSection {
    /// The `SQLite` file. Default: `toolgate.db` in the user's data
    /// directory (`$XDG_DATA_HOME/toolgate`, else
    /// `~/.local/share/toolgate`), under `workspaces/NAME-HASH/`, one per
    /// workspace — never inside the workspace. Relative paths are relative
    /// to the workspace.
    pub path: Option<PathBuf>,
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
