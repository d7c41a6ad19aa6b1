//! `ui:` — what the web UI saves in the user's configuration file.

use serde::{Deserialize, Serialize};
use toolgate_policy::ConfirmationMode;

/// `ui:` — what the web UI saves in the user's configuration file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UiSection {
    /// Each agent's permission toggle (seed 004): `sandbox`, `full` or
    /// `plan`.
    /// Runs the UI starts use it as the agent's confirmation mode; the
    /// `--mode` flag still wins. Default: none (the agent's own mode).
    pub permissions: std::collections::BTreeMap<String, AgentPermission>,
}

/// An agent's permission in the web UI.
///
/// Both keep every check that does not ask a person: paths are judged
/// against the workspace, the guardrails, the blocklist, the rules and
/// the kernel sandbox apply. Only whether a person is asked changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentPermission {
    /// Ask before sensitive calls (`confirm-sensitive`).
    Sandbox,
    /// Ask nothing (`yolo`); `ask` rules still ask.
    Full,
    /// Read-only until the person approves the model's plan (`plan`).
    Plan,
}

impl AgentPermission {
    /// The confirmation mode it stands for.
    pub fn mode(self) -> ConfirmationMode {
        match self {
            Self::Sandbox => ConfirmationMode::ConfirmSensitive,
            Self::Full => ConfirmationMode::Yolo,
            Self::Plan => ConfirmationMode::Plan,
        }
    }

    /// `sandbox`, `full` or `plan`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sandbox => "sandbox",
            Self::Full => "full",
            Self::Plan => "plan",
        }
    }
}

impl std::str::FromStr for AgentPermission {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "sandbox" => Ok(Self::Sandbox),
            "full" => Ok(Self::Full),
            "plan" => Ok(Self::Plan),
            other => Err(format!(
                "unknown permission `{other}`: use `sandbox`, `full` or `plan`"
            )),
        }
    }
}
