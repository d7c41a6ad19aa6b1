//! When a call needs a person's approval.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use toolgate_core::{CommandClass, Sensitivity};

/// How much the gate asks before running a call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConfirmationMode {
    /// Never asks. Blocked commands and guardrails still apply.
    Yolo,
    /// Asks for sensitive calls only. The default.
    #[default]
    ConfirmSensitive,
    /// Asks for every call.
    ConfirmAll,
}

impl ConfirmationMode {
    /// The spelling used in config files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Yolo => "yolo",
            Self::ConfirmSensitive => "confirm-sensitive",
            Self::ConfirmAll => "confirm-all",
        }
    }
}

impl fmt::Display for ConfirmationMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ConfirmationMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "yolo" => Ok(Self::Yolo),
            "confirm-sensitive" => Ok(Self::ConfirmSensitive),
            "confirm-all" => Ok(Self::ConfirmAll),
            other => Err(format!(
                "unknown confirmation mode `{other}` (expected yolo, confirm-sensitive or confirm-all)"
            )),
        }
    }
}

/// Decides whether a call must be confirmed before it runs.
///
/// # Rules
///
/// 1. `yolo` never asks, whatever the call.
/// 2. `confirm-all` always asks.
/// 3. `confirm-sensitive` asks when the call is sensitive: a
///    [`Sensitivity::Sensitive`] tool (writes, deletes, edits, patches, every
///    MCP tool of an untrusted server, dynamic tools), or a shell command
///    classified `dev` or `dangerous`. Read-only tools and `safe` commands run
///    without asking.
///
/// The user's [`ConfirmationRules`](crate::ConfirmationRules) are consulted
/// before this table, and a matching rule decides instead of it. Refusals
/// that hold in every mode (blocked commands, guardrails,
/// `commands.allowed_only`) are made before confirmation and do not depend
/// on it; dry-run skips asking entirely.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConfirmationPolicy {
    mode: ConfirmationMode,
}

impl ConfirmationPolicy {
    /// A policy applying `mode`.
    pub fn new(mode: ConfirmationMode) -> Self {
        Self { mode }
    }

    /// The mode applied.
    pub fn mode(self) -> ConfirmationMode {
        self.mode
    }

    /// Whether a call of this sensitivity must be confirmed.
    pub fn needs_confirmation(self, sensitivity: Sensitivity) -> bool {
        match self.mode {
            ConfirmationMode::Yolo => false,
            ConfirmationMode::ConfirmAll => true,
            ConfirmationMode::ConfirmSensitive => match sensitivity {
                Sensitivity::ReadOnly | Sensitivity::Command(CommandClass::Safe) => false,
                // Sensitive tools, `dev` and `dangerous` commands, and any
                // sensitivity added to core later (the careful default).
                _ => true,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ConfirmationMode::{ConfirmAll, ConfirmSensitive, Yolo};
    use Sensitivity::{Command, ReadOnly, Sensitive};

    /// Seed 000's table, one line per (mode, kind of call).
    #[test]
    fn seed_confirmation_table() {
        let table: &[(ConfirmationMode, Sensitivity, bool)] = &[
            (Yolo, ReadOnly, false),
            (Yolo, Sensitive, false),
            (Yolo, Command(CommandClass::Safe), false),
            (Yolo, Command(CommandClass::Dev), false),
            (Yolo, Command(CommandClass::Dangerous), false),
            (ConfirmSensitive, ReadOnly, false),
            (ConfirmSensitive, Sensitive, true),
            (ConfirmSensitive, Command(CommandClass::Safe), false),
            (ConfirmSensitive, Command(CommandClass::Dev), true),
            (ConfirmSensitive, Command(CommandClass::Dangerous), true),
            (ConfirmAll, ReadOnly, true),
            (ConfirmAll, Sensitive, true),
            (ConfirmAll, Command(CommandClass::Safe), true),
            (ConfirmAll, Command(CommandClass::Dev), true),
            (ConfirmAll, Command(CommandClass::Dangerous), true),
        ];
        for &(mode, sensitivity, asks) in table {
            assert_eq!(
                ConfirmationPolicy::new(mode).needs_confirmation(sensitivity),
                asks,
                "{mode} {sensitivity:?}"
            );
        }
    }

    #[test]
    fn modes_round_trip_through_their_spelling() {
        for mode in [Yolo, ConfirmSensitive, ConfirmAll] {
            assert_eq!(mode.as_str().parse::<ConfirmationMode>(), Ok(mode));
        }
        assert!(
            "confirm"
                .parse::<ConfirmationMode>()
                .unwrap_err()
                .contains("expected yolo")
        );
    }
}
