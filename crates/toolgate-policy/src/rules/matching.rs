//! How a rule meets a call: its tool name, then its command or domain
//! patterns against the call's declared effects — `allow` only when every
//! command line (or host) is covered, `ask` and `deny` when any is named.

use toolgate_command::{Word, parse_command};
use toolgate_core::{Effect, Effects};
use toolgate_shell::model::Script;

use super::patterns::{CommandPattern, DomainPattern, PatternWord, plain_words, url_host};

/// Whether a rule's `tool` names `tool`: the same name, `*`, or a name
/// ending in `*` that `tool` starts with the rest of.
pub(super) fn tool_matches(pattern: &str, tool: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(head) => tool.starts_with(head),
        None => pattern == tool,
    }
}

/// Rule 5, `allow`: the call runs command lines only, at least one, sets
/// no variables, and each line is exactly one plain command that some
/// pattern covers.
pub(super) fn covers_commands(effects: &Effects, patterns: &[CommandPattern]) -> bool {
    if effects.is_opaque() || !effects.env_names().is_empty() {
        return false;
    }
    let list = effects.list();
    !list.is_empty()
        && list.iter().all(|effect| match effect {
            Effect::Command { command, .. } => plain_words(command)
                .is_some_and(|words| patterns.iter().any(|p| covers_words(&words, p))),
            _ => false,
        })
}

/// Whether plain `words` are what `pattern` says: its words, and more only
/// when it is open.
pub(super) fn covers_words(words: &[String], pattern: &CommandPattern) -> bool {
    let n = pattern.words.len();
    words.len() >= n
        && (pattern.open || words.len() == n)
        && pattern.words.iter().zip(words).all(|(p, w)| p.matches(w))
}

/// Rule 5, `ask` and `deny`: some command line of the call may run a
/// command the pattern names.
pub(super) fn names_commands(effects: &Effects, pattern: &CommandPattern) -> bool {
    if effects.is_opaque() {
        return false;
    }
    effects.list().iter().any(|effect| match effect {
        Effect::Command { command, .. } => names_line(command, pattern),
        _ => false,
    })
}

/// Rule 5, `ask` and `deny`: some command of the line may be what
/// `pattern` names.
pub(super) fn names_line(line: &str, pattern: &CommandPattern) -> bool {
    let Ok(parsed) = parse_command(line) else {
        return true;
    };
    parsed.simple_commands().iter().any(|command| {
        if command.is_compound_part() {
            return false;
        }
        if matches!(command.script, Script::Opaque(_)) || command.wrapper_problem.is_some() {
            return true;
        }
        let argv = command.argv();
        let Some((program, args)) = argv.split_first() else {
            return false;
        };
        let Some((first, rest)) = pattern.words.split_first() else {
            return true;
        };
        // An expansion or a glob may become any number of words, so from
        // there on the command may be anything.
        if !program.is_literal() {
            return true;
        }
        let name = command.program_name();
        if !first.matches(program.text()) && !first.matches(name) {
            return false;
        }
        names_words(args, rest, pattern.open)
    })
}

/// Whether `args` (after the program) begin with the pattern's `words`,
/// options between them allowed: `git -C dir push` and `git
/// --git-dir=x push` name `git push`, `git log --grep push` does not. An
/// option may take the next word as its value (`-C dir`), so one plain
/// word after an option without `=` is passed over too. A closed pattern
/// (`exact`) names only a command with no words after its own. Fails
/// closed: a word that is not literal may be anything, so it names the
/// rest.
pub(super) fn names_words(args: &[Word], words: &[PatternWord], open: bool) -> bool {
    let mut want = words.iter().peekable();
    let mut after_option = false;
    let mut args = args.iter();
    for word in args.by_ref() {
        let Some(next) = want.peek() else {
            // The pattern is used up and this word follows it.
            return open || !word.is_literal();
        };
        if !word.is_literal() {
            return true;
        }
        let text = word.text();
        if next.matches(text) {
            want.next();
            after_option = false;
        } else if text.len() > 1 && text.starts_with('-') {
            after_option = !text.contains('=');
        } else if after_option {
            after_option = false;
        } else {
            return false;
        }
    }
    want.peek().is_none()
}

/// Rule 8, `allow`: the call reaches hosts only, at least one, each one a
/// pattern matches.
pub(super) fn covers_hosts(effects: &Effects, domains: &[DomainPattern]) -> bool {
    if effects.is_opaque() {
        return false;
    }
    let list = effects.list();
    !list.is_empty()
        && list.iter().all(|effect| match effect {
            Effect::Network { url } => {
                url_host(url).is_some_and(|host| domains.iter().any(|d| d.matches(&host)))
            }
            _ => false,
        })
}

/// Rule 8, `ask` and `deny`: the call may reach a host a pattern matches
/// (a URL whose host cannot be told for sure may).
pub(super) fn names_hosts(effects: &Effects, domains: &[DomainPattern]) -> bool {
    if effects.is_opaque() {
        return false;
    }
    effects.list().iter().any(|effect| match effect {
        Effect::Network { url } => {
            url_host(url).is_none_or(|host| domains.iter().any(|d| d.matches(&host)))
        }
        _ => false,
    })
}

/// Whether the call declares a command line to run.
pub(super) fn runs_commands(effects: &Effects) -> bool {
    effects
        .list()
        .iter()
        .any(|e| matches!(e, Effect::Command { .. }))
}
