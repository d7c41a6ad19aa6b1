//! The approvals' `LISTEN` connection: one per store (its clones share
//! it), opened on the first wait, kept open for the store's life and
//! opened again when lost.
//!
//! A pooled connection cannot listen: the pool hands it to other queries
//! and resets it. So the listener has a connection of its own, driven by
//! a task that forwards each notification of
//! [`APPROVALS_CHANNEL`](toolgate_store::APPROVALS_CHANNEL) (an approval's id) to
//! the waiters of this process. While it is down, notifications are lost;
//! the waiters' slow poll covers the gap, and every (re)connection wakes
//! them all to read again.

use std::sync::OnceLock;
use std::time::Duration;

use tokio::sync::broadcast;
use tokio_postgres::{AsyncMessage, NoTls};

use toolgate_store::APPROVALS_CHANNEL;

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
    task: OnceLock<tokio::task::JoinHandle<()>>,
}

impl Listener {
    pub(super) fn new(config: tokio_postgres::Config) -> Self {
        Self {
            config,
            changes: broadcast::channel(BACKLOG).0,
            task: OnceLock::new(),
        }
    }

    /// A receiver of the ids of changed approvals; starts the connection
    /// on first use (inside a runtime).
    pub(super) fn subscribe(&self) -> Changes {
        let receiver = self.changes.subscribe();
        self.task
            .get_or_init(|| tokio::spawn(listen(self.config.clone(), self.changes.clone())));
        Changes(receiver)
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
async fn listen(config: tokio_postgres::Config, changes: broadcast::Sender<i64>) {
    let mut pause = Duration::from_millis(100);
    loop {
        match config.connect(NoTls).await {
            Ok((client, mut connection)) => {
                let mut listening = false;
                let listen = async move {
                    client
                        .batch_execute(&format!("LISTEN {APPROVALS_CHANNEL}"))
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
                                pause = Duration::from_millis(100);
                                let _ = changes.send(EVERYONE);
                            }
                            Err(error) => {
                                tracing::debug!("LISTEN {APPROVALS_CHANNEL} failed: {error}");
                                break;
                            }
                        },
                        message = std::future::poll_fn(|cx| connection.poll_message(cx)) => {
                            match message {
                                Some(Ok(AsyncMessage::Notification(n))) => {
                                    if let Ok(id) = n.payload().parse::<i64>() {
                                        let _ = changes.send(id);
                                    }
                                }
                                Some(Ok(_)) => {}
                                Some(Err(error)) => {
                                    tracing::debug!("the approvals' LISTEN connection failed: {error}");
                                    break;
                                }
                                None => break,
                            }
                        }
                    }
                }
            }
            Err(error) => {
                tracing::debug!("cannot open the approvals' LISTEN connection: {error}");
            }
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(MAX_RETRY);
    }
}
