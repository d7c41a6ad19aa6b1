//! The system prompt and the size of what every request carries:
//! `toolgate prompt show` and the first request of `toolgate run`, against
//! the scripted model server.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

mod common;

use serde_json::Value;

use common::{Ws, answer, chats, server, text};

/// toolgate's token estimate: 3.5 bytes a token, rounded up.
fn tokens(bytes: usize) -> usize {
    (bytes * 2).div_ceil(7)
}

async fn prompt_json(ws: &Ws, extra: &[&str]) -> Value {
    let mut args = vec!["prompt", "show", "--json"];
    args.extend_from_slice(extra);
    let out = ws.run(&args).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test]
async fn the_prompt_has_the_hierarchy_the_environment_and_the_blocks_of_enabled_groups() {
    let server = server(vec![answer("unused")]).await;
    let ws = Ws::new(&server);
    std::fs::create_dir(ws.path().join(".git")).unwrap();
    // An AGENTS.md far over the cap: its start is kept, its end is not.
    let agents = format!(
        "Run `make check` before you finish.\n{}THE END",
        "x".repeat(10_000)
    );
    std::fs::write(ws.path().join("AGENTS.md"), agents).unwrap();

    let report = prompt_json(&ws, &[]).await;
    let prompt = report["prompt"].as_str().unwrap();
    let at = |s: &str| {
        prompt
            .find(s)
            .unwrap_or_else(|| panic!("{s:?} not in:\n{prompt}"))
    };
    // The edit hierarchy, in order.
    assert!(at("1. edit_file") < at("2. apply_patch"));
    assert!(at("2. apply_patch") < at("3. write_file"));
    // The environment.
    let root = ws.path().canonicalize().unwrap();
    at(&format!("- workspace: {}", root.display()));
    at("- git repository: yes");
    at("- system: linux, shell bash");
    at("- sandbox: ");
    let today = jiff::Zoned::now().strftime("%Y-%m-%d").to_string();
    assert!(at("- now: ") < at(&today));
    // One block per enabled group: files, search, datetime, commands,
    // calculator.
    for block in [
        "## Files",
        "## Finding code",
        "## Date and time",
        "## Commands",
        "## Calculator",
    ] {
        assert_eq!(prompt.matches(block).count(), 1, "{block}:\n{prompt}");
    }
    // AGENTS.md, capped.
    at("Run `make check` before you finish.");
    at("[… AGENTS.md cut here]");
    assert!(!prompt.contains("THE END"));
    assert!(prompt.len() < 4096 + 3000, "{} bytes", prompt.len());
    // Sizes as estimated, and the diagnostic echo never offered.
    assert_eq!(report["prompt_tokens"], tokens(prompt.len()));
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(tools.contains(&"run_command") && tools.contains(&"calculator"));
    assert!(!tools.contains(&"echo"), "{tools:?}");
    assert!(report["tools_tokens"].as_u64().unwrap() > 1000);

    // Groups off, blocks gone: no commands, no calculator, no clock; a
    // read-only agent gets no edit hierarchy and no search block.
    let config = std::fs::read_to_string(ws.path().join("toolgate.yaml")).unwrap();
    std::fs::write(
        ws.path().join("toolgate.yaml"),
        format!(
            "{config}tools:\n  calculator: {{enabled: false}}\n  datetime: {{enabled: false}}\nagents:\n  reader:\n    allowed_tools: [read_file, list_files]\n"
        ),
    )
    .unwrap();
    let lean = prompt_json(&ws, &["--no-commands"]).await;
    let lean_prompt = lean["prompt"].as_str().unwrap();
    assert!(lean_prompt.contains("## Finding code"), "{lean_prompt}");
    for gone in ["## Date and time", "## Commands", "## Calculator"] {
        assert!(!lean_prompt.contains(gone), "{gone}:\n{lean_prompt}");
    }
    let reader = prompt_json(&ws, &["--agent", "reader"]).await;
    let reader_prompt = reader["prompt"].as_str().unwrap();
    for gone in ["1. edit_file", "## Finding code", "## Commands"] {
        assert!(!reader_prompt.contains(gone), "{gone}:\n{reader_prompt}");
    }
    assert!(reader_prompt.contains("## Files"), "{reader_prompt}");
    assert_eq!(
        reader["tools"],
        serde_json::json!(["list_files", "read_file"])
    );
}

#[tokio::test]
async fn the_build_agents_first_request_is_at_most_3000_tokens() {
    let server = server(vec![answer("Nothing to do.")]).await;
    let ws = Ws::new(&server);
    let task = "The test in tests/test_version.py fails: fix src/version.py so that it passes.";
    let out = ws.run(&["--json", "run", task]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let requests = chats(&server).await;
    let first: Value = serde_json::from_slice(&requests[0].body).unwrap();
    let messages = serde_json::to_string(&first["messages"]).unwrap().len();
    let tools = serde_json::to_string(&first["tools"]).unwrap().len();
    let offered = first["tools"].as_array().unwrap().len();
    let total = tokens(messages) + tokens(tools);
    println!(
        "build agent's first request: messages {messages} bytes (≈{} tokens) + {offered} tool schemas {tools} bytes (≈{} tokens) = ≈{total} tokens",
        tokens(messages),
        tokens(tools)
    );
    assert!(total <= 3000, "≈{total} tokens");
    let names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"echo"), "{names:?}");
    assert!(
        names.contains(&"edit_file") && names.contains(&"run_command"),
        "{names:?}"
    );

    // `run --json` says the same before the first step.
    let start: Value = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "start")
        .unwrap();
    let request = &start["request"];
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert_eq!(request["prompt_tokens"], tokens(system.len()));
    assert_eq!(request["tools_tokens"], tokens(tools));
    assert_eq!(request["tools"].as_array().unwrap().len(), offered);
    assert!(request["window"].as_u64().unwrap() >= 4096);
}

#[tokio::test]
async fn the_small_profiles_first_request_is_at_most_1200_tokens() {
    let server = server(vec![answer("Nothing to do.")]).await;
    let ws = Ws::new(&server);
    let config = std::fs::read_to_string(ws.path().join("toolgate.yaml")).unwrap();
    std::fs::write(
        ws.path().join("toolgate.yaml"),
        // The scripted model answers without changing anything, which the
        // task checks would refuse: this test is about the request.
        format!("{config}agents:\n  build:\n    profile: small\n    task_checks: false\n"),
    )
    .unwrap();
    let task = "The test in tests/test_version.py fails: fix src/version.py so that it passes.";
    let out = ws.run(&["--json", "run", task]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let requests = chats(&server).await;
    let first: Value = serde_json::from_slice(&requests[0].body).unwrap();
    let names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "list_files",
            "read_file",
            "run_command",
            "search_code",
            "write_file",
            "finish"
        ]
    );
    // As the window guard counts a request: its JSON at 3 bytes a token,
    // the whole body (prompt, task, schemas, envelope).
    let bytes = serde_json::to_string(&first).unwrap().len();
    let total = bytes.div_ceil(toolgate_agent::WIRE_BYTES_PER_TOKEN);
    println!("small profile's first request: {bytes} bytes = {total} tokens");
    assert!(total <= 1_200, "{total} tokens: {first}");
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("exactly one tool call per reply"),
        "{system}"
    );
    assert!(!system.contains("## Files"), "{system}");
}
