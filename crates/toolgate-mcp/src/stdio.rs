//! The stdio transport of [`McpServer::serve_stdio`](crate::McpServer::serve_stdio):
//! newline-delimited JSON-RPC, one message per line, as MCP's stdio
//! transport and rmcp's `AsyncRwTransport` speak it.
//!
//! Ours because a small `tools/call` through rmcp's transport spent most of
//! its CPU in framing, not in the call: rmcp parses every line as the
//! untagged union of all client messages (trying each of some twenty request
//! types in turn and formatting an error for each miss), and serialises the
//! answer through a `BytesMut` writer one escaped fragment at a time. Here:
//!
//! - a line that is a well-formed `tools/call` request is parsed straight
//!   into that request (the fast path); anything else, or a call whose
//!   parameters do not parse, goes through rmcp's own parse, so the fast path
//!   only ever yields what the full parse would (a test compares the two);
//! - an answer is serialised into one buffer and written with one `write`.
//!
//! Lines are capped at 16 MiB (a longer one is discarded, and the stream goes
//! on at the next line). Input that is not JSON is ignored, as the official
//! SDKs do (answering it could start an error storm with a peer that echoes);
//! well-formed JSON that is not an MCP message gets an Invalid Request error
//! with the request's `id` when it has one, and a message without an `id` (a
//! notification we do not know) is dropped, since notifications are never
//! answered.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequest, CallToolRequestMethod, CallToolRequestParams, ClientRequest, ErrorData,
    JsonRpcMessage, JsonRpcVersion2_0, RequestId, RequestMetaObject,
};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The longest line read; longer ones are discarded.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// UTF-8 byte order mark, which JSON parsers may skip (RFC 8259 §8.1).
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A server-side MCP transport over a byte stream pair.
pub(crate) struct LineTransport<R, W> {
    read: BufReader<R>,
    /// The line being read. It survives a cancelled `receive` (rmcp polls
    /// `receive` in a `select!`), so a line read in parts is never lost.
    line: Vec<u8>,
    max_line: usize,
    /// Dropping the rest of an over-long line.
    discarding: bool,
    write: Arc<Mutex<Option<W>>>,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub(crate) fn new(read: R, write: W) -> Self {
        Self {
            read: BufReader::new(read),
            line: Vec::new(),
            max_line: MAX_LINE,
            discarding: false,
            write: Arc::new(Mutex::new(Some(write))),
        }
    }

    #[cfg(test)]
    fn with_max_line(mut self, max_line: usize) -> Self {
        self.max_line = max_line;
        self
    }

    /// Reads up to the end of the next line that fits, into `self.line`.
    /// `None` at the end of the stream or on a read error.
    async fn next_line(&mut self) -> Option<()> {
        loop {
            let available = match self.read.fill_buf().await {
                Ok(available) => available,
                Err(err) => {
                    tracing::error!("reading the MCP stdio stream: {err}");
                    return None;
                }
            };
            if available.is_empty() {
                // A partial line without its newline is not a message.
                return None;
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let ends = newline.is_some();
            if self.discarding {
                self.discarding = !ends;
            } else if self.line.len().saturating_add(take) > self.max_line {
                tracing::error!(
                    max_line = self.max_line,
                    "an incoming MCP message exceeded the maximum line length; discarding it"
                );
                self.line.clear();
                self.discarding = !ends;
            } else {
                self.line.extend_from_slice(&available[..take]);
                if ends {
                    self.read.consume(take);
                    return Some(());
                }
            }
            self.read.consume(take);
        }
    }
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = Arc::clone(&self.write);
        let bytes = encode(&item);
        async move { write_line(&write, &bytes?).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            self.next_line().await?;
            let decoded = decode(trim_line(&self.line));
            self.line.clear();
            match decoded {
                Decoded::Message(message) => return Some(*message),
                Decoded::Skip => {}
                Decoded::Invalid(id) => {
                    let error = TxJsonRpcMessage::<RoleServer>::error(
                        ErrorData::invalid_request("Invalid request", None),
                        id,
                    );
                    // Written by its own task, so that a cancelled `receive`
                    // can neither drop it nor write it twice.
                    let bytes = encode(&error);
                    let write = Arc::clone(&self.write);
                    tokio::spawn(async move {
                        if let Ok(bytes) = bytes
                            && let Err(err) = write_line(&write, &bytes).await
                        {
                            tracing::debug!("answering an invalid MCP message: {err}");
                        }
                    });
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        drop(self.write.lock().await.take());
        Ok(())
    }
}

/// One message as a line: its JSON and a newline.
fn encode(message: &TxJsonRpcMessage<RoleServer>) -> std::io::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    Ok(bytes)
}

async fn write_line<W: AsyncWrite + Unpin>(
    write: &Mutex<Option<W>>,
    bytes: &[u8],
) -> std::io::Result<()> {
    let mut guard = write.lock().await;
    let Some(writer) = guard.as_mut() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            "the MCP transport is closed",
        ));
    };
    writer.write_all(bytes).await?;
    writer.flush().await
}

/// A line without its line ending and byte order mark.
fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(BOM).unwrap_or(line)
}

/// What a line holds.
enum Decoded {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Nothing to act on: blank, not JSON, or a notification we do not know.
    Skip,
    /// JSON that is not an MCP message; answer Invalid Request to this id.
    Invalid(Option<RequestId>),
}

/// A `tools/call` request, as the fast path reads it.
#[derive(Deserialize)]
struct CallLine {
    #[allow(dead_code, reason = "checked by deserialising it")]
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    #[allow(dead_code, reason = "checked by deserialising it")]
    method: CallToolRequestMethod,
    params: CallToolRequestParams,
}

fn decode(line: &[u8]) -> Decoded {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Decoded::Skip;
    }
    if let Ok(call) = serde_json::from_slice::<CallLine>(line) {
        return Decoded::Message(Box::new(call_message(call)));
    }
    match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
        Ok(message) => Decoded::Message(Box::new(message)),
        Err(err) => {
            let Ok(value) = serde_json::from_slice::<Value>(line) else {
                tracing::debug!("ignoring an MCP message that is not JSON: {err}");
                return Decoded::Skip;
            };
            match value.get("id") {
                None => {
                    tracing::debug!("ignoring an MCP notification we do not know: {err}");
                    Decoded::Skip
                }
                Some(id) => {
                    tracing::debug!("answering an invalid MCP request: {err}");
                    Decoded::Invalid(RequestId::deserialize(id).ok())
                }
            }
        }
    }
}

/// Decodes one line as the transport would, and checks what the fast path
/// promises: a line it takes is one rmcp's parse makes the same message of,
/// `_meta` included. Panics if not. For the `mcp_line` fuzz target.
#[doc(hidden)]
pub fn check_line(line: &[u8]) {
    let line = trim_line(line);
    let Ok(call) = serde_json::from_slice::<CallLine>(line) else {
        let _ = decode(line);
        return;
    };
    let ours = call_message(call);
    let theirs: RxJsonRpcMessage<RoleServer> = serde_json::from_slice(line)
        .unwrap_or_else(|err| panic!("the fast path took a line rmcp refuses ({err})"));
    let json = |m: &RxJsonRpcMessage<RoleServer>| serde_json::to_value(m).ok();
    assert_eq!(json(&ours), json(&theirs), "the two parses differ");
    assert_eq!(
        call_meta(ours),
        call_meta(theirs),
        "`_meta` lands elsewhere"
    );
}

/// A call's `_meta` in its parameters, and in its extensions (their JSON is
/// the same either way, so look at the request itself).
fn call_meta(
    message: RxJsonRpcMessage<RoleServer>,
) -> (Option<RequestMetaObject>, Option<RequestMetaObject>) {
    match message.into_request() {
        Some((ClientRequest::CallToolRequest(request), _)) => (
            request.params.meta,
            request.extensions.get::<RequestMetaObject>().cloned(),
        ),
        _ => panic!("not a tools/call request"),
    }
}

/// The message rmcp's parse makes of the same line: the call's `_meta`
/// travels in the request's extensions, not in its parameters.
fn call_message(call: CallLine) -> RxJsonRpcMessage<RoleServer> {
    let mut params = call.params;
    let meta = params.meta.take();
    let mut request = CallToolRequest::new(params);
    if let Some(meta) = meta {
        request.extensions.insert(meta);
    }
    JsonRpcMessage::request(ClientRequest::CallToolRequest(request), call.id)
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        reason = "test code: a failed unwrap is a failed test"
    )]

    use std::time::Duration;

    use super::*;

    /// What rmcp's own transport would make of a line.
    fn full_parse(line: &str) -> Value {
        let message: RxJsonRpcMessage<RoleServer> = serde_json::from_str(line).unwrap();
        serde_json::to_value(message).unwrap()
    }

    fn ours(line: &str) -> Value {
        match decode(line.as_bytes()) {
            Decoded::Message(message) => serde_json::to_value(*message).unwrap(),
            Decoded::Skip => panic!("skipped {line}"),
            Decoded::Invalid(id) => panic!("invalid ({id:?}): {line}"),
        }
    }

    #[test]
    fn the_fast_path_yields_what_rmcp_parses() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}"#,
            r#"{"method":"tools/call","params":{"arguments":{"n":[1,{"x":null}]},"name":"t"},"id":"abc","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":5,"x":"y"}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"},"extra":true}"#,
            // Not calls, or calls the fast path refuses: rmcp's parse.
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":8,"result":{}}"#,
        ];
        for line in lines {
            assert_eq!(ours(line), full_parse(line), "{line}");
            check_line(line.as_bytes());
        }
        // The fast path takes the calls, and puts `_meta` where rmcp does:
        // in the request's extensions, not its parameters (their JSON is the
        // same either way, so look at the request itself).
        let call = lines[2];
        assert!(serde_json::from_str::<CallLine>(call).is_ok());
        let rmcp_meta = call_meta(serde_json::from_str(call).unwrap());
        let Decoded::Message(message) = decode(call.as_bytes()) else {
            panic!("not decoded")
        };
        let our_meta = call_meta(*message);
        assert_eq!(our_meta, rmcp_meta);
        assert_eq!(our_meta.1.unwrap()["progressToken"], 5);
    }

    #[test]
    fn bad_lines_are_skipped_or_answered() {
        for line in ["", "   ", "not json", "{\"jsonrpc\":", "[1,2"] {
            assert!(matches!(decode(line.as_bytes()), Decoded::Skip), "{line}");
        }
        // A notification nobody knows is dropped, never answered.
        let unknown = r#"{"jsonrpc":"2.0","method":"$/lsp-thing","params":7}"#;
        assert!(matches!(decode(unknown.as_bytes()), Decoded::Skip));
        // JSON with an id that is no MCP message is answered, to that id.
        let wrong = r#"{"jsonrpc":"1.0","id":9,"method":"tools/call","params":{"name":"t"}}"#;
        assert!(matches!(
            decode(wrong.as_bytes()),
            Decoded::Invalid(Some(RequestId::Number(9)))
        ));
        let odd_id = r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#;
        assert!(matches!(decode(odd_id.as_bytes()), Decoded::Invalid(None)));
        // A byte order mark and CRLF are tolerated.
        let crlf = "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n";
        assert!(matches!(
            decode(trim_line(crlf.as_bytes())),
            Decoded::Message(_)
        ));
    }

    fn ping(id: u32) -> String {
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n")
    }

    fn id_of(message: &RxJsonRpcMessage<RoleServer>) -> Value {
        serde_json::to_value(message).unwrap()["id"].clone()
    }

    #[tokio::test]
    async fn a_line_read_in_parts_survives_a_cancelled_receive() {
        let (mut client, server) = tokio::io::duplex(1024);
        let (read, write) = tokio::io::split(server);
        let mut transport = LineTransport::new(read, write);
        let line = ping(1);
        let (head, tail) = line.split_at(10);
        client.write_all(head.as_bytes()).await.unwrap();
        let cancelled = tokio::time::timeout(Duration::from_millis(50), transport.receive()).await;
        assert!(cancelled.is_err(), "half a line is not a message");
        client.write_all(tail.as_bytes()).await.unwrap();
        let message = transport.receive().await.unwrap();
        assert_eq!(id_of(&message), 1);
    }

    #[tokio::test]
    async fn an_over_long_line_is_dropped_and_the_stream_goes_on() {
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"pad\":\"{}\"}}}}\n",
            "x".repeat(300)
        );
        let input = format!("{long}{}", ping(2));
        let mut transport =
            LineTransport::new(input.as_bytes(), tokio::io::sink()).with_max_line(100);
        let message = transport.receive().await.unwrap();
        assert_eq!(id_of(&message), 2);
        assert!(transport.receive().await.is_none(), "end of the stream");
    }

    #[tokio::test]
    async fn answers_are_lines_and_invalid_requests_get_an_error() {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server);
        let (client_read, mut client_write) = tokio::io::split(client);
        let mut transport = LineTransport::new(server_read, server_write);
        let invalid = r#"{"jsonrpc":"1.0","id":"q","method":"ping"}"#;
        client_write
            .write_all(format!("{invalid}\nnot json\n{}", ping(3)).as_bytes())
            .await
            .unwrap();
        let message = transport.receive().await.unwrap();
        assert_eq!(id_of(&message), 3);
        transport
            .send(TxJsonRpcMessage::<RoleServer>::response(
                rmcp::model::ServerResult::EmptyResult(().into()),
                RequestId::Number(3),
            ))
            .await
            .unwrap();
        let mut lines = BufReader::new(client_read).lines();
        let mut answers = Vec::new();
        for _ in 0..2 {
            let line = lines.next_line().await.unwrap().unwrap();
            answers.push(serde_json::from_str::<Value>(&line).unwrap());
        }
        // The error is written by its own task: either may come first.
        answers.sort_by_key(|a| a.get("error").is_some());
        assert_eq!(answers[0]["id"], 3);
        assert_eq!(answers[0]["result"], serde_json::json!({}));
        assert_eq!(answers[1]["id"], "q");
        assert_eq!(answers[1]["error"]["code"], -32600);
        transport.close().await.unwrap();
        let closed = transport
            .send(TxJsonRpcMessage::<RoleServer>::response(
                rmcp::model::ServerResult::EmptyResult(().into()),
                RequestId::Number(4),
            ))
            .await;
        assert!(closed.is_err(), "sending after close fails");
    }
}
