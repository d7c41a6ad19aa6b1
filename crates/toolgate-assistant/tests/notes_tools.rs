//! The notes tools through the gate, over a real `SQLite` store.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions: a panic is a test failure"
)]

use std::sync::Arc;

use serde_json::{Value, json};
use toolgate_assistant::notes::{self, NotesConfig};
use toolgate_core::{Registry, ToolCall};
use toolgate_engine::{Decision, Execution, ExecutionEngine};
use toolgate_policy::{ConfirmationMode, ConfirmationPolicy};
use toolgate_store::{NoteStore, SqliteStore};

struct Fixture {
    _dir: tempfile::TempDir,
    store: Arc<SqliteStore>,
    /// The default gate: confirm-sensitive, nobody to ask.
    gate: ExecutionEngine,
    /// A gate that never asks.
    yolo: ExecutionEngine,
}

fn fixture(config: &NotesConfig) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(dir.path().join("toolgate.db")).unwrap());
    let registry = Registry::new();
    for tool in notes::tools(config, Arc::clone(&store) as Arc<dyn NoteStore>) {
        registry.register_arc(tool).unwrap();
    }
    let registry = Arc::new(registry);
    Fixture {
        _dir: dir,
        store,
        gate: ExecutionEngine::builder(Arc::clone(&registry)).build(),
        yolo: ExecutionEngine::builder(registry)
            .policy(ConfirmationPolicy::new(ConfirmationMode::Yolo))
            .build(),
    }
}

fn enabled() -> NotesConfig {
    NotesConfig {
        enabled: true,
        ..NotesConfig::default()
    }
}

async fn call(gate: &ExecutionEngine, tool: &str, args: Value) -> Execution {
    gate.execute(ToolCall::new("n", tool, args)).await
}

/// A call that must succeed; its output.
async fn ok(gate: &ExecutionEngine, tool: &str, args: Value) -> (String, Value) {
    let out = call(gate, tool, args.clone()).await;
    assert_eq!(out.decision, Decision::Executed, "{tool} {args}");
    assert!(out.result.success, "{tool} {args}: {:?}", out.result.error);
    assert!(out.effects.list().is_empty(), "{tool}: {:?}", out.effects);
    (out.result.output, Value::Object(out.result.metadata))
}

/// A call that must fail in the tool; its error.
async fn refused(gate: &ExecutionEngine, tool: &str, args: Value) -> String {
    let out = call(gate, tool, args.clone()).await;
    assert!(!out.result.success, "{tool} {args}: {}", out.result.output);
    out.result.error.unwrap()
}

#[tokio::test]
async fn notes_crud_and_search_through_the_gate() {
    let f = fixture(&enabled());
    let (text, meta) = ok(
        &f.gate,
        "create_note",
        json!({"title": "  Shopping list ", "body": "milk\nbread"}),
    )
    .await;
    let shopping = meta["note"]["id"].as_i64().unwrap();
    assert_eq!(text, format!("Saved note #{shopping} \"Shopping list\"."));
    let (_, meta) = ok(
        &f.gate,
        "create_note",
        json!({"title": "Dentist", "body": "Tuesday 10:00, Dr. Núñez"}),
    )
    .await;
    let dentist = meta["note"]["id"].as_i64().unwrap();

    // Stored for real: the store itself has them.
    assert_eq!(f.store.count_notes().await.unwrap(), 2);

    let (text, meta) = ok(&f.gate, "list_notes", json!({})).await;
    assert_eq!(meta["total"], 2);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "2 note(s); showing 2 from 1:");
    assert!(
        lines[1].starts_with(&format!("#{dentist} Dentist (")),
        "{text}"
    );
    assert!(lines[1].ends_with("— Tuesday 10:00, Dr. Núñez"), "{text}");
    assert!(
        lines[2].starts_with(&format!("#{shopping} Shopping list (")),
        "{text}"
    );
    let (text, _) = ok(&f.gate, "list_notes", json!({"limit": 1})).await;
    assert!(text.ends_with("(more: call again with offset 1)"), "{text}");

    let (_, _) = ok(
        &f.gate,
        "update_note",
        json!({"id": shopping, "append": "eggs"}),
    )
    .await;
    let (text, _) = ok(&f.gate, "get_note", json!({"id": shopping})).await;
    assert!(text.starts_with(&format!("#{shopping} Shopping list\ncreated ")));
    assert!(text.ends_with("\n\nmilk\nbread\neggs"), "{text}");

    let (text, meta) = ok(&f.gate, "search_notes", json!({"query": "nunez"})).await;
    assert_eq!(meta["ids"], json!([dentist]));
    assert!(text.contains("[Núñez]"), "{text}");
    let (_, meta) = ok(&f.gate, "search_notes", json!({"query": "egg"})).await;
    assert_eq!(meta["ids"], json!([shopping]));
    let (text, meta) = ok(&f.gate, "search_notes", json!({"query": "zebra"})).await;
    assert_eq!(meta["ids"], json!([]));
    assert!(text.starts_with("No note matches"), "{text}");

    // Deleting asks first: with nobody to ask, it does not happen.
    let out = call(&f.gate, "delete_note", json!({"id": dentist})).await;
    assert_eq!(out.decision, Decision::NoApprover);
    assert!(f.store.note(dentist).await.unwrap().is_some());
    let (text, _) = ok(&f.yolo, "delete_note", json!({"id": dentist})).await;
    assert_eq!(text, format!("Deleted note #{dentist} \"Dentist\"."));
    assert!(f.store.note(dentist).await.unwrap().is_none());

    let error = refused(&f.yolo, "delete_note", json!({"id": dentist})).await;
    assert!(error.starts_with(&format!("there is no note #{dentist}")));
    let error = refused(&f.gate, "get_note", json!({"id": 999})).await;
    assert!(error.contains("`search_notes`"), "{error}");
}

#[tokio::test]
async fn bad_input_is_refused_before_anything_is_stored() {
    let f = fixture(&NotesConfig {
        max_title_chars: 10,
        max_body_chars: 20,
        ..enabled()
    });
    let (_, meta) = ok(
        &f.gate,
        "create_note",
        json!({"title": "kept", "body": "0123456789"}),
    )
    .await;
    let id = meta["note"]["id"].as_i64().unwrap();
    let cases: &[(&str, Value, &str)] = &[
        ("create_note", json!({"title": "  "}), "the title is empty"),
        (
            "create_note",
            json!({"title": "a\nb"}),
            "the title must be one line",
        ),
        (
            "create_note",
            json!({"title": "eleven chars"}),
            "the title is 12 characters; at most 10",
        ),
        (
            "create_note",
            json!({"title": "t", "body": "x".repeat(21)}),
            "the body is 21 characters; a note holds at most 20",
        ),
        ("update_note", json!({"id": id}), "nothing to change"),
        (
            "update_note",
            json!({"id": id, "append": "0123456789"}),
            "the note would hold 21 characters",
        ),
        (
            "update_note",
            json!({"id": 999, "title": "x"}),
            "there is no note #999",
        ),
        (
            "search_notes",
            json!({"query": "?!"}),
            "no words to search for",
        ),
    ];
    for (tool, args, message) in cases {
        let error = refused(&f.gate, tool, args.clone()).await;
        assert!(error.contains(message), "{tool} {args}: {error}");
    }
    // Unknown arguments never reach the tool.
    let out = call(&f.gate, "create_note", json!({"title": "x", "tags": ["a"]})).await;
    assert_eq!(out.decision, Decision::InvalidArguments);

    assert_eq!(f.store.count_notes().await.unwrap(), 1);
    let note = f.store.note(id).await.unwrap().unwrap();
    assert_eq!(
        (note.title.as_str(), note.body.as_str()),
        ("kept", "0123456789")
    );
}

#[test]
fn a_disabled_group_has_no_tools() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(dir.path().join("toolgate.db")).unwrap());
    assert!(notes::tools(&NotesConfig::default(), store).is_empty());
}
