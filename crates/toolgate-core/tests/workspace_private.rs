//! Private paths (toolgate's own state) and paths with a trailing slash,
//! against real files: the home directory as a workspace holds
//! `.config/toolgate` and `.local/share/toolgate`, and no spelling, symlink
//! or `..` may read, list, write or create anything there.
#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::fs;
use std::os::unix::fs::{PermissionsExt as _, symlink};
use std::path::{Path, PathBuf};

use toolgate_core::{Workspace, WorkspaceError};

const CONFIG: &str = "commands: {sandbox: full}\n";

/// `base/home` is the workspace (a home directory); `base/xdg` is a
/// configuration directory outside it.
struct Home {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
}

impl Home {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("home");
        let this = Self {
            _tmp: tmp,
            base,
            root,
        };
        this.file(".config/toolgate/config.yaml", CONFIG)
            .file(".config/toolgate/trusted.json", "{}")
            .file(".config/toolgate-old/a", "OLD")
            .file(".config/other.txt", "OTHER")
            .file(".local/share/toolgate/workspaces/x-1/toolgate.db", "DB")
            .file("a.txt", "A")
            .file("sub/b.txt", "B")
            .link("cfg", ".config/toolgate")
            .link("cfgdir", ".config")
            .link("cfg_file", ".config/toolgate/config.yaml")
            .link(".config/up", "..")
            .link("dangling", "newstate/y");
        fs::create_dir_all(this.base.join("xdg/toolgate")).unwrap();
        fs::write(this.base.join("xdg/toolgate/config.yaml"), CONFIG).unwrap();
        let abs = this.root.join(".config/toolgate/config.yaml");
        this.link("abs_cfg", abs);
        this
    }

    fn file(&self, rel: &str, content: &str) -> &Self {
        let path = self.root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
        self
    }

    fn link(&self, rel: &str, target: impl AsRef<Path>) -> &Self {
        symlink(target, self.root.join(rel)).unwrap();
        self
    }

    fn private(&self) -> Vec<PathBuf> {
        vec![
            self.root.join(".config/toolgate"),
            self.root.join(".local/share/toolgate"),
            // Does not exist yet: nothing may create it either.
            self.root.join("newstate"),
            self.base.join("xdg/toolgate"),
        ]
    }

    fn ws(&self) -> Workspace {
        Workspace::builder(&self.root)
            .private_paths(self.private())
            .build()
            .unwrap()
    }

    fn expand(&self, input: &str) -> String {
        input
            .replace("{ws}", self.root.to_str().unwrap())
            .replace("{base}", self.base.to_str().unwrap())
    }

    /// Every file under the private directories, with its content.
    fn private_snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![
            self.root.join(".config/toolgate"),
            self.root.join(".local/share/toolgate"),
            self.base.join("xdg"),
        ];
        while let Some(dir) = stack.pop() {
            for entry in fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    out.push((path.clone(), fs::read(&path).unwrap()));
                }
            }
        }
        out.sort();
        out
    }
}

#[derive(Debug, Clone, Copy)]
enum Expect {
    Read(&'static str),
    Private,
    SlashOnFile,
    NotAFile,
}

fn read(ws: &Workspace, input: &str) -> Result<Vec<u8>, WorkspaceError> {
    ws.resolve(input).and_then(|p| ws.read(&p))
}

fn matches(result: &Result<Vec<u8>, WorkspaceError>, expect: Expect) -> bool {
    match (result, expect) {
        (Ok(bytes), Expect::Read(want)) => bytes == want.as_bytes(),
        (Err(WorkspaceError::Private { .. }), Expect::Private)
        | (Err(WorkspaceError::SlashOnFile { .. }), Expect::SlashOnFile)
        | (Err(WorkspaceError::NotAFile { .. }), Expect::NotAFile) => true,
        _ => false,
    }
}

const READS: &[(&str, Expect)] = &[
    // As written, however spelled.
    (".config/toolgate/config.yaml", Expect::Private),
    ("./.config/toolgate/config.yaml", Expect::Private),
    (".config//toolgate/trusted.json", Expect::Private),
    (".config/x/../toolgate/config.yaml", Expect::Private),
    ("sub/../.config/toolgate/config.yaml", Expect::Private),
    (".config/toolgate", Expect::Private),
    (".config/toolgate/", Expect::Private),
    (
        ".local/share/toolgate/workspaces/x-1/toolgate.db",
        Expect::Private,
    ),
    ("newstate/x", Expect::Private),
    // Absolute, inside the workspace and out of it.
    ("{ws}/.config/toolgate/config.yaml", Expect::Private),
    (
        "{ws}/.config/../.config/toolgate/config.yaml",
        Expect::Private,
    ),
    ("{base}/xdg/toolgate/config.yaml", Expect::Private),
    (
        "{base}/xdg/./toolgate/../toolgate/config.yaml",
        Expect::Private,
    ),
    // Through symlinks inside the workspace.
    ("cfg/config.yaml", Expect::Private),
    ("cfg", Expect::Private),
    ("cfgdir/toolgate/config.yaml", Expect::Private),
    ("cfg_file", Expect::Private),
    ("abs_cfg", Expect::Private),
    (".config/up/.config/toolgate/config.yaml", Expect::Private),
    ("cfgdir/up/cfgdir/toolgate/trusted.json", Expect::Private),
    // Neighbours are not private.
    (".config/toolgate-old/a", Expect::Read("OLD")),
    (".config/other.txt", Expect::Read("OTHER")),
    ("cfgdir/other.txt", Expect::Read("OTHER")),
    (".config/up/a.txt", Expect::Read("A")),
    // A trailing slash names a directory.
    ("a.txt", Expect::Read("A")),
    ("a.txt/", Expect::SlashOnFile),
    ("a.txt/.", Expect::SlashOnFile),
    ("sub/b.txt//", Expect::SlashOnFile),
    ("cfgdir/other.txt/", Expect::SlashOnFile),
    ("{ws}/a.txt/", Expect::SlashOnFile),
    ("sub/", Expect::NotAFile),
    ("sub/b.txt/..", Expect::NotAFile),
];

#[test]
fn private_paths_and_trailing_slashes_are_refused_to_reads() {
    let home = Home::new();
    let ws = home.ws();
    let failures: Vec<String> = READS
        .iter()
        .filter_map(|(input, expect)| {
            let result = read(&ws, &home.expand(input));
            (!matches(&result, *expect))
                .then(|| format!("{input:?}: expected {expect:?}, got {result:?}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn private_paths_are_refused_to_every_change_and_nothing_is_created() {
    let home = Home::new();
    let ws = home.ws();
    let before = home.private_snapshot();
    let inputs = [
        ".config/toolgate/config.yaml",
        ".config/toolgate/new.yaml",
        ".config/toolgate/skills/evil/SKILL.md",
        ".local/share/toolgate/workspaces/x-1/toolgate.db",
        "{ws}/.config/toolgate/config.yaml",
        "{base}/xdg/toolgate/config.yaml",
        "cfg/config.yaml",
        "cfg/new.yaml",
        "cfg_file",
        "abs_cfg",
        "cfgdir/toolgate/trusted.json",
        ".config/up/.config/toolgate/config.yaml",
        "newstate/x",
        "newstate/deeper/x",
        "dangling",
    ];
    // Removing a symlink removes the link, never what it points to.
    let links = ["cfg_file", "abs_cfg", "dangling"];
    for input in inputs {
        let is_link = links.contains(&input);
        let input = home.expand(input);
        let result = ws.resolve(&input).map(|p| {
            let refused = |r: Result<(), WorkspaceError>| {
                assert!(
                    matches!(r, Err(WorkspaceError::Private { .. })),
                    "{input:?}: {r:?}"
                );
            };
            refused(ws.write_atomic(&p, b"commands: {sandbox: none}\n"));
            refused(ws.append(&p, b"x"));
            refused(ws.check_write(&p));
            refused(ws.metadata(&p).map(|_| ()));
            assert!(!ws.exists(&p), "{input:?} exists");
            assert!(ws.physical(&p).is_none(), "{input:?} has a physical path");
            if is_link {
                ws.remove_file(&p).unwrap();
            } else {
                refused(ws.remove_file(&p));
            }
        });
        assert!(
            matches!(result, Ok(()) | Err(WorkspaceError::Private { .. })),
            "{input:?}: {result:?}"
        );
    }
    assert_eq!(home.private_snapshot(), before);
    assert!(!home.root.join("newstate").exists());
    assert!(!home.root.join(".config/toolgate/skills").exists());
    assert_eq!(
        fs::read_to_string(home.root.join(".config/toolgate/config.yaml")).unwrap(),
        CONFIG
    );
}

#[test]
fn listings_and_walks_leave_private_paths_out() {
    let home = Home::new();
    let ws = home.ws();
    let names = |dir: &str| -> Vec<String> {
        ws.read_dir(&ws.resolve(dir).unwrap())
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect()
    };
    // `cfg`, `cfg_file` and `abs_cfg` lead into private paths; `cfgdir`
    // leads to `.config`, which is not private.
    assert_eq!(names("."), [".config", ".local", "a.txt", "cfgdir", "sub"]);
    assert_eq!(names(".config"), ["other.txt", "toolgate-old", "up"]);
    assert_eq!(names("cfgdir/"), ["other.txt", "toolgate-old", "up"]);
    assert!(names(".local/share").is_empty());

    let report = ws.walk_report(&ws.resolve(".").unwrap(), true).unwrap();
    let files: Vec<String> = report.files.iter().map(|p| ws.display(p)).collect();
    assert_eq!(
        files,
        [
            ".config/other.txt",
            ".config/toolgate-old/a",
            "a.txt",
            "sub/b.txt"
        ]
    );
    assert!(report.sensitive.is_empty(), "{:?}", report.sensitive);

    for dir in [".config/toolgate", "cfg", ".local/share/toolgate/"] {
        let p = ws.resolve(dir);
        let refused = p.and_then(|p| ws.read_dir(&p).map(|_| ()));
        assert!(
            matches!(refused, Err(WorkspaceError::Private { .. })),
            "{dir}: {refused:?}"
        );
    }
    // Through a symlinked directory and back up: the same paths are left
    // out.
    let walk = ws
        .walk(&ws.resolve("cfgdir/toolgate/..").unwrap(), true)
        .unwrap();
    let shown: Vec<String> = walk.iter().map(|p| ws.display(p)).collect();
    assert_eq!(
        shown,
        [
            "cfgdir/other.txt",
            "cfgdir/toolgate-old/a",
            "cfgdir/up/a.txt",
            "cfgdir/up/sub/b.txt"
        ]
    );
    // The search tools walk with their own walker and ask on each path.
    assert!(ws.is_private(Path::new(".config/toolgate/config.yaml")));
    assert!(!ws.is_private(Path::new(".config/toolgate-old/a")));
}

#[test]
fn the_refusal_says_what_it_is_and_that_nothing_lifts_it() {
    let home = Home::new();
    let ws = Workspace::builder(&home.root)
        .private_paths(home.private())
        .allow_sensitive(true)
        .sensitive_patterns(Vec::<String>::new())
        .protected_patterns(Vec::<String>::new())
        .build()
        .unwrap();
    let error = read(&ws, "cfg/config.yaml").unwrap_err();
    assert_eq!(
        error.to_string(),
        "refusing `cfg/config.yaml`: it is toolgate's own configuration or data; \
         no tool may read or change it"
    );
    let outside = home.expand("{base}/xdg/toolgate/config.yaml");
    let error = read(&ws, &outside).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "refusing `{outside}`: it is toolgate's own configuration or data; \
             no tool may read or change it"
        )
    );
}

/// `~/.config` as the workspace: `toolgate` is then a private directory at
/// its top.
#[test]
fn a_workspace_that_is_the_configuration_directory_holds_a_private_path() {
    let home = Home::new();
    let ws = Workspace::builder(home.root.join(".config"))
        .private_paths(home.private())
        .build()
        .unwrap();
    for input in [
        "toolgate/config.yaml",
        "toolgate",
        "./other.txt/../toolgate/trusted.json",
    ] {
        let result = read(&ws, input);
        assert!(
            matches!(result, Err(WorkspaceError::Private { .. })),
            "{input}: {result:?}"
        );
    }
    assert_eq!(read(&ws, "other.txt").unwrap(), b"OTHER");
    let p = ws.resolve("toolgate/trusted.json").unwrap_err();
    assert!(matches!(p, WorkspaceError::Private { .. }));
}

/// A workspace inside toolgate's own state is the person's choice: its
/// files are not refused.
#[test]
fn a_workspace_inside_a_private_path_is_left_alone() {
    let home = Home::new();
    let ws = Workspace::builder(home.root.join(".config/toolgate"))
        .private_paths(home.private())
        .build()
        .unwrap();
    assert_eq!(read(&ws, "config.yaml").unwrap(), CONFIG.as_bytes());
}

#[test]
fn relative_private_paths_are_refused_by_the_builder() {
    let home = Home::new();
    let result = Workspace::builder(&home.root)
        .private_paths(["relative/toolgate"])
        .build();
    assert!(
        matches!(result, Err(WorkspaceError::PrivateNotAbsolute { .. })),
        "{result:?}"
    );
}

#[test]
fn a_trailing_slash_refuses_writes_and_creates_nothing() {
    let home = Home::new();
    let ws = home.ws();
    for input in ["newdir/", "a.txt/", "sub/new/.", "sub/b.txt/..", "x/y/"] {
        let p = ws.resolve(input).unwrap();
        assert!(p.names_directory(), "{input}");
        for (op, result) in [
            ("write", ws.write_atomic(&p, b"x")),
            ("append", ws.append(&p, b"x")),
            ("check", ws.check_write(&p)),
            ("remove", ws.remove_file(&p)),
        ] {
            assert!(
                matches!(result, Err(WorkspaceError::SlashOnWrite { .. })),
                "{op} {input}: {result:?}"
            );
        }
    }
    assert!(!home.root.join("newdir").exists());
    assert!(!home.root.join("sub/new").exists());
    assert!(!home.root.join("x").exists());
    assert_eq!(fs::read(home.root.join("a.txt")).unwrap(), b"A");
    assert_eq!(fs::read(home.root.join("sub/b.txt")).unwrap(), b"B");
    let error = ws
        .write_atomic(&ws.resolve("newdir/").unwrap(), b"x")
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "path `newdir/` ends with `/`: a file path cannot end with a slash; \
         name a file (`newdir/NAME`) or drop the slash"
    );
    let error = read(&ws, "a.txt/").unwrap_err();
    assert_eq!(
        error.to_string(),
        "path `a.txt/` ends with `/`, which names a directory, but `a.txt` is a file, \
         not a directory; drop the slash to use the file"
    );
}

#[test]
fn a_trailing_slash_on_a_file_fails_listings_and_metadata() {
    let home = Home::new();
    let ws = home.ws();
    let file = ws.resolve("a.txt/").unwrap();
    assert!(matches!(
        ws.read_dir(&file),
        Err(WorkspaceError::SlashOnFile { .. })
    ));
    assert!(matches!(
        ws.walk(&file, true),
        Err(WorkspaceError::SlashOnFile { .. })
    ));
    assert!(matches!(
        ws.metadata(&file),
        Err(WorkspaceError::SlashOnFile { .. })
    ));
    assert!(!ws.exists(&file));
    // Without the slash, the file; with it, a directory works.
    let plain = ws.resolve("a.txt").unwrap();
    assert!(!plain.names_directory());
    assert_eq!(ws.walk(&plain, true).unwrap(), vec![plain.clone()]);
    assert!(ws.exists(&ws.resolve("sub/").unwrap()));
    assert_eq!(ws.read_dir(&ws.resolve("sub/").unwrap()).unwrap().len(), 1);
    // The root is a directory however it is written.
    for root in ["", ".", "./", "sub/..", "sub/../"] {
        let p = ws.resolve(root).unwrap();
        assert!(p.is_root() && !p.names_directory(), "{root}");
    }
}

#[test]
fn private_modes_make_files_0600_and_directories_0700() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("loose.md"), "old").unwrap();
    fs::set_permissions(
        tmp.path().join("loose.md"),
        fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let ws = Workspace::builder(tmp.path())
        .private_modes(true)
        .build()
        .unwrap();
    let mode = |rel: &str| {
        fs::metadata(tmp.path().join(rel))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    ws.write_atomic(&ws.resolve("memory/2025-01-01.md").unwrap(), b"x")
        .unwrap();
    ws.append(&ws.resolve("log/a.md").unwrap(), b"x").unwrap();
    ws.write_atomic(&ws.resolve("loose.md").unwrap(), b"new")
        .unwrap();
    assert_eq!(mode("memory"), 0o700);
    assert_eq!(mode("memory/2025-01-01.md"), 0o600);
    assert_eq!(mode("log"), 0o700);
    assert_eq!(mode("log/a.md"), 0o600);
    assert_eq!(mode("loose.md"), 0o600);
    fs::set_permissions(
        tmp.path().join("loose.md"),
        fs::Permissions::from_mode(0o664),
    )
    .unwrap();
    ws.append(&ws.resolve("loose.md").unwrap(), b"+").unwrap();
    assert_eq!(mode("loose.md"), 0o600);
}
