//! What an approval card shows: the gate's one description of the call
//! ([`ApprovalView`](toolgate_engine::ApprovalView)), cleaned for a person,
//! with the same lines the terminal shows, and the rule "Always allow" would
//! save.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolgate_core::Effects;
use toolgate_engine::{ApprovalRequest, ApprovalView, Budget, fold};
use toolgate_policy::ConfirmationRule;

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
    let always = always_rule(request.tool, request.effects);
    describe_view(request.view, always.as_ref())
}

/// The same card from a view and its "Always allow" rule alone: a view
/// another process asked about, read from the store.
pub(crate) fn describe_view(approval: &ApprovalView, always: Option<&ConfirmationRule>) -> Value {
    let mut view = serde_json::to_value(approval).unwrap_or(Value::Null);
    neutralize_strings(&mut view);
    let lines = approval.lines();
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
        "always": always,
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
/// covers it ([`toolgate_policy::narrow_allow_rule_for`]): a command prefix
/// for one simple command, a path for one file, the tool for a tool whose
/// effects are opaque. `None` otherwise: the person can still allow for
/// the session, or write a rule by hand.
pub(crate) fn always_rule(tool: &str, effects: &Effects) -> Option<ConfirmationRule> {
    toolgate_policy::narrow_allow_rule_for(tool, effects)
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::{Change, Effect};
    use toolgate_policy::RuleDecision;

    fn command(line: &str) -> Effects {
        Effects::known([Effect::command(line, None)])
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
