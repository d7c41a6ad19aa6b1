//! The confirmation modes through the gate, with the real built-in tools
//! and an opaque (MCP-like) tool: each kind of call under each mode runs,
//! asks or is refused; `dont-ask` never asks anyone and names the rule
//! that would allow what it refused.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};
use tempfile::TempDir;
use toolgate_core::{Registry, Sensitivity, Tool, ToolCall, ToolContext, ToolResult, Workspace};
use toolgate_engine::{
    Approval, ApprovalRequest, Approver, Decision, Execution, ExecutionEngine, GuardrailsConfig,
    GuardrailsEngine,
};
use toolgate_policy::{
    ConfirmationMode, ConfirmationPolicy, ConfirmationRule, ConfirmationRules, RuleDecision,
};
use toolgate_tools::BuiltinOptions;
use toolgate_tools::command::CommandOptions;

use ConfirmationMode::{AcceptEdits, ConfirmAll, ConfirmSensitive, DontAsk, Yolo};

/// Counts the questions and allows each.
struct Counter(Arc<Mutex<usize>>);

#[async_trait]
impl Approver for Counter {
    async fn approve(&self, _request: &ApprovalRequest<'_>) -> Approval {
        *self.0.lock().unwrap() += 1;
        Approval::Allow
    }
}

/// A tool whose effects toolgate cannot see, as an MCP server's are.
struct Remote;

#[async_trait]
impl Tool for Remote {
    fn name(&self) -> &'static str {
        "mcp_srv_write"
    }
    fn description(&self) -> &'static str {
        "A remote tool."
    }
    fn args_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn sensitivity(&self, _args: &Value) -> Sensitivity {
        Sensitivity::Sensitive
    }
    async fn execute(&self, _args: Value, _ctx: &ToolContext) -> ToolResult {
        ToolResult::success("remote done")
    }
}

struct Gate {
    _dir: TempDir,
    root: std::path::PathBuf,
    engine: ExecutionEngine,
    asked: Arc<Mutex<usize>>,
}

impl Gate {
    async fn call(&self, tool: &str, args: Value) -> Execution {
        self.engine.execute(ToolCall::new("c", tool, args)).await
    }

    fn asked(&self) -> usize {
        *self.asked.lock().unwrap()
    }
}

fn gate(mode: ConfirmationMode, rules: Vec<ConfirmationRule>) -> Gate {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("ws")).unwrap();
    let root = dir.path().join("ws").canonicalize().unwrap();
    std::fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(root.join("old.txt"), "gone\n").unwrap();
    let workspace = Workspace::builder(&root).build().unwrap();
    let options = BuiltinOptions::default()
        .allow_delete(true)
        .commands(Some(CommandOptions::default()));
    let registry = Registry::new();
    for tool in toolgate_tools::builtin_tools(&workspace, &options) {
        registry.register_arc(tool).unwrap();
    }
    registry.register(Remote).unwrap();
    let guardrails = GuardrailsEngine::builder(GuardrailsConfig::default(), &root)
        .build()
        .unwrap();
    let rules = ConfirmationRules::builder()
        .rules(rules)
        .root(root.to_str().unwrap())
        .build()
        .unwrap();
    let asked = Arc::default();
    let engine = ExecutionEngine::builder(Arc::new(registry))
        .guardrails(Arc::new(guardrails))
        .policy(ConfirmationPolicy::new(mode))
        .rules(rules)
        .approver(Arc::new(Counter(Arc::clone(&asked))))
        .build();
    Gate {
        _dir: dir,
        root,
        engine,
        asked,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Run,
    Ask,
    Refuse,
}

/// Each kind of call, in a fresh workspace per (kind, mode).
fn kinds() -> Vec<(&'static str, &'static str, Value)> {
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n";
    vec![
        ("read_file", "read_file", json!({"path": "a.txt"})),
        ("search", "grep", json!({"pattern": "one"})),
        (
            "write_file",
            "write_file",
            json!({"path": "src/new.txt", "content": "x\n"}),
        ),
        (
            "edit_file",
            "edit_file",
            json!({"path": "a.txt", "old_str": "two", "new_str": "2"}),
        ),
        ("apply_patch", "apply_patch", json!({"patch": patch})),
        ("delete_file", "delete_file", json!({"path": "old.txt"})),
        ("safe command", "run_command", json!({"command": "ls"})),
        (
            "dev command",
            "run_command",
            json!({"command": "touch made.txt"}),
        ),
        ("opaque tool", "mcp_srv_write", json!({})),
    ]
}

#[tokio::test]
async fn each_kind_of_call_under_each_mode_runs_asks_or_is_refused() {
    use Want::{Ask, Refuse, Run};
    // Columns: yolo, confirm-sensitive, confirm-all, accept-edits, dont-ask.
    let expected: &[(&str, [Want; 5])] = &[
        ("read_file", [Run, Run, Ask, Run, Run]),
        ("search", [Run, Run, Ask, Run, Run]),
        ("write_file", [Run, Ask, Ask, Run, Refuse]),
        ("edit_file", [Run, Ask, Ask, Run, Refuse]),
        ("apply_patch", [Run, Ask, Ask, Run, Refuse]),
        ("delete_file", [Run, Ask, Ask, Ask, Refuse]),
        ("safe command", [Run, Run, Ask, Run, Run]),
        ("dev command", [Run, Ask, Ask, Ask, Refuse]),
        ("opaque tool", [Run, Ask, Ask, Ask, Refuse]),
    ];
    let modes = [Yolo, ConfirmSensitive, ConfirmAll, AcceptEdits, DontAsk];
    assert_eq!(expected.len(), kinds().len());
    for ((kind, tool, args), (row, wants)) in kinds().into_iter().zip(expected) {
        assert_eq!(kind, *row);
        for (mode, want) in modes.into_iter().zip(wants) {
            let gate = gate(mode, Vec::new());
            let run = gate.call(tool, args.clone()).await;
            let got = match (run.decision, gate.asked()) {
                (Decision::Executed, 0) => Run,
                (Decision::Executed, 1) => Ask,
                (Decision::NoApprover, 0) => Refuse,
                other => panic!("{kind} under {mode}: {other:?} {:?}", run.result),
            };
            assert_eq!(got, *want, "{kind} under {mode}: {:?}", run.result);
            assert!(run.result.success || got == Refuse, "{kind} under {mode}");
        }
    }
}

#[tokio::test]
async fn accept_edits_writes_inside_without_asking_but_asks_outside() {
    let gate = gate(AcceptEdits, Vec::new());
    let run = gate
        .call("write_file", json!({"path": "deep/x.txt", "content": "hi"}))
        .await;
    assert_eq!(run.decision, Decision::Executed, "{:?}", run.result);
    assert_eq!(
        std::fs::read_to_string(gate.root.join("deep/x.txt")).unwrap(),
        "hi"
    );
    assert_eq!(gate.asked(), 0);
    // A path outside is refused by the workspace; it is asked about first,
    // never run unasked.
    let outside = gate.root.parent().unwrap().join("outside.txt");
    let run = gate
        .call(
            "write_file",
            json!({"path": outside.to_str().unwrap(), "content": "x"}),
        )
        .await;
    assert!(!outside.exists(), "{:?}", run.result);
    assert_ne!(
        (run.decision, gate.asked()),
        (Decision::Executed, 0),
        "{:?}",
        run.result
    );
}

#[tokio::test]
async fn dont_ask_refuses_with_the_rule_that_would_allow_it_and_that_rule_works() {
    let gate = gate(DontAsk, Vec::new());
    let run = gate
        .call("run_command", json!({"command": "touch made.txt"}))
        .await;
    assert_eq!(run.decision, Decision::NoApprover);
    assert!(!gate.root.join("made.txt").exists());
    let error = run.result.error.unwrap();
    assert!(
        error.contains("the mode dont-ask never asks")
            && error.contains(
                "`toolgate rules add --tool run_command --command 'touch made.txt' --exact --decision allow`"
            ),
        "{error}"
    );
    let run = gate
        .call("write_file", json!({"path": "src/[x].rs", "content": "x"}))
        .await;
    let error = run.result.error.unwrap();
    assert!(
        error.contains(r"--tool write_file --path 'src/\[x\].rs' --decision allow"),
        "{error}"
    );
    let run = gate.call("mcp_srv_write", json!({})).await;
    assert!(
        run.result
            .error
            .unwrap()
            .contains("`toolgate rules add --tool mcp_srv_write --decision allow`")
    );
    let run = gate
        .call("run_command", json!({"command": "touch a && touch b"}))
        .await;
    assert!(
        run.result.error.unwrap().contains("no single rule can"),
        "a compound line gets no rule"
    );
    assert_eq!(gate.asked(), 0);

    // The suggested rules, added, let the same calls run, still unasked.
    let rule = |tool: &str, command: Option<&str>, path: Option<&str>| ConfirmationRule {
        tool: tool.into(),
        command: command.map(Into::into),
        path: path.map(Into::into),
        decision: RuleDecision::Allow,
        ..ConfirmationRule::default()
    };
    let gate = self::gate(
        DontAsk,
        vec![
            rule("run_command", Some("touch made.txt"), None),
            rule("write_file", None, Some(r"src/\[x\].rs")),
        ],
    );
    let run = gate
        .call("run_command", json!({"command": "touch made.txt"}))
        .await;
    assert_eq!(run.decision, Decision::Executed, "{:?}", run.result);
    assert!(gate.root.join("made.txt").exists());
    let run = gate
        .call("write_file", json!({"path": "src/[x].rs", "content": "x"}))
        .await;
    assert_eq!(run.decision, Decision::Executed, "{:?}", run.result);
    assert_eq!(gate.asked(), 0);
}

#[tokio::test]
async fn dont_ask_refuses_what_an_ask_rule_would_ask_about() {
    let ask = ConfirmationRule {
        tool: "read_file".into(),
        command: None,
        path: None,
        decision: RuleDecision::Ask,
        ..ConfirmationRule::default()
    };
    let gate = gate(DontAsk, vec![ask]);
    let run = gate.call("read_file", json!({"path": "a.txt"})).await;
    assert_eq!(run.decision, Decision::NoApprover);
    let error = run.result.error.unwrap();
    assert!(
        error.contains("needs confirmation by rule 1 (ask read_file)")
            && error.contains("dont-ask never asks"),
        "{error}"
    );
    assert_eq!(gate.asked(), 0);
}

#[tokio::test]
async fn an_ask_rule_still_asks_under_accept_edits() {
    let ask = ConfirmationRule {
        tool: "write_file".into(),
        command: None,
        path: Some("docs/**".into()),
        decision: RuleDecision::Ask,
        ..ConfirmationRule::default()
    };
    let gate = gate(AcceptEdits, vec![ask]);
    let run = gate
        .call("write_file", json!({"path": "docs/a.md", "content": "x"}))
        .await;
    assert_eq!(run.decision, Decision::Executed, "{:?}", run.result);
    assert_eq!(gate.asked(), 1);
    let run = gate
        .call("write_file", json!({"path": "src/a.rs", "content": "x"}))
        .await;
    assert_eq!(run.decision, Decision::Executed, "{:?}", run.result);
    assert_eq!(
        gate.asked(),
        1,
        "outside the rule, accept-edits runs it unasked"
    );
}
