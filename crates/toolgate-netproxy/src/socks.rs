//! The SOCKS5 side of the proxy (RFC 1928): no authentication, `CONNECT`
//! only, to an IPv4 address, an IPv6 address or a domain name.
//!
//! # Rules
//!
//! 1. The greeting must offer method `0` (no authentication); otherwise the
//!    reply is `0xFF` (no acceptable method) and the connection closes.
//! 2. The request must be version 5 with a zero reserved byte. A command
//!    other than `CONNECT` (`BIND`, `UDP ASSOCIATE`) gets reply `7`
//!    (command not supported); an address type other than 1, 3, 4 gets
//!    `8` (address type not supported).
//! 3. A refused target gets reply `2` (connection not allowed by ruleset);
//!    a target that cannot be reached, `4` (host unreachable) or `5`
//!    (connection refused).
//! 4. Both messages are read whole before anything is decided: a greeting
//!    is at most 257 bytes, a request at most 262.

use std::net::{Ipv4Addr, Ipv6Addr};

/// Reply codes (RFC 1928 §6).
pub(crate) mod reply {
    /// Succeeded.
    pub(crate) const SUCCEEDED: u8 = 0;
    /// General failure.
    pub(crate) const GENERAL_FAILURE: u8 = 1;
    /// Connection not allowed by ruleset.
    pub(crate) const NOT_ALLOWED: u8 = 2;
    /// Host unreachable.
    pub(crate) const HOST_UNREACHABLE: u8 = 4;
    /// Connection refused.
    pub(crate) const CONNECTION_REFUSED: u8 = 5;
    /// TTL expired (used for timeouts).
    pub(crate) const TTL_EXPIRED: u8 = 6;
    /// Command not supported.
    pub(crate) const COMMAND_NOT_SUPPORTED: u8 = 7;
    /// Address type not supported.
    pub(crate) const ADDRESS_NOT_SUPPORTED: u8 = 8;
}

/// A message that cannot be served, and the reply it gets (`None`: close
/// without a reply, the peer does not speak SOCKS5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SocksError {
    /// The reply code to send, if any.
    pub(crate) reply: Option<u8>,
    /// What was wrong.
    pub(crate) reason: &'static str,
}

const fn fail(reply: Option<u8>, reason: &'static str) -> SocksError {
    SocksError { reply, reason }
}

/// Where a request asks to connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SocksTarget {
    /// ATYP 1.
    V4(Ipv4Addr, u16),
    /// ATYP 4.
    V6(Ipv6Addr, u16),
    /// ATYP 3: a name (the client resolves nothing: `socks5h`).
    Name(String, u16),
}

impl SocksTarget {
    /// The host as text (an address literal or the name) and the port.
    pub(crate) fn host_port(&self) -> (String, u16) {
        match self {
            Self::V4(addr, port) => (addr.to_string(), *port),
            Self::V6(addr, port) => (addr.to_string(), *port),
            Self::Name(name, port) => (name.clone(), *port),
        }
    }
}

/// The greeting's length once `buf` holds it all, `Ok(None)` while more is
/// needed (rule 1).
pub(crate) fn greeting(buf: &[u8]) -> Result<Option<usize>, SocksError> {
    let Some(&version) = buf.first() else {
        return Ok(None);
    };
    if version != 5 {
        return Err(fail(None, "not SOCKS version 5"));
    }
    let Some(&count) = buf.get(1) else {
        return Ok(None);
    };
    let len = 2 + usize::from(count);
    let Some(methods) = buf.get(2..len) else {
        return Ok(None);
    };
    if methods.contains(&0) {
        Ok(Some(len))
    } else {
        Err(fail(
            Some(0xff),
            "the client offers no method without authentication",
        ))
    }
}

/// The request and its length once `buf` holds it all, `Ok(None)` while
/// more is needed (rules 2 and 4).
pub(crate) fn request(buf: &[u8]) -> Result<Option<(SocksTarget, usize)>, SocksError> {
    let Some(head) = buf.get(..4) else {
        return Ok(None);
    };
    if head[0] != 5 {
        return Err(fail(None, "not SOCKS version 5"));
    }
    if head[2] != 0 {
        return Err(fail(
            Some(reply::GENERAL_FAILURE),
            "the reserved byte is not zero",
        ));
    }
    if head[1] != 1 {
        return Err(fail(
            Some(reply::COMMAND_NOT_SUPPORTED),
            "only CONNECT is served (not BIND or UDP ASSOCIATE)",
        ));
    }
    let port_at = |at: usize| -> Option<u16> {
        buf.get(at..at + 2)
            .map(|p| u16::from_be_bytes([p[0], p[1]]))
    };
    match head[3] {
        1 => {
            let Some(port) = port_at(8) else {
                return Ok(None);
            };
            let a = &buf[4..8];
            Ok(Some((
                SocksTarget::V4(Ipv4Addr::new(a[0], a[1], a[2], a[3]), port),
                10,
            )))
        }
        4 => {
            let Some(port) = port_at(20) else {
                return Ok(None);
            };
            let mut octets = [0u8; 16];
            octets.copy_from_slice(&buf[4..20]);
            Ok(Some((SocksTarget::V6(Ipv6Addr::from(octets), port), 22)))
        }
        3 => {
            let Some(&len) = buf.get(4) else {
                return Ok(None);
            };
            let len = usize::from(len);
            let Some(port) = port_at(5 + len) else {
                return Ok(None);
            };
            if len == 0 {
                return Err(fail(Some(reply::HOST_UNREACHABLE), "the name is empty"));
            }
            let name = std::str::from_utf8(&buf[5..5 + len])
                .map_err(|_| fail(Some(reply::HOST_UNREACHABLE), "the name is not text"))?;
            Ok(Some((SocksTarget::Name(name.to_owned(), port), 7 + len)))
        }
        _ => Err(fail(
            Some(reply::ADDRESS_NOT_SUPPORTED),
            "the address type is not IPv4, IPv6 or a name",
        )),
    }
}

/// A reply with `code` and an unspecified bound address.
pub(crate) fn reply_bytes(code: u8) -> [u8; 10] {
    [5, code, 0, 1, 0, 0, 0, 0, 0, 0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greetings() {
        type Case = (&'static [u8], Result<Option<usize>, Option<u8>>);
        let cases: &[Case] = &[
            (b"", Ok(None)),
            (b"\x05", Ok(None)),
            (b"\x05\x02\x00", Ok(None)),
            (b"\x05\x01\x00", Ok(Some(3))),
            (b"\x05\x02\x02\x00", Ok(Some(4))),
            (b"\x05\x01\x02", Err(Some(0xff))),
            (b"\x05\x00", Err(Some(0xff))),
            (b"\x04\x01\x00", Err(None)),
            (b"GET / HTTP/1.1\r\n", Err(None)),
        ];
        for (bytes, expected) in cases {
            assert_eq!(&greeting(bytes).map_err(|e| e.reply), expected, "{bytes:?}");
        }
    }

    #[test]
    fn requests() {
        type Case = (
            &'static [u8],
            Result<Option<(SocksTarget, usize)>, Option<u8>>,
        );
        let name = |n: &str, p| Ok(Some((SocksTarget::Name(n.to_owned(), p), 7 + n.len())));
        let cases: &[Case] = &[
            (b"\x05\x01\x00\x01\x7f\x00\x00\x02\x00\x50", Ok(Some((SocksTarget::V4(Ipv4Addr::new(127, 0, 0, 2), 80), 10)))),
            (b"\x05\x01\x00\x01\x7f\x00\x00\x02\x00", Ok(None)),
            (b"\x05\x01\x00\x03\x0bexample.com\x01\xbb", name("example.com", 443)),
            (b"\x05\x01\x00\x03\x0bexample.com\x01", Ok(None)),
            (b"\x05\x01\x00\x03\x0bexam", Ok(None)),
            (b"\x05\x01\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x1f\x90", Ok(Some((SocksTarget::V6(Ipv6Addr::LOCALHOST, 8080), 22)))),
            // BIND and UDP ASSOCIATE.
            (b"\x05\x02\x00\x01\x7f\x00\x00\x01\x00\x50", Err(Some(reply::COMMAND_NOT_SUPPORTED))),
            (b"\x05\x03\x00\x01\x00\x00\x00\x00\x00\x00", Err(Some(reply::COMMAND_NOT_SUPPORTED))),
            (b"\x05\x01\x00\x05\x00", Err(Some(reply::ADDRESS_NOT_SUPPORTED))),
            (b"\x05\x01\x01\x01\x7f\x00\x00\x01\x00\x50", Err(Some(reply::GENERAL_FAILURE))),
            (b"\x04\x01\x00\x50\x7f\x00\x00\x01", Err(None)),
            (b"\x05\x01\x00\x03\x00\x00\x50", Err(Some(reply::HOST_UNREACHABLE))),
            (b"\x05\x01\x00\x03\x02\xff\xfe\x00\x50", Err(Some(reply::HOST_UNREACHABLE))),
        ];
        for (bytes, expected) in cases {
            assert_eq!(&request(bytes).map_err(|e| e.reply), expected, "{bytes:?}");
        }
    }
}
