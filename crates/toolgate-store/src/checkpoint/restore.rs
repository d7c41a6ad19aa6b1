//! Putting paths back as a checkpoint recorded them.
//!
//! # Rules
//!
//! 1. Each path goes back to its state before the *first* change being
//!    undone, and is expected to be in its state after the *last* one. A
//!    path found otherwise was changed since by someone else: it is a
//!    conflict, listed and left alone unless forced.
//! 2. Paths are checked to be relative, without `..`, and beneath no
//!    symlink inside the root (a link put there meanwhile is not
//!    followed out of the workspace).
//! 3. Removals go first, deepest first; then files, links and directories
//!    are put back shallowest first, a file through a temporary file and a
//!    rename in its directory; directory modes are set last, so a
//!    read-only directory does not stop its own contents coming back.
//! 4. A file whose content was not kept (too large) cannot be put back;
//!    it is listed, and left as it is.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use toolgate_core::{FileState, PathChange};

use super::blobs::BlobStore;

/// A path to put back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Restore {
    /// The workspace-relative path.
    pub path: String,
    /// The state it goes back to.
    pub to: FileState,
    /// The state it should be in now (after the last change undone).
    pub expect: FileState,
}

/// A path changed since by someone else (rule 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conflict {
    /// The workspace-relative path.
    pub path: String,
    /// The state the record says it should be in.
    pub expected: FileState,
    /// The state it is in.
    pub found: FileState,
}

/// What undoing a list of changes would do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestorePlan {
    /// Paths to put back, in path order.
    pub restores: Vec<Restore>,
    /// Paths changed since (rule 1); put back only when forced.
    pub conflicts: Vec<Conflict>,
    /// Paths whose earlier content was not kept (rule 4).
    pub lost: Vec<String>,
}

/// The plan that undoes `changes` (given oldest first) in the tree at
/// `root`.
pub fn plan(root: &Path, changes: &[PathChange]) -> io::Result<RestorePlan> {
    let mut paths: BTreeMap<&str, (FileState, FileState)> = BTreeMap::new();
    for c in changes {
        paths
            .entry(&c.path)
            .and_modify(|(_, expect)| *expect = c.after.clone())
            .or_insert_with(|| (c.before.clone(), c.after.clone()));
    }
    let mut out = RestorePlan::default();
    for (path, (to, expect)) in paths {
        let found = state_now(root, path)?;
        if same(&to, &found) {
            continue;
        }
        if !to.is_restorable() {
            out.lost.push(path.to_owned());
            continue;
        }
        if !same(&expect, &found) {
            out.conflicts.push(Conflict {
                path: path.to_owned(),
                expected: expect,
                found,
            });
            continue;
        }
        out.restores.push(Restore {
            path: path.to_owned(),
            to,
            expect,
        });
    }
    Ok(out)
}

/// Whether `found` is the state `recorded` says: a file whose content was
/// not kept is compared by size and mode.
pub fn same(recorded: &FileState, found: &FileState) -> bool {
    match (recorded, found) {
        (
            FileState::File {
                hash: None,
                mode,
                size,
            },
            FileState::File {
                mode: m, size: s, ..
            },
        ) => mode == m && size == s,
        _ => recorded == found,
    }
}

/// Applies `restores` (rule 3) and returns the changes made.
pub fn apply(root: &Path, blobs: &BlobStore, restores: &[Restore]) -> io::Result<Vec<PathChange>> {
    let mut made = Vec::new();
    let mut removals: Vec<&Restore> = restores.iter().filter(|r| r.to.is_absent()).collect();
    removals.sort_by(|a, b| b.path.cmp(&a.path));
    for r in removals {
        let found = state_now(root, &r.path)?;
        remove(&checked(root, &r.path)?)?;
        made.push(PathChange {
            path: r.path.clone(),
            before: found,
            after: FileState::Absent,
        });
    }
    let mut puts: Vec<&Restore> = restores.iter().filter(|r| !r.to.is_absent()).collect();
    puts.sort_by(|a, b| a.path.cmp(&b.path));
    let mut dir_modes = Vec::new();
    for r in puts {
        let found = state_now(root, &r.path)?;
        let path = checked(root, &r.path)?;
        put(&path, &r.to, blobs)?;
        if let FileState::Dir { mode } = r.to {
            dir_modes.push((path, mode));
        }
        made.push(PathChange {
            path: r.path.clone(),
            before: found,
            after: r.to.clone(),
        });
    }
    for (path, mode) in dir_modes.into_iter().rev() {
        fs::set_permissions(&path, fs::Permissions::from_mode(mode))?;
    }
    made.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(made)
}

/// The state of `rel` beneath `root` now (contents hashed, not kept).
pub fn state_now(root: &Path, rel: &str) -> io::Result<FileState> {
    let path = checked(root, rel)?;
    let meta = match fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        // Nothing there, or a file where a parent directory was.
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(FileState::Absent);
        }
        Err(e) => return Err(e),
    };
    let mode = meta.permissions().mode() & 0o7777;
    let kind = meta.file_type();
    Ok(if kind.is_symlink() {
        FileState::Symlink {
            target: fs::read_link(&path)?.to_string_lossy().into_owned(),
        }
    } else if kind.is_dir() {
        FileState::Dir { mode }
    } else {
        FileState::File {
            hash: Some(BlobStore::hash_file(&path)?),
            mode,
            size: meta.len(),
        }
    })
}

/// `root/rel`, after the checks of rule 2.
fn checked(root: &Path, rel: &str) -> io::Result<PathBuf> {
    let bad = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{rel}` is not a path inside the workspace; the record is damaged"),
        )
    };
    let rel_path = Path::new(rel);
    if rel.is_empty()
        || !rel_path
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
    {
        return Err(bad());
    }
    let mut at = root.to_path_buf();
    let mut parts = rel_path.components().peekable();
    while let Some(part) = parts.next() {
        at.push(part);
        if parts.peek().is_some()
            && fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink())
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is now a symbolic link; `{rel}` beneath it is not put back",
                    at.display()
                ),
            ));
        }
    }
    Ok(at)
}

fn remove(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(())
        }
        Err(e) => Err(e),
    }
}

fn put(path: &Path, state: &FileState, blobs: &BlobStore) -> io::Result<()> {
    let parent = path.parent().unwrap_or(path);
    let existing = fs::symlink_metadata(path).ok();
    match state {
        FileState::Absent => remove(path),
        FileState::Dir { .. } => {
            if existing.as_ref().is_some_and(|m| !m.is_dir()) {
                fs::remove_file(path)?;
            }
            fs::create_dir_all(path)
        }
        FileState::Symlink { target } => {
            fs::create_dir_all(parent)?;
            remove(path)?;
            std::os::unix::fs::symlink(target, path)
        }
        FileState::File { hash, mode, .. } => {
            let hash = hash.as_deref().ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotFound, "the content was not kept")
            })?;
            fs::create_dir_all(parent)?;
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let tmp = parent.join(format!(".{name}.toolgate-rewind-{}", std::process::id()));
            {
                let mut from = blobs.open(hash)?;
                let mut to = fs::File::create(&tmp)?;
                io::copy(&mut from, &mut to)?;
                to.sync_data()?;
            }
            fs::set_permissions(&tmp, fs::Permissions::from_mode(*mode))?;
            if existing.as_ref().is_some_and(fs::Metadata::is_dir) {
                fs::remove_dir_all(path)?;
            }
            fs::rename(&tmp, path)
        }
    }
}
