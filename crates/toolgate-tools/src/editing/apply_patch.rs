//! `apply_patch`: unified diffs and the envelope format, all or nothing,
//! with GNU `patch` (in the sandbox) for hunks the built-in matcher cannot
//! place.

use std::fmt::Write as _;
use std::path::Path;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolgate_core::{
    Change, Effect, Effects, EffectsError, Sensitivity, ToolContext, ToolResult, TypedTool,
    Workspace, WorkspaceError, WsPath,
};
use toolgate_sandbox::{Sandbox, Spawn};

use super::{MAX_EDIT_SIZE, PlanError, blocking};
use crate::edit::unified_diff;
use crate::effects::named;
use crate::fs::decode_text;
use crate::patch::{self, FileKind, FilePatch, HunkLine, Patch, PatchFormat};

// -------------------------------------------------------------- apply_patch

/// Arguments of `apply_patch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchArgs {
    /// The patch text: `--- a/x` / `+++ b/x` headers and `@@` hunks.
    pub patch: String,
    /// The file to patch, for a single-file patch (wins over its headers).
    pub path: Option<String>,
}

/// `apply_patch`: applies a whole patch, or nothing.
///
/// # Rules
///
/// 1. The patch is parsed whole first ([`patch::parse`]); a parse error
///    changes nothing. With `path`, a patch of bare hunks (starting with
///    `@@`) gets `--- a/PATH` / `+++ b/PATH` headers, and the one file the
///    patch changes is `path`, whatever its headers say (and without a
///    rename); `path` with a patch of several files is refused.
/// 2. A patch that deletes a file (unified `+++ /dev/null`, git's
///    `deleted file mode`, the envelope's `*** Delete File:`) is refused
///    whole, naming the files, unless deletion is allowed
///    ([`allow_delete`](Self::allow_delete), `workspace.allow_delete`).
///    A rename (`rename from`/`rename to`, `*** Move to:`) is not a
///    deletion: the content lives on under the new name, so it is allowed
///    either way; it writes the destination and removes the source, and
///    both must be writable (rule 3).
/// 3. Every file the patch would write, create, remove or rename, on both
///    ends of a rename, is checked against the workspace's policy
///    ([`Workspace::check_write`]: sensitive and protected files) before
///    anything is written; one refusal refuses the whole patch.
/// 4. Every hunk of every file is placed in memory; one that cannot be
///    placed refuses the whole patch.
/// 5. Only then are the files written; if a write still fails, the files
///    already written are restored.
/// 6. Its effects are worked out by the same parse and the same planning,
///    in memory, for every file in patch order: an update is an
///    [`Effect::Write`] with the planned content, an addition a `Write`
///    that creates, a deletion an [`Effect::Delete`], a rename an
///    [`Effect::Move`] plus a `Write` on its destination when the content
///    changes. Nothing is written and GNU `patch` is not started: a hunk
///    only it might place (when it is configured) is declared by its line
///    counts, without content. A file the policy refuses (rules 2 and 3)
///    is declared from the patch alone (its paths, the line counts of its
///    hunks), and so is every later file that cannot be planned, since
///    `run` refuses for the policy first. A patch `run` would refuse for any
///    other reason (rules 1 and 4, a missing file, a rename onto an
///    existing file) is refused with `run`'s message.
#[derive(Debug, Clone)]
pub struct ApplyPatch {
    workspace: Workspace,
    allow_delete: bool,
    sandbox: Option<Sandbox>,
}

impl ApplyPatch {
    /// An `apply_patch` over `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        Self {
            workspace,
            allow_delete: false,
            sandbox: None,
        }
    }

    /// Lets a hunk the built-in matcher cannot place be retried by GNU
    /// `patch` (seed 000's second chance), run in `sandbox` like every
    /// process toolgate starts. By default, there is no fallback.
    #[must_use]
    pub fn gnu_patch_in(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// Sets whether a patch may delete files (rule 2 in the
    /// [type docs](Self)). By default, it may not, as `delete_file` may not
    /// (seed 000: deletion is off unless `workspace.allow_delete`).
    #[must_use]
    pub fn allow_delete(mut self, allow: bool) -> Self {
        self.allow_delete = allow;
        self
    }
}

#[async_trait]
impl TypedTool for ApplyPatch {
    type Args = ApplyPatchArgs;
    const NAME: &'static str = "apply_patch";
    const DESCRIPTION: &'static str = "Apply a unified diff (or a `*** Begin Patch` envelope) to one or more files, all or nothing. Hunks are placed by their context.";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;
    const WRITES_FILES: bool = true;

    fn effects(&self, args: &ApplyPatchArgs) -> Result<Effects, EffectsError> {
        let workspace = &self.workspace;
        let parsed = parse_call(args).map_err(EffectsError::new)?;
        let path_override = args.path.as_deref();
        let planning = Planning::Declare {
            gnu_fallback: self.sandbox.is_some(),
        };
        // Once `run` would refuse by policy, it gives that reason and goes
        // no further: no later file can make it refuse for another one, so
        // a file that cannot be planned is then declared from the patch.
        let mut refused_by_policy =
            !self.allow_delete && deletion_refusal(parsed.files(), path_override).is_some();
        let mut effects = Vec::new();
        for file in parsed.files() {
            match plan_file(workspace, file, path_override, planning) {
                Ok(planned) => effects.extend(planned_effects(workspace, &planned)),
                Err(PlanError::Refused(message)) if !refused_by_policy => {
                    return Err(EffectsError::new(message));
                }
                Err(error) => {
                    refused_by_policy |= matches!(error, PlanError::Policy(_));
                    effects.extend(patch_effects(workspace, file, path_override)?);
                }
            }
        }
        Ok(Effects::known(effects))
    }

    async fn run(&self, args: ApplyPatchArgs, _ctx: &ToolContext) -> ToolResult {
        let workspace = self.workspace.clone();
        let allow_delete = self.allow_delete;
        let sandbox = self.sandbox.clone();
        blocking(move || apply_patch(&workspace, &args, allow_delete, sandbox.as_ref())).await
    }
}

/// One file's planned change, fully computed before anything is written.
struct Planned {
    /// Where the original text came from (and is removed from, for a
    /// deletion or a move).
    source: WsPath,
    /// Where the new text goes; `None` for a deletion.
    target: Option<WsPath>,
    /// The text before, `None` when the file did not exist.
    before: Option<String>,
    /// The text after (empty for a deletion).
    after: String,
    summary: String,
}

/// How [`plan_file`] treats what only running the patch settles.
#[derive(Debug, Clone, Copy)]
enum Planning<'a> {
    /// For `run`: a hunk the built-in matcher cannot place is retried by
    /// GNU `patch` in `sandbox`, when there is one.
    Apply { sandbox: Option<&'a Sandbox> },
    /// For `effects`: no process is started; `gnu_fallback` says whether
    /// `run` would retry with GNU `patch`.
    Declare { gnu_fallback: bool },
}

/// The patch a call applies (rule 1 on [`ApplyPatch`]): bare hunks get
/// headers for `path`, then the text is parsed by [`patch::parse`]; `path`
/// with several files is refused. The error is the message for the model.
fn parse_call(args: &ApplyPatchArgs) -> Result<Patch, String> {
    // Bare hunks with `path` given: the path stands in for the headers a
    // model often leaves out once it has named the file.
    let with_headers;
    let text = match &args.path {
        Some(path) if args.patch.trim_start().starts_with("@@") => {
            with_headers = format!("--- a/{path}\n+++ b/{path}\n{}", args.patch.trim_start());
            &with_headers
        }
        _ => &args.patch,
    };
    let parsed = patch::parse(text).map_err(|error| format!("cannot parse the patch: {error}"))?;
    let files = parsed.files();
    if args.path.is_some() && files.len() != 1 {
        return Err(format!(
            "`path` can only be given with a patch of one file, and this patch changes {} files; \
             leave `path` out and let the patch's headers name the files",
            files.len()
        ));
    }
    Ok(parsed)
}

/// The refusal of a patch that deletes files, naming them, for a workspace
/// where deleting is off (rule 2 on [`ApplyPatch`]); `None` when the patch
/// deletes nothing.
fn deletion_refusal(files: &[FilePatch], path_override: Option<&str>) -> Option<String> {
    let deleted: Vec<String> = files
        .iter()
        .filter(|file| file.kind() == FileKind::Delete)
        .map(|file| format!("`{}`", path_override.unwrap_or_else(|| file.path())))
        .collect();
    (!deleted.is_empty()).then(|| {
        format!(
            "this patch deletes {} and deleting files is disabled in this workspace \
             (`workspace.allow_delete` is false); no file was changed. Send the patch without \
             the deletion; a person can enable deletion with `workspace.allow_delete: true` \
             in toolgate.yaml",
            deleted.join(", ")
        )
    })
}

/// The file a section reads (and removes, for a deletion or a move): `path`
/// when given, else the name in the patch.
fn source_name<'a>(file: &'a FilePatch, path_override: Option<&'a str>) -> &'a str {
    path_override.unwrap_or_else(|| file.path())
}

/// Where a section writes, when that is not its source: the destination of
/// a rename, unless `path` overrides the patch's names.
fn move_destination<'a>(file: &'a FilePatch, path_override: Option<&str>) -> Option<&'a str> {
    match (file.kind(), path_override) {
        (FileKind::Delete, _) | (_, Some(_)) => None,
        (_, None) => file.move_to(),
    }
}

fn apply_patch(
    workspace: &Workspace,
    args: &ApplyPatchArgs,
    allow_delete: bool,
    sandbox: Option<&Sandbox>,
) -> Result<ToolResult, String> {
    let parsed = parse_call(args)?;
    let files = parsed.files();
    if !allow_delete && let Some(refusal) = deletion_refusal(files, args.path.as_deref()) {
        return Err(refusal);
    }

    // 1. Place every hunk of every file in memory.
    let planning = Planning::Apply { sandbox };
    let mut plan = Vec::with_capacity(files.len());
    for file in files {
        plan.push(
            plan_file(workspace, file, args.path.as_deref(), planning)
                .map_err(PlanError::into_message)?,
        );
    }

    // 2. Write, undoing what was written if a later write fails.
    let mut done: Vec<&Planned> = Vec::new();
    for planned in &plan {
        if let Err(error) = write_planned(workspace, planned) {
            let undo_errors = undo(workspace, &done);
            let mut message = format!("could not write the patch: {error}; ");
            if undo_errors.is_empty() {
                message.push_str("the files already written were restored, so nothing changed");
            } else {
                let _ = write!(
                    message,
                    "restoring the files already written failed too: {}",
                    undo_errors.join("; ")
                );
            }
            return Err(message);
        }
        done.push(planned);
    }

    let mut output = String::new();
    let mut diff = String::new();
    let mut changed = Vec::new();
    for planned in &plan {
        let _ = writeln!(output, "{}", planned.summary);
        let before_name = workspace.display(&planned.source);
        let after_name = planned
            .target
            .as_ref()
            .map_or_else(|| before_name.clone(), |t| workspace.display(t));
        diff.push_str(&file_diff(&before_name, &after_name, planned));
        changed.push(json!({"path": after_name, "from": before_name}));
    }
    output.push_str(&diff);
    Ok(ToolResult::success(output)
        .with_metadata("files", changed)
        .with_metadata(
            "format",
            match parsed.format() {
                PatchFormat::Unified => "unified",
                _ => "envelope",
            },
        )
        .with_metadata("diff", diff))
}

/// Works out one file's change in memory (rules 3 and 4 on
/// [`ApplyPatch`]), for `run` to write or `effects` to declare.
fn plan_file(
    workspace: &Workspace,
    file: &FilePatch,
    path_override: Option<&str>,
    planning: Planning<'_>,
) -> Result<Planned, PlanError> {
    let source = workspace
        .resolve(source_name(file, path_override))
        .map_err(|e| PlanError::workspace(&e, e.to_string()))?;
    let display = workspace.display(&source);
    // The file the patch updates, deletes or moves away, before anything is
    // written (and before reading, so that the reason is the first thing
    // the model reads).
    workspace
        .check_write(&source)
        .map_err(|e| PlanError::workspace(&e, format!("{e}; no file was changed")))?;
    let before = match workspace.read_limited(&source, MAX_EDIT_SIZE) {
        Ok(bytes) => Some(decode_text(&display, bytes).map_err(PlanError::Refused)?),
        Err(WorkspaceError::NotFound { .. }) => None,
        Err(error) => return Err(PlanError::workspace(&error, error.to_string())),
    };
    let kind = file.kind();
    if before.is_none() && kind != FileKind::Add {
        return Err(PlanError::Refused(format!(
            "cannot patch `{display}`: the file does not exist; to create it, use `--- /dev/null` (unified) \
             or `*** Add File:` (envelope)"
        )));
    }
    let original = before.as_deref().unwrap_or_default();
    let (after, mut summary) = match patch::apply_with_report(original, file) {
        Ok(applied) => (applied.content, applied.report.to_string()),
        Err(error) => {
            let message = format!("`{display}`: {error}; no file was changed");
            let gnu_may_place = file.format() == PatchFormat::Unified && kind == FileKind::Update;
            match planning {
                Planning::Apply { sandbox } => {
                    let fallback = gnu_may_place
                        .then(|| sandbox.and_then(|sandbox| gnu_patch(sandbox, original, file)))
                        .flatten();
                    match fallback {
                        Some(content) => (
                            content,
                            "applied by GNU patch after the built-in matcher could not place it"
                                .to_owned(),
                        ),
                        None => return Err(PlanError::Refused(message)),
                    }
                }
                Planning::Declare { gnu_fallback } if gnu_fallback && gnu_may_place => {
                    return Err(PlanError::ForGnuPatch(message));
                }
                Planning::Declare { .. } => return Err(PlanError::Refused(message)),
            }
        }
    };
    let target = match (kind, move_destination(file, path_override)) {
        (FileKind::Delete, _) => None,
        (_, Some(destination)) => Some(
            workspace
                .resolve(destination)
                .map_err(|e| PlanError::workspace(&e, e.to_string()))?,
        ),
        (_, None) => Some(source.clone()),
    };
    // The other end of a move, before anything is written.
    if let Some(target) = target.as_ref().filter(|t| **t != source) {
        workspace
            .check_write(target)
            .map_err(|e| PlanError::workspace(&e, format!("{e}; no file was changed")))?;
    }
    if let Some(target) = target.as_ref().filter(|t| **t != source)
        && workspace.exists(target)
    {
        return Err(PlanError::Refused(format!(
            "cannot move `{display}` to `{}`: that file already exists; no file was changed",
            workspace.display(target)
        )));
    }
    let verb = match (kind, &target) {
        (FileKind::Add, _) => "added".to_owned(),
        (FileKind::Delete, _) => "deleted".to_owned(),
        (_, Some(target)) if *target != source => {
            format!("moved to `{}` and updated", workspace.display(target))
        }
        _ => "updated".to_owned(),
    };
    if kind == FileKind::Delete {
        summary = format!("{} lines removed", original.lines().count());
    }
    Ok(Planned {
        summary: format!("{verb} `{display}`: {summary}"),
        source,
        target,
        before,
        after,
    })
}

/// The effects of a planned file (rule 6 on [`ApplyPatch`]): what
/// [`write_planned`] would do, with the content it would write.
fn planned_effects(workspace: &Workspace, planned: &Planned) -> Vec<Effect> {
    let source = workspace.display(&planned.source);
    let before = planned.before.as_deref();
    let Some(target) = &planned.target else {
        return vec![Effect::Delete {
            path: source,
            lines_removed: before.map_or(0, |text| text.lines().count()),
        }];
    };
    let change = || Change::from_texts(before, planned.after.as_str());
    if *target == planned.source {
        return vec![Effect::write(source, change())];
    }
    let to = workspace.display(target);
    let mut effects = vec![Effect::Move {
        from: source,
        to: to.clone(),
    }];
    if before != Some(planned.after.as_str()) {
        effects.push(Effect::write(to, change()));
    }
    effects
}

/// The effects of a file that could not be planned from its content (a
/// file the policy refuses, a hunk only GNU `patch` might place): its
/// paths and the line counts of its hunks (rule 6 on [`ApplyPatch`]).
fn patch_effects(
    workspace: &Workspace,
    file: &FilePatch,
    path_override: Option<&str>,
) -> Result<Vec<Effect>, EffectsError> {
    let source = named(workspace, source_name(file, path_override))?.display;
    let added = file.hunks().iter().map(patch::Hunk::added).sum();
    let removed = file.hunks().iter().map(patch::Hunk::removed).sum();
    if file.kind() == FileKind::Delete {
        return Ok(vec![Effect::Delete {
            path: source,
            lines_removed: removed,
        }]);
    }
    let creates = file.kind() == FileKind::Add;
    let target = match move_destination(file, path_override) {
        Some(destination) => named(workspace, destination)?.display,
        None => source.clone(),
    };
    if target == source {
        return Ok(vec![Effect::write(
            source,
            Change::counted(added, removed, creates),
        )]);
    }
    let mut effects = vec![Effect::Move {
        from: source,
        to: target.clone(),
    }];
    if !file.hunks().is_empty() {
        effects.push(Effect::write(
            target,
            Change::counted(added, removed, creates),
        ));
    }
    Ok(effects)
}

fn write_planned(workspace: &Workspace, planned: &Planned) -> Result<(), String> {
    match &planned.target {
        None => workspace
            .remove_file(&planned.source)
            .map_err(|e| e.to_string()),
        Some(target) => {
            workspace
                .write_atomic(target, planned.after.as_bytes())
                .map_err(|e| e.to_string())?;
            if *target != planned.source {
                workspace
                    .remove_file(&planned.source)
                    .map_err(|e| e.to_string())?;
            }
            Ok(())
        }
    }
}

/// Puts back what `done` changed, newest first. Returns what could not be
/// restored.
fn undo(workspace: &Workspace, done: &[&Planned]) -> Vec<String> {
    let mut errors = Vec::new();
    for planned in done.iter().rev() {
        // What the patch created (a new file, a move's destination) goes.
        if let Some(target) = planned
            .target
            .as_ref()
            .filter(|t| **t != planned.source || planned.before.is_none())
            && let Err(error) = workspace.remove_file(target)
        {
            errors.push(error.to_string());
        }
        // What it changed or removed comes back.
        if let Some(before) = &planned.before
            && let Err(error) = workspace.write_atomic(&planned.source, before.as_bytes())
        {
            errors.push(error.to_string());
        }
    }
    errors
}

fn file_diff(before_name: &str, after_name: &str, planned: &Planned) -> String {
    let before = planned.before.as_deref().unwrap_or_default();
    let after = if planned.target.is_some() {
        planned.after.as_str()
    } else {
        ""
    };
    let mut diff = unified_diff(after_name, before, after);
    if before_name != after_name {
        diff = diff.replacen(
            &format!("--- a/{after_name}"),
            &format!("--- a/{before_name}"),
            1,
        );
    }
    if planned.before.is_none() {
        diff = diff.replacen(&format!("--- a/{after_name}"), "--- /dev/null", 1);
    }
    if planned.target.is_none() {
        diff = diff.replacen(&format!("+++ b/{after_name}"), "+++ /dev/null", 1);
    }
    diff
}

/// Seed 000's second chance: GNU `patch`, with its own fuzz, on a private
/// copy of the file, in the sandbox (it may write that copy, nothing else).
/// Dry run first; the result is only used if both runs succeed, and it is
/// written back through the workspace like any other. `None` when `patch`
/// is missing or cannot place the hunks either.
fn gnu_patch(sandbox: &Sandbox, original: &str, file: &FilePatch) -> Option<String> {
    let dir = tempfile::tempdir().ok()?;
    let target = dir.path().join("file");
    let diff_path = dir.path().join("change.diff");
    std::fs::write(&target, original).ok()?;
    std::fs::write(&diff_path, to_unified(file)).ok()?;
    let run = |dry: bool| -> Option<bool> {
        let mut args: Vec<std::ffi::OsString> = [
            "--batch",
            "--silent",
            "--forward",
            "--no-backup-if-mismatch",
            "-r",
            "-",
        ]
        .iter()
        .map(Into::into)
        .collect();
        if dry {
            args.push("--dry-run".into());
        }
        args.extend(["-i".into(), diff_path.clone().into(), target.clone().into()]);
        let spawn = Spawn::program("patch", args)
            .cwd(dir.path())
            .writable([dir.path().to_owned()]);
        Some(sandbox.run_blocking(&spawn).ok()?.success())
    };
    if run(true)? && run(false)? {
        return std::fs::read_to_string(Path::new(&target)).ok();
    }
    None
}

/// A file's hunks as a plain unified diff, for GNU `patch`.
fn to_unified(file: &FilePatch) -> String {
    let mut text = String::from("--- a/file\n+++ b/file\n");
    for hunk in file.hunks() {
        let old_count = hunk
            .lines()
            .iter()
            .filter(|l| !matches!(l, HunkLine::Add(_)))
            .count();
        let new_count = hunk
            .lines()
            .iter()
            .filter(|l| !matches!(l, HunkLine::Remove(_)))
            .count();
        let start = hunk.old_start().unwrap_or(1);
        let _ = writeln!(text, "@@ -{start},{old_count} +{start},{new_count} @@");
        let last_old = hunk
            .lines()
            .iter()
            .rposition(|l| !matches!(l, HunkLine::Add(_)));
        let last_new = hunk
            .lines()
            .iter()
            .rposition(|l| !matches!(l, HunkLine::Remove(_)));
        for (index, line) in hunk.lines().iter().enumerate() {
            let (prefix, body) = match line {
                HunkLine::Context(t) => (' ', t),
                HunkLine::Remove(t) => ('-', t),
                HunkLine::Add(t) => ('+', t),
            };
            let _ = writeln!(text, "{prefix}{body}");
            let no_newline = (Some(index) == last_old
                && hunk.old_missing_newline()
                && !matches!(line, HunkLine::Add(_)))
                || (Some(index) == last_new
                    && hunk.new_missing_newline()
                    && !matches!(line, HunkLine::Remove(_)));
            if no_newline {
                text.push_str("\\ No newline at end of file\n");
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_file(diff: &str) -> FilePatch {
        patch::parse(diff).unwrap().into_files().remove(0)
    }

    /// The fallback hands GNU patch an equivalent diff and takes its result;
    /// both engines must agree on a patch both can place.
    #[test]
    fn gnu_fallback_agrees_with_the_builtin_engine() {
        let original = "a\nb\nc\nd\ne\nf\ng\n";
        let cases = [
            "--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n",
            // Shifted line numbers.
            "--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n d\n e\n+E2\n f\n",
            // Two hunks, the last one without a final newline.
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n@@ -6,2 +6,2 @@\n f\n-g\n+G\n\\ No newline at end of file\n",
        ];
        let dir = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::builder(dir.path()).build().unwrap();
        for diff in cases {
            let file = one_file(diff);
            let ours = patch::apply(original, &file).unwrap();
            assert_eq!(
                gnu_patch(&sandbox, original, &file).as_deref(),
                Some(ours.as_str()),
                "{diff}"
            );
        }
    }

    #[test]
    fn gnu_fallback_gives_up_when_patch_cannot_place_the_hunk() {
        let file = one_file("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n p\n-q\n+Q\n r\n");
        let dir = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::builder(dir.path()).build().unwrap();
        assert_eq!(gnu_patch(&sandbox, "a\nb\nc\n", &file), None);
    }
}
