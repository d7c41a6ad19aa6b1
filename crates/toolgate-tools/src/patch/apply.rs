//! Placing hunks in a file's text and building the new text.

use std::borrow::Cow;
use std::cell::OnceCell;

use super::text::{self, BOM, Lines};
use super::{
    Applied, ApplyError, FileKind, FilePatch, FileReport, Hunk, HunkLine, HunkReport, PatchFormat,
    Tolerance,
};

/// Applies one file's changes to its original text and returns the new text.
///
/// The same as [`apply_with_report`] without the report.
pub fn apply(original: &str, file: &FilePatch) -> Result<String, ApplyError> {
    apply_with_report(original, file).map(|applied| applied.content)
}

/// Applies one file's changes to its original text and says where each hunk
/// went.
///
/// Pure: `original` is the file's text (`""` for [`FileKind::Add`]); the
/// caller writes the result to [`FilePatch::target_path`]. Either every hunk
/// is placed or nothing is returned but an [`ApplyError`] naming the hunk, the
/// line it was expected at and the most similar text of the file.
///
/// # Rules
///
/// 1. Hunks of a unified diff that all carry line numbers are placed in the
///    order of those numbers, whatever their order in the patch; envelope
///    blocks and bare `@@` hunks are placed in patch order, each searched
///    from the end of the previous one.
/// 2. A hunk's old side (context and removed lines) is looked for first at
///    its expected line: the header's line shifted by the offset at which the
///    previous hunk was found (as GNU `patch` does), or for the envelope the
///    line after its `@@ ANCHOR` lines (each found in turn, from the previous
///    block on), or the end of the file for `*** End of File`. Then at the
///    nearest lines around it, after first, at or after the end of the
///    previous hunk; only then anywhere else in the file.
/// 3. Two hunks never overlap: a place that overlaps an already placed hunk
///    is skipped.
/// 4. If that fails, up to 1 then 2 leading and trailing context lines are
///    ignored (GNU `patch`'s fuzz 1 and 2), never all of the old side.
/// 5. Lines compare without their line endings. A unified hunk may also
///    match ignoring trailing whitespace; an envelope block, like Codex's
///    `apply_patch`, ignoring trailing whitespace, then surrounding
///    whitespace, then typographic punctuation (see [`Tolerance`]). Each
///    fuzz level tries the strict comparison first.
/// 6. A hunk with no old side is inserted exactly at its line (or, in an
///    envelope, after its anchor, or at the end of the file).
/// 7. Context lines keep the file's bytes (so a tolerant match never
///    rewrites them); an added line gets the line ending of the hunk line
///    before it (kept or removed; for the first, of the lines around the
///    hunk, then the file's majority ending, then the patch's for a new
///    file), so a CRLF file stays CRLF even when the patch is LF and each
///    region of a mixed file keeps its own. A patch that only changes line
///    endings therefore changes nothing. A byte order mark stays exactly as
///    it was.
/// 8. The last line's newline follows `\ No newline at end of file` when the
///    hunk touching the end of the file has it on either side; without
///    markers a file that ended without a newline still does.
/// 9. A deletion succeeds only if its removed lines are the whole file (or
///    the patch lists none); an addition only if the original is empty.
pub fn apply_with_report(original: &str, file: &FilePatch) -> Result<Applied, ApplyError> {
    let (has_bom, body) = text::split_bom(original);
    match file.kind {
        FileKind::Add => {
            if !original.is_empty() {
                return Err(ApplyError::AlreadyExists {
                    path: file.path.clone(),
                });
            }
            let (content, report) = Engine::new("", file).run("")?;
            Ok(Applied { content, report })
        }
        FileKind::Delete => {
            if file.hunks.is_empty() {
                return Ok(Applied {
                    content: String::new(),
                    report: FileReport::default(),
                });
            }
            let (rest, report) = Engine::new(body, file).run("")?;
            if !rest.is_empty() {
                return Err(ApplyError::DeleteMismatch {
                    path: file.path.clone(),
                });
            }
            Ok(Applied {
                content: String::new(),
                report,
            })
        }
        FileKind::Update => {
            let prefix = if has_bom { "\u{feff}" } else { "" };
            let (content, report) = Engine::new(body, file).run(prefix)?;
            Ok(Applied { content, report })
        }
    }
}

/// Lines of the file bucketed by the hash of their form under one
/// [`Tolerance`], built on the first search that needs it.
struct LevelIndex {
    /// `(hash, line)` sorted, so one hash's lines are a sorted run.
    sorted: Vec<(u64, usize)>,
}

impl LevelIndex {
    fn build(lines: &Lines<'_>, level: Tolerance) -> Self {
        let mut sorted: Vec<(u64, usize)> = (0..lines.len())
            .map(|i| (text::hash_line(&level.normalize(lines.content(i))), i))
            .collect();
        sorted.sort_unstable();
        Self { sorted }
    }

    /// The lines whose form hashes to `hash`, ascending.
    fn positions(&self, hash: u64) -> &[(u64, usize)] {
        let lo = self.sorted.partition_point(|e| e.0 < hash);
        let hi = self.sorted.partition_point(|e| e.0 <= hash);
        self.sorted.get(lo..hi).unwrap_or(&[])
    }
}

/// Where a hunk went.
struct Placed {
    /// Index of the hunk in the file's hunks.
    hunk: usize,
    /// Placement order, to keep insertions at the same line in order.
    order: usize,
    /// Range of original lines `[start, end)` the (fuzzed) old side covers.
    start: usize,
    end: usize,
    /// Context lines ignored at the start and end of the hunk.
    lead: usize,
    trail: usize,
    report: HunkReport,
}

struct Engine<'a> {
    file: &'a FilePatch,
    lines: Lines<'a>,
    indexes: [OnceCell<LevelIndex>; 4],
    /// Ranges of original lines already taken by placed hunks.
    claimed: Vec<(usize, usize)>,
}

/// A hunk's old line with any byte order mark dropped (the BOM is handled
/// apart, so a diff of a file with one still matches its first line).
fn without_bom(line: &str) -> &str {
    line.strip_prefix(BOM).unwrap_or(line)
}

/// Signed `a - b` for line numbers.
fn signed_diff(a: usize, b: usize) -> isize {
    let magnitude = |d: usize| isize::try_from(d).unwrap_or(isize::MAX);
    if a >= b {
        magnitude(a - b)
    } else {
        -magnitude(b - a)
    }
}

/// How many context lines start and end the hunk. A hunk of context only
/// counts them all as leading.
fn context_counts(hunk: &Hunk) -> (usize, usize) {
    let is_context = |l: &&HunkLine| matches!(l, HunkLine::Context(_));
    let lead = hunk.lines.iter().take_while(is_context).count();
    if lead == hunk.lines.len() {
        return (lead, 0);
    }
    let trail = hunk.lines.iter().rev().take_while(is_context).count();
    (lead, trail)
}

impl<'a> Engine<'a> {
    fn new(body: &'a str, file: &'a FilePatch) -> Self {
        Self {
            file,
            lines: Lines::new(body),
            indexes: Default::default(),
            claimed: Vec::new(),
        }
    }

    fn run(mut self, prefix: &str) -> Result<(String, FileReport), ApplyError> {
        let hunks = &self.file.hunks;
        let mut order: Vec<usize> = (0..hunks.len()).collect();
        if hunks.iter().all(|h| h.old_start.is_some()) {
            order.sort_by_key(|&i| hunks.get(i).and_then(|h| h.old_start));
        }
        let mut placed = Vec::with_capacity(hunks.len());
        let mut cursor = 0;
        let mut offset: isize = 0;
        for (step, &index) in order.iter().enumerate() {
            let Some(hunk) = hunks.get(index) else {
                continue;
            };
            let mut p = self.place(hunk, index, cursor, offset)?;
            p.order = step;
            cursor = p.end;
            if let Some(o) = p.report.offset {
                offset = o;
            }
            self.claimed.push((p.start, p.end));
            placed.push(p);
        }
        let content = self.assemble(&mut placed, prefix);
        let mut report = FileReport {
            hunks: Vec::with_capacity(placed.len()),
            added: hunks.iter().map(Hunk::added).sum(),
            removed: hunks.iter().map(Hunk::removed).sum(),
        };
        placed.sort_by_key(|p| p.hunk);
        report.hunks.extend(placed.into_iter().map(|p| p.report));
        Ok((content, report))
    }

    fn index(&self, level: Tolerance) -> &LevelIndex {
        let cell = self.indexes.get(level.slot()).unwrap_or(&self.indexes[0]);
        cell.get_or_init(|| LevelIndex::build(&self.lines, level))
    }

    /// Whether `pattern` (already normalised for `level`) matches at `start`.
    fn matches_at(&self, start: usize, pattern: &[Cow<'_, str>], level: Tolerance) -> bool {
        start.saturating_add(pattern.len()) <= self.lines.len()
            && pattern
                .iter()
                .enumerate()
                .all(|(j, p)| level.normalize(self.lines.content(start + j)) == *p)
    }

    /// Whether `[start, start + len)` (an insertion point when `len` is 0)
    /// stays clear of every placed hunk.
    fn free(&self, start: usize, len: usize) -> bool {
        let end = start + len;
        self.claimed.iter().all(|&(a, b)| {
            if a == b {
                !(start < a && a < end)
            } else if len == 0 {
                !(a < start && start < b)
            } else {
                end <= a || b <= start
            }
        })
    }

    /// Finds the free place nearest `expected` (ties go forward) at or after
    /// `lower` where `pattern` matches. Uses the line index so that a search
    /// costs a binary search plus one check per line that could start a
    /// match, not a scan of the file.
    fn find(
        &self,
        pattern: &[Cow<'_, str>],
        level: Tolerance,
        expected: usize,
        lower: usize,
    ) -> Option<usize> {
        let n = self.lines.len();
        let k = pattern.len();
        if k == 0 || k > n {
            return None;
        }
        let max_start = n - k;
        if lower > max_start {
            return None;
        }
        let expected = expected.clamp(lower, max_start);
        if self.matches_at(expected, pattern, level) && self.free(expected, k) {
            return Some(expected);
        }
        let index = self.index(level);
        // Walk the candidates of the pattern line that occurs least often.
        let mut key: Option<(usize, &[(u64, usize)])> = None;
        for (j, p) in pattern.iter().enumerate() {
            let positions = index.positions(text::hash_line(p));
            if positions.is_empty() {
                return None;
            }
            if key.is_none_or(|(_, best)| positions.len() < best.len()) {
                key = Some((j, positions));
            }
        }
        let (off, positions) = key?;
        let split = positions.partition_point(|e| e.1 < expected + off);
        let (mut up, mut down) = (split, split);
        loop {
            let above = positions
                .get(up)
                .and_then(|e| e.1.checked_sub(off))
                .filter(|&s| s <= max_start);
            let below = down
                .checked_sub(1)
                .and_then(|d| positions.get(d))
                .and_then(|e| e.1.checked_sub(off))
                .filter(|&s| s >= lower);
            let candidate = match (above, below) {
                (None, None) => return None,
                (Some(a), Some(b)) if a - expected <= expected - b => {
                    up += 1;
                    a
                }
                (Some(a), None) => {
                    up += 1;
                    a
                }
                (_, Some(b)) => {
                    down -= 1;
                    b
                }
            };
            if self.matches_at(candidate, pattern, level) && self.free(candidate, k) {
                return Some(candidate);
            }
        }
    }

    /// Searches with the strict phase (at or after `lower`) then anywhere.
    fn find_two_phase(
        &self,
        pattern: &[Cow<'_, str>],
        level: Tolerance,
        expected: usize,
        lower: usize,
    ) -> Option<usize> {
        self.find(pattern, level, expected, lower).or_else(|| {
            (lower > 0)
                .then(|| self.find(pattern, level, expected, 0))
                .flatten()
        })
    }

    fn levels(&self) -> &'static [Tolerance] {
        match self.file.format {
            PatchFormat::Unified => &[Tolerance::Exact, Tolerance::TrailingWhitespace],
            PatchFormat::Envelope => &Tolerance::ALL,
        }
    }

    /// Finds an envelope anchor line: the first match at or after `from` at
    /// any tolerance (strictest first), else the match nearest `from`.
    /// Anchors are only read, so they may sit inside other hunks.
    fn find_anchor(&self, anchor: &str, from: usize) -> Option<usize> {
        let forward = self.levels().iter().find_map(|&level| {
            let want = level.normalize(anchor);
            (from..self.lines.len()).find(|&i| level.normalize(self.lines.content(i)) == want)
        });
        forward.or_else(|| {
            self.levels().iter().find_map(|&level| {
                let want = level.normalize(anchor);
                self.index(level)
                    .positions(text::hash_line(&want))
                    .iter()
                    .map(|e| e.1)
                    .filter(|&i| level.normalize(self.lines.content(i)) == want)
                    .min_by_key(|&i| i.abs_diff(from))
            })
        })
    }

    fn place(
        &self,
        hunk: &Hunk,
        index: usize,
        cursor: usize,
        offset: isize,
    ) -> Result<Placed, ApplyError> {
        let n = self.lines.len();
        let old: Vec<&str> = hunk.old_lines().map(without_bom).collect();
        // Where the old side should start (0-based), the lower bound of the
        // strict search phase, and the line the patch gave.
        let (base, lower, expected_line) = if let Some(start) = hunk.old_start {
            let raw = if old.is_empty() {
                start
            } else {
                start.saturating_sub(1)
            };
            (
                raw.saturating_add_signed(offset),
                cursor,
                Some(raw.saturating_add(1)),
            )
        } else {
            let mut from = cursor;
            let mut anchor_at = None;
            for anchor in &hunk.anchors {
                let Some(found) = self.find_anchor(anchor, from) else {
                    return Err(ApplyError::AnchorNotFound {
                        path: self.file.path.clone(),
                        hunk: index + 1,
                        anchor: anchor.clone(),
                        closest: text::describe_closest(&self.lines, &[anchor], from),
                    });
                };
                anchor_at = Some(found);
                from = found + 1;
            }
            let starts_with_anchor = match (anchor_at, hunk.anchors.last(), old.first()) {
                (Some(_), Some(a), Some(first)) => {
                    Tolerance::SurroundingWhitespace.normalize(a)
                        == Tolerance::SurroundingWhitespace.normalize(first)
                }
                _ => false,
            };
            let base = if hunk.end_of_file || (old.is_empty() && anchor_at.is_none()) {
                n.saturating_sub(old.len())
            } else if starts_with_anchor {
                from - 1
            } else {
                from
            };
            (base, anchor_at.unwrap_or(cursor), None)
        };
        let (pre, suf) = context_counts(hunk);
        let mut last_cut = None;
        for fuzz in 0..=2usize {
            let (lead, trail) = (fuzz.min(pre), fuzz.min(suf));
            if fuzz > 0 && (last_cut == Some((lead, trail)) || lead + trail >= old.len()) {
                continue;
            }
            last_cut = Some((lead, trail));
            let Some(effective) = old.get(lead..old.len() - trail) else {
                continue;
            };
            let expected = base.saturating_add(lead);
            if effective.is_empty() {
                // A pure insertion goes exactly where it was told.
                if expected <= n && self.free(expected, 0) {
                    return Ok(placement(
                        index,
                        expected,
                        0,
                        (lead, trail, fuzz),
                        Tolerance::Exact,
                        expected_line,
                    ));
                }
                break;
            }
            for &level in self.levels() {
                let pattern: Vec<Cow<'_, str>> =
                    effective.iter().map(|l| level.normalize(l)).collect();
                if let Some(start) = self.find_two_phase(&pattern, level, expected, lower) {
                    return Ok(placement(
                        index,
                        start,
                        effective.len(),
                        (lead, trail, fuzz),
                        level,
                        expected_line,
                    ));
                }
            }
        }
        Err(ApplyError::HunkFailed {
            path: self.file.path.clone(),
            hunk: index + 1,
            expected_line,
            closest: text::describe_closest(&self.lines, &old, base),
        })
    }

    /// The line ending for lines added by a hunk covering `[start, end)`: the
    /// first one among the lines it replaces, else of the line before, else
    /// after, else the file's.
    fn local_eol(&self, start: usize, end: usize, default: &'a str) -> &'a str {
        let candidates = (start..end)
            .chain(start.checked_sub(1))
            .chain(std::iter::once(end));
        candidates
            .map(|i| self.lines.terminator(i))
            .find(|t| !t.is_empty())
            .unwrap_or(default)
    }

    fn assemble(&self, placed: &mut [Placed], prefix: &str) -> String {
        placed.sort_by_key(|p| (p.start, p.order));
        let n = self.lines.len();
        let default_eol =
            self.lines
                .dominant_eol()
                .unwrap_or(if self.file.crlf { "\r\n" } else { "\n" });
        let added: usize = self
            .file
            .hunks
            .iter()
            .flat_map(|h| &h.lines)
            .map(|l| match l {
                HunkLine::Add(t) => t.len() + 2,
                _ => 0,
            })
            .sum();
        let mut w = Writer {
            out: String::with_capacity(prefix.len() + self.lines.raw(0, n).len() + added),
            pending: false,
            eol: default_eol,
        };
        w.out.push_str(prefix);
        let mut pos = 0;
        let mut eof_hunk = None;
        for p in placed.iter() {
            let Some(hunk) = self.file.hunks.get(p.hunk) else {
                continue;
            };
            w.raw(self.lines.raw(pos, p.start));
            // Added lines take the ending of the hunk line just before them
            // (kept or removed), so each region of a mixed file keeps its own.
            w.eol = self.local_eol(p.start, p.end, default_eol);
            let body = hunk
                .lines
                .get(p.lead..hunk.lines.len().saturating_sub(p.trail))
                .unwrap_or(&[]);
            let mut at = p.start;
            for line in body {
                match line {
                    HunkLine::Context(_) => {
                        let terminator = self.lines.terminator(at);
                        w.line(self.lines.content(at), terminator);
                        if !terminator.is_empty() {
                            w.eol = terminator;
                        }
                        at += 1;
                    }
                    HunkLine::Remove(_) => {
                        let terminator = self.lines.terminator(at);
                        if !terminator.is_empty() {
                            w.eol = terminator;
                        }
                        at += 1;
                    }
                    HunkLine::Add(t) => {
                        let eol = w.eol;
                        w.line(t, eol);
                    }
                }
            }
            pos = pos.max(p.end);
            if p.end == n && p.trail == 0 {
                eof_hunk = Some(hunk);
            }
        }
        w.raw(self.lines.raw(pos, n));
        let mut out = w.out;
        if let Some(hunk) = eof_hunk {
            let wants_newline = if hunk.new_missing_newline {
                Some(false)
            } else if hunk.old_missing_newline {
                Some(true)
            } else if !self.lines.ends_with_newline() {
                Some(false)
            } else {
                None
            };
            let has_body = out.len() > prefix.len();
            match wants_newline {
                Some(false) if has_body && out.ends_with('\n') => {
                    out.pop();
                    if out.len() > prefix.len() && out.ends_with('\r') {
                        out.pop();
                    }
                }
                Some(true) if has_body && !out.ends_with('\n') => out.push_str(w.eol),
                _ => {}
            }
        }
        // The byte order mark is the original's business: one the patch adds
        // on line 1 of an existing file is dropped.
        if self.file.kind != FileKind::Add {
            let body = out.get(prefix.len()..).unwrap_or("");
            if let Some(rest) = body.strip_prefix(BOM) {
                out = format!("{prefix}{rest}");
            }
        }
        out
    }
}

/// Records where a hunk went.
fn placement(
    index: usize,
    start: usize,
    len: usize,
    (lead, trail, fuzz): (usize, usize, usize),
    tolerance: Tolerance,
    expected_line: Option<usize>,
) -> Placed {
    let line = start.saturating_sub(lead) + 1;
    Placed {
        hunk: index,
        order: 0,
        start,
        end: start + len,
        lead,
        trail,
        report: HunkReport {
            number: index + 1,
            expected_line,
            line,
            offset: expected_line.map(|e| signed_diff(line, e)),
            fuzz,
            tolerance,
        },
    }
}

/// Builds the output, making sure a line that was the unterminated last line
/// of the original gets a terminator when something follows it.
struct Writer<'a> {
    out: String,
    /// The output ends with a line that has no terminator.
    pending: bool,
    eol: &'a str,
}

impl Writer<'_> {
    fn raw(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if self.pending {
            self.out.push_str(self.eol);
        }
        self.out.push_str(text);
        self.pending = !text.ends_with('\n');
    }

    fn line(&mut self, content: &str, terminator: &str) {
        if self.pending {
            self.out.push_str(self.eol);
        }
        self.out.push_str(content);
        self.out.push_str(terminator);
        self.pending = terminator.is_empty();
    }
}
