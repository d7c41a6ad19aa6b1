//! The refusals the model reads when a call is not asked about: under a
//! mode that asks nobody, and in plan mode.

use toolgate_core::{Effects, TypedTool};
use toolgate_policy::{ConfirmationMode, allow_rule_for, rules_add_line};

/// The refusal of a call `dont-ask` will not ask about: what refused it,
/// and the `toolgate rules add` line that would let such calls run (or
/// why no single rule can).
pub(super) fn unasked(name: &str, effects: &Effects, mode: ConfirmationMode) -> String {
    let refused = format!(
        "`{name}` was refused: the mode {mode} never asks, and no rule in \
         confirmation.rules allows this call"
    );
    match allow_rule_for(name, effects) {
        Some(rule) => {
            let line = rules_add_line(&rule);
            format!("{refused}; to allow calls like it: `{line}`")
        }
        None => format!(
            "{refused}, and no single rule can (it does several things, or runs a line \
             with shell syntax or variables); split it into simpler calls, or run in \
             another mode (`--mode`)"
        ),
    }
}

/// The refusal of a call plan mode does not run: what refused it, and
/// what the model should do instead (call `exit_plan_mode` when this gate
/// offers it, else present the plan to the person, who changes the mode).
pub(super) fn plan_refusal(name: &str, effects: &Effects, exit_offered: bool) -> String {
    let what = if effects.is_opaque() {
        "toolgate cannot tell what it does and its tool does not declare itself read-only"
    } else if effects
        .list()
        .iter()
        .any(toolgate_core::Effect::changes_files)
    {
        "it changes files"
    } else {
        "it is not read-only (a command that is not `safe`, the network, or a tool that changes \
         something)"
    };
    let next = if exit_offered {
        format!(
            "call `{}` with your plan; once the person approves it, calls like this one can run",
            crate::plan_mode::ExitPlanMode::NAME
        )
    } else {
        "present your plan to the person: only they can turn plan mode off here (toolgate's \
         `--mode` or `confirmation.mode`)"
            .to_owned()
    };
    format!(
        "`{name}` was refused: plan mode is on, and only read-only calls run ({what}). Explore \
         with reads, searches and safe commands, then {next}"
    )
}
