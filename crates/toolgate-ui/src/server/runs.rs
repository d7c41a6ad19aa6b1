//! Runs started from the page (`/api/runs`): one at a time per session,
//! each on a fresh host, stopped on request.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::watch;
use toolgate_engine::Approver;
use toolgate_host::{RunControls, RunRequest};

use super::{ActiveRun, ApiError, ApiResult, App};
use crate::approvals::{Binding, UiApprover};

#[derive(Deserialize)]
pub(super) struct StartRun {
    task: String,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    session: Option<String>,
}

pub(super) async fn start_run(
    State(app): State<Arc<App>>,
    Json(body): Json<StartRun>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    if app.approver_only {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "this page serves the approvals of a run started elsewhere; it cannot start runs",
        )
        .hint("start `toolgate ui` to chat with agents"));
    }
    let task = body.task.trim().to_owned();
    if task.is_empty() {
        return Err(ApiError::new(StatusCode::BAD_REQUEST, "the task is empty")
            .hint("type what the agent should do"));
    }
    let agent = body.agent.unwrap_or_else(|| "build".to_owned());
    // A resumed session is reserved at once, so two requests (two tabs)
    // cannot both start it; the reservation goes if the start fails.
    let (stop_tx, stop_rx) = watch::channel(false);
    let active = ActiveRun {
        agent: agent.clone(),
        task: task.clone(),
        stop: stop_tx,
    };
    let mut reservation = Reservation {
        app: &app,
        session: None,
    };
    let active = match &body.session {
        Some(session) => {
            let mut runs = app.lock_runs();
            if runs.contains_key(session) {
                return Err(ApiError::new(
                    StatusCode::CONFLICT,
                    format!("session {session} is running"),
                )
                .hint("wait for it to finish, or stop it"));
            }
            runs.insert(session.clone(), active);
            reservation.session = Some(session.clone());
            None
        }
        None => Some(active),
    };
    let host = app.current_host()?;
    let mut request = RunRequest::new(task.clone());
    request.agent = Some(agent.clone());
    request.session.clone_from(&body.session);
    // The toggle; `prepare_run` lets the `--mode` flag win.
    request.mode = host.config().ui.permissions.get(&agent).map(|p| p.mode());
    let approver = Arc::new(UiApprover::new(
        Arc::clone(&app.approvals),
        Some(agent.clone()),
    ));
    let prepared = host
        .prepare_run(request, Some(Arc::clone(&approver) as Arc<dyn Approver>))
        .await
        .map_err(ApiError::host)?;
    let session = prepared.session_id().to_owned();
    approver.bind(Binding {
        session: Some(session.clone()),
    });
    if let Some(active) = active {
        app.lock_runs().insert(session.clone(), active);
    }
    // The run is registered for good: the task below removes it.
    reservation.session = None;
    let mut start = prepared.start_event();
    start["server"] = json!(prepared.model().base_url);
    app.hub.emit(&start);
    let run_app = Arc::clone(&app);
    let run_session = session.clone();
    tokio::spawn(async move {
        let mut controls = RunControls::default();
        controls.events = Some(run_app.hub.event_sink(&run_session));
        controls.stop = Some(stop_rx);
        let report = prepared.run(controls).await;
        host.flush().await;
        run_app.approvals.cancel_session(&run_session);
        run_app.lock_runs().remove(&run_session);
        run_app
            .hub
            .emit(&toolgate_host::done_event(&run_session, &report));
    });
    Ok((StatusCode::ACCEPTED, Json(json!({"session": session}))))
}

/// A session reserved in the runs list while its run starts; dropped
/// armed (the start failed), it frees the session.
struct Reservation<'a> {
    app: &'a App,
    session: Option<String>,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            self.app.lock_runs().remove(&session);
        }
    }
}

pub(super) async fn stop_run(
    State(app): State<Arc<App>>,
    Path(session): Path<String>,
) -> ApiResult {
    let found = app
        .lock_runs()
        .get(&session)
        .map(|run| run.stop.send(true).is_ok());
    if found.is_none() {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("session {session} is not running here"),
        ));
    }
    // A call waiting for approval would keep the run from reaching its
    // summary: it is denied.
    app.approvals.cancel_session(&session);
    Ok(Json(json!({"stopping": true})))
}
