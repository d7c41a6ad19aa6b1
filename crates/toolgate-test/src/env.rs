//! A temporary workspace and home, and a program run with a clean
//! environment.

use std::ffi::OsStr;
use std::path::Path;
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

/// A temporary directory holding a workspace (the directory itself) and a
/// home apart from it (`home/` inside), removed when dropped. With
/// [`clean_command`] the home's `.config`, `.local/share` and `.cache` are
/// where toolgate looks, so a test never sees the caller's files.
pub struct TempHome {
    dir: tempfile::TempDir,
}

impl TempHome {
    /// A new empty workspace with an empty `home/`.
    pub fn new() -> std::io::Result<Self> {
        let dir = tempfile::tempdir()?;
        std::fs::create_dir(dir.path().join("home"))?;
        Ok(Self { dir })
    }

    /// The workspace directory.
    pub fn workspace(&self) -> &Path {
        self.dir.path()
    }

    /// The home directory, inside the workspace's temporary directory.
    pub fn home(&self) -> std::path::PathBuf {
        self.dir.path().join("home")
    }

    /// `program` in the workspace with this home and a clean environment
    /// ([`clean_command`]).
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        clean_command(program, self.workspace(), &self.home())
    }
}
