//! The core model of toolgate: what a tool is, what a call returns, and the
//! registry that holds the tools.
//!
//! - [`Tool`] is the object-safe interface every tool implements: a name, a
//!   description, a JSON Schema for the arguments, a [`Sensitivity`] per call,
//!   MCP-style [`ToolAnnotations`] and an async `execute` that never fails
//!   with an `Err`: it returns a [`ToolResult`].
//! - [`Effects`] are what a call will do — reads, writes with the content
//!   they would leave, deletes, moves, commands, network — declared by the
//!   tool before it runs ([`Tool::effects`]), or [`Effects::Opaque`] where
//!   toolgate cannot know. Every policy reads them, never tool names.
//! - [`TypedTool`] is the convenient way to write a built-in: the arguments are
//!   a `serde` + `schemars` struct, and the schema and decoding come for free.
//! - [`Registry`] holds tools by name, checks names and schemas at
//!   registration, and exports schemas in OpenAI, Anthropic and MCP form
//!   ([`SchemaFormat`]).
//! - [`ArgsValidator`] validates arguments against the JSON Schema itself, so
//!   dynamic and MCP tools get the same checks as built-ins, with messages a
//!   model can act on.
//! - [`Workspace`] is the only way tools touch files: a path sandbox that
//!   resolves beneath its root with the kernel's help (`openat2`
//!   `RESOLVE_BENEATH` via `cap-std`), refuses sensitive files, refuses to
//!   change protected ones, refuses private paths (toolgate's own state)
//!   outright, and writes atomically.
//! - [`private_files`] creates toolgate's own files and directories private
//!   to the user (`0600`, `0700`) whatever the umask, and tightens looser
//!   ones.
//! - [`neutralize`] and [`neutralize_line`] are the one way untrusted text
//!   (from a model, a tool, an MCP server, a skill, a workspace file)
//!   reaches a terminal: controls, bidirectional overrides and invisible
//!   characters become visible escapes.
//! - [`redact`] takes secrets out of what toolgate shows, reports and logs:
//!   credentials in URLs, headers and fields, known key shapes, and the
//!   values given to [`register_secret`].
//! - [`Group`] describes a group of tools once (name, configuration section,
//!   trusted keys, tool names) and builds its tools from a [`GroupContext`]:
//!   the host's catalog of groups is a list of them.
//! - [`ChangeCapture`] says what changed in the workspace around a call, as
//!   [`PathChange`]s (each path's [`FileState`] before and after), whoever
//!   made the change: the gate captures, checkpoints keep the states.
//! - [`address`] says which IP addresses are public: the address half of
//!   the web tools' and the network proxy's SSRF rules.
//!
//! This crate makes no decisions about what may run: that is
//! `toolgate-policy`, and the gate that applies the decisions is
//! `toolgate-engine`.
//!
//! # Example
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use toolgate_core::{Registry, SchemaFormat, Sensitivity, ToolContext, ToolResult, TypedTool};
//!
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct AddArgs {
//!     a: i64,
//!     b: i64,
//! }
//!
//! struct Add;
//!
//! #[async_trait::async_trait]
//! impl TypedTool for Add {
//!     type Args = AddArgs;
//!     const NAME: &'static str = "add";
//!     const DESCRIPTION: &'static str = "Adds two integers.";
//!     const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;
//!
//!     async fn run(&self, args: AddArgs, _ctx: &ToolContext) -> ToolResult {
//!         ToolResult::success((args.a + args.b).to_string())
//!     }
//! }
//!
//! # fn main() -> Result<(), toolgate_core::Error> {
//! let registry = Registry::new();
//! registry.register(Add)?;
//! let add = registry.get("add")?;
//! assert!(add.validate(&serde_json::json!({"a": 1, "b": 2})).is_ok());
//! assert!(add.validate(&serde_json::json!({"a": "1"})).is_err());
//! let schemas = registry.schemas::<&str>(None, SchemaFormat::OpenAi);
//! assert_eq!(schemas[0]["function"]["name"], "add");
//! # Ok(())
//! # }
//! ```

pub use call::ToolCall;
pub use catalog::{
    DataHome, EnvLookup, Group, GroupContext, GroupError, HostEnv, NoParts, OptInSection, Parts,
    ToggleSection,
};
pub use changes::{
    CaptureError, ChangeCapture, ChangeKind, FileState, LinkId, PathChange, describe_changes,
};
pub use diff::unified_diff;
pub use effects::{Change, CommandPlan, Effect, Effects, EffectsError, SandboxProfile};
pub use error::{Error, error_chain};
pub use group::ToolGroup;
pub use name::{MAX_TOOL_NAME_LEN, check_tool_name};
pub use plan::{Plan, PlanBook, PlanBookError, PlanStep, StepStatus};
pub use redact::{MIN_SECRET_CHARS, REDACTED, redact, register_secret};
pub use registry::{RegisteredTool, Registry};
pub use result::ToolResult;
pub use schema::{
    ArgsProblems, ArgsValidator, SchemaFormat, ToolSpec, empty_args, schema_for_args,
};
pub use text::{is_neutral, neutralize, neutralize_line};
pub use tool::{
    CommandClass, Compact, Sensitivity, Tool, ToolAnnotations, ToolContext, ToolOrigin, TypedTool,
    first_sentence,
};
pub use workspace::{
    DEFAULT_PROTECTED_PATTERNS, DEFAULT_SENSITIVE_PATTERNS, DirEntryInfo, EntryKind, PathPatterns,
    WalkReport, WalkedFile, Workspace, WorkspaceBuilder, WorkspaceError, WsPath,
};

#[doc(hidden)]
pub use redact::fuzz_redact;

pub mod address;
pub mod private_files;

mod call;
mod catalog;
mod changes;
mod diff;
mod effects;
mod error;
mod group;
mod name;
mod plan;
mod redact;
mod registry;
mod result;
mod schema;
mod text;
mod tool;
mod workspace;
