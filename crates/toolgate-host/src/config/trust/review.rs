//! What a project file's trust-only keys would do, for a person to judge
//! before trusting it.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_yaml_ng::Value;
use toolgate_engine::{HookSpec, QualityGate};
use toolgate_mcp::McpServerConfig;

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

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> Value {
        serde_yaml_ng::from_str(text).unwrap()
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
