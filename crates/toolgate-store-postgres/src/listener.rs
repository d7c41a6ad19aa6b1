//! The store's `LISTEN` connection: one per store (its clones share it),
//! opened on the first wait or rules stamp, kept open for the store's
//! life and opened again when lost.
//!
//! A pooled connection cannot listen: the pool hands it to other queries
//! and resets it. So the listener has a connection of its own, driven by
//! a task that forwards each notification of
//! [`APPROVALS_CHANNEL`](toolgate_store::APPROVALS_CHANNEL) (an approval's id) to
//! the waiters of this process, and counts those of
//! [`RULES_CHANNEL`](toolgate_store::RULES_CHANNEL) in the rules stamp.
//! While it is down, notifications are lost; the waiters' slow poll covers
//! the gap, and every (re)connection wakes them all to read again; the
//! rules stamp is `None` meanwhile, and moves on at every (re)connection.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::broadcast;
use tokio_postgres::{AsyncMessage, NoTls};

use toolgate_store::{APPROVALS_CHANNEL, RULES_CHANNEL};

/// Sent to every waiter when the connection (re)opens: notifications may
/// have been lost meanwhile, so each reads its approval again.
const EVERYONE: i64 = -1;

/// How many notifications a slow waiter may fall behind before it reads
/// its approval again anyway.
const BACKLOG: usize = 1024;

/// The longest pause between two attempts to reconnect.
const MAX_RETRY: Duration = Duration::from_secs(5);

pub(super) struct Listener {
    config: tokio_postgres::Config,
    changes: broadcast::Sender<i64>,
    rules: Arc<RulesStamp>,
    task: OnceLock<tokio::task::JoinHandle<()>>,
}

/// The rules stamp: notifications of [`RULES_CHANNEL`] and changes of the
/// connection counted, in one atomic so that a reader never pairs an old
/// count with a new state: the count times two, plus one while listening.
#[derive(Default)]
struct RulesStamp(AtomicU64);

impl RulesStamp {
    /// A change of the rules was heard.
    fn moved(&self) {
        self.0.fetch_add(2, Ordering::SeqCst);
    }

    /// The connection now listens, or no longer does; either way the
    /// count moves on (notifications may have been missed).
    fn listening(&self, now: bool) {
        let _ = self
            .0
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| {
                Some((v >> 1).wrapping_add(1) << 1 | u64::from(now))
            });
    }

    fn get(&self) -> Option<u64> {
        let v = self.0.load(Ordering::SeqCst);
        (v & 1 == 1).then_some(v >> 1)
    }
}

impl Listener {
    pub(super) fn new(config: tokio_postgres::Config) -> Self {
        Self {
            config,
            changes: broadcast::channel(BACKLOG).0,
            rules: Arc::default(),
            task: OnceLock::new(),
        }
    }

    /// A receiver of the ids of changed approvals; starts the connection
    /// on first use (inside a runtime).
    pub(super) fn subscribe(&self) -> Changes {
        let receiver = self.changes.subscribe();
        self.start();
        Changes(receiver)
    }

    /// A value that moves on at every change of the saved rules this
    /// connection hears of, and at every (re)connection; `None` while not
    /// listening. Starts the connection on first use (inside a runtime;
    /// outside one, `None`).
    pub(super) fn rules_stamp(&self) -> Option<u64> {
        tokio::runtime::Handle::try_current().ok()?;
        self.start();
        self.rules.get()
    }

    fn start(&self) {
        self.task.get_or_init(|| {
            tokio::spawn(listen(
                self.config.clone(),
                self.changes.clone(),
                Arc::clone(&self.rules),
            ))
        });
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(task) = self.task.get() {
            task.abort();
        }
    }
}

/// What one waiter hears.
pub(super) struct Changes(broadcast::Receiver<i64>);

impl Changes {
    /// Resolves when approval `id` may have changed.
    pub(super) async fn changed(&mut self, id: i64) {
        loop {
            match self.0.recv().await {
                Ok(changed) if changed == id || changed == EVERYONE => return,
                Ok(_) => {}
                Err(broadcast::error::RecvError::Lagged(_)) => return,
                // The listener is gone: only the caller's poll is left.
                Err(broadcast::error::RecvError::Closed) => std::future::pending().await,
            }
        }
    }
}

/// Listens for as long as the store lives, reconnecting with a growing
/// pause (up to [`MAX_RETRY`]) when the connection is lost or refused.
async fn listen(
    config: tokio_postgres::Config,
    changes: broadcast::Sender<i64>,
    rules: Arc<RulesStamp>,
) {
    let mut pause = Duration::from_millis(100);
    loop {
        match config.connect(NoTls).await {
            Ok((client, mut connection)) => {
                let mut listening = false;
                let listen = async move {
                    client
                        .batch_execute(&format!(
                            "LISTEN {APPROVALS_CHANNEL}; LISTEN {RULES_CHANNEL}"
                        ))
                        .await
                        .map(|()| client)
                };
                let mut listen = std::pin::pin!(listen);
                // Kept while listening: dropping it would close the
                // connection.
                let mut _client = None;
                loop {
                    tokio::select! {
                        done = &mut listen, if !listening => match done {
                            Ok(client) => {
                                _client = Some(client);
                                listening = true;
                                rules.listening(true);
                                pause = Duration::from_millis(100);
                                let _ = changes.send(EVERYONE);
                            }
                            Err(error) => {
                                tracing::debug!("LISTEN failed: {error}");
                                break;
                            }
                        },
                        message = std::future::poll_fn(|cx| connection.poll_message(cx)) => {
                            match message {
                                Some(Ok(AsyncMessage::Notification(n))) if n.channel() == RULES_CHANNEL => {
                                    rules.moved();
                                }
                                Some(Ok(AsyncMessage::Notification(n))) => {
                                    if let Ok(id) = n.payload().parse::<i64>() {
                                        let _ = changes.send(id);
                                    }
                                }
                                Some(Ok(_)) => {}
                                Some(Err(error)) => {
                                    tracing::debug!("the store's LISTEN connection failed: {error}");
                                    break;
                                }
                                None => break,
                            }
                        }
                    }
                }
            }
            Err(error) => {
                tracing::debug!("cannot open the store's LISTEN connection: {error}");
            }
        }
        rules.listening(false);
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(MAX_RETRY);
    }
}
