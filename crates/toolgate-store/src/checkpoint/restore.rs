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
//! 5. Files recorded as one file under several names ([`LinkId`]) are put
//!    back as one file again: the first name is put back from its content,
//!    or linked to a file of the workspace that is still that file with
//!    that content and mode (a name the undone changes did not touch);
//!    the other names are hard links to it. A name outside the workspace
//!    is not looked for: those paths get a file of their own.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use toolgate_core::{FileState, LinkId, PathChange};

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
                ..
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
    // Every path's state before anything is changed: putting one name of a
    // file back changes the count of names the others show.
    let mut before = HashMap::new();
    for r in restores {
        before.insert(r.path.as_str(), state_now(root, &r.path)?);
    }
    let mut found_of = |path: &str| before.remove(path).unwrap_or(FileState::Absent);
    let mut removals: Vec<&Restore> = restores.iter().filter(|r| r.to.is_absent()).collect();
    removals.sort_by(|a, b| b.path.cmp(&a.path));
    for r in removals {
        let found = found_of(&r.path);
        remove(&checked(root, &r.path)?)?;
        made.push(PathChange {
            path: r.path.clone(),
            before: found,
            after: FileState::Absent,
        });
    }
    let mut puts: Vec<&Restore> = restores.iter().filter(|r| !r.to.is_absent()).collect();
    puts.sort_by(|a, b| a.path.cmp(&b.path));
    let mut links = Links::new(root, &puts);
    let mut dir_modes = Vec::new();
    for r in puts {
        let found = found_of(&r.path);
        let path = checked(root, &r.path)?;
        match links.source(r)? {
            Some(from) => link_over(&from, &path)?,
            None => put(&path, &r.to, blobs)?,
        }
        links.put(r, &path);
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

/// The files being put back under several names (rule 5).
struct Links<'a> {
    root: &'a Path,
    /// How many of the names being put back each file (by `LinkId::key`) had.
    named: HashMap<(u64, u64), usize>,
    /// Where each file was put back first.
    done: HashMap<(u64, u64), PathBuf>,
    /// The workspace's files by (device, inode), for the files some of
    /// whose names are not being put back; looked up once, when needed.
    present: Option<HashMap<(u64, u64), PathBuf>>,
}

impl<'a> Links<'a> {
    fn new(root: &'a Path, puts: &[&Restore]) -> Self {
        let mut named = HashMap::new();
        for r in puts {
            if let Some(link) = link_of(&r.to) {
                *named.entry(link.key()).or_insert(0) += 1;
            }
        }
        Self {
            root,
            named,
            done: HashMap::new(),
            present: None,
        }
    }

    /// The file `r` should be a hard link to, if any.
    fn source(&mut self, r: &Restore) -> io::Result<Option<PathBuf>> {
        let Some(link) = link_of(&r.to) else {
            return Ok(None);
        };
        if let Some(first) = self.done.get(&link.key()) {
            return Ok(Some(first.clone()));
        }
        let named = self.named.get(&link.key()).copied().unwrap_or(0);
        if u64::try_from(named).unwrap_or(u64::MAX) >= link.nlink {
            return Ok(None);
        }
        // A name not being put back may still be that file.
        if self.present.is_none() {
            let wanted: HashSet<(u64, u64)> = self.named.keys().copied().collect();
            self.present = Some(files_by_inode(self.root, &wanted)?);
        }
        let Some(candidate) = self.present.as_ref().and_then(|p| p.get(&link.key())) else {
            return Ok(None);
        };
        let FileState::File { hash, mode, .. } = &r.to else {
            return Ok(None);
        };
        let meta = fs::symlink_metadata(candidate)?;
        let still = meta.is_file()
            && (meta.dev(), meta.ino()) == link.key()
            && meta.permissions().mode() & 0o7777 == *mode
            && hash.is_some()
            && BlobStore::hash_file(candidate).ok() == *hash;
        Ok(still.then(|| candidate.clone()))
    }

    /// Notes that `r` was put back at `path`.
    fn put(&mut self, r: &Restore, path: &Path) {
        if let Some(link) = link_of(&r.to) {
            self.done
                .entry(link.key())
                .or_insert_with(|| path.to_path_buf());
        }
    }
}

fn link_of(state: &FileState) -> Option<LinkId> {
    match state {
        FileState::File { link, .. } if !link.is_single() => Some(*link),
        _ => None,
    }
}

/// The regular files beneath `root` (not in `.git`, not through symlinks)
/// that are one of the `wanted` (device, inode) pairs.
fn files_by_inode(
    root: &Path,
    wanted: &HashSet<(u64, u64)>,
) -> io::Result<HashMap<(u64, u64), PathBuf>> {
    let mut out = HashMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = entry?;
            let kind = entry.file_type()?;
            let path = entry.path();
            if kind.is_dir() {
                if !(dir == root && entry.file_name() == ".git") {
                    stack.push(path);
                }
            } else if kind.is_file() {
                let meta = entry.metadata()?;
                let key = (meta.dev(), meta.ino());
                if wanted.contains(&key) {
                    out.entry(key).or_insert(path);
                }
            }
        }
    }
    Ok(out)
}

/// Makes `path` a hard link to `from`, through a temporary name and a
/// rename, so that `path` is never missing.
fn link_over(from: &Path, path: &Path) -> io::Result<()> {
    let parent = path.parent().unwrap_or(path);
    fs::create_dir_all(parent)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = parent.join(format!(".{name}.toolgate-link-{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    fs::hard_link(from, &tmp)?;
    if fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        fs::remove_dir_all(path)?;
    }
    fs::rename(&tmp, path)
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
            link: LinkId::of(&meta),
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
