//! Writing files: atomic replacement and appending.
//!
//! # Why temp file + fsync + rename
//!
//! A file written in place is, for a moment, half old and half new; a crash
//! or a concurrent reader then sees garbage. Instead we write the new content
//! to a fresh temporary file *in the same directory*, `fsync` it, and
//! `rename` it over the target. `rename(2)` within one file system replaces
//! the target atomically: "If newpath already exists, it will be atomically
//! replaced, so that there is no point at which another process attempting
//! to access newpath will find it missing"
//! (<https://man7.org/linux/man-pages/man2/rename.2.html>). Same directory,
//! because a rename across file systems is not atomic (it fails with
//! `EXDEV`), and the workspace may span several mounts.
//!
//! The `fsync` of the file before the rename makes sure the new name never
//! points at data still only in the page cache (the classic ext4
//! zero-length-file-after-crash problem, <https://lwn.net/Articles/322823/>);
//! the `fsync` of the directory after it makes the rename itself durable,
//! since "calling `fsync()` does not necessarily ensure that the entry in the
//! directory containing the file has also reached disk"
//! (<https://man7.org/linux/man-pages/man2/fsync.2.html>).
//!
//! All of this happens through handles on the parent directory obtained by
//! the race-free lookup (see the `locate` module), with single-name
//! `openat`/`renameat` calls. The temp file is created with `O_CREAT|O_EXCL`,
//! which never follows a symlink, and `renameat` replaces a symlink that may
//! have been swapped in at the target name instead of writing through it. So
//! nothing is ever written outside the workspace, whatever races.
//!
//! The replaced file's permission bits are copied to the new file before it
//! gets its name (a new file gets `0o666` less the umask, as `open` would
//! give it). Ownership, extended attributes and hard links to the old file
//! are not carried over: that is the price of atomic replacement.
//!
//! # Hard links
//!
//! A file inside the workspace may be a hard link to a file outside it (put
//! there before the workspace was handed to a model, or by a process that
//! could reach both). No path check can see that: both names are the same
//! inode. Replacement is immune, since it writes a new inode and only moves
//! this directory's name to it; the other names keep the old inode and its
//! content. Appending in place, though, would write into the shared inode,
//! so [`Workspace::append`] checks the link count of the file it opened
//! (`fstat`, not a path) and, when it is above one, appends by replacement:
//! copy the old content and the new bytes to a temporary file, rename it
//! over the name. That append is atomic, but not safe against a concurrent
//! appender to the same file (its bytes may be lost); the single-link case
//! keeps `O_APPEND`.

use std::ffi::{OsStr, OsString};
use std::io::{self, Write as _};
use std::sync::atomic::{AtomicU64, Ordering};

use cap_fs_ext::{MetadataExt as _, OpenOptionsFollowExt as _, OpenOptionsSyncExt as _};
use cap_std::fs::{Dir, File, OpenOptions, Permissions};

use super::locate::{Lookup, open_error};
use super::{Workspace, WorkspaceError, WsPath};

impl Workspace {
    /// Replaces the content of a file atomically, creating it and its parent
    /// directories if needed.
    ///
    /// Readers see the old content or the new, never a mix; after a failure
    /// the old content is intact and no temporary file is left behind. If
    /// `p` is a symlink that stays inside, the file it points to is replaced
    /// and the symlink kept. An existing file keeps its permission bits.
    pub fn write_atomic(&self, p: &WsPath, bytes: &[u8]) -> Result<(), WorkspaceError> {
        let user = self.display(p);
        self.check_slash_write(p)?;
        self.check_sensitive(p, None)?;
        self.check_protected(p, None)?;
        let located = self.locate(p, Lookup::WRITE)?;
        self.check_sensitive(p, Some(&located.phys))?;
        self.check_protected(p, Some(&located.phys))?;
        let Some(name) = &located.name else {
            return Err(WorkspaceError::NotAFile { path: user });
        };
        let permissions = match &located.meta {
            None => None,
            Some(meta) if meta.is_file() => Some(meta.permissions()),
            Some(_) => return Err(WorkspaceError::NotAFile { path: user }),
        };
        let permissions = if self.inner.private_modes {
            private(permissions)
        } else {
            permissions
        };
        replace_in(&located.parent, name, bytes, permissions).map_err(|source| WorkspaceError::Io {
            action: "write",
            path: user,
            source,
        })
    }

    /// Appends to a file, creating it and its parent directories if needed.
    ///
    /// Each call is one `write` with `O_APPEND`, so concurrent appenders do
    /// not overwrite each other; it is not atomic (a concurrent reader may
    /// see part of `bytes`). A file with more than one hard link is instead
    /// copied, with `bytes` added, to a new file that replaces it
    /// atomically, so that the other links are left unchanged (see the
    /// module docs).
    pub fn append(&self, p: &WsPath, bytes: &[u8]) -> Result<(), WorkspaceError> {
        let user = self.display(p);
        self.check_slash_write(p)?;
        self.check_sensitive(p, None)?;
        self.check_protected(p, None)?;
        let located = self.locate(p, Lookup::WRITE)?;
        self.check_sensitive(p, Some(&located.phys))?;
        self.check_protected(p, Some(&located.phys))?;
        let Some(name) = &located.name else {
            return Err(WorkspaceError::NotAFile { path: user });
        };
        if located.meta.as_ref().is_some_and(|meta| !meta.is_file()) {
            return Err(WorkspaceError::NotAFile { path: user });
        }
        // Same reasoning as in `read`: `O_NOFOLLOW` refuses a symlink swapped
        // in since the lookup, `O_NONBLOCK` keeps a swapped-in FIFO from
        // blocking the open, and the type check refuses it. Opened for
        // reading too, for the copy a hard-linked file needs; a file we may
        // write but not read (mode `0o200`) is opened without.
        let open = |read: bool| {
            let mut options = OpenOptions::new();
            options
                .read(read)
                .append(true)
                .create(true)
                .follow(cap_fs_ext::FollowSymlinks::No)
                .nonblock(true);
            set_mode(
                &mut options,
                if self.inner.private_modes {
                    0o600
                } else {
                    0o666
                },
            );
            located.parent.open_with(name, &options)
        };
        let (mut file, readable) = match open(true) {
            Ok(file) => (file, true),
            Err(err) if err.kind() == io::ErrorKind::PermissionDenied => (
                open(false).map_err(|err| open_error(err, "append to", &user, &located.phys))?,
                false,
            ),
            Err(err) => return Err(open_error(err, "append to", &user, &located.phys)),
        };
        let io_error = |source| WorkspaceError::Io {
            action: "append to",
            path: user.clone(),
            source,
        };
        let meta = file.metadata().map_err(io_error)?;
        if !meta.is_file() {
            return Err(WorkspaceError::NotAFile { path: user });
        }
        let permissions = if self.inner.private_modes {
            private(Some(meta.permissions())).unwrap_or_else(|| meta.permissions())
        } else {
            meta.permissions()
        };
        if meta.nlink() <= 1 {
            if permissions != meta.permissions() {
                file.set_permissions(permissions).map_err(io_error)?;
            }
            return file.write_all(bytes).map_err(io_error);
        }
        if !readable {
            return Err(WorkspaceError::Io {
                action: "append to",
                path: user,
                source: io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    "the file has other hard links and cannot be read to copy it",
                ),
            });
        }
        // Reads start at offset 0 whatever `O_APPEND` says.
        replace_with(&located.parent, name, Some(permissions), |temp| {
            io::copy(&mut file, temp)?;
            temp.write_all(bytes)
        })
        .map_err(io_error)
    }
}

/// Atomically replaces `name` in `dir` with `bytes`; see the module docs.
/// Does not check what `name` is: callers do.
pub(super) fn replace_in(
    dir: &Dir,
    name: &OsStr,
    bytes: &[u8],
    permissions: Option<Permissions>,
) -> io::Result<()> {
    replace_with(dir, name, permissions, |file| file.write_all(bytes))
}

/// Atomically replaces `name` in `dir` with what `fill` writes to a new
/// temporary file; see the module docs.
fn replace_with(
    dir: &Dir,
    name: &OsStr,
    permissions: Option<Permissions>,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let (temp_name, mut file) = create_temp(dir, permissions.is_some())?;
    let temp = TempGuard {
        dir,
        name: Some(temp_name),
    };
    fill(&mut file)?;
    if let Some(permissions) = permissions {
        file.set_permissions(permissions)?;
    }
    file.sync_all()?;
    drop(file);
    dir.rename(temp.name(), dir, name)?;
    temp.disarm();
    sync_dir(dir);
    Ok(())
}

/// Removes the temporary file when dropped, unless disarmed after the
/// rename: every early return above cleans up.
struct TempGuard<'a> {
    dir: &'a Dir,
    name: Option<OsString>,
}

impl TempGuard<'_> {
    fn name(&self) -> &OsStr {
        self.name.as_deref().unwrap_or_default()
    }

    fn disarm(mut self) {
        self.name = None;
    }
}

impl Drop for TempGuard<'_> {
    fn drop(&mut self) {
        if let Some(name) = self.name.take()
            && let Err(err) = self.dir.remove_file(&name)
        {
            tracing::warn!(
                temp = %name.to_string_lossy(),
                error = %err,
                "could not remove a temporary file after a failed write"
            );
        }
    }
}

/// Creates a new temporary file in `dir`. Private (`0o600`) when it will get
/// the replaced file's permissions later, `0o666` less the umask otherwise.
fn create_temp(dir: &Dir, private: bool) -> io::Result<(OsString, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut options = OpenOptions::new();
    // `create_new` is `O_CREAT | O_EXCL`: it fails on any existing entry,
    // symlinks included, so the temp file is always a new inode of ours.
    options.write(true).create_new(true);
    set_mode(&mut options, if private { 0o600 } else { 0o666 });
    let mut attempts = 0;
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = OsString::from(format!(".toolgate-{}-{n}.tmp", std::process::id()));
        match dir.open_with(&name, &options) {
            Ok(file) => return Ok((name, file)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists && attempts < 16 => {
                attempts += 1;
            }
            Err(err) => return Err(err),
        }
    }
}

/// The permissions of a private file: `existing` without the group and
/// other bits, or `0600` for a new file.
#[cfg(unix)]
#[expect(
    clippy::unnecessary_wraps,
    reason = "`None` where modes do not exist (not unix)"
)]
fn private(existing: Option<Permissions>) -> Option<Permissions> {
    use cap_std::fs::PermissionsExt as _;
    let mode = existing.map_or(0o600, |p| p.mode() & 0o700);
    Some(Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn private(existing: Option<Permissions>) -> Option<Permissions> {
    existing
}

#[cfg(unix)]
fn set_mode(options: &mut OpenOptions, mode: u32) {
    use cap_std::fs::OpenOptionsExt as _;
    options.mode(mode);
}

#[cfg(not(unix))]
fn set_mode(_options: &mut OpenOptions, _mode: u32) {}

/// Makes a rename in `dir` durable. Best effort: the new content is already
/// in place and visible; only its survival across a power loss is at stake,
/// so a failure is logged, not returned.
///
/// cap-std opens directories with `O_PATH`, and `fsync` on an `O_PATH`
/// descriptor fails with `EBADF` (see `open(2)`, `O_PATH`): so the directory
/// is opened again, read-only, through the same handle (`"."` cannot leave
/// it), and that descriptor is synced.
fn sync_dir(dir: &Dir) {
    if let Err(err) = fsync_dir(dir) {
        tracing::warn!(error = %err, "could not fsync a directory after a rename");
    }
}

fn fsync_dir(dir: &Dir) -> std::io::Result<()> {
    dir.open(".").and_then(|handle| handle.sync_all())
}

#[cfg(test)]
mod tests {
    use cap_std::ambient_authority;

    use super::*;

    /// Regression: the directory was synced through cap-std's `O_PATH`
    /// handle, which `fsync` refuses with `EBADF`, so renames were never made
    /// durable (and every write logged a warning).
    #[test]
    fn directory_fsync_works_on_cap_std_handles() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_ambient_dir(tmp.path(), ambient_authority()).unwrap();
        fsync_dir(&dir).unwrap();
    }

    fn entries(dir: &Dir) -> Vec<String> {
        let mut names: Vec<String> = dir
            .entries()
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn failed_rename_leaves_no_temp_file() {
        // `write_atomic` refuses a directory target before getting here;
        // calling `replace_in` directly makes the rename itself fail after
        // the temp file was written, the path the guard exists for.
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_ambient_dir(tmp.path(), ambient_authority()).unwrap();
        dir.create_dir("target").unwrap();
        dir.write("target/keep", b"x").unwrap();
        let err = replace_in(&dir, OsStr::new("target"), b"new", None).unwrap_err();
        assert!(
            matches!(
                err.kind(),
                io::ErrorKind::IsADirectory | io::ErrorKind::DirectoryNotEmpty
            ),
            "{err:?}"
        );
        assert_eq!(entries(&dir), ["target"]);
        assert_eq!(dir.read("target/keep").unwrap(), b"x");
    }

    #[test]
    fn replace_in_replaces_and_cleans_up() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_ambient_dir(tmp.path(), ambient_authority()).unwrap();
        dir.write("f", b"old").unwrap();
        replace_in(&dir, OsStr::new("f"), b"new", None).unwrap();
        assert_eq!(dir.read("f").unwrap(), b"new");
        assert_eq!(entries(&dir), ["f"]);
    }
}
