//! Provider fallback and intent routing as `toolgate run` uses them,
//! against scripted model servers on 127.0.0.1.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

mod common;

use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use common::{Ws, answer, chats, offered, server, text};

fn append(ws: &Ws, yaml: &str) {
    let config = std::fs::read_to_string(ws.path().join("toolgate.yaml")).unwrap();
    std::fs::write(ws.path().join("toolgate.yaml"), format!("{config}{yaml}")).unwrap();
}

fn events(stdout: &[u8]) -> Vec<Value> {
    text(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

async fn session_events(ws: &Ws, id: &str) -> Vec<Value> {
    let out = ws.run(&["--json", "sessions", "show", id]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    shown["events"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_failing_model_falls_back_and_the_switch_is_an_event_and_recorded() {
    let primary = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(503).set_body_string("overloaded"))
        .mount(&primary)
        .await;
    let backup = server(vec![answer("The backup answered.")]).await;
    let ws = Ws::new(&primary);
    append(
        &ws,
        &format!(
            "  fallback:\n    - {{model: small, base_url: '{}/v1', name: backup}}\n",
            backup.uri()
        ),
    );
    // `llm:` is the last section of the workspace file: the entry lands in it.
    let out = ws.run(&["--json", "run", "Say something"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let events = events(&out.stdout);
    let switches = of_type(&events, "provider_switch");
    assert_eq!(switches.len(), 1, "{events:?}");
    let port = primary.address().port();
    assert_eq!(switches[0]["from"], format!("scripted@127.0.0.1:{port}"));
    assert_eq!(switches[0]["to"], "backup");
    assert_eq!(switches[0]["reason"]["kind"], "failed");
    let done = events.last().unwrap();
    assert_eq!(done["final_text"], "The backup answered.");
    // The backup got the request with its own model name.
    let sent: Value = serde_json::from_slice(&chats(&backup).await[0].body).unwrap();
    assert_eq!(sent["model"], "small");

    let session = done["session"].as_str().unwrap();
    let recorded = session_events(&ws, session).await;
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(
        (recorded[0]["kind"].as_str(), recorded[0]["step"].as_u64()),
        (Some("provider_switch"), Some(1))
    );
    assert_eq!(recorded[0]["data"]["to"], "backup");

    // A fallback entry whose key variable is not set fails before the run.
    append(
        &ws,
        "    - {model: other, base_url: 'http://127.0.0.1:9/v1', api_key_env: TOOLGATE_TEST_UNSET_KEY}\n",
    );
    let out = ws.run(&["run", "Say something"]).await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("TOOLGATE_TEST_UNSET_KEY"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test]
async fn routing_offers_only_the_classified_categories_and_keeps_them_on_none() {
    let server = server(vec![
        answer("search"),
        answer("Nothing matches."),
        answer("none"),
        answer("Still nothing."),
    ])
    .await;
    let ws = Ws::new(&server);
    std::fs::write(
        ws.path().join("toolgate.yaml"),
        format!(
            "{}routing:\n  enabled: true\n  max_tools: 2\n",
            std::fs::read_to_string(ws.path().join("toolgate.yaml")).unwrap()
        ),
    )
    .unwrap();
    let out = ws
        .run(&["--json", "run", "Where is load_config defined?"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let run = events(&out.stdout);

    let requests = chats(&server).await;
    assert_eq!(requests.len(), 2);
    let classify: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(offered(&classify), Vec::<String>::new());
    assert_eq!(classify["max_tokens"], 64);
    let step: Value = serde_json::from_slice(&requests[1].body).unwrap();
    let tools = offered(&step);
    assert_eq!(tools.len(), 2, "{tools:?}");
    for tool in &tools {
        assert!(
            ["search_code", "grep", "find_files"].contains(&tool.as_str()),
            "{tools:?}"
        );
    }
    let routed = of_type(&run, "routed");
    assert_eq!(routed.len(), 1);
    assert_eq!(routed[0]["categories"], serde_json::json!(["search"]));
    assert_eq!(routed[0]["reason"]["rule"], "classified");
    let steps = of_type(&run, "step");
    let mut step_tools: Vec<String> = steps[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    step_tools.sort();
    let mut sent = tools.clone();
    sent.sort();
    assert_eq!(step_tools, sent);

    // The next turn answers `none`: the categories stick.
    let session = run.last().unwrap()["session"].as_str().unwrap().to_owned();
    let out = ws
        .run(&["--json", "sessions", "resume", &session, "And load_cache?"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let resumed = events(&out.stdout);
    let routed = of_type(&resumed, "routed");
    assert_eq!(routed[0]["reason"]["rule"], "sticky");
    assert_eq!(routed[0]["categories"], serde_json::json!(["search"]));
    let requests = chats(&server).await;
    let again: Value = serde_json::from_slice(&requests[3].body).unwrap();
    assert_eq!(offered(&again), tools);

    let recorded = session_events(&ws, &session).await;
    let kinds: Vec<(&str, u64)> = recorded
        .iter()
        .map(|e| (e["kind"].as_str().unwrap(), e["run"].as_u64().unwrap()))
        .collect();
    assert_eq!(kinds, [("routed", 1), ("routed", 2)]);
}
