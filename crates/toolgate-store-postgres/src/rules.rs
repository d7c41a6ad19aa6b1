//! [`RuleStore`] for [`PostgresStore`]: one statement per change, which
//! notifies [`RULES_CHANNEL`] as it commits, so every worker sharing the
//! database reads a rule as soon as it is saved.

use async_trait::async_trait;

use super::{Db as _, PostgresStore, from_json, to_json};
use toolgate_store::{NewRule, RULES_CHANNEL, RuleStore, SavedRule, SessionAllow, StoreError};

#[async_trait]
impl RuleStore for PostgresStore {
    async fn add_rule(&self, rule: &NewRule) -> Result<SavedRule, StoreError> {
        let text = to_json(&rule.rule)?;
        let client = self.client().await?;
        let row = client
            .query_one(
                "WITH added AS (INSERT INTO rules (rule, saved_by, saved) VALUES ($1, $2, $3) \
                 RETURNING id) SELECT id, pg_notify($4, id::text)::text FROM added",
                &[&text, &rule.saved_by, &rule.saved, &RULES_CHANNEL],
            )
            .await
            .db()?;
        Ok(SavedRule {
            id: row.get(0),
            rule: rule.rule.clone(),
            saved_by: rule.saved_by.clone(),
            saved: rule.saved,
        })
    }

    async fn rules(&self) -> Result<Vec<SavedRule>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT id, rule, saved_by, saved FROM rules ORDER BY id",
                &[],
            )
            .await
            .db()?;
        rows.iter()
            .map(|r| {
                Ok(SavedRule {
                    id: r.get(0),
                    rule: from_json(r.get(1))?,
                    saved_by: r.get(2),
                    saved: r.get(3),
                })
            })
            .collect()
    }

    async fn remove_rule(&self, id: i64) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let n = client
            .execute(
                "WITH removed AS (DELETE FROM rules WHERE id = $1 RETURNING id) \
                 SELECT pg_notify($2, id::text)::text FROM removed",
                &[&id, &RULES_CHANNEL],
            )
            .await
            .db()?;
        Ok(n > 0)
    }

    fn rules_stamp(&self) -> Option<u64> {
        self.listener.rules_stamp()
    }
    async fn allow_for_session(&self, allow: &SessionAllow) -> Result<(), StoreError> {
        let client = self.client().await?;
        client
            .execute(
                "DELETE FROM session_allows WHERE expires <= $1",
                &[&allow.granted],
            )
            .await
            .db()?;
        client
            .execute(
                "INSERT INTO session_allows
                     (scope, tool, sensitivity, granted_by, granted, expires)
                 VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (scope, tool, sensitivity) DO UPDATE SET
                     granted_by = excluded.granted_by, granted = excluded.granted,
                     expires = GREATEST(session_allows.expires, excluded.expires)",
                &[
                    &allow.scope,
                    &allow.tool,
                    &allow.sensitivity,
                    &allow.by,
                    &allow.granted,
                    &allow.expires,
                ],
            )
            .await
            .db()?;
        Ok(())
    }

    async fn session_allowed(
        &self,
        scope: &str,
        tool: &str,
        sensitivity: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT 1 FROM session_allows
                 WHERE scope = $1 AND tool = $2 AND sensitivity = $3 AND expires > $4",
                &[&scope, &tool, &sensitivity, &now],
            )
            .await
            .db()?;
        Ok(row.is_some())
    }
}
