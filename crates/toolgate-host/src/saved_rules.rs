//! Confirmation rules saved in a shared store (`store.url`): what the CLI's
//! `rules add --store` and the web UI's "Always allow" write, so that every
//! worker sharing the store applies them.
//!
//! # Rules
//!
//! 1. A rule is checked as the user's file's rules are (the same builder)
//!    before it is saved: the rules saved in a store are built together,
//!    so one that does not build would keep all of them from applying.
//! 2. Each saved rule records who saved it (`ui@WORKER`, `cli@WORKER`) and
//!    when.

use std::time::{SystemTime, UNIX_EPOCH};

use toolgate_policy::{ConfirmationRule, RuleError};
use toolgate_store::{NewRule, SavedRule, Store, StoreError};

/// Why a rule was not saved in the store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SaveRuleError {
    /// The rule does not build (rule 1); nothing was saved.
    #[error("the rule is not valid")]
    Invalid(#[source] RuleError),
    /// The store did not take it.
    #[error("the rules saved in the shared store cannot be reached")]
    Store(#[source] StoreError),
}

/// Saves `rule` in `store` as `by` (`ui`, `cli`), after checking it (rule
/// 1); the saved rule, with its id.
pub async fn save_rule_in_store(
    store: &dyn Store,
    rule: &ConfirmationRule,
    by: &str,
) -> Result<SavedRule, SaveRuleError> {
    let mut builder = crate::confirmation_rules_builder();
    builder.rules(vec![rule.clone()]);
    builder.build().map_err(SaveRuleError::Invalid)?;
    let value =
        serde_json::to_value(rule).map_err(|e| SaveRuleError::Store(StoreError::Json(e)))?;
    store
        .add_rule(&NewRule {
            rule: value,
            saved_by: format!("{by}@{}", crate::worker_name()),
            saved: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
        })
        .await
        .map_err(SaveRuleError::Store)
}
