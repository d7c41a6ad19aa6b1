//! The patterns a rule narrows its tool by: command prefixes, word by word
//! (with `*` within a word and a last `*` for any further words), and
//! domains; and what counts as a plain command line.

use toolgate_command::{ParsedCommand, SimpleCommand, Word, parse_command};
use toolgate_shell::model::Script;

use super::{Access, RuleError};
use crate::effects::FileGlobs;

#[derive(Debug, Clone)]
pub(super) enum Matcher {
    Tool,
    Command {
        pattern: CommandPattern,
        except: Vec<CommandPattern>,
    },
    Path {
        globs: FileGlobs,
        access: Option<Access>,
        except: Option<FileGlobs>,
    },
    Domain {
        domains: Vec<DomainPattern>,
        except: Vec<DomainPattern>,
    },
}

/// A command pattern: words, each literal or with `*` standing for any
/// characters within the word, and whether further words may follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CommandPattern {
    pub(super) words: Vec<PatternWord>,
    pub(super) open: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum PatternWord {
    Literal(String),
    Glob(String),
}

impl PatternWord {
    pub(super) fn matches(&self, text: &str) -> bool {
        match self {
            Self::Literal(word) => word == text,
            Self::Glob(glob) => star_match(glob, text),
        }
    }
}

/// Whether `text` matches `glob`, in which `*` stands for any characters.
pub(super) fn star_match(glob: &str, text: &str) -> bool {
    let mut parts = glob.split('*');
    let Some(first) = parts.next() else {
        return text.is_empty();
    };
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// A domain pattern: a host, or `*.` and a host for its subdomains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum DomainPattern {
    Host(String),
    Below(String),
}

impl DomainPattern {
    pub(super) fn parse(text: &str) -> Option<Self> {
        let text = text.trim().to_ascii_lowercase();
        let (below, host) = match text.strip_prefix("*.") {
            Some(host) => (true, host.to_owned()),
            None => (false, text),
        };
        let valid = !host.is_empty()
            && !host.starts_with('.')
            && !host.ends_with('.')
            && !host.contains("..")
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
        if !valid {
            None
        } else if below {
            Some(Self::Below(host))
        } else {
            Some(Self::Host(host))
        }
    }

    pub(super) fn matches(&self, host: &str) -> bool {
        match self {
            Self::Host(name) => host == name,
            Self::Below(name) => host
                .strip_suffix(name.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
        }
    }
}

/// The host of a URL or `host:port`, lower case; `None` when it cannot be
/// told for sure (rules then fail closed).
pub(super) fn url_host(url: &str) -> Option<String> {
    let rest = match url.split_once("://") {
        Some((scheme, rest)) => {
            if scheme.is_empty()
                || !scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            {
                return None;
            }
            rest
        }
        None => url,
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    if authority.contains(['@', '\\', '%', '[']) {
        return None;
    }
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
        Some(_) => return None,
        None => authority,
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let valid = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    valid.then_some(host)
}

/// A command pattern: plain words as [`prefix_words`] checks them, but a
/// word may hold `*` (any characters within the word) and a last word `*`
/// alone stands for any further words. `open` says whether further words
/// may follow when the pattern does not end with `*`.
pub(super) fn command_pattern(
    number: usize,
    text: &str,
    open: bool,
) -> Result<CommandPattern, RuleError> {
    let fail = |reason| RuleError::Command {
        number,
        prefix: text.to_owned(),
        reason,
    };
    let parsed = parse_command(text).map_err(|_| fail("it is not valid shell"))?;
    let [command] = parsed.simple_commands() else {
        return Err(fail("it must be one simple command"));
    };
    if !command.wrappers().is_empty() {
        return Err(fail(
            "it starts with a wrapper (`env`, `nice`, `xargs`, …), which rules see through; name the program",
        ));
    }
    let star_only = |w: &Word| {
        w.has_glob()
            && !w.is_quoted()
            && !w.has_expansion()
            && !w.has_substitution()
            && w.raw().contains('*')
            && !w
                .raw()
                .contains(['?', '[', ']', '{', '}', '(', ')', '!', '@', '+'])
    };
    let plain = is_plain_line(&parsed)
        && !command.is_compound_part()
        && command.assignments().is_empty()
        && command.redirections().is_empty()
        && command.wrapper_problem.is_none()
        && command.script == Script::None
        && !command.argv().is_empty()
        && command
            .words()
            .iter()
            .all(|w| w.is_literal() || star_only(w));
    if !plain {
        return Err(fail(
            "it must be plain words, without operators, redirections, assignments or expansions",
        ));
    }
    let mut words: Vec<PatternWord> = command
        .argv()
        .iter()
        .map(|w| {
            if w.is_literal() {
                PatternWord::Literal(w.text().to_owned())
            } else {
                PatternWord::Glob(w.text().to_owned())
            }
        })
        .collect();
    let mut open = open;
    if words.len() > 1 && words.last() == Some(&PatternWord::Glob("*".to_owned())) {
        words.pop();
        open = true;
    }
    if matches!(words.first(), Some(PatternWord::Glob(_))) && words.len() == 1 && !open {
        return Err(fail("a program written with `*` must be followed by words"));
    }
    Ok(CommandPattern { words, open })
}

/// Whether a line uses no shell feature at all: one command, nothing else.
pub(super) fn is_plain_line(parsed: &ParsedCommand) -> bool {
    parsed.features() == crate::ShellFeatures::default()
}

/// Whether a simple command is plain: a program and literal arguments,
/// nothing the shell rewrites or adds.
pub(super) fn is_plain(command: &SimpleCommand) -> bool {
    !command.is_compound_part()
        && command.assignments().is_empty()
        && command.redirections().is_empty()
        && command.wrappers().is_empty()
        && command.wrapper_problem.is_none()
        && command.script == Script::None
        && !command.argv().is_empty()
        && command.words().iter().all(crate::Word::is_literal)
}

/// The words of `line` when it is one plain command — literal words, no
/// operators, redirections, assignments, wrappers or expansions — which is
/// what an `allow` command rule can cover; `None` for anything else
/// (judged by the shell parser, so it fails closed).
pub fn plain_words(line: &str) -> Option<Vec<String>> {
    let parsed = parse_command(line).ok()?;
    let [command] = parsed.simple_commands() else {
        return None;
    };
    (is_plain_line(&parsed) && is_plain(command))
        .then(|| command.argv().iter().map(|w| w.text().to_owned()).collect())
}
