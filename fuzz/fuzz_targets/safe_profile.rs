//! Arbitrary command lines that the classifier calls `safe` are run for
//! real in the read-only profile, and must never write or start a program
//! they do not name.
//!
//! - A write that went through (anything changed in the scratch workspace
//!   or in the directory beside it) is a hole in the kernel profile: crash.
//! - A write or a program the kernel had to refuse (bash's "Read-only file
//!   system", or "cannot execute" / exit 126 for a program that is not
//!   named) is a line the classifier should not have called `safe`: crash
//!   too, so the table gets the case.
//!
//!     cargo +nightly fuzz run safe_profile -- -dict=safe_profile.dict -max_total_time=600
//!
//! Each input that classifies `safe` starts a process (a few milliseconds),
//! so this target runs hundreds, not millions, of executions per second.

#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use toolgate_policy::{CommandPolicy, VerdictKind};
use toolgate_sandbox::{Level, Profile, RunOptions, Sandbox, Spawn};

struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    sandbox: Sandbox,
    runtime: tokio::runtime::Runtime,
    policy: CommandPolicy,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let ws = dir.path().join("ws");
        let beside = dir.path().join("beside");
        for d in [&ws.join("src"), &beside] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(ws.join("README.md"), "# readme\nfoo\n").unwrap();
        std::fs::write(ws.join("src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(ws.join(".env"), "KEY=x\n").unwrap();
        std::fs::write(beside.join("data.txt"), "data\n").unwrap();
        let sandbox = Sandbox::builder(&ws).build().unwrap();
        assert_eq!(
            sandbox.status().level(),
            Level::Full,
            "{}",
            sandbox.status()
        );
        World {
            root: dir.path().to_owned(),
            _dir: dir,
            sandbox,
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
            policy: CommandPolicy::default(),
        }
    })
}

/// Every path beneath `root` with its size and modification time.
fn snapshot(root: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(path.clone());
            }
            out.push((path, meta.len(), meta.modified().unwrap()));
        }
    }
    out.sort();
    out
}

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    if line.len() > 512 {
        return;
    }
    let w = world();
    let verdict = w.policy.classify(line);
    if verdict.kind() != VerdictKind::Class(toolgate_core::CommandClass::Safe) {
        return;
    }
    let before = snapshot(&w.root);
    let spawn = Spawn::shell(line).profile(Profile::ReadOnly {
        programs: verdict.programs().to_vec(),
    });
    let done = w
        .runtime
        .block_on(
            w.sandbox
                .run(&spawn, &RunOptions::new(Duration::from_secs(2))),
        )
        .unwrap();
    let after = snapshot(&w.root);
    assert_eq!(before, after, "{line:?} wrote: {}", done.stderr);
    let stderr = &done.stderr;
    assert!(
        !stderr.contains("Read-only file system"),
        "{line:?} is safe but tried to write: {stderr}"
    );
    assert!(
        done.exit_code != Some(126) && !stderr.contains("cannot execute"),
        "{line:?} is safe but started a program it does not name ({:?}): {stderr}",
        verdict.programs()
    );
});
