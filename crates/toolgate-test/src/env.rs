//! A temporary workspace and home, and a program run with a clean
//! environment.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The variables of the caller's environment a child keeps: what a process
/// needs to find programs and temporary files, its locale, and what makes a
/// failure readable (`RUST_BACKTRACE`) or measured (`LLVM_PROFILE_FILE`).
/// Nothing toolgate reads (`TOOLGATE_*`, `XDG_*`, `RUST_LOG`, API keys).
const KEPT: &[&str] = &[
    "PATH",
    "TMPDIR",
    "LANG",
    "LC_ALL",
    "RUST_BACKTRACE",
    "LLVM_PROFILE_FILE",
];

/// `program` run in `cwd` with `home` as `HOME`, stdin closed, and a
/// cleared environment but for the variables in `KEPT`: the caller's
/// configuration, data directories, keys and log filter never reach it.
/// A test adds what it means to pass with [`Command::env`].
pub fn clean_command(program: impl AsRef<OsStr>, cwd: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(cwd)
        .env_clear()
        .env("HOME", home)
        .stdin(Stdio::null());
    for key in KEPT {
        if let Some(value) = std::env::var_os(key) {
            cmd.env(key, value);
        }
    }
    cmd
}

/// A temporary directory holding a workspace and a home apart from it,
/// removed when dropped. With [`clean_command`] the home's `.config`,
/// `.local/share` and `.cache` are where toolgate looks, so a test never
/// sees the caller's files.
///
/// By default the workspace is the temporary directory itself and the
/// home is `home/` inside it ([`TempHome::new`]); [`TempHome::builder`]
/// puts the directory elsewhere or the workspace beside the home.
pub struct TempHome {
    dir: tempfile::TempDir,
    workspace: PathBuf,
}

impl TempHome {
    /// A new empty workspace with an empty `home/`.
    pub fn new() -> std::io::Result<Self> {
        Self::builder().build()
    }

    /// A builder for a temporary directory laid out otherwise.
    pub fn builder() -> TempHomeBuilder {
        TempHomeBuilder::default()
    }

    /// The workspace directory.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The home directory, `home/` in the temporary directory.
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// The temporary directory holding both: a place for files outside the
    /// workspace when the workspace is a directory of its own
    /// ([`TempHomeBuilder::workspace_dir`]).
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// `program` in the workspace with this home and a clean environment
    /// ([`clean_command`]).
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        clean_command(program, self.workspace(), &self.home())
    }
}

/// Lays out a [`TempHome`].
#[derive(Debug, Default)]
pub struct TempHomeBuilder {
    parent: Option<PathBuf>,
    workspace_dir: Option<PathBuf>,
}

impl TempHomeBuilder {
    /// Makes the temporary directory inside `parent`: `/var/tmp`, say, for
    /// a test whose commands must see the workspace while the sandbox gives
    /// them a private `/tmp`. By default, the system's temporary directory
    /// (`TMPDIR`, else `/tmp`).
    #[must_use]
    pub fn parent(mut self, parent: impl Into<PathBuf>) -> Self {
        self.parent = Some(parent.into());
        self
    }

    /// Makes the workspace the directory `name` beside `home/`, so that
    /// neither holds the other and files can lie outside the workspace
    /// ([`TempHome::root`]). By default, the workspace is the temporary
    /// directory itself, with `home/` inside it.
    #[must_use]
    pub fn workspace_dir(mut self, name: impl Into<PathBuf>) -> Self {
        self.workspace_dir = Some(name.into());
        self
    }

    /// Creates the directories.
    pub fn build(self) -> std::io::Result<TempHome> {
        let dir = match &self.parent {
            Some(parent) => tempfile::tempdir_in(parent)?,
            None => tempfile::tempdir()?,
        };
        std::fs::create_dir(dir.path().join("home"))?;
        let workspace = match &self.workspace_dir {
            Some(name) => {
                let workspace = dir.path().join(name);
                std::fs::create_dir_all(&workspace)?;
                workspace
            }
            None => dir.path().to_path_buf(),
        };
        Ok(TempHome { dir, workspace })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts() {
        let inside = TempHome::new().unwrap();
        assert_eq!(inside.workspace(), inside.root());
        assert!(inside.home().is_dir());
        assert!(inside.home().starts_with(inside.workspace()));

        let parent = tempfile::tempdir().unwrap();
        let apart = TempHome::builder()
            .parent(parent.path())
            .workspace_dir("ws")
            .build()
            .unwrap();
        assert!(apart.root().starts_with(parent.path()));
        assert_eq!(apart.workspace(), apart.root().join("ws"));
        assert!(apart.workspace().is_dir() && apart.home().is_dir());
        assert!(!apart.home().starts_with(apart.workspace()));
        let root = apart.root().to_path_buf();
        drop(apart);
        assert!(!root.exists(), "removed when dropped");
    }
}
