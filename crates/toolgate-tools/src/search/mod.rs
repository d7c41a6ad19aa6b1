//! Search tools: `search_code` (regex), `grep` (literal text) and
//! `find_files` (glob over names), from seed 000 (F10).
//!
//! # One engine, in process
//!
//! Seed 000's `grep` shells out to `rg` when it is installed, falls back to
//! `grep`, then to a pure-Python scan: three engines with three regex
//! dialects, three ways of treating ignore files and binary files, and a
//! process per call, depending on what the machine happens to have. Here
//! that chain is replaced by one engine, ripgrep's own crates linked in:
//! [`ignore`] walks the tree and applies the ignore files, [`grep_regex`]
//! compiles the pattern and [`grep_searcher`] searches line by line and
//! spots binary files, on one worker thread per core. Every machine gives
//! the same answer, no process is spawned, and the search runs at
//! ripgrep's speed (see `bench/search.sh`).
//!
//! # Bounded memory
//!
//! The search runs inside toolgate's own process, so no file and no tree
//! may make that process grow: what a call costs is bounded by the limits
//! below, whatever the workspace holds. A line is read through a buffer of
//! at most 1 MiB (rule 4); at most 500 characters of a line are kept; the
//! text and what is kept to make it stop at 256 KiB (rule 8); `find_files`
//! keeps only the paths it can show (rule 10); and the tree is walked on one
//! thread that hands files to the workers through a short queue, so a
//! directory of millions of files is never held whole (ripgrep's parallel
//! walker holds every entry of the directory it is reading, about 200 bytes
//! each). These limits are constants, not settings: they bound toolgate's
//! memory, not what a model is shown, which `max_results` does.
//!
//! # Rules
//!
//! 1. `path` (default `.`) is checked by [`Workspace::resolve`] and must
//!    exist inside the workspace, as a directory or a regular file; as for
//!    every workspace path, a symlink that stays inside is followed and one
//!    that leaves is refused. A sensitive `path`, or one inside a `.git`
//!    directory, is refused with a message. Results are shown under `path`
//!    as given. A file named by `path` is searched alone, whatever
//!    `file_pattern` and the ignore files say (as `rg FILE` does).
//! 2. Unless `include_ignored` is true, files matched by `.gitignore`,
//!    `.ignore` and `.git/info/exclude` are skipped, whether or not the
//!    workspace is a git repository. The ignore files count from the
//!    workspace root down, also when `path` is a subdirectory (searching
//!    `src` skips what searching `.` skips there); ignore files above the
//!    root and the user's global git excludes are never read, so the result
//!    does not depend on where the workspace sits or who runs the search.
//! 3. Hidden files and directories are searched; `.git` directories never.
//! 4. Binary files (a NUL byte in what is read) are skipped whole. So are
//!    files holding a line longer than 1 MiB, which is as far as the
//!    searcher's line buffer grows (with context lines asked for, such a
//!    file is first searched again without them, since the buffer then
//!    holds the lines before a match too). They are counted, and the output
//!    says so: `N files skipped: a line longer than 1 MiB` (metadata
//!    `long_line_skipped`); a search never fails because of one file.
//! 5. Symlinks met during the walk are never followed, not even those that
//!    stay inside: a target inside the workspace is found under its real
//!    path anyway, and not following spares loop detection and duplicate
//!    results (DESIGN.md §8 asks only that no symlink lead a search out).
//!    A file is searched only when it is, at the moment it is opened, a
//!    regular file inside the workspace (see below).
//! 6. toolgate's own state ([`Workspace::is_private`]: its configuration
//!    and data, when the workspace holds them) is never entered, searched
//!    or listed, and not counted either; a `path` inside it is refused.
//!    Sensitive files (DESIGN.md §7; [`Workspace::sensitive_refusal`]) are
//!    skipped, as the path was found and as the opened file really lies,
//!    unless the workspace allows them: their content is never returned,
//!    even when it matches, and `find_files` does not list them (as
//!    `list_files` does not). They are counted, though, and the output says
//!    how many were left out (`N sensitive files were not searched`,
//!    `N sensitive files are hidden`; metadata `sensitive_skipped`,
//!    `sensitive_hidden`), so that "no match" is not mistaken for "no such
//!    file". A search counts those that `file_pattern` lets through;
//!    `find_files` those whose path matches its glob.
//! 7. A glob (`file_pattern`, `find_files`'s `pattern`) without `/` matches
//!    file names at any depth (`*.rs`); with one, it matches the
//!    workspace-relative path (`src/**/*.rs`); `*` never crosses `/`.
//! 8. Output is sorted by path, whatever order the threads finish in, so
//!    the same search gives the same text. Matches are `path:line: text`,
//!    context lines `path-line- text`, with `--` between groups that are not
//!    adjacent; lines over 500 characters are cut with a marker. Lines are
//!    added while the text is under 256 KiB. When `max_results` or that
//!    limit cuts the list, a last line says exactly how many matching lines
//!    were not shown (and names the limit when it was the bytes). The
//!    metadata carries the shown matches as `matches: [{path, line, text}]`,
//!    and `total_matches`, `files_searched`, `files_matched`,
//!    `binary_skipped`, `long_line_skipped`, `sensitive_skipped`,
//!    `truncated`.
//! 9. A search declares one effect ([`Effects`]): a read of everything
//!    beneath `path`, or of that one file when `path` is a regular file.
//! 10. `find_files` lists at most 1000 paths and about 256 KiB of them, the
//!     first in path order, then a line saying how many more matched
//!     (metadata `count` is all of them, `truncated` whether some were left
//!     out).
//! 11. `search_code` is smart-case, as ripgrep's `--smart-case`: a pattern
//!     without an uppercase letter ignores case (`(?-i)` matches case).
//!     When a search that matched case finds nothing (`search_code` with an
//!     uppercase letter, `grep` with `case_sensitive`), it is run once more
//!     ignoring case, and the answer says how many lines would match and
//!     the first of them: a model that searched `Port` learns that `PORT`
//!     is there.
//!
//! # Opening files the walker found
//!
//! [`Workspace`] reaches every file from an open handle on the root, one
//! component at a time, so a symlink swapped in mid-way is refused by the
//! kernel. That is the right tool for one file, but costs a few system calls
//! per path component; for the tens of thousands of files of a large tree
//! the search uses ripgrep's walker, which hands over plain paths read from
//! the directories a moment ago. Between that moment and the open, anything
//! may change: the file may become a symlink to `~/.ssh/id_rsa` or a FIFO,
//! and any directory on the way a symlink to `/`. Each file is therefore
//! opened like this, every step closing one hole:
//!
//! 1. `openat2(root, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
//!    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`, where `root` is a handle on
//!    the workspace root opened when the search starts and `rel` the path
//!    found, relative to it. The kernel resolves `rel` beneath `root` and
//!    fails if any component is a symlink or would lead above `root`: a
//!    directory swapped for a symlink anywhere on the way fails the open,
//!    it is not followed. The walker never follows symlinks, so a path it
//!    found legitimately has none, and the opened file is exactly at `rel`.
//!    `O_NONBLOCK`: a FIFO swapped in does not hang the open (regular files
//!    ignore the flag); `O_NOCTTY`: a terminal does not become ours.
//! 2. `fstat` on the descriptor: only a regular file goes on. This asks
//!    about the file we hold, not about a path, so it opens no new race.
//! 3. The open descriptor is searched; the path is not used again.
//!
//! Where `openat2` is missing (Linux before 5.6, a seccomp filter that
//! answers `ENOSYS` or `EPERM`, other systems), step 1 becomes
//! `open(path, … | O_NOFOLLOW)`, which guards only the last component:
//! `a/b/notes.txt` opens `/etc/b/notes.txt` if `a` was just swapped for a
//! symlink to `/etc`. So after the `fstat`, the kernel is asked where the
//! open file is: `readlink("/proc/self/fd/N")` gives the path of the
//! descriptor's own directory entry. It must lie under the canonical root,
//! compared component by component (`/ws-evil` is not under `/ws`), and is
//! matched against the sensitive patterns too (a harmless name can reach
//! `.ssh/` through a swapped directory without leaving the workspace).
//! Without `/proc`, the path is canonicalised instead and must name the same
//! file (device and inode) as the descriptor. The fallback is as safe but
//! slower: in profiles of a search over 19,000 files, the `/proc` lookups
//! took a fifth of the time; `openat2` does the whole check in the open.
//!
//! What this proves is that the file read *was*, once open, a regular file
//! inside the workspace; later renames do not matter since the descriptor is
//! read. `find_files` reads no content but opens every name it lists the
//! same way (with `O_PATH` on Linux, so no read permission is needed), so
//! that a directory swapped mid-walk cannot make it list names from outside;
//! the walker itself may list such a directory, but nothing from it gets
//! past the open. The root handle is opened by the workspace's canonical
//! path when the search starts; replacing the workspace root itself is out
//! of scope here, as are hard links (see [`Workspace`]).
//!
//! See `openat2(2)` <https://man7.org/linux/man-pages/man2/openat2.2.html>,
//! `open(2)` (`O_NOFOLLOW`, `O_PATH`) and `proc_pid_fd(5)`.

/// The system-prompt block of the `search` group.
pub const INSTRUCTIONS: &str = "## Finding code
Search before you read: grep or search_code for a name or text, find_files for file names. \
Then read only the files (or lines) you need.";

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use toolgate_core::{
    Compact, Effects, EffectsError, Sensitivity, ToolAnnotations, ToolContext, ToolResult,
    TypedTool, Workspace,
};

use crate::bounded::output_limit;
use crate::effects::read_of;
use crate::fs::{NameGlob, hidden_note};
use engine::{Found, Search};
use walk::Scope;

mod engine;
mod render;
mod walk;

/// Most paths `find_files` lists in one call.
const MAX_FOUND: usize = 1000;

/// Most context lines around a match.
const MAX_CONTEXT: usize = 20;

/// Most matches one call may ask for.
const MAX_RESULTS: usize = 1000;

fn dot() -> String {
    ".".to_owned()
}

fn star() -> String {
    "*".to_owned()
}

fn yes() -> bool {
    true
}

fn two() -> usize {
    2
}

fn fifty() -> usize {
    50
}

fn hundred() -> usize {
    100
}

/// Runs blocking work off the async worker threads. If the caller stops
/// waiting (a timeout drops the future), the flag tells the walk to stop.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce(&AtomicBool) -> T + Send + 'static,
) -> Result<T, String> {
    /// Sets the flag when dropped, so also when the future is.
    struct CancelOnDrop(Arc<AtomicBool>);
    impl Drop for CancelOnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let cancel = Arc::new(AtomicBool::new(false));
    let guard = CancelOnDrop(Arc::clone(&cancel));
    let result = tokio::task::spawn_blocking(move || work(&cancel))
        .await
        .map_err(|error| format!("internal error: the search did not finish ({error})"));
    drop(guard);
    result
}

/// The annotations of the search tools: read-only and idempotent.
fn read_only() -> ToolAnnotations {
    ToolAnnotations {
        idempotent_hint: Some(true),
        ..ToolAnnotations::from_sensitivity(Sensitivity::ReadOnly)
    }
}

/// How a text search reads its pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Syntax {
    Regex,
    Literal,
}

/// How a text search treats case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    /// Case matters.
    Match,
    /// Case is ignored.
    Ignore,
    /// A pattern without an uppercase letter ignores case (rule 11).
    Smart,
}

/// The options a text search is made of, whichever tool it came from.
struct TextQuery {
    pattern: String,
    syntax: Syntax,
    case: Case,
    path: String,
    file_pattern: String,
    context: usize,
    max_results: usize,
    recursive: bool,
    include_ignored: bool,
}

fn search(
    workspace: &Workspace,
    query: &TextQuery,
    cancel: &AtomicBool,
) -> Result<ToolResult, String> {
    let scope = Scope::new(workspace, &query.path)?;
    let context = query.context.min(MAX_CONTEXT);
    let max = query.max_results.clamp(1, MAX_RESULTS);
    let run = |case_insensitive: bool, smart_case: bool| -> Result<Found, String> {
        let matcher = engine::matcher(
            &query.pattern,
            query.syntax == Syntax::Literal,
            case_insensitive,
            smart_case,
        )?;
        let glob = match query.file_pattern.as_str() {
            "" | "*" | "**" | "**/*" => None,
            pattern => Some(NameGlob::new(pattern)?),
        };
        Ok(Search {
            workspace,
            scope: &scope,
            matcher,
            glob,
            context,
            max_results: max,
            recursive: query.recursive,
            include_ignored: query.include_ignored,
            cancel,
        }
        .run())
    };
    let found = run(query.case == Case::Ignore, query.case == Case::Smart)?;
    let rendered = render::matches(&found.files, max, context);
    let shown = rendered.matches.len() as u64;
    let hidden = found.total_matches.saturating_sub(shown);
    let mut text = rendered.text;
    if found.total_matches == 0 {
        text = no_matches(query, &scope, &found);
        // A search that matched case finds nothing: say whether ignoring
        // case would (one more search, only when the first found nothing).
        let matched_case = match query.case {
            Case::Match => true,
            Case::Ignore => false,
            Case::Smart => query.pattern.chars().any(char::is_uppercase),
        };
        if matched_case && !found.cancelled {
            let loose = run(true, false)?;
            if let Some(first) = render::matches(&loose.files, 1, 0).matches.first() {
                let _ = write!(
                    text,
                    "; ignoring case, {} {} (first: `{}:{}`){}",
                    loose.total_matches,
                    plural(loose.total_matches, "line matches", "lines match"),
                    first["path"].as_str().unwrap_or_default(),
                    first["line"],
                    if query.case == Case::Smart {
                        ": write the pattern in lowercase to ignore case"
                    } else {
                        ": set case_sensitive=false to ignore case"
                    }
                );
            }
        }
    } else if hidden > 0 {
        let _ = write!(
            text,
            "… {hidden} more {} not shown ({} in {} {}{}); narrow the search with `path` or `file_pattern`",
            plural(hidden, "match", "matches"),
            found.total_matches,
            found.files_matched,
            plural(found.files_matched, "file", "files"),
            if rendered.clipped {
                format!("; {}", output_limit())
            } else {
                String::new()
            },
        );
        if max < MAX_RESULTS && !rendered.clipped {
            let _ = write!(text, ", or raise max_results (up to {MAX_RESULTS})");
        }
    }
    if found.total_matches > 0 {
        let mut notes = Vec::new();
        if found.long_line_skipped > 0 {
            notes.push(long_lines(found.long_line_skipped));
        }
        if found.sensitive_skipped > 0 {
            notes.push(not_searched(found.sensitive_skipped));
        }
        if !notes.is_empty() {
            let text_end = text.trim_end().len();
            text.truncate(text_end);
            let _ = write!(text, "\n({})", notes.join("; "));
        }
    }
    Ok(ToolResult::success(text.trim_end().to_owned())
        .with_metadata("path", scope.display.clone())
        .with_metadata("matches", rendered.matches)
        .with_metadata("total_matches", found.total_matches)
        .with_metadata("files_searched", found.files_searched)
        .with_metadata("files_matched", found.files_matched)
        .with_metadata("binary_skipped", found.binary_skipped)
        .with_metadata("long_line_skipped", found.long_line_skipped)
        .with_metadata("sensitive_skipped", found.sensitive_skipped)
        .with_metadata("truncated", hidden > 0))
}

fn no_matches(query: &TextQuery, scope: &Scope, found: &Found) -> String {
    let what = if query.syntax == Syntax::Literal {
        "text"
    } else {
        "pattern"
    };
    let mut text = format!(
        "no matches for {what} `{}` in `{}` ({} {} searched",
        query.pattern,
        scope.display,
        found.files_searched,
        plural(found.files_searched, "file", "files"),
    );
    if found.binary_skipped > 0 {
        let _ = write!(text, ", {} binary skipped", found.binary_skipped);
    }
    text.push(')');
    if found.long_line_skipped > 0 {
        let _ = write!(text, "; {}", long_lines(found.long_line_skipped));
    }
    if found.sensitive_skipped > 0 {
        let _ = write!(text, "; {}", not_searched(found.sensitive_skipped));
    }
    if found.cancelled {
        text.push_str("; the search was stopped before it finished");
    } else if !query.include_ignored && !scope.is_file {
        text.push_str("; files ignored by .gitignore/.ignore were skipped (include_ignored=true searches them)");
    }
    text
}

/// The note for `n` files skipped because a line is too long to search.
fn long_lines(n: u64) -> String {
    format!(
        "{n} {} skipped: a line longer than {} MiB",
        plural(n, "file", "files"),
        engine::LINE_LIMIT / (1024 * 1024),
    )
}

/// The note for `n` sensitive files left out of a search.
fn not_searched(n: u64) -> String {
    format!(
        "{n} sensitive {} not searched: sensitive files are off limits",
        plural(n, "file was", "files were")
    )
}

fn plural<'a>(n: u64, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

// -------------------------------------------------------------- search_code

/// Arguments of `search_code`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchCodeArgs {
    /// Regex matched per line; smart case: a pattern without an uppercase
    /// letter ignores case (`(?-i)` matches case).
    #[schemars(length(min = 1))]
    pub pattern: String,
    /// Directory or file to search, relative to the workspace.
    #[serde(default = "dot")]
    pub path: String,
    /// Which files, e.g. `*.py` or `src/**/*.rs`.
    #[serde(default = "star")]
    pub file_pattern: String,
    /// Lines shown around each match.
    #[serde(default = "two")]
    #[schemars(range(min = 0, max = 20))]
    pub context_lines: usize,
    /// Most matches to show.
    #[serde(default = "fifty")]
    #[schemars(range(min = 1, max = 1000))]
    pub max_results: usize,
    /// Also search git-ignored files.
    #[serde(default)]
    pub include_ignored: bool,
}

/// `search_code`: regex search with context, over the workspace.
#[derive(Debug, Clone)]
pub struct SearchCode {
    workspace: Workspace,
}

impl SearchCode {
    /// A `search_code` over `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        Self { workspace }
    }
}

#[async_trait]
impl TypedTool for SearchCode {
    type Args = SearchCodeArgs;
    const NAME: &'static str = "search_code";
    const COMPACT: Option<Compact> = Some(Compact {
        description: "Search file contents for a regex.",
        arguments: &["pattern", "path"],
    });
    const DESCRIPTION: &'static str = "Search file contents with a regex (ripgrep syntax); shows `path:line: text` with context lines. Example: {\"pattern\": \"def load\", \"file_pattern\": \"*.py\"}";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn annotations(&self) -> ToolAnnotations {
        read_only()
    }

    fn effects(&self, args: &SearchCodeArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::known([read_of(&self.workspace, &args.path)?]))
    }

    async fn run(&self, args: SearchCodeArgs, _ctx: &ToolContext) -> ToolResult {
        let workspace = self.workspace.clone();
        let query = TextQuery {
            pattern: args.pattern,
            syntax: Syntax::Regex,
            case: Case::Smart,
            path: args.path,
            file_pattern: args.file_pattern,
            context: args.context_lines,
            max_results: args.max_results,
            recursive: true,
            include_ignored: args.include_ignored,
        };
        blocking(move |cancel| search(&workspace, &query, cancel))
            .await
            .and_then(|result| result)
            .unwrap_or_else(ToolResult::failure)
    }
}

// --------------------------------------------------------------------- grep

/// Arguments of `grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// Literal text to find (not a regex: `.`, `(`, `*` and the like match
    /// themselves).
    #[schemars(length(min = 1))]
    pub pattern: String,
    /// Directory or file to search, relative to the workspace.
    #[serde(default = "dot")]
    pub path: String,
    /// Which files, e.g. `*.py` or `src/**/*.rs`.
    #[serde(default = "star")]
    pub file_pattern: String,
    /// Include subdirectories.
    #[serde(default = "yes")]
    pub recursive: bool,
    /// false ignores case.
    #[serde(default = "yes")]
    pub case_sensitive: bool,
    /// Most matches to show.
    #[serde(default = "hundred")]
    #[schemars(range(min = 1, max = 1000))]
    pub max_results: usize,
    /// Also search git-ignored files.
    #[serde(default)]
    pub include_ignored: bool,
}

/// `grep`: literal text search over the workspace.
#[derive(Debug, Clone)]
pub struct Grep {
    workspace: Workspace,
}

impl Grep {
    /// A `grep` over `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        Self { workspace }
    }
}

#[async_trait]
impl TypedTool for Grep {
    type Args = GrepArgs;
    const NAME: &'static str = "grep";
    const DESCRIPTION: &'static str =
        "Find lines containing literal text (not a regex); shows `path:line: text`.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn annotations(&self) -> ToolAnnotations {
        read_only()
    }

    fn effects(&self, args: &GrepArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::known([read_of(&self.workspace, &args.path)?]))
    }

    async fn run(&self, args: GrepArgs, _ctx: &ToolContext) -> ToolResult {
        let workspace = self.workspace.clone();
        let query = TextQuery {
            pattern: args.pattern,
            syntax: Syntax::Literal,
            case: if args.case_sensitive {
                Case::Match
            } else {
                Case::Ignore
            },
            path: args.path,
            file_pattern: args.file_pattern,
            context: 0,
            max_results: args.max_results,
            recursive: args.recursive,
            include_ignored: args.include_ignored,
        };
        blocking(move |cancel| search(&workspace, &query, cancel))
            .await
            .and_then(|result| result)
            .unwrap_or_else(ToolResult::failure)
    }
}

// --------------------------------------------------------------- find_files

/// Arguments of `find_files`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindFilesArgs {
    /// Glob; without `/` it matches names at any depth.
    #[schemars(length(min = 1))]
    pub pattern: String,
    /// Directory to search, relative to the workspace.
    #[serde(default = "dot")]
    pub path: String,
    /// Include subdirectories.
    #[serde(default = "yes")]
    pub recursive: bool,
    /// Also list git-ignored files.
    #[serde(default)]
    pub include_ignored: bool,
}

/// `find_files`: workspace-relative paths of the files whose name (or path)
/// matches a glob, sorted.
#[derive(Debug, Clone)]
pub struct FindFiles {
    workspace: Workspace,
}

impl FindFiles {
    /// A `find_files` over `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        Self { workspace }
    }
}

#[async_trait]
impl TypedTool for FindFiles {
    type Args = FindFilesArgs;
    const NAME: &'static str = "find_files";
    const DESCRIPTION: &'static str =
        "Find files by name glob, e.g. `*.yaml`, `test_*.py`, `src/**/*.rs`; lists their paths.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn annotations(&self) -> ToolAnnotations {
        read_only()
    }

    fn effects(&self, args: &FindFilesArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::known([read_of(&self.workspace, &args.path)?]))
    }

    async fn run(&self, args: FindFilesArgs, _ctx: &ToolContext) -> ToolResult {
        let workspace = self.workspace.clone();
        blocking(move |cancel| find_files(&workspace, &args, cancel))
            .await
            .and_then(|result| result)
            .unwrap_or_else(ToolResult::failure)
    }
}

fn find_files(
    workspace: &Workspace,
    args: &FindFilesArgs,
    cancel: &AtomicBool,
) -> Result<ToolResult, String> {
    if args.pattern.is_empty() {
        return Err("the pattern is empty; give a glob such as `*.rs`".to_owned());
    }
    let glob = NameGlob::new(&args.pattern)?;
    let scope = Scope::new(workspace, &args.path)?;
    let finds = engine::find(
        workspace,
        &scope,
        &glob,
        args.recursive,
        args.include_ignored,
        MAX_FOUND,
        cancel,
    );
    let total = finds.total;
    let shown = finds.paths.len();
    let mut text = finds.paths.join("\n");
    if total > shown {
        let _ = write!(
            text,
            "\n… {} more {} not shown{}; narrow the pattern or the path",
            total - shown,
            plural((total - shown) as u64, "file", "files"),
            if shown < MAX_FOUND {
                format!(" ({})", output_limit())
            } else {
                String::new()
            },
        );
    }
    let hidden = usize::try_from(finds.sensitive).unwrap_or(usize::MAX);
    if total == 0 {
        text = format!("no files match `{}` in `{}`", args.pattern, scope.display);
        if hidden > 0 {
            let _ = write!(text, "; {}", hidden_note(hidden, ("file", "files")));
        }
        if !args.include_ignored && !scope.is_file {
            text.push_str("; files ignored by .gitignore/.ignore were skipped (include_ignored=true lists them)");
        }
    } else if hidden > 0 {
        let _ = write!(text, "\n({})", hidden_note(hidden, ("file", "files")));
    }
    Ok(ToolResult::success(text)
        .with_metadata("path", scope.display.clone())
        .with_metadata("count", total)
        .with_metadata("sensitive_hidden", hidden)
        .with_metadata("truncated", total > shown))
}

/// The `search` group: `search_code`, `grep`, `find_files`. Part: the
/// [`Workspace`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SearchGroup;

impl SearchGroup {
    /// The group's tools over `workspace`.
    pub fn tools(workspace: &Workspace) -> Vec<Arc<dyn toolgate_core::Tool>> {
        vec![
            Arc::new(SearchCode::new(workspace.clone())),
            Arc::new(Grep::new(workspace.clone())),
            Arc::new(FindFiles::new(workspace.clone())),
        ]
    }
}

impl toolgate_core::Group for SearchGroup {
    fn name(&self) -> &'static str {
        "search"
    }

    fn tool_names(&self) -> &'static [&'static str] {
        &["search_code", "grep", "find_files"]
    }

    fn build(
        &self,
        ctx: &toolgate_core::GroupContext<'_>,
    ) -> Result<toolgate_core::ToolGroup, toolgate_core::GroupError> {
        let workspace = ctx.part::<Workspace>()?;
        Ok(toolgate_core::ToolGroup::new(
            self.name(),
            INSTRUCTIONS,
            Self::tools(&workspace),
        ))
    }
}
