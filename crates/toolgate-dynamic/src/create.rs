//! `create_tool`: an agent writes a tool; a person decides.

use std::fmt::Write as _;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;
use serde_json::Value;
use toolgate_core::{
    Effects, EffectsError, Sensitivity, ToolAnnotations, ToolContext, ToolResult, TypedTool,
    error_chain,
};
use toolgate_store::{Created, DynamicToolKind, DynamicToolScope, NewDynamicTool};

use super::analysis::analyze;
use super::definition::{Draft, Interpreter, Program, check};
use super::names::NameCheck;
use super::tool::Runtime;

/// Arguments of `create_tool`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateToolArgs {
    /// `snake_case`, e.g. `git_recent`.
    pub name: String,
    /// What the tool does, for whoever calls it (one or two sentences).
    pub description: String,
    /// What it runs.
    #[serde(rename = "type")]
    pub kind: KindArg,
    /// The command (`git log -n {{count}} --format=%s`) or the script.
    pub source: String,
    /// JSON Schema of the arguments, e.g. {"type": "object", "properties": {"count": {"type": "integer"}}}.
    #[serde(default)]
    pub parameters: Option<Value>,
    /// For a script: python3, node or sh.
    #[serde(default)]
    #[schemars(schema_with = "interpreter_schema")]
    pub interpreter: Option<Interpreter>,
    /// Who may use it: agent (you, the default) or global.
    #[serde(default)]
    #[schemars(schema_with = "scope_schema")]
    pub scope: Option<ScopeArg>,
}

// The optional choices as plain string enums: the types' own docs and a
// `null` branch would cost every request bytes and say nothing.
fn interpreter_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": "string", "enum": ["python3", "node", "sh"]})
}

fn scope_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": "string", "enum": ["agent", "global"]})
}

/// `create_tool`'s `type`.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum KindArg {
    /// One program; each `{{param}}` is filled with an argument, no shell.
    Command,
    /// Code run by `interpreter`, JSON arguments on stdin.
    Script,
}

/// `create_tool`'s `scope`.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScopeArg {
    /// Only the agent that creates it.
    Agent,
    /// Every agent.
    Global,
}

/// `create_tool`: stores a new tool, pending a person's review.
///
/// # Rules
///
/// 1. The definition is checked as approval and loading will check it
///    (name, description, source, interpreter, schema; see
///    [`DynamicTools`](super::DynamicTools)), and the name must not be
///    taken by another tool (the [`NameCheck`]) or another live dynamic
///    tool (the store, under its lock).
/// 2. A command whose template the command blocklist blocks (`sudo
///    {{cmd}}`, `shutdown -h now`) is refused.
/// 3. An agent has at most `max_per_agent` tools pending or approved.
/// 4. The tool is stored *pending*, with the static analysis's findings
///    for the reviewer; it cannot be called until a person approves it.
/// 5. The call is sensitive (it asks under `confirm-sensitive`) and has no
///    effects outside toolgate's store ([`Effects::none`]).
pub struct CreateTool {
    runtime: Arc<Runtime>,
    agent: String,
    taken: NameCheck,
}

impl std::fmt::Debug for CreateTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreateTool")
            .field("agent", &self.agent)
            .finish_non_exhaustive()
    }
}

impl CreateTool {
    pub(crate) fn new(runtime: Arc<Runtime>, agent: String, taken: NameCheck) -> Self {
        Self {
            runtime,
            agent,
            taken,
        }
    }
}

#[async_trait]
impl TypedTool for CreateTool {
    type Args = CreateToolArgs;
    const NAME: &'static str = "create_tool";
    const DESCRIPTION: &'static str = "Save a new tool for a person to review; it can be called only after they approve it. command: one program whose {{param}} words are filled with arguments, no shell (`git log -n {{count}}`). script: python3, node or sh code reading its JSON arguments on stdin.";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            read_only_hint: Some(false),
            destructive_hint: Some(false),
            idempotent_hint: Some(false),
            open_world_hint: Some(false),
            ..ToolAnnotations::default()
        }
    }

    fn effects(&self, _args: &CreateToolArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, args: CreateToolArgs, ctx: &ToolContext) -> ToolResult {
        let kind = match args.kind {
            KindArg::Command => DynamicToolKind::Command,
            KindArg::Script => DynamicToolKind::Script,
        };
        let draft = Draft {
            name: &args.name,
            description: &args.description,
            kind,
            interpreter: args.interpreter.map(Interpreter::as_str),
            source: &args.source,
            parameters: args.parameters.as_ref(),
        };
        let checked = match check(&self.runtime.config, &draft) {
            Ok(checked) => checked,
            Err(message) => return ToolResult::failure(format!("tool not created: {message}")),
        };
        if let Program::Command { template, .. } = &checked.program {
            let verdict = self.runtime.policy.classify(&template.sample_line("x"));
            if verdict.is_blocked() {
                return ToolResult::failure(format!(
                    "tool not created: blocked command: {}; it is refused in every mode",
                    verdict.reason()
                ));
            }
        }
        if (self.taken)(&args.name) {
            return ToolResult::failure(format!(
                "tool not created: a tool named `{}` exists already; choose another name",
                args.name
            ));
        }
        let findings = analyze(checked.interpreter, &args.source);
        let advice = serde_json::to_value(&findings).unwrap_or(Value::Null);
        let new = NewDynamicTool {
            name: args.name.clone(),
            description: checked.description,
            kind,
            interpreter: checked.interpreter.map(|i| i.as_str().to_owned()),
            source: args.source,
            parameters: checked.parameters,
            scope: match args.scope {
                Some(ScopeArg::Global) => DynamicToolScope::Global,
                Some(ScopeArg::Agent) | None => DynamicToolScope::Agent,
            },
            created_by: self.agent.clone(),
            session_id: ctx.session_id.clone(),
            advice,
        };
        let limit = self.runtime.config.max_per_agent;
        match self.runtime.store.create_dynamic_tool(&new, limit).await {
            Ok(Created::Created(record)) => {
                let mut text = format!(
                    "Created tool `{}` (#{}), pending review: it cannot be called until a person \
                     approves it (`toolgate tools approve {}`). Do not create it again; go on \
                     without it, or tell the user it awaits approval.",
                    record.name, record.id, record.id
                );
                if !findings.is_empty() {
                    text.push_str("\nThe reviewer will see these notes:");
                    for finding in &findings {
                        let _ = write!(
                            text,
                            "\n- line {}: {} (`{}`)",
                            finding.line, finding.reason, finding.matched
                        );
                    }
                }
                ToolResult::success(text)
                    .with_metadata("dynamic_tool_id", record.id)
                    .with_metadata("status", record.status.as_str())
            }
            Ok(Created::NameTaken { id, status }) => ToolResult::failure(format!(
                "tool not created: dynamic tool #{id} is named `{}` already ({}); choose another name",
                args.name,
                status.as_str()
            )),
            Ok(Created::LimitReached { count }) => ToolResult::failure(format!(
                "tool not created: this agent has {count} dynamic tools pending or approved, the \
                 most allowed (tools.dynamic.max_per_agent = {limit})"
            )),
            Ok(_) => ToolResult::failure("tool not created: the store gave an unknown answer"),
            Err(error) => ToolResult::failure(format!(
                "tool not created: the store failed: {}",
                error_chain(&error)
            )),
        }
    }
}
