//! Prompt caching against scripted servers on 127.0.0.1: every request of
//! a run starts with the one before it, byte for byte (system prompt and
//! tools first), asks llama.cpp to keep its prompt cached, and the prompt
//! tokens the server processed are reported per step; Anthropic's cache
//! marker and usage.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use std::sync::{Arc, Mutex};

use common::{bodies, engine, server, settings};
use serde_json::{Value, json};
use toolgate_agent::{
    AgentDef, AgentEvent, AgentRunner, AnthropicClient, ApiKey, HttpSettings, LlmClient,
    LlmRequest, Message, OpenAiClient, Outcome, Profile, Role,
};
use wiremock::ResponseTemplate;

/// A llama.cpp reply: `message`, with usage and `timings.prompt_n`.
fn llama(message: &Value, prompt: u64, processed: u64) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 5},
        "timings": {"prompt_n": processed, "prompt_ms": 12.5}
    }))
}

fn call(constrained: bool, id: &str, name: &str, args: &Value) -> Value {
    if constrained {
        json!({"role": "assistant", "content": json!({"tool": name, "arguments": args}).to_string()})
    } else {
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
            "function": {"name": name, "arguments": args.to_string()}}]})
    }
}

fn answer(constrained: bool, text: &str) -> Value {
    let content = if constrained {
        json!({"final": text}).to_string()
    } else {
        text.to_owned()
    };
    json!({"role": "assistant", "content": content})
}

#[tokio::test]
async fn every_request_starts_with_the_one_before_and_processed_tokens_are_reported() {
    // (profile, constrained)
    let runs = [
        (Profile::Standard, false),
        (Profile::Standard, true),
        (Profile::Small, false),
        (Profile::Small, true),
    ];
    for (profile, constrained) in runs {
        let name = format!("{profile:?}, constrained: {constrained}");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
        std::fs::write(dir.path().join("b.txt"), "world\n").unwrap();
        let replies = vec![
            llama(
                &call(constrained, "c1", "read_file", &json!({"path": "a.txt"})),
                900,
                900,
            ),
            llama(
                &call(
                    constrained,
                    "c2",
                    "search_code",
                    &json!({"pattern": "world"}),
                ),
                960,
                60,
            ),
            llama(
                &call(constrained, "c3", "read_file", &json!({"path": "b.txt"})),
                1030,
                70,
            ),
            llama(&answer(constrained, "hello world"), 1090, 60),
        ];
        let server = server("/v1/chat/completions", replies).await;
        let mut s = settings(&server, false);
        s.constrain = constrained;
        s.cache_prompt = true;
        let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(s));
        let mut agent = AgentDef::builtin("build").unwrap();
        agent.profile = profile;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let report = AgentRunner::builder(llm, engine(dir.path(), vec![]), agent)
            .events(Arc::new(move |e: &AgentEvent| {
                if matches!(e, AgentEvent::Usage { .. }) {
                    sink.lock().unwrap().push(serde_json::to_value(e).unwrap());
                }
            }))
            .build()
            .run("Read a.txt, then find world and read b.txt.", Vec::new())
            .await;
        assert_eq!(report.outcome, Outcome::Completed, "{name}: {report:?}");
        let reqs = bodies(&server).await;
        assert_eq!(reqs.len(), 4, "{name}");
        for pair in reqs.windows(2) {
            let (before, after) = (&pair[0], &pair[1]);
            assert_eq!(before["cache_prompt"], true, "{name}");
            // The tools (or the reply schema) are the same bytes …
            for key in ["tools", "response_format"] {
                assert_eq!(
                    serde_json::to_string(&before[key]).unwrap(),
                    serde_json::to_string(&after[key]).unwrap(),
                    "{name}: {key}"
                );
            }
            // … and the conversation only grows at its end.
            let old = before["messages"].as_array().unwrap();
            let new = after["messages"].as_array().unwrap();
            assert!(new.len() > old.len(), "{name}");
            for (i, (a, b)) in old.iter().zip(new).enumerate() {
                assert_eq!(
                    serde_json::to_string(a).unwrap(),
                    serde_json::to_string(b).unwrap(),
                    "{name}: message {i} changed between requests"
                );
            }
        }
        // What the server processed, per step: in the events and the report.
        let processed: Vec<Option<u64>> = seen
            .lock()
            .unwrap()
            .iter()
            .map(|e| e["processed_tokens"].as_u64())
            .collect();
        assert_eq!(
            processed,
            [Some(900), Some(60), Some(70), Some(60)],
            "{name}"
        );
        let json = report.to_json();
        assert_eq!(json["tokens"]["processed"], 1090, "{name}");
        assert_eq!(json["tokens"]["input"], 900 + 960 + 1030 + 1090, "{name}");
        assert_eq!(json["step_usage"][1]["processed"], 60, "{name}");
        assert!(
            report
                .to_markdown()
                .contains("- Prompt tokens processed: 1090"),
            "{name}"
        );
    }
}

#[tokio::test]
async fn without_the_setting_no_cache_field_is_sent() {
    let server = server(
        "/v1/chat/completions",
        vec![llama(&answer(false, "hi"), 10, 10)],
    )
    .await;
    let llm = OpenAiClient::new(settings(&server, false));
    let request = LlmRequest {
        messages: vec![Message::text(Role::User, "hi")],
        tools: Vec::new(),
        max_tokens: None,
        must_call: false,
        barred: Vec::new(),
        penalize_repeats: false,
    };
    let reply = llm.complete(&request, &|_| {}).await.unwrap();
    assert_eq!(reply.usage.unwrap().processed_tokens, Some(10));
    assert!(bodies(&server).await[0].get("cache_prompt").is_none());
}

#[tokio::test]
async fn anthropic_marks_the_system_prompt_for_its_cache_and_counts_cached_tokens() {
    let server = server(
        "/v1/messages",
        vec![ResponseTemplate::new(200).set_body_json(json!({
            "type": "message", "role": "assistant", "stop_reason": "end_turn",
            "content": [{"type": "text", "text": "hi"}],
            "usage": {"input_tokens": 12, "cache_read_input_tokens": 1800,
                      "cache_creation_input_tokens": 0, "output_tokens": 3}
        }))],
    )
    .await;
    let mut s = HttpSettings::new(
        format!("{}/v1", server.uri()),
        "claude",
        ApiKey::new(Some("k".into())),
    );
    s.stream = false;
    s.cache_prompt = true;
    let llm = AnthropicClient::new(s);
    let request = LlmRequest {
        messages: vec![
            Message::text(Role::System, "You are careful."),
            Message::text(Role::User, "hi"),
        ],
        tools: vec![json!({"type": "function", "function": {"name": "read_file",
            "description": "Read a file.", "parameters": {"type": "object"}}})],
        max_tokens: None,
        must_call: false,
        barred: Vec::new(),
        penalize_repeats: false,
    };
    let reply = llm.complete(&request, &|_| {}).await.unwrap();
    let usage = reply.usage.unwrap();
    assert_eq!(usage.input_tokens, 1812);
    assert_eq!(usage.processed_tokens, Some(12));
    let body = &bodies(&server).await[0];
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "You are careful.",
                "cache_control": {"type": "ephemeral"}}])
    );
}
