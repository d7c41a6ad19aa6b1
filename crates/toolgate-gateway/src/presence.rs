//! A worker's presence in a store: one lease per store and worker name in
//! a process, shared by everything that needs the worker to look alive
//! (the ledger of keyed calls, the approver whose questions other
//! workers list).
//!
//! A process takes the lease once: on `PostgreSQL` a second advisory lock
//! under the same name would wait for the first forever, on `SQLite` a
//! second `flock` would be refused.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock, Weak};

use toolgate_store::{Store, StoreError, WorkerLease};

type Leases = tokio::sync::Mutex<HashMap<(PathBuf, String), Weak<WorkerLease>>>;

fn leases() -> &'static Leases {
    static LEASES: OnceLock<Leases> = OnceLock::new();
    LEASES.get_or_init(Leases::default)
}

/// Holds `worker` alive in `store` for as long as a returned lease is
/// kept; asked again while one is, returns the same lease.
pub async fn presence(
    store: &Arc<dyn Store>,
    worker: &str,
) -> Result<Arc<WorkerLease>, StoreError> {
    let mut leases = leases().lock().await;
    let key = (store.location().to_owned(), worker.to_owned());
    if let Some(lease) = leases.get(&key).and_then(Weak::upgrade) {
        return Ok(lease);
    }
    let lease = Arc::new(store.hold_worker(worker).await?);
    leases.retain(|_, held| held.strong_count() > 0);
    leases.insert(key, Arc::downgrade(&lease));
    Ok(lease)
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        reason = "test code: a failed unwrap is a failed test"
    )]

    use toolgate_store::SqliteStore;

    use super::*;

    #[tokio::test]
    async fn one_lease_per_store_and_worker_while_it_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&path).unwrap());
        let other: Arc<dyn Store> = Arc::new(SqliteStore::open(&path).unwrap());
        let first = presence(&store, "w-presence").await.unwrap();
        // A second holder (another handle on the same store) shares it
        // instead of being refused.
        let second = presence(&other, "w-presence").await.unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        assert!(other.worker_alive("w-presence").await.unwrap());
        drop((first, second));
        assert!(!other.worker_alive("w-presence").await.unwrap());
        // Taken again once all are gone.
        let _again = presence(&store, "w-presence").await.unwrap();
        assert!(other.worker_alive("w-presence").await.unwrap());
    }
}
