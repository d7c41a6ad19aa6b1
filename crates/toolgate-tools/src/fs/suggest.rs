//! "Did you mean …" for a path that does not exist: the workspace's
//! entries nearest to it by name.
//!
//! # Rules
//!
//! 1. The workspace is walked from its root as the search tools walk it
//!    (ignore files applied, `.git` skipped, symlinks not followed), at most
//!    [`MAX_ENTRIES`] entries, so the cost is bounded whatever the tree
//!    holds. Sensitive entries are never suggested.
//! 2. Files are suggested for a file, directories for a directory.
//! 3. Nearest first: the same name elsewhere (`cli.py` for `src/cli.py`),
//!    then the same name in another case, then names a few edits away (at
//!    most a quarter of the name's length, at least 1; a swap of two
//!    neighbours is one edit), then a path as few edits away; among equals, the one sharing more of the asked path's
//!    directories, then the shorter. At most [`MAX_SUGGESTIONS`].

use std::path::Path;

use ignore::WalkBuilder;
use toolgate_core::Workspace;

/// Entries looked at, at most.
pub(crate) const MAX_ENTRIES: usize = 20_000;

/// Suggestions given, at most.
pub(crate) const MAX_SUGGESTIONS: usize = 3;

/// The workspace's entries nearest to `missing` (a workspace-relative path
/// as the model gave it), best first; `dirs`: directories rather than files.
pub(crate) fn nearest(workspace: &Workspace, missing: &str, dirs: bool) -> Vec<String> {
    let missing = missing
        .trim()
        .trim_start_matches("./")
        .trim_end_matches('/');
    let missing = missing
        .strip_prefix(&*workspace.root().to_string_lossy())
        .map_or(missing, |rest| rest.trim_start_matches('/'));
    let name = missing.rsplit('/').next().unwrap_or(missing);
    if name.is_empty() {
        return Vec::new();
    }
    let name_lower = name.to_lowercase();
    let root = workspace.root();
    let walk = WalkBuilder::new(root)
        .standard_filters(false)
        .hidden(false)
        .follow_links(false)
        .parents(false)
        .git_global(false)
        .ignore(true)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    let mut found: Vec<(usize, usize, String)> = Vec::new();
    for entry in walk.take(MAX_ENTRIES).flatten() {
        let Some(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() != dirs || !(kind.is_dir() || kind.is_file()) || entry.depth() == 0 {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        if workspace.sensitive_refusal(rel).is_some() {
            continue;
        }
        let rel_text = rel.to_string_lossy().into_owned();
        let Some(rank) = rank(&rel_text, missing, name, &name_lower) else {
            continue;
        };
        let shared = shared_dirs(&rel_text, missing);
        found.push((rank, usize::MAX - shared, rel_text));
    }
    found.sort_by(|a, b| (a.0, a.1, a.2.len(), &a.2).cmp(&(b.0, b.1, b.2.len(), &b.2)));
    found
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, _, p)| if dirs { format!("{p}/") } else { p })
        .collect()
}

/// How near `path` is to `missing` (rule 3); `None`: not near.
fn rank(path: &str, missing: &str, name: &str, name_lower: &str) -> Option<usize> {
    let own = Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if own == name {
        return Some(0);
    }
    let own_lower = own.to_lowercase();
    if own_lower == name_lower {
        return Some(1);
    }
    let most = (name.chars().count() / 4).max(1);
    if let Some(d) = distance(&own_lower, name_lower, most) {
        return Some(2 + d);
    }
    let most = (missing.chars().count() / 4).max(1);
    distance(&path.to_lowercase(), &missing.to_lowercase(), most).map(|d| 10 + d)
}

/// How many of `missing`'s directories `path` shares, from the start.
fn shared_dirs(path: &str, missing: &str) -> usize {
    path.split('/')
        .zip(missing.split('/'))
        .take_while(|(a, b)| a == b)
        .count()
}

/// The edit distance between `a` and `b` (an adjacent swap counts one),
/// when it is at most `most`.
fn distance(a: &str, b: &str, most: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > most || a.len() > 256 || b.len() > 256 {
        return None;
    }
    // Optimal string alignment distance, three rows.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut last: Vec<usize> = (0..=b.len()).collect();
    let mut row = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (last[j] + 1).min(row[j - 1] + 1).min(last[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(before[j - 2] + 1);
            }
            row[j] = d;
        }
        std::mem::swap(&mut before, &mut last);
        std::mem::swap(&mut last, &mut row);
    }
    let d = last[b.len()];
    (d <= most).then_some(d)
}

/// `message` with the suggestions for `missing` after it, if there are any.
pub(crate) fn with_suggestions(
    workspace: &Workspace,
    message: String,
    missing: &str,
    dirs: bool,
) -> String {
    let near = nearest(workspace, missing, dirs);
    match near.as_slice() {
        [] => message,
        [one] => format!("{message}; did you mean `{one}`?"),
        many => format!(
            "{message}; did you mean one of: {}?",
            many.iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(distance("main.rs", "mian.rs", 2), Some(1));
        assert_eq!(distance("cli.py", "cli.py", 2), Some(0));
        assert_eq!(distance("config.yaml", "config.yml", 2), Some(1));
        assert_eq!(distance("abc", "xyz", 2), None);
        assert_eq!(distance("a", "abcdef", 2), None);
    }
}
