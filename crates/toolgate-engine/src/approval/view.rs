//! The one description of a call waiting for a person: [`ApprovalView`].
//!
//! Every front end renders this value and nothing else: the terminal
//! prompt, the web UI card, MCP elicitation messages, `--json` events and
//! reports. So the terminal and the page say the same words, and nothing a
//! front end leaves out can be something that runs.
//!
//! # Rules
//!
//! 1. The view is built once per question from the call's declared
//!    [`Effects`], never from the tool's name: a write shows the unified
//!    diff against the file as it is now and whether the file exists; a
//!    command shows the line exactly as it will run, its class and the
//!    reason, the programs it starts, the sandbox profile and whether it
//!    may reach the network; a call whose effects cannot be known shows its
//!    origin (MCP server and tool, or a model-written tool) and its
//!    arguments whole.
//! 2. Texts are kept whole and exact. Shortening for a screen is the
//!    renderer's job ([`ApprovalView::lines`], [`fold`](super::fold)), which
//!    says exactly how much it left out.
//! 3. Texts are raw here (exact JSON for machines). What reaches a person
//!    goes through [`toolgate_core::neutralize`] first.
//! 4. After the person answers, the gate builds the view again; if what the
//!    call would do changed meanwhile (the file was edited, say), the call
//!    does not run.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolgate_core::{
    CommandClass, CommandPlan, Effect, Effects, Sensitivity, ToolOrigin, Workspace, unified_diff,
};

/// A file larger than this is not read to show a diff against it; the view
/// then says it replaces a file of that size and shows the new content.
const MAX_DIFF_SOURCE: u64 = 8 * 1024 * 1024;

/// What a person is asked to allow (see the rules atop `approval/view.rs`).
///
/// # Wire format
///
/// Serialized as an object: `tool`, `call_id`, `reason`, `rule` (or null),
/// `origin` (`{"kind": "builtin"}`, `{"kind": "mcp", "server", "tool"}`,
/// `{"kind": "dynamic"}`), `opaque`, `scope` (who asks: the run, an MCP
/// client's session), `actions` (see [`Action`]) and `arguments` (the call's
/// arguments, pretty-printed JSON, when they are needed to know what runs:
/// opaque calls and calls that declare nothing; else null). It reads back
/// (`Deserialize`) as it was written, so that a view kept in a store is
/// shown by another process exactly as the asking gate built it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ApprovalView {
    /// The tool's name.
    pub tool: String,
    /// The call's id.
    pub call_id: String,
    /// Why the person is asked, in words.
    pub reason: String,
    /// The `confirmation.rules` rule that asks, when one does.
    pub rule: Option<String>,
    /// Where the tool comes from.
    pub origin: ToolOrigin,
    /// Whether toolgate cannot know what the call does.
    pub opaque: bool,
    /// On whose behalf it would run: the run, an MCP client's session.
    pub scope: String,
    /// What the call would do, one entry per declared effect.
    pub actions: Vec<Action>,
    /// The arguments, pretty-printed, when the actions do not say
    /// everything that runs.
    pub arguments: Option<String>,
}

/// One thing the call would do.
///
/// # Wire format
///
/// Tagged by `kind`: `command`, `write`, `delete`, `move`, `network`,
/// `read`. Every entry has `summary`, the words both the terminal and the
/// web UI show for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Action {
    /// Runs a command line (or sends text to a running process).
    Command {
        /// "runs a command in the standard sandbox …".
        summary: String,
        /// The line, exactly as it will run.
        command: String,
        /// The directory, when not the workspace root.
        cwd: Option<String>,
        /// Variables set for it, with their values.
        env: BTreeMap<String, String>,
        /// `safe`, `dev` or `dangerous`.
        class: Option<CommandClass>,
        /// Why it has that class.
        class_reason: Option<String>,
        /// The programs it starts.
        programs: Vec<String>,
        /// `read-only`, `standard`, `partial` or `unconfined`.
        profile: Option<String>,
        /// Whether it may reach the network.
        network: Option<bool>,
    },
    /// Creates or replaces a file.
    Write {
        /// "replaces an existing file of 5 lines (120 bytes) with …".
        summary: String,
        /// The file.
        path: String,
        /// The file as it is now, when it exists.
        existing: Option<FileSize>,
        /// The file as the call would leave it, when known.
        new: Option<FileSize>,
        /// Lines added.
        lines_added: usize,
        /// Lines removed.
        lines_removed: usize,
        /// The unified diff against the file as it is now, when both texts
        /// are known.
        diff: Option<String>,
        /// The new content whole, when it is known but no diff can be
        /// shown (the old file is binary or too large to read).
        content: Option<String>,
    },
    /// Removes a file.
    Delete {
        /// "deletes a file of 12 lines".
        summary: String,
        /// The file.
        path: String,
        /// Lines it holds (0 when unknown).
        lines: usize,
    },
    /// Renames a file.
    Move {
        /// "renames a.rs to b.rs".
        summary: String,
        /// The name now.
        from: String,
        /// The new name.
        to: String,
    },
    /// Reaches the network.
    Network {
        /// "reaches https://…".
        summary: String,
        /// The URL or `host:port`.
        url: String,
    },
    /// Reads a file or a tree.
    Read {
        /// "reads src/a.rs".
        summary: String,
        /// The file or directory.
        path: String,
        /// Whether everything beneath it.
        tree: bool,
    },
}

impl Action {
    /// The words both front ends show for it.
    pub fn summary(&self) -> &str {
        match self {
            Self::Command { summary, .. }
            | Self::Write { summary, .. }
            | Self::Delete { summary, .. }
            | Self::Move { summary, .. }
            | Self::Network { summary, .. }
            | Self::Read { summary, .. } => summary,
        }
    }
}

/// The size of a file's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSize {
    /// Lines (a last line without a newline counts).
    pub lines: usize,
    /// Bytes.
    pub bytes: usize,
}

impl FileSize {
    fn of(text: &str) -> Self {
        Self {
            lines: text.lines().count(),
            bytes: text.len(),
        }
    }

    fn of_bytes(bytes: u64) -> Self {
        Self {
            lines: 0,
            bytes: usize::try_from(bytes).unwrap_or(usize::MAX),
        }
    }
}

impl std::fmt::Display for FileSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.lines == 0 && self.bytes > 0 {
            return write!(f, "{}", bytes(self.bytes));
        }
        write!(
            f,
            "{} ({})",
            count(self.lines, "line", "lines"),
            bytes(self.bytes)
        )
    }
}

/// `1 line`, `3 lines`.
pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `1 byte`, `120 bytes`, `3,257 bytes`.
pub(crate) fn bytes(n: usize) -> String {
    count_grouped(n, "byte", "bytes")
}

/// `n` with thousands separated by commas, and its unit.
pub(crate) fn count_grouped(n: usize, one: &str, many: &str) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    format!("{out} {}", if n == 1 { one } else { many })
}

/// What the view is built from: the call as the gate holds it at step 5.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Subject<'a> {
    pub(crate) tool: &'a str,
    pub(crate) call_id: &'a str,
    pub(crate) args: &'a Value,
    pub(crate) effects: &'a Effects,
    pub(crate) sensitivity: Sensitivity,
    pub(crate) rule: Option<&'a str>,
    pub(crate) origin: &'a ToolOrigin,
    pub(crate) scope: &'a str,
}

impl ApprovalView {
    /// The view of a call of a built-in `tool` as the gate would show it,
    /// without reading any file (a write shows its new content, not a
    /// diff), for the default scope: for approvers' tests and for library
    /// users who ask outside the gate.
    pub fn new(
        tool: &str,
        call_id: &str,
        args: &Value,
        effects: &Effects,
        sensitivity: Sensitivity,
    ) -> Self {
        Self::build(
            Subject {
                tool,
                call_id,
                args,
                effects,
                sensitivity,
                rule: None,
                origin: &ToolOrigin::Builtin,
                scope: "this run",
            },
            None,
        )
    }

    /// The view of `subject`, reading the files it writes from `workspace`
    /// (when given) to show diffs.
    pub(crate) fn build(subject: Subject<'_>, workspace: Option<&Workspace>) -> Self {
        let actions: Vec<Action> = subject
            .effects
            .list()
            .iter()
            .map(|effect| action(effect, subject.sensitivity, workspace))
            .collect();
        let opaque = subject.effects.is_opaque();
        let arguments = (opaque || actions.is_empty()).then(|| {
            serde_json::to_string_pretty(subject.args).unwrap_or_else(|_| subject.args.to_string())
        });
        Self {
            tool: subject.tool.to_owned(),
            call_id: subject.call_id.to_owned(),
            reason: reason(&subject),
            rule: subject.rule.map(str::to_owned),
            origin: subject.origin.clone(),
            opaque,
            scope: subject.scope.to_owned(),
            actions,
            arguments,
        }
    }
}

/// Why the person is asked.
fn reason(subject: &Subject<'_>) -> String {
    if let Some(rule) = subject.rule {
        return format!("asked by {rule} in confirmation.rules");
    }
    let effects = subject.effects.list();
    match subject.sensitivity {
        Sensitivity::ReadOnly => "confirm-all asks for every call".to_owned(),
        Sensitivity::Command(class) => {
            let why = effects.iter().find_map(|e| match e {
                Effect::Command {
                    plan: Some(plan), ..
                } => Some(plan.reason.as_str()),
                _ => None,
            });
            match why {
                Some(why) => format!("command classified {}: {why}", class.as_str()),
                None => format!("command classified {}", class.as_str()),
            }
        }
        _ if subject.effects.is_opaque() => match subject.origin {
            ToolOrigin::Mcp { server, .. } => format!(
                "what it does cannot be known in advance: a tool of the MCP server `{server}`"
            ),
            ToolOrigin::Dynamic => {
                "what it does cannot be known in advance: a tool a model wrote".to_owned()
            }
            _ => "what it does cannot be known in advance".to_owned(),
        },
        _ if effects.iter().any(Effect::changes_files) => "it changes files".to_owned(),
        _ if effects.iter().any(|e| matches!(e, Effect::Command { .. })) => {
            "it runs a command".to_owned()
        }
        _ if effects.iter().any(|e| matches!(e, Effect::Network { .. })) => {
            "it reaches the network".to_owned()
        }
        _ => "it can change things".to_owned(),
    }
}

fn action(effect: &Effect, sensitivity: Sensitivity, workspace: Option<&Workspace>) -> Action {
    match effect {
        Effect::Command {
            command,
            cwd,
            env,
            plan,
            ..
        } => command_action(command, cwd.as_deref(), env, plan.as_ref(), sensitivity),
        Effect::Write { path, change } => {
            let before = workspace.map_or(Before::Unknown, |ws| before(ws, path));
            write_action(path, change, &before)
        }
        Effect::Delete {
            path,
            lines_removed,
        } => Action::Delete {
            summary: if *lines_removed > 0 {
                format!(
                    "deletes a file of {}",
                    count(*lines_removed, "line", "lines")
                )
            } else {
                "deletes a file".to_owned()
            },
            path: path.clone(),
            lines: *lines_removed,
        },
        Effect::Move { from, to } => Action::Move {
            summary: format!("renames {from} to {to}"),
            from: from.clone(),
            to: to.clone(),
        },
        Effect::Network { url } => Action::Network {
            summary: format!("reaches {url}"),
            url: url.clone(),
        },
        Effect::Read { path, tree } => Action::Read {
            summary: if *tree {
                format!("reads everything under {path}")
            } else {
                format!("reads {path}")
            },
            path: path.clone(),
            tree: *tree,
        },
        // A kind of effect this version does not know: say so rather than
        // show nothing.
        other => Action::Read {
            summary: format!("does something this toolgate cannot describe ({other:?})"),
            path: String::new(),
            tree: false,
        },
    }
}

fn command_action(
    command: &str,
    cwd: Option<&str>,
    env: &BTreeMap<String, String>,
    plan: Option<&CommandPlan>,
    sensitivity: Sensitivity,
) -> Action {
    let class = plan.map(|p| p.class).or(match sensitivity {
        Sensitivity::Command(class) => Some(class),
        _ => None,
    });
    let mut summary = match plan {
        Some(plan) => format!("runs a command in the {}", plan.profile.describe()),
        // Text for a process that is already running (`process write`).
        None => "sends text to a running process, which may run it as commands".to_owned(),
    };
    if let Some(plan) = plan {
        summary.push_str(if plan.network {
            "; it may reach the network"
        } else {
            "; no network"
        });
    }
    if let Some(cwd) = cwd {
        summary.push_str("; in ");
        summary.push_str(cwd);
    }
    Action::Command {
        summary,
        command: command.to_owned(),
        cwd: cwd.map(str::to_owned),
        env: env.clone(),
        class,
        class_reason: plan.map(|p| p.reason.clone()),
        programs: plan.map(|p| p.programs.clone()).unwrap_or_default(),
        profile: plan.map(|p| p.profile.as_str().to_owned()),
        network: plan.map(|p| p.network),
    }
}

/// What a file holds before the call.
enum Before {
    /// It does not exist.
    Absent,
    /// Its text.
    Text(String),
    /// It exists but its text cannot be shown (binary, too large): its size.
    Opaque(u64),
    /// Not known (no workspace to read it from, or a path outside it).
    Unknown,
}

fn before(workspace: &Workspace, path: &str) -> Before {
    let Ok(resolved) = workspace.resolve(path) else {
        return Before::Unknown;
    };
    let Ok(meta) = workspace.metadata(&resolved) else {
        return Before::Absent;
    };
    if !meta.is_file() {
        return Before::Unknown;
    }
    if meta.len() > MAX_DIFF_SOURCE {
        return Before::Opaque(meta.len());
    }
    match workspace.read_limited(&resolved, MAX_DIFF_SOURCE) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Before::Text(text),
            Err(bytes) => Before::Opaque(bytes.as_bytes().len() as u64),
        },
        Err(_) => Before::Unknown,
    }
}

fn write_action(path: &str, change: &toolgate_core::Change, before: &Before) -> Action {
    let new = change.content.as_deref().map(FileSize::of);
    let existing = match before {
        Before::Text(text) => Some(FileSize::of(text)),
        Before::Opaque(size) => Some(FileSize::of_bytes(*size)),
        Before::Absent | Before::Unknown => None,
    };
    let creates = match before {
        Before::Absent => true,
        Before::Text(_) | Before::Opaque(_) => false,
        Before::Unknown => change.creates,
    };
    let delta = format!("+{} −{} lines", change.lines_added, change.lines_removed);
    let summary = match (creates, existing, new) {
        (true, _, Some(new)) => format!("creates a new file of {new}"),
        (true, _, None) => format!("creates a new file ({delta})"),
        (false, Some(old), Some(new)) => {
            format!("replaces an existing file of {old} with {new}; {delta}")
        }
        (false, Some(old), None) => format!("changes an existing file of {old}; {delta}"),
        (false, None, Some(new)) => format!("replaces an existing file with {new}; {delta}"),
        (false, None, None) => format!("changes an existing file; {delta}"),
    };
    let (diff, content) = match (before, change.content.as_deref()) {
        (Before::Text(old), Some(new)) => (Some(unified_diff(path, old, new)), None),
        (Before::Absent, Some(new)) => (Some(unified_diff(path, "", new)), None),
        (Before::Opaque(_) | Before::Unknown, Some(new)) => (None, Some(new.to_owned())),
        (_, None) => (None, None),
    };
    Action::Write {
        summary,
        path: path.to_owned(),
        existing,
        new,
        lines_added: change.lines_added,
        lines_removed: change.lines_removed,
        diff,
        content,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolgate_core::{Change, SandboxProfile};

    fn subject<'a>(
        effects: &'a Effects,
        args: &'a Value,
        sensitivity: Sensitivity,
        origin: &'a ToolOrigin,
    ) -> Subject<'a> {
        Subject {
            tool: "t",
            call_id: "c1",
            args,
            effects,
            sensitivity,
            rule: None,
            origin,
            scope: "this run",
        }
    }

    #[test]
    fn a_write_over_an_existing_file_says_so_and_shows_the_diff() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "1\n2\n3\n4\n5\n").unwrap();
        let ws = Workspace::builder(dir.path()).build().unwrap();
        let effects = Effects::known([Effect::write(
            "a.txt",
            Change::from_texts(Some("1\n2\n3\n4\n5\n"), "1\nx\n"),
        )]);
        let args = json!({});
        let view = ApprovalView::build(
            subject(
                &effects,
                &args,
                Sensitivity::Sensitive,
                &ToolOrigin::Builtin,
            ),
            Some(&ws),
        );
        let Action::Write {
            summary,
            diff,
            existing,
            ..
        } = &view.actions[0]
        else {
            panic!("{view:?}")
        };
        assert_eq!(
            summary,
            "replaces an existing file of 5 lines (10 bytes) with 2 lines (4 bytes); +1 −4 lines"
        );
        assert_eq!(existing.unwrap().lines, 5);
        let diff = diff.as_deref().unwrap();
        assert!(diff.contains("-2\n-3\n-4\n-5\n+x\n"), "{diff}");
        assert_eq!(view.reason, "it changes files");
        assert_eq!(view.arguments, None);
        // Kept in a store and shown by another process: the same view.
        let stored = serde_json::to_string(&view).unwrap();
        let read: ApprovalView = serde_json::from_str(&stored).unwrap();
        assert_eq!(read, view);
        assert_eq!(read.lines(), view.lines());
    }

    #[test]
    fn a_new_file_is_created_and_shown_whole() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::builder(dir.path()).build().unwrap();
        let effects = Effects::known([Effect::write("n.txt", Change::from_texts(None, "hi\n"))]);
        let args = json!({});
        let view = ApprovalView::build(
            subject(
                &effects,
                &args,
                Sensitivity::Sensitive,
                &ToolOrigin::Builtin,
            ),
            Some(&ws),
        );
        assert_eq!(
            view.actions[0].summary(),
            "creates a new file of 1 line (3 bytes)"
        );
    }

    #[test]
    fn a_command_says_its_class_reason_programs_and_profile() {
        let plan = CommandPlan::new(
            CommandClass::Dangerous,
            "`rm -r` deletes files",
            vec!["rm".into()],
            SandboxProfile::Standard,
            true,
        );
        let effects = Effects::known([Effect::command("rm -r build", None).with_plan(plan)]);
        let args = json!({});
        let view = ApprovalView::build(
            subject(
                &effects,
                &args,
                Sensitivity::Command(CommandClass::Dangerous),
                &ToolOrigin::Builtin,
            ),
            None,
        );
        assert_eq!(
            view.reason,
            "command classified dangerous: `rm -r` deletes files"
        );
        assert_eq!(
            view.actions[0].summary(),
            "runs a command in the standard sandbox: writes only in the workspace and temp; \
             it may reach the network"
        );
    }

    #[test]
    fn an_opaque_call_names_its_server_and_shows_its_arguments() {
        let origin = ToolOrigin::Mcp {
            server: "fs".into(),
            tool: "write".into(),
        };
        let args = json!({"path": "x", "content": "y"});
        let view = ApprovalView::build(
            subject(&Effects::Opaque, &args, Sensitivity::Sensitive, &origin),
            None,
        );
        assert!(view.opaque);
        assert!(view.reason.contains("MCP server `fs`"), "{}", view.reason);
        assert!(
            view.arguments
                .as_deref()
                .unwrap()
                .contains("\"content\": \"y\"")
        );
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        let cases: &[(usize, &str)] = &[
            (0, "0 bytes"),
            (1, "1 byte"),
            (999, "999 bytes"),
            (1000, "1,000 bytes"),
            (20_000, "20,000 bytes"),
            (1_234_567, "1,234,567 bytes"),
        ];
        for (n, text) in cases {
            assert_eq!(bytes(*n), *text);
        }
    }
}
