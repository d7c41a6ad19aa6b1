//! `toolgate tools list|review` and `toolgate prompt show`: the tools an
//! agent is offered, whether each one asks in the mode in force, dynamic
//! tools waiting for review, and the system prompt.

use std::fmt::Write as _;

use toolgate_core::{CommandClass, RegisteredTool, SchemaFormat, Sensitivity};
use toolgate_policy::ConfirmationMode;

use super::{Setup, json_text, out, show, show_data};
use crate::cli::ToolsCommand;
use crate::render;
use crate::render::{CliError, Exit};

pub(super) async fn tools_list(setup: &Setup, agent: Option<&str>) -> Result<Exit, CliError> {
    let gate = setup.agent_tools().await?;
    gate.shutdown().await;
    let registry = &gate.registry;
    let mut tools = Vec::new();
    let def = setup
        .host
        .agent(agent.unwrap_or("build"))?
        .with_extra_tools(gate.extra_tool_names());
    for entry in registry.list() {
        if def.allows(registry, entry.name()) {
            tools.push(entry);
        }
    }
    if setup.json {
        let schemas: Vec<_> = tools
            .iter()
            .map(|t| t.spec().export(SchemaFormat::OpenAi))
            .collect();
        return out(&json_text(&schemas)?);
    }
    if tools.is_empty() {
        render::note(&format!(
            "no tools for agent `{}`: its `allowed_tools` and the `tools` section enable none",
            agent.unwrap_or("build")
        ));
        return Ok(Exit::Success);
    }
    let mode = setup.host.mode_for(Some(&def))?;
    let width = tools.iter().map(|t| t.name().len()).max().unwrap_or(0);
    let mut text = String::new();
    for tool in &tools {
        let spec = tool.spec();
        let _ = writeln!(
            text,
            "{:width$}  {:8}  {}",
            tool.name(),
            asks(mode, tool),
            one_line(&spec.description)
        );
    }
    show(&text)?;
    render::note(asks_legend(mode));
    Ok(Exit::Success)
}

/// Whether a tool's calls ask for approval in `mode`. Command tools (their
/// spec says every call runs a command) ask by the command's class
/// (`toolgate classify`); the others by their [`Sensitivity`]: read-only
/// never asks under `confirm-sensitive`, sensitive does. The sensitivity is
/// the tool's own (for an MCP tool, the one its server's trust gives, not
/// the server's hints); a tool whose sensitivity depends on its arguments
/// (`process`: looking does not ask) shows that of a call without them,
/// the sensitive one. Under `accept-edits` the file-writing tools (their
/// spec says `writes_files`) ask only outside the workspace; under
/// `dont-ask` what would ask is refused; under `plan` everything but
/// read-only tools and safe commands is refused. Rules (`toolgate rules`)
/// may still allow or ask more.
pub(super) fn asks(mode: ConfirmationMode, tool: &RegisteredTool) -> &'static str {
    let annotations = &tool.spec().annotations;
    let sensitivity = if annotations.runs_commands {
        Sensitivity::Command(CommandClass::Dangerous)
    } else {
        tool.tool().sensitivity(&serde_json::json!({}))
    };
    match (mode, sensitivity) {
        // Plan mode runs what is read-only by declaration and refuses the
        // rest, rules or not: a tool that declares itself read-only (an MCP
        // tool by its trusted server's `readOnlyHint`), and safe commands.
        (ConfirmationMode::Plan, Sensitivity::ReadOnly) if annotations.read_only() => "never",
        (ConfirmationMode::Yolo, _)
        | (
            ConfirmationMode::ConfirmSensitive
            | ConfirmationMode::AcceptEdits
            | ConfirmationMode::DontAsk,
            Sensitivity::ReadOnly,
        ) => "never",
        (
            ConfirmationMode::ConfirmSensitive
            | ConfirmationMode::AcceptEdits
            | ConfirmationMode::DontAsk
            | ConfirmationMode::Plan,
            Sensitivity::Command(_),
        ) => "by class",
        (ConfirmationMode::AcceptEdits, _) if annotations.writes_files => "outside",
        (ConfirmationMode::DontAsk | ConfirmationMode::Plan, _) => "refused",
        (
            ConfirmationMode::ConfirmAll
            | ConfirmationMode::ConfirmSensitive
            | ConfirmationMode::AcceptEdits,
            _,
        ) => "asks",
    }
}

/// What the middle column of `tools list` means in `mode`.
pub(super) fn asks_legend(mode: ConfirmationMode) -> &'static str {
    match mode {
        ConfirmationMode::Yolo => {
            "mode yolo: no call asks for approval (blocked commands and guardrails still apply)"
        }
        ConfirmationMode::ConfirmSensitive => {
            "mode confirm-sensitive: `asks` tools ask before their calls that change something; \
             `by class` ask unless the command is safe (`toolgate classify CMD`); \
             rules (`toolgate rules`) may allow or ask more"
        }
        ConfirmationMode::ConfirmAll => "mode confirm-all: every call asks for approval",
        ConfirmationMode::AcceptEdits => {
            "mode accept-edits: `outside` tools write files inside the workspace unasked and ask \
             for other calls (outside it, deleting, renaming); `asks` tools ask before their \
             calls that change something; `by class` ask unless the command is safe \
             (`toolgate classify CMD`); rules (`toolgate rules`) may allow or ask more"
        }
        ConfirmationMode::DontAsk => {
            "mode dont-ask: nothing asks; `refused` tools are refused unless a rule allows the \
             call (the refusal names it); `by class` run safe commands and refuse the others; \
             `toolgate rules add` allows more"
        }
        ConfirmationMode::Plan => {
            "mode plan: only read-only calls run; `refused` tools are refused whatever the rules \
             say, until the person approves the model's plan (`exit_plan_mode`); `by class` run \
             safe commands (read-only sandbox) and refuse the others"
        }
    }
}

/// `toolgate tools pending|approve|reject`: the review of dynamic tools.
pub(super) async fn tools_review(setup: &Setup, cmd: ToolsCommand) -> Result<Exit, CliError> {
    use toolgate_host::dynamic::review;
    let store = setup.host.store()?;
    let failed = |e: toolgate_host::dynamic::DynamicError| {
        CliError::new(Exit::Failure, anyhow::Error::new(e))
    };
    let text = match cmd {
        ToolsCommand::Pending => {
            let pending = review::pending(store.as_ref()).await.map_err(failed)?;
            review::render_pending(&pending, setup.json)
        }
        ToolsCommand::Approve { id } => {
            let config = &setup.host.config().tools.dynamic;
            review::render_review(
                &review::approve(store.as_ref(), config, id)
                    .await
                    .map_err(failed)?,
            )
        }
        ToolsCommand::Reject { id } => {
            review::render_review(&review::reject(store.as_ref(), id).await.map_err(failed)?)
        }
        ToolsCommand::List { .. } => String::new(),
    };
    show(&text)
}

/// `toolgate prompt show`: the system prompt on stdout, its size on stderr.
pub(super) async fn prompt_show(setup: &Setup, agent: &str) -> Result<Exit, CliError> {
    let gate = setup.agent_tools().await?;
    gate.shutdown().await;
    let def = setup
        .host
        .agent(agent)?
        .with_extra_tools(gate.extra_tool_names());
    let report = setup.host.prompt_report(&def, &gate.registry)?;
    if setup.json {
        return out(&json_text(&report)?);
    }
    render::note(&format!(
        "≈{} tokens of system prompt + ≈{} tokens of tool schemas ({} tools) = ≈{} tokens before the task",
        report.prompt_tokens,
        report.tools_tokens,
        report.tools.len(),
        report.prompt_tokens + report.tools_tokens
    ));
    show_data(&format!("{}\n", report.prompt))
}

/// The first sentence of a description's first line.
pub(super) fn one_line(description: &str) -> &str {
    toolgate_core::first_sentence(description.lines().next().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_descriptions() {
        assert_eq!(one_line("Reads a file. Then more."), "Reads a file.");
        assert_eq!(one_line("No period\nsecond line"), "No period");
        assert_eq!(one_line("v1.2 is fine. Rest"), "v1.2 is fine.");
    }
}
