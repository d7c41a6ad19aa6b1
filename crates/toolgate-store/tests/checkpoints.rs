//! The workspace capture and the rewind, on real files changed by real
//! commands: the changes captured are those `find` and `cmp` see, and
//! putting them back gives the tree before, byte for byte.

#![allow(clippy::unwrap_used, reason = "test helpers fail the test on error")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use toolgate_core::{ChangeCapture as _, ChangeKind};
use toolgate_store::checkpoint::restore;
use toolgate_store::{BlobStore, WorkspaceTracker};

fn sh(dir: &Path, script: &str) {
    let status = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "`{script}` failed");
}

/// `find`'s view of a tree: path → (type, mode, link target).
fn find(dir: &Path) -> BTreeMap<String, String> {
    let out = Command::new("find")
        .args([".", "-mindepth", "1", "-printf", "%P\\t%y %m %l\\n"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(p, d)| (p.to_owned(), d.to_owned()))
        .collect()
}

/// The paths that differ between `a` and `b`, by `find` and `cmp`.
fn differ(a: &Path, b: &Path) -> BTreeSet<(String, &'static str)> {
    let (fa, fb) = (find(a), find(b));
    let mut out = BTreeSet::new();
    for path in fa.keys().chain(fb.keys()) {
        let kind = match (fa.get(path), fb.get(path)) {
            (None, Some(_)) => "created",
            (Some(_), None) => "deleted",
            (Some(x), Some(y)) if x != y => "modified",
            (Some(x), Some(_)) if x.starts_with('f') => {
                let same = Command::new("cmp")
                    .arg("-s")
                    .arg(a.join(path))
                    .arg(b.join(path))
                    .status()
                    .unwrap()
                    .success();
                if same {
                    continue;
                }
                "modified"
            }
            _ => continue,
        };
        out.insert((path.clone(), kind));
    }
    out
}

const SETUP: &str = "mkdir -p src/deep/er old && printf 'one\\ntwo\\n' > src/a.txt \
    && printf 'x' > src/b.txt && printf 'keep' > k.txt && chmod 640 k.txt \
    && printf 'gone' > old/1 && printf 'gone too' > src/deep/er/2 && ln -s src/a.txt link \
    && printf 'shared' > src/h1 && ln src/h1 h2";

/// (name, command): every kind of change a command makes.
const CASES: &[(&str, &str)] = &[
    (
        "create",
        "printf new > n.txt && mkdir fresh && printf y > fresh/f",
    ),
    ("modify in place", "echo three >> src/a.txt"),
    ("sed -i (rename over)", "sed -i 's/one/ONE/' src/a.txt"),
    ("delete", "rm src/b.txt"),
    ("rename", "mv src/b.txt src/c.txt"),
    ("hard link", "ln src/b.txt hard.txt"),
    ("chmod", "chmod 755 k.txt"),
    ("a directory tree removed", "rm -r src/deep old"),
    ("symlink retargeted", "ln -sfn k.txt link"),
    (
        "file replaced by a directory",
        "rm k.txt && mkdir k.txt && printf z > k.txt/in",
    ),
    ("touch without change", "touch src/a.txt"),
    (
        "a hard-linked file rewritten by rename",
        "sed -i 's/shared/SHARED/' src/h1",
    ),
    ("a hard-linked file written in place", "printf more >> h2"),
    ("both names of a hard-linked file removed", "rm src/h1 h2"),
];

/// Whether `a` and `b` beneath `root` are one file (hard links).
fn one_file(root: &Path, a: &str, b: &str) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    let (a, b) = (
        std::fs::symlink_metadata(root.join(a)).unwrap(),
        std::fs::symlink_metadata(root.join(b)).unwrap(),
    );
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[test]
fn captured_changes_equal_find_and_cmp_and_rewind_restores_them() {
    for (name, command) in CASES {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        let before = tmp.path().join("before");
        std::fs::create_dir(&ws).unwrap();
        sh(&ws, SETUP);
        sh(tmp.path(), "cp -a ws before");
        let tracker = WorkspaceTracker::new(&ws, BlobStore::new(tmp.path().join("blobs")));
        assert!(
            tracker.sync().unwrap().is_empty(),
            "{name}: the first look only records"
        );
        sh(&ws, command);
        let changes = tracker.sync().unwrap();
        let captured: BTreeSet<(String, &str)> = changes
            .iter()
            .map(|c| (c.path.clone(), c.kind().as_str()))
            .collect();
        assert_eq!(
            captured,
            differ(&before, &ws),
            "{name}: captured {changes:#?}"
        );
        if *name == "touch without change" {
            assert!(changes.is_empty());
        }
        // Undo: the tree is as before, and the undo is itself undoable.
        let after = tmp.path().join("after");
        sh(tmp.path(), "cp -a ws after");
        let plan = restore::plan(&ws, &changes).unwrap();
        assert!(
            plan.conflicts.is_empty() && plan.lost.is_empty(),
            "{name}: {plan:?}"
        );
        let made = restore::apply(&ws, tracker.blobs(), &plan.restores).unwrap();
        assert!(differ(&before, &ws).is_empty(), "{name}: not restored");
        // The two names of one file are one file again, not two copies.
        assert!(
            one_file(&ws, "src/h1", "h2"),
            "{name}: the hard link is lost"
        );
        let again = restore::plan(&ws, &made).unwrap();
        restore::apply(&ws, tracker.blobs(), &again.restores).unwrap();
        assert!(differ(&after, &ws).is_empty(), "{name}: undo not restored");
        if after.join("h2").exists() && after.join("src/h1").exists() {
            assert_eq!(
                one_file(&ws, "src/h1", "h2"),
                one_file(&after, "src/h1", "h2"),
                "{name}: the undo's hard links"
            );
        }
    }
}

#[test]
fn a_file_changed_since_is_a_conflict_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    std::fs::write(ws.join("f"), "v1").unwrap();
    let tracker = WorkspaceTracker::new(ws, BlobStore::new(ws.join(".git/blobs")));
    tracker.sync().unwrap();
    std::fs::write(ws.join("f"), "v2").unwrap();
    std::fs::write(ws.join("g"), "new").unwrap();
    let changes = tracker.sync().unwrap();
    assert_eq!(changes.len(), 2);
    std::fs::write(ws.join("f"), "by hand").unwrap();
    let plan = restore::plan(ws, &changes).unwrap();
    assert_eq!(plan.conflicts.len(), 1);
    assert_eq!(plan.conflicts[0].path, "f");
    assert_eq!(plan.restores.len(), 1);
    restore::apply(ws, tracker.blobs(), &plan.restores).unwrap();
    assert_eq!(std::fs::read_to_string(ws.join("f")).unwrap(), "by hand");
    assert!(!ws.join("g").exists());
}

#[test]
fn a_file_over_the_limit_is_reported_and_cannot_be_put_back() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    std::fs::write(ws.join("big"), vec![b'x'; 100]).unwrap();
    let tracker = WorkspaceTracker::new(ws, BlobStore::new(ws.join(".git/blobs"))).max_file(10);
    tracker.sync().unwrap();
    std::fs::write(ws.join("big"), vec![b'y'; 101]).unwrap();
    let changes = tracker.sync().unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].kind(), ChangeKind::Modified);
    assert!(!changes[0].before.is_restorable());
    let plan = restore::plan(ws, &changes).unwrap();
    assert_eq!(plan.lost, vec!["big".to_owned()]);
}

fn file(hash: &str) -> toolgate_core::FileState {
    toolgate_core::FileState::File {
        link: toolgate_core::LinkId::default(),
        hash: Some(hash.to_owned()),
        mode: 0o644,
        size: 1,
    }
}

fn created(path: &str, hash: &str) -> toolgate_core::PathChange {
    toolgate_core::PathChange {
        path: path.to_owned(),
        before: toolgate_core::FileState::Absent,
        after: file(hash),
    }
}

#[tokio::test]
async fn checkpoints_are_numbered_over_runs_rewound_undone_and_pruned() {
    use toolgate_store::{
        CheckpointStore, NewCheckpoint, NewRewind, NewSession, SessionStore, SqliteStore,
        StepRecord,
    };
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("t.db")).unwrap();
    store
        .begin(&NewSession {
            id: "s".into(),
            agent: "build".into(),
            task: "t".into(),
        })
        .await
        .unwrap();
    for (n, hash) in ["a", "b", "c"].iter().enumerate() {
        let n = u32::try_from(n).unwrap();
        store
            .record_step(&StepRecord {
                session_id: "s".into(),
                run: 1,
                step: n + 1,
                messages_from: usize::try_from(n).unwrap(),
                messages: vec![serde_json::json!({"role": "user", "content": hash})],
                tool_calls: Vec::new(),
                usage: None,
                events: Vec::new(),
            })
            .await
            .unwrap();
        let step = store
            .record_checkpoint(&NewCheckpoint {
                session_id: "s".into(),
                run: 1,
                run_step: n + 1,
                messages_from: usize::try_from(n).unwrap(),
                changes: vec![created(hash, &hash.repeat(64))],
                incomplete: None,
            })
            .await
            .unwrap();
        assert_eq!(step, n + 1);
    }
    // A rewind with the conversation cuts the messages from step 2 on, and
    // marks steps 2 and 3; its undo puts both back.
    let id = store
        .record_rewind(&NewRewind {
            session_id: "s".into(),
            to_step: 2,
            code: true,
            conversation: true,
            changes: Vec::new(),
        })
        .await
        .unwrap();
    assert_eq!(store.messages("s").await.unwrap().len(), 1);
    let marked: Vec<Option<i64>> = store
        .checkpoints("s")
        .await
        .unwrap()
        .iter()
        .map(|c| c.rewound_by)
        .collect();
    assert_eq!(marked, vec![None, Some(id), Some(id)]);
    assert_eq!(
        store
            .last_rewind("s")
            .await
            .unwrap()
            .unwrap()
            .messages
            .len(),
        2
    );
    store.undo_rewind(id).await.unwrap();
    assert_eq!(store.messages("s").await.unwrap().len(), 3);
    assert!(store.last_rewind("s").await.unwrap().is_none());
    assert!(
        store
            .checkpoints("s")
            .await
            .unwrap()
            .iter()
            .all(|c| c.rewound_by.is_none())
    );
    // Keeping the newest step only: the others go, and so do the contents
    // only they named.
    assert_eq!(store.prune_checkpoints(0, 1).await.unwrap(), 2);
    assert_eq!(store.checkpoint_count().await.unwrap(), 1);
    let named = store.referenced_hashes().await.unwrap();
    assert_eq!(named, std::collections::HashSet::from(["c".repeat(64)]));
}

/// Two writes of the same size within one tick of the file system's clock
/// leave the stamp as it was: the capture must still see the second.
#[test]
fn a_same_size_write_right_after_a_look_is_seen() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let tracker = WorkspaceTracker::new(&ws, BlobStore::new(tmp.path().join("blobs")));
    std::fs::write(ws.join("f"), "0").unwrap();
    tracker.sync().unwrap();
    // Two contents, kept after the first round: each look is quick.
    for n in 1..=40 {
        std::fs::write(ws.join("f"), if n % 2 == 0 { "a" } else { "b" }).unwrap();
        let changes = tracker.sync().unwrap();
        assert_eq!(changes.len(), 1, "write {n} not seen");
    }
}

#[test]
fn each_write_of_a_file_in_a_tree_is_seen() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    for d in 0..10 {
        std::fs::create_dir_all(ws.join(format!("d{d}"))).unwrap();
        for f in 0..10 {
            std::fs::write(ws.join(format!("d{d}/f{f}")), "x".repeat(64)).unwrap();
        }
    }
    let tracker = WorkspaceTracker::new(&ws, BlobStore::new(tmp.path().join("blobs")));
    tracker.sync().unwrap();
    for n in 1..=300 {
        std::fs::write(ws.join("d5/f5"), n.to_string()).unwrap();
        let changes = tracker.sync().unwrap();
        assert_eq!(changes.len(), 1, "write {n} not seen: {changes:?}");
    }
}

/// Enough files that a walk reads them on several threads, in more than
/// one batch: the changes are still exactly those `find` and `cmp` see, and
/// all come back.
#[test]
fn a_walk_reading_many_files_at_once_sees_every_change() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    sh(
        &ws,
        "for d in 0 1 2 3 4 5 6 7 8 9; do mkdir d$d; \
         for f in $(seq 0 99); do echo $d-$f > d$d/f$f; done; done \
         && mkdir -p deep/er && for f in $(seq 0 1199); do echo $f > deep/er/g$f; done",
    );
    sh(tmp.path(), "cp -a ws before");
    let tracker = WorkspaceTracker::new(&ws, BlobStore::new(tmp.path().join("blobs")));
    assert!(tracker.sync().unwrap().is_empty());
    sh(
        &ws,
        "for f in $(seq 0 99); do echo changed > d1/f$f; done; rm -r d2; \
         for f in $(seq 0 99); do echo new > d3/n$f; done; chmod 600 d0/f7; \
         echo last > deep/er/g1199",
    );
    let changes = tracker.sync().unwrap();
    let captured: BTreeSet<(String, &str)> = changes
        .iter()
        .map(|c| (c.path.clone(), c.kind().as_str()))
        .collect();
    assert_eq!(captured, differ(&tmp.path().join("before"), &ws));
    assert_eq!(captured.len(), 100 + 101 + 100 + 1 + 1);
    let plan = restore::plan(&ws, &changes).unwrap();
    restore::apply(&ws, tracker.blobs(), &plan.restores).unwrap();
    assert!(differ(&tmp.path().join("before"), &ws).is_empty());
}
