//! Snapshots of what `toolgate` prints for people (`insta`, files under
//! `tests/snapshots/`): `--help`, each no-model error, `doctor`, `tools
//! list`, `classify`, `sessions list` empty and full, `rules list`, with
//! colour on (`--color always`, escapes shown as `␛`) and off.
//!
//! Each snapshot is the exit code, stdout and stderr of one run in a
//! hermetic workspace, with what changes from run to run masked: the
//! temporary directory, ephemeral ports, session ids, durations, the
//! version, and
//! the lines of `doctor` that describe this machine's kernel.
//!
//! To accept a changed output: `INSTA_UPDATE=always cargo test -p
//! toolgate-cli --test output`, then review the `.snap` diff.

#![allow(
    clippy::unwrap_used,
    clippy::format_push_string,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use std::path::Path;
use std::process::{Command, Output};

use regex::Regex;
use wiremock::MockServer;

use common::{answer, tool_call};

const BIN: &str = env!("CARGO_BIN_EXE_toolgate");

/// A workspace with its own HOME, as a new user has it.
struct Ws {
    dir: toolgate_test::TempHome,
}

impl Ws {
    fn new() -> Self {
        let dir = toolgate_test::TempHome::new().unwrap();
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.workspace()
    }

    fn command(&self, args: &[&str]) -> Command {
        // A clean environment: no key, `NO_COLOR` or `CLICOLOR_FORCE` of the
        // caller's.
        let mut cmd = self.dir.command(BIN);
        // clap wraps help at the terminal's width; there is none here.
        cmd.env("COLUMNS", "100").args(args);
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// The output of `args`, masked for a snapshot.
    fn shown(&self, args: &[&str]) -> String {
        self.shown_with(self.command(args))
    }

    fn shown_with(&self, mut cmd: Command) -> String {
        let out = cmd.output().unwrap();
        let text = format!(
            "exit: {}\n--- stdout\n{}--- stderr\n{}",
            out.status
                .code()
                .map_or("signal".to_owned(), |c| c.to_string()),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        self.mask(&text)
    }

    fn mask(&self, text: &str) -> String {
        let mut text = text.replace('\x1b', "␛");
        for dir in [self.path().canonicalize().unwrap(), self.path().to_owned()] {
            text = text.replace(&*dir.to_string_lossy(), "[WS]");
        }
        let rules: &[(&str, &str)] = &[
            // Ephemeral ports (the scripted servers, the closed ports);
            // the usual local servers' ports (11434, 8080, …) are kept.
            (
                r"127\.0\.0\.1:(3[2-9]\d{3}|[4-6]\d{4})\b",
                "127.0.0.1:[PORT]",
            ),
            (r"\bs[0-9a-f]{16,}\b", "[SESSION]"),
            (r"/workspaces/[^/\s]+/", "/workspaces/[DIR]/"),
            (r"\b\d+(\.\d+)? ?ms\b", "[N] ms"),
            (env!("CARGO_PKG_VERSION"), "[VERSION]"),
        ];
        for (pattern, with) in rules {
            text = Regex::new(pattern)
                .unwrap()
                .replace_all(&text, *with)
                .into_owned();
        }
        text
    }
}

fn snap(name: &str, text: &str) {
    insta::with_settings!({ prepend_module_to_snapshot => false, omit_expression => true }, {
        insta::assert_snapshot!(name, text);
    });
}

/// `doctor` with the lines about this machine (kernel sandbox, limits,
/// network, own files' modes) reduced to their names: they differ from one
/// machine to the next, and have tests of their own.
fn machine_lines_masked(text: &str) -> String {
    let machine = ["sandbox", "limits", "network", "own files"];
    let mut out = String::new();
    let mut skipping = false;
    for line in text.lines() {
        let name = line
            .split_once(' ')
            .and_then(|(_, rest)| rest.split_once(':'))
            .map(|(name, _)| {
                // `␛[32m✓␛[0m sandbox` with colour: the name is after the mark.
                name.rsplit("␛[0m ").next().unwrap_or(name).trim()
            });
        if line.starts_with("    ") && skipping {
            continue;
        }
        skipping = false;
        if let Some(name) = name
            && machine.contains(&name)
            && !line.starts_with(' ')
        {
            out.push_str(&format!("[mark] {name}: [this machine]\n"));
            skipping = true;
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[test]
fn help_of_the_main_commands() {
    let ws = Ws::new();
    for (name, args) in [
        ("help_toolgate", &["--help"][..]),
        ("help_run", &["run", "--help"][..]),
        ("help_init", &["init", "--help"][..]),
        ("help_classify", &["classify", "--help"][..]),
        ("help_mcp_serve", &["mcp", "serve", "--help"][..]),
        ("help_rules_add", &["rules", "add", "--help"][..]),
        ("help_short_run", &["run", "-h"][..]),
    ] {
        snap(name, &ws.shown(args));
    }
    // With colour, clap's own headings are styled too.
    snap(
        "help_short_run_color",
        &ws.shown(&["--color", "always", "run", "-h"]),
    );
}

fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn each_no_model_error_with_and_without_colour() {
    let ws = Ws::new();
    let url = format!("http://127.0.0.1:{}/v1", closed_port());
    for color in ["never", "always"] {
        let c = ["--color", color];
        snap(
            &format!("no_model_nothing_configured_{color}"),
            &ws.shown(&[&c[..], &["run", "hello"]].concat()),
        );
        snap(
            &format!("no_model_url_down_{color}"),
            &ws.shown(
                &[
                    &c[..],
                    &["run", "hello", "--base-url", &url, "--model", "m"],
                ]
                .concat(),
            ),
        );
        snap(
            &format!("no_model_key_unset_{color}"),
            &ws.shown(
                &[
                    &c[..],
                    &[
                        "run",
                        "hello",
                        "--provider",
                        "openai-compatible",
                        "--base-url",
                        &url,
                        "--api-key-env",
                        "MY_KEY",
                    ],
                ]
                .concat(),
            ),
        );
    }
    // The server is set in the workspace file, which is not trusted.
    let untrusted = Ws::new();
    std::fs::write(
        untrusted.path().join("toolgate.yaml"),
        format!("llm:\n  model: m\n  base_url: {url}\n"),
    )
    .unwrap();
    snap(
        "no_model_untrusted_workspace_file",
        &untrusted.shown(&["--color", "never", "run", "hello"]),
    );
}

#[test]
fn doctor_with_and_without_colour() {
    let ws = Ws::new();
    std::fs::write(
        ws.path().join("toolgate.yaml"),
        format!(
            "llm:\n  model: m\n  base_url: http://127.0.0.1:{}/v1\n",
            closed_port()
        ),
    )
    .unwrap();
    for color in ["never", "always"] {
        let shown = ws.shown(&["--color", color, "--trust-workspace", "doctor"]);
        snap(&format!("doctor_{color}"), &machine_lines_masked(&shown));
    }
}

#[test]
fn tools_list_and_classify() {
    let ws = Ws::new();
    snap("tools_list", &ws.shown(&["tools", "list"]));
    snap(
        "tools_list_plan",
        &ws.shown(&["tools", "list", "--agent", "plan"]),
    );
    snap(
        "tools_list_confirm_all",
        &ws.shown(&["--mode", "confirm-all", "tools", "list"]),
    );
    let mut text = String::new();
    for color in ["never", "always"] {
        for command in [
            &["ls", "-la"][..],
            &["cargo test"][..],
            &["rm -r target"][..],
            &["rm -rf /"][..],
            &["cat .env"][..],
        ] {
            let args = [&["--color", color, "classify"][..], command].concat();
            text.push_str(&format!("$ toolgate {}\n", args.join(" ")));
            text.push_str(&ws.shown(&args));
            text.push('\n');
        }
    }
    snap("classify", &text);
}

#[tokio::test]
async fn sessions_list_empty_and_full() {
    let server = common::server(vec![
        tool_call("r", "read_file", r#"{"path":"a.txt"}"#),
        answer("It says hello."),
    ])
    .await;
    let ws = Ws::new();
    snap(
        "sessions_list_empty",
        &ws.shown(&["--color", "never", "sessions", "list"]),
    );
    // The other lists say they are empty the same way: on stderr, what
    // adds to them.
    snap(
        "other_lists_empty",
        &[
            ws.shown(&["schedule", "list"]),
            ws.shown(&["skills", "list"]),
            ws.shown(&["mcp", "list"]),
        ]
        .join("\n"),
    );
    std::fs::write(ws.path().join("a.txt"), "hello\n").unwrap();
    run_scripted(&ws, &server, &["run", "What does a.txt say?"]).await;
    snap(
        "sessions_list_full",
        &ws.shown(&["--color", "never", "sessions", "list"]),
    );
}

/// `args` against the scripted server (configured by variables, so the
/// workspace needs no trust).
async fn run_scripted(ws: &Ws, server: &MockServer, args: &[&str]) -> Output {
    let mut cmd = ws.command(args);
    cmd.env("TOOLGATE_LLM__BASE_URL", format!("{}/v1", server.uri()))
        .env("TOOLGATE_LLM__MODEL", "scripted")
        .env("TOOLGATE_LLM__STREAM", "false")
        .env("TOOLGATE_LLM__MAX_RETRIES", "0");
    let out = common::output(cmd).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn rules_list_add_and_remove() {
    let ws = Ws::new();
    let mut text = String::new();
    for args in [
        &["rules", "list"][..],
        &[
            "rules",
            "add",
            "--tool",
            "run_command",
            "--command",
            "git status",
            "--decision",
            "allow",
        ][..],
        &[
            "rules",
            "add",
            "--tool",
            "*",
            "--path",
            "docs/**",
            "--decision",
            "ask",
        ][..],
        &["rules", "list"][..],
        &["rules", "remove", "1"][..],
        &["rules", "list"][..],
        &["rules", "add", "--tool", "x", "--decision", "maybe"][..],
    ] {
        text.push_str(&format!("$ toolgate {}\n", args.join(" ")));
        text.push_str(&ws.shown(args));
        text.push('\n');
    }
    snap("rules", &text);
    assert!(ws.run(&["rules", "list"]).status.success());
}
