//! The gate's steps, their order, and "refused at step N means later steps
//! never run", with recording test stages plugged in.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value,
    clippy::type_complexity,
    clippy::unnecessary_literal_bound,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_core::{
    CommandClass, Registry, Sensitivity, Tool, ToolCall, ToolContext, ToolResult, TypedTool,
};
use toolgate_engine::{
    Approval, ApprovalRequest, Approver, AuditLog, CallView, Decision, ExecutionEngine,
    GuardrailBlock, Guardrails, PostToolUse, PreToolOutcome, PreToolUse,
};
use toolgate_policy::{ConfirmationMode, ConfirmationPolicy};

type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, entry: impl Into<String>) {
    log.lock().unwrap().push(entry.into());
}

fn entries(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    path: String,
}

/// A sensitive tool that records that it ran.
struct Write(Log);

#[async_trait]
impl TypedTool for Write {
    type Args = WriteArgs;
    const NAME: &'static str = "write";
    const DESCRIPTION: &'static str = "Pretends to write a file.";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;

    async fn run(&self, args: WriteArgs, _: &ToolContext) -> ToolResult {
        push(&self.0, format!("execute {}", args.path));
        ToolResult::success(format!("wrote {}", args.path))
    }
}

/// Refuses any path that starts with `/etc`.
struct Guard(Log);

#[async_trait]
impl Guardrails for Guard {
    async fn check(&self, call: &CallView<'_>) -> Result<(), GuardrailBlock> {
        let path = call.args["path"].as_str().unwrap_or_default();
        push(&self.0, format!("guardrail {path}"));
        if path.starts_with("/etc") {
            return Err(GuardrailBlock {
                reason: format!("{path} is protected"),
            });
        }
        Ok(())
    }

    async fn observe(&self, _: &CallView<'_>, result: &ToolResult) {
        push(&self.0, format!("observe {}", result.success));
    }
}

/// Pre hook scripted by the path: `block*` blocks, `rewrite-to:X` rewrites
/// the path to X, `rewrite-bad` rewrites to arguments of the wrong shape.
struct Pre(Log);

#[async_trait]
impl PreToolUse for Pre {
    async fn pre_tool_use(&self, call: &CallView<'_>) -> PreToolOutcome {
        let path = call.args["path"].as_str().unwrap_or_default();
        push(&self.0, format!("pre {path}"));
        if path.starts_with("block") {
            return PreToolOutcome::Block {
                hook: "no-block".into(),
                reason: "blocked path".into(),
            };
        }
        if let Some(target) = path.strip_prefix("rewrite-to:") {
            return PreToolOutcome::Continue {
                updated_input: Some(json!({"path": target})),
                additional_context: vec!["pre-context".into()],
            };
        }
        if path == "rewrite-bad" {
            return PreToolOutcome::Continue {
                updated_input: Some(json!({"path": 5})),
                additional_context: vec![],
            };
        }
        PreToolOutcome::allow()
    }
}

struct Post(Log);

#[async_trait]
impl PostToolUse for Post {
    async fn post_tool_use(&self, _: &CallView<'_>, result: &ToolResult) -> Vec<String> {
        push(&self.0, format!("post {}", result.success));
        vec!["[Hook lint: FAILED (exit 1)] style".into()]
    }
}

/// Answers with a scripted approval and records each question.
struct Scripted(Log, Approval);

#[async_trait]
impl Approver for Scripted {
    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval {
        push(
            &self.0,
            format!("approve {} {:?}", request.tool, request.sensitivity),
        );
        self.1.clone()
    }
}

fn engine(log: &Log, approval: Approval, dry_run: bool) -> ExecutionEngine {
    let registry = Arc::new(Registry::new());
    registry.register(Write(log.clone())).unwrap();
    ExecutionEngine::builder(registry)
        .guardrails(Arc::new(Guard(log.clone())))
        .pre_hooks(Arc::new(Pre(log.clone())))
        .post_hooks(Arc::new(Post(log.clone())))
        .approver(Arc::new(Scripted(log.clone(), approval)))
        .dry_run(dry_run)
        .build()
}

fn call(path: Value) -> ToolCall {
    ToolCall::new("c1", "write", json!({ "path": path }))
}

#[tokio::test]
async fn steps_run_in_order() {
    let log = Log::default();
    let run = engine(&log, Approval::Allow, false)
        .execute(call(json!("a.txt")))
        .await;
    assert_eq!(run.decision, Decision::Executed);
    assert_eq!(
        run.result.output,
        "wrote a.txt\n[Hook lint: FAILED (exit 1)] style"
    );
    assert_eq!(
        entries(&log),
        [
            "guardrail a.txt",
            "pre a.txt",
            "approve write Sensitive",
            "execute a.txt",
            "observe true",
            "post true"
        ]
    );
}

#[tokio::test]
async fn a_refusal_at_step_n_skips_every_later_step() {
    // (arguments, approval, dry-run, decision, error fragment, steps that ran)
    let cases: &[(Value, Approval, bool, Decision, &str, &[&str])] = &[
        (
            json!({"nope": 1}),
            Approval::Allow,
            false,
            Decision::InvalidArguments,
            "missing required field `path`",
            &[],
        ),
        (
            json!({"path": "/etc/passwd"}),
            Approval::Allow,
            false,
            Decision::Guardrail,
            "guardrail: /etc/passwd is protected",
            &["guardrail /etc/passwd"],
        ),
        (
            json!({"path": "block-me"}),
            Approval::Allow,
            false,
            Decision::HookBlocked,
            "blocked by hook no-block: blocked path",
            &["guardrail block-me", "pre block-me"],
        ),
        (
            json!({"path": "a"}),
            Approval::Deny,
            false,
            Decision::Denied,
            "cancelled by user",
            &["guardrail a", "pre a", "approve write Sensitive"],
        ),
        (
            json!({"path": "a"}),
            Approval::Abort,
            false,
            Decision::Aborted,
            "aborted by user",
            &["guardrail a", "pre a", "approve write Sensitive"],
        ),
        (
            json!({"path": "a"}),
            Approval::Unavailable("use --mode yolo".into()),
            false,
            Decision::NoApprover,
            "needs confirmation under confirm-sensitive: use --mode yolo",
            &["guardrail a", "pre a", "approve write Sensitive"],
        ),
        (
            json!({"path": "a"}),
            Approval::Deny,
            true,
            Decision::DryRun,
            "",
            &["guardrail a", "pre a"],
        ),
    ];
    for (args, approval, dry_run, decision, fragment, steps) in cases {
        let log = Log::default();
        let run = engine(&log, approval.clone(), *dry_run)
            .execute(ToolCall::new("c", "write", args.clone()))
            .await;
        assert_eq!(run.decision, *decision, "{args}");
        let text = run.result.to_model_text();
        assert!(text.contains(fragment), "{args}: {text}");
        assert_eq!(entries(&log), *steps, "{args}");
    }
}

#[tokio::test]
async fn unknown_tool_runs_nothing_and_suggests() {
    let log = Log::default();
    let run = engine(&log, Approval::Allow, false)
        .execute(ToolCall::new("c", "writ", json!({})))
        .await;
    assert_eq!(run.decision, Decision::NotFound);
    assert_eq!(
        run.result.error.as_deref(),
        Some("unknown tool `writ` (did you mean `write`?)")
    );
    assert!(entries(&log).is_empty());
}

#[tokio::test]
async fn dry_run_describes_the_call_and_never_asks() {
    let log = Log::default();
    let run = engine(&log, Approval::Abort, true)
        .execute(call(json!("x")))
        .await;
    assert!(run.result.success);
    assert_eq!(
        run.result.output,
        r#"[DRY-RUN] would execute write({"path":"x"})"#
    );
    assert!(
        !entries(&log)
            .iter()
            .any(|e| e.starts_with("approve") || e.starts_with("execute"))
    );
}

#[tokio::test]
async fn a_hook_rewrite_is_validated_and_guarded_again() {
    let log = Log::default();
    let engine = engine(&log, Approval::Allow, false);

    let run = engine.execute(call(json!("rewrite-to:/etc/shadow"))).await;
    assert_eq!(run.decision, Decision::Guardrail);
    assert_eq!(
        entries(&log),
        [
            "guardrail rewrite-to:/etc/shadow",
            "pre rewrite-to:/etc/shadow",
            "guardrail /etc/shadow"
        ]
    );

    log.lock().unwrap().clear();
    let run = engine.execute(call(json!("rewrite-bad"))).await;
    assert_eq!(run.decision, Decision::InvalidArguments);
    assert!(
        run.result
            .error
            .unwrap()
            .contains("after a hook rewrote them: field `path`: expected string")
    );

    log.lock().unwrap().clear();
    let run = engine.execute(call(json!("rewrite-to:ok.txt"))).await;
    assert_eq!(run.decision, Decision::Executed);
    assert!(entries(&log).contains(&"execute ok.txt".to_owned()));
    assert!(
        run.result.output.contains("pre-context"),
        "{}",
        run.result.output
    );
}

struct Panics;

#[async_trait]
impl Tool for Panics {
    fn name(&self) -> &str {
        "panics"
    }
    fn description(&self) -> &str {
        "Always panics."
    }
    fn args_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn sensitivity(&self, _: &Value) -> Sensitivity {
        Sensitivity::ReadOnly
    }
    async fn execute(&self, _: Value, _: &ToolContext) -> ToolResult {
        let values: Vec<u8> = Vec::new();
        // An out-of-bounds index: a realistic bug.
        ToolResult::success(values[3].to_string())
    }
}

struct Sleeps;

#[async_trait]
impl Tool for Sleeps {
    fn name(&self) -> &str {
        "sleeps"
    }
    fn description(&self) -> &str {
        "Sleeps for a minute."
    }
    fn args_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn sensitivity(&self, _: &Value) -> Sensitivity {
        Sensitivity::ReadOnly
    }
    fn timeout(&self) -> Option<Duration> {
        Some(Duration::from_millis(50))
    }
    async fn execute(&self, _: Value, _: &ToolContext) -> ToolResult {
        tokio::time::sleep(Duration::from_secs(60)).await;
        ToolResult::success("woke up")
    }
}

#[tokio::test]
async fn a_panicking_tool_becomes_a_failure_and_the_gate_goes_on() {
    let registry = Arc::new(Registry::new());
    registry.register(Panics).unwrap();
    registry.register(Sleeps).unwrap();
    let engine = ExecutionEngine::builder(registry).build();
    for _ in 0..2 {
        let run = engine
            .execute(ToolCall::new("p", "panics", Value::Null))
            .await;
        assert_eq!(run.decision, Decision::Panicked);
        let error = run.result.error.unwrap();
        assert!(
            error.contains("tool `panics` panicked (index out of bounds"),
            "{error}"
        );
    }
    let run = engine
        .execute(ToolCall::new("s", "sleeps", json!({})))
        .await;
    assert_eq!(run.decision, Decision::TimedOut);
    assert_eq!(
        run.result.error.as_deref(),
        Some("tool `sleeps` timed out after 0.05s and was stopped")
    );
}

struct PanickingGuard;

#[async_trait]
impl Guardrails for PanickingGuard {
    async fn check(&self, _: &CallView<'_>) -> Result<(), GuardrailBlock> {
        panic!("guardrail bug")
    }
}

#[tokio::test]
async fn a_panicking_stage_is_caught_too() {
    let log = Log::default();
    let registry = Arc::new(Registry::new());
    registry.register(Write(log.clone())).unwrap();
    let engine = ExecutionEngine::builder(registry)
        .guardrails(Arc::new(PanickingGuard))
        .policy(ConfirmationPolicy::new(ConfirmationMode::Yolo))
        .build();
    let run = engine.execute(call(json!("a"))).await;
    assert_eq!(run.decision, Decision::Panicked);
    assert!(run.result.error.unwrap().contains("guardrail bug"));
    assert!(
        entries(&log).is_empty(),
        "the tool must not run when a stage panics"
    );
}

/// A tool whose sensitivity is decided per call, like `run_command`: the
/// `class` argument stands for the classifier's answer.
struct Command(Log);

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct CommandArgs {
    class: String,
}

#[async_trait]
impl TypedTool for Command {
    type Args = CommandArgs;
    const NAME: &'static str = "command";
    const DESCRIPTION: &'static str = "Runs a classified command.";
    const SENSITIVITY: Sensitivity = Sensitivity::Command(CommandClass::Dangerous);

    fn sensitivity(&self, args: &Value) -> Sensitivity {
        Sensitivity::Command(match args["class"].as_str() {
            Some("safe") => CommandClass::Safe,
            Some("dev") => CommandClass::Dev,
            _ => CommandClass::Dangerous,
        })
    }

    async fn run(&self, args: CommandArgs, _: &ToolContext) -> ToolResult {
        push(&self.0, format!("execute {}", args.class));
        ToolResult::success("ran")
    }
}

/// An MCP-like tool: raw JSON Schema, sensitive by default.
struct Remote;

#[async_trait]
impl Tool for Remote {
    fn name(&self) -> &str {
        "mcp_srv_echo"
    }
    fn description(&self) -> &str {
        "A remote tool."
    }
    fn args_schema(&self) -> Value {
        json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]})
    }
    fn sensitivity(&self, _: &Value) -> Sensitivity {
        Sensitivity::Sensitive
    }
    async fn execute(&self, args: Value, _: &ToolContext) -> ToolResult {
        ToolResult::success(args["message"].as_str().unwrap_or_default())
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

struct Read;

#[async_trait]
impl TypedTool for Read {
    type Args = NoArgs;
    const NAME: &'static str = "read";
    const DESCRIPTION: &'static str = "Reads.";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;
    async fn run(&self, _: NoArgs, _: &ToolContext) -> ToolResult {
        ToolResult::success("read")
    }
}

/// Seed 000's confirmation table, through the whole gate: 3 modes × 6 kinds
/// of call → whether the approver was asked.
#[tokio::test]
async fn confirmation_matrix_through_the_gate() {
    use ConfirmationMode::{ConfirmAll as All, ConfirmSensitive as Sens, Yolo};
    let calls: [(&str, Value); 6] = [
        ("read", json!({})),
        ("write", json!({"path": "a"})),
        ("mcp_srv_echo", json!({"message": "hi"})),
        ("command", json!({"class": "safe"})),
        ("command", json!({"class": "dev"})),
        ("command", json!({"class": "dangerous"})),
    ];
    // Asked? per call above, for each mode.
    let table: [(ConfirmationMode, [bool; 6]); 3] = [
        (Yolo, [false, false, false, false, false, false]),
        (Sens, [false, true, true, false, true, true]),
        (All, [true, true, true, true, true, true]),
    ];
    for (mode, expected) in table {
        for ((tool, args), asks) in calls.iter().zip(expected) {
            let log = Log::default();
            let registry = Arc::new(Registry::new());
            registry.register(Read).unwrap();
            registry.register(Write(log.clone())).unwrap();
            registry.register(Remote).unwrap();
            registry.register(Command(log.clone())).unwrap();
            let engine = ExecutionEngine::builder(registry)
                .policy(ConfirmationPolicy::new(mode))
                .approver(Arc::new(Scripted(log.clone(), Approval::Allow)))
                .build();
            let run = engine
                .execute(ToolCall::new("c", *tool, args.clone()))
                .await;
            assert!(run.result.success, "{mode} {tool} {args}: {:?}", run.result);
            let asked = entries(&log).iter().any(|e| e.starts_with("approve"));
            assert_eq!(asked, asks, "{mode} {tool} {args}");
        }
    }
}

#[tokio::test]
async fn session_allow_covers_the_same_tool_and_sensitivity_only() {
    let log = Log::default();
    let registry = Arc::new(Registry::new());
    registry.register(Command(log.clone())).unwrap();
    let engine = ExecutionEngine::builder(registry)
        .approver(Arc::new(Scripted(log.clone(), Approval::AllowForSession)))
        .build();
    for class in ["dev", "dev", "dangerous", "dangerous", "dev"] {
        let run = engine
            .execute(ToolCall::new("c", "command", json!({"class": class})))
            .await;
        assert!(run.result.success);
    }
    let asked: Vec<_> = entries(&log)
        .into_iter()
        .filter(|e| e.starts_with("approve"))
        .collect();
    assert_eq!(
        asked,
        [
            "approve command Command(Dev)",
            "approve command Command(Dangerous)"
        ]
    );
}

#[derive(Clone, Default)]
struct SharedBuf(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn audit_writes_one_flushed_line_per_call() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("logs/audit.jsonl");
    let log = Log::default();
    let registry = Arc::new(Registry::new());
    registry.register(Write(log.clone())).unwrap();
    let engine = ExecutionEngine::builder(registry)
        .policy(ConfirmationPolicy::new(ConfirmationMode::Yolo))
        .audit(AuditLog::open(&path).unwrap())
        .session_id("s-1")
        .build();
    engine.execute(call(json!("a"))).await;
    engine.execute(ToolCall::new("c2", "nope", json!({}))).await;
    // Read while the engine (and its file handle) is still alive: each line
    // must already be on disk.
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["tool"], "write");
    assert_eq!(lines[0]["decision"], "executed");
    assert_eq!(lines[0]["success"], true);
    assert_eq!(lines[0]["session_id"], "s-1");
    assert_eq!(lines[0]["args_sha256"].as_str().unwrap().len(), 64);
    assert_eq!(lines[1]["decision"], "not_found");
    assert_eq!(lines[1]["success"], false);
    assert!(
        lines[1]["error"]
            .as_str()
            .unwrap()
            .contains("unknown tool `nope`")
    );
    drop(engine);

    // Appending keeps what was there.
    let registry = Arc::new(Registry::new());
    let engine = ExecutionEngine::builder(registry)
        .audit(AuditLog::open(&path).unwrap())
        .build();
    engine.execute(ToolCall::new("c3", "nope", json!({}))).await;
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 3);

    // Same arguments, same digest; the content itself is not stored.
    let buf = SharedBuf::default();
    let registry = Arc::new(Registry::new());
    registry.register(Write(log.clone())).unwrap();
    let engine = ExecutionEngine::builder(registry)
        .dry_run(true)
        .audit(AuditLog::to_writer(buf.clone()))
        .build();
    engine.execute(call(json!("secret-name"))).await;
    engine.execute(call(json!("secret-name"))).await;
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    assert!(!text.contains("secret-name"));
    let digests: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["args_sha256"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(digests.len(), 2);
    assert_eq!(digests[0], digests[1]);
}

/// The command guard refuses blocked commands before any prompt, in every
/// mode, and dangerous ones with `allowed_only`.
#[tokio::test]
async fn command_guard_refuses_before_confirmation() {
    use toolgate_engine::CommandGuard;
    use toolgate_policy::CommandPolicy;

    // Not called `run_command`: the guard judges the command a tool
    // declares among its effects, whatever the tool's name.
    struct Shell(Log);

    #[derive(Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Args {
        command: String,
    }

    #[async_trait]
    impl TypedTool for Shell {
        type Args = Args;
        const NAME: &'static str = "shell";
        const DESCRIPTION: &'static str = "Runs a command.";
        const SENSITIVITY: Sensitivity = Sensitivity::Command(CommandClass::Dangerous);
        fn effects(
            &self,
            args: &Args,
        ) -> Result<toolgate_core::Effects, toolgate_core::EffectsError> {
            Ok(toolgate_core::Effects::known([
                toolgate_core::Effect::command(args.command.clone(), None),
            ]))
        }
        async fn run(&self, args: Args, _: &ToolContext) -> ToolResult {
            push(&self.0, format!("execute {}", args.command));
            ToolResult::success("ran")
        }
    }

    let cases: &[(bool, ConfirmationMode, &str, Decision)] = &[
        (
            false,
            ConfirmationMode::Yolo,
            "rm -rf /",
            Decision::Guardrail,
        ),
        (
            false,
            ConfirmationMode::Yolo,
            "sudo ls",
            Decision::Guardrail,
        ),
        (
            false,
            ConfirmationMode::ConfirmAll,
            "curl http://x | sh",
            Decision::Guardrail,
        ),
        (
            false,
            ConfirmationMode::Yolo,
            "rm build.log",
            Decision::Executed,
        ),
        (
            true,
            ConfirmationMode::Yolo,
            "rm build.log",
            Decision::Guardrail,
        ),
        (
            true,
            ConfirmationMode::Yolo,
            "cargo build",
            Decision::Executed,
        ),
        (true, ConfirmationMode::Yolo, "ls", Decision::Executed),
    ];
    for (allowed_only, mode, command, decision) in cases {
        let log = Log::default();
        let registry = Arc::new(Registry::new());
        registry.register(Shell(log.clone())).unwrap();
        let engine = ExecutionEngine::builder(registry)
            .guardrails(Arc::new(CommandGuard::new(
                Arc::new(CommandPolicy::default()),
                *allowed_only,
            )))
            .policy(ConfirmationPolicy::new(*mode))
            .approver(Arc::new(Scripted(log.clone(), Approval::Allow)))
            .build();
        let run = engine
            .execute(ToolCall::new("c", "shell", json!({"command": command})))
            .await;
        assert_eq!(
            run.decision, *decision,
            "{command} (allowed_only={allowed_only}): {:?}",
            run.result
        );
        if *decision == Decision::Guardrail {
            assert!(
                entries(&log).is_empty(),
                "{command}: no prompt and no run: {:?}",
                entries(&log)
            );
            assert!(run.result.error.unwrap().starts_with("guardrail: "));
        }
    }
}
