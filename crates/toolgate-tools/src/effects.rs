//! What the built-ins share to declare their effects
//! ([`toolgate_core::Effects`]): the form a path is declared in, what a file
//! holds now, and which refusals are the policy's to make.
//!
//! # Rules
//!
//! 1. A path is declared workspace-relative (`src/main.rs`, `.` for the
//!    root) when [`Workspace::resolve`] accepts it, and as written
//!    otherwise, with any leading `./` dropped (`../etc/passwd`,
//!    `/etc/passwd`). Nothing on disk is looked at to name it: the gate
//!    judges the path as written and as it resolves.
//! 2. Effects never refuse a call for a policy reason (a sensitive,
//!    protected or outside path, deletion switched off): such a call is
//!    declared, and the gate's guardrails or the tool's own `run` refuse it
//!    with their usual message. They refuse only a call that could not run
//!    whatever the policy (a path with a NUL byte, a patch that does not
//!    parse, an edit whose text is not in the file), with the message `run`
//!    would give.
//! 3. Effects read the files a call would change (through the workspace,
//!    within the editing tools' size limit) but never write anything or
//!    start a process.

use std::io::Read as _;

use toolgate_core::{Effect, EffectsError, Workspace, WorkspaceError, WsPath};

/// A path as a call's effects name it (rule 1 in the [module docs](self)).
#[derive(Debug, Clone)]
pub(crate) struct Named {
    /// The name to declare.
    pub(crate) display: String,
    /// The path inside the workspace, when it resolves there.
    pub(crate) path: Option<WsPath>,
}

/// Names `user_path` (rule 1 in the [module docs](self)). A path with a NUL
/// byte is refused: no file has such a name, so no call with it can run.
pub(crate) fn named(workspace: &Workspace, user_path: &str) -> Result<Named, EffectsError> {
    match workspace.resolve(user_path) {
        Ok(path) => Ok(Named {
            display: workspace.display(&path),
            path: Some(path),
        }),
        Err(error @ WorkspaceError::NulByte { .. }) => Err(EffectsError::new(error.to_string())),
        Err(_) => Ok(Named {
            display: as_written(user_path),
            path: None,
        }),
    }
}

/// The read of a listing or a search of `user_path`: of that one file when
/// it is a regular file (a search may be given one), else of everything
/// beneath it.
pub(crate) fn read_of(workspace: &Workspace, user_path: &str) -> Result<Effect, EffectsError> {
    let named = named(workspace, user_path)?;
    let is_file = named
        .path
        .as_ref()
        .is_some_and(|path| workspace.metadata(path).is_ok_and(|meta| meta.is_file()));
    Ok(if is_file {
        Effect::read(named.display)
    } else {
        Effect::read_tree(named.display)
    })
}

/// `path` without its leading `./` (repeated, as in `././x`); `.` stays.
pub(crate) fn as_written(path: &str) -> String {
    let mut rest = path;
    while let Some(stripped) = rest.strip_prefix("./") {
        rest = stripped.trim_start_matches('/');
    }
    if rest.is_empty() { "." } else { rest }.to_owned()
}

/// Whether a workspace error is a refusal by policy (where a path may lead,
/// which files may be read or changed) rather than a call that cannot run.
pub(crate) fn is_policy(error: &WorkspaceError) -> bool {
    matches!(
        error,
        WorkspaceError::OutsideWorkspace { .. }
            | WorkspaceError::SymlinkEscapes { .. }
            | WorkspaceError::Sensitive { .. }
            | WorkspaceError::Protected { .. }
    )
}

/// What a file holds before a call changes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Current {
    /// The file does not exist.
    Missing,
    /// Its UTF-8 text.
    Text(String),
    /// It exists but its text cannot be had: not UTF-8, too large, or not
    /// for effects to read (a sensitive file). `lines` is how many lines it
    /// holds when that could be counted, else 0.
    Unknown {
        /// Lines counted in its bytes (0 when they could not be read).
        lines: usize,
    },
}

impl Current {
    /// Reads what `path` holds now, up to `max` bytes.
    pub(crate) fn read(workspace: &Workspace, path: &WsPath, max: u64) -> Self {
        match workspace.read_limited(path, max) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => Self::Text(text),
                Err(error) => Self::Unknown {
                    lines: count_lines(error.as_bytes()),
                },
            },
            Err(WorkspaceError::NotFound { .. }) => Self::Missing,
            // Not for effects to read (a sensitive file), or not a file at
            // all: whether it is there is still known.
            Err(_) if !workspace.exists(path) => Self::Missing,
            Err(_) => Self::Unknown { lines: 0 },
        }
    }
}

/// How many lines `bytes` hold, as [`str::lines`] counts them: one per
/// `\n`, plus an unterminated last one.
pub(crate) fn count_lines(bytes: &[u8]) -> usize {
    let newlines = memchr::memchr_iter(b'\n', bytes).count();
    newlines + usize::from(bytes.last().is_some_and(|b| *b != b'\n'))
}

/// How many lines the file at `path` holds, counted as it streams by (it is
/// never held in memory), when it is at most `max` bytes and readable; 0
/// otherwise.
pub(crate) fn count_file_lines(workspace: &Workspace, path: &WsPath, max: u64) -> usize {
    let Ok(file) = workspace.open_read(path) else {
        return 0;
    };
    if file.metadata().map_or(true, |meta| meta.len() > max) {
        return 0;
    }
    let mut reader = file.take(max);
    let mut buf = vec![0u8; 64 * 1024];
    let mut lines = 0;
    let mut last = None;
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let chunk = buf.get(..n).unwrap_or_default();
                lines += memchr::memchr_iter(b'\n', chunk).count();
                last = chunk.last().copied();
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return 0,
        }
    }
    lines + usize::from(last.is_some_and(|b| b != b'\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_as_written() {
        let cases: &[(&str, &str)] = &[
            ("./a.txt", "a.txt"),
            ("././a.txt", "a.txt"),
            (".//a.txt", "a.txt"),
            ("./", "."),
            (".", "."),
            ("../x", "../x"),
            ("/etc/passwd", "/etc/passwd"),
            ("a/./b", "a/./b"),
        ];
        for (path, expected) in cases {
            assert_eq!(as_written(path), *expected, "{path}");
        }
    }

    #[test]
    fn names_resolve_or_stay_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::builder(dir.path()).build().unwrap();
        let inside = dir.path().join("src/main.rs").display().to_string();
        let cases: &[(&str, &str, bool)] = &[
            ("./src/../a.txt", "a.txt", true),
            (".", ".", true),
            ("", ".", true),
            (&inside, "src/main.rs", true),
            ("./../outside.txt", "../outside.txt", false),
            ("/etc/passwd", "/etc/passwd", false),
            // Sensitive and protected paths resolve: policy is the gate's.
            (".env", ".env", true),
            ("./toolgate.yaml", "toolgate.yaml", true),
        ];
        for (path, display, resolves) in cases {
            let named = named(&workspace, path).unwrap();
            assert_eq!(
                (named.display.as_str(), named.path.is_some()),
                (*display, *resolves),
                "{path}"
            );
        }
        let error = named(&workspace, "a\0b").unwrap_err();
        assert!(error.message().contains("NUL byte"), "{error}");
    }

    #[test]
    fn lines_are_counted_as_str_lines_counts_them() {
        let cases: &[&str] = &["", "a", "a\n", "a\nb", "a\nb\n", "\n\n", "a\r\nb\r\n"];
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::builder(dir.path()).build().unwrap();
        let path = workspace.resolve("f").unwrap();
        for text in cases {
            assert_eq!(
                count_lines(text.as_bytes()),
                text.lines().count(),
                "{text:?}"
            );
            workspace.write_atomic(&path, text.as_bytes()).unwrap();
            assert_eq!(
                count_file_lines(&workspace, &path, 1024),
                text.lines().count(),
                "{text:?}"
            );
        }
        // Over the limit, or missing: unknown.
        workspace.write_atomic(&path, b"a\nb\n").unwrap();
        assert_eq!(count_file_lines(&workspace, &path, 3), 0);
        let missing = workspace.resolve("missing").unwrap();
        assert_eq!(count_file_lines(&workspace, &missing, 1024), 0);
    }

    #[test]
    fn what_a_file_holds_now() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::builder(dir.path()).build().unwrap();
        std::fs::write(dir.path().join("text"), "a\nb\n").unwrap();
        std::fs::write(dir.path().join("latin1"), b"caf\xe9\nx\n").unwrap();
        std::fs::write(dir.path().join(".env"), "K=1\n").unwrap();
        let cases: &[(&str, u64, Current)] = &[
            ("text", 1024, Current::Text("a\nb\n".to_owned())),
            ("text", 2, Current::Unknown { lines: 0 }),
            ("latin1", 1024, Current::Unknown { lines: 2 }),
            ("missing", 1024, Current::Missing),
            (".env", 1024, Current::Unknown { lines: 0 }),
            (".env.local", 1024, Current::Missing),
        ];
        for (name, max, expected) in cases {
            let path = workspace.resolve(name).unwrap();
            assert_eq!(&Current::read(&workspace, &path, *max), expected, "{name}");
        }
    }
}
