//! Dynamic tools (seed 002, issue 17 item 7): tools an agent writes at run
//! time, which a person approves before anything can call them.
//!
//! - [`CreateTool`] (`create_tool(name, description, type, source,
//!   parameters, interpreter, scope)`) checks a definition and stores it
//!   *pending* in a [`DynamicToolStore`], with the [static analysis's
//!   findings](analysis) for the reviewer.
//! - A person reviews with [`review::pending`], [`review::approve`] and
//!   [`review::reject`] (`toolgate tools pending|approve|reject`), whose
//!   text [`review::render_pending`] and [`review::render_review`] write.
//! - [`DynamicTools::sync`] registers the approved tools an agent may use
//!   into a running [`Registry`] — at start-up, and before each step so an
//!   approval given from another process shows up in a running agent.
//! - A [`DynamicTool`] runs through the gate like any tool (validation of
//!   its declared schema, guardrails, hooks, confirmation, audit), and its
//!   program through the sandbox: a `command` is an argument vector filled
//!   word by word, never a shell line ([`template`]); a `script` runs
//!   `python3`, `node` or `sh` with its JSON arguments on stdin.
//!
//! # Rules
//!
//! 1. Nothing runs before a person approves it: a pending or rejected tool
//!    is never registered, so calling it is the gate's unknown-tool error;
//!    a tool rejected after it was loaded refuses to run
//!    ([`DynamicTool`] rule 3).
//! 2. The same checks (below, under Definitions) apply when a tool is
//!    created, approved and loaded, so a record changed behind toolgate's
//!    back cannot load something `create_tool` would refuse.
//! 3. Static analysis is advice shown to the reviewer, never a boundary.
//!    The boundary is the kernel: dynamic tools run in a sandbox of their
//!    own with the network off, whatever the configuration allows other
//!    commands, writing only beneath the workspace and a private `/tmp`,
//!    with secrets and the home directory hidden
//!    (`toolgate_sandbox::Sandbox` rules).
//! 4. Dynamic tools are sensitive: every call asks under
//!    `confirm-sensitive` unless a rule allows it. A command tool declares
//!    the line each call runs, so command rules judge it as they judge
//!    `run_command`; a script tool is opaque, and no command or path rule
//!    can allow it.
//! 5. With `enabled: false`, [`DynamicTools::group`] offers nothing and
//!    [`DynamicTools::sync`] loads nothing; the review functions still
//!    work, so tools can be reviewed with the feature off.
//! 6. The command blocklist holds for command tools as for `run_command`:
//!    a template it blocks is not created, and a call whose filled line it
//!    blocks does not run, in every mode.
//!
//! # Definitions
//!
//! 1. The name follows [`check_name`]: `snake_case`, at most 64 bytes, not
//!    a built-in's, not `mcp_…`.
//! 2. The description is plain text (no control characters but newlines
//!    and tabs) of at most `max_description_chars` characters.
//! 3. The source is at most `max_source_bytes` bytes, without NUL.
//! 4. A command is a [`template`] whose placeholders are exactly its
//!    schema's top-level properties, each a string, number, integer or
//!    boolean, each made required; it names no interpreter.
//! 5. A script runs with `python3`, `node` or `sh`: the `interpreter`
//!    argument, else the program its `#!` line names.
//! 6. The schema is an object schema (`"type": "object"` added when
//!    missing, `additionalProperties: false` unless it says otherwise, a
//!    JSON string holding an object accepted), refers to nothing outside
//!    itself (`$ref` only to `#…`, no `$id`), is at most
//!    `max_schema_bytes`, and compiles as the gate compiles it. A
//!    parameter whose schema holds `"x-allow-dash": true` ([`ALLOW_DASH`])
//!    may begin a command word with `-`.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use serde_json::json;
//! use toolgate_core::{Registry, ToolContext};
//! use toolgate_sandbox::Sandbox;
//! use toolgate_store::SqliteStore;
//! use toolgate_dynamic::{DynamicConfig, DynamicTools, registry_names, review};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let store = Arc::new(SqliteStore::open(dir.path().join("toolgate.db"))?);
//! let config = DynamicConfig { enabled: true, ..DynamicConfig::default() };
//! let dynamic = DynamicTools::new(config.clone(), store.clone(), Sandbox::builder(dir.path()))?;
//!
//! let registry = Arc::new(Registry::new());
//! let group = dynamic.group("build", registry_names(&registry)).ok_or("disabled")?;
//! for tool in group.tools {
//!     registry.register_arc(tool)?;
//! }
//! // The agent's call (through the gate, in a real run).
//! let create = registry.get("create_tool")?;
//! let args = json!({"name": "word_count", "description": "Counts the words of a file.",
//!                   "type": "command", "source": "wc -w {{path}}",
//!                   "parameters": {"properties": {"path": {"type": "string"}}}});
//! assert!(create.tool().execute(args, &ToolContext::new("c1")).await.success);
//!
//! // Pending: not loaded.
//! assert_eq!(dynamic.sync(&registry, "build").await?.loaded.len(), 0);
//! // A person approves it (`toolgate tools approve 1`), then the next sync loads it.
//! let pending = review::pending(store.as_ref()).await?;
//! review::approve(store.as_ref(), &config, pending[0].id).await?;
//! assert_eq!(dynamic.sync(&registry, "build").await?.loaded, ["word_count"]);
//! assert!(registry.has("word_count"));
//! # Ok(())
//! # }
//! ```

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use toolgate_core::{Registry, Tool};
use toolgate_policy::CommandPolicy;
use toolgate_sandbox::{SandboxBuilder, SandboxError};
use toolgate_store::{DynamicToolRecord, DynamicToolStore, StoreError};

use toolgate_core::ToolGroup;

pub use analysis::{Category, Finding, analyze};
pub use create::{CreateTool, CreateToolArgs, KindArg, ScopeArg};
pub use definition::Interpreter;
pub use names::{
    MAX_NAME_LEN, NameCheck, RESERVED_PREFIXES, ReservedNames, check_name, registry_names,
};
pub use params::ALLOW_DASH;
pub use template::{FillError, MAX_WORDS, Template, TemplateError};
pub use tool::DynamicTool;

pub mod analysis;
mod create;
mod definition;
mod names;
mod params;
pub mod review;
pub mod template;
mod tool;

use definition::{Draft, check};
use tool::{Runtime, TITLE_PREFIX, title_of};

/// The system-prompt block of the `dynamic` group.
pub const INSTRUCTIONS: &str = "## Creating tools
`create_tool` saves a tool for a person to review; it cannot be called until they approve it, so \
finish the task without it. Prefer type command (one program; each {{param}} fills one argument; \
no shell, so no pipes, `;` or redirections). A script reads its arguments as JSON on stdin and \
prints its result. Tools run without network and write only in the workspace.";

/// The `tools.dynamic` section of `toolgate.yaml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DynamicConfig {
    /// Whether `create_tool` is offered and approved tools are loaded.
    /// Default: false.
    pub enabled: bool,
    /// The most tools one agent may have pending or approved. Default: 20.
    pub max_per_agent: usize,
    /// Seconds one call may run before it and everything it started are
    /// killed (1 to 3600). Default: 30.
    pub timeout: u64,
    /// Lines of output kept per stream, half from the start and half from
    /// the end. Default: 200.
    pub max_output_lines: usize,
    /// The longest source, in bytes. Default: 32,768.
    pub max_source_bytes: usize,
    /// The largest argument schema, in bytes of compact JSON (it is sent
    /// with every request). Default: 4,096.
    pub max_schema_bytes: usize,
    /// The longest description, in characters (it is sent with every
    /// request). Default: 300.
    pub max_description_chars: usize,
    /// Refuse to run a dynamic tool where the kernel cannot provide the
    /// full sandbox. Default: true.
    pub sandbox_required: bool,
    /// The names of toolgate's own tools, which no dynamic tool may take
    /// ([`check_name`]). Not read from the file: the host fills it from
    /// its catalog of groups. Default: none.
    #[serde(skip)]
    pub reserved: ReservedNames,
}

impl Default for DynamicConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            max_per_agent: 20,
            timeout: 30,
            max_output_lines: 200,
            max_source_bytes: 32 * 1024,
            max_schema_bytes: 4096,
            max_description_chars: 300,
            sandbox_required: true,
            reserved: ReservedNames::default(),
        }
    }
}

/// The `dynamic` group, `tools.dynamic` (off by default): `create_tool`
/// and the tools it made once a person approved them.
///
/// They depend on the agent (each agent has its own), so the gate
/// registers them for the agent it serves ([`DynamicTools::group`],
/// [`DynamicTools::sync`]); the catalog's build offers nothing, and the
/// entry is there for the section, the reserved name and the docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct DynamicGroup;

impl toolgate_core::Group for DynamicGroup {
    fn name(&self) -> &'static str {
        "dynamic"
    }

    fn section_key(&self) -> Option<&'static str> {
        Some("dynamic")
    }

    fn tool_names(&self) -> &'static [&'static str] {
        const NAMES: &[&str] = &[<CreateTool as toolgate_core::TypedTool>::NAME];
        NAMES
    }

    fn build(
        &self,
        _ctx: &toolgate_core::GroupContext<'_>,
    ) -> Result<ToolGroup, toolgate_core::GroupError> {
        Ok(ToolGroup::new("dynamic", INSTRUCTIONS, Vec::new()))
    }
}

/// Errors of the review and of loading.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DynamicError {
    /// The store failed.
    #[error("the dynamic tool store failed")]
    Store(#[source] StoreError),
    /// No tool has this id.
    #[error("no dynamic tool has id {0}; list them with `toolgate tools pending`")]
    NotFound(i64),
    /// The tool was rejected, which is final.
    #[error(
        "dynamic tool #{id} `{name}` was rejected; a rejected tool stays rejected (the agent can create it again)"
    )]
    Rejected {
        /// The tool's id.
        id: i64,
        /// Its name.
        name: String,
    },
    /// The stored definition does not pass the checks (rule 2).
    #[error("dynamic tool #{id} `{name}` is not valid: {reason}")]
    Invalid {
        /// The tool's id.
        id: i64,
        /// Its name.
        name: String,
        /// Why.
        reason: String,
    },
    /// The sandbox dynamic tools run in could not be built.
    #[error("cannot build the sandbox dynamic tools run in")]
    Sandbox(#[source] SandboxError),
}

/// What one [`DynamicTools::sync`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SyncReport {
    /// Tools registered now, by name.
    pub loaded: Vec<String>,
    /// Of those, the ones that replaced an older dynamic tool of the same
    /// name (rejected since, and created again).
    pub replaced: Vec<String>,
    /// Approved tools left out: their name is held by a tool that is not a
    /// dynamic tool, or they do not pass the checks any more.
    pub skipped: Vec<Skipped>,
}

/// An approved tool [`DynamicTools::sync`] left out.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Skipped {
    /// The tool's id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Why.
    pub reason: String,
}

/// The dynamic tools of one store: the `create_tool` tool, loading
/// approved tools into registries, and the sandbox they run in.
///
/// Cheap to share behind an [`Arc`]; one per process is enough (agents
/// differ only in the `agent` passed to [`group`](Self::group) and
/// [`sync`](Self::sync)).
pub struct DynamicTools {
    runtime: Arc<Runtime>,
    /// Skipped tools already reported with `tracing`, so that a sync
    /// before every step does not repeat the warning.
    warned: Mutex<BTreeSet<(i64, String)>>,
}

impl std::fmt::Debug for DynamicTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicTools")
            .field("config", &self.runtime.config)
            .finish_non_exhaustive()
    }
}

impl DynamicTools {
    /// Dynamic tools over `store`, run in a sandbox built from `sandbox`
    /// with the network switched off (rule 3). Pass the builder the host
    /// builds its own sandbox from, so that sensitive and protected paths,
    /// the environment policy and the sandbox mode are the same.
    pub fn new(
        config: DynamicConfig,
        store: Arc<dyn DynamicToolStore>,
        sandbox: SandboxBuilder,
    ) -> Result<Self, DynamicError> {
        let sandbox = sandbox
            .network(false)
            .build()
            .map_err(DynamicError::Sandbox)?;
        Ok(Self {
            runtime: Arc::new(Runtime {
                store,
                sandbox,
                config,
                policy: Arc::new(CommandPolicy::default()),
            }),
            warned: Mutex::new(BTreeSet::new()),
        })
    }

    /// Sets the command policy whose blocklist command tools obey (pass
    /// the host's, with the configured `blocked_commands`). By default,
    /// the built-in one. Set it before handing out tools: those made
    /// earlier keep the policy they were made with.
    #[must_use]
    pub fn command_policy(mut self, policy: Arc<CommandPolicy>) -> Self {
        Arc::make_mut(&mut self.runtime).policy = policy;
        self
    }

    /// `create_tool` for `agent`, refusing the names `taken` says are taken
    /// (usually [`registry_names`] of the agent's registry).
    pub fn create_tool(&self, agent: &str, taken: NameCheck) -> Arc<dyn Tool> {
        Arc::new(CreateTool::new(
            Arc::clone(&self.runtime),
            agent.to_owned(),
            taken,
        ))
    }

    /// The `dynamic` tool group for `agent`: `create_tool` and
    /// [`INSTRUCTIONS`]; `None` when the feature is off (rule 5).
    pub fn group(&self, agent: &str, taken: NameCheck) -> Option<ToolGroup> {
        self.runtime.config.enabled.then(|| {
            ToolGroup::new(
                "dynamic",
                INSTRUCTIONS,
                vec![self.create_tool(agent, taken)],
            )
        })
    }

    /// The tool of an approved record, checked (rule 2). The status is not
    /// looked at here: a tool not approved refuses to run anyway.
    pub fn load(&self, record: &DynamicToolRecord) -> Result<DynamicTool, DynamicError> {
        let checked = check(&self.runtime.config, &Draft::of(record)).map_err(|reason| {
            DynamicError::Invalid {
                id: record.id,
                name: record.name.clone(),
                reason,
            }
        })?;
        Ok(DynamicTool::new(record, checked, Arc::clone(&self.runtime)))
    }

    /// Registers into `registry` the approved tools `agent` may use that it
    /// does not hold yet.
    ///
    /// # Rules
    ///
    /// 1. Nothing happens when the feature is off.
    /// 2. A tool already registered (the same record) is left as it is; an
    ///    older dynamic tool of the same name (rejected since, then created
    ///    again and approved) is replaced.
    /// 3. A name held by any other tool is never taken over: the dynamic
    ///    tool is skipped (said once with `tracing`).
    /// 4. A record that fails the checks is skipped (said once).
    /// 5. Only a store failure is an error; the registry is left as it
    ///    was before the failing read.
    pub async fn sync(&self, registry: &Registry, agent: &str) -> Result<SyncReport, DynamicError> {
        let mut report = SyncReport::default();
        if !self.runtime.config.enabled {
            return Ok(report);
        }
        let records = self
            .runtime
            .store
            .approved_dynamic_tools_for(agent)
            .await
            .map_err(DynamicError::Store)?;
        for record in records {
            let mut replace = false;
            if let Ok(existing) = registry.get(&record.name) {
                match existing.spec().annotations.title.as_deref() {
                    Some(title) if title == title_of(record.id) => continue,
                    Some(title) if title.starts_with(TITLE_PREFIX) => replace = true,
                    _ => {
                        self.skip(
                            &mut report,
                            &record,
                            "another tool of that name is registered".to_owned(),
                        );
                        continue;
                    }
                }
            }
            let tool: Arc<dyn Tool> = match self.load(&record) {
                Ok(tool) => Arc::new(tool),
                Err(error) => {
                    let reason = match error {
                        DynamicError::Invalid { reason, .. } => reason,
                        other => other.to_string(),
                    };
                    self.skip(&mut report, &record, reason);
                    continue;
                }
            };
            let registered = if replace {
                registry.register_or_replace(tool)
            } else {
                registry.register_arc(tool)
            };
            match registered {
                Ok(()) => {
                    tracing::info!(tool = record.name, id = record.id, "dynamic tool loaded");
                    if replace {
                        report.replaced.push(record.name.clone());
                    }
                    report.loaded.push(record.name);
                }
                Err(error) => self.skip(&mut report, &record, error.to_string()),
            }
        }
        Ok(report)
    }

    fn skip(&self, report: &mut SyncReport, record: &DynamicToolRecord, reason: String) {
        let first = self
            .warned
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert((record.id, reason.clone()));
        if first {
            tracing::warn!(
                tool = record.name,
                id = record.id,
                "approved dynamic tool not loaded: {reason}"
            );
        }
        report.skipped.push(Skipped {
            id: record.id,
            name: record.name.clone(),
            reason,
        });
    }
}
