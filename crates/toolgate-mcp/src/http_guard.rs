//! What the streamable HTTP server checks before rmcp sees a request: the
//! bearer token, and the `server/discover` probe.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The largest request body looked at for a probe. Bigger bodies (a
/// `write_file` with a large `content`) are passed on unread.
const PROBE_PEEK: usize = 64 * 1024;

/// Refuses a request without `Authorization: Bearer <token>` (401). The
/// comparison takes the same time wherever the first difference is.
pub(crate) async fn require_token(token: Arc<String>, request: Request, next: Next) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes)
        .and_then(|v| v.strip_prefix(b"Bearer "));
    if !given.is_some_and(|g| same_bytes(g, token.as_bytes())) {
        return (StatusCode::UNAUTHORIZED, "missing or wrong bearer token\n").into_response();
    }
    next.run(request).await
}

fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Answers a `server/discover` request with JSON-RPC -32601 (method not
/// found). Over HTTP rmcp would reject the probe's protocol version with
/// -32022 first; the Python SDK 2.x client probes `server/discover` before
/// `initialize` and expects method-not-found to fall back cleanly.
pub(crate) async fn answer_discover(request: Request, next: Next) -> Response {
    if request.method() != Method::POST
        || request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<usize>().ok())
            .is_none_or(|n| n > PROBE_PEEK)
    {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, PROBE_PEEK).await else {
        return (StatusCode::BAD_REQUEST, "unreadable request body\n").into_response();
    };
    if let Some(id) = discover_id(&bytes) {
        let answer = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32601, "message": "Method not found: server/discover"}
        });
        return (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            answer.to_string(),
        )
            .into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// The id of a JSON-RPC `server/discover` request, if `body` is one.
fn discover_id(body: &[u8]) -> Option<Value> {
    // Cheap test first: most bodies are not the probe.
    if !body.windows(15).any(|w| w == b"server/discover") {
        return None;
    }
    let message: Value = serde_json::from_slice(body).ok()?;
    (message.get("method")?.as_str()? == "server/discover")
        .then(|| message.get("id").cloned())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_discover_request_with_an_id_is_answered() {
        let probe = br#"{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{}}"#;
        assert_eq!(discover_id(probe), Some(json!(7)));
        let notification = br#"{"jsonrpc":"2.0","method":"server/discover"}"#;
        assert_eq!(discover_id(notification), None);
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"server/discover"}}}"#;
        assert_eq!(discover_id(call), None);
        assert_eq!(discover_id(b"server/discover"), None);
    }

    #[test]
    fn token_comparison() {
        assert!(same_bytes(b"abc", b"abc"));
        assert!(!same_bytes(b"abc", b"abd"));
        assert!(!same_bytes(b"abc", b"abcd"));
        assert!(!same_bytes(b"", b"a"));
    }
}
