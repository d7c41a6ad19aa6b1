//! Invariants of the assistant groups (notes, tasks, calculator, weather):
//! every tool is well formed and declares its effects, every group's
//! instructions name its tools, and every config section reads back what
//! it writes and refuses unknown keys.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions: a panic is a test failure"
)]

use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use toolgate_assistant::calc::CalculatorConfig;
use toolgate_assistant::notes::NotesConfig;
use toolgate_assistant::tasks::TasksConfig;
use toolgate_assistant::weather::WeatherConfig;
use toolgate_assistant::{calc, notes, tasks, weather};
use toolgate_core::{Effect, Registry, SchemaFormat, Sensitivity, Tool, check_tool_name};
use toolgate_store::{NoteStore, SqliteStore};

/// A valid call of every tool, and whether it asks under
/// `confirm-sensitive`. A tool without a line here fails the test.
const SAMPLES: &[(&str, &str, bool)] = &[
    ("create_note", r#"{"title": "t", "body": "b"}"#, false),
    ("list_notes", r"{}", false),
    ("get_note", r#"{"id": 1}"#, false),
    ("update_note", r#"{"id": 1, "append": "more"}"#, false),
    ("delete_note", r#"{"id": 1}"#, true),
    ("search_notes", r#"{"query": "milk"}"#, false),
    ("create_project", r#"{"name": "Home"}"#, false),
    ("list_projects", r"{}", false),
    (
        "update_project",
        r#"{"project": "Home", "status": "done"}"#,
        false,
    ),
    ("add_task", r#"{"project": 1, "title": "Paint"}"#, false),
    ("list_tasks", r#"{"status": "all"}"#, false),
    ("update_task", r#"{"id": 1, "status": "done"}"#, false),
    ("delete_task", r#"{"id": 1}"#, true),
    ("project_activity", r#"{"project": "Home"}"#, false),
    ("calculator", r#"{"expression": "1+1"}"#, false),
    ("get_weather", r#"{"location": "Madrid"}"#, true),
];

/// Every group enabled, with its instructions.
fn groups(dir: &tempfile::TempDir) -> Vec<(&'static str, Vec<Arc<dyn Tool>>)> {
    let store = Arc::new(SqliteStore::open(dir.path().join("toolgate.db")).unwrap());
    vec![
        (
            notes::INSTRUCTIONS,
            notes::tools(
                &NotesConfig {
                    enabled: true,
                    ..NotesConfig::default()
                },
                Arc::clone(&store) as Arc<dyn NoteStore>,
            ),
        ),
        (
            tasks::INSTRUCTIONS,
            tasks::tools(
                &TasksConfig {
                    enabled: true,
                    ..TasksConfig::default()
                },
                store,
            ),
        ),
        (
            calc::INSTRUCTIONS,
            calc::tools(&CalculatorConfig::default()),
        ),
        (
            weather::INSTRUCTIONS,
            weather::tools(&WeatherConfig {
                enabled: true,
                ..WeatherConfig::default()
            })
            .unwrap(),
        ),
    ]
}

#[test]
fn every_tool_is_well_formed_and_declares_its_effects() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::new();
    for (instructions, tools) in groups(&dir) {
        assert!(!tools.is_empty());
        for tool in tools {
            // The group's prompt block names each of its tools.
            assert!(
                instructions.contains(&format!("`{}`", tool.name())),
                "{}: not named in its group's INSTRUCTIONS",
                tool.name()
            );
            registry.register_arc(tool).unwrap();
        }
    }
    assert_eq!(registry.count(), SAMPLES.len());
    for entry in registry.list() {
        let spec = entry.spec();
        let name = spec.name.as_str();
        assert!(check_tool_name(name).is_ok(), "{name}");
        assert!(spec.description.len() >= 40, "{name}: describe it");
        assert!(jsonschema::meta::is_valid(&spec.parameters), "{name}");
        assert_eq!(spec.parameters["additionalProperties"], false, "{name}");
        assert!(
            spec.export(SchemaFormat::Mcp)["annotations"]["readOnlyHint"].is_boolean(),
            "{name}"
        );

        let (_, args, asks) = SAMPLES
            .iter()
            .find(|(tool, _, _)| *tool == name)
            .unwrap_or_else(|| panic!("`{name}` has no sample call"));
        let args: Value = serde_json::from_str(args).unwrap();
        entry
            .validate(&args)
            .unwrap_or_else(|p| panic!("{name}: the sample is not valid: {p}"));
        let effects = entry.tool().effects(&args).unwrap();
        assert!(!effects.is_opaque(), "{name}");
        // Store-only and pure tools touch nothing outside toolgate; the
        // one networked tool says where it goes.
        for effect in effects.list() {
            assert!(
                matches!(effect, Effect::Network { .. }),
                "{name}: {effect:?}"
            );
        }
        if spec.annotations.read_only_hint == Some(true) {
            assert!(effects.is_read_only(), "{name}: {effects:?}");
        }
        let sensitive = entry.tool().sensitivity(&args) == Sensitivity::Sensitive;
        assert_eq!(sensitive, *asks, "{name}: sensitivity");
        if spec.annotations.destructive_hint == Some(true) {
            assert!(sensitive, "{name}: destructive but does not ask");
        }
    }
}

/// A config section: its defaults read back, and an unknown key is an
/// error.
fn round_trip<T>(section: &str)
where
    T: Default + Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let defaults = serde_json::to_value(T::default()).unwrap();
    assert_eq!(
        serde_json::from_value::<T>(defaults.clone()).unwrap(),
        T::default(),
        "{section}"
    );
    assert_eq!(
        serde_json::from_value::<T>(json!({})).unwrap(),
        T::default(),
        "{section}: every key has a default"
    );
    assert_eq!(
        serde_json::from_value::<T>(json!({"enabled": true})).unwrap(),
        serde_json::from_value::<T>({
            let mut v = defaults;
            v["enabled"] = json!(true);
            v
        })
        .unwrap(),
        "{section}"
    );
    let error = serde_json::from_value::<T>(json!({"enabeld": true}))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("unknown field `enabeld`"),
        "{section}: {error}"
    );
}

#[test]
fn config_sections_read_back_and_refuse_unknown_keys() {
    round_trip::<NotesConfig>("notes");
    round_trip::<TasksConfig>("tasks");
    round_trip::<CalculatorConfig>("calculator");
    round_trip::<WeatherConfig>("weather");
    let weather: WeatherConfig = serde_json::from_value(json!({
        "temperature_unit": "fahrenheit", "wind_speed_unit": "kn", "precipitation_unit": "inch"
    }))
    .unwrap();
    assert_eq!(
        (
            weather.temperature_unit.as_str(),
            weather.wind_speed_unit.as_str(),
            weather.precipitation_unit.as_str()
        ),
        ("fahrenheit", "kn", "inch")
    );
    assert!(
        serde_json::from_value::<WeatherConfig>(json!({"temperature_unit": "kelvin"})).is_err()
    );
}
