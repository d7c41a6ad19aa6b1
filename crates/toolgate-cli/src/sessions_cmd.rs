//! `toolgate sessions list|show ID|resume ID`.

use std::fmt::Write as _;

use toolgate_agent::{Message, Role};
use toolgate_host::HostError;

use crate::Setup;
use crate::cli::{RunArgs, SessionsCommand};
use crate::render::{self, CliError, Exit};

fn store_error(setup: &Setup, source: toolgate_store::StoreError) -> CliError {
    if let toolgate_store::StoreError::NotFound(id) = &source {
        return CliError::new(
            Exit::Failure,
            anyhow::anyhow!("there is no session `{id}` in this workspace's store"),
        )
        .with_hint("`toolgate sessions list` shows the sessions there are");
    }
    let path = setup.host.store_location().unwrap_or_default();
    CliError::from(HostError::Store { path, source })
}

use toolgate_host::session_outcome as outcome;

/// `toolgate sessions …`.
pub(crate) async fn sessions(setup: &Setup, cmd: SessionsCommand) -> Result<Exit, CliError> {
    match cmd {
        SessionsCommand::List => {
            let store = setup.host.store()?;
            let list = store.list().await.map_err(|e| store_error(setup, e))?;
            if setup.json {
                let rows: Vec<serde_json::Value> = list
                    .iter()
                    .map(|s| {
                        let mut row = serde_json::to_value(s).unwrap_or_default();
                        row["outcome"] = outcome(s).into();
                        row
                    })
                    .collect();
                return crate::out(&crate::json_text(&rows)?);
            }
            if list.is_empty() {
                render::note("no sessions yet in this workspace: `toolgate run TASK` starts one");
                return Ok(Exit::Success);
            }
            let mut text = String::new();
            for s in &list {
                let task: String = s.task.chars().take(60).collect();
                let _ = writeln!(
                    text,
                    "{}  {:<8} {:<11} {:>3} steps {:>7} tokens  {task}",
                    s.id,
                    s.agent,
                    outcome(s),
                    s.steps,
                    s.input_tokens + s.output_tokens
                );
            }
            crate::show(&text)
        }
        SessionsCommand::Show { id } => {
            let store = setup.host.store()?;
            let summary = store.get(&id).await.map_err(|e| store_error(setup, e))?;
            let stored = store
                .messages(&id)
                .await
                .map_err(|e| store_error(setup, e))?;
            let calls = store
                .tool_calls(&id)
                .await
                .map_err(|e| store_error(setup, e))?;
            let events = store.events(&id).await.map_err(|e| store_error(setup, e))?;
            if setup.json {
                let mut session = serde_json::to_value(&summary).unwrap_or_default();
                session["outcome"] = outcome(&summary).into();
                let v = serde_json::json!({"session": session, "messages": stored, "tool_calls": calls, "events": events});
                return crate::out(&crate::json_text(&v)?);
            }
            let mut text = format!(
                "session {} · agent {} · {} · {} steps · {} in / {} out tokens\n",
                summary.id,
                summary.agent,
                outcome(&summary),
                summary.steps,
                summary.input_tokens,
                summary.output_tokens
            );
            for value in stored {
                let Ok(m) = serde_json::from_value::<Message>(value) else {
                    continue;
                };
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
            if !events.is_empty() {
                text.push_str("\nEvents:\n");
                for e in &events {
                    let _ = writeln!(
                        text,
                        "  run {} step {}: {} {}",
                        e.run, e.event.step, e.event.kind, e.event.data
                    );
                }
            }
            crate::show(&text)
        }
        SessionsCommand::Resume { id, task, agent } => {
            let args = RunArgs {
                task: task.unwrap_or_else(|| "Continue.".to_owned()),
                agent,
                model: None,
                base_url: None,
                llm: crate::cli::ProviderArgs::default(),
                max_steps: None,
                timeout: None,
                budget: None,
                session: Some(id),
                report: None,
                report_file: None,
                approver: crate::cli::ApproverChoice::Default,
                ui_addr: std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
            };
            crate::run_cmd::run(setup, args).await
        }
    }
}
