//! Audit entries queued by the gate and written in batches.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use crate::{AuditEntry, AuditStore, StoreError};

/// Queues audit entries without blocking the caller and appends them to an
/// [`AuditStore`] in batches, on a thread of its own.
///
/// The gate calls [`record`](Self::record) on every tool call; at thousands
/// of calls a second a transaction per call would be the bottleneck, so the
/// writer's thread takes everything queued (up to a batch) and appends it
/// in one transaction. Cloning is cheap; clones share the queue and the
/// thread.
///
/// # Rules
///
/// 1. [`record`](Self::record) never blocks and never fails: it puts the
///    entry on a bounded queue and returns.
/// 2. When the queue is full (the store has fallen behind by a whole
///    queue, e.g. another process holds the database's lock), the entry is
///    **dropped**, with one `tracing` warning per stretch of dropped
///    entries. Dropping rather than writing through on the caller's thread
///    keeps rule 1, keeps the entries in order, and does not add writers
///    to a store that is already behind; the gate's per-call `tracing`
///    event still records the call. Size the queue so this does not happen.
/// 3. Entries are appended in the order they were recorded (by one
///    thread; between threads, in the order they reached the queue).
/// 4. [`flush`](Self::flush) waits until everything recorded before it is
///    committed, and fails with [`StoreError::AuditLost`] when entries were
///    dropped (rule 2) or failed to be written since the previous flush (a
///    failed batch is logged with `tracing` and not retried).
/// 5. When the last clone is dropped, the thread writes what is still
///    queued, and the drop waits for it for at most the shutdown timeout.
///    [`close`](Self::close) does the same from async code without
///    blocking.
#[derive(Debug, Clone)]
pub struct AuditWriter {
    shared: Arc<Shared>,
}

/// Settings for an [`AuditWriter`].
#[derive(Clone)]
pub struct AuditWriterBuilder {
    store: Arc<dyn AuditStore>,
    capacity: usize,
    batch_size: usize,
    shutdown_timeout: Duration,
    network: bool,
}

impl std::fmt::Debug for AuditWriterBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditWriterBuilder")
            .field("capacity", &self.capacity)
            .field("batch_size", &self.batch_size)
            .field("shutdown_timeout", &self.shutdown_timeout)
            .finish_non_exhaustive()
    }
}

#[expect(
    clippy::large_enum_variant,
    reason = "nearly every message is an entry; boxing it would add an allocation per tool call"
)]
enum Message {
    Entry(AuditEntry),
    /// Answered with the number of entries that failed since the last
    /// flush, once everything before it is written.
    Flush(oneshot::Sender<u64>),
}

#[derive(Debug)]
struct Shared {
    /// `None` only while dropping, to close the queue.
    tx: Option<mpsc::Sender<Message>>,
    thread: Option<JoinHandle<()>>,
    /// Disconnected when the thread has finished.
    /// (A `Mutex` only to make it `Sync`; nothing else locks it.)
    finished: Mutex<std::sync::mpsc::Receiver<()>>,
    capacity: usize,
    shutdown_timeout: Duration,
    /// Entries dropped since the last flush.
    dropped: AtomicU64,
    /// Whether the last `record` dropped its entry (to warn once per
    /// stretch).
    dropping: AtomicBool,
}

impl AuditWriterBuilder {
    /// The queue's size in entries; at least 1. By default, 65 536 (a few
    /// seconds of the busiest MCP serving).
    #[must_use]
    pub fn capacity(mut self, entries: usize) -> Self {
        self.capacity = entries.max(1);
        self
    }

    /// The most entries appended in one transaction; at least 1. By
    /// default, 4 096.
    #[must_use]
    pub fn batch_size(mut self, entries: usize) -> Self {
        self.batch_size = entries.max(1);
        self
    }

    /// How long dropping the last clone waits for the queue to be written.
    /// By default, 5 seconds.
    #[must_use]
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// Gives the writer's runtime an I/O and timer driver, for a store that
    /// talks to a server (`PostgreSQL`). Off by default: a file store needs
    /// neither.
    #[must_use]
    pub fn network(mut self) -> Self {
        self.network = true;
        self
    }

    /// Starts the writer's thread.
    pub fn build(self) -> Result<AuditWriter, StoreError> {
        let worker = |e: std::io::Error| StoreError::Worker(Box::new(e));
        // Its own runtime, so the writer works whatever runtime (or none)
        // the callers use, and dropping it from inside a runtime cannot
        // deadlock on that runtime.
        // A file store gets none: outside a runtime its appends run on
        // this thread, where blocking is what it is for, instead of on a
        // blocking-pool thread started for them (one more thread per
        // process, a tenth of a one-off `toolgate call`).
        let runtime = if self.network {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(worker)?;
            Some(runtime)
        } else {
            None
        };
        let (tx, rx) = mpsc::channel(self.capacity);
        let (done, finished) = std::sync::mpsc::channel::<()>();
        let (store, batch_size) = (self.store, self.batch_size);
        let thread = std::thread::Builder::new()
            .name("toolgate-audit".to_owned())
            .spawn(move || {
                let writing = write_batches(store.as_ref(), rx, batch_size);
                match runtime {
                    Some(runtime) => runtime.block_on(writing),
                    None => futures_executor::block_on(writing),
                }
                drop(done);
            })
            .map_err(worker)?;
        Ok(AuditWriter {
            shared: Arc::new(Shared {
                tx: Some(tx),
                thread: Some(thread),
                finished: Mutex::new(finished),
                capacity: self.capacity,
                shutdown_timeout: self.shutdown_timeout,
                dropped: AtomicU64::new(0),
                dropping: AtomicBool::new(false),
            }),
        })
    }
}

impl AuditWriter {
    /// A writer over `store` with default settings.
    pub fn new(store: Arc<dyn AuditStore>) -> Result<Self, StoreError> {
        Self::builder(store).build()
    }

    /// Settings for a writer over `store`.
    pub fn builder(store: Arc<dyn AuditStore>) -> AuditWriterBuilder {
        AuditWriterBuilder {
            store,
            capacity: 65_536,
            batch_size: 4_096,
            shutdown_timeout: Duration::from_secs(5),
            network: false,
        }
    }

    /// Queues one entry (see the rules above: never blocks; dropped when
    /// the queue is full).
    pub fn record(&self, entry: AuditEntry) {
        let shared = &*self.shared;
        let Some(tx) = &shared.tx else { return };
        match tx.try_send(Message::Entry(entry)) {
            Ok(()) => {
                if shared.dropping.load(Ordering::Relaxed) {
                    shared.dropping.store(false, Ordering::Relaxed);
                }
            }
            Err(e) => {
                shared.dropped.fetch_add(1, Ordering::Relaxed);
                if !shared.dropping.swap(true, Ordering::Relaxed) {
                    let closed = matches!(e, mpsc::error::TrySendError::Closed(_));
                    tracing::warn!(
                        capacity = shared.capacity,
                        closed,
                        "audit queue full or closed: dropping audit entries until the writer catches up"
                    );
                }
            }
        }
    }

    /// Waits until every entry recorded before this call is committed.
    pub async fn flush(&self) -> Result<(), StoreError> {
        let shared = &*self.shared;
        let stopped = || StoreError::Worker("the audit writer's thread has stopped".into());
        let tx = shared.tx.as_ref().ok_or_else(stopped)?;
        let dropped = shared.dropped.swap(0, Ordering::Relaxed);
        let (answer, answered) = oneshot::channel();
        tx.send(Message::Flush(answer))
            .await
            .map_err(|_| stopped())?;
        let failed = answered.await.map_err(|_| stopped())?;
        if dropped == 0 && failed == 0 {
            Ok(())
        } else {
            Err(StoreError::AuditLost { dropped, failed })
        }
    }

    /// Flushes, then lets go of this handle. When it was the last one, the
    /// thread then ends at once: the queue is already written.
    pub async fn close(self) -> Result<(), StoreError> {
        self.flush().await
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // Closing the queue ends the thread once it has written the rest.
        drop(self.tx.take());
        let finished = self
            .finished
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        match finished.recv_timeout(self.shutdown_timeout) {
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) | Ok(()) => {
                if let Some(thread) = self.thread.take() {
                    let _ = thread.join();
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => tracing::warn!(
                timeout = ?self.shutdown_timeout,
                "the audit writer did not finish writing in time; entries still queued may be lost"
            ),
        }
    }
}

/// The writer's thread: takes what is queued, appends it, answers flushes.
async fn write_batches(store: &dyn AuditStore, mut rx: mpsc::Receiver<Message>, batch_size: usize) {
    let mut batch = Vec::with_capacity(batch_size);
    let mut flushes = Vec::new();
    let mut failed = 0_u64;
    while let Some(first) = rx.recv().await {
        let mut next = Some(first);
        while let Some(message) = next {
            match message {
                Message::Entry(entry) => batch.push(entry),
                Message::Flush(answer) => flushes.push(answer),
            }
            next = if batch.len() < batch_size {
                rx.try_recv().ok()
            } else {
                None
            };
        }
        if !batch.is_empty() {
            if let Err(error) = store.append(&batch).await {
                failed += batch.len() as u64;
                tracing::warn!(
                    error = %chain(&error),
                    entries = batch.len(),
                    "audit entries could not be written"
                );
            }
            batch.clear();
        }
        for answer in flushes.drain(..) {
            let _ = answer.send(std::mem::take(&mut failed));
        }
    }
}

/// An error and its causes, `: `-separated, for a log line.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
