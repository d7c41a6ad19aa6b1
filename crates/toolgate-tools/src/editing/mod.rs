//! Editing tools: `edit_file` (exact replacement) and `apply_patch`
//! (unified diffs and the envelope format), seed 000 F9.
//!
//! The text work is pure and lives in [`crate::edit`] and [`crate::patch`];
//! this module reads and writes through the [`Workspace`] and keeps a call
//! all-or-nothing.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use toolgate_core::{
    Change, Effect, Effects, EffectsError, Sensitivity, ToolContext, ToolResult, TypedTool,
    Workspace, WorkspaceError, WsPath,
};

use crate::edit::{EditOutcome, replace_exact, unified_diff};
use crate::effects::{is_policy, named};
use crate::fs::decode_text;

mod apply_patch;

pub use apply_patch::{ApplyPatch, ApplyPatchArgs};

/// The largest file the editing tools load, in bytes. Edits are applied in
/// memory; this keeps one call from loading an arbitrarily large file.
/// `write_file` and `delete_file` read no more than this to declare their
/// effects.
pub(crate) const MAX_EDIT_SIZE: u64 = 256 * 1024 * 1024;

/// Runs blocking file-system work off the async worker threads.
async fn blocking(
    work: impl FnOnce() -> Result<ToolResult, String> + Send + 'static,
) -> ToolResult {
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(result)) => result,
        Ok(Err(message)) => ToolResult::failure(message),
        Err(error) => {
            ToolResult::failure(format!("internal error: the edit did not finish ({error})"))
        }
    }
}

/// Why a change could not be worked out in memory. `run` refuses the call
/// with the message whatever the variant; `effects` tells them apart.
#[derive(Debug)]
enum PlanError {
    /// The call cannot run, whatever the policy: `effects` refuses it with
    /// the same message.
    Refused(String),
    /// The workspace's policy refuses the file (sensitive, protected,
    /// outside): `effects` declares the change from the arguments alone and
    /// leaves the refusal to the gate's guardrails and to `run`.
    Policy(String),
    /// Declaring only: the built-in matcher cannot place a hunk, and GNU
    /// `patch`, which `run` would try next and `effects` may not start,
    /// might. `effects` declares the line counts of the hunks.
    ForGnuPatch(String),
}

impl PlanError {
    /// A workspace error, as a policy refusal or a plain one.
    fn workspace(error: &WorkspaceError, message: String) -> Self {
        if is_policy(error) {
            Self::Policy(message)
        } else {
            Self::Refused(message)
        }
    }

    /// The message `run` refuses the call with.
    fn into_message(self) -> String {
        match self {
            Self::Refused(message) | Self::Policy(message) | Self::ForGnuPatch(message) => message,
        }
    }
}

fn read_text(workspace: &Workspace, path: &WsPath) -> Result<String, PlanError> {
    let display = workspace.display(path);
    let bytes = workspace
        .read_limited(path, MAX_EDIT_SIZE)
        .map_err(|e| PlanError::workspace(&e, crate::fs::describe_missing(workspace, &e, false)))?;
    decode_text(&display, bytes).map_err(PlanError::Refused)
}

// ---------------------------------------------------------------- edit_file

/// Arguments of `edit_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// File path, relative to the workspace.
    pub path: String,
    /// The exact text to replace, indentation included.
    pub old_str: String,
    /// The text to put in its place.
    pub new_str: String,
    /// Replace every occurrence, not exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

/// `edit_file`: replaces one exact block of text and returns the diff.
///
/// # Rules
///
/// 1. The file must be writable by the workspace's policy; it is checked
///    before it is read, so a protected file gets that reason.
/// 2. The text is replaced by [`replace_exact`] (its rules: uniqueness, line
///    endings, BOM) and the file written atomically.
/// 3. Its effect is one [`Effect::Write`] with the content the same
///    [`replace_exact`] computes from the file as it is now; an edit that
///    cannot apply (text not found, not unique, a missing or binary file)
///    is refused with `run`'s message. A file the policy refuses is
///    declared by its path, with the lines of `old_str` and `new_str` as
///    the change (the refusal is the gate's and `run`'s).
#[derive(Debug, Clone)]
pub struct EditFile {
    workspace: Workspace,
}

impl EditFile {
    /// An `edit_file` over `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        Self { workspace }
    }
}

#[async_trait]
impl TypedTool for EditFile {
    type Args = EditFileArgs;
    const NAME: &'static str = "edit_file";
    const DESCRIPTION: &'static str = "Replace `old_str` with `new_str` in a file. `old_str` must match exactly once, whitespace included; add nearby lines to make it unique. Example: {\"path\": \"src/app.py\", \"old_str\": \"x = 1\", \"new_str\": \"x = 2\"}";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;
    const WRITES_FILES: bool = true;

    fn effects(&self, args: &EditFileArgs) -> Result<Effects, EffectsError> {
        match plan_edit(&self.workspace, args) {
            Ok(planned) => Ok(Effects::known([Effect::write(
                planned.display,
                Change::from_texts(Some(&planned.original), planned.outcome.content),
            )])),
            Err(PlanError::Policy(_)) => {
                let target = named(&self.workspace, &args.path)?;
                let change = Change::counted(
                    args.new_str.lines().count(),
                    args.old_str.lines().count(),
                    false,
                );
                Ok(Effects::known([Effect::write(target.display, change)]))
            }
            Err(error) => Err(EffectsError::new(error.into_message())),
        }
    }

    async fn run(&self, args: EditFileArgs, _ctx: &ToolContext) -> ToolResult {
        let workspace = self.workspace.clone();
        blocking(move || {
            let PlannedEdit {
                path,
                display,
                original,
                outcome,
            } = plan_edit(&workspace, &args).map_err(PlanError::into_message)?;
            workspace
                .write_atomic(&path, outcome.content.as_bytes())
                .map_err(|e| e.to_string())?;
            let diff = unified_diff(&display, &original, &outcome.content);
            let (added, removed) = count_changes(&diff);
            let places = if outcome.replacements == 1 {
                "1 place"
            } else {
                "places"
            };
            let summary = if outcome.replacements == 1 {
                format!(
                    "edited `{display}` at line {} (+{added} -{removed})",
                    outcome.first_line
                )
            } else {
                format!(
                    "edited `{display}` in {} {places}, first at line {} (+{added} -{removed})",
                    outcome.replacements, outcome.first_line
                )
            };
            Ok(ToolResult::success(format!("{summary}\n{diff}"))
                .with_metadata("path", display)
                .with_metadata("replacements", outcome.replacements)
                .with_metadata("first_line", outcome.first_line)
                .with_metadata("lines_added", added)
                .with_metadata("lines_removed", removed)
                .with_metadata("diff", diff))
        })
        .await
    }
}

/// An edit worked out in memory: what `run` writes and `effects` declares.
struct PlannedEdit {
    path: WsPath,
    display: String,
    /// The file's text now.
    original: String,
    outcome: EditOutcome,
}

/// Works out an edit (rules 1 and 2 on [`EditFile`]) without writing.
fn plan_edit(workspace: &Workspace, args: &EditFileArgs) -> Result<PlannedEdit, PlanError> {
    let path = workspace
        .resolve(&args.path)
        .map_err(|e| PlanError::workspace(&e, e.to_string()))?;
    let display = workspace.display(&path);
    // Refused before reading, so that a protected file gets the reason
    // rather than a diff it cannot have.
    workspace
        .check_write(&path)
        .map_err(|e| PlanError::workspace(&e, e.to_string()))?;
    let original = read_text(workspace, &path)?;
    let outcome = replace_exact(&original, &args.old_str, &args.new_str, args.replace_all)
        .map_err(|error| PlanError::Refused(format!("cannot edit `{display}`: {error}")))?;
    Ok(PlannedEdit {
        path,
        display,
        original,
        outcome,
    })
}

/// Lines added and removed according to a unified diff.
fn count_changes(diff: &str) -> (usize, usize) {
    let mut added = 0;
    let mut removed = 0;
    for line in diff.lines() {
        if line.starts_with("+++") || line.starts_with("---") {
            continue;
        }
        if line.starts_with('+') {
            added += 1;
        } else if line.starts_with('-') {
            removed += 1;
        }
    }
    (added, removed)
}
