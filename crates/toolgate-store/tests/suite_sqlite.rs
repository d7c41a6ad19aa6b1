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
