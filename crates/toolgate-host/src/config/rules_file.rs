//! `confirmation.rules` in the user's own configuration file: read, add,
//! remove (`toolgate rules`, the web UI's "Always allow"); and the web UI's
//! per-agent permission toggle (`ui.permissions`).
//!
//! The user's file is always trusted, so this is where "always allow" lives.
//! Only those keys are changed. The edit is made on the file's text, so its
//! comments and layout stay ([`toolgate_yaml_edit`]), when the file is in
//! block style and the edited text reads back as exactly the intended
//! value; otherwise the file is rewritten from its value (same content,
//! comments lost).

use std::path::{Path, PathBuf};

use serde_yaml_ng::{Mapping, Value};
use toolgate_policy::{ConfirmationRule, RuleError};

/// Why the user's rules could not be read or changed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RulesFileError {
    /// Neither `XDG_CONFIG_HOME` nor `HOME` is set.
    #[error("no user configuration directory (neither XDG_CONFIG_HOME nor HOME is set)")]
    NoConfigDir,
    /// The file exists but cannot be read.
    #[error("could not read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid YAML; it is left as it is.
    #[error("{} is not valid YAML; it was left unchanged", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: serde_yaml_ng::Error,
    },
    /// A key on the way to the rules holds something else than expected.
    #[error("`{key}` in {} is not {expected}; it was left unchanged", path.display())]
    Shape {
        /// The file.
        path: PathBuf,
        /// The dotted key.
        key: &'static str,
        /// What it should be.
        expected: &'static str,
    },
    /// The rules already in the file do not read as rules.
    #[error("`confirmation.rules` in {} is invalid", path.display())]
    Rules {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: serde_yaml_ng::Error,
    },
    /// The rule to add is malformed or too broad.
    #[error("the rule was not added")]
    Rule(#[source] RuleError),
    /// No rule has that number.
    #[error("there is no rule {number} (there are {count})")]
    NoSuchRule {
        /// The number asked for.
        number: usize,
        /// How many rules there are.
        count: usize,
    },
    /// The file could not be written.
    #[error("could not write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

impl RulesFileError {
    /// What to do about it, for any front end.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            Self::Parse { .. } | Self::Shape { .. } | Self::Rules { .. } => {
                Some("fix the file by hand; toolgate does not rewrite a file it cannot read")
            }
            Self::Rule(_) => Some(
                "an allow rule names one tool, and for `run_command` a command prefix \
                 (`--command 'git status'`)",
            ),
            Self::NoSuchRule { .. } => Some("`toolgate rules list` numbers the rules"),
            Self::NoConfigDir => Some("set HOME or XDG_CONFIG_HOME"),
            Self::Read { .. } | Self::Write { .. } => None,
        }
    }

    /// Whether the file could not be read or written (the machine's fault,
    /// not the request's).
    pub fn is_io(&self) -> bool {
        matches!(self, Self::Read { .. } | Self::Write { .. })
    }
}

/// The user's configuration file, opened to change its
/// `confirmation.rules`.
#[derive(Debug, Clone)]
pub struct UserRules {
    path: PathBuf,
    doc: Value,
    /// The file's text with the edits so far, while they could be made on
    /// the text.
    text: Option<String>,
}

impl UserRules {
    /// Opens the user's configuration file of `env`
    /// (`$XDG_CONFIG_HOME/toolgate/config.yaml`, else
    /// `~/.config/toolgate/config.yaml`); a missing file has no rules.
    ///
    /// # Errors
    ///
    /// [`RulesFileError`] when there is no configuration directory, or the
    /// file cannot be read or is not a YAML mapping.
    pub fn open_user(env: &[(String, String)]) -> Result<Self, RulesFileError> {
        Self::open(crate::config::user_config_path(env).ok_or(RulesFileError::NoConfigDir)?)
    }

    /// Opens `path`; a missing file has no rules. The file is the user's own
    /// configuration: one readable by others is made private first
    /// (`0600`, said in a `tracing` info line), and [`save`](Self::save)
    /// writes it `0600`.
    ///
    /// # Errors
    ///
    /// [`RulesFileError`] when the file cannot be read or is not a YAML
    /// mapping (an empty file is an empty mapping).
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, RulesFileError> {
        let path = path.into();
        crate::own_state::tighten(&path);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(source) => return Err(RulesFileError::Read { path, source }),
        };
        let doc = if text.trim().is_empty() {
            Value::Null
        } else {
            serde_yaml_ng::from_str(&text).map_err(|source| RulesFileError::Parse {
                path: path.clone(),
                source,
            })?
        };
        // An empty document (or `~`) is an empty mapping.
        let doc = if doc.is_null() {
            Value::Mapping(Mapping::new())
        } else {
            doc
        };
        let text = (!text.is_empty()).then_some(text);
        let this = Self { path, doc, text };
        this.check_shape()?;
        Ok(this)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The rules in the file, in order (rule 1 first).
    ///
    /// # Errors
    ///
    /// [`RulesFileError::Rules`] when an entry does not read as a rule.
    pub fn rules(&self) -> Result<Vec<ConfirmationRule>, RulesFileError> {
        match self.sequence() {
            None => Ok(Vec::new()),
            Some(list) => {
                serde_yaml_ng::from_value(Value::Sequence(list.clone())).map_err(|source| {
                    RulesFileError::Rules {
                        path: self.path.clone(),
                        source,
                    }
                })
            }
        }
    }

    /// Appends `rule` and returns its number. The rule is checked on its own
    /// first ([`confirmation_rules_builder`](crate::confirmation_rules_builder)):
    /// a malformed or too broad rule is refused. Nothing is written until [`save`](Self::save).
    ///
    /// # Errors
    ///
    /// [`RulesFileError::Rule`] for a refused rule.
    pub fn add(&mut self, rule: &ConfirmationRule) -> Result<usize, RulesFileError> {
        crate::confirmation_rules_builder()
            .rules([rule.clone()])
            .build()
            .map_err(RulesFileError::Rule)?;
        let value = serde_yaml_ng::to_value(rule).map_err(|source| RulesFileError::Rules {
            path: self.path.clone(),
            source,
        })?;
        let error = self.shape_error();
        let list = self.sequence_mut().ok_or(error)?;
        list.push(value);
        let number = list.len();
        let item = serde_json::to_string(rule).ok();
        self.text = self.text.take().zip(item).and_then(|(text, item)| {
            toolgate_yaml_edit::append_item(&text, "confirmation", "rules", &item)
        });
        Ok(number)
    }

    /// Sets `ui.permissions.<agent>`, the web UI's permission toggle.
    /// Nothing is written until [`save`](Self::save).
    ///
    /// # Errors
    ///
    /// [`RulesFileError::Shape`] when `ui` or `ui.permissions` holds
    /// something else than a mapping.
    pub fn set_permission(
        &mut self,
        agent: &str,
        permission: crate::config::AgentPermission,
    ) -> Result<(), RulesFileError> {
        let path = self.path.clone();
        let shape = |key, expected| RulesFileError::Shape {
            path: path.clone(),
            key,
            expected,
        };
        let Value::Mapping(root) = &mut self.doc else {
            return Err(shape("(the file)", "a mapping"));
        };
        let ui = root
            .entry(Value::from("ui"))
            .or_insert_with(|| Value::Mapping(Mapping::new()));
        if ui.is_null() {
            *ui = Value::Mapping(Mapping::new());
        }
        let Value::Mapping(ui) = ui else {
            return Err(shape("ui", "a mapping"));
        };
        let permissions = ui
            .entry(Value::from("permissions"))
            .or_insert_with(|| Value::Mapping(Mapping::new()));
        if permissions.is_null() {
            *permissions = Value::Mapping(Mapping::new());
        }
        let Value::Mapping(permissions) = permissions else {
            return Err(shape("ui.permissions", "a mapping"));
        };
        permissions.insert(Value::from(agent), Value::from(permission.as_str()));
        let value = format!("\"{}\"", permission.as_str());
        self.text = self.text.take().and_then(|text| {
            toolgate_yaml_edit::set_entry(&text, "ui", "permissions", agent, &value)
        });
        Ok(())
    }

    /// Removes rule `number` (from 1), whether or not it reads as a rule,
    /// and returns it as YAML. Nothing is written until
    /// [`save`](Self::save).
    ///
    /// # Errors
    ///
    /// [`RulesFileError::NoSuchRule`] when there is no such rule.
    pub fn remove(&mut self, number: usize) -> Result<String, RulesFileError> {
        let count = self.sequence().map_or(0, Vec::len);
        if number == 0 || number > count {
            return Err(RulesFileError::NoSuchRule { number, count });
        }
        let error = self.shape_error();
        let removed = self.sequence_mut().ok_or(error)?.remove(number - 1);
        self.text = self.text.take().and_then(|text| {
            toolgate_yaml_edit::remove_item(&text, "confirmation", "rules", number - 1)
        });
        Ok(serde_yaml_ng::to_string(&removed)
            .unwrap_or_default()
            .trim_end()
            .to_owned())
    }

    /// Writes the file atomically (a temporary file in the same directory,
    /// renamed over it), creating its directory if needed. An existing
    /// file keeps its permissions; a new one is private to the user.
    ///
    /// # Errors
    ///
    /// [`RulesFileError::Write`] when it cannot be written.
    pub fn save(&self) -> Result<(), RulesFileError> {
        let write_error = |source| RulesFileError::Write {
            path: self.path.clone(),
            source,
        };
        // The edited text when it reads back as exactly the intended value;
        // else the value, rewritten.
        let edited = self
            .text
            .as_ref()
            .filter(|text| serde_yaml_ng::from_str::<Value>(text).ok().as_ref() == Some(&self.doc));
        let text = match edited {
            Some(text) => text.clone(),
            None => serde_yaml_ng::to_string(&self.doc)
                .map_err(|e| write_error(std::io::Error::other(e)))?,
        };
        // toolgate's own file (tokens live here too): the user's only.
        crate::atomic::write_private(&self.path, text.as_bytes()).map_err(write_error)
    }

    fn check_shape(&self) -> Result<(), RulesFileError> {
        let shape = |key, expected| RulesFileError::Shape {
            path: self.path.clone(),
            key,
            expected,
        };
        let Value::Mapping(root) = &self.doc else {
            return Err(shape("(the file)", "a mapping"));
        };
        match root.get("confirmation") {
            None | Some(Value::Null) => Ok(()),
            Some(Value::Mapping(section)) => match section.get("rules") {
                None | Some(Value::Null | Value::Sequence(_)) => Ok(()),
                Some(_) => Err(shape("confirmation.rules", "a list")),
            },
            Some(_) => Err(shape("confirmation", "a mapping")),
        }
    }

    fn sequence(&self) -> Option<&Vec<Value>> {
        match self.doc.get("confirmation")?.get("rules")? {
            Value::Sequence(list) => Some(list),
            _ => None,
        }
    }

    /// The rules list, created if missing; `None` when the file's shape
    /// does not allow it (checked at open, so not expected).
    fn sequence_mut(&mut self) -> Option<&mut Vec<Value>> {
        let root = self.doc.as_mapping_mut()?;
        let section = root
            .entry(Value::from("confirmation"))
            .or_insert(Value::Null);
        if section.is_null() {
            *section = Value::Mapping(Mapping::new());
        }
        let rules = section
            .as_mapping_mut()?
            .entry(Value::from("rules"))
            .or_insert(Value::Null);
        if rules.is_null() {
            *rules = Value::Sequence(Vec::new());
        }
        rules.as_sequence_mut()
    }

    fn shape_error(&self) -> RulesFileError {
        RulesFileError::Shape {
            path: self.path.clone(),
            key: "confirmation.rules",
            expected: "a list",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AgentPermission;
    use toolgate_policy::RuleDecision;

    #[test]
    fn edits_keep_the_files_comments() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        let original = "# my settings\nllm:\n  model: m   # the fast one\nconfirmation:\n  rules:\n    # git is fine\n    - {tool: run_command, command: git status, decision: allow}\n";
        std::fs::write(&path, original).unwrap();
        let mut file = UserRules::open(&path).unwrap();
        file.add(&rule(
            "run_command",
            Some("cargo test"),
            RuleDecision::Allow,
        ))
        .unwrap();
        file.set_permission("build", AgentPermission::Full).unwrap();
        file.save().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        for kept in ["# my settings", "# the fast one", "# git is fine"] {
            assert!(text.contains(kept), "{kept} lost:\n{text}");
        }
        let file = UserRules::open(&path).unwrap();
        let rules = file.rules().unwrap();
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[1].command.as_deref(), Some("cargo test"));
        let mut file = UserRules::open(&path).unwrap();
        file.remove(1).unwrap();
        file.save().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("# the fast one") && !text.contains("git status"),
            "{text}"
        );
        let doc: Value = serde_yaml_ng::from_str(&text).unwrap();
        assert_eq!(doc["ui"]["permissions"]["build"], Value::from("full"));

        // A shape the text edit does not handle: rewritten, content kept.
        std::fs::write(&path, "# c\nconfirmation: {rules: []}\n").unwrap();
        let mut file = UserRules::open(&path).unwrap();
        file.add(&rule("run_command", Some("ls"), RuleDecision::Ask))
            .unwrap();
        file.save().unwrap();
        let file = UserRules::open(&path).unwrap();
        assert_eq!(file.rules().unwrap().len(), 1);
    }

    #[test]
    fn a_permission_is_set_beside_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(
            &path,
            "llm:\n  model: m\nui:\n  permissions:\n    plan: full\n",
        )
        .unwrap();
        let mut file = UserRules::open(&path).unwrap();
        file.set_permission("build", AgentPermission::Full).unwrap();
        file.set_permission("plan", AgentPermission::Sandbox)
            .unwrap();
        file.save().unwrap();
        let doc: Value = serde_yaml_ng::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(doc["llm"]["model"], Value::from("m"));
        assert_eq!(doc["ui"]["permissions"]["build"], Value::from("full"));
        assert_eq!(doc["ui"]["permissions"]["plan"], Value::from("sandbox"));

        std::fs::write(&path, "ui: [1]\n").unwrap();
        let mut file = UserRules::open(&path).unwrap();
        assert!(matches!(
            file.set_permission("build", AgentPermission::Full),
            Err(RulesFileError::Shape { key: "ui", .. })
        ));
    }

    fn rule(tool: &str, command: Option<&str>, decision: RuleDecision) -> ConfirmationRule {
        ConfirmationRule {
            tool: tool.into(),
            command: command.map(Into::into),
            path: None,
            decision,
            ..ConfirmationRule::default()
        }
    }

    #[test]
    fn add_and_remove_keep_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("toolgate/config.yaml");
        let mut rules = UserRules::open(&path).unwrap();
        assert!(rules.rules().unwrap().is_empty());
        let n = rules
            .add(&rule(
                "run_command",
                Some("git status"),
                RuleDecision::Allow,
            ))
            .unwrap();
        assert_eq!(n, 1);
        rules.save().unwrap();

        std::fs::write(
            &path,
            format!(
                "llm: {{model: m}}\nconfirmation:\n  mode: confirm-all\n{}",
                "  rules: [{tool: run_command, command: git status, decision: allow}]\n"
            ),
        )
        .unwrap();
        let mut rules = UserRules::open(&path).unwrap();
        rules
            .add(&rule("write_file", None, RuleDecision::Ask))
            .unwrap();
        rules.save().unwrap();
        let mut rules = UserRules::open(&path).unwrap();
        assert_eq!(rules.rules().unwrap().len(), 2);
        let removed = rules.remove(1).unwrap();
        assert!(removed.contains("git status"), "{removed}");
        rules.save().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let doc: Value = serde_yaml_ng::from_str(&text).unwrap();
        assert_eq!(doc["llm"]["model"], "m");
        assert_eq!(doc["confirmation"]["mode"], "confirm-all");
        assert_eq!(doc["confirmation"]["rules"][0]["tool"], "write_file");
        assert!(matches!(
            rules.remove(2),
            Err(RulesFileError::NoSuchRule {
                number: 2,
                count: 1
            })
        ));
    }

    #[test]
    fn a_broken_file_or_a_broad_rule_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        for text in [
            "llm: [unclosed\n",
            "- a list\n",
            "confirmation: 3\n",
            "confirmation: {rules: 3}\n",
        ] {
            std::fs::write(&path, text).unwrap();
            assert!(UserRules::open(&path).is_err(), "{text}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        }
        let mut rules = UserRules::open(dir.path().join("new.yaml")).unwrap();
        for broad in [
            rule("run_command", None, RuleDecision::Allow),
            rule("*", None, RuleDecision::Allow),
        ] {
            let error = rules.add(&broad).unwrap_err();
            assert!(matches!(error, RulesFileError::Rule(_)), "{error}");
        }
    }
}
