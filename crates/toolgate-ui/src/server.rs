//! The HTTP server: the server's life, its routes, the page's state and
//! events, and the errors it answers (API.md describes the wire). The
//! endpoints live beside it: `answers` (approvals and rules), `runs`,
//! `sessions` (with checkpoints and rewind) and `inspect` (MCP, sandbox,
//! audit, dynamic tools).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use futures_util::{Stream, StreamExt as _};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{broadcast, watch};
use toolgate_host::{AgentPermission, ErrorKind, Host, HostError, UserRules};

use crate::approvals::{Approvals, UiApprover};
use crate::assets;
use crate::auth::{self, AuthGuard};
use crate::describe::Describer;
use crate::hub::Hub;

use inspect::{audit, dynamic, mcp, review_dynamic, sandbox};
use runs::{start_run, stop_run};
use sessions::{checkpoints, rewind, session, sessions};

use answers::{
    add_rule, answer_many, answer_one, answer_plan, approvals, remove_rule, remove_stored_rule,
    rules, rules_error,
};

mod answers;
mod inspect;
mod runs;
mod sessions;

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
            Ok(store) => Some(
                toolgate_host::StoreApprover::new(store, toolgate_host::worker_name()).timeout(
                    Duration::from_secs(host.config().store.approval_timeout_secs.get()),
                ),
            ),
            Err(error) => {
                tracing::warn!(
                    "approvals are answered from this page only: the store cannot be opened ({})",
                    toolgate_core::error_chain(&error)
                );
                None
            }
        };
        let mut approvals = Approvals::new(hub.clone(), describer, host.env().to_vec(), shared);
        // With a store several workers share (`store.url`), rules saved
        // there apply on every worker and "Always allow" saves there; on
        // `SQLite` the user's file alone holds rules.
        if host.config().store.url.is_some()
            && let Ok(store) = host.store()
        {
            approvals = approvals.with_saved_rules(store);
        }
        let app = Arc::new(App {
            approvals: Arc::new(approvals),
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
        .route(
            "/api/rules/store/{id}",
            axum::routing::delete(remove_stored_rule),
        )
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

#[expect(clippy::needless_pass_by_value, reason = "a `map_err` argument")]
fn store_error(error: toolgate_store::StoreError) -> ApiError {
    let status = if matches!(error, toolgate_store::StoreError::NotFound(_)) {
        StatusCode::NOT_FOUND
    } else {
        StatusCode::INTERNAL_SERVER_ERROR
    };
    ApiError::new(status, toolgate_core::error_chain(&error))
}
