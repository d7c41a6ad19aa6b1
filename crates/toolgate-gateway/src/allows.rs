//! "Allow for the session" kept in the store ([`SharedAllows`]): a client
//! allowed a tool on one worker is not asked again on another.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use toolgate_core::Sensitivity;
use toolgate_engine::SharedAllows;
use toolgate_store::{SessionAllow, Store};

use crate::approvals::now_ms;

/// The allows of a store several workers share.
///
/// # Rules
///
/// 1. An allow lasts [`lasting`](Self::new) from the answer; an answer
///    given again extends it.
/// 2. A store that cannot be read allows nothing (the call is asked); one
///    that cannot be written keeps the allow in the answering worker's
///    memory only, with a warning.
pub struct StoreAllows {
    store: Arc<dyn Store>,
    worker: String,
    lasting: Duration,
}

impl StoreAllows {
    /// Allows kept in `store` by `worker`, each lasting `lasting`.
    pub fn new(store: Arc<dyn Store>, worker: impl Into<String>, lasting: Duration) -> Self {
        Self {
            store,
            worker: worker.into(),
            lasting,
        }
    }
}

impl std::fmt::Debug for StoreAllows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreAllows")
            .field("store", &self.store.location())
            .field("lasting", &self.lasting)
            .finish_non_exhaustive()
    }
}

/// How a sensitivity is kept: its JSON (`"sensitive"`,
/// `{"command":"dev"}`).
fn kept(sensitivity: Sensitivity) -> String {
    serde_json::to_string(&sensitivity).unwrap_or_default()
}

#[async_trait]
impl SharedAllows for StoreAllows {
    async fn allows(&self, scope: &str, tool: &str, sensitivity: Sensitivity) -> bool {
        self.store
            .session_allowed(scope, tool, &kept(sensitivity), now_ms())
            .await
            .unwrap_or_else(|error| {
                tracing::warn!(
                    "the store's session allows cannot be read, so the call is asked: {}",
                    toolgate_core::error_chain(&error)
                );
                false
            })
    }

    async fn allow(&self, scope: &str, tool: &str, sensitivity: Sensitivity) {
        let granted = now_ms();
        let lasting = i64::try_from(self.lasting.as_millis()).unwrap_or(i64::MAX);
        let allow = SessionAllow {
            scope: scope.to_owned(),
            tool: tool.to_owned(),
            sensitivity: kept(sensitivity),
            by: self.worker.clone(),
            granted,
            expires: granted.saturating_add(lasting),
        };
        if let Err(error) = self.store.allow_for_session(&allow).await {
            tracing::warn!(
                "allowing `{tool}` for the session of {scope} holds on this worker only: the \
                 store did not keep it ({})",
                toolgate_core::error_chain(&error)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        reason = "test code: a failed unwrap is a failed test"
    )]

    use toolgate_core::CommandClass;
    use toolgate_store::SqliteStore;

    use super::*;

    #[tokio::test]
    async fn an_allow_holds_for_its_sensitivity_until_it_lapses() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(SqliteStore::open(dir.path().join("s.db")).unwrap());
        let lasting = Duration::from_millis(300);
        let one = StoreAllows::new(Arc::clone(&store), "w1", lasting);
        let two = StoreAllows::new(Arc::clone(&store), "w2", lasting);
        let dev = Sensitivity::Command(CommandClass::Dev);
        assert!(!two.allows("client:ci", "run_command", dev).await);
        one.allow("client:ci", "run_command", dev).await;
        assert!(two.allows("client:ci", "run_command", dev).await);
        let dangerous = Sensitivity::Command(CommandClass::Dangerous);
        assert!(!two.allows("client:ci", "run_command", dangerous).await);
        tokio::time::sleep(lasting).await;
        assert!(!two.allows("client:ci", "run_command", dev).await);
    }
}
