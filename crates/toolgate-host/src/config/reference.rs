//! The configuration keys as data: every key of [`Config`], its built-in
//! default and whether a workspace file sets it before it is trusted.
//!
//! The keys are read off the defaults themselves (the serialized
//! [`Config::default`]), so a key added to a section appears here without
//! anyone listing it; the project's configuration reference is generated
//! from [`config_keys`] and checked against it in CI.

use serde_yaml_ng::Value;

use crate::Config;
use crate::config::trust;

/// One configuration key.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigKey {
    /// The dotted key (`commands.limits.memory`); `NAME` stands for a name
    /// you choose (`agents.NAME.mode`).
    pub key: String,
    /// The built-in default, as inline YAML (`none` where the key is unset
    /// by default), or the rule that computes it on each machine.
    pub default: String,
    /// Whether the key applies from a workspace file you have not trusted.
    pub untrusted: Untrusted,
}

/// Whether a key of a workspace file applies before you trust the file
/// (the rules: [`trust::APPLIES_UNTRUSTED`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Untrusted {
    /// It applies.
    Applies,
    /// Some of its value applies (`commands.network`'s `deny` list), the
    /// rest needs trust.
    Partly,
    /// It applies only once the file is trusted.
    NeedsTrust,
}

impl Untrusted {
    fn of(key: &str) -> Self {
        let below = format!("{key}.");
        if trust::applies_untrusted(key) {
            Self::Applies
        } else if trust::APPLIES_UNTRUSTED
            .iter()
            .any(|pattern| pattern.starts_with(&below))
        {
            Self::Partly
        } else {
            Self::NeedsTrust
        }
    }

    /// `applies`, `partly` or `needs trust`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Applies => "applies",
            Self::Partly => "partly",
            Self::NeedsTrust => "needs trust",
        }
    }
}

/// Defaults computed from the machine, described rather than printed, so
/// the reference is the same wherever it is generated.
const MACHINE_DEPENDENT: &[(&str, &str)] = &[
    ("commands.limits.memory", "half of RAM, at most 8GiB"),
    ("commands.limits.tmp_size", "a quarter of RAM, at most 4GiB"),
    ("commands.limits.shm_size", "a quarter of RAM, at most 4GiB"),
];

/// Maps of entries you name whose entries have defaults of their own:
/// their keys are listed under `PREFIX.NAME.`.
fn named_entries() -> Vec<(&'static str, Value)> {
    let agent =
        serde_yaml_ng::to_value(toolgate_agent::AgentConfig::default()).unwrap_or(Value::Null);
    vec![("agents", agent)]
}

/// Every configuration key in file order, with its default.
///
/// A mapping is descended into; anything else (a scalar, a list, an empty
/// mapping of entries you name) is one key. The entries of `agents` are
/// listed once, under `agents.NAME`.
pub fn config_keys() -> Vec<ConfigKey> {
    let mut keys = Vec::new();
    let Ok(defaults) = serde_yaml_ng::to_value(Config::default()) else {
        return keys;
    };
    let named = named_entries();
    walk("", &defaults, &named, &mut keys);
    keys
}

fn walk(prefix: &str, value: &Value, named: &[(&'static str, Value)], out: &mut Vec<ConfigKey>) {
    if let Some((_, entry)) = named.iter().find(|(key, _)| *key == prefix) {
        walk(&format!("{prefix}.NAME"), entry, &[], out);
        return;
    }
    match value {
        Value::Mapping(map) if !map.is_empty() => {
            for (key, value) in map {
                let Some(key) = key.as_str() else { continue };
                let path = if prefix.is_empty() {
                    key.to_owned()
                } else {
                    format!("{prefix}.{key}")
                };
                walk(&path, value, named, out);
            }
        }
        _ => {
            let default = MACHINE_DEPENDENT
                .iter()
                .find(|(key, _)| *key == prefix)
                .map_or_else(|| inline(value), |(_, rule)| (*rule).to_owned());
            out.push(ConfigKey {
                key: prefix.to_owned(),
                default,
                untrusted: Untrusted::of(prefix),
            });
        }
    }
}

/// A value as one line of YAML (flow style); `none` for null.
fn inline(value: &Value) -> String {
    match value {
        Value::Null => "none".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            // Quote only what YAML would read as something else.
            match serde_yaml_ng::from_str::<Value>(s) {
                Ok(Value::String(back)) if back == *s => s.clone(),
                _ => format!("{s:?}"),
            }
        }
        Value::Sequence(items) => {
            let items: Vec<String> = items.iter().map(inline).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Mapping(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", inline(k), inline(v)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        Value::Tagged(tagged) => format!("!{} {}", tagged.tag, inline(&tagged.value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find<'a>(keys: &'a [ConfigKey], key: &str) -> &'a ConfigKey {
        keys.iter()
            .find(|k| k.key == key)
            .unwrap_or_else(|| panic!("no key {key}"))
    }

    #[test]
    fn keys_carry_defaults_and_trust() {
        let keys = config_keys();
        let mode = find(&keys, "confirmation.mode");
        assert_eq!(mode.default, "confirm-sensitive");
        assert_eq!(mode.untrusted, Untrusted::NeedsTrust);
        let lines = find(&keys, "commands.max_output_lines");
        assert_eq!(lines.default, "200");
        assert_eq!(lines.untrusted, Untrusted::Applies);
        assert_eq!(find(&keys, "commands.network").untrusted, Untrusted::Partly);
        assert_eq!(find(&keys, "llm.model").default, "none");
        assert_eq!(
            find(&keys, "agents.NAME.system_prompt").untrusted,
            Untrusted::Applies
        );
        assert_eq!(
            find(&keys, "agents.NAME.mode").untrusted,
            Untrusted::NeedsTrust
        );
        assert_eq!(
            find(&keys, "commands.limits.memory").default,
            "half of RAM, at most 8GiB"
        );
    }

    #[test]
    fn every_key_is_a_leaf_and_unique() {
        let keys = config_keys();
        for key in &keys {
            assert!(
                !keys
                    .iter()
                    .any(|other| other.key.starts_with(&format!("{}.", key.key))),
                "{} is listed and has keys below it",
                key.key
            );
        }
        let mut names: Vec<&str> = keys.iter().map(|k| k.key.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), keys.len());
    }
}
