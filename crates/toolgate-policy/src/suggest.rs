//! The narrowest `allow` rule that would let a call run without asking:
//! what a refusal under `dont-ask` tells the person to add.

use toolgate_core::{Effect, Effects};

use crate::effects::escape_glob;
use crate::rules::{ConfirmationRule, ConfirmationRules, RuleDecision, plain_words};

/// The `allow` rule for `tool` that covers this call, when one rule can.
///
/// # Rules
///
/// 1. An opaque call (MCP, dynamic tools): a rule naming the tool.
/// 2. A call that runs one command line and does nothing else: a command
///    prefix — the program and its leading subcommands (`cargo test`,
///    `npm run build`, at most three words) when they are more than the
///    program alone, else every word of the line, matched exactly (`rm
///    -rf build` and nothing longer: a rule for every `rm`, or for `rm -rf
///    build /`, is not what allowing this call means). A line an
///    `allow` rule cannot cover (several commands, redirections, variables:
///    [`plain_words`]) or one that sets variables gets none.
/// 3. A call whose effects are files, all at one path: that path, as a
///    glob that matches it alone.
/// 4. Anything else (several files, commands and files, nothing at all):
///    `None`; no single rule covers it.
///
/// A candidate is kept only when the rules engine, given it, allows the
/// call ([`ConfirmationRules::evaluate`]), so what is suggested works.
pub fn allow_rule_for(tool: &str, effects: &Effects) -> Option<ConfirmationRule> {
    suggest(tool, effects, Breadth::PrefixOrLine)
}

/// The rule an "Always allow" button saves for this call: as
/// [`allow_rule_for`], but a command gets a rule only when its prefix is
/// more than the program alone (`cargo test`, `git remote add`); a line
/// such as `rm -rf build`, `python3 script.py` or `git -C /etc status`
/// gets none, since a rule for it would be wider than the call the person
/// looked at, and they can still allow for the session or write one.
pub fn narrow_allow_rule_for(tool: &str, effects: &Effects) -> Option<ConfirmationRule> {
    suggest(tool, effects, Breadth::Prefix)
}

/// Whether a command rule may fall back to the whole line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Breadth {
    /// Only a prefix longer than the program.
    Prefix,
    /// That prefix, else every word of the line.
    PrefixOrLine,
}

fn suggest(tool: &str, effects: &Effects, breadth: Breadth) -> Option<ConfirmationRule> {
    let rule = |command: Option<String>, path: Option<String>| ConfirmationRule {
        tool: tool.to_owned(),
        command,
        path,
        decision: RuleDecision::Allow,
        ..ConfirmationRule::default()
    };
    let candidate = if effects.is_opaque() {
        rule(None, None)
    } else if let [Effect::Command { command, .. }] = effects.list() {
        let (words, exact) = command_prefix(command, breadth)?;
        ConfirmationRule {
            exact,
            ..rule(Some(words), None)
        }
    } else {
        let paths = effects.paths();
        let [path] = paths.as_slice() else {
            return None;
        };
        rule(None, Some(escape_glob(path)))
    };
    let rules = ConfirmationRules::new([candidate.clone()]).ok()?;
    let allowed = rules
        .evaluate(tool, effects)
        .is_some_and(|m| m.decision() == RuleDecision::Allow);
    allowed.then_some(candidate)
}

/// The `toolgate rules add` command line that adds `rule` to the user's
/// config, each value shell-quoted.
pub fn rules_add_line(rule: &ConfirmationRule) -> String {
    let mut line = format!("toolgate rules add --tool {}", quote(&rule.tool));
    if let Some(command) = &rule.command {
        line.push_str(" --command ");
        line.push_str(&quote(command));
    }
    if rule.exact {
        line.push_str(" --exact");
    }
    if let Some(path) = &rule.path {
        line.push_str(" --path ");
        line.push_str(&quote(path));
    }
    line.push_str(" --decision ");
    line.push_str(rule.decision.as_str());
    line
}

/// Rule 2's prefix, shell-quoted where a word needs it, and whether the
/// rule must match it exactly (the whole line).
fn command_prefix(line: &str, breadth: Breadth) -> Option<(String, bool)> {
    const MAX_WORDS: usize = 3;
    let words = plain_words(line)?;
    let plain = |w: &String| {
        !w.starts_with('-')
            && !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    let leading = words.iter().take_while(|w| plain(w)).count().min(MAX_WORDS);
    let (taken, exact) = if leading == 0 || (leading == 1 && words.len() > 1) {
        if breadth == Breadth::Prefix {
            return None;
        }
        (&words[..], true)
    } else {
        (&words[..leading], false)
    };
    if taken.is_empty() {
        return None;
    }
    // A word with `*` in it would be a pattern: keep it quoted.
    let quoted = taken.iter().map(|w| {
        if w.contains('*') {
            format!("'{}'", w.replace('\'', r"'\''"))
        } else {
            quote(w)
        }
    });
    Some((quoted.collect::<Vec<_>>().join(" "), exact))
}

/// `word` as the shell reads it back: bare when it has nothing special,
/// else in single quotes.
fn quote(word: &str) -> String {
    let bare = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c));
    if bare {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::Change;

    fn line(command: &str) -> Effects {
        Effects::known([Effect::command(command, None)])
    }

    /// A rule's `command` and `path`.
    type Narrowing<'a> = (Option<&'a str>, Option<&'a str>);

    #[test]
    fn suggested_rules() {
        let write = |path: &str| Effect::write(path, Change::counted(1, 0, true));
        // (tool, effects, expected (command, path))
        let cases: Vec<(&str, Effects, Option<Narrowing>)> = vec![
            (
                "run_command",
                line("cargo test --all"),
                Some((Some("cargo test"), None)),
            ),
            (
                "run_command",
                line("npm run build -- -w"),
                Some((Some("npm run build"), None)),
            ),
            (
                "run_command",
                line("rm -rf build"),
                Some((Some("rm -rf build"), None)),
            ),
            (
                "run_command",
                line("cat 'a b'"),
                Some((Some("cat 'a b'"), None)),
            ),
            (
                "run_command",
                line("python3 x.py"),
                Some((Some("python3 x.py"), None)),
            ),
            ("run_command", line("make"), Some((Some("make"), None))),
            ("run_command", line("cargo test; rm x"), None),
            ("run_command", line("echo $HOME"), None),
            ("run_command", line("ls > out"), None),
            (
                "write_file",
                Effects::known([write("src/a.rs")]),
                Some((None, Some("src/a.rs"))),
            ),
            (
                "write_file",
                Effects::known([write("src/[a].rs")]),
                Some((None, Some("src/\\[a\\].rs"))),
            ),
            (
                "apply_patch",
                Effects::known([write("a"), write("b")]),
                None,
            ),
            ("mcp_fs_write", Effects::Opaque, Some((None, None))),
            ("echo", Effects::none(), None),
            (
                "run_command",
                Effects::known([write("a"), Effect::command("make", None)]),
                None,
            ),
        ];
        for (tool, effects, expected) in cases {
            let got = allow_rule_for(tool, &effects);
            let got = got
                .as_ref()
                .map(|r| (r.command.as_deref(), r.path.as_deref()));
            assert_eq!(got, expected, "{tool} {effects:?}");
        }
    }

    #[test]
    fn narrow_rules_name_a_prefix_longer_than_the_program_or_nothing() {
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
        for (command, expected) in cases {
            let got = narrow_allow_rule_for("run_command", &line(command));
            assert_eq!(
                got.as_ref().and_then(|r| r.command.as_deref()),
                *expected,
                "{command:?}"
            );
        }
        // Files and opaque tools as allow_rule_for.
        let write = Effects::known([Effect::write("src/[a].rs", Change::counted(1, 0, true))]);
        let r = narrow_allow_rule_for("write_file", &write).unwrap();
        assert_eq!(r.path.as_deref(), Some("src/\\[a\\].rs"));
        let r = narrow_allow_rule_for("mcp_fs_write", &Effects::Opaque).unwrap();
        assert_eq!((r.command, r.path), (None, None));
    }

    /// A rule for the whole line matches that line only: `rm -rf build`
    /// must not also allow `rm -rf build /`.
    #[test]
    fn a_rule_for_the_whole_line_is_exact() {
        let cases: &[(&str, Option<(&str, bool)>)] = &[
            ("rm -rf build", Some(("rm -rf build", true))),
            ("python3 x.py", Some(("python3 x.py", true))),
            ("cat 'a*b'", Some(("cat 'a*b'", true))),
            ("cargo test --all", Some(("cargo test", false))),
            ("make", Some(("make", false))),
        ];
        for (command, want) in cases {
            let got = allow_rule_for("run_command", &line(command));
            let got = got
                .as_ref()
                .map(|r| (r.command.as_deref().unwrap_or(""), r.exact));
            assert_eq!(got, *want, "{command:?}");
        }
        let rule = allow_rule_for("run_command", &line("rm -rf build")).unwrap();
        let rules = ConfirmationRules::new([rule]).unwrap();
        assert!(
            rules
                .evaluate("run_command", &line("rm -rf build /"))
                .is_none()
        );
        assert!(
            rules
                .evaluate("run_command", &line("rm -rf build"))
                .is_some()
        );
    }

    #[test]
    fn a_command_that_sets_variables_gets_no_rule() {
        let vars = [("PATH".to_owned(), "/tmp".to_owned())]
            .into_iter()
            .collect();
        let effects = Effects::known([Effect::command("make", None).with_env(vars)]);
        assert_eq!(allow_rule_for("run_command", &effects), None);
    }

    #[test]
    fn the_rules_add_line_quotes_what_the_shell_would_split() {
        let rule = allow_rule_for("run_command", &line("cat 'a b'")).unwrap();
        assert_eq!(
            rules_add_line(&rule),
            r"toolgate rules add --tool run_command --command 'cat '\''a b'\''' --exact --decision allow"
        );
        let rule = allow_rule_for("mcp_fs_write", &Effects::Opaque).unwrap();
        assert_eq!(
            rules_add_line(&rule),
            "toolgate rules add --tool mcp_fs_write --decision allow"
        );
    }

    #[test]
    fn quoting() {
        let cases = [
            ("a", "a"),
            ("a b", "'a b'"),
            ("it's", r"'it'\''s'"),
            ("", "''"),
        ];
        for (word, want) in cases {
            assert_eq!(quote(word), want);
        }
    }
}
