//! `self_inspect` (seed 003's selfcode, read-only): what the agent can
//! learn about the toolgate it runs in.
//!
//! # Rules
//!
//! 1. `config` is the effective configuration with every value that could
//!    be a secret replaced by `"[redacted]"`: values under keys that name
//!    a key, token, secret, password, credential or authorisation (but not
//!    `*_env`, which name a variable, not its value), the values of
//!    `commands.env.set`, and every MCP server's `env` and `headers`; and
//!    in every other string, what [`toolgate_core::redact`] finds: a
//!    URL's user and password (`llm.base_url: http://user:PASS@host`),
//!    credential query parameters (`?token=`, `?api_key=`), bearer tokens
//!    and the values of the variables keys are read from.
//! 2. `tools` lists the registered tools with their sensitivity; `health`
//!    gives the sandbox in force and how each MCP server started.
//! 3. It reads only what the host already holds: no file, no process, no
//!    network (no effects).

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_core::{
    Effects, EffectsError, Registry, Sensitivity, ToolContext, ToolResult, TypedTool,
};

/// What to report.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InspectWhat {
    /// The effective configuration, secrets redacted.
    Config,
    /// The tools and their sensitivity.
    Tools,
    /// The sandbox and the MCP servers.
    Health,
}

/// Arguments of `self_inspect`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SelfInspectArgs {
    /// `config`, `tools` or `health`.
    pub what: InspectWhat,
}

/// `self_inspect` (rules on the module).
#[derive(Debug, Clone)]
pub struct SelfInspect {
    config: Value,
    health: Value,
    registry: Arc<Registry>,
}

impl SelfInspect {
    /// Over `config` (the effective configuration as JSON; redacted
    /// here), `health` and the live `registry`.
    pub fn new(config: Value, health: Value, registry: Arc<Registry>) -> Self {
        Self {
            config: redact(config, &[]),
            health,
            registry,
        }
    }
}

/// Words in a key that mark its value as a possible secret (rule 1).
const SECRET_WORDS: &[&str] = &[
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "credential",
    "authorization",
    "auth",
    "cookie",
];

/// Whether the value under `key` at `path` is withheld (rule 1).
fn secret(path: &[String], key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    if lower.ends_with("_env") || lower.ends_with("_env_var") {
        return false;
    }
    let parent = path.last().map(String::as_str);
    let in_mcp = path.first().is_some_and(|p| p == "mcp");
    (parent == Some("set") && path.iter().any(|p| p == "env"))
        || (in_mcp && matches!(key, "env" | "headers"))
        || SECRET_WORDS
            .iter()
            .any(|w| lower.split(['_', '-', '.']).any(|part| part == *w))
}

/// `value` with the secrets under it replaced (rule 1).
fn redact(value: Value, path: &[String]) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, v)| {
                    if secret(path, &key) && !v.is_null() {
                        (key, Value::from("[redacted]"))
                    } else {
                        let mut inner = path.to_vec();
                        inner.push(key.clone());
                        (key, redact(v, &inner))
                    }
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(|v| redact(v, path)).collect()),
        // Secrets inside other values: a URL's user and password, its
        // credential parameters, a registered key (toolgate_core::redact).
        Value::String(text) => Value::String(toolgate_core::redact(&text).into_owned()),
        other => other,
    }
}

#[async_trait]
impl TypedTool for SelfInspect {
    type Args = SelfInspectArgs;
    const NAME: &'static str = "self_inspect";
    const DESCRIPTION: &'static str = "Report on yourself: what=config (settings, secrets hidden), tools, or health (sandbox, MCP servers).";
    const SENSITIVITY: Sensitivity = Sensitivity::ReadOnly;

    fn effects(&self, _args: &SelfInspectArgs) -> Result<Effects, EffectsError> {
        Ok(Effects::none())
    }

    async fn run(&self, args: SelfInspectArgs, _ctx: &ToolContext) -> ToolResult {
        let value = match args.what {
            InspectWhat::Config => self.config.clone(),
            InspectWhat::Health => self.health.clone(),
            InspectWhat::Tools => Value::Array(
                self.registry
                    .list()
                    .iter()
                    .map(|t| {
                        json!({
                            "name": t.name(),
                            "read_only": t.spec().annotations.read_only_hint == Some(true),
                        })
                    })
                    .collect(),
            ),
        };
        ToolResult::success(serde_json::to_string_pretty(&value).unwrap_or_default())
    }
}

/// The `self_inspect` group, `tools.self_inspect` (off by default). The
/// tool reads the gate it is registered in (its registry, the health of
/// the sandbox and MCP servers), so the gate registers it; the catalog's
/// build offers nothing, and the entry is there for the section, the
/// trust key and the reserved name.
#[derive(Debug, Clone, Copy, Default)]
pub struct SelfInspectGroup;

impl toolgate_core::Group for SelfInspectGroup {
    fn name(&self) -> &'static str {
        "self_inspect"
    }

    fn section_key(&self) -> Option<&'static str> {
        Some("self_inspect")
    }

    fn untrusted_keys(&self) -> &'static [&'static str] {
        &[""]
    }

    fn tool_names(&self) -> &'static [&'static str] {
        &["self_inspect"]
    }

    fn build(
        &self,
        _ctx: &toolgate_core::GroupContext<'_>,
    ) -> Result<toolgate_core::ToolGroup, toolgate_core::GroupError> {
        Ok(toolgate_core::ToolGroup::new(self.name(), "", Vec::new()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_and_variable_names_kept() {
        let config = json!({
            "llm": {"api_key_env": "OPENAI_API_KEY", "model": "m", "api_key": "sk-1"},
            "commands": {"env": {"set": {"PATH_EXTRA": "/x", "TOKEN": "t"}, "inherit": ["HOME"]}},
            "mcp": {"servers": {"gh": {"command": "gh-mcp", "env": {"GH": "ghp"}, "headers": {"Authorization": "Bearer x"}}}},
            "tools": {"phone": {"auth_token_env": "TWILIO", "account_sid": "AC1"},
                      "web": {"search": {"api_key_env": "BRAVE", "base_url": "https://b"}}},
            "hooks": {"pre_tool_use": [{"name": "h", "secret_token": "abc"}]},
            "store": {"path": null, "password": null}
        });
        let out = redact(config, &[]);
        let text = out.to_string();
        for secret in ["sk-1", "\"/x\"", "\"t\"", "ghp", "Bearer x", "abc"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        for kept in [
            "OPENAI_API_KEY",
            "TWILIO",
            "BRAVE",
            "gh-mcp",
            "https://b",
            "HOME",
            "AC1",
        ] {
            assert!(text.contains(kept), "{kept} missing from {text}");
        }
        assert_eq!(out["store"]["password"], Value::Null);
        assert_eq!(out["llm"]["api_key"], "[redacted]");
    }

    #[test]
    fn secrets_inside_urls_are_redacted() {
        let config = json!({"llm": {
            "base_url": "http://user:PASS-w0rd@llm.example:8080/v1?token=tok-123&api_key=key-456&model=m",
            "model": "m"}});
        let out = redact(config, &[]);
        let url = out["llm"]["base_url"].as_str().unwrap();
        for secret in ["user", "PASS-w0rd", "tok-123", "key-456"] {
            assert!(!url.contains(secret), "{secret} in {url}");
        }
        assert!(
            url.contains("llm.example:8080/v1") && url.contains("model=m"),
            "{url}"
        );
    }
}
