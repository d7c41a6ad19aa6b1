//! The clients' `rate_per_minute` kept in the store ([`SharedRate`]): a
//! client spread over N workers gets its limit, not N times it.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use toolgate_mcp::SharedRate;
use toolgate_store::{Budget, Store};

/// The request budgets of a store several workers share, one bucket per
/// client name (`""` for the anonymous client).
pub struct StoreRate {
    store: Arc<dyn Store>,
}

impl StoreRate {
    /// Budgets kept in `store`.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self { store }
    }
}

#[async_trait]
impl SharedRate for StoreRate {
    async fn take(&self, client: &str, per_minute: u32) -> Result<Option<Duration>, String> {
        let now = crate::approvals::now_ms();
        let wait = self
            .store
            .take_request(
                &format!("mcp-http-client:{client}"),
                Budget::per_minute(per_minute),
                now,
            )
            .await
            .map_err(|error| toolgate_core::error_chain(&error))?;
        Ok(wait.map(|ms| Duration::from_millis(u64::try_from(ms).unwrap_or(1))))
    }
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
    async fn two_workers_take_from_one_budget_per_client() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(SqliteStore::open(dir.path().join("s.db")).unwrap());
        let (one, two) = (StoreRate::new(Arc::clone(&store)), StoreRate::new(store));
        assert_eq!(one.take("ci", 2).await.unwrap(), None);
        assert_eq!(two.take("ci", 2).await.unwrap(), None);
        let wait = one.take("ci", 2).await.unwrap().unwrap();
        assert!(
            wait > Duration::from_secs(29) && wait <= Duration::from_secs(30),
            "{wait:?}"
        );
        assert_eq!(two.take("bot", 2).await.unwrap(), None);
    }
}
