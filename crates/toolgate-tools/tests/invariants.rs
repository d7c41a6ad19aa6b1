//! Invariants every built-in tool must keep.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value,
    clippy::type_complexity,
    clippy::unnecessary_literal_bound,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;
use toolgate_core::{
    Effect, Effects, Registry, SchemaFormat, ToolContext, Workspace, check_tool_name,
};
use toolgate_tools::command::{COMMAND_LINE_TOOLS, CommandOptions};
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
    // delete_file is offered only when deleting is allowed.
    assert_eq!(registry.count(), 10);
    assert!(registry.get("delete_file").is_err());
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

/// A valid call of every built-in, and what its effects must name: the
/// paths (as the workspace names them) and the command lines, exactly.
/// A built-in without a line here fails `every_builtin_declares_its_effects`.
const SAMPLES: &[(&str, &str, &[&str])] = &[
    ("read_file", r#"{"path": "./notes.txt"}"#, &["notes.txt"]),
    (
        "write_file",
        r#"{"path": "out/new.txt", "content": "hello\n"}"#,
        &["out/new.txt"],
    ),
    ("delete_file", r#"{"path": "notes.txt"}"#, &["notes.txt"]),
    ("list_files", r#"{"path": "src"}"#, &["src"]),
    (
        "edit_file",
        r#"{"path": "notes.txt", "old_str": "two", "new_str": "2"}"#,
        &["notes.txt"],
    ),
    (
        "apply_patch",
        r#"{"patch": "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"}"#,
        &["notes.txt"],
    ),
    (
        "search_code",
        r#"{"pattern": "fn ", "path": "src"}"#,
        &["src"],
    ),
    (
        "grep",
        r#"{"pattern": "one", "path": "notes.txt"}"#,
        &["notes.txt"],
    ),
    ("find_files", r#"{"pattern": "*.rs"}"#, &["."]),
    ("get_datetime", r#"{"timezone": "UTC"}"#, &[]),
    // Sensitive only so that it exercises confirmation: it touches nothing.
    ("echo", r#"{"message": "hi"}"#, &[]),
    (
        "run_command",
        r#"{"command": "cargo test", "cwd": "src"}"#,
        &["cargo test", "src"],
    ),
    (
        "process",
        r#"{"action": "write", "session_id": "bg-1", "input": "make\n"}"#,
        &["make\n"],
    ),
];

/// A workspace the samples can run in, and every built-in registered over
/// it, `run_command` and `process` included.
fn sample_registry(root: &Path) -> Registry {
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("notes.txt"), "one\ntwo\n").unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    let workspace = Workspace::builder(root).build().unwrap();
    let options = BuiltinOptions::default()
        .allow_delete(true)
        .commands(Some(CommandOptions::default()));
    let registry = Registry::new();
    for tool in builtin_tools(&workspace, &options) {
        registry.register_arc(tool).unwrap();
    }
    // Without a sandbox the command tools are left out, and this test
    // would no longer see them: that is a failure, not a pass.
    assert!(
        registry.has("run_command") && registry.has("process"),
        "the command tools are missing: the sandbox could not be built here"
    );
    registry
}

/// The paths and command lines (and their directories) effects name.
fn named_by(effects: &Effects) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for effect in effects.list() {
        names.extend(effect.paths().into_iter().map(str::to_owned));
        if let Effect::Command { command, cwd, .. } = effect {
            names.insert(command.clone());
            names.extend(cwd.clone());
        }
    }
    names
}

fn sample(name: &str) -> (Value, BTreeSet<String>) {
    let (_, args, names) = SAMPLES
        .iter()
        .find(|(tool, _, _)| *tool == name)
        .unwrap_or_else(|| {
            panic!("built-in `{name}` has no sample call in SAMPLES: add one, with what its effects name")
        });
    (
        serde_json::from_str(args).unwrap(),
        names.iter().map(|n| (*n).to_owned()).collect(),
    )
}

#[test]
fn every_builtin_declares_its_effects() {
    let dir = tempfile::tempdir().unwrap();
    let registry = sample_registry(dir.path());
    for (name, _, _) in SAMPLES {
        assert!(
            registry.has(name),
            "sample for `{name}`, which is not built in"
        );
    }
    for entry in registry.list() {
        let name = entry.name().to_owned();
        let (args, expected) = sample(&name);
        entry
            .validate(&args)
            .unwrap_or_else(|p| panic!("{name}: the sample is not valid: {p}"));
        let effects = entry
            .tool()
            .effects(&args)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            !effects.is_opaque(),
            "{name}: a built-in must declare its effects"
        );
        let annotations = &entry.spec().annotations;
        // The kinds on the spec agree with what a call declares: a tool
        // whose sample writes a file says it writes files (the prompt's
        // edit guidance follows that), and one that says every call runs
        // a command line declares exactly that.
        let writes = effects
            .list()
            .iter()
            .any(|e| matches!(e, Effect::Write { .. }));
        assert_eq!(
            annotations.writes_files, writes,
            "{name}: writes_files is {} but its sample declares {effects:?}",
            annotations.writes_files
        );
        // The rules read the command-line tools before any tool is built.
        assert_eq!(
            annotations.runs_commands,
            COMMAND_LINE_TOOLS.contains(&name.as_str()),
            "{name}: runs_commands and COMMAND_LINE_TOOLS disagree"
        );
        if annotations.runs_commands {
            assert!(
                !effects.list().is_empty()
                    && effects
                        .list()
                        .iter()
                        .all(|e| matches!(e, Effect::Command { .. })),
                "{name}: says every call runs a command line, but declares {effects:?}"
            );
        }
        let read_only = annotations.read_only();
        if read_only {
            assert!(
                effects.is_read_only(),
                "{name}: annotated read-only but declares {effects:?}"
            );
        }
        assert_eq!(named_by(&effects), expected, "{name}: {effects:?}");
    }
}

/// For every built-in whose sample changes files, what it declares is what
/// it does: each declared write's content is the file after the call, each
/// deleted file and each renamed one's old name is gone.
#[tokio::test]
async fn every_declared_change_is_what_run_does() {
    let mut writers = Vec::new();
    for (name, _, _) in SAMPLES {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let registry = sample_registry(root);
        let entry = registry.get(name).unwrap();
        let (args, _) = sample(name);
        let effects = entry.tool().effects(&args).unwrap();
        if !effects.list().iter().any(Effect::changes_files) {
            continue;
        }
        writers.push(*name);
        let result = entry.tool().execute(args, &ToolContext::new("t")).await;
        assert!(result.success, "{name}: {:?}", result.error);
        for effect in effects.list() {
            match effect {
                Effect::Write { path, change } => {
                    let content = change.content.as_deref().unwrap_or_else(|| {
                        panic!("{name}: the write of `{path}` declares no content")
                    });
                    assert_eq!(
                        std::fs::read_to_string(root.join(path)).unwrap(),
                        content,
                        "{name}: {path}"
                    );
                }
                Effect::Delete { path, .. } | Effect::Move { from: path, .. } => {
                    assert!(!root.join(path).exists(), "{name}: {path} is still there");
                }
                _ => {}
            }
        }
    }
    assert_eq!(
        writers,
        ["write_file", "delete_file", "edit_file", "apply_patch"]
    );
}
