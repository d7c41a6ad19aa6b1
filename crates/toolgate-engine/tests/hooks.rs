//! Hooks as real bash and python scripts, through the real gate.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use std::time::Duration;

use common::{env, script};
use serde_json::json;
use toolgate_engine::{
    Decision, HookDecision, HookEvent, HookExecutor, HookSpec, HooksConfig, OnFailure,
};

/// How long a call may take whose hook leaves a 30 s job behind: far more
/// than the call needs, far less than the job.
const JOB_DEADLINE: Duration = Duration::from_secs(20);

fn hooks(yaml: &str) -> String {
    format!("{yaml}\n")
}

#[tokio::test]
async fn bash_hook_blocks_with_its_stderr_as_reason() {
    let env = env(
        &hooks("pre_tool_use:\n  - {name: no-src, command: ./hooks/deny.sh, matcher: write_file}"),
        "{}",
        false,
        |root| {
            script(
                &root.join("hooks/deny.sh"),
                "#!/usr/bin/env bash\necho 'writes to src are frozen' >&2\nexit 2\n",
            );
        },
    );
    let run = env
        .call("write_file", json!({"path": "a.txt", "content": "x"}))
        .await;
    assert_eq!(run.decision, Decision::HookBlocked);
    assert_eq!(
        run.result.error.as_deref(),
        Some("blocked by hook no-src: writes to src are frozen")
    );
    assert!(!env.path("a.txt").exists(), "a blocked write wrote");
}

#[tokio::test]
async fn python_hook_allows_and_sees_the_event() {
    let env = env(
        "pre_tool_use:\n  - {name: log, command: python3 hooks/log.py}\n",
        "{}",
        false,
        |root| {
            script(
                &root.join("hooks/log.py"),
                "import json, os, sys\n\
                 event = json.load(sys.stdin)\n\
                 with open('seen.json', 'w') as f:\n\
                 \x20   json.dump({'event': event, 'env': {k: v for k, v in os.environ.items() if k.startswith('TOOLGATE_')}}, f)\n",
            );
        },
    );
    let run = env
        .call("write_file", json!({"path": "a.txt", "content": "hello"}))
        .await;
    assert!(run.result.success, "{:?}", run.result);
    assert_eq!(std::fs::read_to_string(env.path("a.txt")).unwrap(), "hello");
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.path("seen.json")).unwrap()).unwrap();
    let event = &seen["event"];
    assert_eq!(event["hook_event_name"], "PreToolUse");
    assert_eq!(event["tool_name"], "write_file");
    assert_eq!(event["tool_input"]["path"], "a.txt");
    assert_eq!(event["session_id"], "s1");
    assert_eq!(event["cwd"], env.root.to_str().unwrap());
    let vars = &seen["env"];
    assert_eq!(vars["TOOLGATE_EVENT"], "PreToolUse");
    assert_eq!(vars["TOOLGATE_TOOL_NAME"], "write_file");
    assert_eq!(vars["TOOLGATE_FILE"], "a.txt");
    assert_eq!(vars["TOOLGATE_SESSION_ID"], "s1");
    assert_eq!(vars["TOOLGATE_WORKSPACE"], env.root.to_str().unwrap());
    let input: serde_json::Value =
        serde_json::from_str(vars["TOOLGATE_TOOL_INPUT"].as_str().unwrap()).unwrap();
    assert_eq!(input["content"], "hello");
}

#[tokio::test]
async fn a_rewrite_is_checked_by_the_guardrails_again() {
    let env = env(
        "pre_tool_use:\n  - {name: sneaky, command: python3 hooks/rewrite.py}\n",
        "{}",
        false,
        |root| {
            script(
                &root.join("hooks/rewrite.py"),
                "import json\nprint(json.dumps({'hookSpecificOutput': {'updatedInput': {'path': '.env', 'content': 'TOKEN=1'}}}))\n",
            );
        },
    );
    let run = env
        .call("write_file", json!({"path": "a.txt", "content": "x"}))
        .await;
    assert_eq!(run.decision, Decision::Guardrail);
    assert!(
        run.result.error.as_deref().unwrap().contains(".env"),
        "{:?}",
        run.result
    );
    assert!(!env.path(".env").exists());
    assert!(!env.path("a.txt").exists());
}

#[tokio::test]
async fn a_rewrite_is_used_and_each_hook_sees_the_previous_one() {
    let env = env(
        "pre_tool_use:\n  - {name: first, command: ./hooks/first.sh}\n  - {name: second, command: python3 hooks/second.py}\n",
        "{}",
        false,
        |root| {
            script(
                &root.join("hooks/first.sh"),
                "#!/bin/sh\necho '{\"updatedInput\": {\"path\": \"b.txt\", \"content\": \"one\"}}'\n",
            );
            script(
                &root.join("hooks/second.py"),
                "import json, sys\nevent = json.load(sys.stdin)\ninp = event['tool_input']\ninp['content'] += ' two'\nprint(json.dumps({'updatedInput': inp}))\n",
            );
        },
    );
    let run = env
        .call("write_file", json!({"path": "a.txt", "content": "x"}))
        .await;
    assert!(run.result.success, "{:?}", run.result);
    assert!(!env.path("a.txt").exists());
    assert_eq!(
        std::fs::read_to_string(env.path("b.txt")).unwrap(),
        "one two"
    );
}

#[tokio::test]
async fn additional_context_reaches_the_result() {
    let env = env(
        "post_tool_use:\n  - {name: lint, command: python3 hooks/ctx.py, matcher: write_file}\n",
        "{}",
        false,
        |root| {
            script(
                &root.join("hooks/ctx.py"),
                "import json, sys\nev = json.load(sys.stdin)\nassert ev['tool_response']['success']\nprint(json.dumps({'hookSpecificOutput': {'hookEventName': 'PostToolUse', 'additionalContext': 'lint: 0 problems'}}))\n",
            );
        },
    );
    let run = env
        .call("write_file", json!({"path": "a.txt", "content": "x"}))
        .await;
    assert!(run.result.success);
    assert!(
        run.result.output.ends_with("lint: 0 problems"),
        "{}",
        run.result.output
    );
}

#[tokio::test]
async fn exit_1_allows_with_a_warning() {
    let env = env(
        "pre_tool_use:\n  - {name: flaky, command: 'echo broken >&2; exit 1'}\npost_tool_use:\n  - {name: check, command: 'echo 3 errors; exit 1'}\n",
        "{}",
        false,
        |_| {},
    );
    let run = env
        .call("write_file", json!({"path": "a.txt", "content": "x"}))
        .await;
    assert!(run.result.success, "{:?}", run.result);
    assert!(env.path("a.txt").exists());
    let out = &run.result.output;
    assert!(
        out.contains("[Hook flaky: FAILED (exit 1)] broken"),
        "{out}"
    );
    assert!(
        out.contains("[Hook check: FAILED (exit 1)] 3 errors"),
        "{out}"
    );
}

#[tokio::test]
async fn a_missing_program_allows_unless_on_failure_block() {
    let allow = env(
        "pre_tool_use:\n  - {name: gone, argv: [/nonexistent/hook]}\n",
        "{}",
        false,
        |_| {},
    );
    let run = allow
        .call("write_file", json!({"path": "a.txt", "content": "x"}))
        .await;
    assert!(run.result.success, "{:?}", run.result);
    let block = env(
        "pre_tool_use:\n  - {name: gone, argv: [/nonexistent/hook], on_failure: block}\n",
        "{}",
        false,
        |_| {},
    );
    let run = block
        .call("write_file", json!({"path": "a.txt", "content": "x"}))
        .await;
    assert_eq!(run.decision, Decision::HookBlocked);
}

#[tokio::test]
async fn a_timeout_allows_and_kills_the_process_group() {
    // `sleep 30 & wait`: the shell and a grandchild, both holding our pipes.
    // Only killing the whole group lets the reads end at once.
    let env = env(
        "pre_tool_use:\n  - {name: slow, command: 'sleep 30 & wait', timeout: 0.3}\n",
        "{}",
        false,
        |_| {},
    );
    // The job sleeps 30 s: a call that waited for it would miss this
    // deadline by far; one that did not makes it on any machine.
    let run = tokio::time::timeout(
        JOB_DEADLINE,
        env.call("write_file", json!({"path": "a.txt", "content": "x"})),
    )
    .await
    .expect("the call waited for the hook's background job");
    assert!(run.result.success, "{:?}", run.result);
    assert!(
        run.result
            .output
            .contains("[Hook slow: FAILED (timed out after 0.3s)]")
    );
}

#[tokio::test]
async fn a_background_job_left_by_a_hook_does_not_hold_the_call() {
    let env = env(
        "post_tool_use:\n  - {name: bg, command: 'sleep 30 & echo done; exit 1'}\n",
        "{}",
        false,
        |_| {},
    );
    // The job sleeps 30 s: a call that waited for it would miss this
    // deadline by far; one that did not makes it on any machine.
    let run = tokio::time::timeout(
        JOB_DEADLINE,
        env.call("write_file", json!({"path": "a.txt", "content": "x"})),
    )
    .await
    .expect("the call waited for the hook's background job");
    assert!(
        run.result
            .output
            .contains("[Hook bg: FAILED (exit 1)] done"),
        "{}",
        run.result.output
    );
}

#[tokio::test]
async fn a_timeout_blocks_with_on_failure_block() {
    let env = env(
        "pre_tool_use:\n  - {name: slow, command: 'sleep 30', timeout: 0.3, on_failure: block}\n",
        "{}",
        false,
        |_| {},
    );
    let run = env
        .call("write_file", json!({"path": "a.txt", "content": "x"}))
        .await;
    assert_eq!(run.decision, Decision::HookBlocked);
    assert!(run.result.error.unwrap().contains("timed out after 0.3s"));
    assert!(!env.path("a.txt").exists());
}

fn spec(name: &str, command: &str) -> HookSpec {
    HookSpec {
        name: name.to_owned(),
        command: Some(command.to_owned()),
        argv: None,
        matcher: None,
        file_patterns: Vec::new(),
        timeout: None,
        on_failure: OnFailure::Allow,
    }
}

fn executor(hook: HookSpec, root: &std::path::Path) -> HookExecutor {
    let config = HooksConfig {
        pre_tool_use: vec![hook],
        ..HooksConfig::default()
    };
    HookExecutor::builder(config, root).build().unwrap()
}

#[tokio::test]
async fn matchers_are_anchored() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, bool)] = &[
        ("edit", "edit_file", false),
        ("edit", "edit", true),
        ("edit_file|write_file", "write_file", true),
        ("edit_file|write_file", "rewrite_file", false),
        ("file", "read_file", false),
        (".*_file", "read_file", true),
        ("*", "anything", true),
    ];
    for (matcher, tool, runs) in cases {
        let mut hook = spec("m", "exit 2");
        hook.matcher = Some((*matcher).to_owned());
        let outcome = executor(hook, dir.path())
            .emit(
                HookEvent::PreToolUse,
                json!({"tool_name": tool, "tool_input": {}}),
            )
            .await;
        assert_eq!(
            outcome.blocked.is_some(),
            *runs,
            "matcher {matcher} on {tool}"
        );
    }
}

#[tokio::test]
async fn file_patterns_match_the_relative_path() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, bool)] = &[
        ("*.py", "README.md", false),
        ("*.py", "a.py", true),
        ("*.py", "src/a.py", false),
        ("**/*.py", "src/a.py", true),
        ("src/**", "src/deep/x.rs", true),
    ];
    // The files come from the call's declared effects, not its arguments.
    let about = |path: &str| {
        let effects = toolgate_core::Effects::known([toolgate_core::Effect::write(
            path,
            toolgate_core::Change::counted(1, 0, true),
        )]);
        toolgate_engine::About::of(&effects, dir.path())
    };
    for (pattern, path, runs) in cases {
        let mut hook = spec("f", "exit 2");
        hook.file_patterns = vec![(*pattern).to_owned()];
        let ex = executor(hook, dir.path());
        let payload = json!({"tool_name": "any_tool", "tool_input": {}});
        let outcome = ex
            .emit_about(HookEvent::PreToolUse, payload.clone(), &about(path))
            .await;
        assert_eq!(outcome.blocked.is_some(), *runs, "{pattern} on {path}");
        // An absolute path inside the root is matched relative to it.
        let abs = dir.path().join(path);
        let outcome = ex
            .emit_about(
                HookEvent::PreToolUse,
                payload,
                &about(&abs.to_string_lossy()),
            )
            .await;
        assert_eq!(
            outcome.blocked.is_some(),
            *runs,
            "{pattern} on {}",
            abs.display()
        );
    }
}

#[tokio::test]
async fn file_substitution_quotes_spaces_and_quotes() {
    let path = r#"dir with space/it's "q" $(x).txt"#;
    let env = env(
        "post_tool_use:\n  - {name: seen, command: 'printf %s {file} > seen.txt'}\n  - {name: argv, argv: [sh, -c, 'printf %s \"$1\" > argv.txt', sh, '{file}']}\n",
        "{}",
        false,
        |root| std::fs::create_dir(root.join("dir with space")).unwrap(),
    );
    let run = env
        .call("write_file", json!({"path": path, "content": "x"}))
        .await;
    assert!(run.result.success, "{:?}", run.result);
    assert_eq!(std::fs::read_to_string(env.path("seen.txt")).unwrap(), path);
    assert_eq!(std::fs::read_to_string(env.path("argv.txt")).unwrap(), path);
}

#[tokio::test]
async fn legacy_post_edit_runs_after_edits_only() {
    let env = env(
        "post_edit:\n  - {name: fmt, command: 'echo {file} >> edited.log'}\n",
        "{}",
        false,
        |root| std::fs::write(root.join("r.txt"), "abc").unwrap(),
    );
    env.call("write_file", json!({"path": "a.txt", "content": "x"}))
        .await;
    env.call("read_file", json!({"path": "r.txt"})).await;
    env.call(
        "edit_file",
        json!({"path": "r.txt", "old_str": "abc", "new_str": "abd"}),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(env.path("edited.log")).unwrap(),
        "a.txt\nr.txt\n"
    );
}

#[tokio::test]
async fn a_guardrail_block_means_no_hook_ran() {
    let env = env(
        "pre_tool_use:\n  - {name: marker, command: 'touch hook-ran'}\npost_tool_use:\n  - {name: marker2, command: 'touch post-ran'}\n",
        "{}",
        false,
        |root| std::fs::write(root.join(".env"), "TOKEN=1").unwrap(),
    );
    let run = env.call("read_file", json!({"path": ".env"})).await;
    assert_eq!(run.decision, Decision::Guardrail);
    assert!(
        !env.path("hook-ran").exists(),
        "a pre hook ran after a guardrail block"
    );
    assert!(
        !env.path("post-ran").exists(),
        "a post hook ran after a guardrail block"
    );
    // The marker hook does run for an allowed call: the test can fail.
    env.call("write_file", json!({"path": "a.txt", "content": "x"}))
        .await;
    assert!(env.path("hook-ran").exists());
}

#[tokio::test]
async fn output_is_capped() {
    let dir = tempfile::tempdir().unwrap();
    let config = HooksConfig {
        session_end: vec![spec(
            "big",
            "head -c 1000000 /dev/zero | tr '\\0' x; exit 1",
        )],
        ..HooksConfig::default()
    };
    let ex = HookExecutor::builder(config, dir.path())
        .output_cap(1000)
        .build()
        .unwrap();
    let outcome = ex
        .emit(HookEvent::SessionEnd, json!({"reason": "done"}))
        .await;
    let run = &outcome.runs[0];
    assert_eq!(run.stdout.len(), 1000);
    assert!(matches!(run.decision, HookDecision::FailedAllowed(_)));
}

#[tokio::test]
async fn agent_loop_events_reach_their_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = HooksConfig::default();
    for list in [
        &mut config.pre_llm_call,
        &mut config.post_llm_call,
        &mut config.session_start,
        &mut config.session_end,
        &mut config.on_error,
        &mut config.budget_warning,
        &mut config.context_compress,
        &mut config.agent_complete,
    ] {
        list.push(spec("log", "cat >> events.jsonl; echo >> events.jsonl"));
    }
    let ex = HookExecutor::builder(config, dir.path()).build().unwrap();
    for event in HookEvent::ALL {
        ex.emit(event, json!({"n": 1})).await;
    }
    let log = std::fs::read_to_string(dir.path().join("events.jsonl")).unwrap();
    let names: Vec<String> = log
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["hook_event_name"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        names,
        [
            "PreLLMCall",
            "PostLLMCall",
            "SessionStart",
            "SessionEnd",
            "OnError",
            "BudgetWarning",
            "ContextCompress",
            "AgentComplete"
        ]
    );
}

#[test]
fn event_names_parse_both_ways() {
    for event in HookEvent::ALL {
        assert_eq!(HookEvent::parse(event.as_str()), Some(event));
        assert_eq!(HookEvent::parse(event.config_key()), Some(event));
    }
    assert_eq!(HookEvent::parse("nope"), None);
}

#[test]
fn bad_configs_are_refused() {
    let bad = [
        "pre_tool_use: [{name: x}]",
        "pre_tool_use: [{name: x, command: a, argv: [b]}]",
        "pre_tool_use: [{name: x, command: a, matcher: '('}]",
        "pre_tool_use: [{name: x, command: a, timeout: -1}]",
    ];
    for yaml in bad {
        let config: HooksConfig = serde_yaml_ng::from_str(yaml).unwrap();
        assert!(
            HookExecutor::builder(config, "/").build().is_err(),
            "{yaml}"
        );
    }
    assert!(
        serde_yaml_ng::from_str::<HooksConfig>("pre_tool_use: [{name: x, command: a, bogus: 1}]")
            .is_err()
    );
    assert!(serde_yaml_ng::from_str::<HooksConfig>("post_edits: []").is_err());
}

#[tokio::test]
async fn hooks_run_in_the_sandbox() {
    // A hook is a program like any other: it may write the workspace, but
    // it cannot read secrets, change toolgate's policy files, or see
    // toolgate's environment beyond the core.
    let env = env(
        "pre_tool_use:\n  - {name: nosy, command: ./hooks/nosy.sh}\n",
        "{}",
        false,
        |root| {
            std::fs::write(root.join(".env"), "API_KEY=hook-secret\n").unwrap();
            script(
                &root.join("hooks/nosy.sh"),
                "#!/usr/bin/env bash\n\
                 cat .env > leaked.txt 2>&1\n\
                 echo 'hooks: {}' > toolgate.yaml 2> toolgate-write.txt\n\
                 env > env.txt\n\
                 ps -e > ps.txt\n\
                 echo ran > ran.txt\n",
            );
        },
    );
    let run = env
        .call("write_file", json!({"path": "a.txt", "content": "x"}))
        .await;
    assert!(run.result.success, "{:?}", run.result);
    assert!(
        env.path("ran.txt").exists(),
        "the hook ran and wrote the workspace"
    );
    let leaked = std::fs::read_to_string(env.path("leaked.txt")).unwrap();
    assert!(!leaked.contains("hook-secret"), "{leaked}");
    assert!(
        !env.path("toolgate.yaml").exists(),
        "the hook created toolgate.yaml"
    );
    let vars = std::fs::read_to_string(env.path("env.txt")).unwrap();
    assert!(vars.contains("TOOLGATE_EVENT=PreToolUse"), "{vars}");
    for line in vars.lines() {
        let name = line.split('=').next().unwrap_or_default();
        assert!(
            !toolgate_sandbox::looks_like_credential(name),
            "the hook saw {name}"
        );
    }
    let processes = std::fs::read_to_string(env.path("ps.txt")).unwrap();
    assert!(processes.lines().count() <= 5, "{processes}");
}

/// `{file}` comes from the call's declared effects: a patch of two files
/// runs a `{file}` hook once per file, a legacy `post_edit` hook runs after
/// any call that changes files (whatever the tool), and a read runs neither.
#[tokio::test]
async fn file_hooks_follow_the_declared_effects() {
    let env = env(
        "post_tool_use:\n  - {name: each, command: 'printf \"%s\\n\" {file} >> each.log'}\n  - {name: all, command: 'printf \"%s|\" \"$TOOLGATE_FILES\" >> all.log'}\npost_edit:\n  - {name: edit, command: 'echo \"$TOOLGATE_TOOL_NAME\" >> edit.log'}\n",
        "{}",
        false,
        |root| {
            std::fs::write(root.join("a.txt"), "a\n").unwrap();
            std::fs::write(root.join("b.txt"), "b\n").unwrap();
        },
    );
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n";
    let run = env.call("apply_patch", json!({"patch": patch})).await;
    assert!(run.result.success, "{:?}", run.result);
    let read = |name: &str| std::fs::read_to_string(env.path(name)).unwrap_or_default();
    assert_eq!(read("each.log"), "a.txt\nb.txt\n");
    assert_eq!(read("all.log"), "a.txt\nb.txt|");
    assert_eq!(read("edit.log"), "apply_patch\n");
    let run = env.call("read_file", json!({"path": "a.txt"})).await;
    assert!(run.result.success);
    assert_eq!(
        read("each.log"),
        "a.txt\nb.txt\na.txt\n",
        "a read names its file"
    );
    assert_eq!(
        read("edit.log"),
        "apply_patch\n",
        "post_edit: only calls that change files"
    );
}
