//! What a call changed in the workspace, as seen on disk: the state of each
//! path before and after ([`PathChange`]), and the capture that finds them
//! ([`ChangeCapture`]).
//!
//! Declared [`Effects`](crate::Effects) say what a call *would* do; a
//! capture says what *did* change, whoever changed it (a file tool, a
//! command, a background process, an MCP server writing in the workspace).
//! The gate captures around each call that may write; checkpoints and
//! `toolgate rewind` keep the states, and the content each `hash` names, so
//! that a path can be put back as it was.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What one path was, at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FileState {
    /// Nothing there.
    Absent,
    /// A regular file.
    File {
        /// The SHA-256 of its content, hex; `None` when the content was not
        /// kept (larger than the capture keeps).
        hash: Option<String>,
        /// Its permission bits (`0o755`).
        mode: u32,
        /// Its size in bytes.
        size: u64,
        /// The file it is, when it had other names too (hard links), so
        /// that putting the names back makes them one file again. Not part
        /// of the state: see [`LinkId`].
        #[serde(default, skip_serializing_if = "LinkId::is_single")]
        link: LinkId,
    },
    /// A symbolic link.
    Symlink {
        /// Where it points, as written.
        target: String,
    },
    /// A directory.
    Dir {
        /// Its permission bits.
        mode: u32,
    },
}

impl FileState {
    /// Whether nothing is there.
    pub fn is_absent(&self) -> bool {
        matches!(self, Self::Absent)
    }

    /// Whether this is a directory.
    pub fn is_dir(&self) -> bool {
        matches!(self, Self::Dir { .. })
    }

    /// Whether the state can be put back: everything but a file whose
    /// content was not kept.
    pub fn is_restorable(&self) -> bool {
        !matches!(self, Self::File { hash: None, .. })
    }
}

/// Which file (inode) a path named when it had several names (hard links):
/// the device, the inode number and the count of names then; for a file
/// with one name, the default (all zero), which records leave out.
///
/// It is not part of a [`FileState`]: any two compare equal and hash alike.
/// A file's state is its content, type and mode; which inode holds it changes
/// with every rewrite through a rename (`sed -i`, an editor's save) and with
/// every link made to it elsewhere, none of which changes what the path
/// reads as. It serves one purpose: paths recorded with the same
/// (`dev`, `ino`) were one file, and a rewind that puts them back makes them
/// one file again.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct LinkId {
    /// The device (`st_dev`).
    pub dev: u64,
    /// The inode number (`st_ino`).
    pub ino: u64,
    /// How many names the file had (`st_nlink`); 0 when not recorded.
    pub nlink: u64,
}

impl LinkId {
    /// The link identity of a file with `meta`: the default for a file with
    /// one name (nothing to put back together).
    #[cfg(unix)]
    pub fn of(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt as _;
        if meta.nlink() > 1 {
            Self {
                dev: meta.dev(),
                ino: meta.ino(),
                nlink: meta.nlink(),
            }
        } else {
            Self::default()
        }
    }

    /// Whether the file had one name only (or this was not recorded).
    pub fn is_single(&self) -> bool {
        self.nlink <= 1
    }

    /// The (`dev`, `ino`) pair that says which file.
    pub fn key(&self) -> (u64, u64) {
        (self.dev, self.ino)
    }
}

impl PartialEq for LinkId {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for LinkId {}

impl std::hash::Hash for LinkId {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

/// How a path changed, in one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// It did not exist and now does.
    Created,
    /// It existed and still does, with other content, type or mode.
    Modified,
    /// It existed and is gone.
    Deleted,
}

impl ChangeKind {
    /// `created`, `modified` or `deleted`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Modified => "modified",
            Self::Deleted => "deleted",
        }
    }
}

impl fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One path that changed: its workspace-relative name (with `/`), what it
/// was and what it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathChange {
    /// The workspace-relative path, `/`-separated.
    pub path: String,
    /// Its state before.
    pub before: FileState,
    /// Its state after.
    pub after: FileState,
}

impl PathChange {
    /// Created, modified or deleted.
    pub fn kind(&self) -> ChangeKind {
        match (&self.before, &self.after) {
            (FileState::Absent, _) => ChangeKind::Created,
            (_, FileState::Absent) => ChangeKind::Deleted,
            _ => ChangeKind::Modified,
        }
    }
}

/// The changes as one line for a model or a person:
/// `files changed: created a, b; modified c; deleted d`, or `None` when
/// nothing changed. Directories end with `/`.
pub fn describe_changes(changes: &[PathChange]) -> Option<String> {
    if changes.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    for kind in [
        ChangeKind::Created,
        ChangeKind::Modified,
        ChangeKind::Deleted,
    ] {
        let names: Vec<String> = changes
            .iter()
            .filter(|c| c.kind() == kind)
            .map(|c| {
                if c.before.is_dir() || c.after.is_dir() {
                    format!("{}/", c.path)
                } else {
                    c.path.clone()
                }
            })
            .collect();
        if !names.is_empty() {
            parts.push(format!("{kind} {}", names.join(", ")));
        }
    }
    Some(format!("files changed: {}", parts.join("; ")))
}

/// A capture failed: the workspace could not be walked or a file's content
/// could not be kept.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct CaptureError {
    message: String,
    #[source]
    source: Option<std::io::Error>,
}

impl CaptureError {
    /// An error saying `message`, caused by `source`.
    pub fn new(message: impl Into<String>, source: Option<std::io::Error>) -> Self {
        Self {
            message: message.into(),
            source,
        }
    }
}

/// Keeps a record of the workspace and says what changed since the last
/// look.
///
/// The gate calls [`sync`](Self::sync) right before a call that may write
/// (what it returns then changed outside the gate's calls: a background
/// process, a person) and right after it (what the call changed). An
/// implementation keeps the content of every file it records, so that the
/// `before` state of a change can be put back even though the change was
/// not known in advance.
pub trait ChangeCapture: Send + Sync + fmt::Debug {
    /// Brings the record up to date and returns what changed since the
    /// last call, sorted by path. The first call only records.
    fn sync(&self) -> Result<Vec<PathChange>, CaptureError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(hash: &str) -> FileState {
        FileState::File {
            hash: Some(hash.to_owned()),
            mode: 0o644,
            size: 1,
            link: LinkId::default(),
        }
    }

    #[test]
    fn changes_are_described_by_kind() {
        let changes = [
            PathChange {
                path: "a".into(),
                before: FileState::Absent,
                after: file("1"),
            },
            PathChange {
                path: "b".into(),
                before: file("1"),
                after: file("2"),
            },
            PathChange {
                path: "d".into(),
                before: FileState::Dir { mode: 0o755 },
                after: FileState::Absent,
            },
        ];
        assert_eq!(
            describe_changes(&changes).as_deref(),
            Some("files changed: created a; modified b; deleted d/")
        );
        assert_eq!(describe_changes(&[]), None);
    }
}
