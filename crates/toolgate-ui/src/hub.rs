//! The event bus: every event the UI shows goes through one broadcast
//! channel, already serialized, to every open page.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::broadcast;

/// How many events a slow page may fall behind before it is told to
/// reload (`{"type": "lagged"}`): a long streamed answer is many events.
const BACKLOG: usize = 8192;

/// Sends events to every page listening on `/api/events`.
#[derive(Debug, Clone)]
pub struct Hub {
    tx: broadcast::Sender<Arc<str>>,
}

impl Default for Hub {
    fn default() -> Self {
        Self::new()
    }
}

impl Hub {
    /// A bus nobody listens to yet.
    pub fn new() -> Self {
        let (tx, _) = broadcast::channel(BACKLOG);
        Self { tx }
    }

    /// Sends `event` (a JSON object with a `type`) to every page. Without
    /// a page open, the event is dropped: pages load state on connect.
    pub fn emit(&self, event: &Value) {
        if self.tx.receiver_count() == 0 {
            return;
        }
        let _ = self.tx.send(Arc::from(event.to_string()));
    }

    /// Whether a page listens.
    pub(crate) fn has_listeners(&self) -> bool {
        self.tx.receiver_count() > 0
    }

    /// A run's event: `event` with `"session": session` added.
    pub fn emit_for(&self, session: &str, mut event: Value) {
        if let Some(object) = event.as_object_mut() {
            object.insert("session".to_owned(), Value::from(session));
        }
        self.emit(&event);
    }

    /// A sink sending a run's events to every page, as `session`'s.
    pub fn event_sink(&self, session: &str) -> toolgate_agent::EventSink {
        let hub = self.clone();
        let session = session.to_owned();
        Arc::new(move |event: &toolgate_agent::AgentEvent| {
            if let Ok(value) = serde_json::to_value(event) {
                hub.emit_for(&session, value);
            }
        })
    }

    /// A new listener.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<str>> {
        self.tx.subscribe()
    }
}
