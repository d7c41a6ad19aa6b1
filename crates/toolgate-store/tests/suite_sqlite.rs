//! The trait-level suite (`tests/suite`) on `SQLite`: a new file per test.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;
mod suite;

use std::sync::Arc;

use toolgate_store::SqliteStore;

#[expect(
    clippy::unused_async,
    reason = "the suite awaits the opening, which is async for other backends"
)]
async fn open() -> (SqliteStore, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("toolgate.db")).unwrap();
    (store, dir)
}

suite_tests!(open);

#[tokio::test]
async fn saved_rules_survive_reopening() {
    use toolgate_store::{NewRule, RuleStore};
    let (store, dir) = open().await;
    let saved = store
        .add_rule(&NewRule {
            rule: serde_json::json!({"tool": "write_file", "action": "allow"}),
            saved_by: "ana".into(),
            saved: 1,
        })
        .await
        .unwrap();
    drop(store);
    let reopened = SqliteStore::open(dir.path().join("toolgate.db")).unwrap();
    assert_eq!(reopened.rules().await.unwrap(), vec![saved]);
}
