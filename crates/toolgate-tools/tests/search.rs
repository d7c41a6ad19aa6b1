//! The search tools over real temporary workspaces, called as the gate calls
//! them: schema validation, then `execute`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::os::unix::fs::symlink;
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
        Self::with(|_| {})
    }

    fn with(configure: impl FnOnce(&mut toolgate_core::WorkspaceBuilder)) -> Self {
        Self::with_root(|builder, _| configure(builder))
    }

    /// [`with`](Self::with), for a configuration that names the root.
    fn with_root(
        configure: impl FnOnce(&mut toolgate_core::WorkspaceBuilder, &std::path::Path),
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        let mut builder = Workspace::builder(dir.path().join("ws"));
        configure(&mut builder, &dir.path().join("ws"));
        let workspace = builder.build().unwrap();
        let registry = Registry::new();
        for tool in builtin_tools(&workspace, &BuiltinOptions::default()) {
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
async fn search_code_shows_matches_with_context_grouped_by_file() {
    let f = Fixture::new();
    f.put(
        "src/lib.rs",
        "fn one() {}\nfn two() {}\nlet a = validate_path(x);\nfn three() {}\nfn four() {}\nfn five() {}\n\
         fn six() {}\nlet b = validate_path(y);\nfn seven() {}\n",
    );
    f.put("src/main.rs", "use lib::validate_path;\n");
    f.put("README.md", "nothing here\n");

    let out = f
        .ok(
            "search_code",
            json!({"pattern": r"validate_\w+\(", "context_lines": 1}),
        )
        .await;
    assert_eq!(
        out,
        "src/lib.rs-2- fn two() {}\n\
         src/lib.rs:3: let a = validate_path(x);\n\
         src/lib.rs-4- fn three() {}\n\
         --\n\
         src/lib.rs-7- fn six() {}\n\
         src/lib.rs:8: let b = validate_path(y);\n\
         src/lib.rs-9- fn seven() {}"
    );

    // Default context is 2 lines; a file match without context needs no `--`.
    let result = f
        .call(
            "search_code",
            json!({"pattern": "validate_path", "context_lines": 0}),
        )
        .await;
    assert_eq!(
        result.output,
        "src/lib.rs:3: let a = validate_path(x);\nsrc/lib.rs:8: let b = validate_path(y);\nsrc/main.rs:1: use lib::validate_path;"
    );
    let meta = &result.metadata;
    assert_eq!(meta["total_matches"], 3);
    assert_eq!(meta["files_searched"], 3);
    assert_eq!(meta["files_matched"], 2);
    assert_eq!(meta["truncated"], false);
    assert_eq!(
        meta["matches"][2],
        json!({"path": "src/main.rs", "line": 1, "text": "use lib::validate_path;"})
    );

    let none = f
        .ok("search_code", json!({"pattern": "no_such_thing"}))
        .await;
    assert!(
        none.starts_with("no matches for pattern `no_such_thing` in `.` (3 files searched)"),
        "{none}"
    );
}

#[tokio::test]
async fn grep_is_literal_and_can_ignore_case() {
    let f = Fixture::new();
    f.put("a.txt", "call a.b(c) here\nnot axb(c)\nA.B(C) shouting\n");

    // Regex metacharacters match themselves: `.` is not any character.
    let out = f.ok("grep", json!({"pattern": "a.b(c)"})).await;
    assert_eq!(out, "a.txt:1: call a.b(c) here");
    let out = f
        .ok(
            "grep",
            json!({"pattern": "a.b(c)", "case_sensitive": false}),
        )
        .await;
    assert_eq!(out, "a.txt:1: call a.b(c) here\na.txt:3: A.B(C) shouting");
    // The same text as a regex is a different search.
    let out = f
        .ok(
            "search_code",
            json!({"pattern": "a.b\\(c\\)", "context_lines": 0}),
        )
        .await;
    // (search_code is smart-case: a pattern in lowercase ignores case.)
    assert_eq!(
        out,
        "a.txt:1: call a.b(c) here\na.txt:2: not axb(c)\na.txt:3: A.B(C) shouting"
    );
    // `(?i)` ignores case whatever the pattern's case.
    let out = f
        .ok(
            "search_code",
            json!({"pattern": "(?i)shouting", "context_lines": 0}),
        )
        .await;
    assert_eq!(out, "a.txt:3: A.B(C) shouting");
    // Text that is not a valid regex is fine for grep.
    assert!(
        f.ok("grep", json!({"pattern": "b(c"}))
            .await
            .contains("a.txt:1:")
    );
}

#[tokio::test]
async fn globs_filter_files_by_name_or_by_path() {
    let f = Fixture::new();
    for name in [
        "a.py",
        "src/b.py",
        "src/deep/c.py",
        "src/d.rs",
        "tests/test_e.py",
        "README.md",
    ] {
        f.put(name, "needle\n");
    }
    let grep = |pattern: &str| json!({"pattern": "needle", "file_pattern": pattern});

    let out = f.ok("grep", grep("*.py")).await;
    assert_eq!(
        out,
        "a.py:1: needle\nsrc/b.py:1: needle\nsrc/deep/c.py:1: needle\ntests/test_e.py:1: needle"
    );
    // With `/`, the glob is over the workspace-relative path; `*` stays in
    // one directory, `**` does not.
    assert_eq!(f.ok("grep", grep("src/*.py")).await, "src/b.py:1: needle");
    assert_eq!(
        f.ok("grep", grep("src/**/*.py")).await,
        "src/b.py:1: needle\nsrc/deep/c.py:1: needle"
    );
    assert_eq!(
        f.ok(
            "search_code",
            json!({"pattern": "needle", "file_pattern": "*.{rs,md}", "context_lines": 0})
        )
        .await,
        "README.md:1: needle\nsrc/d.rs:1: needle"
    );
    // Not recursive: only the files directly in `path`.
    assert_eq!(
        f.ok(
            "grep",
            json!({"pattern": "needle", "path": "src", "recursive": false})
        )
        .await,
        "src/b.py:1: needle\nsrc/d.rs:1: needle"
    );

    assert_eq!(
        f.ok("find_files", json!({"pattern": "*.py"})).await,
        "a.py\nsrc/b.py\nsrc/deep/c.py\ntests/test_e.py"
    );
    assert_eq!(
        f.ok("find_files", json!({"pattern": "test_*.py"})).await,
        "tests/test_e.py"
    );
    assert_eq!(
        f.ok("find_files", json!({"pattern": "src/*"})).await,
        "src/b.py\nsrc/d.rs"
    );
    assert_eq!(
        f.ok("find_files", json!({"pattern": "**/deep/*.py"})).await,
        "src/deep/c.py"
    );
    assert_eq!(
        f.ok(
            "find_files",
            json!({"pattern": "*.py", "path": "src", "recursive": false})
        )
        .await,
        "src/b.py"
    );
    let none = f.ok("find_files", json!({"pattern": "*.yaml"})).await;
    assert!(none.starts_with("no files match `*.yaml` in `.`"), "{none}");
    assert!(
        f.err("find_files", json!({"pattern": "[a"}))
            .await
            .contains("invalid glob `[a`")
    );
}

#[tokio::test]
async fn ignore_files_are_respected_unless_include_ignored() {
    let f = Fixture::new();
    // Not a git repository: the ignore files count anyway.
    f.put(".gitignore", "target/\n*.log\n");
    f.put("src/.ignore", "generated.rs\n");
    f.put("src/lib.rs", "needle\n");
    f.put("src/generated.rs", "needle\n");
    f.put("src/sub/more.rs", "needle\n");
    f.put("target/debug/out.rs", "needle\n");
    f.put("src/target/x.rs", "needle\n");
    f.put("app.log", "needle\n");
    f.put(".hidden/visible.rs", "needle\n");

    let out = f.ok("grep", json!({"pattern": "needle"})).await;
    assert_eq!(
        out,
        ".hidden/visible.rs:1: needle\nsrc/lib.rs:1: needle\nsrc/sub/more.rs:1: needle"
    );
    // Searching a subdirectory still applies the root's `.gitignore`
    // (`target/` inside `src`).
    let out = f
        .ok("grep", json!({"pattern": "needle", "path": "src"}))
        .await;
    assert_eq!(out, "src/lib.rs:1: needle\nsrc/sub/more.rs:1: needle");
    let out = f
        .ok("grep", json!({"pattern": "needle", "path": "src/sub"}))
        .await;
    assert_eq!(out, "src/sub/more.rs:1: needle");
    // Naming an ignored directory searches it, as `rg target` does.
    let out = f
        .ok("grep", json!({"pattern": "needle", "path": "target"}))
        .await;
    assert_eq!(out, "target/debug/out.rs:1: needle");

    let all = f
        .ok(
            "grep",
            json!({"pattern": "needle", "include_ignored": true}),
        )
        .await;
    assert_eq!(
        all,
        ".hidden/visible.rs:1: needle\napp.log:1: needle\nsrc/generated.rs:1: needle\nsrc/lib.rs:1: needle\n\
         src/sub/more.rs:1: needle\nsrc/target/x.rs:1: needle\ntarget/debug/out.rs:1: needle"
    );
    assert_eq!(
        f.ok("find_files", json!({"pattern": "*.rs"})).await,
        ".hidden/visible.rs\nsrc/lib.rs\nsrc/sub/more.rs"
    );
    assert_eq!(
        f.ok(
            "find_files",
            json!({"pattern": "*.rs", "include_ignored": true})
        )
        .await
        .lines()
        .count(),
        6
    );
    let none = f.ok("grep", json!({"pattern": "absent"})).await;
    assert!(none.contains("include_ignored=true"), "{none}");
}

#[tokio::test]
async fn git_directories_are_never_searched() {
    let f = Fixture::new();
    f.put(
        ".git/config",
        "[remote] url = https://token@example.com needle\n",
    );
    f.put(".git/HEAD", "needle\n");
    f.put("sub/.git/config", "needle\n");
    f.put("a.txt", "needle\n");
    let out = f
        .ok(
            "grep",
            json!({"pattern": "needle", "include_ignored": true}),
        )
        .await;
    assert_eq!(out, "a.txt:1: needle");
    assert_eq!(f.ok("find_files", json!({"pattern": "*"})).await, "a.txt");
    let err = f
        .err("grep", json!({"pattern": "needle", "path": ".git"}))
        .await;
    assert!(err.contains("inside a `.git` directory"), "{err}");
}

#[tokio::test]
async fn binary_files_are_skipped() {
    let f = Fixture::new();
    f.put("text.txt", "needle\n");
    f.put("image.bin", b"needle\0\x01\x02needle\n");
    let mut late = "needle\n".repeat(20_000).into_bytes();
    late.extend_from_slice(b"\0tail\n");
    f.put("late-nul.dat", late);

    let result = f.call("grep", json!({"pattern": "needle"})).await;
    assert_eq!(result.output, "text.txt:1: needle");
    assert_eq!(result.metadata["binary_skipped"], 2);
    assert_eq!(result.metadata["total_matches"], 1);
    // Named explicitly, it is still binary and still skipped.
    let out = f
        .ok("grep", json!({"pattern": "needle", "path": "image.bin"}))
        .await;
    assert!(
        out.starts_with("no matches") && out.contains("1 binary skipped"),
        "{out}"
    );
}

#[tokio::test]
async fn symlinks_are_not_followed_out_of_the_workspace() {
    let f = Fixture::new();
    std::fs::create_dir(f.outside().join("secret_dir")).unwrap();
    std::fs::write(
        f.outside().join("secret_dir/data.txt"),
        "needle outside dir\n",
    )
    .unwrap();
    std::fs::write(f.outside().join("secret.txt"), "needle outside file\n").unwrap();
    f.put("inside.txt", "needle inside\n");
    symlink(f.outside().join("secret_dir"), f.root().join("dir_link")).unwrap();
    symlink(
        f.outside().join("secret.txt"),
        f.root().join("file_link.txt"),
    )
    .unwrap();
    // A symlink that stays inside is not followed either: its target is
    // found under its real path, once.
    symlink(f.root().join("inside.txt"), f.root().join("inner_link.txt")).unwrap();

    let out = f
        .ok(
            "grep",
            json!({"pattern": "needle", "include_ignored": true}),
        )
        .await;
    assert_eq!(out, "inside.txt:1: needle inside");
    let found = f.ok("find_files", json!({"pattern": "*"})).await;
    assert_eq!(found, "inside.txt");

    // As `path`, a symlink out is refused by the workspace.
    for path in ["dir_link", "file_link.txt"] {
        let err = f
            .err("grep", json!({"pattern": "needle", "path": path}))
            .await;
        assert!(err.contains("leaves the workspace"), "{path}: {err}");
    }
    // One that stays inside is a way to name its target.
    assert_eq!(
        f.ok(
            "grep",
            json!({"pattern": "needle", "path": "inner_link.txt"})
        )
        .await,
        "inner_link.txt:1: needle inside"
    );
}

#[tokio::test]
async fn sensitive_files_are_never_returned() {
    let f = Fixture::new();
    f.put(".env", "API_KEY=needle-secret\n");
    f.put("config/.env.production", "needle\n");
    f.put("keys/server.pem", "needle\n");
    f.put(".ssh/config", "needle\n");
    f.put("app.py", "needle = os.environ['API_KEY']\n");

    for tool in ["grep", "search_code"] {
        let result = f
            .call(tool, json!({"pattern": "needle", "include_ignored": true}))
            .await;
        assert!(result.success);
        assert!(!result.output.contains("secret"), "{}", result.output);
        assert!(result.output.starts_with("app.py:1:"), "{}", result.output);
        assert_eq!(result.metadata["total_matches"], 1);
        assert_eq!(result.metadata["files_searched"], 1);
        assert_eq!(result.metadata["sensitive_skipped"], 4);
        assert!(
            result.output.ends_with(
                "\n(4 sensitive files were not searched: sensitive files are off limits)"
            ),
            "{}",
            result.output
        );
    }
    assert_eq!(
        f.ok("find_files", json!({"pattern": "*"})).await,
        "app.py\n(4 sensitive files are hidden: sensitive files are off limits)"
    );
    assert!(
        f.ok("find_files", json!({"pattern": ".env*"}))
            .await
            .starts_with(
                "no files match `.env*` in `.`; 2 sensitive files are hidden: sensitive files are off limits"
            )
    );

    // Asked for by name, it is refused with the reason.
    for path in [".env", ".ssh/config", "keys/server.pem"] {
        let err = f
            .err("grep", json!({"pattern": "needle", "path": path}))
            .await;
        assert!(err.contains("sensitive-file pattern"), "{path}: {err}");
    }
    // `.ssh` itself matches no pattern (`.ssh/**` is what is beneath it):
    // searched, but every file in it is skipped.
    let out = f
        .ok("grep", json!({"pattern": "needle", "path": ".ssh"}))
        .await;
    assert!(
        out.starts_with(
            "no matches for text `needle` in `.ssh` (0 files searched); \
             1 sensitive file was not searched: sensitive files are off limits"
        ),
        "{out}"
    );
    // A symlink inside the workspace to a sensitive file hides nothing.
    symlink(f.root().join(".env"), f.root().join("harmless.txt")).unwrap();
    let err = f
        .err("grep", json!({"pattern": "needle", "path": "harmless.txt"}))
        .await;
    assert!(err.contains("sensitive-file pattern"), "{err}");

    // A workspace that allows sensitive files searches them.
    let open = Fixture::with(|b| {
        b.allow_sensitive(true);
    });
    open.put(".env", "needle\n");
    assert_eq!(
        open.ok("grep", json!({"pattern": "needle"})).await,
        ".env:1: needle"
    );
}

/// The home directory as a workspace holds toolgate's own state: no search
/// enters it, lists it or counts it, by any path.
#[tokio::test]
async fn private_paths_are_never_searched_listed_or_counted() {
    let f = Fixture::with_root(|b, root| {
        b.private_paths([
            root.join(".config/toolgate"),
            root.join(".local/share/toolgate"),
        ]);
    });
    f.put(".config/toolgate/config.yaml", "token: needle-config\n");
    f.put(
        ".local/share/toolgate/workspaces/w-1/toolgate.db",
        "needle-session\n",
    );
    f.put(".config/other.yaml", "needle\n");
    symlink(f.root().join(".config/toolgate"), f.root().join("cfg")).unwrap();
    symlink(
        f.root().join(".config/toolgate/config.yaml"),
        f.root().join("innocent.txt"),
    )
    .unwrap();
    for tool in ["grep", "search_code"] {
        let result = f
            .call(tool, json!({"pattern": "needle", "include_ignored": true}))
            .await;
        assert!(result.success, "{:?}", result.error);
        assert_eq!(result.output, ".config/other.yaml:1: needle", "{tool}");
        assert_eq!(result.metadata["sensitive_skipped"], 0);
    }
    assert_eq!(
        f.ok("find_files", json!({"pattern": "*"})).await,
        ".config/other.yaml"
    );
    for path in [
        ".config/toolgate",
        ".config/toolgate/config.yaml",
        "cfg",
        "innocent.txt",
        ".local/share/toolgate",
    ] {
        let error = f
            .err("grep", json!({"pattern": "needle", "path": path}))
            .await;
        assert!(
            error.contains("toolgate's own configuration or data"),
            "{path}: {error}"
        );
    }
}

#[tokio::test]
async fn max_results_cuts_the_list_and_counts_the_rest() {
    let f = Fixture::new();
    for i in 0..5 {
        f.put(&format!("f{i}.txt"), "hit\nmiss\nhit\n");
    }
    let result = f
        .call("grep", json!({"pattern": "hit", "max_results": 3}))
        .await;
    assert_eq!(
        result.output,
        "f0.txt:1: hit\nf0.txt:3: hit\nf1.txt:1: hit\n\
         … 7 more matches not shown (10 in 5 files); narrow the search with `path` or `file_pattern`, \
         or raise max_results (up to 1000)"
    );
    assert_eq!(result.metadata["truncated"], true);
    assert_eq!(result.metadata["total_matches"], 10);
    assert_eq!(result.metadata["matches"].as_array().unwrap().len(), 3);

    // The cut keeps the after-context of the last match shown, not more.
    let out = f
        .ok(
            "search_code",
            json!({"pattern": "hit", "max_results": 1, "context_lines": 1}),
        )
        .await;
    assert!(
        out.starts_with("f0.txt:1: hit\nf0.txt-2- miss\n… 9 more matches not shown"),
        "{out}"
    );

    let one = f
        .ok("grep", json!({"pattern": "hit", "max_results": 9}))
        .await;
    assert!(one.ends_with("… 1 more match not shown (10 in 5 files); narrow the search with `path` or `file_pattern`, or raise max_results (up to 1000)"), "{one}");

    // At the largest max_results, no hint to raise it.
    f.put("many/big.txt", "hit\n".repeat(1001));
    let out = f
        .ok(
            "grep",
            json!({"pattern": "hit", "path": "many", "max_results": 1000}),
        )
        .await;
    assert!(
        out.ends_with(
            "many/big.txt:1000: hit\n… 1 more match not shown (1001 in 1 file); \
             narrow the search with `path` or `file_pattern`"
        ),
        "{}",
        &out[out.len() - 200..]
    );

    // The schema bounds the numbers.
    let entry = f.registry.get("search_code").unwrap();
    assert!(
        entry
            .validate(&json!({"pattern": "x", "max_results": 0}))
            .is_err()
    );
    assert!(
        entry
            .validate(&json!({"pattern": "x", "max_results": 1001}))
            .is_err()
    );
    assert!(
        entry
            .validate(&json!({"pattern": "x", "context_lines": 21}))
            .is_err()
    );
    assert!(entry.validate(&json!({"pattern": ""})).is_err());
    assert!(
        entry
            .validate(&json!({"pattern": "x", "unknown": 1}))
            .is_err()
    );
}

#[tokio::test]
async fn output_is_sorted_and_identical_across_runs() {
    let f = Fixture::new();
    // 200 files over nested directories, names chosen so that byte order
    // and component order differ (`a.b` vs `a/b`).
    for i in 0..200 {
        let dir = ["a", "a/b", "a.b", "z", "m/n/o"][i % 5];
        f.put(
            &format!("{dir}/file{:03}.txt", 199 - i),
            format!("x\nneedle {i}\ny\n"),
        );
    }
    let args = json!({"pattern": "needle", "max_results": 1000, "context_lines": 1});
    let first = f.ok("search_code", args.clone()).await;
    assert_eq!(
        first.lines().filter(|l| l.contains(":2: needle")).count(),
        200
    );
    for _ in 0..9 {
        assert_eq!(f.ok("search_code", args.clone()).await, first);
    }
    let paths: Vec<&str> = first
        .lines()
        .filter_map(|l| l.split_once(":2:").map(|(p, _)| p))
        .collect();
    let mut sorted = paths.clone();
    sorted.sort_by(|a, b| std::path::Path::new(a).cmp(std::path::Path::new(b)));
    assert_eq!(paths, sorted);
    assert!(
        paths[0].starts_with("a/b/"),
        "component order: {}",
        paths[0]
    );

    // A cut list is stable too: always the first 7 in path order.
    let cut = json!({"pattern": "needle", "max_results": 7});
    let first = f.ok("grep", cut.clone()).await;
    for _ in 0..9 {
        assert_eq!(f.ok("grep", cut.clone()).await, first);
    }
    assert!(first.contains("… 193 more matches not shown"), "{first}");
    let finds = f.ok("find_files", json!({"pattern": "*.txt"})).await;
    for _ in 0..9 {
        assert_eq!(f.ok("find_files", json!({"pattern": "*.txt"})).await, finds);
    }
}

#[tokio::test]
async fn invalid_regex_says_where_and_how_to_fix_it() {
    let f = Fixture::new();
    f.put("a.txt", "x\n");
    let err = f.err("search_code", json!({"pattern": "fn foo("})).await;
    assert!(
        err.starts_with("invalid regex `fn foo(`: unclosed group at character 7 (at `(`);"),
        "{err}"
    );
    assert!(err.contains("use the grep tool"), "{err}");
    let err = f.err("search_code", json!({"pattern": "[a-"})).await;
    assert!(
        err.contains("unclosed character class at character 1"),
        "{err}"
    );
    let err = f.err("search_code", json!({"pattern": "a\\nb"})).await;
    assert!(err.contains("cannot match a line break"), "{err}");
}

#[tokio::test]
async fn paths_outside_the_workspace_are_refused() {
    let f = Fixture::new();
    std::fs::write(f.outside().join("secret.txt"), "needle\n").unwrap();
    let outside = f.outside().display().to_string();
    for path in ["..", "../secret.txt", outside.as_str(), "/etc"] {
        for tool in ["grep", "search_code"] {
            let err = f
                .err(tool, json!({"pattern": "needle", "path": path}))
                .await;
            assert!(err.contains("leaves the workspace"), "{tool} {path}: {err}");
        }
        let err = f
            .err("find_files", json!({"pattern": "*", "path": path}))
            .await;
        assert!(err.contains("leaves the workspace"), "{path}: {err}");
    }
    let err = f
        .err("grep", json!({"pattern": "needle", "path": "missing"}))
        .await;
    assert!(err.contains("missing"), "{err}");
}

#[tokio::test]
async fn long_lines_are_cut_and_crlf_is_trimmed() {
    let f = Fixture::new();
    f.put(
        "min.js",
        format!("{}needle{}\n", "a".repeat(300), "b".repeat(10_000)),
    );
    f.put("dos.txt", "needle\r\nnext\r\n");
    let out = f.ok("grep", json!({"pattern": "needle"})).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "dos.txt:1: needle");
    assert!(lines[1].starts_with("min.js:1: aaa"));
    assert!(
        lines[1].ends_with("… [line cut: 10306 bytes in all]"),
        "{}",
        lines[1]
    );
    assert!(lines[1].len() < 600);
}

#[tokio::test]
async fn a_single_file_can_be_searched() {
    let f = Fixture::new();
    f.put(".gitignore", "*.log\n");
    f.put("build.log", "error: one\nok\nerror: two\n");
    // Named explicitly: searched even though ignored and whatever the glob.
    let out = f
        .ok(
            "grep",
            json!({"pattern": "error", "path": "build.log", "file_pattern": "*.rs"}),
        )
        .await;
    assert_eq!(out, "build.log:1: error: one\nbuild.log:3: error: two");
    assert_eq!(
        f.ok(
            "find_files",
            json!({"pattern": "*.log", "path": "build.log"})
        )
        .await,
        "build.log"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_swapped_for_a_symlink_mid_search_leaks_nothing() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let f = Fixture::new();
    let secret = f.outside().join("secret");
    std::fs::create_dir(&secret).unwrap();
    std::fs::write(secret.join("data.txt"), "needle OUTSIDE\n").unwrap();
    std::fs::write(secret.join("only_outside.txt"), "needle OUTSIDE\n").unwrap();
    f.put("d/data.txt", "needle inside\n");
    for i in 0..50 {
        f.put(&format!("d/sub{}/f{i}.txt", i % 5), "needle inside\n");
    }

    // Swap `d` for a symlink to the outside directory and back, as fast as
    // possible, while searching.
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, root) = (Arc::clone(&stop), f.root());
        std::thread::spawn(move || {
            let (d, real) = (root.join("d"), root.join("d.real"));
            let mut swaps = 0;
            while !stop.load(Ordering::Relaxed) {
                std::fs::rename(&d, &real).unwrap();
                symlink(&secret, &d).unwrap();
                std::thread::sleep(std::time::Duration::from_micros(500));
                std::fs::remove_file(&d).unwrap();
                std::fs::rename(&real, &d).unwrap();
                std::thread::sleep(std::time::Duration::from_micros(500));
                swaps += 1;
            }
            swaps
        })
    };
    // With a plain `File::open` instead of the checked open, about one
    // search in twenty returns the outside file here.
    for _ in 0..200 {
        let result = f
            .call("grep", json!({"pattern": "needle", "max_results": 1000}))
            .await;
        assert!(!result.output.contains("OUTSIDE"), "{}", result.output);
        let found = f.call("find_files", json!({"pattern": "*.txt"})).await;
        assert!(!found.output.contains("only_outside"), "{}", found.output);
    }
    stop.store(true, Ordering::Relaxed);
    assert!(swapper.join().unwrap() > 0);
}

/// Sensitive files are left out and counted; the count covers only the
/// files the call would otherwise have looked at.
#[tokio::test]
async fn skipped_sensitive_files_are_counted_in_the_output() {
    let f = Fixture::new();
    f.put(".env", "needle\n");
    f.put("deploy/.env.prod", "needle\n");
    f.put("keys/server.pem", "needle\n");
    f.put("src/app.py", "nothing\n");
    symlink(".env", f.root().join("settings.txt")).unwrap();
    let cases: &[(&str, Value, &str)] = &[
        (
            "grep",
            json!({"pattern": "needle"}),
            "no matches for text `needle` in `.` (1 file searched); 3 sensitive files were not searched: \
             sensitive files are off limits; files ignored by .gitignore/.ignore were skipped \
             (include_ignored=true searches them)",
        ),
        (
            "search_code",
            json!({"pattern": "needle", "file_pattern": "*.pem"}),
            "no matches for pattern `needle` in `.` (0 files searched); 1 sensitive file was not searched: \
             sensitive files are off limits; files ignored by .gitignore/.ignore were skipped \
             (include_ignored=true searches them)",
        ),
        (
            "grep",
            json!({"pattern": "nothing"}),
            "src/app.py:1: nothing\n(3 sensitive files were not searched: sensitive files are off limits)",
        ),
        (
            "grep",
            json!({"pattern": "nothing", "file_pattern": "*.py"}),
            "src/app.py:1: nothing",
        ),
        (
            "find_files",
            json!({"pattern": ".env*"}),
            "no files match `.env*` in `.`; 2 sensitive files are hidden: sensitive files are off limits; \
             files ignored by .gitignore/.ignore were skipped (include_ignored=true lists them)",
        ),
        ("find_files", json!({"pattern": "*.py"}), "src/app.py"),
        (
            "find_files",
            json!({"pattern": "*"}),
            // The symlink is not listed: the search tools follow none.
            "src/app.py\n(3 sensitive files are hidden: sensitive files are off limits)",
        ),
    ];
    for (tool, args, expected) in cases {
        assert_eq!(f.ok(tool, args.clone()).await, *expected, "{tool} {args}");
    }
}

/// The report of issue 25: a file holding one line longer than the
/// searcher's 1 MiB line buffer is skipped and counted, not read whole; the
/// other files are still searched, and a line just under the limit is.
#[tokio::test]
async fn a_line_longer_than_the_limit_skips_the_file_and_says_so() {
    const MIB: usize = 1024 * 1024;
    let f = Fixture::new();
    f.put("huge.txt", format!("{}\nneedle\n", "a".repeat(2 * MIB)));
    // Under the limit, with its newline: searched.
    f.put("long.txt", format!("needle{}\n", "b".repeat(MIB - 1024)));
    f.put("small.txt", "a needle\n");
    for tool in ["grep", "search_code"] {
        let result = f.call(tool, json!({"pattern": "needle"})).await;
        assert!(result.success, "{tool}: {:?}", result.error);
        // search_code puts `--` between files.
        let lines: Vec<&str> = result.output.lines().filter(|l| *l != "--").collect();
        assert_eq!(lines.len(), 3, "{tool}: {}", result.output);
        assert!(lines[0].starts_with("long.txt:1: needlebbb"), "{tool}");
        assert_eq!(lines[1], "small.txt:1: a needle", "{tool}");
        assert_eq!(
            lines[2], "(1 file skipped: a line longer than 1 MiB)",
            "{tool}"
        );
        assert_eq!(result.metadata["long_line_skipped"], 1, "{tool}");
        assert_eq!(result.metadata["files_searched"], 3, "{tool}");
        assert_eq!(result.metadata["total_matches"], 2, "{tool}");
    }
    let alone = f
        .ok("grep", json!({"pattern": "needle", "path": "huge.txt"}))
        .await;
    assert_eq!(
        alone,
        "no matches for text `needle` in `huge.txt` (1 file searched); \
         1 file skipped: a line longer than 1 MiB"
    );
}

/// With context lines the searcher's buffer holds the lines before a match
/// too: long lines that each fit, but not together, are searched again
/// without context instead of being skipped.
#[tokio::test]
async fn long_lines_that_fit_one_by_one_are_searched_without_context() {
    let f = Fixture::new();
    let long = "c".repeat(400 * 1024);
    f.put(
        "wide.txt",
        format!("{long}\n{long}\n{long}\nneedle\n{long}\n"),
    );
    let result = f
        .call(
            "search_code",
            json!({"pattern": "needle", "context_lines": 3}),
        )
        .await;
    assert_eq!(result.output, "wide.txt:4: needle");
    assert_eq!(result.metadata["long_line_skipped"], 0);
}

/// Long lines and many context lines: the text stops at 256 KiB (and says
/// so), and what the search keeps in memory meanwhile is bounded the same
/// way; the counts still cover every match.
#[tokio::test]
async fn output_is_bounded_in_bytes_whatever_max_results_allows() {
    let f = Fixture::new();
    let line = format!("needle {}\n", "d".repeat(2000));
    for i in 0..4 {
        f.put(&format!("f{i}.txt"), line.repeat(500));
    }
    let result = f
        .call(
            "search_code",
            json!({"pattern": "needle", "max_results": 1000, "context_lines": 20}),
        )
        .await;
    assert!(result.success, "{:?}", result.error);
    let out = &result.output;
    assert!(out.len() < 256 * 1024 + 2048, "{}", out.len());
    assert!(out.len() > 250 * 1024, "{}", out.len());
    let shown = result.metadata["matches"].as_array().unwrap().len();
    assert!(shown < 1000, "{shown}");
    assert!(
        out.ends_with(&format!(
            "… {} more matches not shown (2000 in 4 files; the 256 KiB output limit); \
             narrow the search with `path` or `file_pattern`",
            2000 - shown
        )),
        "{}",
        &out[out.len() - 300..]
    );
    assert_eq!(result.metadata["total_matches"], 2000);
    assert_eq!(result.metadata["truncated"], true);
    // Only the first file is shown: the limit is reached inside it.
    assert!(
        out.lines()
            .filter(|l| l.contains(": needle"))
            .all(|l| l.starts_with("f0.txt:"))
    );
}

/// `find_files` over a directory of many files keeps only the first 1000
/// paths in order, however many it walks past, and counts the rest.
#[tokio::test]
async fn find_files_keeps_the_first_paths_and_counts_the_rest() {
    let f = Fixture::new();
    let dir = f.root().join("many");
    std::fs::create_dir(&dir).unwrap();
    for i in 0..1500 {
        std::fs::File::create(dir.join(format!("f{i:05}.txt"))).unwrap();
    }
    let result = f.call("find_files", json!({"pattern": "*.txt"})).await;
    let lines: Vec<&str> = result.output.lines().collect();
    assert_eq!(lines.len(), 1001);
    assert_eq!(lines[0], "many/f00000.txt");
    assert_eq!(lines[999], "many/f00999.txt");
    assert_eq!(
        lines[1000],
        "… 500 more files not shown; narrow the pattern or the path"
    );
    assert_eq!(result.metadata["count"], 1500);
    assert_eq!(result.metadata["truncated"], true);

    // Long paths (about 500 bytes): the byte limit ends the list first.
    let deep = f.root().join("deep").join("d".repeat(250));
    std::fs::create_dir_all(&deep).unwrap();
    for i in 0..600 {
        std::fs::File::create(deep.join(format!("{i:04}{}", "n".repeat(240)))).unwrap();
    }
    let result = f
        .call("find_files", json!({"pattern": "*", "path": "deep"}))
        .await;
    let out = &result.output;
    assert!(out.len() < 256 * 1024 + 1024, "{}", out.len());
    let shown = out.lines().count() - 1;
    assert!(shown < 600, "{shown}");
    assert!(
        out.ends_with(&format!(
            "… {} more files not shown (the 256 KiB output limit); narrow the pattern or the path",
            600 - shown
        )),
        "{}",
        &out[out.len() - 200..]
    );
}
