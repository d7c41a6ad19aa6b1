//! `toolgate call` builds what the one call needs: a built-in tool's call
//! starts no MCP server, while a name no tool group offers (an MCP or a
//! dynamic tool) gets every tool, MCP servers included.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::path::Path;
use std::process::Output;

use toolgate_test::TempHome;

/// `toolgate ARGS` in the workspace, which is trusted (its file starts an
/// MCP server).
fn toolgate(dir: &TempHome, args: &[&str]) -> Output {
    dir.command(env!("CARGO_BIN_EXE_toolgate"))
        .env("TOOLGATE_TRUST_WORKSPACE", "1")
        .args(args)
        .output()
        .unwrap()
}

fn started(marker: &Path) -> usize {
    std::fs::read_to_string(marker).map_or(0, |t| t.lines().count())
}

#[test]
fn a_builtin_call_starts_no_mcp_server_and_another_name_gets_them_all() {
    let dir = TempHome::new().unwrap();
    let marker = dir.workspace().join("started.txt");
    // A "server" that records each start and exits: starting it is seen,
    // and it fails to start as a server.
    std::fs::write(
        dir.workspace().join("toolgate.yaml"),
        format!(
            "confirmation:\n  mode: yolo\nmcp:\n  servers:\n    probe:\n      command: /bin/sh\n      args: [-c, 'echo started >> {}']\n",
            marker.display()
        ),
    )
    .unwrap();

    let out = toolgate(&dir, &["call", "get_datetime", "{}"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        started(&marker),
        0,
        "a built-in tool's call started the MCP server"
    );

    // The precondition: listing tools does start it.
    toolgate(&dir, &["tools", "list"]);
    assert_eq!(
        started(&marker),
        1,
        "tools list should start the configured server"
    );

    // A name no group offers: everything is built, the server started.
    let out = toolgate(&dir, &["call", "mcp_probe_anything", "{}"]);
    assert!(!out.status.success());
    assert_eq!(
        started(&marker),
        2,
        "an MCP tool's call must start the servers"
    );
}
