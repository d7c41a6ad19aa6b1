//! What an approval card shows: a call's declared effects made concrete —
//! the command as classified, the diff a write would make, the MCP server
//! and arguments — and the rule "Always allow" would save.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use toolgate_core::{Effect, Effects};
use toolgate_engine::ApprovalRequest;
use toolgate_policy::{CommandPolicy, ConfirmationRule, ConfirmationRules, RuleDecision};

/// A file larger than this is not read to show a diff.
const MAX_DIFF_SOURCE: u64 = 2 * 1024 * 1024;
/// A diff longer than this is cut (the card says so).
const MAX_DIFF: usize = 200 * 1024;

/// Describes calls waiting for approval.
pub(crate) struct Describer {
    workspace: PathBuf,
    policy: Arc<CommandPolicy>,
}

/// Where an MCP tool comes from: local name → (server, remote name).
pub type McpNames = HashMap<String, (String, String)>;

impl Describer {
    pub(crate) fn new(workspace: PathBuf, policy: Arc<CommandPolicy>) -> Self {
        Self { workspace, policy }
    }

    /// The workspace the calls' paths are relative to.
    pub(crate) fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The approval's fields (all but `id`, `session`, `agent`, `created`).
    pub(crate) fn describe(&self, request: &ApprovalRequest<'_>, mcp: &McpNames) -> Value {
        let effects = request.effects;
        let mut commands = Vec::new();
        let mut changes = Vec::new();
        let mut network = Vec::new();
        let mut reads = Vec::new();
        for effect in effects.list() {
            match effect {
                Effect::Command { command, cwd } => {
                    let verdict = self.policy.classify(command);
                    commands.push(json!({
                        "line": command,
                        "cwd": cwd,
                        "class": verdict.label(),
                        "reason": verdict.reason(),
                    }));
                }
                Effect::Write { path, change } => {
                    let diff = change.content.as_deref().map(|new| self.diff(path, new));
                    changes.push(json!({
                        "path": path,
                        "kind": if change.creates { "create" } else { "write" },
                        "to": null,
                        "diff": diff,
                        "lines_added": change.lines_added,
                        "lines_removed": change.lines_removed,
                    }));
                }
                Effect::Delete {
                    path,
                    lines_removed,
                } => changes.push(json!({
                    "path": path, "kind": "delete", "to": null, "diff": null,
                    "lines_added": 0, "lines_removed": lines_removed,
                })),
                Effect::Move { from, to } => changes.push(json!({
                    "path": from, "kind": "move", "to": to, "diff": null,
                    "lines_added": 0, "lines_removed": 0,
                })),
                Effect::Network { url } => network.push(Value::from(url.as_str())),
                Effect::Read { path, .. } => reads.push(Value::from(path.as_str())),
                _ => {}
            }
        }
        let mcp = mcp
            .get(request.tool)
            .map(|(server, tool)| json!({"server": server, "tool": tool}));
        json!({
            "tool": request.tool,
            "call_id": request.call_id,
            "args": request.args,
            "why": request.reason(),
            "rule": request.rule,
            "commands": commands,
            "changes": changes,
            "network": network,
            "reads": reads,
            "mcp": mcp,
            "opaque": effects.is_opaque(),
            "always": always_rule(request.tool, effects),
        })
    }

    /// The unified diff of writing `new` to `path` (workspace-relative).
    fn diff(&self, path: &str, new: &str) -> String {
        let old = self.current(path).unwrap_or_default();
        let mut diff = toolgate_tools::edit::unified_diff(path, &old, new);
        if diff.len() > MAX_DIFF {
            let mut end = MAX_DIFF;
            while !diff.is_char_boundary(end) {
                end -= 1;
            }
            diff.truncate(end);
            diff.push_str("\n… (diff cut: too long to show)\n");
        }
        diff
    }

    /// The file's text now, when it is a plain relative path inside the
    /// workspace, small and UTF-8. The gate has already judged the path
    /// (a sensitive or outside file never reaches a person).
    fn current(&self, path: &str) -> Option<String> {
        let relative = Path::new(path);
        if !relative
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return None;
        }
        let file = self.workspace.join(relative);
        let meta = std::fs::symlink_metadata(&file).ok()?;
        if !meta.is_file() || meta.len() > MAX_DIFF_SOURCE {
            return None;
        }
        std::fs::read_to_string(file).ok()
    }
}

/// The rule "Always allow" saves for this call, when one narrow rule
/// covers it: a command prefix for one simple command, a path for one
/// file, the tool for a tool whose effects are opaque. `None` otherwise
/// (several files, compound commands): the person can still allow for
/// the session, or write a rule by hand.
pub(crate) fn always_rule(tool: &str, effects: &Effects) -> Option<ConfirmationRule> {
    let rule = |command: Option<String>, path: Option<String>| ConfirmationRule {
        tool: tool.to_owned(),
        command,
        path,
        decision: RuleDecision::Allow,
    };
    let candidate = if effects.is_opaque() {
        rule(None, None)
    } else {
        let commands: Vec<&str> = effects
            .list()
            .iter()
            .filter_map(|e| match e {
                Effect::Command { command, .. } => Some(command.as_str()),
                _ => None,
            })
            .collect();
        let paths = effects.paths();
        match (commands.as_slice(), paths.as_slice()) {
            ([command], []) => rule(Some(command_prefix(command)?), None),
            ([], [path]) => rule(None, Some(toolgate_policy::escape_glob(path))),
            _ => return None,
        }
    };
    // Only what the gate would accept as a rule (not too broad).
    ConfirmationRules::new([candidate.clone()]).ok()?;
    Some(candidate)
}

/// The words a rule for `command` names: its leading plain words (the
/// program and subcommands: `cargo test`, `npm run build`), at most three.
/// `None` when that would be the program alone while the command goes on
/// (`rm -rf x`, `python3 script.py`: a rule for every `rm` or every Python
/// program is not what allowing one call meant), and for any line an
/// `allow` rule cannot cover ([`toolgate_policy::plain_words`]: shell
/// syntax, variables, several commands).
fn command_prefix(command: &str) -> Option<String> {
    const MAX_WORDS: usize = 3;
    let words = toolgate_policy::plain_words(command)?;
    let plain = |w: &str| {
        !w.starts_with('-')
            && !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    let leading = words.iter().take_while(|w| plain(w)).count();
    let taken = leading.min(MAX_WORDS);
    if taken == 0 || (taken == 1 && words.len() > 1) {
        return None;
    }
    Some(words[..taken].join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::Change;

    fn command(line: &str) -> Effects {
        Effects::known([Effect::Command {
            command: line.to_owned(),
            cwd: None,
        }])
    }

    #[test]
    fn command_prefixes() {
        let cases: &[(&str, Option<&str>)] = &[
            ("cargo test", Some("cargo test")),
            ("cargo test --all", Some("cargo test")),
            ("git status -s", Some("git status")),
            ("npm run build -- --watch", Some("npm run build")),
            ("git remote add origin x", Some("git remote add")),
            ("pytest", Some("pytest")),
            ("  make  ", Some("make")),
            ("ls -la", None),
            ("rm -rf build", None),
            ("python3 script.py", None),
            ("node -e x", None),
            ("git -C /etc status", None),
            ("cargo test; rm -rf /", None),
            ("cargo test && curl x", None),
            ("echo $(id)", None),
            ("echo `id`", None),
            ("FOO=1 cargo test", None),
            ("cat 'a b'", None),
            ("./script.sh", None),
            ("/bin/rm -rf x", None),
            ("rm *", None),
            ("", None),
            ("cargo test\nrm -rf /", None),
        ];
        for (line, expected) in cases {
            assert_eq!(command_prefix(line).as_deref(), *expected, "{line:?}");
        }
    }

    #[test]
    fn always_rules() {
        let r = always_rule("run_command", &command("cargo test --all")).unwrap();
        assert_eq!(r.command.as_deref(), Some("cargo test"));
        assert_eq!(r.decision, RuleDecision::Allow);
        assert!(always_rule("run_command", &command("a; b")).is_none());

        let write = Effects::known([Effect::write("src/[a].rs", Change::from_texts(None, "x"))]);
        let r = always_rule("write_file", &write).unwrap();
        assert_eq!(r.path.as_deref(), Some("src/\\[a\\].rs"));

        let two = Effects::known([
            Effect::write("a", Change::from_texts(None, "x")),
            Effect::write("b", Change::from_texts(None, "x")),
        ]);
        assert!(always_rule("apply_patch", &two).is_none());

        let r = always_rule("mcp_fs_write", &Effects::Opaque).unwrap();
        assert_eq!((r.command, r.path), (None, None));
    }

    #[test]
    fn a_write_is_shown_as_the_diff_against_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "old text\n").unwrap();
        let d = Describer::new(dir.path().to_owned(), Arc::new(CommandPolicy::default()));
        let diff = d.diff("a.txt", "new text\n");
        assert!(
            diff.contains("-old text") && diff.contains("+new text"),
            "{diff}"
        );
        // Outside or odd paths are not read.
        assert_eq!(d.current("../a.txt"), None);
        assert_eq!(d.current("/etc/passwd"), None);
        let created = d.diff("b.txt", "hello\n");
        assert!(created.contains("+hello"), "{created}");
    }
}
