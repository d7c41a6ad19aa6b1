//! The workspace changes of a call: whether it may write (so that its
//! changes are captured), and what it changed, told in its result.

use std::sync::Arc;

use serde_json::Value;
use toolgate_core::{ChangeCapture, Effect, Effects, PathChange, SandboxProfile, ToolResult};

use super::Captured;

/// Whether a call may change the workspace, so that its changes are
/// captured: anything but reads, network access and commands that run in
/// the read-only sandbox (which cannot write). An opaque call (an MCP
/// tool) may.
pub(super) fn may_write(effects: &Effects) -> bool {
    effects.is_opaque()
        || effects.list().iter().any(|e| match e {
            Effect::Read { .. } | Effect::Network { .. } => false,
            Effect::Command { plan, .. } => plan
                .as_ref()
                .is_none_or(|p| p.profile != SandboxProfile::ReadOnly),
            _ => true,
        })
}

/// One look of the capture, off the async threads (it walks the tree).
pub(super) async fn sync(capture: &Arc<dyn ChangeCapture>) -> Result<Vec<PathChange>, String> {
    let capture = Arc::clone(capture);
    match tokio::task::spawn_blocking(move || capture.sync()).await {
        Ok(Ok(changes)) => Ok(changes),
        Ok(Err(e)) => Err(toolgate_core::error_chain(&e)),
        Err(e) => Err(format!("the capture stopped: {e}")),
    }
}

/// What a command (or an opaque tool) changed, told in its result: a
/// `files changed: …` line for the model and `files_changed` in the
/// metadata, or why it is not known. File tools say what they wrote
/// themselves.
pub(super) fn report_changes(result: &mut ToolResult, effects: &Effects, captured: &Captured) {
    let runs_commands = effects.is_opaque()
        || effects
            .list()
            .iter()
            .any(|e| matches!(e, Effect::Command { .. }));
    if !runs_commands {
        return;
    }
    let line = if let Some(error) = &captured.error {
        tracing::warn!("the changes of this call are unknown and cannot be undone: {error}");
        Some(format!(
            "files changed: unknown (the capture failed: {error}); this call cannot be undone"
        ))
    } else {
        toolgate_core::describe_changes(&captured.changes)
    };
    let Some(line) = line else {
        return;
    };
    let listed: Vec<Value> = captured
        .changes
        .iter()
        .map(|c| serde_json::json!({ "path": c.path, "change": c.kind() }))
        .collect();
    let text = if result.success {
        &mut result.output
    } else {
        result.error.get_or_insert_with(String::new)
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&line);
    result
        .metadata
        .insert("files_changed".to_owned(), Value::Array(listed));
}
