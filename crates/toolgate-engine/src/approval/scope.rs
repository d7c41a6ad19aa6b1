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
use std::sync::{Mutex, PoisonError};

use toolgate_core::Sensitivity;

/// The approvals of one client: a run, an MCP session, a web UI chat.
///
/// # Rules
///
/// 1. "Allow for the session" adds the tool with the call's sensitivity to
///    this scope only, so allowing a `dev` command never allows a
///    `dangerous` one, and nothing is allowed for another scope.
/// 2. Questions of one scope are asked one at a time (a person answers one
///    prompt at a time); questions of different scopes do not wait for
///    each other.
/// 3. Calls that need no question never wait behind one.
#[derive(Debug)]
pub struct ApprovalScope {
    name: String,
    allowed: Mutex<HashSet<(String, Sensitivity)>>,
    asking: tokio::sync::Mutex<()>,
}

impl ApprovalScope {
    /// A scope with nothing allowed yet, named for people (`this run`,
    /// `MCP session 4f1e…`).
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            allowed: Mutex::default(),
            asking: tokio::sync::Mutex::new(()),
        }
    }

    /// The name people see.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether `tool` was allowed for the session with `sensitivity`.
    pub(crate) fn allows(&self, tool: &str, sensitivity: Sensitivity) -> bool {
        self.allowed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(&(tool.to_owned(), sensitivity))
    }

    /// Allows `tool` with `sensitivity` for the rest of the session.
    pub(crate) fn allow(&self, tool: &str, sensitivity: Sensitivity) {
        self.allowed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert((tool.to_owned(), sensitivity));
    }

    /// Waits for this scope's turn to ask.
    pub(crate) async fn turn(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.asking.lock().await
    }
}
