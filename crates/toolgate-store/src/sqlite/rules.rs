//! [`RuleStore`] for [`SqliteStore`].

use async_trait::async_trait;
use rusqlite::params;

use super::{Db as _, SqliteStore, write_tx};
use crate::{NewRule, RuleStore, SavedRule, SessionAllow, StoreError};

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

    async fn allow_for_session(&self, allow: &SessionAllow) -> Result<(), StoreError> {
        let allow = allow.clone();
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            tx.execute(
                "DELETE FROM session_allows WHERE expires <= ?1",
                [allow.granted],
            )
            .db()?;
            tx.execute(
                "INSERT INTO session_allows
                     (scope, tool, sensitivity, granted_by, granted, expires)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (scope, tool, sensitivity) DO UPDATE SET
                     granted_by = excluded.granted_by, granted = excluded.granted,
                     expires = MAX(expires, excluded.expires)",
                params![
                    allow.scope,
                    allow.tool,
                    allow.sensitivity,
                    allow.by,
                    allow.granted,
                    allow.expires
                ],
            )
            .db()?;
            tx.commit().db()
        })
        .await
    }

    async fn session_allowed(
        &self,
        scope: &str,
        tool: &str,
        sensitivity: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        let (scope, tool, sensitivity) =
            (scope.to_owned(), tool.to_owned(), sensitivity.to_owned());
        self.with_conn(move |conn| {
            let mut st = conn
                .prepare_cached(
                    "SELECT 1 FROM session_allows
                     WHERE scope = ?1 AND tool = ?2 AND sensitivity = ?3 AND expires > ?4",
                )
                .db()?;
            st.exists(params![scope, tool, sensitivity, now]).db()
        })
        .await
    }
}
