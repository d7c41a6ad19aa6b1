//! [`LimitStore`] for [`PostgresStore`]: one statement per take; the
//! upsert locks the bucket's row, so that takes from every worker at once
//! are counted one after the other, each on what the last one left.

use async_trait::async_trait;

use super::{Db as _, PostgresStore};
use toolgate_store::{Budget, LimitStore, StoreError};

#[async_trait]
impl LimitStore for PostgresStore {
    async fn take_request(
        &self,
        key: &str,
        budget: Budget,
        now: i64,
    ) -> Result<Option<i64>, StoreError> {
        // REFILLED is Budget::refilled of the locked row; a new bucket
        // starts full, so its first take is granted.
        const REFILLED: &str =
            "LEAST($2::float8, c.tokens + GREATEST(0, $3::int8 - c.at) * $4::float8)";
        let client = self.client().await?;
        let row = client
            .query_one(
                &format!(
                    "INSERT INTO client_buckets AS c (client, tokens, at, taken)
                     VALUES ($1, GREATEST(0, $2::float8 - 1), $3::int8, TRUE)
                     ON CONFLICT (client) DO UPDATE SET
                         tokens = CASE WHEN {REFILLED} >= 1 - 1e-9
                                       THEN GREATEST(0, {REFILLED} - 1) ELSE {REFILLED} END,
                         taken = {REFILLED} >= 1 - 1e-9,
                         at = GREATEST(c.at, $3::int8)
                     RETURNING taken, tokens"
                ),
                &[&key, &budget.capacity, &now, &budget.per_ms],
            )
            .await
            .db()?;
        let (taken, tokens): (bool, f64) = (row.get(0), row.get(1));
        Ok((!taken).then(|| budget.wait_ms(tokens)))
    }
}
