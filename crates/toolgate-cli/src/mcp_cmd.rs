//! `toolgate mcp serve` and `toolgate mcp list`.

use std::fmt::Write as _;
use std::sync::Arc;

use anyhow::anyhow;
use async_trait::async_trait;
use toolgate_host::{Gate, Host};
use toolgate_mcp::{
    ElicitationApprover, HttpClient, HttpOptions, McpHttpClientConfig, McpServer, Readiness,
    ServerState,
};
use toolgate_store::AuditFilter;

use crate::cli::{ApproverChoice, ServeArgs};
use crate::render::{self, CliError, Exit};
use crate::{Setup, json_text, out, show};

/// `toolgate mcp serve`.
pub(crate) async fn serve(setup: &Setup, args: ServeArgs) -> Result<Exit, CliError> {
    let token = args
        .token_env
        .as_deref()
        .map(|var| bearer_token(var, "--token-env"))
        .transpose()?;
    let clients = &setup.host.config().mcp.http.clients;
    if let Some(addr) = args.http
        && !addr.ip().is_loopback()
        && token.is_none()
        && clients.is_empty()
    {
        return Err(CliError::usage(anyhow!(
            "refusing to serve on {addr} without a bearer token"
        ))
        .with_hint(
            "serve on 127.0.0.1, or require tokens for other addresses: --token-env VAR, \
             or clients in `mcp.http.clients`",
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
    let gate = setup.gate(Some(Arc::clone(&interactive))).await?;
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
            let mut options = HttpOptions::new()
                .token(token)
                .sessions(args.sessions && !args.no_sessions)
                .drain_timeout(std::time::Duration::from_secs(args.drain_timeout))
                .readiness(Arc::new(StoreReadiness::of(&setup.host)));
            if let Some(allows) = session_allows(setup) {
                options = options.session_allows(allows);
            }
            // With a store several hosts share, a client's rate holds
            // across all of them; each worker keeps its own bucket else.
            if setup.host.config().store.url.is_some()
                && let Ok(store) = setup.host.store()
            {
                options = options.shared_rate(Arc::new(toolgate_host::StoreRate::new(store)));
            }
            let built = clients
                .iter()
                .map(|client| http_client(&setup.host, &gate, &interactive, client))
                .collect::<Result<Vec<_>, _>>();
            match built {
                Ok(built) => {
                    for client in built {
                        options = options.client(client);
                    }
                    server
                        .serve_http_with(addr, options, shutdown_signal(), |bound| {
                            render::note(&format!("listening on http://{bound}/mcp"));
                        })
                        .await
                }
                Err(error) => {
                    gate.shutdown().await;
                    return Err(error);
                }
            }
        }
    };
    gate.shutdown().await;
    // Every call audited before the process ends (a drained worker's too).
    setup.host.flush().await;
    if let Some((server, _)) = ui {
        server.shutdown(std::time::Duration::ZERO).await;
    }
    served.map_err(|e| {
        // A configuration that cannot be served is the user's to fix.
        let exit = if matches!(
            e,
            toolgate_mcp::Error::Client { .. } | toolgate_mcp::Error::EmptyToken
        ) {
            Exit::Usage
        } else {
            Exit::Failure
        };
        CliError::new(exit, anyhow!(e))
    })?;
    Ok(Exit::Success)
}

/// The bearer token in the environment variable `var` (named by `what`):
/// set, and not blank (an empty token would let in every request that
/// sends `Authorization: Bearer `).
fn bearer_token(var: &str, what: &str) -> Result<String, CliError> {
    let token = std::env::var(var).map_err(|_| {
        CliError::usage(anyhow!("`{what} {var}`: the variable is not set"))
            .with_hint(format!("export {var}=<a long random token>"))
    })?;
    if token.trim().is_empty() {
        return Err(CliError::usage(anyhow!(
            "`{what} {var}`: the variable is empty; refusing to serve with an empty bearer token"
        ))
        .with_hint(format!(
            "export {var}=<a long random token>, e.g. export {var}=\"$(openssl rand -hex 32)\""
        )));
    }
    Ok(token)
}

/// One client of `mcp.http.clients`, ready to serve.
///
/// # Rules
///
/// 1. Its tools: those its `agent` may use (MCP tools appended to an
///    explicit list, as with `--agent`), else every tool the server serves;
///    then only those also in `tools`, when set.
/// 2. Its mode: its `mode`, else its agent's, else the server's (`--mode`,
///    then `confirmation.mode`).
/// 3. Its calls go through an engine of their own over the same registry,
///    whose audit names the client.
fn http_client(
    host: &Host,
    gate: &Gate,
    interactive: &Arc<dyn toolgate_engine::Approver>,
    config: &McpHttpClientConfig,
) -> Result<HttpClient, CliError> {
    let name = &config.name;
    let token = bearer_token(
        &config.token_env,
        &format!("mcp.http.clients `{name}`: token_env"),
    )?;
    let agent = config
        .agent
        .as_deref()
        .map(|agent| host.agent(agent))
        .transpose()?;
    let mut allowed = agent.as_ref().map(|def| {
        def.clone()
            .with_extra_tools(gate.extra_tool_names())
            .tool_names(&gate.registry)
    });
    if let Some(only) = &config.tools {
        allowed = Some(match allowed {
            Some(names) => names.into_iter().filter(|n| only.contains(n)).collect(),
            None => only.clone(),
        });
    }
    let mode = match &config.mode {
        Some(mode) => mode
            .parse::<toolgate_policy::ConfirmationMode>()
            .map_err(|reason| {
                CliError::usage(anyhow!("mcp.http.clients `{name}`: mode: {reason}"))
            })?,
        None => host.mode_for(agent.as_ref())?,
    };
    let engine = host.client_engine(&gate.registry, name, mode, Some(Arc::clone(interactive)))?;
    Ok(HttpClient::new(name.clone(), token)
        .engine(Arc::new(engine))
        .allowed_tools(allowed)
        .rate_per_minute(config.rate_per_minute)
        .max_concurrent(config.max_concurrent))
}

/// `/readyz`: the store answers a trivial query (the newest audit entry).
struct StoreReadiness {
    store: Result<Arc<dyn toolgate_store::Store>, String>,
}

impl StoreReadiness {
    fn of(host: &Host) -> Self {
        Self {
            store: host.store().map_err(|e| {
                format!(
                    "the store cannot be opened: {}",
                    toolgate_core::error_chain(&e)
                )
            }),
        }
    }
}

#[async_trait]
impl Readiness for StoreReadiness {
    async fn check(&self) -> Result<(), String> {
        let store = self.store.as_ref().map_err(Clone::clone)?;
        store
            .recent(&AuditFilter::newest(1))
            .await
            .map(|_| ())
            .map_err(|e| {
                format!(
                    "the store does not answer: {}",
                    toolgate_core::error_chain(&e)
                )
            })
    }
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

/// Where the clients' "allow for the session" answers are kept: the store
/// the workers share; without a store, each worker remembers its own.
fn session_allows(setup: &Setup) -> Option<Arc<dyn toolgate_engine::SharedAllows>> {
    match setup.host.store() {
        Ok(store) => Some(Arc::new(toolgate_host::StoreAllows::new(
            store,
            toolgate_host::worker_name(),
            std::time::Duration::from_secs(setup.host.config().store.session_allow_secs.get()),
        ))),
        Err(error) => {
            render::note(&format!(
                "warning: \"allow for the session\" holds on this worker only: {}",
                toolgate_core::error_chain(&error)
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
