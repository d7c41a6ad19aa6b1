//! Constrained replies: every reply one well-formed call of an offered
//! tool, or a final answer, enforced by the server's JSON-schema decoding.
//!
//! # Wire format
//!
//! With [`HttpSettings::constrain`](super::HttpSettings::constrain) on and
//! tools offered, a chat request:
//!
//! 1. carries `response_format: {"type": "json_schema", "json_schema":
//!    {"name": "reply", "strict": true, "schema": S}}` — the OpenAI form,
//!    which llama.cpp's server (turned into its `json_schema` grammar),
//!    vLLM (guided decoding) and Ollama's OpenAI-compatible endpoint
//!    (`format`) take — and no `tools`;
//! 2. S ([`reply_schema`]) is `anyOf`: for each offered tool
//!    `{"tool": {"const": NAME}, "arguments": ITS PARAMETERS}`, both
//!    required, nothing else; and `{"final": string}`. A tool schema's
//!    `$defs` move to S's root, where its `#/$defs/…` references point.
//!    When the reply must call a tool
//!    ([`LlmRequest::must_call`](super::LlmRequest::must_call)), S has
//!    neither the `final` branch nor [`FINISH`]'s: the model cannot answer
//!    before it has looked. A tool the request bars
//!    ([`LlmRequest::barred`](super::LlmRequest::barred)) has no branch.
//!    The system prompt stays as it is (rule 3), so the prompt's cached
//!    prefix does too;
//! 3. the system prompt (the first message) ends with [`reply_rules`]: the
//!    reply format and one line per tool, since a grammar constrains what
//!    the model writes but does not tell it;
//! 4. the conversation is plain text: an earlier call is the assistant's
//!    JSON as the model wrote it, a tool result is a user message
//!    `Result of NAME:` and the text — so the model sees the format it is
//!    held to, and the server needs no tool-call template.
//!
//! A reply is decoded by [`decode`]: `{"tool", "arguments"}` is one call,
//! `{"final"}` the answer. Anything else (a server that ignored the schema)
//! is left as text for the loop's text recovery.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::{Message, ModelToolCall, Role};
use crate::FINISH;

/// The schema every reply must match (rule 2), for the tools in OpenAI
/// form (`{"type": "function", "function": {name, description,
/// parameters}}`); with `must_call`, only calls of the tools that do not
/// end the run; never a call of a tool in `barred`.
pub fn reply_schema(tools: &[Value], must_call: bool, barred: &[String]) -> Value {
    let mut defs = Map::new();
    let mut branches: Vec<Value> = tools
        .iter()
        .filter_map(|t| {
            let f = &t["function"];
            let name = f["name"]
                .as_str()
                .filter(|n| !(barred.iter().any(|b| b == n) || must_call && *n == FINISH))?;
            let mut parameters = f
                .get("parameters")
                .cloned()
                .unwrap_or_else(|| json!({"type": "object"}));
            if let Some(object) = parameters.as_object_mut() {
                object.remove("$schema");
                if let Some(Value::Object(d)) = object.remove("$defs") {
                    defs.extend(d);
                }
            }
            Some(json!({
                "type": "object",
                "properties": {"tool": {"const": name}, "arguments": parameters},
                "required": ["tool", "arguments"],
                "additionalProperties": false
            }))
        })
        .collect();
    // A request whose only tool ends the run keeps its answer branch.
    if !must_call || branches.is_empty() {
        branches.push(json!({
            "type": "object",
            "properties": {"final": {"type": "string"}},
            "required": ["final"],
            "additionalProperties": false
        }));
    }
    let mut schema = json!({ "anyOf": branches });
    if !defs.is_empty() {
        schema["$defs"] = Value::Object(defs);
    }
    schema
}

/// What the system prompt says about replies (rule 3).
pub fn reply_rules(tools: &[Value]) -> String {
    let mut text = String::from(
        "Reply with exactly one JSON object: a tool call {\"tool\": NAME, \"arguments\": \
         {...}} or, when you are done, {\"final\": \"your answer\"}. Tools:",
    );
    for t in tools {
        let f = &t["function"];
        let Some(name) = f["name"].as_str() else {
            continue;
        };
        let arguments: Vec<String> = f["parameters"]["properties"]
            .as_object()
            .map(|p| {
                p.iter()
                    .map(|(k, v)| format!("{k}: {}", v["type"].as_str().unwrap_or("any")))
                    .collect()
            })
            .unwrap_or_default();
        let description = toolgate_core::first_sentence(f["description"].as_str().unwrap_or(""));
        let _ = write!(text, "\n- {name}({}): {description}", arguments.join(", "));
    }
    text
}

/// The conversation as plain text (rule 4), with the rules appended to the
/// system prompt.
pub(super) fn plain_messages(messages: &[Message], tools: &[Value]) -> Vec<Message> {
    // A result answers a call of the assistant message before it (ids are
    // only unique within one reply: a decoded call's is `call_0`).
    let mut names: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    let rules = reply_rules(tools);
    let mut out: Vec<Message> = Vec::with_capacity(messages.len() + 1);
    for (i, m) in messages.iter().enumerate() {
        match m.role {
            Role::System if i == 0 => {
                out.push(Message::text(
                    Role::System,
                    format!("{}\n\n{rules}", m.content),
                ));
            }
            Role::Assistant if !m.tool_calls.is_empty() => {
                names = m
                    .tool_calls
                    .iter()
                    .map(|c| (c.id.as_str(), c.name.as_str()))
                    .collect();
                let calls: Vec<String> = m
                    .tool_calls
                    .iter()
                    .map(|c| {
                        let arguments = serde_json::from_str::<Value>(&c.arguments)
                            .unwrap_or_else(|_| Value::String(c.arguments.clone()));
                        json!({"tool": c.name, "arguments": arguments}).to_string()
                    })
                    .collect();
                out.push(Message::text(Role::Assistant, calls.join("\n")));
            }
            Role::Tool => {
                let name = m
                    .tool_call_id
                    .as_deref()
                    .and_then(|id| names.get(id))
                    .copied()
                    .unwrap_or("the tool");
                out.push(Message::text(
                    Role::User,
                    format!("Result of {name}:\n{}", m.content),
                ));
            }
            _ => out.push(Message::text(m.role, m.content.clone())),
        }
    }
    if !matches!(messages.first(), Some(m) if m.role == Role::System) {
        out.insert(0, Message::text(Role::System, rules));
    }
    out
}

/// What a constrained reply says: one call, or the final answer; `None`
/// for text that is neither (left to text recovery).
pub fn decode(content: &str) -> Option<Result<ModelToolCall, String>> {
    let v: Value = serde_json::from_str(content.trim()).ok()?;
    if let Some(name) = v.get("tool").and_then(Value::as_str) {
        let arguments = v.get("arguments").cloned().unwrap_or_else(|| json!({}));
        return Some(Ok(ModelToolCall {
            id: "call_0".to_owned(),
            name: name.to_owned(),
            arguments: arguments.to_string(),
        }));
    }
    v.get("final")
        .and_then(Value::as_str)
        .map(|t| Err(t.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reply, and the call (name, arguments) or answer it decodes to.
    type Case<'a> = (&'a str, Option<Result<(&'a str, &'a str), &'a str>>);

    #[test]
    fn defs_move_to_the_root_and_replies_decode() {
        let tools = vec![json!({"type": "function", "function": {"name": "plan",
            "description": "Plan. More.",
            "parameters": {"type": "object", "$schema": "x",
                "properties": {"step": {"$ref": "#/$defs/Step"}},
                "$defs": {"Step": {"type": "string"}}}}})];
        let schema = reply_schema(&tools, false, &[]);
        assert_eq!(schema["$defs"]["Step"]["type"], "string");
        let branch = &schema["anyOf"][0]["properties"]["arguments"];
        assert!(branch.get("$defs").is_none() && branch.get("$schema").is_none());
        assert_eq!(
            reply_rules(&tools).lines().last(),
            Some("- plan(step: any): Plan.")
        );
        let cases: &[Case<'_>] = &[
            (
                r#"{"tool": "plan", "arguments": {"step": "a"}}"#,
                Some(Ok(("plan", r#"{"step":"a"}"#))),
            ),
            (r#" {"final": "done"} "#, Some(Err("done"))),
            ("done", None),
            (r#"{"other": 1}"#, None),
        ];
        for (content, expected) in cases {
            let got = decode(content);
            let got = got.as_ref().map(|r| match r {
                Ok(c) => Ok((c.name.as_str(), c.arguments.as_str())),
                Err(t) => Err(t.as_str()),
            });
            assert_eq!(got, *expected, "{content}");
        }
    }
}
