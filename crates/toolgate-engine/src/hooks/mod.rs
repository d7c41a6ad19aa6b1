//! Lifecycle hooks: external programs the gate and the agent loop run at
//! fixed points (DESIGN.md §6).
//!
//! # Protocol
//!
//! A hook gets the event as a JSON object on stdin, with Claude Code's field
//! names (`hook_event_name`, `tool_name`, `tool_input`, `tool_response`,
//! `session_id`, `cwd`), and the environment variables `TOOLGATE_EVENT`,
//! `TOOLGATE_TOOL_NAME`, `TOOLGATE_TOOL_INPUT`, `TOOLGATE_FILE`, `TOOLGATE_FILES`,
//! `TOOLGATE_WORKSPACE` and `TOOLGATE_SESSION_ID`. It runs in the workspace
//! root, in the sandbox's standard profile (`toolgate-sandbox`): it may
//! write the workspace but not toolgate's policy files, cannot read secrets,
//! and sees only its own processes.
//!
//! 1. Exit 0: no objection. If stdout is a JSON object, its
//!    `additionalContext`, `updatedInput`, `decision` (`"block"`) and
//!    `reason` are read, flat or under `hookSpecificOutput`.
//! 2. Exit 2: block; stderr is the reason.
//! 3. Any other exit, a timeout or a program that cannot start: a warning and
//!    the call goes on, unless the hook says `on_failure: block`.
//!
//! `pre_tool_use` hooks run in order; each sees the arguments as the previous
//! one rewrote them, and the first block wins. A timeout kills the hook's
//! whole process group. Output is read up to a cap (64 KiB by default per
//! stream); the rest is drained and dropped.
//!
//! # Files
//!
//! The files a tool event is about are the paths of the call's declared
//! [`Effects`](toolgate_core::Effects), in declaration order (an opaque call
//! names none), relative to the workspace root — never guessed from the
//! tool's name or its argument names.
//!
//! 1. A hook with `file_patterns` runs only when one of the call's files
//!    matches, and sees only the files that match.
//! 2. A hook whose `command` or `argv` contains `{file}` runs once per file
//!    it sees (a formatter run on every file a patch touched), with `{file}`
//!    and `TOOLGATE_FILE` set to that file. Any other hook runs once, with
//!    `TOOLGATE_FILE` set to the first file.
//! 3. `TOOLGATE_FILES` holds every file the hook sees, one per line.
//! 4. The legacy `post_edit` hooks run after every call that changes files
//!    (a write, delete or rename among its effects).

mod config;
mod run;

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use regex::Regex;
use serde_json::{Map, Value, json};
use toolgate_core::ToolResult;
use toolgate_sandbox::Sandbox;

pub use config::{HookSpec, HooksConfig, OnFailure};

use crate::stages::{CallView, PostToolUse, PreToolOutcome, PreToolUse};

/// The ten lifecycle events (DESIGN.md §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HookEvent {
    /// Before a tool runs (gate step 4).
    PreToolUse,
    /// After a tool ran (gate step 8).
    PostToolUse,
    /// Before an LLM request.
    PreLlmCall,
    /// After an LLM response.
    PostLlmCall,
    /// A session starts.
    SessionStart,
    /// A session ends.
    SessionEnd,
    /// A run failed.
    OnError,
    /// A budget is nearly spent.
    BudgetWarning,
    /// The conversation was compressed.
    ContextCompress,
    /// The agent says it is done.
    AgentComplete,
}

impl HookEvent {
    /// Every event, in the order of DESIGN.md §6.
    pub const ALL: [Self; 10] = [
        Self::PreToolUse,
        Self::PostToolUse,
        Self::PreLlmCall,
        Self::PostLlmCall,
        Self::SessionStart,
        Self::SessionEnd,
        Self::OnError,
        Self::BudgetWarning,
        Self::ContextCompress,
        Self::AgentComplete,
    ];

    /// The name hooks see in `hook_event_name` and `TOOLGATE_EVENT`, Claude
    /// Code style (`PreToolUse`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::PreLlmCall => "PreLLMCall",
            Self::PostLlmCall => "PostLLMCall",
            Self::SessionStart => "SessionStart",
            Self::SessionEnd => "SessionEnd",
            Self::OnError => "OnError",
            Self::BudgetWarning => "BudgetWarning",
            Self::ContextCompress => "ContextCompress",
            Self::AgentComplete => "AgentComplete",
        }
    }

    /// The configuration key (`pre_tool_use`).
    pub fn config_key(self) -> &'static str {
        match self {
            Self::PreToolUse => "pre_tool_use",
            Self::PostToolUse => "post_tool_use",
            Self::PreLlmCall => "pre_llm_call",
            Self::PostLlmCall => "post_llm_call",
            Self::SessionStart => "session_start",
            Self::SessionEnd => "session_end",
            Self::OnError => "on_error",
            Self::BudgetWarning => "budget_warning",
            Self::ContextCompress => "context_compress",
            Self::AgentComplete => "agent_complete",
        }
    }

    /// The event for a configuration key or a Claude Code name, in any case.
    pub fn parse(name: &str) -> Option<Self> {
        let squashed: String = name
            .chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect();
        Self::ALL
            .into_iter()
            .find(|e| e.as_str().to_lowercase() == squashed)
    }

    fn index(self) -> usize {
        Self::ALL.iter().position(|e| *e == self).unwrap_or(0)
    }
}

/// Why a hook configuration cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HookConfigError {
    /// Neither or both of `command` and `argv`.
    #[error("hook `{0}` needs exactly one of `command` and `argv` (a non-empty list)")]
    Program(String),
    /// A bad `matcher`.
    #[error("hook `{name}`: `matcher` is not a valid regular expression")]
    Matcher {
        /// The hook.
        name: String,
        /// The regex error.
        #[source]
        source: regex::Error,
    },
    /// A bad `file_patterns` entry.
    #[error("hook `{name}`: `file_patterns` entry is not a valid glob")]
    Glob {
        /// The hook.
        name: String,
        /// The glob error.
        #[source]
        source: globset::Error,
    },
    /// A negative or absurd `timeout`.
    #[error("hook `{0}`: `timeout` must be a number of seconds between 0 and 86400")]
    Timeout(String),
    /// The sandbox hooks run in could not be made.
    #[error("the sandbox for hooks could not be made")]
    Sandbox(#[source] toolgate_sandbox::SandboxError),
}

/// What one hook did.
#[derive(Debug, Clone, PartialEq)]
pub struct HookRun {
    /// The hook's name.
    pub name: String,
    /// Its decision.
    pub decision: HookDecision,
    /// `additionalContext` it returned.
    pub additional_context: Option<String>,
    /// `updatedInput` it returned.
    pub updated_input: Option<Value>,
    /// Its exit code, if it exited.
    pub exit_code: Option<i32>,
    /// Its stdout (capped).
    pub stdout: String,
    /// Its stderr (capped).
    pub stderr: String,
}

/// A hook's decision.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HookDecision {
    /// No objection.
    Allow,
    /// Block, with a reason.
    Block(String),
    /// It failed (exit other than 0/2, timeout, missing program), and its
    /// `on_failure` is `allow`: a warning.
    FailedAllowed(String),
}

/// What the hooks of one event decided, together.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HookOutcome {
    /// Every hook that ran, in order.
    pub runs: Vec<HookRun>,
    /// The first block: (hook, reason). Later hooks did not run.
    pub blocked: Option<(String, String)>,
    /// The input as the last rewrite left it, when any hook rewrote it.
    pub updated_input: Option<Value>,
    /// Texts for the model: `additionalContext`s, and
    /// `[Hook NAME: FAILED (exit N)] output` for failing hooks.
    pub context: Vec<String>,
}

#[derive(Debug)]
struct Hook {
    spec: HookSpec,
    matcher: Option<Regex>,
    files: Option<GlobSet>,
    timeout: Duration,
    /// A legacy `post_edit` hook: only after calls that change files.
    after_changes: bool,
}

impl Hook {
    fn compile(spec: HookSpec) -> Result<Self, HookConfigError> {
        let program_ok = match (&spec.command, &spec.argv) {
            (Some(c), None) => !c.trim().is_empty(),
            (None, Some(argv)) => !argv.is_empty(),
            _ => false,
        };
        if !program_ok {
            return Err(HookConfigError::Program(spec.name));
        }
        let matcher = match spec.matcher.as_deref().map(str::trim) {
            None | Some("" | "*") => None,
            Some(m) => Some(Regex::new(&format!("^(?:{m})$")).map_err(|source| {
                HookConfigError::Matcher {
                    name: spec.name.clone(),
                    source,
                }
            })?),
        };
        let files = if spec.file_patterns.is_empty() {
            None
        } else {
            let mut set = GlobSetBuilder::new();
            for pattern in &spec.file_patterns {
                let glob = GlobBuilder::new(pattern)
                    .literal_separator(true)
                    .build()
                    .map_err(|source| HookConfigError::Glob {
                        name: spec.name.clone(),
                        source,
                    })?;
                set.add(glob);
            }
            Some(set.build().map_err(|source| HookConfigError::Glob {
                name: spec.name.clone(),
                source,
            })?)
        };
        let seconds = spec.timeout.unwrap_or(30.0);
        if !(0.0..=86_400.0).contains(&seconds) {
            return Err(HookConfigError::Timeout(spec.name));
        }
        Ok(Self {
            timeout: Duration::from_secs_f64(seconds),
            spec,
            matcher,
            files,
            after_changes: false,
        })
    }

    /// Whether the hook runs for this event, and on which of its files
    /// (see the module's Files rules).
    fn selects<'f>(&self, tool: Option<&str>, about: &'f About) -> Option<Vec<&'f str>> {
        if let (Some(matcher), Some(tool)) = (&self.matcher, tool)
            && !matcher.is_match(tool)
        {
            return None;
        }
        if self.after_changes && !about.changes_files {
            return None;
        }
        let files: Vec<&str> = about
            .files
            .iter()
            .map(String::as_str)
            .filter(|f| self.files.as_ref().is_none_or(|set| set.is_match(f)))
            .collect();
        if self.files.is_some() && files.is_empty() {
            return None;
        }
        Some(files)
    }

    /// Whether the program names `{file}`: it then runs once per file.
    fn per_file(&self) -> bool {
        let in_command = self
            .spec
            .command
            .as_deref()
            .is_some_and(|c| c.contains("{file}"));
        let in_argv = self
            .spec
            .argv
            .iter()
            .flatten()
            .any(|a| a.contains("{file}"));
        in_command || in_argv
    }
}

/// What a tool event is about, from the call's effects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct About {
    /// The files, relative to the workspace root, in declaration order.
    pub files: Vec<String>,
    /// Whether the call changes files (write, delete, rename).
    pub changes_files: bool,
}

impl About {
    /// The files and changes of `effects`, relative to `root`.
    pub fn of(effects: &toolgate_core::Effects, root: &Path) -> Self {
        Self {
            files: effects
                .paths()
                .into_iter()
                .map(|p| relative(root, p))
                .collect(),
            changes_files: !effects.changed_paths().is_empty(),
        }
    }
}

/// Builds a [`HookExecutor`].
#[derive(Debug)]
pub struct HookExecutorBuilder {
    config: HooksConfig,
    root: PathBuf,
    session_id: Option<String>,
    output_cap: usize,
    sandbox: Option<Sandbox>,
}

impl HookExecutorBuilder {
    /// The session id hooks see. By default, none (an empty string).
    #[must_use]
    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    /// The most bytes read from each of a hook's stdout and stderr. By
    /// default, 64 KiB.
    #[must_use]
    pub fn output_cap(mut self, bytes: usize) -> Self {
        self.output_cap = bytes.max(1);
        self
    }

    /// The sandbox hooks run in (`toolgate-sandbox`: the standard profile).
    /// By default, a sandbox of its own over the workspace root with the
    /// default settings; pass the front end's shared one so that every
    /// process of a session is configured alike.
    #[must_use]
    pub fn sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// Compiles matchers and globs.
    pub fn build(self) -> Result<HookExecutor, HookConfigError> {
        let sandbox = match self.sandbox {
            Some(sandbox) => sandbox,
            None => Sandbox::builder(&self.root)
                .build()
                .map_err(HookConfigError::Sandbox)?,
        };
        let HooksConfig {
            pre_tool_use,
            mut post_tool_use,
            pre_llm_call,
            post_llm_call,
            session_start,
            session_end,
            on_error,
            budget_warning,
            context_compress,
            agent_complete,
            post_edit,
        } = self.config;
        let legacy = post_edit.len();
        post_tool_use.extend(post_edit);
        let lists = [
            pre_tool_use,
            post_tool_use,
            pre_llm_call,
            post_llm_call,
            session_start,
            session_end,
            on_error,
            budget_warning,
            context_compress,
            agent_complete,
        ];
        let mut hooks: Vec<Vec<Hook>> = Vec::with_capacity(lists.len());
        for list in lists {
            hooks.push(
                list.into_iter()
                    .map(Hook::compile)
                    .collect::<Result<_, _>>()?,
            );
        }
        // The legacy `post_edit` hooks were appended to `post_tool_use`.
        if let Some(post) = hooks.get_mut(HookEvent::PostToolUse.index()) {
            let first_legacy = post.len() - legacy;
            for hook in &mut post[first_legacy..] {
                hook.after_changes = true;
            }
        }
        Ok(HookExecutor {
            hooks,
            root: self.root,
            session_id: self.session_id.unwrap_or_default(),
            output_cap: self.output_cap,
            sandbox,
        })
    }
}

/// Runs the configured hooks of an event.
///
/// Plugs into the gate as both [`PreToolUse`] and [`PostToolUse`]; the agent
/// loop calls [`emit`](Self::emit) for the other events.
#[derive(Debug)]
pub struct HookExecutor {
    hooks: Vec<Vec<Hook>>,
    root: PathBuf,
    session_id: String,
    output_cap: usize,
    sandbox: Sandbox,
}

impl HookExecutor {
    /// A builder over `config`, running hooks in `root`.
    pub fn builder(config: HooksConfig, root: impl Into<PathBuf>) -> HookExecutorBuilder {
        HookExecutorBuilder {
            config,
            root: root.into(),
            session_id: None,
            output_cap: 64 * 1024,
            sandbox: None,
        }
    }

    /// The workspace root hooks run in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The configured hooks by event (`{"pre_tool_use": ["fmt", …], …}`),
    /// with the session id they see.
    pub fn summary(&self) -> Value {
        let mut map = Map::new();
        for event in HookEvent::ALL {
            let names: Vec<&str> = self
                .hooks
                .get(event.index())
                .into_iter()
                .flatten()
                .map(|h| h.spec.name.as_str())
                .collect();
            if !names.is_empty() {
                map.insert(event.config_key().to_owned(), json!(names));
            }
        }
        json!({"hooks": map, "session_id": self.session_id})
    }

    /// How many hooks are configured for `event`.
    pub fn count(&self, event: HookEvent) -> usize {
        self.hooks.get(event.index()).map_or(0, Vec::len)
    }

    /// Runs the hooks of `event` that match `payload`, in order.
    ///
    /// `payload` is the event's JSON object; `hook_event_name`,
    /// `session_id` and `cwd` are added. For tool events it carries
    /// `tool_name` and `tool_input` (and `tool_response` after the call); the
    /// agent loop passes whatever its event has (`model`, `messages`,
    /// `reason`, …). A rewrite (`updatedInput`) replaces `tool_input` for the
    /// next hook. The first block stops the list.
    pub async fn emit(&self, event: HookEvent, payload: Value) -> HookOutcome {
        self.emit_about(event, payload, &About::default()).await
    }

    /// Like [`emit`](Self::emit), for a tool event about the files of a
    /// call's effects (see the module's Files rules).
    pub async fn emit_about(&self, event: HookEvent, payload: Value, about: &About) -> HookOutcome {
        let mut payload = match payload {
            Value::Object(map) => map,
            other => {
                let mut map = Map::new();
                map.insert("data".to_owned(), other);
                map
            }
        };
        payload.insert("hook_event_name".to_owned(), json!(event.as_str()));
        payload
            .entry("session_id")
            .or_insert_with(|| json!(self.session_id));
        payload.insert(
            "cwd".to_owned(),
            json!(self.root.to_string_lossy().into_owned()),
        );
        let mut outcome = HookOutcome::default();
        let Some(hooks) = self.hooks.get(event.index()) else {
            return outcome;
        };
        'hooks: for hook in hooks {
            let tool = payload
                .get("tool_name")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let Some(files) = hook.selects(tool.as_deref(), about) else {
                continue;
            };
            let all = files.join("\n");
            let runs: Vec<Option<&str>> = if hook.per_file() && files.len() > 1 {
                files.iter().copied().map(Some).collect()
            } else {
                vec![files.first().copied()]
            };
            for file in runs {
                let run = run::run(self, hook, event, &payload, tool.as_deref(), file, &all).await;
                if let Some(context) = &run.additional_context {
                    outcome.context.push(context.clone());
                }
                if let Some(updated) = &run.updated_input {
                    payload.insert("tool_input".to_owned(), updated.clone());
                    outcome.updated_input = Some(updated.clone());
                }
                let stop = match &run.decision {
                    HookDecision::Allow => false,
                    HookDecision::FailedAllowed(text) => {
                        tracing::warn!(hook = %run.name, event = event.as_str(), "{text}");
                        outcome.context.push(text.clone());
                        false
                    }
                    HookDecision::Block(reason) => {
                        outcome.blocked = Some((run.name.clone(), reason.clone()));
                        true
                    }
                };
                outcome.runs.push(run);
                if stop {
                    break 'hooks;
                }
            }
        }
        outcome
    }
}

/// `path` relative to `root` when it is inside it, else as given.
fn relative(root: &Path, path: &str) -> String {
    let p = Path::new(path);
    if p.is_absolute() {
        if let Ok(rel) = p.strip_prefix(root) {
            return rel.to_string_lossy().into_owned();
        }
        return path.to_owned();
    }
    path.trim_start_matches("./").to_owned()
}

fn tool_payload(call: &CallView<'_>) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("tool_name".to_owned(), json!(call.tool.name()));
    map.insert("tool_input".to_owned(), call.args.clone());
    map.insert("tool_use_id".to_owned(), json!(call.call_id));
    if let Some(session) = call.session_id {
        map.insert("session_id".to_owned(), json!(session));
    }
    map
}

#[async_trait]
impl PreToolUse for HookExecutor {
    fn describe(&self) -> Value {
        self.summary()
    }

    async fn pre_tool_use(&self, call: &CallView<'_>) -> PreToolOutcome {
        if self.count(HookEvent::PreToolUse) == 0 {
            return PreToolOutcome::allow();
        }
        let about = About::of(call.effects, &self.root);
        let outcome = self
            .emit_about(
                HookEvent::PreToolUse,
                Value::Object(tool_payload(call)),
                &about,
            )
            .await;
        match outcome.blocked {
            Some((hook, reason)) => PreToolOutcome::Block { hook, reason },
            None => PreToolOutcome::Continue {
                updated_input: outcome.updated_input,
                additional_context: outcome.context,
            },
        }
    }
}

#[async_trait]
impl PostToolUse for HookExecutor {
    fn describe(&self) -> Value {
        self.summary()
    }

    async fn post_tool_use(&self, call: &CallView<'_>, result: &ToolResult) -> Vec<String> {
        if self.count(HookEvent::PostToolUse) == 0 {
            return Vec::new();
        }
        let mut payload = tool_payload(call);
        payload.insert(
            "tool_response".to_owned(),
            json!({
                "success": result.success,
                "output": result.output,
                "error": result.error,
            }),
        );
        let about = About::of(call.effects, &self.root);
        let outcome = self
            .emit_about(HookEvent::PostToolUse, Value::Object(payload), &about)
            .await;
        let mut context = outcome.context;
        if let Some((hook, reason)) = outcome.blocked {
            context.push(format!("[Hook {hook}] {reason}"));
        }
        context
    }
}
