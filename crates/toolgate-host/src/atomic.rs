//! Writing a file whole or not at all.

use std::io::Write as _;
use std::path::Path;

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// directory (created `0600`), synced, renamed over it. The directory is
/// created if needed; an existing file keeps its permissions, a new one is
/// private to the user. A crash leaves the old file or the new one, never
/// half of either.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let permissions = std::fs::metadata(path).ok().map(|m| m.permissions());
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    if let Some(permissions) = permissions {
        std::fs::set_permissions(tmp.path(), permissions)?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
