//! The text a model reads, and the structured matches beside it.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::engine::{FileHits, Line};
use crate::bounded::MAX_OUTPUT_BYTES;

/// The output of a search: the text and the matches it shows.
#[derive(Debug)]
pub(super) struct Rendered {
    pub(super) text: String,
    /// `{path, line, text}` for every match shown.
    pub(super) matches: Vec<Value>,
    /// Whether [`MAX_OUTPUT_BYTES`] ended the text, rather than `max`.
    pub(super) clipped: bool,
}

/// Renders the first `max` matches of `files` (sorted by path), with up to
/// `context` lines around each:
///
/// ```text
/// src/lib.rs-9- fn main() {
/// src/lib.rs:10:     let x = parse(input);
/// src/lib.rs-11- }
/// --
/// src/main.rs:3: use lib::parse;
/// ```
///
/// Matches are `path:line: text`, context lines `path-line- text`; with
/// context, `--` separates groups that are not adjacent (within a file and
/// between files), as `grep -C` does.
///
/// Lines are added while the text is under [`MAX_OUTPUT_BYTES`], so it ends
/// at most one line past it.
pub(super) fn matches(files: &[FileHits], max: usize, context: usize) -> Rendered {
    let mut text = String::new();
    let mut matches = Vec::new();
    let mut budget = max;
    let mut clipped = false;
    'files: for file in files {
        if budget == 0 {
            break;
        }
        let lines = shown_lines(&file.lines, budget, context);
        let mut previous: Option<u64> = None;
        for line in lines {
            if text.len() >= MAX_OUTPUT_BYTES {
                clipped = true;
                break 'files;
            }
            let adjacent = previous.is_some_and(|p| p + 1 == line.number);
            if context > 0 && !text.is_empty() && !adjacent {
                text.push_str("--\n");
            }
            previous = Some(line.number);
            let mark = if line.is_match { ':' } else { '-' };
            let _ = write!(text, "{}{mark}{}{mark}", file.path, line.number);
            if !line.text.is_empty() {
                text.push(' ');
                text.push_str(&line.text);
            }
            text.push('\n');
            if line.is_match {
                budget -= 1;
                matches.push(json!({"path": file.path, "line": line.number, "text": line.text}));
            }
        }
    }
    Rendered {
        text,
        matches,
        clipped,
    }
}

/// The lines of one file that show its first `budget` matches: everything up
/// to the last of them, then its after-context (context lines no further
/// than `context` below it).
fn shown_lines(lines: &[Line], budget: usize, context: usize) -> &[Line] {
    let mut seen = 0;
    let mut end = lines.len();
    let mut last = None;
    for (index, line) in lines.iter().enumerate() {
        if line.is_match {
            if seen == budget {
                end = index;
                break;
            }
            seen += 1;
            last = Some(line.number);
        } else if seen == budget
            && last.is_some_and(|last: u64| line.number > last.saturating_add(context as u64))
        {
            end = index;
            break;
        }
    }
    lines.get(..end).unwrap_or(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, spec: &[(u64, bool)]) -> FileHits {
        let lines: Vec<Line> = spec
            .iter()
            .map(|&(number, is_match)| Line {
                number,
                text: format!("l{number}"),
                is_match,
            })
            .collect();
        FileHits {
            path: path.to_owned(),
            matches: lines.iter().filter(|l| l.is_match).count(),
            lines,
            bytes: 0,
        }
    }

    #[test]
    fn output_stops_at_the_byte_limit() {
        // 600 matches of about 1,000 bytes each: the limit, not `max`, ends
        // the text, one line past it at most.
        let mut big = file("a", &(1..=600).map(|n| (n, true)).collect::<Vec<_>>());
        for line in &mut big.lines {
            line.text = "x".repeat(1000);
        }
        let out = matches(&[big], 1000, 0);
        assert!(out.clipped);
        assert!(out.text.len() >= MAX_OUTPUT_BYTES, "{}", out.text.len());
        assert!(
            out.text.len() < MAX_OUTPUT_BYTES + 1010,
            "{}",
            out.text.len()
        );
        assert_eq!(out.matches.len(), out.text.lines().count());
        let small = matches(&[file("a", &[(1, true)])], 1000, 0);
        assert!(!small.clipped);
    }

    #[test]
    fn groups_context_and_separators() {
        let files = [
            file(
                "a.rs",
                &[
                    (1, false),
                    (2, true),
                    (3, false),
                    (7, false),
                    (8, true),
                    (9, false),
                ],
            ),
            file("b.rs", &[(4, true)]),
        ];
        let out = matches(&files, 10, 1);
        assert_eq!(
            out.text,
            "a.rs-1- l1\na.rs:2: l2\na.rs-3- l3\n--\na.rs-7- l7\na.rs:8: l8\na.rs-9- l9\n--\nb.rs:4: l4\n"
        );
        assert_eq!(out.matches.len(), 3);
        assert_eq!(
            out.matches[2],
            json!({"path": "b.rs", "line": 4, "text": "l4"})
        );
    }

    #[test]
    fn no_separators_without_context() {
        let files = [file("a", &[(2, true), (9, true)]), file("b", &[(1, true)])];
        assert_eq!(matches(&files, 10, 0).text, "a:2: l2\na:9: l9\nb:1: l1\n");
    }

    #[test]
    fn budget_cuts_after_the_last_shown_match_and_its_after_context() {
        let files = [
            file(
                "a",
                &[(1, true), (2, false), (3, false), (4, true), (5, false)],
            ),
            file("b", &[(1, true)]),
        ];
        // One match: line 1 and one line of after-context (2), not 3
        // (before-context of the next match).
        assert_eq!(matches(&files, 1, 1).text, "a:1: l1\na-2- l2\n");
        assert_eq!(
            matches(&files, 2, 1).text,
            "a:1: l1\na-2- l2\na-3- l3\na:4: l4\na-5- l5\n"
        );
        assert_eq!(matches(&files, 3, 1).matches.len(), 3);
    }

    #[test]
    fn empty_lines_have_no_trailing_space() {
        let mut f = file("a", &[(1, true)]);
        f.lines[0].text.clear();
        assert_eq!(matches(&[f], 5, 0).text, "a:1:\n");
    }
}
