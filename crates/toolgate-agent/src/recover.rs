//! Tool calls a model wrote as text.
//!
//! Small local models often answer a tool-calling request with the call in
//! their text instead of the structured `tool_calls` field: a bare JSON
//! object, a fenced JSON block, the OpenAI `{"type": "function", …}`
//! shape inside `<tools>` tags, Hermes/Qwen `<tool_call>` tags, Llama 3's
//! `<|python_tag|>` or `<function=NAME>`, Mistral's `[TOOL_CALLS]`. Taken as
//! the final answer, such a reply ends the run after one step with nothing
//! done. [`recover_tool_calls`] finds these calls so the loop can run them
//! (through the gate, like any call) and send them back to the model in
//! proper tool-call form.
//!
//! # Rules
//!
//! 1. Only the model's own reply text is read — never a tool result or the
//!    user's words (the caller's duty: it passes only assistant text).
//! 2. A call is an object with a non-empty string name (`name`,
//!    `tool_name`, `tool`, or `function.name` / `function` as a string) and
//!    its arguments (`arguments`, `parameters`, `args`, `input`,
//!    `tool_input`) as an object or as a string holding one; keys beside
//!    those and `id`/`type` make it not a call. An array of calls is several
//!    calls.
//! 3. Inside an explicit marker (`<tool_call>`, `<tools>`,
//!    `<|python_tag|>`, `<function=NAME>`, `[TOOL_CALLS]`, a fence labelled
//!    `tool_call`), the arguments may be left out (`{}`), and text that does
//!    not parse is reported as a malformed call, so the model is told to
//!    send it again.
//! 4. Elsewhere (bare, or in an unlabelled or `json` fence), only complete
//!    call-shaped JSON counts: an object that merely names a tool, prose, or
//!    JSON that does not parse is left as text (fail closed: no call).
//! 5. The calls keep the order they appear in; what remains of the text,
//!    with the calls cut out, is returned beside them.
//! 6. Inside a marker or a fence, JSON that does not parse gets one repair
//!    ([`repair_json`]): Python's `True`, `False` and `None` outside strings
//!    become `true`, `false` and `null`, and a comma before `}` or `]` is
//!    dropped — the two slips small models make most. The repaired text must
//!    then parse and be call-shaped like any other; the call is validated
//!    against the tool's schema by the gate like any other.
//!
//! Whether a recovered name is a tool the agent was offered is the loop's
//! question, as for any call: an unknown name gets a tool error listing the
//! offered tools.

use serde_json::{Map, Value};

/// Longest name taken from text (tool names are at most 64 characters; a
/// little more lets the loop say "unknown tool" rather than stay silent).
const MAX_NAME: usize = 128;

/// What [`recover_tool_calls`] found in a reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovered {
    /// The calls, in the order they appear.
    pub calls: Vec<TextCall>,
    /// The reply without the calls, trimmed.
    pub text: String,
}

/// One call found in text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextCall {
    /// A call: the tool's name and its arguments as a JSON object's text.
    Call {
        /// The tool's name.
        name: String,
        /// The arguments, compact JSON text of an object.
        arguments: String,
    },
    /// Text inside a tool-call marker that is not a call.
    Malformed {
        /// Why, for the model.
        reason: String,
    },
}

/// Finds the tool calls written in `text` (see the module's rules).
pub fn recover_tool_calls(text: &str) -> Recovered {
    let mut spans: Vec<(usize, usize, Vec<TextCall>)> = Vec::new();
    marked(text, &mut spans);
    fenced(text, &mut spans);
    bare(text, &mut spans);
    spans.sort_by_key(|(start, _, _)| *start);
    let mut calls = Vec::new();
    let mut rest = String::new();
    let mut at = 0;
    for (start, end, found) in spans {
        if start < at {
            continue;
        }
        rest.push_str(&text[at..start]);
        calls.extend(found);
        at = end;
    }
    rest.push_str(&text[at..]);
    if calls.is_empty() {
        return Recovered {
            calls,
            text: text.to_owned(),
        };
    }
    Recovered {
        calls,
        text: rest.trim().to_owned(),
    }
}

/// Whether `[start, end)` overlaps a span already found.
fn taken(spans: &[(usize, usize, Vec<TextCall>)], start: usize, end: usize) -> bool {
    spans.iter().any(|(s, e, _)| start < *e && *s < end)
}

/// Rule 3: the explicit markers.
fn marked(text: &str, spans: &mut Vec<(usize, usize, Vec<TextCall>)>) {
    for (open, close) in [("<tool_call>", "</tool_call>"), ("<tools>", "</tools>")] {
        let mut from = 0;
        while let Some(i) = text[from..].find(open).map(|i| i + from) {
            let body_start = i + open.len();
            let (body_end, end) = match text[body_start..].find(close) {
                Some(j) => (body_start + j, body_start + j + close.len()),
                None => (text.len(), text.len()),
            };
            let calls = parse_marked(&text[body_start..body_end], None);
            if !taken(spans, i, end) {
                spans.push((i, end, calls));
            }
            from = end.max(i + 1);
        }
    }
    // Llama 3: everything after the tag, to an end-of-message token.
    if let Some(i) = text.find("<|python_tag|>") {
        let body_start = i + "<|python_tag|>".len();
        let body_end = ["<|eom_id|>", "<|eot_id|>"]
            .iter()
            .filter_map(|t| text[body_start..].find(t).map(|j| body_start + j))
            .min()
            .unwrap_or(text.len());
        let end = ["<|eom_id|>", "<|eot_id|>"]
            .iter()
            .find(|t| text[body_end..].starts_with(**t))
            .map_or(body_end, |t| body_end + t.len());
        let mut calls = Vec::new();
        for part in split_calls(&text[body_start..body_end]) {
            calls.extend(parse_marked(part, None));
        }
        if !taken(spans, i, end) {
            spans.push((i, end, calls));
        }
    }
    // Llama 3.1: <function=NAME>{…}</function>.
    let mut from = 0;
    while let Some(i) = text[from..].find("<function=").map(|i| i + from) {
        let name_start = i + "<function=".len();
        let Some(gt) = text[name_start..].find('>').map(|j| name_start + j) else {
            break;
        };
        let name = text[name_start..gt].trim().to_owned();
        let (body_end, end) = match text[gt + 1..].find("</function>") {
            Some(j) => (gt + 1 + j, gt + 1 + j + "</function>".len()),
            None => (text.len(), text.len()),
        };
        let calls = parse_marked(&text[gt + 1..body_end], Some(&name));
        if !taken(spans, i, end) {
            spans.push((i, end, calls));
        }
        from = end.max(i + 1);
    }
    // Mistral: [TOOL_CALLS] [ {…}, … ]  or  [TOOL_CALLS]NAME[ARGS]{…}.
    let mut from = 0;
    while let Some(i) = text[from..].find("[TOOL_CALLS]").map(|i| i + from) {
        let body = i + "[TOOL_CALLS]".len();
        let after = &text[body..];
        let (calls, used) = if let Some(args) = after.find("[ARGS]") {
            let name = after[..args].trim().to_owned();
            let json_start = body + args + "[ARGS]".len();
            match first_json(&text[json_start..]) {
                Some((value, len)) => (
                    call_from_value(&with_name(value, &name), true).map_or_else(
                        || vec![malformed("the arguments are not a JSON object")],
                        |c| vec![c],
                    ),
                    json_start + len - body,
                ),
                None => (
                    vec![malformed("the arguments after [ARGS] are not valid JSON")],
                    after.len(),
                ),
            }
        } else {
            let lead = after.len() - after.trim_start().len();
            match first_json(after.trim_start()) {
                Some((value, len)) => (calls_in(&value, true), lead + len),
                None => (
                    vec![malformed("the text after [TOOL_CALLS] is not valid JSON")],
                    after.len(),
                ),
            }
        };
        let end = body + used;
        if !taken(spans, i, end) {
            spans.push((i, end, calls));
        }
        from = end.max(i + 1);
    }
}

/// Fenced blocks labelled `json`, `tool_call` or nothing (rule 3 for
/// `tool_call`).
fn fenced(text: &str, spans: &mut Vec<(usize, usize, Vec<TextCall>)>) {
    let mut from = 0;
    while let Some(i) = text[from..].find("```").map(|i| i + from) {
        let label_start = i + 3;
        let Some(nl) = text[label_start..].find('\n').map(|j| label_start + j) else {
            break;
        };
        let label = text[label_start..nl].trim().to_ascii_lowercase();
        let Some(close) = text[nl + 1..].find("```").map(|j| nl + 1 + j) else {
            break;
        };
        let end = close + 3;
        let body = &text[nl + 1..close];
        let explicit = matches!(label.as_str(), "tool_call" | "tool_calls" | "function_call");
        let known = explicit || matches!(label.as_str(), "" | "json" | "jsonc");
        if known && !taken(spans, i, end) {
            let calls = if explicit {
                parse_marked(body, None)
            } else {
                parse_lenient(body.trim())
                    .map(|v| calls_in(&v, false))
                    .filter(|c| {
                        !c.is_empty() && c.iter().all(|c| matches!(c, TextCall::Call { .. }))
                    })
                    .unwrap_or_default()
            };
            if !calls.is_empty() {
                spans.push((i, end, calls));
            }
        }
        from = end;
    }
}

/// Rule 4: call-shaped JSON anywhere else.
fn bare(text: &str, spans: &mut Vec<(usize, usize, Vec<TextCall>)>) {
    let mut i = 0;
    while i < text.len() {
        let Some(offset) = text[i..].find(['{', '[']) else {
            break;
        };
        let start = i + offset;
        if taken(spans, start, start + 1) {
            i = start + 1;
            continue;
        }
        if let Some((value, len)) = first_json(&text[start..]) {
            let calls = calls_in(&value, false);
            if !calls.is_empty() && calls.iter().all(|c| matches!(c, TextCall::Call { .. })) {
                spans.push((start, start + len, calls));
                i = start + len;
                continue;
            }
        }
        i = start + 1;
    }
}

/// The JSON value at the start of `text` and how many bytes it takes.
fn first_json(text: &str) -> Option<(Value, usize)> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let value = stream.next()?.ok()?;
    Some((value, stream.byte_offset()))
}

/// `text` as JSON, else as JSON after [`repair_json`] (rule 6).
fn parse_lenient(text: &str) -> Option<Value> {
    serde_json::from_str::<Value>(text)
        .ok()
        .or_else(|| serde_json::from_str::<Value>(&repair_json(text)?).ok())
}

/// Rule 6's repair: Python literals outside strings to JSON's, and commas
/// before a closing bracket dropped. `None` when there was nothing to
/// repair.
pub(crate) fn repair_json(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut in_string = false;
    let mut escaped = false;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            ',' => {
                let rest = text[i + 1..].trim_start();
                if rest.starts_with('}') || rest.starts_with(']') {
                    changed = true;
                } else {
                    out.push(c);
                }
            }
            c if c.is_ascii_alphabetic() => {
                let word_end = text[i..]
                    .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                    .map_or(text.len(), |n| i + n);
                let word = &text[i..word_end];
                let previous = out.chars().next_back();
                let standalone = !previous.is_some_and(|p| p.is_ascii_alphanumeric() || p == '_');
                let replacement = match word {
                    "True" if standalone => Some("true"),
                    "False" if standalone => Some("false"),
                    "None" if standalone => Some("null"),
                    _ => None,
                };
                if let Some(json) = replacement {
                    out.push_str(json);
                    changed = true;
                } else {
                    out.push_str(word);
                }
                while chars.peek().is_some_and(|(j, _)| *j < word_end) {
                    chars.next();
                }
            }
            c => out.push(c),
        }
    }
    changed.then_some(out)
}

/// Parts of a `<|python_tag|>` body: calls separated by `;` or newlines.
fn split_calls(body: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = body.trim();
    while !rest.is_empty() {
        let Some((_, len)) = first_json(rest) else {
            parts.push(rest);
            break;
        };
        parts.push(&rest[..len]);
        rest = rest[len..].trim_start_matches([';', '\n', ' ', '\r', '\t']);
    }
    parts
}

/// A marked body: JSON of one call or several (rule 3).
fn parse_marked(body: &str, name: Option<&str>) -> Vec<TextCall> {
    let body = body.trim();
    let body = body
        .strip_prefix("```json")
        .or_else(|| body.strip_prefix("```"))
        .map_or(body, |b| b.trim_end().trim_end_matches("```").trim());
    let strict = serde_json::from_str::<Value>(body);
    if name.is_none()
        && strict.is_err()
        && let Some(calls) = several_calls(body)
    {
        return calls;
    }
    let value = match strict {
        Ok(value) => value,
        Err(_)
            if let Some(value) = repair_json(body).and_then(|t| serde_json::from_str(&t).ok()) =>
        {
            value
        }
        Err(error) if body.is_empty() && name.is_some() => {
            let _ = error;
            Value::Object(Map::new())
        }
        Err(error) => {
            return vec![malformed(&format!(
                "the tool call is not valid JSON ({error})"
            ))];
        }
    };
    let value = match name {
        Some(name) => with_name(value, name),
        None => value,
    };
    let calls = calls_in(&value, true);
    if calls.is_empty() {
        return vec![malformed(
            "the tool call needs a \"name\" and \"arguments\" (a JSON object)",
        )];
    }
    calls
}

/// A marked body holding several calls one after another (`{…}\n{…}`,
/// as Qwen writes several calls in one `<tools>` block): every part must
/// be a JSON value (after rule 6's repair) holding calls, else `None`.
fn several_calls(body: &str) -> Option<Vec<TextCall>> {
    let parts = split_calls(body);
    if parts.len() < 2 {
        return None;
    }
    let mut calls = Vec::new();
    for part in parts {
        let found = calls_in(&parse_lenient(part.trim())?, true);
        if found.is_empty() {
            return None;
        }
        calls.extend(found);
    }
    Some(calls)
}

/// `{"name": NAME, "arguments": VALUE}` for a body that is only arguments.
fn with_name(arguments: Value, name: &str) -> Value {
    let mut call = Map::new();
    call.insert("name".to_owned(), Value::String(name.to_owned()));
    call.insert("arguments".to_owned(), arguments);
    Value::Object(call)
}

fn malformed(reason: &str) -> TextCall {
    TextCall::Malformed {
        reason: reason.to_owned(),
    }
}

/// The calls in a value: one object, or an array of them.
fn calls_in(value: &Value, marked: bool) -> Vec<TextCall> {
    match value {
        Value::Array(items) => {
            let calls: Vec<TextCall> = items
                .iter()
                .filter_map(|v| call_from_value(v, marked))
                .collect();
            if calls.len() == items.len() {
                calls
            } else if marked {
                vec![malformed("an item of the list is not a tool call")]
            } else {
                Vec::new()
            }
        }
        other => call_from_value(other, marked).into_iter().collect(),
    }
}

/// The keys that name a call's tool (rule 2).
const NAMES: &[&str] = &["name", "tool_name", "tool", "function"];
/// The keys that hold a call's arguments (rule 2).
const ARGS: &[&str] = &["arguments", "parameters", "args", "input", "tool_input"];

/// Rule 2 on one object.
fn call_from_value(value: &Value, marked: bool) -> Option<TextCall> {
    let object = value.as_object()?;
    // The OpenAI shape: {"type": "function", "function": {…}}.
    if let Some(Value::Object(function)) = object.get("function")
        && object
            .keys()
            .all(|k| matches!(k.as_str(), "function" | "type" | "id"))
    {
        return call_from_value(&Value::Object(function.clone()), marked);
    }
    if !object.keys().all(|k| {
        NAMES.contains(&k.as_str()) || ARGS.contains(&k.as_str()) || k == "id" || k == "type"
    }) {
        return None;
    }
    let names: Vec<&str> = NAMES
        .iter()
        .filter_map(|k| object.get(*k).and_then(Value::as_str))
        .collect();
    let [name] = names.as_slice() else {
        return None;
    };
    let name = name.trim();
    if name.is_empty() || name.len() > MAX_NAME || name.contains('\n') {
        return None;
    }
    let args: Vec<&Value> = ARGS.iter().filter_map(|k| object.get(*k)).collect();
    let arguments = match args.as_slice() {
        [] | [Value::Null] if marked => Map::new(),
        [Value::Object(map)] => map.clone(),
        [Value::String(text)] => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            _ if marked => {
                return Some(malformed(&format!(
                    "the arguments of `{name}` are not a JSON object"
                )));
            }
            _ => return None,
        },
        _ if marked => {
            return Some(malformed(&format!(
                "the arguments of `{name}` are not a JSON object"
            )));
        }
        _ => return None,
    };
    Some(TextCall::Call {
        name: name.to_owned(),
        arguments: Value::Object(arguments).to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repair_json_case_table() {
        for (text, repaired) in [
            (
                r#"{"a": True, "b": False, "c": None}"#,
                Some(r#"{"a": true, "b": false, "c": null}"#),
            ),
            (r#"{"a": [1, 2,], }"#, Some(r#"{"a": [1, 2] }"#)),
            // Inside strings, nothing changes.
            (r#"{"a": "True, None,]"}"#, None),
            (
                r#"{"a": "say \"True\"", "b": True}"#,
                Some(r#"{"a": "say \"True\"", "b": true}"#),
            ),
            // Only whole words.
            (r#"{"a": Trueish, "b": isNone}"#, None),
            (r#"{"a": true}"#, None),
        ] {
            assert_eq!(repair_json(text).as_deref(), repaired, "{text}");
        }
    }

    #[test]
    fn several_calls_in_one_marker_are_each_a_call() {
        let text = "<tools>\n{\"name\": \"grep\", \"arguments\": {\"pattern\": \"TODO\"}}\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"TODO.md\", \"content\": \"x\"}}\n</tools>";
        assert_eq!(
            recover_tool_calls(text).calls,
            vec![
                call("grep", r#"{"pattern":"TODO"}"#),
                call("write_file", r#"{"content":"x","path":"TODO.md"}"#),
            ]
        );
        // One part that is not a call makes the whole block malformed.
        let text =
            "<tool_call>\n{\"name\": \"grep\", \"arguments\": {}}\n{\"other\": 1}\n</tool_call>";
        let found = recover_tool_calls(text).calls;
        assert_eq!(found.len(), 1);
        assert!(matches!(found[0], TextCall::Malformed { .. }), "{found:?}");
    }

    #[test]
    fn python_literals_in_a_fence_are_repaired_but_prose_is_not() {
        let fenced = "```json\n{\"name\": \"add_flag\", \"arguments\": {\"verbose\": True, \"default\": None,}}\n```";
        let found = recover_tool_calls(fenced);
        assert_eq!(
            found.calls,
            vec![call("add_flag", r#"{"default":null,"verbose":true}"#)]
        );
        // Bare text is held to strict JSON (rule 4).
        let bare = r#"Try {"name": "add_flag", "arguments": {"verbose": True}} maybe."#;
        assert!(recover_tool_calls(bare).calls.is_empty());
    }

    fn call(name: &str, arguments: &str) -> TextCall {
        TextCall::Call {
            name: name.to_owned(),
            arguments: arguments.to_owned(),
        }
    }

    /// (reply text, calls found, text left)
    #[test]
    fn formats_small_models_write() {
        let read = call("read_file", r#"{"path":"a.rs"}"#);
        let cases: Vec<(&str, Vec<TextCall>, &str)> = vec![
            // Bare JSON, as Qwen2.5-Coder-1.5B writes it.
            (
                r#"{"name": "read_file", "arguments": {"path": "a.rs"}}"#,
                vec![read.clone()],
                "",
            ),
            // With text around it, `parameters` for `arguments`.
            (
                "I will read it.\n{\"name\": \"read_file\", \"parameters\": {\"path\": \"a.rs\"}}\nThen fix it.",
                vec![read.clone()],
                "I will read it.\n\nThen fix it.",
            ),
            // Arguments as a JSON string, as OpenAI sends them.
            (
                r#"{"name":"read_file","arguments":"{\"path\":\"a.rs\"}"}"#,
                vec![read.clone()],
                "",
            ),
            // A ```json fence.
            (
                "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.rs\"}}\n```",
                vec![read.clone()],
                "",
            ),
            // The OpenAI shape inside <tools>.
            (
                "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"read_file\", \"arguments\": {\"path\": \"a.rs\"}}}\n</tools>",
                vec![read.clone()],
                "",
            ),
            // Hermes / Qwen tags, two calls.
            (
                "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.rs\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"list_files\", \"arguments\": {}}\n</tool_call>",
                vec![read.clone(), call("list_files", "{}")],
                "",
            ),
            // An unclosed tag at the end of the reply.
            (
                "<tool_call>{\"name\": \"list_files\"}",
                vec![call("list_files", "{}")],
                "",
            ),
            // Llama 3 python tag.
            (
                "<|python_tag|>{\"name\": \"read_file\", \"parameters\": {\"path\": \"a.rs\"}}<|eom_id|>",
                vec![read.clone()],
                "",
            ),
            // Llama 3.1 function tag.
            (
                "<function=read_file>{\"path\": \"a.rs\"}</function>",
                vec![read.clone()],
                "",
            ),
            // Mistral, both spellings.
            (
                "[TOOL_CALLS] [{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.rs\"}}]",
                vec![read.clone()],
                "",
            ),
            (
                "[TOOL_CALLS]read_file[ARGS]{\"path\": \"a.rs\"}",
                vec![read.clone()],
                "",
            ),
            // An array of two bare calls.
            (
                r#"[{"name": "read_file", "arguments": {"path": "a.rs"}}, {"name": "list_files", "arguments": {}}]"#,
                vec![read.clone(), call("list_files", "{}")],
                "",
            ),
            // A name that is no tool: recovered; the loop says it is unknown.
            (
                r#"{"name": "package.json", "arguments": {}}"#,
                vec![call("package.json", "{}")],
                "",
            ),
            // Prose and JSON that merely mention a tool: no call.
            (
                "Use read_file to open a.rs, then edit_file.",
                vec![],
                "Use read_file to open a.rs, then edit_file.",
            ),
            (
                "The config is {\"name\": \"toolgate\", \"version\": \"1\"}.",
                vec![],
                "The config is {\"name\": \"toolgate\", \"version\": \"1\"}.",
            ),
            (
                "Call {\"name\": \"read_file\"} next.",
                vec![],
                "Call {\"name\": \"read_file\"} next.",
            ),
            // Malformed JSON: bare is text; inside a marker, the model is told.
            (
                "{\"name\": \"read_file\", \"arguments\": {\"path\": }",
                vec![],
                "{\"name\": \"read_file\", \"arguments\": {\"path\": }",
            ),
            (
                "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": }</tool_call>",
                vec![malformed("x")],
                "",
            ),
        ];
        for (text, calls, rest) in cases {
            let found = recover_tool_calls(text);
            let kinds: Vec<TextCall> = found
                .calls
                .iter()
                .map(|c| match c {
                    TextCall::Malformed { .. } => malformed("x"),
                    other @ TextCall::Call { .. } => other.clone(),
                })
                .collect();
            assert_eq!(kinds, calls, "{text}");
            assert_eq!(found.text, rest, "{text}");
        }
    }
}
