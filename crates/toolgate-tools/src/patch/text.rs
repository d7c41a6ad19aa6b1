//! Line handling shared by the patch and edit engines: the byte order mark,
//! line endings, whitespace tolerance, and the "closest text" shown to a model
//! when its patch or edit does not match.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;

use super::Tolerance;

/// The UTF-8 byte order mark as a `char`.
pub(crate) const BOM: char = '\u{feff}';

/// Splits a leading byte order mark off `text`.
pub(crate) fn split_bom(text: &str) -> (bool, &str) {
    match text.strip_prefix(BOM) {
        Some(rest) => (true, rest),
        None => (false, text),
    }
}

/// Byte offsets of one line: `text[start..content_end]` is the content,
/// `text[content_end..end]` the terminator (`""`, `"\n"` or `"\r\n"`).
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    content_end: usize,
    end: usize,
}

/// A text split into lines once, so that hunks can be matched without
/// rescanning it.
///
/// Only `\n` ends a line; a `\r` right before it belongs to the terminator, a
/// lone `\r` is content.
pub(crate) struct Lines<'a> {
    text: &'a str,
    spans: Vec<Span>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut spans = Vec::with_capacity(text.len() / 32 + 1);
        let mut start = 0;
        for piece in text.split_inclusive('\n') {
            let end = start + piece.len();
            let content_len = match piece.strip_suffix('\n') {
                Some(p) => p.strip_suffix('\r').unwrap_or(p).len(),
                None => piece.len(),
            };
            spans.push(Span {
                start,
                content_end: start + content_len,
                end,
            });
            start = end;
        }
        Self { text, spans }
    }

    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    /// The content of line `i` (0-based) without its terminator; `""` past
    /// the end.
    pub(crate) fn content(&self, i: usize) -> &'a str {
        self.spans
            .get(i)
            .and_then(|s| self.text.get(s.start..s.content_end))
            .unwrap_or("")
    }

    /// The terminator of line `i`: `""` for an unterminated last line.
    pub(crate) fn terminator(&self, i: usize) -> &'a str {
        self.spans
            .get(i)
            .and_then(|s| self.text.get(s.content_end..s.end))
            .unwrap_or("")
    }

    /// The raw text of lines `[from, to)`, terminators included.
    pub(crate) fn raw(&self, from: usize, to: usize) -> &'a str {
        if from >= to {
            return "";
        }
        let start = self.spans.get(from).map_or(self.text.len(), |s| s.start);
        let end = match to.checked_sub(1).and_then(|i| self.spans.get(i)) {
            Some(s) => s.end,
            None => self.text.len(),
        };
        self.text.get(start..end).unwrap_or("")
    }

    /// Whether the text is empty or ends with a line terminator.
    pub(crate) fn ends_with_newline(&self) -> bool {
        self.text.is_empty() || self.text.ends_with('\n')
    }

    /// The more common terminator, `None` when there is none.
    pub(crate) fn dominant_eol(&self) -> Option<&'static str> {
        let (mut lf, mut crlf) = (0usize, 0usize);
        for i in 0..self.len() {
            match self.terminator(i) {
                "\n" => lf += 1,
                "\r\n" => crlf += 1,
                _ => {}
            }
        }
        match (lf, crlf) {
            (0, 0) => None,
            (lf, crlf) if crlf > lf => Some("\r\n"),
            _ => Some("\n"),
        }
    }
}

impl Tolerance {
    /// Every tolerance, strictest first.
    pub(crate) const ALL: [Tolerance; 4] = [
        Tolerance::Exact,
        Tolerance::TrailingWhitespace,
        Tolerance::SurroundingWhitespace,
        Tolerance::Punctuation,
    ];

    pub(crate) fn slot(self) -> usize {
        match self {
            Tolerance::Exact => 0,
            Tolerance::TrailingWhitespace => 1,
            Tolerance::SurroundingWhitespace => 2,
            Tolerance::Punctuation => 3,
        }
    }

    /// The form of `line` that this tolerance compares.
    pub(crate) fn normalize(self, line: &str) -> Cow<'_, str> {
        match self {
            Tolerance::Exact => Cow::Borrowed(line),
            Tolerance::TrailingWhitespace => Cow::Borrowed(line.trim_end()),
            Tolerance::SurroundingWhitespace => Cow::Borrowed(line.trim()),
            Tolerance::Punctuation => {
                let trimmed = line.trim();
                if trimmed.chars().all(|c| ascii_punctuation(c) == c) {
                    Cow::Borrowed(trimmed)
                } else {
                    Cow::Owned(trimmed.chars().map(ascii_punctuation).collect())
                }
            }
        }
    }
}

/// Typographic dashes, quotes and spaces as their ASCII forms (the set
/// Codex's `apply_patch` uses).
fn ascii_punctuation(c: char) -> char {
    match c {
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' => '-',
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2004}' | '\u{2005}' | '\u{2006}'
        | '\u{2007}' | '\u{2008}' | '\u{2009}' | '\u{200A}' | '\u{202F}' | '\u{205F}'
        | '\u{3000}' => ' ',
        other => other,
    }
}

/// FNV-1a: a fast, good-enough hash for bucketing lines (every bucket hit is
/// verified by comparing the strings).
pub(crate) fn hash_line(line: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in line.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// Similarity of two lines in `[0, 1]`: the Sørensen–Dice coefficient of
/// their character bigrams. Linear-ish and allocation-light, good enough to
/// point a model at the line it meant.
pub(crate) fn similarity(left: &str, right: &str) -> f64 {
    let (left, right) = (left.trim(), right.trim());
    if left == right {
        return 1.0;
    }
    let bigrams = |s: &str| {
        let chars: Vec<char> = s.chars().collect();
        let mut pairs: Vec<(char, char)> = chars.windows(2).map(|w| (w[0], w[1])).collect();
        pairs.sort_unstable();
        pairs
    };
    let (ours, theirs) = (bigrams(left), bigrams(right));
    if ours.is_empty() || theirs.is_empty() {
        return 0.0;
    }
    let (mut at_ours, mut at_theirs, mut common) = (0, 0, 0usize);
    while let (Some(p), Some(q)) = (ours.get(at_ours), theirs.get(at_theirs)) {
        match p.cmp(q) {
            std::cmp::Ordering::Less => at_ours += 1,
            std::cmp::Ordering::Greater => at_theirs += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                at_ours += 1;
                at_theirs += 1;
            }
        }
    }
    #[expect(
        clippy::cast_precision_loss,
        reason = "line lengths are far below 2^52"
    )]
    let score = (2 * common) as f64 / (ours.len() + theirs.len()) as f64;
    score
}

/// Upper bound of [`similarity`] from the lengths alone, to skip lines that
/// cannot beat the best so far.
fn similarity_bound(a: usize, b: usize) -> f64 {
    let (a, b) = (a.saturating_sub(1), b.saturating_sub(1));
    if a + b == 0 {
        return 1.0;
    }
    #[expect(
        clippy::cast_precision_loss,
        reason = "line lengths are far below 2^52"
    )]
    let bound = (2 * a.min(b)) as f64 / (a + b) as f64;
    bound
}

/// Finds where `pattern` most likely was meant to be in `lines`: the start of
/// the window sharing the most whitespace-trimmed lines with it (ties go to
/// the window nearest `near`), or, when no line is shared, the line most
/// similar to the pattern's most distinctive line. `None` for an empty file
/// or when nothing is even vaguely similar.
pub(crate) fn closest_window(lines: &Lines<'_>, pattern: &[&str], near: usize) -> Option<usize> {
    const MAX_PATTERN: usize = 200;
    const MAX_VOTES: usize = 4_000_000;
    if lines.len() == 0 {
        return None;
    }
    let mut wanted: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, line) in pattern.iter().enumerate().take(MAX_PATTERN) {
        let t = line.trim();
        if !t.is_empty() {
            wanted.entry(t).or_default().push(i);
        }
    }
    let mut votes: HashMap<usize, usize> = HashMap::new();
    let mut budget = MAX_VOTES;
    'scan: for j in 0..lines.len() {
        if let Some(offsets) = wanted.get(lines.content(j).trim()) {
            for &i in offsets {
                if let Some(start) = j.checked_sub(i) {
                    *votes.entry(start).or_default() += 1;
                }
                budget = budget.saturating_sub(1);
                if budget == 0 {
                    break 'scan;
                }
            }
        }
    }
    if let Some((&start, _)) = votes
        .iter()
        .max_by_key(|&(&start, &count)| (count, std::cmp::Reverse(start.abs_diff(near)), start))
    {
        return Some(start);
    }
    // No line in common: fall back to the most similar line to the longest
    // pattern line.
    let (offset, key) = pattern
        .iter()
        .take(MAX_PATTERN)
        .enumerate()
        .max_by_key(|(_, l)| l.trim().len())?;
    let key = key.trim();
    let (mut best, mut best_score) = (None, 0.3);
    for j in 0..lines.len() {
        let line = lines.content(j).trim();
        if similarity_bound(line.len(), key.len()) <= best_score {
            continue;
        }
        let score = similarity(line, key);
        if score > best_score {
            best_score = score;
            best = Some(j);
        }
    }
    best.map(|j| j.saturating_sub(offset))
}

/// Renders lines `[start, start + count)` as `  12 | text`, at most 10 lines of
/// at most 160 characters.
pub(crate) fn render_lines(lines: &Lines<'_>, start: usize, count: usize) -> String {
    const MAX_LINES: usize = 10;
    let end = start
        .saturating_add(count.clamp(1, MAX_LINES))
        .min(lines.len());
    let width = end.to_string().len();
    let mut out = String::new();
    for i in start..end {
        _ = write!(
            out,
            "\n  {:>width$} | {}",
            i + 1,
            shorten(lines.content(i), 160)
        );
    }
    out
}

/// `line` cut to `max` characters, with `…` when cut.
pub(crate) fn shorten(line: &str, max: usize) -> Cow<'_, str> {
    match line.char_indices().nth(max) {
        Some((cut, _)) => Cow::Owned(format!("{}…", line.get(..cut).unwrap_or(line))),
        None => Cow::Borrowed(line),
    }
}

/// A "closest text" explanation for a pattern that did not match: where the
/// most similar text is, its lines, and the first line that differs.
pub(crate) fn describe_closest(lines: &Lines<'_>, pattern: &[&str], near: usize) -> String {
    if lines.len() == 0 {
        return "the file is empty".to_owned();
    }
    let Some(start) = closest_window(lines, pattern, near) else {
        return "no similar text was found in the file".to_owned();
    };
    let shown = pattern.len().max(1);
    let last = start.saturating_add(shown).min(lines.len());
    let mut out = if last > start + 1 {
        format!("the most similar text is at lines {}-{}:", start + 1, last)
    } else {
        format!("the most similar text is at line {}:", start + 1)
    };
    out.push_str(&render_lines(lines, start, shown));
    // Point at the first difference, and say when it is only whitespace.
    let mut whitespace_only = true;
    let mut first_diff = None;
    for (k, want) in pattern.iter().enumerate() {
        let have = lines.content(start + k);
        if start + k >= lines.len() {
            first_diff.get_or_insert((k, "<end of file>", *want));
            whitespace_only = false;
            break;
        }
        if have != *want {
            first_diff.get_or_insert((k, have, *want));
            if have.trim() != want.trim() {
                whitespace_only = false;
            }
        }
    }
    if let Some((k, have, want)) = first_diff {
        if whitespace_only {
            out.push_str("\n(it differs only in whitespace or indentation)");
        }
        _ = write!(
            out,
            "\nfirst difference: line {} is `{}` where `{}` was expected",
            start + k + 1,
            shorten(have, 160),
            shorten(want, 160)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_keeps_terminators() {
        let l = Lines::new("a\r\nb\nc");
        assert_eq!(l.len(), 3);
        assert_eq!((l.content(0), l.terminator(0)), ("a", "\r\n"));
        assert_eq!((l.content(1), l.terminator(1)), ("b", "\n"));
        assert_eq!((l.content(2), l.terminator(2)), ("c", ""));
        assert_eq!(l.raw(1, 3), "b\nc");
        assert_eq!(l.raw(0, 0), "");
        assert_eq!(l.content(9), "");
        assert!(!l.ends_with_newline());
        assert_eq!(Lines::new("").len(), 0);
    }

    #[test]
    fn similarity_orders_sensibly() {
        assert!(
            similarity("fn main() {", "fn main () {") > similarity("fn main() {", "let x = 1;")
        );
        assert!((similarity("abc", "abc") - 1.0).abs() < f64::EPSILON);
        assert!(similarity("", "abc") < f64::EPSILON);
    }

    #[test]
    fn punctuation_normalises() {
        assert_eq!(
            Tolerance::Punctuation.normalize("  a \u{2014} \u{201C}b\u{201D} "),
            "a - \"b\""
        );
    }
}
