//! Errors of the sandbox and the process runner.

use std::io;
use std::path::PathBuf;

/// Why a process could not be prepared or started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// A path holds a NUL byte and cannot be passed to the kernel.
    #[error("the path {} contains a NUL byte", path.display())]
    NulInPath {
        /// The path.
        path: PathBuf,
    },
    /// The private session directory could not be made.
    #[error("could not create the sandbox's private directory")]
    Session(#[source] io::Error),
    /// A private path is not absolute.
    #[error("the private path {} is not absolute", path.display())]
    PrivateNotAbsolute {
        /// The path.
        path: PathBuf,
    },
    /// A private path inside the workspace is a symlink now, so no mask
    /// can be mounted on it; nothing was started.
    #[error(
        "toolgate's own state at {} has been replaced by a symbolic link; \
         no process is started until it is a file or directory again",
        path.display()
    )]
    PrivateReplaced {
        /// The path.
        path: PathBuf,
    },
    /// A configured pattern is invalid.
    #[error("invalid sensitive or protected path pattern")]
    Pattern(#[source] toolgate_core::WorkspaceError),
    /// The workspace could not be scanned for sensitive and protected paths.
    #[error("could not scan the workspace {} for sensitive files", workspace.display())]
    Scan {
        /// The workspace.
        workspace: PathBuf,
        /// What failed.
        #[source]
        source: io::Error,
    },
    /// A placeholder for a missing policy file could not be created.
    #[error("could not protect {} (it does not exist, and no placeholder could be made)", path.display())]
    Placeholder {
        /// The path.
        path: PathBuf,
        /// What failed.
        #[source]
        source: io::Error,
    },
    /// The kernel refused a step of building the sandbox; nothing ran.
    #[error("the sandbox could not be set up: {step} failed")]
    Setup {
        /// The step, in words.
        step: String,
        /// The kernel's error.
        #[source]
        source: io::Error,
    },
    /// The process could not be started.
    #[error("could not start `{program}`")]
    Spawn {
        /// The program.
        program: String,
        /// What failed.
        #[source]
        source: io::Error,
    },
    /// The cgroup that limits a command tree could not be made.
    #[error("could not create the command's cgroup")]
    Cgroup(#[source] io::Error),
    /// Waiting for or talking to the process failed.
    #[error("lost track of the process")]
    Wait(#[source] io::Error),
}
