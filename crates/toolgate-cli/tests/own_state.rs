//! toolgate's own state (user configuration, trust store, store, audit,
//! `--config`) as whole processes, the way an attacker from the outside
//! meets it: the workspace is the home directory, or `~/.config`, or the XDG
//! directories lie elsewhere; every call runs in `yolo`. Nothing reads it,
//! nothing changes it, and what toolgate creates is the user's only.
//!
//! Everything lives under `/var/tmp`, not `/tmp`: the sandbox gives every
//! process a private `/tmp`, which would hide the files whether or not they
//! are protected. These tests need the full sandbox and fail without it.
#![cfg(target_os = "linux")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::json;

/// Text in every file of toolgate's own, always followed by `-` and what
/// it is; no output may contain it so (a search may echo the word alone).
const SECRET: &str = "OWNSECRET";

/// Whether `text` shows any of the secrets.
fn leaks(text: &str) -> bool {
    text.contains(&format!("{SECRET}-"))
}

/// A user configuration with a token in it, valid YAML.
fn user_config() -> String {
    format!("commands:\n  sandbox: full\n# mcp token: {SECRET}-config\n")
}

struct World {
    _tmp: toolgate_test::TempHome,
    base: PathBuf,
    home: PathBuf,
    /// Extra environment for every run.
    env: Vec<(String, String)>,
}

impl World {
    fn new() -> Self {
        // Not under /tmp: each command gets a private /tmp.
        let tmp = toolgate_test::TempHome::builder()
            .parent("/var/tmp")
            .build()
            .unwrap();
        let base = tmp.root().canonicalize().unwrap();
        let home = base.join("home");
        Self {
            _tmp: tmp,
            base,
            home,
            env: Vec::new(),
        }
    }

    /// `toolgate ARGS` in `workspace`, under `umask 022`, with the world's
    /// HOME and nothing of the caller's environment that toolgate reads.
    fn run(&self, workspace: &Path, args: &[&str]) -> Output {
        let mut cmd = toolgate_test::clean_command("sh", workspace, &self.home);
        cmd.args(["-c", "umask 022; exec \"$0\" \"$@\""])
            .arg(env!("CARGO_BIN_EXE_toolgate"))
            .args(args);
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        cmd.output().unwrap()
    }

    /// One call through the gate in `yolo`: the output and error texts.
    fn call(&self, workspace: &Path, tool: &str, args: &serde_json::Value) -> (bool, String) {
        let args = args.to_string();
        let out = self.run(
            workspace,
            &["--mode", "yolo", "--json", "call", tool, &args],
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let result: serde_json::Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|_| panic!("{tool} {args}: no JSON: {stdout}\n{stderr}"));
        (
            result["success"].as_bool().unwrap(),
            format!("{stdout}\n{stderr}"),
        )
    }

    /// A call that must be refused as toolgate's own state.
    fn refused(&self, workspace: &Path, tool: &str, args: &serde_json::Value) {
        let (success, text) = self.call(workspace, tool, args);
        assert!(!success, "{tool} {args} succeeded: {text}");
        assert!(
            text.contains("toolgate's own configuration or data"),
            "{tool} {args}: {text}"
        );
        assert!(!leaks(&text), "{tool} {args}: {text}");
    }

    /// A command that may succeed or fail, but shows no secret.
    fn command(&self, workspace: &Path, line: &str) -> String {
        let (_, text) = self.call(workspace, "run_command", &json!({"command": line}));
        assert!(!leaks(&text), "{line}: {text}");
        text
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// (a) The home directory is the workspace.
#[test]
fn with_the_home_directory_as_workspace_nothing_reaches_toolgates_state() {
    let w = World::new();
    let home = w.home.clone();
    let config = home.join(".config/toolgate/config.yaml");
    let trust = home.join(".config/toolgate/trusted.json");
    let other = home.join(".local/share/toolgate/workspaces/other-0123/toolgate.db");
    write(&config, &user_config());
    write(&other, &format!("{SECRET}-session of another workspace\n"));
    write(&home.join("notes.txt"), "my notes\n");

    // The file tools.
    let none = "commands: {sandbox: none}\n";
    w.refused(
        &home,
        "write_file",
        &json!({"path": ".config/toolgate/config.yaml", "content": none}),
    );
    w.refused(
        &home,
        "write_file",
        &json!({"path": ".config/toolgate/trusted.json", "content": "{}"}),
    );
    w.refused(
        &home,
        "edit_file",
        &json!({"path": ".config/toolgate/config.yaml",
                "old_str": "sandbox: full", "new_str": "sandbox: none"}),
    );
    for path in [
        ".config/toolgate/config.yaml",
        ".config/toolgate/trusted.json",
        ".local/share/toolgate/workspaces/other-0123/toolgate.db",
        "./.config/../.config/toolgate/config.yaml",
        &config.display().to_string(),
    ] {
        w.refused(&home, "read_file", &json!({"path": path}));
    }
    w.refused(
        &home,
        "list_files",
        &json!({"path": ".local/share/toolgate"}),
    );
    let (_, found) = w.call(&home, "grep", &json!({"pattern": SECRET}));
    assert!(!leaks(&found), "{found}");

    // The commands, in yolo.
    w.command(&home, "cat .config/toolgate/config.yaml");
    w.command(&home, "grep -r OWNSECRET . 2>&1");
    w.command(
        &home,
        "cp .config/toolgate/config.yaml stolen.txt; cat stolen.txt",
    );
    let listed = w.command(&home, "ls -la .local/share/toolgate 2>&1");
    assert!(!listed.contains("workspaces"), "{listed}");
    w.command(
        &home,
        "echo 'commands: {sandbox: none}' >> .config/toolgate/config.yaml",
    );
    w.command(&home, "echo '{}' > .config/toolgate/trusted.json");
    w.command(&home, "mv .config .config-old; mkdir -p .config/toolgate && echo 'commands: {sandbox: none}' > .config/toolgate/config.yaml");
    w.command(
        &home,
        "ln -s .config/toolgate/config.yaml innocent.txt; cat innocent.txt",
    );
    w.refused(&home, "read_file", &json!({"path": "innocent.txt"}));
    // The home directory itself is still a workspace.
    let (ok, notes) = w.call(&home, "read_file", &json!({"path": "notes.txt"}));
    assert!(ok && notes.contains("my notes"), "{notes}");

    assert_eq!(read(&config), user_config());
    assert!(!trust.exists(), "the trust store was created");
    assert!(!home.join(".config-old").exists());
    assert!(read(&other).contains(SECRET));
}

/// (b) The XDG directories lie outside the home and the workspace.
#[test]
fn xdg_directories_elsewhere_are_out_of_reach_of_commands_and_tools() {
    let mut w = World::new();
    let ws = w.base.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let config_home = w.base.join("xdg-config");
    let data_home = w.base.join("xdg-data");
    let config = config_home.join("toolgate/config.yaml");
    write(&config, &user_config());
    write(
        &data_home.join("toolgate/workspaces/other-0123/toolgate.db"),
        &format!("{SECRET}-session of another workspace\n"),
    );
    w.env = vec![
        ("XDG_CONFIG_HOME".into(), config_home.display().to_string()),
        ("XDG_DATA_HOME".into(), data_home.display().to_string()),
    ];
    let config_text = config.display().to_string();
    let data_text = data_home.display().to_string();
    w.command(&ws, &format!("cat {config_text}"));
    w.command(
        &ws,
        &format!("grep -r token {data_text} {} 2>&1", config_home.display()),
    );
    let found = w.command(
        &ws,
        &format!("grep -r -l OWNSECRET {} 2>&1", w.base.display()),
    );
    assert!(!found.contains("toolgate.db"), "{found}");
    w.command(
        &ws,
        &format!("echo 'commands: {{sandbox: none}}' >> {config_text}"),
    );
    for path in [
        config_text.clone(),
        format!("{data_text}/toolgate/workspaces/other-0123/toolgate.db"),
        format!(
            "{}/toolgate/../toolgate/trusted.json",
            config_home.display()
        ),
    ] {
        w.refused(&ws, "read_file", &json!({"path": path}));
    }
    assert_eq!(read(&config), user_config());
}

/// (c) The workspace is `~/.config` itself.
#[test]
fn a_workspace_that_is_the_configuration_directory_holds_toolgate_out_of_reach() {
    let w = World::new();
    let dot_config = w.home.join(".config");
    let config = dot_config.join("toolgate/config.yaml");
    write(&config, &user_config());
    write(&dot_config.join("other/settings.ini"), "fine\n");
    w.refused(
        &dot_config,
        "read_file",
        &json!({"path": "toolgate/config.yaml"}),
    );
    w.refused(
        &dot_config,
        "write_file",
        &json!({"path": "toolgate/config.yaml", "content": "commands: {sandbox: none}\n"}),
    );
    w.command(
        &dot_config,
        "cat toolgate/config.yaml; grep -r OWNSECRET . 2>&1",
    );
    w.command(
        &dot_config,
        "echo 'commands: {sandbox: none}' > toolgate/config.yaml",
    );
    let (ok, text) = w.call(
        &dot_config,
        "read_file",
        &json!({"path": "other/settings.ini"}),
    );
    assert!(ok && text.contains("fine"), "{text}");
    assert_eq!(read(&config), user_config());
}

/// (d) A `--config` file outside the workspace.
#[test]
fn a_config_file_given_with_the_flag_is_unreadable_to_commands() {
    let w = World::new();
    let ws = w.base.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let explicit = w.base.join("ci/toolgate.yaml");
    write(
        &explicit,
        &format!("tools:\n  timeout: 60\n# deploy token: {SECRET}-explicit\n"),
    );
    let flag = explicit.display().to_string();
    let run = |line: &str| {
        let args = json!({"command": line}).to_string();
        let out = w.run(
            &ws,
            &[
                "--config",
                &flag,
                "--mode",
                "yolo",
                "call",
                "run_command",
                &args,
            ],
        );
        let text = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!leaks(&text), "{line}: {text}");
    };
    run(&format!("cat {flag}"));
    run(&format!(
        "grep -r token {} 2>&1",
        w.base.join("ci").display()
    ));
    run(&format!("echo 'commands: {{sandbox: none}}' >> {flag}"));
    let args = json!({"path": flag}).to_string();
    let out = w.run(
        &ws,
        &[
            "--config",
            &flag,
            "--mode",
            "yolo",
            "call",
            "read_file",
            &args,
        ],
    );
    assert!(!out.status.success());
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("toolgate's own configuration or data"),
        "{text}"
    );
    assert!(!leaks(&text), "{text}");
    assert!(read(&explicit).ends_with(&format!("{SECRET}-explicit\n")));
}

/// (e) What a run creates is the user's only, under `umask 022`.
#[test]
fn what_toolgate_creates_is_private_whatever_the_umask() {
    let mut w = World::new();
    let ws = w.base.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    // Trust-only keys, so that `toolgate trust` writes the trust store.
    write(&ws.join("toolgate.yaml"), "confirmation:\n  mode: yolo\n");
    let audit = w.base.join("logs/audit.jsonl");
    w.env = vec![("TOOLGATE_AUDIT__PATH".into(), audit.display().to_string())];
    let out = w.run(&ws, &["trust"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = w.run(
        &ws,
        &["rules", "add", "--tool", "read_file", "--decision", "allow"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (ok, text) = w.call(&ws, "get_datetime", &json!({"timezone": "UTC"}));
    assert!(ok, "{text}");

    let config = w.home.join(".config/toolgate");
    let data = w.home.join(".local/share/toolgate");
    let store_dir = std::fs::read_dir(data.join("workspaces"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let cases = [
        (config.clone(), 0o700),
        (config.join("trusted.json"), 0o600),
        (config.join("config.yaml"), 0o600),
        (data.clone(), 0o700),
        (data.join("workspaces"), 0o700),
        (store_dir.clone(), 0o700),
        (store_dir.join("toolgate.db"), 0o600),
        (store_dir.join("toolgate-audit.db"), 0o600),
        (store_dir.join("toolgate-audit.db-wal"), 0o600),
        (store_dir.join("workspace"), 0o600),
        (w.base.join("logs"), 0o700),
        (audit.clone(), 0o600),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter(|(path, want)| mode(path) != *want)
        .map(|(path, want)| format!("{}: {:o}, not {want:o}", path.display(), mode(path)))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// (f) A store an older toolgate left readable by others is reported by
/// `toolgate doctor`, with the fix, and tightened when opened.
#[test]
fn a_loose_store_is_reported_by_doctor_and_tightened() {
    let mut w = World::new();
    let ws = w.base.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    // No model server: the doctor's model checks fail fast.
    w.env = vec![
        (
            "TOOLGATE_LLM__BASE_URL".into(),
            "http://127.0.0.1:9/v1".into(),
        ),
        ("TOOLGATE_LLM__MODEL".into(), "none".into()),
    ];
    let (ok, text) = w.call(&ws, "get_datetime", &json!({"timezone": "UTC"}));
    assert!(ok, "{text}");
    let data = w.home.join(".local/share/toolgate");
    let store_dir = std::fs::read_dir(data.join("workspaces"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let db = store_dir.join("toolgate.db");
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();

    let out = w.run(&ws, &["doctor"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("! own files:"))
        .unwrap_or_else(|| panic!("no warning about the modes: {stdout}"));
    assert!(line.contains(&format!("{} (644)", db.display())), "{line}");
    assert!(
        line.contains(&format!("{} (755)", data.display())),
        "{line}"
    );
    assert!(
        stdout.contains(&format!("chmod 600 {}", db.display())),
        "{stdout}"
    );
    // Opening the store (the doctor's own store check) tightened them.
    assert_eq!(mode(&db), 0o600);
    assert_eq!(mode(&data), 0o700);
    let out = w.run(&ws, &["doctor"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("✓ own files:"), "{stdout}");
}
