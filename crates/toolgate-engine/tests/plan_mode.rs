//! Plan mode through the gate, with the real built-in tools, MCP-like and
//! dynamic-like tools and the real plan-mode tools: what is read-only runs,
//! everything else is refused at once (nobody asked, nothing changed, the
//! refusal audited), and `exit_plan_mode` approved by a person switches the
//! same gate to the mode they chose for the next call.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};
use tempfile::TempDir;
use toolgate_core::{
    Registry, Sensitivity, Tool, ToolAnnotations, ToolCall, ToolContext, ToolResult, Workspace,
};
use toolgate_engine::{
    Approval, ApprovalRequest, Approver, AuditRecord, AuditSink, Decision, Execution,
    ExecutionEngine, PLAN_METADATA, PlanAnswer, PlanRequest, plan_mode_tools,
};
use toolgate_policy::{
    ConfirmationMode, ConfirmationPolicy, ConfirmationRule, ConfirmationRules, RuleDecision,
};
use toolgate_tools::BuiltinOptions;
use toolgate_tools::command::CommandOptions;

/// Counts call questions (allowing each) and answers plans as scripted.
struct Person {
    asked: Arc<Mutex<usize>>,
    plans: Arc<Mutex<Vec<String>>>,
    answers: Mutex<Vec<PlanAnswer>>,
}

#[async_trait]
impl Approver for Person {
    async fn approve(&self, _request: &ApprovalRequest<'_>) -> Approval {
        *self.asked.lock().unwrap() += 1;
        Approval::Allow
    }

    async fn approve_plan(&self, request: &PlanRequest<'_>) -> PlanAnswer {
        self.plans.lock().unwrap().push(request.plan.to_owned());
        self.answers.lock().unwrap().remove(0)
    }

    fn reviews_plans(&self) -> bool {
        true
    }
}

/// A tool whose effects toolgate cannot see, as an MCP server's or a
/// dynamic script tool's are, declaring itself read-only or not.
struct Opaque {
    name: &'static str,
    sensitivity: Sensitivity,
    read_only: bool,
}

#[async_trait]
impl Tool for Opaque {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &'static str {
        "An opaque tool."
    }
    fn args_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn sensitivity(&self, _args: &Value) -> Sensitivity {
        self.sensitivity
    }
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            read_only_hint: Some(self.read_only),
            ..ToolAnnotations::default()
        }
    }
    async fn execute(&self, _args: Value, _ctx: &ToolContext) -> ToolResult {
        ToolResult::success(format!("{} ran", self.name))
    }
}

#[derive(Debug, Default)]
struct Audit(Mutex<Vec<(String, String, Option<String>)>>);

impl AuditSink for Audit {
    fn record(&self, record: &AuditRecord<'_>) {
        self.0.lock().unwrap().push((
            record.tool.to_owned(),
            record.decision.to_owned(),
            record.error.map(str::to_owned),
        ));
    }
}

struct Gate {
    _dir: TempDir,
    root: std::path::PathBuf,
    engine: ExecutionEngine,
    asked: Arc<Mutex<usize>>,
    plans: Arc<Mutex<Vec<String>>>,
    audit: Arc<Audit>,
}

impl Gate {
    async fn call(&self, tool: &str, args: Value) -> Execution {
        self.engine.execute(ToolCall::new("c", tool, args)).await
    }

    fn asked(&self) -> usize {
        *self.asked.lock().unwrap()
    }

    /// Every file beneath the workspace with its content.
    fn files(&self) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![self.root.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    let rel = path.strip_prefix(&self.root).unwrap().display().to_string();
                    out.push((rel, std::fs::read(&path).unwrap()));
                }
            }
        }
        out.sort();
        out
    }
}

/// A plan-mode gate; `person`: who reviews plans (`None`: nobody).
fn gate(rules: Vec<ConfirmationRule>, person: Option<Vec<PlanAnswer>>) -> Gate {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("ws")).unwrap();
    let root = dir.path().join("ws").canonicalize().unwrap();
    std::fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(root.join("old.txt"), "gone\n").unwrap();
    let workspace = Workspace::builder(&root).build().unwrap();
    let options = BuiltinOptions::default()
        .allow_delete(true)
        .commands(Some(CommandOptions::default()));
    let registry = Arc::new(Registry::new());
    for tool in toolgate_tools::builtin_tools(&workspace, &options) {
        registry.register_arc(tool).unwrap();
    }
    // An untrusted MCP server's tool, a trusted server's tool with and
    // without `readOnlyHint`, and an approved dynamic tool (which writes).
    for (name, sensitivity, read_only) in [
        ("mcp_srv_write", Sensitivity::Sensitive, false),
        ("mcp_trusted_update", Sensitivity::ReadOnly, false),
        ("mcp_trusted_lookup", Sensitivity::ReadOnly, true),
        ("dyn_save_report", Sensitivity::Sensitive, false),
    ] {
        registry
            .register(Opaque {
                name,
                sensitivity,
                read_only,
            })
            .unwrap();
    }
    let rules = ConfirmationRules::builder()
        .rules(rules)
        .root(root.to_str().unwrap())
        .build()
        .unwrap();
    let asked = Arc::default();
    let plans = Arc::default();
    let audit = Arc::new(Audit::default());
    let person: Option<Arc<dyn Approver>> = person.map(|answers| {
        Arc::new(Person {
            asked: Arc::clone(&asked),
            plans: Arc::clone(&plans),
            answers: Mutex::new(answers),
        }) as Arc<dyn Approver>
    });
    let mut builder = ExecutionEngine::builder(Arc::clone(&registry))
        .policy(ConfirmationPolicy::new(ConfirmationMode::Plan))
        .rules(rules)
        .audit_sink(Arc::clone(&audit) as Arc<dyn AuditSink>);
    if let Some(person) = &person {
        builder = builder.approver(Arc::clone(person));
    }
    let engine = builder.build();
    let (exit, enter) = plan_mode_tools(engine.mode_cell(), person);
    registry.register(exit).unwrap();
    registry.register(enter).unwrap();
    Gate {
        _dir: dir,
        root,
        engine,
        asked,
        plans,
        audit,
    }
}

#[tokio::test]
async fn plan_mode_runs_what_is_read_only_and_refuses_the_rest_at_once() {
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n";
    // (tool, arguments, runs)
    let cases: &[(&str, Value, bool)] = &[
        ("read_file", json!({"path": "a.txt"}), true),
        ("search_code", json!({"pattern": "one"}), true),
        ("grep", json!({"pattern": "one"}), true),
        ("list_files", json!({}), true),
        ("run_command", json!({"command": "ls"}), true),
        ("run_command", json!({"command": "cat a.txt"}), true),
        ("mcp_trusted_lookup", json!({}), true),
        (
            "write_file",
            json!({"path": "new.txt", "content": "x\n"}),
            false,
        ),
        (
            "edit_file",
            json!({"path": "a.txt", "old_str": "two", "new_str": "2"}),
            false,
        ),
        ("apply_patch", json!({"patch": patch}), false),
        ("delete_file", json!({"path": "old.txt"}), false),
        ("run_command", json!({"command": "cargo build"}), false),
        ("run_command", json!({"command": "npm install"}), false),
        ("run_command", json!({"command": "touch made.txt"}), false),
        ("mcp_srv_write", json!({}), false),
        ("mcp_trusted_update", json!({}), false),
        ("dyn_save_report", json!({}), false),
    ];
    for (tool, args, runs) in cases {
        let gate = gate(Vec::new(), Some(Vec::new()));
        let before = gate.files();
        let run = gate.call(tool, args.clone()).await;
        let case = format!("{tool} {args}: {:?}", run.result);
        assert_eq!(gate.asked(), 0, "nobody is asked in plan mode: {case}");
        if *runs {
            assert_eq!(run.decision, Decision::Executed, "{case}");
            assert!(run.result.success, "{case}");
        } else {
            assert_eq!(run.decision, Decision::PlanMode, "{case}");
            assert!(!run.result.success, "{case}");
            let error = run.result.error.as_deref().unwrap();
            assert!(error.contains("plan mode is on"), "{case}");
            assert!(error.contains("`exit_plan_mode`"), "{case}");
            let audit = gate.audit.0.lock().unwrap();
            assert_eq!(audit.len(), 1, "{case}");
            assert_eq!(audit[0].0, *tool);
            assert_eq!(audit[0].1, "plan_mode", "{case}");
            assert_eq!(audit[0].2.as_deref(), Some(error));
        }
        assert_eq!(gate.files(), before, "the workspace is unchanged: {case}");
        assert_eq!(gate.engine.mode(), ConfirmationMode::Plan);
    }
}

#[tokio::test]
async fn no_allow_rule_lifts_plan_mode_and_a_deny_rule_still_refuses() {
    let allow = ConfirmationRule {
        tool: "write_file".into(),
        decision: RuleDecision::Allow,
        ..ConfirmationRule::default()
    };
    let deny = ConfirmationRule {
        tool: "read_file".into(),
        decision: RuleDecision::Deny,
        ..ConfirmationRule::default()
    };
    let gate = gate(vec![allow, deny], Some(Vec::new()));
    let run = gate
        .call("write_file", json!({"path": "new.txt", "content": "x"}))
        .await;
    assert_eq!(run.decision, Decision::PlanMode, "{:?}", run.result);
    assert!(!gate.root.join("new.txt").exists());
    let run = gate.call("read_file", json!({"path": "a.txt"})).await;
    assert_eq!(run.decision, Decision::RuleDenied, "{:?}", run.result);
}

#[tokio::test]
async fn an_approved_plan_switches_the_same_gate_to_the_chosen_mode() {
    let gate = gate(
        Vec::new(),
        Some(vec![
            PlanAnswer::KeepPlanning("also update the README".into()),
            PlanAnswer::Continue(ConfirmationMode::AcceptEdits),
        ]),
    );
    let registry = gate.engine.registry();
    let offered = |name: &str| registry.get(name).unwrap().tool().offered();
    assert!(offered("exit_plan_mode"));
    assert!(!offered("enter_plan_mode"));

    let write = json!({"path": "new.txt", "content": "x\n"});
    assert_eq!(
        gate.call("write_file", write.clone()).await.decision,
        Decision::PlanMode
    );
    // Kept planning: the model gets the feedback, the mode stays.
    let run = gate
        .call("exit_plan_mode", json!({"plan": "1. write new.txt"}))
        .await;
    assert_eq!(run.decision, Decision::Executed);
    assert!(!run.result.success);
    let told = run.result.error.as_deref().unwrap();
    assert!(told.contains("plan mode stays on"), "{told}");
    assert!(told.contains("also update the README"), "{told}");
    assert_eq!(
        run.result.metadata[PLAN_METADATA]["answer"],
        "keep_planning"
    );
    assert_eq!(gate.engine.mode(), ConfirmationMode::Plan);
    assert_eq!(
        gate.call("write_file", write.clone()).await.decision,
        Decision::PlanMode
    );

    // Approved with accept-edits: the next write runs unasked.
    let plan = "1. write new.txt\n2. update the README \u{1b}[31m";
    let run = gate.call("exit_plan_mode", json!({"plan": plan})).await;
    assert!(run.result.success, "{:?}", run.result);
    assert!(
        run.result.output.contains("accept-edits"),
        "{}",
        run.result.output
    );
    let record = &run.result.metadata[PLAN_METADATA];
    assert_eq!(record["answer"], "approved");
    assert_eq!(record["mode"], "accept-edits");
    assert_eq!(record["plan"], plan);
    // The person saw the plan neutralised, line breaks kept.
    let shown = gate.plans.lock().unwrap().clone();
    assert_eq!(shown.len(), 2);
    assert_eq!(shown[1], "1. write new.txt\n2. update the README \\x1b[31m");
    assert_eq!(gate.engine.mode(), ConfirmationMode::AcceptEdits);
    assert_eq!(gate.engine.stages().mode, "accept-edits");
    let run = gate.call("write_file", write).await;
    assert_eq!(run.decision, Decision::Executed, "{:?}", run.result);
    assert_eq!(gate.asked(), 0);
    assert_eq!(
        std::fs::read_to_string(gate.root.join("new.txt")).unwrap(),
        "x\n"
    );
    // A command that is not safe asks, as under confirm-sensitive.
    let run = gate
        .call("run_command", json!({"command": "touch made.txt"}))
        .await;
    assert_eq!(run.decision, Decision::Executed, "{:?}", run.result);
    assert_eq!(gate.asked(), 1);

    // Out of plan mode: exit is not offered and does nothing; enter is.
    assert!(!offered("exit_plan_mode"));
    assert!(offered("enter_plan_mode"));
    let run = gate.call("exit_plan_mode", json!({"plan": "again"})).await;
    assert!(!run.result.success);
    assert_eq!(gate.engine.mode(), ConfirmationMode::AcceptEdits);
    let run = gate.call("enter_plan_mode", json!({})).await;
    assert!(run.result.success, "{:?}", run.result);
    assert_eq!(gate.engine.mode(), ConfirmationMode::Plan);
    let run = gate
        .call("write_file", json!({"path": "new.txt", "content": "y"}))
        .await;
    assert_eq!(run.decision, Decision::PlanMode);
    assert_eq!(
        std::fs::read_to_string(gate.root.join("new.txt")).unwrap(),
        "x\n"
    );
}

#[tokio::test]
async fn with_nobody_to_review_a_plan_the_run_stays_in_plan_mode() {
    let gate = gate(Vec::new(), None);
    let run = gate
        .call("exit_plan_mode", json!({"plan": "1. write new.txt"}))
        .await;
    assert!(!run.result.success);
    let told = run.result.error.as_deref().unwrap();
    assert!(told.contains("plan mode stays on"), "{told}");
    assert!(told.contains("nobody"), "{told}");
    assert_eq!(run.result.metadata[PLAN_METADATA]["answer"], "unavailable");
    assert_eq!(gate.engine.mode(), ConfirmationMode::Plan);
    // And a run nobody can take out of plan mode is never offered the
    // way in.
    gate.engine
        .mode_cell()
        .set(ConfirmationMode::ConfirmSensitive);
    let enter = gate.engine.registry().get("enter_plan_mode").unwrap();
    assert!(!enter.tool().offered());
    let run = gate.call("enter_plan_mode", json!({})).await;
    assert!(!run.result.success);
    assert_eq!(gate.engine.mode(), ConfirmationMode::ConfirmSensitive);
}

#[tokio::test]
async fn an_approver_that_cannot_show_plans_keeps_the_run_planning() {
    struct Plain;
    #[async_trait]
    impl Approver for Plain {
        async fn approve(&self, _request: &ApprovalRequest<'_>) -> Approval {
            Approval::Allow
        }
        fn kind(&self) -> &'static str {
            "plain"
        }
    }
    let registry = Arc::new(Registry::new());
    let engine = ExecutionEngine::builder(Arc::clone(&registry))
        .policy(ConfirmationPolicy::new(ConfirmationMode::Plan))
        .build();
    let (exit, enter) = plan_mode_tools(engine.mode_cell(), Some(Arc::new(Plain)));
    assert!(!toolgate_core::Tool::offered(&enter));
    registry.register(exit).unwrap();
    let run = engine
        .execute(ToolCall::new("c", "exit_plan_mode", json!({"plan": "p"})))
        .await;
    let told = run.result.error.unwrap();
    assert!(
        told.contains("the plain approver cannot show a plan"),
        "{told}"
    );
    assert_eq!(engine.mode(), ConfirmationMode::Plan);
}
