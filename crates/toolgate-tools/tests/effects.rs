//! What the file and editing tools declare before they run, over a real
//! temporary workspace: exact effect lists for real patch texts, contents
//! and line counts of edits and writes, refusals with `run`'s own message,
//! and, for every change, the declared content against the file `run`
//! leaves.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::PathBuf;

use serde_json::{Value, json};
use toolgate_core::{
    Change, Effect, Effects, EffectsError, Registry, Tool, ToolContext, ToolResult, Workspace,
};
use toolgate_sandbox::Sandbox;
use toolgate_tools::editing::ApplyPatch;
use toolgate_tools::{BuiltinOptions, builtin_tools};

/// The files every fixture starts with.
const FILES: &[(&str, &str)] = &[
    ("one.txt", "a\nb\nc\n"),
    ("two.txt", "x\ny\n"),
    ("crlf.txt", "one\r\ntwo\r\nthree\r\n"),
    ("bom.txt", "\u{feff}alpha\nbeta\n"),
    ("café.txt", "caf\n"),
    ("x\ty", "tab\n"),
    ("toolgate.yaml", "confirmation: {mode: confirm-all}\n"),
];

struct Fixture {
    dir: tempfile::TempDir,
    registry: Registry,
}

impl Fixture {
    fn new() -> Self {
        Self::with(BuiltinOptions::default())
    }

    fn with(options: BuiltinOptions) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        for (name, text) in FILES {
            std::fs::write(dir.path().join("ws").join(name), text).unwrap();
        }
        let workspace = Workspace::builder(dir.path().join("ws")).build().unwrap();
        let registry = Registry::new();
        for tool in builtin_tools(&workspace, &options) {
            registry.register_arc(tool).unwrap();
        }
        Self { dir, registry }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    fn put(&self, name: &str, bytes: impl AsRef<[u8]>) {
        let path = self.root().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    fn effects(&self, tool: &str, args: &Value) -> Result<Vec<Effect>, String> {
        let entry = self.registry.get(tool).unwrap();
        entry
            .validate(args)
            .unwrap_or_else(|p| panic!("{tool} {args}: {p}"));
        match entry.tool().effects(args) {
            Ok(Effects::Known(list)) => Ok(list),
            Ok(other) => panic!("{tool} {args}: {other:?}"),
            Err(error) => Err(error.message().to_owned()),
        }
    }

    async fn call(&self, tool: &str, args: Value) -> ToolResult {
        let entry = self.registry.get(tool).unwrap();
        entry.tool().execute(args, &ToolContext::new("t")).await
    }

    /// Declares, runs, and checks that the files are as declared: each
    /// write's content is the file's, each deleted file and each renamed
    /// file's old name is gone. Returns the effects.
    async fn declared_is_done(&self, tool: &str, args: Value) -> Vec<Effect> {
        let effects = self
            .effects(tool, &args)
            .unwrap_or_else(|e| panic!("{tool} {args}: {e}"));
        let result = self.call(tool, args.clone()).await;
        assert!(result.success, "{tool} {args}: {:?}", result.error);
        for effect in &effects {
            match effect {
                Effect::Write { path, change } => {
                    let content = change
                        .content
                        .as_deref()
                        .unwrap_or_else(|| panic!("{tool} {args}: no content for `{path}`"));
                    let on_disk = std::fs::read(self.root().join(path)).unwrap();
                    assert_eq!(
                        String::from_utf8(on_disk).unwrap(),
                        content,
                        "{tool} {args}: {path}"
                    );
                }
                Effect::Delete { path, .. } | Effect::Move { from: path, .. } => {
                    assert!(!self.root().join(path).exists(), "{tool} {args}: {path}");
                }
                other => panic!("{tool} {args}: unexpected {other:?}"),
            }
        }
        effects
    }
}

fn write(path: &str, before: Option<&str>, after: &str) -> Effect {
    Effect::write(path, Change::from_texts(before, after))
}

fn counted(path: &str, added: usize, removed: usize, creates: bool) -> Effect {
    Effect::write(path, Change::counted(added, removed, creates))
}

/// A change that leaves `content`, with these counts.
fn change(content: &str, added: usize, removed: usize, creates: bool) -> Change {
    let mut change = Change::from_texts(None, content);
    change.lines_added = added;
    change.lines_removed = removed;
    change.creates = creates;
    change
}

fn moved(from: &str, to: &str) -> Effect {
    Effect::Move {
        from: from.to_owned(),
        to: to.to_owned(),
    }
}

fn deleted(path: &str, lines_removed: usize) -> Effect {
    Effect::Delete {
        path: path.to_owned(),
        lines_removed,
    }
}

const ABC: &str = "a\nb\nc\n";
const A_BIG_B_C: &str = "a\nB\nc\n";

/// Patches that apply, with exactly what they declare.
fn applying_patches() -> Vec<(&'static str, Value, Vec<Effect>)> {
    vec![
        (
            "unified, one file",
            json!({"patch": "--- a/one.txt\n+++ b/one.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"}),
            vec![write("one.txt", Some(ABC), A_BIG_B_C)],
        ),
        (
            "unified, two files, in patch order",
            json!({"patch": "--- a/two.txt\n+++ b/two.txt\n@@ -1,2 +1,3 @@\n x\n+x2\n y\n--- a/one.txt\n+++ b/one.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"}),
            vec![
                write("two.txt", Some("x\ny\n"), "x\nx2\ny\n"),
                write("one.txt", Some(ABC), A_BIG_B_C),
            ],
        ),
        (
            "unified, CRLF file kept CRLF",
            json!({"patch": "--- a/crlf.txt\n+++ b/crlf.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"}),
            vec![write(
                "crlf.txt",
                Some("one\r\ntwo\r\nthree\r\n"),
                "one\r\n2\r\nthree\r\n",
            )],
        ),
        (
            "unified, BOM kept",
            json!({"patch": "--- a/bom.txt\n+++ b/bom.txt\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+gamma\n"}),
            vec![write(
                "bom.txt",
                Some("\u{feff}alpha\nbeta\n"),
                "\u{feff}alpha\ngamma\n",
            )],
        ),
        (
            "unified, addition",
            json!({"patch": "--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1,2 @@\n+# New\n+text\n"}),
            vec![write("docs/new.md", None, "# New\ntext\n")],
        ),
        (
            "unified, deletion",
            json!({"patch": "--- a/two.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y\n"}),
            vec![deleted("two.txt", 2)],
        ),
        (
            "git, deleted file mode without hunks: the lines are the file's",
            json!({"patch": "diff --git a/one.txt b/one.txt\ndeleted file mode 100644\nindex 1234567..0000000\n"}),
            vec![deleted("one.txt", 3)],
        ),
        (
            "git rename without a change",
            json!({"patch": "diff --git a/one.txt b/src/renamed.txt\nsimilarity index 100%\nrename from one.txt\nrename to src/renamed.txt\n"}),
            vec![moved("one.txt", "src/renamed.txt")],
        ),
        (
            "git rename with a change",
            json!({"patch": "diff --git a/one.txt b/src/moved.txt\nsimilarity index 70%\nrename from one.txt\nrename to src/moved.txt\n--- a/one.txt\n+++ b/src/moved.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"}),
            vec![
                moved("one.txt", "src/moved.txt"),
                write("src/moved.txt", Some(ABC), A_BIG_B_C),
            ],
        ),
        (
            "C-quoted name with an octal escape",
            json!({"patch": "--- \"a/caf\\303\\251.txt\"\n+++ \"b/caf\\303\\251.txt\"\n@@ -1 +1 @@\n-caf\n+CAFE\n"}),
            vec![write("café.txt", Some("caf\n"), "CAFE\n")],
        ),
        (
            "C-quoted name with a tab",
            json!({"patch": "--- \"a/x\\ty\"\n+++ \"b/x\\ty\"\n@@ -1 +1 @@\n-tab\n+TAB\n"}),
            vec![write("x\ty", Some("tab\n"), "TAB\n")],
        ),
        (
            "two different header names: GNU patch's choice is updated, nothing moves",
            json!({"patch": "--- a/old/deep/one.txt\n+++ b/one.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"}),
            vec![write("one.txt", Some(ABC), A_BIG_B_C)],
        ),
        (
            "envelope: add, update with a move, delete",
            json!({"patch": "*** Begin Patch\n*** Add File: docs/new.md\n+# New\n*** Update File: one.txt\n*** Move to: dir/moved.txt\n@@\n a\n-b\n+bee\n*** Delete File: two.txt\n*** End Patch"}),
            vec![
                write("docs/new.md", None, "# New\n"),
                moved("one.txt", "dir/moved.txt"),
                write("dir/moved.txt", Some(ABC), "a\nbee\nc\n"),
                deleted("two.txt", 2),
            ],
        ),
        (
            "envelope: a move to the same name is an update",
            json!({"patch": "*** Begin Patch\n*** Update File: one.txt\n*** Move to: ./one.txt\n@@\n a\n-b\n+B\n*** End Patch"}),
            vec![write("one.txt", Some(ABC), A_BIG_B_C)],
        ),
        (
            "`path` with bare hunks",
            json!({"patch": "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", "path": "./one.txt"}),
            vec![write("one.txt", Some(ABC), A_BIG_B_C)],
        ),
        (
            "`path` overrides the headers and their rename",
            json!({"patch": "*** Begin Patch\n*** Update File: elsewhere.txt\n*** Move to: gone.txt\n@@\n x\n-y\n+Y\n*** End Patch", "path": "two.txt"}),
            vec![write("two.txt", Some("x\ny\n"), "x\nY\n")],
        ),
    ]
}

#[test]
fn apply_patch_declares_what_it_would_do() {
    let f = Fixture::with(BuiltinOptions::default().allow_delete(true));
    for (what, args, expected) in applying_patches() {
        assert_eq!(
            f.effects("apply_patch", &args),
            Ok(expected),
            "{what}: {args}"
        );
    }
}

#[tokio::test]
async fn apply_patch_writes_what_it_declared() {
    for (what, args, _) in applying_patches() {
        let f = Fixture::with(BuiltinOptions::default().allow_delete(true));
        let effects = f.declared_is_done("apply_patch", args).await;
        assert!(!effects.is_empty(), "{what}");
    }
}

/// Refusals of calls that could not run whatever the policy: the message is
/// exactly the one `run` gives, and nothing changed.
#[tokio::test]
async fn apply_patch_refuses_what_run_refuses_with_its_message() {
    let cases: &[(&str, Value, &str)] = &[
        (
            "does not parse",
            json!({"patch": "I changed the function.\n"}),
            "cannot parse the patch: the patch contains no file changes",
        ),
        (
            "wrong hunk counts",
            json!({"patch": "--- a/one.txt\n+++ b/one.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n c\n"}),
            "cannot parse the patch: hunk 1 of `one.txt` (line 3)",
        ),
        (
            "`path` with two files",
            json!({"patch": "--- a/one.txt\n+++ b/one.txt\n@@ -1 +1 @@\n-a\n+A\n--- a/two.txt\n+++ b/two.txt\n@@ -1 +1 @@\n-x\n+X\n", "path": "one.txt"}),
            "`path` can only be given with a patch of one file",
        ),
        // (Envelope blocks: GNU `patch` is no fallback for them, and the
        // fixture's `apply_patch` has it configured for unified hunks.)
        (
            "a block that does not match",
            json!({"patch": "*** Begin Patch\n*** Update File: one.txt\n@@\n p\n-q\n+Q\n*** End Patch"}),
            "`one.txt`: hunk 1 of `one.txt` does not match the file",
        ),
        (
            "the second file's block does not match",
            json!({"patch": "*** Begin Patch\n*** Update File: one.txt\n@@\n-a\n+A\n*** Update File: two.txt\n@@\n-nope\n+X\n*** End Patch"}),
            "`two.txt`: hunk 1 of `two.txt` does not match the file",
        ),
        (
            "a missing file",
            json!({"patch": "--- a/missing.txt\n+++ b/missing.txt\n@@ -1 +1 @@\n-a\n+b\n"}),
            "cannot patch `missing.txt`: the file does not exist",
        ),
        (
            "an addition over a file with content",
            json!({"patch": "--- /dev/null\n+++ b/one.txt\n@@ -0,0 +1 @@\n+new\n"}),
            "cannot add `one.txt`: the file already exists",
        ),
        (
            "a rename onto an existing file",
            json!({"patch": "*** Begin Patch\n*** Update File: one.txt\n*** Move to: two.txt\n@@\n a\n-b\n+B\n*** End Patch"}),
            "cannot move `one.txt` to `two.txt`: that file already exists",
        ),
    ];
    for (what, args, fragment) in cases {
        let f = Fixture::with(BuiltinOptions::default().allow_delete(true));
        let declared = f.effects("apply_patch", args).expect_err(what);
        assert!(declared.contains(fragment), "{what}: {declared}");
        let result = f.call("apply_patch", args.clone()).await;
        assert_eq!(result.error.as_deref(), Some(declared.as_str()), "{what}");
        for (name, text) in FILES {
            assert_eq!(
                std::fs::read_to_string(f.root().join(name)).unwrap(),
                *text,
                "{what}"
            );
        }
    }
}

/// Policy is the gate's and `run`'s to enforce: effects declare such
/// files, as far as the patch says, and never refuse them.
#[tokio::test]
async fn apply_patch_declares_what_the_policy_refuses() {
    let cases: &[(&str, Value, Vec<Effect>, &str)] = &[
        (
            "a rename onto a protected file names both ends",
            json!({"patch": "*** Begin Patch\n*** Update File: one.txt\n*** Move to: toolgate.yaml\n@@\n a\n-b\n+B\n*** End Patch"}),
            vec![
                moved("one.txt", "toolgate.yaml"),
                counted("toolgate.yaml", 1, 1, false),
            ],
            "protected-file pattern",
        ),
        (
            "a git rename onto a protected file",
            json!({"patch": "diff --git a/one.txt b/.git/hooks/pre-commit\nrename from one.txt\nrename to .git/hooks/pre-commit\n"}),
            vec![moved("one.txt", ".git/hooks/pre-commit")],
            "refusing to change `.git/hooks/pre-commit`",
        ),
        (
            "an update of a protected file",
            json!({"patch": "--- a/toolgate.yaml\n+++ b/toolgate.yaml\n@@ -1 +1 @@\n-confirmation: {mode: confirm-all}\n+confirmation: {mode: yolo}\n"}),
            vec![counted("toolgate.yaml", 1, 1, false)],
            "protected-file pattern",
        ),
        (
            "the addition of a sensitive file",
            json!({"patch": "--- /dev/null\n+++ b/.env\n@@ -0,0 +1 @@\n+KEY=1\n"}),
            vec![counted(".env", 1, 0, true)],
            "sensitive-file pattern",
        ),
        (
            "a path outside, as written",
            json!({"patch": "--- /dev/null\n+++ b/./../escape.txt\n@@ -0,0 +1 @@\n+x\n"}),
            vec![counted("../escape.txt", 1, 0, true)],
            "leaves the workspace",
        ),
        (
            "after a refused file, a file that cannot be planned is declared from the patch",
            json!({"patch": "--- /dev/null\n+++ b/.env\n@@ -0,0 +1 @@\n+KEY=1\n--- a/missing.txt\n+++ b/missing.txt\n@@ -1 +1,2 @@\n a\n+b\n"}),
            vec![
                counted(".env", 1, 0, true),
                counted("missing.txt", 1, 0, false),
            ],
            "sensitive-file pattern",
        ),
        (
            "a deletion where deleting is off, before a file that cannot be planned",
            json!({"patch": "*** Begin Patch\n*** Delete File: two.txt\n*** Update File: one.txt\n@@\n-nope\n+x\n*** End Patch"}),
            vec![deleted("two.txt", 2), counted("one.txt", 1, 1, false)],
            "deleting files is disabled",
        ),
    ];
    for (what, args, expected, refusal) in cases {
        let f = Fixture::new();
        assert_eq!(
            f.effects("apply_patch", args).as_ref(),
            Ok(expected),
            "{what}"
        );
        let result = f.call("apply_patch", args.clone()).await;
        let error = result.error.unwrap_or_default();
        assert!(error.contains(refusal), "{what}: {error}");
        assert!(f.root().join("one.txt").exists(), "{what}");
        assert!(!f.dir.path().join("escape.txt").exists(), "{what}");
    }
}

/// A hunk the built-in matcher cannot place is left to GNU `patch` by
/// `run`; effects start no process and declare the hunk's line counts.
#[tokio::test]
async fn apply_patch_declares_counts_for_what_only_gnu_patch_might_place() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "a\nb\nc\n").unwrap();
    let workspace = Workspace::builder(dir.path()).build().unwrap();
    let sandbox = Sandbox::builder(dir.path()).build().unwrap();
    let with_gnu = ApplyPatch::new(workspace.clone()).gnu_patch_in(sandbox);
    let without = ApplyPatch::new(workspace);
    let args = json!({"patch": "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,4 @@\n p\n-q\n+Q\n+R\n r\n"});
    assert_eq!(
        Tool::effects(&with_gnu, &args),
        Ok(Effects::known([counted("f.txt", 2, 1, false)]))
    );
    let error: EffectsError = Tool::effects(&without, &args).unwrap_err();
    assert!(
        error
            .message()
            .starts_with("`f.txt`: hunk 1 of `f.txt` does not match the file"),
        "{error}"
    );
    // The envelope has no GNU fallback: refused either way.
    let envelope =
        json!({"patch": "*** Begin Patch\n*** Update File: f.txt\n@@\n-q\n+Q\n*** End Patch"});
    assert!(Tool::effects(&with_gnu, &envelope).is_err());
    // Declaring started nothing and wrote nothing.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "a\nb\nc\n"
    );
}

#[tokio::test]
async fn edit_file_declares_the_content_it_writes() {
    // (file, old_str, new_str, replace_all, content after, lines added, removed)
    let cases: &[(&str, &str, &str, bool, &str, usize, usize)] = &[
        ("one.txt", "b\n", "B\nB2\n", false, "a\nB\nB2\nc\n", 2, 1),
        (
            "crlf.txt",
            "two\n",
            "2\nTWO\n",
            false,
            "one\r\n2\r\nTWO\r\nthree\r\n",
            2,
            1,
        ),
        (
            "bom.txt",
            "alpha",
            "ALPHA",
            false,
            "\u{feff}ALPHA\nbeta\n",
            1,
            1,
        ),
        ("two.txt", "\n", "!\n", true, "x!\ny!\n", 2, 2),
    ];
    for (file, old, new, all, after, added, removed) in cases {
        let f = Fixture::new();
        let args = json!({"path": file, "old_str": old, "new_str": new, "replace_all": all});
        let effects = f.declared_is_done("edit_file", args).await;
        let [Effect::Write { path, change }] = &effects[..] else {
            panic!("{file}: {effects:?}");
        };
        assert_eq!(path, file);
        assert_eq!(change.content.as_deref(), Some(*after), "{file}");
        assert_eq!(
            (change.lines_added, change.lines_removed, change.creates),
            (*added, *removed, false),
            "{file}"
        );
    }
}

#[tokio::test]
async fn edit_file_refuses_what_run_refuses_with_its_message() {
    let f = Fixture::new();
    f.put("dup.txt", "x\nx\n");
    f.put("bin.dat", b"a\0b");
    let cases: &[(Value, &str)] = &[
        (
            json!({"path": "one.txt", "old_str": "zzz", "new_str": "y"}),
            "cannot edit `one.txt`: `old_str` was not found in the file",
        ),
        (
            json!({"path": "dup.txt", "old_str": "x", "new_str": "y"}),
            "cannot edit `dup.txt`: `old_str` occurs 2 times in the file",
        ),
        (
            json!({"path": "one.txt", "old_str": "a", "new_str": "a"}),
            "`old_str` and `new_str` are identical",
        ),
        (
            json!({"path": "missing.txt", "old_str": "a", "new_str": "b"}),
            "path `missing.txt` does not exist",
        ),
        (
            json!({"path": "bin.dat", "old_str": "a", "new_str": "b"}),
            "`bin.dat` is a binary file",
        ),
    ];
    for (args, fragment) in cases {
        let declared = f.effects("edit_file", args).expect_err("must refuse");
        assert!(declared.contains(fragment), "{args}: {declared}");
        let result = f.call("edit_file", args.clone()).await;
        assert_eq!(result.error.as_deref(), Some(declared.as_str()), "{args}");
    }
    assert_eq!(std::fs::read(f.root().join("dup.txt")).unwrap(), b"x\nx\n");
}

#[tokio::test]
async fn edit_file_declares_what_the_policy_refuses() {
    let f = Fixture::new();
    let cases: &[(Value, Effect, &str)] = &[
        (
            json!({"path": "./toolgate.yaml", "old_str": "confirm-all", "new_str": "yolo"}),
            counted("toolgate.yaml", 1, 1, false),
            "protected-file pattern",
        ),
        (
            json!({"path": ".env", "old_str": "A=1\n", "new_str": "A=2\nB=3\n"}),
            counted(".env", 2, 1, false),
            "sensitive-file pattern",
        ),
        (
            json!({"path": "../../etc/hosts", "old_str": "a", "new_str": "b"}),
            counted("../../etc/hosts", 1, 1, false),
            "leaves the workspace",
        ),
    ];
    for (args, expected, refusal) in cases {
        assert_eq!(
            f.effects("edit_file", args),
            Ok(vec![expected.clone()]),
            "{args}"
        );
        let error = f.call("edit_file", args.clone()).await.error.unwrap();
        assert!(error.contains(refusal), "{args}: {error}");
    }
}

#[tokio::test]
async fn write_file_declares_the_content_it_leaves() {
    // (file, content, mode, content after, lines added, removed, creates)
    let cases: &[(&str, &str, &str, &str, usize, usize, bool)] = &[
        ("one.txt", "a\nB\n", "overwrite", "a\nB\n", 1, 2, false),
        ("new/deep.txt", "n\n", "overwrite", "n\n", 1, 0, true),
        ("one.txt", "d\n", "append", "a\nb\nc\nd\n", 1, 0, false),
        (
            "crlf.txt",
            "four\r\n",
            "append",
            "one\r\ntwo\r\nthree\r\nfour\r\n",
            1,
            0,
            false,
        ),
        (
            "bom.txt",
            "\u{feff}alpha\nBETA\n",
            "overwrite",
            "\u{feff}alpha\nBETA\n",
            1,
            1,
            false,
        ),
        ("appended.txt", "first\n", "append", "first\n", 1, 0, true),
    ];
    for (file, content, mode, after, added, removed, creates) in cases {
        let f = Fixture::new();
        // A last line without its newline: an append continues it.
        f.put("open.txt", "a\nb");
        let args = json!({"path": file, "content": content, "mode": mode});
        let effects = f.declared_is_done("write_file", args).await;
        assert_eq!(
            effects,
            [Effect::write(
                *file,
                change(after, *added, *removed, *creates)
            )],
            "{file} {mode}"
        );
    }
    let f = Fixture::new();
    f.put("open.txt", "a\nb");
    let effects = f
        .declared_is_done(
            "write_file",
            json!({"path": "open.txt", "content": "c\n", "mode": "append"}),
        )
        .await;
    assert_eq!(effects, [write("open.txt", Some("a\nb"), "a\nbc\n")]);
}

#[tokio::test]
async fn write_file_over_a_file_it_cannot_read_declares_what_it_knows() {
    let f = Fixture::new();
    f.put("latin1.txt", b"caf\xe9\nx\n");
    f.put(".env", "K=1\n");
    let cases: &[(Value, Effect)] = &[
        (
            json!({"path": "latin1.txt", "content": "cafe\n"}),
            Effect::write("latin1.txt", change("cafe\n", 1, 2, false)),
        ),
        (
            json!({"path": "latin1.txt", "content": "y\n", "mode": "append"}),
            counted("latin1.txt", 1, 0, false),
        ),
        (
            json!({"path": ".env", "content": "K=2\n"}),
            Effect::write(".env", change("K=2\n", 1, 0, false)),
        ),
        (
            json!({"path": "/etc/motd", "content": "hi\n", "mode": "append"}),
            counted("/etc/motd", 1, 0, false),
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(
            f.effects("write_file", args),
            Ok(vec![expected.clone()]),
            "{args}"
        );
    }
    // The overwrite of a file that is not UTF-8 still declares its content,
    // and that is what it leaves.
    f.declared_is_done(
        "write_file",
        json!({"path": "latin1.txt", "content": "cafe\n"}),
    )
    .await;
}

#[tokio::test]
async fn write_file_refuses_a_directory_with_runs_message() {
    let f = Fixture::new();
    std::fs::create_dir(f.root().join("dir")).unwrap();
    for path in ["dir", ".", "./"] {
        let args = json!({"path": path, "content": "x"});
        let declared = f.effects("write_file", &args).expect_err(path);
        assert!(declared.contains("is a directory"), "{declared}");
        let result = f.call("write_file", args).await;
        assert_eq!(result.error.as_deref(), Some(declared.as_str()), "{path}");
    }
}

#[tokio::test]
async fn delete_file_declares_the_lines_it_removes() {
    let f = Fixture::with(BuiltinOptions::default().allow_delete(true));
    f.put("open.txt", "a\nb");
    let cases: &[(&str, Effect)] = &[
        ("./one.txt", deleted("one.txt", 3)),
        ("open.txt", deleted("open.txt", 2)),
        ("x\ty", deleted("x\ty", 1)),
        // Not for effects to read: the count is unknown.
        (".env", deleted(".env", 0)),
        ("../outside.txt", deleted("../outside.txt", 0)),
    ];
    for (path, expected) in cases {
        assert_eq!(
            f.effects("delete_file", &json!({"path": path})),
            Ok(vec![expected.clone()]),
            "{path}"
        );
    }
    f.declared_is_done("delete_file", json!({"path": "one.txt"}))
        .await;
}

#[test]
fn read_and_search_tools_declare_reads() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.root().join("src/deep")).unwrap();
    f.put("src/deep/lib.rs", "fn main() {}\n");
    let cases: &[(&str, Value, Effect)] = &[
        (
            "read_file",
            json!({"path": "./one.txt"}),
            Effect::read("one.txt"),
        ),
        ("read_file", json!({"path": ".env"}), Effect::read(".env")),
        (
            "read_file",
            json!({"path": "../secret.txt"}),
            Effect::read("../secret.txt"),
        ),
        ("list_files", json!({}), Effect::read_tree(".")),
        (
            "list_files",
            json!({"path": "src/deep/../deep"}),
            Effect::read_tree("src/deep"),
        ),
        (
            "search_code",
            json!({"pattern": "fn"}),
            Effect::read_tree("."),
        ),
        (
            "search_code",
            json!({"pattern": "fn", "path": "src/deep/lib.rs"}),
            Effect::read("src/deep/lib.rs"),
        ),
        (
            "grep",
            json!({"pattern": "a", "path": "./one.txt"}),
            Effect::read("one.txt"),
        ),
        (
            "grep",
            json!({"pattern": "a", "path": "src"}),
            Effect::read_tree("src"),
        ),
        (
            "find_files",
            json!({"pattern": "*.rs", "path": "/"}),
            Effect::read_tree("/"),
        ),
    ];
    for (tool, args, expected) in cases {
        assert_eq!(
            f.effects(tool, args),
            Ok(vec![expected.clone()]),
            "{tool} {args}"
        );
    }
    let nul = f.effects("read_file", &json!({"path": "a\u{0}b"}));
    assert!(nul.unwrap_err().contains("NUL byte"));
}
