//! The assistant groups as the host wires them: memory and persona files
//! in the data directory (never the workspace), the persona in the prompt,
//! and scheduled jobs run by `toolgate schedule run-due`.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

mod common;

use std::fmt::Write as _;

use serde_json::Value;

use common::{Ws, answer, chats, server, text};

fn enable(ws: &Ws, tools: &str) {
    let config = std::fs::read_to_string(ws.path().join("toolgate.yaml")).unwrap();
    std::fs::write(
        ws.path().join("toolgate.yaml"),
        format!("{config}tools:\n{tools}"),
    )
    .unwrap();
}

async fn call(ws: &Ws, tool: &str, args: &str) -> String {
    let out = ws.run(&["--mode", "yolo", "call", tool, args]).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{tool} {args}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Every file under `dir`, recursively.
fn files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[tokio::test]
async fn memory_and_persona_live_in_the_data_directory_and_the_persona_reaches_the_prompt() {
    let server = server(vec![answer("unused")]).await;
    let ws = Ws::new(&server);
    enable(
        &ws,
        "  memory: {enabled: true}\n  persona: {enabled: true}\n",
    );

    call(
        &ws,
        "save_memory",
        r#"{"fact": "The user's cat is called Miso."}"#,
    )
    .await;
    call(
        &ws,
        "update_soul",
        r#"{"content": "You answer in one short paragraph."}"#,
    )
    .await;
    let found = call(&ws, "memory_search", r#"{"query": "cat name"}"#).await;
    assert!(found.contains("Miso"), "{found}");

    // Nothing in the workspace but its config; the memory log and the
    // soul are under the data directory.
    let in_workspace: Vec<_> = files(ws.path())
        .into_iter()
        .filter(|p| !p.starts_with(ws.path().join("home")))
        .collect();
    assert_eq!(in_workspace, [ws.path().join("toolgate.yaml")]);
    let data = files(&ws.path().join("home/.local/share/toolgate"));
    assert!(data.iter().any(|p| p.ends_with("SOUL.md")), "{data:?}");
    assert!(
        data.iter()
            .any(|p| p.parent().unwrap().ends_with("memory")
                && p.extension().is_some_and(|e| e == "md")),
        "{data:?}"
    );

    // The store and the files beside it are toolgate's own: the file tools
    // neither read nor write them, even though this data directory lies
    // inside the workspace.
    let db = data.iter().find(|p| p.ends_with("toolgate.db")).unwrap();
    let soul = data.iter().find(|p| p.ends_with("SOUL.md")).unwrap();
    for file in [db.clone(), db.with_extension("db-wal"), soul.clone()] {
        let rel = file.strip_prefix(ws.path()).unwrap().display().to_string();
        for (tool, args) in [
            (
                "write_file",
                serde_json::json!({"path": rel, "content": "x"}),
            ),
            ("read_file", serde_json::json!({"path": rel})),
        ] {
            let out = ws
                .run(&["--mode", "yolo", "call", tool, &args.to_string()])
                .await;
            assert_eq!(out.status.code(), Some(1), "{tool} {rel}");
            assert!(
                text(&out.stderr).contains("toolgate's own configuration or data"),
                "{}",
                text(&out.stderr)
            );
        }
    }

    let out = ws.run(&["prompt", "show", "--json"]).await;
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let prompt = report["prompt"].as_str().unwrap();
    assert!(
        prompt.contains("You answer in one short paragraph."),
        "{prompt}"
    );
    let tools = report["tools"].to_string();
    for tool in [
        "save_memory",
        "memory_search",
        "update_soul",
        "manage_goals",
    ] {
        assert!(tools.contains(tool), "{tool}: {tools}");
    }
}

#[tokio::test]
async fn due_jobs_run_once_reminders_shown_agent_jobs_run_autonomously() {
    let server = server(vec![answer("All quiet in the repository.")]).await;
    let ws = Ws::new(&server);
    enable(&ws, "  cron: {enabled: true}\n");
    let now = jiff::Zoned::now()
        .strftime("%Y-%m-%dT%H:%M:%S%:z")
        .to_string();
    call(
        &ws,
        "cron",
        &format!(
            r#"{{"action": "add", "name": "standup", "schedule": {{"kind": "at", "at": "{now}"}}, "text": "Stand up and stretch"}}"#
        ),
    )
    .await;
    call(
        &ws,
        "cron",
        &format!(
            r#"{{"action": "add", "name": "digest", "kind": "agent", "agent": "plan", "schedule": {{"kind": "at", "at": "{now}"}}, "text": "Summarise the repository"}}"#
        ),
    )
    .await;

    let out = ws.run(&["schedule", "run-due"]).await;
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("\"standup\": ok — Stand up and stretch"),
        "{stdout}"
    );
    assert!(stdout.contains("\"digest\": ok — session "), "{stdout}");
    assert!(stdout.contains("All quiet in the repository."), "{stdout}");
    // The agent ran unattended: the autonomous preamble, the plan agent.
    let requests = chats(&server).await;
    assert_eq!(requests.len(), 1);
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("working on your own"), "{system}");
    assert!(system.contains("You are a planner."), "{system}");

    // Both ran once: nothing is due any more, and the runs are listed.
    let again = ws.run(&["schedule", "run-due"]).await;
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(text(&again.stdout), "");
    assert!(text(&again.stderr).contains("no job is due"));
    let list = ws.run(&["--json", "schedule", "list"]).await;
    let listed: Value = serde_json::from_slice(&list.stdout).unwrap();
    let outcomes: Vec<&str> = listed["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["ok", "ok"]);

    // An agent job that cannot start fails with the reason, and the
    // command says so with its exit code.
    call(
        &ws,
        "cron",
        &format!(
            r#"{{"action": "add", "name": "ghostly", "kind": "agent", "agent": "ghost", "schedule": {{"kind": "at", "at": "{now}"}}, "text": "Boo"}}"#
        ),
    )
    .await;
    let failed = ws.run(&["schedule", "run-due"]).await;
    let stdout = text(&failed.stdout);
    assert_eq!(failed.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("\"ghostly\": failed — the agent could not start"),
        "{stdout}"
    );
    assert!(stdout.contains("ghost"), "{stdout}");
}

#[tokio::test]
async fn each_group_is_listed_only_when_enabled() {
    let server = server(vec![answer("unused")]).await;
    let ws = Ws::new(&server);
    let groups: &[(&str, &[&str])] = &[
        ("web", &["web_fetch", "web_search"]),
        ("memory", &["save_memory", "memory_search", "memory_get"]),
        (
            "persona",
            &["update_soul", "update_identity", "manage_goals"],
        ),
        ("notes", &["create_note", "search_notes"]),
        ("tasks", &["create_project", "add_task", "update_plan"]),
        ("weather", &["get_weather"]),
        ("cron", &["cron"]),
        ("phone", &["phone_call"]),
    ];
    let listed = |out: &std::process::Output| -> Vec<String> {
        text(&out.stdout)
            .lines()
            .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
            .collect()
    };
    let off = listed(&ws.run(&["tools", "list"]).await);
    assert!(off.contains(&"calculator".to_owned()), "{off:?}");
    for (group, tools) in groups {
        for tool in *tools {
            assert!(
                !off.contains(&(*tool).to_owned()),
                "{group}: {tool} listed while off"
            );
        }
    }
    let mut yaml = String::new();
    for (group, _) in groups {
        writeln!(yaml, "  {group}: {{enabled: true}}").unwrap();
    }
    yaml.push_str("  calculator: {enabled: false}\n");
    enable(&ws, &yaml);
    let on = listed(&ws.run(&["tools", "list"]).await);
    for (group, tools) in groups {
        for tool in *tools {
            assert!(
                on.contains(&(*tool).to_owned()),
                "{group}: {tool} missing: {on:?}"
            );
        }
    }
    assert!(!on.contains(&"calculator".to_owned()), "{on:?}");
}

#[tokio::test]
async fn self_inspect_hides_secrets_and_disabled_tools_are_never_offered() {
    let server = server(vec![answer("unused")]).await;
    let ws = Ws::new(&server);
    enable(&ws, "  self_inspect: {enabled: true}\n");
    let config = std::fs::read_to_string(ws.path().join("toolgate.yaml")).unwrap();
    std::fs::write(
        ws.path().join("toolgate.yaml"),
        format!(
            "{config}commands:\n  env:\n    set: {{DEPLOY_TOKEN: hunter2}}\nagents:\n  build:\n    disabled_tools: [run_command, calculator]\n"
        ),
    )
    .unwrap();
    let shown = call(&ws, "self_inspect", r#"{"what": "config"}"#).await;
    assert!(!shown.contains("hunter2"), "{shown}");
    assert!(shown.contains("[redacted]"), "{shown}");
    assert!(
        shown.contains("TEST_LLM_KEY"),
        "the variable's name stays: {shown}"
    );
    let health = call(&ws, "self_inspect", r#"{"what": "health"}"#).await;
    assert!(health.contains("\"sandbox\""), "{health}");

    let out = ws.run(&["tools", "list", "--agent", "build"]).await;
    let listed = text(&out.stdout);
    assert!(listed.contains("self_inspect"), "{listed}");
    for gone in ["run_command", "calculator"] {
        assert!(
            !listed.lines().any(|l| l.starts_with(&format!("{gone} "))),
            "{gone}: {listed}"
        );
    }
    assert!(
        listed.lines().any(|l| l.starts_with("process ")),
        "{listed}"
    );
}
