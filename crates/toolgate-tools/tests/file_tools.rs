//! The file and editing tools over a real temporary workspace, called as the
//! gate calls them: schema validation, then `execute`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use serde_json::{Value, json};
use toolgate_core::{Registry, ToolContext, ToolResult, Workspace};
use toolgate_tools::{BuiltinOptions, builtin_tools};

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

    fn outside(&self) -> PathBuf {
        self.dir.path().to_owned()
    }

    fn put(&self, name: &str, bytes: impl AsRef<[u8]>) {
        let path = self.root().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    fn get(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.root().join(name)).unwrap()
    }

    async fn call(&self, tool: &str, args: Value) -> ToolResult {
        let entry = self.registry.get(tool).unwrap();
        entry
            .validate(&args)
            .unwrap_or_else(|p| panic!("{tool} {args}: {p}"));
        entry.tool().execute(args, &ToolContext::new("t")).await
    }

    async fn ok(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args.clone()).await;
        assert!(result.success, "{tool} {args}: {:?}", result.error);
        result.output
    }

    async fn err(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args.clone()).await;
        assert!(
            !result.success,
            "{tool} {args} should fail: {}",
            result.output
        );
        result.error.unwrap()
    }
}

#[tokio::test]
async fn read_file_cases() {
    let f = Fixture::with(BuiltinOptions::default().max_file_size(64));
    f.put("a.txt", "one\ntwo\nthree\n");
    f.put("big.txt", "x\n".repeat(100));
    f.put("bin.dat", b"\x7fELF\0\0\x01");
    f.put("latin1.txt", b"caf\xe9\n");
    f.put(".env", "KEY=1\n");
    std::fs::create_dir(f.root().join("dir")).unwrap();
    std::fs::write(f.outside().join("secret.txt"), "outside\n").unwrap();
    std::os::unix::fs::symlink(f.outside().join("secret.txt"), f.root().join("link-out")).unwrap();

    assert_eq!(
        f.ok("read_file", json!({"path": "a.txt"})).await,
        "one\ntwo\nthree\n"
    );
    assert_eq!(
        f.ok(
            "read_file",
            json!({"path": "a.txt", "offset": 2, "limit": 1})
        )
        .await,
        "     2\ttwo\n… lines 2–2 of 3; continue with offset=3"
    );
    assert_eq!(
        f.ok("read_file", json!({"path": "a.txt", "offset": 2}))
            .await,
        "     2\ttwo\n     3\tthree\n"
    );
    let absolute = f.root().join("a.txt").display().to_string();
    assert_eq!(
        f.ok("read_file", json!({"path": absolute})).await,
        "one\ntwo\nthree\n"
    );

    let cases: &[(Value, &str)] = &[
        (
            json!({"path": "big.txt"}),
            "over the 64 bytes limit for reading a file whole; read it in pages with offset and limit",
        ),
        (
            json!({"path": "a.txt", "offset": 9}),
            "has 3 lines; offset 9 is past the end",
        ),
        (
            json!({"path": "bin.dat"}),
            "`bin.dat` is a binary file (7 bytes)",
        ),
        (json!({"path": "latin1.txt"}), "is not valid UTF-8"),
        (
            json!({"path": "dir"}),
            "`dir` is a directory; use list_files",
        ),
        (json!({"path": "missing.txt"}), "missing.txt"),
        (json!({"path": ".env"}), "sensitive-file pattern `.env*`"),
        (json!({"path": "../secret.txt"}), "leaves the workspace"),
        (json!({"path": "link-out"}), "link-out"),
        (json!({"path": "/etc/passwd"}), "leaves the workspace"),
        // A trailing slash names a directory (regression: `a.txt/` read
        // the file).
        (
            json!({"path": "a.txt/"}),
            "`a.txt` is a file, not a directory",
        ),
        (
            json!({"path": "a.txt/."}),
            "`a.txt` is a file, not a directory",
        ),
        (
            json!({"path": "dir/"}),
            "`dir` is a directory; use list_files",
        ),
    ];
    for (args, fragment) in cases {
        let error = f.err("read_file", args.clone()).await;
        assert!(error.contains(fragment), "{args}: {error}");
    }
    // Paging reads files over the whole-file limit.
    let page = f
        .ok("read_file", json!({"path": "big.txt", "offset": 99}))
        .await;
    assert_eq!(page, "    99\tx\n   100\tx\n");
}

#[tokio::test]
async fn write_file_cases() {
    let f = Fixture::new();
    let out = f
        .ok(
            "write_file",
            json!({"path": "deep/new/file.txt", "content": "hi\n"}),
        )
        .await;
    assert_eq!(out, "created `deep/new/file.txt` (3 bytes written)");
    assert_eq!(f.get("deep/new/file.txt"), b"hi\n");

    f.put("kept.sh", "old");
    std::fs::set_permissions(
        f.root().join("kept.sh"),
        std::fs::Permissions::from_mode(0o754),
    )
    .unwrap();
    f.ok("write_file", json!({"path": "kept.sh", "content": "new"}))
        .await;
    assert_eq!(f.get("kept.sh"), b"new");
    let mode = std::fs::metadata(f.root().join("kept.sh"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o754, "an overwrite keeps the file's permissions");

    f.ok(
        "write_file",
        json!({"path": "kept.sh", "content": "+more", "mode": "append"}),
    )
    .await;
    assert_eq!(f.get("kept.sh"), b"new+more");

    assert!(
        f.err("write_file", json!({"path": "deep", "content": "x"}))
            .await
            .contains("is a directory")
    );
    assert!(
        f.err("write_file", json!({"path": ".env.local", "content": "x"}))
            .await
            .contains("sensitive")
    );
    assert!(
        f.err(
            "write_file",
            json!({"path": "../escape.txt", "content": "x"})
        )
        .await
        .contains("leaves the workspace")
    );
    assert!(!f.outside().join("escape.txt").exists());
    // A trailing slash names a directory (regression: `newdir/` created a
    // file `newdir`).
    let cases: &[(Value, &str)] = &[
        (
            json!({"path": "newdir/", "content": "x"}),
            "path `newdir/` ends with `/`: a file path cannot end with a slash",
        ),
        (
            json!({"path": "kept.sh/", "content": "x"}),
            "path `kept.sh/` ends with `/`: a file path cannot end with a slash",
        ),
        (
            json!({"path": "fresh/", "content": "x", "mode": "append"}),
            "a file path cannot end with a slash",
        ),
    ];
    for (args, fragment) in cases {
        let error = f.err("write_file", args.clone()).await;
        assert!(error.contains(fragment), "{args}: {error}");
    }
    assert!(!f.root().join("newdir").exists());
    assert!(!f.root().join("fresh").exists());
    assert_eq!(f.get("kept.sh"), b"new+more");
    let leftovers: Vec<_> = std::fs::read_dir(f.root())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        2,
        "no temp files left behind: {leftovers:?}"
    );
}

#[tokio::test]
async fn delete_file_only_when_allowed() {
    // Not allowed: not offered at all, and a `DeleteFile` made anyway
    // refuses.
    let f = Fixture::new();
    f.put("a.txt", "a");
    assert!(f.registry.get("delete_file").is_err());
    let workspace = Workspace::builder(f.root()).build().unwrap();
    let refusing = toolgate_tools::fs::DeleteFile::new(workspace, false);
    let result =
        toolgate_core::Tool::execute(&refusing, json!({"path": "a.txt"}), &ToolContext::new("t"))
            .await;
    let error = result.error.unwrap();
    assert!(error.contains("workspace.allow_delete: true"), "{error}");
    assert!(f.root().join("a.txt").exists());

    let f = Fixture::with(BuiltinOptions::default().allow_delete(true));
    f.put("a.txt", "a");
    f.put("sub/b.txt", "b");
    assert_eq!(
        f.ok("delete_file", json!({"path": "a.txt"})).await,
        "deleted `a.txt`"
    );
    assert!(!f.root().join("a.txt").exists());
    assert!(
        f.err("delete_file", json!({"path": "sub"}))
            .await
            .contains("sub")
    );
    assert!(f.root().join("sub/b.txt").exists());
    f.put(".ssh/id_rsa", "k");
    assert!(
        f.err("delete_file", json!({"path": ".ssh/id_rsa"}))
            .await
            .contains("sensitive")
    );
}

#[tokio::test]
async fn list_files_cases() {
    let f = Fixture::new();
    for name in [
        "b.py",
        "a.md",
        "src/main.rs",
        "src/bin/tool.rs",
        "docs/x.md",
        ".git/HEAD",
        ".hidden",
    ] {
        f.put(name, "x");
    }
    std::fs::create_dir(f.outside().join("elsewhere")).unwrap();
    std::fs::write(f.outside().join("elsewhere/leak.txt"), "x").unwrap();
    std::os::unix::fs::symlink(f.outside().join("elsewhere"), f.root().join("out-dir")).unwrap();
    std::os::unix::fs::symlink(f.root().join("src"), f.root().join("src-link")).unwrap();

    assert_eq!(
        f.ok("list_files", json!({})).await,
        ".hidden\na.md\nb.py\ndocs/\nsrc-link/\nsrc/"
    );
    assert_eq!(
        f.ok("list_files", json!({"path": "src"})).await,
        "src/bin/\nsrc/main.rs"
    );
    let all = f.ok("list_files", json!({"recursive": true})).await;
    assert!(!all.contains(".git") && !all.contains("leak.txt"), "{all}");
    assert!(
        all.contains("src/bin/tool.rs") && all.contains("docs/x.md"),
        "{all}"
    );
    assert_eq!(
        f.ok("list_files", json!({"recursive": true, "pattern": "*.md"}))
            .await,
        "a.md\ndocs/x.md"
    );
    assert_eq!(
        f.ok(
            "list_files",
            json!({"recursive": true, "pattern": "src/*.rs"})
        )
        .await,
        "src/main.rs"
    );
    assert!(
        f.ok("list_files", json!({"pattern": "*.zig"}))
            .await
            .starts_with("no files in `.` match")
    );
    assert!(
        f.err("list_files", json!({"path": "b.py"}))
            .await
            .contains("is a file")
    );
    assert!(
        f.err("list_files", json!({"path": "b.py/"}))
            .await
            .contains("is a file, not a directory")
    );
    assert_eq!(
        f.ok("list_files", json!({"path": "src/"})).await,
        "src/bin/\nsrc/main.rs"
    );
    assert!(
        f.err("list_files", json!({"path": "out-dir"}))
            .await
            .contains("out-dir")
    );
}

#[tokio::test]
async fn edit_file_cases() {
    let f = Fixture::new();
    f.put("crlf.txt", "\u{feff}fn a() {\r\n    1\r\n}\r\n");
    let out = f
        .ok(
            "edit_file",
            json!({"path": "crlf.txt", "old_str": "    1\n", "new_str": "    2\n    3\n"}),
        )
        .await;
    assert!(
        out.starts_with("edited `crlf.txt` at line 2 (+2 -1)\n--- a/crlf.txt\n+++ b/crlf.txt\n"),
        "{out}"
    );
    assert_eq!(
        f.get("crlf.txt"),
        "\u{feff}fn a() {\r\n    2\r\n    3\r\n}\r\n".as_bytes(),
        "BOM and CRLF kept"
    );

    f.put("dup.txt", "aaa\n");
    let before = f.get("dup.txt");
    let cases: &[(Value, &str)] = &[
        (
            json!({"path": "dup.txt", "old_str": "aa", "new_str": "b"}),
            "occurs 2 times",
        ),
        (
            json!({"path": "dup.txt", "old_str": "zzz", "new_str": "b"}),
            "was not found",
        ),
        (
            json!({"path": "dup.txt", "old_str": "", "new_str": "b"}),
            "`old_str` is empty",
        ),
        (
            json!({"path": "dup.txt", "old_str": "aaa", "new_str": "aaa"}),
            "identical",
        ),
        (
            json!({"path": "nope.txt", "old_str": "a", "new_str": "b"}),
            "nope.txt",
        ),
        (
            json!({"path": ".env", "old_str": "a", "new_str": "b"}),
            "sensitive",
        ),
    ];
    for (args, fragment) in cases {
        let error = f.err("edit_file", args.clone()).await;
        assert!(error.contains(fragment), "{args}: {error}");
        assert_eq!(f.get("dup.txt"), before, "a failed edit changes nothing");
    }
    let out = f
        .ok(
            "edit_file",
            json!({"path": "dup.txt", "old_str": "a", "new_str": "b", "replace_all": true}),
        )
        .await;
    assert!(out.starts_with("edited `dup.txt` in 3 places"), "{out}");
    assert_eq!(f.get("dup.txt"), b"bbb\n");

    f.put("near.py", "def total(a, b):\n    return a + b\n");
    let error = f
        .err(
            "edit_file",
            json!({"path": "near.py", "old_str": "def total(a,b):", "new_str": "x"}),
        )
        .await;
    assert!(
        error.contains("def total(a, b):") && error.contains('1'),
        "the hint shows the nearest line: {error}"
    );
}

#[tokio::test]
async fn apply_patch_cases() {
    let f = Fixture::with(BuiltinOptions::default().allow_delete(true));
    f.put("one.txt", "a\nb\nc\n");
    f.put("two.txt", "x\r\ny\r\nz\r\n");
    let multi = "--- a/one.txt\n+++ b/one.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n--- a/two.txt\n+++ b/two.txt\n@@ -1,3 +1,3 @@\n x\n-y\n+Y\n z\n";
    let out = f.ok("apply_patch", json!({"patch": multi})).await;
    assert!(
        out.contains("updated `one.txt`: 1 hunk applied (+1 -1)"),
        "{out}"
    );
    assert_eq!(f.get("one.txt"), b"a\nB\nc\n");
    assert_eq!(f.get("two.txt"), b"x\r\nY\r\nz\r\n", "CRLF kept");

    // All or nothing: the second file's hunk cannot be placed, so the first
    // file is not touched either.
    let broken = "--- a/one.txt\n+++ b/one.txt\n@@ -1,3 +1,3 @@\n a\n-B\n+b\n c\n--- a/two.txt\n+++ b/two.txt\n@@ -1,3 +1,3 @@\n q\n-r\n+s\n t\n";
    let error = f.err("apply_patch", json!({"patch": broken})).await;
    assert!(
        error.contains("two.txt")
            && error.contains("hunk 1")
            && error.contains("no file was changed"),
        "{error}"
    );
    assert_eq!(f.get("one.txt"), b"a\nB\nc\n");

    let envelope = "*** Begin Patch\n*** Add File: docs/new.md\n+# New\n*** Update File: one.txt\n*** Move to: moved.txt\n@@\n a\n-B\n+bee\n*** Delete File: two.txt\n*** End Patch";
    let out = f.ok("apply_patch", json!({"patch": envelope})).await;
    assert!(
        out.contains("added `docs/new.md`")
            && out.contains("moved to `moved.txt`")
            && out.contains("deleted `two.txt`"),
        "{out}"
    );
    assert_eq!(f.get("docs/new.md"), b"# New\n");
    assert_eq!(f.get("moved.txt"), b"a\nbee\nc\n");
    assert!(!f.root().join("one.txt").exists() && !f.root().join("two.txt").exists());
    assert!(out.contains("--- /dev/null\n+++ b/docs/new.md"), "{out}");

    // `path` redirects a one-file patch.
    let out = f
        .ok(
            "apply_patch",
            json!({"patch": "@@ -1 +1 @@\n-a\n+A\n", "path": "moved.txt"}),
        )
        .await;
    assert!(out.contains("updated `moved.txt`"), "{out}");
    assert_eq!(f.get("moved.txt"), b"A\nbee\nc\n");

    let cases: &[(Value, &str)] = &[
        (json!({"patch": "   \n"}), "empty"),
        (
            json!({"patch": multi, "path": "x.txt"}),
            "`path` can only be given with a patch of one file",
        ),
        (
            json!({"patch": "--- a/missing.txt\n+++ b/missing.txt\n@@ -1 +1 @@\n-a\n+b\n"}),
            "does not exist",
        ),
        (
            json!({"patch": "--- /dev/null\n+++ b/.env\n@@ -0,0 +1 @@\n+K=1\n"}),
            "sensitive",
        ),
        (
            json!({"patch": "--- /dev/null\n+++ b/../../escape.txt\n@@ -0,0 +1 @@\n+x\n"}),
            "leaves the workspace",
        ),
        (
            json!({"patch": "*** Begin Patch\n*** Update File: docs/new.md\n*** Move to: moved.txt\n@@\n-# New\n+# Old\n*** End Patch"}),
            "already exists",
        ),
    ];
    for (args, fragment) in cases {
        let error = f.err("apply_patch", args.clone()).await;
        assert!(error.to_lowercase().contains(fragment), "{args}: {error}");
    }
    assert!(!f.outside().join("escape.txt").exists());
    assert_eq!(f.get("docs/new.md"), b"# New\n");
}

/// Files under 64 KiB are read inline; bigger ones (whole, or paged) go to
/// the blocking pool. Both paths return the same text.
#[tokio::test]
async fn read_file_over_the_inline_size_is_read_whole_and_paged() {
    let f = Fixture::with(BuiltinOptions::default());
    let line = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n";
    let big = line.repeat(2048); // 128 KiB
    f.put("big.txt", big.as_str());
    f.put("small.txt", line);
    assert_eq!(f.ok("read_file", json!({"path": "big.txt"})).await, big);
    assert_eq!(f.ok("read_file", json!({"path": "small.txt"})).await, line);
    let page = f
        .ok(
            "read_file",
            json!({"path": "big.txt", "offset": 2048, "limit": 1}),
        )
        .await;
    assert!(page.starts_with("  2048\t0123456789abcdef"), "{page}");
}

/// Every file and directory under `root`, with file contents: nothing of it
/// may change when a call is refused.
fn snapshot(root: &std::path::Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            if meta.is_dir() {
                stack.push(path);
                out.push((rel, None));
            } else if meta.is_file() {
                out.push((rel, Some(std::fs::read(&path).unwrap())));
            } else {
                out.push((rel, None));
            }
        }
    }
    out.sort();
    out
}

/// `(tool, arguments, the protected pattern named in the refusal)`;
/// `{ws}` is the workspace's absolute path.
const PROTECTED_CALLS: &[(&str, &str, &str)] = &[
    (
        "write_file",
        r#"{"path": "toolgate.yaml", "content": "x"}"#,
        "/toolgate.yaml",
    ),
    (
        "write_file",
        r#"{"path": "./toolgate.yaml", "content": "x"}"#,
        "/toolgate.yaml",
    ),
    (
        "write_file",
        r#"{"path": "sub/../toolgate.yaml", "content": "x"}"#,
        "/toolgate.yaml",
    ),
    (
        "write_file",
        r#"{"path": "{ws}/toolgate.yaml", "content": "x"}"#,
        "/toolgate.yaml",
    ),
    (
        "write_file",
        r#"{"path": "link.yaml", "content": "x"}"#,
        "/toolgate.yaml",
    ),
    (
        "write_file",
        r#"{"path": "toolgate.yaml", "content": "x", "mode": "append"}"#,
        "/toolgate.yaml",
    ),
    (
        "write_file",
        r#"{"path": "link.yaml", "content": "x", "mode": "append"}"#,
        "/toolgate.yaml",
    ),
    (
        "write_file",
        r#"{"path": "g/config", "content": "x"}"#,
        "/.git/config",
    ),
    (
        "write_file",
        r#"{"path": ".git/config", "content": "x", "mode": "append"}"#,
        "/.git/config",
    ),
    (
        "write_file",
        r#"{"path": ".git/hooks/pre-commit", "content": "x"}"#,
        "/.git/hooks",
    ),
    (
        "write_file",
        r#"{"path": ".git/hooks/post-merge", "content": "x"}"#,
        "/.git/hooks",
    ),
    (
        "write_file",
        r#"{"path": "g/hooks/post-merge", "content": "x"}"#,
        "/.git/hooks",
    ),
    (
        "write_file",
        r#"{"path": ".toolgate/x", "content": "x"}"#,
        "/.toolgate",
    ),
    (
        "write_file",
        r#"{"path": ".toolgate/new/deep.db", "content": "x"}"#,
        "/.toolgate",
    ),
    (
        "edit_file",
        r#"{"path": "toolgate.yaml", "old_str": "CFG", "new_str": "x"}"#,
        "/toolgate.yaml",
    ),
    (
        "edit_file",
        r#"{"path": "link.yaml", "old_str": "CFG", "new_str": "x"}"#,
        "/toolgate.yaml",
    ),
    (
        "edit_file",
        r#"{"path": "g/config", "old_str": "GIT", "new_str": "x"}"#,
        "/.git/config",
    ),
    (
        "edit_file",
        r#"{"path": ".git/hooks/pre-commit", "old_str": "HOOK", "new_str": "x"}"#,
        "/.git/hooks",
    ),
    (
        "delete_file",
        r#"{"path": "toolgate.yaml"}"#,
        "/toolgate.yaml",
    ),
    (
        "delete_file",
        r#"{"path": "./sub/../toolgate.yaml"}"#,
        "/toolgate.yaml",
    ),
    (
        "delete_file",
        r#"{"path": ".git/hooks/pre-commit"}"#,
        "/.git/hooks",
    ),
    ("delete_file", r#"{"path": "g/config"}"#, "/.git/config"),
    ("delete_file", r#"{"path": ".toolgate/x"}"#, "/.toolgate"),
    (
        "apply_patch",
        r#"{"patch": "--- a/toolgate.yaml\n+++ b/toolgate.yaml\n@@ -1 +1 @@\n-CFG\n+x\n"}"#,
        "/toolgate.yaml",
    ),
    (
        "apply_patch",
        r#"{"patch": "--- a/link.yaml\n+++ b/link.yaml\n@@ -1 +1 @@\n-CFG\n+x\n"}"#,
        "/toolgate.yaml",
    ),
    (
        "apply_patch",
        r#"{"patch": "@@ -1 +1 @@\n-CFG\n+x\n", "path": "toolgate.yaml"}"#,
        "/toolgate.yaml",
    ),
    (
        "apply_patch",
        r#"{"patch": "--- /dev/null\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1 @@\n+x\n"}"#,
        "/.git/hooks",
    ),
    (
        "apply_patch",
        r#"{"patch": "--- a/toolgate.yaml\n+++ /dev/null\n@@ -1 +0,0 @@\n-CFG\n"}"#,
        "/toolgate.yaml",
    ),
    (
        "apply_patch",
        r#"{"patch": "*** Begin Patch\n*** Add File: .toolgate/evil\n+x\n*** End Patch"}"#,
        "/.toolgate",
    ),
    (
        "apply_patch",
        r#"{"patch": "*** Begin Patch\n*** Delete File: g/config\n*** End Patch"}"#,
        "/.git/config",
    ),
    (
        "apply_patch",
        r#"{"patch": "*** Begin Patch\n*** Update File: toolgate.yaml\n*** Move to: cfg.yaml\n@@\n-CFG\n+CFG\n*** End Patch"}"#,
        "/toolgate.yaml",
    ),
    (
        "apply_patch",
        r#"{"patch": "*** Begin Patch\n*** Update File: a.txt\n*** Move to: .git/hooks/pre-push\n@@\n-A\n+x\n*** End Patch"}"#,
        "/.git/hooks",
    ),
    (
        "apply_patch",
        r#"{"patch": "diff --git a/a.txt b/toolgate.yaml\nsimilarity index 100%\nrename from a.txt\nrename to toolgate.yaml\n"}"#,
        "/toolgate.yaml",
    ),
    // All or nothing: the first file is fine, the second is protected.
    (
        "apply_patch",
        r#"{"patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-A\n+x\n--- a/g/hooks/pre-commit\n+++ b/g/hooks/pre-commit\n@@ -1 +1 @@\n-HOOK\n+x\n"}"#,
        "/.git/hooks",
    ),
];

#[tokio::test]
async fn protected_files_are_refused_by_every_file_tool() {
    let f = Fixture::with(BuiltinOptions::default().allow_delete(true));
    f.put("toolgate.yaml", "CFG\n");
    f.put(".toolgate/x", "AUDIT\n");
    f.put(".git/config", "GIT\n");
    f.put(".git/hooks/pre-commit", "HOOK\n");
    f.put("a.txt", "A\n");
    std::fs::create_dir(f.root().join("sub")).unwrap();
    std::os::unix::fs::symlink("toolgate.yaml", f.root().join("link.yaml")).unwrap();
    std::os::unix::fs::symlink(".git", f.root().join("g")).unwrap();
    let before = snapshot(&f.root());
    let root = f.root().display().to_string();
    let mut failures = Vec::new();
    for (tool, args, pattern) in PROTECTED_CALLS {
        let args: Value = serde_json::from_str(&args.replace("{ws}", &root)).unwrap();
        let result = f.call(tool, args.clone()).await;
        let error = result.error.unwrap_or_default();
        let expected = format!(
            "protected-file pattern `{pattern}`; it is a policy file that only the user edits"
        );
        if result.success || !error.contains(&expected) {
            failures.push(format!("{tool} {args}: {error}{}", result.output));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(
        snapshot(&f.root()),
        before,
        "a refused call changed the tree"
    );

    // Reading, listing and searching them is allowed.
    assert_eq!(
        f.ok("read_file", json!({"path": "link.yaml"})).await,
        "CFG\n"
    );
    assert_eq!(
        f.ok("read_file", json!({"path": "g/config"})).await,
        "GIT\n"
    );
    assert!(
        f.ok("list_files", json!({}))
            .await
            .contains("toolgate.yaml")
    );
    assert!(
        f.ok("grep", json!({"pattern": "CFG"}))
            .await
            .starts_with("toolgate.yaml:1:")
    );
}

#[tokio::test]
async fn protected_files_cannot_be_created_where_they_do_not_exist() {
    let f = Fixture::new();
    std::os::unix::fs::symlink(".git", f.root().join("g")).unwrap();
    let cases: &[(&str, &str)] = &[
        ("toolgate.yaml", "/toolgate.yaml"),
        (".toolgate", "/.toolgate"),
        (".toolgate/sessions.db", "/.toolgate"),
        (".git/config", "/.git/config"),
        (".git/hooks/pre-commit", "/.git/hooks"),
        ("g/config", "/.git/config"),
    ];
    for (path, pattern) in cases {
        for mode in ["overwrite", "append"] {
            let error = f
                .err(
                    "write_file",
                    json!({"path": path, "content": "x", "mode": mode}),
                )
                .await;
            assert!(
                error.contains(&format!("pattern `{pattern}`")),
                "{path} {mode}: {error}"
            );
        }
        let patch = format!("--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x\n");
        let error = f.err("apply_patch", json!({"patch": patch})).await;
        assert!(
            error.contains(&format!("pattern `{pattern}`")),
            "{path} patch: {error}"
        );
    }
    // Nothing was created, not even a parent directory.
    let mut left: Vec<_> = std::fs::read_dir(f.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["g"]);
}

/// The configured `guardrails.protected_files` reach the workspace through
/// `WorkspaceBuilder::protected_patterns` (as the CLI wires them).
#[tokio::test]
async fn configured_protected_patterns_are_refused_too() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Cargo.lock"), "LOCK\n").unwrap();
    let workspace = Workspace::builder(dir.path())
        .protected_patterns(
            toolgate_core::DEFAULT_PROTECTED_PATTERNS
                .iter()
                .copied()
                .chain(["Cargo.lock"]),
        )
        .build()
        .unwrap();
    let tool = builtin_tools(&workspace, &BuiltinOptions::default())
        .into_iter()
        .find(|t| t.name() == "write_file")
        .unwrap();
    for path in ["Cargo.lock", "toolgate.yaml", "vendor/Cargo.lock"] {
        let result = tool
            .execute(
                json!({"path": path, "content": "x"}),
                &ToolContext::new("t"),
            )
            .await;
        assert!(!result.success, "{path}");
        assert!(
            result.error.unwrap().contains("protected-file pattern"),
            "{path}"
        );
    }
    assert_eq!(
        std::fs::read(dir.path().join("Cargo.lock")).unwrap(),
        b"LOCK\n"
    );
}

/// A hard link inside the workspace to a file outside: no tool writes
/// through it.
#[tokio::test]
async fn writes_through_a_hard_link_leave_the_outside_file_unchanged() {
    let f = Fixture::with(BuiltinOptions::default().allow_delete(true));
    let outside = f.outside().join("victim.txt");
    std::fs::write(&outside, "OUTSIDE\n").unwrap();
    let calls: &[(&str, &str, Value)] = &[
        (
            "append.txt",
            "write_file",
            json!({"path": "append.txt", "content": "PWNED\n", "mode": "append"}),
        ),
        (
            "write.txt",
            "write_file",
            json!({"path": "write.txt", "content": "PWNED\n"}),
        ),
        (
            "edit.txt",
            "edit_file",
            json!({"path": "edit.txt", "old_str": "OUTSIDE", "new_str": "PWNED"}),
        ),
        (
            "patch.txt",
            "apply_patch",
            json!({"patch": "--- a/patch.txt\n+++ b/patch.txt\n@@ -1 +1,2 @@\n OUTSIDE\n+PWNED\n"}),
        ),
        ("delete.txt", "delete_file", json!({"path": "delete.txt"})),
    ];
    for (name, tool, args) in calls {
        std::fs::hard_link(&outside, f.root().join(name)).unwrap();
        f.ok(tool, args.clone()).await;
        assert_eq!(
            std::fs::read(&outside).unwrap(),
            b"OUTSIDE\n",
            "{tool} {name}"
        );
    }
    assert_eq!(f.get("append.txt"), b"OUTSIDE\nPWNED\n");
    assert_eq!(f.get("edit.txt"), b"PWNED\n");
    assert_eq!(f.get("patch.txt"), b"OUTSIDE\nPWNED\n");
}

/// `(patch, the file it deletes)`: every form of deletion the parser knows.
const DELETING_PATCHES: &[(&str, &str)] = &[
    ("--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-A\n", "a.txt"),
    (
        "--- a.txt\t2024-01-01 10:00:00\n+++ a.txt\t1970-01-01 00:00:00\n@@ -1 +0,0 @@\n-A\n",
        "a.txt",
    ),
    (
        "diff --git a/a.txt b/a.txt\ndeleted file mode 100644\nindex 1234567..0000000\n--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-A\n",
        "a.txt",
    ),
    (
        "diff --git a/empty.txt b/empty.txt\ndeleted file mode 100644\nindex e69de29..0000000\n",
        "empty.txt",
    ),
    (
        "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch",
        "a.txt",
    ),
    (
        "*** Begin Patch\n*** Update File: b.txt\n@@\n-B\n+b\n*** Delete File: sub/c.txt\n*** End Patch",
        "sub/c.txt",
    ),
    (
        "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-B\n+b\n--- a/sub/c.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-C\n",
        "sub/c.txt",
    ),
];

#[tokio::test]
async fn apply_patch_deletions_obey_allow_delete() {
    for allow in [false, true] {
        for (patch, deleted) in DELETING_PATCHES {
            let f = Fixture::with(BuiltinOptions::default().allow_delete(allow));
            f.put("a.txt", "A\n");
            f.put("b.txt", "B\n");
            f.put("sub/c.txt", "C\n");
            f.put("empty.txt", "");
            let before = snapshot(&f.root());
            let result = f.call("apply_patch", json!({"patch": patch})).await;
            if allow {
                assert!(result.success, "{patch}: {:?}", result.error);
                assert!(!f.root().join(deleted).exists(), "{patch}");
            } else {
                let error = result.error.unwrap_or_default();
                assert!(
                    error.contains(&format!("this patch deletes `{deleted}`"))
                        && error.contains("`workspace.allow_delete` is false")
                        && error.contains("no file was changed"),
                    "{patch}: {error}"
                );
                assert_eq!(snapshot(&f.root()), before, "{patch}");
            }
        }
    }
    // A rename is not a deletion: allowed without `allow_delete`.
    let f = Fixture::new();
    f.put("a.txt", "A\n");
    f.put("b.txt", "B\n");
    let renames = [
        "diff --git a/a.txt b/a2.txt\nsimilarity index 100%\nrename from a.txt\nrename to a2.txt\n",
        "*** Begin Patch\n*** Update File: b.txt\n*** Move to: b2.txt\n@@\n-B\n+B2\n*** End Patch",
    ];
    for patch in renames {
        f.ok("apply_patch", json!({"patch": patch})).await;
    }
    assert_eq!(f.get("a2.txt"), b"A\n");
    assert_eq!(f.get("b2.txt"), b"B2\n");
    assert!(!f.root().join("a.txt").exists() && !f.root().join("b.txt").exists());
}

#[tokio::test]
async fn read_file_pages_are_bounded_in_bytes() {
    // The 64-byte budget: `     1\t` (7) + 56 bytes of text + `\n`.
    let f = Fixture::with(BuiltinOptions::default().max_file_size(64));
    let fits = "a".repeat(56);
    let over = "b".repeat(57);
    f.put("fits.txt", format!("{fits}\n"));
    f.put("over.txt", format!("{over}\n"));
    f.put("two.txt", format!("x\n{fits}\n"));
    f.put("lines.txt", "0123456789\n".repeat(20));
    f.put("crlf.txt", "é".repeat(40) + "\r\nz\r\n");
    let page = |path: &str, offset: usize, column: Option<usize>| {
        let mut args = json!({"path": path, "offset": offset});
        if let Some(column) = column {
            args["column"] = json!(column);
        }
        args
    };
    // (arguments, whole expected output)
    let cases: Vec<(Value, String)> = vec![
        (page("fits.txt", 1, None), format!("     1\t{fits}\n")),
        (
            page("over.txt", 1, None),
            format!(
                "     1\t{}\n… line 1 is 57 bytes long; this page shows bytes 1–56 of it \
                 (the 64 bytes per-call limit); read on with offset=1 column=57\n",
                "b".repeat(56)
            ),
        ),
        (page("over.txt", 1, Some(57)), "     1\tb\n".to_owned()),
        (
            page("two.txt", 1, None),
            "     1\tx\n… lines 1–1 of 2 (the 64 bytes per-call limit); continue with offset=2"
                .to_owned(),
        ),
        (page("two.txt", 2, None), format!("     2\t{fits}\n")),
        (
            page("lines.txt", 1, None),
            "     1\t0123456789\n     2\t0123456789\n     3\t0123456789\n\
             … lines 1–3 of 20 (the 64 bytes per-call limit); continue with offset=4"
                .to_owned(),
        ),
        (
            page("lines.txt", 19, None),
            "    19\t0123456789\n    20\t0123456789\n".to_owned(),
        ),
        // 28 characters of two bytes fit in 56; the cut never splits one.
        (
            page("crlf.txt", 1, None),
            format!(
                "     1\t{}\n… line 1 is 81 bytes long; this page shows bytes 1–56 of it \
                 (the 64 bytes per-call limit); read on with offset=1 column=57\n",
                "é".repeat(28)
            ),
        ),
        (
            page("crlf.txt", 1, Some(57)),
            format!("     1\t{}\n     2\tz\n", "é".repeat(12)),
        ),
    ];
    for (args, expected) in &cases {
        assert_eq!(&f.ok("read_file", args.clone()).await, expected, "{args}");
    }
    let result = f.call("read_file", page("over.txt", 1, None)).await;
    assert_eq!(result.metadata["truncated"], true);
    assert_eq!(
        result.metadata["cut"],
        json!({"line": 1, "line_bytes": 57, "next_column": 57})
    );
    let result = f.call("read_file", page("fits.txt", 1, None)).await;
    assert_eq!(result.metadata["truncated"], false);
    assert_eq!(result.metadata["cut"], Value::Null);
    for (args, fragment) in [
        (
            page("fits.txt", 1, Some(58)),
            "line 1 of `fits.txt` is 56 bytes long; column 58 is past its end",
        ),
        (
            page("fits.txt", 2, None),
            "has 1 lines; offset 2 is past the end",
        ),
    ] {
        let error = f.err("read_file", args.clone()).await;
        assert!(error.contains(fragment), "{args}: {error}");
    }
}

/// The file of the report: one 48 MiB line. A page of it is at most
/// `max_file_size` (1 MiB by default) plus the note, and the note leads to
/// the rest of the line.
#[tokio::test]
async fn read_file_cuts_a_huge_single_line() {
    let f = Fixture::new();
    let size: usize = 48 * 1024 * 1024;
    {
        use std::io::Write as _;
        let mut file = std::fs::File::create(f.root().join("huge.min.js")).unwrap();
        let chunk = "x".repeat(1024 * 1024);
        for _ in 0..47 {
            file.write_all(chunk.as_bytes()).unwrap();
        }
        file.write_all(&chunk.as_bytes()[..1024 * 1024 - 3])
            .unwrap();
        file.write_all(b"END").unwrap();
    }
    let error = f.err("read_file", json!({"path": "huge.min.js"})).await;
    assert!(error.contains("read it in pages"), "{error}");

    let result = f
        .call("read_file", json!({"path": "huge.min.js", "offset": 1}))
        .await;
    assert!(result.success, "{:?}", result.error);
    assert!(
        result.output.len() <= 1024 * 1024 + 200,
        "{}",
        result.output.len()
    );
    assert!(
        result.output.ends_with(&format!(
            "… line 1 is {size} bytes long; this page shows bytes 1–1048568 of it \
             (the 1.0 MiB per-call limit); read on with offset=1 column=1048569\n"
        )),
        "{}",
        &result.output[result.output.len() - 200..]
    );
    assert_eq!(result.metadata["total_lines"], 1);
    assert_eq!(result.metadata["cut"]["line_bytes"], size);

    let tail = f
        .ok(
            "read_file",
            json!({"path": "huge.min.js", "offset": 1, "column": size - 4}),
        )
        .await;
    assert_eq!(tail, "     1\txxEND\n");
}

#[tokio::test]
async fn list_files_hides_sensitive_entries_and_says_so() {
    let f = Fixture::new();
    for name in [
        "app.py",
        ".env",
        ".env.local",
        "keys/server.pem",
        "keys/README.md",
        ".ssh/id_ed25519",
        "credentials/prod.json",
    ] {
        f.put(name, "x");
    }
    std::os::unix::fs::symlink(".env", f.root().join("notes.txt")).unwrap();
    let cases: &[(Value, &str)] = &[
        (
            json!({}),
            ".ssh/\napp.py\nkeys/\n(4 sensitive entries are hidden: sensitive files are off limits)",
        ),
        (
            json!({"recursive": true}),
            "app.py\nkeys/README.md\n(6 sensitive entries are hidden: sensitive files are off limits)",
        ),
        (
            json!({"path": "keys"}),
            "keys/README.md\n(1 sensitive entry is hidden: sensitive files are off limits)",
        ),
        (
            json!({"pattern": ".env*"}),
            "no files in `.` match the pattern; 2 sensitive entries are hidden: sensitive files are off limits",
        ),
        (
            json!({"path": ".ssh", "recursive": true}),
            "no files in `.ssh`; 1 sensitive entry is hidden: sensitive files are off limits",
        ),
        (json!({"pattern": "*.py"}), "app.py"),
    ];
    for (args, expected) in cases {
        assert_eq!(f.ok("list_files", args.clone()).await, *expected, "{args}");
    }
}

/// A listing streams: past 2000 entries, or 256 KiB of names, entries are
/// only counted, and the output says how many were left out.
#[tokio::test]
async fn list_files_keeps_the_first_entries_and_counts_the_rest() {
    let f = Fixture::new();
    let many = f.root().join("many");
    std::fs::create_dir(&many).unwrap();
    for i in 0..2100 {
        std::fs::File::create(many.join(format!("f{i:05}"))).unwrap();
    }
    std::fs::create_dir(many.join("sub")).unwrap();
    for recursive in [false, true] {
        let result = f
            .call(
                "list_files",
                json!({"path": "many", "recursive": recursive}),
            )
            .await;
        let lines: Vec<&str> = result.output.lines().collect();
        let total = if recursive { 2100 } else { 2101 };
        assert_eq!(lines.len(), 2001, "recursive: {recursive}");
        assert_eq!(lines[0], "many/f00000");
        assert_eq!(lines[1999], "many/f01999");
        assert_eq!(
            lines[2000],
            format!(
                "… {} more entries not shown; narrow the listing with `path` or `pattern`",
                total - 2000
            )
        );
        assert_eq!(result.metadata["count"], total);
        assert_eq!(result.metadata["truncated"], true);
    }

    // Long paths (about 500 bytes): the byte limit ends the listing first.
    let deep = f.root().join("deep").join("d".repeat(250));
    std::fs::create_dir_all(&deep).unwrap();
    for i in 0..600 {
        std::fs::File::create(deep.join(format!("{i:04}{}", "n".repeat(240)))).unwrap();
    }
    for recursive in [false, true] {
        let path = if recursive { "deep" } else { "deep/ddd" };
        let path = path.replace("ddd", &"d".repeat(250));
        let out = f
            .ok("list_files", json!({"path": path, "recursive": recursive}))
            .await;
        assert!(out.len() < 256 * 1024 + 1024, "{}", out.len());
        let shown = out.lines().count() - 1;
        assert!(shown < 600, "{shown}");
        assert!(
            out.ends_with(&format!(
                "… {} more entries not shown (the 256 KiB output limit); \
                 narrow the listing with `path` or `pattern`",
                600 - shown
            )),
            "{}",
            &out[out.len() - 200..]
        );
    }
}
