//! Where a path lies, worked out from its spelling alone.
//!
//! The rules judge paths before anything runs and without the file system,
//! so `.` and `..` are folded here by their text. That is not what the
//! kernel does when a symlink precedes a `..` (`link/..` is the parent of
//! the link's target), which is why the rules also judge the path exactly
//! as written and, through the caller's resolver, as it really resolves.

/// A path as written, placed against the workspace root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    /// Inside the workspace: the `/`-separated path relative to the root,
    /// `.` and `..` folded (`""` is the root itself).
    Inside(String),
    /// Outside the workspace: an absolute path (folded) that is under no
    /// root, or a relative path whose `..` climb above the root (as
    /// written).
    Outside(String),
}

/// The workspace root(s), as lists of path components.
#[derive(Debug, Clone)]
pub(crate) struct Roots(Vec<Vec<String>>);

impl Roots {
    /// Roots from absolute, `/`-separated spellings.
    pub(crate) fn new<'a>(roots: impl IntoIterator<Item = &'a str>) -> Self {
        Self(roots.into_iter().map(fold_absolute).collect())
    }

    /// Where `path` lies.
    pub(crate) fn place(&self, path: &str) -> Place {
        if path.starts_with('/') {
            let parts = fold_absolute(path);
            for root in &self.0 {
                if let Some(rest) = strip_components(&parts, root) {
                    return Place::Inside(rest.join("/"));
                }
            }
            return Place::Outside(format!("/{}", parts.join("/")));
        }
        match fold_relative(path) {
            Some(rel) => Place::Inside(rel),
            None => Place::Outside(path.to_owned()),
        }
    }
}

fn strip_components<'a>(parts: &'a [String], root: &[String]) -> Option<&'a [String]> {
    let head = parts.get(..root.len())?;
    (head == root).then(|| parts.get(root.len()..).unwrap_or_default())
}

/// The components of an absolute path, `.` dropped and `..` folded (a `..`
/// at the top stays there, as the kernel has it).
fn fold_absolute(path: &str) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    for component in path.split('/') {
        match component {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            name => parts.push(name.to_owned()),
        }
    }
    parts
}

/// A relative path with `.` dropped and `..` folded, or `None` when a `..`
/// climbs above where it starts.
pub(crate) fn fold_relative(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for component in path.split('/') {
        match component {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            name => parts.push(name),
        }
    }
    Some(parts.join("/"))
}

/// The forms of an outside path that the patterns judge: each of its names
/// on its own (an ancestor called `.ssh`, a file called `id_rsa`), then the
/// whole path without its leading `/`, as if it were relative.
pub(crate) fn outside_forms(path: &str) -> impl Iterator<Item = &str> {
    path.split('/')
        .filter(|c| !matches!(*c, "" | "." | ".."))
        .chain(std::iter::once(path.trim_start_matches('/')))
}

/// Joins a relative `path` to the directory `cwd` a command runs in
/// (workspace-relative or absolute); an absolute `path` stays as it is.
pub(crate) fn join(cwd: &str, path: &str) -> String {
    if path.starts_with('/') || cwd.is_empty() || cwd == "." {
        return path.to_owned();
    }
    format!("{}/{path}", cwd.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places() {
        let roots = Roots::new(["/ws", "/private/ws/"]);
        let cases: &[(&str, Place)] = &[
            ("a/b", Place::Inside("a/b".into())),
            ("./a//b/.", Place::Inside("a/b".into())),
            ("a/../.env", Place::Inside(".env".into())),
            ("", Place::Inside(String::new())),
            ("..", Place::Outside("..".into())),
            ("a/../../x", Place::Outside("a/../../x".into())),
            ("/ws", Place::Inside(String::new())),
            ("/ws/src/../.env", Place::Inside(".env".into())),
            ("/private/ws/x", Place::Inside("x".into())),
            ("/wsx/y", Place::Outside("/wsx/y".into())),
            ("/ws/../etc/shadow", Place::Outside("/etc/shadow".into())),
            ("/../ws/a", Place::Inside("a".into())),
            ("//etc//passwd", Place::Outside("/etc/passwd".into())),
        ];
        for (path, want) in cases {
            assert_eq!(&roots.place(path), want, "{path}");
        }
    }

    #[test]
    fn outside_forms_are_names_then_the_tail() {
        let forms: Vec<&str> = outside_forms("/home/u/.ssh/id_rsa").collect();
        assert_eq!(forms, ["home", "u", ".ssh", "id_rsa", "home/u/.ssh/id_rsa"]);
        let forms: Vec<&str> = outside_forms("../x").collect();
        assert_eq!(forms, ["x", "../x"]);
    }

    #[test]
    fn joins() {
        let cases: &[(&str, &str, &str)] = &[
            ("", ".env", ".env"),
            (".", ".env", ".env"),
            ("sub", ".env", "sub/.env"),
            ("sub/", "a", "sub/a"),
            ("sub", "/etc/x", "/etc/x"),
        ];
        for (cwd, path, want) in cases {
            assert_eq!(join(cwd, path), *want, "{cwd} {path}");
        }
    }
}
