//! The HTTP server: routes, runs, pages' data (API.md describes the
//! wire).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, Uri, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use futures_util::{Stream, StreamExt as _};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{broadcast, watch};
use toolgate_engine::Approver;
use toolgate_host::{
    AgentPermission, ErrorKind, Host, HostError, RunControls, RunRequest, UserRules,
};
use toolgate_mcp::ServerState;
use toolgate_store::{AuditFilter, SessionSummary};

use crate::approvals::{Approvals, Binding, UiApprover};
use crate::assets;
use crate::auth::{self, AuthGuard};
use crate::describe::Describer;
use crate::hub::Hub;

use answers::{
    add_rule, answer_many, answer_one, answer_plan, approvals, remove_rule, rules, rules_error,
};

mod answers;

/// How often the open pages are told about other processes' approvals
/// (see `Approvals::watch_store`).
const STORE_WATCH: Duration = Duration::from_secs(1);

/// Builds a fresh [`Host`] for each run, so rules and permissions changed
/// since the server started apply to it.
pub type HostFactory = Arc<dyn Fn() -> Result<Host, HostError> + Send + Sync>;

/// How to serve.
#[derive(Clone)]
#[non_exhaustive]
pub struct UiOptions {
    /// Where to listen. Port 0 picks a free port.
    pub addr: SocketAddr,
    /// Whether a non-loopback address may be used (`--allow-remote`).
    pub allow_remote: bool,
    /// Serve approvals, events and pages only, with no chat: the run is
    /// driven by another front end (`run|mcp serve --approver ui`).
    pub approver_only: bool,
    /// A fresh host for each run. By default, the host the server was
    /// started with.
    pub reload: Option<HostFactory>,
}

impl std::fmt::Debug for UiOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UiOptions")
            .field("addr", &self.addr)
            .field("allow_remote", &self.allow_remote)
            .field("approver_only", &self.approver_only)
            .finish_non_exhaustive()
    }
}

impl UiOptions {
    /// Serve at `addr`.
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            allow_remote: false,
            approver_only: false,
            reload: None,
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UiError {
    /// A non-loopback address without `allow_remote`.
    #[error(
        "refusing to serve on {0}: the UI runs agents and approves their calls, so it listens on loopback only unless asked"
    )]
    Remote(SocketAddr),
    /// The address could not be bound, or no random secret was available.
    #[error("could not serve on {addr}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

impl UiError {
    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            Self::Remote(_) => {
                "use --addr 127.0.0.1:PORT, or add --allow-remote if other machines must reach it (anyone who has the printed URL can then run agents)"
            }
            Self::Bind { .. } => {
                "choose another port with --addr 127.0.0.1:PORT (0 picks a free one)"
            }
        }
    }
}

struct ActiveRun {
    agent: String,
    task: String,
    stop: watch::Sender<bool>,
}

pub(crate) struct App {
    host: Arc<Host>,
    reload: Option<HostFactory>,
    hub: Hub,
    approvals: Arc<Approvals>,
    runs: Mutex<HashMap<String, ActiveRun>>,
    approver_only: bool,
}

/// A running `toolgate ui` server.
pub struct UiServer {
    app: Arc<App>,
    addr: SocketAddr,
    url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for UiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UiServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl UiServer {
    /// Binds `options.addr` and serves until [`shutdown`](Self::shutdown).
    pub async fn start(host: Arc<Host>, options: UiOptions) -> Result<Self, UiError> {
        if !options.addr.ip().is_loopback() && !options.allow_remote {
            return Err(UiError::Remote(options.addr));
        }
        let bind_error = |source| UiError::Bind {
            addr: options.addr,
            source,
        };
        let listener = tokio::net::TcpListener::bind(options.addr)
            .await
            .map_err(bind_error)?;
        let addr = listener.local_addr().map_err(bind_error)?;
        let guard = Arc::new(AuthGuard::new(addr).map_err(bind_error)?);
        let url = guard.url(addr);
        let hub = Hub::new();
        let describer = Describer::new(host.workspace().to_owned());
        // Questions wait in the store too, so that every UI sharing it
        // lists and answers them (see `approvals.rs`).
        let shared = match host.store() {
            Ok(store) => Some(toolgate_host::StoreApprover::new(
                store,
                toolgate_host::worker_name(),
            )),
            Err(error) => {
                tracing::warn!(
                    "approvals are answered from this page only: the store cannot be opened ({})",
                    toolgate_core::error_chain(&error)
                );
                None
            }
        };
        let app = Arc::new(App {
            approvals: Arc::new(Approvals::new(
                hub.clone(),
                describer,
                host.env().to_vec(),
                shared,
            )),
            host,
            reload: options.reload,
            hub,
            runs: Mutex::default(),
            approver_only: options.approver_only,
        });
        let router = router(Arc::clone(&app), guard);
        let watch = tokio::spawn(Arc::clone(&app.approvals).watch_store(STORE_WATCH));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let served = axum::serve(listener, router)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
            if let Err(error) = served {
                tracing::warn!("the UI server stopped: {error}");
            }
            watch.abort();
        });
        Ok(Self {
            app,
            addr,
            url,
            stop: Some(stop),
            task,
        })
    }

    /// The URL to open, token included.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The address served.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The events bus (a front end driving its own run publishes there).
    pub fn hub(&self) -> &Hub {
        &self.app.hub
    }

    /// An approver answered from this UI, for a run of `agent` (none for
    /// `mcp serve`).
    pub fn approver(&self, agent: Option<String>) -> Arc<UiApprover> {
        Arc::new(UiApprover::new(Arc::clone(&self.app.approvals), agent))
    }

    /// Stops the runs this server started (gracefully: each ends with its
    /// summary and is recorded; at most `grace`), denies what is pending,
    /// and stops serving.
    pub async fn shutdown(mut self, grace: Duration) {
        let sessions: Vec<String> = {
            let runs = self.app.lock_runs();
            for run in runs.values() {
                let _ = run.stop.send(true);
            }
            runs.keys().cloned().collect()
        };
        for session in &sessions {
            self.app.approvals.cancel_session(session);
        }
        let deadline = tokio::time::Instant::now() + grace;
        while !self.app.lock_runs().is_empty() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = tokio::time::timeout(Duration::from_secs(2), &mut self.task).await;
    }
}

impl App {
    fn lock_runs(&self) -> std::sync::MutexGuard<'_, HashMap<String, ActiveRun>> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The host as the configuration is now: a fresh one when the server
    /// can reload (rules and toggles saved since the start apply), else
    /// the one it started with.
    fn current_host(&self) -> Result<Arc<Host>, ApiError> {
        match &self.reload {
            Some(reload) => reload().map(Arc::new).map_err(ApiError::host),
            None => Ok(Arc::clone(&self.host)),
        }
    }
}

fn router(app: Arc<App>, guard: Arc<AuthGuard>) -> Router {
    Router::new()
        .route("/api/state", get(state))
        .route("/api/events", get(events))
        .route("/api/agents/{name}/permission", put(set_permission))
        .route("/api/runs", post(start_run))
        .route("/api/runs/{session}/stop", post(stop_run))
        .route("/api/sessions", get(sessions))
        .route("/api/sessions/{id}", get(session))
        .route("/api/sessions/{id}/checkpoints", get(checkpoints))
        .route("/api/sessions/{id}/rewind", post(rewind))
        .route("/api/approvals", get(approvals).post(answer_many))
        .route("/api/approvals/{id}", post(answer_one))
        .route("/api/approvals/{id}/plan", post(answer_plan))
        .route("/api/rules", get(rules).post(add_rule))
        .route("/api/rules/{number}", axum::routing::delete(remove_rule))
        .route("/api/mcp", get(mcp))
        .route("/api/sandbox", get(sandbox))
        .route("/api/audit", get(audit))
        .route("/api/dynamic", get(dynamic))
        .route("/api/dynamic/{id}/{action}", post(review_dynamic))
        .fallback(get(asset))
        .with_state(app)
        .layer(axum::middleware::from_fn_with_state(guard, auth::check))
        .layer(axum::middleware::from_fn(auth::secure_headers))
}

/// An error as the page shows it: `{"error", "hint"}`.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    error: String,
    hint: Option<String>,
}

impl ApiError {
    fn new(status: StatusCode, error: impl Into<String>) -> Self {
        Self {
            status,
            error: error.into(),
            hint: None,
        }
    }

    fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    #[expect(clippy::needless_pass_by_value, reason = "a `map_err` argument")]
    fn host(error: HostError) -> Self {
        let status = match error.kind() {
            // Another process runs (or rewinds) the session.
            _ if matches!(error, HostError::SessionBusy { .. }) => StatusCode::CONFLICT,
            ErrorKind::ModelUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            ErrorKind::Runtime => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::UNPROCESSABLE_ENTITY,
        };
        let hint = error.hint();
        Self {
            status,
            error: toolgate_core::error_chain(&error),
            hint,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(json!({"error": self.error, "hint": self.hint})),
        )
            .into_response()
    }
}

type ApiResult<T = Json<Value>> = Result<T, ApiError>;

async fn asset(uri: Uri) -> Response {
    match assets::asset(uri.path()) {
        Some(a) => ([(header::CONTENT_TYPE, a.content_type)], a.body).into_response(),
        None => ApiError::new(StatusCode::NOT_FOUND, "no such page").into_response(),
    }
}

async fn state(State(app): State<Arc<App>>) -> ApiResult {
    // The configuration as it is now (toggles saved since the start).
    let host = app.current_host()?;
    let mut agents = Vec::new();
    for name in host.agent_names() {
        let Ok(agent) = host.agent(&name) else {
            continue;
        };
        let (permission, mode) = host.ui_permission(&agent).map_err(ApiError::host)?;
        agents.push(json!({
            "name": name,
            "permission": permission.as_str(),
            "mode": mode.to_string(),
            "locked": host.mode_flag().is_some(),
        }));
    }
    let runs: Vec<Value> = app
        .lock_runs()
        .iter()
        .map(|(session, run)| json!({"session": session, "agent": run.agent, "task": run.task}))
        .collect();
    let llm = &host.config().llm;
    Ok(Json(json!({
        "workspace": host.workspace(),
        "version": env!("CARGO_PKG_VERSION"),
        // The model as configured; a run's `start` event says which one it
        // talks to (a server found at the run when none is configured).
        "llm": {
            "provider": llm.provider,
            "model": llm.model,
            "server": llm.base_url,
        },
        "approver_only": app.approver_only,
        "agents": agents,
        "runs": runs,
        "pending": app.approvals.pending().await,
    })))
}

async fn events(
    State(app): State<Arc<App>>,
) -> Sse<impl Stream<Item = Result<Event, std::convert::Infallible>>> {
    let rx = app.hub.subscribe();
    let runs: Vec<Value> = app
        .lock_runs()
        .iter()
        .map(|(session, run)| json!({"session": session, "agent": run.agent, "task": run.task}))
        .collect();
    let hello = json!({"type": "hello", "pending": app.approvals.pending().await, "runs": runs});
    let first = futures_util::stream::once(async move {
        Ok::<_, std::convert::Infallible>(Event::default().data(hello.to_string()))
    });
    let rest = futures_util::stream::unfold(rx, |mut rx| async move {
        let data = match rx.recv().await {
            Ok(text) => text,
            // A page that fell behind reloads its state.
            Err(broadcast::error::RecvError::Lagged(_)) => Arc::from(r#"{"type":"lagged"}"#),
            Err(broadcast::error::RecvError::Closed) => return None,
        };
        Some((Ok(Event::default().data(&*data)), rx))
    });
    Sse::new(first.chain(rest)).keep_alive(KeepAlive::default())
}

#[derive(Deserialize)]
struct PermissionBody {
    permission: String,
}

async fn set_permission(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    Json(body): Json<PermissionBody>,
) -> ApiResult {
    let permission: AgentPermission = body
        .permission
        .parse()
        .map_err(|e: String| ApiError::new(StatusCode::BAD_REQUEST, e))?;
    app.host.agent(&name).map_err(ApiError::host)?;
    let mut file = UserRules::open_user(app.host.env()).map_err(rules_error)?;
    file.set_permission(&name, permission)
        .map_err(rules_error)?;
    file.save().map_err(rules_error)?;
    let mode = app
        .host
        .mode_flag()
        .unwrap_or(permission.mode())
        .to_string();
    app.hub.emit(&json!({
        "type": "permission_changed", "agent": name,
        "permission": permission.as_str(), "mode": mode,
    }));
    Ok(Json(json!({
        "agent": name,
        "permission": permission.as_str(),
        "mode": mode,
        "file": file.path(),
    })))
}

#[derive(Deserialize)]
struct StartRun {
    task: String,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    session: Option<String>,
}

async fn start_run(
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

async fn stop_run(State(app): State<Arc<App>>, Path(session): Path<String>) -> ApiResult {
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

async fn sessions(State(app): State<Arc<App>>) -> ApiResult {
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

async fn session(State(app): State<Arc<App>>, Path(id): Path<String>) -> ApiResult {
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
async fn checkpoints(State(app): State<Arc<App>>, Path(id): Path<String>) -> ApiResult {
    let list = app.host.checkpoints(&id).await.map_err(rewind_error)?;
    Ok(Json(json!({ "session": id, "checkpoints": list })))
}

/// `POST /api/sessions/{id}/rewind`: what to put back.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RewindBody {
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
async fn rewind(
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

#[expect(clippy::needless_pass_by_value, reason = "a `map_err` argument")]
fn store_error(error: toolgate_store::StoreError) -> ApiError {
    let status = if matches!(error, toolgate_store::StoreError::NotFound(_)) {
        StatusCode::NOT_FOUND
    } else {
        StatusCode::INTERNAL_SERVER_ERROR
    };
    ApiError::new(status, toolgate_core::error_chain(&error))
}

async fn mcp(State(app): State<Arc<App>>) -> ApiResult {
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

async fn sandbox(State(app): State<Arc<App>>) -> ApiResult {
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
struct AuditQuery {
    #[serde(default)]
    decision: Option<String>,
    #[serde(default)]
    limit: Option<usize>,
}

async fn audit(State(app): State<Arc<App>>, Query(query): Query<AuditQuery>) -> ApiResult {
    let store = app.host.store().map_err(ApiError::host)?;
    let mut filter = AuditFilter::newest(query.limit.unwrap_or(100).clamp(1, 1000));
    filter.decision = query.decision.filter(|d| !d.is_empty() && d != "all");
    let entries = store.recent(&filter).await.map_err(store_error)?;
    Ok(Json(serde_json::to_value(entries).unwrap_or_default()))
}

async fn dynamic(State(app): State<Arc<App>>) -> ApiResult {
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

async fn review_dynamic(
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
