//! The trait-level suite (`toolgate-store/tests/suite`, shared with the
//! `SQLite` run there) on `PostgreSQL`, and the
//! `PostgreSQL` store's own rules: migrations, version checks, the URL.
//!
//! Needs a server: `TOOLGATE_TEST_PG_URL` (`export
//! TOOLGATE_TEST_PG_URL=$(.ci/pg.sh start)`, as `.ci/run` does). Without
//! it the tests fail, saying so. Each test makes a database of its own, so
//! they run in parallel, and drops it at the end.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

#[path = "../../toolgate-store/tests/common/mod.rs"]
mod common;
#[path = "../../toolgate-store/tests/suite/mod.rs"]
mod suite;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use toolgate_store::StoreError;
use toolgate_store_postgres::{PG_SCHEMA_VERSION, PostgresOptions, PostgresStore};

/// The server's URL, or a failure that says how to start one.
fn server_url() -> String {
    std::env::var("TOOLGATE_TEST_PG_URL").unwrap_or_else(|_| {
        panic!(
            "TOOLGATE_TEST_PG_URL is not set: the PostgreSQL store tests need a server. \
             Start a throw-away one with `export TOOLGATE_TEST_PG_URL=$(.ci/pg.sh start)` \
             (needs Debian's postgresql package) or run .ci/run"
        )
    })
}

/// A database made for one test, dropped when the test ends.
struct Database {
    name: String,
    url: String,
}

impl Database {
    async fn new() -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let server = server_url();
        let name = format!(
            "toolgate_test_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        admin(&server, &format!("CREATE DATABASE {name}")).await;
        let (base, query) = server.split_once('?').unwrap_or((server.as_str(), ""));
        let (root, _) = base.rsplit_once('/').expect("a URL with a database");
        let mut url = format!("{root}/{name}");
        if !query.is_empty() {
            url = format!("{url}?{query}");
        }
        Self { name, url }
    }

    fn options(&self) -> PostgresOptions {
        PostgresOptions::new(self.url.clone())
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let name = self.name.clone();
        // Dropped from a thread of its own: a `Drop` cannot await, and the
        // test's runtime may be shutting down.
        let dropped = std::thread::spawn(move || {
            let Ok(server) = std::env::var("TOOLGATE_TEST_PG_URL") else {
                return;
            };
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(admin(
                &server,
                &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            ));
        })
        .join();
        drop(dropped);
    }
}

/// Runs `sql` on the server's own database.
async fn admin(server: &str, sql: &str) {
    let (client, connection) = tokio_postgres::connect(server, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| {
            panic!(
                "cannot connect to the test server at {server} ({e}); \
                 is it running? `.ci/pg.sh start` starts one"
            )
        });
    let driver = tokio::spawn(connection);
    client.batch_execute(sql).await.unwrap();
    drop(client);
    drop(driver.await);
}

async fn open() -> (PostgresStore, Database) {
    let db = Database::new().await;
    let migrated = PostgresStore::migrate(&db.options()).await.unwrap();
    assert_eq!((migrated.from, migrated.to), (0, PG_SCHEMA_VERSION));
    let store = PostgresStore::open(&db.options()).await.unwrap();
    (store, db)
}

suite_tests!(open);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_refuses_an_unmigrated_database_and_says_to_migrate() {
    let db = Database::new().await;
    let error = PostgresStore::open(&db.options()).await.unwrap_err();
    assert!(
        matches!(error, StoreError::MigrationNeeded { found: 0, .. }),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("toolgate store migrate"),
        "{error}"
    );
    // Migrating twice, even at once, runs each migration once.
    let options = db.options();
    let (a, b) = tokio::join!(
        PostgresStore::migrate(&options),
        PostgresStore::migrate(&options)
    );
    let mut froms = [a.unwrap().from, b.unwrap().from];
    froms.sort_unstable();
    assert_eq!(froms, [0, PG_SCHEMA_VERSION]);
    PostgresStore::open(&db.options()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_schema_is_refused_untouched() {
    let (store, db) = open().await;
    drop(store);
    admin(
        &db.url,
        "INSERT INTO schema_migrations (version, applied) VALUES (999, 0)",
    )
    .await;
    for error in [
        PostgresStore::open(&db.options()).await.unwrap_err(),
        PostgresStore::migrate(&db.options()).await.unwrap_err(),
    ] {
        assert!(
            matches!(error, StoreError::NewerDatabase { found: 999, .. }),
            "{error:?}"
        );
        assert!(error.to_string().contains("newer toolgate"), "{error}");
    }
}

#[tokio::test]
async fn a_password_in_the_url_is_refused() {
    let options = PostgresOptions::new("postgres://me:secret@127.0.0.1:1/db");
    let error = PostgresStore::open(&options).await.unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, StoreError::Config(_)), "{error:?}");
    assert!(
        text.contains("password") && text.contains("store.password_env"),
        "{text}"
    );
    assert!(
        !text.contains("secret"),
        "the password is not repeated: {text}"
    );
}

#[tokio::test]
async fn an_unreachable_server_is_a_clear_error() {
    // A port nobody listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let options = PostgresOptions::new(format!("postgres://toolgate@127.0.0.1:{port}/x"));
    let error = PostgresStore::open(&options).await.unwrap_err();
    assert!(matches!(error, StoreError::Connect { .. }), "{error:?}");
    assert!(error.to_string().contains("cannot connect"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_stores_on_one_database_see_each_other() {
    use toolgate_store::{NewSession, SessionStore};
    let (first, db) = open().await;
    let second = PostgresStore::open(&db.options()).await.unwrap();
    first
        .begin(&NewSession {
            id: "shared".into(),
            agent: "build".into(),
            task: "t".into(),
        })
        .await
        .unwrap();
    let seen = second.get("shared").await.unwrap();
    assert_eq!(seen.runs, 1);
    let resumed = second
        .begin(&NewSession {
            id: "shared".into(),
            agent: "build".into(),
            task: "t".into(),
        })
        .await
        .unwrap();
    assert_eq!(resumed.run, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_rules_are_seen_by_every_store_and_survive_reopening() {
    use toolgate_store::{NewRule, RuleStore};
    let (first, db) = open().await;
    let second = PostgresStore::open(&db.options()).await.unwrap();
    let saved = first
        .add_rule(&NewRule {
            rule: serde_json::json!({"tool": "write_file", "action": "allow"}),
            saved_by: "ana".into(),
            saved: 1,
        })
        .await
        .unwrap();
    assert_eq!(second.rules().await.unwrap(), vec![saved.clone()]);
    drop((first, second));
    let reopened = PostgresStore::open(&db.options()).await.unwrap();
    assert_eq!(reopened.rules().await.unwrap(), vec![saved.clone()]);
    assert!(reopened.remove_rule(saved.id).await.unwrap());
    assert!(reopened.rules().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_writer_batches_into_the_database_from_its_own_thread() {
    use toolgate_store::{AuditEntry, AuditFilter, AuditStore};
    let (store, _db) = open().await;
    let writer = store.audit_writer().unwrap();
    for i in 0..500 {
        writer.record(AuditEntry {
            ts: format!("2026-01-01T00:00:00.{i:06}Z"),
            call_id: format!("c{i}"),
            session_id: None,
            client: None,
            tool: "read_file".into(),
            args_sha256: String::new(),
            decision: "allowed".into(),
            success: true,
            duration_us: 1,
            error: None,
            effects: serde_json::Value::Null,
        });
    }
    writer.flush().await.unwrap();
    let recent = store.recent(&AuditFilter::newest(1_000)).await.unwrap();
    assert_eq!(recent.len(), 500);
    assert_eq!(recent[0].call_id, "c499", "newest appended first");
    assert_eq!(recent[499].call_id, "c0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_through_one_store_wakes_a_wait_on_another_by_notify() {
    use std::time::Duration;
    use toolgate_store::{Answer, ApprovalStatus, ApprovalStore, Asked, NewApproval};
    // Two stores on one database: two workers.
    let (first, db) = open().await;
    let second = PostgresStore::open(&db.options()).await.unwrap();
    let Asked::New(asked) = first
        .ask_approval(&NewApproval {
            key: "k".into(),
            session_id: None,
            tool: "write_file".into(),
            view: serde_json::json!({}),
            worker: "w1".into(),
            created: 0,
            expires: i64::MAX,
        })
        .await
        .unwrap()
    else {
        panic!("a new key is asked");
    };
    let waiter = tokio::spawn(async move {
        let record = first
            .wait_for_change(asked.id, ApprovalStatus::Pending, Duration::from_secs(60))
            .await
            .unwrap();
        (first, record)
    });
    // The first store listens on a connection of its own, outside its
    // pool, once it waits.
    let listening = loop {
        let (client, connection) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
            .await
            .unwrap();
        let driver = tokio::spawn(connection);
        let n: i64 = client
            .query_one(
                "SELECT COUNT(*) FROM pg_stat_activity
                 WHERE datname = current_database() AND query LIKE 'LISTEN toolgate_approvals%'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        drop(client);
        driver.abort();
        if n > 0 || waiter.is_finished() {
            break n;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(listening, 1);
    second
        .answer_approval(&Answer {
            id: asked.id,
            approve: true,
            for_session: false,
            by: "ui@worker-2".into(),
            at: 1,
        })
        .await
        .unwrap();
    let (_first, record) = waiter.await.unwrap();
    assert_eq!(record.unwrap().status, ApprovalStatus::Approved);
}

/// `store`'s rules stamp once it moves off `from` (or, with `from`
/// `None`, once it is `Some`), waiting up to 10 seconds.
async fn stamp_after(store: &PostgresStore, from: Option<u64>) -> u64 {
    use toolgate_store::RuleStore;
    for _ in 0..1_000 {
        if let Some(now) = store.rules_stamp()
            && Some(now) != from
        {
            return now;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("the rules stamp stayed {from:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rules_stamp_moves_when_another_store_changes_the_rules_and_only_then() {
    use toolgate_store::{ApprovalStore, NewApproval, NewRule, RuleStore};
    let (first, db) = open().await;
    let second = PostgresStore::open(&db.options()).await.unwrap();
    // Listening starts with the first look.
    let start = stamp_after(&first, None).await;

    let saved = second
        .add_rule(&NewRule {
            rule: serde_json::json!({"tool": "write_file", "decision": "allow"}),
            saved_by: "ana".into(),
            saved: 1,
        })
        .await
        .unwrap();
    let added = stamp_after(&first, Some(start)).await;

    // Other notifications on the store (an approval asked) leave it.
    second
        .ask_approval(&NewApproval {
            key: "k-stamp".into(),
            session_id: None,
            tool: "write_file".into(),
            view: serde_json::json!({}),
            worker: "w1".into(),
            created: 1,
            expires: i64::MAX,
        })
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(first.rules_stamp(), Some(added));

    // A removal moves it; removing what is not there does not.
    assert!(second.remove_rule(saved.id).await.unwrap());
    let removed = stamp_after(&first, Some(added)).await;
    assert!(!second.remove_rule(saved.id).await.unwrap());
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(first.rules_stamp(), Some(removed));
}
