//! `toolgate mcp serve` and `toolgate mcp list`.

use std::fmt::Write as _;
use std::sync::Arc;

use anyhow::anyhow;
use toolgate_mcp::{ElicitationApprover, McpServer, ServerState};

use crate::cli::{ApproverChoice, ServeArgs};
use crate::render::{self, CliError, Exit};
use crate::{Setup, json_text, out, show};

/// `toolgate mcp serve`.
pub(crate) async fn serve(setup: &Setup, args: ServeArgs) -> Result<Exit, CliError> {
    let token = match &args.token_env {
        None => None,
        Some(var) => {
            let token = std::env::var(var).map_err(|_| {
                CliError::usage(anyhow!("`--token-env {var}`: the variable is not set"))
                    .with_hint(format!("export {var}=<a long random token>"))
            })?;
            // An empty token would let in every request that sends
            // `Authorization: Bearer ` (and a blank one is surely a mistake).
            if token.trim().is_empty() {
                return Err(CliError::usage(anyhow!(
                    "`--token-env {var}`: the variable is empty; refusing to serve with an empty bearer token"
                ))
                .with_hint(format!(
                    "export {var}=<a long random token>, e.g. export {var}=\"$(openssl rand -hex 32)\""
                )));
            }
            Some(token)
        }
    };
    if let Some(addr) = args.http
        && !addr.ip().is_loopback()
        && token.is_none()
    {
        return Err(CliError::usage(anyhow!(
            "refusing to serve on {addr} without a bearer token"
        ))
        .with_hint(
            "serve on 127.0.0.1, or require a token with --token-env VAR for other addresses",
        ));
    }
    let agent = args
        .agent
        .as_deref()
        .map(|name| setup.host.agent(name))
        .transpose()?;
    // Confirmation goes back to the MCP client through elicitation, or
    // to the web UI's approval page.
    let ui = match args.approver {
        ApproverChoice::Ui => {
            let server = crate::ui_cmd::approval_page(setup, args.ui_addr).await?;
            let approver = server.approver(None);
            Some((server, approver))
        }
        ApproverChoice::Default => None,
    };
    let interactive: Arc<dyn toolgate_engine::Approver> = match &ui {
        Some((_, approver)) => Arc::clone(approver) as _,
        None => Arc::new(ElicitationApprover::default()),
    };
    let gate = setup.gate(Some(interactive)).await?;
    // With --agent, the tools that agent may use (MCP tools appended to an
    // explicit list, still subject to a read-only agent's filter).
    let allowed = agent.map(|def| {
        def.with_extra_tools(gate.extra_tool_names())
            .tool_names(&gate.registry)
    });
    let server = McpServer::new(Arc::clone(&gate.engine))
        .allowed_tools(allowed)
        .ledger(ledger(setup).await);
    let served = match args.http {
        None => server.serve_stdio().await,
        Some(addr) => {
            server
                .serve_http_announced(addr, token, shutdown_signal(), |bound| {
                    render::note(&format!("listening on http://{bound}/mcp"));
                })
                .await
        }
    };
    gate.shutdown().await;
    if let Some((server, _)) = ui {
        server.shutdown(std::time::Duration::ZERO).await;
    }
    served.map_err(|e| CliError::new(Exit::Failure, anyhow!(e)))?;
    Ok(Exit::Success)
}

/// The ledger calls with an idempotency key run once through (shared by
/// the workers on this store); without a store, such calls run as others.
async fn ledger(setup: &Setup) -> Option<Arc<dyn toolgate_engine::Ledger>> {
    let started = match setup.host.store() {
        Ok(store) => toolgate_host::CallLedger::start(store, toolgate_host::worker_name())
            .await
            .map_err(|e| toolgate_core::error_chain(&e)),
        Err(e) => Err(toolgate_core::error_chain(&e)),
    };
    match started {
        Ok(ledger) => Some(Arc::new(ledger)),
        Err(error) => {
            render::note(&format!(
                "warning: calls with an idempotency key run as others (not once among workers): {error}"
            ));
            None
        }
    }
}

/// Resolves on Ctrl-C or SIGTERM.
pub(crate) async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

/// `toolgate mcp list`.
pub(crate) async fn list(setup: &Setup) -> Result<Exit, CliError> {
    let statuses = setup.host.mcp_statuses().await?;
    if setup.json {
        return out(&json_text(&statuses)?);
    }
    if statuses.is_empty() {
        render::note("no MCP servers configured: add them under `mcp.servers`");
        return Ok(Exit::Success);
    }
    let mut text = String::new();
    for status in &statuses {
        let state = match &status.state {
            ServerState::Connected => format!("connected, {} tools", status.tools.len()),
            ServerState::Failed(reason) => format!("failed: {reason}"),
            ServerState::Disabled => "disabled".to_owned(),
            _ => "unknown".to_owned(),
        };
        let _ = writeln!(text, "{} ({}): {state}", status.name, status.transport);
        for (local, remote) in &status.tools {
            let _ = writeln!(text, "  {local}  ({remote})");
        }
    }
    show(&text)
}
