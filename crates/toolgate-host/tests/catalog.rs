//! Invariants of the group catalog ([`GROUPS`]): every group listed once,
//! its section a key of `tools:`, its trusted keys real, every tool it
//! builds well formed, named in its list (so reserved for dynamic tools)
//! and in its prompt block.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::BTreeSet;

use serde_json::Value;
use toolgate_core::{Registry, SchemaFormat, check_tool_name};
use toolgate_host::{GROUPS, Host, ToolsSection, TrustPolicy, reserved_names, untrusted_tool_keys};

/// Every group with a section switched on (weather, web and phone only
/// build clients: nothing is called).
const EVERYTHING: &str = "\
commands: {enabled: true}
workspace: {allow_delete: true}
tools:
  echo: {enabled: true}
  notes: {enabled: true}
  tasks: {enabled: true}
  weather: {enabled: true}
  web: {enabled: true}
  memory: {enabled: true}
  persona: {enabled: true}
  cron: {enabled: true}
  phone: {enabled: true}
";

fn host(dir: &std::path::Path, config: &str) -> Host {
    std::fs::write(dir.join("toolgate.yaml"), config).unwrap();
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let env = vec![
        ("HOME".to_owned(), dir.join("home").display().to_string()),
        (
            "XDG_DATA_HOME".to_owned(),
            dir.join("data").display().to_string(),
        ),
    ];
    Host::builder()
        .workspace(dir)
        .env(env)
        .trust(TrustPolicy::ThisRun)
        .load()
        .unwrap()
}

#[test]
fn every_group_is_listed_once_and_every_tool_name_once() {
    let mut groups = BTreeSet::new();
    let mut tools = BTreeSet::new();
    for group in GROUPS {
        assert!(groups.insert(group.name()), "{} twice", group.name());
        assert!(!group.tool_names().is_empty(), "{}: no tools", group.name());
        for name in group.tool_names() {
            assert!(check_tool_name(name).is_ok(), "{name}");
            assert!(tools.insert(*name), "`{name}` in two groups");
        }
    }
}

#[test]
fn every_section_is_a_key_of_tools_and_nothing_else_is() {
    let defaults = serde_json::to_value(ToolsSection::default()).unwrap();
    let keys: BTreeSet<&str> = defaults
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected: BTreeSet<&str> = GROUPS.iter().filter_map(|g| g.section_key()).collect();
    expected.insert("timeout");
    assert_eq!(keys, expected);
    // An unknown group section is refused, naming the key.
    let error = serde_json::from_str::<ToolsSection>(r#"{"nope": {}}"#).unwrap_err();
    assert!(
        error.to_string().contains("unknown field `nope`"),
        "{error}"
    );
}

#[test]
fn every_untrusted_key_is_a_key_of_its_section() {
    let defaults = serde_json::to_value(ToolsSection::default()).unwrap();
    let keys = untrusted_tool_keys();
    assert!(keys.contains(&"tools.calculator".to_owned()), "{keys:?}");
    assert!(
        keys.contains(&"tools.datetime.timezone".to_owned()),
        "{keys:?}"
    );
    for key in &keys {
        let found = key
            .split('.')
            .skip(1)
            .try_fold(&defaults, |v: &Value, seg| v.get(seg));
        assert!(found.is_some(), "{key} is not a configuration key");
        assert!(
            toolgate_host::trust::applies_untrusted(key),
            "{key} is not applied untrusted"
        );
    }
    // Where requests go and what runs later stay trust-only.
    for key in [
        "tools.web.allow_hosts",
        "tools.cron.enabled",
        "tools.phone",
        "tools.memory.dir",
    ] {
        assert!(!toolgate_host::trust::applies_untrusted(key), "{key}");
    }
}

#[test]
fn no_dynamic_tool_can_take_a_name_of_the_catalog() {
    let reserved = reserved_names();
    for group in GROUPS {
        for name in group.tool_names() {
            let error = toolgate_dynamic::check_name(name, &reserved).unwrap_err();
            assert!(error.contains("built-in tool"), "{name}: {error}");
        }
    }
}

#[test]
fn every_built_tool_is_its_groups_well_formed_and_named_in_its_block() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path(), EVERYTHING);
    let built = host.tool_groups().unwrap();
    let names: Vec<&str> = built.iter().map(|g| g.name).collect();
    for group in [
        "files",
        "search",
        "datetime",
        "diagnostics",
        "commands",
        "calculator",
        "notes",
        "tasks",
        "plan",
        "weather",
        "web",
        "memory",
        "persona",
        "cron",
        "phone",
    ] {
        assert!(names.contains(&group), "{group} not built: {names:?}");
    }
    let registry = Registry::new();
    for group in &built {
        let entry = GROUPS.iter().find(|g| g.name() == group.name).unwrap();
        for tool in &group.tools {
            let name = tool.name();
            assert!(
                entry.tool_names().contains(&name),
                "{name} not in {}'s list",
                group.name
            );
            if !group.instructions.is_empty() && group.name != "files" {
                // The files block speaks of editing in general.
                assert!(
                    group.instructions.contains(name),
                    "{name}: not named in the {} block",
                    group.name
                );
            }
            registry.register_arc(std::sync::Arc::clone(tool)).unwrap();
        }
    }
    assert!(registry.count() >= 35, "{} tools built", registry.count());
    for entry in registry.list() {
        let spec = entry.spec();
        let name = spec.name.as_str();
        assert!(spec.description.len() >= 20, "{name}: describe it");
        assert!(jsonschema::meta::is_valid(&spec.parameters), "{name}");
        assert_eq!(spec.parameters["additionalProperties"], false, "{name}");
        assert!(
            spec.export(SchemaFormat::Mcp)["annotations"]["readOnlyHint"].is_boolean(),
            "{name}"
        );
    }
}

#[test]
fn groups_switched_off_build_nothing_and_open_no_store() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(
        dir.path(),
        "commands: {enabled: false}\ntools:\n  calculator: {enabled: false}\n  datetime: {enabled: false}\n",
    );
    let names: Vec<&str> = host.tool_groups().unwrap().iter().map(|g| g.name).collect();
    // `echo` is on by default (callable, never offered to a model).
    assert_eq!(names, ["files", "search", "diagnostics"]);
    // No group asked for the store, so none was created.
    assert!(!host.store_path().unwrap().exists());
}
