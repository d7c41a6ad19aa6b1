//! What a call will do, declared by the tool before it runs.
//!
//! Policies decide on what a call does, not on the tool's name: the
//! guardrails (sensitive and protected paths, edit limits, code rules), the
//! hooks' `{file}`, a run's list of changed files and the audit all read a
//! call's [`Effects`]. A tool computes them with its own code — `apply_patch`
//! with its real patch parser, `edit_file` with its real matcher — so adding
//! a tool never means editing a list of tool names somewhere else.
//!
//! # Rules
//!
//! 1. A tool that reads only declares [`Effect::Read`]s (or nothing).
//! 2. A tool that changes files declares every file it would write, create,
//!    delete or rename, on both ends of a rename, with the content it would
//!    leave when it can know it ([`Change`]).
//! 3. A tool that starts a process declares the command line
//!    ([`Effect::Command`]); one that reaches the network declares where
//!    ([`Effect::Network`]).
//! 4. A tool whose effects toolgate cannot know — an MCP server's tool, a
//!    dynamic script tool — is [`Effects::Opaque`]. An opaque call is sensitive
//!    (it asks under `confirm-sensitive`), no path rule can allow it, and it
//!    names no file to hooks or reports.
//! 5. Paths are workspace-relative (`src/main.rs`) when the tool could
//!    resolve them inside the workspace, and as written otherwise; the gate
//!    judges them as written and as they resolve.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::CommandClass;

/// How a command will run, as the tool that starts it decided before it
/// runs: what a person approving it needs to know besides the line itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CommandPlan {
    /// The class the command policy gave the line (with its `env`).
    pub class: CommandClass,
    /// Why, in words a person can act on.
    pub reason: String,
    /// The programs the line starts, each once, in order.
    pub programs: Vec<String>,
    /// The kernel profile it will run in.
    pub profile: SandboxProfile,
    /// Whether it may reach the network.
    pub network: bool,
}

impl CommandPlan {
    /// A plan for a line of `class`, for `reason`, starting `programs`,
    /// in `profile`, with or without the `network`.
    pub fn new(
        class: CommandClass,
        reason: impl Into<String>,
        programs: Vec<String>,
        profile: SandboxProfile,
        network: bool,
    ) -> Self {
        Self {
            class,
            reason: reason.into(),
            programs,
            profile,
            network,
        }
    }
}

/// The kernel profile a process runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SandboxProfile {
    /// Nothing writable, no network, no program but the ones it names.
    ReadOnly,
    /// Writes beneath the workspace and temp; policy files read-only,
    /// secrets hidden.
    Standard,
    /// The kernel confines only part of it here (Landlock without
    /// namespaces): writes confined, nothing hidden.
    Partial,
    /// No sandbox: the process has toolgate's own rights.
    Unconfined,
}

impl SandboxProfile {
    /// What the profile lets a process do, in a few words for people.
    pub fn describe(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only sandbox: writes nothing, runs only the programs named",
            Self::Standard => "standard sandbox: writes only in the workspace and temp",
            Self::Partial => "partial sandbox: writes confined, secrets and other files visible",
            Self::Unconfined => "no sandbox: it runs with your rights",
        }
    }

    /// `read-only`, `standard`, `partial` or `unconfined`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::Standard => "standard",
            Self::Partial => "partial",
            Self::Unconfined => "unconfined",
        }
    }
}

/// How a write changes a file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Change {
    /// The whole text the file will hold after the call, when the tool can
    /// compute it before running (code rules read it). `None` when it
    /// cannot (a hunk only GNU `patch` could place, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Lines the call adds.
    pub lines_added: usize,
    /// Lines the call removes.
    pub lines_removed: usize,
    /// Whether the file does not exist yet.
    pub creates: bool,
}

impl Change {
    /// A write that leaves `content` in a file that held `before` (`None`:
    /// the file does not exist). Lines are counted as a line diff would:
    /// the lines only in the old text are removed, those only in the new
    /// text added.
    pub fn from_texts(before: Option<&str>, content: impl Into<String>) -> Self {
        let content = content.into();
        let (lines_added, lines_removed) = line_delta(before.unwrap_or(""), &content);
        Self {
            content: Some(content),
            lines_added,
            lines_removed,
            creates: before.is_none(),
        }
    }

    /// A write whose content is not known in advance, only its line counts.
    pub fn counted(lines_added: usize, lines_removed: usize, creates: bool) -> Self {
        Self {
            content: None,
            lines_added,
            lines_removed,
            creates,
        }
    }

    /// Lines added plus lines removed.
    pub fn lines_changed(&self) -> usize {
        self.lines_added + self.lines_removed
    }
}

/// Lines only in `new` and lines only in `old`, as a multiset difference:
/// an edit that moves a line counts it on both sides, like a diff does.
/// Linear in the texts' sizes, which keeps effects cheap for large files.
fn line_delta(old: &str, new: &str) -> (usize, usize) {
    use std::collections::HashMap;
    let mut counts: HashMap<&str, isize> = HashMap::new();
    for line in old.lines() {
        *counts.entry(line).or_default() -= 1;
    }
    for line in new.lines() {
        *counts.entry(line).or_default() += 1;
    }
    let mut added = 0;
    let mut removed = 0;
    for count in counts.values() {
        if *count > 0 {
            added += count.unsigned_abs();
        } else {
            removed += count.unsigned_abs();
        }
    }
    (added, removed)
}

/// One thing a call will do.
///
/// # Wire format
///
/// Serialized with a `kind` tag: `{"kind": "write", "path": "src/a.rs",
/// "change": {…}}`. The audit keeps every field but a write's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Effect {
    /// Reads a file, or with `tree` the files beneath a directory (a
    /// listing or a search).
    Read {
        /// The file or directory.
        path: String,
        /// Whether everything beneath `path` may be read.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        tree: bool,
    },
    /// Creates or replaces a file.
    Write {
        /// The file.
        path: String,
        /// What the write does to it.
        change: Change,
    },
    /// Removes a file.
    Delete {
        /// The file.
        path: String,
        /// Lines the file held (0 when unknown).
        lines_removed: usize,
    },
    /// Renames a file. A change of the content on the way is a separate
    /// [`Effect::Write`] on `to`.
    Move {
        /// The file as it is named now.
        from: String,
        /// Its new name.
        to: String,
    },
    /// Starts a process from a shell command line, or writes text to the
    /// stdin of one already running (which a shell would run as commands).
    ///
    /// Build it with [`Effect::command`].
    #[non_exhaustive]
    Command {
        /// The command line, or the text written.
        command: String,
        /// The directory it runs in, when not the workspace root.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
        /// The environment variables the call sets for it, beyond those
        /// every command gets (`run_command`'s `env`): rules and the
        /// classifier judge the names, a person sees the values.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        env: BTreeMap<String, String>,
        /// How the tool will run it, when it runs a new process: its
        /// class, the programs, the sandbox profile.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        plan: Option<CommandPlan>,
    },
    /// Reaches the network.
    Network {
        /// The URL (or `host:port`).
        url: String,
    },
}

impl Effect {
    /// A read of one file.
    pub fn read(path: impl Into<String>) -> Self {
        Self::Read {
            path: path.into(),
            tree: false,
        }
    }

    /// A read of everything beneath a directory.
    pub fn read_tree(path: impl Into<String>) -> Self {
        Self::Read {
            path: path.into(),
            tree: true,
        }
    }

    /// A command line run in `cwd` (`None`: the workspace root), with no
    /// extra environment and no plan.
    pub fn command(command: impl Into<String>, cwd: Option<String>) -> Self {
        Self::Command {
            command: command.into(),
            cwd,
            env: BTreeMap::new(),
            plan: None,
        }
    }

    /// This command effect with the variables it sets; other effects
    /// unchanged.
    #[must_use]
    pub fn with_env(mut self, vars: BTreeMap<String, String>) -> Self {
        if let Self::Command { env, .. } = &mut self {
            *env = vars;
        }
        self
    }

    /// This command effect with how it will run; other effects unchanged.
    #[must_use]
    pub fn with_plan(mut self, how: CommandPlan) -> Self {
        if let Self::Command { plan, .. } = &mut self {
            *plan = Some(how);
        }
        self
    }

    /// A write of one file.
    pub fn write(path: impl Into<String>, change: Change) -> Self {
        Self::Write {
            path: path.into(),
            change,
        }
    }

    /// Whether the effect changes a file (write, delete, move).
    pub fn changes_files(&self) -> bool {
        matches!(
            self,
            Self::Write { .. } | Self::Delete { .. } | Self::Move { .. }
        )
    }

    /// The paths the effect names: one, or both ends of a move.
    pub fn paths(&self) -> Vec<&str> {
        match self {
            Self::Read { path, .. } | Self::Write { path, .. } | Self::Delete { path, .. } => {
                vec![path]
            }
            Self::Move { from, to } => vec![from, to],
            Self::Command { .. } | Self::Network { .. } => Vec::new(),
        }
    }

    /// The same effect without a write's content or the values of a
    /// command's variables, which may be secrets (for the audit).
    #[must_use]
    pub fn summary(&self) -> Self {
        match self {
            Self::Write { path, change } => Self::Write {
                path: path.clone(),
                change: Change {
                    content: None,
                    ..change.clone()
                },
            },
            Self::Command {
                command,
                cwd,
                env,
                plan,
            } => Self::Command {
                command: command.clone(),
                cwd: cwd.clone(),
                env: env
                    .keys()
                    .map(|name| (name.clone(), String::new()))
                    .collect(),
                plan: plan.clone(),
            },
            other => other.clone(),
        }
    }

    /// The names of the variables a command effect sets (none for other
    /// effects).
    pub fn env_names(&self) -> Vec<&str> {
        match self {
            Self::Command { env, .. } => env.keys().map(String::as_str).collect(),
            _ => Vec::new(),
        }
    }
}

/// Everything a call will do: a list of [`Effect`]s, or [`Effects::Opaque`]
/// when toolgate cannot know (see the rules atop `effects.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Effects {
    /// The call does exactly these things (none: it only computes).
    Known(Vec<Effect>),
    /// The call may do anything its server or author lets it.
    Opaque,
}

impl Default for Effects {
    fn default() -> Self {
        Self::none()
    }
}

impl Effects {
    /// A call that touches nothing outside toolgate.
    pub fn none() -> Self {
        Self::Known(Vec::new())
    }

    /// Exactly these effects.
    pub fn known(effects: impl IntoIterator<Item = Effect>) -> Self {
        Self::Known(effects.into_iter().collect())
    }

    /// Whether toolgate cannot know what the call does.
    pub fn is_opaque(&self) -> bool {
        matches!(self, Self::Opaque)
    }

    /// The declared effects; empty for an opaque call.
    pub fn list(&self) -> &[Effect] {
        match self {
            Self::Known(list) => list,
            Self::Opaque => &[],
        }
    }

    /// Whether the call only reads (an opaque call never does).
    pub fn is_read_only(&self) -> bool {
        match self {
            Self::Known(list) => list.iter().all(|e| matches!(e, Effect::Read { .. })),
            Self::Opaque => false,
        }
    }

    /// Every path the call changes (written, deleted, or either end of a
    /// rename), in declaration order, without repeats.
    pub fn changed_paths(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for effect in self.list().iter().filter(|e| e.changes_files()) {
            for path in effect.paths() {
                if !out.contains(&path) {
                    out.push(path);
                }
            }
        }
        out
    }

    /// The names of the variables the call's commands set (see
    /// [`Effect::Command`]), without repeats.
    pub fn env_names(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for name in self.list().iter().flat_map(Effect::env_names) {
            if !out.contains(&name) {
                out.push(name);
            }
        }
        out
    }

    /// Every path the call names, read or changed, without repeats.
    pub fn paths(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for path in self.list().iter().flat_map(Effect::paths) {
            if !out.contains(&path) {
                out.push(path);
            }
        }
        out
    }

    /// The effects without write contents (for the audit).
    #[must_use]
    pub fn summary(&self) -> Self {
        match self {
            Self::Known(list) => Self::Known(list.iter().map(Effect::summary).collect()),
            Self::Opaque => Self::Opaque,
        }
    }
}

/// A call whose effects cannot be worked out: it could not run either (a
/// patch that does not parse, an edit whose text is not in the file). The
/// gate refuses it with this message, so the model reads why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectsError(String);

impl EffectsError {
    /// An error with a message for the model.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for EffectsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EffectsError {}

impl From<String> for EffectsError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_counts_of_a_change() {
        let cases: &[(Option<&str>, &str, usize, usize, bool)] = &[
            (None, "a\nb\n", 2, 0, true),
            (Some(""), "a\n", 1, 0, false),
            (Some("a\nb\nc\n"), "a\nB\nc\n", 1, 1, false),
            (Some("a\nb\n"), "a\nb\n", 0, 0, false),
            (Some("a\nb\n"), "", 0, 2, false),
            // A repeated line counts as often as it is repeated.
            (Some("x\n"), "x\nx\nx\n", 2, 0, false),
        ];
        for (before, after, added, removed, creates) in cases {
            let change = Change::from_texts(*before, *after);
            assert_eq!(
                (change.lines_added, change.lines_removed, change.creates),
                (*added, *removed, *creates),
                "{before:?} -> {after:?}"
            );
        }
    }

    #[test]
    fn changed_paths_cover_both_ends_of_a_move_once() {
        let effects = Effects::known([
            Effect::read("README.md"),
            Effect::Move {
                from: "a.rs".into(),
                to: "b.rs".into(),
            },
            Effect::write("b.rs", Change::counted(1, 0, false)),
            Effect::Delete {
                path: "c.rs".into(),
                lines_removed: 3,
            },
        ]);
        assert_eq!(effects.changed_paths(), ["a.rs", "b.rs", "c.rs"]);
        assert_eq!(effects.paths(), ["README.md", "a.rs", "b.rs", "c.rs"]);
        assert!(!effects.is_read_only());
        assert!(Effects::known([Effect::read_tree("src")]).is_read_only());
        assert!(Effects::none().is_read_only());
        assert!(!Effects::Opaque.is_read_only());
        assert!(Effects::Opaque.changed_paths().is_empty());
    }

    #[test]
    fn the_audit_summary_drops_contents_only() {
        let effects = Effects::known([Effect::write("a", Change::from_texts(None, "secret\n"))]);
        let json = serde_json::to_value(effects.summary()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"known": [{"kind": "write", "path": "a",
                "change": {"lines_added": 1, "lines_removed": 0, "creates": true}}]})
        );
        assert_eq!(
            serde_json::to_value(Effects::Opaque).unwrap(),
            serde_json::json!("opaque")
        );
    }
}
