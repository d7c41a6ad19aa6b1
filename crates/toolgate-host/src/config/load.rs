//! Loading the configuration in layers.
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

use std::path::{Path, PathBuf};

use serde_yaml_ng::{Mapping, Value};
use toolgate_policy::ConfirmationMode;

use super::error::{ConfigError, Source, layer_error};
use super::paths::user_config_path;
use super::trust::{self, ReviewItem, Trust, TrustError};
use super::{Config, LoadError, env_vars};

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
    /// Whether a layer (a file, a variable or `--mode`) sets
    /// `confirmation.mode`: an imported mode applies only when none does.
    pub mode_configured: bool,
    /// What `confirmation.import: [claude]` read, when it is set.
    pub claude: Option<super::claude::ClaudeImport>,
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

impl Overrides {
    /// Applies the flags over the merged layers (layer 5).
    fn apply(&self, config: &mut Config) {
        if let Some(mode) = self.mode {
            config.confirmation.mode = mode;
        }
        if let Some(enabled) = self.commands {
            config.commands.enabled = enabled;
        }
        if let Some(kind) = self.provider {
            config.llm.use_provider(kind);
        }
        if let Some(var) = &self.api_key_env {
            config.llm.api_key_env = Some(var.clone());
        }
    }
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

    let mode_configured = overrides.mode.is_some()
        || merged
            .get("confirmation")
            .and_then(|c| c.get("mode"))
            .is_some_and(|m| !m.is_null());
    let mut config: Config = serde_yaml_ng::from_value(merged).map_err(LoadError::Merged)?;
    config.tools.dynamic.reserved = crate::assembly::catalog::reserved_names();
    overrides.apply(&mut config);
    config.audit.anchor(workspace);
    config.store.anchor(workspace);
    Ok(Loaded {
        config,
        sources,
        project_file,
        project,
        mode_configured,
        claude: None,
    })
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
}
