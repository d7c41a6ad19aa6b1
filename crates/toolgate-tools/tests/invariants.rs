//! Invariants every built-in tool must keep.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value,
    clippy::type_complexity,
    clippy::unnecessary_literal_bound,
    reason = "test code: a failed unwrap is a failed test"
)]

use toolgate_core::{Registry, SchemaFormat, Workspace, check_tool_name};
use toolgate_tools::{BuiltinOptions, builtin_tools};

#[test]
fn every_builtin_is_well_formed() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::builder(dir.path()).build().unwrap();
    let registry = Registry::new();
    for tool in builtin_tools(&workspace, &BuiltinOptions::default()) {
        let name = tool.name().to_owned();
        registry
            .register_arc(tool)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    assert_eq!(registry.count(), 11);
    for entry in registry.list() {
        let spec = entry.spec();
        assert!(check_tool_name(&spec.name).is_ok(), "{}", spec.name);
        assert!(
            spec.description.len() >= 20,
            "{}: describe the tool for the model",
            spec.name
        );
        assert!(
            jsonschema::meta::is_valid(&spec.parameters),
            "{}: schema is not valid JSON Schema",
            spec.name
        );
        assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
        assert_eq!(
            spec.parameters["additionalProperties"], false,
            "{}: arguments must refuse unknown fields (serde(deny_unknown_fields))",
            spec.name
        );
        let openai = spec.export(SchemaFormat::OpenAi);
        assert_eq!(openai["function"]["name"], spec.name.as_str());
        let mcp = spec.export(SchemaFormat::Mcp);
        assert!(
            mcp["annotations"]["readOnlyHint"].is_boolean(),
            "{}: annotations",
            spec.name
        );
    }
}
