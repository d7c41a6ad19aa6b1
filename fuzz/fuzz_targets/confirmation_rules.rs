//! Arbitrary bytes as a `run_command` line against confirmation rules:
//! matching must never panic, and an allow rule never covers more than the
//! deny rule with the same prefix names (whatever an allow rule lets run
//! unasked, a deny rule on the same words refuses).
//!
//!     cargo +nightly fuzz run confirmation_rules

#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_core::{Effect, Effects};
use toolgate_policy::{ConfirmationRule, ConfirmationRules, RuleDecision, parse_command};

const PREFIXES: &[&str] = &["git status", "ls", "echo hi", "cargo test", "rm"];

fn rules(prefix: &str, decision: RuleDecision) -> Option<ConfirmationRules> {
    ConfirmationRules::new([ConfirmationRule {
        tool: "run_command".into(),
        command: Some(prefix.into()),
        path: None,
        decision,
        ..ConfirmationRule::default()
    }])
    .ok()
}

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    let effects = Effects::known([Effect::command(line, None)]);
    for prefix in PREFIXES {
        let (Some(allow), Some(deny)) = (
            rules(prefix, RuleDecision::Allow),
            rules(prefix, RuleDecision::Deny),
        ) else {
            panic!("the prefix `{prefix}` must compile");
        };
        let allowed = allow.evaluate("run_command", &effects).is_some();
        let denied = deny.evaluate("run_command", &effects).is_some();
        assert!(!allowed || denied, "{prefix:?} {line:?}");
        if allowed {
            let parsed = parse_command(line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
            assert_eq!(parsed.simple_commands().len(), 1, "{line:?}");
        }
    }
});
