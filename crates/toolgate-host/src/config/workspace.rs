//! `workspace:` and `confirmation:` — what tools may do to the workspace's
//! files, and when a person is asked.

use serde::{Deserialize, Serialize};
use toolgate_policy::{ConfirmationMode, ConfirmationRule};

/// `workspace:`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkspaceSection {
    /// Whether `delete_file` may delete. Default: false.
    pub allow_delete: bool,
    /// The largest file `read_file` returns whole, in bytes. Default: 1 MiB.
    pub max_file_size: u64,
    /// Whether tools may read and write sensitive files (`.env*`, keys,
    /// credentials, …). Default: false.
    pub allow_sensitive: bool,
}

impl Default for WorkspaceSection {
    fn default() -> Self {
        Self {
            allow_delete: false,
            max_file_size: 1024 * 1024,
            allow_sensitive: false,
        }
    }
}

/// `confirmation:`
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConfirmationSection {
    /// `yolo`, `confirm-sensitive` (default), `confirm-all`, `accept-edits`
    /// or `dont-ask` ([`ConfirmationMode`]).
    pub mode: ConfirmationMode,
    /// Persistent allow/ask/deny rules, consulted by the gate before the
    /// mode (see [`ConfirmationRules`](toolgate_policy::ConfirmationRules)).
    /// Default: none.
    pub rules: Vec<ConfirmationRule>,
    /// Other tools' permission settings read as rules too: `claude` reads
    /// Claude Code's `.claude/settings.json`, `.claude/settings.local.json`
    /// (when trusted) and `~/.claude/settings.json` (see
    /// [`claude`](super::claude)). Default: none.
    pub import: Vec<super::claude::ImportSource>,
}
