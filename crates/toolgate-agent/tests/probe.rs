//! Probing model servers: scripted servers on 127.0.0.1 that answer as
//! llama.cpp, Ollama, vLLM and Anthropic do, one that refuses the
//! credentials, one that never answers, and a closed port.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::time::Duration;

use serde_json::{Value, json};
use toolgate_agent::{
    ApiKey, ContextSource, ContextWindow, LOCAL_SERVERS, ProbeError, ProbeRequest, Profile,
    Provider, ServerKind, detect_local_servers, detect_servers, probe,
};
use wiremock::matchers::{body_partial_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn mount(server: &MockServer, verb: &str, at: &str, reply: ResponseTemplate) {
    Mock::given(method(verb))
        .and(path(at))
        .respond_with(reply)
        .mount(server)
        .await;
}

fn ok(body: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

/// A `/v1/models` answer listing `(id, owned_by)`.
fn model_list(models: &[(&str, &str)]) -> Value {
    let data: Vec<Value> = models
        .iter()
        .map(|(id, owner)| json!({"id": id, "object": "model", "created": 1, "owned_by": owner}))
        .collect();
    json!({"object": "list", "data": data})
}

fn base(server: &MockServer) -> String {
    format!("{}/v1", server.uri())
}

/// The paths the server was asked, in order.
async fn asked(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| format!("{} {}", r.method, r.url.path()))
        .collect()
}

/// A port nothing listens on: bound, read, closed.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// llama.cpp: the model list carries `owned_by: llamacpp` (and `meta`),
/// `/props` the context the server was started with. The list is public,
/// `/props` needs the key.
async fn llama_cpp() -> MockServer {
    let server = MockServer::start().await;
    let list = json!({"object": "list", "data": [{"id": "qwen2.5-coder-7b", "object": "model",
        "created": 1, "owned_by": "llamacpp", "meta": {"n_ctx_train": 32768, "n_params": 7_615_616_512_u64}}]});
    mount(&server, "GET", "/v1/models", ok(list)).await;
    Mock::given(method("GET"))
        .and(path("/props"))
        .and(header("authorization", "Bearer sk-local"))
        .respond_with(ok(json!({
            "default_generation_settings": {"n_ctx": 8192, "temperature": 0.8},
            "total_slots": 1, "chat_template": "…"
        })))
        .mount(&server)
        .await;
    server
}

fn request(server: &MockServer) -> ProbeRequest {
    ProbeRequest::new(Provider::OpenAi, base(server)).api_key(ApiKey::new(Some("sk-local".into())))
}

#[tokio::test]
async fn llama_cpp_is_recognised_and_tells_its_context_from_props() {
    let server = llama_cpp().await;
    let found = probe(&request(&server).model("qwen2.5-coder-7b")).await;
    let facts = found.facts();
    assert!(found.reachable());
    assert_eq!(found.kind, Some(ServerKind::LlamaCpp));
    let models = found.models.as_ref().unwrap();
    assert_eq!(models[0].id, "qwen2.5-coder-7b");
    assert_eq!(models[0].owned_by.as_deref(), Some("llamacpp"));
    assert_eq!(found.model.unwrap().unwrap(), "qwen2.5-coder-7b");
    assert_eq!(found.probed_model.as_deref(), Some("qwen2.5-coder-7b"));
    assert_eq!(
        found.context_window.unwrap(),
        ContextWindow {
            tokens: 8192,
            source: ContextSource::LlamaCppProps
        }
    );
    assert!(found.tools.is_none(), "the tool check was not asked for");
    assert_eq!(asked(&server).await, ["GET /v1/models", "GET /props"]);
    // What `profile: auto` and `llm.constrain: auto` decide from.
    assert_eq!(facts.parameters, Some(7_615_616_512));
    assert_eq!(facts.window, Some(8192));
    assert_eq!(facts.kind, Some(ServerKind::LlamaCpp));
    assert_eq!(Profile::Auto.resolve(&facts), Profile::Small);
}

/// Older llama.cpp: `n_ctx` at the top of `/props`, and no `owned_by` that
/// says llama.cpp: `/props` answering is what recognises it.
#[tokio::test]
async fn an_unknown_server_with_props_is_llama_cpp() {
    let server = MockServer::start().await;
    mount(
        &server,
        "GET",
        "/v1/models",
        ok(model_list(&[("local", "me")])),
    )
    .await;
    mount(&server, "GET", "/props", ok(json!({"n_ctx": 4096}))).await;
    let found = probe(&request(&server)).await;
    assert_eq!(found.kind, Some(ServerKind::LlamaCpp));
    assert!(found.model.is_none(), "no model was configured");
    assert_eq!(found.probed_model.as_deref(), Some("local"));
    assert_eq!(found.context_window.unwrap().tokens, 4096);
}

/// Ollama: `owned_by: library`; `/api/show` has the model's
/// `<arch>.context_length`, and `num_ctx` when the model sets one.
async fn ollama() -> MockServer {
    let server = MockServer::start().await;
    let list = model_list(&[("llama3.2:latest", "library"), ("qwen2.5:7b", "library")]);
    mount(&server, "GET", "/v1/models", ok(list)).await;
    Mock::given(method("POST"))
        .and(path("/api/show"))
        .and(body_partial_json(json!({"model": "llama3.2:latest"})))
        .respond_with(ok(json!({
            "parameters": "stop \"<|eot_id|>\"",
            "details": {"family": "llama"},
            "model_info": {"general.architecture": "llama", "llama.context_length": 131_072,
                           "llama.embedding_length": 3072,
                           "general.parameter_count": 3_212_749_888_u64},
            "capabilities": ["completion", "tools"]
        })))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/show"))
        .and(body_partial_json(json!({"model": "qwen2.5:7b"})))
        .respond_with(ok(json!({
            "parameters": "num_ctx                        16384\nstop \"<|im_end|>\"",
            "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}
        })))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn ollama_context_is_num_ctx_when_set_else_the_model_s_context_length() {
    let server = ollama().await;
    // `llama3.2` is Ollama's short name for `llama3.2:latest`.
    let found = probe(&request(&server).model("llama3.2")).await;
    // A 3B model with a 128k window: its parameter count makes it small.
    let facts = found.facts();
    assert_eq!(facts.parameters, Some(3_212_749_888));
    assert_eq!(Profile::Auto.resolve(&facts), Profile::Small);
    assert_eq!(found.kind, Some(ServerKind::Ollama));
    assert_eq!(found.model.unwrap().unwrap(), "llama3.2:latest");
    assert_eq!(
        found.context_window.unwrap(),
        ContextWindow {
            tokens: 131_072,
            source: ContextSource::OllamaModelInfo
        }
    );
    let found = probe(&request(&server).model("qwen2.5:7b")).await;
    assert_eq!(found.parameters, None);
    assert_eq!(
        found.context_window.unwrap(),
        ContextWindow {
            tokens: 16384,
            source: ContextSource::OllamaNumCtx
        }
    );
    // Known as Ollama from the list: no llama.cpp `/props` asked.
    assert!(!asked(&server).await.iter().any(|p| p.ends_with("/props")));
}

/// An Ollama whose models are not from its library (`owned_by` is their
/// namespace) is recognised by `/api/version`.
#[tokio::test]
async fn an_unknown_server_with_api_version_is_ollama() {
    let server = MockServer::start().await;
    mount(
        &server,
        "GET",
        "/v1/models",
        ok(model_list(&[("someone/tiny:q4", "someone")])),
    )
    .await;
    mount(
        &server,
        "GET",
        "/api/version",
        ok(json!({"version": "0.6.5"})),
    )
    .await;
    mount(
        &server,
        "POST",
        "/api/show",
        ok(json!({"model_info": {"general.architecture": "gemma3", "gemma3.context_length": 8192}})),
    )
    .await;
    let found = probe(&request(&server)).await;
    assert_eq!(found.kind, Some(ServerKind::Ollama));
    assert_eq!(found.context_window.unwrap().tokens, 8192);
    assert_eq!(
        asked(&server).await,
        [
            "GET /v1/models",
            "GET /props",
            "GET /api/version",
            "POST /api/show"
        ]
    );
}

#[tokio::test]
async fn vllm_context_is_max_model_len_from_the_list() {
    let server = MockServer::start().await;
    let list = json!({"object": "list", "data": [{"id": "Qwen/Qwen2.5-7B-Instruct", "object": "model",
        "owned_by": "vllm", "root": "Qwen/Qwen2.5-7B-Instruct", "max_model_len": 32768}]});
    mount(&server, "GET", "/v1/models", ok(list)).await;
    let found = probe(&request(&server).model("Qwen/Qwen2.5-7B-Instruct")).await;
    assert_eq!(found.kind, Some(ServerKind::Vllm));
    assert_eq!(
        found.context_window.unwrap(),
        ContextWindow {
            tokens: 32768,
            source: ContextSource::ModelList
        }
    );
    assert_eq!(asked(&server).await, ["GET /v1/models"]);
}

#[tokio::test]
async fn a_model_that_is_not_served_is_named_with_the_served_ones() {
    let server = llama_cpp().await;
    let found = probe(&request(&server).model("llama3").check_tools(true)).await;
    let err = found.model.unwrap().unwrap_err();
    assert_eq!(
        err.to_string(),
        "model llama3 is not served here; it serves qwen2.5-coder-7b"
    );
    assert!(found.probed_model.is_none());
    let tools = found.tools.unwrap().unwrap_err();
    assert_eq!(
        tools.to_string(),
        "not checked: the configured model is not served"
    );
    // The server's context does not depend on the model.
    assert_eq!(found.context_window.unwrap().tokens, 8192);
    assert!(!asked(&server).await.iter().any(|p| p.contains("chat")));
}

#[tokio::test]
async fn a_401_is_an_auth_reason_and_nothing_else_is_asked() {
    let server = MockServer::start().await;
    mount(
        &server,
        "GET",
        "/v1/models",
        ResponseTemplate::new(401).set_body_string("invalid api key"),
    )
    .await;
    let found = probe(&request(&server).model("m").check_tools(true)).await;
    assert!(found.reachable());
    let err = found.models.unwrap_err();
    assert!(
        matches!(err, ProbeError::Auth { status: 401, .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}/v1/models refused the credentials (HTTP 401); check the API key",
            server.uri()
        )
    );
    for other in [
        found.model.unwrap().unwrap_err(),
        found.context_window.unwrap_err(),
        found.tools.unwrap().unwrap_err(),
    ] {
        assert_eq!(
            other.to_string(),
            "not checked: the server refused the credentials"
        );
    }
    assert_eq!(asked(&server).await, ["GET /v1/models"]);
}

#[tokio::test]
async fn a_closed_port_is_connection_refused_at_its_origin() {
    let port = closed_port();
    let found = probe(
        &ProbeRequest::new(Provider::OpenAi, format!("http://127.0.0.1:{port}/v1/"))
            .check_tools(true),
    )
    .await;
    assert!(!found.reachable());
    assert_eq!(found.base_url, format!("http://127.0.0.1:{port}/v1"));
    let err = found.models.unwrap_err();
    assert!(matches!(err, ProbeError::Refused { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("connection refused at http://127.0.0.1:{port}")
    );
    assert_eq!(
        found.context_window.unwrap_err().to_string(),
        "not checked: the server cannot be reached"
    );
    assert!(found.tools.unwrap().is_err());
}

/// A listener that accepts (the kernel completes the handshake) and never
/// answers.
#[tokio::test]
async fn a_server_that_never_answers_is_a_timeout() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let found = probe(
        &ProbeRequest::new(Provider::OpenAi, format!("http://127.0.0.1:{port}/v1"))
            .timeout(Duration::from_millis(300)),
    )
    .await;
    assert!(!found.reachable());
    let err = found.models.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("no answer from http://127.0.0.1:{port}/v1/models within 300 ms")
    );
    drop(silent);
}

#[tokio::test]
async fn an_answer_that_is_not_a_model_list_is_malformed() {
    let cases = [
        ResponseTemplate::new(200).set_body_string("<html>It works!</html>"),
        ok(json!({"models": ["a"]})),
        ok(json!({"data": [{"name": "no id"}]})),
    ];
    for reply in cases {
        let server = MockServer::start().await;
        mount(&server, "GET", "/v1/models", reply).await;
        let found = probe(&request(&server)).await;
        assert!(found.reachable());
        let err = found.models.unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}/v1/models answered with something other than a model list",
                server.uri()
            )
        );
    }
}

#[tokio::test]
async fn a_base_url_that_is_not_http_is_data() {
    for url in ["127.0.0.1:8080", "ftp://127.0.0.1/v1", "http://:80/v1"] {
        let found = probe(&ProbeRequest::new(Provider::OpenAi, url).check_tools(true)).await;
        assert!(!found.reachable());
        let err = found.models.unwrap_err();
        assert!(
            matches!(err, ProbeError::InvalidUrl { .. }),
            "{url}: {err:?}"
        );
        assert_eq!(err.to_string(), format!("{url} is not a valid URL"));
        assert_eq!(
            found.tools.unwrap().unwrap_err().to_string(),
            "not checked: the server cannot be reached"
        );
    }
}

fn chat_reply(message: &Value, finish: &str) -> ResponseTemplate {
    ok(json!({"id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10}}))
}

#[tokio::test]
async fn the_tool_check_passes_on_a_structured_call_and_says_why_otherwise() {
    let call = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
        "type": "function", "function": {"name": "add", "arguments": "{\"a\":2,\"b\":3}"}}]});
    let cases: &[(ResponseTemplate, Result<&str, &str>)] = &[
        (chat_reply(&call, "tool_calls"), Ok("{\"a\":2,\"b\":3}")),
        (
            chat_reply(
                &json!({"role": "assistant", "content": "<tool_call>{\"name\": \"add\"}</tool_call>"}),
                "stop",
            ),
            Err("answers in text only (tool calls may be written as text)"),
        ),
        (
            chat_reply(
                &json!({"role": "assistant", "content": "Let me think"}),
                "length",
            ),
            Err("no tool call within 128 tokens (the answer was cut at the limit)"),
        ),
        (
            ResponseTemplate::new(400).set_body_json(
                json!({"error": "registry.ollama.ai/library/gemma:2b does not support tools"}),
            ),
            Err(
                "answered HTTP 400: {\"error\":\"registry.ollama.ai/library/gemma:2b does not support tools\"}",
            ),
        ),
    ];
    for (reply, expected) in cases {
        let server = llama_cpp().await;
        mount(&server, "POST", "/v1/chat/completions", reply.clone()).await;
        let found = probe(&request(&server).model("qwen2.5-coder-7b").check_tools(true)).await;
        match (found.tools.unwrap(), expected) {
            (Ok(call), Ok(arguments)) => {
                assert_eq!(call.name, "add");
                assert_eq!(call.id, "call_1");
                assert_eq!(call.arguments, *arguments);
            }
            (Err(e), Err(reason)) => assert!(e.to_string().ends_with(reason), "{e}"),
            (got, expected) => panic!("{got:?} where {expected:?} was expected"),
        }
        let requests = server.received_requests().await.unwrap();
        let chat = requests
            .iter()
            .find(|r| r.url.path() == "/v1/chat/completions")
            .unwrap();
        assert_eq!(chat.headers["authorization"], "Bearer sk-local");
        let body: Value = serde_json::from_slice(&chat.body).unwrap();
        assert_eq!(body["model"], "qwen2.5-coder-7b");
        assert_eq!(body["stream"], false);
        assert_eq!(body["max_tokens"], 128);
        assert_eq!(body["tools"].as_array().unwrap().len(), 1);
        assert_eq!(body["tools"][0]["function"]["name"], "add");
        assert!(
            body["messages"][0]["content"]
                .as_str()
                .unwrap()
                .contains("add")
        );
    }
}

#[tokio::test]
async fn anthropic_models_and_tool_check_use_its_headers() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .and(header("x-api-key", "sk-ant"))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(ok(
            json!({"data": [{"type": "model", "id": "claude-sonnet-4-5",
            "display_name": "Claude Sonnet 4.5", "created_at": "2025-09-29T00:00:00Z"}],
            "has_more": false, "first_id": "claude-sonnet-4-5", "last_id": "claude-sonnet-4-5"}),
        ))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", "sk-ant"))
        .and(body_partial_json(json!({"max_tokens": 128, "tools": [{"name": "add"}]})))
        .respond_with(ok(json!({"id": "msg_1", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": "I'll add them."},
                        {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 300, "output_tokens": 40}})))
        .mount(&server)
        .await;
    let found = probe(
        &ProbeRequest::new(Provider::Anthropic, base(&server))
            .api_key(ApiKey::new(Some("sk-ant".into())))
            .model("claude-sonnet-4-5")
            .check_tools(true),
    )
    .await;
    assert_eq!(found.kind, Some(ServerKind::Anthropic));
    assert_eq!(found.model.unwrap().unwrap(), "claude-sonnet-4-5");
    assert!(matches!(
        found.context_window,
        Err(ProbeError::ContextUnknown)
    ));
    let call = found.tools.unwrap().unwrap();
    assert_eq!((call.id.as_str(), call.name.as_str()), ("toolu_1", "add"));
    assert_eq!(
        serde_json::from_str::<Value>(&call.arguments).unwrap(),
        json!({"a": 2, "b": 3})
    );
}

#[tokio::test]
async fn detected_servers_say_what_was_tried_and_what_happened() {
    let llama = llama_cpp().await;
    let vllm = MockServer::start().await;
    mount(&vllm, "GET", "/v1/models", ok(model_list(&[]))).await;
    let port = closed_port();
    let refused = format!("http://127.0.0.1:{port}/v1");
    let llama_base = base(&llama);
    let vllm_base = base(&vllm);
    let candidates = [
        (ServerKind::Ollama, refused.as_str()),
        (ServerKind::LlamaCpp, llama_base.as_str()),
        (ServerKind::Vllm, llama_base.as_str()),
        (ServerKind::Vllm, vllm_base.as_str()),
    ];
    let found = detect_servers(&candidates, Duration::from_secs(2)).await;
    let lines: Vec<String> = found.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        [
            format!("Ollama at {refused}: connection refused"),
            format!("llama.cpp at {llama_base}: up, serving qwen2.5-coder-7b"),
            format!("vLLM at {llama_base}: up (llama.cpp), serving qwen2.5-coder-7b"),
            format!("vLLM at {vllm_base}: up, serving no model"),
        ]
    );
    let up: Vec<bool> = found
        .iter()
        .map(toolgate_agent::LocalServer::is_up)
        .collect();
    assert_eq!(up, [false, true, true, false]);
    assert_eq!(found[1].kind, Some(ServerKind::LlamaCpp));
}

/// Whatever runs on this machine, each usual address is tried once, in
/// order, and reported.
#[tokio::test]
async fn local_detection_tries_the_four_usual_servers() {
    let found = detect_local_servers(Duration::from_millis(500)).await;
    let tried: Vec<(ServerKind, &str)> = found
        .iter()
        .map(|s| (s.expected, s.base_url.as_str()))
        .collect();
    assert_eq!(tried, LOCAL_SERVERS);
    assert_eq!(
        tried.iter().map(|(_, url)| *url).collect::<Vec<_>>(),
        [
            "http://127.0.0.1:11434/v1",
            "http://127.0.0.1:8080/v1",
            "http://127.0.0.1:1234/v1",
            "http://127.0.0.1:8000/v1",
        ]
    );
    for server in &found {
        assert!(
            server
                .to_string()
                .starts_with(&format!("{} at {}: ", server.expected, server.base_url))
        );
    }
}

/// A llama.cpp server still loading its model answers 503: the probe asks
/// again until it lists its models, so what it reports (the kind that
/// turns on constrained replies) is the loaded server's; one that stays
/// loading past the wait is reported as it answered.
#[tokio::test]
async fn a_server_still_loading_its_model_is_asked_again() {
    let loading = || {
        ResponseTemplate::new(503).set_body_json(json!({"error": {"code": 503,
            "message": "Loading model", "type": "unavailable_error"}}))
    };
    let server = MockServer::start().await;
    let script = toolgate_test::model::Script::new(vec![
        loading(),
        loading(),
        ok(model_list(&[("qwen", "llamacpp")])),
    ]);
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(script)
        .mount(&server)
        .await;
    let found = probe(&request(&server)).await;
    assert_eq!(found.models.unwrap()[0].id, "qwen");
    assert_eq!(found.kind, Some(ServerKind::LlamaCpp));

    let server = MockServer::start().await;
    mount(&server, "GET", "/v1/models", loading()).await;
    let found = probe(&request(&server).loading_wait(Duration::from_millis(600))).await;
    assert!(
        matches!(found.models, Err(ProbeError::Status { status: 503, .. })),
        "{:?}",
        found.models
    );
}
