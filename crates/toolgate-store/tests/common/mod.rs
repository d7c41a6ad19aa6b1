//! Helpers shared by the integration tests.

#![allow(dead_code, reason = "each test binary uses a part of the helpers")]

use serde_json::{Value, json};
use toolgate_store::{AuditEntry, NewSession, StepRecord, ToolCallRow, UsageRow};

/// A session to begin.
pub(crate) fn new_session(id: &str) -> NewSession {
    NewSession {
        id: id.to_owned(),
        agent: "build".to_owned(),
        task: format!("task of {id}"),
    }
}

/// A chat message.
pub(crate) fn message(role: &str, content: &str) -> Value {
    json!({"role": role, "content": content})
}

/// A tool call row of `step`.
pub(crate) fn call(step: u32, id: &str) -> ToolCallRow {
    ToolCallRow {
        step,
        call_id: id.to_owned(),
        name: "read_file".to_owned(),
        arguments: format!(r#"{{"path":"{id}.txt"}}"#),
        decision: "allowed".to_owned(),
        success: true,
        duration_ms: u64::from(step) * 10,
        output: format!("contents of {id}"),
        effects: json!({"reads": [format!("{id}.txt")]}),
        recovered: step.is_multiple_of(2),
    }
}

/// A step's record.
pub(crate) fn step(
    session: &str,
    run: u32,
    step: u32,
    from: usize,
    messages: Vec<Value>,
    calls: Vec<ToolCallRow>,
) -> StepRecord {
    StepRecord {
        session_id: session.to_owned(),
        run,
        step,
        messages_from: from,
        messages,
        tool_calls: calls,
        usage: Some(UsageRow {
            input_tokens: 100 * u64::from(step),
            output_tokens: 10 * u64::from(step),
            estimated: false,
            cost_usd: Some(0.5),
        }),
        events: Vec::new(),
    }
}

/// The `i`th audit entry of a deterministic sequence: sessions, tools and
/// decisions cycle with different periods, so filters select overlapping
/// subsets.
pub(crate) fn audit_entry(i: usize) -> AuditEntry {
    let tools = ["read_file", "write_file", "run_command"];
    let decisions = ["allowed", "allowed", "denied", "blocked"];
    AuditEntry {
        ts: format!("2026-01-01T00:00:{:02}.{i:06}Z", i % 60),
        call_id: format!("call-{i:06}"),
        session_id: if i.is_multiple_of(5) {
            None
        } else {
            Some(format!("s{}", i % 2))
        },
        client: i.is_multiple_of(4).then(|| format!("client-{}", i % 3)),
        tool: tools[i % tools.len()].to_owned(),
        args_sha256: format!("{i:064x}"),
        decision: decisions[i % decisions.len()].to_owned(),
        success: !i.is_multiple_of(3),
        duration_us: i as u64 * 7,
        error: i.is_multiple_of(3).then(|| format!("error {i}")),
        effects: json!({"reads": [format!("f{i}")]}),
    }
}
