//! `toolgate_web::http` against HTTP servers on 127.0.0.1 and a DNS the
//! test controls: methods, headers, basic auth, JSON and form bodies, the
//! SSRF rules on the first URL and on every redirect, credentials kept to
//! their origin, size caps and timeouts. No request leaves 127.0.0.1.

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

use std::time::{Duration, Instant};

use serde_json::json;
use toolgate_web::RequestError;
use toolgate_web::http::{HttpClient, Method};
use toolgate_web::ssrf::UrlRefusal;
use web_support::FakeDns;
use wiremock::matchers::{basic_auth, body_json, body_string, header, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// A client whose DNS answers `api.test` and `evil.test` with 127.0.0.1,
/// and that exempts only `api.test` from the private-address rule.
fn client() -> HttpClient {
    let dns = FakeDns::new();
    dns.answer("api.test", &["127.0.0.1"]);
    dns.answer("evil.test", &["127.0.0.1"]);
    HttpClient::builder()
        .resolver(dns)
        .allow_hosts(["api.test"])
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

fn api(server: &MockServer, route: &str) -> String {
    format!("http://api.test:{}{route}", server.address().port())
}

fn received(server_requests: &[Request], route: &str) -> usize {
    server_requests
        .iter()
        .filter(|r| r.url.path() == route)
        .count()
}

#[tokio::test]
async fn a_post_carries_its_form_body_basic_auth_and_headers() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/calls"))
        .and(basic_auth("AC1", "token"))
        .and(header("x-trace", "abc"))
        .and(header("content-type", "application/x-www-form-urlencoded"))
        .and(body_string("To=%2B3460&Twiml=%3CSay%3Ea+b%3C%2FSay%3E"))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"sid": "CA1"})))
        .expect(1)
        .mount(&server)
        .await;
    let answer = client()
        .post(api(&server, "/calls"))
        .basic_auth("AC1", Some("token"))
        .header("X-Trace", "abc")
        .form(&[("To", "+3460"), ("Twiml", "<Say>a b</Say>")])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 201);
    assert!(answer.is_success());
    assert_eq!(answer.json::<serde_json::Value>().unwrap()["sid"], "CA1");
    assert_eq!(answer.header("content-type"), Some("application/json"));
}

#[tokio::test]
async fn a_json_body_and_other_methods_are_sent_as_asked() {
    let server = MockServer::start().await;
    Mock::given(method("PUT"))
        .and(path("/thing"))
        .and(header("content-type", "application/json"))
        .and(body_json(json!({"name": "x", "n": 2})))
        .respond_with(ResponseTemplate::new(200).set_body_string("put"))
        .mount(&server)
        .await;
    Mock::given(method("DELETE"))
        .and(path("/thing"))
        .respond_with(ResponseTemplate::new(204))
        .mount(&server)
        .await;
    let client = client();
    let put = client
        .request(Method::Put, api(&server, "/thing"))
        .json(&json!({"name": "x", "n": 2}))
        .send()
        .await
        .unwrap();
    assert_eq!((put.status(), put.text().as_ref()), (200, "put"));
    let delete = client
        .request(Method::Delete, api(&server, "/thing"))
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status(), 204);
    assert!(delete.body().is_empty());
}

#[tokio::test]
async fn the_address_rules_apply_unless_the_host_is_exempt() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_string("ok"))
        .mount(&server)
        .await;
    let port = server.address().port();
    let client = client();
    // A name that resolves to loopback, not exempt: refused in the resolver.
    let error = client
        .get(format!("http://evil.test:{port}/"))
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            RequestError::Refused {
                refusal: UrlRefusal::Address { .. },
                ..
            }
        ),
        "{error:?}"
    );
    // The literal address and `localhost`: refused before any request.
    for url in [
        format!("http://127.0.0.1:{port}/"),
        format!("http://localhost:{port}/"),
    ] {
        let error = client.get(url.clone()).send().await.unwrap_err();
        assert!(
            matches!(error, RequestError::Refused { .. }),
            "{url}: {error:?}"
        );
    }
    // The exempt name reaches the server.
    let ok = client.get(api(&server, "/")).send().await.unwrap();
    assert_eq!(ok.text(), "ok");
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    // The default builder exempts nothing: even 127.0.0.1 is refused.
    let strict = HttpClient::builder().build().unwrap();
    let error = strict
        .get(format!("http://127.0.0.1:{port}/"))
        .send()
        .await
        .unwrap_err();
    assert!(matches!(error, RequestError::Refused { .. }), "{error:?}");
}

#[tokio::test]
async fn every_redirect_is_checked_and_a_post_becomes_a_get_after_303() {
    let server = MockServer::start().await;
    let port = server.address().port();
    Mock::given(method("POST"))
        .and(path("/start"))
        .respond_with(ResponseTemplate::new(303).insert_header("location", "/done"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/done"))
        .respond_with(ResponseTemplate::new(200).set_body_string("done"))
        .mount(&server)
        .await;
    Mock::given(path("/to-evil"))
        .respond_with(
            ResponseTemplate::new(302)
                .insert_header("location", format!("http://evil.test:{port}/done").as_str()),
        )
        .mount(&server)
        .await;
    let client = client();
    let done = client
        .post(api(&server, "/start"))
        .json(&json!({"a": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(done.text(), "done");
    assert!(done.url().ends_with("/done"), "{}", done.url());
    let requests = server.received_requests().await.unwrap();
    let second = requests.iter().find(|r| r.url.path() == "/done").unwrap();
    assert!(second.body.is_empty(), "the 303 drops the body");
    assert!(!second.headers.contains_key("content-type"));

    let error = client
        .get(api(&server, "/to-evil"))
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(&error, RequestError::Refused { url, .. } if url.contains("evil.test")),
        "{error:?}"
    );
    let requests = server.received_requests().await.unwrap();
    assert_eq!(received(&requests, "/done"), 1, "evil.test was never asked");
}

#[tokio::test]
async fn credentials_stay_with_their_origin_and_unfollowed_redirects_are_errors() {
    let first = MockServer::start().await;
    let second = MockServer::start().await;
    Mock::given(path("/moved"))
        .respond_with(
            ResponseTemplate::new(307).insert_header("location", api(&second, "/here").as_str()),
        )
        .mount(&first)
        .await;
    Mock::given(path("/here"))
        .respond_with(ResponseTemplate::new(200).set_body_string("here"))
        .mount(&second)
        .await;
    let client = client();
    let answer = client
        .post(api(&first, "/moved"))
        .basic_auth("user", Some("secret"))
        .header("Authorization", "Bearer t")
        .form(&[("k", "v")])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.text(), "here");
    let seen = second.received_requests().await.unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method.as_str(), "POST", "307 repeats the method");
    assert_eq!(seen[0].body, b"k=v", "and the body");
    assert!(
        !seen[0].headers.contains_key("authorization"),
        "no credentials to another origin: {:?}",
        seen[0].headers
    );
    let error = client
        .post(api(&first, "/moved"))
        .basic_auth("user", Some("secret"))
        .follow_redirects(false)
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(&error, RequestError::Redirected { location, .. } if location.ends_with("/here")),
        "{error:?}"
    );
    assert_eq!(second.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_body_over_the_cap_is_refused_whole() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_string("x".repeat(100)))
        .mount(&server)
        .await;
    let client = client();
    let exact = client
        .get(api(&server, "/"))
        .max_body_bytes(100)
        .send()
        .await
        .unwrap();
    assert_eq!(exact.body().len(), 100);
    let error = client
        .get(api(&server, "/"))
        .max_body_bytes(99)
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(error, RequestError::TooLarge { max_bytes: 99, .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_slow_answer_times_out_and_bad_headers_are_reported() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(10)))
        .mount(&server)
        .await;
    let client = client();
    let started = Instant::now();
    let error = client
        .get(api(&server, "/"))
        .timeout(Duration::from_millis(300))
        .send()
        .await
        .unwrap_err();
    assert!(error.is_timeout(), "{error:?}");
    assert_eq!(error.reason(), "the request timed out");
    assert!(started.elapsed() < Duration::from_secs(5));

    let error = client
        .get(api(&server, "/"))
        .header("bad header", "x")
        .send()
        .await
        .unwrap_err();
    assert!(matches!(error, RequestError::Invalid { .. }), "{error:?}");
}

#[tokio::test]
async fn nothing_listening_is_a_connection_failure() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let error = client()
        .get(format!("http://api.test:{port}/"))
        .send()
        .await
        .unwrap_err();
    assert!(error.is_connect(), "{error:?}");
    assert_eq!(error.reason(), "the connection failed");
}
