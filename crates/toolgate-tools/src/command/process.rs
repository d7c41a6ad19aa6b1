//! Background processes (seed 002 `exec background` + `process` tool).
//!
//! A background command runs like every other one, in the sandbox
//! (`toolgate-sandbox`), with a pipe on stdin (so `process write` can feed
//! it) and its output collected into a capped buffer that `process poll`
//! drains. The table owns every process: dropping it kills every group it
//! still holds, so nothing outlives toolgate. A session is bounded by the
//! sandbox's limits like every command; when it ends, what its tree held
//! (placeholders, its cgroup) is released, and a limit it hit is named in
//! its state.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::ChildStdin;
use toolgate_core::{
    Effect, Effects, EffectsError, Sensitivity, ToolContext, ToolResult, TypedTool,
};
use toolgate_sandbox::{LimitHit, Sandbox, Spawn, kill_group};

use toolgate_core::error_chain;

/// Limits of the background table.
#[derive(Debug, Clone, Copy)]
pub struct ProcessLimits {
    /// How many sessions may exist at once (running or finished, not yet
    /// cleared).
    pub max_sessions: usize,
    /// How long a finished session is kept before it is dropped.
    pub finished_ttl: Duration,
    /// Bytes of unread output kept per session; older output is dropped.
    pub output_cap: usize,
}

impl Default for ProcessLimits {
    fn default() -> Self {
        Self {
            max_sessions: 8,
            finished_ttl: Duration::from_secs(30 * 60),
            output_cap: 256 * 1024,
        }
    }
}

#[derive(Debug)]
struct Output {
    unread: Vec<u8>,
    dropped: usize,
}

#[derive(Debug)]
struct Session {
    id: String,
    command: String,
    /// The directory it runs in, as `run_command` declared it (`None`: the
    /// workspace root).
    cwd: Option<String>,
    pid: u32,
    started: Instant,
    output: Arc<Mutex<Output>>,
    stdin: Option<Arc<tokio::sync::Mutex<ChildStdin>>>,
    /// `None` while running; the exit code (or `-signal`) once finished.
    status: Arc<Mutex<Option<(i32, Instant)>>>,
    /// The limits its tree hit, by its cgroup's counters, once finished.
    limits_hit: Arc<Mutex<Vec<LimitHit>>>,
}

impl Session {
    fn finished(&self) -> Option<(i32, Instant)> {
        *self.status.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn state(&self) -> String {
        let mut state = match self.finished() {
            None => "running".to_owned(),
            Some((code, _)) if code < 0 => format!("killed by signal {}", -code),
            Some((code, _)) => format!("exited with code {code}"),
        };
        let hits = self
            .limits_hit
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !hits.is_empty() {
            state.push_str("; ");
            state.push_str(&toolgate_sandbox::limit_notes(&hits, "it"));
        }
        state
    }
}

/// The background processes of one toolgate process.
#[derive(Debug)]
pub struct ProcessTable {
    limits: ProcessLimits,
    sessions: Mutex<BTreeMap<String, Session>>,
    next_id: Mutex<u64>,
}

impl ProcessTable {
    /// An empty table with these limits.
    pub fn new(limits: ProcessLimits) -> Self {
        Self {
            limits,
            sessions: Mutex::new(BTreeMap::new()),
            next_id: Mutex::new(1),
        }
    }

    fn purge_expired(&self, sessions: &mut BTreeMap<String, Session>) {
        let ttl = self.limits.finished_ttl;
        sessions.retain(|_, session| session.finished().is_none_or(|(_, at)| at.elapsed() <= ttl));
    }

    /// Starts a command in the background in `sandbox`; returns (session
    /// id, pid). `command` is its text, for listings, and `cwd` the
    /// directory it runs in as its effect named it, for the effects of
    /// writing to it.
    pub(crate) fn start(
        &self,
        sandbox: &Sandbox,
        spawn: &Spawn,
        command: &str,
        cwd: Option<String>,
    ) -> Result<(String, u32), String> {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        self.purge_expired(&mut sessions);
        if sessions.len() >= self.limits.max_sessions {
            return Err(format!(
                "there are already {} background sessions (the maximum); stop one with \
                 process(action=\"kill\") or drop finished ones with process(action=\"clear\")",
                sessions.len()
            ));
        }
        let mut prepared = sandbox
            .prepare(spawn)
            .map_err(|e| format!("could not start the command: {}", error_chain(&e)))?;
        prepared
            .command_mut()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let running = prepared
            .spawn()
            .map_err(|e| format!("could not start the command: {}", error_chain(&e)))?;
        let (mut child, lease) = running.into_parts();
        let pid = child.id().unwrap_or(0);
        let stdin = child
            .stdin
            .take()
            .map(|pipe| Arc::new(tokio::sync::Mutex::new(pipe)));
        let output = Arc::new(Mutex::new(Output {
            unread: Vec::new(),
            dropped: 0,
        }));
        if let Some(out) = child.stdout.take() {
            tokio::spawn(collect(out, Arc::clone(&output), self.limits.output_cap));
        }
        if let Some(err) = child.stderr.take() {
            tokio::spawn(collect(err, Arc::clone(&output), self.limits.output_cap));
        }
        let status = Arc::new(Mutex::new(None));
        let watcher_status = Arc::clone(&status);
        let limits_hit = Arc::new(Mutex::new(Vec::new()));
        let watcher_hits = Arc::clone(&limits_hit);
        let limits = sandbox.limits().clone();
        tokio::spawn(async move {
            use std::os::unix::process::ExitStatusExt as _;
            let code = match child.wait().await {
                Ok(exit) => exit.code().unwrap_or_else(|| -exit.signal().unwrap_or(0)),
                Err(_) => -1,
            };
            // The session ends when its shell does; what it left behind in
            // its group goes with it, and so do its placeholders and its
            // cgroup (once the limits it hit are read from it).
            kill_group(pid);
            *watcher_hits.lock().unwrap_or_else(PoisonError::into_inner) =
                lease.limits_hit(&limits);
            drop(lease);
            *watcher_status
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some((code, Instant::now()));
        });
        let id = {
            let mut next = self.next_id.lock().unwrap_or_else(PoisonError::into_inner);
            let id = format!("bg-{}", *next);
            *next += 1;
            id
        };
        sessions.insert(
            id.clone(),
            Session {
                id: id.clone(),
                command: command.to_owned(),
                cwd,
                pid,
                started: Instant::now(),
                output,
                stdin,
                status,
                limits_hit,
            },
        );
        Ok((id, pid))
    }
}

impl Drop for ProcessTable {
    fn drop(&mut self) {
        let sessions = self
            .sessions
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        for session in sessions.values() {
            if session.finished().is_none() {
                kill_group(session.pid);
            }
        }
    }
}

async fn collect(mut reader: impl AsyncRead + Unpin, output: Arc<Mutex<Output>>, cap: usize) {
    let mut buf = vec![0u8; 8 * 1024];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let mut output = output.lock().unwrap_or_else(PoisonError::into_inner);
                output
                    .unread
                    .extend_from_slice(buf.get(..n).unwrap_or_default());
                if output.unread.len() > cap {
                    let excess = output.unread.len() - cap;
                    output.unread.drain(..excess);
                    output.dropped += excess;
                }
            }
        }
    }
}

/// What `process` should do.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ProcessAction {
    /// Every session with its state.
    List,
    /// New output of a session since the last poll, and its state.
    Poll,
    /// Send `input` to a session's stdin.
    Write,
    /// Stop a session and everything it started.
    Kill,
    /// Forget finished sessions (or the one named).
    Clear,
}

/// Arguments of `process`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessArgs {
    /// What to do.
    pub action: ProcessAction,
    /// The session id (for poll, write, kill).
    pub session_id: Option<String>,
    /// Text for stdin (write); end lines with "\n".
    pub input: Option<String>,
}

/// `process`: manages the background sessions started by `run_command`.
///
/// # Rules
///
/// 1. `poll`, `write` and `kill` need a `session_id`; a call without one is
///    refused.
/// 2. `write` declares its `input` as an [`Effect::Command`] in the
///    session's directory: the session may be a shell, which runs it. The
///    other actions declare nothing: they read or stop what is already
///    running.
#[derive(Debug, Clone)]
pub struct ProcessTool {
    table: Arc<ProcessTable>,
}

impl ProcessTool {
    /// A `process` tool over `table` (the one `run_command` starts into).
    pub fn new(table: Arc<ProcessTable>) -> Self {
        Self { table }
    }
}

#[async_trait]
impl TypedTool for ProcessTool {
    type Args = ProcessArgs;
    const NAME: &'static str = "process";
    const DESCRIPTION: &'static str = "Manage commands started with run_command(background=true): list, poll (new output), write (to stdin), kill, clear (forget finished ones).";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;

    fn sensitivity(&self, args: &serde_json::Value) -> Sensitivity {
        // Looking does not change anything; writing and killing do.
        match args.get("action").and_then(|a| a.as_str()) {
            Some("list" | "poll") => Sensitivity::ReadOnly,
            _ => Sensitivity::Sensitive,
        }
    }

    fn effects(&self, args: &ProcessArgs) -> Result<Effects, EffectsError> {
        match args.action {
            ProcessAction::List | ProcessAction::Clear => Ok(Effects::none()),
            ProcessAction::Write => {
                let id = session_id(args.action, args.session_id.as_deref())
                    .map_err(EffectsError::new)?;
                Ok(Effects::known([Effect::command(
                    args.input.clone().unwrap_or_default(),
                    self.cwd_of(id),
                )]))
            }
            action => {
                session_id(action, args.session_id.as_deref()).map_err(EffectsError::new)?;
                Ok(Effects::none())
            }
        }
    }

    async fn run(&self, args: ProcessArgs, _ctx: &ToolContext) -> ToolResult {
        match args.action {
            ProcessAction::List => self.list(),
            ProcessAction::Clear => self.clear(args.session_id.as_deref()),
            action => {
                let id = match session_id(action, args.session_id.as_deref()) {
                    Ok(id) => id,
                    Err(message) => return ToolResult::failure(message),
                };
                match action {
                    ProcessAction::Poll => self.poll(id),
                    ProcessAction::Kill => self.kill(id),
                    _ => {
                        self.write(id, args.input.as_deref().unwrap_or_default())
                            .await
                    }
                }
            }
        }
    }
}

/// The session an action names (rule 1 on [`ProcessTool`]).
fn session_id(action: ProcessAction, id: Option<&str>) -> Result<&str, String> {
    id.ok_or_else(|| {
        format!(
            "action `{}` needs a `session_id`; process(action=\"list\") shows them",
            action_name(action)
        )
    })
}

fn action_name(action: ProcessAction) -> &'static str {
    match action {
        ProcessAction::List => "list",
        ProcessAction::Poll => "poll",
        ProcessAction::Write => "write",
        ProcessAction::Kill => "kill",
        ProcessAction::Clear => "clear",
    }
}

impl ProcessTool {
    /// The directory session `id` runs in; `None` for the workspace root,
    /// and for a session that does not exist (writing to it fails).
    fn cwd_of(&self, id: &str) -> Option<String> {
        let sessions = self
            .table
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        sessions.get(id).and_then(|session| session.cwd.clone())
    }

    fn unknown(id: &str) -> ToolResult {
        ToolResult::failure(format!(
            "no background session `{id}`; process(action=\"list\") shows them"
        ))
    }

    fn list(&self) -> ToolResult {
        let mut sessions = self
            .table
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.table.purge_expired(&mut sessions);
        if sessions.is_empty() {
            return ToolResult::success("no background sessions")
                .with_metadata("sessions", json!([]));
        }
        let mut lines = Vec::new();
        let mut meta = Vec::new();
        for session in sessions.values() {
            let age = session.started.elapsed().as_secs();
            lines.push(format!(
                "{}  pid {}  {}  {}s  {}",
                session.id,
                session.pid,
                session.state(),
                age,
                session.command
            ));
            meta.push(json!({"session_id": session.id, "pid": session.pid, "state": session.state(), "command": session.command}));
        }
        ToolResult::success(lines.join("\n")).with_metadata("sessions", meta)
    }

    fn poll(&self, id: &str) -> ToolResult {
        let sessions = self
            .table
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let Some(session) = sessions.get(id) else {
            return Self::unknown(id);
        };
        let (text, dropped) = {
            let mut output = session
                .output
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let text = String::from_utf8_lossy(&output.unread).into_owned();
            output.unread.clear();
            (text, std::mem::take(&mut output.dropped))
        };
        let mut out = String::new();
        if dropped > 0 {
            let _ = writeln!(out, "… [{dropped} bytes of older output dropped]");
        }
        out.push_str(&text);
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        let _ = write!(out, "[{}: {}]", session.id, session.state());
        let finished = session.finished();
        ToolResult::success(out)
            .with_metadata("session_id", session.id.clone())
            .with_metadata("running", finished.is_none())
            .with_metadata("exit_code", finished.map(|(code, _)| code))
    }

    fn kill(&self, id: &str) -> ToolResult {
        let sessions = self
            .table
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let Some(session) = sessions.get(id) else {
            return Self::unknown(id);
        };
        if session.finished().is_some() {
            return ToolResult::success(format!("{id} had already {}", session.state()));
        }
        kill_group(session.pid);
        ToolResult::success(format!("killed {id} (process group {})", session.pid))
    }

    async fn write(&self, id: &str, input: &str) -> ToolResult {
        let stdin = {
            let sessions = self
                .table
                .sessions
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let Some(session) = sessions.get(id) else {
                return Self::unknown(id);
            };
            if session.finished().is_some() {
                return ToolResult::failure(format!(
                    "{id} has {}; it cannot take input",
                    session.state()
                ));
            }
            session.stdin.clone()
        };
        let Some(stdin) = stdin else {
            return ToolResult::failure(format!("{id} has no stdin"));
        };
        let mut stdin = stdin.lock().await;
        match stdin
            .write_all(input.as_bytes())
            .await
            .and(stdin.flush().await)
        {
            Ok(()) => ToolResult::success(format!("wrote {} bytes to {id}", input.len())),
            Err(error) => ToolResult::failure(format!("could not write to {id}: {error}")),
        }
    }

    fn clear(&self, id: Option<&str>) -> ToolResult {
        let mut sessions = self
            .table
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(id) = id {
            return match sessions.get(id) {
                None => Self::unknown(id),
                Some(session) if session.finished().is_none() => ToolResult::failure(format!(
                    "{id} is still running; kill it first with process(action=\"kill\")"
                )),
                Some(_) => {
                    sessions.remove(id);
                    ToolResult::success(format!("cleared {id}"))
                }
            };
        }
        let before = sessions.len();
        sessions.retain(|_, session| session.finished().is_none());
        ToolResult::success(format!(
            "cleared {} finished sessions",
            before - sessions.len()
        ))
    }
}
