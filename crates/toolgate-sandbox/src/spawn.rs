//! [`Spawn`]: what to start, and the [`Profile`] it runs in.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What a process is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Profile {
    /// Reads only: no writes except `/dev/null`, no network, and `execve` of
    /// nothing but the shell and `programs` (names as written on the command
    /// line, resolved through `PATH`). For commands judged read-only.
    ReadOnly {
        /// The programs the command line names.
        programs: Vec<String>,
    },
    /// Writes beneath the workspace, the private `/tmp` and configured
    /// paths; toolgate's policy files and the workspace's protected paths
    /// stay read-only; the network as configured.
    Standard,
}

/// What to run: a shell line or a program with arguments, where, with what.
#[derive(Debug, Clone)]
pub struct Spawn {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) shell: bool,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) profile: Profile,
    pub(crate) readable: Vec<PathBuf>,
    pub(crate) writable: Vec<PathBuf>,
}

impl Spawn {
    /// `bash -c LINE` (`/bin/sh -c LINE` where there is no bash): bash,
    /// because the command classifier reads lines as bash does; running
    /// them in another shell (dash's `time` is a program, it has no `$'…'`)
    /// would run something other than what was judged.
    pub fn shell(line: impl Into<OsString>) -> Self {
        Self {
            program: OsString::from(shell_path()),
            args: vec![OsString::from("-c"), line.into()],
            shell: true,
            cwd: None,
            env: Vec::new(),
            profile: Profile::Standard,
            readable: Vec::new(),
            writable: Vec::new(),
        }
    }

    /// A program (a path, or a name looked up in the built `PATH`) with its
    /// arguments, without a shell.
    pub fn program<I, S>(program: impl Into<OsString>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Self {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            shell: false,
            cwd: None,
            env: Vec::new(),
            profile: Profile::Standard,
            readable: Vec::new(),
            writable: Vec::new(),
        }
    }

    /// The working directory. By default, the workspace root.
    #[must_use]
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Adds a variable on top of the built environment. By default, none.
    #[must_use]
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Adds variables on top of the built environment.
    #[must_use]
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        self.env
            .extend(vars.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// More paths this process may read where they would be hidden
    /// (absolute, or `~/…`), on top of the sandbox's. By default, none.
    #[must_use]
    pub fn readable<I, P>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.readable.extend(paths.into_iter().map(Into::into));
        self
    }

    /// More paths this process may write (absolute, or `~/…`), on top of the
    /// sandbox's; only in [`Profile::Standard`]. By default, none.
    #[must_use]
    pub fn writable<I, P>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.writable.extend(paths.into_iter().map(Into::into));
        self
    }

    /// The profile. By default, [`Profile::Standard`].
    #[must_use]
    pub fn profile(mut self, profile: Profile) -> Self {
        self.profile = profile;
        self
    }

    /// The program, for messages.
    pub fn program_name(&self) -> String {
        self.program.to_string_lossy().into_owned()
    }
}

/// The shell lines run in.
pub(crate) fn shell_path() -> &'static str {
    static SHELL: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    SHELL.get_or_init(|| {
        if Path::new("/bin/bash").exists() {
            "/bin/bash"
        } else {
            "/bin/sh"
        }
    })
}
