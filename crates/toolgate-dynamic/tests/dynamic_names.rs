//! Invariants of dynamic tools against the rest of toolgate: no built-in
//! tool's name can be taken by a dynamic tool, and `create_tool` itself is
//! a well-formed, small tool.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::Arc;

use toolgate_assistant::memory::persona::{self, PersonaConfig};
use toolgate_assistant::memory::{self, MemoryConfig};
use toolgate_assistant::{calc, cron, notes, phone, tasks, weather};
use toolgate_core::{Registry, SchemaFormat, Tool, Workspace};
use toolgate_dynamic::{self as dynamic, DynamicConfig, DynamicTools, check_name};
use toolgate_sandbox::Sandbox;
use toolgate_store::{DynamicToolStore, NoteStore, ScheduleStore, SqliteStore};
use toolgate_tools::command::CommandOptions;
use toolgate_tools::{BuiltinOptions, builtin_tools};

/// Every tool toolgate-tools can build, every group enabled.
fn every_builtin(dir: &std::path::Path) -> Vec<Arc<dyn Tool>> {
    let store = Arc::new(SqliteStore::open(dir.join("toolgate.db")).unwrap());
    let workspace = Workspace::builder(dir).build().unwrap();
    let options = BuiltinOptions::default()
        .allow_delete(true)
        .commands(Some(CommandOptions::default()));
    let mut tools = builtin_tools(&workspace, &options);
    tools.extend(calc::tools(&calc::CalculatorConfig::default()));
    tools.extend(notes::tools(
        &notes::NotesConfig {
            enabled: true,
            ..notes::NotesConfig::default()
        },
        Arc::clone(&store) as Arc<dyn NoteStore>,
    ));
    tools.extend(tasks::tools(
        &tasks::TasksConfig {
            enabled: true,
            ..tasks::TasksConfig::default()
        },
        Arc::clone(&store),
    ));
    tools.extend(
        weather::tools(&weather::WeatherConfig {
            enabled: true,
            ..weather::WeatherConfig::default()
        })
        .unwrap(),
    );
    tools.extend(cron::tools(
        &cron::CronConfig::default(),
        Arc::clone(&store) as Arc<dyn ScheduleStore>,
    ));
    tools.extend(memory::tools(
        &MemoryConfig::default(),
        dir.join("memory"),
        Arc::clone(&store) as Arc<dyn toolgate_store::MemoryIndex>,
        None,
    ));
    tools.extend(persona::tools(
        &PersonaConfig::default(),
        dir.join("persona"),
    ));
    tools.extend(phone::tools(&phone::PhoneConfig::default(), dir, None));
    tools.push(Arc::new(toolgate_tools::plan::UpdatePlan::new(None)));
    tools.extend(toolgate_web::tools(&toolgate_web::WebConfig::default()).unwrap());
    let dynamic = DynamicTools::new(
        DynamicConfig::default(),
        store as Arc<dyn DynamicToolStore>,
        Sandbox::builder(dir),
    )
    .unwrap();
    tools.push(dynamic.create_tool("build", Arc::new(|_: &str| false)));
    tools
}

#[test]
fn no_builtin_name_can_be_taken() {
    let dir = tempfile::tempdir().unwrap();
    let tools = every_builtin(dir.path());
    assert!(tools.len() >= 30, "{} tools", tools.len());
    for tool in tools {
        let name = tool.name();
        assert!(
            check_name(name).is_err(),
            "a dynamic tool could be named `{name}`: add it to RESERVED_NAMES"
        );
    }
}

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
