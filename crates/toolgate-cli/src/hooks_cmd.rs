//! `toolgate hooks test`, and building the hooks and guardrails from the
//! configuration.

use std::fmt::Write as _;

use anyhow::anyhow;
use serde_json::{Value, json};
use toolgate_engine::{CommandGuard, GuardrailsEngine, HookDecision, HookEvent, HookExecutor};

use crate::Setup;
use crate::cli::HooksTestArgs;
use crate::render::{CliError, Exit};

/// The guardrails of the configuration, with the command guard inside.
pub(crate) fn guardrails(setup: &Setup) -> Result<GuardrailsEngine, CliError> {
    let config = &setup.loaded.config;
    GuardrailsEngine::builder(config.guardrails.clone(), &setup.workspace)
        .command_guard(CommandGuard::new(
            std::sync::Arc::clone(&setup.command_policy),
            config.commands.allowed_only,
        ))
        .allow_sensitive(config.workspace.allow_sensitive)
        .sandbox(setup.sandbox()?)
        .build()
        .map_err(|e| {
            CliError::usage(anyhow!(e).context("invalid configuration"))
                .with_hint("fix the `guardrails` section; `toolgate config check` shows it")
        })
}

/// The hooks of the configuration.
pub(crate) fn hooks(setup: &Setup, session_id: Option<&str>) -> Result<HookExecutor, CliError> {
    let mut builder = HookExecutor::builder(setup.loaded.config.hooks.clone(), &setup.workspace)
        .sandbox(setup.sandbox()?);
    if let Some(id) = session_id {
        builder = builder.session_id(id);
    }
    builder.build().map_err(|e| {
        CliError::usage(anyhow!(e).context("invalid configuration"))
            .with_hint("fix the `hooks` section; `toolgate config check` shows it")
    })
}

/// Runs the hooks of one event on a synthetic payload and prints each
/// decision.
pub(crate) async fn hooks_test(setup: &Setup, args: HooksTestArgs) -> Result<Exit, CliError> {
    let Some(event) = HookEvent::parse(&args.event) else {
        let names: Vec<&str> = HookEvent::ALL.iter().map(|e| e.config_key()).collect();
        return Err(
            CliError::usage(anyhow!("unknown hook event `{}`", args.event))
                .with_hint(format!("use one of: {}", names.join(", "))),
        );
    };
    let input: Value = match args.input.as_deref() {
        None => json!({}),
        Some(text) => serde_json::from_str(text).map_err(|e| {
            CliError::usage(anyhow!(e).context("--input is not valid JSON"))
                .with_hint("pass a JSON object, e.g. --input '{\"path\": \"src/main.rs\"}'")
        })?,
    };
    let payload = match (&args.tool, event) {
        (Some(tool), _) => json!({"tool_name": tool, "tool_input": input}),
        (None, HookEvent::PreToolUse | HookEvent::PostToolUse) => {
            return Err(
                CliError::usage(anyhow!("`{}` needs --tool", event.config_key()))
                    .with_hint("name the tool the synthetic call is for, e.g. --tool write_file"),
            );
        }
        (None, _) => input,
    };
    let executor = hooks(setup, None)?;
    let outcome = executor.emit(event, payload).await;
    if setup.json {
        let runs: Vec<Value> = outcome
            .runs
            .iter()
            .map(|run| {
                let (decision, reason) = match &run.decision {
                    HookDecision::Block(reason) => ("block", Some(reason.as_str())),
                    HookDecision::FailedAllowed(text) => ("warn", Some(text.as_str())),
                    _ => ("allow", None),
                };
                json!({
                    "name": run.name,
                    "decision": decision,
                    "reason": reason,
                    "exit_code": run.exit_code,
                    "additional_context": run.additional_context,
                    "updated_input": run.updated_input,
                    "stdout": run.stdout,
                    "stderr": run.stderr,
                })
            })
            .collect();
        let blocked = outcome
            .blocked
            .as_ref()
            .map(|(hook, reason)| json!({"hook": hook, "reason": reason}));
        return crate::out(&crate::json_text(&json!({
            "event": event.as_str(),
            "hooks": runs,
            "blocked": blocked,
            "updated_input": outcome.updated_input,
            "context": outcome.context,
        }))?);
    }
    let mut text = String::new();
    if outcome.runs.is_empty() {
        let _ = writeln!(
            text,
            "no hook matched ({} configured for {})",
            executor.count(event),
            event.config_key()
        );
    }
    for run in &outcome.runs {
        let code = run
            .exit_code
            .map_or_else(|| "no exit".to_owned(), |c| format!("exit {c}"));
        match &run.decision {
            HookDecision::Block(reason) => {
                let _ = writeln!(text, "{}: block ({code}): {reason}", run.name);
            }
            HookDecision::FailedAllowed(warning) => {
                let _ = writeln!(text, "{}: allow with warning: {warning}", run.name);
            }
            _ => {
                let _ = writeln!(text, "{}: allow ({code})", run.name);
            }
        }
        if let Some(context) = &run.additional_context {
            let _ = writeln!(text, "  additionalContext: {context}");
        }
        if let Some(updated) = &run.updated_input {
            let _ = writeln!(text, "  updatedInput: {updated}");
        }
    }
    crate::out(&text)
}
