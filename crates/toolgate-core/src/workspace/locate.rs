//! Physical resolution of a [`WsPath`]: walk it one component at a time from
//! the root's directory handle, following symlinks ourselves.
//!
//! # Why not hand the whole path to the kernel?
//!
//! `openat2(RESOLVE_BENEATH)` alone (what `cap_std::fs::Dir::open` does on
//! Linux) already guarantees that nothing outside the root is opened, even if
//! a symlink is swapped in mid-lookup: the kernel refuses with `EXDEV`
//! instead of following it out. But it has two gaps for us:
//!
//! - It refuses *every* absolute symlink, including `link -> /ws/src`, which
//!   stays inside the workspace and which the design says to follow.
//! - It tells us nothing about which file it actually opened, so the
//!   sensitive-file check could be defeated by `notes.txt -> .env`, or by
//!   swapping a directory for a symlink to `.ssh/` between our check and the
//!   open.
//!
//! So we resolve the path like the kernel's own `namei` does, but in user
//! space and anchored on file descriptors:
//!
//! 1. Start from a handle on the root directory.
//! 2. For each component, `fstatat(AT_SYMLINK_NOFOLLOW)` it in the current
//!    directory handle. A directory is opened with `O_NOFOLLOW|O_DIRECTORY`
//!    and becomes the current handle; a symlink's target is read and spliced
//!    into the remaining components (`..` pops a handle, an absolute target
//!    inside the root restarts from the root, anything else is refused).
//! 3. The last component is returned as (parent handle, name, metadata); the
//!    caller opens it with `O_NOFOLLOW`.
//!
//! Every open names a single component relative to a handle we hold, with
//! `O_NOFOLLOW`, so what gets opened is exactly the entry we inspected: if
//! someone swaps a symlink in between the inspection and the open, the open
//! fails with `ELOOP` (or `ENOTDIR`) and we report
//! [`WorkspaceError::Changed`] rather than follow it. Renaming a directory we
//! hold a handle on does not matter either: the handle keeps pointing at the
//! same directory, wherever it moves (this is what makes `*at` calls
//! race-free; see the rationale in
//! <https://man7.org/linux/man-pages/man2/openat.2.html>).
//!
//! All of these opens still go through `cap_std`, so on Linux they are
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` calls (with cap-std's
//! own checked fallback on kernels before 5.6): even a bug in this walk could
//! not open anything outside the root. See the `openat2(2)` man page,
//! <https://man7.org/linux/man-pages/man2/openat2.2.html>, and LWN's overview,
//! <https://lwn.net/Articles/796868/>.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

use cap_fs_ext::DirExt as _;
use cap_std::fs::{Dir, Metadata};

use super::{Workspace, WorkspaceError, WsPath, rel_display};

/// How many symlinks one lookup may follow: Linux's own limit
/// (`MAXSYMLINKS` in `fs/namei.c`), which also bounds symlink loops.
const MAX_SYMLINKS: usize = 40;

/// How a lookup treats the last component and missing directories.
#[derive(Clone, Copy, Debug)]
pub(super) struct Lookup {
    /// Follow a symlink in the last component (reads, writes) or return the
    /// link itself (removal).
    pub(super) follow_last: bool,
    /// Create missing parent directories (writes).
    pub(super) create_parents: bool,
    /// At a missing parent directory, refuse as a write would (sensitive or
    /// protected place) instead of just reporting it missing; creates
    /// nothing ([`Workspace::check_write`]).
    pub(super) probe: bool,
}

impl Lookup {
    /// Follow everything, create nothing.
    pub(super) const READ: Self = Self {
        follow_last: true,
        create_parents: false,
        probe: false,
    };
    /// Follow everything, create missing parents.
    pub(super) const WRITE: Self = Self {
        follow_last: true,
        create_parents: true,
        probe: false,
    };
    /// Do not follow the last component, create nothing.
    pub(super) const ENTRY: Self = Self {
        follow_last: false,
        create_parents: false,
        probe: false,
    };
    /// Follow everything, create nothing, but judge missing parents as a
    /// write would.
    pub(super) const PROBE: Self = Self {
        follow_last: true,
        create_parents: false,
        probe: true,
    };
}

/// A directory handle a lookup ended in: the workspace's own root handle
/// (borrowed: most paths live at the top level, and a lookup should not cost
/// a `dup` and a `close`) or a directory below it that the lookup opened.
#[derive(Debug)]
pub(super) enum ParentDir<'w> {
    /// The root.
    Root(&'w Dir),
    /// A directory below the root.
    Below(Dir),
}

impl ParentDir<'_> {
    /// An owned handle (a `dup` of the root's).
    pub(super) fn into_owned(self, user: &str) -> Result<Dir, WorkspaceError> {
        match self {
            Self::Root(dir) => dir.try_clone().map_err(|source| WorkspaceError::Io {
                action: "open the workspace root for",
                path: user.to_owned(),
                source,
            }),
            Self::Below(dir) => Ok(dir),
        }
    }
}

impl std::ops::Deref for ParentDir<'_> {
    type Target = Dir;

    fn deref(&self) -> &Dir {
        match self {
            Self::Root(dir) => dir,
            Self::Below(dir) => dir,
        }
    }
}

/// Where a path physically is.
#[derive(Debug)]
pub(super) struct Located<'w> {
    /// The directory that holds `name`, or, when `name` is `None`, the
    /// directory the path resolves to.
    pub(super) parent: ParentDir<'w>,
    /// The final entry's name; `None` when the path resolves to a directory
    /// we already hold (the root, or a symlink to `.` or `..`).
    pub(super) name: Option<OsString>,
    /// The symlink-free workspace-relative path of the final entry.
    pub(super) phys: PathBuf,
    /// The final entry's metadata (never a symlink's, unless the lookup did
    /// not follow the last component); `None` if it does not exist.
    pub(super) meta: Option<Metadata>,
}

/// One pending step of a lookup.
#[derive(Debug)]
enum Token {
    Name(OsString),
    Parent,
}

impl Workspace {
    /// Resolves `p` physically beneath the root; see the module docs.
    pub(super) fn locate(&self, p: &WsPath, lookup: Lookup) -> Result<Located<'_>, WorkspaceError> {
        let user = rel_display(&p.rel);
        let mut pending: VecDeque<Token> = p
            .rel
            .components()
            .filter_map(|c| match c {
                Component::Normal(name) => Some(Token::Name(name.to_owned())),
                _ => None,
            })
            .collect();
        // Handles on the directories below the root, with their names: the
        // physical path so far.
        let mut stack: Vec<(Dir, OsString)> = Vec::new();
        // Counts followed symlinks and directory-creation retries alike, so
        // that neither a loop nor a hostile concurrent `rmdir` can spin us.
        let mut steps = 0usize;
        // The last symlink followed, to name it if a `..` then escapes.
        let mut last_link: Option<(PathBuf, PathBuf)> = None;

        loop {
            let Some(token) = pending.pop_front() else {
                // The path ends on a directory we already hold.
                let phys = phys_path(&stack, None);
                let dir = match stack.pop() {
                    Some((dir, _)) => ParentDir::Below(dir),
                    None => ParentDir::Root(&self.inner.dir),
                };
                let meta = dir.dir_metadata().map_err(|source| WorkspaceError::Io {
                    action: "inspect",
                    path: user.clone(),
                    source,
                })?;
                return Ok(Located {
                    parent: dir,
                    name: None,
                    phys,
                    meta: Some(meta),
                });
            };
            let name = match token {
                Token::Parent => {
                    if stack.pop().is_none() {
                        return Err(self.escape_error(&user, last_link));
                    }
                    continue;
                }
                Token::Name(name) => name,
            };
            let is_last = pending.is_empty();
            let here = phys_path(&stack, Some(&name));
            // A private path is refused wherever the walk meets it: as
            // written, through a symlink, or as a directory on the way.
            // Checked on the name, before anything is opened in it.
            if self.inner.private.covers(&here) {
                return Err(WorkspaceError::Private { path: user });
            }
            let cur = stack.last().map_or(&self.inner.dir, |(dir, _)| dir);

            let meta = match cur.symlink_metadata(&name) {
                Ok(meta) => meta,
                Err(err) if err.kind() == io::ErrorKind::NotFound => {
                    if is_last {
                        let parent = match stack.pop() {
                            Some((dir, _)) => ParentDir::Below(dir),
                            None => ParentDir::Root(&self.inner.dir),
                        };
                        return Ok(Located {
                            parent,
                            name: Some(name),
                            phys: here,
                            meta: None,
                        });
                    }
                    if !lookup.create_parents && !lookup.probe {
                        return Err(WorkspaceError::NotFound { path: user });
                    }
                    // Refuse before creating anything: a write that would
                    // land in a sensitive or protected place must not leave
                    // directories there either (`.git/hooks/` where there
                    // was no `.git`, reached through a dangling symlink).
                    let planned = prospective(&here, &pending);
                    if self.inner.private.covers(&planned) {
                        return Err(WorkspaceError::Private { path: user });
                    }
                    if !self.inner.allow_sensitive
                        && let Some(pattern) = self.inner.sensitive.matches(&planned)
                    {
                        return Err(WorkspaceError::Sensitive {
                            path: user,
                            pattern: pattern.to_owned(),
                        });
                    }
                    if let Some(pattern) = self.inner.protected.matches(&planned) {
                        return Err(WorkspaceError::Protected {
                            path: user,
                            pattern: pattern.to_owned(),
                        });
                    }
                    if !lookup.create_parents {
                        return Err(WorkspaceError::NotFound { path: user });
                    }
                    match self.create_dir(cur, &name) {
                        Ok(()) => {}
                        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
                        Err(source) => {
                            return Err(WorkspaceError::Io {
                                action: "create the directory",
                                path: rel_display(&here),
                                source,
                            });
                        }
                    }
                    steps += 1;
                    if steps > MAX_SYMLINKS {
                        return Err(WorkspaceError::Changed { path: user });
                    }
                    // Look again: whatever is there now (our directory, or
                    // something a concurrent process put there) goes through
                    // the same checks.
                    pending.push_front(Token::Name(name));
                    continue;
                }
                Err(source) => {
                    return Err(WorkspaceError::Io {
                        action: "inspect",
                        path: rel_display(&here),
                        source,
                    });
                }
            };

            if meta.is_symlink() && (!is_last || lookup.follow_last) {
                steps += 1;
                if steps > MAX_SYMLINKS {
                    return Err(WorkspaceError::TooManySymlinks { path: user });
                }
                let target =
                    cur.read_link_contents(&name)
                        .map_err(|source| WorkspaceError::Io {
                            action: "read the symlink",
                            path: rel_display(&here),
                            source,
                        })?;
                // An absolute target is fine if it points inside the root:
                // restart from the root with the relative rest.
                // (`RESOLVE_BENEATH` alone would refuse it.)
                let (restart, rel) = if target.has_root() {
                    (true, self.strip_root(&target))
                } else {
                    (false, Some(target.as_path()))
                };
                let Some(spliced) = rel.and_then(tokens) else {
                    return Err(self.escape_error(&user, Some((here, target))));
                };
                if restart {
                    stack.clear();
                }
                for token in spliced.into_iter().rev() {
                    pending.push_front(token);
                }
                last_link = Some((here, target));
                continue;
            }

            if is_last {
                let parent = match stack.pop() {
                    Some((dir, _)) => ParentDir::Below(dir),
                    None => ParentDir::Root(&self.inner.dir),
                };
                return Ok(Located {
                    parent,
                    name: Some(name),
                    phys: here,
                    meta: Some(meta),
                });
            }
            if !meta.is_dir() {
                return Err(WorkspaceError::NotADirectory {
                    path: rel_display(&here),
                });
            }
            // `O_NOFOLLOW | O_DIRECTORY`: if `name` became a symlink since the
            // `fstatat` above, this fails instead of following it.
            let dir = cur
                .open_dir_nofollow(&name)
                .map_err(|err| open_error(err, "open the directory", &user, &here))?;
            stack.push((dir, name));
        }
    }

    /// Creates the directory `name` in `dir`, private (`0700`) when the
    /// workspace makes private files.
    fn create_dir(&self, dir: &Dir, name: &OsString) -> io::Result<()> {
        if !self.inner.private_modes {
            return dir.create_dir(name);
        }
        let mut builder = cap_std::fs::DirBuilder::new();
        #[cfg(unix)]
        {
            use cap_std::fs::DirBuilderExt as _;
            builder.mode(0o700);
        }
        dir.create_dir_with(name, &builder)
    }

    fn escape_error(&self, user: &str, link: Option<(PathBuf, PathBuf)>) -> WorkspaceError {
        match link {
            Some((link, target)) => WorkspaceError::SymlinkEscapes {
                path: user.to_owned(),
                link: rel_display(&link),
                target,
                root: self.inner.root.clone(),
            },
            None => WorkspaceError::OutsideWorkspace {
                path: user.to_owned(),
                root: self.inner.root.clone(),
            },
        }
    }
}

/// Maps an error from opening `here` (a single component, `O_NOFOLLOW`) that
/// the lookup had just inspected.
pub(super) fn open_error(
    err: io::Error,
    action: &'static str,
    user: &str,
    here: &Path,
) -> WorkspaceError {
    if was_swapped(&err) {
        WorkspaceError::Changed {
            path: user.to_owned(),
        }
    } else if err.kind() == io::ErrorKind::NotFound {
        WorkspaceError::NotFound {
            path: user.to_owned(),
        }
    } else {
        WorkspaceError::Io {
            action,
            path: rel_display(here),
            source: err,
        }
    }
}

/// Whether an `O_NOFOLLOW` open failed because the entry is (now) a symlink
/// (`ELOOP`), or a directory open because it is no longer a directory.
fn was_swapped(err: &io::Error) -> bool {
    #[cfg(unix)]
    if err.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
        return true;
    }
    err.kind() == io::ErrorKind::NotADirectory
}

/// The steps of a relative path; `None` if it has a root or a (Windows)
/// prefix after all, such as `C:foo`, which we refuse rather than guess at.
fn tokens(path: &Path) -> Option<Vec<Token>> {
    let mut tokens = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(name) => tokens.push(Token::Name(name.to_owned())),
            Component::ParentDir => tokens.push(Token::Parent),
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(tokens)
}

/// Where a lookup will end if everything from `here` on is created: `here`
/// plus the pending steps, taken lexically (new directories hold no
/// symlinks).
fn prospective(here: &Path, pending: &VecDeque<Token>) -> PathBuf {
    let mut path = here.to_owned();
    for token in pending {
        match token {
            Token::Name(name) => path.push(name),
            Token::Parent => {
                path.pop();
            }
        }
    }
    path
}

fn phys_path(stack: &[(Dir, OsString)], last: Option<&OsString>) -> PathBuf {
    let mut path: PathBuf = stack.iter().map(|(_, name)| name).collect();
    if let Some(last) = last {
        path.push(last);
    }
    path
}
