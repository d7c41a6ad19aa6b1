//! `convert_time`, the group added as one file and one catalog line, as a
//! whole process sees it: off by default, listed and callable once a
//! workspace switches it on (untrusted: the key is harmless), refused as a
//! dynamic tool's name, and gone again when switched off.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

mod common;

use common::{Ws, answer, server, text};

fn configure(ws: &Ws, tools: &str) {
    let config = std::fs::read_to_string(ws.path().join("toolgate.yaml")).unwrap();
    let base = config.split("tools:\n").next().unwrap().to_owned();
    std::fs::write(
        ws.path().join("toolgate.yaml"),
        format!("{base}tools:\n{tools}"),
    )
    .unwrap();
}

fn listed(out: &std::process::Output) -> Vec<String> {
    text(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn convert_time_is_listed_callable_reserved_and_switched_by_its_key() {
    let server = server(vec![answer("unused")]).await;
    let ws = Ws::new(&server);
    let args = r#"{"time": "2026-01-15 09:15", "from": "Europe/Madrid", "to": "America/New_York"}"#;

    // Off by default: not listed, not callable.
    let off = listed(&ws.run(&["tools", "list"]).await);
    assert!(off.contains(&"get_datetime".to_owned()), "{off:?}");
    assert!(!off.contains(&"convert_time".to_owned()), "{off:?}");
    let refused = ws.run(&["call", "convert_time", args]).await;
    assert_ne!(refused.status.code(), Some(0));

    // On: listed with its description, and a call converts.
    configure(
        &ws,
        "  convert_time: {enabled: true}\n  dynamic: {enabled: true}\n",
    );
    let list = ws.run(&["tools", "list"]).await;
    assert!(
        listed(&list).contains(&"convert_time".to_owned()),
        "{}",
        text(&list.stdout)
    );
    assert!(
        text(&list.stdout).contains("another time zone"),
        "{}",
        text(&list.stdout)
    );
    let out = ws.run(&["--json", "call", "convert_time", args]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(
        result["metadata"]["to"], "2026-01-15T03:15:00-05:00",
        "{result}"
    );
    assert!(
        result["output"]
            .as_str()
            .unwrap()
            .contains("America/New_York"),
        "{result}"
    );

    // A model cannot make a tool of that name.
    let create = ws
        .run(&[
            "--json",
            "call",
            "create_tool",
            r#"{"name": "convert_time", "description": "Mine.", "type": "command", "source": "date"}"#,
        ])
        .await;
    let created: serde_json::Value = serde_json::from_slice(&create.stdout).unwrap();
    assert_eq!(created["success"], false, "{created}");
    assert!(
        created["error"]
            .as_str()
            .unwrap()
            .contains("`convert_time` is the name of a built-in tool"),
        "{created}"
    );

    // Switched off again: gone.
    configure(&ws, "  convert_time: {enabled: false}\n");
    let off = listed(&ws.run(&["tools", "list"]).await);
    assert!(!off.contains(&"convert_time".to_owned()), "{off:?}");
}
