//! A scripted OpenAI-compatible model server on 127.0.0.1 and the replies
//! it is scripted with.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// What a test does between two steps of a run: see [`Script::before`].
type Action = Box<dyn Fn() + Send + Sync>;

/// Answers the n-th request with the n-th reply; the last one repeats.
pub struct Script {
    replies: Vec<ResponseTemplate>,
    actions: Vec<(usize, Action)>,
    n: AtomicUsize,
}

impl Script {
    /// A script of `replies`, in order.
    pub fn new(replies: Vec<ResponseTemplate>) -> Self {
        Self {
            replies,
            actions: Vec::new(),
            n: AtomicUsize::new(0),
        }
    }

    /// Runs `action` when request `n` (from 0) arrives, before its reply
    /// is sent: for a test that changes the world between two steps of a
    /// run (another process approves a tool, say), at exactly that point.
    /// It runs on the server's runtime: an action that needs one of its own
    /// starts a thread. By default, no actions.
    #[must_use]
    pub fn before(mut self, n: usize, action: impl Fn() + Send + Sync + 'static) -> Self {
        self.actions.push((n, Box::new(action)));
        self
    }
}

impl Respond for Script {
    fn respond(&self, _req: &Request) -> ResponseTemplate {
        let i = self.n.fetch_add(1, Ordering::SeqCst);
        for (_, action) in self.actions.iter().filter(|(n, _)| *n == i) {
            action();
        }
        match self.replies.get(i).or_else(|| self.replies.last()) {
            Some(reply) => reply.clone(),
            None => ResponseTemplate::new(500).set_body_string("the test scripted no reply"),
        }
    }
}

/// A server on 127.0.0.1 answering `POST endpoint` (e.g.
/// `/v1/chat/completions`) from the script `replies`.
pub async fn server(endpoint: &str, replies: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    mount(&server, endpoint, Script::new(replies)).await;
    server
}

/// Makes a started server answer `POST endpoint` from `script`: for a
/// test that needs the server's address before it can write the script
/// (the workspace's configuration names the server, the script names the
/// workspace's files).
pub async fn mount(server: &MockServer, endpoint: &str, script: Script) {
    Mock::given(method("POST"))
        .and(path(endpoint))
        .respond_with(script)
        .mount(server)
        .await;
}

/// The POST requests the server received, in order (toolgate also asks
/// `GET /v1/models` before a run, to fail fast when no server is there).
/// Empty when the server does not record requests.
pub async fn chats(server: &MockServer) -> Vec<Request> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.method == wiremock::http::Method::POST)
        .collect()
}

/// The JSON bodies of the POST requests, in order (`null` for a body that
/// is not JSON).
pub async fn chat_bodies(server: &MockServer) -> Vec<Value> {
    chats(server)
        .await
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap_or(Value::Null))
        .collect()
}

/// The names of the tools a chat request offers (none without `tools`).
pub fn offered(body: &Value) -> Vec<String> {
    body["tools"].as_array().map_or_else(Vec::new, |tools| {
        tools
            .iter()
            .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
            .collect()
    })
}

/// A reply calling the tools `calls`, each `(id, name, arguments)`, with
/// `usage` as `(prompt, completion)` tokens.
pub fn tool_calls_with_usage(calls: &[(&str, &str, &str)], usage: (u64, u64)) -> ResponseTemplate {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
        })
        .collect();
    ResponseTemplate::new(200).set_body_json(json!({
        "choices": [{"index": 0, "finish_reason": "tool_calls",
                     "message": {"role": "assistant", "content": null, "tool_calls": calls}}],
        "usage": {"prompt_tokens": usage.0, "completion_tokens": usage.1}
    }))
}

/// A reply calling one tool, using 100 prompt and 10 completion tokens.
pub fn tool_call(id: &str, name: &str, args: &str) -> ResponseTemplate {
    tool_calls_with_usage(&[(id, name, args)], (100, 10))
}

/// A final answer `text`, with `usage` as `(prompt, completion)` tokens.
pub fn answer_with_usage(text: &str, usage: (u64, u64)) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": usage.0, "completion_tokens": usage.1}
    }))
}

/// A final answer `text`, using 200 prompt and 20 completion tokens.
pub fn answer(text: &str) -> ResponseTemplate {
    answer_with_usage(text, (200, 20))
}

/// A streamed reply: each event as a `data:` line, then `data: [DONE]`.
pub fn sse(events: &[Value]) -> ResponseTemplate {
    let mut body = String::new();
    for e in events {
        body.push_str("data: ");
        body.push_str(&e.to_string());
        body.push_str("\n\n");
    }
    body.push_str("data: [DONE]\n\n");
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}
