//! Where the store lives: in the user's data directory, one database per
//! workspace, never inside the user's repository.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The database file's name.
pub const DB_FILE: &str = "toolgate.db";

/// The file next to the database that names its workspace, so that a person
/// looking at `DATA_DIR/workspaces/` can tell which directory is which.
pub const WORKSPACE_FILE: &str = "workspace";

/// Longest workspace name kept in a directory name, in characters.
const MAX_NAME: usize = 40;

/// The store's database file for `workspace`:
/// `DATA_DIR/workspaces/NAME-HASH/toolgate.db`.
///
/// # Rules
///
/// 1. The workspace path is canonicalised first (symlinks resolved), so
///    every spelling of a directory gets the same database. A workspace
///    that cannot be canonicalised (it does not exist) is used as given.
/// 2. `HASH` is the first 16 hex digits of the SHA-256 of the canonical
///    path's bytes: it tells apart two workspaces with the same name.
/// 3. `NAME` is the path's last component for people to read: characters
///    other than ASCII letters, digits, `-`, `_` and `.` become `_`, leading
///    dots are removed (no hidden directories), it is cut to 40 characters,
///    and it is `workspace` when nothing is left (the root directory).
pub fn default_path(data_dir: &Path, workspace: &Path) -> PathBuf {
    let canonical = canonical(workspace);
    data_dir
        .join("workspaces")
        .join(format!(
            "{}-{}",
            sanitise(canonical.file_name().map(|n| n.to_string_lossy())),
            path_hash(&canonical)
        ))
        .join(DB_FILE)
}

/// toolgate's data directory: `$XDG_DATA_HOME/toolgate`, else
/// `$HOME/.local/share/toolgate`; `None` when neither is set.
///
/// `env` is the process environment as name–value pairs (pass
/// `std::env::vars().collect::<Vec<_>>()`), so callers and tests control
/// it. As the XDG Base Directory specification says, an empty or relative
/// `XDG_DATA_HOME` is ignored; an empty or relative `HOME` is ignored too.
pub fn data_dir_from_env(env: &[(String, String)]) -> Option<PathBuf> {
    let get = |name: &str| {
        env.iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| Path::new(v))
            .filter(|p| p.is_absolute())
    };
    if let Some(xdg) = get("XDG_DATA_HOME") {
        return Some(xdg.join("toolgate"));
    }
    get("HOME").map(|home| home.join(".local").join("share").join("toolgate"))
}

/// The canonical form of `workspace`, or `workspace` itself.
pub(crate) fn canonical(workspace: &Path) -> PathBuf {
    std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_owned())
}

fn path_hash(path: &Path) -> String {
    let digest = Sha256::digest(path_bytes(path));
    let mut hex = String::with_capacity(16);
    for byte in &digest[..8] {
        use std::fmt::Write as _;
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

#[cfg(unix)]
fn path_bytes(path: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt as _;
    path.as_os_str().as_bytes().to_vec()
}

#[cfg(not(unix))]
fn path_bytes(path: &Path) -> Vec<u8> {
    path.to_string_lossy().into_owned().into_bytes()
}

fn sanitise(name: Option<std::borrow::Cow<'_, str>>) -> String {
    let name = name.unwrap_or_default();
    let cleaned: String = name
        .trim_start_matches('.')
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(MAX_NAME)
        .collect();
    if cleaned.is_empty() {
        "workspace".to_owned()
    } else {
        cleaned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitised_names() {
        let long = "a".repeat(50);
        let cases: &[(Option<&str>, &str)] = &[
            (Some("toolgate"), "toolgate"),
            (Some("my project"), "my_project"),
            (Some("a/b\\c:d"), "a_b_c_d"),
            (Some(".hidden"), "hidden"),
            (Some("..."), "workspace"),
            (Some("v1.2-rc_3"), "v1.2-rc_3"),
            (Some("café"), "caf_"),
            (Some("日本"), "__"),
            (Some(""), "workspace"),
            (None, "workspace"),
            (Some(&long), &long[..40]),
        ];
        for (input, expected) in cases {
            assert_eq!(
                sanitise(input.map(std::borrow::Cow::Borrowed)),
                *expected,
                "{input:?}"
            );
        }
    }

    #[test]
    fn data_dirs() {
        type Env<'a> = &'a [(&'a str, &'a str)];
        let cases: &[(Env<'_>, Option<&str>)] = &[
            (
                &[("XDG_DATA_HOME", "/x/data"), ("HOME", "/home/u")],
                Some("/x/data/toolgate"),
            ),
            (
                &[("HOME", "/home/u")],
                Some("/home/u/.local/share/toolgate"),
            ),
            (
                &[("XDG_DATA_HOME", ""), ("HOME", "/home/u")],
                Some("/home/u/.local/share/toolgate"),
            ),
            (
                &[("XDG_DATA_HOME", "relative/dir"), ("HOME", "/home/u")],
                Some("/home/u/.local/share/toolgate"),
            ),
            (&[("XDG_DATA_HOME", "/x")], Some("/x/toolgate")),
            (&[("HOME", "")], None),
            (&[("HOME", "home")], None),
            (&[("PATH", "/bin")], None),
            (&[], None),
            // The last value of a repeated name wins, as in `std::env::vars`
            // order after an override.
            (
                &[("HOME", "/old"), ("HOME", "/new")],
                Some("/new/.local/share/toolgate"),
            ),
        ];
        for (env, expected) in cases {
            let env: Vec<(String, String)> = env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            assert_eq!(
                data_dir_from_env(&env),
                expected.map(PathBuf::from),
                "{env:?}"
            );
        }
    }

    #[test]
    fn default_path_is_keyed_by_the_canonical_workspace() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("My Repo");
        std::fs::create_dir(&ws).unwrap();
        let data = Path::new("/data/toolgate");

        let path = default_path(data, &ws);
        let dir = path.parent().unwrap();
        assert_eq!(path.file_name().unwrap(), DB_FILE);
        assert_eq!(dir.parent().unwrap(), data.join("workspaces"));
        let dir_name = dir.file_name().unwrap().to_str().unwrap();
        let (name, hash) = dir_name.rsplit_once('-').unwrap();
        assert_eq!(name, "My_Repo");
        assert_eq!(hash.len(), 16);
        assert!(hash.chars().all(|c| c.is_ascii_hexdigit()));

        // Another spelling of the same directory: the same file.
        let dotted = tmp
            .path()
            .join(".")
            .join("My Repo")
            .join("..")
            .join("My Repo");
        assert_eq!(default_path(data, &dotted), path);
        #[cfg(unix)]
        {
            let link = tmp.path().join("link");
            std::os::unix::fs::symlink(&ws, &link).unwrap();
            assert_eq!(default_path(data, &link), path);
        }
        // Another directory with the same name: another file.
        let other = tmp.path().join("elsewhere").join("My Repo");
        std::fs::create_dir_all(&other).unwrap();
        let other_path = default_path(data, &other);
        assert_ne!(other_path, path);
        assert!(
            other_path
                .parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("My_Repo-")
        );
    }
}
