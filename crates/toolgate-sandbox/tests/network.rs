#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs,
    reason = "test code: a failed unwrap is a failed test"
)]
//! The network policy through real processes: a sandboxed `curl`, Python
//! and `git` reach an allowed server and are refused on another, an
//! unlisted name is asked about (and refused when nobody can be asked),
//! raw sockets reach nothing, and every connection is reported.
//!
//! Two HTTP servers (Python's `http.server`) listen on loopback aliases,
//! `127.0.0.2` (allowed) and `127.0.0.3` (not); a resolver given to the
//! policy maps test names to them, so nothing depends on `/etc/hosts` or
//! DNS. Like the other sandbox tests, these need the full sandbox and fail
//! where it is missing.

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader};
use std::net::IpAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use toolgate_sandbox::{
    ConnectionRecord, ConsentAnswer, ConsentRequest, Decision, EnvPolicy, Level, NetworkConsent,
    NetworkMode, NetworkObserver, NetworkPolicy, Profile, Resolve, RunOptions, Sandbox, Spawn,
};

/// A Python `http.server` on `addr`, serving `dir`; killed on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(addr: &str, dir: &Path) -> Self {
        let mut child = Command::new("python3")
            .args([
                "-u",
                "-m",
                "http.server",
                "--bind",
                addr,
                "0",
                "--directory",
            ])
            .arg(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Ready when it says where it serves.
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .split(" port ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Self { child, port }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Test names, mapped to the loopback aliases.
#[derive(Debug)]
struct Names(HashMap<&'static str, IpAddr>);

#[async_trait]
impl Resolve for Names {
    async fn resolve(&self, host: &str, _port: u16) -> std::io::Result<Vec<IpAddr>> {
        self.0.get(host).map(|a| vec![*a]).ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::NotFound, format!("no such name {host}"))
        })
    }
}

/// Answers questions from a script, and remembers them.
struct Scripted {
    answers: Mutex<Vec<ConsentAnswer>>,
    asked: Mutex<Vec<ConsentRequest>>,
}

#[async_trait]
impl NetworkConsent for Scripted {
    async fn ask(&self, request: &ConsentRequest) -> ConsentAnswer {
        self.asked.lock().unwrap().push(request.clone());
        let mut answers = self.answers.lock().unwrap();
        if answers.is_empty() {
            ConsentAnswer::Deny
        } else {
            answers.remove(0)
        }
    }
}

#[derive(Default)]
struct Records(Mutex<Vec<ConnectionRecord>>);

impl NetworkObserver for Records {
    fn connection(&self, record: &ConnectionRecord) {
        self.0.lock().unwrap().push(record.clone());
    }
}

struct World {
    _dirs: Vec<tempfile::TempDir>,
    allowed: Server,
    other: Server,
    sandbox: Sandbox,
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git {args:?}");
}

fn world() -> World {
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws = base.path().join("ws");
    let served_a = base.path().join("a");
    let served_b = base.path().join("b");
    for dir in [&ws, &served_a, &served_b] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(served_a.join("hello.txt"), "hello from allowed\n").unwrap();
    std::fs::write(served_b.join("hello.txt"), "hello from other\n").unwrap();
    // A bare repository served as files ("dumb" HTTP).
    let src = base.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    git(&src, &["init", "-q", "-b", "main"]);
    std::fs::write(src.join("README"), "hi\n").unwrap();
    git(&src, &["add", "README"]);
    git(
        &src,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-qm",
            "one",
        ],
    );
    git(base.path(), &["clone", "-q", "--bare", "src", "a/repo.git"]);
    git(&served_a.join("repo.git"), &["update-server-info"]);
    std::fs::copy(served_a.join("hello.txt"), served_b.join("x")).unwrap();

    let allowed = Server::start("127.0.0.2", &served_a);
    let other = Server::start("127.0.0.3", &served_b);
    let ip = |s: &str| s.parse::<IpAddr>().unwrap();
    let names = Names(HashMap::from([
        ("allowed.test", ip("127.0.0.2")),
        ("asked.test", ip("127.0.0.2")),
        ("denied.test", ip("127.0.0.2")),
        ("other.test", ip("127.0.0.3")),
        ("rebind.wild.test", ip("127.0.0.3")),
    ]));
    let policy = NetworkPolicy::builder()
        // An exact name may reach a private address; a wildcard may not;
        // an address entry covers any name that resolves to it.
        .allow(["allowed.test", "*.wild.test", "127.0.0.2"])
        .deny(["denied.test"])
        .hint("add it to commands.network.allow")
        .resolver(Arc::new(names))
        .build()
        .unwrap();
    let host_env = [
        ("PATH", std::env::var("PATH").unwrap()),
        ("HOME", base.path().join("home").display().to_string()),
        ("LANG", "C.UTF-8".to_owned()),
        // The host's proxy settings must not leak through.
        ("https_proxy", "http://proxy.invalid:3128".to_owned()),
        ("NO_PROXY", "*".to_owned()),
    ];
    let sandbox = Sandbox::builder(&ws)
        .host_env(host_env)
        .env_policy(EnvPolicy::new())
        .network_policy(policy)
        .build()
        .unwrap();
    assert_eq!(
        sandbox.status().level(),
        Level::Full,
        "this machine cannot run the full sandbox: {}",
        sandbox.status()
    );
    World {
        _dirs: vec![base],
        allowed,
        other,
        sandbox,
    }
}

async fn run(world: &World, line: &str) -> (i32, String) {
    run_in(world, line, Profile::Standard).await
}

async fn run_in(world: &World, line: &str, profile: Profile) -> (i32, String) {
    let spawn = Spawn::shell(line).profile(profile);
    let done = world
        .sandbox
        .run(&spawn, &RunOptions::new(Duration::from_secs(60)))
        .await
        .unwrap();
    (
        done.exit_code.unwrap_or(-1),
        format!("{}{}", done.stdout, done.stderr),
    )
}

fn scripted(answers: &[ConsentAnswer]) -> Arc<Scripted> {
    Arc::new(Scripted {
        answers: Mutex::new(answers.to_vec()),
        asked: Mutex::new(Vec::new()),
    })
}

/// A connection is reported to the attachment that was the newest when it
/// started, even when another attaches before it ends, and `settle` waits
/// until it is: the audit of a gate holds its commands' last connections.
#[tokio::test]
async fn a_connection_reports_to_the_attachment_it_started_under() {
    let w = world();
    let first = Arc::new(Records::default());
    let attached = w
        .sandbox
        .attach_network(None, Some(Arc::clone(&first) as Arc<dyn NetworkObserver>));
    let a = w.allowed.port;
    // A tunnel through the proxy held open for 3 s; a newer attachment
    // comes 1 s into it.
    let line = format!(
        "python3 -c 'import os, socket, time, urllib.parse as u; \
         p = u.urlsplit(os.environ[\"HTTP_PROXY\"]); \
         s = socket.create_connection((p.hostname, p.port)); \
         s.sendall(b\"CONNECT allowed.test:{a} HTTP/1.1\\r\\nHost: allowed.test:{a}\\r\\n\\r\\n\"); \
         print(s.recv(100).split()[1].decode()); time.sleep(3); s.close()'"
    );
    let download = run(&w, &line);
    let later = async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let second = Arc::new(Records::default());
        let newer = w
            .sandbox
            .attach_network(None, Some(Arc::clone(&second) as Arc<dyn NetworkObserver>));
        (second, newer)
    };
    let ((code, out), (second, _newer)) = tokio::join!(download, later);
    assert!(code == 0 && out.trim() == "200", "{code}: {out}");
    assert!(attached.settle(Duration::from_secs(10)).await);
    let first = first.0.lock().unwrap();
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(first[0].host, "allowed.test");
    assert!(second.0.lock().unwrap().is_empty());
}

#[tokio::test]
async fn clients_reach_the_allowed_server_and_not_the_other() {
    let w = world();
    let records = Arc::new(Records::default());
    let _attached = w
        .sandbox
        .attach_network(None, Some(Arc::clone(&records) as Arc<dyn NetworkObserver>));
    let status = w.sandbox.network_status();
    assert_eq!(status.mode(), NetworkMode::Proxied, "{status}");
    let (a, b) = (w.allowed.port, w.other.port);
    let curl = "curl -sS --max-time 20";
    let urlopen = "python3 -c 'import sys, urllib.request; \
                   print(urllib.request.urlopen(sys.argv[1], timeout=20).read().decode())'";
    let reach: &[String] = &[
        // Plain HTTP through the proxy (absolute form).
        format!("{curl} http://allowed.test:{a}/hello.txt"),
        // The same through a CONNECT tunnel.
        format!("{curl} -p http://allowed.test:{a}/hello.txt"),
        // SOCKS5, the proxy resolving the name.
        format!("{curl} -x \"$ALL_PROXY\" http://allowed.test:{a}/hello.txt"),
        format!("{urlopen} http://allowed.test:{a}/hello.txt"),
        // A listed address.
        format!("{curl} http://127.0.0.2:{a}/hello.txt"),
    ];
    for line in reach {
        let (code, out) = run(&w, line).await;
        assert!(
            code == 0 && out.contains("hello from allowed"),
            "{line}: {code}\n{out}"
        );
    }
    let (code, out) = run(
        &w,
        &format!("git ls-remote http://allowed.test:{a}/repo.git"),
    )
    .await;
    assert!(
        code == 0 && out.contains("refs/heads/main"),
        "git: {code}\n{out}"
    );

    let refused: &[String] = &[
        format!("{curl} -f http://other.test:{b}/hello.txt"),
        format!("{curl} -p http://other.test:{b}/hello.txt"),
        format!("{curl} -x \"$ALL_PROXY\" http://other.test:{b}/hello.txt"),
        format!("{urlopen} http://other.test:{b}/hello.txt"),
        format!("git ls-remote http://other.test:{b}/repo.git"),
        // An address nobody listed, through the proxy.
        format!("{curl} -f http://127.0.0.3:{b}/hello.txt"),
        // A wildcard name resolving to a private address: DNS rebinding.
        format!("{curl} -f http://rebind.wild.test:{b}/hello.txt"),
        // Denied by name, though its address is allowed.
        format!("{curl} -f http://denied.test:{a}/hello.txt"),
        // Around the proxy: a raw socket reaches nothing outside.
        format!(
            "python3 -c 'import socket; socket.create_connection((\"127.0.0.3\", {b}), timeout=5)'"
        ),
        "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 80), timeout=5)'"
            .to_owned(),
        format!("{curl} --noproxy '*' http://127.0.0.3:{b}/hello.txt"),
    ];
    for line in refused {
        let (code, out) = run(&w, line).await;
        assert!(
            code != 0 && !out.contains("hello from other") && !out.contains("hello from allowed"),
            "{line}: {code}\n{out}"
        );
    }
    // The refusal says what and how to allow it.
    let (_, out) = run(&w, &format!("{curl} http://other.test:{b}/hello.txt")).await;
    assert!(
        out.contains("other.test") && out.contains("commands.network.allow"),
        "{out}"
    );
    // Only loopback inside.
    let (_, out) = run(
        &w,
        "python3 -c 'import socket; print(socket.if_nameindex())'",
    )
    .await;
    assert_eq!(out.trim(), "[(1, 'lo')]");
    // Read-only commands have no network at all, proxy or not.
    let (code, out) = run_in(
        &w,
        &format!("{curl} http://allowed.test:{a}/hello.txt; curl -sS --max-time 5 -x http://127.0.0.1:{}/ http://allowed.test:{a}/hello.txt", status.proxy_ports().unwrap().0),
        Profile::ReadOnly {
            programs: vec!["curl".into()],
        },
    )
    .await;
    assert!(code != 0 && !out.contains("hello from allowed"), "{out}");

    // Every connection was reported, allowed or refused, with its bytes.
    let records = records.0.lock().unwrap();
    let listed = records
        .iter()
        .find(|r| r.host == "allowed.test" && r.decision == Decision::Listed)
        .expect("an allowed connection");
    assert!(
        listed.received > 0 && listed.sent > 0 && listed.peer.is_some(),
        "{listed:?}"
    );
    let refused = records
        .iter()
        .find(|r| r.host == "other.test")
        .expect("a refused connection");
    assert_eq!(refused.decision, Decision::Unlisted, "{refused:?}");
    assert!(
        records
            .iter()
            .any(|r| r.host == "rebind.wild.test" && r.decision == Decision::SpecialAddress)
    );
    assert!(
        records
            .iter()
            .any(|r| r.host == "denied.test" && r.decision == Decision::DenyListed)
    );
    assert!(
        records
            .iter()
            .any(|r| r.host == "127.0.0.3" && r.decision == Decision::UnlistedAddress)
    );
}

#[tokio::test]
async fn an_unlisted_name_is_asked_about() {
    let w = world();
    let a = w.allowed.port;
    let consent = scripted(&[
        ConsentAnswer::AllowOnce,
        ConsentAnswer::AllowForSession,
        ConsentAnswer::Deny,
    ]);
    let records = Arc::new(Records::default());
    let attached = w.sandbox.attach_network(
        Some(Arc::clone(&consent) as Arc<dyn NetworkConsent>),
        Some(Arc::clone(&records) as Arc<dyn NetworkObserver>),
    );
    let fetch = |host: &str| format!("curl -sS --max-time 20 http://{host}:{a}/hello.txt");
    // Allowed once: asked again next time.
    let (code, out) = run(&w, &fetch("asked.test")).await;
    assert!(code == 0 && out.contains("hello from allowed"), "{out}");
    // Allowed for the session: not asked again.
    for _ in 0..2 {
        let (code, out) = run(&w, &fetch("asked.test")).await;
        assert!(code == 0 && out.contains("hello from allowed"), "{out}");
    }
    let asked: Vec<(String, u16)> = consent
        .asked
        .lock()
        .unwrap()
        .iter()
        .map(|r| (r.host.clone(), r.port))
        .collect();
    assert_eq!(
        asked,
        [("asked.test".to_owned(), a), ("asked.test".to_owned(), a)]
    );
    // A listed name is never asked about.
    let (code, _) = run(&w, &fetch("allowed.test")).await;
    assert_eq!(code, 0);
    // A person's "no" is a 403 naming the host; asked once, then kept.
    let (code, out) = run(&w, &format!("{} -f", fetch("other.test"))).await;
    assert!(code != 0 && out.contains("403"), "{out}");
    let (_, out) = run(&w, &fetch("other.test")).await;
    assert!(
        out.contains("other.test") && out.contains("refused"),
        "{out}"
    );
    assert_eq!(consent.asked.lock().unwrap().len(), 3);
    assert!(
        records
            .0
            .lock()
            .unwrap()
            .iter()
            .any(|r| r.host == "other.test" && r.decision == Decision::Refused)
    );
    // Once the asker is gone, an unlisted name is refused at once.
    drop(attached);
    let (code, out) = run(&w, &fetch("new.test")).await;
    assert!(
        code == 0 && out.contains("`new.test` is not in the allow list"),
        "{out}"
    );
    assert_eq!(consent.asked.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn without_anyone_to_ask_unlisted_names_are_refused_with_a_reason() {
    let w = world();
    let a = w.allowed.port;
    // Plain HTTP: the 403 body names the host and the key.
    let (code, out) = run(
        &w,
        &format!("curl -sS -i --max-time 20 http://asked.test:{a}/hello.txt"),
    )
    .await;
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("HTTP/1.1 403 Forbidden"), "{out}");
    assert!(
        out.contains("`asked.test` is not in the allow list; add it to commands.network.allow"),
        "{out}"
    );
    // SOCKS5: reply 2, "not allowed by ruleset".
    let (code, out) = run(
        &w,
        &format!("curl -sS --max-time 20 -x \"$ALL_PROXY\" http://asked.test:{a}/hello.txt"),
    )
    .await;
    assert_ne!(code, 0);
    assert!(
        out.contains("connection not allowed by ruleset") || out.contains("97"),
        "{out}"
    );
}

/// `network(false)` wins over a policy: no namespace, no proxy, no network
/// (dynamic tools are built so, whatever `commands.network` says).
#[tokio::test]
async fn network_off_wins_over_a_policy() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let policy = NetworkPolicy::builder().allow(["*"]).build().unwrap();
    let sandbox = Sandbox::builder(dir.path())
        .host_env([("PATH", std::env::var("PATH").unwrap())])
        .network_policy(policy)
        .network(false)
        .build()
        .unwrap();
    let status = sandbox.network_status();
    assert_eq!(status.mode(), NetworkMode::None, "{status}");
    assert_eq!(status.proxy_ports(), None);
    let done = sandbox
        .run(
            &Spawn::shell(
                "echo \"[$HTTP_PROXY]\"; python3 -c 'import socket; print(socket.if_nameindex())'",
            ),
            &RunOptions::new(Duration::from_secs(20)),
        )
        .await
        .unwrap();
    assert_eq!(done.stdout.trim_end(), "[]\n[(1, 'lo')]");
}
