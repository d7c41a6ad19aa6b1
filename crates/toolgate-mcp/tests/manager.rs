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

fn kill(pidfile: &Path) {
    let pid = std::fs::read_to_string(pidfile).unwrap();
    let status = std::process::Command::new("kill")
        .args(["-9", pid.trim()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dead_server_is_restarted_once_on_the_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let script = format!(
        "echo $$ > {}; exec {}",
        pidfile.display(),
        time_server().display()
    );
    let mut config = McpConfig::default();
    config.servers.insert(
        "time".into(),
        McpServerConfig::stdio("/bin/sh", ["-c".to_owned(), script]),
    );
    let registry = Arc::new(Registry::new());
    let manager = McpManager::new(Arc::clone(&registry));
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

    kill(&pidfile);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let second = call().await;
    assert!(second.success, "restarted: {second:?}");

    kill(&pidfile);
    tokio::time::sleep(Duration::from_millis(200)).await;
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
    let manager = McpManager::new(Arc::clone(&registry));
    let started = std::time::Instant::now();
    let statuses = manager.start(&config).await;
    assert!(started.elapsed() < Duration::from_secs(5));
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
