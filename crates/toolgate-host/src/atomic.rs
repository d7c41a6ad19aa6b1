//! Writing a file whole or not at all.

use std::io::Write as _;
use std::path::Path;

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// directory (created `0600`), synced, renamed over it. The directory is
/// created if needed; an existing file keeps its permissions, a new one is
/// private to the user. A crash leaves the old file or the new one, never
/// half of either.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write(path, bytes, false)
}

/// [`write_atomic`] for toolgate's own files (the user configuration, the
/// trust store): missing directories are created `0700`, and the file is
/// `0600` (an existing one loses its group and other bits), whatever the
/// umask.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write(path, bytes, true)
}

fn write(path: &Path, bytes: &[u8], private: bool) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if private {
        toolgate_core::private_files::create_dir_all(dir)?;
    } else {
        std::fs::create_dir_all(dir)?;
    }
    let mut permissions = std::fs::metadata(path).ok().map(|m| m.permissions());
    #[cfg(unix)]
    if private && let Some(permissions) = &mut permissions {
        use std::os::unix::fs::PermissionsExt as _;
        permissions.set_mode(permissions.mode() & 0o700);
    }
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    if let Some(permissions) = permissions {
        std::fs::set_permissions(tmp.path(), permissions)?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
