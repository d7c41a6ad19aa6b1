//! Workspace trust: which keys of a workspace's configuration file apply
//! before the user trusts it, and the record of the files the user trusts.
//!
//! A repository's `toolgate.yaml` is written by whoever can write to the
//! repository — or by a model working in it. Keys that start programs
//! (hooks, MCP servers, quality gates) or loosen policy (confirmation mode,
//! sensitive files, sandbox, where the model's requests and the API key go)
//! would otherwise run or apply, outside any sandbox, on the next toolgate
//! command in a freshly cloned repository.
//!
//! # Rules
//!
//! 1. The user's own file (`~/.config/toolgate/config.yaml`),
//!    `TOOLGATE_*` environment variables and flags are always trusted.
//! 2. In the *project* file (`WORKSPACE/toolgate.yaml`, or the file given by
//!    `--config` / `TOOLGATE_CONFIG`), a key listed in [`APPLIES_UNTRUSTED`]
//!    always applies: those only tighten policy, or are cosmetic.
//! 3. Every other key of the project file applies only when the file is
//!    trusted. The list is an allow-list, so a section or key added later
//!    needs trust until someone decides otherwise (fail-closed).
//! 4. A key whose value equals the built-in default does not count: ignoring
//!    it changes nothing, so it never asks for trust.
//! 5. A file is trusted when its canonical path and the SHA-256 of its bytes
//!    (the very bytes that were parsed) are in the [`TrustStore`], or for one
//!    run with `--trust-workspace` / `TOOLGATE_TRUST_WORKSPACE=1`. Any
//!    change to the file — including one made by toolgate's own
//!    `mcp_add_server` — makes it untrusted again.
//!
//! This module decides and records; it never prints.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_yaml_ng::{Mapping, Value};
use sha2::{Digest, Sha256};
use toolgate_engine::{HookSpec, QualityGate};
use toolgate_mcp::McpServerConfig;

/// The keys of the project file that apply without trust, beside those the
/// tool groups name ([`untrusted_tool_keys`](crate::untrusted_tool_keys)), as dotted paths;
/// `*` stands for any one name (an agent's). A pattern covers everything
/// below it. Lists are taken whole.
///
/// | key | why it may apply untrusted |
/// |---|---|
/// | `commands.enabled` | the project layer can only move it from its default (`true`) to `false`; the user file and `--allow-commands` win |
/// | `commands.allowed_only` | refuses more |
/// | `commands.sandbox_required` | refuses commands where the sandbox is incomplete |
/// | `commands.deny_read` | hides more from processes |
/// | `commands.network.deny` | refuses more hosts: on its own it turns the default (every destination) into a domain policy that allows nothing unasked |
/// | `commands.blocked_patterns` | blocks more |
/// | `commands.max_output_lines`, `commands.max_sessions`, `commands.session_ttl`, `commands.session_output_cap` | resource limits |
/// | `guardrails.protected_files`, `guardrails.sensitive_files` | added to the built-in sets |
/// | `guardrails.blocked_commands`, `guardrails.code_rules` | refuse or warn more |
/// | `guardrails.max_files_modified`, `guardrails.max_lines_changed` | unlimited by default |
/// | `workspace.max_file_size` | a size limit |
/// | `tools.timeout` | a limit |
/// | the keys each tool group names ([`Group::untrusted_keys`](toolgate_core::Group::untrusted_keys), listed by [`untrusted_tool_keys`](crate::untrusted_tool_keys)): today `tools.datetime.enabled`, `tools.datetime.timezone`, `tools.echo.enabled`, `tools.calculator`, `tools.notes`, `tools.tasks`, `tools.plan`, `tools.persona`, `tools.self_inspect`, `tools.memory.*` but `dir`, the `tools.web` limits (`max_content_length`, `max_body_bytes`, `timeout`, `cache_ttl`, `max_redirects`, `search.max_results`) | harmless tools and limits (notes, tasks, memory and persona live in toolgate's own data directory) |
/// | `llm.provider`, `llm.model`, `llm.timeout`, `llm.max_retries`, `llm.stream`, `llm.max_tokens`, `llm.temperature`, `llm.context_window` | which model and how it samples, not where requests and the key go |
/// | `llm.input_price_per_mtok`, `llm.output_price_per_mtok`, `llm.budget_usd` | cost accounting and a budget |
/// | `llm.text_tool_calls` | whether calls written as text are recovered; every call still goes through the gate |
/// | `routing` | which of the agent's tools each task is offered (the classifying call goes to the run's own server) |
/// | `skills.enabled`, `skills.disabled` | whether skills are offered, and which not (the workspace's own skills are in the workspace anyway) |
/// | `agents.*.system_prompt`, `agents.*.allowed_tools`, `agents.*.disabled_tools`, `agents.*.max_steps`, `agents.*.max_repeated_calls`, `agents.*.max_calls_per_step`, `agents.*.prompt_mode`, `agents.*.delegate_to` | an agent's prompt, tool list, limits and who it may hand work to; every call (a delegated agent's too, under the caller's mode) still goes through the gate |
///
/// Everything else needs trust, among them: `hooks.*`, `mcp.*`,
/// `guardrails.quality_gates` (they run programs), `confirmation.*`,
/// `agents.*.mode`, `workspace.allow_sensitive`, `workspace.allow_delete`,
/// `commands.sandbox`, `commands.network` (`allow`, and its `allow` list),
/// `commands.env`, `commands.readable`,
/// `commands.writable`, `commands.home_readable`
/// (policy), `commands.limits` (a raised limit lets a command take more of
/// the machine), `audit.*` (appends to any file), `llm.base_url`,
/// `llm.api_key_env`, `llm.fallback` (where the model's requests, the code
/// and the keys go),
/// `store.path` (writes any file), `tools.memory.dir` (writes files there),
/// `tools.weather`, `tools.phone`, `tools.web.enabled`, `tools.web.allow_hosts`
/// and `tools.web.search` (where requests go, with which key), `tools.cron`
/// (agent runs later, unattended).
pub const APPLIES_UNTRUSTED: &[&str] = &[
    "commands.enabled",
    "commands.allowed_only",
    "commands.sandbox_required",
    "commands.deny_read",
    "commands.network.deny",
    "commands.blocked_patterns",
    "commands.max_output_lines",
    "commands.max_sessions",
    "commands.session_ttl",
    "commands.session_output_cap",
    "guardrails.protected_files",
    "guardrails.sensitive_files",
    "guardrails.blocked_commands",
    "guardrails.code_rules",
    "guardrails.max_files_modified",
    "guardrails.max_lines_changed",
    "workspace.max_file_size",
    "tools.timeout",
    "llm.provider",
    "llm.model",
    "llm.timeout",
    "llm.max_retries",
    "llm.stream",
    "llm.max_tokens",
    "llm.temperature",
    "llm.context_window",
    "llm.input_price_per_mtok",
    "llm.output_price_per_mtok",
    "llm.budget_usd",
    "llm.text_tool_calls",
    "routing",
    "skills.enabled",
    "skills.disabled",
    "agents.*.system_prompt",
    "agents.*.allowed_tools",
    "agents.*.max_steps",
    "agents.*.max_repeated_calls",
    "agents.*.max_calls_per_step",
    "agents.*.disabled_tools",
    "agents.*.prompt_mode",
    "agents.*.delegate_to",
    "agents.*.prompt_mode",
];

/// Where a dotted key stands relative to a pattern of [`APPLIES_UNTRUSTED`].
#[derive(Debug, PartialEq, Eq)]
enum Relation {
    /// The key is the pattern, or below it.
    Covered,
    /// The pattern is below the key.
    Parent,
    /// Neither.
    Unrelated,
}

fn relation(pattern: &str, key: &str) -> Relation {
    let mut pattern = pattern.split('.');
    let mut key = key.split('.');
    loop {
        match (pattern.next(), key.next()) {
            (None, _) => return Relation::Covered,
            (Some(_), None) => return Relation::Parent,
            (Some(p), Some(k)) if p == "*" || p == k => {}
            _ => return Relation::Unrelated,
        }
    }
}

/// Whether the project-file key `key` (dotted: `hooks.pre_tool_use`,
/// `agents.docs.mode`) applies without trust: some pattern of
/// [`APPLIES_UNTRUSTED`] is `key` or one of its parents.
pub fn applies_untrusted(key: &str) -> bool {
    patterns().any(|pattern| relation(pattern, key) == Relation::Covered)
}

/// [`APPLIES_UNTRUSTED`], then the keys the tool groups name.
fn patterns() -> impl Iterator<Item = &'static str> {
    static GROUP_KEYS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let groups = GROUP_KEYS.get_or_init(crate::assembly::catalog::untrusted_tool_keys);
    APPLIES_UNTRUSTED
        .iter()
        .copied()
        .chain(groups.iter().map(String::as_str))
}

/// Whether some key below `key` applies without trust (so a mapping at
/// `key` is split key by key rather than taken whole).
fn leads_to_untrusted(key: &str) -> bool {
    patterns().any(|pattern| relation(pattern, key) == Relation::Parent)
}

/// A project layer split by [`split`].
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// The keys that apply without trust.
    pub kept: Value,
    /// The keys that need trust and differ from the defaults.
    pub withheld: Value,
    /// The withheld keys, dotted (`hooks.pre_tool_use`, `mcp.servers`,
    /// `agents.docs.mode`), in file order.
    pub keys: Vec<String>,
}

/// Splits a checked project layer into what applies untrusted and what
/// needs trust (rules 2–4). `defaults` is the built-in configuration as a
/// YAML value. Whole sections are split at least one level down, so the
/// keys name what they set (`hooks.pre_tool_use`, not `hooks`).
pub fn split(layer: Value, defaults: &Value) -> Split {
    let mut keys = Vec::new();
    let (kept, withheld) = match layer {
        Value::Mapping(map) => walk(map, "", defaults.as_mapping(), &mut keys),
        // A file that is not a mapping was refused when it was checked;
        // an empty one is null.
        _ => (Mapping::new(), Mapping::new()),
    };
    Split {
        kept: Value::Mapping(kept),
        withheld: Value::Mapping(withheld),
        keys,
    }
}

fn walk(
    map: Mapping,
    prefix: &str,
    defaults: Option<&Mapping>,
    keys: &mut Vec<String>,
) -> (Mapping, Mapping) {
    let mut kept = Mapping::new();
    let mut withheld = Mapping::new();
    for (name, value) in map {
        let Some(text) = name.as_str() else {
            // Not a key of the configuration (it was checked); keep it away.
            withheld.insert(name, value);
            continue;
        };
        let key = if prefix.is_empty() {
            text.to_owned()
        } else {
            format!("{prefix}.{text}")
        };
        let default = defaults.and_then(|d| d.get(text));
        if default == Some(&value) || value.is_null() {
            continue;
        }
        if applies_untrusted(&key) {
            kept.insert(name, value);
            continue;
        }
        match value {
            Value::Mapping(inner) if prefix.is_empty() || leads_to_untrusted(&key) => {
                let (k, w) = walk(inner, &key, default.and_then(Value::as_mapping), keys);
                if !k.is_empty() {
                    kept.insert(name.clone(), Value::Mapping(k));
                }
                if !w.is_empty() {
                    withheld.insert(name, Value::Mapping(w));
                }
            }
            value => {
                keys.push(key);
                withheld.insert(name, value);
            }
        }
    }
    (kept, withheld)
}

/// Hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in digest {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// One trust-only key of a project file, for a person to judge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReviewItem {
    /// The dotted key.
    pub key: String,
    /// The programs it would run or the servers it would reach, one per
    /// hook, MCP server or quality gate; empty for a plain value.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<Program>,
    /// The value as compact JSON, for keys that run nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// A program a hook, an MCP server or a quality gate would run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Program {
    /// The hook's, server's or gate's name.
    pub name: String,
    /// The command line, shell-quoted (`sh -c '…'` for shell commands), or
    /// the URL a server would be reached at.
    pub run: String,
}

/// What each withheld key would do: the programs of hooks, MCP servers and
/// quality gates, the value of anything else.
pub fn review(withheld: &Value, keys: &[String]) -> Vec<ReviewItem> {
    keys.iter()
        .map(|key| {
            let value = key
                .split('.')
                .try_fold(withheld, |v, seg| v.get(seg))
                .cloned()
                .unwrap_or(Value::Null);
            let programs = programs(key, &value);
            let value = programs
                .is_empty()
                .then(|| serde_json::to_string(&value).unwrap_or_else(|_| format!("{value:?}")));
            ReviewItem {
                key: key.clone(),
                programs,
                value,
            }
        })
        .collect()
}

/// A checked value as `T`; `None` (and the raw value is shown instead)
/// if it somehow does not fit.
fn parse<T: serde::de::DeserializeOwned>(value: &Value) -> Option<T> {
    serde_yaml_ng::from_value(value.clone()).ok()
}

fn programs(key: &str, value: &Value) -> Vec<Program> {
    if key.starts_with("hooks.") {
        let hooks: Vec<HookSpec> = parse(value).unwrap_or_default();
        return hooks
            .into_iter()
            .map(|hook| Program {
                run: match (&hook.argv, &hook.command) {
                    (Some(argv), _) => quote_words(argv),
                    (None, Some(command)) => format!("sh -c {}", quote(command)),
                    (None, None) => "(nothing)".to_owned(),
                },
                name: hook.name,
            })
            .collect();
    }
    if key == "mcp.servers" {
        let servers: BTreeMap<String, McpServerConfig> = parse(value).unwrap_or_default();
        return servers
            .into_iter()
            .map(|(name, server)| {
                let run = match (&server.command, &server.url) {
                    (Some(command), _) => {
                        let mut words: Vec<String> = server
                            .env
                            .iter()
                            .map(|(k, v)| format!("{k}={}", quote(v)))
                            .collect();
                        words.push(quote(command));
                        words.extend(server.args.iter().map(|a| quote(a)));
                        words.join(" ")
                    }
                    (None, Some(url)) => format!("connect to {url}"),
                    (None, None) => "(nothing)".to_owned(),
                };
                let run = if server.enabled {
                    run
                } else {
                    format!("{run} (disabled)")
                };
                Program { name, run }
            })
            .collect();
    }
    if key == "guardrails.quality_gates" {
        let gates: Vec<QualityGate> = parse(value).unwrap_or_default();
        return gates
            .into_iter()
            .map(|gate| Program {
                run: format!("sh -c {}", quote(&gate.command)),
                name: gate.name,
            })
            .collect();
    }
    Vec::new()
}

/// `word` as a POSIX shell word: as is when it has no special characters,
/// single-quoted otherwise.
pub(crate) fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%{}".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn quote_words(words: &[String]) -> String {
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

/// Whether a project file's trust-only keys apply, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Trust {
    /// The file has no trust-only keys: all of it applies.
    NotNeeded,
    /// The file, as it is, is in the trust store.
    Recorded,
    /// Trusted for this run only (`--trust-workspace`).
    ThisRun,
    /// Not trusted: its trust-only keys are ignored.
    Untrusted,
}

impl Trust {
    /// Whether the trust-only keys apply.
    pub fn applies(self) -> bool {
        !matches!(self, Self::Untrusted)
    }
}

/// An error reading or writing the trust store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrustError {
    /// The store could not be read.
    #[error("could not read the trust store {}", path.display())]
    Read {
        /// The store.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The store is not what toolgate writes.
    #[error("the trust store {} is corrupt", path.display())]
    Corrupt {
        /// The store.
        path: PathBuf,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// The store was written by a newer toolgate.
    #[error("the trust store {} has version {version}, this toolgate reads version {STORE_VERSION}", path.display())]
    Version {
        /// The store.
        path: PathBuf,
        /// Its version.
        version: u32,
    },
    /// The store could not be written.
    #[error("could not write the trust store {}", path.display())]
    Write {
        /// The store.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// No place for the store: neither `XDG_CONFIG_HOME` nor `HOME` is set.
    #[error("there is no user configuration directory to keep the trust store in")]
    NoPlace,
}

impl TrustError {
    /// What the user can do about it.
    pub fn hint(&self) -> String {
        match self {
            Self::Read { path, .. } | Self::Write { path, .. } => format!(
                "check the permissions of {} and its directory",
                path.display()
            ),
            Self::Corrupt { path, .. } | Self::Version { path, .. } => format!(
                "fix or delete {} (deleting it forgets every trusted workspace; \
                 `toolgate trust` records them again)",
                path.display()
            ),
            Self::NoPlace => "set HOME or XDG_CONFIG_HOME".to_owned(),
        }
    }
}

/// The version of the store's format.
const STORE_VERSION: u32 = 1;

/// `trusted.json`, as written.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreFile {
    version: u32,
    #[serde(default)]
    trusted: Vec<TrustedFile>,
}

/// One trusted configuration file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustedFile {
    /// Its canonical path.
    pub path: PathBuf,
    /// Hex SHA-256 of its bytes when it was trusted.
    pub sha256: String,
    /// When, RFC 3339 UTC.
    pub trusted_at: String,
}

/// The configuration files the user trusts: `trusted.json` in the user's
/// configuration directory, one entry per file (path and hash).
///
/// ```json
/// {"version": 1, "trusted": [{"path": "/home/me/src/app/toolgate.yaml",
///   "sha256": "3b1f…", "trusted_at": "2025-01-31T09:12:00Z"}]}
/// ```
///
/// Written atomically (a temporary file in the same directory, renamed over
/// the old one), so a crash leaves the old store or the new one, never half
/// of one. Two toolgate processes trusting at the same moment may lose one
/// of the two records (last writer wins); nothing is trusted by mistake.
#[derive(Debug)]
pub struct TrustStore {
    path: PathBuf,
    files: Vec<TrustedFile>,
}

impl TrustStore {
    /// Reads the store at `path`; a missing file is an empty store. A store
    /// readable by others is made private first (`0600`, said in a
    /// `tracing` info line); [`save`](Self::save) writes it `0600` in a
    /// `0700` directory.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, TrustError> {
        let path = path.into();
        crate::own_state::tighten(&path);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self {
                    path,
                    files: Vec::new(),
                });
            }
            Err(source) => return Err(TrustError::Read { path, source }),
        };
        let file: StoreFile = match serde_json::from_slice(&bytes) {
            Ok(file) => file,
            Err(source) => return Err(TrustError::Corrupt { path, source }),
        };
        if file.version != STORE_VERSION {
            return Err(TrustError::Version {
                path,
                version: file.version,
            });
        }
        Ok(Self {
            path,
            files: file.trusted,
        })
    }

    /// Where the store lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The trusted files, in the order they were first trusted.
    pub fn files(&self) -> &[TrustedFile] {
        &self.files
    }

    /// Whether `file` (a canonical path) with content hash `sha256` is trusted.
    pub fn is_trusted(&self, file: &Path, sha256: &str) -> bool {
        self.files
            .iter()
            .any(|t| t.path == file && t.sha256 == sha256)
    }

    /// Records `file` with content hash `sha256`, replacing an older record
    /// of the same file. Call [`save`](Self::save) to keep it.
    pub fn trust(&mut self, file: PathBuf, sha256: String) {
        let now = jiff::Timestamp::now();
        let record = TrustedFile {
            path: file,
            sha256,
            trusted_at: now.round(jiff::Unit::Second).unwrap_or(now).to_string(),
        };
        match self.files.iter_mut().find(|t| t.path == record.path) {
            Some(old) => *old = record,
            None => self.files.push(record),
        }
    }

    /// Forgets `file`; whether it was there.
    pub fn revoke(&mut self, file: &Path) -> bool {
        let before = self.files.len();
        self.files.retain(|t| t.path != file);
        self.files.len() != before
    }

    /// Writes the store atomically, creating its directory if needed.
    pub fn save(&self) -> Result<(), TrustError> {
        let write_error = |source| TrustError::Write {
            path: self.path.clone(),
            source,
        };
        let file = StoreFile {
            version: STORE_VERSION,
            trusted: self.files.clone(),
        };
        let mut text = serde_json::to_string_pretty(&file)
            .map_err(|e| write_error(std::io::Error::other(e)))?;
        text.push('\n');
        // Private to the user, written whole or not at all.
        crate::atomic::write_private(&self.path, text.as_bytes()).map_err(write_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_keys_apply_untrusted() {
        let cases: &[(&str, bool)] = &[
            // Run programs.
            ("hooks.pre_tool_use", false),
            ("hooks.post_edit", false),
            ("hooks.session_start", false),
            ("mcp.servers", false),
            ("mcp.servers.everything.command", false),
            ("mcp.add_server_tool", false),
            ("guardrails.quality_gates", false),
            // Loosen policy.
            ("confirmation.mode", false),
            ("confirmation.rules", false),
            ("workspace.allow_sensitive", false),
            ("workspace.allow_delete", false),
            ("commands.sandbox", false),
            ("commands.sandbox_required", true),
            ("commands.deny_read", true),
            ("commands.env.inherit", false),
            ("commands.env.set", false),
            ("commands.readable", false),
            ("commands.writable", false),
            ("commands.home_readable", false),
            ("commands.network", false),
            ("commands.network.allow", false),
            ("commands.network.deny", true),
            ("commands.env", false),
            ("commands.limits", false),
            ("commands.limits.processes", false),
            ("audit.path", false),
            ("llm.base_url", false),
            ("llm.api_key_env", false),
            ("store.path", false),
            // Where assistant tools send requests, with which key, and
            // where they write.
            ("tools.web.enabled", false),
            ("tools.web.allow_hosts", false),
            ("tools.web.search.api_key_env", false),
            ("tools.web.search.base_url", false),
            ("tools.web.search", false),
            ("tools.web.timeout", true),
            ("tools.web.search.max_results", true),
            ("tools.phone.base_url", false),
            ("tools.phone.auth_token_env", false),
            ("tools.weather.base_url", false),
            ("tools.cron.enabled", false),
            ("tools.memory.dir", false),
            ("tools.memory.enabled", true),
            ("tools.persona.enabled", true),
            ("llm.fallback", false),
            ("routing.enabled", true),
            ("routing.max_tools", true),
            ("agents.docs.mode", false),
            ("agents.plan.mode", false),
            ("agents.docs", false),
            ("agents", false),
            // Sections and keys nobody has judged yet.
            ("skills.paths", false),
            ("web.allowed_domains", false),
            ("tools.web.allow_private", false),
            ("tools", false),
            ("commands", false),
            // Tighten, or cosmetic.
            ("commands.enabled", true),
            ("commands.allowed_only", true),
            ("commands.blocked_patterns", true),
            ("commands.max_output_lines", true),
            ("commands.max_sessions", true),
            ("commands.session_ttl", true),
            ("commands.session_output_cap", true),
            ("guardrails.protected_files", true),
            ("guardrails.sensitive_files", true),
            ("guardrails.blocked_commands", true),
            ("guardrails.code_rules", true),
            ("guardrails.max_files_modified", true),
            ("guardrails.max_lines_changed", true),
            ("workspace.max_file_size", true),
            ("tools.timeout", true),
            ("tools.datetime.enabled", true),
            ("tools.datetime.timezone", true),
            ("tools.datetime", false),
            ("tools.echo.enabled", true),
            ("llm.model", true),
            ("llm.provider", true),
            ("llm.timeout", true),
            ("llm.max_retries", true),
            ("llm.stream", true),
            ("llm.max_tokens", true),
            ("llm.temperature", true),
            ("skills.enabled", true),
            ("skills.disabled", true),
            ("llm.input_price_per_mtok", true),
            ("llm.output_price_per_mtok", true),
            ("llm.budget_usd", true),
            ("agents.docs.system_prompt", true),
            ("agents.docs.allowed_tools", true),
            ("agents.build.max_steps", true),
            // Look-alikes.
            ("llm.model_url", false),
            ("commands.enabled_everywhere", false),
            ("toolsx.timeout", false),
        ];
        for (key, expected) in cases {
            assert_eq!(applies_untrusted(key), *expected, "{key}");
        }
    }

    fn yaml(text: &str) -> Value {
        serde_yaml_ng::from_str(text).unwrap()
    }

    #[test]
    fn split_keeps_the_allowed_keys_and_withholds_the_rest() {
        let defaults = yaml(
            "workspace: {allow_delete: false, max_file_size: 1048576}\nhooks: {pre_tool_use: [], post_tool_use: []}\nagents: {}\nconfirmation: {mode: confirm-sensitive}\n",
        );
        let layer = yaml(
            "
workspace: {allow_delete: true, max_file_size: 10}
hooks:
  pre_tool_use: [{name: m, command: touch marker}]
  post_tool_use: []
confirmation: {mode: confirm-sensitive}
agents:
  docs: {mode: yolo, max_steps: 3}
future: {anything: 1}
",
        );
        let split = split(layer, &defaults);
        assert_eq!(
            split.keys,
            [
                "workspace.allow_delete",
                "hooks.pre_tool_use",
                "agents.docs.mode",
                "future.anything"
            ]
        );
        assert_eq!(
            split.kept,
            yaml("workspace: {max_file_size: 10}\nagents: {docs: {max_steps: 3}}\n")
        );
        assert_eq!(
            split.withheld,
            yaml(
                "workspace: {allow_delete: true}\nhooks: {pre_tool_use: [{name: m, command: touch marker}]}\nagents: {docs: {mode: yolo}}\nfuture: {anything: 1}\n"
            )
        );
    }

    /// A repository may deny hosts without trust, never allow them, nor
    /// switch the network on or off.
    #[test]
    fn only_a_network_deny_list_applies_untrusted() {
        let defaults = yaml("commands: {network: allow}\n");
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "commands: {network: {allow: [evil.example], deny: [tracker.example]}}",
                "commands: {network: {deny: [tracker.example]}}",
                &["commands.network.allow"],
            ),
            (
                "commands: {network: {deny: [tracker.example]}}",
                "commands: {network: {deny: [tracker.example]}}",
                &[],
            ),
            ("commands: {network: deny}", "{}", &["commands.network"]),
            ("commands: {network: allow}", "{}", &[]),
        ];
        for (layer, kept, withheld) in cases {
            let split = split(yaml(layer), &defaults);
            assert_eq!(split.kept, yaml(kept), "{layer}");
            assert_eq!(split.keys, *withheld, "{layer}");
        }
    }

    #[test]
    fn review_names_what_would_run() {
        let withheld = yaml(
            "
hooks:
  pre_tool_use:
    - {name: marker, command: \"echo {file} >> hook.log\"}
    - {name: lint, argv: [ruff, check, \"{file}\"]}
mcp:
  servers:
    files: {command: npx, args: [-y, server-filesystem, /], env: {TOKEN: x y}}
    remote: {url: 'https://example.com/mcp'}
guardrails:
  quality_gates: [{name: tests, command: cargo test}]
confirmation: {mode: yolo}
",
        );
        let keys: Vec<String> = [
            "hooks.pre_tool_use",
            "mcp.servers",
            "guardrails.quality_gates",
            "confirmation.mode",
        ]
        .map(str::to_owned)
        .to_vec();
        let items = review(&withheld, &keys);
        let runs: Vec<Vec<(&str, &str)>> = items
            .iter()
            .map(|i| {
                i.programs
                    .iter()
                    .map(|p| (p.name.as_str(), p.run.as_str()))
                    .collect()
            })
            .collect();
        assert_eq!(
            runs,
            [
                vec![
                    ("marker", "sh -c 'echo {file} >> hook.log'"),
                    ("lint", "ruff check {file}")
                ],
                vec![
                    ("files", "TOKEN='x y' npx -y server-filesystem /"),
                    ("remote", "connect to https://example.com/mcp")
                ],
                vec![("tests", "sh -c 'cargo test'")],
                vec![],
            ]
        );
        assert_eq!(items[3].value.as_deref(), Some("\"yolo\""));
        assert_eq!(items[0].value, None);
    }

    #[test]
    fn store_round_trip_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("toolgate/trusted.json");
        let mut store = TrustStore::open(&path).unwrap();
        assert!(store.files().is_empty());
        let file = PathBuf::from("/ws/toolgate.yaml");
        store.trust(file.clone(), "aa".into());
        store.save().unwrap();

        let mut store = TrustStore::open(&path).unwrap();
        assert!(store.is_trusted(&file, "aa"));
        assert!(!store.is_trusted(&file, "bb"), "another content");
        assert!(!store.is_trusted(Path::new("/other/toolgate.yaml"), "aa"));
        store.trust(file.clone(), "bb".into());
        assert_eq!(store.files().len(), 1, "one record per file");
        assert!(store.is_trusted(&file, "bb") && !store.is_trusted(&file, "aa"));
        assert!(store.revoke(&file));
        assert!(!store.revoke(&file));

        std::fs::write(&path, "{not json").unwrap();
        let error = TrustStore::open(&path).unwrap_err();
        assert!(matches!(error, TrustError::Corrupt { .. }), "{error:?}");
        assert!(error.hint().contains("fix or delete"), "{}", error.hint());
        std::fs::write(&path, r#"{"version": 9, "trusted": []}"#).unwrap();
        assert!(matches!(
            TrustStore::open(&path).unwrap_err(),
            TrustError::Version { version: 9, .. }
        ));
    }

    #[test]
    fn quoting() {
        let cases: &[(&str, &str)] = &[
            ("ls", "ls"),
            ("{file}", "{file}"),
            ("a b", "'a b'"),
            ("it's", r"'it'\''s'"),
            ("", "''"),
            ("$HOME", "'$HOME'"),
        ];
        for (word, quoted) in cases {
            assert_eq!(quote(word), *quoted, "{word}");
        }
    }
}
