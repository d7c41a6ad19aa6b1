//! Parser for the `*** Begin Patch` envelope format. The grammar is in the
//! [module docs](super).

use super::{FileKind, FilePatch, Hunk, HunkLine, PatchError, PatchFormat, PatchLines, excerpt};

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";

const EXPECTED_SECTION: &str =
    "`*** Add File: PATH`, `*** Delete File: PATH`, `*** Update File: PATH` or `*** End Patch`";

/// Whether the text is an envelope: some line reads `*** Begin Patch`.
pub(super) fn detect(lines: &PatchLines<'_>) -> bool {
    (0..lines.len()).any(|i| lines.get(i).is_some_and(|l| l.trim() == BEGIN))
}

pub(super) fn parse(lines: &PatchLines<'_>) -> Result<Vec<FilePatch>, PatchError> {
    let begin = (0..lines.len())
        .find(|&i| lines.get(i).is_some_and(|l| l.trim() == BEGIN))
        .unwrap_or(0);
    let mut files = Vec::new();
    let mut i = begin + 1;
    loop {
        let Some(line) = lines.get(i) else {
            return Err(PatchError::MissingEnd { line: begin + 1 });
        };
        let marker = line.trim();
        if marker == END {
            return Ok(files);
        }
        if let Some(path) = marker.strip_prefix(ADD) {
            let path = section_path(lines, i, path)?;
            let (file, next) = parse_add(lines, i, path)?;
            files.push(file);
            i = next;
        } else if let Some(path) = marker.strip_prefix(DELETE) {
            let path = section_path(lines, i, path)?;
            files.push(file(FileKind::Delete, path, None, Vec::new(), false, i));
            i += 1;
        } else if let Some(path) = marker.strip_prefix(UPDATE) {
            let path = section_path(lines, i, path)?;
            let (file, next) = parse_update(lines, i, path)?;
            files.push(file);
            i = next;
        } else if marker.is_empty() {
            i += 1;
        } else {
            return Err(unexpected(lines, i, EXPECTED_SECTION));
        }
    }
}

fn unexpected(lines: &PatchLines<'_>, i: usize, expected: &'static str) -> PatchError {
    PatchError::Unexpected {
        line: i + 1,
        expected,
        found: excerpt(lines.get(i).unwrap_or("<end of patch>")),
    }
}

fn section_path(lines: &PatchLines<'_>, i: usize, rest: &str) -> Result<String, PatchError> {
    let path = rest.trim();
    if path.is_empty() {
        return Err(unexpected(lines, i, "a file path after the colon"));
    }
    Ok(path.to_owned())
}

fn file(
    kind: FileKind,
    path: String,
    move_to: Option<String>,
    hunks: Vec<Hunk>,
    crlf: bool,
    i: usize,
) -> FilePatch {
    FilePatch {
        kind,
        path,
        move_to,
        hunks,
        format: PatchFormat::Envelope,
        crlf,
        line: i + 1,
    }
}

/// Whether a line ends the current section.
fn is_section_marker(line: &str) -> bool {
    let t = line.trim();
    t == END || t.starts_with(ADD) || t.starts_with(DELETE) || t.starts_with(UPDATE)
}

/// `*** Add File:` followed by `+` lines. Empty lines between `+` lines are
/// empty lines of the file (a model forgot the `+`); empty lines before the
/// next marker are separators.
fn parse_add(
    lines: &PatchLines<'_>,
    start: usize,
    path: String,
) -> Result<(FilePatch, usize), PatchError> {
    let mut hunk = Hunk {
        line: start + 1,
        ..Hunk::default()
    };
    let mut pending_empty = 0;
    let mut i = start + 1;
    while let Some(line) = lines.get(i) {
        if let Some(text) = line.strip_prefix('+') {
            for _ in 0..pending_empty {
                hunk.lines.push(HunkLine::Add(String::new()));
            }
            pending_empty = 0;
            hunk.lines.push(HunkLine::Add(text.to_owned()));
        } else if line.is_empty() {
            pending_empty += 1;
        } else if is_section_marker(line) {
            break;
        } else {
            return Err(unexpected(
                lines,
                i,
                "a line starting with `+` (every line of an added file needs one)",
            ));
        }
        i += 1;
    }
    let crlf = lines.mostly_crlf(start + 1, i);
    let hunks = if hunk.lines.is_empty() {
        Vec::new()
    } else {
        vec![hunk]
    };
    Ok((file(FileKind::Add, path, None, hunks, crlf, start), i))
}

/// `*** Update File:`, an optional `*** Move to:`, then blocks.
fn parse_update(
    lines: &PatchLines<'_>,
    start: usize,
    path: String,
) -> Result<(FilePatch, usize), PatchError> {
    let mut i = start + 1;
    let mut move_to = None;
    if let Some(to) = lines.get(i).and_then(|l| l.trim().strip_prefix(MOVE)) {
        move_to = Some(section_path(lines, i, to)?);
        i += 1;
    }
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut current = Hunk {
        line: i + 1,
        ..Hunk::default()
    };
    let finish = |current: &mut Hunk, hunks: &mut Vec<Hunk>, next_line: usize| {
        let done = std::mem::replace(
            current,
            Hunk {
                line: next_line,
                ..Hunk::default()
            },
        );
        if !done.lines.is_empty() {
            hunks.push(done);
        }
    };
    while let Some(line) = lines.get(i) {
        if is_section_marker(line) {
            break;
        }
        if let Some(rest) = line.strip_prefix("@@") {
            // Empty lines before the next `@@` are separators, not context.
            while current.lines.last() == Some(&HunkLine::Context(String::new())) {
                current.lines.pop();
            }
            if !current.lines.is_empty() {
                finish(&mut current, &mut hunks, i + 1);
            }
            if let Some(anchor) = anchor_text(rest) {
                current.anchors.push(anchor);
            }
        } else if line.trim() == END_OF_FILE {
            if current.lines.is_empty() {
                return Err(unexpected(
                    lines,
                    i,
                    "change lines (` `, `-`, `+`) before `*** End of File`",
                ));
            }
            current.end_of_file = true;
            finish(&mut current, &mut hunks, i + 2);
        } else if line.is_empty() {
            current.lines.push(HunkLine::Context(String::new()));
        } else if let Some(text) = line.strip_prefix(' ') {
            current.lines.push(HunkLine::Context(text.to_owned()));
        } else if let Some(text) = line.strip_prefix('-') {
            current.lines.push(HunkLine::Remove(text.to_owned()));
        } else if let Some(text) = line.strip_prefix('+') {
            current.lines.push(HunkLine::Add(text.to_owned()));
        } else {
            return Err(unexpected(
                lines,
                i,
                "a change line starting with ` ` (context), `-` or `+`, a `@@` line, or the next \
                 `***` section",
            ));
        }
        i += 1;
    }
    if lines.get(i).is_none() {
        // Let the caller report the missing `*** End Patch`.
        return Ok((
            file(FileKind::Update, path, move_to, Vec::new(), false, start),
            i,
        ));
    }
    // Empty lines right before the next section are separators, not context.
    while current.lines.last() == Some(&HunkLine::Context(String::new())) {
        current.lines.pop();
    }
    if !current.anchors.is_empty() && current.lines.is_empty() {
        return Err(PatchError::EmptyHunk {
            path,
            hunk: hunks.len() + 1,
            line: current.line,
        });
    }
    finish(&mut current, &mut hunks, i + 1);
    if hunks.is_empty() && move_to.is_none() {
        return Err(PatchError::NoHunks {
            line: start + 1,
            path,
        });
    }
    let crlf = lines.mostly_crlf(start + 1, i);
    Ok((file(FileKind::Update, path, move_to, hunks, crlf, start), i))
}

/// The anchor after `@@`, if any. Models sometimes write unified-style
/// numbers (`@@ -12,4 +12,5 @@ fn foo`): the numbers are dropped and the text
/// after the second `@@` is the anchor.
fn anchor_text(rest: &str) -> Option<String> {
    let mut text = rest.trim();
    if text.starts_with('-')
        && let Some((numbers, after)) = text.split_once("@@")
    {
        let numeric = numbers.split_whitespace().all(|p| {
            p.trim_start_matches(['-', '+'])
                .split(',')
                .all(|n| n.parse::<usize>().is_ok())
        });
        if numeric {
            text = after.trim();
        }
    }
    (!text.is_empty()).then(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::anchor_text;

    #[test]
    fn anchors() {
        let cases: &[(&str, Option<&str>)] = &[
            ("", None),
            (" def foo():", Some("def foo():")),
            (" -12,4 +12,5 @@ fn foo", Some("fn foo")),
            (" -12,4 +12,5 @@", None),
            (" -x", Some("-x")),
        ];
        for (rest, want) in cases {
            assert_eq!(anchor_text(rest).as_deref(), *want, "{rest:?}");
        }
    }
}
