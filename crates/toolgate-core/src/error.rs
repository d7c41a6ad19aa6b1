//! Errors of the core crate.

use std::fmt;

/// What can go wrong when registering or looking up tools.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No tool has this name.
    #[error("unknown tool `{name}`{}", Suggestions(.suggestions))]
    NotFound {
        /// The name asked for.
        name: String,
        /// Registered names close to it, best first.
        suggestions: Vec<String>,
    },
    /// A tool of this name is already registered.
    #[error("a tool named `{name}` is already registered")]
    Duplicate {
        /// The clashing name.
        name: String,
    },
    /// The name breaks the name rules.
    #[error("invalid tool name `{name}`: {reason}")]
    InvalidName {
        /// The refused name.
        name: String,
        /// Which rule it breaks.
        reason: String,
    },
    /// The argument schema is not a valid JSON Schema for an object.
    #[error("tool `{name}` has an unusable argument schema: {reason}")]
    InvalidSchema {
        /// The tool's name.
        name: String,
        /// What is wrong with the schema.
        reason: String,
    },
}

struct Suggestions<'a>(&'a [String]);

impl fmt::Display for Suggestions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return Ok(());
        }
        let names: Vec<String> = self.0.iter().map(|n| format!("`{n}`")).collect();
        write!(f, " (did you mean {}?)", names.join(" or "))
    }
}

/// An error and its causes on one line, `: `-separated (`could not start:
/// permission denied`), for a message a model or a person reads where the
/// multi-line `Caused by:` rendering of the binary is not available.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
