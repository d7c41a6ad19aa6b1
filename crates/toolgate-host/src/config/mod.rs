//! Configuration: the typed sections, and loading them in layers.
//!
//! # Rules
//!
//! Layers are applied in this order, a later layer winning key by key
//! (mappings merge; scalars and lists replace):
//!
//! 1. built-in defaults;
//! 2. the workspace file, `WORKSPACE/toolgate.yaml` (or the file given by
//!    `--config` / `TOOLGATE_CONFIG`, which must exist) — only the keys
//!    [`crate::config::trust`] lets apply untrusted, unless the file is trusted;
//! 3. the user file, `$XDG_CONFIG_HOME/toolgate/config.yaml` or
//!    `~/.config/toolgate/config.yaml`;
//! 4. `TOOLGATE_<SECTION>__<KEY>` environment variables;
//! 5. command-line flags (`--mode`, `--dry-run`).
//!
//! Each layer is checked on its own before merging, so an unknown key or a
//! wrong type is reported with the layer it came from (file and line, or the
//! variable's name). Relative paths in the configuration are relative to the
//! workspace root.
//!
//! The workspace file is read once: the bytes hashed for the trust check
//! are the bytes parsed, so the file cannot change between the check and
//! the use.

pub mod env_vars;
pub(crate) mod rules_file;
pub mod trust;
pub(crate) mod yaml_edit;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_yaml_ng::{Mapping, Value};
use toolgate_policy::{ConfirmationMode, ConfirmationRule};

use crate::network::NetworkSetting;
use trust::{ReviewItem, Trust, TrustError};

/// The whole configuration.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// The workspace and file access.
    pub workspace: WorkspaceSection,
    /// When to ask before running a call.
    pub confirmation: ConfirmationSection,
    /// The JSONL audit file, and whether calls are audited in the store.
    pub audit: AuditSection,
    /// Where sessions, the audit and the assistant tools' data are kept.
    pub store: StoreSection,
    /// `run_command` and background processes.
    pub commands: CommandsSection,
    /// Per-tool options.
    pub tools: crate::assembly::catalog::ToolsSection,
    /// Lifecycle hooks (DESIGN.md §6).
    pub hooks: toolgate_engine::HooksConfig,
    /// Deterministic guardrails (DESIGN.md §7).
    pub guardrails: toolgate_engine::GuardrailsConfig,
    /// MCP servers whose tools are used as local tools.
    pub mcp: toolgate_mcp::McpConfig,
    /// The model `toolgate run` talks to.
    pub llm: LlmSection,
    /// Custom agents (and overrides of `build`, `plan`, `review`).
    pub agents: std::collections::BTreeMap<String, toolgate_agent::AgentConfig>,
    /// Intent routing: one cheap model call picks the tool categories a
    /// task needs, and only their tools are offered (off by default).
    pub routing: toolgate_agent::RoutingConfig,
    /// Skills (`SKILL.md`): discovery and the `skill` tool.
    pub skills: crate::assembly::skills::SkillsSection,
    /// The web UI (`toolgate ui`): each agent's permission toggle.
    pub ui: UiSection,
}

/// `ui:` — what the web UI saves in the user's configuration file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UiSection {
    /// Each agent's permission toggle (seed 004): `sandbox` or `full`.
    /// Runs the UI starts use it as the agent's confirmation mode; the
    /// `--mode` flag still wins. Default: none (the agent's own mode).
    pub permissions: std::collections::BTreeMap<String, AgentPermission>,
}

/// An agent's permission in the web UI.
///
/// Both keep every check that does not ask a person: paths are judged
/// against the workspace, the guardrails, the blocklist, the rules and
/// the kernel sandbox apply. Only whether a person is asked changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentPermission {
    /// Ask before sensitive calls (`confirm-sensitive`).
    Sandbox,
    /// Ask nothing (`yolo`); `ask` rules still ask.
    Full,
}

impl AgentPermission {
    /// The confirmation mode it stands for.
    pub fn mode(self) -> ConfirmationMode {
        match self {
            Self::Sandbox => ConfirmationMode::ConfirmSensitive,
            Self::Full => ConfirmationMode::Yolo,
        }
    }

    /// `sandbox` or `full`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sandbox => "sandbox",
            Self::Full => "full",
        }
    }
}

impl std::str::FromStr for AgentPermission {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "sandbox" => Ok(Self::Sandbox),
            "full" => Ok(Self::Full),
            other => Err(format!(
                "unknown permission `{other}`: use `sandbox` or `full`"
            )),
        }
    }
}

/// Which wire format the model server speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LlmProvider {
    /// OpenAI-compatible chat completions (OpenAI, Ollama, llama.cpp, vLLM,
    /// LM Studio, `OpenRouter`).
    #[default]
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

/// `llm:`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LlmSection {
    /// The wire format. Default: openai.
    pub provider: LlmProvider,
    /// The model name. Required by `toolgate run`.
    pub model: Option<String>,
    /// The server's base URL. Default: `https://api.openai.com/v1`
    /// (`https://api.anthropic.com/v1` for anthropic).
    pub base_url: Option<String>,
    /// The environment variable that holds the API key (never the key
    /// itself). Default: none (local servers need no key).
    pub api_key_env: Option<String>,
    /// Seconds the model server may stay silent: before the first byte of
    /// an answer, and between two reads of a streamed one. Default: 120.
    pub timeout: u64,
    /// Retries on 429, 5xx and connection errors. Default: 3.
    pub max_retries: u32,
    /// Stream answers. Default: true.
    pub stream: bool,
    /// `max_tokens` per answer. Default: 4096 (at most a quarter of the
    /// context window is kept for an answer).
    pub max_tokens: u32,
    /// Sampling temperature (0 to 2) for every request. Default (omitted
    /// or `null`): 0.2, low so that tool calls come out exact (see
    /// [`toolgate_agent::DEFAULT_TEMPERATURE`]); `server`: none is sent,
    /// the server's own default applies.
    pub temperature: Temperature,
    /// The model's context window in tokens, when the server does not say
    /// (llama.cpp `/props`, Ollama `/api/show` and vLLM's model list do;
    /// what they say wins). Default: 32768. Every request is kept inside
    /// it: compression, tool-output cuts and the answer's `max_tokens`
    /// scale with it.
    pub context_window: Option<u32>,
    /// USD per million input tokens, for cost reports. Default: none.
    pub input_price_per_mtok: Option<f64>,
    /// USD per million output tokens. Default: none.
    pub output_price_per_mtok: Option<f64>,
    /// Cost budget of one run in USD; needs the prices. Default: none.
    pub budget_usd: Option<f64>,
    /// `auto` (default): tool calls a model writes as text (bare JSON,
    /// `<tool_call>` tags, …) are recovered and run through the gate; `off`:
    /// such text is the model's answer.
    pub text_tool_calls: TextToolCalls,
    /// Providers tried in order when the model fails after its retries, or
    /// takes no tools and the step needs them (seed 002's
    /// `LLMClientWithFallback`). Default: none.
    pub fallback: Vec<toolgate_agent::FallbackEntry>,
}

/// `llm.text_tool_calls`
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TextToolCalls {
    /// Recover them.
    #[default]
    Auto,
    /// Leave them as text.
    Off,
}

impl Default for LlmSection {
    fn default() -> Self {
        Self {
            provider: LlmProvider::Openai,
            model: None,
            base_url: None,
            api_key_env: None,
            timeout: 120,
            max_retries: 3,
            stream: true,
            max_tokens: 4096,
            temperature: Temperature::default(),
            context_window: None,
            input_price_per_mtok: None,
            output_price_per_mtok: None,
            budget_usd: None,
            text_tool_calls: TextToolCalls::Auto,
            fallback: Vec::new(),
        }
    }
}

/// `workspace:`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkspaceSection {
    /// Whether `delete_file` may delete. Default: false.
    pub allow_delete: bool,
    /// The largest file `read_file` returns whole, in bytes. Default: 1 MiB.
    pub max_file_size: u64,
    /// Whether tools may read and write sensitive files (`.env*`, keys,
    /// credentials, …). Default: false.
    pub allow_sensitive: bool,
}

impl Default for WorkspaceSection {
    fn default() -> Self {
        Self {
            allow_delete: false,
            max_file_size: 1024 * 1024,
            allow_sensitive: false,
        }
    }
}

/// `confirmation:`
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConfirmationSection {
    /// `yolo`, `confirm-sensitive` (default) or `confirm-all`.
    pub mode: ConfirmationMode,
    /// Persistent allow/ask/deny rules, consulted by the gate before the
    /// mode (see [`ConfirmationRules`](toolgate_policy::ConfirmationRules)).
    /// Default: none.
    pub rules: Vec<ConfirmationRule>,
}

/// `commands:`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CommandsSection {
    /// Whether `run_command` and `process` are registered. Default: true.
    pub enabled: bool,
    /// Refuse `dangerous` commands instead of asking. Default: false.
    pub allowed_only: bool,
    /// Output lines kept per stream (head + tail). Default: 200.
    pub max_output_lines: usize,
    /// `full` (default), `landlock` or `none`: how much of the kernel
    /// sandbox every process toolgate starts runs in.
    pub sandbox: SandboxSetting,
    /// Refuse to run commands when the full sandbox is unavailable, instead
    /// of asking before every one. Default: false.
    pub sandbox_required: bool,
    /// `allow` (default), `deny`, or `{allow: [hosts], deny: [hosts]}`
    /// (only through toolgate's proxy): the network for processes that are
    /// not read-only (read-only commands never have it). See
    /// [`crate::network`].
    pub network: NetworkSetting,
    /// The environment of every process toolgate starts.
    pub env: EnvSection,
    /// Paths under the home directory processes may read, relative to it.
    /// Default: the toolchains (`.cargo`, `.rustup`, `.npm`, `.cache`, …).
    pub home_readable: Option<Vec<String>>,
    /// More paths processes may read where the sandbox hides them
    /// (absolute, or `~/…`). Default: none.
    pub readable: Vec<String>,
    /// More paths processes may write (absolute, or `~/…`): a package
    /// cache, say. Default: none.
    pub writable: Vec<String>,
    /// More paths to hide from every process (absolute, or `~/…`), on top
    /// of the built-in secrets. Default: none.
    pub deny_read: Vec<String>,
    /// Extra blocked-command regexes, on top of the built-in blocklist.
    pub blocked_patterns: Vec<String>,
    /// Background sessions at once. Default: 8.
    pub max_sessions: usize,
    /// Seconds a finished background session is kept. Default: 1800.
    pub session_ttl: u64,
    /// Bytes of unread output kept per background session. Default: 262144.
    pub session_output_cap: usize,
    /// What every command tree may consume: processes, memory, CPU time,
    /// file size, open files, the size of `/tmp` and `/dev/shm`.
    pub limits: LimitsSection,
}

impl Default for CommandsSection {
    fn default() -> Self {
        Self {
            enabled: true,
            allowed_only: false,
            max_output_lines: 200,
            sandbox: SandboxSetting::Full,
            sandbox_required: false,
            network: NetworkSetting::Allow,
            env: EnvSection::default(),
            home_readable: None,
            readable: Vec::new(),
            writable: Vec::new(),
            deny_read: Vec::new(),
            blocked_patterns: Vec::new(),
            max_sessions: 8,
            session_ttl: 1800,
            session_output_cap: 256 * 1024,
            limits: LimitsSection::default(),
        }
    }
}

/// `commands.limits:` what every command tree toolgate starts may consume
/// (commands, background processes, hooks, gates, MCP servers, dynamic
/// tools). Sizes are bytes, or a number with a unit (`256MiB`, `8GiB`).
/// How each limit is enforced on a machine: `toolgate doctor`; the rules:
/// [`toolgate_sandbox::limits`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsSection {
    /// Processes and threads of one command at once. Default: 512.
    pub processes: u64,
    /// Memory of one command (and of each of its processes). Default: half
    /// of RAM, at most 8 GiB.
    #[serde(with = "size")]
    pub memory: u64,
    /// Seconds of CPU time of each process. Default: 3600.
    pub cpu_seconds: u64,
    /// The largest file a process may write. Default: 16 GiB.
    #[serde(with = "size")]
    pub file_size: u64,
    /// Files each process may have open. Default: 8192.
    pub open_files: u64,
    /// The size of each command's private `/tmp`. Default: a quarter of
    /// RAM, at most 4 GiB.
    #[serde(with = "size")]
    pub tmp_size: u64,
    /// The size of each command's private `/dev/shm`. Default: a quarter of
    /// RAM, at most 4 GiB.
    #[serde(with = "size")]
    pub shm_size: u64,
}

impl Default for LimitsSection {
    fn default() -> Self {
        use toolgate_sandbox::Limit;
        let limits = toolgate_sandbox::Limits::default();
        let get = |limit| limits.get(limit);
        Self {
            processes: get(Limit::Processes),
            memory: get(Limit::Memory),
            cpu_seconds: get(Limit::CpuTime),
            file_size: get(Limit::FileSize),
            open_files: get(Limit::OpenFiles),
            tmp_size: get(Limit::TmpSize),
            shm_size: get(Limit::ShmSize),
        }
    }
}

impl LimitsSection {
    /// The limits, checked.
    pub fn to_limits(&self) -> Result<toolgate_sandbox::Limits, toolgate_sandbox::LimitsError> {
        toolgate_sandbox::Limits::builder()
            .processes(self.processes)
            .memory(self.memory)
            .cpu_seconds(self.cpu_seconds)
            .file_size(self.file_size)
            .open_files(self.open_files)
            .tmp_size(self.tmp_size)
            .shm_size(self.shm_size)
            .build()
    }
}

/// Sizes in the configuration: a number of bytes, or a string with a unit
/// (`64MiB`, `8 GiB`); written back with the largest unit that fits.
mod size {
    use std::fmt;

    use serde::de::{self, Visitor};
    use serde::{Deserializer, Serializer};
    use toolgate_sandbox::ByteSize;

    #[expect(
        clippy::trivially_copy_pass_by_ref,
        reason = "serde's `with` passes the field by reference"
    )]
    pub(super) fn serialize<S: Serializer>(bytes: &u64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&ByteSize(*bytes).to_string())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
        struct Size;
        impl Visitor<'_> for Size {
            type Value = u64;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a size: a number of bytes, or one with a unit (`64MiB`, `8GiB`)")
            }

            fn visit_u64<E: de::Error>(self, bytes: u64) -> Result<u64, E> {
                Ok(bytes)
            }

            fn visit_i64<E: de::Error>(self, bytes: i64) -> Result<u64, E> {
                u64::try_from(bytes).map_err(|_| E::custom("a size cannot be negative"))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<u64, E> {
                text.parse::<ByteSize>().map(|b| b.0).map_err(E::custom)
            }
        }
        deserializer.deserialize_any(Size)
    }
}

/// `commands.env:`
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EnvSection {
    /// Variables taken from toolgate's environment besides the core ones:
    /// exact names, or `PREFIX_*`. A name that looks like a credential is
    /// only taken when listed exactly. Default: none.
    pub inherit: Vec<String>,
    /// Variables set to fixed values. Default: none.
    pub set: std::collections::BTreeMap<String, String>,
}

/// `commands.sandbox`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxSetting {
    /// Namespaces, read-only and masking mounts, Landlock.
    Full,
    /// Landlock only: writes confined, nothing hidden; every command asks.
    Landlock,
    /// No kernel sandbox; every command asks.
    None,
}

/// `audit:`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuditSection {
    /// Where to append one JSON line per call. Default: no file.
    pub path: Option<PathBuf>,
    /// Whether every call is also recorded in the store (`toolgate audit`,
    /// the web UI's audit page). Default: true.
    pub store: bool,
}

impl Default for AuditSection {
    fn default() -> Self {
        Self {
            path: None,
            store: true,
        }
    }
}

/// `store:`
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreSection {
    /// The `SQLite` file. Default: `toolgate.db` in the user's data
    /// directory (`$XDG_DATA_HOME/toolgate`, else
    /// `~/.local/share/toolgate`), under `workspaces/NAME-HASH/`, one per
    /// workspace — never inside the workspace. Relative paths are relative
    /// to the workspace.
    pub path: Option<PathBuf>,
}

/// Sections DESIGN.md §12 names at the top level that live under `tools:`
/// with their group's enable flag (seed 002's shape): a key there is
/// pointed to its place.
const UNDER_TOOLS: &[&str] = &["memory", "web"];

/// Where a layer came from, for messages.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Source {
    /// A configuration file.
    File(PathBuf),
    /// A `TOOLGATE_<SECTION>__<KEY>` variable.
    Env(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(path) => write!(f, "{}", path.display()),
            Self::Env(name) => write!(f, "environment variable {name}"),
        }
    }
}

/// An invalid layer: what is wrong, where.
#[derive(Debug)]
#[non_exhaustive]
pub struct ConfigError {
    /// The layer.
    pub source: Source,
    /// The dotted key (`confirmation.mode`), empty for the whole layer.
    pub key: String,
    /// What is wrong.
    pub message: String,
    /// Line and column in a file, when known.
    pub location: Option<(usize, usize)>,
    /// What to do about it.
    pub hint: Option<String>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}", self.message)?;
        } else {
            write!(f, "`{}`: {}", self.key, self.message)?;
        }
        write!(f, " (in {}", self.source)?;
        if let Some((line, column)) = self.location {
            write!(f, ", line {line} column {column}")?;
        }
        f.write_str(")")
    }
}

impl std::error::Error for ConfigError {}

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// One layer is invalid: which key, where, why.
    #[error(transparent)]
    Layer(Box<ConfigError>),
    /// A configuration file could not be read.
    #[error("could not read the configuration file {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The layers are valid one by one but not together.
    #[error("the merged configuration is invalid")]
    Merged(#[source] serde_yaml_ng::Error),
    /// The trust store could not be read or written.
    #[error(transparent)]
    Trust(#[from] TrustError),
}

impl LoadError {
    /// What the user can do about it, when there is something to say.
    pub fn hint(&self) -> Option<String> {
        match self {
            Self::Layer(error) => error.hint.clone(),
            Self::Trust(error) => Some(error.hint()),
            Self::Read { .. } => Some("check the file's path and permissions".to_owned()),
            Self::Merged(_) => None,
        }
    }
}

/// The configuration as loaded, with the layers that made it.
#[derive(Debug)]
#[non_exhaustive]
pub struct Loaded {
    /// The effective configuration.
    pub config: Config,
    /// The layers that were read, in order (defaults not included).
    pub sources: Vec<Source>,
    /// The workspace file (`--config` or `WORKSPACE/toolgate.yaml`), whether
    /// or not it exists: where `mcp_add_server` saves servers.
    pub project_file: PathBuf,
    /// The workspace file's trust, when there is one.
    pub project: Option<ProjectStatus>,
}

/// How the workspace file was applied.
#[derive(Debug, Clone)]
pub struct ProjectStatus {
    /// Its canonical path.
    pub file: PathBuf,
    /// Hex SHA-256 of the bytes read.
    pub sha256: String,
    /// Its keys that need trust (dotted).
    pub trust_only_keys: Vec<String>,
    /// Whether they applied, and why.
    pub trust: Trust,
}

impl ProjectStatus {
    /// The trust-only keys that were ignored (none when trusted).
    pub fn ignored(&self) -> &[String] {
        if self.trust.applies() {
            &[]
        } else {
            &self.trust_only_keys
        }
    }
}

/// A workspace configuration file, read once and checked, split into the
/// keys that apply untrusted and the keys that need trust.
#[derive(Debug)]
pub struct ProjectFile {
    /// The canonical path (symlinks resolved): the trust store's key.
    pub path: PathBuf,
    /// Hex SHA-256 of the bytes that were parsed.
    pub sha256: String,
    split: trust::Split,
}

impl ProjectFile {
    /// Reads and checks the file at `path`.
    pub fn read(path: &Path) -> Result<Self, LoadError> {
        let read_error = |source| LoadError::Read {
            path: path.to_owned(),
            source,
        };
        let path = path.canonicalize().map_err(read_error)?;
        let bytes = std::fs::read(&path).map_err(read_error)?;
        let sha256 = trust::sha256_hex(&bytes);
        let Ok(text) = String::from_utf8(bytes) else {
            return Err(LoadError::Layer(Box::new(ConfigError {
                source: Source::File(path),
                key: String::new(),
                message: "the file is not UTF-8 text".into(),
                location: None,
                hint: None,
            })));
        };
        let layer = parse_file_layer(&text, &path)?;
        let defaults = serde_yaml_ng::to_value(Config::default()).map_err(LoadError::Merged)?;
        Ok(Self {
            path,
            sha256,
            split: trust::split(layer, &defaults),
        })
    }

    /// The keys that need trust (dotted: `hooks.pre_tool_use`).
    pub fn trust_only_keys(&self) -> &[String] {
        &self.split.keys
    }

    /// What the trust-only keys would do: programs and values.
    pub fn review(&self) -> Vec<ReviewItem> {
        trust::review(&self.split.withheld, &self.split.keys)
    }
}

/// Flags that override the configuration (layer 5).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--mode`.
    pub mode: Option<ConfirmationMode>,
    /// `--allow-commands` (true) / `--no-commands` (false).
    pub commands: Option<bool>,
    /// `--provider`: its wire format, URL, key variable and model (the
    /// model only where none is configured).
    pub provider: Option<crate::ProviderKind>,
    /// `--api-key-env`: the variable that holds the key.
    pub api_key_env: Option<String>,
}

/// Loads every layer for a workspace. When the workspace file has keys that
/// need trust, `decide` says whether they apply (it is not called
/// otherwise); an error from it ends the load.
pub(crate) fn load(
    workspace: &Path,
    explicit: Option<&Path>,
    env: &[(String, String)],
    overrides: &Overrides,
    decide: impl FnOnce(&ProjectFile) -> Result<Trust, TrustError>,
) -> Result<Loaded, LoadError> {
    let mut merged = Value::Mapping(Mapping::new());
    let mut sources = Vec::new();

    let project_file = explicit.map_or_else(|| workspace.join("toolgate.yaml"), Path::to_owned);
    let project_path = match explicit {
        Some(path) => {
            if !path.is_file() {
                return Err(LoadError::Layer(Box::new(ConfigError {
                    source: Source::File(path.to_owned()),
                    key: String::new(),
                    message: "the configuration file does not exist".into(),
                    location: None,
                    hint: Some("check the path given to --config or TOOLGATE_CONFIG".into()),
                })));
            }
            Some(path.to_owned())
        }
        None => Some(workspace.join("toolgate.yaml")).filter(|p| p.is_file()),
    };
    let mut project = None;
    if let Some(path) = project_path {
        let file = ProjectFile::read(&path)?;
        let trust = if file.trust_only_keys().is_empty() {
            Trust::NotNeeded
        } else {
            decide(&file)?
        };
        let ProjectFile {
            path: canonical,
            sha256,
            split,
        } = file;
        merge(&mut merged, split.kept);
        if trust.applies() {
            merge(&mut merged, split.withheld);
        }
        sources.push(Source::File(path));
        project = Some(ProjectStatus {
            file: canonical,
            sha256,
            trust_only_keys: split.keys,
            trust,
        });
    }

    // The user's own file: always trusted.
    if let Some(path) = user_config_path(env).filter(|p| p.is_file()) {
        let text = std::fs::read_to_string(&path).map_err(|source| LoadError::Read {
            path: path.clone(),
            source,
        })?;
        let layer = parse_file_layer(&text, &path)?;
        merge(&mut merged, layer);
        sources.push(Source::File(path));
    }

    for (name, value) in env {
        let Some(layer) = env_layer(name, value)? else {
            continue;
        };
        merge(&mut merged, layer);
        sources.push(Source::Env(name.clone()));
    }

    let mut config: Config = serde_yaml_ng::from_value(merged).map_err(LoadError::Merged)?;
    config.tools.dynamic.reserved = crate::assembly::catalog::reserved_names();
    if let Some(mode) = overrides.mode {
        config.confirmation.mode = mode;
    }
    if let Some(enabled) = overrides.commands {
        config.commands.enabled = enabled;
    }
    if let Some(kind) = overrides.provider {
        let llm = &mut config.llm;
        llm.provider = kind.wire();
        if let Some(url) = kind.base_url() {
            llm.base_url = Some(url.to_owned());
        }
        llm.api_key_env = kind.api_key_env().map(str::to_owned);
        if llm.model.is_none() {
            llm.model = kind.model().map(str::to_owned);
        }
    }
    if let Some(var) = &overrides.api_key_env {
        config.llm.api_key_env = Some(var.clone());
    }
    for path in [config.audit.path.as_mut(), config.store.path.as_mut()]
        .into_iter()
        .flatten()
        .filter(|p| p.is_relative())
    {
        *path = workspace.join(&*path);
    }
    Ok(Loaded {
        config,
        sources,
        project_file,
        project,
    })
}

/// `llm.temperature`: a number from 0 to 2 (`null`: toolgate's default),
/// or `server` (none sent).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Temperature {
    /// This temperature is sent.
    Value(f32),
    /// None is sent: the server's own default applies.
    Server,
}

impl Default for Temperature {
    fn default() -> Self {
        Self::Value(toolgate_agent::DEFAULT_TEMPERATURE)
    }
}

impl Temperature {
    /// The temperature requests carry, if any.
    pub fn sent(self) -> Option<f32> {
        match self {
            Self::Value(t) => Some(t),
            Self::Server => None,
        }
    }
}

impl Serialize for Temperature {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            // As written (0.2, not 0.2000000029…): the shortest decimal
            // that reads back as the same f32.
            Self::Value(t) => s.serialize_f64(t.to_string().parse().unwrap_or(f64::from(*t))),
            Self::Server => s.serialize_str("server"),
        }
    }
}

impl<'de> Deserialize<'de> for Temperature {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(f32),
            Word(String),
        }
        match Option::<Raw>::deserialize(d)? {
            None => Ok(Self::default()),
            Some(Raw::Number(t)) if (0.0..=2.0).contains(&t) => Ok(Self::Value(t)),
            Some(Raw::Number(t)) => Err(serde::de::Error::custom(format!(
                "temperature {t} is out of range: use a number from 0 to 2 (0 to 0.2 suits small local models), or `server` to send none"
            ))),
            Some(Raw::Word(w)) if w == "server" => Ok(Self::Server),
            Some(Raw::Word(w)) => Err(serde::de::Error::custom(format!(
                "temperature `{w}` is not a number: use a number from 0 to 2, null for toolgate's default (0.2), or `server` to send none"
            ))),
        }
    }
}

/// `$XDG_CONFIG_HOME/toolgate`, else `~/.config/toolgate`.
pub(crate) fn user_config_dir(env: &[(String, String)]) -> Option<PathBuf> {
    let get = |key: &str| {
        env.iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    let base = get(env_vars::XDG_CONFIG_HOME)
        .map(PathBuf::from)
        .or_else(|| get(env_vars::HOME).map(|home| Path::new(&home).join(".config")))?;
    Some(base.join("toolgate"))
}

pub(crate) fn user_config_path(env: &[(String, String)]) -> Option<PathBuf> {
    user_config_dir(env).map(|dir| dir.join("config.yaml"))
}

/// Where the trust store lives: `trusted.json` next to the user file.
pub fn trust_store_path(env: &[(String, String)]) -> Option<PathBuf> {
    user_config_dir(env).map(|dir| dir.join("trusted.json"))
}

/// Checks one file on its own (so errors carry its name and line) and
/// returns it as a YAML value for merging.
fn parse_file_layer(text: &str, path: &Path) -> Result<Value, LoadError> {
    if text.trim().is_empty() {
        return Ok(Value::Mapping(Mapping::new()));
    }
    let deserializer = serde_yaml_ng::Deserializer::from_str(text);
    if let Err(error) = serde_path_to_error::deserialize::<_, Config>(deserializer) {
        let key = error.path().to_string();
        let inner = error.into_inner();
        let location = inner.location().map(|l| (l.line(), l.column()));
        // A syntax error has no key: the path ends in `?`, which named
        // nothing a person could find (`llm.?`).
        let syntax = key == "?" || key.ends_with(".?");
        let mut error = layer_error(
            Source::File(path.to_owned()),
            key,
            &inner.to_string(),
            location,
        );
        if syntax {
            error.key = String::new();
            error.message = format!("not valid YAML: {}", error.message);
        }
        return Err(LoadError::Layer(Box::new(error)));
    }
    serde_yaml_ng::from_str(text).map_err(LoadError::Merged)
}

/// `TOOLGATE_A__B=v` → `{a: {b: v}}`, checked on its own. Variables without
/// `__` are not configuration keys and give `None`.
fn env_layer(name: &str, value: &str) -> Result<Option<Value>, LoadError> {
    let Some(rest) = name.strip_prefix(env_vars::CONFIG_KEY_PREFIX) else {
        return Ok(None);
    };
    if !rest.contains("__") {
        return Ok(None);
    }
    let keys: Vec<String> = rest.split("__").map(str::to_lowercase).collect();
    let scalar: Value =
        serde_yaml_ng::from_str(value).unwrap_or_else(|_| Value::String(value.to_owned()));
    let mut layer = scalar;
    for key in keys.iter().rev() {
        let mut mapping = Mapping::new();
        mapping.insert(Value::String(key.clone()), layer);
        layer = Value::Mapping(mapping);
    }
    if let Err(error) = serde_path_to_error::deserialize::<_, Config>(layer.clone()) {
        let key = error.path().to_string();
        let message = error.into_inner().to_string();
        return Err(LoadError::Layer(Box::new(layer_error(
            Source::Env(name.to_owned()),
            key,
            &message,
            None,
        ))));
    }
    Ok(Some(layer))
}

fn layer_error(
    source: Source,
    key: String,
    message: &str,
    location: Option<(usize, usize)>,
) -> ConfigError {
    // serde_yaml_ng repeats the path and the location in its message; keep
    // only the reason.
    let mut message = message.to_owned();
    let parent = key.rsplit_once('.').map_or("", |(parent, _)| parent);
    for prefix in [key.as_str(), parent] {
        if let Some(stripped) = message
            .strip_prefix(&format!("{prefix}: "))
            .filter(|_| !prefix.is_empty())
        {
            message = stripped.to_owned();
            break;
        }
    }
    if let Some(at) = message.find(" at line ") {
        message.truncate(at);
    }
    let top = key.split(['.', '[']).next().unwrap_or_default();
    let mut hint = None;
    if message.starts_with("unknown field") {
        if UNDER_TOOLS.contains(&top) && key == top {
            message = format!("the `{top}` section belongs under `tools:`");
            hint = Some(format!(
                "write it as `tools: {{{top}: {{enabled: true, …}}}}`"
            ));
        } else {
            let expected = message
                .find(", expected")
                .map(|at| message[at + 2..].to_owned());
            "unknown key".clone_into(&mut message);
            hint = expected.map(|e| {
                format!("{e} here; `toolgate config check` prints every key with its value")
            });
        }
    }
    ConfigError {
        source,
        key,
        message,
        location,
        hint,
    }
}

/// Merges `layer` into `base`: mappings key by key, anything else replaced.
fn merge(base: &mut Value, layer: Value) {
    match (base, layer) {
        (Value::Mapping(base), Value::Mapping(layer)) => {
            for (key, value) in layer {
                match base.get_mut(&key) {
                    Some(existing) => merge(existing, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, layer) => *base = layer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_with(
        files: &[(&str, &str)],
        env: &[(&str, &str)],
        overrides: &Overrides,
    ) -> Result<Loaded, LoadError> {
        load_trusting(files, env, overrides, Trust::ThisRun)
    }

    fn load_trusting(
        files: &[(&str, &str)],
        env: &[(&str, &str)],
        overrides: &Overrides,
        trust: Trust,
    ) -> Result<Loaded, LoadError> {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let mut vars: Vec<(String, String)> =
            vec![(env_vars::HOME.into(), home.display().to_string())];
        vars.extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        load(dir.path(), None, &vars, overrides, |_| Ok(trust))
    }

    #[test]
    fn later_layers_win() {
        let files = [
            (
                "toolgate.yaml",
                "confirmation:\n  mode: confirm-all\ntools:\n  timeout: 5\n",
            ),
            (
                "home/.config/toolgate/config.yaml",
                "confirmation:\n  mode: yolo\n",
            ),
        ];
        let loaded = load_with(&files, &[], &Overrides::default()).unwrap();
        assert_eq!(loaded.config.confirmation.mode, ConfirmationMode::Yolo);
        assert_eq!(
            loaded.config.tools.timeout, 5,
            "a key the later layer lacks is kept"
        );

        let env = [
            ("TOOLGATE_TOOLS__TIMEOUT", "9"),
            ("TOOLGATE_EVENT", "pre_tool_use"),
        ];
        let loaded = load_with(
            &files,
            &env,
            &Overrides {
                mode: Some(ConfirmationMode::ConfirmSensitive),
                commands: Some(false),
                ..Overrides::default()
            },
        )
        .unwrap();
        assert!(!loaded.config.commands.enabled);
        assert_eq!(loaded.config.tools.timeout, 9);
        assert_eq!(
            loaded.config.confirmation.mode,
            ConfirmationMode::ConfirmSensitive
        );
        assert_eq!(loaded.sources.len(), 3);
    }

    #[test]
    fn bad_layers_name_key_and_source() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "confirmation:\n  mod: yolo\n",
                "`confirmation.mod`: unknown key",
                "toolgate.yaml, line 2 column 3)",
            ),
            (
                "tools:\n  timeout: soon\n",
                "`tools.timeout`: invalid type: string \"soon\", expected u64",
                "line 2",
            ),
            (
                "confirmation:\n  mode: sometimes\n",
                "`confirmation.mode`: unknown variant `sometimes`",
                "line 2",
            ),
            (
                "ui:\n  permissions:\n    build: everything\n",
                "`ui.permissions.build`: unknown variant `everything`",
                "line 3",
            ),
            (
                "- a\n- b\n",
                "invalid type: sequence, expected struct Config",
                "toolgate.yaml",
            ),
        ];
        for (text, message, place) in cases {
            let error =
                load_with(&[("toolgate.yaml", text)], &[], &Overrides::default()).unwrap_err();
            let error = error.to_string();
            assert!(error.contains(message), "{text:?}: {error}");
            assert!(error.contains(place), "{text:?}: {error}");
        }
        let error = load_with(
            &[],
            &[("TOOLGATE_CONFIRMATION__MODEE", "yolo")],
            &Overrides::default(),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "`confirmation.modee`: unknown key (in environment variable TOOLGATE_CONFIRMATION__MODEE)"
        );
    }

    #[test]
    fn relative_audit_path_is_inside_the_workspace() {
        let loaded = load_with(
            &[("toolgate.yaml", "audit:\n  path: logs/a.jsonl\n")],
            &[],
            &Overrides::default(),
        )
        .unwrap();
        let path = loaded.config.audit.path.unwrap();
        assert!(
            path.is_absolute() && path.ends_with("logs/a.jsonl"),
            "{}",
            path.display()
        );
    }

    #[test]
    fn an_untrusted_workspace_file_applies_only_the_allowed_keys() {
        let files = [
            (
                "toolgate.yaml",
                "confirmation:\n  mode: yolo\ntools:\n  timeout: 5\nhooks:\n  pre_tool_use: [{name: m, command: touch x}]\nworkspace:\n  allow_delete: false\n  max_file_size: 10\n",
            ),
            (
                "home/.config/toolgate/config.yaml",
                "workspace:\n  allow_sensitive: true\n",
            ),
        ];
        let untrusted =
            load_trusting(&files, &[], &Overrides::default(), Trust::Untrusted).unwrap();
        let config = &untrusted.config;
        assert_eq!(config.confirmation.mode, ConfirmationMode::ConfirmSensitive);
        assert!(config.hooks.pre_tool_use.is_empty());
        assert_eq!(config.tools.timeout, 5);
        assert_eq!(config.workspace.max_file_size, 10);
        assert!(
            config.workspace.allow_sensitive,
            "the user file is always trusted"
        );
        let project = untrusted.project.as_ref().unwrap();
        assert_eq!(
            project.ignored(),
            ["confirmation.mode", "hooks.pre_tool_use"],
            "`allow_delete: false` is the default: nothing to ignore"
        );
        assert_eq!(project.sha256.len(), 64);

        let trusted = load_trusting(&files, &[], &Overrides::default(), Trust::Recorded).unwrap();
        assert_eq!(trusted.config.confirmation.mode, ConfirmationMode::Yolo);
        assert_eq!(trusted.config.hooks.pre_tool_use.len(), 1);
        assert!(trusted.project.unwrap().ignored().is_empty());
    }

    #[test]
    fn trust_is_not_asked_for_a_file_without_trust_only_keys() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("toolgate.yaml"),
            "tools:\n  timeout: 5\nconfirmation:\n  mode: confirm-sensitive\n",
        )
        .unwrap();
        let loaded = load(dir.path(), None, &[], &Overrides::default(), |_| {
            panic!("decide must not be called")
        })
        .unwrap();
        assert_eq!(loaded.project.unwrap().trust, Trust::NotNeeded);
    }

    #[test]
    fn temperature_case_table() {
        // (llm section, the temperature sent, or the error's words)
        let cases: &[(&str, Result<Option<f32>, &str>)] = &[
            ("{}", Ok(Some(0.2))),
            ("temperature: null", Ok(Some(0.2))),
            ("temperature: 0", Ok(Some(0.0))),
            ("temperature: 0.7", Ok(Some(0.7))),
            ("temperature: server", Ok(None)),
            ("temperature: 3", Err("out of range")),
            ("temperature: hot", Err("not a number")),
        ];
        for (yaml, expected) in cases {
            let got = serde_yaml_ng::from_str::<LlmSection>(yaml)
                .map(|l| l.temperature.sent())
                .map_err(|e| e.to_string());
            match (expected, &got) {
                (Ok(t), Ok(sent)) => assert_eq!(sent, t, "{yaml}"),
                (Err(words), Err(e)) => assert!(e.contains(words), "{yaml}: {e}"),
                _ => panic!("{yaml}: {got:?}"),
            }
        }
        // The default as the documentation shows it, and `server` kept.
        let shown = serde_yaml_ng::to_string(&Temperature::default()).unwrap();
        assert_eq!(shown.trim(), "0.2");
        let server = serde_yaml_ng::to_string(&Temperature::Server).unwrap();
        assert_eq!(server.trim(), "server");
    }

    #[test]
    fn commands_limits_take_sizes_with_units_and_name_every_limit() {
        let section: LimitsSection =
            serde_yaml_ng::from_str("memory: 256MiB\nfile_size: 1048576\ntmp_size: 1 GiB\n")
                .unwrap();
        assert_eq!(
            (section.memory, section.file_size, section.tmp_size),
            (256 << 20, 1 << 20, 1 << 30)
        );
        assert_eq!(section.processes, 512);
        for bad in [
            "memory: lots",
            "memory: -5",
            "memory: 1.5GiB",
            "cpu_seconds: 1s",
        ] {
            assert!(
                serde_yaml_ng::from_str::<LimitsSection>(bad).is_err(),
                "{bad}"
            );
        }
        let error = serde_yaml_ng::from_str::<LimitsSection>("shm_size: 8 parsecs").unwrap_err();
        assert!(error.to_string().contains("is not a size"), "{error}");
        // One key per limit of the sandbox, named as its builder's setters.
        let defaults = serde_yaml_ng::to_value(LimitsSection::default()).unwrap();
        let keys: Vec<&str> = defaults
            .as_mapping()
            .unwrap()
            .keys()
            .map(|k| k.as_str().unwrap())
            .collect();
        let expected: Vec<&str> = toolgate_sandbox::Limit::ALL
            .iter()
            .map(|l| l.key())
            .collect();
        assert_eq!(keys, expected);
        // Written back as it is read.
        let back: LimitsSection = serde_yaml_ng::from_value(defaults).unwrap();
        assert_eq!(back, LimitsSection::default());
        assert_eq!(
            back.to_limits().unwrap(),
            toolgate_sandbox::Limits::default()
        );
        let small = LimitsSection {
            processes: 2,
            ..LimitsSection::default()
        };
        assert!(small.to_limits().is_err());
    }

    #[test]
    fn every_allowed_key_exists() {
        // The allow-list names real keys: a typo there would silently keep
        // a key trust-only, and a rename would drop it from the list.
        let defaults = serde_yaml_ng::to_value(Config::default()).unwrap();
        // Keys of a value's mapping form (`commands.network: {deny: …}`).
        let mut other = Config::default();
        other.commands.network = NetworkSetting::Domains(crate::network::DomainLists::default());
        let other = serde_yaml_ng::to_value(other).unwrap();
        let agent = serde_yaml_ng::to_value(toolgate_agent::AgentConfig::default()).unwrap();
        let groups = crate::untrusted_tool_keys();
        for pattern in trust::APPLIES_UNTRUSTED
            .iter()
            .copied()
            .chain(groups.iter().map(String::as_str))
        {
            let found = match pattern.strip_prefix("agents.*.") {
                Some(field) => agent.get(field).is_some(),
                None => [&defaults, &other].into_iter().any(|config| {
                    pattern
                        .split('.')
                        .try_fold(config, |v, seg| v.get(seg))
                        .is_some()
                }),
            };
            assert!(found, "{pattern} is not a configuration key");
        }
    }
}
