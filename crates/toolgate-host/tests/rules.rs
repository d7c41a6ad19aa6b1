//! The host's confirmation rules know which built-in tools run a command
//! line on every call, from their specs: a configuration that allows one of
//! them without a command prefix is refused when it loads, one that allows
//! a tool only some of whose calls run commands is not.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use toolgate_host::{Host, HostError, TrustPolicy};

fn load(dir: &std::path::Path, rules: &str) -> Result<Host, HostError> {
    std::fs::write(
        dir.join("toolgate.yaml"),
        format!("confirmation:\n  rules:\n{rules}"),
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let env = vec![("HOME".to_owned(), dir.join("home").display().to_string())];
    Host::builder()
        .workspace(dir)
        .env(env)
        .trust(TrustPolicy::ThisRun)
        .load()
}

#[test]
fn an_allow_rule_for_a_command_line_tool_needs_a_prefix_when_the_config_loads() {
    // (rules, the error's text when refused)
    let cases: &[(&str, Option<&str>)] = &[
        (
            "    - {tool: run_command, decision: allow}\n",
            Some("an allow rule for `run_command` needs a command prefix"),
        ),
        (
            "    - {tool: run_command, command: git status, decision: allow}\n",
            None,
        ),
        ("    - {tool: run_command, decision: ask}\n", None),
        ("    - {tool: process, decision: allow}\n", None),
        ("    - {tool: write_file, decision: allow}\n", None),
    ];
    for (rules, refused) in cases {
        let dir = tempfile::tempdir().unwrap();
        match (load(dir.path(), rules), refused) {
            (Ok(_), None) => {}
            (Err(error), Some(text)) => {
                let chain = toolgate_core::error_chain(&error);
                assert!(chain.contains(text), "{rules}: {chain}");
            }
            (Ok(_), Some(_)) => panic!("{rules}: loaded"),
            (Err(error), None) => panic!("{rules}: {}", toolgate_core::error_chain(&error)),
        }
    }
}
