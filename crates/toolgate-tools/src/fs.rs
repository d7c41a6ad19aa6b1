//! File tools: `read_file`, `write_file`, `delete_file`, `list_files`
//! (seed 000 `filesystem.py`, seed 002 `file_read`).
//!
//! Every path goes through [`Workspace`], so `..`, absolute paths outside the
//! root, symlinks that leave it and sensitive files are refused here exactly
//! as everywhere else.

use std::fmt::Write as _;

use page::{PageRequest, read_page};

use async_trait::async_trait;
use globset::{GlobBuilder, GlobMatcher};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolgate_core::{
    Change, Compact, Effect, Effects, EffectsError, EntryKind, Sensitivity, ToolAnnotations,
    ToolContext, ToolResult, TypedTool, Workspace, WorkspaceError, WsPath,
};

use crate::bounded::{MAX_OUTPUT_BYTES, Shortlist, output_limit};
use crate::editing::MAX_EDIT_SIZE;
use crate::effects::{Current, count_file_lines, named, read_of};

/// The system-prompt block of the `files` group (the edit hierarchy is the
/// prompt builder's own part).
pub const INSTRUCTIONS: &str = "## Files
Paths are relative to the workspace root. read_file reads a file, list_files lists a directory. \
Answer questions about the workspace from what the tools show you, never from memory.";

mod page;
pub(crate) mod suggest;

/// How many bytes at the start of a file are searched for a NUL byte when
/// deciding whether it is binary (git and ripgrep use the same kind of test).
const BINARY_SNIFF: usize = 8 * 1024;

/// Lines returned by one paged read when the call gives an offset but no
/// limit.
const DEFAULT_PAGE_LINES: usize = 2000;

/// How many times `max_file_size` a file may be for a paged read: paging is
/// the way to read files over the limit, but not files of any size (a paged
/// read streams, so this bounds time, not memory: the lines after the page
/// are counted for `total_lines`).
const PAGED_READ_FACTOR: u64 = 64;

/// Files up to this size are read without a hand-off to the blocking pool.
const INLINE_READ_MAX: u64 = 64 * 1024;

/// Most entries `list_files` returns in one call.
const MAX_LIST_ENTRIES: usize = 2000;

/// Runs blocking file-system work off the async worker threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| format!("internal error: the file operation did not finish ({error})"))
}

/// The message a model sees for a workspace error.
fn describe(error: &WorkspaceError) -> String {
    error.to_string()
}

/// `error`'s message; for a path that does not exist, with the
/// workspace's nearest files (or directories, with `dirs`) after it
/// ([`suggest`]).
pub(crate) fn describe_missing(
    workspace: &Workspace,
    error: &WorkspaceError,
    dirs: bool,
) -> String {
    match error {
        WorkspaceError::NotFound { path } => {
            suggest::with_suggestions(workspace, error.to_string(), path, dirs)
        }
        other => other.to_string(),
    }
}

/// Whether `bytes` look like a binary file rather than text.
pub(crate) fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0)
}

/// Decodes a text file, refusing binary content with a clear message.
pub(crate) fn decode_text(display: &str, bytes: Vec<u8>) -> Result<String, String> {
    if is_binary(&bytes) {
        return Err(format!(
            "`{display}` is a binary file ({} bytes); this tool only works on UTF-8 text",
            bytes.len()
        ));
    }
    String::from_utf8(bytes).map_err(|error| {
        format!(
            "`{display}` is not valid UTF-8 (invalid byte at offset {}); this tool only works on UTF-8 text",
            error.utf8_error().valid_up_to()
        )
    })
}

fn human_size(bytes: u64) -> String {
    #[expect(
        clippy::cast_precision_loss,
        reason = "an approximate size for a message"
    )]
    let value = bytes as f64;
    if bytes >= 1024 * 1024 {
        format!("{:.1} MiB", value / (1024.0 * 1024.0))
    } else if bytes >= 1024 {
        format!("{:.1} KiB", value / 1024.0)
    } else {
        format!("{bytes} bytes")
    }
}

// ---------------------------------------------------------------- read_file

/// Arguments of `read_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// File path, relative to the workspace.
    pub path: String,
    /// First line to return, from 1 (lines then come back numbered).
    #[schemars(range(min = 1))]
    pub offset: Option<usize>,
    /// How many lines (default 2000).
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
    /// Byte column, from 1, to resume a cut line at (the cut note gives it).
    #[schemars(range(min = 1))]
    pub column: Option<usize>,
}

/// `read_file`: a UTF-8 text file, whole or a page of numbered lines.
///
/// # Rules
///
/// 1. Without `offset`, `limit` or `column`, the file is returned whole if
///    it is at most `max_file_size` bytes (`workspace.max_file_size`, 1 MiB
///    by default), and refused with a hint to page otherwise: by its size,
///    before it is read, and never read past that size if it grows
///    meanwhile. So no call holds more than `max_file_size` of file content.
/// 2. With any of them, a page of numbered lines is returned: at most
///    `limit` lines (default 2000) and at most `max_file_size` bytes of
///    output, streamed from the file so that neither a big file nor a huge
///    line is ever held in memory. A line that alone is over the byte limit
///    is cut, with a note saying how to read on (`offset` and `column`);
///    the metadata says what was cut (`cut`, `truncated`). The rules of a
///    page are on the `page` module.
/// 3. Paging works on files up to 64 × `max_file_size`.
#[derive(Debug, Clone)]
pub struct ReadFile {
    workspace: Workspace,
    max_file_size: u64,
}

impl ReadFile {
    /// A `read_file` over `workspace` that returns files up to
    /// `max_file_size` bytes whole, and pages of up to that many bytes.
    pub fn new(workspace: Workspace, max_file_size: u64) -> Self {
        Self {
            workspace,
            max_file_size,
        }
    }
}

#[async_trait]
impl TypedTool for ReadFile {
    type Args = ReadFileArgs;
    const NAME: &'static str = "read_file";
    const COMPACT: Option<Compact> = Some(Compact {
        description: "Read a file.",
        arguments: &["path"],
    });
    const DESCRIPTION: &'static str = "Read a text file, whole. For a large file pass `offset` (first line, from 1) and `limit` (how many lines) to get numbered lines.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;
    const READS_FILES: bool = true;

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            idempotent_hint: Some(true),
            ..ToolAnnotations::from_sensitivity(Self::SENSITIVITY)
        }
    }

    fn effects(&self, args: &ReadFileArgs) -> Result<Effects, EffectsError> {
        let path = named(&self.workspace, &args.path)?;
        Ok(Effects::known([Effect::read(path.display)]))
    }

    async fn run(&self, args: ReadFileArgs, _ctx: &ToolContext) -> ToolResult {
        let max = self.max_file_size;
        let path = match self.workspace.resolve(&args.path) {
            Ok(path) => path,
            Err(e) => return ToolResult::failure(describe(&e)),
        };
        let paged = args.offset.is_some() || args.limit.is_some() || args.column.is_some();
        if paged {
            return self.run_paged(path, &args).await;
        }
        // A small file is read on the calling thread: handing it to the
        // blocking pool costs more than the read itself (two thread wake-ups,
        // about half of a whole MCP round trip for a 2 KiB file). The read
        // itself tells a bigger file (no `stat` first), which then goes to
        // the pool, so a slow read never stalls the async workers.
        let bytes = match self.workspace.read_limited(&path, INLINE_READ_MAX.min(max)) {
            Err(WorkspaceError::TooLarge { size, .. }) if size <= max => {
                let workspace = self.workspace.clone();
                return blocking(move || {
                    let bytes = workspace.read_limited(&path, max);
                    format_whole(&workspace, &path, max, bytes)
                })
                .await
                .and_then(|result| result)
                .unwrap_or_else(ToolResult::failure);
            }
            other => other,
        };
        format_whole(&self.workspace, &path, max, bytes).unwrap_or_else(ToolResult::failure)
    }
}

impl ReadFile {
    /// A page of numbered lines (rule 2 in the [type docs](Self)). The file
    /// is opened here; a small one is read here too, a bigger one on the
    /// blocking pool.
    async fn run_paged(&self, path: WsPath, args: &ReadFileArgs) -> ToolResult {
        let max = self.max_file_size;
        let cap = max.saturating_mul(PAGED_READ_FACTOR);
        let display = self.workspace.display(&path);
        let opened = self.workspace.open_read(&path).and_then(|file| {
            let size = file
                .metadata()
                .map_err(|source| WorkspaceError::Io {
                    action: "read",
                    path: display.clone(),
                    source,
                })?
                .len();
            Ok((file, size))
        });
        let (file, size) = match opened {
            Ok(opened) => opened,
            Err(error) => {
                return ToolResult::failure(read_error(&self.workspace, &path, max, error));
            }
        };
        if size > cap {
            return ToolResult::failure(format!(
                "`{display}` is {} ({size} bytes), over the {} limit for paging \
                 (64 × the whole-file limit); search it with grep or search_code instead",
                human_size(size),
                human_size(cap)
            ));
        }
        let request = Request {
            display,
            size,
            offset: args.offset.unwrap_or(1).max(1),
            column: args.column.unwrap_or(1).max(1),
            limit: args.limit.unwrap_or(DEFAULT_PAGE_LINES).max(1),
            budget: usize::try_from(max).unwrap_or(usize::MAX).max(1),
        };
        if size <= INLINE_READ_MAX {
            return format_page(file, &request).unwrap_or_else(ToolResult::failure);
        }
        blocking(move || format_page(file, &request))
            .await
            .and_then(|result| result)
            .unwrap_or_else(ToolResult::failure)
    }
}

/// A paged read, owned so it can move to the blocking pool.
struct Request {
    display: String,
    size: u64,
    offset: usize,
    column: usize,
    limit: usize,
    budget: usize,
}

fn format_page(file: std::fs::File, request: &Request) -> Result<ToolResult, String> {
    let page = read_page(
        file,
        &PageRequest {
            display: &request.display,
            offset: request.offset,
            column: request.column,
            limit: request.limit,
            budget: request.budget,
        },
    )?;
    let cut = page.cut.map(|cut| {
        json!({
            "line": cut.line,
            "line_bytes": cut.line_bytes,
            "next_column": cut.next_column,
        })
    });
    Ok(ToolResult::success(page.text)
        .with_metadata("path", request.display.clone())
        .with_metadata("bytes", request.size)
        .with_metadata("total_lines", page.total)
        .with_metadata("first_line", page.first)
        .with_metadata("last_line", page.last)
        .with_metadata("first_column", request.column)
        .with_metadata("byte_limit", request.budget)
        .with_metadata("truncated", page.truncated)
        .with_metadata("cut", cut))
}

/// The message a model sees when a file cannot be read.
fn read_error(workspace: &Workspace, path: &WsPath, max: u64, error: WorkspaceError) -> String {
    let display = workspace.display(path);
    match error {
        WorkspaceError::TooLarge { size, .. } => format!(
            "`{display}` is {} ({size} bytes), over the {} limit for reading a file whole; \
             read it in pages with offset and limit, e.g. offset=1 limit={DEFAULT_PAGE_LINES}",
            human_size(size),
            human_size(max)
        ),
        WorkspaceError::NotAFile { .. } if workspace.metadata(path).is_ok_and(|m| m.is_dir()) => {
            format!("`{display}` is a directory; use list_files to see what it holds")
        }
        other => describe_missing(workspace, &other, false),
    }
}

fn format_whole(
    workspace: &Workspace,
    path: &WsPath,
    max: u64,
    bytes: Result<Vec<u8>, WorkspaceError>,
) -> Result<ToolResult, String> {
    let display = workspace.display(path);
    let bytes = bytes.map_err(|error| read_error(workspace, path, max, error))?;
    let size = bytes.len();
    let text = decode_text(&display, bytes)?;
    Ok(ToolResult::success(text)
        .with_metadata("path", display)
        .with_metadata("bytes", size))
}

// --------------------------------------------------------------- write_file

/// How `write_file` writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WriteMode {
    /// Replace the file's content (the default).
    #[default]
    Overwrite,
    /// Add to the end of the file.
    Append,
}

/// Arguments of `write_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// File path, relative to the workspace; parent directories are created.
    pub path: String,
    /// The text to write.
    pub content: String,
    /// `overwrite` (default) or `append`.
    #[serde(default)]
    pub mode: WriteMode,
}

/// `write_file`: creates or replaces a file atomically, or appends to it.
///
/// # Rules
///
/// 1. The path must name a file, not a directory (nor the root); missing
///    parent directories are created.
/// 2. `overwrite` replaces the whole file atomically; `append` adds the text
///    to its end, byte for byte (no newline is put in between).
/// 3. Its effect is one [`Effect::Write`] whose content is exactly what the
///    file will hold: the text for `overwrite`, the current text followed
///    by the text for `append`. When the current text cannot be read (not
///    UTF-8, over the editing tools' size limit, a sensitive file) an
///    append declares only line counts, and an overwrite its content with
///    the old lines counted from the bytes when they could be read.
#[derive(Debug, Clone)]
pub struct WriteFile {
    workspace: Workspace,
}

impl WriteFile {
    /// A `write_file` over `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        Self { workspace }
    }
}

#[async_trait]
impl TypedTool for WriteFile {
    type Args = WriteFileArgs;
    const NAME: &'static str = "write_file";
    const COMPACT: Option<Compact> = Some(Compact {
        description: "Write a whole file (its complete new content).",
        arguments: &["path", "content"],
    });
    const DESCRIPTION: &'static str = "Create a file or replace its whole content; mode=append adds to its end. To change part of a file use edit_file.";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;
    const WRITES_FILES: bool = true;

    fn effects(&self, args: &WriteFileArgs) -> Result<Effects, EffectsError> {
        let target = named(&self.workspace, &args.path)?;
        let current = match &target.path {
            Some(path) => {
                file_path(&self.workspace, path).map_err(EffectsError::new)?;
                Current::read(&self.workspace, path, MAX_EDIT_SIZE)
            }
            // Outside the workspace: the call is refused, nothing is read.
            None => Current::Unknown { lines: 0 },
        };
        Ok(Effects::known([Effect::write(
            target.display,
            written(&args.content, args.mode, current),
        )]))
    }

    async fn run(&self, args: WriteFileArgs, _ctx: &ToolContext) -> ToolResult {
        let workspace = self.workspace.clone();
        blocking(move || write_file(&workspace, &args))
            .await
            .and_then(|result| result)
            .unwrap_or_else(ToolResult::failure)
    }
}

/// Refuses a path that names a directory (rule 1 on [`WriteFile`]).
fn file_path(workspace: &Workspace, path: &WsPath) -> Result<(), String> {
    if path.is_root() || workspace.metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(format!(
            "`{}` is a directory; give the path of a file",
            workspace.display(path)
        ));
    }
    Ok(())
}

/// What writing `content` in `mode` does to a file that holds `current`
/// (rule 3 on [`WriteFile`]).
fn written(content: &str, mode: WriteMode, current: Current) -> Change {
    match (mode, current) {
        (_, Current::Missing) => Change::from_texts(None, content),
        (WriteMode::Overwrite, Current::Text(before)) => Change::from_texts(Some(&before), content),
        (WriteMode::Append, Current::Text(before)) => {
            let after = before.clone() + content;
            Change::from_texts(Some(&before), after)
        }
        (WriteMode::Overwrite, Current::Unknown { lines }) => {
            let mut change = Change::from_texts(None, content);
            change.lines_removed = lines;
            change.creates = false;
            change
        }
        (WriteMode::Append, Current::Unknown { .. }) => {
            Change::counted(content.lines().count(), 0, false)
        }
    }
}

fn write_file(workspace: &Workspace, args: &WriteFileArgs) -> Result<ToolResult, String> {
    let path = workspace.resolve(&args.path).map_err(|e| describe(&e))?;
    let display = workspace.display(&path);
    file_path(workspace, &path)?;
    let existed = workspace.exists(&path);
    let bytes = args.content.len();
    let verb = match args.mode {
        WriteMode::Overwrite => {
            workspace
                .write_atomic(&path, args.content.as_bytes())
                .map_err(|e| describe(&e))?;
            if existed { "overwrote" } else { "created" }
        }
        WriteMode::Append => {
            workspace
                .append(&path, args.content.as_bytes())
                .map_err(|e| describe(&e))?;
            if existed { "appended to" } else { "created" }
        }
    };
    Ok(
        ToolResult::success(format!("{verb} `{display}` ({bytes} bytes written)"))
            .with_metadata("path", display)
            .with_metadata("bytes", bytes)
            .with_metadata("created", !existed),
    )
}

// -------------------------------------------------------------- delete_file

/// Arguments of `delete_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteFileArgs {
    /// File path, relative to the workspace.
    pub path: String,
}

/// `delete_file`: removes one file, only when the configuration allows it.
#[derive(Debug, Clone)]
pub struct DeleteFile {
    workspace: Workspace,
    allowed: bool,
}

impl DeleteFile {
    /// A `delete_file` over `workspace`; with `allowed: false` every call is
    /// refused (seed 000: deletion is off unless `workspace.allow_delete`).
    pub fn new(workspace: Workspace, allowed: bool) -> Self {
        Self { workspace, allowed }
    }
}

#[async_trait]
impl TypedTool for DeleteFile {
    type Args = DeleteFileArgs;
    const NAME: &'static str = "delete_file";
    const DESCRIPTION: &'static str = "Delete one file from the workspace.";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;

    /// One [`Effect::Delete`], with the lines the file holds (counted as it
    /// streams by; 0 when it cannot be read). Declared whether or not
    /// deleting is allowed: that refusal is `run`'s.
    fn effects(&self, args: &DeleteFileArgs) -> Result<Effects, EffectsError> {
        let target = named(&self.workspace, &args.path)?;
        let lines_removed = target.path.as_ref().map_or(0, |path| {
            count_file_lines(&self.workspace, path, MAX_EDIT_SIZE)
        });
        Ok(Effects::known([Effect::Delete {
            path: target.display,
            lines_removed,
        }]))
    }

    async fn run(&self, args: DeleteFileArgs, _ctx: &ToolContext) -> ToolResult {
        if !self.allowed {
            return ToolResult::failure(
                "deleting files is disabled in this workspace; a person can enable it with \
                 `workspace.allow_delete: true` in toolgate.yaml",
            );
        }
        let workspace = self.workspace.clone();
        blocking(move || {
            let path = workspace.resolve(&args.path).map_err(|e| describe(&e))?;
            let display = workspace.display(&path);
            workspace.remove_file(&path).map_err(|e| describe(&e))?;
            Ok(ToolResult::success(format!("deleted `{display}`")).with_metadata("path", display))
        })
        .await
        .and_then(|result| result)
        .unwrap_or_else(ToolResult::failure)
    }
}

// --------------------------------------------------------------- list_files

/// Arguments of `list_files`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListFilesArgs {
    /// Directory, relative to the workspace.
    #[serde(default = "dot")]
    pub path: String,
    /// Glob filter, e.g. `*.py` (file names) or `src/**/*.ts` (paths).
    pub pattern: Option<String>,
    /// List everything below, not just the directory.
    #[serde(default)]
    pub recursive: bool,
}

fn dot() -> String {
    ".".to_owned()
}

/// `list_files`: workspace-relative paths, sorted.
///
/// # Rules
///
/// 1. `path` (default `.`) must be a directory inside the workspace. Without
///    `recursive`, its entries are listed, directories with a trailing `/`
///    and symlinks that stay inside as what they point to; with it, every
///    regular file below (see [`Workspace::walk`]). `.git` is never listed.
/// 2. `pattern` keeps the files whose name (a glob without `/`) or path
///    matches; directories are then left out.
/// 3. At most 2000 entries and about 256 KiB of text are returned: the
///    first ones in sorted order, then a line saying how many more were not
///    shown (metadata `count` is all of them, `truncated` whether some were
///    left out). The listing streams: entries past those limits are only
///    counted, so a directory of millions of entries, or of very long
///    names, costs toolgate no more memory than the listing it returns.
/// 4. Sensitive entries are left out unless the workspace allows them, and
///    counted: `N sensitive entries are hidden` (metadata
///    `sensitive_hidden`).
#[derive(Debug, Clone)]
pub struct ListFiles {
    workspace: Workspace,
}

impl ListFiles {
    /// A `list_files` over `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        Self { workspace }
    }
}

#[async_trait]
impl TypedTool for ListFiles {
    type Args = ListFilesArgs;
    const NAME: &'static str = "list_files";
    const COMPACT: Option<Compact> = Some(Compact {
        description: "List a directory.",
        arguments: &["path"],
    });
    const DESCRIPTION: &'static str = "List a directory (subdirectories end with `/`). recursive=true lists every file below; `pattern` filters by glob, e.g. `*.py`.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            idempotent_hint: Some(true),
            ..ToolAnnotations::from_sensitivity(Self::SENSITIVITY)
        }
    }

    fn effects(&self, args: &ListFilesArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::known([read_of(&self.workspace, &args.path)?]))
    }

    async fn run(&self, args: ListFilesArgs, _ctx: &ToolContext) -> ToolResult {
        let workspace = self.workspace.clone();
        blocking(move || list_files(&workspace, &args))
            .await
            .and_then(|result| result)
            .unwrap_or_else(ToolResult::failure)
    }
}

/// A glob as `list_files` and `find_files` use it: `*` does not cross `/`,
/// `**` does; a pattern without `/` is matched against the file name.
#[derive(Debug)]
pub(crate) struct NameGlob {
    matcher: GlobMatcher,
    on_name: bool,
}

impl NameGlob {
    pub(crate) fn new(pattern: &str) -> Result<Self, String> {
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|error| format!("invalid glob `{pattern}`: {error}"))?;
        Ok(Self {
            matcher: glob.compile_matcher(),
            on_name: !pattern.contains('/'),
        })
    }

    pub(crate) fn is_match(&self, relative: &str) -> bool {
        if self.on_name {
            let name = relative.rsplit('/').next().unwrap_or(relative);
            self.matcher.is_match(name)
        } else {
            self.matcher.is_match(relative)
        }
    }
}

fn list_files(workspace: &Workspace, args: &ListFilesArgs) -> Result<ToolResult, String> {
    let dir = workspace.resolve(&args.path).map_err(|e| describe(&e))?;
    let display = workspace.display(&dir);
    match workspace.metadata(&dir) {
        Ok(meta) if !meta.is_dir() => {
            return Err(format!(
                "`{display}` is a file, not a directory; use read_file to read it"
            ));
        }
        Ok(_) => {}
        Err(error) => return Err(describe_missing(workspace, &error, true)),
    }
    let glob = args.pattern.as_deref().map(NameGlob::new).transpose()?;
    // Entries stream by and only the first ones in order are kept (rule 3).
    let mut shown = Shortlist::new(MAX_LIST_ENTRIES, MAX_OUTPUT_BYTES);
    // Sensitive entries are left out (unless allowed); how many is said, so
    // that "no match" is not mistaken for "no such file".
    let mut hidden = 0usize;
    let mut offer = |path: String, is_dir: bool, sensitive: bool| {
        let matches = glob.as_ref().is_none_or(|glob| glob.is_match(&path));
        if sensitive {
            hidden += usize::from(matches);
        } else if !matches || (is_dir && glob.is_some()) {
            // With a pattern, only files are listed.
        } else if is_dir {
            shown.offer(format!("{path}/"), format!("{path}/"));
        } else {
            shown.offer(path.clone(), path);
        }
    };
    if args.recursive {
        workspace
            .walk_each(&dir, true, |file| {
                offer(workspace.display(&file.path), false, file.sensitive);
            })
            .map_err(|e| describe(&e))?;
    } else {
        workspace
            .read_dir_each(&dir, |entry| {
                if entry.name == ".git" {
                    return;
                }
                let is_dir = match entry.kind {
                    EntryKind::Dir => true,
                    EntryKind::File => false,
                    // Listed as what it points to; a dangling one is skipped.
                    EntryKind::SymlinkInside => match workspace.metadata(&entry.path) {
                        Ok(meta) => meta.is_dir(),
                        Err(_) => return,
                    },
                    // A symlink that leaves the workspace, a FIFO, a socket:
                    // nothing a tool can use.
                    _ => return,
                };
                offer(workspace.display(&entry.path), is_dir, entry.sensitive);
            })
            .map_err(|e| describe(&e))?;
    }
    let total = shown.offered();
    let entries = shown.into_texts();
    let mut output = entries.join("\n");
    let left_out = total - entries.len();
    if left_out > 0 {
        let _ = write!(
            output,
            "\n… {left_out} more {} not shown{}; narrow the listing with `path` or `pattern`",
            if left_out == 1 { "entry" } else { "entries" },
            if entries.len() < MAX_LIST_ENTRIES {
                format!(" ({})", output_limit())
            } else {
                String::new()
            },
        );
    }
    if total == 0 {
        output = format!(
            "no files in `{display}`{}",
            if glob.is_some() {
                " match the pattern"
            } else {
                ""
            }
        );
        if hidden > 0 {
            let _ = write!(output, "; {}", hidden_note(hidden, ("entry", "entries")));
        }
    } else if hidden > 0 {
        let _ = write!(output, "\n({})", hidden_note(hidden, ("entry", "entries")));
    }
    Ok(ToolResult::success(output)
        .with_metadata("path", display)
        .with_metadata("count", total)
        .with_metadata("sensitive_hidden", hidden)
        .with_metadata("truncated", left_out > 0))
}

/// The note for `n` sensitive entries left out of a listing: `what` is the
/// singular and plural of what they are (`("entry", "entries")`).
pub(crate) fn hidden_note(n: usize, what: (&str, &str)) -> String {
    if n == 1 {
        format!(
            "1 sensitive {} is hidden: sensitive files are off limits",
            what.0
        )
    } else {
        format!(
            "{n} sensitive {} are hidden: sensitive files are off limits",
            what.1
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        let cases: &[(&str, &str, bool)] = &[
            ("*.py", "a.py", true),
            ("*.py", "src/deep/a.py", true),
            ("*.py", "a.pyc", false),
            ("src/*.rs", "src/main.rs", true),
            ("src/*.rs", "src/bin/main.rs", false),
            ("src/**/*.rs", "src/bin/main.rs", true),
            ("**/*.md", "README.md", true),
            ("**/*.md", "docs/x/y.md", true),
            ("test_*.py", "tests/test_a.py", true),
        ];
        for (pattern, path, expected) in cases {
            assert_eq!(
                NameGlob::new(pattern).unwrap().is_match(path),
                *expected,
                "{pattern} {path}"
            );
        }
        assert!(NameGlob::new("[").unwrap_err().contains("invalid glob `[`"));
    }

    #[test]
    fn binary_detection() {
        assert!(is_binary(b"abc\0def"));
        assert!(!is_binary("héllo\n".as_bytes()));
        assert!(
            decode_text("x", vec![0xff, 0xfe, b'a'])
                .unwrap_err()
                .contains("not valid UTF-8")
        );
        assert!(
            decode_text("x", vec![b'a', 0, b'b'])
                .unwrap_err()
                .contains("binary file (3 bytes)")
        );
    }
}
