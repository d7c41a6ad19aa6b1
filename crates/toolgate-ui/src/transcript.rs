//! A stored session as the chat shows it: user and assistant text, and a
//! card per tool call.

use serde_json::{Value, json};
use toolgate_store::ToolCallRow;

/// The items of a session's transcript, in order.
///
/// Tool calls come from the session's call rows (decision, output,
/// duration), matched in order with the calls the assistant messages
/// made; a call with no row (the run stopped before it) is shown as
/// `not_run`. System prompts and tool messages are not items: a tool
/// message's text is its call's output.
pub(crate) fn transcript(messages: &[Value], calls: &[ToolCallRow]) -> Vec<Value> {
    let mut items = Vec::new();
    let mut next_row = 0;
    for message in messages {
        let text = message["content"].as_str().unwrap_or_default();
        match message["role"].as_str() {
            Some("user") => items.push(json!({"kind": "user", "text": text})),
            Some("assistant") => {
                if !text.trim().is_empty() {
                    items.push(json!({"kind": "assistant", "text": text}));
                }
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    let id = call["id"].as_str().unwrap_or_default();
                    let found = calls[next_row.min(calls.len())..]
                        .iter()
                        .position(|row| row.call_id == id)
                        .map(|at| next_row + at);
                    match found {
                        Some(at) => {
                            next_row = at + 1;
                            items.push(row_item(&calls[at]));
                        }
                        None => items.push(json!({
                            "kind": "tool_call",
                            "id": id,
                            "name": call["name"].as_str()
                                .or_else(|| call["function"]["name"].as_str())
                                .unwrap_or_default(),
                            "arguments": call["arguments"].as_str()
                                .or_else(|| call["function"]["arguments"].as_str())
                                .unwrap_or_default(),
                            "decision": "not_run",
                            "success": false,
                            "duration_ms": 0,
                            "output": "",
                            "recovered": false,
                        })),
                    }
                }
            }
            _ => {}
        }
    }
    items
}

fn row_item(row: &ToolCallRow) -> Value {
    json!({
        "kind": "tool_call",
        "step": row.step,
        "id": row.call_id,
        "name": row.name,
        "arguments": row.arguments,
        "decision": row.decision,
        "success": row.success,
        "duration_ms": row.duration_ms,
        "output": row.output,
        "recovered": row.recovered,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, name: &str) -> ToolCallRow {
        ToolCallRow {
            step: 1,
            call_id: id.into(),
            name: name.into(),
            arguments: "{}".into(),
            decision: "executed".into(),
            success: true,
            duration_ms: 2,
            output: format!("out of {name}"),
            effects: Value::Null,
            recovered: false,
        }
    }

    #[test]
    fn calls_are_matched_in_order_even_when_ids_repeat_across_runs() {
        let call = |id: &str, name: &str| json!({"id": id, "name": name, "arguments": "{}"});
        let messages = vec![
            json!({"role": "system", "content": "prompt"}),
            json!({"role": "user", "content": "first"}),
            json!({"role": "assistant", "content": "", "tool_calls": [call("c1", "read_file")]}),
            json!({"role": "tool", "content": "out", "tool_call_id": "c1"}),
            json!({"role": "assistant", "content": "done"}),
            json!({"role": "user", "content": "second"}),
            json!({"role": "assistant", "content": "", "tool_calls": [call("c1", "edit_file"), call("c2", "gone")]}),
        ];
        let rows = vec![row("c1", "read_file"), row("c1", "edit_file")];
        let items = transcript(&messages, &rows);
        let kinds: Vec<&str> = items.iter().map(|i| i["kind"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                "user",
                "tool_call",
                "assistant",
                "user",
                "tool_call",
                "tool_call"
            ]
        );
        assert_eq!(items[1]["output"], "out of read_file");
        assert_eq!(items[4]["output"], "out of edit_file");
        assert_eq!(items[5]["decision"], "not_run");
        assert_eq!(items[5]["name"], "gone");
    }
}
