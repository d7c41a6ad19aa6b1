//! The argument schema of a dynamic tool: checked and completed when the
//! tool is created, checked again when it is loaded.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};
use toolgate_core::ArgsValidator;

use super::template::Template;

/// The keyword that lets a parameter begin a command word with `-`
/// ([`template`](super::template) rule 5).
pub const ALLOW_DASH: &str = "x-allow-dash";

/// The types a placeholder's value may have.
const SCALAR_TYPES: &[&str] = &["string", "number", "integer", "boolean"];

/// Checks and completes a new tool's argument schema.
///
/// # Rules
///
/// 1. No schema is a tool without arguments.
/// 2. A JSON string holding an object is read as that object (small
///    models often send the schema as text).
/// 3. It is an object schema: `type` is `"object"`, added when missing.
/// 4. It refers to nothing outside itself: `$ref` only to `#…`, and no
///    `$id`, `$dynamicRef` or `$recursiveRef`. A root `$schema` is
///    dropped: the gate's draft (2020-12) applies.
/// 5. `additionalProperties` is `false` unless the schema says otherwise,
///    so an argument the schema does not name is refused.
/// 6. It is at most `max_bytes` of compact JSON: it is sent to the model
///    with every request.
/// 7. It compiles as the gate will compile it (`ArgsValidator`).
pub(crate) fn parameters(raw: Option<&Value>, max_bytes: usize) -> Result<Value, String> {
    let mut schema = match raw {
        None | Some(Value::Null) => json!({"type": "object", "properties": {}}),
        Some(Value::String(text)) => serde_json::from_str::<Value>(text).map_err(|e| {
            format!("`parameters` is a string that is not JSON ({e}); pass the schema as an object")
        })?,
        Some(other) => other.clone(),
    };
    let Some(object) = schema.as_object_mut() else {
        return Err(
            "`parameters` must be a JSON Schema object, like {\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}}}"
                .to_owned(),
        );
    };
    match object.get("type") {
        None => {
            object.insert("type".to_owned(), Value::from("object"));
        }
        Some(Value::String(kind)) if kind == "object" => {}
        Some(other) => {
            return Err(format!(
                "`parameters` must describe an object (\"type\": \"object\"), not {other}"
            ));
        }
    }
    object.remove("$schema");
    object
        .entry("additionalProperties")
        .or_insert(Value::Bool(false));
    check_references(&schema)?;
    let size = schema.to_string().len();
    if size > max_bytes {
        return Err(format!(
            "`parameters` is {size} bytes of JSON; at most {max_bytes} are allowed (shorten the descriptions)"
        ));
    }
    ArgsValidator::new(&schema).map_err(|reason| format!("`parameters`: {reason}"))?;
    Ok(schema)
}

/// Rule 4, through the whole schema.
fn check_references(value: &Value) -> Result<(), String> {
    match value {
        Value::Object(map) => {
            for (key, sub) in map {
                match key.as_str() {
                    "$ref" if !sub.as_str().is_some_and(|r| r.starts_with('#')) => {
                        return Err(format!(
                            "`parameters` may only refer to its own parts (`$ref: \"#/…\"`), not {sub}"
                        ));
                    }
                    "$id" | "$dynamicRef" | "$recursiveRef" => {
                        return Err(format!("`parameters` may not use `{key}`"));
                    }
                    _ => check_references(sub)?,
                }
            }
            Ok(())
        }
        Value::Array(items) => items.iter().try_for_each(check_references),
        _ => Ok(()),
    }
}

/// Checks a command tool's schema against its template, and makes every
/// placeholder required.
///
/// # Rules
///
/// 1. Every placeholder is a property of the schema (at the top), and
///    every property is a placeholder: an argument the command never sees
///    is a mistake the caller would not notice.
/// 2. A placeholder's `type`, when given, is `string`, `number`,
///    `integer` or `boolean` (or a list of them): the value fills one
///    word.
/// 3. Every placeholder is required (added to `required`): a word cannot
///    be left out.
pub(crate) fn fit_template(schema: &mut Value, template: &Template) -> Result<(), String> {
    let placeholders = template.params();
    let empty = Map::new();
    let properties = match schema.get("properties") {
        None => &empty,
        Some(Value::Object(properties)) => properties,
        Some(_) => return Err("`parameters.properties` must be an object".to_owned()),
    };
    for name in &placeholders {
        let Some(property) = properties.get(*name) else {
            return Err(format!(
                "the command uses {{{{{name}}}}}, which `parameters.properties` does not declare; add \"{name}\": {{\"type\": \"string\"}}"
            ));
        };
        if let Some(kind) = property.get("type") {
            let kinds: Vec<&Value> = match kind {
                Value::Array(kinds) => kinds.iter().collect(),
                one => vec![one],
            };
            let scalar = kinds
                .iter()
                .all(|k| k.as_str().is_some_and(|k| SCALAR_TYPES.contains(&k)));
            if !scalar {
                return Err(format!(
                    "parameter `{name}` has type {kind}; a command argument must be a string, number, integer or boolean"
                ));
            }
        }
    }
    if let Some(unused) = properties
        .keys()
        .find(|key| !placeholders.contains(key.as_str()))
    {
        return Err(format!(
            "parameter `{unused}` is not used by the command; use it as {{{{{unused}}}}} or remove it"
        ));
    }
    let Some(object) = schema.as_object_mut() else {
        return Ok(());
    };
    let mut required: Vec<Value> = match object.get("required") {
        Some(Value::Array(names)) => names.clone(),
        None => Vec::new(),
        Some(_) => return Err("`parameters.required` must be a list of names".to_owned()),
    };
    for name in placeholders {
        if !required.iter().any(|r| r == name) {
            required.push(Value::from(name));
        }
    }
    if !required.is_empty() {
        object.insert("required".to_owned(), Value::Array(required));
    }
    Ok(())
}

/// The parameters whose schema says `"x-allow-dash": true`.
pub(crate) fn allow_dash(schema: &Value) -> BTreeSet<String> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .filter(|(_, p)| p.get(ALLOW_DASH) == Some(&Value::Bool(true)))
                .map(|(name, _)| name.clone())
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_are_checked_and_completed() {
        // (input, Ok(the schema kept) or Err(message start))
        let cases: &[(Option<Value>, Result<Value, &str>)] = &[
            (
                None,
                Ok(json!({"type": "object", "properties": {}, "additionalProperties": false})),
            ),
            (
                Some(json!({"properties": {"a": {"type": "string"}}})),
                Ok(
                    json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}),
                ),
            ),
            (
                Some(json!({"type": "object", "additionalProperties": true})),
                Ok(json!({"type": "object", "additionalProperties": true})),
            ),
            (
                Some(Value::from(
                    r#"{"type":"object","properties":{"n":{"type":"integer"}}}"#,
                )),
                Ok(
                    json!({"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": false}),
                ),
            ),
            (
                Some(
                    json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}),
                ),
                Ok(json!({"type": "object", "additionalProperties": false})),
            ),
            (
                Some(
                    json!({"type": "object", "$defs": {"p": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/p"}}}),
                ),
                Ok(
                    json!({"type": "object", "$defs": {"p": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/p"}}, "additionalProperties": false}),
                ),
            ),
            (
                Some(json!("not json")),
                Err("`parameters` is a string that is not JSON"),
            ),
            (
                Some(json!(["a"])),
                Err("`parameters` must be a JSON Schema object"),
            ),
            (
                Some(json!({"type": "array"})),
                Err("`parameters` must describe an object"),
            ),
            (
                Some(json!({"properties": {"a": {"$ref": "https://evil.example/s.json"}}})),
                Err("`parameters` may only refer to its own parts"),
            ),
            (
                Some(json!({"allOf": [{"$ref": "file:///etc/passwd"}]})),
                Err("`parameters` may only refer to its own parts"),
            ),
            (
                Some(json!({"$id": "https://x.example/"})),
                Err("`parameters` may not use `$id`"),
            ),
            (
                Some(json!({"properties": {"a": {"type": "strin"}}})),
                Err("`parameters`: invalid argument schema"),
            ),
            (
                Some(json!({"properties": {"a": {"description": "x".repeat(5000)}}})),
                Err("`parameters` is 5"),
            ),
        ];
        for (input, expected) in cases {
            match (parameters(input.as_ref(), 4096), expected) {
                (Ok(schema), Ok(want)) => assert_eq!(&schema, want, "{input:?}"),
                (Err(message), Err(start)) => {
                    assert!(message.starts_with(start), "{input:?}: {message}");
                }
                (got, want) => panic!("{input:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn command_schemas_fit_their_template() {
        let template = Template::parse("git log -n {{count}} {{path}}").unwrap();
        // (properties, required, Ok(required after) or Err(message start))
        let cases: &[(Value, Option<Value>, Result<Value, &str>)] = &[
            (
                json!({"count": {"type": "integer"}, "path": {"type": "string"}}),
                None,
                Ok(json!(["count", "path"])),
            ),
            (
                json!({"count": {"type": ["integer", "string"]}, "path": {}}),
                Some(json!(["path"])),
                Ok(json!(["path", "count"])),
            ),
            (
                json!({"count": {"type": "integer"}}),
                None,
                Err("the command uses {{path}}, which `parameters.properties` does not declare"),
            ),
            (
                json!({"count": {"type": "integer"}, "path": {"type": "array"}}),
                None,
                Err("parameter `path` has type \"array\""),
            ),
            (
                json!({"count": {"type": ["integer", "null"]}, "path": {}}),
                None,
                Err("parameter `count` has type"),
            ),
            (
                json!({"count": {}, "path": {}, "extra": {}}),
                None,
                Err("parameter `extra` is not used by the command"),
            ),
        ];
        for (properties, required, expected) in cases {
            let mut schema = json!({"type": "object", "properties": properties});
            if let Some(required) = required {
                schema["required"] = required.clone();
            }
            match (fit_template(&mut schema, &template), expected) {
                (Ok(()), Ok(want)) => assert_eq!(&schema["required"], want, "{properties}"),
                (Err(message), Err(start)) => {
                    assert!(message.starts_with(start), "{properties}: {message}");
                }
                (got, want) => panic!("{properties}: got {got:?}, want {want:?}"),
            }
        }
        // A command without placeholders takes no arguments.
        let mut schema = parameters(None, 4096).unwrap();
        fit_template(&mut schema, &Template::parse("date -u").unwrap()).unwrap();
        assert!(schema.get("required").is_none());
    }

    #[test]
    fn allow_dash_is_read_per_parameter() {
        let schema = json!({"properties": {
            "a": {"type": "integer", "x-allow-dash": true},
            "b": {"type": "string", "x-allow-dash": "yes"},
            "c": {"type": "string"}
        }});
        assert_eq!(allow_dash(&schema), BTreeSet::from(["a".to_owned()]));
        assert!(allow_dash(&json!({})).is_empty());
    }
}
