//! Every front end's gate comes from the host, and they agree: `call`,
//! `tools list`, `mcp serve` and `run` get the same guardrails, hooks,
//! tools, confirmation mode, dry-run, timeout and audit from one
//! configuration; only who is asked and the session differ.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::sync::Arc;

use serde_json::json;
use toolgate_engine::Approver;
use toolgate_host::{Host, RunRequest, TrustPolicy};
use toolgate_test::model;
use wiremock::MockServer;

const CONFIG: &str = "\
confirmation:
  mode: confirm-all
  rules:
    - {tool: run_command, command: git push, decision: deny}
tools:
  timeout: 42
audit:
  path: audit.jsonl
guardrails:
  protected_files: [Cargo.lock]
  max_files_modified: 3
hooks:
  pre_tool_use:
    - {name: fmt, command: 'true', file_patterns: ['**/*.rs']}
  post_tool_use:
    - {name: log, argv: ['true']}
";

fn host(dir: &std::path::Path, server: &MockServer) -> Host {
    let config = format!(
        "{CONFIG}llm:\n  model: m\n  base_url: {}/v1\n  stream: false\n  max_retries: 0\n",
        server.uri()
    );
    std::fs::write(dir.join("toolgate.yaml"), config).unwrap();
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let env = vec![("HOME".to_owned(), dir.join("home").display().to_string())];
    Host::builder()
        .workspace(dir)
        .env(env)
        .trust(TrustPolicy::ThisRun)
        .load()
        .unwrap()
}

/// A stand-in for the terminal or the web UI.
struct Person;

#[async_trait::async_trait]
impl Approver for Person {
    async fn approve(&self, _: &toolgate_engine::ApprovalRequest<'_>) -> toolgate_engine::Approval {
        toolgate_engine::Approval::Allow
    }

    fn kind(&self) -> &'static str {
        "person"
    }
}

#[tokio::test]
async fn every_front_end_gets_the_same_stages_from_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let server = model::server("/v1/chat/completions", vec![model::answer("done")]).await;
    let host = host(dir.path(), &server);

    // `call` (no terminal) and `tools list`.
    let call = host.gate().build().await.unwrap();
    // `call` on a terminal, `mcp serve` with elicitation, the web UI.
    let asked = host
        .gate()
        .interactive(Some(Arc::new(Person)))
        .build()
        .await
        .unwrap();
    // `run`.
    let run = host
        .prepare_run(RunRequest::new("task"), Some(Arc::new(Person)))
        .await
        .unwrap();

    let base = call.engine.stages();
    assert_eq!(base.mode, "confirm-all");
    assert_eq!(base.default_timeout_ms, 42_000);
    assert_eq!(base.approver, "headless");
    assert_eq!(base.rules, ["deny run_command command `git push`"]);
    assert!(base.tools.contains(&"apply_patch".to_owned()));
    assert_eq!(
        base.guardrails["config"]["protected_files"],
        json!(["Cargo.lock"])
    );
    assert_eq!(base.pre_hooks["hooks"]["pre_tool_use"], json!(["fmt"]));
    assert_eq!(
        base.audit.len(),
        2,
        "the JSONL file and the store: {:?}",
        base.audit
    );

    let run_stages = run.gate().engine.stages();
    for stages in [asked.engine.stages(), run_stages.clone()] {
        assert_eq!(stages.approver, "person");
        // A run's gate adds the plan-mode tools, and only those.
        let tools: Vec<&String> = stages
            .tools
            .iter()
            .filter(|t| !["exit_plan_mode", "enter_plan_mode"].contains(&t.as_str()))
            .collect();
        assert_eq!(tools, base.tools.iter().collect::<Vec<_>>());
        assert_eq!(stages.guardrails, base.guardrails);
        assert_eq!(stages.pre_hooks["hooks"], base.pre_hooks["hooks"]);
        assert_eq!(stages.post_hooks["hooks"], base.post_hooks["hooks"]);
        assert_eq!(stages.mode, base.mode);
        assert_eq!(stages.rules, base.rules);
        assert_eq!(stages.dry_run, base.dry_run);
        assert_eq!(stages.default_timeout_ms, base.default_timeout_ms);
        assert_eq!(stages.audit, base.audit);
    }
    assert!(run_stages.tools.contains(&"exit_plan_mode".to_owned()));
    assert!(run_stages.tools.contains(&"enter_plan_mode".to_owned()));
    assert!(
        !asked
            .engine
            .stages()
            .tools
            .contains(&"exit_plan_mode".to_owned())
    );
    // The run's gate, its hooks and its audit carry the session id.
    assert_eq!(run_stages.session_id.as_deref(), Some(run.session_id()));
    assert_eq!(run_stages.pre_hooks["session_id"], json!(run.session_id()));
    assert_eq!(base.session_id, None);

    call.shutdown().await;
    asked.shutdown().await;
    let report = run.run(toolgate_host::RunControls::default()).await;
    assert_eq!(report.final_text, "done");
    host.flush().await;
}

fn host_with(
    dir: &std::path::Path,
    config: &str,
    trust: TrustPolicy,
) -> Result<Host, toolgate_host::HostError> {
    std::fs::write(dir.join("toolgate.yaml"), config).unwrap();
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let env = vec![("HOME".to_owned(), dir.join("home").display().to_string())];
    Host::builder().workspace(dir).env(env).trust(trust).load()
}

#[tokio::test]
async fn an_ask_rule_gives_yolo_someone_to_ask() {
    let cases: &[(&str, &str)] = &[
        ("confirmation: {mode: yolo}\n", "headless"),
        (
            "confirmation: {mode: yolo, rules: [{tool: write_file, decision: allow}]}\n",
            "headless",
        ),
        (
            "confirmation: {mode: yolo, rules: [{tool: write_file, decision: ask}]}\n",
            "person",
        ),
    ];
    for (config, approver) in cases {
        let dir = tempfile::tempdir().unwrap();
        let host = host_with(dir.path(), config, TrustPolicy::ThisRun).unwrap();
        let gate = host
            .gate()
            .interactive(Some(Arc::new(Person)))
            .build()
            .await
            .unwrap();
        assert_eq!(gate.engine.stages().approver, *approver, "{config}");
        gate.shutdown().await;
    }
}

#[tokio::test]
async fn workspace_rules_need_trust_and_bad_rules_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = "confirmation: {rules: [{tool: write_file, decision: allow}]}\n";
    let host = host_with(dir.path(), config, TrustPolicy::StoreOnly).unwrap();
    assert!(host.confirmation_rules().is_empty());
    let host = host_with(dir.path(), config, TrustPolicy::ThisRun).unwrap();
    assert_eq!(host.confirmation_rules().rules().len(), 1);

    let cases: &[(&str, &str)] = &[
        (
            "confirmation: {rules: [{tool: run_command, decision: allow}]}\n",
            "rule 1 is too broad",
        ),
        (
            "confirmation: {rules: [{tool: '*', path: '**', decision: allow}]}\n",
            "rule 1 is too broad",
        ),
        (
            "confirmation: {rules: [{tool: x, decision: deny, commnd: ls}]}\n",
            "`confirmation.rules[0].commnd`: unknown key",
        ),
    ];
    for (config, want) in cases {
        let error = host_with(dir.path(), config, TrustPolicy::ThisRun).unwrap_err();
        let chain = toolgate_core::error_chain(&error);
        assert!(chain.contains(want), "{config}: {chain}");
    }
}

/// The claim a run holds on its session: the process that runs it may
/// rewind it (the web UI of the session), and a run of a session that
/// another process is rewinding is refused, naming that process.
#[tokio::test]
async fn a_run_claims_its_session_against_other_processes_only() {
    let dir = tempfile::tempdir().unwrap();
    let server = model::server("/v1/chat/completions", vec![model::answer("done")]).await;
    let host = host(dir.path(), &server);
    let run = host
        .prepare_run(RunRequest::new("task"), Some(Arc::new(Person)))
        .await
        .unwrap();
    let session = run.session_id().to_owned();
    // Held by this very process: not refused for being run (there is
    // nothing to rewind yet).
    let error = host
        .rewind(
            &session,
            toolgate_host::RewindOptions {
                code: true,
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(error, toolgate_host::HostError::Rewind(_)),
        "{error}"
    );
    drop(run);
    // A rewind in progress elsewhere: an exclusive lock on the session's
    // lock file, as the rewind holds it.
    let lock = host
        .store_path()
        .unwrap()
        .parent()
        .unwrap()
        .join(format!("locks/{session}.lock"));
    let held = std::fs::File::open(&lock).unwrap();
    held.try_lock().unwrap();
    let mut again = RunRequest::new("more");
    again.session = Some(session.clone());
    let error = host
        .prepare_run(again, Some(Arc::new(Person)))
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with(&format!("session `{session}` is being rewound by")),
        "{error}"
    );
}
