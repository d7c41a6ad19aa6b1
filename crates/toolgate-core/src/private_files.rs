//! Files and directories private to the user: how toolgate creates its own
//! state (configuration, trust store, store, audit, memory) and tightens
//! what it finds looser.
//!
//! # Why not rely on the umask
//!
//! A file made with `open(O_CREAT, 0666)` gets `0666 & ~umask`: `0644` under
//! the usual umask `022`, readable by every account on the machine. toolgate's
//! own files hold session transcripts, the audit of every call and tokens in
//! the user configuration, so they are created with an explicit mode
//! ([`FILE_MODE`], [`DIR_MODE`]) that the umask can only make stricter, and
//! a file or directory found with group or other bits is tightened
//! ([`tighten`]), which is said in a `tracing` info line. XDG's base
//! directory specification asks the same of `$XDG_DATA_HOME`'s directories
//! (<https://specifications.freedesktop.org/basedir-spec/latest/>).

use std::io;
use std::path::Path;

/// The mode of toolgate's own directories: the user only.
pub const DIR_MODE: u32 = 0o700;
/// The mode of toolgate's own files: the user only, not executable.
pub const FILE_MODE: u32 = 0o600;

/// Creates `dir` and its missing parents, each with [`DIR_MODE`]; existing
/// directories are left as they are (see [`tighten`]).
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        builder.mode(DIR_MODE);
    }
    builder.create(dir)
}

/// Options that create a file with [`FILE_MODE`] (the caller adds
/// `read`, `write`, `append`, `create`…).
pub fn open_options() -> std::fs::OpenOptions {
    #[cfg_attr(not(unix), expect(unused_mut, reason = "modes are a unix notion"))]
    let mut options = std::fs::OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(FILE_MODE);
    }
    options
}

/// The permission bits of `path` when group or other have any of them, so
/// that someone can be told (`toolgate doctor`); `None` when the path is
/// private, missing, or where modes do not exist. Symlinks are not
/// followed.
pub fn loose_mode(path: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let meta = std::fs::symlink_metadata(path).ok()?;
        if meta.file_type().is_symlink() {
            return None;
        }
        let mode = meta.permissions().mode() & 0o7777;
        (mode & 0o077 != 0).then_some(mode)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Takes the group and other bits off `path` (a file or a directory, not
/// followed through a symlink) and says so in a `tracing` info line; returns
/// the mode it had when it changed anything. A missing path is no error.
pub fn tighten(path: &Path) -> io::Result<Option<u32>> {
    let Some(mode) = loose_mode(path) else {
        return Ok(None);
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let tight = mode & 0o700;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(tight))?;
        tracing::info!(
            path = %path.display(),
            "toolgate's own file was readable by others ({mode:o}); its mode is now {tight:o}"
        );
    }
    Ok(Some(mode))
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn created_private_and_tightened() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b");
        create_dir_all(&dir).unwrap();
        assert_eq!(mode(&tmp.path().join("a")), 0o700);
        assert_eq!(mode(&dir), 0o700);
        let file = dir.join("f");
        open_options()
            .write(true)
            .create_new(true)
            .open(&file)
            .unwrap();
        assert_eq!(mode(&file), 0o600);
        assert_eq!(loose_mode(&file), None);
        assert_eq!(tighten(&file).unwrap(), None);

        let cases: &[(u32, u32)] = &[(0o644, 0o600), (0o755, 0o700), (0o666, 0o600)];
        for (loose, tight) in cases {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(*loose)).unwrap();
            assert_eq!(loose_mode(&file), Some(*loose));
            assert_eq!(tighten(&file).unwrap(), Some(*loose));
            assert_eq!(mode(&file), *tight);
        }
        assert_eq!(tighten(&tmp.path().join("missing")).unwrap(), None);
    }
}
