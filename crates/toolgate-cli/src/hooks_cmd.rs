//! `toolgate hooks test`: the configured hooks of one event, on a synthetic
//! event, exactly as the gate would run them.

use std::fmt::Write as _;

use anyhow::anyhow;
use serde_json::{Value, json};
use toolgate_engine::{About, HookDecision, HookEvent};

use crate::Setup;
use crate::cli::HooksTestArgs;
use crate::render::{CliError, Exit};

/// What a call of `tool` with `input` is about, from its declared effects.
/// An input the tool cannot run with names no file (a note says how to name
/// one); an MCP or unknown tool is opaque and names none either.
fn declared(setup: &Setup, tool: &str, input: &Value) -> Result<About, CliError> {
    let registry = setup.host.registry()?;
    let Ok(entry) = registry.get(tool) else {
        return Ok(About::default());
    };
    match entry.tool().effects(input) {
        Ok(effects) => Ok(About::of(&effects, setup.host.workspace())),
        Err(error) => {
            crate::render::note(&format!(
                "note: `{tool}` could not run with this input ({error}), so the event names no file; \
                 pass --file PATH to test `file_patterns` and `{{file}}`"
            ));
            Ok(About::default())
        }
    }
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
        (None, _) => input.clone(),
    };
    // The files a tool event is about: --file, else the tool's own declared
    // effects for this input, as in the gate.
    let about = if args.files.is_empty() {
        match (&args.tool, event) {
            (Some(tool), HookEvent::PreToolUse | HookEvent::PostToolUse) => {
                declared(setup, tool, &input)?
            }
            _ => About::default(),
        }
    } else {
        About {
            files: args.files.clone(),
            changes_files: true,
        }
    };
    let executor = setup.host.hooks(None)?;
    let outcome = executor.emit_about(event, payload, &about).await;
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
    crate::show(&text)
}
