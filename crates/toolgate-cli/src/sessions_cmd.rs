//! `toolgate sessions list|show ID|resume ID`.

use std::fmt::Write as _;

use anyhow::anyhow;
use toolgate_agent::Role;

use crate::Setup;
use crate::cli::{RunArgs, SessionsCommand};
use crate::render::{CliError, Exit};
use crate::run_cmd::{open_store, run_task};

fn not_found(e: toolgate_agent::SessionError) -> CliError {
    CliError::new(Exit::Failure, anyhow!(e))
}

/// `toolgate sessions …`.
pub(crate) async fn sessions(setup: &Setup, cmd: SessionsCommand) -> Result<Exit, CliError> {
    match cmd {
        SessionsCommand::List => {
            let store = open_store(setup)?;
            let list = store.list().map_err(not_found)?;
            if setup.json {
                return crate::out(&crate::json_text(&list)?);
            }
            let mut text = String::new();
            for s in &list {
                let task: String = s.task.chars().take(60).collect();
                let _ = writeln!(
                    text,
                    "{}  {:<8} {:<11} {:>7} tokens  {task}",
                    s.id,
                    s.agent,
                    s.outcome,
                    s.input_tokens + s.output_tokens
                );
            }
            crate::out(&text)
        }
        SessionsCommand::Show { id } => {
            let store = open_store(setup)?;
            let summary = store.get(&id).map_err(not_found)?;
            let messages = store.messages(&id).map_err(not_found)?;
            if setup.json {
                let calls = store.tool_calls(&id).map_err(not_found)?;
                let v = serde_json::json!({"session": summary, "messages": messages,
                    "tool_calls": calls.iter().map(|(step, name, decision, success)| serde_json::json!(
                        {"step": step, "name": name, "decision": decision, "success": success})).collect::<Vec<_>>()});
                return crate::out(&crate::json_text(&v)?);
            }
            let mut text = format!(
                "session {} · agent {} · {} · {} in / {} out tokens\n",
                summary.id,
                summary.agent,
                summary.outcome,
                summary.input_tokens,
                summary.output_tokens
            );
            for m in &messages {
                let role = match m.role {
                    Role::System => continue,
                    Role::User => "user",
                    Role::Assistant => "assistant",
                    Role::Tool => "tool",
                };
                let _ = writeln!(text, "\n[{role}] {}", m.content.trim());
                for c in &m.tool_calls {
                    let _ = writeln!(text, "  → {}({})", c.name, c.arguments);
                }
            }
            crate::out(&text)
        }
        SessionsCommand::Resume { id, task, agent } => {
            let args = RunArgs {
                task: task.unwrap_or_else(|| "Continue.".to_owned()),
                agent,
                model: None,
                base_url: None,
                max_steps: None,
                timeout: None,
                budget: None,
                session: Some(id),
                report: None,
                report_file: None,
            };
            run_task(setup, args).await
        }
    }
}
