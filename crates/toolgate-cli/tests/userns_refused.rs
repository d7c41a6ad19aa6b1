//! toolgate where user namespaces are refused: inside a user namespace
//! (`unshare -Ur`, util-linux) whose `user.max_user_namespaces` is 0.
//!
//! There toolgate is root of that namespace and holds `CAP_SYS_ADMIN`: it
//! keeps the full sandbox by making the other namespaces directly. Without
//! `CAP_SYS_ADMIN` (`setpriv --bounding-set -sys_admin`) it falls back to
//! Landlock only, says exactly why and what fixes it, and asks before
//! every command.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::Path;
use std::process::Output;

mod common;

/// `toolgate ARGS` (a shell-quoted string) where user namespaces are
/// refused; `prefix` runs before toolgate (`setpriv …`).
fn refused(ws: &Path, prefix: &str, args: &str) -> Output {
    let bin = env!("CARGO_BIN_EXE_toolgate");
    let script =
        format!("echo 0 > /proc/sys/user/max_user_namespaces && exec {prefix} {bin} {args}");
    let mut cmd = common::clean_command("unshare", ws, &ws.join("home"));
    cmd.args(["-Ur", "sh", "-c", &script]);
    cmd.output()
        .expect("`unshare` (util-linux) makes a user namespace")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn workspace() -> tempfile::TempDir {
    // Under /var/tmp: the sandbox's private /tmp would hide /tmp paths.
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    std::fs::create_dir(dir.path().join("home")).unwrap();
    std::fs::write(dir.path().join(".env"), "API_KEY=hunter2\n").unwrap();
    // Reads `.env` by a name no guardrail can see, and writes outside.
    std::fs::write(
        dir.path().join("probe.sh"),
        "cat \"$(printf '.%s' env)\"; echo; touch /var/tmp/toolgate-userns-outside; \
         echo ok > inside.txt; cat inside.txt\n",
    )
    .unwrap();
    dir
}

#[test]
fn with_cap_sys_admin_the_full_sandbox_needs_no_user_namespace() {
    let ws = workspace();
    let out = refused(ws.path(), "", "doctor");
    let report = text(&out.stdout);
    let line = report
        .lines()
        .find(|l| l.contains(" sandbox: "))
        .unwrap_or_else(|| panic!("{report}\n{}", text(&out.stderr)));
    assert!(
        line.starts_with("✓ sandbox: namespaces + read-only mounts"),
        "{line}"
    );
    assert!(
        line.contains(
            "namespaces made directly: user namespaces are refused here \
             (user.max_user_namespaces is 0), and toolgate holds CAP_SYS_ADMIN"
        ),
        "{line}"
    );

    let out = refused(
        ws.path(),
        "",
        r#"--mode yolo call run_command '{"command": "sh probe.sh"}'"#,
    );
    let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!shown.contains("hunter2"), "{shown}");
    assert!(shown.contains(".env: Permission denied"), "{shown}");
    assert!(shown.contains("Read-only file system"), "{shown}");
    assert!(!Path::new("/var/tmp/toolgate-userns-outside").exists());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("inside.txt")).unwrap(),
        "ok\n"
    );
}

#[test]
fn without_it_toolgate_says_why_what_fixes_it_and_asks_before_every_command() {
    let ws = workspace();
    let drop = "setpriv --bounding-set -sys_admin";
    let out = refused(ws.path(), drop, "doctor");
    let report = text(&out.stdout);
    assert!(
        report.contains("! sandbox: Landlock ABI") || report.contains("! sandbox: none"),
        "{report}"
    );
    assert!(
        report.contains("every command asks before it runs"),
        "{report}"
    );
    assert!(
        report.contains(
            "fix: namespaces: none: user namespaces are refused here (user.max_user_namespaces \
             is 0); allow them with `sudo sysctl -w user.max_user_namespaces=15000`"
        ),
        "{report}"
    );
    // A read-only command asks like any other (nobody to ask: refused).
    let out = refused(ws.path(), drop, r#"call run_command '{"command": "ls"}'"#);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("`run_command` needs confirmation"),
        "{}",
        text(&out.stderr)
    );
}
