//! The pure text engine behind `apply_patch`: parse a patch, apply it to one
//! file's text in memory.
//!
//! Nothing here touches the filesystem. [`parse`] turns the patch text into a
//! [`Patch`] (one [`FilePatch`] per file), the caller reads each file through
//! the workspace sandbox, [`apply`] (or [`apply_with_report`]) computes the new
//! text of each file, and only when every file succeeded does the caller write
//! anything. That is how a multi-file patch stays all-or-nothing.
//!
//! # Formats
//!
//! [`parse`] detects the format: if a line reads `*** Begin Patch` the text is
//! the envelope format of Codex and GPT models ([`PatchFormat::Envelope`]),
//! otherwise it is a unified diff ([`PatchFormat::Unified`]).
//!
//! ## Unified diffs
//!
//! Git-style (`diff --git`) or plain `diff -u` output, one or several files,
//! several hunks per file.
//!
//! 1. Text before the first file header and between files (commit messages,
//!    `diff -ruN` command lines, prose, code fences) is skipped, as GNU `patch`
//!    does.
//! 2. A file starts with `--- OLD` followed by `+++ NEW`. A tab and what
//!    follows it (a timestamp) is dropped; C-quoted names (`"a/x\ty"`) are
//!    unquoted. A leading `a/` is stripped from the old name and `b/` from the
//!    new one. `/dev/null` (or a timestamp of the Unix epoch, as `diff -N`
//!    writes) on the old side makes the file an addition, on the new side a
//!    deletion.
//! 3. When the two names differ without a git rename header, the patched file
//!    is the one with the fewest path components, then the shortest base
//!    name, then the shortest name (GNU `patch`'s rule, without its existence
//!    checks since this code cannot look at the disk).
//! 4. Git extended headers are understood: `rename from`/`rename to` make a
//!    move, `new file mode`/`deleted file mode` without hunks add or delete an
//!    empty file; `index`, mode and similarity lines are ignored. Binary
//!    patches and copies are refused.
//! 5. A hunk header `@@ -START[,COUNT] +START[,COUNT] @@` is read by its
//!    counts: the hunk must hold exactly that many old (` ` and `-`) and new
//!    (` ` and `+`) lines, otherwise parsing fails with
//!    [`PatchError::HunkCount`]. An empty line inside a hunk is an empty
//!    context line (editors strip the lone space).
//! 6. Models often cannot count. A header with *no* numbers (`@@`, `@@ @@`,
//!    `@@ fn main @@`) is accepted: the hunk then runs until the next line that
//!    does not start with ` `, `-`, `+` or `\`, trailing empty lines are dropped
//!    from it, and it is located by its context alone. A header with wrong
//!    numbers is still an error, because the counts are what tells a removed
//!    line `--- x` from the next file header.
//! 7. `\ No newline at end of file` after a line marks that side's last line
//!    as unterminated.
//!
//! ## The envelope
//!
//! ```text
//! *** Begin Patch
//! *** Add File: PATH          every following line starts with `+`
//! *** Delete File: PATH
//! *** Update File: PATH
//! *** Move to: NEW_PATH       optional
//! @@ ANCHOR                   optional text after `@@`: a line to find first
//!  context / -removed / +added lines
//! *** End of File             optional: the block ends at the end of the file
//! *** End Patch
//! ```
//!
//! Several `@@ ANCHOR` lines in a row are searched one after the other (a
//! class, then a method in it). The first block of an update may omit `@@`. An
//! empty line inside a block is an empty context line. Text before
//! `*** Begin Patch` and after `*** End Patch` (a code fence, a heredoc
//! marker) is ignored, but `*** End Patch` itself is required: without it the
//! model's output was probably cut off, and applying half a patch is worse
//! than asking again.
//!
//! # Applying
//!
//! See [`apply_with_report`] for the rules that place hunks (offsets, fuzz,
//! whitespace tolerance) and keep line endings, the byte order mark and the
//! final newline.
//!
//! # Example
//!
//! ```
//! use toolgate_tools::patch;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let diff = "\
//! --- a/greet.txt
//! +++ b/greet.txt
//! @@ -1,2 +1,2 @@
//!  hello
//! -world
//! +there
//! ";
//! let parsed = patch::parse(diff)?;
//! let file = &parsed.files()[0];
//! assert_eq!(file.path(), "greet.txt");
//! assert_eq!(patch::apply("hello\r\nworld\r\n", file)?, "hello\r\nthere\r\n");
//! # Ok(())
//! # }
//! ```

use std::fmt;

mod apply;
mod envelope;
pub(crate) mod text;
mod unified;

pub use apply::{apply, apply_with_report};

/// Parses a unified diff or an envelope patch.
///
/// The format is detected as described in the [module docs](self). Every
/// error names the line of the patch where it was found and what was
/// expected there.
pub fn parse(text: &str) -> Result<Patch, PatchError> {
    let text = text.strip_prefix(text::BOM).unwrap_or(text);
    if text.trim().is_empty() {
        return Err(PatchError::Empty);
    }
    let lines = PatchLines::new(text);
    let (format, files) = if envelope::detect(&lines) {
        (PatchFormat::Envelope, envelope::parse(&lines)?)
    } else {
        (PatchFormat::Unified, unified::parse(&lines)?)
    };
    if files.is_empty() {
        return Err(match format {
            PatchFormat::Envelope => PatchError::NoChanges {
                expected: "`*** Add File:`, `*** Delete File:` or `*** Update File:` sections \
                           between `*** Begin Patch` and `*** End Patch`",
            },
            PatchFormat::Unified => PatchError::NoChanges {
                expected: "a unified diff (`--- a/PATH`, `+++ b/PATH`, then \
                           `@@ -START,COUNT +START,COUNT @@` hunks) or a `*** Begin Patch` envelope",
            },
        });
    }
    check_duplicates(&files)?;
    Ok(Patch { format, files })
}

/// Refuses a patch that names one file in two sections: the caller applies
/// each section to the file as it is on disk, so the second would silently
/// undo the first.
fn check_duplicates(files: &[FilePatch]) -> Result<(), PatchError> {
    let mut seen: Vec<&str> = Vec::new();
    for file in files {
        let mut names = vec![file.path.as_str()];
        if let Some(to) = file.move_to.as_deref()
            && to != file.path
        {
            names.push(to);
        }
        for name in names {
            if seen.contains(&name) {
                return Err(PatchError::DuplicatePath {
                    line: file.line,
                    path: name.to_owned(),
                });
            }
            seen.push(name);
        }
    }
    Ok(())
}

/// The lines of a patch text, without their `\n` or `\r\n`, with a count of
/// how many ended in `\r\n` (a hint for the line ending of new files).
pub(crate) struct PatchLines<'a> {
    lines: Vec<&'a str>,
    crlf: Vec<bool>,
}

impl<'a> PatchLines<'a> {
    fn new(text: &'a str) -> Self {
        let mut lines = Vec::new();
        let mut crlf = Vec::new();
        for piece in text.split_inclusive('\n') {
            let (line, is_crlf) = match piece.strip_suffix('\n') {
                Some(l) => match l.strip_suffix('\r') {
                    Some(l) => (l, true),
                    None => (l, false),
                },
                None => (piece, false),
            };
            lines.push(line);
            crlf.push(is_crlf);
        }
        Self { lines, crlf }
    }

    /// The line at 0-based `i`, or `None` past the end.
    pub(crate) fn get(&self, i: usize) -> Option<&'a str> {
        self.lines.get(i).copied()
    }

    pub(crate) fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether most lines in `range` ended with `\r\n`.
    pub(crate) fn mostly_crlf(&self, from: usize, to: usize) -> bool {
        let slice = self.crlf.get(from..to.min(self.crlf.len())).unwrap_or(&[]);
        let crlf = slice.iter().filter(|c| **c).count();
        crlf * 2 > slice.len()
    }
}

/// Shortens a patch line for an error message.
pub(crate) fn excerpt(line: &str) -> String {
    const MAX: usize = 80;
    match line.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", line.get(..cut).unwrap_or(line)),
        None => line.to_owned(),
    }
}

/// A parsed patch: the changes to one or more files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    format: PatchFormat,
    files: Vec<FilePatch>,
}

impl Patch {
    /// The format the patch was written in.
    pub fn format(&self) -> PatchFormat {
        self.format
    }

    /// The changes, one per file, in the order of the patch.
    pub fn files(&self) -> &[FilePatch] {
        &self.files
    }

    /// Takes the per-file changes out of the patch.
    pub fn into_files(self) -> Vec<FilePatch> {
        self.files
    }
}

/// The syntax a patch was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PatchFormat {
    /// A unified diff, git-style or plain `diff -u`.
    Unified,
    /// The `*** Begin Patch` … `*** End Patch` format of Codex and GPT models.
    Envelope,
}

/// What a [`FilePatch`] does to its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileKind {
    /// Creates [`FilePatch::path`]; [`apply`] must be given `""` as the
    /// original text.
    Add,
    /// Deletes [`FilePatch::path`]; [`apply`] checks the text against the
    /// removed lines, if the patch lists them, and returns `""`.
    Delete,
    /// Changes [`FilePatch::path`] and, with [`FilePatch::move_to`], renames
    /// it.
    Update,
}

/// The changes a patch makes to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    kind: FileKind,
    path: String,
    move_to: Option<String>,
    hunks: Vec<Hunk>,
    format: PatchFormat,
    /// Whether the patch's own lines for this file mostly end in `\r\n`: the
    /// line ending of a file created from nothing.
    crlf: bool,
    /// 1-based line of the patch where this file's section starts.
    line: usize,
}

impl FilePatch {
    /// What happens to the file.
    pub fn kind(&self) -> FileKind {
        self.kind
    }

    /// The file the patch reads (or, for [`FileKind::Add`], creates), as
    /// written in the patch with any `a/`/`b/` prefix removed. The caller
    /// resolves it through the workspace sandbox.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The new name of the file when the patch renames it.
    pub fn move_to(&self) -> Option<&str> {
        self.move_to.as_deref()
    }

    /// Where the result of [`apply`] is to be written: `None` for a deletion,
    /// otherwise [`move_to`](Self::move_to) or [`path`](Self::path).
    pub fn target_path(&self) -> Option<&str> {
        match self.kind {
            FileKind::Delete => None,
            FileKind::Add | FileKind::Update => Some(self.move_to().unwrap_or(&self.path)),
        }
    }

    /// The hunks, in the order of the patch.
    pub fn hunks(&self) -> &[Hunk] {
        &self.hunks
    }

    /// The syntax this file's changes were written in.
    pub fn format(&self) -> PatchFormat {
        self.format
    }

    /// The 1-based line of the patch where this file's section starts.
    pub fn line(&self) -> usize {
        self.line
    }
}

/// One block of changes: lines to find (context and removed) and what
/// replaces them (context and added).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hunk {
    old_start: Option<usize>,
    anchors: Vec<String>,
    lines: Vec<HunkLine>,
    old_missing_newline: bool,
    new_missing_newline: bool,
    end_of_file: bool,
    line: usize,
}

impl Hunk {
    /// The 1-based line of the original file where the hunk's old lines
    /// start, from a unified `@@ -START,COUNT` header. For a pure insertion
    /// (`COUNT` 0) it is the line after which the new lines go. `None` for
    /// envelope blocks and bare `@@` headers, which are placed by context.
    pub fn old_start(&self) -> Option<usize> {
        self.old_start
    }

    /// The envelope's `@@ ANCHOR` lines: lines to find, in order, before the
    /// block is searched for below them.
    pub fn anchors(&self) -> &[String] {
        &self.anchors
    }

    /// The hunk's lines in order.
    pub fn lines(&self) -> &[HunkLine] {
        &self.lines
    }

    /// Whether the last old line is marked `\ No newline at end of file`.
    pub fn old_missing_newline(&self) -> bool {
        self.old_missing_newline
    }

    /// Whether the last new line is marked `\ No newline at end of file`.
    pub fn new_missing_newline(&self) -> bool {
        self.new_missing_newline
    }

    /// Whether the envelope marked the block `*** End of File`.
    pub fn end_of_file(&self) -> bool {
        self.end_of_file
    }

    /// The 1-based line of the patch where the hunk starts.
    pub fn line(&self) -> usize {
        self.line
    }

    /// How many lines the hunk removes.
    pub fn removed(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| matches!(l, HunkLine::Remove(_)))
            .count()
    }

    /// How many lines the hunk adds.
    pub fn added(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| matches!(l, HunkLine::Add(_)))
            .count()
    }

    /// The old side: context and removed lines, in order.
    pub(crate) fn old_lines(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().filter_map(|l| match l {
            HunkLine::Context(t) | HunkLine::Remove(t) => Some(t.as_str()),
            HunkLine::Add(_) => None,
        })
    }
}

/// One line of a [`Hunk`], without its prefix character and line ending.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HunkLine {
    /// A line that must be present and stays (` `).
    Context(String),
    /// A line that must be present and goes (`-`).
    Remove(String),
    /// A line that is inserted (`+`).
    Add(String),
}

/// How loosely a hunk's lines had to be compared to the file's to place it.
///
/// Line endings never count: `\n` and `\r\n` always compare equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Tolerance {
    /// Byte for byte.
    Exact,
    /// Ignoring trailing whitespace.
    TrailingWhitespace,
    /// Ignoring leading and trailing whitespace (indentation).
    SurroundingWhitespace,
    /// Ignoring surrounding whitespace, with typographic dashes, quotes and
    /// spaces read as their ASCII forms.
    Punctuation,
}

impl fmt::Display for Tolerance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Exact => "exact",
            Self::TrailingWhitespace => "ignoring trailing whitespace",
            Self::SurroundingWhitespace => "ignoring indentation",
            Self::Punctuation => "ignoring indentation and unicode punctuation",
        })
    }
}

/// The new text of a file and how the patch was placed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Applied {
    /// The file's new text (`""` for a deletion).
    pub content: String,
    /// What happened, for the tool's summary.
    pub report: FileReport,
}

/// What applying one [`FilePatch`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct FileReport {
    /// One entry per hunk, in the order of the patch.
    pub hunks: Vec<HunkReport>,
    /// Lines added over all hunks.
    pub added: usize,
    /// Lines removed over all hunks.
    pub removed: usize,
}

impl FileReport {
    /// Whether every hunk went exactly where the patch said, with all its
    /// context and without tolerance.
    pub fn is_clean(&self) -> bool {
        self.hunks.iter().all(HunkReport::is_clean)
    }
}

impl fmt::Display for FileReport {
    /// One line: `3 hunks applied (+10 -4); hunk 2 at offset +3 lines`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.hunks.len();
        write!(
            f,
            "{n} hunk{} applied (+{} -{})",
            if n == 1 { "" } else { "s" },
            self.added,
            self.removed
        )?;
        let mut sep = "; ";
        for hunk in self.hunks.iter().filter(|h| !h.is_clean()) {
            write!(f, "{sep}{hunk}")?;
            sep = ", ";
        }
        Ok(())
    }
}

/// Where one hunk went.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HunkReport {
    /// 1-based number of the hunk within its file, in patch order.
    pub number: usize,
    /// The 1-based line the patch said the hunk starts at, if it said.
    pub expected_line: Option<usize>,
    /// The 1-based line of the original text where the hunk was applied
    /// (counting any context lines ignored by fuzz).
    pub line: usize,
    /// `line - expected_line`, when the patch gave a line.
    pub offset: Option<isize>,
    /// How many leading and trailing context lines were ignored (0 to 2).
    pub fuzz: usize,
    /// How loosely lines were compared.
    pub tolerance: Tolerance,
}

impl HunkReport {
    /// Whether the hunk applied where the patch said, with all its context
    /// and exactly.
    pub fn is_clean(&self) -> bool {
        self.offset.unwrap_or(0) == 0 && self.fuzz == 0 && self.tolerance == Tolerance::Exact
    }
}

impl fmt::Display for HunkReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "hunk {} at line {}", self.number, self.line)?;
        if let Some(offset) = self.offset.filter(|o| *o != 0) {
            let lines = if offset.unsigned_abs() == 1 {
                "line"
            } else {
                "lines"
            };
            write!(f, " (offset {offset:+} {lines})")?;
        }
        if self.fuzz > 0 {
            write!(f, " with fuzz {}", self.fuzz)?;
        }
        if self.tolerance != Tolerance::Exact {
            write!(f, " {}", self.tolerance)?;
        }
        Ok(())
    }
}

/// Why a patch text could not be parsed.
///
/// Line numbers are 1-based lines of the patch text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatchError {
    /// The patch text is empty or only whitespace.
    #[error(
        "the patch is empty; send a unified diff or a `*** Begin Patch` … `*** End Patch` envelope"
    )]
    Empty,
    /// The text holds no file changes.
    #[error("the patch contains no file changes; expected {expected}")]
    NoChanges {
        /// What a patch of the detected format looks like.
        expected: &'static str,
    },
    /// A line is not what the syntax allows at that point.
    #[error("line {line}: expected {expected}, found `{found}`")]
    Unexpected {
        /// Where.
        line: usize,
        /// What would have been valid.
        expected: &'static str,
        /// The offending line, shortened.
        found: String,
    },
    /// A `@@` line that starts with numbers but does not parse.
    #[error(
        "line {line}: malformed hunk header `{found}`; expected `@@ -START,COUNT +START,COUNT @@`, \
         or a bare `@@` to place the hunk by its context alone"
    )]
    HunkHeader {
        /// Where.
        line: usize,
        /// The header, shortened.
        found: String,
    },
    /// A hunk's lines do not add up to the counts in its header.
    #[error(
        "hunk {hunk} of `{path}` (line {line}): the header announces {header_old} old and \
         {header_new} new lines but the hunk has {found_old} old and {found_new} new lines; \
         fix the counts (old = ` ` and `-` lines, new = ` ` and `+` lines) or use a bare `@@` header"
    )]
    HunkCount {
        /// The file.
        path: String,
        /// 1-based hunk number within the file.
        hunk: usize,
        /// Line of the hunk header.
        line: usize,
        /// Old-side count from the header.
        header_old: usize,
        /// New-side count from the header.
        header_new: usize,
        /// Old-side lines actually present.
        found_old: usize,
        /// New-side lines actually present.
        found_new: usize,
    },
    /// A hunk or envelope block without any line.
    #[error("hunk {hunk} of `{path}` (line {line}) has no lines; give context, `-` and `+` lines")]
    EmptyHunk {
        /// The file.
        path: String,
        /// 1-based hunk number within the file.
        hunk: usize,
        /// Where the hunk starts.
        line: usize,
    },
    /// A hunk that cannot be placed: no old lines and no line numbers.
    #[error(
        "hunk {hunk} of `{path}` (line {line}) has neither context lines nor line numbers, so \
         there is no way to tell where it goes; add a few unchanged lines around the change"
    )]
    Unplaceable {
        /// The file.
        path: String,
        /// 1-based hunk number within the file.
        hunk: usize,
        /// Where the hunk starts.
        line: usize,
    },
    /// A file addition with old lines, or a deletion with new lines.
    #[error("line {line}: {what} `{path}` must only {only} lines")]
    WrongSide {
        /// Where the offending hunk starts.
        line: usize,
        /// `a new file` or `the deleted file`.
        what: &'static str,
        /// The file.
        path: String,
        /// `add` or `remove`.
        only: &'static str,
    },
    /// An update section without any change.
    #[error(
        "line {line}: the update of `{path}` contains no changes; add `@@` blocks or remove the section"
    )]
    NoHunks {
        /// Where the section starts.
        line: usize,
        /// The file.
        path: String,
    },
    /// The same file in two sections.
    #[error(
        "line {line}: `{path}` appears more than once in the patch; put all its changes in one section"
    )]
    DuplicatePath {
        /// Where the second section starts.
        line: usize,
        /// The repeated path.
        path: String,
    },
    /// The envelope's `*** End Patch` is missing.
    #[error(
        "`*** End Patch` is missing after `*** Begin Patch` at line {line}; the patch may have been \
         cut off, send it again in full"
    )]
    MissingEnd {
        /// Where `*** Begin Patch` is.
        line: usize,
    },
    /// Something a text patch cannot express here.
    #[error("line {line}: {what} are not supported; {instead}")]
    Unsupported {
        /// Where.
        line: usize,
        /// What, plural (`binary patches`).
        what: &'static str,
        /// What to do instead.
        instead: &'static str,
    },
}

/// Why a [`FilePatch`] could not be applied to a file's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    /// A hunk matches nowhere, even with offset, fuzz and tolerance.
    #[error(
        "hunk {hunk} of `{path}` does not match the file{}; {closest}\nre-read the file and send \
         the hunk again with its context and removed lines copied exactly",
        near(*.expected_line)
    )]
    HunkFailed {
        /// The file.
        path: String,
        /// 1-based hunk number within the file, in patch order.
        hunk: usize,
        /// The 1-based line the hunk was expected at, when known.
        expected_line: Option<usize>,
        /// The most similar text of the file, with line numbers.
        closest: String,
    },
    /// An envelope `@@ ANCHOR` line is not in the file.
    #[error(
        "hunk {hunk} of `{path}`: the anchor line `@@ {anchor}` is not in the file; {closest}\nuse \
         a line copied exactly from the file after `@@`"
    )]
    AnchorNotFound {
        /// The file.
        path: String,
        /// 1-based hunk number within the file.
        hunk: usize,
        /// The anchor text.
        anchor: String,
        /// The most similar line of the file, with its number.
        closest: String,
    },
    /// An addition of a file that already has content.
    #[error("cannot add `{path}`: the file already exists and is not empty; update it instead")]
    AlreadyExists {
        /// The file.
        path: String,
    },
    /// A deletion whose removed lines are not the whole file.
    #[error(
        "refusing to delete `{path}`: the file has lines the deletion patch does not list; re-read \
         the file"
    )]
    DeleteMismatch {
        /// The file.
        path: String,
    },
}

/// `" (expected near line N)"` or nothing.
fn near(line: Option<usize>) -> String {
    line.map(|l| format!(" near line {l}")).unwrap_or_default()
}
