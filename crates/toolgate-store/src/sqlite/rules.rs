//! [`RuleStore`] for [`SqliteStore`].

use async_trait::async_trait;
use rusqlite::params;

use super::{Db as _, SqliteStore, write_tx};
use crate::{NewRule, RuleStore, SavedRule, StoreError};

#[async_trait]
impl RuleStore for SqliteStore {
    async fn add_rule(&self, rule: &NewRule) -> Result<SavedRule, StoreError> {
        let rule = rule.clone();
        let text = serde_json::to_string(&rule.rule).map_err(StoreError::Json)?;
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            tx.execute(
                "INSERT INTO rules (rule, saved_by, saved) VALUES (?1, ?2, ?3)",
                params![text, rule.saved_by, rule.saved],
            )
            .db()?;
            let id = tx.last_insert_rowid();
            tx.commit().db()?;
            Ok(SavedRule {
                id,
                rule: rule.rule,
                saved_by: rule.saved_by,
                saved: rule.saved,
            })
        })
        .await
    }

    async fn rules(&self) -> Result<Vec<SavedRule>, StoreError> {
        self.with_conn(|conn| {
            let mut st = conn
                .prepare_cached("SELECT id, rule, saved_by, saved FROM rules ORDER BY id")
                .db()?;
            let rows = st
                .query_map([], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, i64>(3)?,
                    ))
                })
                .db()?
                .collect::<Result<Vec<_>, _>>()
                .db()?;
            rows.into_iter()
                .map(|(id, rule, saved_by, saved)| {
                    Ok(SavedRule {
                        id,
                        rule: serde_json::from_str(&rule).map_err(StoreError::Json)?,
                        saved_by,
                        saved,
                    })
                })
                .collect()
        })
        .await
    }

    async fn remove_rule(&self, id: i64) -> Result<bool, StoreError> {
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let n = tx.execute("DELETE FROM rules WHERE id = ?1", [id]).db()?;
            tx.commit().db()?;
            Ok(n > 0)
        })
        .await
    }
}
