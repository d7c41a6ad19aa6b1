//! What an approval card shows: the gate's one description of the call
//! ([`ApprovalView`](toolgate_engine::ApprovalView)), cleaned for a person,
//! with the same lines the terminal shows, and the rule "Always allow" would
//! save.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolgate_core::{Effect, Effects};
use toolgate_engine::{ApprovalRequest, Budget, fold};
use toolgate_policy::{ConfirmationRule, RuleDecision};

/// Describes calls waiting for approval.
pub(crate) struct Describer {
    workspace: PathBuf,
}

impl Describer {
    pub(crate) fn new(workspace: PathBuf) -> Self {
        Self { workspace }
    }

    /// The workspace the calls' paths are relative to.
    pub(crate) fn workspace(&self) -> &Path {
        &self.workspace
    }
}

/// The approval's fields (all but `id`, `session`, `agent`, `created`):
/// `view`, the gate's description with every string neutralised (the
/// page is a screen: bidirectional and invisible characters would
/// reorder or hide text there too); `lines`, the whole view as the
/// terminal shows it, each `{role, text}`; `folded`, the same shortened
/// to a card, with `hidden` saying how much it leaves out (the page
/// takes no "allow" before the person has expanded it); and `always`.
pub(crate) fn describe(request: &ApprovalRequest<'_>) -> Value {
    let mut view = serde_json::to_value(request.view).unwrap_or(Value::Null);
    neutralize_strings(&mut view);
    let lines = request.view.lines();
    let folded = fold(&lines, Budget::default());
    let line_json = |lines: &[toolgate_engine::Line]| -> Vec<Value> {
        lines
            .iter()
            .map(|l| json!({"role": l.role.as_str(), "text": l.text}))
            .collect()
    };
    json!({
        "tool": view["tool"].clone(),
        "why": view["reason"].clone(),
        "view": view,
        "lines": line_json(&lines),
        "folded": {
            "lines": line_json(&folded.lines),
            "hidden": folded.hidden.map(|h| json!({
                "lines": h.lines,
                "bytes": h.bytes,
                "text": h.to_string(),
            })),
        },
        "always": always_rule(request.tool, request.effects),
    })
}

/// Every string in `value` neutralised for a screen.
fn neutralize_strings(value: &mut Value) {
    match value {
        Value::String(text) => {
            if let std::borrow::Cow::Owned(clean) = toolgate_core::neutralize(text) {
                *text = clean;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(neutralize_strings),
        Value::Object(map) => map.values_mut().for_each(neutralize_strings),
        _ => {}
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
    toolgate_host::confirmation_rules_builder()
        .rules([candidate.clone()])
        .build()
        .ok()?;
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
        Effects::known([Effect::command(line, None)])
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
    fn strings_are_neutralised_for_the_page() {
        let mut value = json!({"a": ["ok\u{1b}[8m", {"b": "x\u{202E}y"}], "n": 1});
        neutralize_strings(&mut value);
        let text = value.to_string();
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{202E}'),
            "{text}"
        );
        assert_eq!(value["n"], 1);
    }
}
