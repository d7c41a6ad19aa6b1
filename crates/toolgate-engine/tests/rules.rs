//! `confirmation.rules` through the gate, with the real built-in tools: an
//! allow rule skips asking in every mode, an ask rule asks in every mode, a
//! deny rule refuses, and none of them lifts a guardrail or the blocklist.
//! Rules saved in a shared store apply beside them from the next call on,
//! and saved rules that cannot be read make every call asked.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};
use tempfile::TempDir;
use toolgate_core::{Registry, ToolCall, Workspace};
use toolgate_engine::{
    Approval, ApprovalRequest, Approver, AuditLog, Decision, Execution, ExecutionEngine,
    GuardrailsConfig, GuardrailsEngine, SavedRuleSet, SavedRules,
};
use toolgate_policy::{
    ConfirmationMode, ConfirmationPolicy, ConfirmationRule, ConfirmationRules, RuleDecision,
};
use toolgate_tools::BuiltinOptions;
use toolgate_tools::command::CommandOptions;

use ConfirmationMode::{ConfirmAll, ConfirmSensitive, Yolo};
use RuleDecision::{Allow, Ask, Deny};

/// Records each question and answers with a fixed approval.
struct Recorder(Arc<Mutex<Vec<String>>>, Approval);

#[async_trait]
impl Approver for Recorder {
    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval {
        self.0.lock().unwrap().push(request.tool.to_owned());
        self.1.clone()
    }
}

struct Gate {
    dir: TempDir,
    root: std::path::PathBuf,
    engine: ExecutionEngine,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Gate {
    async fn call(&self, tool: &str, args: Value) -> Execution {
        self.engine.execute(ToolCall::new("c", tool, args)).await
    }

    fn asked(&self) -> usize {
        self.asked.lock().unwrap().len()
    }
}

fn rule(
    tool: &str,
    command: Option<&str>,
    path: Option<&str>,
    d: RuleDecision,
) -> ConfirmationRule {
    ConfirmationRule {
        tool: tool.into(),
        command: command.map(Into::into),
        path: path.map(Into::into),
        decision: d,
        ..ConfirmationRule::default()
    }
}

fn gate(
    mode: ConfirmationMode,
    rules: Vec<ConfirmationRule>,
    answer: Approval,
    dry_run: bool,
) -> Gate {
    gate_saving(mode, rules, answer, dry_run, None)
}

/// [`gate`], with rules saved outside the configuration.
fn gate_saving(
    mode: ConfirmationMode,
    rules: Vec<ConfirmationRule>,
    answer: Approval,
    dry_run: bool,
    saved: Option<Arc<dyn SavedRules>>,
) -> Gate {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("ws")).unwrap();
    let root = dir.path().join("ws").canonicalize().unwrap();
    let workspace = Workspace::builder(&root).build().unwrap();
    let options = BuiltinOptions::default().commands(Some(CommandOptions::default()));
    let registry = Registry::new();
    for tool in toolgate_tools::builtin_tools(&workspace, &options) {
        registry.register_arc(tool).unwrap();
    }
    let guardrails = GuardrailsEngine::builder(GuardrailsConfig::default(), &root)
        .build()
        .unwrap();
    let rules = ConfirmationRules::builder()
        .rules(rules)
        .root(root.to_str().unwrap())
        .build()
        .unwrap();
    let asked = Arc::default();
    let mut engine = ExecutionEngine::builder(Arc::new(registry));
    if let Some(saved) = saved {
        engine = engine.saved_rules(saved);
    }
    let engine = engine
        .guardrails(Arc::new(guardrails))
        .policy(ConfirmationPolicy::new(mode))
        .rules(rules)
        .approver(Arc::new(Recorder(Arc::clone(&asked), answer)))
        .audit(AuditLog::open(dir.path().join("audit.jsonl")).unwrap())
        .dry_run(dry_run)
        .build();
    Gate {
        dir,
        root,
        engine,
        asked,
    }
}

#[tokio::test]
async fn an_allow_rule_skips_asking_even_in_confirm_all_but_only_for_its_prefix() {
    let gate = gate(
        ConfirmAll,
        vec![rule("run_command", Some("echo hi"), None, Allow)],
        Approval::Deny,
        false,
    );
    let run = gate
        .call("run_command", json!({"command": "echo hi there"}))
        .await;
    assert!(run.result.success, "{:?}", run.result);
    assert!(run.result.output.contains("hi there"));
    assert_eq!(run.decision, Decision::Executed);
    assert_eq!(
        run.rule.as_deref(),
        Some("rule 1 (allow run_command command `echo hi`)")
    );
    assert_eq!(gate.asked(), 0);

    // Chained, substituted, redirected or with `env`: asked (and denied).
    for args in [
        json!({"command": "echo hi; touch x"}),
        json!({"command": "echo hi $(touch x)"}),
        json!({"command": "echo hi > x"}),
        json!({"command": "X=1 echo hi"}),
        json!({"command": "echo hi", "env": {"X": "1"}}),
        json!({"command": "echo hix"}),
    ] {
        let run = gate.call("run_command", args.clone()).await;
        assert_eq!(run.decision, Decision::Denied, "{args}");
        assert_eq!(run.rule, None, "{args}");
    }
    assert_eq!(gate.asked(), 6);
    assert!(!gate.root.join("x").exists());
}

#[tokio::test]
async fn an_ask_rule_asks_even_in_yolo_and_after_a_session_allow() {
    let gate = gate(
        Yolo,
        vec![rule("write_file", None, Some("docs/**"), Ask)],
        Approval::AllowForSession,
        false,
    );
    for _ in 0..2 {
        let run = gate
            .call("write_file", json!({"path": "docs/a.md", "content": "x"}))
            .await;
        assert!(run.result.success, "{:?}", run.result);
    }
    assert_eq!(gate.asked(), 2);
    let run = gate
        .call("write_file", json!({"path": "src/a.rs", "content": "x"}))
        .await;
    assert!(run.result.success);
    assert_eq!(gate.asked(), 2, "outside the glob, yolo decides");
}

#[tokio::test]
async fn an_ask_rule_with_nobody_to_ask_names_the_rule() {
    let gate = gate(
        Yolo,
        vec![rule("run_command", Some("git push"), None, Ask)],
        Approval::Unavailable("use --mode yolo".into()),
        false,
    );
    let run = gate
        .call("run_command", json!({"command": "true && git push"}))
        .await;
    assert_eq!(run.decision, Decision::NoApprover);
    let error = run.result.error.unwrap();
    assert!(
        error.contains("rule 1 (ask run_command command `git push`) in confirmation.rules"),
        "{error}"
    );
    assert!(!error.contains("--mode yolo"), "{error}");
}

#[tokio::test]
async fn a_deny_rule_refuses_in_yolo_and_in_dry_run() {
    for dry_run in [false, true] {
        let gate = gate(
            Yolo,
            vec![
                rule("run_command", Some("touch"), None, Allow),
                rule("run_command", Some("touch"), None, Deny),
            ],
            Approval::Allow,
            dry_run,
        );
        let run = gate
            .call("run_command", json!({"command": "echo ok | touch x"}))
            .await;
        assert_eq!(run.decision, Decision::RuleDenied, "dry-run {dry_run}");
        assert_eq!(
            run.result.error.as_deref(),
            Some("denied by rule 2 (deny run_command command `touch`) in confirmation.rules")
        );
        assert!(!gate.root.join("x").exists());
        assert_eq!(gate.asked(), 0);
        let audit = std::fs::read_to_string(gate.dir.path().join("audit.jsonl")).unwrap();
        let record: Value = serde_json::from_str(audit.lines().last().unwrap()).unwrap();
        assert_eq!(record["decision"], "rule_denied");
        assert_eq!(record["rule"], "rule 2 (deny run_command command `touch`)");
    }
}

#[tokio::test]
async fn dry_run_never_asks_even_under_an_ask_rule() {
    let gate = gate(
        ConfirmSensitive,
        vec![rule("write_file", None, None, Ask)],
        Approval::Deny,
        true,
    );
    let run = gate
        .call("write_file", json!({"path": "a.md", "content": "x"}))
        .await;
    assert_eq!(run.decision, Decision::DryRun);
    assert_eq!(gate.asked(), 0);
    assert!(!gate.root.join("a.md").exists());
}

#[tokio::test]
async fn no_allow_rule_lifts_a_guardrail_or_the_blocklist() {
    let gate = gate(
        ConfirmAll,
        vec![
            rule("write_file", None, Some("**"), Allow),
            rule("run_command", Some("rm"), None, Allow),
            rule("run_command", Some("sudo"), None, Allow),
        ],
        Approval::Deny,
        false,
    );
    let run = gate
        .call("write_file", json!({"path": ".env", "content": "K=v"}))
        .await;
    assert_eq!(run.decision, Decision::Guardrail, "{:?}", run.result);
    let run = gate
        .call(
            "write_file",
            json!({"path": "toolgate.yaml", "content": "x"}),
        )
        .await;
    assert_eq!(run.decision, Decision::Guardrail, "{:?}", run.result);
    for command in ["rm -rf /", "sudo true"] {
        let run = gate
            .call("run_command", json!({ "command": command }))
            .await;
        assert!(!run.result.success, "{command}");
        let error = run.result.error.unwrap_or_default();
        assert!(error.starts_with("blocked command"), "{command}: {error}");
    }
    assert_eq!(gate.asked(), 0);
}

#[tokio::test]
async fn the_stages_list_the_rules() {
    let gate = gate(
        ConfirmSensitive,
        vec![rule("*", None, Some("secrets/**"), Deny)],
        Approval::Deny,
        false,
    );
    assert_eq!(gate.engine.stages().rules, ["deny * path `secrets/**`"]);
}

/// Saved rules a test changes between calls, as another worker would.
#[derive(Debug)]
struct Store(Mutex<Result<Vec<(i64, ConfirmationRule)>, String>>);

impl Store {
    fn set(&self, now: Result<Vec<(i64, ConfirmationRule)>, String>) {
        *self.0.lock().unwrap() = now;
    }
}

#[async_trait]
impl SavedRules for Store {
    async fn current(&self) -> Result<Arc<SavedRuleSet>, String> {
        let saved = self.0.lock().unwrap().clone()?;
        let (ids, rules): (Vec<i64>, Vec<ConfirmationRule>) = saved.into_iter().unzip();
        let rules = ConfirmationRules::new(rules).map_err(|e| e.to_string())?;
        Ok(Arc::new(SavedRuleSet::new(rules, ids).unwrap()))
    }

    fn describe(&self) -> String {
        "a test's store".to_owned()
    }
}

#[tokio::test]
async fn rules_saved_in_a_store_apply_from_the_next_call_and_an_unreadable_store_asks() {
    let store = Arc::new(Store(Mutex::new(Ok(Vec::new()))));
    let gate = gate_saving(
        ConfirmSensitive,
        vec![rule("write_file", None, Some("locked/**"), Deny)],
        Approval::Deny,
        false,
        Some(Arc::clone(&store) as Arc<dyn SavedRules>),
    );
    assert_eq!(
        gate.engine.stages().saved_rules.as_deref(),
        Some("a test's store")
    );
    let write = |path: &str| json!({"path": path, "content": "x"});
    let run = gate.call("write_file", write("docs/a.md")).await;
    assert_eq!(run.decision, Decision::Denied, "nothing saved: asked");
    assert_eq!(gate.asked(), 1);

    // Saved by another worker: the next call runs unasked.
    store.set(Ok(vec![
        (7, rule("write_file", None, Some("docs/**"), Allow)),
        (9, rule("write_file", None, Some("**"), Allow)),
    ]));
    let run = gate.call("write_file", write("docs/a.md")).await;
    assert!(run.result.success, "{:?}", run.result);
    assert_eq!(gate.asked(), 1);
    // A saved allow does not lift the configuration's deny.
    let run = gate.call("write_file", write("locked/a.md")).await;
    assert_eq!(run.decision, Decision::RuleDenied);
    assert!(
        run.result.error.unwrap().ends_with("in confirmation.rules"),
        "the configuration's rule is named"
    );

    // A saved deny refuses, named by its store id, in the result and the
    // audit.
    store.set(Ok(vec![
        (7, rule("write_file", None, Some("docs/**"), Allow)),
        (12, rule("write_file", None, Some("docs/private/**"), Deny)),
    ]));
    let run = gate.call("write_file", write("docs/private/a.md")).await;
    assert_eq!(run.decision, Decision::RuleDenied);
    assert_eq!(
        run.result.error.as_deref(),
        Some(
            "denied by store rule 12 (deny write_file path `docs/private/**`), saved in the \
             shared store"
        )
    );
    assert!(!gate.root.join("docs/private/a.md").exists());
    let audit = std::fs::read_to_string(gate.dir.path().join("audit.jsonl")).unwrap();
    let record: Value = serde_json::from_str(audit.lines().last().unwrap()).unwrap();
    assert_eq!(
        record["rule"],
        "store rule 12 (deny write_file path `docs/private/**`)"
    );

    // Unreadable: a saved deny might cover any call, so even a read that
    // the mode runs unasked is asked, and a saved allow spares nothing.
    std::fs::write(gate.root.join("r.txt"), "r").unwrap();
    store.set(Err("connection refused".to_owned()));
    let run = gate.call("read_file", json!({"path": "r.txt"})).await;
    assert_eq!(run.decision, Decision::Denied, "{:?}", run.result);
    let run = gate.call("write_file", write("docs/b.md")).await;
    assert_eq!(run.decision, Decision::Denied, "{:?}", run.result);
    assert_eq!(gate.asked(), 3);
    assert!(!gate.root.join("docs/b.md").exists());
    // Readable again: as before.
    store.set(Ok(Vec::new()));
    let run = gate.call("read_file", json!({"path": "r.txt"})).await;
    assert!(run.result.success, "{:?}", run.result);
    assert_eq!(gate.asked(), 3);
}

#[tokio::test]
async fn under_dont_ask_an_unreadable_store_refuses_and_says_to_retry() {
    let store = Arc::new(Store(Mutex::new(Err("timed out".to_owned()))));
    let gate = gate_saving(
        ConfirmationMode::DontAsk,
        vec![rule("read_file", None, Some("**"), Allow)],
        Approval::Allow,
        false,
        Some(store as Arc<dyn SavedRules>),
    );
    std::fs::write(gate.root.join("r.txt"), "r").unwrap();
    let run = gate.call("read_file", json!({"path": "r.txt"})).await;
    assert_eq!(run.decision, Decision::NoApprover);
    let error = run.result.error.unwrap();
    assert!(
        error.contains("cannot be read now (timed out)")
            && error.ends_with("retry once the store answers"),
        "{error}"
    );
    assert!(!error.contains("narrow it"), "{error}");
    assert_eq!(gate.asked(), 0);
}
