//! The `Tool` trait and what the gate needs to know about a tool.

use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::schema::schema_for_args;
use crate::{Effects, EffectsError, ToolResult};

/// How a shell command was classified by the command policy.
///
/// The variants are ordered by danger, so the class of a whole command line is
/// the maximum of its parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CommandClass {
    /// Reads or queries only (`ls`, `git status`, `rg`).
    Safe,
    /// Development tooling that builds or tests (`cargo build`, `pytest`).
    Dev,
    /// Anything not known to be safe or dev.
    Dangerous,
}

/// The first sentence of a tool description: up to the first `. ` that
/// does not end an abbreviation (`e.g.`, `i.e.`), or all of it. What a
/// listing shows of a tool (`toolgate tools list`, the unknown-tool error a
/// model reads).
pub fn first_sentence(text: &str) -> &str {
    let mut from = 0;
    while let Some(at) = text[from..].find(". ") {
        let end = from + at + 1;
        let before = &text[..end];
        if !(before.ends_with("e.g.") || before.ends_with("i.e.")) {
            return before;
        }
        from = end;
    }
    text
}

impl CommandClass {
    /// `safe`, `dev` or `dangerous`, as in configuration and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Safe => "safe",
            Self::Dev => "dev",
            Self::Dangerous => "dangerous",
        }
    }
}

/// How much a call can change, which decides whether it needs confirmation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Sensitivity {
    /// Reads only: never asks under `confirm-sensitive`.
    ReadOnly,
    /// Writes, deletes, runs or reaches the outside world: asks under
    /// `confirm-sensitive`.
    Sensitive,
    /// A shell command; whether it asks depends on its class.
    Command(CommandClass),
}

/// Where a tool comes from: what a person deciding about one of its calls
/// is told besides its name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolOrigin {
    /// Built into toolgate (or the library user's own tool).
    #[default]
    Builtin,
    /// A tool of an MCP server, called through toolgate.
    Mcp {
        /// The server's name in the configuration.
        server: String,
        /// The tool's name on that server.
        tool: String,
    },
    /// A tool a model wrote and a person approved.
    Dynamic,
}

/// What a tool's calls may do, declared once for the tool (it is on its
/// [`ToolSpec`](crate::ToolSpec)): the static side of the [`Effects`] each
/// call declares.
///
/// Policies that decide before any call — which guidance the system prompt
/// carries, which tools a read-only agent is offered, which confirmation
/// rules make sense — read these, never a list of tool names. What one
/// particular call does is its [`Effects`]; the gate's decision on that call
/// is its [`Sensitivity`] and the rules over its effects.
///
/// # Kinds
///
/// The first four are MCP's tool annotations, carried as MCP defines them
/// (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`):
/// `None` means the tool did not say, and the accessors read an absent
/// hint the safe way, which is also MCP's default.
///
/// | kind | accessor | absent means |
/// |---|---|---|
/// | read-only: changes nothing around it | [`read_only`](Self::read_only) | no |
/// | destructive: may delete or overwrite (only meaningful when not read-only) | [`destructive`](Self::destructive) | yes |
/// | idempotent: a second identical call changes nothing more | [`idempotent`](Self::idempotent) | no |
/// | open world: reaches systems beyond the workspace (the web, a server) | [`open_world`](Self::open_world) | yes |
///
/// The last three are toolgate's own and have no MCP form; `false` means
/// the tool does not declare them:
///
/// - [`writes_files`](Self::writes_files): its calls create or change the
///   content of workspace files ([`Effect::Write`](crate::Effect::Write)) —
///   the file-editing tools. With one offered, the system prompt carries the
///   edit guidance. Tools that keep their own state in files (memory,
///   persona) do not count, nor does deleting.
/// - [`runs_commands`](Self::runs_commands): every call runs a command line
///   it declares ([`Effect::Command`](crate::Effect::Command)). Only a
///   command prefix can allow such a call, so a confirmation rule that
///   allows the tool without one is refused. A tool only some of whose
///   calls run commands (`process` writing to a shell) leaves it `false`:
///   the rules still judge those calls by their effects.
/// - [`reads_files`](Self::reads_files): a call with `{"path": FILE}`
///   returns the text of that workspace file, and declares that one read
///   ([`Effect::Read`](crate::Effect::Read)) — the tool the agent loop
///   uses to read for a small model the files its task names. A listing
///   or a search of a file declares the same read and does not count.
///
/// A [`TypedTool`] sets the three through its
/// [`WRITES_FILES`](TypedTool::WRITES_FILES),
/// [`RUNS_COMMANDS`](TypedTool::RUNS_COMMANDS) and
/// [`READS_FILES`](TypedTool::READS_FILES) constants.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A human-readable title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// MCP `readOnlyHint`: the tool does not modify its environment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// MCP `destructiveHint`: the tool may perform destructive updates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// MCP `idempotentHint`: calling it twice with the same arguments has
    /// no further effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// MCP `openWorldHint`: the tool interacts with an open world (the web,
    /// other systems).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
    /// Its calls create or change workspace files (see the [kinds](Self)).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub writes_files: bool,
    /// Every call runs a command line it declares (see the [kinds](Self)).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub runs_commands: bool,
    /// A call with `{"path": FILE}` returns that file's text (see the
    /// [kinds](Self)).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reads_files: bool,
}

impl ToolAnnotations {
    /// The annotations that follow from a static sensitivity.
    pub fn from_sensitivity(sensitivity: Sensitivity) -> Self {
        let read_only = matches!(sensitivity, Sensitivity::ReadOnly);
        Self {
            read_only_hint: Some(read_only),
            destructive_hint: Some(!read_only),
            open_world_hint: Some(false),
            ..Self::default()
        }
    }

    /// Whether the tool changes nothing around it. Only a tool that says
    /// so is: an absent hint means no.
    pub fn read_only(&self) -> bool {
        self.read_only_hint == Some(true)
    }

    /// Whether the tool may delete or overwrite. A read-only tool is not;
    /// otherwise an absent hint means yes.
    pub fn destructive(&self) -> bool {
        !self.read_only() && self.destructive_hint != Some(false)
    }

    /// Whether a second identical call changes nothing more. An absent
    /// hint means no.
    pub fn idempotent(&self) -> bool {
        self.idempotent_hint == Some(true)
    }

    /// Whether the tool reaches systems beyond the workspace. An absent
    /// hint means yes.
    pub fn open_world(&self) -> bool {
        self.open_world_hint != Some(false)
    }

    /// The MCP form of the hints: `{"title", "readOnlyHint",
    /// "destructiveHint", "idempotentHint", "openWorldHint"}`, each only when
    /// set. toolgate's own kinds have no MCP form and are left out.
    pub fn mcp(&self) -> serde_json::Map<String, Value> {
        let mut hints = serde_json::Map::new();
        if let Some(title) = &self.title {
            hints.insert("title".into(), Value::from(title.as_str()));
        }
        for (key, hint) in [
            ("readOnlyHint", self.read_only_hint),
            ("destructiveHint", self.destructive_hint),
            ("idempotentHint", self.idempotent_hint),
            ("openWorldHint", self.open_world_hint),
        ] {
            if let Some(hint) = hint {
                hints.insert(key.into(), Value::Bool(hint));
            }
        }
        hints
    }
}

/// Facts about the call in progress that a tool may use.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ToolContext {
    /// The id of the call (the model's tool-call id, or one made up by the caller).
    pub call_id: String,
    /// The agent session this call belongs to, if any.
    pub session_id: Option<String>,
}

impl ToolContext {
    /// A context for the call with this id.
    pub fn new(call_id: impl Into<String>) -> Self {
        Self {
            call_id: call_id.into(),
            session_id: None,
        }
    }

    /// Sets the session id.
    #[must_use]
    pub fn with_session(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }
}

/// A tool as a small model is offered it ([`Tool::compact`]): one line
/// of description, and only the arguments it needs (the others keep their
/// defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compact {
    /// One line.
    pub description: &'static str,
    /// The arguments offered, in order.
    pub arguments: &'static [&'static str],
}

/// A tool the model can call: the object-safe interface the registry and the
/// gate work with.
///
/// Built-in tools usually implement [`TypedTool`] instead, which derives the
/// schema from a `serde` + `schemars` struct and decodes the arguments; MCP and
/// other dynamic tools implement `Tool` directly with a raw JSON Schema.
///
/// # Contract
///
/// - [`execute`](Tool::execute) never panics and never returns an error: a
///   failure is a [`ToolResult::failure`]. (The gate still catches a panic and
///   turns it into a failure, but that is a bug in the tool.)
/// - `execute` is only called with arguments that passed validation against
///   [`args_schema`](Tool::args_schema).
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The name models call it by; must match `^[a-zA-Z0-9_-]{1,64}$`.
    fn name(&self) -> &str;

    /// What the tool does, written for the model.
    fn description(&self) -> &str;

    /// The JSON Schema of the arguments (an object schema).
    fn args_schema(&self) -> Value;

    /// How sensitive this particular call is. Called after validation, with the
    /// arguments that will be executed.
    fn sensitivity(&self, args: &Value) -> Sensitivity;

    /// What the tool's calls may do ([`ToolAnnotations`]). By default,
    /// nothing declared, read the safe way: not read-only, destructive,
    /// not idempotent, open world.
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::default()
    }

    /// How long one call may run before the gate stops it. `None` means the
    /// gate's default.
    fn timeout(&self) -> Option<Duration> {
        None
    }

    /// What this call will do, worked out before it runs, with the tool's
    /// own code (see [`Effects`]). Called after validation, with the
    /// arguments that will be executed. An error refuses the call with its
    /// message (the call could not have run either).
    ///
    /// By default, [`Effects::Opaque`]: right for tools toolgate cannot see
    /// into (MCP, dynamic tools), and a built-in that forgets to declare its
    /// effects is caught by the registry invariant tests.
    fn effects(&self, _args: &Value) -> Result<Effects, EffectsError> {
        Ok(Effects::Opaque)
    }

    /// Whether the tool is only for people checking toolgate itself (the
    /// `echo` tool): callable through the gate, never offered to a model.
    /// By default, no.
    fn diagnostic(&self) -> bool {
        false
    }

    /// Whether the tool is offered to a model now. A tool that only makes
    /// sense in some state of the run (`exit_plan_mode` in plan mode) says
    /// no outside it; the agent loop asks before each step it rebuilds its
    /// offer, and a call of a tool not offered still goes through the gate
    /// (the tool refuses what it cannot do). By default, yes.
    fn offered(&self) -> bool {
        true
    }

    /// Where the tool comes from, for the person approving its calls.
    /// By default, [`ToolOrigin::Builtin`].
    fn origin(&self) -> ToolOrigin {
        ToolOrigin::Builtin
    }

    /// How the tool is offered to a small model, when it is one of the
    /// handful a small model gets (the agent's small profile): a one-line
    /// description and the arguments kept. By default, not offered there.
    fn compact(&self) -> Option<Compact> {
        None
    }

    /// Runs the call.
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult;
}

/// A tool whose arguments are a Rust type: the usual way to write a built-in.
///
/// The schema is generated from `Args` by `schemars`, and the JSON arguments
/// are decoded into `Args` after they pass schema validation. Put
/// `#[serde(deny_unknown_fields)]` on `Args` so that an argument the tool does
/// not know is refused rather than ignored.
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use toolgate_core::{Sensitivity, ToolContext, ToolResult, TypedTool};
///
/// #[derive(Deserialize, JsonSchema)]
/// #[serde(deny_unknown_fields)]
/// struct ShoutArgs {
///     /// The text to shout.
///     text: String,
/// }
///
/// struct Shout;
///
/// #[async_trait::async_trait]
/// impl TypedTool for Shout {
///     type Args = ShoutArgs;
///     const NAME: &'static str = "shout";
///     const DESCRIPTION: &'static str = "Upper-cases a text.";
///     const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;
///
///     async fn run(&self, args: ShoutArgs, _ctx: &ToolContext) -> ToolResult {
///         ToolResult::success(args.text.to_uppercase())
///     }
/// }
/// ```
#[async_trait]
pub trait TypedTool: Send + Sync + 'static {
    /// The decoded arguments.
    type Args: DeserializeOwned + JsonSchema + Send;
    /// See [`Tool::name`].
    const NAME: &'static str;
    /// See [`Tool::description`].
    const DESCRIPTION: &'static str;
    /// The sensitivity of every call, unless [`sensitivity`](TypedTool::sensitivity)
    /// is overridden to decide per call.
    const SENSITIVITY: Sensitivity;
    /// See [`Tool::diagnostic`]. By default, `false`.
    const DIAGNOSTIC: bool = false;
    /// Whether its calls create or change workspace files
    /// ([`ToolAnnotations::writes_files`]). By default, `false`.
    const WRITES_FILES: bool = false;
    /// Whether every call runs a command line it declares
    /// ([`ToolAnnotations::runs_commands`]). By default, `false`.
    const RUNS_COMMANDS: bool = false;
    /// Whether a call with `{"path": FILE}` returns that file's text
    /// ([`ToolAnnotations::reads_files`]). By default, `false`.
    const READS_FILES: bool = false;
    /// See [`Tool::compact`]. By default, `None`.
    const COMPACT: Option<Compact> = None;

    /// Per-call sensitivity, from the raw (already validated) arguments.
    /// By default, [`SENSITIVITY`](TypedTool::SENSITIVITY).
    fn sensitivity(&self, _args: &Value) -> Sensitivity {
        Self::SENSITIVITY
    }

    /// See [`Tool::annotations`]. By default, derived from
    /// [`SENSITIVITY`](TypedTool::SENSITIVITY). Whatever this returns,
    /// `writes_files` and `runs_commands` come from
    /// [`WRITES_FILES`](TypedTool::WRITES_FILES) and
    /// [`RUNS_COMMANDS`](TypedTool::RUNS_COMMANDS).
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::from_sensitivity(Self::SENSITIVITY)
    }

    /// See [`Tool::timeout`].
    fn timeout(&self) -> Option<Duration> {
        None
    }

    /// See [`Tool::offered`]. By default, yes.
    fn offered(&self) -> bool {
        true
    }

    /// See [`Tool::effects`], with decoded arguments. By default,
    /// [`Effects::Opaque`].
    fn effects(&self, _args: &Self::Args) -> Result<Effects, EffectsError> {
        Ok(Effects::Opaque)
    }

    /// Runs the call with decoded arguments.
    async fn run(&self, args: Self::Args, ctx: &ToolContext) -> ToolResult;
}

#[async_trait]
impl<T: TypedTool> Tool for T {
    fn name(&self) -> &str {
        T::NAME
    }

    fn description(&self) -> &str {
        T::DESCRIPTION
    }

    fn args_schema(&self) -> Value {
        schema_for_args::<T::Args>()
    }

    fn sensitivity(&self, args: &Value) -> Sensitivity {
        TypedTool::sensitivity(self, args)
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            writes_files: T::WRITES_FILES,
            runs_commands: T::RUNS_COMMANDS,
            reads_files: T::READS_FILES,
            ..TypedTool::annotations(self)
        }
    }

    fn timeout(&self) -> Option<Duration> {
        TypedTool::timeout(self)
    }

    fn diagnostic(&self) -> bool {
        T::DIAGNOSTIC
    }

    fn compact(&self) -> Option<Compact> {
        T::COMPACT
    }

    fn offered(&self) -> bool {
        TypedTool::offered(self)
    }

    fn effects(&self, args: &Value) -> Result<Effects, EffectsError> {
        let args = T::Args::deserialize(args)
            .map_err(|error| EffectsError::new(format!("invalid arguments: {error}")))?;
        TypedTool::effects(self, &args)
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        // The schema check already ran; this decode only fails where the schema
        // is looser than the type (a number out of a type's range, say).
        match serde_json::from_value::<T::Args>(args) {
            Ok(args) => self.run(args, ctx).await,
            Err(error) => ToolResult::failure(format!("invalid arguments: {error}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Sensitivity, ToolAnnotations, first_sentence};

    #[test]
    fn absent_hints_read_the_safe_way() {
        let hints = |read_only, destructive, idempotent, open_world| ToolAnnotations {
            read_only_hint: read_only,
            destructive_hint: destructive,
            idempotent_hint: idempotent,
            open_world_hint: open_world,
            ..ToolAnnotations::default()
        };
        // (annotations, read_only, destructive, idempotent, open_world)
        let cases = [
            (ToolAnnotations::default(), false, true, false, true),
            (
                hints(Some(true), None, None, None),
                true,
                false,
                false,
                true,
            ),
            // A read-only tool is never destructive, whatever it says.
            (
                hints(Some(true), Some(true), None, None),
                true,
                false,
                false,
                true,
            ),
            (
                hints(Some(false), Some(false), Some(true), Some(false)),
                false,
                false,
                true,
                false,
            ),
            (
                hints(None, Some(false), Some(false), Some(true)),
                false,
                false,
                false,
                true,
            ),
            (
                ToolAnnotations::from_sensitivity(Sensitivity::ReadOnly),
                true,
                false,
                false,
                false,
            ),
            (
                ToolAnnotations::from_sensitivity(Sensitivity::Sensitive),
                false,
                true,
                false,
                false,
            ),
        ];
        for (annotations, read_only, destructive, idempotent, open_world) in cases {
            let got = (
                annotations.read_only(),
                annotations.destructive(),
                annotations.idempotent(),
                annotations.open_world(),
            );
            assert_eq!(
                got,
                (read_only, destructive, idempotent, open_world),
                "{annotations:?}"
            );
        }
    }

    #[test]
    fn the_mcp_form_has_only_mcp_hints() {
        let annotations = ToolAnnotations {
            title: Some("Edit".into()),
            read_only_hint: Some(false),
            idempotent_hint: Some(false),
            writes_files: true,
            runs_commands: true,
            ..ToolAnnotations::default()
        };
        assert_eq!(
            serde_json::Value::Object(annotations.mcp()),
            serde_json::json!({"title": "Edit", "readOnlyHint": false, "idempotentHint": false})
        );
        assert!(ToolAnnotations::default().mcp().is_empty());
    }

    #[test]
    fn first_sentence_skips_abbreviations() {
        for (text, first) in [
            ("Read a text file, whole.", "Read a text file, whole."),
            (
                "Find files by name glob, e.g. `*.rs`. More.",
                "Find files by name glob, e.g. `*.rs`.",
            ),
            (
                "Evaluate, i.e. compute. Then stop.",
                "Evaluate, i.e. compute.",
            ),
            ("No full stop", "No full stop"),
            ("Ends with e.g. ", "Ends with e.g. "),
        ] {
            assert_eq!(first_sentence(text), first);
        }
    }
}
