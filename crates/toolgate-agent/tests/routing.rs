//! Intent routing: the reading of a classifier's answer and the fair
//! selection of tools as case tables, and seed 003's cases of the
//! classification call against a scripted model server on 127.0.0.1.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use common::{answer, bodies, server, settings};
use serde_json::Value;
use toolgate_agent::{
    CLASSIFY_MAX_TOKENS, IntentAnswer, LlmClient, OpenAiClient, RouteReason, Routed, Router,
    RoutingConfig, RoutingError, parse_intent, select_tools,
};
use wiremock::ResponseTemplate;

fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|&n| n.to_owned()).collect()
}

/// Tool groups as the host passes them: name → tool names, in priority
/// order.
fn groups() -> Vec<(&'static str, Vec<String>)> {
    vec![
        (
            "files",
            strings(&["read_file", "write_file", "list_files", "edit_file"]),
        ),
        ("search", strings(&["search_code", "grep", "find_files"])),
        ("datetime", strings(&["get_datetime"])),
        ("weather", strings(&["get_weather", "get_forecast"])),
        ("calculator", strings(&["calculate"])),
    ]
}

/// A `routing:` section that adds a `math` category (seed 003's name for
/// the calculator).
fn config(max_tools: usize) -> RoutingConfig {
    let mut config: RoutingConfig = serde_json::from_value(serde_json::json!({
        "enabled": true,
        "max_tools": max_tools,
        "categories": {"math": ["calculate"]},
    }))
    .unwrap();
    config.default_categories = strings(&["files", "search"]);
    config
}

#[test]
fn answers_are_read_tolerantly() {
    let known = ["files", "search", "weather", "math", "notes"];
    let cats = |names: &[&str]| IntentAnswer::Categories(strings(names));
    let cases: &[(&str, IntentAnswer)] = &[
        ("weather", cats(&["weather"])),
        ("WEATHER", cats(&["weather"])),
        ("weather, math, bogus", cats(&["weather", "math"])),
        ("math,weather", cats(&["math", "weather"])),
        ("weather\nmath\n", cats(&["weather", "math"])),
        (r#"["Weather", "MATH"]"#, cats(&["weather", "math"])),
        ("'files' 'search'", cats(&["files", "search"])),
        ("- files\n- search", cats(&["files", "search"])),
        ("Categories: files.", cats(&["files"])),
        ("weather, weather, Weather", cats(&["weather"])),
        ("file, note", cats(&["files", "notes"])),
        ("weather, none", cats(&["weather"])),
        (
            "<think>maybe files? no</think>\nweather",
            cats(&["weather"]),
        ),
        ("none", IntentAnswer::None),
        ("None.", IntentAnswer::None),
        ("`none`", IntentAnswer::None),
        ("", IntentAnswer::Unrecognised),
        ("   \n ", IntentAnswer::Unrecognised),
        ("bogus, stuff", IntentAnswer::Unrecognised),
        ("<think>files, search", IntentAnswer::Unrecognised),
        ("filesystem", IntentAnswer::Unrecognised),
    ];
    for (answer, expected) in cases {
        assert_eq!(parse_intent(answer, &known), *expected, "{answer:?}");
    }
}

/// (categories, pinned, available, `max_tools`, expected)
type SelectCase<'a> = (
    &'a [&'a [&'a str]],
    &'a [&'a str],
    &'a [&'a str],
    usize,
    &'a [&'a str],
);

#[test]
fn tools_are_spread_fairly_across_categories() {
    let files: &[&str] = &["read_file", "write_file", "list_files"];
    let search: &[&str] = &["search_code", "grep"];
    let all = [
        "read_file",
        "write_file",
        "list_files",
        "search_code",
        "grep",
        "skill",
        "delegate",
    ];
    let cases: &[SelectCase] = &[
        // Seed 003's case: three tools over two categories.
        (
            &[files, search],
            &[],
            &all,
            3,
            &["read_file", "search_code", "write_file"],
        ),
        // Priority follows the order of the categories.
        (
            &[search, files],
            &[],
            &all,
            3,
            &["search_code", "read_file", "grep"],
        ),
        // Everything fits: every tool once.
        (
            &[files, search],
            &[],
            &all,
            8,
            &[
                "read_file",
                "search_code",
                "write_file",
                "grep",
                "list_files",
            ],
        ),
        // Pinned tools come first and count towards the limit.
        (
            &[files, search],
            &["skill", "delegate"],
            &all,
            3,
            &["skill", "delegate", "read_file"],
        ),
        // A tool in two categories, or pinned, is chosen once; the
        // category that loses it offers its next tool in that turn.
        (
            &[&["grep", "read_file"], search],
            &["grep"],
            &all,
            4,
            &["grep", "read_file", "search_code"],
        ),
        // Unavailable tools are skipped, pinned ones too.
        (
            &[files, search],
            &["skill"],
            &["write_file", "grep"],
            8,
            &["write_file", "grep"],
        ),
        (&[], &[], &all, 8, &[]),
        (&[files], &[], &all, 0, &[]),
    ];
    for (categories, pinned, available, max, expected) in cases {
        assert_eq!(
            select_tools(categories, pinned, available, *max),
            strings(expected),
            "{categories:?} pinned {pinned:?} max {max}"
        );
    }
}

#[test]
fn categories_are_the_groups_with_the_overrides() {
    let mut cfg = config(8);
    cfg.categories
        .insert("weather".into(), strings(&["get_forecast"]));
    cfg.categories.insert("datetime".into(), Vec::new());
    cfg.categories
        .insert("home".into(), strings(&["lights", "nothing_here"]));
    let router = Router::builder(groups())
        .config(&cfg)
        .available([
            "read_file",
            "list_files",
            "search_code",
            "get_datetime",
            "get_forecast",
            "calculate",
            "lights",
            "skill",
        ])
        .pinned(["skill", "delegate"])
        .build()
        .unwrap();
    let cats: Vec<(&str, Vec<&str>)> = router
        .categories()
        .map(|(n, t)| (n, t.iter().map(String::as_str).collect()))
        .collect();
    assert_eq!(
        cats,
        vec![
            ("files", vec!["read_file", "list_files"]),
            ("search", vec!["search_code"]),
            ("weather", vec!["get_forecast"]),
            ("calculator", vec!["calculate"]),
            ("home", vec!["lights"]),
            ("math", vec!["calculate"]),
        ]
    );
    // `delegate` is not available to this agent, so it is not pinned.
    assert_eq!(
        router.tools_for(&strings(&["weather", "files"])),
        strings(&["skill", "get_forecast", "read_file", "list_files"])
    );
    let prompt = router.prompt();
    assert!(
        prompt.contains("- files: read_file, list_files\n"),
        "{prompt}"
    );
    assert!(prompt.contains("- home: lights\n"), "{prompt}");
    assert!(!prompt.contains("datetime"), "{prompt}");
    assert!(!prompt.contains("write_file"), "{prompt}");
}

#[test]
fn default_categories_that_do_not_exist_fall_back_to_all() {
    let cfg = RoutingConfig {
        default_categories: strings(&["phone", "web"]),
        ..RoutingConfig::default()
    };
    let router = Router::builder(groups()).config(&cfg).build().unwrap();
    assert_eq!(
        router.default_categories(),
        strings(&["files", "search", "datetime", "weather", "calculator"])
    );
    // The built-in default keeps the coding groups that exist.
    let router = Router::builder(groups())
        .config(&RoutingConfig::default())
        .build()
        .unwrap();
    assert_eq!(router.default_categories(), strings(&["files", "search"]));
}

/// A change to the default configuration.
type Change = dyn Fn(&mut RoutingConfig);

#[test]
fn configurations_that_cannot_route_are_refused() {
    let with = |f: &Change| {
        let mut cfg = RoutingConfig::default();
        f(&mut cfg);
        Router::builder(groups())
            .config(&cfg)
            .pinned(["read_file", "grep"])
            .build()
            .err()
            .map(|e| e.to_string())
    };
    let cases: &[(&Change, Option<&str>)] = &[
        (&|_| {}, None),
        (
            &|c| c.max_tools = 0,
            Some("`routing.max_tools` must be at least 1"),
        ),
        (
            &|c| c.max_tools = 2,
            Some("`routing.max_tools` (2) leaves no room beside the 2 always-offered tools"),
        ),
        (
            &|c| {
                c.categories.insert("Smart Home".into(), strings(&["x"]));
            },
            Some("`Smart Home` is not a valid category name"),
        ),
        (
            &|c| {
                c.categories.insert("none".into(), strings(&["x"]));
            },
            Some("`none` is not a valid category name"),
        ),
    ];
    for (i, (change, expected)) in cases.iter().enumerate() {
        let got = with(change);
        match (got, expected) {
            (None, None) => {}
            (Some(got), Some(expected)) => assert!(got.starts_with(expected), "case {i}: {got}"),
            (got, expected) => panic!("case {i}: got {got:?}, expected {expected:?}"),
        }
    }
    let none = Router::builder(groups()).available(["echo"]).build();
    assert!(matches!(none, Err(RoutingError::NoCategories)), "{none:?}");
}

#[test]
fn routing_config_defaults_and_unknown_keys() {
    let cfg: RoutingConfig = serde_json::from_str("{}").unwrap();
    assert_eq!(cfg, RoutingConfig::default());
    assert!(!cfg.enabled);
    assert_eq!(cfg.max_tools, 8);
    assert_eq!(
        cfg.default_categories,
        strings(&["files", "search", "commands"])
    );
    assert_eq!(cfg.model, None);
    let err = serde_json::from_str::<RoutingConfig>(r#"{"max_tool": 3}"#).unwrap_err();
    assert!(
        err.to_string().contains("unknown field `max_tool`"),
        "{err}"
    );
    let back: RoutingConfig =
        serde_json::from_value(serde_json::to_value(config(3)).unwrap()).unwrap();
    assert_eq!(back, config(3));
}

/// What the scripted classifier answers.
enum Reply {
    Text(&'static str),
    Status(u16),
}

/// (reply, previous turn's categories, `max_tools`, expected categories,
/// expected tools, expected rule)
type ClassifyCase<'a> = (
    Reply,
    &'a [&'a str],
    usize,
    &'a [&'a str],
    &'a [&'a str],
    &'a str,
);

/// Seed 003's cases of the classification call.
#[tokio::test]
async fn classify_case_table() {
    let defaults = ["files", "search"];
    let default_tools = [
        "read_file",
        "search_code",
        "write_file",
        "grep",
        "list_files",
        "find_files",
        "edit_file",
    ];
    let cases: &[ClassifyCase] = &[
        (
            Reply::Text("WEATHER"),
            &[],
            8,
            &["weather"],
            &["get_weather", "get_forecast"],
            "classified",
        ),
        (
            Reply::Text("weather, math, bogus"),
            &[],
            8,
            &["weather", "math"],
            &["get_weather", "calculate", "get_forecast"],
            "classified",
        ),
        (
            Reply::Text(""),
            &["weather"],
            8,
            &defaults,
            &default_tools,
            "unrecognised",
        ),
        (
            Reply::Text("I cannot help with that."),
            &[],
            8,
            &defaults,
            &default_tools,
            "unrecognised",
        ),
        (
            Reply::Status(500),
            &["weather"],
            8,
            &defaults,
            &default_tools,
            "failed",
        ),
        (
            Reply::Status(401),
            &[],
            3,
            &defaults,
            &["read_file", "search_code", "write_file"],
            "failed",
        ),
        // `none` keeps the previous turn's categories (sticky), dropping
        // the ones that no longer exist.
        (
            Reply::Text("none"),
            &["datetime", "gone", "datetime", "weather"],
            8,
            &["datetime", "weather"],
            &["get_datetime", "get_weather", "get_forecast"],
            "sticky",
        ),
        // `none` on the first turn: plain chat, no tools at all.
        (Reply::Text("none"), &[], 8, &[], &[], "chat"),
        (Reply::Text("None."), &["gone"], 8, &[], &[], "chat"),
        // max_tools = 3 over two categories.
        (
            Reply::Text("files, search"),
            &[],
            3,
            &["files", "search"],
            &["read_file", "search_code", "write_file"],
            "classified",
        ),
    ];
    for (i, (reply, previous, max_tools, categories, tools, rule)) in cases.iter().enumerate() {
        let template = match reply {
            Reply::Text(text) => answer(text),
            Reply::Status(status) => ResponseTemplate::new(*status).set_body_string("down"),
        };
        let server = server("/v1/chat/completions", vec![template]).await;
        let mut http = settings(&server, false);
        http.max_retries = 1;
        let llm = OpenAiClient::new(http);
        let router = Router::builder(groups())
            .config(&config(*max_tools))
            .build()
            .unwrap();
        let message = format!("case {i}: what now?");
        let routed: Routed = router
            .classify(&llm as &dyn LlmClient, &message, &strings(previous))
            .await;
        assert_eq!(routed.categories, strings(categories), "case {i}");
        assert_eq!(routed.tools, strings(tools), "case {i}");
        let got_rule = serde_json::to_value(&routed.reason).unwrap()["rule"].clone();
        assert_eq!(got_rule, *rule, "case {i}: {}", routed.reason);

        // One cheap call: no tools, a small answer, the categories listed,
        // the message as the user's. A 5xx is retried by the client; a
        // refusal is not.
        let sent = bodies(&server).await;
        let expected_calls = match reply {
            Reply::Status(s) if *s >= 500 => 2,
            _ => 1,
        };
        assert_eq!(sent.len(), expected_calls, "case {i}");
        let body = &sent[0];
        assert_eq!(body.get("tools"), None, "case {i}");
        assert_eq!(body["max_tokens"], CLASSIFY_MAX_TOKENS, "case {i}");
        let system = body["messages"][0]["content"].as_str().unwrap();
        assert!(system.contains("- weather: get_weather, get_forecast\n"));
        assert!(system.contains("- math: calculate\n"));
        assert!(system.contains("Answer none if the message needs no tool."));
        assert_eq!(body["messages"][1]["role"], "user");
        assert_eq!(body["messages"][1]["content"], Value::from(message));
    }
}

#[tokio::test]
async fn failure_reason_names_the_error() {
    let server = server(
        "/v1/chat/completions",
        vec![ResponseTemplate::new(401).set_body_string("no")],
    )
    .await;
    let llm = OpenAiClient::new(settings(&server, false));
    let router = Router::builder(groups()).build().unwrap();
    let routed = router.classify(&llm, "hi", &[]).await;
    let RouteReason::Failed { error } = &routed.reason else {
        panic!("{:?}", routed.reason);
    };
    assert!(error.contains("HTTP 401"), "{error}");
    assert!(
        routed.reason.to_string().contains("the default categories"),
        "{}",
        routed.reason
    );
}

#[tokio::test]
async fn a_long_message_is_cut_to_its_ends() {
    let server = server("/v1/chat/completions", vec![answer("files")]).await;
    let llm = OpenAiClient::new(settings(&server, true));
    let router = Router::builder(groups()).build().unwrap();
    let message = format!(
        "{}\nPlease fix the bug in main.rs",
        "log line\n".repeat(5000)
    );
    let routed = router.classify(&llm, &message, &[]).await;
    assert_eq!(routed.reason, RouteReason::Classified);
    let sent = bodies(&server).await;
    let user = sent[0]["messages"][1]["content"].as_str().unwrap();
    assert!(user.len() < 4100, "{}", user.len());
    assert!(user.starts_with("log line\n"));
    assert!(user.ends_with("Please fix the bug in main.rs"));
}
