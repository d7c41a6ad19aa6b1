//! The pure text engine behind `edit_file`: replace an exact piece of a file's
//! text, and render the change as a unified diff.
//!
//! Nothing here touches the filesystem: the tool reads the file through the
//! workspace sandbox, calls [`replace_exact`], writes the result and returns
//! [`unified_diff`] of the two texts to the model.
//!
//! # Example
//!
//! ```
//! use toolgate_tools::edit;
//!
//! # fn main() -> Result<(), edit::EditError> {
//! let outcome = edit::replace_exact("a = 1\r\nb = 2\r\n", "b = 2\n", "b = 3\n", false)?;
//! assert_eq!(outcome.content, "a = 1\r\nb = 3\r\n");
//! assert_eq!(outcome.first_line, 2);
//! # Ok(())
//! # }
//! ```

use std::borrow::Cow;

use crate::patch::text::{self, BOM, Lines};

/// The result of a successful [`replace_exact`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EditOutcome {
    /// The whole new text of the file.
    pub content: String,
    /// How many places were replaced (1 unless `replace_all`).
    pub replacements: usize,
    /// The 1-based line where the first replacement starts.
    pub first_line: usize,
}

/// Why [`replace_exact`] refused an edit. The messages speak to the model
/// that sent the edit and say how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// `old` is empty.
    #[error(
        "`old_str` is empty; give the exact text to replace (to create or overwrite a whole file, \
         use a file-writing tool)"
    )]
    EmptyOld,
    /// `old` and `new` are the same (after line-ending normalisation).
    #[error("`old_str` and `new_str` are identical, so the edit would change nothing")]
    NoChange,
    /// `old` occurs nowhere in the file.
    #[error(
        "`old_str` was not found in the file; it must match the file exactly, including \
         whitespace and indentation; {hint}"
    )]
    NotFound {
        /// Where the most similar text of the file is, with line numbers.
        hint: String,
    },
    /// `old` occurs more than once and `replace_all` was not set.
    #[error(
        "`old_str` occurs {count} times in the file (counting overlapping occurrences); include \
         more surrounding lines to make it unique, or set `replace_all` to replace every occurrence"
    )]
    NotUnique {
        /// The number of (possibly overlapping) occurrences.
        count: usize,
    },
}

/// Replaces the exact text `old` with `new` in `content`.
///
/// # Rules
///
/// 1. `old` must be non-empty and differ from `new`.
/// 2. Without `replace_all`, `old` must occur exactly once, counting
///    overlapping occurrences (`"aa"` occurs twice in `"aaa"`); with it,
///    every non-overlapping occurrence is replaced, left to right, and
///    [`EditOutcome::replacements`] says how many.
/// 3. Line endings never break a match and are never rewritten outside the
///    replaced text. The file's style decides:
///    - only `\n` (or no line break at all): `old` and `new` are used with any
///      `\r\n` turned into `\n`;
///    - only `\r\n`: matching is done on the text with `\r\n` read as `\n`,
///      and every `\n` of `new` is written as `\r\n`, so a model that sends
///      LF text edits a CRLF file without corrupting it;
///    - mixed: if `old` contains a `\r`, it is matched byte for byte and `new`
///      written as given (the model is being precise); otherwise matching
///      reads `\r\n` as `\n` and `new`'s line breaks take the ending of the
///      first line break inside the replaced text, or of the line it is in,
///      so each region keeps its own style.
/// 4. A UTF-8 byte order mark is kept and never part of a match; a missing
///    final newline stays missing (only the matched text changes).
/// 5. When `old` is not found, [`EditError::NotFound`] shows the most
///    similar lines of the file with their numbers, and says when they differ
///    only in whitespace.
pub fn replace_exact(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<EditOutcome, EditError> {
    if old.is_empty() {
        return Err(EditError::EmptyOld);
    }
    let (has_bom, body) = text::split_bom(content);
    let style = EolStyle::detect(body);
    let raw_mode = style == EolStyle::Mixed && old.contains('\r');
    let (old_n, new_n) = if raw_mode {
        (Cow::Borrowed(old), Cow::Borrowed(new))
    } else {
        (to_lf(old), to_lf(new))
    };
    if old_n == new_n {
        return Err(EditError::NoChange);
    }
    let view = if raw_mode || matches!(style, EolStyle::Lf | EolStyle::None) {
        View::identity(body)
    } else {
        View::normalized(body)
    };
    let starts: Vec<usize> = if replace_all {
        view.text.match_indices(&*old_n).map(|(i, _)| i).collect()
    } else {
        match count_overlapping(&view.text, &old_n) {
            0 => Vec::new(),
            1 => view.text.find(&*old_n).into_iter().collect(),
            count => return Err(EditError::NotUnique { count }),
        }
    };
    let Some(&first) = starts.first() else {
        return Err(EditError::NotFound {
            hint: not_found_hint(body, &old_n),
        });
    };

    let mut out = String::with_capacity(content.len() + starts.len() * new_n.len());
    if has_bom {
        out.push(BOM);
    }
    let mut copied = 0;
    for &start in &starts {
        let raw_start = view.to_raw(start);
        let raw_end = view.to_raw(start + old_n.len());
        out.push_str(body.get(copied..raw_start).unwrap_or(""));
        let eol = match style {
            _ if raw_mode => "\n",
            EolStyle::Lf | EolStyle::None => "\n",
            EolStyle::Crlf => "\r\n",
            EolStyle::Mixed => mixed_eol(body, raw_start, raw_end),
        };
        if eol == "\n" {
            out.push_str(&new_n);
        } else {
            out.push_str(&new_n.replace('\n', eol));
        }
        copied = raw_end;
    }
    out.push_str(body.get(copied..).unwrap_or(""));
    let before = body.get(..view.to_raw(first)).unwrap_or("");
    Ok(EditOutcome {
        content: out,
        replacements: starts.len(),
        first_line: before.bytes().filter(|b| *b == b'\n').count() + 1,
    })
}

/// A unified diff of `old` to `new` (see [`toolgate_core::unified_diff`]),
/// which can be fed back to [`crate::patch::parse`].
pub use toolgate_core::unified_diff;

/// How a text ends its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EolStyle {
    /// No line break at all.
    None,
    Lf,
    Crlf,
    Mixed,
}

impl EolStyle {
    fn detect(text: &str) -> Self {
        let newlines = text.bytes().filter(|b| *b == b'\n').count();
        if newlines == 0 {
            return Self::None;
        }
        match text.matches("\r\n").count() {
            0 => Self::Lf,
            crlf if crlf == newlines => Self::Crlf,
            _ => Self::Mixed,
        }
    }
}

/// `text` with every `\r\n` read as `\n`.
fn to_lf(text: &str) -> Cow<'_, str> {
    if text.contains("\r\n") {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// The line ending to give `new` in a mixed file: that of the first line
/// break inside the replaced text, or else of the line it ends in.
fn mixed_eol(body: &str, start: usize, end: usize) -> &'static str {
    let inside = body
        .get(start..end)
        .and_then(|s| s.find('\n').map(|i| start + i));
    let after = || body.get(end..).and_then(|s| s.find('\n').map(|i| end + i));
    match inside.or_else(after) {
        Some(nl) if nl > 0 && body.as_bytes().get(nl - 1) == Some(&b'\r') => "\r\n",
        _ => "\n",
    }
}

/// The text searched, and the way back to offsets of the real text.
struct View<'a> {
    text: Cow<'a, str>,
    /// Offsets in `text` of the `\n`s that were `\r\n`, ascending.
    crlf_at: Vec<usize>,
}

impl<'a> View<'a> {
    fn identity(body: &'a str) -> Self {
        Self {
            text: Cow::Borrowed(body),
            crlf_at: Vec::new(),
        }
    }

    fn normalized(body: &'a str) -> Self {
        let mut text = String::with_capacity(body.len());
        let mut crlf_at = Vec::new();
        let mut copied = 0;
        for (at, _) in body.match_indices("\r\n") {
            text.push_str(body.get(copied..at).unwrap_or(""));
            crlf_at.push(text.len());
            text.push('\n');
            copied = at + 2;
        }
        text.push_str(body.get(copied..).unwrap_or(""));
        Self {
            text: Cow::Owned(text),
            crlf_at,
        }
    }

    /// Maps an offset of the view to the real text: every `\r` dropped
    /// before it is added back. An offset right before a normalised `\n`
    /// maps to before its `\r`, so a match never splits a `\r\n`.
    fn to_raw(&self, offset: usize) -> usize {
        offset + self.crlf_at.partition_point(|&c| c < offset)
    }
}

/// Counts occurrences of `needle` in `hay`, overlapping ones included, in
/// linear time: `str::find` from one past each hit (fast on real text), and
/// past a few dozen hits Knuth–Morris–Pratt for the rest, so that
/// `"aaaa…"`-style input cannot make it quadratic.
fn count_overlapping(hay: &str, needle: &str) -> usize {
    const FIND_HITS: usize = 32;
    let mut count = 0;
    let mut from = 0;
    while let Some(i) = hay.get(from..).and_then(|h| h.find(needle)) {
        let at = from + i;
        if count == FIND_HITS {
            return count + kmp_count(hay.as_bytes().get(at..).unwrap_or(&[]), needle.as_bytes());
        }
        count += 1;
        let step = hay
            .get(at..)
            .and_then(|s| s.chars().next())
            .map_or(1, char::len_utf8);
        from = at + step;
    }
    count
}

/// Knuth–Morris–Pratt count of overlapping occurrences. On valid UTF-8 a byte
/// match of a valid UTF-8 needle always starts on a character boundary.
fn kmp_count(hay: &[u8], needle: &[u8]) -> usize {
    let m = needle.len();
    if m == 0 {
        return 0;
    }
    // failure[i]: length of the longest proper border of needle[..=i].
    let mut failure = vec![0usize; m];
    let mut k = 0;
    for (i, &b) in needle.iter().enumerate().skip(1) {
        while k > 0 && needle.get(k) != Some(&b) {
            k = failure.get(k - 1).copied().unwrap_or(0);
        }
        if needle.get(k) == Some(&b) {
            k += 1;
        }
        if let Some(slot) = failure.get_mut(i) {
            *slot = k;
        }
    }
    let mut count = 0;
    let mut k = 0;
    for &b in hay {
        while k > 0 && needle.get(k) != Some(&b) {
            k = failure.get(k - 1).copied().unwrap_or(0);
        }
        if needle.get(k) == Some(&b) {
            k += 1;
        }
        if k == m {
            count += 1;
            k = failure.get(m - 1).copied().unwrap_or(0);
        }
    }
    count
}

/// Where the text the model meant probably is.
fn not_found_hint(body: &str, old: &str) -> String {
    let lines = Lines::new(body);
    let pattern: Vec<&str> = old.lines().collect();
    let mut hint = text::describe_closest(&lines, &pattern, 0);
    if looks_numbered(&pattern) {
        hint.push_str(
            "\n`old_str` seems to start its lines with line numbers from a file listing; send \
             only the file's text",
        );
    }
    hint
}

/// Whether every non-empty line starts with a line number followed by a tab,
/// `|` or `→`, as file viewers print them.
fn looks_numbered(pattern: &[&str]) -> bool {
    let numbered = |line: &&str| {
        let rest = line.trim_start();
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let after = rest.get(digits..).unwrap_or("");
        digits > 0
            && (after.starts_with('\t')
                || after.trim_start().starts_with('|')
                || after.starts_with('→'))
    };
    let mut non_empty = pattern.iter().filter(|l| !l.trim().is_empty()).peekable();
    non_empty.peek().is_some() && non_empty.all(numbered)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_counts() {
        let cases: &[(&str, &str, usize)] = &[
            ("aaa", "aa", 2),
            ("abababa", "aba", 3),
            ("abc", "d", 0),
            ("ééé", "éé", 2),
            ("xyz xyz", "xyz", 2),
        ];
        for &(hay, needle, want) in cases {
            assert_eq!(
                count_overlapping(hay, needle),
                want,
                "{needle:?} in {hay:?}"
            );
            assert_eq!(kmp_count(hay.as_bytes(), needle.as_bytes()), want);
        }
        let long = "a".repeat(10_000);
        assert_eq!(count_overlapping(&long, &"a".repeat(100)), 10_000 - 99);
    }

    #[test]
    fn views_map_back() {
        let view = View::normalized("a\r\nb\r\nc");
        assert_eq!(view.text, "a\nb\nc");
        assert_eq!(view.to_raw(1), 1);
        assert_eq!(view.to_raw(2), 3);
        assert_eq!(view.to_raw(5), 7);
    }

    #[test]
    fn numbered_lines() {
        assert!(looks_numbered(&["12\tfoo", "13\tbar"]));
        assert!(looks_numbered(&["  12 | foo"]));
        assert!(!looks_numbered(&["let x = 1;"]));
        assert!(!looks_numbered(&[""]));
    }
}
