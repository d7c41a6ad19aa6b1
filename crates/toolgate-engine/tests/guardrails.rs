//! The guardrails as a case table over the real tools, plus edit limits,
//! code rules and quality gates.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use std::path::Path;

use common::env;
use serde_json::{Value, json};
use toolgate_engine::{Decision, Guardrails, GuardrailsConfig, GuardrailsEngine};

const GUARDRAILS: &str = "
protected_files: [Cargo.lock, 'migrations/**']
blocked_commands: ['curl\\s', 'git\\s+push']
";

fn files(root: &Path) {
    std::fs::write(root.join(".env"), "TOKEN=secret").unwrap();
    std::fs::write(root.join("a.txt"), "hello").unwrap();
    std::fs::write(root.join("Cargo.lock"), "lock").unwrap();
    std::fs::create_dir(root.join("keys")).unwrap();
    std::fs::write(root.join("keys/server.pem"), "pem").unwrap();
    std::os::unix::fs::symlink(".env", root.join("notes.txt")).unwrap();
}

#[tokio::test]
async fn case_table() {
    // (tool, args, refused?, what the reason names)
    let cases: Vec<(&str, Value, bool, &str)> = vec![
        // File tools.
        ("read_file", json!({"path": ".env"}), true, ".env"),
        ("read_file", json!({"path": "./.env"}), true, ".env"),
        ("read_file", json!({"path": "notes.txt"}), true, "sensitive"),
        ("read_file", json!({"path": "a.txt"}), false, ""),
        ("read_file", json!({"path": "Cargo.lock"}), false, ""),
        (
            "write_file",
            json!({"path": "Cargo.lock", "content": "x"}),
            true,
            "protected",
        ),
        (
            "write_file",
            json!({"path": "migrations/1.sql", "content": "x"}),
            true,
            "protected",
        ),
        (
            "delete_file",
            json!({"path": "Cargo.lock"}),
            true,
            "protected",
        ),
        (
            "edit_file",
            json!({"path": "Cargo.lock", "old_str": "lock", "new_str": "x"}),
            true,
            "protected",
        ),
        (
            "write_file",
            json!({"path": ".env.local", "content": "x"}),
            true,
            "sensitive",
        ),
        (
            "write_file",
            json!({"path": "b.txt", "content": "x"}),
            false,
            "",
        ),
        (
            "apply_patch",
            json!({"patch": "--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-TOKEN=secret\n+TOKEN=x\n"}),
            true,
            ".env",
        ),
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Update File: Cargo.lock\n@@\n-lock\n+x\n*** End Patch\n"}),
            true,
            "protected",
        ),
        // Search tools.
        (
            "grep",
            json!({"pattern": "TOKEN", "path": ".env"}),
            true,
            ".env",
        ),
        (
            "search_code",
            json!({"pattern": "TOKEN", "path": "keys/server.pem"}),
            true,
            "pem",
        ),
        ("grep", json!({"pattern": "TOKEN", "path": "."}), false, ""),
        (
            "find_files",
            json!({"pattern": "*", "path": "keys/server.pem"}),
            true,
            "pem",
        ),
        // Shell: every operand, redirection and here-string.
        ("run_command", json!({"command": "cat .env"}), true, ".env"),
        (
            "run_command",
            json!({"command": "grep KEY .env"}),
            true,
            ".env",
        ),
        (
            "run_command",
            json!({"command": "cat < .env"}),
            true,
            ".env",
        ),
        ("run_command", json!({"command": "cp .env x"}), true, ".env"),
        (
            "run_command",
            json!({"command": "base64 .env"}),
            true,
            ".env",
        ),
        (
            "run_command",
            json!({"command": "cat a.txt .env"}),
            true,
            ".env",
        ),
        (
            "run_command",
            json!({"command": "echo x | tee .env"}),
            true,
            ".env",
        ),
        (
            "run_command",
            json!({"command": "cat <<< .env"}),
            true,
            ".env",
        ),
        (
            "run_command",
            json!({"command": "echo x > .env"}),
            true,
            ".env",
        ),
        (
            "run_command",
            json!({"command": "cat ./.env"}),
            true,
            ".env",
        ),
        (
            "run_command",
            json!({"command": "cat \"$PWD/.env\""}),
            true,
            ".env",
        ),
        (
            "run_command",
            json!({"command": "echo $(cat .env)"}),
            true,
            ".env",
        ),
        (
            "run_command",
            json!({"command": "bash -c 'cat .env'"}),
            true,
            ".env",
        ),
        (
            "run_command",
            json!({"command": "diff --from-file=.env a.txt"}),
            true,
            ".env",
        ),
        ("run_command", json!({"command": "cat .e*"}), true, "expand"),
        (
            "run_command",
            json!({"command": "cat .[e]nv"}),
            true,
            "expand",
        ),
        (
            "run_command",
            json!({"command": "cat keys/*"}),
            true,
            "expand",
        ),
        (
            "run_command",
            json!({"command": "cat notes.txt"}),
            true,
            "sensitive",
        ),
        (
            "run_command",
            json!({"command": "cat ~/.ssh/id_rsa"}),
            true,
            "id_rsa",
        ),
        (
            "run_command",
            json!({"command": "cat /home/u/.aws/credentials"}),
            true,
            "credentials",
        ),
        ("run_command", json!({"command": "cat a.txt"}), false, ""),
        ("run_command", json!({"command": "cat a.*"}), false, ""),
        ("run_command", json!({"command": "ls -la"}), false, ""),
        (
            "run_command",
            json!({"command": "echo environment"}),
            false,
            "",
        ),
        (
            "process",
            json!({"action": "write", "session_id": "1", "input": "cat .env\n"}),
            true,
            ".env",
        ),
        (
            "process",
            json!({"action": "write", "session_id": "1", "input": "ls\n"}),
            false,
            "",
        ),
        // Blocked commands (added to the built-in blocklist).
        (
            "run_command",
            json!({"command": "curl http://127.0.0.1/"}),
            true,
            "blocked_commands",
        ),
        (
            "run_command",
            json!({"command": "git push origin main"}),
            true,
            "blocked_commands",
        ),
        ("run_command", json!({"command": "git status"}), false, ""),
    ];
    let env = env("{}", GUARDRAILS, true, files);
    for (tool, args, refused, names) in cases {
        let run = env.call(tool, args.clone()).await;
        if refused {
            assert_eq!(
                run.decision,
                Decision::Guardrail,
                "{tool} {args}: {:?}",
                run.result
            );
            let error = run.result.error.unwrap();
            assert!(error.contains(names), "{tool} {args}: {error}");
        } else {
            assert_eq!(
                run.decision,
                Decision::DryRun,
                "{tool} {args}: {:?}",
                run.result
            );
        }
    }
}

#[tokio::test]
async fn allow_sensitive_lets_sensitive_files_through() {
    let root = tempfile::tempdir().unwrap();
    let config: GuardrailsConfig = serde_yaml_ng::from_str("{}").unwrap();
    let on = GuardrailsEngine::builder(config.clone(), root.path())
        .allow_sensitive(true)
        .build()
        .unwrap();
    let off = GuardrailsEngine::builder(config, root.path())
        .build()
        .unwrap();
    // Checked through the public trait with a real registry entry.
    let registry = toolgate_core::Registry::new();
    let ws = toolgate_core::Workspace::builder(root.path())
        .build()
        .unwrap();
    for tool in toolgate_tools::builtin_tools(&ws, &toolgate_tools::BuiltinOptions::default()) {
        registry.register_arc(tool).unwrap();
    }
    let entry = registry.get("read_file").unwrap();
    let args = json!({"path": ".env"});
    let effects = entry.tool().effects(&args).unwrap();
    let view = toolgate_engine::CallView {
        tool: &entry,
        args: &args,
        effects: &effects,
        call_id: "1",
        session_id: None,
    };
    assert!(on.check(&view).await.is_ok());
    assert!(off.check(&view).await.is_err());
}

#[tokio::test]
async fn edit_limits_hold_across_the_session() {
    let env = env(
        "{}",
        "max_files_modified: 2\nmax_lines_changed: 6\n",
        false,
        |_| {},
    );
    let write = |path: &str, content: &str| json!({"path": path, "content": content});
    assert!(
        env.call("write_file", write("a.txt", "1\n2"))
            .await
            .result
            .success
    );
    assert!(
        env.call("write_file", write("b.txt", "1"))
            .await
            .result
            .success
    );
    // Rewriting a file already counted adds lines, not files.
    assert!(
        env.call("write_file", write("a.txt", "1"))
            .await
            .result
            .success
    );
    // A third file is one too many.
    let run = env.call("write_file", write("c.txt", "1")).await;
    assert_eq!(run.decision, Decision::Guardrail);
    assert!(run.result.error.unwrap().contains("at most 2 files"));
    assert!(!env.path("c.txt").exists());
    // Lines are counted as a diff counts them, from the declared effects:
    // 2 + 1 + 1 (the rewrite removed a line) = 4 so far; adding 3 more
    // lines to a.txt would make 7 > 6.
    let run = env.call("write_file", write("a.txt", "1\n2\n3\n4")).await;
    assert_eq!(run.decision, Decision::Guardrail);
    assert!(run.result.error.unwrap().contains("past 6 changed lines"));
    assert_eq!(std::fs::read_to_string(env.path("a.txt")).unwrap(), "1");
    // One more line, then another, make exactly 6.
    for content in ["1\n2", "1\n2\n3"] {
        assert!(
            env.call("write_file", write("a.txt", content))
                .await
                .result
                .success
        );
    }
    assert_eq!(env.guardrails_usage(), (2, 6));
    let run = env.call("write_file", write("a.txt", "1\n2\n3\n4")).await;
    assert_eq!(run.decision, Decision::Guardrail);
}

#[tokio::test]
async fn a_failed_write_does_not_count() {
    let env = env("{}", "max_files_modified: 1\n", false, |_| {});
    let run = env
        .call(
            "edit_file",
            json!({"path": "missing.txt", "old_str": "a", "new_str": "b"}),
        )
        .await;
    assert!(!run.result.success);
    assert!(
        env.call("write_file", json!({"path": "x.txt", "content": "1"}))
            .await
            .result
            .success
    );
}

const RULES: &str = "
code_rules:
  - {name: no-secrets, pattern: 'password\\s*=', severity: block, message: 'no hard-coded passwords'}
  - {name: no-todo, pattern: 'TODO', action: warn, file_patterns: ['*.py']}
";

#[tokio::test]
async fn a_blocking_code_rule_leaves_the_file_untouched() {
    let original = "user = 'a'\nport = 1\n";
    let env = env("{}", RULES, false, |root| {
        std::fs::write(root.join("conf.py"), original).unwrap();
    });
    let run = env
        .call(
            "edit_file",
            json!({"path": "conf.py", "old_str": "port = 1", "new_str": "password = 'hunter2'"}),
        )
        .await;
    assert_eq!(run.decision, Decision::Guardrail);
    let error = run.result.error.unwrap();
    assert!(
        error.contains("no-secrets") && error.contains("nothing was written"),
        "{error}"
    );
    assert_eq!(
        std::fs::read(env.path("conf.py")).unwrap(),
        original.as_bytes()
    );

    let run = env
        .call(
            "write_file",
            json!({"path": "new.py", "content": "password = 'x'"}),
        )
        .await;
    assert_eq!(run.decision, Decision::Guardrail);
    assert!(!env.path("new.py").exists());

    let patch =
        "--- a/conf.py\n+++ b/conf.py\n@@ -1,2 +1,2 @@\n user = 'a'\n-port = 1\n+password = 'x'\n";
    let run = env.call("apply_patch", json!({"patch": patch})).await;
    assert_eq!(run.decision, Decision::Guardrail);
    assert_eq!(
        std::fs::read(env.path("conf.py")).unwrap(),
        original.as_bytes()
    );
}

#[tokio::test]
async fn a_rule_over_the_whole_file_sees_what_the_edit_produces() {
    // The edit's new text alone does not match; the file it produces does.
    let env = env(
        "{}",
        "code_rules: [{pattern: 'password = ''x''', severity: block}]\n",
        false,
        |root| std::fs::write(root.join("c.py"), "password = 'y'\n").unwrap(),
    );
    let run = env
        .call(
            "edit_file",
            json!({"path": "c.py", "old_str": "y", "new_str": "x"}),
        )
        .await;
    assert_eq!(run.decision, Decision::Guardrail);
    assert_eq!(
        std::fs::read_to_string(env.path("c.py")).unwrap(),
        "password = 'y'\n"
    );
}

#[tokio::test]
async fn a_warning_code_rule_writes_and_says_so() {
    let env = env("{}", RULES, false, |_| {});
    let run = env
        .call(
            "write_file",
            json!({"path": "a.py", "content": "# TODO later\n"}),
        )
        .await;
    assert!(run.result.success, "{:?}", run.result);
    assert!(
        run.result
            .output
            .contains("[guardrail warning] code rule `no-todo`"),
        "{}",
        run.result.output
    );
    assert!(env.path("a.py").exists());
    // The rule's file_patterns keep it off other files.
    let run = env
        .call("write_file", json!({"path": "a.md", "content": "TODO\n"}))
        .await;
    assert!(!run.result.output.contains("guardrail warning"));
}

#[tokio::test]
async fn quality_gates_report_pass_fail_and_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let config: GuardrailsConfig = serde_yaml_ng::from_str(
        "quality_gates:
  - {name: ok, command: 'echo fine'}
  - {name: tests, command: 'echo 2 failed >&2; exit 3'}
  - {name: slow, command: 'sleep 30 & wait', timeout: 0.3, required: false}
",
    )
    .unwrap();
    let engine = GuardrailsEngine::builder(config, dir.path())
        .build()
        .unwrap();
    // The slow gate's job sleeps 30 s: gates that waited for it would miss
    // this deadline by far.
    let reports = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        engine.run_quality_gates(dir.path()),
    )
    .await
    .expect("the gates waited for the timed-out gate's background job");
    assert_eq!(reports.len(), 3);
    assert!(reports[0].passed && reports[0].output.contains("fine"));
    assert!(!reports[1].passed);
    assert_eq!(reports[1].exit_code, Some(3));
    assert!(reports[1].output.contains("2 failed"));
    assert!(reports[1].required);
    assert!(reports[2].timed_out && !reports[2].passed && !reports[2].required);
}

#[test]
fn bad_configs_are_refused() {
    for yaml in [
        "blocked_commands: ['(']",
        "code_rules: [{pattern: '('}]",
        "protected_files: ['a[']",
    ] {
        let config: GuardrailsConfig = serde_yaml_ng::from_str(yaml).unwrap();
        assert!(
            GuardrailsEngine::builder(config, "/tmp").build().is_err(),
            "{yaml}"
        );
    }
    assert!(serde_yaml_ng::from_str::<GuardrailsConfig>("max_file_modified: 1").is_err());
}

/// The path rules judge what a patch does, as the real patch parser reads
/// it: both ends of a rename, C-quoted names, the envelope's `Move to`.
#[tokio::test]
async fn path_rules_over_patch_effects_case_table() {
    let files = |root: &std::path::Path| {
        std::fs::create_dir_all(root.join("secrets")).unwrap();
        for (name, text) in [
            ("CODEOWNERS", "* @owner\n"),
            ("notes.txt", "a\n"),
            ("secrets/config.yml", "key: 1\n"),
        ] {
            std::fs::write(root.join(name), text).unwrap();
        }
    };
    // (patch, refused, the reason names)
    let cases: &[(&str, bool, &str)] = &[
        // A git rename of a protected file.
        (
            "diff --git a/CODEOWNERS b/OWNERS\nsimilarity index 100%\nrename from CODEOWNERS\nrename to OWNERS\n",
            true,
            "`CODEOWNERS` is a protected file",
        ),
        // A git rename onto a protected path.
        (
            "diff --git a/notes.txt b/secrets/new.yml\nsimilarity index 100%\nrename from notes.txt\nrename to secrets/new.yml\n",
            true,
            "`secrets/new.yml` is a protected file",
        ),
        // A C-quoted name (`\151` is `i`) of a protected file.
        (
            "--- \"a/secrets/conf\\151g.yml\"\n+++ \"b/secrets/conf\\151g.yml\"\n@@ -1 +1 @@\n-key: 1\n+key: 2\n",
            true,
            "`secrets/config.yml` is a protected file",
        ),
        // The envelope's Move to onto a protected path.
        (
            "*** Begin Patch\n*** Update File: notes.txt\n*** Move to: secrets/moved.yml\n@@\n-a\n+b\n*** End Patch\n",
            true,
            "`secrets/moved.yml` is a protected file",
        ),
        // Onto toolgate's own configuration, protected by default.
        (
            "*** Begin Patch\n*** Update File: notes.txt\n*** Move to: toolgate.yaml\n@@\n-a\n+b\n*** End Patch\n",
            true,
            "`toolgate.yaml` is a protected file",
        ),
        // Creating a sensitive file.
        (
            "--- /dev/null\n+++ b/.env.local\n@@ -0,0 +1 @@\n+TOKEN=x\n",
            true,
            "`.env.local` is a sensitive file",
        ),
        // A rename of an ordinary file goes through.
        (
            "diff --git a/notes.txt b/notes.md\nsimilarity index 100%\nrename from notes.txt\nrename to notes.md\n",
            false,
            "",
        ),
    ];
    for (patch, refused, reason) in cases {
        let env = env(
            "{}",
            "protected_files: [CODEOWNERS, 'secrets/**']\n",
            false,
            files,
        );
        let run = env.call("apply_patch", json!({"patch": patch})).await;
        if *refused {
            assert_eq!(
                run.decision,
                Decision::Guardrail,
                "{patch}: {:?}",
                run.result
            );
            let error = run.result.error.unwrap_or_default();
            assert!(error.contains(reason), "{patch}: {error}");
        } else {
            assert!(run.result.success, "{patch}: {:?}", run.result);
        }
        // Refused patches changed nothing.
        if *refused {
            assert_eq!(
                std::fs::read_to_string(env.path("CODEOWNERS")).unwrap(),
                "* @owner\n"
            );
            assert_eq!(
                std::fs::read_to_string(env.path("secrets/config.yml")).unwrap(),
                "key: 1\n"
            );
            assert!(env.path("notes.txt").exists());
            assert!(!env.path(".env.local").exists());
            assert!(!env.path("secrets/new.yml").exists());
            assert!(!env.path("secrets/moved.yml").exists());
        }
    }
}
