//! `toolgate rewind` and `toolgate checkpoints` as whole processes: a
//! scripted run edits with every file tool, `sed -i`, `python3` writing two
//! files, `rm` and a background process; rewinding to each step gives the
//! workspace as the model saw it before that step, byte for byte (modes
//! and symlinks too), and undoing the rewind gives the later state back.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Ws, answer, text, tool_call};
use serde_json::{Value, json};
use toolgate_test::model::{Script, mount};

/// `find`'s view of a tree: path → type, mode, link target; without
/// `home/` (toolgate's store is there), `.git` and `.toolgate` (the
/// sandbox puts mount points there while a process runs), which rewinds
/// leave alone.
fn find(dir: &Path) -> BTreeMap<String, String> {
    let out = Command::new("find")
        .args([".", "-mindepth", "1", "-printf", "%P\\t%y %m %l\\n"])
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .filter(|(p, _)| {
            !["home", ".git", ".toolgate"]
                .iter()
                .any(|top| p == top || p.starts_with(&format!("{top}/")))
        })
        .map(|(p, d)| (p.to_owned(), d.to_owned()))
        .collect()
}

/// The paths where two trees differ, by `find` and `cmp`.
fn differ(a: &Path, b: &Path) -> BTreeSet<String> {
    let (fa, fb) = (find(a), find(b));
    let mut out = BTreeSet::new();
    for path in fa.keys().chain(fb.keys()) {
        let same = match (fa.get(path), fb.get(path)) {
            (Some(x), Some(y)) if x == y && x.starts_with('f') => Command::new("cmp")
                .arg("-s")
                .arg(a.join(path))
                .arg(b.join(path))
                .status()
                .unwrap()
                .success(),
            (Some(x), Some(y)) => x == y,
            _ => false,
        };
        if !same {
            out.insert(path.clone());
        }
    }
    out
}

fn copy_tree(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success());
}

fn call(id: &str, name: &str, args: &Value) -> wiremock::ResponseTemplate {
    tool_call(id, name, &args.to_string())
}

fn command(id: &str, line: &str) -> wiremock::ResponseTemplate {
    call(id, "run_command", &json!({ "command": line }))
}

async fn json_of(ws: &Ws, args: &[&str]) -> (Option<i32>, Value, String) {
    let out = ws.run(args).await;
    let so = text(&out.stdout);
    let value = serde_json::from_str(&so).unwrap_or(Value::Null);
    (
        out.status.code(),
        value,
        format!("stdout: {so}\nstderr: {}", text(&out.stderr)),
    )
}

#[tokio::test]
async fn rewind_restores_each_step_byte_for_byte_and_its_undo_the_later_state() {
    let server = wiremock::MockServer::start().await;
    let ws = Ws::new(&server);
    let root = ws.path().to_owned();
    std::fs::write(root.join("b.txt"), "bee\n").unwrap();
    std::fs::create_dir_all(root.join("dir/sub")).unwrap();
    std::fs::write(root.join("dir/sub/x"), "x\n").unwrap();
    std::fs::create_dir(root.join("tools")).unwrap();
    std::fs::write(root.join("tools/run.sh"), "#!/bin/sh\necho hi\n").unwrap();
    Command::new("chmod")
        .args(["755"])
        .arg(root.join("tools/run.sh"))
        .status()
        .unwrap();
    std::os::unix::fs::symlink("b.txt", root.join("link")).unwrap();

    let replies = vec![
        call(
            "s1",
            "write_file",
            &json!({"path": "a.txt", "content": "one\ntwo\n"}),
        ),
        call(
            "s2",
            "edit_file",
            &json!({"path": "a.txt", "old_str": "one", "new_str": "ONE"}),
        ),
        call(
            "s3",
            "apply_patch",
            &json!({"patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,3 @@\n ONE\n two\n+three\n"}),
        ),
        command("s4", "sed -i 's/ONE/uno/' a.txt && chmod 700 tools/run.sh"),
        command(
            "s5",
            "python3 -c \"open('p1.txt','w').write('1\\n'); open('p2.txt','w').write('2\\n')\" \
             && ln -sfn a.txt link",
        ),
        command("s6", "rm b.txt && rm -r dir"),
        call(
            "s7",
            "run_command",
            &json!({
                "command": "while [ ! -e go ]; do sleep 0.02; done; echo bg > bg.txt; rm go",
                "background": true
            }),
        ),
        call(
            "s8",
            "write_file",
            &json!({"path": "c.txt", "content": "c\n"}),
        ),
        answer("Done."),
    ];
    let steps = replies.len();
    let snaps = tempfile::tempdir().unwrap();
    let snap = |n: usize| snaps.path().join(format!("before-{}", n + 1));
    let mut script = Script::new(replies);
    for n in 0..steps {
        let (from, to) = (root.clone(), snap(n));
        script = script.before(n, move || copy_tree(&from, &to));
    }
    // Before step 8 (after its snapshot): the background process of step 7
    // is let go, and has written its file before the step's calls run.
    let at = root.clone();
    script = script.before(7, move || {
        std::fs::write(at.join("go"), "").unwrap();
        while !at.join("bg.txt").exists() || at.join("go").exists() {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    });
    mount(&server, "/v1/chat/completions", script).await;

    let out = ws.run(&["run", "Edit the files", "--json"]).await;
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout: {so}\nstderr: {se}");
    let events: Vec<Value> = so
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let session = events.last().unwrap()["session"]
        .as_str()
        .unwrap()
        .to_owned();
    // Point 2: what each command changed, in its result and its event.
    assert!(
        so.contains("files changed: created p1.txt, p2.txt; modified link"),
        "{so}"
    );
    assert!(
        so.contains("files changed: deleted b.txt, dir/, dir/sub/, dir/sub/x"),
        "{so}"
    );
    let after = snaps.path().join("after");
    copy_tree(&root, &after);

    // What each step changed.
    let listed = ws.run(&["checkpoints", &session]).await;
    let listed = text(&listed.stdout);
    assert!(listed.contains("step 5 (run 1, step 5):"), "{listed}");
    assert!(listed.contains("created  p1.txt"), "{listed}");
    assert!(
        listed.contains("modified tools/run.sh (mode 755 → 700)"),
        "{listed}"
    );
    assert!(listed.contains("created  bg.txt"), "{listed}");

    // Each step: rewound to before it, then the rewind undone.
    for step in (1..=steps).rev() {
        let n = step.to_string();
        let (code, v, all) = json_of(&ws, &["rewind", &session, "--to-step", &n, "--json"]).await;
        assert_eq!(code, Some(0), "rewind to {step}: {all}");
        assert_eq!(v["to_step"], step, "{all}");
        assert_eq!(
            differ(&snap(step - 1), &root),
            BTreeSet::new(),
            "rewound to {step}: {all}"
        );
        let (code, _, all) = json_of(&ws, &["rewind", &session, "--undo", "--json"]).await;
        assert_eq!(code, Some(0), "undo of {step}: {all}");
        assert_eq!(
            differ(&after, &root),
            BTreeSet::new(),
            "undo of {step}: {all}"
        );
    }

    // A file edited by hand since is a conflict, left alone.
    std::fs::write(root.join("a.txt"), "by hand\n").unwrap();
    let (code, v, all) = json_of(&ws, &["rewind", &session, "--to-step", "1", "--json"]).await;
    assert_eq!(code, Some(1), "{all}");
    assert_eq!(v["conflicts"][0]["path"], "a.txt", "{all}");
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "by hand\n"
    );
    let left: BTreeSet<String> = differ(&snap(0), &root);
    assert_eq!(left, BTreeSet::from(["a.txt".to_owned()]), "{all}");
    // Its undo gives the later state back, the hand edit kept.
    let (code, _, all) = json_of(&ws, &["rewind", &session, "--undo", "--json"]).await;
    assert_eq!(code, Some(0), "{all}");
    assert_eq!(
        differ(&after, &root),
        BTreeSet::from(["a.txt".to_owned()]),
        "{all}"
    );
    // Forced, the hand edit goes too; and its undo brings it back.
    let (code, _, all) = json_of(
        &ws,
        &["rewind", &session, "--to-step", "1", "--force", "--json"],
    )
    .await;
    assert_eq!(code, Some(0), "{all}");
    assert_eq!(differ(&snap(0), &root), BTreeSet::new(), "{all}");
    let (code, _, all) = json_of(&ws, &["rewind", &session, "--undo", "--json"]).await;
    assert_eq!(code, Some(0), "{all}");
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "by hand\n"
    );
}

#[tokio::test]
async fn the_default_rewind_undoes_the_last_step_that_changed_anything_and_the_conversation_too() {
    let server = common::server(vec![
        call(
            "w1",
            "write_file",
            &json!({"path": "one.txt", "content": "1\n"}),
        ),
        call(
            "w2",
            "write_file",
            &json!({"path": "two.txt", "content": "2\n"}),
        ),
        call("r", "read_file", &json!({"path": "two.txt"})),
        answer("Done."),
    ])
    .await;
    let ws = Ws::new(&server);
    let out = ws.run(&["run", "Write two files", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let root: PathBuf = ws.path().to_owned();
    // No session named: the latest. Step 2 wrote two.txt; 3 and 4 nothing.
    let (code, v, all) = json_of(&ws, &["rewind", "--both", "--json"]).await;
    assert_eq!(code, Some(0), "{all}");
    assert_eq!(v["to_step"], 2, "{all}");
    assert!(v["messages"].as_u64().unwrap() > 0, "{all}");
    assert!(root.join("one.txt").exists() && !root.join("two.txt").exists());
    let session = v["session_id"].as_str().unwrap().to_owned();
    let shown = ws.run(&["sessions", "show", &session, "--json"]).await;
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let last = shown["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        last["tool_call_id"], "w1",
        "the conversation ends before step 2: {last}"
    );
    // The next default rewind goes further back: step 2 is rewound.
    let (code, v, all) = json_of(&ws, &["rewind", "--json"]).await;
    assert_eq!((code, v["to_step"].as_u64()), (Some(0), Some(1)), "{all}");
    assert!(!root.join("one.txt").exists());
}

#[tokio::test]
async fn what_git_ignores_is_not_kept_for_rewind_and_the_rest_is() {
    let server = common::server(vec![
        call(
            "w1",
            "write_file",
            &json!({"path": "build/out.bin", "content": "generated\n"}),
        ),
        call(
            "w2",
            "write_file",
            &json!({"path": "src.txt", "content": "source\n"}),
        ),
        answer("Done."),
    ])
    .await;
    let ws = Ws::new(&server);
    std::fs::write(ws.path().join(".gitignore"), "build/\n").unwrap();
    let out = ws.run(&["run", "Build and write", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (code, v, all) = json_of(&ws, &["checkpoints", "--json"]).await;
    assert_eq!(code, Some(0), "{all}");
    let paths: Vec<String> = v["checkpoints"]
        .as_array()
        .unwrap_or_else(|| panic!("{all}"))
        .iter()
        .flat_map(|c| c["changes"].as_array().cloned().unwrap_or_default())
        .filter_map(|c| c["path"].as_str().map(str::to_owned))
        .collect();
    assert!(paths.contains(&"src.txt".to_owned()), "{all}");
    assert!(
        paths.iter().all(|p| !p.starts_with("build")),
        "an ignored path was kept: {all}"
    );
}

/// Lets the held reply go and kills the run however the test ends, so
/// that a failed assertion fails the test instead of hanging it.
struct Release(
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    std::process::Child,
);
impl Drop for Release {
    fn drop(&mut self) {
        let _ = self.1.kill();
        let _ = self.1.wait();
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A rewind made while another process runs the session is refused, naming
/// that process, and changes nothing; once the process is killed (SIGKILL:
/// nothing of it is left to let go of the session), the rewind goes ahead.
#[tokio::test]
async fn a_session_running_in_another_process_is_not_rewound_until_that_process_is_gone() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let server = wiremock::MockServer::start().await;
    let (reached_tx, reached_rx) = std::sync::mpsc::channel::<()>();
    let release = Arc::new(AtomicBool::new(false));
    let let_go = Arc::clone(&release);
    // The second model call (after step 1 wrote a.txt) is held until the
    // test lets it go: the run is alive, mid-session.
    let script = Script::new(vec![
        call(
            "w1",
            "write_file",
            &json!({"path": "a.txt", "content": "one\n"}),
        ),
        answer("Done."),
    ])
    .before(1, move || {
        let _ = reached_tx.send(());
        while !let_go.load(Ordering::SeqCst) {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    });
    mount(&server, "/v1/chat/completions", script).await;
    let ws = Ws::new(&server);
    let mut run = ws.command(env!("CARGO_BIN_EXE_toolgate"));
    run.args(["run", "Write a file", "--json"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut guard = Release(Arc::clone(&release), run.spawn().unwrap());
    let pid = guard.1.id();
    tokio::task::spawn_blocking(move || reached_rx.recv())
        .await
        .unwrap()
        .expect("the run reaches its second model call");
    assert!(ws.path().join("a.txt").exists());

    let listed = ws.run(&["--json", "sessions", "list"]).await;
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let session = listed[0]["id"].as_str().unwrap().to_owned();
    for args in [
        vec!["rewind", session.as_str()],
        vec!["rewind", session.as_str(), "--both", "--to-step", "1"],
    ] {
        let out = ws.run(&args).await;
        let se = text(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{args:?}: {se}");
        assert!(
            se.contains(&format!("session `{session}` is running in process {pid}")),
            "{args:?}: {se}"
        );
        assert!(se.contains(&format!("kill {pid}")), "{se}");
        assert_eq!(
            std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
            "one\n",
            "the refused rewind changed the workspace"
        );
    }
    let (_, v, all) = json_of(&ws, &["checkpoints", &session, "--json"]).await;
    assert!(
        v["checkpoints"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["rewound_by"].is_null()),
        "a refused rewind was recorded: {all}"
    );

    // SIGKILL: the process cannot let go of anything itself.
    guard.1.kill().unwrap();
    guard.1.wait().unwrap();
    drop(guard);
    let (code, v, all) = json_of(&ws, &["rewind", &session, "--json"]).await;
    assert_eq!(code, Some(0), "{all}");
    assert_eq!(v["to_step"], 1, "{all}");
    assert!(!ws.path().join("a.txt").exists(), "{all}");
}
