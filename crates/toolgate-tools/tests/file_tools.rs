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
    let f = Fixture::new();
    f.put("a.txt", "a");
    let error = f.err("delete_file", json!({"path": "a.txt"})).await;
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
    let f = Fixture::new();
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
