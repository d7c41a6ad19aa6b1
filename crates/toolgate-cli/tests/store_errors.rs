//! Store errors that say what happened and what to do: a damaged store is
//! moved aside (under the name the error gives) only when the person asks;
//! a full disk is named as such.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::{Path, PathBuf};
use std::process::Output;

use toolgate_test::TempHome;

/// A workspace `ws/` with a home beside it, and the data directory
/// (`XDG_DATA_HOME`) `data/` outside both.
fn world() -> (TempHome, PathBuf) {
    let dir = TempHome::builder().workspace_dir("ws").build().unwrap();
    let data = dir.root().join("data");
    (dir, data)
}

fn toolgate(ws: &TempHome, data: &Path, args: &[&str]) -> Output {
    let mut cmd = ws.command(env!("CARGO_BIN_EXE_toolgate"));
    cmd.env("XDG_DATA_HOME", data).args(args);
    cmd.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The store file of the workspace (its directory is keyed by workspace,
/// so it is found rather than built).
fn store_file(data: &Path) -> PathBuf {
    let dir = data.join("toolgate/workspaces");
    let entry = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap();
    entry.path().join("toolgate.db")
}

#[test]
fn a_damaged_store_is_moved_aside_only_when_the_person_asks() {
    let (ws, data) = world();
    // A store, then damaged.
    let out = toolgate(&ws, &data, &["sessions", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let db = store_file(&data);
    std::fs::write(&db, b"this is not a database, it was overwritten\n").unwrap();
    let aside = db.with_file_name("toolgate.db.damaged");

    let out = toolgate(&ws, &data, &["sessions", "list"]);
    let err = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        err.contains(&format!("error: the store {} is damaged", db.display())),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "hint: `toolgate store recover` moves it to {}",
            aside.display()
        )),
        "{err}"
    );
    assert!(!err.contains("permissions"), "{err}");
    // Nothing was moved without the person asking.
    assert!(db.exists() && !aside.exists());

    let out = toolgate(&ws, &data, &["store", "recover"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(&aside.display().to_string()));
    assert_eq!(
        std::fs::read(&aside).unwrap(),
        b"this is not a database, it was overwritten\n"
    );
    // A new store starts.
    let out = toolgate(&ws, &data, &["sessions", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // A store that opens is left alone.
    let out = toolgate(&ws, &data, &["store", "recover"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("nothing to recover"));
    assert!(!db.with_file_name("toolgate.db.damaged.2").exists());
}

/// A data directory on a full file system: a tmpfs of a few pages in a
/// private mount namespace (`unshare`, util-linux; no root needed).
#[test]
fn a_full_disk_is_named_with_its_path() {
    let (ws, data) = world();
    std::fs::create_dir_all(&data).unwrap();
    let bin = env!("CARGO_BIN_EXE_toolgate");
    // Mount, fill it up, then ask toolgate to make its store there.
    let script = format!(
        "mount -t tmpfs -o size=256k tmpfs {data} && \
         (cat /dev/zero > {data}/filler 2>/dev/null; true) && \
         exec {bin} sessions list",
        data = data.display()
    );
    let mut cmd = ws.command("unshare");
    cmd.args(["-Urm", "sh", "-c", &script])
        .env("XDG_DATA_HOME", &data);
    let out = cmd
        .output()
        .expect("`unshare` (util-linux) makes a private mount namespace");
    let err = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("error: no space left on device at ")
            && err.contains(&data.join("toolgate").display().to_string()),
        "{err}"
    );
    assert!(
        err.contains("hint: free some space on the disk of"),
        "{err}"
    );
}
