//! Skills as `toolgate run` and `toolgate skills` use them, against the
//! scripted model server: only names and descriptions are in the prompt; a
//! body reaches the model when the skill is activated, or with the first
//! result of a tool it names, once; broken frontmatter is reported with its
//! file and line; the user's skills directory is readable, not writable, by
//! sandboxed commands.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

mod common;

use std::path::Path;

use serde_json::Value;

use common::{Ws, answer, chat_bodies, offered, server, text, tool_call};

fn skill(root: &Path, name: &str, frontmatter: &str, body: &str) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\n{frontmatter}---\n{body}\n"),
    )
    .unwrap();
}

/// Every text the model was sent in `request`: system prompt, messages,
/// tool results.
fn sent(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_body_reaches_the_model_only_when_activated_or_its_tool_is_first_used() {
    let server = server(vec![
        tool_call("c1", "skill", r#"{"name": "release-notes"}"#),
        tool_call("c2", "read_file", r#"{"path": "data.csv"}"#),
        tool_call("c3", "read_file", r#"{"path": "data.csv"}"#),
        answer("Done."),
    ])
    .await;
    let ws = Ws::new(&server);
    let skills = ws.path().join(".agents/skills");
    skill(
        &skills,
        "release-notes",
        "description: Write release notes from the git log.\n",
        "BODY-RELEASE: group the commits by kind.",
    );
    skill(
        &skills,
        "csv-report",
        "description: Summarise CSV files.\nallowed-tools: read_file\n",
        "BODY-CSV: count the rows first.",
    );
    std::fs::write(ws.path().join("data.csv"), "a,b\n1,2\n").unwrap();

    let out = ws.run(&["--json", "run", "Write the notes"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let requests = chat_bodies(&server).await;
    assert_eq!(requests.len(), 4);

    // First request: the catalog (names and descriptions), the skill tool,
    // no body.
    let first = sent(&requests[0]);
    assert!(
        first.contains("- release-notes: Write release notes from the git log."),
        "{first}"
    );
    assert!(
        first.contains("- csv-report: Summarise CSV files."),
        "{first}"
    );
    assert!(!first.contains("BODY-"), "{first}");
    let tools = offered(&requests[0]);
    assert!(tools.iter().any(|t| t == "skill"), "{tools:?}");

    // After `skill(release-notes)`: that body, not the other.
    let second = sent(&requests[1]);
    assert_eq!(second.matches("BODY-RELEASE").count(), 1, "{second}");
    assert!(!second.contains("BODY-CSV"), "{second}");

    // The first read_file brings csv-report's body with its result, once.
    let third = sent(&requests[2]);
    assert_eq!(third.matches("BODY-CSV").count(), 1, "{third}");
    let last_result = requests[2]["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(last_result.contains("a,b"), "{last_result}");
    assert!(last_result.contains("BODY-CSV"), "{last_result}");
    let fourth = sent(&requests[3]);
    assert_eq!(fourth.matches("BODY-CSV").count(), 1, "{fourth}");
    assert_eq!(fourth.matches("BODY-RELEASE").count(), 1, "{fourth}");
}

#[tokio::test]
async fn skills_list_show_create_and_install() {
    let server = server(vec![]).await;
    let ws = Ws::new(&server);
    let skills = ws.path().join(".agents/skills");

    // create, then list and show it.
    let out = ws
        .run(&[
            "skills",
            "create",
            "release-notes",
            "--description",
            "Write release notes from the git log.",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(skills.join("release-notes/SKILL.md").is_file());
    let out = ws.run(&["skills", "list"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("release-notes"),
        "{}",
        text(&out.stdout)
    );
    let out = ws.run(&["--json", "skills", "show", "release-notes"]).await;
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        shown["description"],
        "Write release notes from the git log."
    );
    assert_eq!(shown["origin"], "workspace");
    // Creating it again touches nothing.
    let before = std::fs::read(skills.join("release-notes/SKILL.md")).unwrap();
    let out = ws
        .run(&["skills", "create", "release-notes", "-d", "Other."])
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        std::fs::read(skills.join("release-notes/SKILL.md")).unwrap(),
        before
    );
    // A bad name says which rule.
    let out = ws.run(&["skills", "create", "Bad_Name", "-d", "x"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("Bad_Name"),
        "{}",
        text(&out.stderr)
    );

    // install PATH: a directory elsewhere.
    let elsewhere = tempfile::tempdir().unwrap();
    skill(
        elsewhere.path(),
        "csv-report",
        "description: Summarise CSV files.\n",
        "Count rows.",
    );
    let source = elsewhere.path().join("csv-report");
    let out = ws
        .run(&["skills", "install", source.to_str().unwrap()])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(skills.join("csv-report/SKILL.md").is_file());

    // install URL goes through web_fetch's SSRF checks: loopback refused.
    let out = ws
        .run(&["skills", "install", &format!("{}/SKILL.md", server.uri())])
        .await;
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("could not download"), "{err}");
    // Nothing was written, not even a temporary directory.
    let mut entries: Vec<String> = std::fs::read_dir(&skills)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    assert_eq!(entries, ["csv-report", "release-notes"]);

    // A broken skill: listed as skipped with its file and line, exit 1; the
    // others are still listed.
    std::fs::create_dir_all(skills.join("broken")).unwrap();
    std::fs::write(
        skills.join("broken/SKILL.md"),
        "---\ndescription: Broken.\nname: Broken\n---\nbody\n",
    )
    .unwrap();
    let out = ws.run(&["skills", "list"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("broken/SKILL.md:3"), "{err}");
    assert!(text(&out.stdout).contains("csv-report"));
}

#[tokio::test]
async fn user_skills_are_readable_not_writable_by_commands() {
    let server = server(vec![]).await;
    let ws = Ws::new(&server);
    let home = tempfile::tempdir().unwrap();
    let root = home.path().join(".agents/skills");
    skill(
        &root,
        "greet",
        "description: Greets.\n",
        "Run scripts/hello.sh.",
    );
    std::fs::create_dir_all(root.join("greet/scripts")).unwrap();
    std::fs::write(
        root.join("greet/scripts/hello.sh"),
        "echo hello-from-skill\n",
    )
    .unwrap();
    let script = root.join("greet/scripts/hello.sh");

    let call = |command: String| {
        let mut cmd = ws.command(env!("CARGO_BIN_EXE_toolgate"));
        cmd.env("HOME", home.path()).args([
            "--json",
            "call",
            "run_command",
            &serde_json::json!({ "command": command }).to_string(),
        ]);
        common::output(cmd)
    };
    let out = call(format!("bash {}", script.display())).await;
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["success"], true, "{result}");
    assert!(
        result["output"]
            .as_str()
            .unwrap()
            .contains("hello-from-skill"),
        "{result}"
    );
    let target = root.join("greet/scripts/new.sh");
    let out = call(format!("echo pwned > {}", target.display())).await;
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["success"], false, "{result}");
    assert!(!target.exists());
}
