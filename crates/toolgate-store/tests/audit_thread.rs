//! The audit writer of a file store starts one thread and no other: its
//! appends run on that thread, not on a blocking pool started for them.
//! Alone in its test binary, so no other test's threads are counted.

#![cfg(target_os = "linux")]
#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions: a panic is a test failure"
)]

mod common;

use common::audit_entry;
use toolgate_store::{AuditFilter, AuditStore, SqliteStore};

/// The names of this process's threads.
fn threads() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .map(|task| {
            let comm = task.unwrap().path().join("comm");
            std::fs::read_to_string(comm).unwrap().trim().to_owned()
        })
        .collect();
    names.sort();
    names
}

#[test]
fn a_file_store_writer_adds_its_own_thread_only() {
    let before = threads();
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("toolgate.db")).unwrap();
    let writer = store.audit_writer().unwrap();
    for n in 0..100 {
        writer.record(audit_entry(n));
    }
    futures_executor::block_on(writer.flush()).unwrap();

    let mut expected = before.clone();
    expected.push("toolgate-audit".to_owned());
    expected.sort();
    assert_eq!(threads(), expected, "threads before: {before:?}");
    let stored = futures_executor::block_on(store.recent(&AuditFilter::newest(1000))).unwrap();
    assert_eq!(stored.len(), 100);
}
