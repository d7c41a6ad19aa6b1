#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    missing_docs,
    reason = "test code: a failed unwrap is a failed test"
)]
//! The limits against attacks, through real processes: thousands of
//! processes and threads, gigabytes of memory, of `/tmp` and of
//! `/dev/shm`, a CPU loop, a huge file, thousands of open files. Each is
//! refused at a small limit, so a failure cannot take the machine down, and
//! the run says which limit it hit.
//!
//! Processes and memory per command need a cgroup, which toolgate can make
//! as root (CI) or in a cgroup delegated to it. Without one, the tests that
//! need it say so on stderr and check what the resource limits still
//! enforce; a CI machine running as root without usable cgroups fails.

use std::path::{Path, PathBuf};
use std::time::Duration;

use toolgate_sandbox::{
    EnvPolicy, Finished, Level, Limit, Limits, Profile, RunOptions, Sandbox, SandboxMode, Spawn,
};

struct World {
    _base: tempfile::TempDir,
    ws: PathBuf,
    sandbox: Sandbox,
}

/// A sandbox over a fresh workspace (outside /tmp, which each command gets
/// a private one of) with `limits`.
fn world(limits: Limits, mode: SandboxMode) -> World {
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws = base.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let sandbox = Sandbox::builder(&ws)
        .host_env([
            ("PATH", std::env::var("PATH").unwrap()),
            ("HOME", base.path().display().to_string()),
            ("LANG", "C.UTF-8".to_owned()),
        ])
        .env_policy(EnvPolicy::new())
        .mode(mode)
        .limits(limits)
        .build()
        .unwrap();
    let status = sandbox.status();
    if mode == SandboxMode::Full {
        assert_eq!(
            status.level(),
            Level::Full,
            "this machine cannot run the full sandbox: {status}"
        );
    }
    World {
        ws: ws.canonicalize().unwrap(),
        _base: base,
        sandbox,
    }
}

fn full(limits: Limits) -> World {
    world(limits, SandboxMode::Full)
}

async fn run(world: &World, line: &str, timeout: Duration) -> Finished {
    run_as(world, line, timeout, Profile::Standard).await
}

async fn run_as(world: &World, line: &str, timeout: Duration, profile: Profile) -> Finished {
    let spawn = Spawn::shell(line).profile(profile);
    world
        .sandbox
        .run(&spawn, &RunOptions::new(timeout))
        .await
        .unwrap()
}

fn all(f: &Finished) -> String {
    format!(
        "exit {:?} signal {:?} timed out {} hits {:?}\n{}\n{}",
        f.exit_code, f.signal, f.timed_out, f.limits_hit, f.stdout, f.stderr
    )
}

/// Whether the run names `limit`, and whether for certain.
fn named(f: &Finished, limit: Limit) -> Option<bool> {
    f.limits_hit
        .iter()
        .find(|h| h.limit() == limit)
        .map(toolgate_sandbox::LimitHit::certain)
}

/// Whether a cgroup enforces `limit` per command here; when not, says so
/// (and fails where toolgate runs as root, as in CI: there it must).
fn by_cgroup(world: &World, limit: Limit) -> bool {
    let status = world.sandbox.status();
    let entry = status.limits().iter().find(|l| l.limit() == limit).unwrap();
    if entry.how().contains("cgroup v") {
        return true;
    }
    let root = rustix::process::getuid().is_root();
    assert!(
        !root,
        "toolgate runs as root but no cgroup enforces the {limit} limit: {entry}"
    );
    eprintln!(
        "NOTE: not checked here, no cgroup limits {limit} per command (not root, no delegated \
         cgroup): {entry}"
    );
    false
}

fn count_lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

const PROCESSES: u64 = 64;

fn few_processes() -> Limits {
    Limits::builder().processes(PROCESSES).build().unwrap()
}

#[tokio::test]
async fn two_thousand_processes_asked_for_at_most_the_limit_started() {
    let w = full(few_processes());
    let cgroup = by_cgroup(&w, Limit::Processes);
    // Each child writes a line and then stays until the run is killed, so
    // the file counts how many ran at once.
    for (name, line) in [
        (
            "xargs",
            "seq 2000 | xargs -P 2000 -I{} sh -c 'echo x >> started-xargs; exec sleep 60'",
        ),
        (
            "loop",
            "for i in $(seq 2000); do sh -c 'echo x >> started-loop; exec sleep 60' & done; wait",
        ),
    ] {
        let done = run(&w, line, Duration::from_secs(6)).await;
        let started = count_lines(&w.ws.join(format!("started-{name}")));
        assert!(
            started > 0 && started <= usize::try_from(PROCESSES).unwrap(),
            "{name}: {started} started: {}",
            all(&done)
        );
        if cgroup {
            assert_eq!(
                named(&done, Limit::Processes),
                Some(true),
                "{name}: {}",
                all(&done)
            );
            let hit = done
                .limits_hit
                .iter()
                .find(|h| h.limit() == Limit::Processes)
                .unwrap();
            assert_eq!(hit.value(), "64 per command");
        }
    }
}

#[tokio::test]
async fn two_thousand_threads_asked_for_at_most_the_limit_started() {
    let w = full(few_processes());
    let line = r#"python3 -c '
import threading, time
threading.stack_size(1 << 18)
n = 0
try:
    for _ in range(2000):
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        n += 1
finally:
    print("started", n, flush=True)
'"#;
    let done = run(&w, line, Duration::from_secs(20)).await;
    let started: u64 = done
        .stdout
        .trim()
        .strip_prefix("started ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}", all(&done)));
    assert!(
        started > 0 && started < PROCESSES,
        "{started} threads: {}",
        all(&done)
    );
    assert!(
        done.stderr.contains("can't start new thread"),
        "{}",
        all(&done)
    );
    assert!(named(&done, Limit::Processes).is_some(), "{}", all(&done));
}

fn little_memory() -> Limits {
    Limits::builder().memory(256 << 20).build().unwrap()
}

#[tokio::test]
async fn three_gib_asked_for_is_refused() {
    let w = full(little_memory());
    for line in [
        "python3 -c 'b = bytearray(3 << 30); print(len(b))'",
        // A string doubled until it is 2 GiB (3 GiB at the peak).
        "awk 'BEGIN { s = \"x\"; while (length(s) < 2^31) s = s s; print length(s) }'",
    ] {
        let done = run(&w, line, Duration::from_secs(60)).await;
        assert_ne!(done.exit_code, Some(0), "{line}: {}", all(&done));
        assert!(
            !done.stdout.contains("3221225472") && !done.stdout.contains("2147483648"),
            "{line}: {}",
            all(&done)
        );
        assert!(
            named(&done, Limit::Memory).is_some(),
            "{line}: {}",
            all(&done)
        );
    }
}

#[tokio::test]
async fn memory_is_limited_per_command_not_only_per_process() {
    let w = full(little_memory());
    if !by_cgroup(&w, Limit::Memory) {
        return;
    }
    // Four processes of 100 MiB each: each is under the limit, together
    // they are not.
    let line = "for i in 1 2 3 4; do python3 -c '
import time
b = bytearray(b\"x\") * (100 << 20)
time.sleep(2)
print(\"kept\", flush=True)
' & done; wait";
    let done = run(&w, line, Duration::from_secs(60)).await;
    assert!(done.stdout.matches("kept").count() < 4, "{}", all(&done));
    assert_eq!(named(&done, Limit::Memory), Some(true), "{}", all(&done));
}

#[tokio::test]
async fn a_cpu_loop_is_stopped() {
    let w = full(Limits::builder().cpu_seconds(1).build().unwrap());
    let done = run(&w, "while :; do :; done", Duration::from_secs(60)).await;
    assert!(!done.timed_out, "{}", all(&done));
    assert_eq!(done.signal, Some(libc::SIGXCPU), "{}", all(&done));
    assert_eq!(named(&done, Limit::CpuTime), Some(true), "{}", all(&done));
    assert!(
        done.duration < Duration::from_secs(30),
        "{:?}",
        done.duration
    );
}

#[tokio::test]
async fn a_file_bigger_than_the_limit_is_refused() {
    let w = full(Limits::builder().file_size(1 << 20).build().unwrap());
    let done = run(
        &w,
        "head -c 2M /dev/zero > big; head -c 1M /dev/zero > fits",
        Duration::from_secs(30),
    )
    .await;
    let size = std::fs::metadata(w.ws.join("big")).unwrap().len();
    assert!(size <= 1 << 20, "{size} bytes: {}", all(&done));
    assert_eq!(std::fs::metadata(w.ws.join("fits")).unwrap().len(), 1 << 20);
    assert_eq!(named(&done, Limit::FileSize), Some(true), "{}", all(&done));
}

#[tokio::test]
async fn too_many_open_files_are_refused() {
    let w = full(Limits::builder().open_files(64).build().unwrap());
    let line = r#"python3 -c '
files = []
try:
    for _ in range(2000):
        files.append(open("/dev/null"))
finally:
    print("opened", len(files), flush=True)
'"#;
    let done = run(&w, line, Duration::from_secs(30)).await;
    let opened: u64 = done
        .stdout
        .trim()
        .strip_prefix("opened ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}", all(&done)));
    assert!(opened > 0 && opened < 64, "{opened}: {}", all(&done));
    assert_eq!(
        named(&done, Limit::OpenFiles),
        Some(false),
        "{}",
        all(&done)
    );
}

#[tokio::test]
async fn tmp_and_dev_shm_are_capped() {
    let w = full(
        Limits::builder()
            .tmp_size(64 << 20)
            .shm_size(64 << 20)
            .build()
            .unwrap(),
    );
    for dir in ["/tmp", "/dev/shm"] {
        let line = format!("head -c 2G /dev/zero > {dir}/big; s=$?; stat -c %s {dir}/big; exit $s");
        let done = run(&w, &line, Duration::from_secs(60)).await;
        assert_ne!(done.exit_code, Some(0), "{dir}: {}", all(&done));
        let size: u64 = done
            .stdout
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{dir}: {}", all(&done)));
        assert!(size <= 64 << 20, "{dir}: {size} bytes written");
        assert!(size > 0, "{dir}: nothing written: {}", all(&done));
        assert!(
            done.stderr.contains("No space left on device"),
            "{dir}: {}",
            all(&done)
        );
        assert!(named(&done, Limit::TmpSize).is_some(), "{}", all(&done));
    }
    // Each command has a /tmp of its own: the next one starts empty.
    let done = run(&w, "ls -A /tmp /dev/shm", Duration::from_secs(10)).await;
    assert_eq!(done.stdout.trim(), "/dev/shm:\n\n/tmp:", "{}", all(&done));
    // Read-only processes get an empty one they cannot write.
    let done = run_as(
        &w,
        "head -c 1M /dev/zero > /tmp/x",
        Duration::from_secs(10),
        Profile::ReadOnly {
            programs: vec!["head".to_owned()],
        },
    )
    .await;
    assert_ne!(done.exit_code, Some(0), "{}", all(&done));
}

#[tokio::test]
async fn limits_hold_without_namespaces_too() {
    // Landlock only and no sandbox at all: the resource limits still apply.
    for mode in [SandboxMode::LandlockOnly, SandboxMode::Off] {
        let w = world(
            Limits::builder()
                .cpu_seconds(1)
                .file_size(1 << 20)
                .build()
                .unwrap(),
            mode,
        );
        let done = run(&w, "while :; do :; done", Duration::from_secs(60)).await;
        assert_eq!(
            named(&done, Limit::CpuTime),
            Some(true),
            "{mode:?}: {}",
            all(&done)
        );
        let done = run(&w, "head -c 2M /dev/zero > big", Duration::from_secs(30)).await;
        assert!(
            std::fs::metadata(w.ws.join("big")).unwrap().len() <= 1 << 20,
            "{mode:?}: {}",
            all(&done)
        );
        std::fs::remove_file(w.ws.join("big")).unwrap();
        // The caps on /tmp and /dev/shm need the mount namespace: the
        // status says they are not enforced.
        let status = w.sandbox.status();
        let tmp = status
            .limits()
            .iter()
            .find(|l| l.limit() == Limit::TmpSize)
            .unwrap();
        assert!(!tmp.enforced(), "{mode:?}: {tmp}");
        assert!(
            status.missing().iter().any(|m| m.contains("/tmp")),
            "{mode:?}: {status}"
        );
    }
}

#[tokio::test]
async fn the_status_says_how_each_limit_is_enforced() {
    let w = full(Limits::default());
    let status = w.sandbox.status();
    let keys: Vec<&str> = status.limits().iter().map(|l| l.limit().key()).collect();
    assert_eq!(keys, Limit::ALL.iter().map(|l| l.key()).collect::<Vec<_>>());
    let line = status.limits_line();
    for part in [
        "processes 512 per command",
        "cpu_seconds 3600 s per process (RLIMIT_CPU)",
        "file_size 16 GiB per file (RLIMIT_FSIZE)",
        "tmp_size",
        "(a private tmpfs of that size)",
    ] {
        assert!(line.contains(part), "{part:?} not in {line}");
    }
    let processes = &status.limits()[0];
    if rustix::process::getuid().is_root() && !processes.enforced() {
        // Root without a cgroup: said, not hidden.
        assert!(
            status
                .missing()
                .iter()
                .any(|m| m.contains("processes are not limited"))
        );
    }
}

/// The cgroup path of the `pids` hierarchy in a `/proc/PID/cgroup` text.
fn pids_cgroup(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let _ = parts.next()?;
        let controllers = parts.next()?;
        let path = parts.next()?;
        controllers
            .split(',')
            .any(|c| c == "pids")
            .then(|| path.to_owned())
    })
}

/// Where the `pids` hierarchy is mounted (cgroup v1).
fn pids_mount() -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    text.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let point = before.split(' ').nth(4)?;
        let mut rest = after.split(' ');
        (rest.next()? == "cgroup" && rest.nth(1)?.split(',').any(|o| o == "pids"))
            .then(|| PathBuf::from(point))
    })
}

#[tokio::test]
async fn each_command_has_a_cgroup_of_its_own_emptied_after_it() {
    let w = full(few_processes());
    if !by_cgroup(&w, Limit::Processes) {
        return;
    }
    let Some(mount) = pids_mount() else {
        eprintln!("NOTE: the pids controller is on cgroup v2 here; checked on v1 only");
        return;
    };
    let done = run(&w, "cat /proc/self/cgroup", Duration::from_secs(10)).await;
    let path = pids_cgroup(&done.stdout).unwrap_or_else(|| panic!("{}", all(&done)));
    let ours = pids_cgroup(&std::fs::read_to_string("/proc/self/cgroup").unwrap()).unwrap();
    assert_ne!(path, ours, "the command ran in toolgate's own cgroup");
    assert!(
        path.contains(&format!("/toolgate-{}/", std::process::id())),
        "{path}"
    );
    // Empty by the time the result is there: removed, or kept for the next
    // command.
    let dir = mount.join(path.trim_start_matches('/'));
    assert!(is_gone_or_empty(&dir), "{} is left behind", dir.display());
    // After a timeout too, with processes left behind (the kernel tears
    // the PID namespace down asynchronously: the runner waits for the
    // cgroup to empty before it returns).
    let done = run(
        &w,
        "sleep 100 & cat /proc/self/cgroup; sleep 100",
        Duration::from_secs(1),
    )
    .await;
    assert!(done.timed_out);
    let path = pids_cgroup(&done.stdout).unwrap_or_else(|| panic!("{}", all(&done)));
    let dir = mount.join(path.trim_start_matches('/'));
    assert!(is_gone_or_empty(&dir), "{} is left behind", dir.display());
}

/// Whether the cgroup at `dir` was removed, or holds no process.
fn is_gone_or_empty(dir: &Path) -> bool {
    match std::fs::read_to_string(dir.join("cgroup.procs")) {
        Ok(procs) => procs.trim().is_empty(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}
