//! The rules saved in a shared store, as every gate reads them at each
//! call ([`SavedRules`]), kept between calls while the store says nobody
//! changed them.

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use toolgate_engine::{SavedRuleSet, SavedRules};
use toolgate_policy::{ConfirmationRule, ConfirmationRulesBuilder};
use toolgate_store::{SavedRule, Store};

/// The rules saved in a shared store as a gate reads them
/// ([`toolgate_engine::SavedRules`]), one per host so that its gates share
/// what was read.
///
/// # Rules
///
/// 1. They are read again whenever the store's
///    [`rules_stamp`](toolgate_store::RuleStore::rules_stamp) moved since
///    the last read, or cannot be had: on `PostgreSQL` a call costs no
///    query while nobody changes the rules, and a rule saved from any
///    worker applies from the first call after its notification arrives.
/// 2. A saved rule that is not a confirmation rule, or does not build,
///    makes the set unreadable, naming the rule's id and how to remove
///    it: the gate then asks about every call rather than leave out a
///    `deny`.
pub struct StoreRules {
    store: Arc<dyn Store>,
    builder: ConfirmationRulesBuilder,
    read: Mutex<Option<(u64, Arc<SavedRuleSet>)>>,
}

impl StoreRules {
    /// The rules saved in `store`, each built with `builder` (the
    /// configuration's: its workspace root and command tools, no rules).
    pub fn new(store: Arc<dyn Store>, builder: ConfirmationRulesBuilder) -> Self {
        Self {
            store,
            builder,
            read: Mutex::new(None),
        }
    }

    fn kept(&self, stamp: u64) -> Option<Arc<SavedRuleSet>> {
        let read = self.read.lock().unwrap_or_else(PoisonError::into_inner);
        read.as_ref()
            .filter(|(at, _)| *at == stamp)
            .map(|(_, set)| Arc::clone(set))
    }

    /// Compiles what the store holds (rule 2).
    fn compile(&self, saved: Vec<SavedRule>) -> Result<SavedRuleSet, String> {
        let mut rules = Vec::with_capacity(saved.len());
        let mut ids = Vec::with_capacity(saved.len());
        for saved in saved {
            let rule = serde_json::from_value::<ConfirmationRule>(saved.rule).map_err(|error| {
                format!(
                    "saved rule {} is not a confirmation rule ({error}); remove it with \
                     `toolgate rules remove --store {}`",
                    saved.id, saved.id
                )
            })?;
            // Alone first, so that a refusal names the store's id.
            let mut alone = self.builder.clone();
            alone.rules([rule.clone()]);
            alone.build().map_err(|error| {
                let error = error.to_string();
                let why = error.strip_prefix("rule 1 ").unwrap_or(&error);
                format!(
                    "saved rule {} {why}; remove it with `toolgate rules remove --store {}`",
                    saved.id, saved.id
                )
            })?;
            rules.push(rule);
            ids.push(saved.id);
        }
        let mut builder = self.builder.clone();
        builder.rules(rules);
        let compiled = builder.build().map_err(|error| error.to_string())?;
        SavedRuleSet::new(compiled, ids).ok_or_else(|| "the saved rules do not add up".to_owned())
    }
}

impl std::fmt::Debug for StoreRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreRules")
            .field("store", &self.store.location())
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl SavedRules for StoreRules {
    async fn current(&self) -> Result<Arc<SavedRuleSet>, String> {
        let stamp = self.store.rules_stamp();
        if let Some(set) = stamp.and_then(|stamp| self.kept(stamp)) {
            return Ok(set);
        }
        let saved = self.store.rules().await.map_err(|error| {
            tracing::warn!(
                "the rules saved in the store cannot be read, so calls are asked: {}",
                toolgate_core::error_chain(&error)
            );
            toolgate_core::error_chain(&error)
        })?;
        let set = Arc::new(self.compile(saved).inspect_err(|error| {
            tracing::warn!("{error}; calls are asked until then");
        })?);
        if let Some(stamp) = stamp {
            *self.read.lock().unwrap_or_else(PoisonError::into_inner) =
                Some((stamp, Arc::clone(&set)));
        }
        Ok(set)
    }

    fn describe(&self) -> String {
        format!("the rules saved in {}", self.store.location().display())
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        reason = "test code: a failed unwrap is a failed test"
    )]

    use serde_json::json;
    use toolgate_store::SqliteStore;

    use toolgate_store::NewRule;

    use super::*;

    async fn add(store: &dyn Store, rule: serde_json::Value) -> i64 {
        store
            .add_rule(&NewRule {
                rule,
                saved_by: "test".into(),
                saved: 1,
            })
            .await
            .unwrap()
            .id
    }

    #[tokio::test]
    async fn saved_rules_are_read_at_each_call_and_a_bad_one_names_its_id() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(SqliteStore::open(dir.path().join("s.db")).unwrap());
        let mut builder = ConfirmationRulesBuilder::default();
        builder.command_tools(["run_command"]).root("/ws");
        let rules = StoreRules::new(Arc::clone(&store), builder);
        assert!(rules.current().await.unwrap().ids().is_empty());

        // SQLite cannot stamp: what another process saved applies at the
        // next read.
        let id = add(
            &*store,
            json!({"tool": "write_file", "path": "docs/**", "decision": "deny"}),
        )
        .await;
        let set = rules.current().await.unwrap();
        assert_eq!(set.ids(), &[id]);
        assert!(rules.describe().contains("s.db"), "{}", rules.describe());
        // Not a rule, or a rule that does not build: the set cannot be
        // read, saying which rule and how to remove it.
        let bad = add(&*store, json!({"not": "a rule"})).await;
        let error = rules.current().await.unwrap_err();
        assert!(
            error.contains(&format!("saved rule {bad} is not a confirmation rule"))
                && error.contains(&format!("toolgate rules remove --store {bad}")),
            "{error}"
        );
        assert!(store.remove_rule(bad).await.unwrap());
        let broad = add(&*store, json!({"tool": "run_command", "decision": "allow"})).await;
        let error = rules.current().await.unwrap_err();
        assert!(
            error.starts_with(&format!("saved rule {broad} is too broad")),
            "{error}"
        );
        assert!(store.remove_rule(broad).await.unwrap());
        assert_eq!(rules.current().await.unwrap().ids(), &[id]);
    }
}
