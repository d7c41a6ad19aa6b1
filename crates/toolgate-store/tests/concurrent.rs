//! Two stores on one file, as two toolgate processes would be, writing at
//! the same time from two threads: neither sees `database is locked`.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions: a panic is a test failure"
)]

mod common;

use std::sync::{Arc, Barrier};

use common::{audit_entry, call, message, new_session, step};
use toolgate_store::{AuditFilter, AuditStore as _, SessionStore as _, SqliteStore};

const STEPS: u32 = 150;
const AUDIT_PER_STEP: usize = 20;

/// One "process": opens the file when the barrier lets it (both open, and
/// so create and migrate, at the same moment), then records its session
/// step by step, interleaved with audit batches.
fn writer(path: &std::path::Path, id: &str, start: &Barrier) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    start.wait();
    let store = SqliteStore::open(path).unwrap();
    runtime.block_on(async {
        let run = store.begin(&new_session(id)).await.unwrap().run;
        for k in 1..=STEPS {
            let from = 2 * (k as usize - 1);
            store
                .record_step(&step(
                    id,
                    run,
                    k,
                    from,
                    vec![
                        message("assistant", &format!("{id} {k}")),
                        message("tool", "ok"),
                    ],
                    vec![call(k, &format!("{id}-{k}"))],
                ))
                .await
                .unwrap();
            let batch: Vec<_> = (0..AUDIT_PER_STEP)
                .map(|i| {
                    let mut e = audit_entry(i);
                    e.session_id = Some(id.to_owned());
                    e
                })
                .collect();
            store.append(&batch).await.unwrap();
        }
        store.finish(id, run, "completed").await.unwrap();
    });
}

#[test]
fn two_stores_on_one_file_write_concurrently_without_lock_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    let start = Arc::new(Barrier::new(2));
    let threads: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|id| {
            let (path, start) = (path.clone(), Arc::clone(&start));
            std::thread::spawn(move || writer(&path, id, &start))
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }

    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = SqliteStore::open(&path).unwrap();
        for id in ["a", "b"] {
            let s = store.get(id).await.unwrap();
            assert_eq!(
                (s.steps, s.outcome.as_str()),
                (u64::from(STEPS), "completed")
            );
            let messages = store.messages(id).await.unwrap();
            assert_eq!(messages.len(), 2 * STEPS as usize);
            assert_eq!(messages[2 * 41], message("assistant", &format!("{id} 42")));
            assert_eq!(store.tool_calls(id).await.unwrap().len(), STEPS as usize);
            let audit = store
                .recent(&AuditFilter::newest(usize::MAX).session_id(id))
                .await
                .unwrap();
            assert_eq!(audit.len(), STEPS as usize * AUDIT_PER_STEP);
        }
    });
}
