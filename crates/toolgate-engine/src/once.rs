//! Calls that run at most once among the workers sharing a ledger:
//! [`Ledger`], [`RunClaim`].
//!
//! A client that retries a call (its worker died, its connection broke)
//! names it with an idempotency key; a [`Ledger`] keeps one record per key
//! in a store the workers share, so that the retry gets the first run's
//! result, waits for the same approval, or is told the call may have run —
//! and never runs it a second time. The gate's part is
//! [`ExecutionEngine::execute_claimed`]: once the call is allowed, right
//! before it runs, it asks the [`RunClaim`], and a call claimed elsewhere
//! ends there, unaudited (it did not run here).

use async_trait::async_trait;
use toolgate_core::{ToolCall, ToolResult};

use crate::{ApprovalScope, ExecutionEngine};

/// The key of a call's `_meta` (MCP `tools/call`) that holds its
/// idempotency key.
pub const IDEMPOTENCY_KEY: &str = "io.toolgate/idempotency-key";

/// The key of a result's `_meta` that says the client should retry the
/// call (the store could not be reached, the worker is draining).
pub const RETRYABLE: &str = "io.toolgate/retryable";

/// The longest idempotency key taken, in bytes.
pub const MAX_KEY_LEN: usize = 200;

/// Claims a keyed call for this worker, right before the gate runs it.
#[async_trait]
pub trait RunClaim: Send + Sync {
    /// The call's idempotency key (approvers ask under it).
    fn key(&self) -> &str;

    /// `Ok`: the call is this worker's to run. `Err(result)`: it is not
    /// (another worker runs or ran it, or the ledger cannot say); the call
    /// ends with `result`, not run and not audited.
    async fn claim(&self, tool: &str) -> Result<(), ToolResult>;
}

/// What a keyed call got.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Once {
    /// What the client is answered.
    pub result: ToolResult,
    /// Whether the client should retry (with the same key).
    pub retryable: bool,
}

impl Once {
    /// A final answer: retrying gets the same.
    pub fn done(result: ToolResult) -> Self {
        Self {
            result,
            retryable: false,
        }
    }

    /// A failure the client should retry with the same key.
    pub fn retry(error: impl Into<String>) -> Self {
        Self {
            result: ToolResult::failure(error),
            retryable: true,
        }
    }
}

/// Runs calls that carry an idempotency key at most once among the
/// workers that share it.
#[async_trait]
pub trait Ledger: Send + Sync {
    /// Runs `call` (keyed `key`) through `engine` for the client of
    /// `scope`, unless the ledger already has it.
    async fn execute(
        &self,
        engine: &ExecutionEngine,
        call: ToolCall,
        key: &str,
        scope: &ApprovalScope,
    ) -> Once;
}

/// Checks a client's idempotency key: `Err` says what is wrong with it.
pub fn check_key(key: &str) -> Result<(), String> {
    if key.is_empty() || key.len() > MAX_KEY_LEN {
        return Err(format!(
            "`_meta[\"{IDEMPOTENCY_KEY}\"]` must be a string of 1 to {MAX_KEY_LEN} bytes \
             ({} given)",
            key.len()
        ));
    }
    Ok(())
}
