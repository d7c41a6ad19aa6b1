//! `toolgate call TOOL ARGS`: one call through the whole gate, its result
//! printed and its decision as the exit code.

use std::io;
use std::io::Read;
use std::sync::Arc;

use anyhow::anyhow;
use toolgate_core::{ToolCall, ToolResult};
use toolgate_engine::{Approver, Decision};

use super::{Setup, json_text, out, show_data, warn_failed_servers_of};
use crate::approver::PromptApprover;
use crate::cli::CallArgs;
use crate::render;
use crate::render::{CliError, Exit};

pub(super) async fn call(setup: &Setup, args: CallArgs) -> Result<Exit, CliError> {
    let from_stdin = args.args.as_deref() == Some("-");
    let text = match args.args.as_deref() {
        None => "{}".to_owned(),
        Some("-") => {
            let mut text = String::new();
            io::stdin().read_to_string(&mut text).map_err(|e| {
                CliError::usage(anyhow!(e).context("could not read the arguments from stdin"))
            })?;
            text
        }
        Some(text) => text.to_owned(),
    };
    let arguments: serde_json::Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(error) => {
            let result = ToolResult::failure(format!(
                "invalid JSON arguments: {error}; pass a JSON object such as '{{\"path\": \"src/main.rs\"}}'"
            ));
            return print_result(setup, &result, Decision::InvalidArguments);
        }
    };
    // Arguments read from stdin leave no terminal to ask on.
    let interactive = if from_stdin {
        None
    } else {
        PromptApprover::terminal().map(|p| Arc::new(p) as Arc<dyn Approver>)
    };
    // Only the tool's own group is built when the catalog has it.
    let gate = setup
        .host
        .gate()
        .interactive(interactive)
        .for_tool(args.tool.clone())
        .build()
        .await?;
    let gate = warn_failed_servers_of(gate);
    let run = gate
        .engine
        .execute(ToolCall::new("cli-1", args.tool, arguments))
        .await;
    gate.shutdown().await;
    print_result(setup, &run.result, run.decision)
}

pub(super) fn print_result(
    setup: &Setup,
    result: &ToolResult,
    decision: Decision,
) -> Result<Exit, CliError> {
    let exit = if decision == Decision::Aborted {
        Exit::Aborted
    } else if result.success {
        Exit::Success
    } else {
        Exit::Failure
    };
    if setup.json {
        out(&json_text(result)?)?;
        return Ok(exit);
    }
    if !result.output.is_empty() {
        let mut text = result.output.clone();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        show_data(&text)?;
    }
    if let Some(error) = &result.error {
        render::tool_error(error);
    }
    Ok(exit)
}
