//! What is wrong with a configuration, and where.

use std::fmt;
use std::path::PathBuf;

use super::trust::TrustError;

/// Sections DESIGN.md §12 names at the top level that live under `tools:`
/// with their group's enable flag (seed 002's shape): a key there is
/// pointed to its place.
const UNDER_TOOLS: &[&str] = &["memory", "web"];

/// Where a layer came from, for messages.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Source {
    /// A configuration file.
    File(PathBuf),
    /// A `TOOLGATE_<SECTION>__<KEY>` variable.
    Env(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(path) => write!(f, "{}", path.display()),
            Self::Env(name) => write!(f, "environment variable {name}"),
        }
    }
}

/// An invalid layer: what is wrong, where.
#[derive(Debug)]
#[non_exhaustive]
pub struct ConfigError {
    /// The layer.
    pub source: Source,
    /// The dotted key (`confirmation.mode`), empty for the whole layer.
    pub key: String,
    /// What is wrong.
    pub message: String,
    /// Line and column in a file, when known.
    pub location: Option<(usize, usize)>,
    /// What to do about it.
    pub hint: Option<String>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}", self.message)?;
        } else {
            write!(f, "`{}`: {}", self.key, self.message)?;
        }
        write!(f, " (in {}", self.source)?;
        if let Some((line, column)) = self.location {
            write!(f, ", line {line} column {column}")?;
        }
        f.write_str(")")
    }
}

impl std::error::Error for ConfigError {}

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// One layer is invalid: which key, where, why.
    #[error(transparent)]
    Layer(Box<ConfigError>),
    /// A configuration file could not be read.
    #[error("could not read the configuration file {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The layers are valid one by one but not together.
    #[error("the merged configuration is invalid")]
    Merged(#[source] serde_yaml_ng::Error),
    /// The trust store could not be read or written.
    #[error(transparent)]
    Trust(#[from] TrustError),
}

impl LoadError {
    /// What the user can do about it, when there is something to say.
    pub fn hint(&self) -> Option<String> {
        match self {
            Self::Layer(error) => error.hint.clone(),
            Self::Trust(error) => Some(error.hint()),
            Self::Read { .. } => Some("check the file's path and permissions".to_owned()),
            Self::Merged(_) => None,
        }
    }
}

pub(super) fn layer_error(
    source: Source,
    key: String,
    message: &str,
    location: Option<(usize, usize)>,
) -> ConfigError {
    // serde_yaml_ng repeats the path and the location in its message; keep
    // only the reason.
    let mut message = message.to_owned();
    let parent = key.rsplit_once('.').map_or("", |(parent, _)| parent);
    for prefix in [key.as_str(), parent] {
        if let Some(stripped) = message
            .strip_prefix(&format!("{prefix}: "))
            .filter(|_| !prefix.is_empty())
        {
            message = stripped.to_owned();
            break;
        }
    }
    if let Some(at) = message.find(" at line ") {
        message.truncate(at);
    }
    let top = key.split(['.', '[']).next().unwrap_or_default();
    let mut hint = None;
    if message.starts_with("unknown field") {
        if UNDER_TOOLS.contains(&top) && key == top {
            message = format!("the `{top}` section belongs under `tools:`");
            hint = Some(format!(
                "write it as `tools: {{{top}: {{enabled: true, …}}}}`"
            ));
        } else {
            let expected = message
                .find(", expected")
                .map(|at| message[at + 2..].to_owned());
            "unknown key".clone_into(&mut message);
            hint = expected.map(|e| {
                format!("{e} here; `toolgate config check` prints every key with its value")
            });
        }
    }
    ConfigError {
        source,
        key,
        message,
        location,
        hint,
    }
}
