//! `commands.network` with lists, through the whole gate: a command reaches
//! a listed address, an unlisted host is a question to the gate's approver
//! (a `network` call that reaches host:port) in the default mode and is
//! refused at once in `yolo`, and every connection is in the audit.
//!
//! The server is a mock on the host's `127.0.0.1`; the sandboxed command
//! cannot reach it but through the proxy, because it has its own network
//! namespace (whose `127.0.0.1` is another place).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a failed unwrap is a failed test"
)]

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolgate_core::ToolCall;
use toolgate_engine::{Action, Approval, ApprovalRequest, Approver};
use toolgate_host::{Host, TrustPolicy};
use toolgate_sandbox::NetworkMode;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A person who allows everything and remembers what they were shown.
#[derive(Default)]
struct Person {
    seen: Mutex<Vec<(String, Vec<Action>)>>,
}

#[async_trait::async_trait]
impl Approver for Person {
    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval {
        self.seen
            .lock()
            .unwrap()
            .push((request.tool.to_owned(), request.view.actions.clone()));
        Approval::Allow
    }

    fn kind(&self) -> &'static str {
        "person"
    }
}

async fn server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_string("hello from the host\n"))
        .mount(&server)
        .await;
    server
}

fn host(dir: &std::path::Path, mode: &str, port: u16) -> Host {
    let config = format!(
        "confirmation: {{mode: {mode}}}\naudit: {{path: audit.jsonl}}\ncommands:\n  network:\n    \
         allow: ['127.0.0.1:{port}']\n    deny: [denied.invalid]\n"
    );
    std::fs::write(dir.join("toolgate.yaml"), config).unwrap();
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let env = vec![
        ("HOME".to_owned(), dir.join("home").display().to_string()),
        ("PATH".to_owned(), std::env::var("PATH").unwrap()),
    ];
    Host::builder()
        .workspace(dir)
        .env(env)
        .trust(TrustPolicy::ThisRun)
        .load()
        .unwrap()
}

fn audit(dir: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("audit.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|r: &Value| r["tool"] == "network")
        .collect()
}

/// `curl` through the proxy. `--noproxy ''`: the sandbox's `NO_PROXY`
/// sends loopback names straight to the namespace's own loopback (servers
/// the command started), and this server is on the host's.
fn curl(url: &str) -> ToolCall {
    ToolCall::new(
        "1",
        "run_command",
        json!({"command": format!("curl -sS --max-time 20 --noproxy '' {url}")}),
    )
}

#[tokio::test]
async fn an_unlisted_host_is_asked_about_like_a_call() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let server = server().await;
    let port = server.address().port();
    let host = host(dir.path(), "confirm-sensitive", port);
    let status = host.sandbox().unwrap().network_status();
    assert_eq!(status.mode(), NetworkMode::Proxied, "{status}");

    let person = Arc::new(Person::default());
    let gate = host
        .gate()
        .interactive(Some(Arc::clone(&person) as Arc<dyn Approver>))
        .session_id("s1")
        .build()
        .await
        .unwrap();
    // A listed address: nobody is asked about the connection.
    let done = gate
        .engine
        .execute(curl(&format!("http://127.0.0.1:{port}/a")))
        .await;
    assert!(
        done.result.output.contains("hello from the host"),
        "{:?}",
        done.result
    );
    let asked: Vec<String> = person
        .seen
        .lock()
        .unwrap()
        .iter()
        .map(|(t, _)| t.clone())
        .collect();
    assert!(!asked.iter().any(|t| t == "network"), "{asked:?}");

    // `localhost` is not listed: the person is asked, as for a call whose
    // one effect reaches localhost:PORT; allowed, it resolves to an
    // address the list names.
    let done = gate
        .engine
        .execute(curl(&format!("http://localhost:{port}/b")))
        .await;
    assert!(
        done.result.output.contains("hello from the host"),
        "{:?}",
        done.result
    );
    let network: Vec<Vec<Action>> = person
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(t, _)| t == "network")
        .map(|(_, a)| a.clone())
        .collect();
    assert_eq!(network.len(), 1, "{network:?}");
    assert!(
        matches!(&network[0][..], [Action::Network { url, .. }] if *url == format!("localhost:{port}")),
        "{network:?}"
    );
    // Denied by name: refused, whatever the person would say.
    let done = gate.engine.execute(curl("http://denied.invalid/")).await;
    assert!(
        done.result.output.contains("denied by `denied.invalid`"),
        "{:?}",
        done.result
    );
    gate.shutdown().await;
    drop(gate);
    host.flush().await;

    let records = audit(dir.path());
    let decisions: Vec<(&str, &str)> = records
        .iter()
        .map(|r| {
            (
                r["effects"]["known"][0]["url"].as_str().unwrap(),
                r["decision"].as_str().unwrap(),
            )
        })
        .collect();
    let listed = format!("127.0.0.1:{port}");
    let asked = format!("localhost:{port}");
    assert_eq!(
        decisions,
        [
            (listed.as_str(), "allowed"),
            (asked.as_str(), "approved"),
            ("denied.invalid:80", "refused"),
        ]
    );
    assert!(records.iter().all(|r| r["session_id"] == "s1"));
    assert!(records[0]["transfer"]["received"].as_u64().unwrap() > 0);
    assert!(
        records[2]["error"]
            .as_str()
            .unwrap()
            .contains("denied.invalid")
    );
}

#[tokio::test]
async fn yolo_refuses_unlisted_hosts_at_once() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let server = server().await;
    let port = server.address().port();
    let host = host(dir.path(), "yolo", port);
    let person = Arc::new(Person::default());
    let gate = host
        .gate()
        .interactive(Some(Arc::clone(&person) as Arc<dyn Approver>))
        .build()
        .await
        .unwrap();
    let done = gate
        .engine
        .execute(curl(&format!("http://localhost:{port}/b")))
        .await;
    assert!(
        done.result
            .output
            .contains("`localhost` is not in the allow list; add it to commands.network.allow"),
        "{:?}",
        done.result
    );
    assert!(person.seen.lock().unwrap().is_empty());
    let done = gate
        .engine
        .execute(curl(&format!("http://127.0.0.1:{port}/a")))
        .await;
    assert!(
        done.result.output.contains("hello from the host"),
        "{:?}",
        done.result
    );
    gate.shutdown().await;
    drop(gate);
    let records = audit(dir.path());
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["decision"], "refused");
    assert_eq!(records[1]["decision"], "allowed");
}
