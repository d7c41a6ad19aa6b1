//! The capture of what changed in a workspace: a record of every path's
//! state, kept up to date by walking the tree, with each file's content in
//! the [`BlobStore`].
//!
//! # Why a walk and kept contents, not an overlay
//!
//! A checkpoint needs the state of a path *before* it changed. For a file
//! tool the declared effects name the path in advance; for a command they
//! cannot. Two ways were weighed:
//!
//! - An overlay mount over the workspace in the process's mount namespace
//!   (the kernel allows it in a user namespace since 5.11, and does here):
//!   the upper layer says exactly what changed and the lower layer is the
//!   pre-image. But the writes only reach the workspace when the overlay is
//!   committed after the process ends: a background process (a dev server,
//!   a watcher) would write into a layer nobody else sees for as long as it
//!   runs, two processes at once would commit over each other, a change
//!   made to the workspace by a file tool while the overlay is mounted is
//!   undefined behaviour for overlayfs, and a crash between the end of the
//!   process and the commit loses the command's work.
//! - A walk before and after, comparing each entry's `stat` with the record
//!   and keeping the content of what is new or different. The pre-image of
//!   a change is then the content kept at the previous walk, which is
//!   complete because every file's content is kept (deduplicated by hash:
//!   an unchanged file costs one `stat` per walk, and its content is copied
//!   once per data directory, not once per step).
//!
//! The walk is chosen: processes write to the real workspace as they do
//! without capture, background processes and file tools are captured the
//! same way, and nothing is lost if toolgate dies. The benchmark
//! `checkpoints` measures a walk of 10,000 files.
//!
//! # What a walk costs
//!
//! - Each entry is one `fstatat` relative to its open directory (no path
//!   resolution from the root per entry).
//! - Entries to read (all files on a process's first walk) are hashed, and
//!   their content copied in when new, on up to eight threads: on a first
//!   walk the work is opening files and, in a new data directory, making
//!   one inode per content, which the kernel does for several threads at
//!   once. A content already kept is hashed, never copied again.
//! - The sandbox's scan before each process is not shared with this walk:
//!   it reads directories only (a directory whose stamps did not change is
//!   not listed again) and looks for names, where this walk must `stat`
//!   every file; sharing would save about one `stat` per directory and tie
//!   the sandbox to the store.
//!
//! # Rules
//!
//! 1. The tree is walked without following symlinks; excluded paths (the
//!    `.git` directory, sensitive and private paths, as the caller says) are
//!    not descended into and never reported.
//! 2. An entry whose (device, inode, size, modification time, change time,
//!    mode) are those recorded keeps its recorded state; any other is read
//!    again: a file is hashed, and its content kept when new. A change of
//!    the change time alone (a hard link made, `touch` of the same
//!    content) is thus checked by content and not reported when the content
//!    and mode are the same.
//! 3. A file larger than the limit is recorded with its size and mode but
//!    no hash: its change is reported, and it cannot be put back.
//! 4. A change is a path whose state differs between two walks; a program
//!    that changes a file and then puts its size, modification time *and*
//!    change time back cannot be seen, and no program can set the change
//!    time.
//! 5. A file system's clock ticks coarsely (a few milliseconds): a file
//!    written twice within one tick, at the same size, keeps its stamp. An
//!    entry changed less than a second before a walk is therefore read
//!    again at the next walk whatever its stamp (git's "racily clean"
//!    entries).
//! 6. A file with more than one name (hard links) is recorded with which
//!    file it is ([`LinkId`]), which is not part of its state: making or
//!    removing another name changes no path's state, and a rewind puts the
//!    names back as one file.

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use toolgate_core::{CaptureError, ChangeCapture, FileState, LinkId, PathChange};

use super::blobs::BlobStore;

/// Which workspace-relative paths the capture leaves out, given each path
/// and whether it is a directory (from the listing: no `stat` of its own).
/// An excluded directory is not descended into.
pub type Exclude = Arc<dyn Fn(&Path, bool) -> bool + Send + Sync>;

/// The default limit on a file whose content is kept: 16 MiB.
pub const DEFAULT_MAX_FILE: u64 = 16 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    mode: u32,
}

impl Stamp {
    fn of(meta: &fs::Metadata) -> Self {
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            mode: meta.mode(),
        }
    }
}

#[derive(Debug, Clone)]
struct Entry {
    stamp: Stamp,
    state: FileState,
    /// Changed so shortly before the walk that a change within the same
    /// tick of the file system's clock could leave the stamp as it is
    /// (rule 5): read again at the next walk whatever its stamp.
    racy: bool,
}

/// An entry a walk must read again, in the order the walk found it.
struct Pending {
    key: String,
    path: PathBuf,
    meta: fs::Metadata,
    stamp: Stamp,
    racy: bool,
    known: Option<Entry>,
}

/// The most threads a walk reads files on.
const MAX_THREADS: usize = 8;

/// How many entries a walk gathers before reading them: bounds what it
/// holds besides the record on a first walk of a large tree.
const BATCH: usize = 1024;

/// Below this many entries to read, a walk reads them on its own thread:
/// starting threads would cost more.
const PARALLEL_FROM: usize = 64;

/// A [`ChangeCapture`] over a directory tree, keeping contents in a
/// [`BlobStore`] (see the [rules](self)).
pub struct WorkspaceTracker {
    root: PathBuf,
    blobs: BlobStore,
    exclude: Exclude,
    max_file: u64,
    record: Mutex<Option<HashMap<String, Entry>>>,
}

impl fmt::Debug for WorkspaceTracker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkspaceTracker")
            .field("root", &self.root)
            .field("blobs", &self.blobs)
            .field("max_file", &self.max_file)
            .finish_non_exhaustive()
    }
}

impl WorkspaceTracker {
    /// A capture of the tree at `root`, keeping contents in `blobs`. By
    /// default only `.git` at the root is left out and files up to
    /// [`DEFAULT_MAX_FILE`] are kept.
    pub fn new(root: impl Into<PathBuf>, blobs: BlobStore) -> Self {
        Self {
            root: root.into(),
            blobs,
            exclude: Arc::new(|rel: &Path, _| rel == Path::new(".git")),
            max_file: DEFAULT_MAX_FILE,
            record: Mutex::new(None),
        }
    }

    /// Leaves out the paths `exclude` says yes to (given relative to the
    /// root), besides `.git`.
    #[must_use]
    pub fn exclude(mut self, exclude: Exclude) -> Self {
        self.exclude =
            Arc::new(move |rel: &Path, dir| rel == Path::new(".git") || exclude(rel, dir));
        self
    }

    /// Keeps the content of files up to `bytes` long (rule 3).
    #[must_use]
    pub fn max_file(mut self, bytes: u64) -> Self {
        self.max_file = bytes;
        self
    }

    /// The root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The blob store.
    pub fn blobs(&self) -> &BlobStore {
        &self.blobs
    }

    /// The hashes the current record names: contents a later change will
    /// need as its pre-image, to be kept by garbage collection.
    pub fn hashes(&self) -> Vec<String> {
        let record = self.record.lock().unwrap_or_else(PoisonError::into_inner);
        record
            .iter()
            .flat_map(HashMap::values)
            .filter_map(|e| match &e.state {
                FileState::File { hash, .. } => hash.clone(),
                _ => None,
            })
            .collect()
    }

    /// Walks the tree; entries whose stamp is unchanged are moved over
    /// from `old` (rule 2), the rest read again ([`states`](Self::states)).
    /// Returns the new record and what differs from `old`, sorted by path.
    fn walk(
        &self,
        mut old: HashMap<String, Entry>,
        first: bool,
    ) -> Result<(HashMap<String, Entry>, Vec<PathChange>), CaptureError> {
        let racy_after = racy_line();
        let mut out = HashMap::with_capacity(old.len());
        let mut changes = Vec::new();
        let mut pending = Vec::new();
        let mut stack = vec![PathBuf::new()];
        while let Some(rel) = stack.pop() {
            let dir = self.root.join(&rel);
            let entries = match fs::read_dir(&dir) {
                Ok(entries) => entries,
                // Removed between listing its parent and reading it.
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => {
                    return Err(CaptureError::new(
                        format!("cannot list {} to capture changes", dir.display()),
                        Some(e),
                    ));
                }
            };
            for entry in entries {
                let entry = entry.map_err(|e| {
                    CaptureError::new(format!("cannot list {}", dir.display()), Some(e))
                })?;
                let child = rel.join(entry.file_name());
                let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
                if (self.exclude)(&child, is_dir) {
                    continue;
                }
                // Relative to the open directory (`fstatat`), not to the
                // root: the kernel does not walk the path again per entry.
                // It does not follow a symlink.
                let meta = match entry.metadata() {
                    Ok(meta) => meta,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => {
                        return Err(CaptureError::new(
                            format!("cannot read {}", dir.join(entry.file_name()).display()),
                            Some(e),
                        ));
                    }
                };
                let key = slash(&child);
                let stamp = Stamp::of(&meta);
                if meta.is_dir() {
                    stack.push(child);
                }
                let racy = stamp.mtime >= racy_after || stamp.ctime >= racy_after;
                match old.remove(&key) {
                    Some(known) if known.stamp == stamp && !known.racy => {
                        out.insert(key, Entry { racy, ..known });
                    }
                    known => pending.push(Pending {
                        key,
                        path: entry.path(),
                        meta,
                        stamp,
                        racy,
                        known,
                    }),
                }
                if pending.len() >= BATCH {
                    self.settle(std::mem::take(&mut pending), first, &mut out, &mut changes)?;
                }
            }
        }
        self.settle(pending, first, &mut out, &mut changes)?;
        // What is left of the old record was not found.
        for (path, entry) in old {
            changes.push(PathChange {
                path,
                before: entry.state,
                after: FileState::Absent,
            });
        }
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        Ok((out, changes))
    }

    /// Reads the `pending` entries ([`states`](Self::states)) and puts
    /// them in the record `out`, with a change for each whose state differs
    /// from the one known (none on the `first` walk).
    fn settle(
        &self,
        pending: Vec<Pending>,
        first: bool,
        out: &mut HashMap<String, Entry>,
        changes: &mut Vec<PathChange>,
    ) -> Result<(), CaptureError> {
        let states = self.states(&pending)?;
        for (p, state) in pending.into_iter().zip(states) {
            let Some(state) = state else {
                if let Some(known) = p.known {
                    changes.push(PathChange {
                        path: p.key,
                        before: known.state,
                        after: FileState::Absent,
                    });
                }
                continue;
            };
            let before = p.known.map_or(FileState::Absent, |e| e.state);
            if before != state && !first {
                changes.push(PathChange {
                    path: p.key.clone(),
                    before,
                    after: state.clone(),
                });
            }
            out.insert(
                p.key,
                Entry {
                    stamp: p.stamp,
                    state,
                    racy: p.racy,
                },
            );
        }
        Ok(())
    }

    /// The states of the `pending` entries, in order. Reading a file means
    /// hashing it and, the first time its content is seen, copying it into
    /// the blob store: on a first walk that is every file, so many entries
    /// are read on several threads (the blob store's writes are safe from
    /// any number of threads: each goes through a file of its own and a
    /// rename).
    fn states(&self, pending: &[Pending]) -> Result<Vec<Option<FileState>>, CaptureError> {
        let one = |p: &Pending| self.state_of(&p.path, &p.meta);
        let threads = std::thread::available_parallelism()
            .map_or(1, std::num::NonZeroUsize::get)
            .min(MAX_THREADS);
        if threads <= 1 || pending.len() < PARALLEL_FROM {
            return pending.iter().map(one).collect();
        }
        let chunk = pending.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let parts: Vec<_> = pending
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || part.iter().map(one).collect::<Result<Vec<_>, _>>())
                })
                .collect();
            let mut out = Vec::with_capacity(pending.len());
            for part in parts {
                match part.join() {
                    Ok(states) => out.extend(states?),
                    Err(_) => {
                        return Err(CaptureError::new(
                            "a thread reading the workspace's files panicked",
                            None,
                        ));
                    }
                }
            }
            Ok(out)
        })
    }

    /// The state of the entry at `path`; `None` for what is neither file,
    /// directory nor symlink (sockets, fifos) or is gone meanwhile.
    fn state_of(
        &self,
        path: &Path,
        meta: &fs::Metadata,
    ) -> Result<Option<FileState>, CaptureError> {
        let mode = meta.mode() & 0o7777;
        let kind = meta.file_type();
        let state = if kind.is_symlink() {
            match fs::read_link(path) {
                Ok(target) => FileState::Symlink {
                    target: target.to_string_lossy().into_owned(),
                },
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
                Err(e) => {
                    return Err(CaptureError::new(
                        format!("cannot read the link {}", path.display()),
                        Some(e),
                    ));
                }
            }
        } else if kind.is_dir() {
            FileState::Dir { mode }
        } else if kind.is_file() {
            let hash = if meta.size() > self.max_file {
                None
            } else {
                match self.blobs.put_file(path) {
                    Ok(hash) => Some(hash),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
                    // Unreadable to us (mode 000): recorded, not kept.
                    Err(e) if e.kind() == io::ErrorKind::PermissionDenied => None,
                    Err(e) => {
                        return Err(CaptureError::new(
                            format!("cannot keep the content of {}", path.display()),
                            Some(e),
                        ));
                    }
                }
            };
            FileState::File {
                hash,
                mode,
                size: meta.size(),
                link: LinkId::of(meta),
            }
        } else {
            return Ok(None);
        };
        Ok(Some(state))
    }
}

/// A relative path with `/` separators.
fn slash(rel: &Path) -> String {
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

impl ChangeCapture for WorkspaceTracker {
    fn sync(&self) -> Result<Vec<PathChange>, CaptureError> {
        let mut record = self.record.lock().unwrap_or_else(PoisonError::into_inner);
        // On an error the record is dropped: the next look starts afresh,
        // and the caller reports that the changes are unknown.
        let first = record.is_none();
        let (new, changes) = self.walk(record.take().unwrap_or_default(), first)?;
        *record = Some(new);
        Ok(changes)
    }
}

/// The time from which a stamp is racy (rule 5): a second before now, far
/// more than the coarsest clock tick of a file system's time stamps.
fn racy_line() -> (i64, i64) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .saturating_sub(std::time::Duration::from_secs(1));
    (
        i64::try_from(now.as_secs()).unwrap_or(i64::MAX),
        i64::from(now.subsec_nanos()),
    )
}
