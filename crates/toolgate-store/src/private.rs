//! The store's files are the user's only: the database and its `-wal`,
//! `-shm` and `-journal` files `0600`, its directories `0700`, whatever the
//! umask; looser ones are tightened when the store is opened.
//!
//! The session transcripts and the audit of every call are in these files,
//! and a umask of `022` would leave them readable by every account on the
//! machine. This crate depends on none of toolgate's, so these few lines
//! stand beside `toolgate_core::private_files` rather than call it.

use std::io;
use std::path::Path;

/// The files `SQLite` keeps beside a database, by suffix.
pub(crate) const COMPANIONS: &[&str] = &["-wal", "-shm", "-journal"];

/// Creates `dir` and its missing parents, `0700` each.
pub(crate) fn create_dir_all(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Creates `path` empty with mode `0600` unless it exists; an existing one
/// is tightened ([`tighten`]).
pub(crate) fn create_file(path: &Path) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => tighten(path),
        Err(error) => Err(error),
    }
}

/// Takes the group and other bits off `path` (not followed through a
/// symlink), saying so in a `tracing` info line. A missing path is no error.
pub(crate) fn tighten(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let meta = match std::fs::symlink_metadata(path) {
            Ok(meta) if !meta.file_type().is_symlink() => meta,
            Ok(_) => return Ok(()),
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(error),
        };
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            let tight = mode & 0o700;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(tight))?;
            tracing::info!(
                path = %path.display(),
                "the store's file was readable by others ({mode:o}); its mode is now {tight:o}"
            );
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}
