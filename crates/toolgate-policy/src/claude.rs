//! Claude Code's permission rules (`permissions.allow|ask|deny` in
//! `.claude/settings.json`) read as [`ConfirmationRule`]s, and ours
//! written back in Claude Code's syntax.
//!
//! This is security code: a rule is mapped only when toolgate can say for
//! sure what it means, and then never wider than Claude Code reads it for
//! `allow`, never narrower for `ask` and `deny`. Anything else is
//! [`Unmappable`], with the reason, for the caller to list.

use std::fmt;

use crate::confirmation::ConfirmationMode;
use crate::rules::{ANY_TOOL, Access, ConfirmationRule, ConfirmationRules, RuleDecision};

/// The longest tool name toolgate gives (longer MCP names are cut and
/// hashed, so a rule cannot name them).
const MAX_TOOL_NAME: usize = 64;

/// Why a Claude Code rule or mode has no toolgate equivalent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmappable {
    reason: String,
}

impl Unmappable {
    fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }

    /// The reason, in a sentence without a trailing period.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for Unmappable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

/// What Claude Code's rules are read against: where the paths of its file
/// rules are anchored, and which of our tools stand for its own.
#[derive(Debug, Clone, Copy)]
pub struct ClaudeContext<'a> {
    /// The workspace (Claude Code's project root and current directory),
    /// absolute, without a trailing `/`.
    pub root: &'a str,
    /// The user's home directory, for `~/…`, when known.
    pub home: Option<&'a str>,
    /// Our tools for Claude Code's `Bash`, `WebFetch` and `WebSearch`.
    pub tools: ClaudeTools<'a>,
}

/// The names of our tools that stand for Claude Code's own (the caller,
/// which assembles the tools, knows them; policy names no tool).
#[derive(Debug, Clone, Copy)]
pub struct ClaudeTools<'a> {
    /// The tool that runs `Bash`'s command lines.
    pub command: &'a str,
    /// The tool for `WebFetch`.
    pub web_fetch: &'a str,
    /// The tool for `WebSearch`.
    pub web_search: &'a str,
}

/// Maps one Claude Code rule from the list `decision` names (`allow`,
/// `ask`, `deny`) onto toolgate rules.
///
/// # Rules
///
/// 1. A rule is `Tool` or `Tool(specifier)`, nothing around it; anything
///    else is unmappable.
/// 2. `Bash(words)` is an exact command, `Bash(words:*)` and `Bash(words *)`
///    a prefix; a `*` anywhere else matches across words in Claude Code,
///    which toolgate's word-by-word rules cannot say for sure: unmappable.
///    The words are parsed as shell and must be plain. An `allow` rule is
///    for `run_command`; an `ask` or `deny` rule for every tool whose call
///    runs a command line (`*`). `Bash` alone: `ask`/`deny` every command
///    line; `allow` is unmappable (toolgate allows commands by prefix).
/// 3. `Read(path)` is a path rule on reads, `Edit(path)` and `Write(path)`
///    on changes, for every tool whose declared effects read or change
///    that file (`*`). Paths: `//abs` is absolute, `~/x` is below the home
///    directory, `/x` and `./x` and `x` are below the workspace; an
///    absolute path must be inside the workspace. A pattern without a `/`
///    (but a trailing one) matches at any depth in Claude Code's
///    gitignore syntax: `**/x` for `ask`/`deny`, `x` at the root only for
///    `allow`. A trailing `/` means everything below. `Read`, `Edit`,
///    `Write` alone mean every path.
/// 4. `WebFetch(domain:host)` is a domain rule (`web_fetch` for `allow`,
///    any tool reaching the host for `ask`/`deny`); `WebFetch` and
///    `WebSearch` alone are their tools.
/// 5. `mcp__server__tool` is our `mcp_server_tool`; `mcp__server`,
///    `mcp__server__*` and `mcp__server__prefix*` are the names starting
///    with `mcp_server_…` for `ask`/`deny`, and unmappable for `allow`
///    (our names do not say where a server's name ends, so such a pattern
///    could allow another server's tools). Names that toolgate would
///    change (other characters than letters, digits, `_`, `-`; longer
///    than 64 characters) are unmappable.
/// 6. Every other tool is unmappable.
///
/// Each rule returned compiles ([`ConfirmationRules::new`]); a rule that
/// would not is unmappable with the error.
///
/// # Errors
///
/// [`Unmappable`] with the reason.
pub fn claude_rule(
    text: &str,
    decision: RuleDecision,
    paths: &ClaudeContext<'_>,
) -> Result<Vec<ConfirmationRule>, Unmappable> {
    let tools = paths.tools;
    let (tool, spec) = split_rule(text)?;
    let allow = decision == RuleDecision::Allow;
    let rule = |tool: &str| ConfirmationRule {
        tool: tool.to_owned(),
        decision,
        ..ConfirmationRule::default()
    };
    let rules = match (tool, spec) {
        ("Bash", None) => {
            if allow {
                return Err(Unmappable::new(
                    "toolgate allows command lines by prefix, never all of them by one rule (use the mode yolo for that)",
                ));
            }
            vec![ConfirmationRule {
                command: Some("*".into()),
                ..rule(ANY_TOOL)
            }]
        }
        ("Bash", Some(spec)) => {
            let (words, exact) = bash_words(spec)?;
            let tool = if allow { tools.command } else { ANY_TOOL };
            vec![ConfirmationRule {
                command: Some(words),
                exact,
                ..rule(tool)
            }]
        }
        ("Read" | "Edit" | "Write", spec) => {
            let access = if tool == "Read" {
                Access::Read
            } else {
                Access::Write
            };
            let glob = match spec {
                None => "**".to_owned(),
                Some(spec) => path_glob(spec, allow, paths)?,
            };
            vec![ConfirmationRule {
                path: Some(glob),
                access: Some(access),
                ..rule(ANY_TOOL)
            }]
        }
        ("WebFetch", None) => vec![rule(tools.web_fetch)],
        ("WebFetch", Some(spec)) => {
            let Some(domain) = spec.strip_prefix("domain:") else {
                return Err(Unmappable::new(
                    "a WebFetch rule other than `domain:HOST` has no toolgate equivalent",
                ));
            };
            let tool = if allow { tools.web_fetch } else { ANY_TOOL };
            vec![ConfirmationRule {
                domain: Some(domain.to_owned()),
                ..rule(tool)
            }]
        }
        ("WebSearch", None) => vec![rule(tools.web_search)],
        (name, spec) if name.starts_with("mcp__") => {
            if spec.is_some() {
                return Err(Unmappable::new(
                    "an MCP rule takes no specifier in parentheses",
                ));
            }
            vec![rule(&mcp_tool(name, allow)?)]
        }
        (name, _) => {
            return Err(Unmappable::new(format!(
                "no toolgate tool or rule corresponds to Claude Code's `{name}`"
            )));
        }
    };
    if let Err(error) = ConfirmationRules::new(rules.iter().cloned()) {
        return Err(Unmappable::new(format!("toolgate cannot use it: {error}")));
    }
    Ok(rules)
}

/// Claude Code's `defaultMode` as a toolgate mode.
///
/// # Errors
///
/// [`Unmappable`] for any name Claude Code does not document.
pub fn claude_mode(text: &str) -> Result<ConfirmationMode, Unmappable> {
    match text {
        "default" => Ok(ConfirmationMode::ConfirmSensitive),
        "acceptEdits" => Ok(ConfirmationMode::AcceptEdits),
        "dontAsk" => Ok(ConfirmationMode::DontAsk),
        "bypassPermissions" => Ok(ConfirmationMode::Yolo),
        "plan" => Ok(ConfirmationMode::Plan),
        other => Err(Unmappable::new(format!(
            "`{other}` is not a Claude Code permission mode toolgate knows"
        ))),
    }
}

/// A toolgate rule in Claude Code's syntax: the rules that say the same,
/// for the list its decision names.
///
/// # Errors
///
/// [`Unmappable`] for what Claude Code cannot say: exceptions, a `*` inside
/// a command word, a path rule on any access but reads or changes with a
/// glob Claude Code reads otherwise, a rule for one of our tools Claude
/// Code does not have, MCP names (ours do not say where the server name
/// ends).
pub fn claude_text(
    rule: &ConfirmationRule,
    tools: &ClaudeTools<'_>,
) -> Result<Vec<String>, Unmappable> {
    if !rule.except.is_empty() {
        return Err(Unmappable::new("Claude Code rules have no exceptions"));
    }
    let tool = rule.tool.as_str();
    if let Some(command) = &rule.command {
        if tool != tools.command && tool != ANY_TOOL {
            return Err(Unmappable::new(format!(
                "Claude Code's Bash rules are for its own shell, not `{tool}`"
            )));
        }
        let command = command.trim();
        if command == "*" {
            return Ok(vec!["Bash".into()]);
        }
        let (words, open) = match command.strip_suffix(" *") {
            Some(words) => (words.trim_end(), true),
            None => (command, !rule.exact),
        };
        if words.contains('*') || words.contains(['(', ')']) {
            return Err(Unmappable::new(
                "a `*` or a parenthesis inside a command means something else to Claude Code",
            ));
        }
        return Ok(vec![if open {
            format!("Bash({words}:*)")
        } else {
            format!("Bash({words})")
        }]);
    }
    if let Some(glob) = &rule.path {
        if tool != ANY_TOOL {
            return Err(Unmappable::new(format!(
                "Claude Code's file rules are for every tool, not `{tool}`"
            )));
        }
        if glob.contains(['(', ')', '{', '}', '\\']) || glob.starts_with('!') {
            return Err(Unmappable::new(
                "the glob means something else in Claude Code's gitignore syntax",
            ));
        }
        let body = glob.trim_start_matches("./").trim_start_matches('/');
        let kinds: &[&str] = match rule.access {
            Some(Access::Read) => &["Read"],
            Some(Access::Write) => &["Edit"],
            None => &["Read", "Edit"],
        };
        return Ok(kinds
            .iter()
            .map(|kind| {
                if body == "**" {
                    (*kind).to_owned()
                } else {
                    // `/x` is anchored at the project root: Claude Code
                    // reads a bare `x` at any depth.
                    format!("{kind}(/{body})")
                }
            })
            .collect());
    }
    if let Some(domain) = &rule.domain {
        if tool != tools.web_fetch && tool != ANY_TOOL {
            return Err(Unmappable::new(format!(
                "Claude Code's domain rules are for WebFetch, not `{tool}`"
            )));
        }
        return Ok(vec![format!("WebFetch(domain:{domain})")]);
    }
    match tool {
        t if t == tools.web_fetch => Ok(vec!["WebFetch".into()]),
        t if t == tools.web_search => Ok(vec!["WebSearch".into()]),
        t if t == tools.command => Ok(vec!["Bash".into()]),
        _ => Err(Unmappable::new(format!(
            "Claude Code has no tool that is toolgate's `{tool}`"
        ))),
    }
}

/// Rule 1: `Tool` or `Tool(specifier)`.
fn split_rule(text: &str) -> Result<(&str, Option<&str>), Unmappable> {
    let name_ok = |name: &str| {
        !name.is_empty()
            && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '*')
    };
    let (name, spec) = match text.split_once('(') {
        None => (text, None),
        Some((name, rest)) => {
            let Some(spec) = rest.strip_suffix(')') else {
                return Err(Unmappable::new(
                    "the rule is not `Tool` or `Tool(specifier)`",
                ));
            };
            (name, Some(spec))
        }
    };
    if !name_ok(name) {
        return Err(Unmappable::new(
            "the rule is not `Tool` or `Tool(specifier)`",
        ));
    }
    if name.contains('*') && !name.starts_with("mcp__") {
        return Err(Unmappable::new(
            "a `*` in a tool name is for MCP tools only",
        ));
    }
    match spec {
        Some("") => Err(Unmappable::new("the specifier in parentheses is empty")),
        Some(spec) if spec.chars().any(char::is_control) => {
            Err(Unmappable::new("the specifier holds a control character"))
        }
        // `Bash(*)` is Claude Code's way to write `Bash`.
        Some("*") => Ok((name, None)),
        spec => Ok((name, spec)),
    }
}

/// Rule 2: the command words and whether they must be exact.
fn bash_words(spec: &str) -> Result<(String, bool), Unmappable> {
    let (words, exact) = if let Some(words) = spec.strip_suffix(":*") {
        (words, false)
    } else if let Some(words) = spec.strip_suffix(" *") {
        (words, false)
    } else {
        (spec, true)
    };
    let words = words.trim();
    if words.contains('*') {
        return Err(Unmappable::new(
            "a `*` that is not at the end matches across words in Claude Code; toolgate matches words",
        ));
    }
    if words.is_empty() {
        return Err(Unmappable::new("the command is empty"));
    }
    Ok((words.to_owned(), exact))
}

/// Rule 3: a Claude Code path pattern as a glob below the workspace.
fn path_glob(spec: &str, allow: bool, paths: &ClaudeContext<'_>) -> Result<String, Unmappable> {
    if spec.starts_with('!') || spec.contains(['\\', '{', '}']) {
        return Err(Unmappable::new(
            "negations, escapes and braces mean different things in gitignore patterns and toolgate globs",
        ));
    }
    let outside = || {
        Unmappable::new(
            "the path is outside the workspace; toolgate's path rules are anchored there (files nobody may read belong in guardrails.sensitive_files or commands.deny_read)",
        )
    };
    let (relative, anchored) = if let Some(abs) = spec.strip_prefix("//") {
        (
            below(&format!("/{abs}"), paths.root).ok_or_else(outside)?,
            true,
        )
    } else if let Some(rest) = spec.strip_prefix("~/") {
        let home = paths.home.ok_or_else(|| {
            Unmappable::new("the path is below the home directory, which is not known")
        })?;
        (
            below(
                &format!("{}/{rest}", home.trim_end_matches('/')),
                paths.root,
            )
            .ok_or_else(outside)?,
            true,
        )
    } else if spec.starts_with('~') {
        return Err(Unmappable::new("`~user` paths are not supported"));
    } else if let Some(rest) = spec.strip_prefix('/') {
        (rest.to_owned(), true)
    } else if let Some(rest) = spec.strip_prefix("./") {
        (rest.to_owned(), false)
    } else {
        (spec.to_owned(), false)
    };
    if relative.split('/').any(|c| c == "..") {
        return Err(outside());
    }
    let (body, dir) = match relative.strip_suffix('/') {
        Some(body) => (body.to_owned(), true),
        None => (relative, false),
    };
    if body.is_empty() {
        return Ok("**".into());
    }
    let floating = !anchored && !body.contains('/');
    let mut glob = if floating && !allow {
        format!("**/{body}")
    } else {
        body
    };
    if dir {
        glob.push_str("/**");
    }
    Ok(glob)
}

/// `path` relative to `root` when it is `root` or below it.
fn below(path: &str, root: &str) -> Option<String> {
    let root = root.trim_end_matches('/');
    match path.strip_prefix(root)? {
        "" | "/" => Some(String::new()),
        rest => rest.strip_prefix('/').map(str::to_owned),
    }
}

/// Rule 5: our name, or name pattern, for an MCP rule.
fn mcp_tool(name: &str, allow: bool) -> Result<String, Unmappable> {
    let rest = name.trim_start_matches("mcp__");
    let (server, tool) = match rest.split_once("__") {
        Some((server, tool)) => (server, Some(tool)),
        None => (rest, None),
    };
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    if !plain(server) || server.contains("__") {
        return Err(Unmappable::new(
            "the server's name has characters toolgate replaces in tool names, or a `*`",
        ));
    }
    let pattern = match tool {
        None | Some("*") => None,
        Some(tool) => match tool.strip_suffix('*') {
            Some(head) if !head.contains('*') && (head.is_empty() || plain(head)) => Some(head),
            Some(_) => {
                return Err(Unmappable::new(
                    "a `*` in an MCP tool name is only understood at its end",
                ));
            }
            None if plain(tool) && !tool.contains("__") => {
                let ours = format!("mcp_{server}_{tool}");
                if ours.len() > MAX_TOOL_NAME {
                    return Err(Unmappable::new(
                        "toolgate shortens tool names longer than 64 characters, so a rule cannot name it",
                    ));
                }
                return Ok(ours);
            }
            None => {
                return Err(Unmappable::new(
                    "the tool's name has characters toolgate replaces in tool names",
                ));
            }
        },
    };
    if allow {
        return Err(Unmappable::new(
            "toolgate names MCP tools mcp_SERVER_TOOL, so a pattern over one server's tools could also allow those of a server whose name starts the same; allow its tools one by one",
        ));
    }
    Ok(format!("mcp_{server}_{}*", pattern.unwrap_or("")))
}
