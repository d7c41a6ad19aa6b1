//! The guardrail rules of DESIGN.md §7 as pure functions over a call's
//! declared [`Effects`](toolgate_core::Effects): what it reads, writes,
//! deletes, renames, runs and reaches, never the tool's name.
//!
//! - [`PathRules`]: sensitive and protected paths, in every effect and in
//!   every word of a command.
//! - [`allows_paths`] over [`FileGlobs`]: the only way a path-based allow
//!   rule can match a call.
//! - [`EditLimits`]: files and lines a session may change, over
//!   [`EditCount`] and [`EditUsage`].
//! - [`CodeRules`]: regexes over the content a write would leave.
//!
//! What needs the file system (where a symlink leads, what a glob expands
//! to) is asked of the caller through callbacks, so every rule here is a
//! function of its inputs.
//!
//! # Opaque calls
//!
//! An [`Effects::Opaque`](toolgate_core::Effects::Opaque) call (an MCP
//! server's tool, a dynamic tool) may do anything. The one rule for it,
//! repeated on each type that meets it: it is sensitive (the caller asks a
//! person before it runs); the deny rules cannot see into it, so it passes
//! [`PathRules`], [`EditLimits`] and [`CodeRules`]; and no path-based allow
//! rule ever matches it ([`allows_paths`] is `false`).

use std::path::PathBuf;

use toolgate_core::WorkspaceError;

pub use allow::{FileGlobs, allows_paths, escape_glob};
pub use code::{BrokenRule, CodeRule, CodeRules, Severity};
pub use limits::{EditCount, EditLimits, EditUsage, LimitRefusal};
pub use paths::{PathRefusal, PathRules, PathRulesBuilder, Via};

pub(crate) use lexical::fold_relative;

mod allow;
mod code;
mod lexical;
mod limits;
mod paths;
mod words;

/// Why a rule set cannot be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EffectsPolicyError {
    /// A workspace root that is not an absolute UTF-8 path.
    #[error("the workspace root `{}` is not an absolute UTF-8 path", root.display())]
    Root {
        /// The root as given.
        root: PathBuf,
    },
    /// The default path patterns did not compile.
    #[error("the default path patterns are invalid")]
    Patterns(#[source] WorkspaceError),
    /// A code rule whose pattern is not a regex.
    #[error("code rule `{rule}` has an invalid regular expression")]
    Regex {
        /// The rule's name (or pattern).
        rule: String,
        /// The error.
        #[source]
        source: regex::Error,
    },
    /// A malformed file glob.
    #[error("invalid file glob `{pattern}`")]
    Glob {
        /// The glob.
        pattern: String,
        /// The error.
        #[source]
        source: globset::Error,
    },
}
