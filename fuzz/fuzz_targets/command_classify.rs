//! Arbitrary bytes as a shell command: parsing and classifying must never
//! panic, whatever the input, with or without an `env` argument.
//!
//! Also checks the invariants the kernel profile relies on: only a `safe`
//! verdict lists programs, each a non-empty word; an `env` argument never
//! lowers the class or unblocks a line.
//!
//!     cargo +nightly fuzz run command_classify -- -dict=command_classify.dict -max_total_time=600

#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_policy::{CommandPolicy, VerdictKind};

/// Names the `env` argument may carry: harmless, unknown, code-loading.
const ENV_NAMES: &[&str] = &[
    "LANG",
    "TZ",
    "RUST_LOG",
    "MY_FLAG",
    "PATH",
    "LD_PRELOAD",
    "GIT_DIR",
    "HOME",
    "x",
    "",
];

fuzz_target!(|data: &[u8]| {
    let Ok(cmd) = std::str::from_utf8(data) else {
        return;
    };
    let policy = CommandPolicy::default();
    let verdict = policy.classify(cmd);
    assert!(!verdict.reason().is_empty());
    let safe = verdict.label() == "safe";
    assert!(safe || verdict.programs().is_empty(), "{cmd:?}");
    for program in verdict.programs() {
        assert!(!program.is_empty() && !program.contains('\n'), "{cmd:?}");
    }
    // The first byte picks the `env` names, so the fuzzer explores them too.
    let pick = data.first().copied().unwrap_or(0);
    let env: Vec<&str> = ENV_NAMES
        .iter()
        .enumerate()
        .filter(|(i, _)| pick & (1 << (i % 8)) != 0)
        .map(|(_, name)| *name)
        .collect();
    let with_env = policy.classify_with_env(cmd, &env);
    assert!(!with_env.reason().is_empty());
    assert!(
        with_env.command_class() >= verdict.command_class(),
        "{cmd:?} {env:?}"
    );
    assert_eq!(
        with_env.kind() == VerdictKind::Blocked,
        verdict.kind() == VerdictKind::Blocked,
        "{cmd:?} {env:?}"
    );
    assert!(with_env.label() == "safe" || with_env.programs().is_empty());
    if let Ok(parsed) = toolgate_policy::parse_command(cmd) {
        for simple in parsed.simple_commands() {
            let _ = simple.text();
            let _ = simple.program_name();
        }
    }
});
