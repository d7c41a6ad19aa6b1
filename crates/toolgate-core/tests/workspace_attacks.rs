//! Attacks on the workspace sandbox, against real files in temporary
//! directories: path tricks, symlink escapes, sensitive files, a symlink
//! swapped in mid-operation, and the promises of atomic writes and walks.
#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _, symlink};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use toolgate_core::{EntryKind, Workspace, WorkspaceError, WsPath};

#[path = "common/xorshift.rs"]
mod xorshift;

const OUTSIDE: &str = "OUTSIDE-CONTENT";

/// `base/ws` is the workspace; `base/outside` and `base/ws-evil` are not.
struct Fixture {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    outside: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap().join("x");
        let root = base.join("ws");
        let outside = base.join("outside");
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::create_dir_all(base.join("ws-evil")).unwrap();
        fs::write(outside.join("secret.txt"), OUTSIDE).unwrap();
        fs::write(base.join("ws-evil/f"), OUTSIDE).unwrap();
        Self {
            _tmp: tmp,
            base,
            root,
            outside,
        }
    }

    fn file(&self, rel: &str, content: &str) -> &Self {
        let path = self.root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
        self
    }

    fn link(&self, rel: &str, target: impl AsRef<Path>) -> &Self {
        let path = self.root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        symlink(target, path).unwrap();
        self
    }

    fn ws(&self) -> Workspace {
        Workspace::builder(&self.root).build().unwrap()
    }

    /// Replaces `{ws}` and `{base}` with the real absolute paths.
    fn expand(&self, input: &str) -> String {
        input
            .replace("{ws}", self.root.to_str().unwrap())
            .replace("{base}", self.base.to_str().unwrap())
    }

    /// Every file under `outside`, with its content: must never change.
    fn outside_snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![self.outside.clone(), self.base.join("ws-evil")];
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

/// The tree the attack table runs against.
fn attack_fixture() -> Fixture {
    let fx = Fixture::new();
    let root = fx.root.clone();
    let base = fx.base.clone();
    fx.file("a.txt", "A")
        .file("sub/b.txt", "B")
        .file(".env", "ENV")
        .file("config/.env.local", "ENVLOCAL")
        .file("keys/server.pem", "PEM")
        .file(".ssh/config", "SSH")
        // Inside → inside: followed.
        .link("link_in", "sub/b.txt")
        .link("dirlink_in", "sub")
        .link("abs_in", root.join("sub/b.txt"))
        .link("sub/up", "..")
        // Innocent name → sensitive file.
        .link("notes.txt", ".env")
        .link("keys_alias", "keys")
        // Leaving the root.
        .link("link_out", "../outside")
        .link("abs_out", base.join("outside/secret.txt"))
        .link("chain1", "chain2")
        .link("chain2", "sub/chain3")
        .link("sub/chain3", "../../outside/secret.txt")
        .link("dangling_out", "/nonexistent-toolgate-dir/x")
        .link("dangling_rel_out", "../../nope")
        .link("evil_sibling", base.join("ws-evil"))
        .link("loop1", "loop2")
        .link("loop2", "loop1");
    fx
}

#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Reads this content.
    Read(&'static str),
    /// `OutsideWorkspace` from `resolve`.
    Outside,
    /// `SymlinkEscapes`, naming this link.
    Escapes(&'static str),
    /// `NulByte` from `resolve`.
    Nul,
    /// `Sensitive`, with this pattern.
    Sensitive(&'static str),
    NotFound,
    NotAFile,
    Loop,
}

fn check(ws: &Workspace, input: &str, expect: Expect) -> Result<(), String> {
    let result = ws.resolve(input).and_then(|p| ws.read(&p));
    let ok = match (&result, expect) {
        (Ok(bytes), Expect::Read(want)) => bytes == want.as_bytes(),
        (Err(WorkspaceError::OutsideWorkspace { .. }), Expect::Outside)
        | (Err(WorkspaceError::NulByte { .. }), Expect::Nul)
        | (Err(WorkspaceError::NotFound { .. }), Expect::NotFound)
        | (Err(WorkspaceError::NotAFile { .. }), Expect::NotAFile)
        | (Err(WorkspaceError::TooManySymlinks { .. }), Expect::Loop) => true,
        (Err(WorkspaceError::SymlinkEscapes { link, .. }), Expect::Escapes(want)) => link == want,
        (Err(WorkspaceError::Sensitive { pattern, .. }), Expect::Sensitive(want)) => {
            pattern == want
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{input:?}: expected {expect:?}, got {result:?}"))
    }
}

const ATTACKS: &[(&str, Expect)] = &[
    // Plain and normalised paths inside.
    ("a.txt", Expect::Read("A")),
    ("./sub/../a.txt", Expect::Read("A")),
    ("sub//b.txt", Expect::Read("B")),
    ("missing.txt", Expect::NotFound),
    ("", Expect::NotAFile),
    (".", Expect::NotAFile),
    // `..` escapes, however they are dressed.
    ("..", Expect::Outside),
    ("../outside/secret.txt", Expect::Outside),
    ("../../../../../../etc/passwd", Expect::Outside),
    ("a/../../x", Expect::Outside),
    ("sub/../../outside/secret.txt", Expect::Outside),
    ("./../ws/a.txt", Expect::Outside),
    // Absolute paths: inside accepted, outside refused, prefix sibling too.
    ("{ws}/a.txt", Expect::Read("A")),
    ("{ws}/sub/../a.txt", Expect::Read("A")),
    ("{ws}", Expect::NotAFile),
    ("/etc/passwd", Expect::Outside),
    ("{base}/outside/secret.txt", Expect::Outside),
    ("{base}/ws-evil/f", Expect::Outside),
    ("{ws}-evil/f", Expect::Outside),
    ("{ws}/../ws-evil/f", Expect::Outside),
    ("{ws}/../outside/secret.txt", Expect::Outside),
    // NUL bytes.
    ("a.txt\0", Expect::Nul),
    ("a\0/../../etc/passwd", Expect::Nul),
    // Symlinks that stay inside: followed.
    ("link_in", Expect::Read("B")),
    ("dirlink_in/b.txt", Expect::Read("B")),
    ("abs_in", Expect::Read("B")),
    ("sub/up/a.txt", Expect::Read("A")),
    ("dirlink_in/up/sub/b.txt", Expect::Read("B")),
    // Symlinks that leave: refused, naming the link.
    ("link_out/secret.txt", Expect::Escapes("link_out")),
    ("link_out", Expect::Escapes("link_out")),
    ("abs_out", Expect::Escapes("abs_out")),
    ("chain1", Expect::Escapes("sub/chain3")),
    ("dirlink_in/chain3", Expect::Escapes("sub/chain3")),
    ("dangling_out", Expect::Escapes("dangling_out")),
    ("dangling_rel_out", Expect::Escapes("dangling_rel_out")),
    ("evil_sibling/f", Expect::Escapes("evil_sibling")),
    ("loop1", Expect::Loop),
    // Sensitive files: refused by name, and through innocent names.
    (".env", Expect::Sensitive(".env*")),
    ("config/.env.local", Expect::Sensitive(".env*")),
    ("keys/server.pem", Expect::Sensitive("*.pem")),
    (".ssh/config", Expect::Sensitive(".ssh/**")),
    ("{ws}/.ssh/config", Expect::Sensitive(".ssh/**")),
    ("notes.txt", Expect::Sensitive(".env*")),
    ("keys_alias/server.pem", Expect::Sensitive("*.pem")),
    ("sub/up/.env", Expect::Sensitive(".env*")),
];

#[test]
fn path_attacks_are_refused_and_inside_paths_work() {
    let fx = attack_fixture();
    let ws = fx.ws();
    let failures: Vec<String> = ATTACKS
        .iter()
        .filter_map(|(input, expect)| check(&ws, &fx.expand(input), *expect).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn refused_paths_are_refused_for_every_operation_and_outside_is_untouched() {
    let fx = attack_fixture();
    let ws = fx.ws();
    let before = fx.outside_snapshot();
    for (input, expect) in ATTACKS {
        if matches!(
            expect,
            Expect::Read(_) | Expect::NotFound | Expect::NotAFile | Expect::Loop
        ) {
            continue;
        }
        let input = fx.expand(input);
        let Ok(p) = ws.resolve(&input) else {
            continue; // refused before any file system access
        };
        let name = format!("{input:?}");
        assert!(ws.write_atomic(&p, b"PWNED").is_err(), "write {name}");
        assert!(ws.append(&p, b"PWNED").is_err(), "append {name}");
        assert!(ws.read_limited(&p, 1 << 20).is_err(), "read_limited {name}");
        if !matches!(expect, Expect::Sensitive(_)) {
            assert!(ws.metadata(&p).is_err(), "metadata {name}");
            assert!(!ws.exists(&p), "exists {name}");
        }
        // Writing beneath an escaping directory symlink.
        if let Ok(below) = ws.resolve(&format!("{input}/new.txt")) {
            assert!(
                ws.write_atomic(&below, b"PWNED").is_err(),
                "write below {name}"
            );
        }
    }
    assert_eq!(fx.outside_snapshot(), before);
    assert_eq!(fs::read(fx.root.join(".env")).unwrap(), b"ENV");
}

#[test]
fn allow_sensitive_lifts_the_sensitive_refusal_only() {
    let fx = attack_fixture();
    let ws = Workspace::builder(&fx.root)
        .allow_sensitive(true)
        .build()
        .unwrap();
    let cases: &[(&str, Expect)] = &[
        (".env", Expect::Read("ENV")),
        ("config/.env.local", Expect::Read("ENVLOCAL")),
        ("keys/server.pem", Expect::Read("PEM")),
        (".ssh/config", Expect::Read("SSH")),
        ("notes.txt", Expect::Read("ENV")),
        ("link_out/secret.txt", Expect::Escapes("link_out")),
        ("../outside/secret.txt", Expect::Outside),
    ];
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(input, expect)| check(&ws, input, *expect).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let env = ws.resolve("notes.txt").unwrap();
    assert_eq!(ws.is_sensitive(&env), Some(".env*"));
    ws.write_atomic(&env, b"NEW").unwrap();
    assert_eq!(fs::read(fx.root.join(".env")).unwrap(), b"NEW");
}

#[test]
fn sensitive_files_are_refused_for_writes_appends_and_removal() {
    let fx = attack_fixture();
    let ws = fx.ws();
    for input in [".env", "notes.txt", "keys/new.key", ".ssh/authorized_keys"] {
        let p = ws.resolve(input).unwrap();
        let mut results = vec![
            ("write", ws.write_atomic(&p, b"x")),
            ("append", ws.append(&p, b"x")),
        ];
        if input != "notes.txt" {
            results.push(("remove", ws.remove_file(&p)));
        }
        for (op, result) in results {
            assert!(
                matches!(result, Err(WorkspaceError::Sensitive { .. })),
                "{op} {input}: {result:?}"
            );
        }
    }
    assert_eq!(fs::read(fx.root.join(".env")).unwrap(), b"ENV");
    assert!(!fx.root.join("keys/new.key").exists());
    // A write that resolves into a sensitive directory creates nothing
    // there, not even the missing parents.
    symlink(".ssh", fx.root.join("vault")).unwrap();
    let p = ws.resolve("vault/sub/id").unwrap();
    let result = ws.write_atomic(&p, b"x");
    assert!(
        matches!(&result, Err(WorkspaceError::Sensitive { pattern, .. }) if pattern == ".ssh/**"),
        "{result:?}"
    );
    assert!(!fx.root.join(".ssh/sub").exists());
    // Removing the innocently named link is fine: it removes the link
    // itself, never what it points to.
    ws.remove_file(&ws.resolve("notes.txt").unwrap()).unwrap();
    assert!(fs::symlink_metadata(fx.root.join("notes.txt")).is_err());
    assert_eq!(fs::read(fx.root.join(".env")).unwrap(), b"ENV");
}

#[test]
fn error_messages_say_what_to_do() {
    let fx = attack_fixture();
    let ws = fx.ws();
    let root = fx.root.display();
    let message = |input: &str| {
        ws.resolve(input)
            .and_then(|p| ws.read(&p))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        message("../x"),
        format!("path `../x` leaves the workspace {root}; use a path inside it")
    );
    assert_eq!(
        message("link_out/secret.txt"),
        format!(
            "path `link_out/secret.txt` leaves the workspace {root} through the symlink \
             `link_out` (-> ../outside); use a path inside it"
        )
    );
    assert_eq!(
        message("notes.txt"),
        "refusing `notes.txt`: it matches the sensitive-file pattern `.env*`; \
         sensitive files are off limits unless the configuration allows them"
    );
    assert_eq!(
        message("a\0b"),
        "path `a\\0b` contains a NUL byte; remove it"
    );
    assert_eq!(message("nope/x"), "path `nope/x` does not exist");
}

#[test]
fn absolute_paths_under_the_root_as_configured_are_accepted() {
    // The root is configured through a symlink; absolute paths spelled
    // either way are inside.
    let fx = attack_fixture();
    let alias = fx.base.join("ws-alias");
    symlink(&fx.root, &alias).unwrap();
    let ws = Workspace::builder(&alias).build().unwrap();
    assert_eq!(ws.root(), fx.root);
    for input in [
        format!("{}/a.txt", alias.display()),
        format!("{}/a.txt", fx.root.display()),
    ] {
        let p = ws.resolve(&input).unwrap();
        assert_eq!(ws.display(&p), "a.txt");
        assert_eq!(ws.read(&p).unwrap(), b"A");
    }
    let sibling = format!("{}-evil/f", alias.display());
    assert!(matches!(
        ws.resolve(&sibling),
        Err(WorkspaceError::OutsideWorkspace { .. })
    ));
}

#[test]
fn resolve_normalises_and_display_is_relative() {
    let fx = Fixture::new();
    let ws = fx.ws();
    let cases: &[(&str, &str)] = &[
        ("", "."),
        (".", "."),
        ("./", "."),
        ("a/b/../c", "a/c"),
        ("a//b/./c/", "a/b/c"),
        ("a/..", "."),
        ("{ws}", "."),
        ("{ws}/x/y", "x/y"),
    ];
    for (input, want) in cases {
        let p = ws.resolve(&fx.expand(input)).unwrap();
        assert_eq!(ws.display(&p), *want, "input {input:?}");
        assert_eq!(p.is_root(), *want == ".", "input {input:?}");
        assert!(p.as_path().is_relative());
    }
}

#[test]
fn builder_validates_root_and_patterns() {
    let fx = Fixture::new();
    let missing = Workspace::builder(fx.base.join("nope")).build();
    assert!(
        matches!(missing, Err(WorkspaceError::Root { .. })),
        "{missing:?}"
    );
    let file = Workspace::builder(fx.outside.join("secret.txt")).build();
    assert!(
        matches!(file, Err(WorkspaceError::RootNotADirectory { .. })),
        "{file:?}"
    );
    let bad = Workspace::builder(&fx.root)
        .sensitive_patterns(["ok", "[unclosed"])
        .build();
    assert!(
        matches!(&bad, Err(WorkspaceError::InvalidPattern { pattern, .. }) if pattern == "[unclosed"),
        "{bad:?}"
    );
}

#[test]
fn custom_patterns_replace_the_defaults() {
    let fx = attack_fixture();
    let ws = Workspace::builder(&fx.root)
        .sensitive_patterns(["*.txt"])
        .build()
        .unwrap();
    assert_eq!(ws.read(&ws.resolve(".env").unwrap()).unwrap(), b"ENV");
    assert!(matches!(
        ws.read(&ws.resolve("a.txt").unwrap()),
        Err(WorkspaceError::Sensitive { .. })
    ));
}

#[test]
fn workspace_is_clone_send_sync() {
    fn assert_traits<T: Clone + Send + Sync + 'static>() {}
    assert_traits::<Workspace>();
    assert_traits::<WsPath>();
}

/// One thread swaps `d` between a real directory inside the workspace and a
/// symlink to an outside directory (atomically, with `RENAME_EXCHANGE`),
/// while another writes and reads `d/f` through the workspace. Nothing may
/// ever be written to, or read from, the outside directory.
#[test]
fn symlink_swapped_in_mid_operation_never_escapes() {
    let fx = Fixture::new();
    fs::create_dir(fx.root.join("d")).unwrap();
    fs::write(fx.root.join("d/f"), "INSIDE-start").unwrap();
    fs::write(fx.outside.join("f"), OUTSIDE).unwrap();
    symlink(&fx.outside, fx.root.join("stash")).unwrap();
    let before = fx.outside_snapshot();
    let ws = fx.ws();

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps) = (Arc::clone(&stop), Arc::clone(&swaps));
        let (d, stash) = (fx.root.join("d"), fx.root.join("stash"));
        thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    &d,
                    rustix::fs::CWD,
                    &stash,
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .expect("RENAME_EXCHANGE is supported on this file system");
                swaps.fetch_add(1, Ordering::Relaxed);
                // A short dwell so that both states are seen by whole
                // operations, not only mid-lookup.
                thread::sleep(Duration::from_micros(50));
            }
        })
    };

    let worker = {
        let ws = ws.clone();
        let swaps = Arc::clone(&swaps);
        thread::spawn(move || {
            let p = ws.resolve("d/f").unwrap();
            // Until both states were met often enough, however loaded the
            // machine is (the swapper may be starved for a while), within a
            // generous bound.
            let deadline = Instant::now() + Duration::from_secs(60);
            let (mut ok, mut refused) = (0usize, 0usize);
            for i in 0.. {
                let enough =
                    i >= 3000 && swaps.load(Ordering::Relaxed) > 100 && ok > 0 && refused > 0;
                if enough || Instant::now() > deadline {
                    break;
                }
                match ws.write_atomic(&p, format!("INSIDE-{i}").as_bytes()) {
                    Ok(()) => ok += 1,
                    Err(_) => refused += 1,
                }
                match ws.read(&p) {
                    Ok(bytes) => {
                        assert!(
                            bytes.starts_with(b"INSIDE-"),
                            "read outside content: {:?}",
                            String::from_utf8_lossy(&bytes)
                        );
                        ok += 1;
                    }
                    Err(_) => refused += 1,
                }
            }
            (ok, refused)
        })
    };
    let result = worker.join();
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let (ok, refused) = result.unwrap();
    eprintln!(
        "race: {} swaps, {ok} operations went through, {refused} were refused",
        swaps.load(Ordering::Relaxed)
    );

    assert_eq!(
        fx.outside_snapshot(),
        before,
        "something was written outside"
    );
    assert!(
        swaps.load(Ordering::Relaxed) > 100,
        "the swapper barely ran"
    );
    // Both states were exercised: some operations went through the real
    // directory, some met the symlink and were refused.
    assert!(ok > 0 && refused > 0, "ok {ok}, refused {refused}");
}

fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with(".toolgate-") && path.extension().is_some_and(|ext| ext == "tmp") {
            out.push(path.clone());
        }
        if fs::symlink_metadata(&path).unwrap().is_dir() {
            out.extend(temp_files(&path));
        }
    }
    out
}

#[test]
fn write_atomic_keeps_permissions_creates_parents_and_leaves_no_temp() {
    let fx = Fixture::new();
    let ws = fx.ws();
    fx.file("conf.ini", "old");
    fs::set_permissions(fx.root.join("conf.ini"), fs::Permissions::from_mode(0o640)).unwrap();
    fx.file("run.sh", "#!/bin/sh\n");
    fs::set_permissions(fx.root.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();

    for (input, mode) in [("conf.ini", 0o640), ("run.sh", 0o755)] {
        let p = ws.resolve(input).unwrap();
        ws.write_atomic(&p, b"new content").unwrap();
        assert_eq!(ws.read(&p).unwrap(), b"new content");
        let meta = fs::metadata(fx.root.join(input)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o7777, mode, "{input}");
    }

    let deep = ws.resolve("a/b/c/new.txt").unwrap();
    ws.write_atomic(&deep, b"deep").unwrap();
    assert_eq!(fs::read(fx.root.join("a/b/c/new.txt")).unwrap(), b"deep");
    assert!(
        temp_files(&fx.root).is_empty(),
        "{:?}",
        temp_files(&fx.root)
    );

    // Failed writes: the target is a directory; a parent is a file.
    let dir = ws.resolve("a/b").unwrap();
    assert!(matches!(
        ws.write_atomic(&dir, b"x"),
        Err(WorkspaceError::NotAFile { .. })
    ));
    let under_file = ws.resolve("conf.ini/x").unwrap();
    assert!(matches!(
        ws.write_atomic(&under_file, b"x"),
        Err(WorkspaceError::NotADirectory { .. })
    ));
    assert!(
        temp_files(&fx.root).is_empty(),
        "{:?}",
        temp_files(&fx.root)
    );
    assert_eq!(fs::read(fx.root.join("conf.ini")).unwrap(), b"new content");
}

#[test]
fn write_atomic_through_an_inside_symlink_replaces_the_target_and_keeps_the_link() {
    let fx = Fixture::new();
    fx.file("real.txt", "old").link("alias.txt", "real.txt");
    let ws = fx.ws();
    ws.write_atomic(&ws.resolve("alias.txt").unwrap(), b"new")
        .unwrap();
    assert_eq!(fs::read(fx.root.join("real.txt")).unwrap(), b"new");
    assert!(
        fs::symlink_metadata(fx.root.join("alias.txt"))
            .unwrap()
            .is_symlink()
    );
}

#[test]
fn read_limited_refuses_large_files_with_their_size() {
    let fx = Fixture::new();
    fx.file("big.txt", &"x".repeat(100));
    let ws = fx.ws();
    let p = ws.resolve("big.txt").unwrap();
    assert_eq!(ws.read_limited(&p, 100).unwrap().len(), 100);
    let err = ws.read_limited(&p, 99).unwrap_err();
    assert!(
        matches!(
            err,
            WorkspaceError::TooLarge {
                size: 100,
                max: 99,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("read it in parts"));
}

#[test]
fn append_creates_and_appends_inside_only() {
    let fx = attack_fixture();
    let ws = fx.ws();
    let log = ws.resolve("logs/run.log").unwrap();
    ws.append(&log, b"one\n").unwrap();
    ws.append(&log, b"two\n").unwrap();
    assert_eq!(ws.read(&log).unwrap(), b"one\ntwo\n");
    let out = ws.resolve("link_out/secret.txt").unwrap();
    assert!(matches!(
        ws.append(&out, b"x"),
        Err(WorkspaceError::SymlinkEscapes { .. })
    ));
    assert_eq!(
        fs::read(fx.outside.join("secret.txt")).unwrap(),
        OUTSIDE.as_bytes()
    );
}

#[test]
fn remove_file_removes_files_and_links_never_their_targets() {
    let fx = attack_fixture();
    let ws = fx.ws();
    ws.remove_file(&ws.resolve("a.txt").unwrap()).unwrap();
    assert!(!fx.root.join("a.txt").exists());
    // A symlink leading outside can be removed: only the link goes.
    ws.remove_file(&ws.resolve("abs_out").unwrap()).unwrap();
    assert!(fs::symlink_metadata(fx.root.join("abs_out")).is_err());
    assert!(fx.outside.join("secret.txt").exists());
    // But nothing beneath it can.
    let below = ws.resolve("link_out/secret.txt").unwrap();
    assert!(ws.remove_file(&below).is_err());
    assert!(fx.outside.join("secret.txt").exists());
    let dir = ws.resolve("sub").unwrap();
    assert!(matches!(
        ws.remove_file(&dir),
        Err(WorkspaceError::NotAFile { .. })
    ));
}

#[test]
fn metadata_exists_and_is_sensitive_follow_inside_links_only() {
    let fx = attack_fixture();
    let ws = fx.ws();
    let p = |s: &str| ws.resolve(s).unwrap();
    assert!(ws.metadata(&p("dirlink_in")).unwrap().is_dir());
    assert_eq!(ws.metadata(&p("abs_in")).unwrap().len(), 1);
    assert!(ws.metadata(&p("")).unwrap().is_dir());
    assert!(ws.exists(&p("link_in")));
    assert!(!ws.exists(&p("link_out")));
    assert!(!ws.exists(&p("missing")));
    assert_eq!(ws.is_sensitive(&p("notes.txt")), Some(".env*"));
    assert_eq!(ws.is_sensitive(&p("keys/server.pem")), Some("*.pem"));
    assert_eq!(ws.is_sensitive(&p("a.txt")), None);
}

/// A tree with `.git`, links out, a link loop, an alias and a secret.
fn walk_fixture() -> Fixture {
    let fx = Fixture::new();
    fx.file("a.txt", "")
        .file("zz.txt", "")
        .file("src/main.rs", "")
        .file("src/.git", "gitdir: elsewhere")
        .file(".git/config", "")
        .file(".git/objects/ab/cd", "")
        .file(".env", "")
        .link("link_out", "../outside")
        .link("file_out", "../outside/secret.txt")
        .link("loop", ".")
        .link("src/up", "..")
        .link("alias", "src")
        .link("alias_file", "a.txt")
        .link("dangling", "nowhere");
    fx
}

fn names(ws: &Workspace, paths: &[WsPath]) -> Vec<String> {
    paths.iter().map(|p| ws.display(p)).collect()
}

#[test]
fn walk_skips_git_outside_links_and_secrets_and_survives_loops() {
    let fx = walk_fixture();
    let ws = fx.ws();
    let all = ws.walk(&ws.resolve("").unwrap(), true).unwrap();
    assert_eq!(
        names(&ws, &all),
        ["a.txt", "alias_file", "src/main.rs", "zz.txt"]
    );
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(all, sorted);

    let top = ws.walk(&ws.resolve(".").unwrap(), false).unwrap();
    assert_eq!(names(&ws, &top), ["a.txt", "alias_file", "zz.txt"]);

    // Walking from the alias lists the files under the alias, goes up
    // through `src/up` into the root, and still ends.
    let through_alias = ws.walk(&ws.resolve("alias").unwrap(), true).unwrap();
    let listed = names(&ws, &through_alias);
    assert!(listed.contains(&"alias/main.rs".to_owned()), "{listed:?}");
    assert!(listed.iter().all(|p| p.starts_with("alias/")), "{listed:?}");
    assert!(
        !listed
            .iter()
            .any(|p| p.contains(".git") || p.contains(".env"))
    );

    assert!(matches!(
        ws.walk(&ws.resolve("link_out").unwrap(), true),
        Err(WorkspaceError::SymlinkEscapes { .. })
    ));

    let allowing = Workspace::builder(&fx.root)
        .allow_sensitive(true)
        .build()
        .unwrap();
    let all = allowing.walk(&allowing.resolve("").unwrap(), true).unwrap();
    assert!(names(&allowing, &all).contains(&".env".to_owned()));
}

#[test]
fn read_dir_classifies_entries() {
    let fx = walk_fixture();
    let ws = fx.ws();
    let entries = ws.read_dir(&ws.resolve("").unwrap()).unwrap();
    let got: Vec<(&str, EntryKind)> = entries.iter().map(|e| (e.name.as_str(), e.kind)).collect();
    assert_eq!(
        got,
        [
            (".env", EntryKind::File),
            (".git", EntryKind::Dir),
            ("a.txt", EntryKind::File),
            ("alias", EntryKind::SymlinkInside),
            ("alias_file", EntryKind::SymlinkInside),
            ("dangling", EntryKind::SymlinkInside),
            ("file_out", EntryKind::SymlinkOutside),
            ("link_out", EntryKind::SymlinkOutside),
            ("loop", EntryKind::SymlinkInside),
            ("src", EntryKind::Dir),
            ("zz.txt", EntryKind::File),
        ]
    );
    let src = ws.read_dir(&ws.resolve("alias").unwrap()).unwrap();
    assert_eq!(ws.display(&src[0].path), "alias/.git");
    assert!(matches!(
        ws.read_dir(&ws.resolve("a.txt").unwrap()),
        Err(WorkspaceError::NotADirectory { .. })
    ));
}

/// The same property as the fuzz target (`fuzz/fuzz_targets/workspace_resolve.rs`),
/// over a fixed corpus and deterministic pseudo-random combinations of
/// troublesome pieces: no panic, every accepted path is inside, and no
/// content from outside is ever returned.
#[test]
fn resolve_never_escapes_on_a_generated_corpus() {
    let fx = attack_fixture();
    let ws = fx.ws();
    let root_str = fx.root.to_str().unwrap().to_owned();
    let base_str = fx.base.to_str().unwrap().to_owned();
    let pieces: Vec<String> = vec![
        "..".into(),
        ".".into(),
        "/".into(),
        "//".into(),
        "a.txt".into(),
        "sub".into(),
        "up".into(),
        "link_out".into(),
        "dirlink_in".into(),
        "chain1".into(),
        "abs_in".into(),
        "loop1".into(),
        "evil_sibling".into(),
        "secret.txt".into(),
        ".env".into(),
        "\0".into(),
        "\\".into(),
        "~".into(),
        "é".into(),
        "-evil".into(),
        root_str.clone(),
        base_str,
        "outside".into(),
    ];
    let mut corpus: Vec<String> = ATTACKS.iter().map(|(s, _)| fx.expand(s)).collect();
    let mut rng = xorshift::Rng(0x9e37_79b9_7f4a_7c15);
    let mut next = move || rng.next();
    for _ in 0..20_000 {
        let len = next() % 8;
        let mut s = String::new();
        for _ in 0..len {
            let piece = &pieces[usize::try_from(next() % pieces.len() as u64).unwrap()];
            s.push_str(piece);
            if next() % 2 == 0 {
                s.push('/');
            }
        }
        corpus.push(s);
    }
    let mut accepted = 0;
    let mut inside_reads = BTreeSet::new();
    for input in &corpus {
        let Ok(p) = ws.resolve(input) else { continue };
        accepted += 1;
        assert!(
            p.as_path()
                .components()
                .all(|c| matches!(c, Component::Normal(_))),
            "{input:?} -> {p:?}"
        );
        assert!(fx.root.join(p.as_path()).starts_with(&fx.root));
        let _ = ws.metadata(&p);
        let _ = ws.exists(&p);
        let _ = ws.is_sensitive(&p);
        if let Ok(bytes) = ws.read_limited(&p, 1 << 16) {
            assert_ne!(bytes, OUTSIDE.as_bytes(), "{input:?} read outside content");
            inside_reads.insert(ws.display(&p));
        }
    }
    assert!(accepted > 1000, "only {accepted} inputs accepted");
    assert!(inside_reads.len() > 3, "{inside_reads:?}");
}

// ------------------------------------------------------------ protected files

/// A workspace with toolgate's and git's policy files, and ways around
/// their names.
fn protected_fixture() -> Fixture {
    let fx = Fixture::new();
    let root = fx.root.clone();
    fx.file("toolgate.yaml", "CFG")
        .file(".toolgate/audit.jsonl", "AUDIT")
        .file(".git/config", "GITCFG")
        .file(".git/HEAD", "ref: refs/heads/main")
        .file(".git/hooks/pre-commit", "HOOK")
        .file(".git/modules/lib/config", "SUBCFG")
        .file("sub/keep.txt", "K")
        .link("link.yaml", "toolgate.yaml")
        .link("abs_link.yaml", root.join("toolgate.yaml"))
        .link("g", ".git")
        .link("hooks_alias", ".git/hooks")
        .link("sub/up", "..");
    fx
}

/// Every file and directory under the root with its content (`None` for a
/// directory or a symlink): nothing of it may change when a write is refused.
fn tree(root: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            if meta.is_dir() {
                stack.push(path);
                out.push((rel, None));
            } else if meta.is_file() {
                out.push((rel, Some(fs::read(&path).unwrap())));
            } else {
                out.push((rel, None));
            }
        }
    }
    out.sort();
    out
}

/// `(path as typed, the pattern that refuses it, whether removing it is
/// refused too)`. Removing a symlink to a protected file removes the link,
/// never the file, so that is allowed.
const PROTECTED: &[(&str, &str, bool)] = &[
    ("toolgate.yaml", "/toolgate.yaml", true),
    ("./toolgate.yaml", "/toolgate.yaml", true),
    ("sub/../toolgate.yaml", "/toolgate.yaml", true),
    ("{ws}/toolgate.yaml", "/toolgate.yaml", true),
    ("sub/up/toolgate.yaml", "/toolgate.yaml", true),
    ("link.yaml", "/toolgate.yaml", false),
    ("abs_link.yaml", "/toolgate.yaml", false),
    (".toolgate/audit.jsonl", "/.toolgate", true),
    (".toolgate/new.db", "/.toolgate", true),
    (".toolgate/deep/new/x", "/.toolgate", true),
    (".git/config", "/.git/config", true),
    ("g/config", "/.git/config", true),
    ("{ws}/g/config", "/.git/config", true),
    (".git/config.worktree", "/.git/config.worktree", true),
    (".git/commondir", "/.git/commondir", true),
    (".git/hooks/pre-commit", "/.git/hooks", true),
    (".git/hooks/post-checkout", "/.git/hooks", true),
    ("g/hooks/pre-commit", "/.git/hooks", true),
    ("hooks_alias/pre-push", "/.git/hooks", true),
    (".git/modules/lib/config", "/.git/modules/**/config", true),
    (".git/modules/lib/hooks/x", "/.git/modules/**/hooks", true),
    // Git's directory itself, always, whatever the configured patterns.
    (".git/HEAD", "/.git", true),
    (".git/objects/ab/cd", "/.git", true),
    ("g/HEAD", "/.git", true),
];

fn protected_pattern(result: &Result<(), WorkspaceError>) -> Option<&str> {
    match result {
        Err(WorkspaceError::Protected { pattern, .. }) => Some(pattern),
        _ => None,
    }
}

#[test]
fn protected_files_refuse_every_change_however_they_are_spelled() {
    let fx = protected_fixture();
    let ws = fx.ws();
    let before = tree(&fx.root);
    let mut failures = Vec::new();
    for (input, pattern, remove_refused) in PROTECTED {
        let input = fx.expand(input);
        let p = ws.resolve(&input).unwrap();
        let mut results = vec![
            ("write", ws.write_atomic(&p, b"PWNED")),
            ("append", ws.append(&p, b"PWNED")),
            ("check_write", ws.check_write(&p)),
        ];
        if *remove_refused {
            results.push(("remove", ws.remove_file(&p)));
        }
        for (op, result) in results {
            if protected_pattern(&result) != Some(pattern) {
                failures.push(format!(
                    "{op} {input:?}: expected {pattern}, got {result:?}"
                ));
            }
        }
        if ws.is_protected(&p) != Some(pattern) {
            failures.push(format!("is_protected {input:?}: {:?}", ws.is_protected(&p)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(tree(&fx.root), before, "a refused change changed the tree");
    // Reading is allowed, through every spelling.
    for input in ["toolgate.yaml", "link.yaml", "sub/up/toolgate.yaml"] {
        assert_eq!(ws.read(&ws.resolve(input).unwrap()).unwrap(), b"CFG");
    }
    assert_eq!(
        ws.read(&ws.resolve("g/config").unwrap()).unwrap(),
        b"GITCFG"
    );
    assert_eq!(
        ws.walk(&ws.resolve(".git/hooks").unwrap(), true)
            .unwrap()
            .len(),
        1
    );
    // Removing a link to a protected file removes the link only.
    ws.remove_file(&ws.resolve("link.yaml").unwrap()).unwrap();
    assert_eq!(fs::read(fx.root.join("toolgate.yaml")).unwrap(), b"CFG");
}

#[test]
fn a_git_redirect_file_cannot_be_written() {
    // With no `.git`, a `.git` *file* saying `gitdir: evil` would make the
    // user's git read `evil/config`; the workspace never writes `.git`,
    // even when the configured patterns leave it out.
    let fx = Fixture::new();
    fx.file("evil/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
    let mut builder = Workspace::builder(&fx.root);
    builder.protected_patterns(["/only-this"]);
    let ws = builder.build().unwrap();
    let git = ws.resolve(".git").unwrap();
    let result = ws.write_atomic(&git, b"gitdir: evil\n");
    assert_eq!(protected_pattern(&result), Some("/.git"), "{result:?}");
    assert!(!fx.root.join(".git").exists());
}

#[test]
fn protected_paths_that_do_not_exist_yet_cannot_be_created() {
    let fx = Fixture::new();
    fx.file("a.txt", "A")
        .link("g", ".git")
        .link("t", ".toolgate");
    let ws = fx.ws();
    let before = tree(&fx.root);
    let cases: &[(&str, &str)] = &[
        ("toolgate.yaml", "/toolgate.yaml"),
        ("new/../toolgate.yaml", "/toolgate.yaml"),
        (".toolgate", "/.toolgate"),
        (".toolgate/x", "/.toolgate"),
        ("t/x", "/.toolgate"),
        (".git/config", "/.git/config"),
        (".git/hooks/pre-commit", "/.git/hooks"),
        ("g/config", "/.git/config"),
        ("g/hooks/pre-commit", "/.git/hooks"),
        (".git/modules/a/b/hooks/x", "/.git/modules/**/hooks"),
    ];
    let mut failures = Vec::new();
    for (input, pattern) in cases {
        let p = ws.resolve(input).unwrap();
        for (op, result) in [
            ("write", ws.write_atomic(&p, b"x")),
            ("append", ws.append(&p, b"x")),
            ("check_write", ws.check_write(&p)),
        ] {
            if protected_pattern(&result) != Some(*pattern) {
                failures.push(format!(
                    "{op} {input:?}: expected {pattern}, got {result:?}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Not even the parent directories were created.
    assert_eq!(tree(&fx.root), before);
    assert!(!fx.root.join(".git").exists() && !fx.root.join(".toolgate").exists());
}

#[test]
fn paths_near_protected_ones_are_writable() {
    let fx = protected_fixture();
    let ws = fx.ws();
    for input in [
        "sub/toolgate.yaml",
        "toolgate.yml",
        "toolgate.yaml.bak",
        ".gitignore",
        ".github/workflows/ci.yml",
        "sub/.git/config",
        ".toolgate-notes.md",
    ] {
        let p = ws.resolve(input).unwrap();
        ws.check_write(&p).unwrap();
        ws.write_atomic(&p, b"ok")
            .unwrap_or_else(|e| panic!("{input}: {e}"));
        ws.append(&p, b"!").unwrap();
        assert_eq!(ws.read(&p).unwrap(), b"ok!", "{input}");
        assert_eq!(ws.is_protected(&p), None, "{input}");
    }
}

#[test]
fn protected_patterns_are_configurable_and_not_lifted_by_allow_sensitive() {
    let fx = protected_fixture();
    fx.file("Cargo.lock", "LOCK")
        .file("migrations/001.sql", "SQL");
    let ws = Workspace::builder(&fx.root)
        .protected_patterns(
            toolgate_core::DEFAULT_PROTECTED_PATTERNS
                .iter()
                .copied()
                .chain(["/Cargo.lock", "migrations/**"]),
        )
        .allow_sensitive(true)
        .build()
        .unwrap();
    let cases: &[(&str, &str)] = &[
        ("Cargo.lock", "/Cargo.lock"),
        ("migrations/001.sql", "migrations/**"),
        ("migrations/002.sql", "migrations/**"),
        ("toolgate.yaml", "/toolgate.yaml"),
    ];
    for (input, pattern) in cases {
        let p = ws.resolve(input).unwrap();
        let result = ws.write_atomic(&p, b"x");
        assert_eq!(
            protected_pattern(&result),
            Some(*pattern),
            "{input}: {result:?}"
        );
    }
    assert_eq!(fs::read(fx.root.join("Cargo.lock")).unwrap(), b"LOCK");

    // Replacing the set replaces the defaults.
    let only_lock = Workspace::builder(&fx.root)
        .protected_patterns(["/Cargo.lock"])
        .build()
        .unwrap();
    only_lock
        .write_atomic(&only_lock.resolve("sub/new.txt").unwrap(), b"x")
        .unwrap();
    assert!(
        only_lock
            .write_atomic(&only_lock.resolve("Cargo.lock").unwrap(), b"x")
            .is_err()
    );
    let bad = Workspace::builder(&fx.root)
        .protected_patterns(["[oops"])
        .build();
    assert!(
        matches!(&bad, Err(WorkspaceError::InvalidPattern { pattern, .. }) if pattern == "[oops"),
        "{bad:?}"
    );
}

#[test]
fn protected_refusal_says_it_is_a_policy_file_for_the_user() {
    let fx = protected_fixture();
    let ws = fx.ws();
    let err = ws
        .write_atomic(&ws.resolve("link.yaml").unwrap(), b"x")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "refusing to change `link.yaml`: it matches the protected-file pattern `/toolgate.yaml`; \
         it is a policy file that only the user edits (reading it is allowed)"
    );
}

// ---------------------------------------------------------------- hard links

#[test]
fn appending_to_a_hard_link_never_changes_the_file_outside() {
    let fx = Fixture::new();
    let outside = fx.outside.join("shared.txt");
    fs::write(&outside, "OUTSIDE\n").unwrap();
    fs::set_permissions(&outside, fs::Permissions::from_mode(0o640)).unwrap();
    fs::hard_link(&outside, fx.root.join("linked.txt")).unwrap();
    fs::hard_link(&outside, fx.root.join("linked2.txt")).unwrap();
    let ws = fx.ws();

    let linked = ws.resolve("linked.txt").unwrap();
    ws.append(&linked, b"appended\n").unwrap();
    assert_eq!(fs::read(&outside).unwrap(), b"OUTSIDE\n");
    assert_eq!(
        fs::read(fx.root.join("linked.txt")).unwrap(),
        b"OUTSIDE\nappended\n"
    );
    let meta = fs::metadata(fx.root.join("linked.txt")).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o640, "permissions kept");
    // Now a file of its own: further appends go in place.
    assert_eq!(meta.nlink(), 1);
    ws.append(&linked, b"more\n").unwrap();
    assert_eq!(
        fs::read(fx.root.join("linked.txt")).unwrap(),
        b"OUTSIDE\nappended\nmore\n"
    );
    assert!(temp_files(&fx.root).is_empty());

    // The other write paths replace the inode: the outside file keeps its
    // content too.
    let linked2 = ws.resolve("linked2.txt").unwrap();
    ws.write_atomic(&linked2, b"replaced\n").unwrap();
    ws.remove_file(&linked2).unwrap();
    assert_eq!(fs::read(&outside).unwrap(), b"OUTSIDE\n");
    assert_eq!(fs::metadata(&outside).unwrap().nlink(), 1);
}

// ------------------------------------------------------------------ listings

#[test]
fn listings_mark_and_count_sensitive_entries() {
    let fx = walk_fixture();
    fx.file("keys/server.pem", "").link("notes.txt", ".env");
    let ws = fx.ws();
    let entries = ws.read_dir(&ws.resolve("").unwrap()).unwrap();
    let sensitive: Vec<&str> = entries
        .iter()
        .filter(|e| e.sensitive)
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(sensitive, [".env", "notes.txt"]);

    let report = ws.walk_report(&ws.resolve("").unwrap(), true).unwrap();
    assert_eq!(
        names(&ws, &report.sensitive),
        [".env", "keys/server.pem", "notes.txt"]
    );
    assert_eq!(
        report.files,
        ws.walk(&ws.resolve("").unwrap(), true).unwrap()
    );

    let allowing = Workspace::builder(&fx.root)
        .allow_sensitive(true)
        .build()
        .unwrap();
    let root = allowing.resolve("").unwrap();
    assert!(
        allowing
            .read_dir(&root)
            .unwrap()
            .iter()
            .all(|e| !e.sensitive)
    );
    assert!(
        allowing
            .walk_report(&root, true)
            .unwrap()
            .sensitive
            .is_empty()
    );
}
