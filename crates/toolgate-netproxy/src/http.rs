//! The HTTP side of the proxy: reading a request head, and the two kinds of
//! request it serves.
//!
//! # Rules
//!
//! 1. A head is at most [`MAX_HEAD`] bytes and [`MAX_HEADERS`] header
//!    lines, ended by an empty line (`\r\n\r\n`, or `\n\n`); anything larger
//!    is refused with `431` before it is read further.
//! 2. `CONNECT host:port HTTP/1.x` opens a tunnel (`200`, then bytes both
//!    ways): HTTPS, git over HTTPS, anything a client tunnels.
//! 3. `METHOD http://host[:port]/path HTTP/1.x` (absolute form) is
//!    forwarded: the request line is rewritten to origin form, `Host` is
//!    replaced by the URL's authority (RFC 9112 §3.2.2), the hop-by-hop
//!    `Proxy-*`, `Connection` and `Keep-Alive` headers are dropped and
//!    `Connection: close` is added, so each client connection carries one
//!    request to one checked host.
//! 4. Everything else is refused: origin-form requests (`GET /`: this is
//!    not a web server), `https://` in absolute form (a client must
//!    `CONNECT`), credentials in the URL, obsolete line folding, control
//!    characters, and a version other than HTTP/1.0 or 1.1.

/// The largest request head read.
pub(crate) const MAX_HEAD: usize = 16 * 1024;
/// The most header lines in a head.
pub(crate) const MAX_HEADERS: usize = 100;

/// A request the proxy serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Request {
    /// `CONNECT host:port`.
    Connect {
        /// The host as written (brackets kept off an IPv6 address).
        host: String,
        /// The port.
        port: u16,
    },
    /// An absolute-form request for `http://host:port/…`.
    Forward {
        /// The host as written.
        host: String,
        /// The port (80 when the URL has none).
        port: u16,
        /// The head to send upstream (rule 3).
        head: Vec<u8>,
    },
}

/// Why a head was refused, and the status the client gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeadError {
    /// Larger than [`MAX_HEAD`] or [`MAX_HEADERS`]: `431`.
    TooLarge,
    /// Not a request this proxy reads: `400`.
    Malformed(&'static str),
    /// A request it understands but does not serve: `501`.
    Unsupported(&'static str),
}

impl HeadError {
    /// The status line's code and reason.
    pub(crate) fn status(self) -> (u16, &'static str) {
        match self {
            Self::TooLarge => (431, "Request Header Fields Too Large"),
            Self::Malformed(_) => (400, "Bad Request"),
            Self::Unsupported(_) => (501, "Not Implemented"),
        }
    }

    /// What went wrong, for the body.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Self::TooLarge => "the request head is too large",
            Self::Malformed(why) | Self::Unsupported(why) => why,
        }
    }
}

/// Where the head in `buf` ends (just past its empty line), if it is all
/// there. `Err` when it is already too large (rule 1).
pub(crate) fn head_end(buf: &[u8]) -> Result<Option<usize>, HeadError> {
    let mut line_start = 0;
    let mut lines = 0;
    for (i, &b) in buf.iter().enumerate() {
        if b != b'\n' {
            continue;
        }
        let line = &buf[line_start..i];
        if line.is_empty() || line == b"\r" {
            // An empty line before any request line is tolerated by
            // RFC 9112 §2.2; an empty head is not a request.
            if lines == 0 {
                return Err(HeadError::Malformed("the request is empty"));
            }
            return if i + 1 > MAX_HEAD {
                Err(HeadError::TooLarge)
            } else {
                Ok(Some(i + 1))
            };
        }
        lines += 1;
        if lines > MAX_HEADERS + 1 {
            return Err(HeadError::TooLarge);
        }
        line_start = i + 1;
    }
    if buf.len() >= MAX_HEAD {
        Err(HeadError::TooLarge)
    } else {
        Ok(None)
    }
}

/// Reads a complete head (as [`head_end`] delimits it).
pub(crate) fn parse(head: &[u8]) -> Result<Request, HeadError> {
    if head.len() > MAX_HEAD {
        return Err(HeadError::TooLarge);
    }
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let request_line = lines.next().unwrap_or_default();
    let request_line = std::str::from_utf8(request_line)
        .map_err(|_| HeadError::Malformed("the request line is not text"))?;
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HeadError::Malformed(
            "the request line is not `METHOD TARGET HTTP/1.1`",
        ));
    };
    if method.is_empty() || !method.bytes().all(is_token) {
        return Err(HeadError::Malformed("the method is not a token"));
    }
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err(HeadError::Unsupported(
            "only HTTP/1.0 and HTTP/1.1 are served",
        ));
    }
    if target.is_empty() || target.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(HeadError::Malformed("the target holds a control character"));
    }
    let mut headers: Vec<(&[u8], &[u8])> = Vec::new();
    for line in lines {
        if line.is_empty() {
            break;
        }
        if line[0] == b' ' || line[0] == b'\t' {
            return Err(HeadError::Malformed("obsolete line folding in a header"));
        }
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or(HeadError::Malformed("a header line has no `:`"))?;
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        if name.is_empty() || !name.iter().copied().all(is_token) {
            return Err(HeadError::Malformed("a header name is not a token"));
        }
        if value.iter().any(|&b| (b < b' ' && b != b'\t') || b == 0x7f) {
            return Err(HeadError::Malformed(
                "a header value holds a control character",
            ));
        }
        headers.push((name, value));
        if headers.len() > MAX_HEADERS {
            return Err(HeadError::TooLarge);
        }
    }
    if method == "CONNECT" {
        let (host, port) = authority(target, None)?;
        return Ok(Request::Connect { host, port });
    }
    let Some(rest) = strip_prefix_ignore_case(target, "http://") else {
        if strip_prefix_ignore_case(target, "https://").is_some() {
            return Err(HeadError::Unsupported(
                "an https:// URL goes through CONNECT, not an absolute-form request",
            ));
        }
        return Err(HeadError::Malformed(
            "a proxy request needs an absolute http:// URL or CONNECT",
        ));
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority_text, path) = rest.split_at(end);
    if authority_text.contains('@') {
        return Err(HeadError::Malformed(
            "credentials in the URL are not forwarded",
        ));
    }
    let (host, port) = authority(authority_text, Some(80))?;
    let path = path.split('#').next().unwrap_or_default();
    let path = if path.is_empty() {
        "/".to_owned()
    } else if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_owned()
    };
    let mut out = Vec::with_capacity(head.len() + 32);
    out.extend_from_slice(
        format!("{method} {path} {version}\r\nHost: {authority_text}\r\n").as_bytes(),
    );
    for (name, value) in headers {
        let hop = [
            &b"host"[..],
            b"connection",
            b"keep-alive",
            b"proxy-connection",
            b"proxy-authorization",
            b"proxy-authenticate",
        ]
        .iter()
        .any(|h| name.eq_ignore_ascii_case(h));
        if hop {
            continue;
        }
        out.extend_from_slice(name);
        out.push(b':');
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(Request::Forward {
        host,
        port,
        head: out,
    })
}

/// `host:port` (or `[v6]:port`); the port may be left out when there is a
/// default.
fn authority(text: &str, default_port: Option<u16>) -> Result<(String, u16), HeadError> {
    let bad = HeadError::Malformed("the host is not `host:port`");
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (inside, after) = rest.split_once(']').ok_or(bad)?;
        if inside.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(HeadError::Malformed(
                "the bracketed host is not an IPv6 address",
            ));
        }
        match after {
            "" => (inside, None),
            _ => (inside, Some(after.strip_prefix(':').ok_or(bad)?)),
        }
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    let bracketed = text.starts_with('[');
    if host.is_empty() || host.len() > 253 || (!bracketed && host.contains(':')) {
        return Err(bad);
    }
    let port = match (port, default_port) {
        (Some(port), _) => port
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0 && port.bytes().all(|b| b.is_ascii_digit()))
            .ok_or(HeadError::Malformed(
                "the port is not a number from 1 to 65535",
            ))?,
        (None, Some(default)) => default,
        (None, None) => return Err(HeadError::Malformed("CONNECT needs `host:port`")),
    };
    Ok((host.to_owned(), port))
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// RFC 9110 `tchar`.
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A complete response with a plain-text body and `Connection: close`.
pub(crate) fn response(code: u16, reason: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\nX-Toolgate-Proxy: refused\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connect(host: &str, port: u16) -> Request {
        Request::Connect {
            host: host.to_owned(),
            port,
        }
    }

    #[test]
    fn heads() {
        let cases: &[(&str, Result<Request, HeadError>)] = &[
            (
                "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
                Ok(connect("example.com", 443)),
            ),
            (
                "CONNECT example.com:443 HTTP/1.0\n\n",
                Ok(connect("example.com", 443)),
            ),
            (
                "CONNECT [::1]:8443 HTTP/1.1\r\n\r\n",
                Ok(connect("::1", 8443)),
            ),
            (
                "CONNECT 127.0.0.2:80 HTTP/1.1\r\n\r\n",
                Ok(connect("127.0.0.2", 80)),
            ),
            (
                "CONNECT example.com HTTP/1.1\r\n\r\n",
                Err(HeadError::Malformed("CONNECT needs `host:port`")),
            ),
            (
                "CONNECT example.com:0 HTTP/1.1\r\n\r\n",
                Err(HeadError::Malformed(
                    "the port is not a number from 1 to 65535",
                )),
            ),
            (
                "CONNECT example.com:65536 HTTP/1.1\r\n\r\n",
                Err(HeadError::Malformed(
                    "the port is not a number from 1 to 65535",
                )),
            ),
            (
                "CONNECT example.com:+443 HTTP/1.1\r\n\r\n",
                Err(HeadError::Malformed(
                    "the port is not a number from 1 to 65535",
                )),
            ),
            (
                "CONNECT :443 HTTP/1.1\r\n\r\n",
                Err(HeadError::Malformed("the host is not `host:port`")),
            ),
            (
                "CONNECT [nothost]:443 HTTP/1.1\r\n\r\n",
                Err(HeadError::Malformed(
                    "the bracketed host is not an IPv6 address",
                )),
            ),
            (
                "CONNECT a:b:443 HTTP/1.1\r\n\r\n",
                Err(HeadError::Malformed("the host is not `host:port`")),
            ),
            (
                "CONNECT example.com:443  HTTP/1.1\r\n\r\n",
                Err(HeadError::Malformed(
                    "the request line is not `METHOD TARGET HTTP/1.1`",
                )),
            ),
            (
                "CONNECT example.com:443\r\n\r\n",
                Err(HeadError::Malformed(
                    "the request line is not `METHOD TARGET HTTP/1.1`",
                )),
            ),
            (
                "CONNECT example.com:443 HTTP/2\r\n\r\n",
                Err(HeadError::Unsupported(
                    "only HTTP/1.0 and HTTP/1.1 are served",
                )),
            ),
            (
                "CONN(ECT example.com:443 HTTP/1.1\r\n\r\n",
                Err(HeadError::Malformed("the method is not a token")),
            ),
            (
                "CONNECT example.com:443 HTTP/1.1\r\nX: a\r\n b\r\n\r\n",
                Err(HeadError::Malformed("obsolete line folding in a header")),
            ),
            (
                "CONNECT example.com:443 HTTP/1.1\r\nNoColon\r\n\r\n",
                Err(HeadError::Malformed("a header line has no `:`")),
            ),
            (
                "CONNECT example.com:443 HTTP/1.1\r\nBad Name: x\r\n\r\n",
                Err(HeadError::Malformed("a header name is not a token")),
            ),
            (
                "CONNECT example.com:443 HTTP/1.1\r\nX: a\x01b\r\n\r\n",
                Err(HeadError::Malformed(
                    "a header value holds a control character",
                )),
            ),
            (
                "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
                Err(HeadError::Malformed(
                    "a proxy request needs an absolute http:// URL or CONNECT",
                )),
            ),
            (
                "GET https://example.com/ HTTP/1.1\r\n\r\n",
                Err(HeadError::Unsupported(
                    "an https:// URL goes through CONNECT, not an absolute-form request",
                )),
            ),
            (
                "GET http://user:pw@example.com/ HTTP/1.1\r\n\r\n",
                Err(HeadError::Malformed(
                    "credentials in the URL are not forwarded",
                )),
            ),
        ];
        for (head, expected) in cases {
            assert_eq!(&parse(head.as_bytes()), expected, "{head:?}");
        }
    }

    #[test]
    fn forwarded_heads_are_rewritten() {
        let head = "GET HTTP://Example.com:8080/a/b?q=1#frag HTTP/1.1\r\nHost: evil.example\r\n\
                    User-Agent: t\r\nProxy-Authorization: Basic eA==\r\nProxy-Connection: keep-alive\r\n\
                    Connection: keep-alive\r\nAccept: */*\r\n\r\n";
        let Ok(Request::Forward { host, port, head }) = parse(head.as_bytes()) else {
            panic!("not a forward");
        };
        assert_eq!((host.as_str(), port), ("Example.com", 8080));
        assert_eq!(
            String::from_utf8(head).unwrap(),
            "GET /a/b?q=1 HTTP/1.1\r\nHost: Example.com:8080\r\nUser-Agent: t\r\nAccept: */*\r\n\
             Connection: close\r\n\r\n"
        );
        let Ok(Request::Forward { port, head, .. }) =
            parse(b"POST http://example.com?x HTTP/1.0\r\nContent-Length: 2\r\n\r\n")
        else {
            panic!("not a forward");
        };
        assert_eq!(port, 80);
        assert!(
            String::from_utf8(head)
                .unwrap()
                .starts_with("POST /?x HTTP/1.0\r\nHost: example.com\r\n")
        );
    }

    #[test]
    fn head_limits() {
        assert_eq!(head_end(b"CONNECT a:1 HTTP/1.1\r\n"), Ok(None));
        assert_eq!(head_end(b"CONNECT a:1 HTTP/1.1\r\n\r\nextra"), Ok(Some(24)));
        assert_eq!(head_end(b"CONNECT a:1 HTTP/1.1\n\nextra"), Ok(Some(22)));
        assert_eq!(
            head_end(b"\r\n"),
            Err(HeadError::Malformed("the request is empty"))
        );
        let mut long = b"GET http://a/ HTTP/1.1\r\nX: ".to_vec();
        long.resize(MAX_HEAD, b'a');
        assert_eq!(head_end(&long), Err(HeadError::TooLarge));
        let mut many = b"GET http://a/ HTTP/1.1\r\n".to_vec();
        for _ in 0..=MAX_HEADERS {
            many.extend_from_slice(b"X: y\r\n");
        }
        assert_eq!(head_end(&many), Err(HeadError::TooLarge));
        many.extend_from_slice(b"\r\n");
        assert_eq!(parse(&many), Err(HeadError::TooLarge));
    }
}
