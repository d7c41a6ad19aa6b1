//! When a call needs a person's approval.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use toolgate_core::{CommandClass, Effect, Effects, SandboxProfile, Sensitivity};

use crate::effects::fold_relative;

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
    /// Calls that only write files inside the workspace run without
    /// asking; everything else as under `confirm-sensitive`.
    AcceptEdits,
    /// Never asks: what a rule or `confirm-sensitive` lets run without
    /// asking runs, everything else is refused at once (for CI and
    /// scripts).
    DontAsk,
    /// Only calls whose declared effects are read-only run; everything
    /// else is refused at once, until the person approves the model's plan
    /// (`exit_plan_mode`) and picks the mode the run goes on in.
    Plan,
}

impl ConfirmationMode {
    /// Every mode, in the order `--help` and the docs list them.
    pub const ALL: [Self; 6] = [
        Self::Yolo,
        Self::ConfirmSensitive,
        Self::ConfirmAll,
        Self::AcceptEdits,
        Self::DontAsk,
        Self::Plan,
    ];

    /// The spelling used in config files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Yolo => "yolo",
            Self::ConfirmSensitive => "confirm-sensitive",
            Self::ConfirmAll => "confirm-all",
            Self::AcceptEdits => "accept-edits",
            Self::DontAsk => "dont-ask",
            Self::Plan => "plan",
        }
    }

    /// What the mode does, in a few words for `--help`.
    pub fn summary(self) -> &'static str {
        match self {
            Self::Yolo => "Never ask (blocked commands and guardrails still apply)",
            Self::ConfirmSensitive => {
                "Ask before sensitive calls (writes, commands that change things)"
            }
            Self::ConfirmAll => "Ask before every call",
            Self::AcceptEdits => {
                "Write files inside the workspace without asking; otherwise as confirm-sensitive"
            }
            Self::DontAsk => {
                "Never ask: run what rules or confirm-sensitive allow unasked, refuse the rest (CI)"
            }
            Self::Plan => {
                "Read-only until the person approves the model's plan (exit_plan_mode); refuse the rest"
            }
        }
    }

    /// Whether the mode itself never puts a question to a person: `yolo`
    /// runs what it would ask about (an `ask` rule still asks), `dont-ask`
    /// refuses it (an `ask` rule's calls too).
    pub fn never_asks(self) -> bool {
        matches!(self, Self::Yolo | Self::DontAsk)
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
        Self::ALL
            .into_iter()
            .find(|mode| mode.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|m| m.as_str()).collect();
                format!(
                    "unknown confirmation mode `{s}` (expected {})",
                    names.join(", ")
                )
            })
    }
}

/// What the mode does with a call no confirmation rule decided
/// ([`ConfirmationPolicy::decide`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModeDecision {
    /// Runs without asking.
    Run,
    /// A person is asked first.
    Ask,
    /// Refused without asking anyone (`dont-ask`, for a call
    /// `confirm-sensitive` would ask about).
    Refuse,
}

/// What the mode judges of a call: its [`Sensitivity`], its declared
/// [`Effects`], and whether its tool declares itself read-only.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ModeCall<'a> {
    /// How sensitive the call is (per call: a command's class).
    pub sensitivity: Sensitivity,
    /// What the call declared it will do.
    pub effects: &'a Effects,
    /// Whether the tool declares that it changes nothing
    /// ([`ToolAnnotations::read_only`](toolgate_core::ToolAnnotations::read_only):
    /// an MCP tool's `readOnlyHint`, taken from trusted servers only).
    /// Only `plan` reads it, for calls whose effects are opaque.
    pub read_only_tool: bool,
}

impl<'a> ModeCall<'a> {
    /// A call of this sensitivity with these effects, of a tool that does
    /// not declare itself read-only.
    pub fn new(sensitivity: Sensitivity, effects: &'a Effects) -> Self {
        Self {
            sensitivity,
            effects,
            read_only_tool: false,
        }
    }

    /// Sets whether the tool declares itself read-only. By default, no.
    #[must_use]
    pub fn read_only_tool(mut self, yes: bool) -> Self {
        self.read_only_tool = yes;
        self
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
/// 4. `accept-edits` runs without asking a call whose declared effects
///    only write files inside the workspace: at least one write, nothing
///    but writes and reads (no delete, rename, command or network), and
///    every path relative and not climbing out of the workspace (tools
///    declare workspace-relative paths when they resolve inside it; an
///    absolute path is one that did not). Everything else — deletes and
///    renames, commands, opaque (MCP, dynamic) calls, writes outside — is
///    judged as by rule 3.
/// 5. `dont-ask` never asks: what rule 3 would run runs, what it would ask
///    about is [refused](ModeDecision::Refuse).
/// 6. `plan` runs only calls that are read-only by what they declare, and
///    [refuses](ModeDecision::Refuse) every other at once (it never asks).
///    A call is read-only when rule 3 would not ask about it (a read-only
///    tool, or a command the classifier calls `safe`, which runs in the
///    read-only kernel profile) and its declared effects change nothing:
///    no write, delete or rename, and every command they start runs in the
///    read-only profile. An opaque call (an MCP or dynamic tool) is
///    read-only only when its tool declares so
///    ([`ModeCall::read_only_tool`]: `readOnlyHint: true` from a trusted
///    MCP server).
///
/// The user's [`ConfirmationRules`](crate::ConfirmationRules) are consulted
/// before this table, and a matching rule decides instead of it (under
/// `dont-ask`, an `ask` rule refuses), except that no `allow` or `ask`
/// rule lets `plan` run a call it refuses (a `deny` rule still refuses a
/// read-only one). Refusals
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

    /// What the mode does with `call` (see the [rules](Self)).
    pub fn decide(self, call: ModeCall<'_>) -> ModeDecision {
        let sensitive = || match call.sensitivity {
            Sensitivity::ReadOnly | Sensitivity::Command(CommandClass::Safe) => false,
            // Sensitive tools, `dev` and `dangerous` commands, and any
            // sensitivity added to core later (the careful default).
            _ => true,
        };
        let ask_if = |ask: bool| {
            if ask {
                ModeDecision::Ask
            } else {
                ModeDecision::Run
            }
        };
        match self.mode {
            ConfirmationMode::Yolo => ModeDecision::Run,
            ConfirmationMode::ConfirmAll => ModeDecision::Ask,
            ConfirmationMode::ConfirmSensitive => ask_if(sensitive()),
            ConfirmationMode::AcceptEdits => {
                ask_if(!edits_inside_workspace(call.effects) && sensitive())
            }
            ConfirmationMode::DontAsk => {
                if sensitive() {
                    ModeDecision::Refuse
                } else {
                    ModeDecision::Run
                }
            }
            ConfirmationMode::Plan => {
                let read_only = if call.effects.is_opaque() {
                    call.read_only_tool
                } else {
                    !sensitive() && changes_nothing(call.effects)
                };
                if read_only {
                    ModeDecision::Run
                } else {
                    ModeDecision::Refuse
                }
            }
        }
    }
}

/// Rule 6: the declared effects write, delete and rename nothing, and every
/// command they start runs in the read-only kernel profile.
fn changes_nothing(effects: &Effects) -> bool {
    effects.list().iter().all(|effect| match effect {
        Effect::Read { .. } => true,
        Effect::Command { plan, .. } => plan.as_ref().is_some_and(|p| {
            p.class == CommandClass::Safe && p.profile == SandboxProfile::ReadOnly
        }),
        // Writes, deletes, renames, the network, and any effect added to
        // core later (the careful default).
        _ => false,
    })
}

/// Rule 4: the effects write files, read or write nothing else, and stay
/// inside the workspace.
fn edits_inside_workspace(effects: &Effects) -> bool {
    let inside = |path: &str| !path.starts_with('/') && fold_relative(path).is_some();
    let list = effects.list();
    !effects.is_opaque()
        && list.iter().any(|e| matches!(e, Effect::Write { .. }))
        && list.iter().all(|effect| match effect {
            Effect::Read { path, .. } | Effect::Write { path, .. } => inside(path),
            _ => false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ConfirmationMode::{AcceptEdits, ConfirmAll, ConfirmSensitive, DontAsk, Plan, Yolo};
    use ModeDecision::{Ask, Refuse, Run};
    use Sensitivity::{Command, ReadOnly, Sensitive};
    use toolgate_core::{Change, CommandPlan};

    fn asks(mode: ConfirmationMode, sensitivity: Sensitivity) -> bool {
        let opaque = Effects::Opaque;
        ConfirmationPolicy::new(mode).decide(ModeCall::new(sensitivity, &opaque)) == Ask
    }

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
        for &(mode, sensitivity, expected) in table {
            assert_eq!(asks(mode, sensitivity), expected, "{mode} {sensitivity:?}");
        }
    }

    /// (kind, the call, whether its tool declares itself read-only, the
    /// decision of each mode in the order of `ConfirmationMode::ALL`).
    type Case<'a> = (&'a str, &'a (Sensitivity, Effects), bool, [ModeDecision; 6]);

    /// Each kind of call under each mode: run, ask or refuse.
    #[test]
    fn mode_table_over_declared_effects() {
        let write = |path: &str| Effect::write(path, Change::counted(1, 0, true));
        let read_only = (ReadOnly, Effects::known([Effect::read("src/a.rs")]));
        let search = (ReadOnly, Effects::known([Effect::read_tree(".")]));
        let edit = (Sensitive, Effects::known([write("src/a.rs")]));
        let two = (
            Sensitive,
            Effects::known([write("src/a.rs"), write("b.rs")]),
        );
        let patch = (
            Sensitive,
            Effects::known([
                write("src/a.rs"),
                Effect::Delete {
                    path: "old.rs".into(),
                    lines_removed: 3,
                },
                Effect::Move {
                    from: "b.rs".into(),
                    to: "src/b.rs".into(),
                },
            ]),
        );
        let outside = (Sensitive, Effects::known([write("/etc/motd")]));
        let climbing = (Sensitive, Effects::known([write("src/../../x")]));
        let read_out = (
            Sensitive,
            Effects::known([Effect::read("/etc/passwd"), write("a")]),
        );
        let command = |class| {
            (
                Command(class),
                Effects::known([Effect::command("cargo test", None)]),
            )
        };
        let with_write = (
            Sensitive,
            Effects::known([write("a"), Effect::command("make", None)]),
        );
        let fetch = (
            Sensitive,
            Effects::known([Effect::Network {
                url: "https://example.com".into(),
            }]),
        );
        let mcp = (Sensitive, Effects::Opaque);
        let trusted_mcp = (ReadOnly, Effects::Opaque);
        let nothing = (Sensitive, Effects::none());
        let planned = |class, profile| {
            (
                Command(class),
                Effects::known([Effect::command("ls", None).with_plan(CommandPlan::new(
                    class,
                    "test",
                    vec!["ls".into()],
                    profile,
                    false,
                ))]),
            )
        };
        let safe_read_only = planned(CommandClass::Safe, SandboxProfile::ReadOnly);
        let safe_standard = planned(CommandClass::Safe, SandboxProfile::Standard);
        let dev_standard = planned(CommandClass::Dev, SandboxProfile::Standard);
        let read_only_mcp = (Sensitive, Effects::Opaque);
        let read_only_no_effects = (ReadOnly, Effects::none());
        let read_only_writing = (ReadOnly, Effects::known([write("a")]));
        let read_only_fetch = (
            ReadOnly,
            Effects::known([Effect::Network {
                url: "https://example.com".into(),
            }]),
        );
        // (kind, call, whether the tool declares itself read-only,
        //  yolo confirm-sensitive confirm-all accept-edits dont-ask plan)
        let cases: &[Case<'_>] = &[
            ("read", &read_only, true, [Run, Run, Ask, Run, Run, Run]),
            ("search", &search, true, [Run, Run, Ask, Run, Run, Run]),
            (
                "edit inside",
                &edit,
                false,
                [Run, Ask, Ask, Run, Refuse, Refuse],
            ),
            (
                "two writes inside",
                &two,
                false,
                [Run, Ask, Ask, Run, Refuse, Refuse],
            ),
            (
                "patch deleting, renaming",
                &patch,
                false,
                [Run, Ask, Ask, Ask, Refuse, Refuse],
            ),
            (
                "write outside",
                &outside,
                false,
                [Run, Ask, Ask, Ask, Refuse, Refuse],
            ),
            (
                "write climbing",
                &climbing,
                false,
                [Run, Ask, Ask, Ask, Refuse, Refuse],
            ),
            (
                "read outside",
                &read_out,
                false,
                [Run, Ask, Ask, Ask, Refuse, Refuse],
            ),
            (
                "safe command, no plan",
                &command(CommandClass::Safe),
                false,
                [Run, Run, Ask, Run, Run, Refuse],
            ),
            (
                "safe command, read-only profile",
                &safe_read_only,
                false,
                [Run, Run, Ask, Run, Run, Run],
            ),
            (
                "safe command, standard profile",
                &safe_standard,
                false,
                [Run, Run, Ask, Run, Run, Refuse],
            ),
            (
                "dev command",
                &command(CommandClass::Dev),
                false,
                [Run, Ask, Ask, Ask, Refuse, Refuse],
            ),
            (
                "dev command, planned",
                &dev_standard,
                false,
                [Run, Ask, Ask, Ask, Refuse, Refuse],
            ),
            (
                "dangerous command",
                &command(CommandClass::Dangerous),
                false,
                [Run, Ask, Ask, Ask, Refuse, Refuse],
            ),
            (
                "write + command",
                &with_write,
                false,
                [Run, Ask, Ask, Ask, Refuse, Refuse],
            ),
            (
                "network",
                &fetch,
                false,
                [Run, Ask, Ask, Ask, Refuse, Refuse],
            ),
            ("mcp", &mcp, false, [Run, Ask, Ask, Ask, Refuse, Refuse]),
            (
                "opaque call of a tool declaring itself read-only",
                &read_only_mcp,
                true,
                [Run, Ask, Ask, Ask, Refuse, Run],
            ),
            (
                "trusted mcp without readOnlyHint",
                &trusted_mcp,
                false,
                [Run, Run, Ask, Run, Run, Refuse],
            ),
            (
                "trusted mcp with readOnlyHint",
                &trusted_mcp,
                true,
                [Run, Run, Ask, Run, Run, Run],
            ),
            (
                "sensitive, no effects",
                &nothing,
                false,
                [Run, Ask, Ask, Ask, Refuse, Refuse],
            ),
            (
                "read-only, no effects",
                &read_only_no_effects,
                true,
                [Run, Run, Ask, Run, Run, Run],
            ),
            (
                "read-only tool declaring a write",
                &read_only_writing,
                true,
                [Run, Run, Ask, Run, Run, Refuse],
            ),
            (
                "read-only tool reaching the network",
                &read_only_fetch,
                true,
                [Run, Run, Ask, Run, Run, Refuse],
            ),
        ];
        let modes = [
            Yolo,
            ConfirmSensitive,
            ConfirmAll,
            AcceptEdits,
            DontAsk,
            Plan,
        ];
        for (kind, (sensitivity, effects), read_only_tool, expected) in cases {
            for (mode, want) in modes.iter().zip(expected) {
                let call = ModeCall::new(*sensitivity, effects).read_only_tool(*read_only_tool);
                let got = ConfirmationPolicy::new(*mode).decide(call);
                assert_eq!(got, *want, "{kind} under {mode}");
            }
        }
    }

    #[test]
    fn modes_round_trip_through_their_spelling() {
        for mode in ConfirmationMode::ALL {
            assert_eq!(mode.as_str().parse::<ConfirmationMode>(), Ok(mode));
            let yaml = serde_json::to_value(mode).unwrap();
            assert_eq!(yaml, serde_json::Value::from(mode.as_str()));
        }
        let error = "confirm".parse::<ConfirmationMode>().unwrap_err();
        assert!(
            error.contains(
                "expected yolo, confirm-sensitive, confirm-all, accept-edits, dont-ask, plan"
            ),
            "{error}"
        );
    }

    #[test]
    fn only_yolo_and_dont_ask_never_ask() {
        let never: Vec<_> = ConfirmationMode::ALL
            .into_iter()
            .filter(|m| m.never_asks())
            .collect();
        assert_eq!(never, [Yolo, DontAsk]);
    }
}
