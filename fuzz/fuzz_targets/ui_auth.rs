//! Arbitrary requests (method, path, query, headers) through the web UI's
//! guard. Nothing may panic, and whatever the guard lets through passes an
//! independent, simpler judgement:
//!
//! - `Pass`: exactly one `Host`, one of the served names; a `Cookie`
//!   header holding `toolgate_ui=<the secret>`; and unless the method is
//!   `GET`/`HEAD`, exactly one `Origin` equal to a served origin;
//! - `SignIn`: the path is `/` and the query holds `token=<the token>`;
//! - no request without the secrets is ever let in.
//!
//!     cargo +nightly fuzz run ui_auth -- -max_total_time=600

#![no_main]

use http::{HeaderMap, HeaderName, HeaderValue, Method};
use libfuzzer_sys::fuzz_target;
use toolgate_ui::auth::{AuthGuard, Verdict};

const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const COOKIE: &str = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";
const HOSTS: &[&str] = &["127.0.0.1:4000", "localhost:4000", "[::1]:4000"];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut lines = text.split('\n');
    let method = match lines.next().unwrap_or_default() {
        "POST" => Method::POST,
        "PUT" => Method::PUT,
        "DELETE" => Method::DELETE,
        "HEAD" => Method::HEAD,
        _ => Method::GET,
    };
    let target = lines.next().unwrap_or_default();
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (target, None),
    };
    let mut headers = HeaderMap::new();
    for line in lines {
        // A few shorthands so the fuzzer reaches the interesting states.
        let line = line
            .replace("@H", HOSTS[0])
            .replace("@C", &format!("toolgate_ui={COOKIE}"))
            .replace("@O", &format!("http://{}", HOSTS[1]));
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.trim().as_bytes()),
            HeaderValue::from_str(value.trim()),
        ) else {
            continue;
        };
        headers.append(name, value);
    }
    let guard = AuthGuard::with_secrets(
        "127.0.0.1:4000".parse().unwrap(),
        TOKEN.to_owned(),
        COOKIE.to_owned(),
    );
    let verdict = guard.decide(&method, path, query, &headers);
    let values = |name: &str| -> Vec<String> {
        headers
            .get_all(name)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect()
    };
    let one_host = {
        let hosts = values("host");
        hosts.len() == 1 && HOSTS.iter().any(|h| h.eq_ignore_ascii_case(&hosts[0]))
    };
    match verdict {
        Verdict::Pass => {
            assert!(one_host, "passed with Host {:?}", values("host"));
            let wanted = format!("toolgate_ui={COOKIE}");
            assert!(
                values("cookie")
                    .iter()
                    .any(|c| c.split(';').any(|p| p.trim() == wanted)),
                "passed without the cookie: {:?}",
                values("cookie")
            );
            if method != Method::GET && method != Method::HEAD {
                let origins = values("origin");
                assert!(
                    origins.len() == 1
                        && HOSTS
                            .iter()
                            .any(|h| origins[0].eq_ignore_ascii_case(&format!("http://{h}"))),
                    "a change passed with Origin {origins:?}"
                );
            }
        }
        Verdict::SignIn(_) => {
            assert!(one_host);
            assert_eq!(path, "/");
            assert!(
                query.is_some_and(|q| q.split('&').any(|p| p == format!("token={TOKEN}"))),
                "signed in with {query:?}"
            );
        }
        Verdict::SignInPage | Verdict::Refuse(..) => {}
    }
});
