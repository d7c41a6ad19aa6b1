//! Placeholders: empty stand-ins for policy paths that do not exist yet.
//!
//! A read-only bind mount needs something to mount on. When `toolgate.yaml`,
//! `.toolgate/`, `.git` (or `.git/config`, `.git/hooks`, `.git/commondir`,
//! `.git/config.worktree`) does not exist, a
//! sandboxed process could otherwise *create* it — a `toolgate.yaml` with a
//! hook, a fresh `.git` whose `core.fsmonitor` runs on the user's next
//! `git status`. So before such a process starts, toolgate creates an empty
//! file or directory there, the sandbox mounts it read-only (a mount point
//! can be neither written, replaced, nor removed), and once the last process
//! using it has ended, toolgate removes it again if it is still the empty
//! thing it created. Codex's Linux sandbox does the same
//! (`bwrap_mount_cleanup.rs`).
//!
//! # Why the bookkeeping
//!
//! Since Linux 3.18, unlinking a path that is a mount point in *another*
//! mount namespace detaches that mount there (`unlink(2)`,
//! "lazy unmount on unlink"). Removing a placeholder while any sandbox still
//! has it mounted would silently lift that sandbox's protection. So uses are
//! counted in this process, and recorded across processes as marker files
//! (`<temp>/toolgate-placeholders-<uid>/<hash>/<pid>`) that a sandbox cannot
//! reach (its `/tmp` is private): the last user, in any toolgate process,
//! removes the placeholder.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Write as _};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// What a placeholder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A file with these contents (empty, or what makes it harmless:
    /// `.git/commondir` holding `.` names the repository itself).
    File(&'static [u8]),
    /// An empty directory.
    Dir,
}

#[derive(Debug, Default)]
struct Uses {
    count: usize,
}

/// The placeholders of one toolgate process.
#[derive(Debug)]
pub(crate) struct Placeholders {
    uses: Mutex<HashMap<PathBuf, Uses>>,
    markers: PathBuf,
}

/// What one running process holds: its placeholders and the cgroup that
/// limits its tree; released on drop (the cgroup is removed, once the
/// processes left in it are killed).
#[derive(Debug)]
pub struct Lease {
    owner: Option<Arc<Placeholders>>,
    paths: Vec<PathBuf>,
    tree: Option<crate::linux::cgroup::Tree>,
}

impl Lease {
    /// A lease that holds nothing (for a process started without the
    /// sandbox, such as a connection over HTTP).
    pub fn empty() -> Self {
        Self {
            owner: None,
            paths: Vec::new(),
            tree: None,
        }
    }

    /// This lease, holding the cgroup of the process's tree too.
    pub(crate) fn with_tree(mut self, tree: Option<crate::linux::cgroup::Tree>) -> Self {
        self.tree = tree;
        self
    }

    /// The cgroup of the process's tree, where one limits it.
    pub(crate) fn tree(&self) -> Option<&crate::linux::cgroup::Tree> {
        self.tree.as_ref()
    }

    /// The same, to remove it.
    pub(crate) fn tree_mut(&mut self) -> Option<&mut crate::linux::cgroup::Tree> {
        self.tree.as_mut()
    }

    /// Whether a limit refused or killed something in the process's tree,
    /// by the counters of its cgroup (certain), with the limit in force:
    /// for processes whose result is read from the lease holder, such as
    /// a background session.
    pub fn limits_hit(&self, limits: &crate::Limits) -> Vec<crate::LimitHit> {
        let Some(tree) = &self.tree else {
            return Vec::new();
        };
        let counters = tree.counters();
        crate::limits::hits(
            limits,
            &crate::limits::Ending {
                cgroup_pids: counters.pids,
                cgroup_memory: counters.memory,
                ..crate::limits::Ending::default()
            },
        )
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(owner) = &self.owner {
            for path in &self.paths {
                owner.release(path);
            }
        }
    }
}

fn marker_dir_name(path: &Path) -> String {
    // FNV-1a: stable across runs and processes, no dependency.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in path.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// Whether a process of that ID exists (signalling it may be refused).
pub(crate) fn pid_alive(pid: i32) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(e) => e == rustix::io::Errno::PERM,
    }
}

fn is_untouched_placeholder(path: &Path, ino: u64, contents: &[u8]) -> bool {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return false;
    };
    if meta.ino() != ino {
        return false;
    }
    if meta.is_file() {
        fs::read(path).is_ok_and(|bytes| bytes == contents)
    } else if meta.is_dir() {
        fs::read_dir(path).is_ok_and(|mut d| d.next().is_none())
    } else {
        false
    }
}

impl Placeholders {
    pub(crate) fn new() -> Self {
        let uid = rustix::process::getuid().as_raw();
        Self {
            uses: Mutex::new(HashMap::new()),
            markers: std::env::temp_dir().join(format!("toolgate-placeholders-{uid}")),
        }
    }

    /// Makes sure each `(path, kind)` exists, creating an empty placeholder
    /// where it does not, and holds them until the lease is dropped.
    pub(crate) fn acquire(self: &Arc<Self>, wanted: &[(PathBuf, Kind)]) -> io::Result<Lease> {
        let mut lease = Lease {
            owner: Some(Arc::clone(self)),
            paths: Vec::new(),
            tree: None,
        };
        for (path, kind) in wanted {
            self.acquire_one(path, *kind)?;
            lease.paths.push(path.clone());
        }
        Ok(lease)
    }

    fn acquire_one(&self, path: &Path, kind: Kind) -> io::Result<()> {
        let mut uses = self.uses.lock().unwrap_or_else(PoisonError::into_inner);
        let dir = self.markers.join(marker_dir_name(path));
        fs::create_dir_all(&dir)?;
        let created = match kind {
            Kind::File(contents) => fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .and_then(|mut f| f.write_all(contents)),
            Kind::Dir => fs::create_dir(path),
        };
        match created {
            Ok(()) => {
                let ino = fs::symlink_metadata(path)?.ino();
                let mut record = fs::File::create(dir.join("created"))?;
                writeln!(record, "{ino}")?;
                let contents = match kind {
                    Kind::File(contents) => contents,
                    Kind::Dir => &[],
                };
                record.write_all(contents)?;
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        let entry = uses.entry(path.to_owned()).or_default();
        if entry.count == 0 {
            fs::write(dir.join(std::process::id().to_string()), b"")?;
        }
        entry.count += 1;
        Ok(())
    }

    fn release(&self, path: &Path) {
        let mut uses = self.uses.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(entry) = uses.get_mut(path) else {
            return;
        };
        entry.count = entry.count.saturating_sub(1);
        if entry.count > 0 {
            return;
        }
        uses.remove(path);
        let dir = self.markers.join(marker_dir_name(path));
        let _ = fs::remove_file(dir.join(std::process::id().to_string()));
        let others = fs::read_dir(&dir).into_iter().flatten().flatten().any(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
                .is_some_and(|pid| {
                    let alive = pid_alive(pid);
                    if !alive {
                        let _ = fs::remove_file(e.path());
                    }
                    alive
                })
        });
        if others {
            return;
        }
        let record = fs::read(dir.join("created")).unwrap_or_default();
        let (first, contents) = match record.iter().position(|b| *b == b'\n') {
            Some(at) => (&record[..at], &record[at + 1..]),
            None => (&record[..], &[][..]),
        };
        let ino = std::str::from_utf8(first)
            .ok()
            .and_then(|l| l.parse::<u64>().ok());
        if let Some(ino) = ino
            && is_untouched_placeholder(path, ino, contents)
        {
            let removed = if path.is_dir() {
                fs::remove_dir(path)
            } else {
                fs::remove_file(path)
            };
            if let Err(error) = removed {
                tracing::debug!(path = %path.display(), %error, "placeholder not removed");
            }
        }
        let _ = fs::remove_file(dir.join("created"));
        let _ = fs::remove_dir(&dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_placeholders_go_when_the_last_lease_does() {
        let dir = tempfile::tempdir().unwrap();
        let places = Arc::new(Placeholders::new());
        let file = dir.path().join("toolgate.yaml");
        let sub = dir.path().join(".toolgate");
        let wanted = [(file.clone(), Kind::File(b"")), (sub.clone(), Kind::Dir)];
        let first = places.acquire(&wanted).unwrap();
        let second = places.acquire(&wanted[..1]).unwrap();
        assert!(file.is_file() && sub.is_dir());
        drop(first);
        assert!(file.is_file(), "still used by the second lease");
        assert!(!sub.exists(), "the directory had one user");
        drop(second);
        assert!(!file.exists());
    }

    #[test]
    fn existing_or_filled_paths_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let places = Arc::new(Placeholders::new());
        let real = dir.path().join("toolgate.yaml");
        std::fs::write(&real, "").unwrap();
        let filled = dir.path().join(".toolgate");
        let lease = places
            .acquire(&[(real.clone(), Kind::File(b"")), (filled.clone(), Kind::Dir)])
            .unwrap();
        std::fs::write(filled.join("audit.jsonl"), "{}").unwrap();
        drop(lease);
        assert!(real.exists(), "an empty file that was there before stays");
        assert!(
            filled.join("audit.jsonl").exists(),
            "a filled directory stays"
        );
    }

    #[test]
    fn another_live_user_keeps_it() {
        let dir = tempfile::tempdir().unwrap();
        let places = Arc::new(Placeholders::new());
        let file = dir.path().join("toolgate.yaml");
        let lease = places.acquire(&[(file.clone(), Kind::File(b""))]).unwrap();
        // Another toolgate process (pid 1 is alive) uses it too.
        let other = places.markers.join(marker_dir_name(&file)).join("1");
        std::fs::write(&other, "").unwrap();
        drop(lease);
        assert!(file.exists());
        std::fs::remove_file(other).unwrap();
        let lease = places.acquire(&[(file.clone(), Kind::File(b""))]).unwrap();
        drop(lease);
        assert!(!file.exists(), "removed once no one else uses it");
    }
}
