//! The gate's audit trail.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::StoreError;

/// Where the gate's audit entries are kept.
///
/// The gate should not call [`append`](Self::append) once per tool call:
/// it queues entries on an [`AuditWriter`](crate::AuditWriter), which
/// appends them in batches.
///
/// # Rules
///
/// 1. Entries are append-only: nothing in this trait changes or deletes
///    one.
/// 2. [`append`](Self::append) is atomic: the whole batch is stored, or
///    none of it.
/// 3. "Newest" means most recently appended: [`recent`](Self::recent)
///    orders by the order of appending, not by [`AuditEntry::ts`], which
///    comes from the caller's clock and may be out of order between
///    processes.
#[async_trait]
pub trait AuditStore: Send + Sync {
    /// Appends entries, in order, in one transaction.
    async fn append(&self, entries: &[AuditEntry]) -> Result<(), StoreError>;

    /// The newest entries that match `filter`, newest first.
    async fn recent(&self, filter: &AuditFilter) -> Result<Vec<AuditEntry>, StoreError>;
}

/// One tool call through the gate.
///
/// The same fields as a line of the engine's JSONL audit file, plus the
/// call's effects. `args_sha256` is a digest of the arguments, never the
/// arguments themselves (they may hold secrets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// RFC 3339 time the call finished.
    pub ts: String,
    /// The call's id.
    pub call_id: String,
    /// The agent session, if any.
    pub session_id: Option<String>,
    /// The named client that made the call (an MCP client of
    /// `mcp.http.clients`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The tool's name as asked for.
    pub tool: String,
    /// Hex SHA-256 of the final arguments.
    pub args_sha256: String,
    /// What the gate decided.
    pub decision: String,
    /// Whether the result was a success.
    pub success: bool,
    /// Wall time through the gate, in microseconds.
    pub duration_us: u64,
    /// The error, on failure.
    pub error: Option<String>,
    /// The call's declared effects (`null` when unknown).
    pub effects: Value,
}

/// Which entries [`AuditStore::recent`] returns.
///
/// By default, the newest 100 entries of every session, tool and decision;
/// each filter that is set must match exactly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditFilter {
    /// At most this many entries. By default, 100.
    pub limit: usize,
    /// Only entries with this decision.
    pub decision: Option<String>,
    /// Only entries of this session.
    pub session_id: Option<String>,
    /// Only calls of this tool.
    pub tool: Option<String>,
    /// Only the entry of this call id.
    pub call_id: Option<String>,
}

impl Default for AuditFilter {
    fn default() -> Self {
        Self {
            limit: 100,
            decision: None,
            session_id: None,
            tool: None,
            call_id: None,
        }
    }
}

impl AuditFilter {
    /// The newest `limit` entries, unfiltered.
    pub fn newest(limit: usize) -> Self {
        Self {
            limit,
            ..Self::default()
        }
    }

    /// Only entries with this decision.
    #[must_use]
    pub fn decision(mut self, decision: impl Into<String>) -> Self {
        self.decision = Some(decision.into());
        self
    }

    /// Only entries of this session.
    #[must_use]
    pub fn session_id(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }

    /// Only calls of this tool.
    #[must_use]
    pub fn tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// Only the entry of this call id.
    #[must_use]
    pub fn call_id(mut self, call_id: impl Into<String>) -> Self {
        self.call_id = Some(call_id.into());
        self
    }
}
