//! The search itself: compile the pattern, search every file the walker
//! hands over, keep the first matches in path order.
//!
//! Workers finish files in whatever order the threads run, so nothing can be
//! shown until every file has been searched. To keep memory bounded anyway,
//! the shared [`Collected`] holds only the files that can still be part of
//! the first `max_results` matches (and the first [`MAX_OUTPUT_BYTES`] of
//! output) in path order; a worker that finds the collection already full
//! *before* its file only counts the file's matches.
//!
//! What one file can cost is bounded too: the searcher reads through a line
//! buffer of at most [`LINE_LIMIT`] bytes (a file with a longer line is
//! skipped and counted, see [`Search::search_file`]), and a file's sink
//! keeps at most 500 characters of each line and stops keeping lines once
//! they fill [`MAX_OUTPUT_BYTES`].

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use toolgate_core::Workspace;

use super::walk::{Access, Scope, display};
use crate::bounded::{MAX_OUTPUT_BYTES, Shortlist};
use crate::fs::NameGlob;

/// The longest line shown, in characters; longer ones are cut with a marker.
const MAX_LINE_CHARS: usize = 500;

/// The most bytes a searcher's line buffer may hold: the longest line a
/// search can read (with context lines, the line and the context before it;
/// see [`Search::search_file`] for what happens then). ripgrep's default
/// buffer is 64 KiB and grows to hold the longest line, so without a limit a
/// file holding one 1 GiB line costs 1 GiB.
pub(super) const LINE_LIMIT: usize = 1024 * 1024;

/// How many bytes of a line are decoded at most: enough for
/// `MAX_LINE_CHARS` characters of up to four bytes.
const MAX_LINE_BYTES: usize = 4 * MAX_LINE_CHARS + 4;

/// Compiles a search pattern: a regex, or literal text when `literal`;
/// with `smart_case`, a pattern without an uppercase letter ignores case
/// (ripgrep's `--smart-case`).
///
/// Line-oriented: the matcher never matches a newline, so every match is one
/// line.
pub(super) fn matcher(
    pattern: &str,
    literal: bool,
    case_insensitive: bool,
    smart_case: bool,
) -> Result<RegexMatcher, String> {
    if pattern.is_empty() {
        return Err("the pattern is empty; give the text or regex to search for".to_owned());
    }
    RegexMatcherBuilder::new()
        .line_terminator(Some(b'\n'))
        .fixed_strings(literal)
        .case_insensitive(case_insensitive)
        .case_smart(smart_case)
        .build(pattern)
        .map_err(|error| regex_error(pattern, &error))
}

/// A message for a pattern that does not compile, with the position of the
/// problem when the regex parser can give it.
fn regex_error(pattern: &str, error: &grep_regex::Error) -> String {
    const FIX: &str = "escape regex metacharacters such as ( ) [ ] { } . * + ? | \\ with a backslash \
                       to match them literally, or use the grep tool to search for plain text";
    let parsed = regex_syntax::ParserBuilder::new().build().parse(pattern);
    let located = match &parsed {
        Err(regex_syntax::Error::Parse(e)) => Some((e.kind().to_string(), *e.span())),
        Err(regex_syntax::Error::Translate(e)) => Some((e.kind().to_string(), *e.span())),
        _ => None,
    };
    if let Some((what, span)) = located {
        let at = pattern
            .get(span.start.offset..span.end.offset)
            .unwrap_or_default();
        let line = if span.start.line > 1 {
            format!("line {}, ", span.start.line)
        } else {
            String::new()
        };
        let near = if at.is_empty() {
            String::new()
        } else {
            format!(" (at `{at}`)")
        };
        return format!(
            "invalid regex `{pattern}`: {what} at {line}character {}{near}; {FIX}",
            span.start.column
        );
    }
    if let grep_regex::ErrorKind::NotAllowed(_) = error.kind() {
        return format!(
            "invalid regex `{pattern}`: {error}; the search goes line by line, so a pattern cannot match a \
             line break: search for one line of it"
        );
    }
    format!("invalid regex `{pattern}`: {error}; simplify the pattern")
}

/// One line of output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Line {
    /// The line number, from 1.
    pub(super) number: u64,
    /// The text, without its line terminator, perhaps cut short.
    pub(super) text: String,
    /// A matching line, rather than context around one.
    pub(super) is_match: bool,
}

/// The lines kept from one file.
#[derive(Debug, Clone, Default)]
pub(super) struct FileHits {
    /// The workspace-relative path, for output.
    pub(super) path: String,
    /// Matching and context lines, in order.
    pub(super) lines: Vec<Line>,
    /// How many of `lines` are matches.
    pub(super) matches: usize,
    /// What `lines` weigh in the output, counted low (see [`FileSink`]).
    pub(super) bytes: usize,
}

/// What a whole search found.
#[derive(Debug, Default)]
pub(super) struct Found {
    /// The files holding the first matches, sorted by path; together they
    /// hold at least `max_results` matches when there are that many.
    pub(super) files: Vec<FileHits>,
    /// Matching lines in all files searched.
    pub(super) total_matches: u64,
    /// Files searched (binary files included).
    pub(super) files_searched: u64,
    /// Files with at least one matching line.
    pub(super) files_matched: u64,
    /// Files skipped as binary.
    pub(super) binary_skipped: u64,
    /// Files skipped because a line is longer than [`LINE_LIMIT`].
    pub(super) long_line_skipped: u64,
    /// Files not searched because they are sensitive (among those the
    /// search would otherwise have searched).
    pub(super) sensitive_skipped: u64,
    /// Whether the search stopped early because the call was abandoned.
    pub(super) cancelled: bool,
}

/// A search over a [`Scope`].
pub(super) struct Search<'a> {
    pub(super) workspace: &'a Workspace,
    pub(super) scope: &'a Scope,
    pub(super) matcher: RegexMatcher,
    /// Files whose workspace-relative path does not match are skipped.
    pub(super) glob: Option<NameGlob>,
    /// Context lines before and after each match.
    pub(super) context: usize,
    /// How many matching lines are shown; at least 1.
    pub(super) max_results: usize,
    pub(super) recursive: bool,
    pub(super) include_ignored: bool,
    /// Set when the caller gave up on the call; the walk then stops.
    pub(super) cancel: &'a AtomicBool,
}

impl Search<'_> {
    /// Searches every file in the scope.
    pub(super) fn run(&self) -> Found {
        let collected = Mutex::new(Collected::default());
        // A file named explicitly is searched whatever `file_pattern` says,
        // as ripgrep does.
        let filter = !self.scope.is_file;
        self.scope.for_each_file(
            self.recursive,
            self.include_ignored,
            self.cancel,
            || Searchers::new(self.context),
            |searchers, path| self.search_file(searchers, &collected, path, filter),
        );
        let collected = collected
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        Found {
            files: collected.kept.into_values().collect(),
            total_matches: collected.total_matches,
            files_searched: collected.files_searched,
            files_matched: collected.files_matched,
            binary_skipped: collected.binary_skipped,
            long_line_skipped: collected.long_line_skipped,
            sensitive_skipped: collected.sensitive_skipped,
            cancelled: self.cancel.load(Ordering::Relaxed),
        }
    }

    /// Whether the workspace refuses `rel` as sensitive.
    fn refused(&self, rel: &Path) -> bool {
        self.workspace.sensitive_refusal(rel).is_some()
    }

    /// Searches one file the walk found and adds what it holds to
    /// `collected`.
    ///
    /// A line longer than [`LINE_LIMIT`] makes the searcher fail rather than
    /// grow its buffer. With context lines, the buffer holds the context
    /// before a line too, so a failure there may come from a few long lines
    /// together: the file is then searched again without context, and only
    /// if that fails too is it skipped, whole (as a binary file is), and
    /// counted as holding a line too long to search. Nothing else can make
    /// the search of a file fail but a read error, which the reader tells.
    fn search_file(
        &self,
        searchers: &mut Searchers,
        collected: &Mutex<Collected>,
        found: &Path,
        filter: bool,
    ) {
        let Some((shown, physical)) = self.scope.relative(found) else {
            return;
        };
        let glob = self.glob.as_ref().filter(|_| filter);
        let path = display(&shown);
        if glob.is_some_and(|glob| !glob.is_match(&path)) {
            return;
        }
        // toolgate's own state: left out silently, as if it were not there.
        let private = |rel: &Path| self.workspace.is_private(rel);
        if private(physical) || private(&shown) {
            return;
        }
        // Counted, so the output can say that files were left out.
        let skip_sensitive = || lock(collected).sensitive_skipped += 1;
        if self.refused(physical) || (*shown != *physical && self.refused(&shown)) {
            skip_sensitive();
            return;
        }
        let Some((file, real)) = self.scope.open(found, physical, Access::Read) else {
            return;
        };
        if private(&real) {
            return;
        }
        if *real != *physical && self.refused(&real) {
            skip_sensitive();
            return;
        }
        let collect = !lock(collected).is_full_before(&shown, self.max_results);
        let context = collect && self.context > 0;
        let mut sink = FileSink::new(collect, self.max_results, path.len());
        let mut searched = search(searchers.for_pass(context), &self.matcher, &file, &mut sink);
        if searched == Searched::LineTooLong && context && (&file).seek(SeekFrom::Start(0)).is_ok()
        {
            sink = FileSink::new(collect, self.max_results, path.len());
            searched = search(&mut searchers.count_only, &self.matcher, &file, &mut sink);
        }
        drop(file);
        let mut collected = lock(collected);
        collected.files_searched += 1;
        if searched == Searched::LineTooLong {
            collected.long_line_skipped += 1;
            return;
        }
        if sink.binary {
            collected.binary_skipped += 1;
            return;
        }
        collected.total_matches += sink.seen;
        if sink.seen > 0 {
            collected.files_matched += 1;
        }
        if collect && sink.hits.matches > 0 {
            let mut hits = sink.hits;
            hits.path = path;
            collected.add(shown.into_owned(), hits, self.max_results);
        }
    }
}

/// How the search of one file ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Searched {
    /// Read to the end, or to where the sink stopped (a binary file).
    Done,
    /// A read error part-way: what was read is kept, the file was searched
    /// as far as it could be.
    ReadError,
    /// The searcher's buffer could not hold a line: [`LINE_LIMIT`].
    LineTooLong,
}

/// Searches `file` with `searcher` into `sink`, and says how it ended.
///
/// The searcher reports every failure as an [`io::Error`]: a read error of
/// the file, a [`FileSink`] error (there are none), or its line buffer
/// reaching [`LINE_LIMIT`]. The reader notes its own errors, so the
/// remaining case is told apart without reading an error message.
fn search(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    file: &File,
    sink: &mut FileSink,
) -> Searched {
    let mut reader = NotedReads {
        file,
        failed: false,
    };
    match searcher.search_reader(matcher, &mut reader, sink) {
        Ok(()) => Searched::Done,
        Err(_) if reader.failed => Searched::ReadError,
        Err(_) => Searched::LineTooLong,
    }
}

/// A file read by the searcher, noting whether a read failed.
struct NotedReads<'a> {
    file: &'a File,
    failed: bool,
}

impl Read for NotedReads<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.file.read(buf).inspect_err(|error| {
            self.failed |= error.kind() != io::ErrorKind::Interrupted;
        })
    }
}

/// What [`find`] found.
#[derive(Debug, Default)]
pub(super) struct Finds {
    /// The first workspace-relative paths in path order, as many as can be
    /// shown.
    pub(super) paths: Vec<String>,
    /// How many paths matched in all.
    pub(super) total: usize,
    /// Files whose path matched but that were left out as sensitive.
    pub(super) sensitive: u64,
}

/// Lists the files in `scope` whose workspace-relative path matches `glob`:
/// the first `max` in path order (and no more than [`MAX_OUTPUT_BYTES`] of
/// them), and how many there are. Each one is checked as the search checks
/// the files it reads, so that no name from outside the workspace and no
/// sensitive file is listed.
pub(super) fn find(
    workspace: &Workspace,
    scope: &Scope,
    glob: &NameGlob,
    recursive: bool,
    include_ignored: bool,
    max: usize,
    cancel: &AtomicBool,
) -> Finds {
    let found = Mutex::new(Shortlist::new(max, MAX_OUTPUT_BYTES));
    let sensitive = AtomicU64::new(0);
    let check = |path: &Path| {
        let (shown, physical) = scope.relative(path)?;
        let text = display(&shown);
        if !glob.is_match(&text) {
            return None;
        }
        let private = |rel: &Path| workspace.is_private(rel);
        if private(physical) || private(&shown) {
            return None;
        }
        let refused = |rel: &Path| workspace.sensitive_refusal(rel).is_some();
        let skip = || {
            sensitive.fetch_add(1, Ordering::Relaxed);
            None
        };
        if refused(physical) || (*shown != *physical && refused(&shown)) {
            return skip();
        }
        let (_, real) = scope.open(path, physical, Access::Locate)?;
        if private(&real) {
            return None;
        }
        if *real != *physical && refused(&real) {
            return skip();
        }
        Some((shown.into_owned(), text))
    };
    scope.for_each_file(
        recursive,
        include_ignored,
        cancel,
        || (),
        |(), path| {
            if let Some((key, text)) = check(path) {
                lock(&found).offer(key, text);
            }
        },
    );
    let found = found.into_inner().unwrap_or_else(PoisonError::into_inner);
    Finds {
        total: found.offered(),
        paths: found.into_texts(),
        sensitive: sensitive.into_inner(),
    }
}

/// Locks `mutex`; a worker that panicked while holding it left data that is
/// still consistent (every update is a few plain assignments), so poisoning
/// is ignored.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One searcher per worker thread for each kind of pass. Each grows its
/// line buffer as long lines need, up to [`LINE_LIMIT`], and keeps it for
/// the next file.
struct Searchers {
    with_context: Searcher,
    /// Without context lines: for files whose lines are only counted, or
    /// when no context was asked.
    count_only: Searcher,
}

impl Searchers {
    fn new(context: usize) -> Self {
        let build = |context: usize| {
            SearcherBuilder::new()
                // Stop at the first NUL byte: the file is binary and is
                // skipped whole, matches found before the NUL included.
                .binary_detection(BinaryDetection::quit(0))
                .line_number(true)
                .before_context(context)
                .after_context(context)
                .heap_limit(Some(LINE_LIMIT))
                .build()
        };
        Self {
            with_context: build(context),
            count_only: build(0),
        }
    }

    /// The searcher for a pass with or without context lines.
    fn for_pass(&mut self, context: bool) -> &mut Searcher {
        if context {
            &mut self.with_context
        } else {
            &mut self.count_only
        }
    }
}

/// The files that may hold the first matches, and the counts of all.
#[derive(Debug, Default)]
struct Collected {
    /// By workspace-relative path, compared component by component (so
    /// `a/b` sorts before `a.b`, as in `list_files`). Holds at least `max`
    /// matches when there were that many, and no file it does not need.
    kept: BTreeMap<PathBuf, FileHits>,
    kept_matches: usize,
    /// The output the kept files make, counted low.
    kept_bytes: usize,
    total_matches: u64,
    files_searched: u64,
    files_matched: u64,
    binary_skipped: u64,
    long_line_skipped: u64,
    sensitive_skipped: u64,
}

impl Collected {
    /// Whether the files kept before `path` already hold `max` matches or
    /// [`MAX_OUTPUT_BYTES`] of output, so that nothing from `path` would be
    /// shown.
    fn is_full_before(&self, path: &Path, max: usize) -> bool {
        (self.kept_matches >= max || self.kept_bytes >= MAX_OUTPUT_BYTES)
            && self
                .kept
                .last_key_value()
                .is_some_and(|(last, _)| path > last.as_path())
    }

    /// Keeps `hits`, then drops the last files while the rest still hold
    /// `max` matches or [`MAX_OUTPUT_BYTES`] of output.
    fn add(&mut self, path: PathBuf, hits: FileHits, max: usize) {
        self.kept_matches += hits.matches;
        self.kept_bytes += hits.bytes;
        if let Some(old) = self.kept.insert(path, hits) {
            self.kept_matches -= old.matches;
            self.kept_bytes -= old.bytes;
        }
        while let Some(entry) = self.kept.last_entry() {
            let matches = self.kept_matches - entry.get().matches;
            let bytes = self.kept_bytes - entry.get().bytes;
            if matches < max && bytes < MAX_OUTPUT_BYTES {
                break;
            }
            self.kept_matches = matches;
            self.kept_bytes = bytes;
            entry.remove();
        }
    }
}

/// Receives one file's matches from the searcher.
///
/// It keeps lines until it holds `cap` matches or [`MAX_OUTPUT_BYTES`] of
/// output: no more of the file could be shown. The output is counted low
/// (`path:N: text` and a newline is at least the path, the text and four
/// bytes), so that when the kept lines reach the limit, so does what they
/// render to, and the rendering stops within them: the lines this sink did
/// not keep are never needed.
struct FileSink {
    /// Keep lines (otherwise only count).
    collect: bool,
    /// Most matching lines to keep.
    cap: usize,
    /// The length of the path shown before each line.
    path_len: usize,
    hits: FileHits,
    /// Matching lines seen.
    seen: u64,
    /// No more lines are kept: `cap` matches are kept and their
    /// after-context is complete, or the output limit is reached.
    full: bool,
    binary: bool,
}

impl FileSink {
    fn new(collect: bool, cap: usize, path_len: usize) -> Self {
        Self {
            collect,
            cap,
            path_len,
            hits: FileHits::default(),
            seen: 0,
            full: false,
            binary: false,
        }
    }

    fn push(&mut self, number: Option<u64>, bytes: &[u8], is_match: bool) {
        let text = line_text(bytes);
        self.hits.bytes += self.path_len + text.len() + 4;
        self.hits.lines.push(Line {
            number: number.unwrap_or_default(),
            text,
            is_match,
        });
        if is_match {
            self.hits.matches += 1;
        }
        if self.hits.bytes >= MAX_OUTPUT_BYTES {
            self.full = true;
        }
    }
}

impl Sink for FileSink {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        self.seen += 1;
        if self.collect && !self.full {
            if self.hits.matches < self.cap {
                self.push(found.line_number(), found.bytes(), true);
            } else {
                self.full = true;
            }
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, std::io::Error> {
        if self.collect && !self.full {
            self.push(context.line_number(), context.bytes(), false);
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, std::io::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// A line for output: without its terminator, invalid UTF-8 replaced, cut
/// after [`MAX_LINE_CHARS`] characters with a marker saying how long it was.
fn line_text(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let head = bytes.get(..MAX_LINE_BYTES).unwrap_or(bytes);
    let text = String::from_utf8_lossy(head);
    match text.char_indices().nth(MAX_LINE_CHARS) {
        None if head.len() == bytes.len() => text.into_owned(),
        cut => {
            let end = cut.map_or(text.len(), |(at, _)| at);
            let kept = text.get(..end).unwrap_or_default();
            format!("{kept} … [line cut: {} bytes in all]", bytes.len())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_texts() {
        let long = "x".repeat(600);
        let cases: &[(&[u8], &str)] = &[
            (b"plain\n", "plain"),
            (b"crlf\r\n", "crlf"),
            (b"no terminator", "no terminator"),
            (b"caf\xe9\n", "caf\u{fffd}"),
            (b"", ""),
        ];
        for (bytes, expected) in cases {
            assert_eq!(line_text(bytes), *expected);
        }
        let cut = line_text(long.as_bytes());
        assert_eq!(
            cut,
            format!("{} … [line cut: 600 bytes in all]", "x".repeat(500))
        );
        let exact = "é".repeat(500);
        assert_eq!(line_text(exact.as_bytes()), exact);
        let huge = "é".repeat(5000);
        assert!(line_text(huge.as_bytes()).ends_with("… [line cut: 10000 bytes in all]"));
    }

    #[test]
    fn regex_errors_say_where_and_what_to_do() {
        let cases: &[(&str, &str)] = &[
            ("a(b", "unclosed group at character 2 (at `(`)"),
            ("x[a-", "unclosed character class at character 2"),
            ("foo)", "unopened group at character 4 (at `)`)"),
            ("a{2,1}", "invalid repetition"),
            ("\\p{Nope}", "Unicode property not found at character 1"),
            ("a\nb", "line break"),
        ];
        for (pattern, expected) in cases {
            let message = matcher(pattern, false, false, false).unwrap_err();
            assert!(message.contains(expected), "{pattern:?}: {message}");
        }
        assert!(
            matcher("", false, false, false)
                .unwrap_err()
                .contains("empty")
        );
        // Literal text never fails to compile.
        assert!(matcher("a.b(c", true, false, false).is_ok());
    }

    fn hits(n: usize) -> FileHits {
        FileHits {
            matches: n,
            ..FileHits::default()
        }
    }

    #[test]
    fn collected_keeps_only_what_can_be_shown() {
        let mut c = Collected::default();
        c.add("m".into(), hits(2), 3);
        c.add("z".into(), hits(5), 3);
        assert_eq!(c.kept.len(), 2);
        assert!(c.is_full_before(Path::new("zz"), 3));
        assert!(!c.is_full_before(Path::new("n"), 3));
        // `a` comes first and, with `m`, holds 3: `z` is dropped.
        c.add("a".into(), hits(1), 3);
        assert_eq!(
            c.kept.keys().collect::<Vec<_>>(),
            [Path::new("a"), Path::new("m")]
        );
        assert_eq!(c.kept_matches, 3);
        c.add("0".into(), hits(7), 3);
        assert_eq!(c.kept.keys().collect::<Vec<_>>(), [Path::new("0")]);
    }
}
