//! `McpManager` against a real server nobody here wrote (`mcp-server-time`,
//! installed by `.ci/run`): tools registered, a dead server restarted once.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolgate_core::{Registry, Sensitivity, ToolContext};
use toolgate_mcp::{McpConfig, McpManager, McpServerConfig, ServerState};

fn time_server() -> PathBuf {
    let ci = std::env::var_os("TOOLGATE_MCP_PEERS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci"),
        PathBuf::from,
    );
    let path = ci.join("venv/bin/mcp-server-time");
    assert!(
        path.exists(),
        "{} is not installed; run `.ci/run` (it installs the pinned MCP peers)",
        path.display()
    );
    path
}

/// The sandbox servers run in, with the peers' installation readable (it
/// may be under the home directory, which the sandbox hides).
fn sandbox(workspace: &Path) -> toolgate_sandbox::Sandbox {
    let peers = time_server().parent().unwrap().parent().unwrap().to_owned();
    toolgate_sandbox::Sandbox::builder(workspace)
        .readable([peers])
        .build()
        .unwrap()
}

/// Kills the server processes working in `workspace` (a sandboxed server
/// does not know its PID outside its namespace, so it cannot say it), and
/// returns once they are dead: their pipes closed, as the client will find
/// them.
fn kill_servers_in(workspace: &Path) {
    let workspace = workspace.canonicalize().unwrap();
    let mine = std::process::id().to_string();
    let mut killed = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == mine || !name.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        if std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd == workspace) {
            let status = std::process::Command::new("kill")
                .args(["-9", &name])
                .status()
                .unwrap();
            if status.success() {
                killed.push(name);
            }
        }
    }
    assert!(
        !killed.is_empty(),
        "no server process found in {}",
        workspace.display()
    );
    // Dead: gone, or a zombie (its files, the pipes among them, closed).
    let dead = |pid: &String| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
            stat.rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !killed.iter().all(dead) {
        assert!(
            std::time::Instant::now() < deadline,
            "the killed servers {killed:?} did not die within 30 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dead_server_is_restarted_once_on_the_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = McpConfig::default();
    config.servers.insert(
        "time".into(),
        McpServerConfig::stdio(time_server().to_str().unwrap(), []),
    );
    let registry = Arc::new(Registry::new());
    let manager = McpManager::new(Arc::clone(&registry), sandbox(dir.path()));
    let statuses = manager.start(&config).await;
    assert_eq!(statuses.len(), 1);
    assert_eq!(statuses[0].state, ServerState::Connected, "{statuses:?}");
    assert_eq!(
        manager.tool_names(),
        ["mcp_time_convert_time", "mcp_time_get_current_time"]
    );

    let entry = registry.get("mcp_time_get_current_time").unwrap();
    assert_eq!(entry.tool().sensitivity(&json!({})), Sensitivity::Sensitive);
    // The remote inputSchema is the local one.
    assert!(entry.validate(&json!({"timezone": "UTC"})).is_ok());
    assert!(entry.validate(&json!({})).is_err());

    let call = || async {
        entry
            .tool()
            .execute(json!({"timezone": "UTC"}), &ToolContext::new("t"))
            .await
    };
    let first = call().await;
    assert!(first.success, "{first:?}");

    kill_servers_in(dir.path());
    let second = call().await;
    assert!(second.success, "restarted: {second:?}");

    kill_servers_in(dir.path());
    let third = call().await;
    assert!(!third.success);
    assert!(
        third
            .error
            .as_deref()
            .unwrap()
            .contains("already restarted once"),
        "{third:?}"
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn servers_that_cannot_start_are_reported_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = McpConfig::default();
    config.servers.insert("slow".into(), {
        let mut server = McpServerConfig::stdio("/bin/sleep", ["30".to_owned()]);
        server.startup_timeout = 1;
        server
    });
    config.servers.insert(
        "both".into(),
        McpServerConfig {
            url: Some("http://127.0.0.1:1/mcp".into()),
            ..McpServerConfig::stdio("x", [])
        },
    );
    let registry = Arc::new(Registry::new());
    let manager = McpManager::new(Arc::clone(&registry), sandbox(dir.path()));
    // `/bin/sleep 30` never answers: a start that waited for it would miss
    // this deadline by far; one that keeps the 1 s startup timeout makes it.
    let statuses = tokio::time::timeout(Duration::from_secs(20), manager.start(&config))
        .await
        .expect("start waited past the 1 s startup timeout");
    let reason = |i: usize| match &statuses[i].state {
        ServerState::Failed(reason) => reason.clone(),
        other => panic!("{other:?}"),
    };
    assert!(reason(0).contains("not both"), "{}", reason(0));
    assert!(
        reason(1).contains("did not start within 1 s"),
        "{}",
        reason(1)
    );
    assert_eq!(registry.count(), 0);
    manager.shutdown().await;
}

/// A real server's tool annotations (the Python SDK's) become the local
/// tools' declared kinds: taken at their word from a trusted server, hint by
/// hint, with what a tool leaves out read the safe way; from an untrusted
/// one, read the safe way whatever they say.
#[tokio::test(flavor = "multi_thread")]
async fn remote_annotations_become_declared_kinds_only_from_a_trusted_server() {
    let dir = tempfile::tempdir().unwrap();
    // In the workspace: the sandbox shows it to the server.
    let script = dir.path().join("hinted_server.py");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/hinted_server.py"),
        &script,
    )
    .unwrap();
    let python = time_server().with_file_name("python");
    let mut config = McpConfig::default();
    for (name, trusted) in [("sure", true), ("unsure", false)] {
        let mut server = McpServerConfig::stdio(
            python.to_str().unwrap(),
            [script.to_str().unwrap().to_owned()],
        );
        server.trusted = trusted;
        config.servers.insert(name.into(), server);
    }
    let registry = Arc::new(Registry::new());
    let manager = McpManager::new(Arc::clone(&registry), sandbox(dir.path()));
    let statuses = manager.start(&config).await;
    for status in &statuses {
        assert_eq!(status.state, ServerState::Connected, "{statuses:?}");
    }
    let safe = (false, true, false, true);
    // (tool, (read_only, destructive, idempotent, open_world))
    let cases = [
        ("mcp_sure_silent", safe),
        ("mcp_sure_reader", (true, false, true, false)),
        ("mcp_sure_wiper", (false, true, true, false)),
        ("mcp_sure_mender", (false, false, false, true)),
        ("mcp_unsure_silent", safe),
        ("mcp_unsure_reader", safe),
        ("mcp_unsure_wiper", safe),
        ("mcp_unsure_mender", safe),
    ];
    for (name, want) in cases {
        let spec = registry.get(name).unwrap().spec().clone();
        let a = &spec.annotations;
        assert_eq!(
            (
                a.read_only(),
                a.destructive(),
                a.idempotent(),
                a.open_world()
            ),
            want,
            "{name}: {a:?}"
        );
        assert!(!a.writes_files && !a.runs_commands, "{name}: {a:?}");
    }
    assert_eq!(
        registry
            .get("mcp_unsure_reader")
            .unwrap()
            .spec()
            .annotations
            .title
            .as_deref(),
        Some("Read a thing")
    );
    manager.shutdown().await;
}
