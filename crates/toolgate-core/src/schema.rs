//! Argument schemas: generation, export to provider formats, validation.

use std::fmt;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::ToolAnnotations;

/// The JSON Schema of an argument type, ready to send to a model.
///
/// Draft 2020-12 with every subschema inlined (some providers reject `$ref`),
/// and compacted, since every byte of it is sent with every request: no
/// `$schema`, `title` or root `description` (the tool's own description
/// says it), no `schemars` number formats (`uint`, `int64`: not JSON Schema
/// formats, they check nothing), no `"default": null`, descriptions on one
/// line, and a `oneOf` of documented string constants as a plain `enum` (the
/// property's description names the values). The compact schema accepts
/// exactly what the full one does.
pub fn schema_for_args<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
        object.remove("description");
    }
    compact(&mut schema);
    schema
}

/// The number formats `schemars` writes for Rust integer and float types.
const NUMBER_FORMATS: &[&str] = &[
    "uint", "uint8", "uint16", "uint32", "uint64", "uint128", "int", "int8", "int16", "int32",
    "int64", "int128", "float", "double",
];

/// Compacts one (sub)schema in place, then its subschemas; see
/// [`schema_for_args`].
fn compact(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if object
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| NUMBER_FORMATS.contains(&f))
    {
        object.remove("format");
    }
    if object.get("default").is_some_and(Value::is_null) {
        object.remove("default");
    }
    if let Some(Value::String(text)) = object.get_mut("description") {
        *text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    }
    if let Some(values) = object.get("oneOf").and_then(string_constants) {
        object.remove("oneOf");
        object.insert("type".to_owned(), Value::from("string"));
        object.insert("enum".to_owned(), Value::Array(values));
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(sub) = object.get_mut(key) {
            compact(sub);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(subs)) = object.get_mut(key) {
            subs.iter_mut().for_each(compact);
        }
    }
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        properties.values_mut().for_each(compact);
    }
}

/// The values of a `oneOf` whose every branch is a string constant (with
/// nothing else than a type and a description), in order.
fn string_constants(one_of: &Value) -> Option<Vec<Value>> {
    let branches = one_of.as_array()?;
    let mut values = Vec::with_capacity(branches.len());
    for branch in branches {
        let branch = branch.as_object()?;
        let value = branch.get("const").filter(|v| v.is_string())?;
        let only_notes = branch.iter().all(|(key, v)| match key.as_str() {
            "const" | "description" => true,
            "type" => v == "string",
            _ => false,
        });
        if !only_notes {
            return None;
        }
        values.push(value.clone());
    }
    (!values.is_empty()).then_some(values)
}

/// The schema formats a tool spec can be exported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaFormat {
    /// OpenAI function calling:
    /// `{"type":"function","function":{"name","description","parameters"}}`.
    OpenAi,
    /// Anthropic Messages: `{"name","description","input_schema"}`.
    Anthropic,
    /// MCP `tools/list`: `{"name","description","inputSchema","annotations"}`.
    Mcp,
}

/// Everything a model or client needs to know to call a tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// The tool's description.
    pub description: String,
    /// The JSON Schema of the arguments.
    pub parameters: Value,
    /// What the tool's calls may do: MCP's hints and toolgate's own kinds
    /// ([`ToolAnnotations`]).
    pub annotations: ToolAnnotations,
}

impl ToolSpec {
    /// The spec in the given wire format.
    pub fn export(&self, format: SchemaFormat) -> Value {
        match format {
            SchemaFormat::OpenAi => json!({
                "type": "function",
                "function": {
                    "name": self.name,
                    "description": self.description,
                    "parameters": self.parameters,
                }
            }),
            SchemaFormat::Anthropic => json!({
                "name": self.name,
                "description": self.description,
                "input_schema": self.parameters,
            }),
            SchemaFormat::Mcp => {
                let mut tool = json!({
                    "name": self.name,
                    "description": self.description,
                    "inputSchema": self.parameters,
                });
                let annotations = self.annotations.mcp();
                if !annotations.is_empty() {
                    tool["annotations"] = Value::Object(annotations);
                }
                tool
            }
        }
    }
}

/// A compiled argument schema.
///
/// Compiled once (the registry does it on a tool's first call), so a call pays
/// only for the check itself.
pub struct ArgsValidator {
    validator: jsonschema::Validator,
    /// The schema, to name the fields there are when one is unknown.
    schema: Value,
}

impl fmt::Debug for ArgsValidator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArgsValidator").finish_non_exhaustive()
    }
}

impl ArgsValidator {
    /// Compiles `schema`. Fails when it is not a valid JSON Schema, or is not
    /// an object schema (tool arguments are always a JSON object).
    pub fn new(schema: &Value) -> Result<Self, String> {
        Self::check_shape(schema)?;
        // Compile with schema validation on, so a broken schema is refused
        // here rather than silently accepting everything later.
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(schema)
            .map_err(|error| format!("invalid argument schema: {error}"))?;
        Ok(Self {
            validator,
            schema: schema.clone(),
        })
    }

    /// The cheap part of [`new`](Self::new)'s checks, without compiling:
    /// `schema` is a JSON object describing an object.
    pub fn check_shape(schema: &Value) -> Result<(), String> {
        let Some(object) = schema.as_object() else {
            return Err("the argument schema must be a JSON object".to_owned());
        };
        match object.get("type") {
            None => {}
            Some(Value::String(kind)) if kind == "object" => {}
            Some(other) => {
                return Err(format!(
                    "the argument schema must describe an object, it has \"type\": {other}"
                ));
            }
        }
        Ok(())
    }

    /// Checks `args`, returning every problem found, in a form a model can act on.
    pub fn validate(&self, args: &Value) -> Result<(), ArgsProblems> {
        if !args.is_object() {
            return Err(ArgsProblems(vec![format!(
                "the arguments must be a JSON object, got {}",
                describe_type(args)
            )]));
        }
        let mut problems: Vec<String> = self
            .validator
            .iter_errors(args)
            .map(|e| describe(&e, &self.schema))
            .collect();
        if problems.is_empty() {
            return Ok(());
        }
        problems.sort();
        problems.dedup();
        Err(ArgsProblems(problems))
    }
}

/// Why a set of arguments was refused: one sentence per problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgsProblems(pub Vec<String>);

impl fmt::Display for ArgsProblems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("; "))
    }
}

/// The properties of the schema object whose keyword failed at
/// `schema_path` (`/properties/a/additionalProperties` → the schema at
/// `/properties/a`), as `` `a`, `b` ``.
fn known_fields(schema: &Value, schema_path: &str) -> Option<String> {
    let parent = schema_path
        .rsplit_once('/')
        .map_or("", |(parent, _)| parent);
    let properties = schema.pointer(parent)?.get("properties")?.as_object()?;
    if properties.is_empty() {
        return None;
    }
    let names: Vec<String> = properties.keys().map(|k| format!("`{k}`")).collect();
    Some(names.join(", "))
}

fn describe(error: &jsonschema::ValidationError<'_>, schema: &Value) -> String {
    let path = error.instance_path().as_str();
    let at = if path.is_empty() {
        String::new()
    } else {
        // `/a/0/b` → `a[0].b`: closer to how a model names a field.
        let mut field = String::new();
        for segment in path.trim_start_matches('/').split('/') {
            let segment = segment.replace("~1", "/").replace("~0", "~");
            if segment.parse::<usize>().is_ok() {
                field.push('[');
                field.push_str(&segment);
                field.push(']');
            } else {
                if !field.is_empty() {
                    field.push('.');
                }
                field.push_str(&segment);
            }
        }
        format!("field `{field}`: ")
    };
    let instance = error.instance();
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            if at.is_empty() {
                format!("missing required field `{name}`")
            } else {
                format!("{at}missing required field `{name}`")
            }
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let names: Vec<String> = unexpected.iter().map(|n| format!("`{n}`")).collect();
            let noun = if names.len() == 1 { "field" } else { "fields" };
            match known_fields(schema, error.schema_path().as_str()) {
                Some(known) => format!(
                    "{at}unknown {noun} {} (the fields are {known})",
                    names.join(", ")
                ),
                None => format!(
                    "{at}unknown {noun} {} (not in the schema)",
                    names.join(", ")
                ),
            }
        }
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => t.to_string(),
                TypeKind::Multiple(set) => {
                    let mut names: Vec<String> = set.iter().map(|t| t.to_string()).collect();
                    // "integer or null" reads better than "null or integer".
                    names.sort_by_key(|name| name == "null");
                    names.join(" or ")
                }
            };
            format!(
                "{at}expected {expected}, got {} {}",
                describe_type(instance),
                truncate_json(instance)
            )
        }
        ValidationErrorKind::Enum { options } => {
            format!(
                "{at}expected one of {options}, got {}",
                truncate_json(instance)
            )
        }
        _ => format!("{at}{error}"),
    }
}

fn describe_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn truncate_json(value: &Value) -> String {
    const MAX: usize = 60;
    let text = value.to_string();
    if text.len() <= MAX {
        return text;
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// The JSON object used when a call comes without arguments.
pub fn empty_args() -> Value {
    Value::Object(Map::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[expect(dead_code, reason = "only the schema is used")]
    struct Args {
        /// A path.
        path: String,
        /// How many.
        count: Option<u32>,
        mode: Option<Mode>,
    }

    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Mode {
        Overwrite,
        Append,
    }

    fn check(args: &Value) -> Result<(), String> {
        let validator = ArgsValidator::new(&schema_for_args::<Args>()).unwrap();
        validator.validate(args).map_err(|p| p.to_string())
    }

    #[test]
    fn messages_name_the_field_and_what_was_expected() {
        let cases: &[(Value, Option<&str>)] = &[
            (json!({"path": "a"}), None),
            (json!({"path": "a", "count": 3, "mode": "append"}), None),
            (json!({}), Some("missing required field `path`")),
            (
                json!({"path": 7}),
                Some("field `path`: expected string, got integer 7"),
            ),
            (
                json!({"path": "a", "count": "x"}),
                Some("field `count`: expected integer or null, got string \"x\""),
            ),
            (
                json!({"path": "a", "extra": 1}),
                Some("unknown field `extra` (the fields are `count`, `mode`, `path`)"),
            ),
            (
                json!({"path": "a", "mode": "replace"}),
                Some(
                    "field `mode`: expected one of [\"overwrite\",\"append\",null], got \"replace\"",
                ),
            ),
            (
                json!([1]),
                Some("the arguments must be a JSON object, got array"),
            ),
            (
                json!(null),
                Some("the arguments must be a JSON object, got null"),
            ),
        ];
        for (args, expected) in cases {
            let got = check(args);
            match expected {
                None => assert_eq!(got, Ok(()), "{args}"),
                Some(message) => assert_eq!(got, Err((*message).to_owned()), "{args}"),
            }
        }
    }

    #[test]
    fn every_problem_is_reported() {
        let err = check(&json!({"count": -1, "zzz": true})).unwrap_err();
        assert!(err.contains("missing required field `path`"), "{err}");
        assert!(err.contains("unknown field `zzz`"), "{err}");
        assert!(err.contains("field `count`"), "{err}");
    }

    #[test]
    fn broken_schemas_are_refused() {
        assert!(ArgsValidator::new(&json!("string")).is_err());
        assert!(ArgsValidator::new(&json!({"type": "array"})).is_err());
        assert!(
            ArgsValidator::new(&json!({"type": "object", "properties": {"a": {"type": 12}}}))
                .is_err()
        );
        assert!(ArgsValidator::new(&json!({"type": "object"})).is_ok());
    }

    #[test]
    fn generated_schema_is_clean_and_closed() {
        let schema = schema_for_args::<Args>();
        assert!(schema.get("$schema").is_none());
        assert!(schema.get("title").is_none());
        assert_eq!(schema["additionalProperties"], json!(false));
        assert_eq!(schema["required"], json!(["path"]));
        assert!(jsonschema::meta::is_valid(&schema));
    }

    /// A variant-documented enum, a counted integer and a nullable default,
    /// as `schemars` writes them.
    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[expect(dead_code, reason = "only the schema is used")]
    struct Documented {
        /// Which way:
        /// up or down.
        way: Way,
        /// How many.
        count: u64,
        /// Optional.
        #[serde(default)]
        note: Option<String>,
        /// Nested.
        #[serde(default)]
        items: Vec<Item>,
    }

    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Way {
        /// Upwards.
        Up,
        /// Downwards.
        Down,
    }

    #[derive(serde::Deserialize, JsonSchema)]
    #[expect(dead_code, reason = "only the schema is used")]
    struct Item {
        /// Size.
        size: u32,
        way: Way,
    }

    #[test]
    fn generated_schema_is_compact_and_accepts_the_same() {
        let schema = schema_for_args::<Documented>();
        let text = schema.to_string();
        assert!(schema.get("description").is_none(), "{text}");
        assert!(!text.contains("\"format\""), "{text}");
        assert!(!text.contains("oneOf"), "{text}");
        assert!(!text.contains("\"default\":null"), "{text}");
        assert!(!text.contains("\\n"), "{text}");
        assert_eq!(schema["properties"]["way"]["enum"], json!(["up", "down"]));
        assert_eq!(
            schema["properties"]["way"]["description"],
            json!("Which way: up or down.")
        );
        assert_eq!(
            schema["properties"]["items"]["items"]["properties"]["way"]["enum"],
            json!(["up", "down"])
        );
        assert!(jsonschema::meta::is_valid(&schema));
        let validator = ArgsValidator::new(&schema).unwrap();
        let cases = [
            (json!({"way": "up", "count": 1}), true),
            (
                json!({"way": "down", "count": 0, "note": null, "items": [{"size": 2, "way": "up"}]}),
                true,
            ),
            (json!({"way": "sideways", "count": 1}), false),
            (json!({"way": "up", "count": -1}), false),
            (json!({"way": "up", "count": 1.5}), false),
            (
                json!({"way": "up", "count": 1, "items": [{"size": 2, "way": "left"}]}),
                false,
            ),
            (
                json!({"way": "up", "count": 1, "items": [{"size": -2, "way": "up"}]}),
                false,
            ),
        ];
        for (args, ok) in cases {
            assert_eq!(validator.validate(&args).is_ok(), ok, "{args}");
        }
    }

    #[test]
    fn export_formats() {
        let spec = ToolSpec {
            name: "t".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
            annotations: ToolAnnotations::default(),
        };
        assert_eq!(
            spec.export(SchemaFormat::OpenAi),
            json!({"type": "function", "function": {"name": "t", "description": "d", "parameters": {"type": "object"}}})
        );
        assert_eq!(
            spec.export(SchemaFormat::Anthropic),
            json!({"name": "t", "description": "d", "input_schema": {"type": "object"}})
        );
        assert_eq!(
            spec.export(SchemaFormat::Mcp),
            json!({"name": "t", "description": "d", "inputSchema": {"type": "object"}})
        );
    }
}
