//! The audit trail: entries through the `AuditWriter`, in order; filters;
//! what happens when the queue is full or the store fails.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions: a panic is a test failure"
)]

mod common;

use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::audit_entry;
use toolgate_store::{AuditEntry, AuditFilter, AuditStore, AuditWriter, SqliteStore, StoreError};

#[tokio::test]
async fn twenty_thousand_entries_through_the_writer_are_all_there_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("toolgate.db")).unwrap();
    let writer = store.audit_writer().unwrap();
    let entries: Vec<AuditEntry> = (0..20_000).map(audit_entry).collect();
    for e in &entries {
        writer.record(e.clone());
    }
    writer.flush().await.unwrap();

    let mut stored = store
        .recent(&AuditFilter::newest(usize::MAX))
        .await
        .unwrap();
    stored.reverse();
    assert_eq!(stored.len(), entries.len());
    assert!(stored == entries, "the entries differ or are out of order");
}

/// Whether an entry should pass a filter.
type Matches = dyn Fn(&AuditEntry) -> bool;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_select_the_newest_matching_entries() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("toolgate.db")).unwrap();
    let entries: Vec<AuditEntry> = (0..500).map(audit_entry).collect();
    store.append(&entries[..250]).await.unwrap();
    store.append(&entries[250..]).await.unwrap();

    let all = AuditFilter::newest(usize::MAX);
    let cases: &[(AuditFilter, &Matches)] = &[
        (all.clone(), &|_| true),
        (AuditFilter::default(), &|_| true),
        (all.clone().decision("denied"), &|e| e.decision == "denied"),
        (all.clone().decision("allowed"), &|e| {
            e.decision == "allowed"
        }),
        (all.clone().session_id("s1"), &|e| {
            e.session_id.as_deref() == Some("s1")
        }),
        (all.clone().tool("write_file"), &|e| e.tool == "write_file"),
        (all.clone().tool("run_command").decision("blocked"), &|e| {
            e.tool == "run_command" && e.decision == "blocked"
        }),
        (
            all.clone()
                .session_id("s0")
                .tool("read_file")
                .decision("allowed"),
            &|e| {
                e.session_id.as_deref() == Some("s0")
                    && e.tool == "read_file"
                    && e.decision == "allowed"
            },
        ),
        (AuditFilter::newest(7).tool("read_file"), &|e| {
            e.tool == "read_file"
        }),
        (all.clone().tool("no_such_tool"), &|_| false),
        (AuditFilter::newest(0), &|_| false),
    ];
    for (filter, matches) in cases {
        let expected: Vec<&AuditEntry> = entries
            .iter()
            .rev()
            .filter(|e| matches(e))
            .take(filter.limit)
            .collect();
        let got = store.recent(filter).await.unwrap();
        assert_eq!(got.iter().collect::<Vec<_>>(), expected, "{filter:?}");
    }
}

#[tokio::test]
async fn dropping_the_writer_writes_what_is_queued() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("toolgate.db")).unwrap();
    let writer = store.audit_writer().unwrap();
    let clone = writer.clone();
    for i in 0..1_000 {
        writer.record(audit_entry(i));
    }
    drop(writer);
    clone.record(audit_entry(1_000));
    drop(clone); // the last handle: waits for the thread
    let stored = store
        .recent(&AuditFilter::newest(usize::MAX))
        .await
        .unwrap();
    assert_eq!(stored.len(), 1_001);
    assert_eq!(stored[0], audit_entry(1_000));
}

/// A store whose first `append` waits until the test lets it go, after
/// saying that it started.
struct HeldStore {
    started: Mutex<Option<std_mpsc::Sender<()>>>,
    release: Mutex<std_mpsc::Receiver<()>>,
    written: Mutex<Vec<AuditEntry>>,
}

#[async_trait]
impl AuditStore for HeldStore {
    async fn append(&self, entries: &[AuditEntry]) -> Result<(), StoreError> {
        let started = self.started.lock().unwrap().take();
        if let Some(started) = started {
            started.send(()).unwrap();
            self.release.lock().unwrap().recv().unwrap();
        }
        self.written.lock().unwrap().extend_from_slice(entries);
        Ok(())
    }

    async fn recent(&self, _: &AuditFilter) -> Result<Vec<AuditEntry>, StoreError> {
        Ok(self.written.lock().unwrap().clone())
    }
}

#[tokio::test]
async fn a_full_queue_drops_entries_and_the_next_flush_says_how_many() {
    let (started_tx, started) = std_mpsc::channel();
    let (release, release_rx) = std_mpsc::channel();
    let store = Arc::new(HeldStore {
        started: Mutex::new(Some(started_tx)),
        release: Mutex::new(release_rx),
        written: Mutex::new(Vec::new()),
    });
    let writer = AuditWriter::builder(store.clone())
        .capacity(4)
        .batch_size(1)
        .build()
        .unwrap();

    writer.record(audit_entry(0));
    started.recv().unwrap(); // the thread holds entry 0 and waits
    for i in 1..=4 {
        writer.record(audit_entry(i)); // fills the queue
    }
    writer.record(audit_entry(5)); // dropped
    writer.record(audit_entry(6)); // dropped
    release.send(()).unwrap();

    let err = writer.flush().await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::AuditLost {
                dropped: 2,
                failed: 0
            }
        ),
        "{err:?}"
    );
    let expected: Vec<_> = (0..=4).map(audit_entry).collect();
    assert_eq!(*store.written.lock().unwrap(), expected);

    // The queue has room again; nothing lost since the last flush.
    writer.record(audit_entry(7));
    writer.flush().await.unwrap();
    assert_eq!(store.written.lock().unwrap().last(), Some(&audit_entry(7)));
}

/// A store that always fails.
struct BrokenStore;

#[async_trait]
impl AuditStore for BrokenStore {
    async fn append(&self, _: &[AuditEntry]) -> Result<(), StoreError> {
        Err(StoreError::Database("disk I/O error".into()))
    }

    async fn recent(&self, _: &AuditFilter) -> Result<Vec<AuditEntry>, StoreError> {
        Ok(Vec::new())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entries_the_store_fails_to_write_are_reported_by_the_next_flush() {
    let writer = AuditWriter::new(Arc::new(BrokenStore)).unwrap();
    for i in 0..3 {
        writer.record(audit_entry(i));
    }
    let err = writer.flush().await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::AuditLost {
                dropped: 0,
                failed: 3
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "0 audit entries were dropped (queue full) and 3 could not be written since the last flush"
    );
    // Counted once: a second flush reports nothing new.
    writer.close().await.unwrap();
}

/// Closing does not checkpoint a short log (rule 2 of `SqliteStore`): the
/// rows of a short-lived process stay in the log beside the database, and
/// every later opening reads them. Processes that each append one row and
/// close (as many one-off commands do) never let the log grow past a few
/// commits over its limit; neither do many rows in one process.
#[tokio::test]
async fn a_closed_store_keeps_a_short_log_and_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    // The audit is a file of its own (rule 6).
    let wal = dir.path().join("toolgate-audit.db-wal");
    assert_eq!(
        toolgate_store::audit_path(&path),
        dir.path().join("toolgate-audit.db")
    );
    let frames = || std::fs::metadata(&wal).unwrap().len().saturating_sub(32) / (4096 + 24);
    let bound = u64::try_from(toolgate_store::WAL_PAGES).unwrap() + 16;
    {
        let store = SqliteStore::open(&path).unwrap();
        store.append(&[audit_entry(0)]).await.unwrap();
    }
    assert!(
        frames() > 0,
        "the log was checkpointed and emptied on close"
    );
    let mut most = 0;
    for i in 1..300 {
        let store = SqliteStore::open(&path).unwrap();
        store.append(&[audit_entry(i)]).await.unwrap();
        drop(store);
        most = most.max(frames());
    }
    assert!(
        most <= bound,
        "the log grew to {most} pages (bound {bound})"
    );
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(
        store
            .recent(&AuditFilter::newest(usize::MAX))
            .await
            .unwrap()
            .len(),
        300
    );
    // Many entries in one process: the commits checkpoint the log.
    let entries: Vec<AuditEntry> = (300..5_300)
        .map(|i| AuditEntry {
            error: Some("x".repeat(1024)),
            ..audit_entry(i)
        })
        .collect();
    for chunk in entries.chunks(10) {
        store.append(chunk).await.unwrap();
    }
    drop(store);
    assert!(frames() <= bound, "the log grew to {} pages", frames());
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(
        store
            .recent(&AuditFilter::newest(usize::MAX))
            .await
            .unwrap()
            .len(),
        5_300
    );
}
