//! The secrets toolgate holds, registered for redaction
//! ([`toolgate_core::register_secret`]) as soon as a configuration loads, so
//! no error, report, log line or `self_inspect` answer shows them, wherever
//! they appear (a model server's error body echoing the key included).
//!
//! # Rules
//!
//! 1. The value of every variable the configuration names as holding a
//!    secret — every `*_env` key (`llm.api_key_env`, a fallback entry's
//!    `api_key_env`, an MCP server's `token_env`, `web.search.api_key_env`,
//!    …) — is registered.
//! 2. So is the value of every variable whose name says it holds one
//!    (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*PASSWD*`,
//!    `*CREDENTIAL*`, `*AUTH*`, case-insensitive), configured or not: a
//!    key in the environment can reach a command's output or a server's
//!    answer without toolgate ever reading it.
//! 3. Values shorter than [`toolgate_core::MIN_SECRET_CHARS`] are ignored
//!    by the registry (they would redact ordinary words).

use serde_json::Value;

/// Words in a variable's name that mark its value as a secret (rule 2).
const SECRET_NAMES: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
];

/// Registers the secrets of `env` under `config` (the effective
/// configuration as JSON), by the module rules.
pub(crate) fn register(env: &[(String, String)], config: &Value) {
    let mut named = Vec::new();
    env_names(config, &mut named);
    for (name, value) in env {
        let upper = name.to_ascii_uppercase();
        if named.iter().any(|n| n == name) || SECRET_NAMES.iter().any(|w| upper.contains(w)) {
            toolgate_core::register_secret(value);
        }
    }
}

/// The values of every `*_env` key in `value` (rule 1).
fn env_names(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                match value {
                    Value::String(name) if key.ends_with("_env") => out.push(name.clone()),
                    other => env_names(other, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| env_names(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn configured_and_credential_named_variables_are_registered() {
        let env = vec![
            ("MY_LLM".to_owned(), "value-of-my-llm-0001".to_owned()),
            ("GH_PAT".to_owned(), "value-of-gh-pat-0002".to_owned()),
            (
                "OPENAI_API_KEY".to_owned(),
                "value-of-openai-0003".to_owned(),
            ),
            (
                "service_token".to_owned(),
                "value-of-service-0004".to_owned(),
            ),
            ("EDITOR".to_owned(), "value-of-editor-0005".to_owned()),
        ];
        let config = json!({"llm": {"api_key_env": "MY_LLM",
            "fallback": [{"api_key_env": "UNSET"}]},
            "mcp": {"servers": {"gh": {"token_env": "GH_PAT"}}}});
        register(&env, &config);
        let text = env
            .iter()
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let shown = toolgate_core::redact(&text);
        for hidden in ["0001", "0002", "0003", "0004"] {
            assert!(!shown.contains(hidden), "{hidden}: {shown}");
        }
        assert!(shown.contains("value-of-editor-0005"), "{shown}");
    }
}
