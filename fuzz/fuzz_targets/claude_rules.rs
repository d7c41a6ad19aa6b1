//! Arbitrary text as a Claude Code permission rule: mapping never panics,
//! what it maps to always compiles, and an `allow` mapping never lets run
//! what the `deny` mapping of the same text would not refuse (a rule toolgate
//! cannot read for sure is unmappable, never broadened).
//!
//!     cargo +nightly fuzz run claude_rules

#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_core::{Effect, Effects};
use toolgate_policy::{ClaudeContext, ClaudeTools, ConfirmationRules, RuleDecision, claude_rule, claude_text};

const PATHS: ClaudeContext<'static> = ClaudeContext {
    root: "/ws",
    home: Some("/home/u"),
    tools: ClaudeTools {
        command: "run_command",
        web_fetch: "web_fetch",
        web_search: "web_search",
    },
};

const LINES: &[&str] = &[
    "git push",
    "git push origin main",
    "npm run test",
    "npm run test; rm -rf /",
    "rm -rf /",
    "ls",
    "sh -c 'git push'",
];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let allow = claude_rule(text, RuleDecision::Allow, &PATHS);
    let deny = claude_rule(text, RuleDecision::Deny, &PATHS);
    if let Ok(rules) = &deny {
        for rule in rules {
            let _ = claude_text(rule, &PATHS.tools);
        }
    }
    let Ok(allow) = allow else { return };
    let Ok(deny) = deny else {
        panic!("{text:?}: the allow list maps it, the deny list does not");
    };
    let (Ok(allow), Ok(deny)) = (ConfirmationRules::new(allow), ConfirmationRules::new(deny)) else {
        panic!("{text:?}: a mapped rule does not compile");
    };
    for line in LINES {
        let effects = Effects::known([Effect::command(*line, None)]);
        for tool in ["run_command", "web_fetch"] {
            if allow.evaluate(tool, &effects).is_some() {
                assert!(deny.evaluate(tool, &effects).is_some(), "{text:?} {line:?}");
            }
        }
    }
});
