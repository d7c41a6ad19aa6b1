//! Whose approvals they are: [`ApprovalScope`].
//!
//! An answer belongs to whoever gave it. "Allow for the session" given by
//! one MCP client must not run another client's calls, and one client's
//! open question must not hold up another client's calls. So the two
//! things an answer leaves behind — the calls allowed for the rest of the
//! session, and the one-question-at-a-time lock — live in a scope, one per
//! run, per MCP client session, per web UI chat; never in the gate, which
//! several clients may share.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use toolgate_core::Sensitivity;

/// "Allow for the session" kept outside the process (in a store several
/// workers share), so that a client's allow holds on whichever worker
/// serves its next call.
#[async_trait]
pub trait SharedAllows: Send + Sync + fmt::Debug {
    /// Whether `tool` with `sensitivity` was allowed for the session
    /// `scope`, by an answer given to any process. `false` when that
    /// cannot be found out (the call is asked).
    async fn allows(&self, scope: &str, tool: &str, sensitivity: Sensitivity) -> bool;

    /// Keeps an allow for the session `scope`; a failure leaves it to this
    /// process's memory.
    async fn allow(&self, scope: &str, tool: &str, sensitivity: Sensitivity);
}

/// The approvals of one client: a run, an MCP session, a web UI chat.
///
/// # Rules
///
/// 1. "Allow for the session" adds the tool with the call's sensitivity to
///    this scope only, so allowing a `dev` command never allows a
///    `dangerous` one, and nothing is allowed for another scope. A scope
///    with [`SharedAllows`] also keeps it there, under its key, and
///    honours what any process kept there for that key.
/// 2. Questions of one scope are asked one at a time (a person answers one
///    prompt at a time); questions of different scopes do not wait for
///    each other.
/// 3. Calls that need no question never wait behind one.
#[derive(Debug)]
pub struct ApprovalScope {
    name: String,
    allowed: Mutex<HashSet<(String, Sensitivity)>>,
    shared: Option<(String, Arc<dyn SharedAllows>)>,
    asking: tokio::sync::Mutex<()>,
}

impl ApprovalScope {
    /// A scope with nothing allowed yet, named for people (`this run`,
    /// `MCP session 4f1e…`).
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            allowed: Mutex::default(),
            shared: None,
            asking: tokio::sync::Mutex::new(()),
        }
    }

    /// Keeps this scope's allows in `allows` too, under `key` (the same
    /// client's key on every worker), and honours those kept there.
    #[must_use]
    pub fn shared(mut self, key: impl Into<String>, allows: Arc<dyn SharedAllows>) -> Self {
        self.shared = Some((key.into(), allows));
        self
    }

    /// The name people see.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether `tool` was allowed for the session with `sensitivity`, here
    /// or, for a shared scope, by any process.
    pub(crate) async fn allows(&self, tool: &str, sensitivity: Sensitivity) -> bool {
        let here = self
            .allowed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(&(tool.to_owned(), sensitivity));
        if here {
            return true;
        }
        match &self.shared {
            Some((key, shared)) => shared.allows(key, tool, sensitivity).await,
            None => false,
        }
    }

    /// Allows `tool` with `sensitivity` for the rest of the session.
    pub(crate) async fn allow(&self, tool: &str, sensitivity: Sensitivity) {
        self.allowed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert((tool.to_owned(), sensitivity));
        if let Some((key, shared)) = &self.shared {
            shared.allow(key, tool, sensitivity).await;
        }
    }

    /// Waits for this scope's turn to ask.
    pub(crate) async fn turn(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.asking.lock().await
    }
}
