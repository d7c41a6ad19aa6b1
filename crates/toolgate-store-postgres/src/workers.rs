//! Worker liveness on `PostgreSQL`: a session-level advisory lock per
//! worker, held on a connection of its own for the worker's life.
//!
//! The server releases a session's advisory locks when the session ends,
//! and a session ends when its client's connection closes — which the
//! kernel does when the process dies, SIGKILL included. Whether a worker
//! is alive is then whether its lock is granted, read in `pg_locks`
//! (nothing is taken to ask). A lost connection is opened again and the
//! lock taken again; meanwhile the worker looks gone.

use std::time::Duration;

use sha2::{Digest as _, Sha256};
use tokio_postgres::NoTls;

use super::{Db as _, PostgresStore};
use toolgate_store::{StoreError, WorkerLease};

/// The advisory lock key of `worker`: the first 8 bytes of the SHA-256 of
/// its name.
fn key(worker: &str) -> i64 {
    let digest = Sha256::digest(format!("toolgate worker {worker}").as_bytes());
    let mut bytes = [0_u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(bytes)
}

/// Aborts the task holding the lock when the lease drops (closing its
/// connection, which releases the lock).
struct Held(tokio::task::JoinHandle<()>);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl PostgresStore {
    pub(super) async fn hold(&self, worker: &str) -> Result<WorkerLease, StoreError> {
        let config = self.options.config()?;
        let key = key(worker);
        let (first, held) = tokio::sync::oneshot::channel::<Result<(), StoreError>>();
        let database = self.name.clone();
        let task = tokio::spawn(async move {
            let mut first = Some(first);
            let mut pause = Duration::from_millis(100);
            loop {
                let connected = config.connect(NoTls).await;
                let (client, connection) = match connected {
                    Ok(pair) => pair,
                    Err(e) => {
                        let error = StoreError::Connect {
                            database: database.clone(),
                            source: Box::new(e),
                        };
                        match first.take() {
                            Some(first) => {
                                let _ = first.send(Err(error));
                                return;
                            }
                            None => {
                                tracing::warn!(
                                    "the worker's lock connection cannot reopen: {error}"
                                );
                            }
                        }
                        tokio::time::sleep(pause).await;
                        pause = (pause * 2).min(Duration::from_secs(5));
                        continue;
                    }
                };
                let driver = tokio::spawn(connection);
                match client
                    .execute("SELECT pg_advisory_lock($1)", &[&key])
                    .await
                    .db()
                {
                    Ok(_) => {
                        pause = Duration::from_millis(100);
                        if let Some(first) = first.take() {
                            let _ = first.send(Ok(()));
                        }
                    }
                    Err(error) => {
                        if let Some(first) = first.take() {
                            let _ = first.send(Err(error));
                            return;
                        }
                        tracing::warn!("the worker's lock cannot be taken again: {error}");
                        drop(client);
                        let _ = driver.await;
                        tokio::time::sleep(pause).await;
                        continue;
                    }
                }
                // Held until the connection ends.
                let _ = driver.await;
                drop(client);
                tracing::warn!("the worker's lock connection was lost; reopening it");
                tokio::time::sleep(pause).await;
            }
        });
        match held.await {
            Ok(Ok(())) => Ok(WorkerLease::new(Held(task))),
            Ok(Err(error)) => Err(error),
            Err(_) => Err(StoreError::Worker(
                "the task holding the worker's lock stopped".into(),
            )),
        }
    }

    pub(super) async fn alive(&self, worker: &str) -> Result<bool, StoreError> {
        let key = key(worker);
        // A bigint key shows in pg_locks as classid (high 32 bits), objid
        // (low 32 bits) and objsubid 1.
        let high = (key >> 32) & 0xffff_ffff;
        let low = key & 0xffff_ffff;
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_locks
                    WHERE locktype = 'advisory' AND granted AND objsubid = 1
                      AND database = (SELECT oid FROM pg_database
                                      WHERE datname = current_database())
                      AND classid::bigint = $1 AND objid::bigint = $2)",
                &[&high, &low],
            )
            .await
            .db()?;
        Ok(row.get(0))
    }
}
