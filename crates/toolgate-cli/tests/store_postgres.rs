//! The `PostgreSQL` store as whole processes: `toolgate store migrate`,
//! then `toolgate run` against a scripted model server with `store.url`
//! set, then `toolgate sessions list` and `resume` see the session — all
//! of it in the database, none in a local `SQLite` file.
//!
//! Needs a server: `TOOLGATE_TEST_PG_URL` (`export
//! TOOLGATE_TEST_PG_URL=$(.ci/pg.sh start)`, as `.ci/run` does). Without
//! it the test fails, saying so.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::Path;

use serde_json::Value;

mod common;
#[path = "common/pg.rs"]
mod pg;

use common::{Ws, answer, server, text, tool_call};
use pg::{connect, new_database};

/// Every file named `name` under `dir`.
fn find(dir: &Path, name: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(find(&path, name));
        } else if path.file_name().is_some_and(|n| n == name) {
            found.push(path);
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_then_run_and_resume_keep_the_session_in_postgres() {
    let db = format!("toolgate_cli_{}", std::process::id());
    let url = new_database(&db).await;
    let model = server(vec![
        tool_call("r", "read_file", r#"{"path":"a.txt"}"#),
        tool_call(
            "e",
            "edit_file",
            r#"{"path":"a.txt","old_str":"old","new_str":"new"}"#,
        ),
        answer("Replaced old with new."),
        answer("Resumed and done."),
    ])
    .await;
    let ws = Ws::new(&model);
    let config = ws.path().join("toolgate.yaml");
    let yaml = format!(
        "{}store:\n  url: {url}\n  password_env: TOOLGATE_TEST_PG_PASSWORD\n",
        std::fs::read_to_string(&config).unwrap()
    );
    std::fs::write(&config, yaml).unwrap();
    std::fs::write(ws.path().join("a.txt"), "old text\n").unwrap();
    let toolgate = |args: &[&str]| {
        let mut cmd = ws.command(env!("CARGO_BIN_EXE_toolgate"));
        cmd.env("TOOLGATE_TEST_PG_PASSWORD", "not-checked-by-a-trust-server")
            .args(args);
        common::output(cmd)
    };

    // Before the migration, every command says what to do.
    let out = toolgate(&["sessions", "list"]).await;
    let se = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{se}");
    assert!(se.contains("toolgate store migrate"), "{se}");

    let out = toolgate(&["store", "migrate"]).await;
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{se}");
    assert!(se.contains("from schema version 0 to "), "{se}");
    let out = toolgate(&["--json", "store", "migrate"]).await;
    let again: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(again["to"].as_i64().is_some_and(|v| v > 0), "{again}");
    assert_eq!(again["from"], again["to"], "nothing to do the second time");

    let out = toolgate(&["run", "Replace old with new"]).await;
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout: {so}\nstderr: {se}");
    assert!(so.contains("Replaced old with new."), "{so}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "new text\n"
    );

    let out = toolgate(&["sessions", "list", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    let id = list[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(list[0]["outcome"], "completed");
    assert_eq!(list[0]["steps"], 3);

    let out = toolgate(&["sessions", "resume", &id, "Anything else?"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Resumed and done."));
    let out = toolgate(&["--json", "sessions", "list"]).await;
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list[0]["steps"], 4, "3 steps, then 1 resumed");

    // It is all in the database: the session, its messages, the audit of
    // its calls; and no SQLite store was made.
    let client = connect(&url).await;
    let count = |sql: &'static str| {
        let client = &client;
        async move { client.query_one(sql, &[]).await.unwrap().get::<_, i64>(0) }
    };
    assert_eq!(count("SELECT COUNT(*) FROM sessions").await, 1);
    assert_eq!(count("SELECT MAX(runs) FROM sessions").await, 2);
    assert!(count("SELECT COUNT(*) FROM messages").await >= 6);
    assert_eq!(
        count("SELECT COUNT(*) FROM audit WHERE tool IN ('read_file', 'edit_file')").await,
        2
    );
    assert!(
        find(ws.dir.root(), "toolgate.db").is_empty(),
        "a SQLite store was made: {:?}",
        find(ws.dir.root(), "toolgate.db")
    );

    // A password in the URL is refused, and not repeated.
    let yaml = std::fs::read_to_string(&config)
        .unwrap()
        .replace("postgres://toolgate@", "postgres://toolgate:hunter2@");
    std::fs::write(&config, yaml).unwrap();
    let out = toolgate(&["sessions", "list"]).await;
    let se = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{se}");
    assert!(se.contains("store.password_env"), "{se}");
    assert!(!se.contains("hunter2"), "{se}");

    drop(client);
    pg::drop_database(&db).await;
}

/// One HTTP/1.1 request to 127.0.0.1:`port`; the whole answer as text.
fn http(port: u16, method: &str, path: &str, token: &str, body: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nAuthorization: Bearer {token}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

/// A named client's call through `toolgate mcp serve --http` is audited in
/// the database with the client's name, and `/readyz` asks the database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_names_the_mcp_client_in_postgres() {
    use std::io::BufRead;
    let db = format!("toolgate_cli_client_{}", std::process::id());
    let url = new_database(&db).await;
    let model = server(vec![answer("unused")]).await;
    let ws = Ws::new(&model);
    let config = ws.path().join("toolgate.yaml");
    let yaml = format!(
        "{}store:\n  url: {url}\n  password_env: TOOLGATE_TEST_PG_PASSWORD\nmcp:\n  http:\n    \
         clients:\n      - name: ci-runner\n        token_env: CI_TOKEN\n",
        std::fs::read_to_string(&config).unwrap()
    );
    std::fs::write(&config, yaml).unwrap();
    std::fs::write(ws.path().join("a.txt"), "in postgres\n").unwrap();
    let command = |args: &[&str]| {
        let mut cmd = ws.command(env!("CARGO_BIN_EXE_toolgate"));
        cmd.env("TOOLGATE_TEST_PG_PASSWORD", "not-checked-by-a-trust-server")
            .env("CI_TOKEN", "ci-token-for-postgres")
            .args(args);
        cmd
    };
    let out = common::output(command(&["store", "migrate"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let mut worker = command(&["mcp", "serve", "--http", "127.0.0.1:0"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = worker.stderr.take().unwrap();
    let (port, stderr) = tokio::task::spawn_blocking(move || {
        let mut lines = std::io::BufReader::new(stderr).lines();
        loop {
            let line = lines.next().expect("no listening line").unwrap();
            if let Some(rest) = line.strip_prefix("listening on http://127.0.0.1:") {
                let port: u16 = rest.trim_end_matches("/mcp").parse().unwrap();
                return (port, lines);
            }
        }
    })
    .await
    .unwrap();
    let token = "ci-token-for-postgres";
    let (ready, called) = tokio::task::spawn_blocking(move || {
        let ready = http(port, "GET", "/readyz", "", "");
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}"#;
        (ready, http(port, "POST", "/mcp", token, body))
    })
    .await
    .unwrap();
    assert!(ready.starts_with("HTTP/1.1 200"), "{ready}");
    assert!(called.contains("in postgres"), "{called}");
    let pid = worker.id().to_string();
    let status = tokio::task::spawn_blocking(move || {
        std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap();
        drop(stderr);
        worker.wait().unwrap()
    })
    .await
    .unwrap();
    assert!(status.success(), "{status:?}");

    let client = connect(&url).await;
    let rows = client
        .query("SELECT client FROM audit WHERE tool = 'read_file'", &[])
        .await
        .unwrap();
    let clients: Vec<Option<String>> = rows.iter().map(|r| r.get(0)).collect();
    assert_eq!(clients, [Some("ci-runner".to_owned())]);

    drop(client);
    pg::drop_database(&db).await;
}
