//! `commands.network`: the setting's forms (see [`crate::network`]).

use std::fmt;

use serde::de::{self, Deserializer, Error as _, MapAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use toolgate_sandbox::{NetworkPolicy, PatternError};

/// Where a refused command is told to look.
const HINT: &str =
    "add it to commands.network.allow (toolgate.yaml, or ~/.config/toolgate/config.yaml)";

/// `commands.network` (see the [forms](crate::network)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum NetworkSetting {
    /// The host's network, every destination.
    #[default]
    Allow,
    /// No network.
    Deny,
    /// Only through toolgate's proxy, to the hosts the lists allow.
    Domains(DomainLists),
}

/// The lists of the mapping form of `commands.network`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DomainLists {
    /// Hosts commands may reach. Default: none (every host is unlisted).
    pub allow: Vec<String>,
    /// Hosts they may never reach; wins over `allow`. Default: none.
    pub deny: Vec<String>,
}

impl DomainLists {
    /// The sandbox's policy for these lists.
    pub fn policy(&self) -> Result<NetworkPolicy, PatternError> {
        NetworkPolicy::builder()
            .allow(self.allow.iter().cloned())
            .deny(self.deny.iter().cloned())
            .hint(HINT)
            .build()
    }
}

impl NetworkSetting {
    /// `allow`, `deny`, or `allow: a, b; deny: c`, for people.
    pub fn describe(&self) -> String {
        match self {
            Self::Allow => "allow".to_owned(),
            Self::Deny => "deny".to_owned(),
            Self::Domains(lists) => {
                let list = |l: &[String]| {
                    if l.is_empty() {
                        "nothing".to_owned()
                    } else {
                        l.join(", ")
                    }
                };
                format!("allow: {}; deny: {}", list(&lists.allow), list(&lists.deny))
            }
        }
    }
}

impl Serialize for NetworkSetting {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Allow => serializer.serialize_str("allow"),
            Self::Deny => serializer.serialize_str("deny"),
            Self::Domains(lists) => lists.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for NetworkSetting {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Form;

        impl<'de> Visitor<'de> for Form {
            type Value = NetworkSetting;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`allow`, `deny`, or a mapping with `allow` and `deny` lists")
            }

            fn visit_str<E: de::Error>(self, value: &str) -> Result<Self::Value, E> {
                match value {
                    "allow" => Ok(NetworkSetting::Allow),
                    "deny" => Ok(NetworkSetting::Deny),
                    other => Err(E::invalid_value(de::Unexpected::Str(other), &self)),
                }
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let lists = DomainLists::deserialize(de::value::MapAccessDeserializer::new(map))?;
                // Every entry is read now, so `config check` names a bad one.
                lists
                    .policy()
                    .map_err(|e| A::Error::custom(format!("{e}")))?;
                Ok(NetworkSetting::Domains(lists))
            }
        }

        deserializer.deserialize_any(Form)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let cases: &[(&str, Result<NetworkSetting, &str>)] = &[
            ("allow", Ok(NetworkSetting::Allow)),
            ("deny", Ok(NetworkSetting::Deny)),
            (
                "{allow: [github.com, '*.npmjs.org'], deny: [gist.github.com]}",
                Ok(NetworkSetting::Domains(DomainLists {
                    allow: vec!["github.com".into(), "*.npmjs.org".into()],
                    deny: vec!["gist.github.com".into()],
                })),
            ),
            (
                "{deny: [tracker.example]}",
                Ok(NetworkSetting::Domains(DomainLists {
                    allow: vec![],
                    deny: vec!["tracker.example".into()],
                })),
            ),
            ("{}", Ok(NetworkSetting::Domains(DomainLists::default()))),
            (
                "maybe",
                Err(
                    "invalid value: string \"maybe\", expected `allow`, `deny`, or a mapping with `allow` and `deny` lists",
                ),
            ),
            (
                "{allow: [github.com], ask: [x]}",
                Err("unknown field `ask`"),
            ),
            (
                "{allow: ['exa*mple.com']}",
                Err("`exa*mple.com` is not a network pattern"),
            ),
            (
                "{allow: ['example.com:0']}",
                Err("the port is not a number from 1 to 65535"),
            ),
        ];
        for (yaml, expected) in cases {
            let parsed: Result<NetworkSetting, String> =
                serde_yaml_ng::from_str(yaml).map_err(|e| e.to_string());
            match (parsed, expected) {
                (Ok(got), Ok(want)) => assert_eq!(&got, want, "{yaml}"),
                (Err(got), Err(want)) => assert!(got.contains(want), "{yaml}: {got}"),
                (got, want) => panic!("{yaml}: got {got:?}, want {want:?}"),
            }
        }
        // Written back in the same forms.
        for setting in [
            NetworkSetting::Allow,
            NetworkSetting::Deny,
            NetworkSetting::Domains(DomainLists {
                allow: vec!["a.example".into()],
                deny: vec![],
            }),
        ] {
            let text = serde_yaml_ng::to_string(&setting).unwrap();
            assert_eq!(
                serde_yaml_ng::from_str::<NetworkSetting>(&text).unwrap(),
                setting
            );
        }
    }
}
