//! Who may talk to the server: the token, the cookie, `Host` and `Origin`.
//!
//! # Rules
//!
//! 1. `toolgate ui` prints a URL with a random token (256 bits). `GET
//!    /?token=T` with that token answers `303` to `/` and sets the cookie
//!    `toolgate_ui` to a second random secret, `HttpOnly; SameSite=Strict;
//!    Path=/`: page scripts cannot read it and no other site's page can
//!    make the browser send it. A wrong token is refused (`403`).
//! 2. Every other request needs that cookie (`401` without it). Secrets are
//!    compared in constant time (`subtle`).
//! 3. `Host` must name the address served (`127.0.0.1:PORT`,
//!    `localhost:PORT`, `[::1]:PORT` on loopback; the address itself
//!    otherwise): a page of another site whose name resolves to 127.0.0.1
//!    (DNS rebinding) sends its own name and is refused (`403`).
//! 4. A request with an `Origin` must come from the served origin; a
//!    request that changes something (any method but `GET`/`HEAD`) must
//!    carry one. `Sec-Fetch-Site: cross-site` is refused. (CSRF.)
//! 5. Every response, refusals included, carries a strict
//!    Content-Security-Policy (no inline script or style, no other
//!    origin), `nosniff`, no referrer and no caching.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

/// The session cookie's name.
pub(crate) const COOKIE: &str = "toolgate_ui";

/// The policy every response carries.
pub(crate) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
frame-ancestors 'none'";

/// The secrets and the names a server answers to, and the decision on
/// each request ([`decide`](Self::decide)).
#[derive(Debug)]
pub struct AuthGuard {
    token: String,
    cookie: String,
    hosts: Vec<String>,
    origins: Vec<String>,
}

/// What [`AuthGuard::decide`] says about a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Serve it.
    Pass,
    /// The right token: answer `303` to `/` setting this `Set-Cookie`.
    SignIn(String),
    /// The page without a session: the sign-in hint (`401`).
    SignInPage,
    /// Refuse it with this status and reason.
    Refuse(StatusCode, &'static str),
}

impl AuthGuard {
    /// Fresh random secrets for a server at `addr`.
    pub fn new(addr: SocketAddr) -> std::io::Result<Self> {
        Ok(Self::with_secrets(addr, random_hex()?, random_hex()?))
    }

    /// A guard with given secrets (tests and fuzzing).
    pub fn with_secrets(addr: SocketAddr, token: String, cookie: String) -> Self {
        let port = addr.port();
        let hosts: Vec<String> = if addr.ip().is_loopback() {
            vec![
                format!("127.0.0.1:{port}"),
                format!("localhost:{port}"),
                format!("[::1]:{port}"),
            ]
        } else {
            vec![addr.to_string()]
        };
        let origins = hosts.iter().map(|h| format!("http://{h}")).collect();
        Self {
            token,
            cookie,
            hosts,
            origins,
        }
    }

    /// The URL to print: the address with the token.
    pub fn url(&self, addr: SocketAddr) -> String {
        format!("http://{addr}/?token={}", self.token)
    }

    /// Rules 1–4 for one request.
    pub fn decide(
        &self,
        method: &Method,
        path: &str,
        query: Option<&str>,
        headers: &HeaderMap,
    ) -> Verdict {
        if !self.host_ok(headers) {
            return Verdict::Refuse(
                StatusCode::FORBIDDEN,
                "this server does not answer to that Host",
            );
        }
        if !self.origin_ok(method, headers) {
            return Verdict::Refuse(
                StatusCode::FORBIDDEN,
                "requests from another origin are refused",
            );
        }
        if path == "/"
            && let Some(token) = Self::token_in(query)
        {
            if !same(token, &self.token) {
                return Verdict::Refuse(StatusCode::FORBIDDEN, "wrong token");
            }
            return Verdict::SignIn(format!(
                "{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/",
                self.cookie
            ));
        }
        if self.cookie_ok(headers) {
            Verdict::Pass
        } else if path == "/" {
            Verdict::SignInPage
        } else {
            Verdict::Refuse(
                StatusCode::UNAUTHORIZED,
                "no session: sign in with the printed address",
            )
        }
    }

    fn host_ok(&self, headers: &HeaderMap) -> bool {
        let mut values = headers.get_all(header::HOST).iter();
        let (Some(host), None) = (values.next(), values.next()) else {
            return false;
        };
        let Ok(host) = host.to_str() else {
            return false;
        };
        self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host))
    }

    fn origin_ok(&self, method: &Method, headers: &HeaderMap) -> bool {
        if headers
            .get_all("sec-fetch-site")
            .iter()
            .any(|v| v.as_bytes().eq_ignore_ascii_case(b"cross-site"))
        {
            return false;
        }
        let mut origins = headers.get_all(header::ORIGIN).iter();
        match (origins.next(), origins.next()) {
            (Some(origin), None) => origin
                .to_str()
                .is_ok_and(|origin| self.origins.iter().any(|o| o.eq_ignore_ascii_case(origin))),
            (None, _) => matches!(*method, Method::GET | Method::HEAD),
            (Some(_), Some(_)) => false,
        }
    }

    fn cookie_ok(&self, headers: &HeaderMap) -> bool {
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .any(|(name, value)| name == COOKIE && same(value, &self.cookie))
    }

    /// The token of a `?token=` query, when the query has one.
    fn token_in(query: Option<&str>) -> Option<&str> {
        query?
            .split('&')
            .find_map(|pair| pair.strip_prefix("token="))
    }
}

/// Whether two secrets are equal, in time that depends on their lengths
/// only.
fn same(given: &str, secret: &str) -> bool {
    bool::from(given.as_bytes().ct_eq(secret.as_bytes()))
}

/// 32 random bytes, hex.
fn random_hex() -> std::io::Result<String> {
    let mut bytes = [0_u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        use std::fmt::Write as _;
        let _ = write!(s, "{b:02x}");
        s
    }))
}

fn refuse(status: StatusCode, why: &str) -> Response {
    let body = serde_json::json!({"error": why, "hint": "open the address `toolgate ui` printed, in a browser on this machine"});
    (status, axum::Json(body)).into_response()
}

/// The middleware applying rules 1–4 (rule 5 is [`secure_headers`]).
pub(crate) async fn check(
    State(guard): State<Arc<AuthGuard>>,
    request: Request,
    next: Next,
) -> Response {
    let uri = request.uri();
    match guard.decide(request.method(), uri.path(), uri.query(), request.headers()) {
        Verdict::Pass => next.run(request).await,
        Verdict::SignIn(cookie) => {
            let mut response = Response::new(Body::empty());
            *response.status_mut() = StatusCode::SEE_OTHER;
            response
                .headers_mut()
                .insert(header::LOCATION, HeaderValue::from_static("/"));
            if let Ok(value) = HeaderValue::from_str(&cookie) {
                response.headers_mut().insert(header::SET_COOKIE, value);
            }
            response
        }
        Verdict::SignInPage => (
            StatusCode::UNAUTHORIZED,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            crate::assets::SIGN_IN,
        )
            .into_response(),
        Verdict::Refuse(status, why) => refuse(status, why),
    }
}

/// Rule 5: the headers every response carries.
pub(crate) async fn secure_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> AuthGuard {
        AuthGuard::new("127.0.0.1:4000".parse().unwrap()).unwrap()
    }

    /// Header name and value pairs of a case.
    type Pairs<'a> = &'a [(&'static str, &'a str)];

    fn headers(pairs: Pairs<'_>) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn hosts() {
        let g = guard();
        let cases: &[(&str, bool)] = &[
            ("127.0.0.1:4000", true),
            ("localhost:4000", true),
            ("LOCALHOST:4000", true),
            ("[::1]:4000", true),
            ("127.0.0.1", false),
            ("127.0.0.1:4001", false),
            ("evil.example:4000", false),
            ("127.0.0.1.nip.io:4000", false),
            ("localhost.:4000", false),
            ("", false),
        ];
        for (host, ok) in cases {
            assert_eq!(g.host_ok(&headers(&[("host", host)])), *ok, "{host}");
        }
        assert!(!g.host_ok(&HeaderMap::new()));
        let remote = AuthGuard::new("192.168.1.5:80".parse().unwrap()).unwrap();
        assert!(remote.host_ok(&headers(&[("host", "192.168.1.5:80")])));
        assert!(!remote.host_ok(&headers(&[("host", "localhost:80")])));
    }

    #[test]
    fn origins() {
        let g = guard();
        let post = Method::POST;
        let get = Method::GET;
        let cases: &[(&Method, Pairs<'_>, bool)] = &[
            (&get, &[], true),
            (&post, &[], false),
            (&post, &[("origin", "http://127.0.0.1:4000")], true),
            (&post, &[("origin", "http://localhost:4000")], true),
            (&post, &[("origin", "null")], false),
            (&post, &[("origin", "http://evil.example")], false),
            (&post, &[("origin", "https://127.0.0.1:4000")], false),
            (
                &post,
                &[("origin", "http://127.0.0.1:4000.evil.example")],
                false,
            ),
            (&get, &[("origin", "http://evil.example")], false),
            (&get, &[("sec-fetch-site", "cross-site")], false),
            (
                &post,
                &[
                    ("origin", "http://127.0.0.1:4000"),
                    ("sec-fetch-site", "same-origin"),
                ],
                true,
            ),
            (&Method::DELETE, &[], false),
            (&Method::PUT, &[], false),
        ];
        for (method, pairs, ok) in cases {
            assert_eq!(
                g.origin_ok(method, &headers(pairs)),
                *ok,
                "{method} {pairs:?}"
            );
        }
    }

    #[test]
    fn cookies() {
        let g = guard();
        let good = format!("{COOKIE}={}", g.cookie);
        assert!(g.cookie_ok(&headers(&[("cookie", &good)])));
        assert!(g.cookie_ok(&headers(&[("cookie", &format!("a=b; {good}; c=d"))])));
        assert!(!g.cookie_ok(&headers(&[("cookie", &format!("{COOKIE}={}", g.token))])));
        assert!(!g.cookie_ok(&headers(&[("cookie", &format!("x{good}"))])));
        assert!(!g.cookie_ok(&headers(&[("cookie", &format!("{good}0"))])));
        assert!(!g.cookie_ok(&headers(&[("cookie", &format!("{COOKIE}="))])));
        assert!(!g.cookie_ok(&HeaderMap::new()));
        assert_ne!(g.token, g.cookie);
        assert_eq!(g.token.len(), 64);
    }

    #[test]
    fn decisions() {
        let g = AuthGuard::with_secrets(
            "127.0.0.1:4000".parse().unwrap(),
            "t0k".into(),
            "c00k".into(),
        );
        let host = ("host", "127.0.0.1:4000");
        let cookie = ("cookie", "toolgate_ui=c00k");
        let origin = ("origin", "http://127.0.0.1:4000");
        let get = Method::GET;
        let post = Method::POST;
        let cases: &[(&Method, &str, Option<&str>, Pairs<'_>, &str)] = &[
            (&get, "/", Some("token=t0k"), &[host], "sign-in"),
            (&get, "/", Some("token=t0K"), &[host], "403"),
            (&get, "/", Some("token="), &[host], "403"),
            (
                &get,
                "/",
                Some("token=t0k"),
                &[("host", "evil:4000")],
                "403",
            ),
            (&get, "/api/state", Some("token=t0k"), &[host], "401"),
            (&get, "/", None, &[host], "page"),
            (&get, "/", None, &[host, cookie], "pass"),
            (&get, "/api/state", None, &[host, cookie], "pass"),
            (&get, "/api/state", None, &[host], "401"),
            (
                &get,
                "/api/state",
                None,
                &[host, ("cookie", "toolgate_ui=t0k")],
                "401",
            ),
            (&post, "/api/runs", None, &[host, cookie], "403"),
            (&post, "/api/runs", None, &[host, cookie, origin], "pass"),
            (
                &post,
                "/api/runs",
                None,
                &[host, cookie, origin, origin],
                "403",
            ),
            (
                &post,
                "/api/runs",
                None,
                &[host, host, cookie, origin],
                "403",
            ),
            (
                &post,
                "/api/runs",
                None,
                &[host, cookie, ("origin", "http://localhost:4000")],
                "pass",
            ),
            (
                &post,
                "/api/runs",
                None,
                &[host, cookie, ("origin", "http://localhost:4001")],
                "403",
            ),
        ];
        for (method, path, query, pairs, expected) in cases {
            let verdict = g.decide(method, path, *query, &headers(pairs));
            let got = match &verdict {
                Verdict::Pass => "pass",
                Verdict::SignIn(cookie) => {
                    assert_eq!(
                        cookie,
                        "toolgate_ui=c00k; HttpOnly; SameSite=Strict; Path=/"
                    );
                    "sign-in"
                }
                Verdict::SignInPage => "page",
                Verdict::Refuse(status, _) => status.as_str(),
            };
            assert_eq!(got, *expected, "{method} {path} {query:?} {pairs:?}");
        }
    }

    #[test]
    fn tokens_in_queries() {
        assert_eq!(AuthGuard::token_in(Some("token=abc")), Some("abc"));
        assert_eq!(AuthGuard::token_in(Some("x=1&token=abc")), Some("abc"));
        assert_eq!(AuthGuard::token_in(Some("xtoken=abc")), None);
        assert_eq!(AuthGuard::token_in(None), None);
    }
}
