//! What the pages inspect (`/api/mcp`, `/api/sandbox`, `/api/audit`,
//! `/api/dynamic`): MCP servers, the sandbox, the audit, and the dynamic
//! tools waiting for review.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_mcp::ServerState;
use toolgate_store::AuditFilter;

use super::{ApiError, ApiResult, App, store_error};

pub(super) async fn mcp(State(app): State<Arc<App>>) -> ApiResult {
    // The configuration as it is now, as a run would read it: a server
    // added to the file since the start is shown without a restart.
    let host = app.current_host()?;
    let statuses = host.mcp_statuses().await.map_err(ApiError::host)?;
    let rows: Vec<Value> = statuses
        .iter()
        .map(|s| {
            let (state, detail) = match &s.state {
                ServerState::Connected => ("ready", None),
                ServerState::Failed(reason) => ("failed", Some(reason.clone())),
                ServerState::Disabled => ("disabled", None),
                _ => ("unknown", None),
            };
            json!({
                "name": s.name,
                "transport": s.transport,
                "state": state,
                "detail": detail,
                "tools": s.tools.iter().map(|(local, _)| local).collect::<Vec<_>>(),
            })
        })
        .collect();
    Ok(Json(Value::Array(rows)))
}

pub(super) async fn sandbox(State(app): State<Arc<App>>) -> ApiResult {
    let sandbox = app.host.sandbox().map_err(ApiError::host)?;
    let status = sandbox.status();
    let network = sandbox.network_status();
    let commands = &app.host.config().commands;
    let missing = status.missing();
    let checks = vec![
        json!({"name": "kernel sandbox level", "ok": missing.is_empty(), "detail": status.level_name()}),
        json!({"name": "Landlock ABI", "ok": status.landlock_abi() > 0, "detail": status.landlock_abi().to_string()}),
        json!({"name": "read-only outside the workspace", "ok": status.enforces_read_only(), "detail": if status.enforces_read_only() { "enforced by the kernel" } else { "not enforced here: commands that write ask first" }}),
        json!({"name": "network for commands", "ok": network.problem().is_none(), "detail": network.to_string()}),
        json!({"name": "commands enabled", "ok": true, "detail": commands.enabled.to_string()}),
    ];
    let summary = if missing.is_empty() {
        format!(
            "every process toolgate starts runs in the `{}` sandbox",
            status.level_name()
        )
    } else {
        format!(
            "sandbox `{}`; missing on this machine: {} (toolgate asks where the kernel cannot enforce)",
            status.level_name(),
            missing.join(", ")
        )
    };
    let limits: Vec<Value> = status
        .limits()
        .iter()
        .map(|l| {
            json!({
                "name": l.limit().key(),
                "value": l.value(),
                "enforced": l.enforced(),
                "how": l.how(),
            })
        })
        .collect();
    Ok(Json(json!({
        "level": status.level_name(),
        "summary": summary,
        "missing": missing,
        "checks": checks,
        "limits": limits,
    })))
}

#[derive(Deserialize)]
pub(super) struct AuditQuery {
    #[serde(default)]
    decision: Option<String>,
    #[serde(default)]
    limit: Option<usize>,
}

pub(super) async fn audit(
    State(app): State<Arc<App>>,
    Query(query): Query<AuditQuery>,
) -> ApiResult {
    let store = app.host.store().map_err(ApiError::host)?;
    let mut filter = AuditFilter::newest(query.limit.unwrap_or(100).clamp(1, 1000));
    filter.decision = query.decision.filter(|d| !d.is_empty() && d != "all");
    let entries = store.recent(&filter).await.map_err(store_error)?;
    Ok(Json(serde_json::to_value(entries).unwrap_or_default()))
}

pub(super) async fn dynamic(State(app): State<Arc<App>>) -> ApiResult {
    if !app.host.config().tools.dynamic.enabled {
        return Ok(Json(json!({"enabled": false, "pending": []})));
    }
    let store = app.host.store().map_err(ApiError::host)?;
    let pending = toolgate_host::dynamic::review::pending(store.as_ref())
        .await
        .map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                toolgate_core::error_chain(&e),
            )
        })?;
    let rows: Vec<Value> = pending
        .iter()
        .map(|record| {
            let mut row = toolgate_host::dynamic::review::record_json(record);
            row["kind"] = row["type"].clone();
            // Control and reordering characters shown as escapes, line by
            // line, as the terminal review does (a source must not hide
            // lines).
            let source: Vec<_> = record
                .source
                .lines()
                .map(toolgate_core::neutralize)
                .collect();
            row["source"] = Value::from(source.join("\n"));
            row
        })
        .collect();
    Ok(Json(json!({"enabled": true, "pending": rows})))
}

pub(super) async fn review_dynamic(
    State(app): State<Arc<App>>,
    Path((id, action)): Path<(i64, String)>,
) -> ApiResult {
    let store = app.host.store().map_err(ApiError::host)?;
    let config = &app.host.config().tools.dynamic;
    let failed = |e: toolgate_host::dynamic::DynamicError| {
        ApiError::new(StatusCode::BAD_REQUEST, toolgate_core::error_chain(&e))
    };
    let status = match action.as_str() {
        "approve" => {
            toolgate_host::dynamic::review::approve(store.as_ref(), config, id)
                .await
                .map_err(failed)?;
            "approved"
        }
        "reject" => {
            toolgate_host::dynamic::review::reject(store.as_ref(), id)
                .await
                .map_err(failed)?;
            "rejected"
        }
        _ => {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "use /approve or /reject",
            ));
        }
    };
    app.hub.emit(&json!({"type": "dynamic_changed"}));
    Ok(Json(json!({"id": id, "status": status})))
}
