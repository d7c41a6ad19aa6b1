//! Confirmation rules with a command prefix judge every tool whose call
//! declares a command line — `run_command`, `process` writing to a shell,
//! an approved dynamic command tool, an MCP tool that declares
//! `runs_commands` — by that line, and never a tool whose effects are not
//! a command. The tools are the real ones (the dynamic tool created,
//! approved and loaded through a real store); the rules are built the way
//! the host builds them, the tools that need a prefix taken from their
//! specs.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::Arc;

use serde_json::{Value, json};
use toolgate_core::{
    Effect, Effects, EffectsError, Registry, Sensitivity, Tool, ToolAnnotations, ToolCall,
    ToolContext, ToolOrigin, ToolResult, Workspace,
};
use toolgate_dynamic::{DynamicConfig, DynamicTools, ReservedNames, registry_names, review};
use toolgate_engine::{Decision, ExecutionEngine};
use toolgate_policy::{
    ConfirmationMode, ConfirmationPolicy, ConfirmationRule, ConfirmationRules, RuleDecision,
};
use toolgate_sandbox::{EnvPolicy, Sandbox};
use toolgate_store::{DynamicToolStore, SqliteStore};
use toolgate_tools::command::CommandOptions;
use toolgate_tools::{BuiltinOptions, builtin_tools};

/// A tool of an MCP server whose server declares (and is trusted to
/// declare) that every call runs the command line in `cmd`, as a shell
/// server's tool would.
struct McpShell;

#[async_trait::async_trait]
impl Tool for McpShell {
    fn name(&self) -> &'static str {
        "mcp_box_shell"
    }
    fn description(&self) -> &'static str {
        "runs a command in the box"
    }
    fn args_schema(&self) -> Value {
        json!({"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]})
    }
    fn sensitivity(&self, _: &Value) -> Sensitivity {
        Sensitivity::Sensitive
    }
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            runs_commands: true,
            ..ToolAnnotations::default()
        }
    }
    fn origin(&self) -> ToolOrigin {
        ToolOrigin::Mcp {
            server: "box".into(),
            tool: "shell".into(),
        }
    }
    fn effects(&self, args: &Value) -> Result<Effects, EffectsError> {
        let cmd = args["cmd"].as_str().unwrap_or_default();
        Ok(Effects::known([Effect::command(cmd, None)]))
    }
    async fn execute(&self, _: Value, _: &ToolContext) -> ToolResult {
        ToolResult::success("ran")
    }
}

struct World {
    _base: tempfile::TempDir,
    registry: Arc<Registry>,
}

/// The built-in tools with commands on, `mcp_box_shell`, and two approved
/// dynamic tools: `grep_word` (a command template) and `tally` (a script).
async fn world() -> World {
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws = base.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let ws = ws.canonicalize().unwrap();
    let registry = Arc::new(Registry::new());
    let workspace = Workspace::builder(&ws).build().unwrap();
    let options = BuiltinOptions::default().commands(Some(CommandOptions::default()));
    for tool in builtin_tools(&workspace, &options) {
        registry.register_arc(tool).unwrap();
    }
    registry.register(McpShell).unwrap();

    let config = DynamicConfig {
        enabled: true,
        reserved: ReservedNames::new(["run_command", "process", "write_file"]),
        ..DynamicConfig::default()
    };
    let store = Arc::new(SqliteStore::open(base.path().join("data/toolgate.db")).unwrap());
    let sandbox = Sandbox::builder(&ws)
        .host_env([("PATH", "/usr/bin:/bin".to_owned())])
        .env_policy(EnvPolicy::new());
    let dynamic = DynamicTools::new(
        config.clone(),
        Arc::clone(&store) as Arc<dyn DynamicToolStore>,
        sandbox,
    )
    .unwrap();
    let maker = Arc::new(Registry::new());
    for tool in dynamic
        .group("build", registry_names(&registry))
        .unwrap()
        .tools
    {
        maker.register_arc(tool).unwrap();
    }
    let gate = ExecutionEngine::builder(maker)
        .policy(ConfirmationPolicy::new(ConfirmationMode::Yolo))
        .build();
    for request in [
        json!({"name": "grep_word", "description": "Counts lines with a word.", "type": "command",
               "source": "grep -c -- {{word}} notes.txt",
               "parameters": {"properties": {"word": {"type": "string"}}}}),
        json!({"name": "tally", "description": "Counts.", "type": "script",
               "interpreter": "sh", "source": "echo 1\n"}),
    ] {
        let done = gate
            .execute(ToolCall::new("c", "create_tool", request.clone()))
            .await;
        assert!(done.result.success, "{request}: {:?}", done.result);
        let id = done.result.metadata["dynamic_tool_id"].as_i64().unwrap();
        review::approve(store.as_ref(), &config, id).await.unwrap();
    }
    let report = dynamic.sync(&registry, "build").await.unwrap();
    assert_eq!(report.loaded.len(), 2, "{report:?}");
    World {
        _base: base,
        registry,
    }
}

impl World {
    /// The rules as the host builds them: an allow rule needs a command
    /// prefix for the tools whose spec says every call runs a command.
    fn rules(&self, rules: &[ConfirmationRule]) -> ConfirmationRules {
        let command_tools: Vec<String> = self
            .registry
            .list()
            .iter()
            .filter(|t| t.spec().annotations.runs_commands)
            .map(|t| t.name().to_owned())
            .collect();
        ConfirmationRules::builder()
            .command_tools(command_tools)
            .rules(rules.iter().cloned())
            .build()
            .unwrap()
    }

    fn effects(&self, tool: &str, args: &Value) -> Effects {
        let entry = self.registry.get(tool).unwrap();
        entry.validate(args).unwrap();
        entry.tool().effects(args).unwrap()
    }
}

fn rule(tool: &str, command: Option<&str>, decision: RuleDecision) -> ConfirmationRule {
    ConfirmationRule {
        tool: tool.to_owned(),
        command: command.map(str::to_owned),
        path: None,
        decision,
        ..ConfirmationRule::default()
    }
}

#[tokio::test]
async fn command_prefix_rules_judge_every_tool_whose_effect_is_a_command() {
    use RuleDecision::{Allow, Ask, Deny};
    let w = world().await;
    let rules = w.rules(&[
        rule("run_command", Some("git status"), Allow),
        rule("process", Some("make"), Allow),
        rule("grep_word", Some("grep -c"), Allow),
        rule("mcp_box_shell", Some("make"), Allow),
        rule("*", Some("rm"), Deny),
        rule("*", Some("curl"), Ask),
        // Tools whose calls never run a command line: a prefix names
        // nothing they do.
        rule("write_file", Some("git status"), Allow),
        rule("tally", Some("sh"), Allow),
    ]);
    // (tool, arguments, the decision of the rules, or none)
    let cases: &[(&str, Value, Option<RuleDecision>)] = &[
        (
            "run_command",
            json!({"command": "git status -s"}),
            Some(Allow),
        ),
        (
            "run_command",
            json!({"command": "git status; rm -rf x"}),
            Some(Deny),
        ),
        (
            "run_command",
            json!({"command": "git status", "env": {"GIT_DIR": "/x"}}),
            None,
        ),
        (
            "run_command",
            json!({"command": "make", "background": true}),
            None,
        ),
        (
            "run_command",
            json!({"command": "rm -r build", "background": true}),
            Some(Deny),
        ),
        (
            "process",
            json!({"action": "write", "session_id": "proc_1", "input": "make\n"}),
            Some(Allow),
        ),
        (
            "process",
            json!({"action": "write", "session_id": "proc_1", "input": "curl x | sh\n"}),
            Some(Ask),
        ),
        ("process", json!({"action": "list"}), None),
        // The dynamic command tool: its filled template is its line.
        ("grep_word", json!({"word": "todo"}), Some(Allow)),
        ("grep_word", json!({"word": "two words"}), Some(Allow)),
        ("mcp_box_shell", json!({"cmd": "make -j4"}), Some(Allow)),
        (
            "mcp_box_shell",
            json!({"cmd": "make; rm -rf /"}),
            Some(Deny),
        ),
        (
            "mcp_box_shell",
            json!({"cmd": "curl example.com"}),
            Some(Ask),
        ),
        // Not a command: no prefix rule applies, `*` ones included.
        (
            "write_file",
            json!({"path": "rm", "content": "git status"}),
            None,
        ),
        // A script's line says nothing about its code: it is opaque.
        ("tally", json!({}), None),
    ];
    for (tool, args, want) in cases {
        let effects = w.effects(tool, args);
        let got = rules.evaluate(tool, &effects).map(|m| m.decision());
        assert_eq!(got, *want, "{tool} {args}: {effects:?}");
    }
    // The dynamic tool declares exactly the line it runs.
    assert_eq!(
        w.effects("grep_word", &json!({"word": "it's"})).list(),
        &[Effect::command("grep -c -- 'it'\\''s' notes.txt", None)]
    );
}

#[tokio::test]
async fn an_allow_rule_without_a_prefix_never_allows_a_command_and_deny_reaches_the_dynamic_tool() {
    let w = world().await;
    // `mcp_box_shell` and `run_command` declare `runs_commands`: such a
    // rule is refused when built.
    for tool in ["run_command", "mcp_box_shell"] {
        let error = ConfirmationRules::builder()
            .command_tools([tool])
            .rules([rule(tool, None, RuleDecision::Allow)])
            .build()
            .unwrap_err();
        assert!(
            error.to_string().contains("needs a command prefix"),
            "{error}"
        );
    }
    // A dynamic command tool is judged by its effect: an allow rule by name
    // alone does not match its calls, but does match the opaque script's.
    let rules = w.rules(&[
        rule("grep_word", None, RuleDecision::Allow),
        rule("tally", None, RuleDecision::Allow),
    ]);
    let grep = w.effects("grep_word", &json!({"word": "x"}));
    assert!(rules.evaluate("grep_word", &grep).is_none());
    let tally = w.effects("tally", &json!({}));
    assert_eq!(
        rules.evaluate("tally", &tally).map(|m| m.decision()),
        Some(RuleDecision::Allow)
    );
    // Through the gate: a deny rule on the command refuses the dynamic
    // tool's call before anything runs.
    let engine = ExecutionEngine::builder(Arc::clone(&w.registry))
        .policy(ConfirmationPolicy::new(ConfirmationMode::Yolo))
        .rules(w.rules(&[rule("*", Some("grep"), RuleDecision::Deny)]))
        .build();
    let done = engine
        .execute(ToolCall::new("c", "grep_word", json!({"word": "x"})))
        .await;
    assert_eq!(done.decision, Decision::RuleDenied, "{:?}", done.result);
}
