//! A model provider written to the user's configuration file: what
//! `toolgate init` saves, and what `--provider` means on `run` and `ui`.
//!
//! Each [`ProviderKind`] is one way people run a model: a local server
//! (Ollama, llama.cpp), a hosted API (OpenAI, Anthropic, `OpenRouter`), or
//! any server that speaks OpenAI's chat completions at a URL. A kind fills
//! in the `llm` keys a newcomer would otherwise have to look up: the wire
//! format, the base URL, the variable that holds the key, a model.
//!
//! ```
//! use toolgate_host::{LlmSetup, ProviderKind};
//!
//! let setup = LlmSetup::new(ProviderKind::Openai).api_key_env("MY_KEY").build()?;
//! assert!(setup.yaml().contains("api_key_env: MY_KEY"));
//! # Ok::<(), toolgate_host::InitError>(())
//! ```

use std::path::{Path, PathBuf};

use serde_yaml_ng::{Mapping, Value};

use crate::config::{LlmProvider, user_config_path};

/// A kind of model provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProviderKind {
    /// Ollama on its default port (`ollama serve`).
    Ollama,
    /// The llama.cpp server (`llama-server`) on its default port.
    Llamacpp,
    /// `OpenAI`'s API; the key in `OPENAI_API_KEY`.
    Openai,
    /// Anthropic's Messages API; the key in `ANTHROPIC_API_KEY`.
    Anthropic,
    /// `OpenRouter`; the key in `OPENROUTER_API_KEY`.
    Openrouter,
    /// Any server with `OpenAI`'s chat completions (vLLM, LM Studio, a
    /// gateway): its URL is required.
    OpenaiCompatible,
}

impl ProviderKind {
    /// Every kind, in the order people are offered them.
    pub const ALL: [Self; 6] = [
        Self::Ollama,
        Self::Llamacpp,
        Self::Openai,
        Self::Anthropic,
        Self::Openrouter,
        Self::OpenaiCompatible,
    ];

    /// The name on the command line (`--provider NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Ollama => "ollama",
            Self::Llamacpp => "llamacpp",
            Self::Openai => "openai",
            Self::Anthropic => "anthropic",
            Self::Openrouter => "openrouter",
            Self::OpenaiCompatible => "openai-compatible",
        }
    }

    /// One line for a person choosing.
    pub fn description(self) -> &'static str {
        match self {
            Self::Ollama => "Ollama on this machine (no key)",
            Self::Llamacpp => "A llama.cpp server on this machine (no key)",
            Self::Openai => "OpenAI's API (a key)",
            Self::Anthropic => "Anthropic's API (a key)",
            Self::Openrouter => "OpenRouter (a key)",
            Self::OpenaiCompatible => "Any OpenAI-compatible server at a URL",
        }
    }

    /// The wire format it speaks.
    pub fn wire(self) -> LlmProvider {
        match self {
            Self::Anthropic => LlmProvider::Anthropic,
            _ => LlmProvider::Openai,
        }
    }

    /// Its base URL; `None` for [`ProviderKind::OpenaiCompatible`], whose
    /// URL must be given.
    pub fn base_url(self) -> Option<&'static str> {
        match self {
            Self::Ollama => Some("http://127.0.0.1:11434/v1"),
            Self::Llamacpp => Some("http://127.0.0.1:8080/v1"),
            Self::Openai => Some("https://api.openai.com/v1"),
            Self::Anthropic => Some("https://api.anthropic.com/v1"),
            Self::Openrouter => Some("https://openrouter.ai/api/v1"),
            Self::OpenaiCompatible => None,
        }
    }

    /// The variable its key is usually kept in; `None` for the local
    /// servers, which take no key.
    pub fn api_key_env(self) -> Option<&'static str> {
        match self {
            Self::Openai => Some("OPENAI_API_KEY"),
            Self::Anthropic => Some("ANTHROPIC_API_KEY"),
            Self::Openrouter => Some("OPENROUTER_API_KEY"),
            _ => None,
        }
    }

    /// A model to start with where the provider serves many; `None` where
    /// the server's own model is used (a local server serving one).
    pub fn model(self) -> Option<&'static str> {
        match self {
            Self::Openai => Some("gpt-4.1-mini"),
            Self::Anthropic => Some("claude-sonnet-4-5"),
            Self::Openrouter => Some("openai/gpt-4.1-mini"),
            _ => None,
        }
    }

    /// The names of every kind, comma-separated.
    pub fn names() -> String {
        Self::ALL.map(Self::name).join(", ")
    }
}

impl std::fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ProviderKind {
    type Err = InitError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| InitError::UnknownProvider(s.to_owned()))
    }
}

/// Why a model setup cannot be made or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InitError {
    /// Not one of [`ProviderKind::ALL`].
    #[error("unknown provider `{0}`")]
    UnknownProvider(String),
    /// [`ProviderKind::OpenaiCompatible`] without a URL.
    #[error("the provider {0} needs the server's URL")]
    NeedsBaseUrl(ProviderKind),
    /// A URL that is not http(s).
    #[error("`{0}` is not an http:// or https:// URL")]
    BadUrl(String),
    /// A variable name that cannot be one.
    #[error("`{0}` is not an environment variable name")]
    BadVariable(String),
    /// Neither `XDG_CONFIG_HOME` nor `HOME` says where the file goes.
    #[error("there is no user configuration directory (HOME and XDG_CONFIG_HOME are unset)")]
    NoConfigDir,
    /// The file exists and replacing it was not asked for.
    #[error("{} already exists", .0.display())]
    Exists(PathBuf),
    /// The existing file cannot be read or is not a YAML mapping.
    #[error("{} cannot be read as YAML", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The file cannot be written.
    #[error("{} cannot be written", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl InitError {
    /// What the user can do about it.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::UnknownProvider(_) => format!("the providers are {}", ProviderKind::names()),
            Self::NeedsBaseUrl(_) => {
                "pass it with --base-url, e.g. --base-url http://127.0.0.1:8000/v1".to_owned()
            }
            Self::BadUrl(_) => "pass the server's base URL, e.g. http://127.0.0.1:8000/v1".to_owned(),
            Self::BadVariable(_) => {
                "pass the NAME of the variable that holds the key (e.g. OPENAI_API_KEY), never the key"
                    .to_owned()
            }
            Self::NoConfigDir => "set HOME (or XDG_CONFIG_HOME)".to_owned(),
            Self::Exists(_) => {
                "pass --force to replace its `llm` section (its other sections are kept)".to_owned()
            }
            Self::Read { .. } => "fix the file, or move it aside and run this again".to_owned(),
            Self::Write { .. } => return None,
        })
    }
}

/// The `llm` keys of one provider, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmSetup {
    kind: ProviderKind,
    base_url: Option<String>,
    model: Option<String>,
    api_key_env: Option<String>,
}

impl LlmSetup {
    /// `kind` with its own URL, key variable and model
    /// ([`ProviderKind::base_url`], [`ProviderKind::api_key_env`],
    /// [`ProviderKind::model`]); each can be replaced below.
    pub fn new(kind: ProviderKind) -> Self {
        Self {
            kind,
            base_url: kind.base_url().map(str::to_owned),
            model: kind.model().map(str::to_owned),
            api_key_env: kind.api_key_env().map(str::to_owned),
        }
    }

    /// The server's base URL. By default, the kind's.
    #[must_use]
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// The model. By default, the kind's (none for the local servers: the
    /// one they serve).
    #[must_use]
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// The variable that holds the key. By default, the kind's.
    #[must_use]
    pub fn api_key_env(mut self, var: impl Into<String>) -> Self {
        self.api_key_env = Some(var.into());
        self
    }

    /// Checks the URL and the variable's name.
    pub fn build(self) -> Result<Self, InitError> {
        let Some(url) = &self.base_url else {
            return Err(InitError::NeedsBaseUrl(self.kind));
        };
        let scheme_ok = ["http://", "https://"]
            .iter()
            .any(|s| url.strip_prefix(s).is_some_and(|rest| !rest.is_empty()));
        if !scheme_ok {
            return Err(InitError::BadUrl(url.clone()));
        }
        if let Some(var) = &self.api_key_env
            && !is_variable_name(var)
        {
            return Err(InitError::BadVariable(var.clone()));
        }
        Ok(self)
    }

    /// The kind.
    pub fn kind(&self) -> ProviderKind {
        self.kind
    }

    /// The base URL, once built.
    pub fn url(&self) -> Option<&str> {
        self.base_url.as_deref()
    }

    /// The model, when there is one.
    pub fn model_name(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// The key variable, when there is one.
    pub fn key_variable(&self) -> Option<&str> {
        self.api_key_env.as_deref()
    }

    /// The `llm` section as a YAML mapping.
    fn section(&self) -> Mapping {
        let mut llm = Mapping::new();
        let wire = match self.kind.wire() {
            LlmProvider::Openai => "openai",
            LlmProvider::Anthropic => "anthropic",
        };
        llm.insert("provider".into(), wire.into());
        if let Some(url) = &self.base_url {
            llm.insert("base_url".into(), url.as_str().into());
        }
        if let Some(model) = &self.model {
            llm.insert("model".into(), model.as_str().into());
        }
        if let Some(var) = &self.api_key_env {
            llm.insert("api_key_env".into(), var.as_str().into());
        }
        llm
    }

    /// The file's text: a comment naming the command, then `llm:`.
    pub fn yaml(&self) -> String {
        let mut root = Mapping::new();
        root.insert("llm".into(), Value::Mapping(self.section()));
        format!(
            "# Written by `toolgate init --provider {}`.\n{}",
            self.kind,
            serde_yaml_ng::to_string(&root).unwrap_or_default()
        )
    }

    /// Writes the user's configuration file (`$XDG_CONFIG_HOME/toolgate/
    /// config.yaml`, else `~/.config/toolgate/config.yaml`) atomically and
    /// private to the user (`0600`), and returns where.
    ///
    /// # Rules
    ///
    /// 1. A missing file is written whole.
    /// 2. An existing file is left alone ([`InitError::Exists`]) unless
    ///    `force`; then its `llm` section is replaced and its other sections
    ///    kept (their comments are not).
    pub fn write_user_config(
        &self,
        env: &[(String, String)],
        force: bool,
    ) -> Result<Written, InitError> {
        let path = user_config_path(env).ok_or(InitError::NoConfigDir)?;
        self.write_to(&path, force)
    }

    /// [`LlmSetup::write_user_config`] to `path`.
    pub fn write_to(&self, path: &Path, force: bool) -> Result<Written, InitError> {
        let text = match std::fs::read_to_string(path) {
            Ok(_) if !force => return Err(InitError::Exists(path.to_owned())),
            Ok(old) => Some(old),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => {
                return Err(InitError::Read {
                    path: path.to_owned(),
                    source: Box::new(source),
                });
            }
        };
        let replaced = text.is_some();
        let text = match text {
            None => self.yaml(),
            Some(old) => self.replace_section(path, &old)?,
        };
        crate::atomic::write_private(path, text.as_bytes()).map_err(|source| InitError::Write {
            path: path.to_owned(),
            source,
        })?;
        Ok(Written {
            path: path.to_owned(),
            text,
            replaced,
        })
    }

    /// `old` with its `llm` section replaced by this one.
    fn replace_section(&self, path: &Path, old: &str) -> Result<String, InitError> {
        let read_error = |source: Box<dyn std::error::Error + Send + Sync>| InitError::Read {
            path: path.to_owned(),
            source,
        };
        let mut root = if old.trim().is_empty() {
            Mapping::new()
        } else {
            match serde_yaml_ng::from_str::<Value>(old).map_err(|e| read_error(Box::new(e)))? {
                Value::Mapping(root) => root,
                Value::Null => Mapping::new(),
                _ => return Err(read_error("the file is not a mapping of sections".into())),
            }
        };
        root.insert("llm".into(), Value::Mapping(self.section()));
        let body = serde_yaml_ng::to_string(&root).map_err(|e| read_error(Box::new(e)))?;
        Ok(format!(
            "# `llm` written by `toolgate init --provider {}`.\n{body}",
            self.kind
        ))
    }
}

/// What [`LlmSetup::write_user_config`] wrote.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Written {
    /// The file.
    pub path: PathBuf,
    /// Its whole new text.
    pub text: String,
    /// Whether a file was there before (`--force`).
    pub replaced: bool,
}

/// Letters, digits and `_`, not starting with a digit.
fn is_variable_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_builds_with_its_own_defaults_but_the_compatible_one_needs_a_url() {
        for kind in ProviderKind::ALL {
            assert_eq!(kind.name().parse::<ProviderKind>().unwrap(), kind);
            let built = LlmSetup::new(kind).build();
            assert_eq!(
                built.is_ok(),
                kind != ProviderKind::OpenaiCompatible,
                "{kind}"
            );
        }
        assert!(matches!(
            "gpt".parse::<ProviderKind>(),
            Err(InitError::UnknownProvider(_))
        ));
    }

    #[test]
    fn a_key_or_a_non_http_url_is_refused() {
        let cases: &[(LlmSetup, &str)] = &[
            (
                LlmSetup::new(ProviderKind::Openai).api_key_env("sk-abc123"),
                "environment variable name",
            ),
            (
                LlmSetup::new(ProviderKind::OpenaiCompatible).base_url("127.0.0.1:8000"),
                "http:// or https://",
            ),
            (
                LlmSetup::new(ProviderKind::OpenaiCompatible).base_url("http://"),
                "http:// or https://",
            ),
        ];
        for (setup, said) in cases {
            let error = setup.clone().build().unwrap_err().to_string();
            assert!(error.contains(said), "{error}");
        }
    }

    #[test]
    fn an_existing_file_is_kept_without_force_and_keeps_its_other_sections_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("toolgate/config.yaml");
        let setup = LlmSetup::new(ProviderKind::Ollama).build().unwrap();
        let written = setup.write_to(&path, false).unwrap();
        assert!(!written.replaced);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), setup.yaml());

        std::fs::write(
            &path,
            "confirmation:\n  rules:\n    - {tool: read_file, decision: allow}\nllm:\n  model: old\n",
        )
        .unwrap();
        assert!(matches!(
            setup.write_to(&path, false),
            Err(InitError::Exists(_))
        ));
        let openai = LlmSetup::new(ProviderKind::Openai).build().unwrap();
        assert!(openai.write_to(&path, true).unwrap().replaced);
        let value: Value =
            serde_yaml_ng::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(value["llm"]["model"], Value::from("gpt-4.1-mini"));
        assert_eq!(
            value["confirmation"]["rules"][0]["tool"],
            Value::from("read_file")
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
    }
}
