//! Finding the workspace's sensitive and protected paths, before each
//! process starts.
//!
//! # Rules
//!
//! 1. The whole workspace is walked, hidden and ignored files included (a
//!    `.env` is usually git-ignored), without following symlinks.
//! 2. A path whose workspace-relative name matches a sensitive pattern is
//!    recorded (file or directory) and not descended into: the mask covers
//!    everything beneath. So is a directory all of whose entries would match
//!    (`.ssh` for `.ssh/**`).
//! 3. A *symlink* whose name matches is not masked itself (a mount cannot be
//!    placed on a symlink without following it); its target is, when the
//!    target exists: as a workspace path when it stays inside, as an
//!    absolute path when it leads outside.
//! 4. A path matching a protected pattern is recorded (made read-only
//!    whole) and not descended into; a protected symlink has its target
//!    recorded when that stays inside the workspace.
//! 5. Each directory's listing is kept; the next scan reads again only the
//!    directories whose inode, modification or change time differ.
//! 6. The walk is bounded ([`MAX_ENTRIES`]); a workspace larger than that
//!    fails the scan, so the process is refused rather than started with
//!    secrets left visible.
//!
//! The scan sees the workspace as it is when the process starts: a sensitive
//! file created afterwards, by someone else, is not masked for a process that
//! is already running.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use toolgate_core::PathPatterns;

/// The most entries a scan visits.
pub const MAX_ENTRIES: usize = 2_000_000;

/// What a scan found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// Workspace-relative paths to mask: (path, is a directory).
    pub(crate) sensitive: Vec<(PathBuf, bool)>,
    /// Absolute paths outside the workspace to mask (symlink targets).
    pub(crate) sensitive_outside: Vec<(PathBuf, bool)>,
    /// Workspace-relative paths to make read-only.
    pub(crate) protected: Vec<PathBuf>,
}

/// When a directory was read: its inode, and the modification and change
/// times. Creating, removing or renaming an entry changes the directory's
/// modification time; putting an old time back (`touch -d`) changes its
/// change time, which no program can set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    ino: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(meta: &fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt as _;
        Self {
            ino: meta.ino(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

/// What one directory holds that matters to the sandbox.
#[derive(Debug, Clone)]
struct Listing {
    stamp: Stamp,
    entries: usize,
    found: Found,
    subdirs: Vec<PathBuf>,
}

/// Scans a workspace, remembering each directory's listing so that the
/// next scan only reads the directories that changed (one `stat` per
/// directory instead of one `readdir`): cheap enough to run before every
/// process, also in large trees.
#[derive(Debug, Default)]
pub(crate) struct Scanner {
    cache: Mutex<HashMap<PathBuf, Listing>>,
}

impl Scanner {
    /// Walks `root` (canonical) and classifies what it finds (see the
    /// [rules](self)).
    pub(crate) fn scan(
        &self,
        root: &Path,
        sensitive: &PathPatterns,
        protected: &PathPatterns,
    ) -> io::Result<Found> {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        let mut next: HashMap<PathBuf, Listing> = HashMap::with_capacity(cache.len());
        let mut found = Found::default();
        let mut stack: Vec<PathBuf> = vec![PathBuf::new()];
        let mut visited = 0usize;
        while let Some(rel) = stack.pop() {
            let dir = root.join(&rel);
            // The time stamp first, then the entries: a change in between is
            // either in the listing or makes the next scan read it again.
            let meta = match fs::symlink_metadata(&dir) {
                Ok(meta) if meta.is_dir() => meta,
                // Gone, replaced by a file, or not ours to read: a command
                // cannot read it either.
                Ok(_) => continue,
                Err(e) if skippable(&e) => continue,
                Err(e) => return Err(e),
            };
            let stamp = Stamp::of(&meta);
            let listing = match cache.remove(&rel) {
                Some(listing) if listing.stamp == stamp => listing,
                _ => match read_listing(root, &rel, stamp, sensitive, protected) {
                    Ok(listing) => listing,
                    Err(e) if skippable(&e) => continue,
                    Err(e) => return Err(e),
                },
            };
            visited += listing.entries;
            if visited > MAX_ENTRIES {
                return Err(io::Error::other(format!(
                    "the workspace has more than {MAX_ENTRIES} entries"
                )));
            }
            found.sensitive.extend_from_slice(&listing.found.sensitive);
            found
                .sensitive_outside
                .extend_from_slice(&listing.found.sensitive_outside);
            found.protected.extend_from_slice(&listing.found.protected);
            stack.extend(listing.subdirs.iter().cloned());
            next.insert(rel, listing);
        }
        *cache = next;
        found.sensitive.sort();
        found.sensitive.dedup();
        found.sensitive_outside.sort();
        found.sensitive_outside.dedup();
        found.protected.sort();
        found.protected.dedup();
        Ok(found)
    }
}

fn skippable(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::PermissionDenied | io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// Reads one directory and classifies its entries.
fn read_listing(
    root: &Path,
    rel: &Path,
    stamp: Stamp,
    sensitive: &PathPatterns,
    protected: &PathPatterns,
) -> io::Result<Listing> {
    let mut listing = Listing {
        stamp,
        entries: 0,
        found: Found::default(),
        subdirs: Vec::new(),
    };
    let found = &mut listing.found;
    for entry in fs::read_dir(root.join(rel))? {
        let Ok(entry) = entry else { continue };
        listing.entries += 1;
        let child = rel.join(entry.file_name());
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        // A directory whose every entry would match (`.ssh/**`) is masked
        // whole, so files created in it later are covered too.
        let whole_dir = kind.is_dir() && sensitive.matches(&child.join("\u{1}")).is_some();
        if whole_dir || sensitive.matches(&child).is_some() {
            if kind.is_symlink() {
                if let Some(target) = resolve(root, &child) {
                    found_target(root, target, found);
                }
            } else {
                found.sensitive.push((child, kind.is_dir()));
            }
            continue;
        }
        if protected.matches(&child).is_some() {
            if kind.is_symlink() {
                if let Some((target, _)) = resolve(root, &child)
                    && let Ok(inside) = target.strip_prefix(root)
                    && !inside.as_os_str().is_empty()
                {
                    found.protected.push(inside.to_owned());
                }
            } else {
                found.protected.push(child);
            }
            continue;
        }
        if kind.is_dir() {
            listing.subdirs.push(child);
        }
    }
    Ok(listing)
}

/// The canonical target of a symlink and whether it is a directory.
fn resolve(root: &Path, rel: &Path) -> Option<(PathBuf, bool)> {
    let target = fs::canonicalize(root.join(rel)).ok()?;
    let meta = fs::metadata(&target).ok()?;
    Some((target, meta.is_dir()))
}

fn found_target(root: &Path, (target, dir): (PathBuf, bool), found: &mut Found) {
    match target.strip_prefix(root) {
        Ok(inside) if !inside.as_os_str().is_empty() => {
            found.sensitive.push((inside.to_owned(), dir));
        }
        // The workspace root itself is never masked.
        Ok(_) => {}
        Err(_) => found.sensitive_outside.push((target, dir)),
    }
}

/// The directories between the workspace root and each protected path
/// (shallowest first), to pin in place so that no ancestor can be renamed
/// away from under a read-only mount.
pub(crate) fn pins(protected: &[PathBuf]) -> Vec<PathBuf> {
    let mut pins: Vec<PathBuf> = protected
        .iter()
        .flat_map(|p| p.ancestors().skip(1))
        .filter(|a| !a.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .collect();
    pins.sort_by_key(|p| (p.components().count(), p.clone()));
    pins.dedup();
    pins
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::{DEFAULT_PROTECTED_PATTERNS, DEFAULT_SENSITIVE_PATTERNS};

    #[test]
    fn finds_sensitive_and_protected_paths() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("real-secret"), "s").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for d in ["src/deep", ".git/hooks", "keys/.ssh", "node_modules/x"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in [
            ".env",
            "src/deep/.env.local",
            "src/main.rs",
            "keys/.ssh/id_rsa",
            ".git/config",
            ".git/HEAD",
            "toolgate.yaml",
            "node_modules/x/server.pem",
            "plain.txt",
        ] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        std::os::unix::fs::symlink(outside.path().join("real-secret"), root.join("token.json"))
            .unwrap();
        std::os::unix::fs::symlink("plain.txt", root.join("id_rsa_link")).unwrap();
        std::os::unix::fs::symlink("/nonexistent/x", root.join("dangling.key")).unwrap();
        let sensitive = PathPatterns::new(DEFAULT_SENSITIVE_PATTERNS.iter().copied()).unwrap();
        let protected = PathPatterns::new(DEFAULT_PROTECTED_PATTERNS.iter().copied()).unwrap();
        let scanner = Scanner::default();
        let found = scanner.scan(&root, &sensitive, &protected).unwrap();
        let rel = |s: &str| PathBuf::from(s);
        assert_eq!(
            found.sensitive,
            vec![
                (rel(".env"), false),
                (rel("keys/.ssh"), true),
                (rel("node_modules/x/server.pem"), false),
                (rel("plain.txt"), false),
                (rel("src/deep/.env.local"), false),
            ]
        );
        assert_eq!(
            found.sensitive_outside,
            vec![(
                outside.path().canonicalize().unwrap().join("real-secret"),
                false
            )]
        );
        assert_eq!(
            found.protected,
            vec![rel(".git/config"), rel(".git/hooks"), rel("toolgate.yaml")]
        );
        assert_eq!(pins(&found.protected), vec![rel(".git")]);
    }

    #[test]
    fn a_later_scan_sees_what_changed_even_with_an_old_time_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/x.txt"), "x").unwrap();
        let sensitive = PathPatterns::new(DEFAULT_SENSITIVE_PATTERNS.iter().copied()).unwrap();
        let protected = PathPatterns::new(DEFAULT_PROTECTED_PATTERNS.iter().copied()).unwrap();
        let scanner = Scanner::default();
        assert!(
            scanner
                .scan(&root, &sensitive, &protected)
                .unwrap()
                .sensitive
                .is_empty()
        );
        let before = std::fs::metadata(root.join("a/b"))
            .unwrap()
            .modified()
            .unwrap();
        std::fs::write(root.join("a/b/.env"), "K=v").unwrap();
        // Put the directory's old modification time back, as `touch -d`
        // would: its change time still moves.
        let dir_file = std::fs::File::open(root.join("a/b")).unwrap();
        dir_file
            .set_times(std::fs::FileTimes::new().set_modified(before))
            .unwrap();
        let found = scanner.scan(&root, &sensitive, &protected).unwrap();
        assert_eq!(found.sensitive, vec![(PathBuf::from("a/b/.env"), false)]);
        std::fs::remove_file(root.join("a/b/.env")).unwrap();
        std::fs::remove_dir_all(root.join("a")).unwrap();
        assert!(
            scanner
                .scan(&root, &sensitive, &protected)
                .unwrap()
                .sensitive
                .is_empty()
        );
    }

    #[test]
    fn pins_are_every_ancestor_shallowest_first() {
        let protected = vec![
            PathBuf::from(".git/modules/a/b/config"),
            PathBuf::from("toolgate.yaml"),
            PathBuf::from(".git/hooks"),
        ];
        let expected: Vec<PathBuf> = [".git", ".git/modules", ".git/modules/a", ".git/modules/a/b"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(pins(&protected), expected);
    }
}
