//! The search itself: compile the pattern, search every file the walker
//! hands over, keep the first matches in path order.
//!
//! Workers finish files in whatever order the threads run, so nothing can be
//! shown until every file has been searched. To keep memory bounded anyway,
//! the shared [`Collected`] holds only the files that can still be part of
//! the first `max_results` matches in path order; a worker that finds the
//! collection already full *before* its file only counts the file's matches.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::WalkState;
use toolgate_core::Workspace;

use super::walk::{Access, Scope, display};
use crate::fs::NameGlob;

/// The longest line shown, in characters; longer ones are cut with a marker.
const MAX_LINE_CHARS: usize = 500;

/// How many bytes of a line are decoded at most: enough for
/// `MAX_LINE_CHARS` characters of up to four bytes.
const MAX_LINE_BYTES: usize = 4 * MAX_LINE_CHARS + 4;

/// Compiles a search pattern: a regex, or literal text when `literal`.
///
/// Line-oriented: the matcher never matches a newline, so every match is one
/// line.
pub(super) fn matcher(
    pattern: &str,
    literal: bool,
    case_insensitive: bool,
) -> Result<RegexMatcher, String> {
    if pattern.is_empty() {
        return Err("the pattern is empty; give the text or regex to search for".to_owned());
    }
    RegexMatcherBuilder::new()
        .line_terminator(Some(b'\n'))
        .fixed_strings(literal)
        .case_insensitive(case_insensitive)
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
        if self.scope.is_file {
            let mut searchers = Searchers::new(self.context);
            // A file named explicitly is searched whatever `file_pattern`
            // says, as ripgrep does.
            self.search_file(&mut searchers, &collected, self.scope.start(), false);
        } else {
            self.scope
                .walker(self.workspace, self.recursive, self.include_ignored)
                .run(|| {
                    let mut searchers = Searchers::new(self.context);
                    let collected = &collected;
                    Box::new(move |entry| {
                        if self.cancel.load(Ordering::Relaxed) {
                            return WalkState::Quit;
                        }
                        // Symlinks are `is_symlink`, not `is_file`: skipped.
                        if let Ok(entry) = entry
                            && entry.file_type().is_some_and(|t| t.is_file())
                        {
                            self.search_file(&mut searchers, collected, entry.path(), true);
                        }
                        WalkState::Continue
                    })
                });
        }
        let collected = collected
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        Found {
            files: collected.kept.into_values().collect(),
            total_matches: collected.total_matches,
            files_searched: collected.files_searched,
            files_matched: collected.files_matched,
            binary_skipped: collected.binary_skipped,
            sensitive_skipped: collected.sensitive_skipped,
            cancelled: self.cancel.load(Ordering::Relaxed),
        }
    }

    /// Whether the workspace refuses `rel` as sensitive.
    fn refused(&self, rel: &Path) -> bool {
        self.workspace.sensitive_refusal(rel).is_some()
    }

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
        let mut path = None;
        if let Some(glob) = glob {
            let text = path.insert(display(&shown));
            if !glob.is_match(text) {
                return;
            }
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
        let mut sink = FileSink {
            collect,
            cap: self.max_results,
            hits: FileHits::default(),
            seen: 0,
            full: false,
            binary: false,
        };
        let searcher = if collect {
            &mut searchers.with_context
        } else {
            &mut searchers.count_only
        };
        // A read error part-way: keep what was read; the file was searched
        // as far as it could be.
        let _ = searcher.search_file(&self.matcher, &file, &mut sink);
        drop(file);
        let mut collected = lock(collected);
        collected.files_searched += 1;
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
            hits.path = path.unwrap_or_else(|| display(&shown));
            collected.add(shown.into_owned(), hits, self.max_results);
        }
    }
}

/// What [`find`] found.
#[derive(Debug, Default)]
pub(super) struct Finds {
    /// Workspace-relative paths, sorted.
    pub(super) paths: Vec<String>,
    /// Files whose path matched but that were left out as sensitive.
    pub(super) sensitive: u64,
}

/// Lists the files in `scope` whose workspace-relative path matches `glob`,
/// sorted; each one checked as the search checks the files it reads, so
/// that no name from outside the workspace and no sensitive file is listed.
pub(super) fn find(
    workspace: &Workspace,
    scope: &Scope,
    glob: &NameGlob,
    recursive: bool,
    include_ignored: bool,
    cancel: &AtomicBool,
) -> Finds {
    let found = Mutex::new(Vec::new());
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
    if scope.is_file {
        if let Some(hit) = check(scope.start()) {
            lock(&found).push(hit);
        }
    } else {
        scope.walker(workspace, recursive, include_ignored).run(|| {
            let (found, check) = (&found, &check);
            Box::new(move |entry| {
                if cancel.load(Ordering::Relaxed) {
                    return WalkState::Quit;
                }
                if let Ok(entry) = entry
                    && entry.file_type().is_some_and(|t| t.is_file())
                    && let Some(hit) = check(entry.path())
                {
                    lock(found).push(hit);
                }
                WalkState::Continue
            })
        });
    }
    let mut found = found.into_inner().unwrap_or_else(PoisonError::into_inner);
    found.sort_unstable();
    Finds {
        paths: found.into_iter().map(|(_, text)| text).collect(),
        sensitive: sensitive.into_inner(),
    }
}

/// Locks `mutex`; a worker that panicked while holding it left data that is
/// still consistent (every update is a few plain assignments), so poisoning
/// is ignored.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One searcher per worker thread for each kind of pass.
struct Searchers {
    with_context: Searcher,
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
                .build()
        };
        Self {
            with_context: build(context),
            count_only: build(0),
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
    total_matches: u64,
    files_searched: u64,
    files_matched: u64,
    binary_skipped: u64,
    sensitive_skipped: u64,
}

impl Collected {
    /// Whether the files kept before `path` already hold `max` matches, so
    /// that nothing from `path` would be shown.
    fn is_full_before(&self, path: &Path, max: usize) -> bool {
        self.kept_matches >= max
            && self
                .kept
                .last_key_value()
                .is_some_and(|(last, _)| path > last.as_path())
    }

    /// Keeps `hits`, then drops the last files while the rest still hold
    /// `max` matches.
    fn add(&mut self, path: PathBuf, hits: FileHits, max: usize) {
        self.kept_matches += hits.matches;
        if let Some(old) = self.kept.insert(path, hits) {
            self.kept_matches -= old.matches;
        }
        while let Some(entry) = self.kept.last_entry() {
            let without = self.kept_matches - entry.get().matches;
            if without < max {
                break;
            }
            self.kept_matches = without;
            entry.remove();
        }
    }
}

/// Receives one file's matches from the searcher.
struct FileSink {
    /// Keep lines (otherwise only count).
    collect: bool,
    /// Most matching lines to keep.
    cap: usize,
    hits: FileHits,
    /// Matching lines seen.
    seen: u64,
    /// `cap` matches are kept and their after-context is complete.
    full: bool,
    binary: bool,
}

impl FileSink {
    fn push(&mut self, number: Option<u64>, bytes: &[u8], is_match: bool) {
        self.hits.lines.push(Line {
            number: number.unwrap_or_default(),
            text: line_text(bytes),
            is_match,
        });
    }
}

impl Sink for FileSink {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        self.seen += 1;
        if self.collect && !self.full {
            if self.hits.matches < self.cap {
                self.push(found.line_number(), found.bytes(), true);
                self.hits.matches += 1;
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
            let message = matcher(pattern, false, false).unwrap_err();
            assert!(message.contains(expected), "{pattern:?}: {message}");
        }
        assert!(matcher("", false, false).unwrap_err().contains("empty"));
        // Literal text never fails to compile.
        assert!(matcher("a.b(c", true, false).is_ok());
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
