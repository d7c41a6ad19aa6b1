//! `commands.limits` through the binary: a workspace's `toolgate.yaml` sets
//! small limits, and `toolgate --mode yolo call run_command` runs what an
//! attacker ran; each is refused at the limit and the result names it with
//! the key that raises it.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::process::Output;

use toolgate_test::TempHome;

mod common;

const CONFIG: &str = "\
commands:
  limits:
    processes: 64
    memory: 256MiB
    cpu_seconds: 1
    tmp_size: 64MiB
";

fn toolgate(ws: &TempHome, args: &[&str]) -> Output {
    let mut cmd = ws.command(env!("CARGO_BIN_EXE_toolgate"));
    // `commands.limits` may raise limits: it applies once the file is
    // trusted.
    cmd.env("TOOLGATE_TRUST_WORKSPACE", "1").args(args);
    cmd.output().unwrap()
}

fn run_command(ws: &TempHome, command: &str, timeout: u64) -> (Output, String) {
    let args = serde_json::json!({"command": command, "timeout": timeout}).to_string();
    let out = toolgate(
        ws,
        &["--mode", "yolo", "--json", "call", "run_command", &args],
    );
    let text = format!("{}{}", common::text(&out.stdout), common::text(&out.stderr));
    (out, text)
}

#[test]
fn commands_limits_are_enforced_and_named_in_the_result() {
    // Not under /tmp: each command gets a private /tmp (`tmp_size`).
    let dir = TempHome::builder().parent("/var/tmp").build().unwrap();
    let ws = dir.workspace();
    std::fs::write(ws.join("toolgate.yaml"), CONFIG).unwrap();

    // What the configuration says, and how it is enforced here.
    let out = toolgate(&dir, &["config", "check"]);
    let stderr = common::text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("limits: processes 64 per command ("),
        "{stderr}"
    );
    assert!(stderr.contains("memory 256 MiB per command"), "{stderr}");
    let root = rustix_is_root();
    let by_cgroup = stderr.contains("processes 64 per command (cgroup v");
    assert!(
        by_cgroup || !root,
        "toolgate runs as root, and no cgroup limits processes: {stderr}"
    );

    // 2,000 processes asked for, each staying until the command is killed:
    // at most the limit started.
    let (out, text) = run_command(
        &dir,
        "seq 2000 | xargs -P 2000 -I{} sh -c 'echo x >> started; exec sleep 60'",
        6,
    );
    assert_eq!(out.status.code(), Some(1), "{text}");
    let started = std::fs::read_to_string(ws.join("started"))
        .unwrap()
        .lines()
        .count();
    assert!(started > 0 && started <= 64, "{started} started: {text}");
    if by_cgroup {
        assert!(
            text.contains(
                "the command hit the process limit (64 per command; raise commands.limits.processes)"
            ),
            "{text}"
        );
    } else {
        eprintln!("NOTE: no cgroup here: the result cannot name the process limit for certain");
    }

    // A CPU loop, stopped after a second of CPU time.
    let (out, text) = run_command(&dir, "while :; do :; done", 60);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "the command hit the CPU time limit (1 s per process; raise commands.limits.cpu_seconds)"
        ),
        "{text}"
    );

    // 3 GiB asked for.
    let (out, text) = run_command(&dir, "python3 -c 'b = bytearray(3 << 30)'", 60);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("MemoryError"), "{text}");
    assert!(
        text.contains("hit the memory limit (256 MiB per ")
            && text.contains("raise commands.limits.memory)"),
        "{text}"
    );

    // 2 GiB into /tmp.
    let (out, text) = run_command(
        &dir,
        "head -c 2G /dev/zero > /tmp/big; s=$?; stat -c %s /tmp/big; exit $s",
        60,
    );
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("No space left on device"), "{text}");
    assert!(text.contains("67108864"), "{text}");
    assert!(
        text.contains("may have hit the /tmp size limit (64 MiB; raise commands.limits.tmp_size)"),
        "{text}"
    );
}

fn rustix_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .is_some_and(|ids| ids.split_whitespace().next() == Some("0"))
}
