//! Invariants of dynamic tools: `create_tool` itself is a well-formed,
//! small tool, and the section reads back. (That no built-in tool's name
//! can be taken is the host's catalog test: the host reserves them.)

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::Arc;

use toolgate_core::{Registry, SchemaFormat};
use toolgate_dynamic::{self as dynamic, DynamicConfig, DynamicTools};
use toolgate_sandbox::Sandbox;
use toolgate_store::{DynamicToolStore, SqliteStore};

#[test]
fn create_tool_is_well_formed_and_small() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(dir.path().join("toolgate.db")).unwrap());
    let dynamic = DynamicTools::new(
        DynamicConfig {
            enabled: true,
            ..DynamicConfig::default()
        },
        store as Arc<dyn DynamicToolStore>,
        Sandbox::builder(dir.path()),
    )
    .unwrap();
    let registry = Arc::new(Registry::new());
    let group = dynamic
        .group("build", dynamic::registry_names(&registry))
        .unwrap();
    assert_eq!(group.name, "dynamic");
    for tool in group.tools {
        assert!(group.instructions.contains(&format!("`{}`", tool.name())));
        registry.register_arc(tool).unwrap();
    }
    let spec = registry.get("create_tool").unwrap().spec().clone();
    assert!(jsonschema::meta::is_valid(&spec.parameters));
    assert_eq!(spec.parameters["additionalProperties"], false);
    assert_eq!(
        spec.parameters["required"],
        serde_json::json!(["name", "description", "type", "source"])
    );
    // Small models pay for every byte of it in every request.
    let bytes = spec.export(SchemaFormat::OpenAi).to_string().len();
    assert!(bytes <= 1300, "create_tool's schema is {bytes} bytes");
    assert_eq!(spec.annotations.read_only_hint, Some(false));
    // The feature off: no group.
    let off = DynamicTools::new(
        DynamicConfig::default(),
        Arc::new(SqliteStore::open(dir.path().join("other.db")).unwrap())
            as Arc<dyn DynamicToolStore>,
        Sandbox::builder(dir.path()),
    )
    .unwrap();
    assert!(off.group("build", Arc::new(|_: &str| false)).is_none());
}

#[test]
fn the_config_reads_back_and_refuses_unknown_keys() {
    let config = DynamicConfig {
        enabled: true,
        max_per_agent: 5,
        ..DynamicConfig::default()
    };
    let yaml = serde_json::to_value(&config).unwrap();
    let back: DynamicConfig = serde_json::from_value(yaml).unwrap();
    assert_eq!(back, config);
    let defaults: DynamicConfig = serde_json::from_str("{}").unwrap();
    assert_eq!(defaults, DynamicConfig::default());
    assert!(!defaults.enabled && defaults.max_per_agent == 20 && defaults.sandbox_required);
    let error = serde_json::from_str::<DynamicConfig>(r#"{"enable": true}"#).unwrap_err();
    assert!(
        error.to_string().contains("unknown field `enable`"),
        "{error}"
    );
}
