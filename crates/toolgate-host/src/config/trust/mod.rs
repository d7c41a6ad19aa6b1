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
//! This module decides and records; it never prints. The keys that apply
//! untrusted and the split of a file are here; what the withheld keys
//! would run is in `review.rs`; the record of trusted files in `store.rs`.

mod review;
mod store;

pub(crate) use review::quote;
pub use review::{Program, ReviewItem, review};
pub use store::{Trust, TrustError, TrustStore, TrustedFile};

use std::fmt::Write as _;

use serde_yaml_ng::{Mapping, Value};
use sha2::{Digest, Sha256};

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
/// | `llm.text_tool_calls`, `llm.constrain` | whether calls written as text are recovered, and whether replies are held to a JSON schema; every call still goes through the gate |
/// | `routing` | which of the agent's tools each task is offered (the classifying call goes to the run's own server) |
/// | `skills.enabled`, `skills.disabled` | whether skills are offered, and which not (the workspace's own skills are in the workspace anyway) |
/// | `agents.*.system_prompt`, `agents.*.allowed_tools`, `agents.*.disabled_tools`, `agents.*.max_steps`, `agents.*.max_repeated_calls`, `agents.*.max_calls_per_step`, `agents.*.prompt_mode`, `agents.*.delegate_to`, `agents.*.profile`, `agents.*.task_checks` | an agent's prompt, tool list, limits, profile, task checks and who it may hand work to; every call (a delegated agent's too, under the caller's mode) still goes through the gate |
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
    "llm.constrain",
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
    "agents.*.profile",
    "agents.*.task_checks",
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
}
