#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs,
    reason = "test code: a failed unwrap is a failed test"
)]
//! The classifier's table and the sandbox must agree: every row the
//! classifier calls `safe` is run for real, in a scratch repository, once in
//! the read-only profile (what a `safe` command gets) and once in the
//! standard profile. If the read-only run fails where the standard one did
//! not, or the kernel refused it something (a write, a program it does not
//! name), the row is wrong — the line needs more than reading — or the
//! profile is: either way this test fails and names the row.

#[path = "../../toolgate-command/tests/common/safe_rows.rs"]
mod safe_rows;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use safe_rows::{LONG_RUNNING, OPPORTUNISTIC_WRITES, SAFE_ROWS};
use toolgate_policy::{CommandPolicy, VerdictKind};
use toolgate_sandbox::{Finished, Level, Profile, RunOptions, Sandbox, Spawn};

/// What the kernel says when it refuses.
const REFUSALS: &[&str] = &[
    "Permission denied",
    "Read-only file system",
    "Operation not permitted",
    "Network is unreachable",
];

fn sh(dir: &Path, line: &str) {
    let ok = Command::new("sh")
        .args(["-c", line])
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .status()
        .unwrap()
        .success();
    assert!(ok, "fixture: {line}");
}

/// A repository with what the rows read: sources, data files, archives,
/// history with a tag, a remote, a stash.
fn fixture(ws: &Path) {
    let files: &[(&str, &str)] = &[
        ("README.md", "# readme\nfoo line\nbar line\n"),
        ("Cargo.toml", "[package]\nname = \"x\"\n"),
        ("package.json", "{\"name\": \"x\", \"a\": 1}\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("src/lib.rs", "pub fn foo() {}\n"),
        ("tests/t.rs", "#[test] fn t() {}\n"),
        ("docs/a.md", "curl x | sh\n"),
        ("sub/s.txt", "s\n"),
        ("file", "a b\nc d\n"),
        ("f", "f\n"),
        ("x", "x\n"),
        ("x.bin", "\u{1}\u{2}\n"),
        ("a.txt", "a\n"),
        ("b.txt", "b\n"),
        ("list.txt", "one\ntwo\n"),
        ("input.txt", "in\n"),
        ("names.txt", "b\na\nb\n"),
        ("data.csv", "a,2,3\nb,1,4\n"),
        ("app.log", "log\n"),
        ("log", "log\n"),
    ];
    for (name, text) in files {
        let path = ws.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    sh(
        ws,
        "git init -q && git add -A && git commit -qm one && git tag v1",
    );
    sh(ws, "echo more >> README.md && git commit -qam two");
    sh(ws, "git remote add origin https://example.invalid/x.git");
    sh(ws, "echo stash >> f && git stash -q");
    sh(
        ws,
        "tar cf x.tar a.txt b.txt && tar czf x.tgz a.txt && gzip -k a.txt -c > x.gz",
    );
    sh(ws, "xz -k -c b.txt > x.xz 2>/dev/null || cp b.txt x.xz");
    sh(
        ws,
        "python3 -c \"import zipfile; z = zipfile.ZipFile('x.zip', 'w'); z.writestr('a.txt', 'a'); z.close()\"",
    );
}

fn refused(done: &Finished) -> Option<&'static str> {
    REFUSALS
        .iter()
        .find(|r| done.stderr.contains(*r) || done.stdout.contains(*r))
        .copied()
}

#[tokio::test]
async fn every_safe_row_runs_in_the_read_only_profile() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    fixture(&ws);
    let sandbox = Sandbox::builder(&ws).build().unwrap();
    assert_eq!(
        sandbox.status().level(),
        Level::Full,
        "the differential test needs the full sandbox: {}",
        sandbox.status()
    );
    let policy = CommandPolicy::default();
    let options = RunOptions::new(Duration::from_secs(15));
    let mut wrong = Vec::new();
    for row in SAFE_ROWS {
        if LONG_RUNNING.contains(row) {
            continue;
        }
        let verdict = policy.classify(row);
        assert_eq!(
            verdict.kind(),
            VerdictKind::Class(toolgate_core::CommandClass::Safe),
            "{row}: {verdict}"
        );
        let read_only = Spawn::shell(*row).profile(Profile::ReadOnly {
            programs: verdict.programs().to_vec(),
        });
        let standard = Spawn::shell(*row);
        let strict = sandbox.run(&read_only, &options).await.unwrap();
        let open = sandbox.run(&standard, &options).await.unwrap();
        let opportunistic = OPPORTUNISTIC_WRITES.iter().any(|(r, _)| r == row);
        let denied = refused(&strict).filter(|_| refused(&open).is_none() && !opportunistic);
        if strict.exit_code != open.exit_code || denied.is_some() {
            wrong.push(format!(
                "{row:?} (programs {:?}): read-only exit {:?}, standard exit {:?}{}\n  read-only stderr: {}",
                verdict.programs(),
                strict.exit_code,
                open.exit_code,
                denied.map(|d| format!(", the kernel refused ({d})")).unwrap_or_default(),
                strict.stderr.trim()
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} safe rows need more than the read-only profile gives:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
