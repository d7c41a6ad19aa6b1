//! Parser for unified diffs (git-style and plain `diff -u`). The rules are in
//! the [module docs](super).

use super::{FileKind, FilePatch, Hunk, HunkLine, PatchError, PatchFormat, PatchLines, excerpt};

/// What the git extended header lines after `diff --git` said.
#[derive(Default)]
struct GitHeader {
    line: usize,
    rename_from: Option<String>,
    rename_to: Option<String>,
    new_file: bool,
    deleted_file: bool,
    /// The names on the `diff --git a/X b/Y` line, when they split cleanly.
    names: Option<(String, String)>,
}

pub(super) fn parse(lines: &PatchLines<'_>) -> Result<Vec<FilePatch>, PatchError> {
    let mut files = Vec::new();
    let mut i = 0;
    while let Some(line) = lines.get(i) {
        if line.starts_with("diff --git ") {
            let (git, next) = parse_git_header(lines, i)?;
            i = next;
            if is_file_header(lines, i) {
                let (file, next) = parse_file(lines, i, Some(&git))?;
                files.push(file);
                i = next;
            } else if let Some(file) = header_only_file(&git) {
                files.push(file);
            }
        } else if is_file_header(lines, i) {
            let (file, next) = parse_file(lines, i, None)?;
            files.push(file);
            i = next;
        } else if line.starts_with("--- ") && lines.get(i + 1).is_some_and(|n| n.starts_with("@@"))
        {
            return Err(unexpected(
                lines,
                i + 1,
                "`+++ NEW_PATH` after the `--- OLD_PATH` line",
            ));
        } else if line.starts_with("+++ ") && lines.get(i + 1).is_some_and(|n| n.starts_with("@@"))
        {
            return Err(unexpected(
                lines,
                i,
                "`--- OLD_PATH` before the `+++ NEW_PATH` line",
            ));
        } else if line.starts_with("@@") {
            return Err(unexpected(
                lines,
                i,
                "`--- a/PATH` and `+++ b/PATH` lines before the first hunk",
            ));
        } else if is_binary_marker(line) {
            return Err(binary(i));
        } else {
            // Leading or trailing garbage: commit messages, prose, fences.
            i += 1;
        }
    }
    Ok(files)
}

fn unexpected(lines: &PatchLines<'_>, i: usize, expected: &'static str) -> PatchError {
    PatchError::Unexpected {
        line: i + 1,
        expected,
        found: excerpt(lines.get(i).unwrap_or("<end of patch>")),
    }
}

fn binary(i: usize) -> PatchError {
    PatchError::Unsupported {
        line: i + 1,
        what: "binary patches",
        instead: "write the file with a file-writing tool",
    }
}

fn is_binary_marker(line: &str) -> bool {
    line == "GIT binary patch" || (line.starts_with("Binary files ") && line.ends_with(" differ"))
}

fn is_file_header(lines: &PatchLines<'_>, i: usize) -> bool {
    lines.get(i).is_some_and(|l| l.starts_with("--- "))
        && lines.get(i + 1).is_some_and(|l| l.starts_with("+++ "))
}

/// Reads `diff --git` and the extended header lines after it; returns the
/// header and the index of the first line after it.
fn parse_git_header(
    lines: &PatchLines<'_>,
    start: usize,
) -> Result<(GitHeader, usize), PatchError> {
    let mut git = GitHeader {
        line: start + 1,
        names: lines
            .get(start)
            .and_then(|l| l.strip_prefix("diff --git "))
            .and_then(split_git_names),
        ..GitHeader::default()
    };
    let mut i = start + 1;
    while let Some(line) = lines.get(i) {
        if let Some(name) = line.strip_prefix("rename from ") {
            git.rename_from = Some(unquote(name));
        } else if let Some(name) = line.strip_prefix("rename to ") {
            git.rename_to = Some(unquote(name));
        } else if line.starts_with("new file mode ") {
            git.new_file = true;
        } else if line.starts_with("deleted file mode ") {
            git.deleted_file = true;
        } else if line.starts_with("copy from ") || line.starts_with("copy to ") {
            return Err(PatchError::Unsupported {
                line: i + 1,
                what: "git copies",
                instead: "send the new file as an addition",
            });
        } else if is_binary_marker(line) {
            return Err(binary(i));
        } else if !(line.starts_with("index ")
            || line.starts_with("old mode ")
            || line.starts_with("new mode ")
            || line.starts_with("similarity index ")
            || line.starts_with("dissimilarity index "))
        {
            break;
        }
        i += 1;
    }
    Ok((git, i))
}

/// Splits `a/X b/Y` when it is unambiguous (no quotes, both prefixes present,
/// same length or a single ` b/`).
fn split_git_names(rest: &str) -> Option<(String, String)> {
    let rest = rest.strip_prefix("a/")?;
    let mut found = rest.match_indices(" b/").map(|(i, _)| i);
    let cut = found.next()?;
    if found.next().is_some() {
        return None;
    }
    let old = rest.get(..cut)?;
    let new = rest.get(cut + 3..)?;
    Some((old.to_owned(), new.to_owned()))
}

/// A `diff --git` section without `---`/`+++`: a rename, or the creation or
/// deletion of an empty file. A mode change alone changes no text and yields
/// nothing.
fn header_only_file(git: &GitHeader) -> Option<FilePatch> {
    let base = |kind, path: String, move_to| FilePatch {
        kind,
        path,
        move_to,
        hunks: Vec::new(),
        format: PatchFormat::Unified,
        crlf: false,
        line: git.line,
    };
    if let (Some(from), Some(to)) = (&git.rename_from, &git.rename_to) {
        return Some(base(FileKind::Update, from.clone(), Some(to.clone())));
    }
    let (old, new) = git.names.clone()?;
    if git.new_file {
        Some(base(FileKind::Add, new, None))
    } else if git.deleted_file {
        Some(base(FileKind::Delete, old, None))
    } else {
        None
    }
}

/// A name from a `---`/`+++` line: `None` for `/dev/null` or an epoch
/// timestamp (how `diff -N` marks a missing file).
fn header_name(rest: &str) -> Option<String> {
    let (name, stamp) = if rest.starts_with('"') {
        let (name, after) = unquote_prefix(rest);
        (name, after.trim())
    } else {
        match rest.split_once('\t') {
            Some((name, stamp)) => (name.trim_end().to_owned(), stamp.trim()),
            None => (rest.trim_end().to_owned(), ""),
        }
    };
    if name == "/dev/null" || stamp.starts_with("1970-01-01 00:00:00") {
        return None;
    }
    Some(name)
}

/// Undoes git's C-style quoting of a whole value.
fn unquote(name: &str) -> String {
    if name.starts_with('"') {
        unquote_prefix(name).0
    } else {
        name.to_owned()
    }
}

/// Reads a C-quoted string at the start of `s` (which starts with `"`);
/// returns it and the rest after the closing quote. Octal escapes are bytes,
/// decoded as UTF-8 at the end (lossily: the path is then unusable anyway and
/// the sandbox will say so).
fn unquote_prefix(s: &str) -> (String, &str) {
    let mut bytes = Vec::new();
    let mut chars = s.char_indices().skip(1).peekable();
    let mut rest = "";
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                rest = s.get(i + 1..).unwrap_or("");
                break;
            }
            '\\' => {
                let Some((_, e)) = chars.next() else { break };
                match e {
                    'n' => bytes.push(b'\n'),
                    't' => bytes.push(b'\t'),
                    'r' => bytes.push(b'\r'),
                    'a' => bytes.push(0x07),
                    'b' => bytes.push(0x08),
                    'f' => bytes.push(0x0c),
                    'v' => bytes.push(0x0b),
                    '0'..='7' => {
                        let mut value = e.to_digit(8).unwrap_or(0);
                        for _ in 0..2 {
                            match chars.peek().and_then(|(_, d)| d.to_digit(8)) {
                                Some(d) => {
                                    value = value * 8 + d;
                                    chars.next();
                                }
                                None => break,
                            }
                        }
                        bytes.push(u8::try_from(value & 0xff).unwrap_or(0));
                    }
                    other => {
                        let mut buf = [0; 4];
                        bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
                    }
                }
            }
            other => {
                let mut buf = [0; 4];
                bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    (String::from_utf8_lossy(&bytes).into_owned(), rest)
}

/// GNU `patch`'s preference between two names: fewest components, then
/// shortest base name, then shortest name; the old name on a tie.
fn choose_name(old: String, new: String) -> String {
    let key = |n: &str| {
        let components = n.split('/').filter(|c| !c.is_empty()).count();
        let base = n.rsplit('/').next().unwrap_or(n).len();
        (components, base, n.len())
    };
    if key(&new) < key(&old) { new } else { old }
}

/// Parses `---`, `+++` and the hunks after them; returns the file and the
/// index of the first line after its last hunk.
fn parse_file(
    lines: &PatchLines<'_>,
    start: usize,
    git: Option<&GitHeader>,
) -> Result<(FilePatch, usize), PatchError> {
    let old_raw = lines
        .get(start)
        .and_then(|l| l.strip_prefix("--- "))
        .unwrap_or("");
    let new_raw = lines
        .get(start + 1)
        .and_then(|l| l.strip_prefix("+++ "))
        .unwrap_or("");
    let old = header_name(old_raw).map(|n| n.strip_prefix("a/").map(str::to_owned).unwrap_or(n));
    let new = header_name(new_raw).map(|n| n.strip_prefix("b/").map(str::to_owned).unwrap_or(n));
    let rename = git.and_then(|g| g.rename_from.clone().zip(g.rename_to.clone()));
    let (kind, path, move_to) = match (old, new) {
        (None, None) => {
            return Err(unexpected(
                lines,
                start,
                "a file name on the `---` or `+++` line (both are /dev/null)",
            ));
        }
        (None, Some(new)) => (FileKind::Add, new, None),
        (Some(old), None) => (FileKind::Delete, old, None),
        (Some(old), Some(new)) => match rename {
            Some((from, to)) => (FileKind::Update, from, Some(to)),
            None => (FileKind::Update, choose_name(old, new), None),
        },
    };
    if path.is_empty() {
        return Err(unexpected(lines, start, "a file name after `---`"));
    }
    let mut i = start + 2;
    let mut hunks = Vec::new();
    while lines.get(i).is_some_and(|l| l.starts_with("@@")) {
        let (hunk, next) = parse_hunk(lines, i, &path, hunks.len() + 1)?;
        check_side(kind, &hunk, &path)?;
        hunks.push(hunk);
        i = next;
    }
    if hunks.is_empty() && move_to.is_none() && kind == FileKind::Update {
        return Err(PatchError::NoHunks {
            line: start + 1,
            path,
        });
    }
    let file = FilePatch {
        kind,
        path,
        move_to,
        hunks,
        format: PatchFormat::Unified,
        crlf: lines.mostly_crlf(start + 2, i),
        line: git.map_or(start + 1, |g| g.line),
    };
    Ok((file, i))
}

fn check_side(kind: FileKind, hunk: &Hunk, path: &str) -> Result<(), PatchError> {
    let wrong = match kind {
        FileKind::Add => hunk
            .old_lines()
            .next()
            .is_some()
            .then_some(("a new file", "add")),
        FileKind::Delete => (hunk.added() > 0
            || hunk.lines.iter().any(|l| matches!(l, HunkLine::Context(_))))
        .then_some(("the deleted file", "remove")),
        FileKind::Update => None,
    };
    match wrong {
        Some((what, only)) => Err(PatchError::WrongSide {
            line: hunk.line,
            what,
            path: path.to_owned(),
            only,
        }),
        None => Ok(()),
    }
}

/// The numbers of a `@@ -A,B +C,D @@` header: `Ok(None)` for a header
/// without numbers, `Err(())` for one that starts like numbers but is
/// broken.
fn parse_hunk_header(line: &str) -> Result<Option<(usize, usize, usize)>, ()> {
    let rest = line.strip_prefix("@@").unwrap_or(line).trim_start();
    if !rest.starts_with('-') {
        return Ok(None);
    }
    let mut parts = rest.split_whitespace();
    let old = parts.next().and_then(|p| p.strip_prefix('-')).ok_or(())?;
    let new = parts.next().and_then(|p| p.strip_prefix('+')).ok_or(())?;
    if parts.next().is_none_or(|p| !p.starts_with("@@")) {
        return Err(());
    }
    let range = |s: &str| -> Result<(usize, usize), ()> {
        let (start, count) = match s.split_once(',') {
            Some((start, count)) => (start, count.parse::<usize>().map_err(|_| ())?),
            None => (s, 1),
        };
        Ok((start.parse::<usize>().map_err(|_| ())?, count))
    };
    let (old_start, old_count) = range(old)?;
    let (_, new_count) = range(new)?;
    Ok(Some((old_start, old_count, new_count)))
}

/// What kind of hunk body line `line` is.
fn body_line(line: &str) -> Option<(char, &str)> {
    if line.is_empty() {
        // An empty context line whose lone space an editor stripped.
        return Some((' ', ""));
    }
    let mut chars = line.chars();
    let tag = chars.next()?;
    matches!(tag, ' ' | '-' | '+' | '\\').then(|| (tag, chars.as_str()))
}

/// Whether line `i` starts the next file, so a hunk without counts stops
/// there.
fn starts_next_file(lines: &PatchLines<'_>, i: usize) -> bool {
    is_file_header(lines, i) || lines.get(i).is_some_and(|l| l.starts_with("diff --git "))
}

fn parse_hunk(
    lines: &PatchLines<'_>,
    start: usize,
    path: &str,
    number: usize,
) -> Result<(Hunk, usize), PatchError> {
    let header = lines.get(start).unwrap_or("");
    let counts = parse_hunk_header(header).map_err(|()| PatchError::HunkHeader {
        line: start + 1,
        found: excerpt(header),
    })?;
    let mut hunk = Hunk {
        line: start + 1,
        ..Hunk::default()
    };
    let mut i = start + 1;
    let mut last_tag = None;
    let mut seen = (0usize, 0usize);
    if let Some((old_start, old_count, new_count)) = counts {
        hunk.old_start = Some(if old_count == 0 {
            old_start
        } else {
            old_start.max(1)
        });
        // Read by the counts, then look at what follows to tell "too few
        // lines" from "too many".
        while seen.0 < old_count || seen.1 < new_count {
            let Some((tag, text)) = lines.get(i).and_then(body_line) else {
                break;
            };
            let fits = match tag {
                ' ' => seen.0 < old_count && seen.1 < new_count,
                '-' => seen.0 < old_count,
                '+' => seen.1 < new_count,
                _ => true,
            };
            if !fits {
                break;
            }
            push_line(&mut hunk, tag, text, &mut last_tag, &mut seen);
            i += 1;
        }
        if let Some(('\\', text)) = lines.get(i).and_then(body_line) {
            push_line(&mut hunk, '\\', text, &mut last_tag, &mut seen);
            i += 1;
        }
        let complete = seen == (old_count, new_count);
        let overflow = complete
            && lines.get(i).is_some_and(|l| {
                // `-- ` alone is the signature separator of `git format-patch`.
                !l.is_empty() && l != "-- " && body_line(l).is_some() && !starts_next_file(lines, i)
            });
        if !complete || overflow {
            // Count what the model actually wrote, for the message.
            let mut j = i;
            while let Some((tag, _)) = lines.get(j).and_then(body_line) {
                if starts_next_file(lines, j) || lines.get(j).is_some_and(str::is_empty) {
                    break;
                }
                match tag {
                    ' ' => {
                        seen.0 += 1;
                        seen.1 += 1;
                    }
                    '-' => seen.0 += 1,
                    '+' => seen.1 += 1,
                    _ => {}
                }
                j += 1;
            }
            return Err(PatchError::HunkCount {
                path: path.to_owned(),
                hunk: number,
                line: start + 1,
                header_old: old_count,
                header_new: new_count,
                found_old: seen.0,
                found_new: seen.1,
            });
        }
    } else {
        while let Some((tag, text)) = lines.get(i).and_then(body_line) {
            if starts_next_file(lines, i) {
                break;
            }
            push_line(&mut hunk, tag, text, &mut last_tag, &mut seen);
            i += 1;
        }
        // Trailing empty lines are more likely separators than context.
        while hunk.lines.last() == Some(&HunkLine::Context(String::new())) {
            hunk.lines.pop();
        }
        if hunk.lines.is_empty() {
            return Err(PatchError::EmptyHunk {
                path: path.to_owned(),
                hunk: number,
                line: start + 1,
            });
        }
        if hunk.old_lines().next().is_none() {
            return Err(PatchError::Unplaceable {
                path: path.to_owned(),
                hunk: number,
                line: start + 1,
            });
        }
    }
    if hunk.lines.is_empty() {
        return Err(PatchError::EmptyHunk {
            path: path.to_owned(),
            hunk: number,
            line: start + 1,
        });
    }
    Ok((hunk, i))
}

/// Appends one body line to `hunk`, counting it in `seen` (old, new); a
/// `\\` line marks the previous line as unterminated.
fn push_line(
    hunk: &mut Hunk,
    tag: char,
    text: &str,
    last_tag: &mut Option<char>,
    seen: &mut (usize, usize),
) {
    match tag {
        ' ' => {
            hunk.lines.push(HunkLine::Context(text.to_owned()));
            seen.0 += 1;
            seen.1 += 1;
        }
        '-' => {
            hunk.lines.push(HunkLine::Remove(text.to_owned()));
            seen.0 += 1;
        }
        '+' => {
            hunk.lines.push(HunkLine::Add(text.to_owned()));
            seen.1 += 1;
        }
        _ => {
            match last_tag {
                Some(' ') => {
                    hunk.old_missing_newline = true;
                    hunk.new_missing_newline = true;
                }
                Some('-') => hunk.old_missing_newline = true,
                Some('+') => hunk.new_missing_newline = true,
                _ => {}
            }
            return;
        }
    }
    *last_tag = Some(tag);
}

#[cfg(test)]
mod tests {
    use super::*;

    type Header = Result<Option<(usize, usize, usize)>, ()>;

    #[test]
    fn hunk_headers() {
        let cases: &[(&str, Header)] = &[
            ("@@ -1,3 +1,4 @@", Ok(Some((1, 3, 4)))),
            ("@@ -1 +1 @@", Ok(Some((1, 1, 1)))),
            ("@@ -0,0 +1,2 @@ fn main", Ok(Some((0, 0, 2)))),
            ("@@", Ok(None)),
            ("@@ @@", Ok(None)),
            ("@@ fn main() @@", Ok(None)),
            ("@@ -1,x +1 @@", Err(())),
            ("@@ -1,3 @@", Err(())),
            ("@@ -1,3 +1,3", Err(())),
            ("@@ -99999999999999999999999 +1 @@", Err(())),
        ];
        for (header, want) in cases {
            assert_eq!(&parse_hunk_header(header), want, "{header}");
        }
    }

    #[test]
    fn names() {
        let cases: &[(&str, Option<&str>)] = &[
            ("a/src/x.rs", Some("a/src/x.rs")),
            ("x.rs\t2024-01-01 10:00:00.000 +0100", Some("x.rs")),
            ("/dev/null", None),
            ("x.rs\t1970-01-01 00:00:00.000000000 +0000", None),
            ("\"a/sp ace\\tx\\303\\251\"", Some("a/sp ace\tx\u{e9}")),
        ];
        for (raw, want) in cases {
            assert_eq!(header_name(raw).as_deref(), *want, "{raw}");
        }
        assert_eq!(choose_name("x.rs.orig".into(), "x.rs".into()), "x.rs");
        assert_eq!(choose_name("old/x".into(), "new/x".into()), "old/x");
        assert_eq!(
            split_git_names("a/x y b/x y"),
            Some(("x y".to_owned(), "x y".to_owned()))
        );
    }
}
