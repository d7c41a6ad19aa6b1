//! Request budgets shared by the workers of one store: a client's
//! `rate_per_minute` holds across all of them, not per worker.

use async_trait::async_trait;

use crate::StoreError;

/// A token bucket of one client, as every process sharing the store sees
/// it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// Requests that may be made at once (the bucket's size).
    pub capacity: f64,
    /// Requests given back per millisecond.
    pub per_ms: f64,
}

impl Budget {
    /// `rate` requests a minute, a minute's worth at once.
    pub fn per_minute(rate: u32) -> Self {
        let capacity = f64::from(rate.max(1));
        Self {
            capacity,
            per_ms: capacity / 60_000.0,
        }
    }

    /// The bucket's content at `now`, from `tokens` at `at` (rule 1).
    pub fn refilled(&self, tokens: f64, at: i64, now: i64) -> f64 {
        #[expect(
            clippy::cast_precision_loss,
            reason = "milliseconds between two requests, far below 2^52"
        )]
        let elapsed = now.saturating_sub(at).max(0) as f64;
        (tokens + elapsed * self.per_ms).min(self.capacity)
    }

    /// Whether `tokens` hold one request (with a hair of slack: refills
    /// are sums of fractions).
    pub fn holds_one(tokens: f64) -> bool {
        tokens >= 1.0 - 1e-9
    }

    /// Milliseconds until `tokens` hold one request.
    pub fn wait_ms(&self, tokens: f64) -> i64 {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "at most a minute's worth of milliseconds"
        )]
        let ms = ((1.0 - tokens).max(0.0) / self.per_ms).ceil() as i64;
        ms.max(1)
    }
}

/// Where request budgets are kept.
///
/// # Rules
///
/// 1. A key's bucket starts full; it fills at `per_ms` up to `capacity`,
///    measured by the callers' clocks (a `now` before the last one counts
///    as no time).
/// 2. [`take_request`](Self::take_request) takes one request from it when
///    it holds one, atomically among every process sharing the store: of
///    N takes made at once on a bucket holding k, exactly min(N, k) get
///    one.
#[async_trait]
pub trait LimitStore: Send + Sync {
    /// Takes one request from `key`'s bucket at `now` (milliseconds since
    /// the Unix epoch): `None` when taken, else how many milliseconds
    /// until one is there.
    async fn take_request(
        &self,
        key: &str,
        budget: Budget,
        now: i64,
    ) -> Result<Option<i64>, StoreError>;
}
