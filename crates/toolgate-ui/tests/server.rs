//! The UI server over real HTTP on 127.0.0.1: who is let in, the headers
//! every answer carries, and the embedded assets' budget and hygiene.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::Arc;

use reqwest::StatusCode;
use reqwest::header::{CONTENT_SECURITY_POLICY, COOKIE, HOST, LOCATION, ORIGIN, SET_COOKIE};
use toolgate_host::Host;
use toolgate_ui::{UiError, UiOptions, UiServer};

struct Served {
    server: UiServer,
    _dir: tempfile::TempDir,
    client: reqwest::Client,
}

impl Served {
    async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("home")).unwrap();
        let home = dir.path().join("home").display().to_string();
        let host = Host::builder()
            .workspace(dir.path())
            .env([("HOME".to_owned(), home)])
            .load()
            .unwrap();
        let server = UiServer::start(
            Arc::new(host),
            UiOptions::new("127.0.0.1:0".parse().unwrap()),
        )
        .await
        .unwrap();
        // reqwest is built without a default TLS provider in this
        // workspace; plain HTTP still needs one installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        Self {
            server,
            _dir: dir,
            client,
        }
    }

    fn base(&self) -> String {
        format!("http://{}", self.server.addr())
    }

    fn origin(&self) -> String {
        self.base()
    }

    /// Signs in with the printed URL and returns the cookie header value.
    async fn sign_in(&self) -> String {
        let response = self.client.get(self.server.url()).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        assert_eq!(response.headers()[LOCATION], "/");
        let cookie = response.headers()[SET_COOKIE].to_str().unwrap().to_owned();
        for flag in ["HttpOnly", "SameSite=Strict", "Path=/"] {
            assert!(cookie.contains(flag), "{cookie}");
        }
        cookie.split(';').next().unwrap().to_owned()
    }
}

#[tokio::test]
async fn requests_without_the_cookie_with_a_wrong_token_or_foreign_host_or_origin_are_refused() {
    let s = Served::start().await;
    let base = s.base();
    let url = s.server.url().to_owned();
    let token = url.split("token=").nth(1).unwrap();

    // No cookie.
    for path in [
        "/api/state",
        "/api/sessions",
        "/api/events",
        "/app.js",
        "/api/rules",
    ] {
        let r = s.client.get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{path}");
        assert!(r.headers().contains_key(CONTENT_SECURITY_POLICY), "{path}");
    }
    let page = s.client.get(format!("{base}/")).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::UNAUTHORIZED);
    assert!(page.text().await.unwrap().contains("Open the address"));

    // Wrong tokens: one character off, cut, empty, the cookie's place.
    let mut off = token.to_owned();
    off.replace_range(0..1, if token.starts_with('0') { "1" } else { "0" });
    for bad in [off.as_str(), &token[..63], "", "x"] {
        let r = s
            .client
            .get(format!("{base}/?token={bad}"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{bad}");
        assert!(!r.headers().contains_key(SET_COOKIE));
    }

    let cookie = s.sign_in().await;
    let ok = s
        .client
        .get(format!("{base}/api/state"))
        .header(COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), StatusCode::OK);

    // A cookie with a wrong secret, or the token in the cookie.
    for bad in [
        format!("toolgate_ui={token}"),
        format!("{cookie}x"),
        "toolgate_ui=".to_owned(),
    ] {
        let r = s
            .client
            .get(format!("{base}/api/state"))
            .header(COOKIE, bad.as_str())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{bad}");
    }

    // DNS rebinding: the right cookie, a foreign Host.
    let port = s.server.addr().port();
    for host in [
        format!("evil.example:{port}"),
        format!("127.0.0.1.nip.io:{port}"),
        "127.0.0.1".to_owned(),
    ] {
        let r = s
            .client
            .get(format!("{base}/api/state"))
            .header(COOKIE, &cookie)
            .header(HOST, host.as_str())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{host}");
    }
    // The sign-in itself is refused under a foreign Host.
    let r = s
        .client
        .get(&url)
        .header(HOST, format!("evil.example:{port}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);

    // CSRF: a change without Origin, from another origin, or cross-site.
    let post = |origin: Option<&str>, site: Option<&str>| {
        let mut request = s
            .client
            .post(format!("{base}/api/rules"))
            .header(COOKIE, &cookie)
            .header("content-type", "application/json")
            .body(r#"{"tool":"read_file","decision":"allow"}"#);
        if let Some(origin) = origin {
            request = request.header(ORIGIN, origin);
        }
        if let Some(site) = site {
            request = request.header("sec-fetch-site", site);
        }
        request.send()
    };
    for (origin, site) in [
        (None, None),
        (Some("http://evil.example"), None),
        (Some("null"), None),
        (Some(&*format!("http://127.0.0.1:{}", port + 1)), None),
        (Some(&*s.origin()), Some("cross-site")),
    ] {
        let r = post(origin, site).await.unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{origin:?} {site:?}");
    }
    // Nothing was written by the refused requests.
    let rules: serde_json::Value = s
        .client
        .get(format!("{base}/api/rules"))
        .header(COOKIE, &cookie)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(rules["rules"].as_array().unwrap().len(), 0, "{rules}");
    // The same request from the page's origin is taken.
    let r = post(Some(&s.origin()), Some("same-origin")).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK, "{}", r.text().await.unwrap());
}

#[tokio::test]
async fn every_answer_carries_a_strict_policy_and_the_assets_are_served() {
    let s = Served::start().await;
    let cookie = s.sign_in().await;
    for (path, kind) in [
        ("/", "text/html"),
        ("/app.js", "text/javascript"),
        ("/app.css", "text/css"),
        ("/api/state", "application/json"),
        ("/nope", "application/json"),
    ] {
        let r = s
            .client
            .get(format!("{}{path}", s.base()))
            .header(COOKIE, &cookie)
            .send()
            .await
            .unwrap();
        let headers = r.headers();
        let csp = headers[CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(csp.contains("default-src 'none'"), "{csp}");
        assert!(
            csp.contains("script-src 'self'") && !csp.contains("unsafe"),
            "{csp}"
        );
        assert_eq!(headers["x-content-type-options"], "nosniff");
        assert!(
            headers["content-type"].to_str().unwrap().starts_with(kind),
            "{path}: {:?}",
            headers["content-type"]
        );
    }
}

#[tokio::test]
async fn a_non_loopback_address_needs_the_explicit_flag() {
    let dir = tempfile::tempdir().unwrap();
    let host = Arc::new(Host::builder().workspace(dir.path()).load().unwrap());
    let options = UiOptions::new("0.0.0.0:0".parse().unwrap());
    let error = UiServer::start(Arc::clone(&host), options)
        .await
        .unwrap_err();
    assert!(matches!(error, UiError::Remote(_)), "{error}");
    assert!(error.hint().contains("--allow-remote"));
}

#[test]
fn the_assets_fit_the_budget_and_keep_to_the_policy() {
    let size = toolgate_ui::assets_size();
    assert!(size <= 200 * 1024, "assets are {size} bytes, over 200 KB");
    let html = include_str!("../assets/index.html");
    let js = include_str!("../assets/app.js");
    let lower = html.to_ascii_lowercase();
    // Scripts only from files; no inline handlers or styles.
    for (at, _) in lower.match_indices("<script") {
        let tag = &lower[at..at + lower[at..].find('>').unwrap()];
        assert!(tag.contains("src="), "inline script: {tag}");
    }
    for bad in [
        "<style",
        " style=",
        " onclick=",
        " onload=",
        " onerror=",
        "javascript:",
    ] {
        assert!(!lower.contains(bad), "index.html contains {bad}");
    }
    // Text goes in as text.
    for bad in [
        ".innerHTML",
        ".outerHTML",
        "insertAdjacentHTML(",
        "document.write(",
        "eval(",
        "new Function",
        "setAttribute('on",
        "setAttribute(\"on",
    ] {
        assert!(!js.contains(bad), "app.js uses {bad}");
    }
}
