//! The host's errors, each with what the user can do about it.

use std::path::PathBuf;

use crate::config::LoadError;

/// What kind of problem an error is, for front ends that map it to an exit
/// code or a status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The configuration (files, variables, flags) or the workspace is
    /// wrong: nothing ran.
    Config,
    /// The model server refused or lacks the credentials.
    Auth,
    /// No model server could be reached or chosen.
    ModelUnavailable,
    /// Something failed at run time (a database, a file).
    Runtime,
}

/// Why the host could not do what was asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The workspace directory cannot be used.
    #[error("the workspace {} cannot be used", path.display())]
    Workspace {
        /// The directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The workspace is not a directory.
    #[error("the workspace {} is not a directory", .0.display())]
    NotADirectory(PathBuf),
    /// The configuration could not be loaded.
    #[error("invalid configuration")]
    Load(#[source] LoadError),
    /// The trust store could not be read or written.
    #[error(transparent)]
    Trust(crate::trust::TrustError),
    /// `commands.blocked_patterns` or `guardrails.blocked_commands` holds a
    /// bad regex.
    #[error("invalid configuration")]
    BlockedPatterns(#[source] toolgate_policy::CommandPolicyError),
    /// A sensitive or protected pattern is not a glob.
    #[error("the workspace cannot be used")]
    Patterns(#[source] toolgate_core::WorkspaceError),
    /// The sandbox cannot be built.
    #[error("the sandbox cannot be set up")]
    Sandbox(#[source] toolgate_sandbox::SandboxError),
    /// The guardrails section is invalid.
    #[error("invalid configuration")]
    Guardrails(#[source] toolgate_engine::GuardrailsError),
    /// The hooks section is invalid.
    #[error("invalid configuration")]
    Hooks(#[source] toolgate_engine::HookConfigError),
    /// The audit file cannot be opened.
    #[error("could not open the audit file {}", path.display())]
    Audit {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A tool could not be registered.
    #[error("a tool could not be registered")]
    Registry(#[source] toolgate_core::Error),
    /// No agent has this name.
    #[error("unknown agent `{name}`")]
    UnknownAgent {
        /// The name asked for.
        name: String,
        /// The agents there are.
        known: Vec<String>,
    },
    /// An agent's `mode` is not a confirmation mode.
    #[error("agent `{agent}` has an invalid mode: {reason}")]
    AgentMode {
        /// The agent.
        agent: String,
        /// Why.
        reason: String,
    },
}

impl From<LoadError> for HostError {
    fn from(error: LoadError) -> Self {
        match error {
            LoadError::Trust(error) => Self::Trust(error),
            other => Self::Load(other),
        }
    }
}

impl HostError {
    /// What the user can do about it, when there is something to say.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::Workspace { .. } => "pass an existing directory with --workspace".to_owned(),
            Self::NotADirectory(_) => "pass a directory with --workspace".to_owned(),
            Self::Load(error) => return error.hint(),
            Self::Trust(error) => error.hint(),
            Self::BlockedPatterns(_) => "fix `commands.blocked_patterns` and `guardrails.blocked_commands`: each entry is a regular expression".to_owned(),
            Self::Patterns(_) => "fix `guardrails.sensitive_files` and `guardrails.protected_files`: each entry is a glob".to_owned(),
            Self::Sandbox(_) => "check `commands.readable`, `commands.writable` and the sensitive and protected patterns".to_owned(),
            Self::Guardrails(_) => "fix the `guardrails` section; `toolgate config check` shows it".to_owned(),
            Self::Hooks(_) => "fix the `hooks` section; `toolgate config check` shows it".to_owned(),
            Self::Audit { .. } => "fix `audit.path` in the configuration, or remove it".to_owned(),
            Self::Registry(_) => return None,
            Self::UnknownAgent { known, .. } => format!("the agents are {}", known.join(", ")),
            Self::AgentMode { .. } => "use yolo, confirm-sensitive or confirm-all".to_owned(),
        })
    }

    /// What kind of problem this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Audit { .. } | Self::Registry(_) => ErrorKind::Runtime,
            _ => ErrorKind::Config,
        }
    }
}
