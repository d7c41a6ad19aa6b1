//! How much a session may change: `guardrails.max_files_modified` and
//! `guardrails.max_lines_changed`.

use std::collections::BTreeSet;
use std::fmt;

use toolgate_core::{Effect, Effects};

use super::lexical::fold_relative;

/// What one call changes, counted from its [`Effects`].
///
/// # Rules
///
/// 1. Files: the distinct paths the call writes, deletes, or renames (both
///    ends of a move), with `.` and `..` folded by their text so `./a.rs`
///    and `a.rs` are one file. Paths are the effects' own:
///    workspace-relative as the tools declare them.
/// 2. Lines: for each write, the lines it adds plus the lines it removes;
///    for each delete, the lines the file held. A move alone changes no
///    line.
/// 3. An opaque call counts nothing: toolgate cannot see what it changes
///    (and asks a person before it runs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EditCount {
    files: Vec<String>,
    lines: usize,
}

impl EditCount {
    /// Counts `effects` (see the [rules](Self)).
    pub fn of(effects: &Effects) -> Self {
        let mut files: Vec<String> = Vec::new();
        for path in effects.changed_paths() {
            let path = normal(path);
            if !files.contains(&path) {
                files.push(path);
            }
        }
        let lines = effects
            .list()
            .iter()
            .map(|effect| match effect {
                // Not `Change::lines_changed`, which can overflow on
                // declared counts.
                Effect::Write { change, .. } => {
                    change.lines_added.saturating_add(change.lines_removed)
                }
                Effect::Delete { lines_removed, .. } => *lines_removed,
                _ => 0,
            })
            .fold(0, usize::saturating_add);
        Self { files, lines }
    }

    /// The distinct files changed, in declaration order.
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// The lines changed.
    pub fn lines(&self) -> usize {
        self.lines
    }

    /// Whether the call changes nothing.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.lines == 0
    }
}

/// The key a file is counted under.
fn normal(path: &str) -> String {
    if path.starts_with('/') {
        return path.to_owned();
    }
    fold_relative(path).unwrap_or_else(|| path.to_owned())
}

/// What a session has changed so far: the sum of the [`EditCount`]s of the
/// calls that ran (the caller records a call once it succeeded).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EditUsage {
    files: BTreeSet<String>,
    lines: usize,
}

impl EditUsage {
    /// A session that has changed nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a call's count.
    pub fn record(&mut self, count: &EditCount) {
        self.files.extend(count.files.iter().cloned());
        self.lines = self.lines.saturating_add(count.lines);
    }

    /// The distinct files modified.
    pub fn files_modified(&self) -> usize {
        self.files.len()
    }

    /// The files modified, sorted.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(String::as_str)
    }

    /// The lines changed.
    pub fn lines_changed(&self) -> usize {
        self.lines
    }
}

/// The per-session edit limits of DESIGN.md §7.
///
/// # Rules
///
/// Applied in this order; the first refusal wins.
///
/// 1. A call that changes nothing ([`EditCount::is_empty`]) passes.
/// 2. `max_files_modified`: refused when the files modified so far plus
///    the call's files not among them would be more than the limit.
///    Reaching the limit exactly is allowed; changing again a file already
///    counted never adds to it.
/// 3. `max_lines_changed`: refused when the lines changed so far plus the
///    call's lines would be more than the limit. Reaching it exactly is
///    allowed.
///
/// # Example
///
/// ```
/// use toolgate_core::{Change, Effect, Effects};
/// use toolgate_policy::{EditCount, EditLimits, EditUsage};
///
/// let limits = EditLimits::new().max_lines_changed(Some(10));
/// let mut usage = EditUsage::new();
/// let write = Effects::known([Effect::write("a.rs", Change::counted(6, 2, false))]);
/// let count = EditCount::of(&write);
/// assert!(limits.check(&usage, &count).is_ok());
/// usage.record(&count);
/// let refusal = limits.check(&usage, &count).unwrap_err();
/// assert!(refusal.to_string().starts_with("this change of 8 lines would take the session past 10"));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EditLimits {
    max_files_modified: Option<usize>,
    max_lines_changed: Option<usize>,
}

impl EditLimits {
    /// No limits.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many distinct files a session may modify. By default, no limit.
    #[must_use]
    pub fn max_files_modified(mut self, max: Option<usize>) -> Self {
        self.max_files_modified = max;
        self
    }

    /// How many lines a session may change. By default, no limit.
    #[must_use]
    pub fn max_lines_changed(mut self, max: Option<usize>) -> Self {
        self.max_lines_changed = max;
        self
    }

    /// Judges a call's `count` against the session's `usage` so far (see
    /// the [rules](Self)).
    ///
    /// # Errors
    ///
    /// The [`LimitRefusal`] of the first limit the call would pass.
    pub fn check(&self, usage: &EditUsage, count: &EditCount) -> Result<(), LimitRefusal> {
        if count.is_empty() {
            return Ok(());
        }
        if let Some(max) = self.max_files_modified {
            let new = count
                .files
                .iter()
                .filter(|f| !usage.files.contains(*f))
                .count();
            if usage.files.len().saturating_add(new) > max {
                return Err(LimitRefusal::Files {
                    max,
                    modified: usage.files.len(),
                });
            }
        }
        if let Some(max) = self.max_lines_changed
            && usage.lines.saturating_add(count.lines) > max
        {
            return Err(LimitRefusal::Lines {
                max,
                so_far: usage.lines,
                lines: count.lines,
            });
        }
        Ok(())
    }
}

/// Why [`EditLimits`] refuse a call. Its [`Display`](fmt::Display) is the
/// message the model reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitRefusal {
    /// The call would take the session past `max_files_modified`.
    #[non_exhaustive]
    Files {
        /// The limit.
        max: usize,
        /// The files modified so far.
        modified: usize,
    },
    /// The call would take the session past `max_lines_changed`.
    #[non_exhaustive]
    Lines {
        /// The limit.
        max: usize,
        /// The lines changed so far.
        so_far: usize,
        /// The lines the call changes.
        lines: usize,
    },
}

impl std::error::Error for LimitRefusal {}

impl fmt::Display for LimitRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Files { max, modified } => write!(
                f,
                "this session may modify at most {max} files (`guardrails.max_files_modified`) and has modified {modified}; finish with the files already changed"
            ),
            Self::Lines { max, so_far, lines } => write!(
                f,
                "this change of {lines} lines would take the session past {max} changed lines (`guardrails.max_lines_changed`; {so_far} so far); make smaller changes"
            ),
        }
    }
}
