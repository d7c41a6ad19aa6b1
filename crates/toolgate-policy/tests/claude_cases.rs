#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]
//! Claude Code's permission rules, from its documented examples, mapped
//! onto ours and written back; and what the mapped rules decide.

use std::fmt::Write as _;

use toolgate_core::{Change, Effect, Effects};
use toolgate_policy::{
    Access, ClaudeContext, ClaudeTools, ConfirmationMode, ConfirmationRule, ConfirmationRules,
    RuleDecision, claude_mode, claude_rule, claude_text,
};

use RuleDecision::{Allow, Ask, Deny};

const PATHS: ClaudeContext<'static> = ClaudeContext {
    root: "/home/me/proj",
    home: Some("/home/me"),
    tools: ClaudeTools {
        command: "run_command",
        web_fetch: "web_fetch",
        web_search: "web_search",
    },
};

/// A mapped rule in a line: `tool command|path|domain [exact] [read|write]`.
fn brief(rule: &ConfirmationRule) -> String {
    let mut text = rule.tool.clone();
    if let Some(command) = &rule.command {
        let _ = write!(text, " command `{command}`");
    }
    if let Some(path) = &rule.path {
        let _ = write!(text, " path `{path}`");
    }
    if let Some(domain) = &rule.domain {
        let _ = write!(text, " domain `{domain}`");
    }
    if rule.exact {
        text.push_str(" exact");
    }
    match rule.access {
        Some(Access::Read) => text.push_str(" read"),
        Some(Access::Write) => text.push_str(" write"),
        _ => {}
    }
    text
}

/// (list, Claude Code rule, ours in brief, or the start of the reason it
/// is unmappable, and the rule written back in Claude Code's syntax).
/// A case: the list, the rule, what it maps to, what it is written back as.
type Case = (
    RuleDecision,
    &'static str,
    Result<&'static str, &'static str>,
    Option<&'static str>,
);

const CASES: &[Case] = &[
    // Bash: exact, prefix (both spellings), whole tool.
    (
        Allow,
        "Bash(npm run test:*)",
        Ok("run_command command `npm run test`"),
        Some("Bash(npm run test:*)"),
    ),
    (
        Allow,
        "Bash(npm run test *)",
        Ok("run_command command `npm run test`"),
        Some("Bash(npm run test:*)"),
    ),
    (
        Allow,
        "Bash(npm run build)",
        Ok("run_command command `npm run build` exact"),
        Some("Bash(npm run build)"),
    ),
    (
        Allow,
        "Bash(git diff)",
        Ok("run_command command `git diff` exact"),
        Some("Bash(git diff)"),
    ),
    (
        Allow,
        "Bash(git log *)",
        Ok("run_command command `git log`"),
        Some("Bash(git log:*)"),
    ),
    (
        Deny,
        "Bash(git push:*)",
        Ok("* command `git push`"),
        Some("Bash(git push:*)"),
    ),
    (
        Deny,
        "Bash(curl:*)",
        Ok("* command `curl`"),
        Some("Bash(curl:*)"),
    ),
    (
        Ask,
        "Bash(git clean *)",
        Ok("* command `git clean`"),
        Some("Bash(git clean:*)"),
    ),
    (
        Deny,
        "Bash(rm -rf /)",
        Ok("* command `rm -rf /` exact"),
        Some("Bash(rm -rf /)"),
    ),
    (Deny, "Bash", Ok("* command `*`"), Some("Bash")),
    (Deny, "Bash(*)", Ok("* command `*`"), Some("Bash")),
    (
        Allow,
        "Bash",
        Err("toolgate allows command lines by prefix"),
        None,
    ),
    (
        Allow,
        "Bash(git * main)",
        Err("a `*` that is not at the end"),
        None,
    ),
    (
        Allow,
        "Bash(* install)",
        Err("a `*` that is not at the end"),
        None,
    ),
    (
        Allow,
        "Bash(npm*)",
        Err("a `*` that is not at the end"),
        None,
    ),
    (
        Deny,
        "Bash(ls *.txt)",
        Err("a `*` that is not at the end"),
        None,
    ),
    (
        Allow,
        "Bash(npm test && rm -rf /)",
        Err("toolgate cannot use it: rule 1 has an unusable command prefix"),
        None,
    ),
    (
        Allow,
        "Bash(FOO=1 make)",
        Err("toolgate cannot use it"),
        None,
    ),
    (
        Allow,
        "Bash()",
        Err("the specifier in parentheses is empty"),
        None,
    ),
    (
        Allow,
        "Bash(ls",
        Err("the rule is not `Tool` or `Tool(specifier)`"),
        None,
    ),
    // Files, by effects: any tool that reads or changes them.
    (
        Deny,
        "Read(./.env)",
        Ok("* path `**/.env` read"),
        Some("Read(/**/.env)"),
    ),
    (
        Deny,
        "Read(.env)",
        Ok("* path `**/.env` read"),
        Some("Read(/**/.env)"),
    ),
    (
        Deny,
        "Read(./secrets/**)",
        Ok("* path `secrets/**` read"),
        Some("Read(/secrets/**)"),
    ),
    (
        Allow,
        "Read(./.env)",
        Ok("* path `.env` read"),
        Some("Read(/.env)"),
    ),
    (
        Allow,
        "Edit(src/**)",
        Ok("* path `src/**` write"),
        Some("Edit(/src/**)"),
    ),
    (
        Allow,
        "Edit(/src/**/*.ts)",
        Ok("* path `src/**/*.ts` write"),
        Some("Edit(/src/**/*.ts)"),
    ),
    (
        Allow,
        "Write(docs/**)",
        Ok("* path `docs/**` write"),
        Some("Edit(/docs/**)"),
    ),
    (
        Deny,
        "Edit(//home/me/proj/config/**)",
        Ok("* path `config/**` write"),
        Some("Edit(/config/**)"),
    ),
    (
        Deny,
        "Read(~/proj/.git/**)",
        Ok("* path `.git/**` read"),
        Some("Read(/.git/**)"),
    ),
    (
        Deny,
        "Read(build/)",
        Ok("* path `**/build/**` read"),
        Some("Read(/**/build/**)"),
    ),
    (Allow, "Read", Ok("* path `**` read"), Some("Read")),
    (Deny, "Edit", Ok("* path `**` write"), Some("Edit")),
    (
        Deny,
        "Read(~/.ssh/**)",
        Err("the path is outside the workspace"),
        None,
    ),
    (
        Deny,
        "Read(//etc/passwd)",
        Err("the path is outside the workspace"),
        None,
    ),
    (
        Deny,
        "Read(../other/**)",
        Err("the path is outside the workspace"),
        None,
    ),
    (
        Deny,
        "Read(!keep)",
        Err("negations, escapes and braces"),
        None,
    ),
    (Deny, "Read(~bob/x)", Err("`~user` paths"), None),
    // The web.
    (
        Allow,
        "WebFetch(domain:example.com)",
        Ok("web_fetch domain `example.com`"),
        Some("WebFetch(domain:example.com)"),
    ),
    (
        Deny,
        "WebFetch(domain:evil.example)",
        Ok("* domain `evil.example`"),
        Some("WebFetch(domain:evil.example)"),
    ),
    (Allow, "WebFetch", Ok("web_fetch"), Some("WebFetch")),
    (Deny, "WebSearch", Ok("web_search"), Some("WebSearch")),
    (
        Allow,
        "WebFetch(https://example.com)",
        Err("a WebFetch rule other than `domain:HOST`"),
        None,
    ),
    (
        Allow,
        "WebFetch(domain:exa mple.com)",
        Err("toolgate cannot use it"),
        None,
    ),
    // MCP: our names are mcp_SERVER_TOOL.
    (
        Allow,
        "mcp__github__get_file_contents",
        Ok("mcp_github_get_file_contents"),
        None,
    ),
    (
        Deny,
        "mcp__filesystem__read_file",
        Ok("mcp_filesystem_read_file"),
        None,
    ),
    (Deny, "mcp__github", Ok("mcp_github_*"), None),
    (Ask, "mcp__github__*", Ok("mcp_github_*"), None),
    (Deny, "mcp__github__get_*", Ok("mcp_github_get_*"), None),
    (
        Allow,
        "mcp__github",
        Err("toolgate names MCP tools mcp_SERVER_TOOL"),
        None,
    ),
    (
        Allow,
        "mcp__github__get_*",
        Err("toolgate names MCP tools mcp_SERVER_TOOL"),
        None,
    ),
    (
        Allow,
        "mcp__git.hub__x",
        Err("the rule is not `Tool` or `Tool(specifier)`"),
        None,
    ),
    (Deny, "mcp__*__x", Err("the server's name"), None),
    (
        Deny,
        "mcp__github__x(y)",
        Err("an MCP rule takes no specifier"),
        None,
    ),
    // Everything else.
    (
        Allow,
        "Task",
        Err("no toolgate tool or rule corresponds to Claude Code's `Task`"),
        None,
    ),
    (
        Allow,
        "Skill(plugin:*)",
        Err("no toolgate tool or rule corresponds"),
        None,
    ),
    (
        Deny,
        "NotebookEdit",
        Err("no toolgate tool or rule corresponds"),
        None,
    ),
    (Deny, "", Err("the rule is not"), None),
    (Deny, " Bash", Err("the rule is not"), None),
    (
        Deny,
        "Bash*",
        Err("a `*` in a tool name is for MCP tools only"),
        None,
    ),
];

#[test]
fn claude_rules_map_onto_ours_and_back() {
    for (decision, text, want, back) in CASES {
        let got = claude_rule(text, *decision, &PATHS);
        match (want, &got) {
            (Ok(brief_want), Ok(rules)) => {
                let briefs: Vec<String> = rules.iter().map(brief).collect();
                assert_eq!(briefs, [*brief_want], "{decision} {text}");
                assert!(rules.iter().all(|r| r.decision == *decision), "{text}");
                let written = rules
                    .iter()
                    .map(|r| claude_text(r, &PATHS.tools))
                    .collect::<Result<Vec<_>, _>>();
                match back {
                    Some(back) => {
                        let written = written.unwrap_or_else(|e| panic!("{text}: {e}"));
                        assert_eq!(written.concat(), [*back], "{decision} {text}");
                        // The round trip: read back, it is the same rule.
                        let again = claude_rule(back, *decision, &PATHS).unwrap();
                        assert_eq!(&again, rules, "{decision} {text} -> {back}");
                    }
                    None => assert!(written.is_err(), "{text}: {written:?}"),
                }
            }
            (Err(reason), Err(error)) => {
                assert!(
                    error.reason().starts_with(reason),
                    "{decision} {text}: {error}"
                );
            }
            _ => panic!("{decision} {text}: {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn ours_written_in_claude_codes_syntax() {
    let rule = |json: &str| -> ConfirmationRule { serde_json::from_str(json).unwrap() };
    let cases: &[(&str, Result<&[&str], &str>)] = &[
        (
            r#"{"tool": "run_command", "command": "cargo test", "decision": "allow"}"#,
            Ok(&["Bash(cargo test:*)"]),
        ),
        (
            r#"{"tool": "run_command", "command": "git diff", "exact": true, "decision": "allow"}"#,
            Ok(&["Bash(git diff)"]),
        ),
        (
            r#"{"tool": "run_command", "command": "git diff *", "exact": true, "decision": "allow"}"#,
            Ok(&["Bash(git diff:*)"]),
        ),
        (
            r#"{"tool": "*", "path": "secrets/**", "decision": "deny"}"#,
            Ok(&["Read(/secrets/**)", "Edit(/secrets/**)"]),
        ),
        (
            r#"{"tool": "*", "domain": "docs.rs", "decision": "allow"}"#,
            Ok(&["WebFetch(domain:docs.rs)"]),
        ),
        (
            r#"{"tool": "*", "command": "git push", "except": ["git push origin x"], "decision": "deny"}"#,
            Err("Claude Code rules have no exceptions"),
        ),
        (
            r#"{"tool": "run_command", "command": "git checkout feature/*", "decision": "allow"}"#,
            Err("a `*` or a parenthesis"),
        ),
        (
            r#"{"tool": "write_file", "path": "docs/**", "decision": "allow"}"#,
            Err("Claude Code's file rules are for every tool"),
        ),
        (
            r#"{"tool": "mcp_github_create_issue", "decision": "deny"}"#,
            Err("Claude Code has no tool"),
        ),
        (
            r#"{"tool": "my_tool", "command": "make", "decision": "deny"}"#,
            Err("Claude Code's Bash rules are for its own shell"),
        ),
    ];
    for (json, want) in cases {
        let got = claude_text(&rule(json), &PATHS.tools);
        match (want, &got) {
            (Ok(want), Ok(got)) => assert_eq!(got, want, "{json}"),
            (Err(reason), Err(error)) => {
                assert!(error.reason().starts_with(reason), "{json}: {error}");
            }
            _ => panic!("{json}: {got:?}"),
        }
    }
}

#[test]
fn claude_modes() {
    let cases: &[(&str, Result<ConfirmationMode, &str>)] = &[
        ("default", Ok(ConfirmationMode::ConfirmSensitive)),
        ("acceptEdits", Ok(ConfirmationMode::AcceptEdits)),
        ("dontAsk", Ok(ConfirmationMode::DontAsk)),
        ("bypassPermissions", Ok(ConfirmationMode::Yolo)),
        ("plan", Ok(ConfirmationMode::Plan)),
        ("yolo", Err("`yolo` is not a Claude Code permission mode")),
    ];
    for (text, want) in cases {
        let got = claude_mode(text).map_err(|e| e.reason().to_owned());
        match (want, got) {
            (Ok(mode), Ok(got)) => assert_eq!(got, *mode, "{text}"),
            (Err(reason), Err(got)) => assert!(got.starts_with(reason), "{text}: {got}"),
            (_, got) => panic!("{text}: {got:?}"),
        }
    }
}

fn line(command: &str) -> Effects {
    Effects::known([Effect::command(command, None)])
}

/// What the mapped rules decide, for the settings of the issue: deny
/// `Bash(git push:*)`, allow `Bash(npm run test:*)`, deny `Read(./.env)`.
#[test]
fn mapped_rules_decide_as_claude_code_reads_them_and_fail_closed() {
    let mut rules = Vec::new();
    for (decision, text) in [
        (Deny, "Bash(git push:*)"),
        (Allow, "Bash(npm run test:*)"),
        (Deny, "Read(./.env)"),
        (Allow, "Edit(src/**)"),
    ] {
        rules.extend(claude_rule(text, decision, &PATHS).unwrap());
    }
    let write = |p: &str| Effects::known([Effect::write(p, Change::counted(1, 0, true))]);
    let cases: &[(&str, Effects, Option<RuleDecision>)] = &[
        ("run_command", line("npm run test"), Some(Allow)),
        ("run_command", line("npm run test -- --watch"), Some(Allow)),
        ("run_command", line("npm run test; curl x | sh"), None),
        ("run_command", line("npm run test && git push"), Some(Deny)),
        ("run_command", line("npm run testx"), None),
        ("run_command", line("git push --force"), Some(Deny)),
        ("run_command", line("git -C . push"), Some(Deny)),
        ("run_command", line("sh -c 'git push'"), Some(Deny)),
        ("my_dynamic_runner", line("git push"), Some(Deny)),
        (
            "read_file",
            Effects::known([Effect::read(".env")]),
            Some(Deny),
        ),
        (
            "read_file",
            Effects::known([Effect::read("sub/.env")]),
            Some(Deny),
        ),
        (
            "search",
            Effects::known([Effect::read("/home/me/proj/.env")]),
            Some(Deny),
        ),
        (
            "read_file",
            Effects::known([Effect::read(".env.example")]),
            None,
        ),
        ("write_file", write(".env"), None),
        ("write_file", write("src/a.rs"), Some(Allow)),
        ("edit_file", write("src/x/b.rs"), Some(Allow)),
        ("write_file", write("docs/a.md"), None),
        (
            "delete_file",
            Effects::known([Effect::Delete {
                path: "src/a.rs".into(),
                lines_removed: 1,
            }]),
            None,
        ),
    ];
    let rules_root = ConfirmationRules::builder()
        .root("/home/me/proj")
        .rules(rules)
        .build()
        .unwrap();
    for (tool, effects, want) in cases {
        assert_eq!(
            rules_root.evaluate(tool, effects).map(|m| m.decision()),
            *want,
            "{tool} {effects:?}"
        );
    }
}

/// A small deterministic generator of rule texts: pieces of the
/// documented syntax and hostile characters. Parsing never panics, an
/// `allow` mapping always compiles, and what an `allow` mapping lets run
/// the `deny` mapping of the same text refuses.
#[test]
fn generated_rules_never_panic_and_allow_never_exceeds_deny() {
    const TOOLS: &[&str] = &[
        "Bash",
        "Read",
        "Edit",
        "Write",
        "WebFetch",
        "mcp__s",
        "mcp__s__t",
        "Task",
        "bash",
        "",
    ];
    const PIECES: &[&str] = &[
        "git",
        " ",
        "push",
        ":*",
        " *",
        "*",
        "(",
        ")",
        ";",
        "&&",
        "|",
        "$x",
        "'",
        "\"",
        "~/",
        "//",
        "/",
        "./",
        "..",
        "**",
        ".env",
        "domain:",
        "example.com",
        "\n",
        "\\",
        "!",
        "{a,b}",
        "-rf",
        "npm run test",
        "HEAD:refs/for/*",
        "$(id)",
        "`id`",
        ">",
        "<",
        "#",
        "=",
        "é",
    ];
    const LINES: &[&str] = &[
        "git push",
        "git push origin main",
        "npm run test",
        "npm run test; rm -rf /",
        "git push && ls",
        "rm -rf /",
        "ls",
        "echo $(git push)",
        "sh -c 'git push'",
        "git",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        usize::try_from(seed % 1024).unwrap()
    };
    for _ in 0..20_000 {
        let tool = TOOLS[next() % TOOLS.len()];
        let mut text = tool.to_owned();
        if next() % 4 != 0 {
            text.push('(');
            for _ in 0..(next() % 5) {
                text.push_str(PIECES[next() % PIECES.len()]);
            }
            if next() % 8 != 0 {
                text.push(')');
            }
        }
        let allow = claude_rule(&text, Allow, &PATHS);
        let deny = claude_rule(&text, Deny, &PATHS);
        let Ok(allow) = allow else { continue };
        let allow = ConfirmationRules::new(allow).unwrap();
        let deny = ConfirmationRules::new(
            deny.unwrap_or_else(|e| panic!("{text:?}: allow maps, deny does not: {e}")),
        )
        .unwrap();
        for command in LINES {
            let effects = line(command);
            for tool in ["run_command", "web_fetch", "mcp_s_t"] {
                if allow.evaluate(tool, &effects).is_some() {
                    assert!(
                        deny.evaluate(tool, &effects).is_some(),
                        "{text:?} {command:?}"
                    );
                }
            }
        }
    }
}
