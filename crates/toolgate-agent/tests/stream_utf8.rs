//! Streamed answers whose multibyte characters arrive split across network
//! reads, from a hand-written HTTP/1.1 server on 127.0.0.1 that controls
//! every byte and every write.
//!
//! Each write ends inside a character. The server sends the next write only
//! once the client has handed the text of the event before it to the text
//! sink, so the client has read the first half of the character before the
//! second half exists: the split is a real one between two reads.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::format_push_string,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use toolgate_agent::{
    AnthropicClient, ApiKey, HttpSettings, LlmClient, LlmRequest, Message, OpenAiClient, Role,
};

/// How the response body is delimited.
#[derive(Clone, Copy)]
enum Framing {
    /// `Transfer-Encoding: chunked`, one HTTP chunk per write.
    Chunked,
    /// No length: the body ends when the server closes the connection.
    Close,
}

/// Reads one request (headers and a `Content-Length` body) and returns
/// its body.
async fn read_request(conn: &mut TcpStream) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = conn.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the client closed before sending a request");
        buf.extend_from_slice(&chunk[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap());
    while buf.len() < head_end + length {
        let n = conn.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the client closed mid-request");
        buf.extend_from_slice(&chunk[..n]);
    }
    buf[head_end..].to_vec()
}

/// Serves one streamed answer: `writes` in order, each flushed on its own,
/// waiting for one text delta from the client (`deltas`) after every write
/// but the last. Returns the request body.
async fn serve(
    listener: TcpListener,
    framing: Framing,
    writes: Vec<Vec<u8>>,
    mut deltas: mpsc::UnboundedReceiver<String>,
) -> Value {
    let (mut conn, _) = listener.accept().await.unwrap();
    conn.set_nodelay(true).unwrap();
    let request = read_request(&mut conn).await;
    let head = match framing {
        Framing::Chunked => {
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        }
        Framing::Close => {
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
        }
    };
    conn.write_all(head.as_bytes()).await.unwrap();
    conn.flush().await.unwrap();
    let last = writes.len() - 1;
    for (n, bytes) in writes.into_iter().enumerate() {
        match framing {
            Framing::Chunked => {
                let mut frame = format!("{:x}\r\n", bytes.len()).into_bytes();
                frame.extend_from_slice(&bytes);
                frame.extend_from_slice(b"\r\n");
                if n == last {
                    frame.extend_from_slice(b"0\r\n\r\n");
                }
                conn.write_all(&frame).await.unwrap();
            }
            Framing::Close => conn.write_all(&bytes).await.unwrap(),
        }
        conn.flush().await.unwrap();
        if n != last {
            // The client has decoded the event before the split.
            deltas.recv().await.expect("the client stopped reading");
        }
    }
    conn.shutdown().await.unwrap();
    serde_json::from_slice(&request).unwrap()
}

/// Cuts `body` into writes that each end inside a character: after the
/// first `cut` bytes of the next occurrence of each `(char, cut)`.
fn cut_inside(body: &str, cuts: &[(char, usize)]) -> Vec<Vec<u8>> {
    let bytes = body.as_bytes();
    let mut writes = Vec::new();
    let (mut from, mut search) = (0, 0);
    for &(c, cut) in cuts {
        assert!(
            cut > 0 && cut < c.len_utf8(),
            "{c:?} cut at {cut} is not inside it"
        );
        let start = search + body[search..].find(c).unwrap();
        writes.push(bytes[from..start + cut].to_vec());
        from = start + cut;
        search = start + c.len_utf8();
    }
    writes.push(bytes[from..].to_vec());
    writes
}

fn settings(port: u16) -> HttpSettings {
    let mut s = HttpSettings::new(
        format!("http://127.0.0.1:{port}/v1"),
        "m",
        ApiKey::new(Some("k".into())),
    );
    s.max_retries = 0;
    s
}

fn request() -> LlmRequest {
    LlmRequest {
        messages: vec![Message::text(Role::User, "say it")],
        tools: Vec::new(),
        max_tokens: None,
        must_call: false,
        barred: Vec::new(),
        penalize_repeats: false,
    }
}

/// The text deltas of the answer: each holds characters of two, three and
/// four bytes, and the writes split one of them.
const DELTAS: &[&str] = &["Voilà: ", "café, ", "日本語, ", "🦀 crab."];

/// Where the writes end, one set per run: inside `é` (2 bytes), `本`
/// (3 bytes) and `🦀` (4 bytes), after every possible byte count of the
/// latter two. Each write completes the text event started by the one
/// before, so the client has text to hand the sink after every write.
const CUT_SETS: &[&[(char, usize)]] = &[
    &[('é', 1), ('本', 1), ('🦀', 1)],
    &[('é', 1), ('本', 2), ('🦀', 2)],
    &[('é', 1), ('本', 2), ('🦀', 3)],
];

/// Runs `client` against a server sending `body` cut at `cuts`; returns
/// the answer, the deltas the sink saw, and the request body.
async fn run(
    framing: Framing,
    body: &str,
    cuts: &[(char, usize)],
    client: impl FnOnce(u16) -> Box<dyn LlmClient>,
) -> (toolgate_agent::LlmResponse, Vec<String>, Value) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::unbounded_channel();
    let server = tokio::spawn(serve(listener, framing, cut_inside(body, cuts), rx));
    let seen = Mutex::new(Vec::new());
    let sink = |t: &str| {
        seen.lock().unwrap().push(t.to_owned());
        let _ = tx.send(t.to_owned());
    };
    let llm = client(port);
    let answer = tokio::time::timeout(Duration::from_secs(60), llm.complete(&request(), &sink))
        .await
        .expect("the streamed answer never completed")
        .unwrap();
    let request = server.await.unwrap();
    (answer, seen.into_inner().unwrap(), request)
}

fn openai_body() -> String {
    let mut body = String::new();
    let mut event = |v: Value| body.push_str(&format!("data: {v}\n\n"));
    event(json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": DELTAS[0]}}]}));
    for d in &DELTAS[1..] {
        event(json!({"choices": [{"index": 0, "delta": {"content": d}, "finish_reason": null}]}));
    }
    event(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}));
    event(json!({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 9}}));
    body.push_str("data: [DONE]\n\n");
    body
}

fn anthropic_body() -> String {
    let mut body = String::new();
    let mut event = |v: Value| {
        body.push_str(&format!(
            "event: {}\r\ndata: {v}\r\n\r\n",
            v["type"].as_str().unwrap()
        ));
    };
    event(
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 4, "output_tokens": 1}}}),
    );
    event(
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    );
    for d in DELTAS {
        event(
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": d}}),
        );
    }
    event(json!({"type": "content_block_stop", "index": 0}));
    event(
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 12}}),
    );
    event(json!({"type": "message_stop"}));
    body
}

/// Every framing with every cut set.
fn runs() -> impl Iterator<Item = (Framing, &'static [(char, usize)])> {
    [Framing::Chunked, Framing::Close]
        .into_iter()
        .flat_map(|f| CUT_SETS.iter().map(move |&c| (f, c)))
}

fn openai(port: u16) -> Box<dyn LlmClient> {
    Box::new(OpenAiClient::new(settings(port)))
}

fn anthropic(port: u16) -> Box<dyn LlmClient> {
    Box::new(AnthropicClient::new(settings(port)))
}

#[tokio::test]
async fn openai_stream_split_inside_characters_arrives_intact() {
    for (framing, cuts) in runs() {
        let (answer, seen, request) = run(framing, &openai_body(), cuts, openai).await;
        assert_eq!(seen, DELTAS);
        assert_eq!(answer.content, DELTAS.concat());
        assert!(!answer.content.contains('\u{fffd}'));
        assert_eq!(answer.finish_reason.as_deref(), Some("stop"));
        assert_eq!(answer.usage.map(|u| u.output_tokens), Some(9));
        assert_eq!(request["stream"], true);
    }
}

#[tokio::test]
async fn anthropic_stream_split_inside_characters_arrives_intact() {
    for (framing, cuts) in runs() {
        let (answer, seen, request) = run(framing, &anthropic_body(), cuts, anthropic).await;
        assert_eq!(seen, DELTAS);
        assert_eq!(answer.content, DELTAS.concat());
        assert_eq!(answer.finish_reason.as_deref(), Some("end_turn"));
        assert_eq!(
            answer.usage.map(|u| (u.input_tokens, u.output_tokens)),
            Some((4, 12))
        );
        assert_eq!(request["stream"], true);
    }
}

/// A streamed tool call whose arguments hold multibyte characters split
/// across writes, after text, with the id and name repeated in every delta.
#[tokio::test]
async fn openai_tool_call_arguments_split_inside_characters_arrive_intact() {
    let tc = |args: &str| {
        json!({"choices": [{"index": 0, "delta": {"content": null, "tool_calls": [{"index": 0,
               "id": "c1", "type": "function", "function": {"name": "write_file", "arguments": args}}]}}]})
    };
    let mut body = String::new();
    body.push_str(&format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {"content": "Écrivons. "}}]})
    ));
    for part in [r#"{"path": "café.txt", "#, r#""content": "日本🦀"}"#] {
        body.push_str(&format!("data: {}\n\n", tc(part)));
    }
    body.push_str(&format!(
        "data: {}\n\ndata: [DONE]\n\n",
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    ));
    // Cut inside the `é` of the path, after the text event the sink sees.
    let (answer, seen, _) = run(Framing::Chunked, &body, &[('é', 1)], openai).await;
    assert_eq!(seen, ["Écrivons. "]);
    assert_eq!(answer.content, "Écrivons. ");
    assert_eq!(answer.tool_calls.len(), 1);
    assert_eq!(answer.tool_calls[0].name, "write_file");
    assert_eq!(
        answer.tool_calls[0].arguments,
        r#"{"path": "café.txt", "content": "日本🦀"}"#
    );
}
