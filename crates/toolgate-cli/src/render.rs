//! The one error renderer, and exit codes.
//!
//! ```text
//! error: invalid configuration
//!   Caused by: `confirmation.mod`: unknown key (in /ws/toolgate.yaml, line 2 column 3)
//! hint: expected `mode` here; `toolgate config check` prints every key with its value
//! ```

use std::io::{self, Write};
use std::process::ExitCode;

/// The documented exit codes (DESIGN.md §11, §13).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// The command did what was asked.
    Success,
    /// The tool call failed (refused, invalid, or the tool reported failure).
    Failure,
    /// Bad usage or configuration: nothing was run.
    Usage,
    /// `run`: the agent stopped before finishing (step budget, interrupt).
    Partial,
    /// `run`/`sessions`: the configuration is invalid.
    Config,
    /// `run`: the model server refused the credentials.
    Auth,
    /// `run`: the time budget ran out.
    Timeout,
    /// The user aborted at a confirmation prompt.
    Aborted,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(match exit {
            Exit::Success => 0,
            Exit::Failure => 1,
            Exit::Usage | Exit::Partial => 2,
            Exit::Config => 3,
            Exit::Auth => 4,
            Exit::Timeout => 5,
            Exit::Aborted => 130,
        })
    }
}

/// An error that ends the command, with its exit code and an optional hint.
#[derive(Debug)]
pub(crate) struct CliError {
    pub(crate) exit: Exit,
    pub(crate) error: anyhow::Error,
    pub(crate) hint: Option<String>,
}

impl CliError {
    pub(crate) fn new(exit: Exit, error: anyhow::Error) -> Self {
        Self {
            exit,
            error,
            hint: None,
        }
    }

    pub(crate) fn usage(error: anyhow::Error) -> Self {
        Self::new(Exit::Usage, error)
    }

    pub(crate) fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl From<toolgate_host::HostError> for CliError {
    fn from(error: toolgate_host::HostError) -> Self {
        use toolgate_host::ErrorKind;
        let exit = match error.kind() {
            ErrorKind::Auth => Exit::Auth,
            ErrorKind::Runtime => Exit::Failure,
            // `run` turns usage errors into its configuration exit code.
            _ => Exit::Usage,
        };
        let hint = error.hint();
        let mut cli = Self::new(exit, anyhow::Error::new(error));
        cli.hint = hint;
        cli
    }
}

/// Prints `error: …`, one `Caused by: …` line per cause, then `hint: …`.
pub(crate) fn error(error: &CliError) {
    let mut stderr = io::stderr().lock();
    let mut chain = error.error.chain();
    if let Some(top) = chain.next() {
        let _ = writeln!(stderr, "error: {top}");
    }
    for cause in chain {
        let _ = writeln!(stderr, "  Caused by: {cause}");
    }
    if let Some(hint) = &error.hint {
        let _ = writeln!(stderr, "hint: {hint}");
    }
}

/// Prints `warning: …`, then `hint: …`.
pub(crate) fn warning(message: &str, hint: Option<&str>) {
    let mut stderr = io::stderr().lock();
    let _ = writeln!(stderr, "warning: {message}");
    if let Some(hint) = hint {
        let _ = writeln!(stderr, "hint: {hint}");
    }
}

/// Prints a failed tool call's error.
pub(crate) fn tool_error(message: &str) {
    let _ = writeln!(io::stderr().lock(), "error: {message}");
}

/// Prints a note for people (never data).
pub(crate) fn note(message: &str) {
    let _ = writeln!(io::stderr().lock(), "{message}");
}
