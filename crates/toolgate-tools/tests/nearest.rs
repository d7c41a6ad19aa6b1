//! What a model is told when its guess is close but not right, over real
//! temporary workspaces: `search_code` is smart-case and says when matches
//! ignoring case exist; a missing path gets "did you mean" from the
//! workspace's files.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use serde_json::{Value, json};
use toolgate_core::{Registry, ToolContext, ToolResult, Workspace};
use toolgate_tools::{BuiltinOptions, builtin_tools};

/// A workspace holding `files`, and the built-in tools over it.
fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, Registry) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let workspace = Workspace::builder(dir.path()).build().unwrap();
    let registry = Registry::new();
    for tool in builtin_tools(&workspace, &BuiltinOptions::default()) {
        registry.register_arc(tool).unwrap();
    }
    (dir, registry)
}

async fn call(registry: &Registry, tool: &str, args: Value) -> ToolResult {
    let entry = registry.get(tool).unwrap();
    entry.validate(&args).unwrap();
    entry.tool().execute(args, &ToolContext::new("t")).await
}

/// The text a model reads: the output, or the error.
fn seen(result: &ToolResult) -> String {
    result.error.clone().map_or_else(
        || result.output.clone(),
        |e| format!("{e}\n{}", result.output),
    )
}

#[tokio::test]
async fn search_code_smart_case_table() {
    let (_dir, registry) = workspace(&[
        ("app.py", "PORT = 8472\nhost = 'localhost'\n"),
        ("notes.md", "The Port is set in app.py.\n"),
    ]);
    // (pattern, lines found, and what the answer says)
    let cases: &[(&str, &[&str], &str)] = &[
        // All lowercase: case is ignored.
        ("port", &["app.py:1", "notes.md:1"], ""),
        ("port = \\d+", &["app.py:1"], ""),
        // An uppercase letter: case matters.
        ("PORT", &["app.py:1"], ""),
        ("Port", &["notes.md:1"], ""),
        // Nothing with this case, something without: said so.
        (
            "Host",
            &[],
            "ignoring case, 1 line matches (first: `app.py:2`): write the pattern in lowercase",
        ),
        // `(?-i)` matches case even in lowercase.
        ("(?-i)port", &[], "no matches for pattern `(?-i)port`"),
        // Nothing either way: no such note.
        ("Absent", &[], "no matches for pattern `Absent`"),
    ];
    for (pattern, lines, says) in cases {
        let result = call(
            &registry,
            "search_code",
            json!({"pattern": pattern, "context_lines": 0}),
        )
        .await;
        assert!(result.success, "{pattern}: {result:?}");
        let text = seen(&result);
        let found: Vec<String> = text
            .lines()
            .filter(|l| !l.starts_with("no matches"))
            .map(|l| l.split(':').take(2).collect::<Vec<_>>().join(":"))
            .collect();
        assert_eq!(found, *lines, "{pattern}: {text}");
        assert!(text.contains(says), "{pattern}: {text}");
        if says.contains("Absent") {
            assert!(!text.contains("ignoring case"), "{pattern}: {text}");
        }
    }
    // grep keeps its own switch, and says how to ignore case.
    let result = call(
        &registry,
        "grep",
        json!({"pattern": "Host", "case_sensitive": true}),
    )
    .await;
    let text = seen(&result);
    assert!(text.contains("set case_sensitive=false"), "{text}");
}

#[tokio::test]
async fn did_you_mean_case_table() {
    let (_dir, registry) = workspace(&[
        ("cli.py", "print('hi')\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("src/lib.rs", "\n"),
        ("docs/guide.md", "# Guide\n"),
        ("config.yaml", "a: 1\n"),
        (".env", "SECRET=1\n"),
        (".git/config", "[core]\n"),
    ]);
    // (tool, arguments, the suggestion, or "" for none)
    let cases: &[(&str, Value, &str)] = &[
        // The same name elsewhere.
        (
            "read_file",
            json!({"path": "src/cli.py"}),
            "did you mean `cli.py`?",
        ),
        // A typo in the name.
        (
            "read_file",
            json!({"path": "src/mian.rs"}),
            "did you mean `src/main.rs`?",
        ),
        ("read_file", json!({"path": "config.yml"}), "`config.yaml`"),
        // Another case.
        (
            "read_file",
            json!({"path": "docs/Guide.md"}),
            "did you mean `docs/guide.md`?",
        ),
        // Paged reads too.
        (
            "read_file",
            json!({"path": "main.rs", "offset": 1}),
            "did you mean `src/main.rs`?",
        ),
        // A directory for list_files.
        (
            "list_files",
            json!({"path": "doc"}),
            "did you mean `docs/`?",
        ),
        // edit_file.
        (
            "edit_file",
            json!({"path": "lib.rs", "old_str": "a", "new_str": "b"}),
            "did you mean `src/lib.rs`?",
        ),
        // Nothing near: no suggestion. A sensitive file is never named,
        // nor what is inside .git.
        ("read_file", json!({"path": "zzzzqqq.txt"}), ""),
        ("read_file", json!({"path": "env"}), ""),
        ("read_file", json!({"path": "config"}), ""),
    ];
    for (tool, args, says) in cases {
        let result = call(&registry, tool, args.clone()).await;
        assert!(!result.success, "{tool} {args}");
        let text = seen(&result);
        assert!(text.contains("does not exist"), "{tool} {args}: {text}");
        if says.is_empty() {
            assert!(!text.contains("did you mean"), "{tool} {args}: {text}");
        } else {
            assert!(text.contains(says), "{tool} {args}: {text}");
        }
        assert!(!text.contains(".env"), "{text}");
        assert!(!text.contains(".git/"), "{text}");
    }
}
