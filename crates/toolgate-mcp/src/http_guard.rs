//! What the streamable HTTP server answers itself in session mode, before
//! rmcp sees a request: the `server/discover` probe and a session's
//! `DELETE`; and the constant-time comparison of bearer tokens.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use subtle::ConstantTimeEq;

/// The largest request body looked at for a probe. Bigger bodies (a
/// `write_file` with a large `content`) are passed on unread.
const PROBE_PEEK: usize = 64 * 1024;

/// Answers a session's `DELETE` with 200 where rmcp says 202: the
/// streamable HTTP transport expects 200 or 204 when a client ends its
/// session, and the Python SDK logs "Session termination failed: 202"
/// otherwise. Other answers (404 for an unknown session, 401) are kept.
pub(crate) async fn answer_delete(request: Request, next: Next) -> Response {
    if request.method() != Method::DELETE {
        return next.run(request).await;
    }
    let mut response = next.run(request).await;
    if response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    response
}

/// Answers `DELETE` with 200 when the server keeps no sessions: whatever
/// session the client thinks it ends (one another server minted), there is
/// nothing here to end, and the client should not log a failure.
pub(crate) async fn answer_stateless_delete(request: Request, next: Next) -> Response {
    if request.method() == Method::DELETE {
        return (
            StatusCode::OK,
            "no session to end: this server keeps none\n",
        )
            .into_response();
    }
    next.run(request).await
}

/// Whether `a` and `b` are equal, in time that depends on their lengths
/// only (`subtle` keeps the optimiser from ending the loop early).
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    bool::from(a.ct_eq(b))
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
        let token: &[u8] = b"s3cret-token";
        let cases: &[(&[u8], bool)] = &[
            (b"", false),
            (b"s3cret", false),
            (b"s3cret-token-and-more", false),
            (b"s3cret-tokem", false),
            (b"t3cret-token", false),
            (b"s3cret-Token", false),
            (b"s3cret-token\0", false),
            (b"s3cret-token", true),
        ];
        for (given, expected) in cases {
            assert_eq!(
                same_bytes(given, token),
                *expected,
                "{:?}",
                String::from_utf8_lossy(given)
            );
        }
        assert!(same_bytes(b"", b""));
    }

    /// The middleware in front of a real server on 127.0.0.1: the status
    /// each `Authorization` header gets, with one anonymous token and with
    /// two named clients.
    #[tokio::test]
    async fn only_the_exact_bearer_token_passes() {
        use crate::gateway::{Gateway, HttpClient, HttpOptions, admit};
        use std::sync::Arc;
        let engine = Arc::new(
            toolgate_engine::ExecutionEngine::builder(Arc::new(toolgate_core::Registry::new()))
                .build(),
        );
        let anonymous = HttpOptions::new().token(Some("s3cret-token".to_owned()));
        let named = HttpOptions::new()
            .client(HttpClient::new("ci", "s3cret-token"))
            .client(HttpClient::new("bot", "other-token"));
        for options in [anonymous, named] {
            let mut options = options;
            let gateway = Arc::new(Gateway::new(&mut options, &engine, None).unwrap());
            let router = axum::Router::new()
                .route("/mcp", axum::routing::post(|| async { "passed" }))
                .layer(axum::middleware::from_fn(move |request, next| {
                    admit(Arc::clone(&gateway), request, next)
                }));
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}/mcp", listener.local_addr().unwrap());
            let server = tokio::spawn(async move { axum::serve(listener, router).await });
            let _ = rustls::crypto::ring::default_provider().install_default();
            let client = reqwest::Client::new();
            let cases: &[(Option<&str>, u16)] = &[
                (None, 401),
                (Some(""), 401),
                (Some("Bearer "), 401),
                (Some("Bearer s3cret"), 401),
                (Some("Bearer s3cret-token-and-more"), 401),
                (Some("Bearer s3cret-tokem"), 401),
                (Some("Basic s3cret-token"), 401),
                (Some("s3cret-token"), 401),
                (Some("Bearer  s3cret-token"), 401),
                (Some("Bearer s3cret-token"), 200),
            ];
            for (header, status) in cases {
                let mut request = client.post(&url).body("{}");
                if let Some(h) = header {
                    request = request.header(header::AUTHORIZATION, *h);
                }
                let response = request.send().await.unwrap();
                assert_eq!(response.status().as_u16(), *status, "{header:?}");
                let body = response.text().await.unwrap();
                assert_eq!(body == "passed", *status == 200, "{header:?}: {body}");
            }
            server.abort();
        }
    }
}
