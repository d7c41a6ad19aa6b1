//! Stored sessions and their checkpoints (`/api/sessions`): the list, one
//! session's transcript, and rewinding it.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_host::HostError;
use toolgate_store::SessionSummary;

use super::{ApiError, ApiResult, App, store_error};

fn session_json(summary: &SessionSummary, running: bool) -> Value {
    let mut value = serde_json::to_value(summary).unwrap_or_default();
    value["running"] = Value::from(running);
    value["outcome"] = Value::from(if running {
        "running"
    } else {
        toolgate_host::session_outcome(summary)
    });
    value
}

pub(super) async fn sessions(State(app): State<Arc<App>>) -> ApiResult {
    let store = app.host.store().map_err(ApiError::host)?;
    let mut list = store.list().await.map_err(store_error)?;
    list.sort_by_key(|s| std::cmp::Reverse(s.updated));
    let runs = app.lock_runs();
    let rows: Vec<Value> = list
        .iter()
        .map(|s| session_json(s, runs.contains_key(&s.id)))
        .collect();
    Ok(Json(Value::Array(rows)))
}

pub(super) async fn session(State(app): State<Arc<App>>, Path(id): Path<String>) -> ApiResult {
    let store = app.host.store().map_err(ApiError::host)?;
    let summary = store.get(&id).await.map_err(store_error)?;
    let messages = store.messages(&id).await.map_err(store_error)?;
    let calls = store.tool_calls(&id).await.map_err(store_error)?;
    let running = app.lock_runs().contains_key(&id);
    Ok(Json(json!({
        "session": session_json(&summary, running),
        "transcript": crate::transcript::transcript(&messages, &calls),
    })))
}

/// A session's steps with the files each changed.
pub(super) async fn checkpoints(State(app): State<Arc<App>>, Path(id): Path<String>) -> ApiResult {
    let list = app.host.checkpoints(&id).await.map_err(rewind_error)?;
    Ok(Json(json!({ "session": id, "checkpoints": list })))
}

/// `POST /api/sessions/{id}/rewind`: what to put back.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RewindBody {
    /// Before this step; absent: the last step that changed anything.
    #[serde(default)]
    to_step: Option<u32>,
    /// `code` (the default), `conversation` or `both`.
    #[serde(default)]
    what: Option<String>,
    /// Put back files changed since by someone else too.
    #[serde(default)]
    force: bool,
    /// Undo the session's last rewind instead.
    #[serde(default)]
    undo: bool,
}

/// Rewinds a session that is not running here (rules on
/// `toolgate_host::RewindOptions`); a conflict is reported in the answer,
/// not as an error.
pub(super) async fn rewind(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Json(body): Json<RewindBody>,
) -> ApiResult {
    if app.lock_runs().contains_key(&id) {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("session {id} is running; stop it before rewinding"),
        ));
    }
    let outcome = if body.undo {
        app.host.undo_rewind(&id, body.force).await
    } else {
        let (code, conversation) = match body.what.as_deref().unwrap_or("code") {
            "code" => (true, false),
            "conversation" => (false, true),
            "both" => (true, true),
            other => {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("`what` is `{other}`; use code, conversation or both"),
                ));
            }
        };
        let options = toolgate_host::RewindOptions {
            to_step: body.to_step,
            code,
            conversation,
            force: body.force,
        };
        app.host.rewind(&id, options).await
    }
    .map_err(rewind_error)?;
    app.hub
        .emit(&json!({"type": "session_rewound", "session": id}));
    Ok(Json(serde_json::to_value(&outcome).unwrap_or_default()))
}

/// A rewind refused as asked (no such step, nothing to undo) is the
/// request's fault; a session another process runs is a conflict; an
/// unknown session is not found.
fn rewind_error(error: HostError) -> ApiError {
    match &error {
        HostError::Rewind(_) => {
            let hint = error.hint();
            let mut e = ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, error.to_string());
            e.hint = hint;
            e
        }
        HostError::Store {
            source: toolgate_store::StoreError::NotFound(_),
            ..
        } => ApiError::new(StatusCode::NOT_FOUND, toolgate_core::error_chain(&error)),
        _ => ApiError::host(error),
    }
}
