//! Keyed calls over MCP: the idempotency key a `tools/call` carries in
//! `params._meta["io.toolgate/idempotency-key"]`, and the
//! `_meta["io.toolgate/retryable"]` mark of a result to retry.

use rmcp::model::{CallToolResult, MetaObject, RequestMetaObject};
use serde_json::Value;
use toolgate_engine::{IDEMPOTENCY_KEY, RETRYABLE, check_key};

/// The call's idempotency key: `Ok(None)` without one, `Err` (what is
/// wrong) when it is not a string of 1 to 200 bytes.
pub(crate) fn idempotency_key(meta: Option<&RequestMetaObject>) -> Result<Option<String>, String> {
    let Some(value) = meta.and_then(|m| m.get(IDEMPOTENCY_KEY)) else {
        return Ok(None);
    };
    let Value::String(key) = value else {
        return Err(format!(
            "`_meta[\"{IDEMPOTENCY_KEY}\"]` must be a string, not {value}"
        ));
    };
    check_key(key)?;
    Ok(Some(key.clone()))
}

/// `result`, marked for the client to retry.
pub fn retryable(mut result: CallToolResult) -> CallToolResult {
    let mut meta = result.meta.take().map(|m| m.0).unwrap_or_default();
    meta.insert(RETRYABLE.to_owned(), Value::Bool(true));
    result.meta = Some(MetaObject(meta));
    result
}
