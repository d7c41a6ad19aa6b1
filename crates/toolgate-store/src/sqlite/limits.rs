//! [`LimitStore`] for [`SqliteStore`]: the bucket read and written in one
//! write transaction, which the file's lock makes atomic among processes.

use async_trait::async_trait;
use rusqlite::{OptionalExtension as _, params};

use super::{Db as _, SqliteStore, write_tx};
use crate::{Budget, LimitStore, StoreError};

#[async_trait]
impl LimitStore for SqliteStore {
    async fn take_request(
        &self,
        key: &str,
        budget: Budget,
        now: i64,
    ) -> Result<Option<i64>, StoreError> {
        let key = key.to_owned();
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let (tokens, at) = tx
                .query_row(
                    "SELECT tokens, at FROM client_buckets WHERE client = ?1",
                    [&key],
                    |r| Ok((r.get::<_, f64>(0)?, r.get::<_, i64>(1)?)),
                )
                .optional()
                .db()?
                .unwrap_or((budget.capacity, now));
            let tokens = budget.refilled(tokens, at, now);
            let taken = Budget::holds_one(tokens);
            let left = if taken {
                (tokens - 1.0).max(0.0)
            } else {
                tokens
            };
            tx.execute(
                "INSERT INTO client_buckets (client, tokens, at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (client) DO UPDATE SET tokens = ?2, at = MAX(at, ?3)",
                params![key, left, now],
            )
            .db()?;
            tx.commit().db()?;
            Ok((!taken).then(|| budget.wait_ms(tokens)))
        })
        .await
    }
}
