//! Server-sent events decoded on bytes: a response's `data:` payloads, one
//! event at a time, with a leading byte-order mark and split UTF-8 handled.

use std::ops::ControlFlow;
use std::pin::pin;

use eventsource_stream::{EventStream, EventStreamError};
use futures_util::{Stream, StreamExt as _};

use super::LlmError;

/// The `data` of each server-sent event in `bytes`, in order.
///
/// # Rules
///
/// 1. Bytes are decoded as UTF-8 across chunk boundaries: a character split
///    between two network reads is joined, never replaced by U+FFFD.
/// 2. Lines end in LF, CR LF or CR. An event ends at a blank line; its
///    `data:` lines are joined with LF (one space after the colon dropped).
/// 3. Comments (`: keep-alive`), `event:`, `id:` and `retry:` lines are
///    ignored (both providers repeat the event type inside the JSON). An
///    event whose data is empty (`data:` alone, a keep-alive) is dropped.
/// 4. One byte-order mark at the very start of the body is skipped.
/// 5. The end of the stream ends a last event that the server did not close
///    with a blank line.
/// 6. A transport error is [`LlmError::Stream`]; bytes that are not UTF-8
///    are [`LlmError::Protocol`] (reported when the stream ends, since the
///    decoder cannot tell them from a character still arriving).
///
/// The parsing is `eventsource-stream`'s, which follows the HTML
/// specification of `text/event-stream`. Its own BOM handling slices the
/// first string at byte 1, inside the three-byte BOM, and panics (upstream
/// pull request #10, unmerged in 0.2.3); so the body it sees always starts
/// with an empty line, which it never strips, and rule 4 is applied here,
/// on bytes.
pub(super) fn sse_data<S, B>(bytes: S) -> impl Stream<Item = Result<String, LlmError>>
where
    S: Stream<Item = Result<B, reqwest::Error>>,
    B: AsRef<[u8]>,
{
    // Rule 5: a blank line after the last byte dispatches an unterminated
    // event, and is an empty line (no event) after a terminated one.
    let body = bytes
        .map(|chunk| chunk.map(Piece::Net))
        .chain(futures_util::stream::iter([Ok(Piece::Static(b"\n\n"))]));
    // Rule 4. `head` holds the first bytes while they may still be a BOM;
    // the two bytes of the terminator always settle it.
    let body = body.scan(Some(Vec::new()), |head, chunk| {
        let piece = match (head.as_mut(), chunk) {
            (Some(h), Ok(piece)) => {
                h.extend_from_slice(piece.as_ref());
                if h.len() < BOM.len() && BOM.starts_with(h) {
                    Ok(Piece::Held(Vec::new()))
                } else {
                    let mut h = std::mem::take(h);
                    *head = None;
                    if h.starts_with(BOM) {
                        h.drain(..BOM.len());
                    }
                    Ok(Piece::Held(h))
                }
            }
            (_, chunk) => chunk,
        };
        std::future::ready(Some(piece))
    });
    let body = futures_util::stream::iter([Ok(Piece::Static(b"\n"))]).chain(body);
    EventStream::new(body).filter_map(|event| {
        std::future::ready(match event {
            Ok(event) if event.data.is_empty() => None,
            Ok(event) => Some(Ok(event.data)),
            Err(EventStreamError::Transport(source)) => Some(Err(LlmError::Stream { source })),
            Err(EventStreamError::Utf8(e)) => Some(Err(LlmError::Protocol(format!(
                "the event stream is not UTF-8: {e}"
            )))),
            Err(EventStreamError::Parser(e)) => Some(Err(LlmError::Protocol(format!(
                "the event stream does not parse: {e}"
            )))),
        })
    })
}

/// The UTF-8 byte-order mark.
pub(super) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A piece of a response body on its way to the event parser.
pub(super) enum Piece<B> {
    /// As read from the network.
    Net(B),
    /// The start of the body, held back while it could be a BOM.
    Held(Vec<u8>),
    /// Bytes toolgate adds (the blank lines around the body).
    Static(&'static [u8]),
}

impl<B: AsRef<[u8]>> AsRef<[u8]> for Piece<B> {
    fn as_ref(&self) -> &[u8] {
        match self {
            Self::Net(b) => b.as_ref(),
            Self::Held(v) => v,
            Self::Static(s) => s,
        }
    }
}

/// Calls `f` with the data of each event of a streamed answer, until the
/// stream ends or `f` says the answer is complete.
pub(super) async fn for_each_event(
    resp: reqwest::Response,
    mut f: impl FnMut(&str) -> Result<ControlFlow<()>, LlmError>,
) -> Result<(), LlmError> {
    let mut events = pin!(sse_data(resp.bytes_stream()));
    while let Some(data) = events.next().await {
        if f(&data?)?.is_break() {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wire bytes and the event data they carry. Every payload holds
    /// characters of two, three and four bytes. The rows starting with a
    /// BOM are the regression test of `eventsource-stream`'s BOM panic.
    const WIRE_CASES: &[(&str, &[&str])] = &[
        (
            "data: {\"t\":\"café 日本 🦀\"}\n\n",
            &["{\"t\":\"café 日本 🦀\"}"],
        ),
        (
            "data: é\r\n\r\ndata:日本\r\rdata:  🦀\n\n",
            &["é", "日本", " 🦀"],
        ),
        ("data: ligne é\ndata: 日本\n\n", &["ligne é\n日本"]),
        (
            ": keep-alive é\n\nevent: ping\nid: 7\ndata: 🦀\n\n",
            &["🦀"],
        ),
        ("data:\n\ndata: 日本\n\n", &["日本"]),
        (
            "data: é\n\ndata: 🦀 last, unterminated",
            &["é", "🦀 last, unterminated"],
        ),
        ("\u{feff}data: 日本\r\n\r\n", &["日本"]),
        ("\u{feff}\u{feff}data: é\n\ndata: 日本\n\n", &["日本"]),
        ("data: \u{feff}🦀\n\n", &["\u{feff}🦀"]),
        ("\u{fb01}: x\ndata: 🦀\n\n", &["🦀"]),
        ("", &[]),
    ];
    /// Decodes `chunks` as one response body; the error text on failure.
    async fn decode(chunks: Vec<Vec<u8>>) -> Result<Vec<String>, String> {
        let bytes = futures_util::stream::iter(chunks.into_iter().map(Ok::<_, reqwest::Error>));
        sse_data(bytes)
            .map(|r| r.map_err(|e| e.to_string()))
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect()
    }
    #[tokio::test]
    async fn sse_data_is_whole_wherever_the_bytes_are_split() {
        for (wire, expected) in WIRE_CASES {
            let expected = &Ok(expected.iter().map(|&e| e.to_owned()).collect());
            let bytes = wire.as_bytes();
            assert_eq!(decode(vec![bytes.to_vec()]).await, *expected, "{wire:?}");
            // Every split into two and three chunks, including the ones
            // inside a character and the empty chunks at the ends.
            for i in 0..=bytes.len() {
                let two = vec![bytes[..i].to_vec(), bytes[i..].to_vec()];
                assert_eq!(decode(two).await, *expected, "{wire:?} split at {i}");
                for j in i..=bytes.len() {
                    let three = vec![
                        bytes[..i].to_vec(),
                        bytes[i..j].to_vec(),
                        bytes[j..].to_vec(),
                    ];
                    assert_eq!(decode(three).await, *expected, "{wire:?} split at {i}, {j}");
                }
            }
        }
    }
    #[tokio::test]
    async fn sse_data_one_byte_at_a_time() {
        for (wire, expected) in WIRE_CASES {
            let expected = &Ok(expected.iter().map(|&e| e.to_owned()).collect());
            let bytes: Vec<Vec<u8>> = wire.bytes().map(|b| vec![b]).collect();
            assert_eq!(decode(bytes).await, *expected, "{wire:?}");
        }
    }
    #[tokio::test]
    async fn sse_data_that_is_not_utf8_is_a_protocol_error() {
        let err = decode(vec![b"data: ok\n\ndata: \xff\xfe\n\n".to_vec()]).await;
        // The event before the bad bytes is delivered; the error follows.
        assert!(
            err.as_ref().is_err_and(|e| e.contains("not UTF-8")),
            "{err:?}"
        );
    }
}
