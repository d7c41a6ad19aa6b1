//! The sandbox's private session directory: the parent of the `/tmp` its
//! processes see and the home of the sanitised `~/.gitconfig`.
//!
//! # Rules
//!
//! 1. Its path is decided when the sandbox is built (the view names it),
//!    and the directory is made when the first process is prepared, with
//!    the view's sanitised `gitconfig`: a
//!    sandbox that never starts one (a `toolgate call` of a tool that runs
//!    no program) touches the temp directory not at all.
//! 2. It is made with `mkdir` mode 0700 under a random name and never
//!    reused: a directory already there under that name (made by someone
//!    else) is an error, never entered.
//! 3. It is removed with the last clone of the sandbox, and the session
//!    directories of toolgate processes that are gone (killed without
//!    cleaning up) are removed when a session directory is made.

use std::hash::{BuildHasher, RandomState};
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::SandboxError;

/// Session directories are named `toolgate-sandbox-PID-…` in the temp
/// directory.
pub(crate) const SESSION_PREFIX: &str = "toolgate-sandbox-";

/// The session directory of one sandbox (rules in the module docs).
#[derive(Debug)]
pub(crate) struct SessionDir {
    path: PathBuf,
    /// Whether the directory was made; the error kind and text when making
    /// it failed (every later process fails the same way).
    made: OnceLock<Result<(), (io::ErrorKind, String)>>,
}

impl SessionDir {
    /// A session directory in the temp directory, not made yet.
    pub(crate) fn new() -> Self {
        // 64 random bits from the standard library's hasher keys: the name
        // need not be secret, only not guessed before it is made (rule 2).
        let random = RandomState::new().hash_one(std::process::id());
        let name = format!("{SESSION_PREFIX}{}-{random:016x}", std::process::id());
        Self {
            path: std::env::temp_dir().join(name),
            made: OnceLock::new(),
        }
    }

    /// Where the directory is (or will be).
    #[cfg(test)]
    fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// The private `/tmp` of the sandbox's processes.
    pub(crate) fn tmp(&self) -> PathBuf {
        self.path.join("tmp")
    }

    /// The path the sanitised `~/.gitconfig` will have.
    pub(crate) fn gitconfig(&self) -> PathBuf {
        self.path.join("gitconfig")
    }

    /// Makes the directory, its `tmp` and, when given, `gitconfig`, once
    /// (rule 1).
    pub(crate) fn ensure(&self, gitconfig: Option<&str>) -> Result<(), SandboxError> {
        let made = self.made.get_or_init(|| {
            remove_stale_sessions();
            self.make(gitconfig).map_err(|e| (e.kind(), e.to_string()))
        });
        made.clone()
            .map_err(|(kind, text)| SandboxError::Session(io::Error::new(kind, text)))
    }

    fn make(&self, gitconfig: Option<&str>) -> io::Result<()> {
        std::fs::DirBuilder::new().mode(0o700).create(&self.path)?;
        std::fs::create_dir(self.tmp())?;
        if let Some(text) = gitconfig {
            std::fs::write(self.gitconfig(), text)?;
        }
        Ok(())
    }
}

impl Drop for SessionDir {
    fn drop(&mut self) {
        if matches!(self.made.get(), Some(Ok(()))) {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Removes the session directories of toolgate processes that are gone
/// without cleaning up (killed with SIGKILL, say). Best effort.
fn remove_stale_sessions() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(SESSION_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        if !crate::placeholder::pid_alive(pid) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn made_on_first_use_once_and_removed_on_drop() {
        let session = SessionDir::new();
        let gitconfig = session.gitconfig();
        let path = session.path().to_owned();
        assert!(!path.exists(), "made before any process");
        session.ensure(Some("[user]\n\tname = x\n")).unwrap();
        session.ensure(None).unwrap();
        assert!(session.tmp().is_dir());
        assert_eq!(
            std::fs::read_to_string(&gitconfig).unwrap(),
            "[user]\n\tname = x\n"
        );
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        drop(session);
        assert!(!path.exists(), "left behind");
    }

    #[test]
    fn a_directory_already_there_is_refused_and_left_alone() {
        let session = SessionDir::new();
        std::fs::create_dir(session.path()).unwrap();
        std::fs::write(session.path().join("planted"), "x").unwrap();
        let error = session.ensure(None).unwrap_err();
        assert!(
            matches!(error, SandboxError::Session(ref e) if e.kind() == io::ErrorKind::AlreadyExists)
        );
        // Every later process fails the same way.
        assert!(session.ensure(None).is_err());
        let path = session.path().to_owned();
        drop(session);
        assert!(
            path.join("planted").exists(),
            "someone else's directory removed"
        );
        std::fs::remove_dir_all(path).unwrap();
    }

    #[test]
    fn sessions_of_gone_processes_are_removed_when_one_is_made() {
        // No process has the largest PID there is.
        let stale = std::env::temp_dir().join(format!("{SESSION_PREFIX}{}-x", i32::MAX));
        std::fs::create_dir_all(stale.join("tmp")).unwrap();
        let live = std::env::temp_dir().join(format!("{SESSION_PREFIX}{}-y", std::process::id()));
        std::fs::create_dir_all(&live).unwrap();
        let session = SessionDir::new();
        session.ensure(None).unwrap();
        assert!(!stale.exists(), "a gone process's session stays");
        assert!(live.exists(), "a live process's session went");
        std::fs::remove_dir(&live).unwrap();
    }
}
