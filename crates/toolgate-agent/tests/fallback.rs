//! Provider fallback against scripted model servers on 127.0.0.1: which
//! errors move a request to the next provider and which are returned at
//! once, providers without tools, the switch reports, and stickiness.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use std::sync::{Arc, Mutex};

use common::{answer, bodies, server, settings, sse};
use serde_json::json;
use toolgate_agent::{
    ApiKey, FallbackClient, FallbackEntry, FallbackError, HttpSettings, LlmClient, LlmError,
    LlmRequest, Message, OpenAiClient, ProviderKind, ProviderSwitch, Role, SwitchReason,
    is_provider_failure,
};
use wiremock::{MockServer, ResponseTemplate};

const CHAT: &str = "/v1/chat/completions";

/// A client of `server` that retries once.
fn client(server: &MockServer) -> Arc<dyn LlmClient> {
    let mut s = settings(server, false);
    s.max_retries = 1;
    Arc::new(OpenAiClient::new(s))
}

fn request(tools: bool) -> LlmRequest {
    let tools = if tools {
        vec![json!({"type": "function", "function": {"name": "read_file",
            "description": "Read a file.", "parameters": {"type": "object"}}})]
    } else {
        Vec::new()
    };
    LlmRequest {
        messages: vec![Message::text(Role::User, "hello")],
        tools,
        max_tokens: None,
        must_call: false,
        barred: Vec::new(),
        penalize_repeats: false,
    }
}

/// A fallback client over `(name, server, tools)`, and the switches it
/// reports.
fn fallback(
    providers: &[(&str, &MockServer, bool)],
) -> (FallbackClient, Arc<Mutex<Vec<ProviderSwitch>>>) {
    let switches = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&switches);
    let mut builder = FallbackClient::builder().on_switch(Arc::new(move |s: &ProviderSwitch| {
        seen.lock().unwrap().push(s.clone());
    }));
    for (name, server, tools) in providers {
        builder = builder.provider(*name, client(server), *tools);
    }
    (builder.build().unwrap(), switches)
}

async fn asked(server: &MockServer) -> usize {
    bodies(server).await.len()
}

/// `(from, to, reason kind)` of each switch.
fn hops(switches: &Mutex<Vec<ProviderSwitch>>) -> Vec<(String, String, String)> {
    switches
        .lock()
        .unwrap()
        .iter()
        .map(|s| {
            let kind = serde_json::to_value(&s.reason).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_owned();
            (s.from.clone(), s.to.clone(), kind)
        })
        .collect()
}

fn hop(from: &str, to: &str, kind: &str) -> (String, String, String) {
    (from.to_owned(), to.to_owned(), kind.to_owned())
}

async fn complete(llm: &FallbackClient, tools: bool) -> Result<String, LlmError> {
    llm.complete(&request(tools), &|_| {})
        .await
        .map(|r| r.content)
}

#[tokio::test]
async fn no_switch_on_success() {
    let a = server(CHAT, vec![answer("from a")]).await;
    let b = server(CHAT, vec![answer("from b")]).await;
    let (llm, switches) = fallback(&[("a", &a, true), ("b", &b, true)]);
    for tools in [true, false] {
        assert_eq!(complete(&llm, tools).await.unwrap(), "from a");
    }
    assert_eq!(llm.current(), "a");
    assert!(switches.lock().unwrap().is_empty());
    assert_eq!((asked(&a).await, asked(&b).await), (2, 0));
}

#[tokio::test]
async fn a_server_error_after_retries_moves_to_the_next_provider_and_sticks() {
    let a = server(
        CHAT,
        vec![ResponseTemplate::new(500).set_body_string("boom")],
    )
    .await;
    let b = server(CHAT, vec![answer("from b")]).await;
    let (llm, switches) = fallback(&[("a", &a, true), ("b", &b, true)]);
    assert_eq!(complete(&llm, true).await.unwrap(), "from b");
    // The first attempt and its one retry, then b.
    assert_eq!((asked(&a).await, asked(&b).await), (2, 1));
    assert_eq!(hops(&switches), vec![hop("a", "b", "failed")]);
    let switch = switches.lock().unwrap()[0].clone();
    let SwitchReason::Failed { error } = &switch.reason else {
        panic!("{switch:?}");
    };
    assert!(error.contains("HTTP 500: boom"), "{error}");
    assert!(!switch.partial_text);

    // Later requests start at b: a is not asked again, nothing is reported.
    assert_eq!(llm.current(), "b");
    assert_eq!(complete(&llm, false).await.unwrap(), "from b");
    assert_eq!((asked(&a).await, asked(&b).await), (2, 2));
    assert_eq!(switches.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn three_providers_and_the_list_wraps_around() {
    // a fails once, b always; c answers once and then fails.
    let a = server(
        CHAT,
        vec![ResponseTemplate::new(503), answer("from a, back")],
    )
    .await;
    let b = server(CHAT, vec![ResponseTemplate::new(502)]).await;
    let c = server(CHAT, vec![answer("from c"), ResponseTemplate::new(500)]).await;
    let mut s = settings(&a, false);
    s.max_retries = 0;
    let switches = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&switches);
    let llm = FallbackClient::builder()
        .provider("a", Arc::new(OpenAiClient::new(s)), true)
        .provider("b", client(&b), true)
        .provider("c", Arc::new(OpenAiClient::new(settings(&c, false))), true)
        .on_switch(Arc::new(move |s: &ProviderSwitch| {
            seen.lock().unwrap().push(s.clone());
        }))
        .build()
        .unwrap();
    assert_eq!(complete(&llm, true).await.unwrap(), "from c");
    assert_eq!(
        hops(&switches),
        vec![hop("a", "b", "failed"), hop("b", "c", "failed")]
    );
    assert_eq!(llm.current(), "c");
    // c now fails (after its retries): the request wraps around to a,
    // which is back; b is not tried.
    let b_before = asked(&b).await;
    assert_eq!(complete(&llm, true).await.unwrap(), "from a, back");
    assert_eq!(hops(&switches)[2], hop("c", "a", "failed"));
    assert_eq!(asked(&b).await, b_before);
    assert_eq!(llm.current(), "a");
}

#[tokio::test]
async fn when_every_provider_fails_the_last_error_is_returned() {
    let a = server(CHAT, vec![ResponseTemplate::new(500)]).await;
    let b = server(CHAT, vec![ResponseTemplate::new(429)]).await;
    let (llm, switches) = fallback(&[("a", &a, true), ("b", &b, true)]);
    let err = complete(&llm, true).await.unwrap_err();
    assert!(matches!(err, LlmError::Http { status: 429, .. }), "{err:?}");
    assert_eq!(hops(&switches), vec![hop("a", "b", "failed")]);
    assert_eq!(llm.current(), "a");
}

#[tokio::test]
async fn refused_credentials_move_to_the_next_provider_without_retries() {
    let a = server(CHAT, vec![ResponseTemplate::new(401)]).await;
    let b = server(CHAT, vec![answer("from b")]).await;
    let (llm, switches) = fallback(&[("a", &a, true), ("b", &b, true)]);
    assert_eq!(complete(&llm, true).await.unwrap(), "from b");
    assert_eq!((asked(&a).await, asked(&b).await), (1, 1));
    let switch = switches.lock().unwrap()[0].clone();
    assert_eq!(
        switch.reason.to_string(),
        "it failed: the model server refused the credentials (HTTP 401); check the API key"
    );
    assert_eq!(llm.current(), "b");
}

#[tokio::test]
async fn an_unreachable_server_moves_to_the_next_provider() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut s = HttpSettings::new(
        format!("http://127.0.0.1:{closed}/v1"),
        "m",
        ApiKey::default(),
    );
    s.max_retries = 0;
    let b = server(CHAT, vec![answer("from b")]).await;
    let switches = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&switches);
    let llm = FallbackClient::builder()
        .provider("down", Arc::new(OpenAiClient::new(s)), true)
        .provider("b", client(&b), true)
        .on_switch(Arc::new(move |s: &ProviderSwitch| {
            seen.lock().unwrap().push(s.clone());
        }))
        .build()
        .unwrap();
    assert_eq!(complete(&llm, false).await.unwrap(), "from b");
    assert_eq!(hops(&switches), vec![hop("down", "b", "failed")]);
}

/// Errors about the request come back at once: the next provider would
/// refuse it too.
#[tokio::test]
async fn request_errors_are_returned_at_once() {
    let cases: &[(u16, &str)] = &[
        (
            400,
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","code":"context_length_exceeded"}}"#,
        ),
        (
            400,
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}"#,
        ),
        (
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
        ),
        // An older llama.cpp says it with a 500.
        (500, "the request exceeds the available context size"),
        (413, "payload too large"),
        (
            400,
            r#"{"error":{"message":"'messages' must contain at least one message"}}"#,
        ),
        (422, r#"{"detail":"invalid value"}"#),
    ];
    for (status, body) in cases {
        let a = server(
            CHAT,
            vec![ResponseTemplate::new(*status).set_body_string(*body)],
        )
        .await;
        let b = server(CHAT, vec![answer("from b")]).await;
        let (llm, switches) = fallback(&[("a", &a, true), ("b", &b, true)]);
        let err = complete(&llm, true).await.unwrap_err();
        assert!(
            matches!(&err, LlmError::Http { status: s, .. } if s == status),
            "{body}: {err:?}"
        );
        assert_eq!(asked(&b).await, 0, "{body}");
        assert!(switches.lock().unwrap().is_empty(), "{body}");
        assert_eq!(llm.current(), "a");
    }
}

#[tokio::test]
async fn a_server_that_cannot_take_tools_moves_to_the_next_provider() {
    let cases: &[(u16, &str)] = &[
        (
            400,
            r#"{"error":"registry.ollama.ai/library/gemma:2b does not support tools"}"#,
        ),
        (
            400,
            r#"{"error":{"message":"tools param requires --jinja flag"}}"#,
        ),
        (
            400,
            r#"{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set"}"#,
        ),
        (404, r#"{"error":{"message":"model 'qwen' not found"}}"#),
    ];
    for (status, body) in cases {
        let a = server(
            CHAT,
            vec![ResponseTemplate::new(*status).set_body_string(*body)],
        )
        .await;
        let b = server(CHAT, vec![answer("from b")]).await;
        let (llm, switches) = fallback(&[("a", &a, true), ("b", &b, true)]);
        assert_eq!(complete(&llm, true).await.unwrap(), "from b", "{body}");
        assert_eq!(hops(&switches), vec![hop("a", "b", "failed")], "{body}");
    }
}

#[test]
fn which_http_errors_are_the_providers() {
    let http = |status: u16, body: &str| LlmError::Http {
        status,
        body: body.to_owned(),
    };
    let cases: &[(LlmError, bool)] = &[
        (LlmError::Auth { status: 401 }, true),
        (LlmError::Auth { status: 403 }, true),
        (LlmError::Protocol("bad stream event".into()), true),
        (http(500, "internal"), true),
        (http(502, ""), true),
        (http(503, "overloaded"), true),
        (http(429, "rate limited"), true),
        (http(408, ""), true),
        (http(404, "not found"), true),
        (http(400, "model does not support tools"), true),
        (http(400, "Context Length Exceeded"), false),
        (http(503, "context window is full"), false),
        (http(400, "too many tokens in the prompt"), false),
        (http(413, ""), false),
        (http(400, "invalid json"), false),
        (http(422, "unprocessable"), false),
        (http(400, "unsupported parameter: temperature"), false),
    ];
    for (error, expected) in cases {
        assert_eq!(is_provider_failure(error), *expected, "{error:?}");
    }
}

#[tokio::test]
async fn a_provider_without_tools_is_skipped_for_tool_requests_only() {
    let a = server(CHAT, vec![answer("from a")]).await;
    let b = server(CHAT, vec![answer("from b")]).await;

    // A plain request: the first provider answers, tools or not.
    let (llm, switches) = fallback(&[("cli", &a, false), ("local", &b, true)]);
    assert_eq!(complete(&llm, false).await.unwrap(), "from a");
    assert!(switches.lock().unwrap().is_empty());
    assert_eq!((asked(&a).await, asked(&b).await), (1, 0));

    // A tool request never reaches it: the switch says why.
    assert_eq!(complete(&llm, true).await.unwrap(), "from b");
    assert_eq!((asked(&a).await, asked(&b).await), (1, 1));
    assert_eq!(hops(&switches), vec![hop("cli", "local", "no_tools")]);
    assert_eq!(
        switches.lock().unwrap()[0].reason.to_string(),
        "the request needs tools and it takes none"
    );
    let sent = bodies(&b).await;
    assert_eq!(sent[0]["tools"][0]["function"]["name"], "read_file");

    // The provider that answered is the current one.
    assert_eq!(llm.current(), "local");
    assert_eq!(complete(&llm, false).await.unwrap(), "from b");
    assert_eq!(switches.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_failure_then_a_skip_reports_the_failure() {
    let a = server(CHAT, vec![ResponseTemplate::new(500)]).await;
    let b = server(CHAT, vec![answer("from b")]).await;
    let c = server(CHAT, vec![answer("from c")]).await;
    let (llm, switches) = fallback(&[("a", &a, true), ("b", &b, false), ("c", &c, true)]);
    assert_eq!(complete(&llm, true).await.unwrap(), "from c");
    assert_eq!(hops(&switches), vec![hop("a", "c", "failed")]);
    assert_eq!(asked(&b).await, 0);
}

#[tokio::test]
async fn text_streamed_before_a_failure_is_flagged() {
    // The stream delivers text, then an event that does not parse.
    let broken = ResponseTemplate::new(200).set_body_raw(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\ndata: {not json\n\n",
        "text/event-stream",
    );
    let a = server(CHAT, vec![broken]).await;
    let b = server(
        CHAT,
        vec![sse(&[
            json!({"choices": [{"index": 0, "delta": {"content": "Hello"}, "finish_reason": "stop"}]}),
        ])],
    )
    .await;
    let switches = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&switches);
    let llm = FallbackClient::builder()
        .provider("a", Arc::new(OpenAiClient::new(settings(&a, true))), true)
        .provider("b", Arc::new(OpenAiClient::new(settings(&b, true))), true)
        .on_switch(Arc::new(move |s: &ProviderSwitch| {
            seen.lock().unwrap().push(s.clone());
        }))
        .build()
        .unwrap();
    let shown = Mutex::new(String::new());
    let resp = llm
        .complete(&request(false), &|t| shown.lock().unwrap().push_str(t))
        .await
        .unwrap();
    assert_eq!(resp.content, "Hello");
    assert_eq!(*shown.lock().unwrap(), "HelHello");
    let switch = switches.lock().unwrap()[0].clone();
    assert!(switch.partial_text, "{switch:?}");
    assert!(
        switch.reason.to_string().contains("does not parse"),
        "{}",
        switch.reason
    );
}

#[test]
fn lists_that_cannot_serve_are_refused() {
    let dummy: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(HttpSettings::new(
        "http://127.0.0.1:9/v1",
        "m",
        ApiKey::default(),
    )));
    let empty = FallbackClient::builder().build();
    assert!(
        matches!(empty, Err(FallbackError::NoProviders)),
        "{empty:?}"
    );
    let twice = FallbackClient::builder()
        .provider("m@host", Arc::clone(&dummy), true)
        .provider("m@host", Arc::clone(&dummy), true)
        .build();
    assert_eq!(
        twice.unwrap_err().to_string(),
        "two model providers are named `m@host`; give one a `name`"
    );
    let no_tools = FallbackClient::builder()
        .provider("a", Arc::clone(&dummy), false)
        .build();
    assert!(
        matches!(no_tools, Err(FallbackError::NoToolProvider)),
        "{no_tools:?}"
    );
    let one = FallbackClient::builder()
        .provider("only", dummy, true)
        .build()
        .unwrap();
    assert_eq!(one.current(), "only");
    assert_eq!(one.providers().collect::<Vec<_>>(), vec![("only", true)]);
}

#[test]
fn fallback_entries_defaults_and_names() {
    let e: FallbackEntry = serde_json::from_value(json!({"model": "qwen2.5"})).unwrap();
    assert_eq!(e.provider, ProviderKind::Openai);
    assert!(e.tools);
    assert_eq!(e.base_url(), "https://api.openai.com/v1");
    assert_eq!(e.name(), "qwen2.5@api.openai.com");
    let cases: &[(serde_json::Value, &str)] = &[
        (
            json!({"model": "qwen", "base_url": "http://127.0.0.1:8080/v1", "tools": false}),
            "qwen@127.0.0.1:8080",
        ),
        (
            json!({"provider": "anthropic", "model": "claude-haiku"}),
            "claude-haiku@api.anthropic.com",
        ),
        (json!({"model": "m", "name": "backup"}), "backup"),
    ];
    for (value, name) in cases {
        let e: FallbackEntry = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(e.name(), *name, "{value}");
        let back: FallbackEntry =
            serde_json::from_value(serde_json::to_value(&e).unwrap()).unwrap();
        assert_eq!(back, e);
    }
    let missing = serde_json::from_value::<FallbackEntry>(json!({"base_url": "x"})).unwrap_err();
    assert!(
        missing.to_string().contains("missing field `model`"),
        "{missing}"
    );
    let unknown = serde_json::from_value::<FallbackEntry>(json!({"model": "m", "api_key": "sk"}))
        .unwrap_err();
    assert!(
        unknown.to_string().contains("unknown field `api_key`"),
        "{unknown}"
    );
}

#[tokio::test]
async fn an_entry_builds_its_client_with_its_own_server_model_and_key() {
    let openai = server(CHAT, vec![answer("openai")]).await;
    let anthropic = server(
        "/v1/messages",
        vec![ResponseTemplate::new(200).set_body_json(json!({
            "content": [{"type": "text", "text": "anthropic"}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 3, "output_tokens": 1}
        }))],
    )
    .await;
    let mut template = HttpSettings::new("http://unused", "primary", ApiKey::default());
    template.stream = false;
    for (provider, srv, text, key_header) in [
        ("openai", &openai, "openai", "authorization"),
        ("anthropic", &anthropic, "anthropic", "x-api-key"),
    ] {
        let entry: FallbackEntry = serde_json::from_value(json!({
            "provider": provider,
            "base_url": format!("{}/v1/", srv.uri()),
            "model": format!("{provider}-model"),
        }))
        .unwrap();
        let llm = entry.client(ApiKey::new(Some("sk-fallback".into())), &template);
        let resp = llm.complete(&request(true), &|_| {}).await.unwrap();
        assert_eq!(resp.content, text);
        let got = srv.received_requests().await.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&got[0].body).unwrap();
        assert_eq!(body["model"], format!("{provider}-model"));
        assert_eq!(body["stream"], false);
        let key = got[0].headers.get(key_header).unwrap().to_str().unwrap();
        assert!(key.ends_with("sk-fallback"), "{key}");
    }
}
