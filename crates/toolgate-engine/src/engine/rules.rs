//! Step 5's rules: the configuration's (`confirmation.rules`, fixed when
//! the engine is built) and, when the engine has them, the rules saved in
//! a store several workers share, which change while it runs.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use toolgate_core::Effects;
use toolgate_policy::{
    ConfirmationMode, ConfirmationRule, ConfirmationRules, RuleDecision, RuleMatch,
};

/// Confirmation rules kept outside the configuration, read at every call
/// (see [`EngineBuilder::saved_rules`](super::EngineBuilder::saved_rules)).
#[async_trait]
pub trait SavedRules: Send + Sync + fmt::Debug {
    /// The rules as they are now, or why they cannot be read. When they
    /// cannot, the gate treats the call as an `ask` rule would: a saved
    /// `deny` might cover it, so it never runs unasked.
    async fn current(&self) -> Result<Arc<SavedRuleSet>, String>;

    /// Where the rules are kept, for [`Stages`](super::Stages).
    fn describe(&self) -> String;
}

/// Saved rules, compiled, each with the id its store knows it by.
#[derive(Debug, Clone, Default)]
pub struct SavedRuleSet {
    rules: ConfirmationRules,
    ids: Vec<i64>,
}

impl SavedRuleSet {
    /// `rules` with their store ids, in the same order; `None` when the
    /// counts differ.
    pub fn new(rules: ConfirmationRules, ids: Vec<i64>) -> Option<Self> {
        let same = rules.rules().len() == ids.len();
        same.then_some(Self { rules, ids })
    }

    /// The store ids, in order.
    pub fn ids(&self) -> &[i64] {
        &self.ids
    }
}

/// The rule that decided a call, and where it is kept.
#[derive(Debug, Clone, Copy)]
pub(super) enum RuleHit<'a> {
    /// A rule of `confirmation.rules`.
    Config(RuleMatch<'a>),
    /// A rule saved in the store, by its id there.
    Saved { id: i64, rule: &'a ConfirmationRule },
    /// The saved rules could not be read: the call is asked.
    Unreadable(&'a str),
}

impl RuleHit<'_> {
    pub(super) fn decision(&self) -> RuleDecision {
        match self {
            Self::Config(m) => m.decision(),
            Self::Saved { rule, .. } => rule.decision,
            Self::Unreadable(_) => RuleDecision::Ask,
        }
    }

    /// Whether a person's answer could be spared by another rule: an
    /// unreadable store is no rule of anyone's to narrow.
    pub(super) fn is_rule(&self) -> bool {
        !matches!(self, Self::Unreadable(_))
    }

    /// The refusal of a call this rule asks about under `mode`, which
    /// asks nobody (`dont-ask`).
    pub(super) fn refused_unasked(&self, name: &str, mode: ConfirmationMode) -> String {
        let next = if self.is_rule() {
            "; an `ask` rule wins over `allow` rules: narrow it or remove it \
             (`toolgate rules list`) to let such calls run"
        } else {
            "; retry once the store answers"
        };
        format!(
            "`{name}` needs confirmation by {}, and the mode {mode} never asks, so it was \
             refused{next}",
            self.placed()
        )
    }

    /// The refusal of a call this rule asks about when nobody can be asked.
    pub(super) fn nobody_to_ask(&self, name: &str) -> String {
        format!(
            "`{name}` needs confirmation by {}, and nobody can be asked here",
            self.placed()
        )
    }

    /// The rule with where it is kept, as refusals name it.
    pub(super) fn placed(&self) -> String {
        match self {
            Self::Config(_) => format!("{self} in confirmation.rules"),
            Self::Saved { .. } => format!("{self}, saved in the shared store"),
            Self::Unreadable(reason) => format!(
                "the rules saved in the shared store, which cannot be read now ({reason}) and \
                 might deny it"
            ),
        }
    }
}

/// As the audit and the person's card name the rule.
impl fmt::Display for RuleHit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Config(m) => m.fmt(f),
            Self::Saved { id, rule } => write!(f, "store rule {id} ({rule})"),
            Self::Unreadable(_) => f.write_str("the store's saved rules (unreadable)"),
        }
    }
}

/// The rule that decides a call of `tool` with `effects`: among the
/// configuration's and the saved ones, `deny` beats `ask` beats `allow`,
/// and on a tie the configuration's is reported.
pub(super) fn decide<'a>(
    config: &'a ConfirmationRules,
    saved: Option<&'a Result<Arc<SavedRuleSet>, String>>,
    tool: &str,
    effects: &Effects,
) -> Option<RuleHit<'a>> {
    let first = config.evaluate(tool, effects).map(RuleHit::Config);
    let second = match saved {
        None => None,
        Some(Err(reason)) => Some(RuleHit::Unreadable(reason)),
        Some(Ok(set)) => set.rules.evaluate(tool, effects).map(|m| RuleHit::Saved {
            id: set.ids[m.number - 1],
            rule: m.rule,
        }),
    };
    match (first, second) {
        (Some(a), Some(b)) if b.decision() > a.decision() => Some(b),
        (Some(a), _) => Some(a),
        (None, b) => b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::{Change, Effect};

    fn rule(tool: &str, path: &str, decision: RuleDecision) -> ConfirmationRule {
        ConfirmationRule {
            tool: tool.into(),
            path: Some(path.into()),
            decision,
            ..ConfirmationRule::default()
        }
    }

    fn saved(rules: Vec<ConfirmationRule>, ids: Vec<i64>) -> Arc<SavedRuleSet> {
        Arc::new(SavedRuleSet::new(ConfirmationRules::new(rules).unwrap(), ids).unwrap())
    }

    #[test]
    fn the_stronger_decision_wins_wherever_it_is_kept() {
        use RuleDecision::{Allow, Ask, Deny};
        let write = Effects::known([Effect::write("docs/a.md", Change::counted(1, 0, true))]);
        let cases: Vec<(Vec<RuleDecision>, Vec<RuleDecision>, Option<&str>)> = vec![
            (vec![], vec![], None),
            (vec![Allow], vec![], Some("rule 1 (allow")),
            (vec![], vec![Allow], Some("store rule 40 (allow")),
            (vec![Allow], vec![Deny], Some("store rule 40 (deny")),
            (vec![Deny], vec![Allow], Some("rule 1 (deny")),
            (vec![Ask], vec![Ask], Some("rule 1 (ask")),
            (vec![Allow], vec![Allow, Ask], Some("store rule 41 (ask")),
        ];
        for (config, stored, want) in cases {
            let config =
                ConfirmationRules::new(config.iter().map(|d| rule("write_file", "docs/**", *d)))
                    .unwrap();
            let ids = (40..).take(stored.len()).collect();
            let stored = Ok(saved(
                stored
                    .iter()
                    .map(|d| rule("write_file", "docs/**", *d))
                    .collect(),
                ids,
            ));
            let hit = decide(&config, Some(&stored), "write_file", &write).map(|h| h.to_string());
            match want {
                None => assert_eq!(hit, None),
                Some(start) => assert!(
                    hit.as_deref().is_some_and(|h| h.starts_with(start)),
                    "{hit:?} should start with {start}"
                ),
            }
        }
    }

    #[test]
    fn unreadable_saved_rules_ask_unless_the_configuration_denies() {
        let write = Effects::known([Effect::write("docs/a.md", Change::counted(1, 0, true))]);
        let down = Err("connection refused".to_owned());
        let allow =
            ConfirmationRules::new([rule("write_file", "docs/**", RuleDecision::Allow)]).unwrap();
        let hit = decide(&allow, Some(&down), "write_file", &write).unwrap();
        assert_eq!(hit.decision(), RuleDecision::Ask);
        assert!(!hit.is_rule());
        assert!(
            hit.placed().contains("connection refused"),
            "{}",
            hit.placed()
        );
        let deny =
            ConfirmationRules::new([rule("write_file", "docs/**", RuleDecision::Deny)]).unwrap();
        let hit = decide(&deny, Some(&down), "write_file", &write).unwrap();
        assert_eq!(hit.decision(), RuleDecision::Deny);
        // No saved rules configured: only the configuration's decide.
        assert!(decide(&ConfirmationRules::default(), None, "write_file", &write).is_none());
    }

    #[test]
    fn a_saved_rule_set_needs_one_id_per_rule() {
        let rules =
            ConfirmationRules::new([rule("write_file", "docs/**", RuleDecision::Allow)]).unwrap();
        assert!(SavedRuleSet::new(rules.clone(), vec![]).is_none());
        assert_eq!(SavedRuleSet::new(rules, vec![9]).unwrap().ids(), &[9]);
    }
}
