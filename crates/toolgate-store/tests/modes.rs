//! The store's files are the user's only, whatever the umask, and looser
//! ones left by an older toolgate are tightened when the store opens.
#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use toolgate_store::{SqliteStore, WORKSPACE_FILE, default_path};

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn set_mode(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_new_store_is_created_private() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("share/toolgate");
    let ws = tmp.path().join("ws");
    fs::create_dir(&ws).unwrap();
    let store = SqliteStore::open_for_workspace(&data, &ws).unwrap();
    let db = default_path(&data, &ws);
    let dir = db.parent().unwrap();
    let cases = [
        (tmp.path().join("share"), 0o700),
        (data.clone(), 0o700),
        (data.join("workspaces"), 0o700),
        (dir.to_owned(), 0o700),
        (db.clone(), 0o600),
        (dir.join("toolgate.db-wal"), 0o600),
        (dir.join("toolgate.db-shm"), 0o600),
        (dir.join(WORKSPACE_FILE), 0o600),
    ];
    for (path, want) in &cases {
        assert_eq!(mode(path), *want, "{}", path.display());
    }
    drop(store);
}

#[test]
fn a_loose_store_is_tightened_when_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("toolgate");
    let ws = tmp.path().join("ws");
    fs::create_dir(&ws).unwrap();
    drop(SqliteStore::open_for_workspace(&data, &ws).unwrap());
    let db = default_path(&data, &ws);
    let dir = db.parent().unwrap().to_owned();
    let wal = dir.join("toolgate.db-wal");
    fs::write(&wal, b"").unwrap();
    for (path, loose) in [
        (&data, 0o755),
        (&dir, 0o775),
        (&db, 0o644),
        (&wal, 0o666),
        (&dir.join(WORKSPACE_FILE), 0o644),
    ] {
        set_mode(path, loose);
    }
    let store = SqliteStore::open_for_workspace(&data, &ws).unwrap();
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&db), 0o600);
    assert_eq!(mode(&wal), 0o600);
    assert_eq!(mode(&dir.join(WORKSPACE_FILE)), 0o600);
    drop(store);

    // A store at a path of its own choosing: the file, not its directory.
    let own = tmp.path().join("project/state.db");
    fs::create_dir(tmp.path().join("project")).unwrap();
    set_mode(&tmp.path().join("project"), 0o755);
    fs::write(&own, b"").unwrap();
    set_mode(&own, 0o644);
    drop(SqliteStore::open(&own).unwrap());
    assert_eq!(mode(&own), 0o600);
    assert_eq!(mode(&tmp.path().join("project")), 0o755);
}
