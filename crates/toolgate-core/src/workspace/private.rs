//! Private paths: places no operation of a [`Workspace`](super::Workspace)
//! may read, list, write or create, wherever they lie — toolgate's own
//! configuration and data, when the workspace holds them (the home
//! directory as a workspace holds `~/.config/toolgate`).
//!
//! They are given as absolute host paths, not as patterns, because they are
//! facts about this machine (where `XDG_CONFIG_HOME` points), not rules about
//! a project's files. Each one is kept in two spellings, because a path can
//! reach it in either:
//!
//! - lexically normal, as given (`/home/u/.config/toolgate`), which is how a
//!   model writes it and how [`Workspace::resolve`](super::Workspace::resolve)
//!   sees it before touching the disk;
//! - as it resolves on disk when the workspace is opened, symlinks followed
//!   as far as the path exists (`.config -> dotfiles/config` makes it
//!   `/home/u/dotfiles/config/toolgate`), which is how the physical lookup
//!   sees it once symlinks inside the workspace are followed.
//!
//! Matching is by whole components (`.config/toolgate-old` is not under
//! `.config/toolgate`) and covers everything beneath.

use std::path::{Component, Path, PathBuf};

use super::WorkspaceError;

/// The private paths of one workspace, in both spellings: absolute (for
/// absolute paths a caller gives) and relative to the root (for everything
/// else).
#[derive(Debug, Clone, Default)]
pub(super) struct PrivatePaths {
    /// Absolute, lexically normal and canonical spellings.
    abs: Vec<PathBuf>,
    /// The spellings that lie strictly inside the root, relative to it.
    rel: Vec<PathBuf>,
}

impl PrivatePaths {
    /// Compiles `paths` for a workspace whose root is `root` (canonical) and
    /// `given_root` (as configured, absolute).
    pub(super) fn new(
        paths: &[PathBuf],
        root: &Path,
        given_root: &Path,
    ) -> Result<Self, WorkspaceError> {
        let mut this = Self::default();
        for path in paths {
            if !path.is_absolute() {
                return Err(WorkspaceError::PrivateNotAbsolute { path: path.clone() });
            }
            let spellings = [lexical(path), canonical_lenient(path)];
            // One that holds the root would make the whole workspace
            // unreachable: the person chose to work inside toolgate's own
            // state, and that choice stands.
            if spellings
                .iter()
                .any(|s| root.starts_with(s) || given_root.starts_with(s))
            {
                tracing::debug!(
                    private = %path.display(),
                    workspace = %root.display(),
                    "the workspace lies inside toolgate's own state; its files are not refused"
                );
                continue;
            }
            for spelling in spellings {
                for base in [root, given_root] {
                    if let Ok(rel) = spelling.strip_prefix(base)
                        && !this.rel.iter().any(|r| r == rel)
                    {
                        this.rel.push(rel.to_owned());
                    }
                }
                if !this.abs.contains(&spelling) {
                    this.abs.push(spelling);
                }
            }
        }
        Ok(this)
    }

    /// Whether `rel` (relative to the root, normal) is a private path or
    /// lies beneath one.
    pub(super) fn covers(&self, rel: &Path) -> bool {
        !rel.as_os_str().is_empty() && self.rel.iter().any(|p| rel.starts_with(p))
    }

    /// Whether the absolute `path` (made lexically normal here) is a private
    /// path or lies beneath one.
    pub(super) fn covers_abs(&self, path: &Path) -> bool {
        let path = lexical(path);
        self.abs.iter().any(|p| path.starts_with(p))
    }
}

/// `path` with `.` dropped and `..` folded, without looking at the disk; a
/// `..` above the root stays at the root, as the kernel does.
pub(super) fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if out.parent().is_some() {
                    out.pop();
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` with symlinks resolved as far as it exists, the missing rest
/// appended (a private directory that toolgate has not created yet).
fn canonical_lenient(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if parent != path => canonical_lenient(parent).join(name),
        _ => lexical(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_folds_dots() {
        let cases: &[(&str, &str)] = &[
            ("/a/b/../c", "/a/c"),
            ("/a/./b/", "/a/b"),
            ("/../a", "/a"),
            ("/a/b/../../..", "/"),
            ("/a//b", "/a/b"),
        ];
        for (input, expected) in cases {
            assert_eq!(lexical(Path::new(input)), Path::new(expected), "{input}");
        }
    }

    #[test]
    fn coverage_is_by_whole_components() {
        let root = Path::new("/nonexistent-toolgate-test/home");
        let private =
            PrivatePaths::new(&[root.join(".config/toolgate")], root, root).expect("absolute");
        let cases: &[(&str, bool)] = &[
            (".config/toolgate", true),
            (".config/toolgate/config.yaml", true),
            (".config/toolgate-old", false),
            (".config", false),
            ("", false),
            ("toolgate", false),
        ];
        for (rel, expected) in cases {
            assert_eq!(private.covers(Path::new(rel)), *expected, "{rel}");
        }
        assert!(private.covers_abs(&root.join(".config/x/../toolgate/trusted.json")));
        assert!(!private.covers_abs(&root.join(".config/toolgatex")));
    }

    #[test]
    fn a_private_path_holding_the_root_is_left_out() {
        let root = Path::new("/nonexistent-toolgate-test/data/toolgate/ws");
        let private = PrivatePaths::new(
            &[PathBuf::from("/nonexistent-toolgate-test/data/toolgate")],
            root,
            root,
        )
        .expect("absolute");
        assert!(!private.covers(Path::new("a")));
        assert!(!private.covers_abs(&root.join("a")));
    }

    #[test]
    fn relative_private_paths_are_refused() {
        let root = Path::new("/ws");
        let error = PrivatePaths::new(&[PathBuf::from("rel/x")], root, root).unwrap_err();
        assert!(matches!(error, WorkspaceError::PrivateNotAbsolute { .. }));
    }
}
