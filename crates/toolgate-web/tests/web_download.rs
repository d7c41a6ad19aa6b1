//! `download_text` against HTTP servers on 127.0.0.1 and a DNS the test
//! controls: the same SSRF rules as `web_fetch`, redirects re-checked,
//! bodies capped. No request leaves 127.0.0.1.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::missing_panics_doc,
    clippy::must_use_candidate,
    unreachable_pub,
    missing_docs,
    reason = "test code: a failed unwrap is a failed test"
)]

mod web_support;

use toolgate_core::error_chain;
use toolgate_web::{DownloadError, RequestError, WebConfig, download_text, download_text_with};
use web_support::{FakeDns, config};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const SKILL: &str = "---\nname: pdf-forms\ndescription: Fill in PDF forms.\n---\nSteps.\n";

async fn serve(server: &MockServer, route: &str, response: ResponseTemplate) {
    Mock::given(method("GET"))
        .and(path(route))
        .respond_with(response)
        .mount(server)
        .await;
}

fn text(body: &[u8]) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body.to_vec(), "text/markdown; charset=utf-8")
}

#[tokio::test]
async fn a_loopback_server_is_refused_by_default() {
    let server = MockServer::start().await;
    serve(&server, "/SKILL.md", text(SKILL.as_bytes())).await;
    let url = format!("{}/SKILL.md", server.uri());
    let error = download_text(&WebConfig::default(), &url, 1024)
        .await
        .unwrap_err();
    assert!(
        matches!(error, DownloadError::Request(RequestError::Refused { .. })),
        "{error:?}"
    );
    let message = error_chain(&error);
    assert!(message.starts_with(&format!("refused {url}")), "{message}");
    assert!(
        message.contains("`127.0.0.1` is a loopback address"),
        "{message}"
    );
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn an_allowed_server_gives_its_text() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/SKILL.md"))
        .and(header("user-agent", "toolgate-test/1"))
        .respond_with(text(SKILL.as_bytes()))
        .expect(1)
        .mount(&server)
        .await;
    let mut config = config(&["127.0.0.1"]);
    config.user_agent = "toolgate-test/1".into();
    let url = format!("{}/SKILL.md", server.uri());
    let got = download_text(&config, &url, 1024).await.unwrap();
    assert_eq!(got, SKILL);
    let requests = server.received_requests().await.unwrap();
    assert_eq!(
        requests[0].headers.get("accept").unwrap(),
        "text/markdown,text/plain;q=0.9,*/*;q=0.1"
    );
}

#[tokio::test]
async fn a_name_resolves_through_the_given_resolver() {
    let server = MockServer::start().await;
    serve(&server, "/SKILL.md", text(SKILL.as_bytes())).await;
    let port = server.address().port();
    let dns = FakeDns::new();
    dns.answer("skills.test", &["127.0.0.1"]);
    dns.answer("private.test", &["10.0.0.7"]);

    // A listed name may resolve to a private address.
    let url = format!("http://skills.test:{port}/SKILL.md");
    let got = download_text_with(&config(&["skills.test"]), dns.clone(), &url, 1024)
        .await
        .unwrap();
    assert_eq!(got, SKILL);

    // An unlisted one may not.
    let url = format!("http://private.test:{port}/SKILL.md");
    let error = download_text_with(&config(&["skills.test"]), dns.clone(), &url, 1024)
        .await
        .unwrap_err();
    assert!(
        error_chain(&error).contains("`private.test` is 10.0.0.7, a private network address"),
        "{}",
        error_chain(&error)
    );
    assert_eq!(dns.lookups(), ["skills.test", "private.test"]);
}

#[tokio::test]
async fn every_redirect_is_checked() {
    let server = MockServer::start().await;
    let port = server.address().port();
    let hop = |to: String| ResponseTemplate::new(302).insert_header("location", to.as_str());
    serve(
        &server,
        "/to-metadata",
        hop("http://169.254.169.254/latest/".into()),
    )
    .await;
    serve(
        &server,
        "/to-localhost",
        hop(format!("http://localhost:{port}/SKILL.md")),
    )
    .await;
    serve(&server, "/to-file", hop("file:///etc/passwd".into())).await;
    serve(&server, "/ok", hop("/SKILL.md".into())).await;
    serve(&server, "/SKILL.md", text(SKILL.as_bytes())).await;
    let allowed = config(&["127.0.0.1"]);
    // (start, a piece of the message)
    let cases: &[(&str, &str)] = &[
        (
            "/to-metadata",
            "`169.254.169.254` is a cloud metadata service address",
        ),
        ("/to-localhost", "`localhost` is a local network name"),
        ("/to-file", "not `file:`"),
    ];
    for (start, message) in cases {
        let url = format!("{}{start}", server.uri());
        let error = download_text(&allowed, &url, 1024).await.unwrap_err();
        let chain = error_chain(&error);
        assert!(chain.contains(message), "{start}: {chain}");
    }
    let url = format!("{}/ok", server.uri());
    assert_eq!(download_text(&allowed, &url, 1024).await.unwrap(), SKILL);
}

#[tokio::test]
async fn only_whole_utf8_text_from_a_success_comes_back() {
    let server = MockServer::start().await;
    serve(&server, "/missing", ResponseTemplate::new(404)).await;
    serve(&server, "/big", text(&vec![b'x'; 2049])).await;
    serve(&server, "/exact", text(&vec![b'x'; 2048])).await;
    serve(&server, "/latin1", text(b"caf\xe9")).await;
    serve(&server, "/nul", text(b"a\0b")).await;
    let allowed = config(&["127.0.0.1"]);
    let get = |route: &str| {
        let url = format!("{}{route}", server.uri());
        let allowed = allowed.clone();
        async move { download_text(&allowed, &url, 2048).await }
    };

    let error = get("/missing").await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("{}/missing answered HTTP 404", server.uri())
    );
    let error = get("/big").await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("{}/big sent more than 2048 bytes", server.uri())
    );
    assert_eq!(get("/exact").await.unwrap().len(), 2048);
    for route in ["/latin1", "/nul"] {
        let error = get(route).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("{}{route} did not send UTF-8 text", server.uri())
        );
    }
}

#[tokio::test]
async fn a_bad_configuration_is_reported() {
    let mut bad = WebConfig::default();
    bad.timeout = 0;
    let error = download_text(&bad, "https://example.com/", 10)
        .await
        .unwrap_err();
    assert_eq!(
        error_chain(&error),
        "the web configuration cannot be used: `web.timeout` is 0; it must be between 1 and 600 seconds"
    );
}
