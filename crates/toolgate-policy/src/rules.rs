//! Persistent confirmation rules: `confirmation.rules` in the user's config.
//!
//! A rule names a tool, optionally narrows it to a command prefix or a path
//! glob, and says `allow` (do not ask), `ask` (ask even in `yolo`) or `deny`
//! (refuse). The gate consults the rules after the guardrails and hooks and
//! before the confirmation mode, so a rule can only change whether a person
//! is asked, or refuse: it can never let through what the blocklist, the
//! guardrails, a hook or the kernel sandbox refuses.

use std::fmt;

use serde::{Deserialize, Serialize};
use toolgate_core::{Effect, Effects};

use crate::command::{ParsedCommand, Script, SimpleCommand, Word, parse_command};
use crate::effects::{EffectsPolicyError, FileGlobs};

/// Two path components no glob names literally: a directory read as a tree
/// is allowed only by a glob that matches this beneath it.
const TREE_PROBE: &str = "\u{1}/\u{1}";

/// The tool name that makes a rule apply to every tool.
pub const ANY_TOOL: &str = "*";

/// What a matching rule decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleDecision {
    /// The call runs without asking, in every mode.
    Allow,
    /// A person is asked, in every mode, `yolo` included.
    Ask,
    /// The call is refused.
    Deny,
}

impl RuleDecision {
    /// The spelling used in config files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

impl fmt::Display for RuleDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for RuleDecision {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "allow" => Ok(Self::Allow),
            "ask" => Ok(Self::Ask),
            "deny" => Ok(Self::Deny),
            other => Err(format!(
                "unknown rule decision `{other}` (expected allow, ask or deny)"
            )),
        }
    }
}

/// One rule as written in `confirmation.rules`; [`ConfirmationRules::new`]
/// checks and compiles a list of them.
///
/// # Wire format
///
/// A YAML (or JSON) mapping with the keys `tool`, `command`, `path` and
/// `decision`; `command` and `path` are optional and exclusive, and any
/// other key is an error:
///
/// ```yaml
/// confirmation:
///   rules:
///     - { tool: run_command, command: "git status", decision: allow }
///     - { tool: write_file, path: "docs/**", decision: allow }
///     - { tool: "*", path: "secrets/**", decision: deny }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfirmationRule {
    /// The tool's exact name, or `*` for every tool.
    pub tool: String,
    /// A command prefix in shell words (`git status`), matched against the
    /// command lines the call declares it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// A glob over the workspace-relative paths the call declares it reads
    /// or changes (`*` does not cross `/`, `**` does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// What the rule decides when it matches.
    pub decision: RuleDecision,
}

impl fmt::Display for ConfirmationRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.decision, self.tool)?;
        if let Some(command) = &self.command {
            write!(f, " command `{command}`")?;
        }
        if let Some(path) = &self.path {
            write!(f, " path `{path}`")?;
        }
        Ok(())
    }
}

/// Why a list of rules was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuleError {
    /// A rule with an empty tool name.
    #[error("rule {number} names no tool")]
    NoTool {
        /// The rule's number, from 1.
        number: usize,
    },
    /// A rule with both a command prefix and a path glob.
    #[error("rule {number} has both a command and a path; give one")]
    CommandAndPath {
        /// The rule's number, from 1.
        number: usize,
    },
    /// An allow rule that would skip asking for too much.
    #[error("rule {number} is too broad: {reason}")]
    TooBroad {
        /// The rule's number, from 1.
        number: usize,
        /// What makes it too broad.
        reason: &'static str,
    },
    /// A command prefix that is not plain words.
    #[error("rule {number} has an unusable command prefix `{prefix}`: {reason}")]
    Command {
        /// The rule's number, from 1.
        number: usize,
        /// The prefix as written.
        prefix: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An allow rule without a command prefix for a tool every call of
    /// which runs a command line: it could never allow a call.
    #[error("rule {number} is too broad: an allow rule for `{tool}` needs a command prefix")]
    NoCommandPrefix {
        /// The rule's number, from 1.
        number: usize,
        /// The tool, one of the builder's
        /// [`command_tools`](ConfirmationRulesBuilder::command_tools).
        tool: String,
    },
    /// A malformed path glob.
    #[error("rule {number} has an invalid path glob")]
    Glob {
        /// The rule's number, from 1.
        number: usize,
        /// The glob's error.
        #[source]
        source: EffectsPolicyError,
    },
}

/// The rule that decided a call ([`ConfirmationRules::evaluate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleMatch<'a> {
    /// The rule's number in the list, from 1 (as `toolgate rules list`
    /// shows it).
    pub number: usize,
    /// The rule.
    pub rule: &'a ConfirmationRule,
}

impl RuleMatch<'_> {
    /// What the rule decides.
    pub fn decision(&self) -> RuleDecision {
        self.rule.decision
    }
}

impl fmt::Display for RuleMatch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rule {} ({})", self.number, self.rule)
    }
}

#[derive(Debug, Clone)]
enum Matcher {
    Tool,
    Command(Vec<String>),
    Path(FileGlobs),
}

#[derive(Debug, Clone)]
struct Compiled {
    rule: ConfirmationRule,
    matcher: Matcher,
}

/// A checked list of [`ConfirmationRule`]s, evaluated over a call's
/// declared effects.
///
/// # Rules
///
/// 1. A rule applies to a call when its `tool` is the call's tool name, or
///    `*`, and its narrowing (none, `command` or `path`) matches as below.
/// 2. Among the rules that match, `deny` beats `ask` beats `allow`; between
///    rules with the same decision, the first in the list is reported. No
///    rule matching leaves the decision to the confirmation mode.
/// 3. Matching fails closed: an `allow` rule must match everything the call
///    does, while `ask` and `deny` rules match anything that might be what
///    they name.
/// 4. A rule without `command` or `path` matches every call of its tool —
///    except that an `allow` rule never matches a call that runs a command
///    line (only a command prefix can allow one).
/// 5. A `command` prefix is compared word by word with the command lines
///    the call declares ([`Effect::Command`]), parsed as shell
///    ([`parse_command`]) — never as a raw string prefix, so `git status`
///    does not cover `git statusx` or `git status; rm -rf /`.
///    - `allow`: every command line of the call is exactly one simple
///      command — no `;`, `&&`, `|`, `&`, newline, subshell, substitution,
///      redirection, here-document, compound command, variable assignment,
///      wrapper (`env`, `nice`, `xargs`, …) or inline script — whose words
///      are all literal (no `$`, `~` or glob to expand) and whose argv
///      starts with the prefix's words; and the call sets no environment
///      variables (the `env` of its command effects). A line the parser refuses never
///      matches. Only `git status` and `git status -s` match `git status`.
///    - `ask` and `deny`: some command line of the call has a simple
///      command, anywhere in it (after `;`, in a pipeline, in `$(…)`, in
///      `sh -c '…'`, behind `env` or `xargs`), whose argv starts with the
///      prefix's words. The program may be written as a path (`/usr/bin/git`
///      for `git`); a word the shell expands (`$x`) may be anything, so it
///      matches; a script the parser cannot see into (`sh -c "$x"`, `eval
///      "$x"`) and a line the parser refuses match too. Words are compared
///      as written: `git -C dir push` does not start with `git push`. A
///      `deny` rule is a policy line, not a sandbox; the kernel is.
/// 6. A `path` glob ([`FileGlobs`]: anchored at the workspace root, `*`
///    not crossing `/`) is compared with the paths of the call's file
///    effects (read, write, delete, both ends of a move). An absolute path
///    beneath the [root](ConfirmationRulesBuilder::root) is taken relative
///    to it.
///    - `allow`: the call has file effects only, at least one, and every
///      path matches; for a directory read as a tree (a listing, a search)
///      the glob must match any path beneath it (`docs/**` allows listing
///      `docs`, `docs/*` does not).
///    - `ask` and `deny`: some path matches, or some path cannot be placed
///      in the workspace by its text (absolute elsewhere, or climbing above
///      the root). A tree read matches when its directory or a path below it
///      does (`secrets/**` covers listing `secrets`), but a glob is not
///      searched for inside a tree: a `deny` rule on `secrets/**` does not
///      refuse a search of the whole workspace. Files nobody may read belong in
///      `guardrails.sensitive_files`, which every file tool, search and
///      process obeys.
/// 7. An opaque call ([`Effects::Opaque`]: MCP tools, dynamic script
///    tools) matches no `command` or `path` rule: toolgate cannot know what
///    it runs or touches. Rules without a narrowing still apply to it by
///    name. A tool that knows the line it runs declares it instead (a
///    dynamic command tool, an MCP tool that declares `runs_commands`) and
///    is judged by rule 5 like `run_command`.
///
/// Building the list refuses, besides malformed globs and prefixes, the
/// `allow` rules that would skip asking for too much (`tool: "*"`) or could
/// allow nothing: a tool every call of which runs a command line
/// ([`command_tools`](ConfirmationRulesBuilder::command_tools), the tools
/// whose spec says
/// [`runs_commands`](toolgate_core::ToolAnnotations::runs_commands)) without
/// a `command`.
///
/// # Example
///
/// ```
/// use toolgate_core::{Effect, Effects};
/// use toolgate_policy::{ConfirmationRule, ConfirmationRules, RuleDecision};
///
/// # fn main() -> Result<(), toolgate_policy::RuleError> {
/// let rules = ConfirmationRules::builder()
///     .command_tools(["run_command"])
///     .rules([ConfirmationRule {
///         tool: "run_command".into(),
///         command: Some("git status".into()),
///         path: None,
///         decision: RuleDecision::Allow,
///     }])
///     .build()?;
/// let line = |command: &str| {
///     Effects::known([Effect::command(command, None)])
/// };
/// let hit = rules.evaluate("run_command", &line("git status -s"));
/// assert_eq!(hit.map(|m| m.decision()), Some(RuleDecision::Allow));
/// assert!(rules.evaluate("run_command", &line("git status; rm -rf x")).is_none());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct ConfirmationRules {
    rules: Vec<Compiled>,
    root: Option<String>,
}

/// Configures [`ConfirmationRules`].
#[derive(Debug, Clone, Default)]
pub struct ConfirmationRulesBuilder {
    rules: Vec<ConfirmationRule>,
    root: Option<String>,
    command_tools: Vec<String>,
}

impl ConfirmationRulesBuilder {
    /// Adds rules, after those already added. By default, there are none.
    pub fn rules<I>(&mut self, rules: I) -> &mut Self
    where
        I: IntoIterator<Item = ConfirmationRule>,
    {
        self.rules.extend(rules);
        self
    }

    /// The workspace root, so an absolute path beneath it is matched
    /// relative to it. By default, none: every absolute path is outside.
    pub fn root(&mut self, root: impl Into<String>) -> &mut Self {
        let root: String = root.into();
        self.root = Some(root.trim_end_matches('/').to_owned());
        self
    }

    /// Adds tools every call of which runs a command line it declares
    /// (their spec says
    /// [`runs_commands`](toolgate_core::ToolAnnotations::runs_commands)):
    /// only a command prefix can allow their calls (rule 4), so an `allow`
    /// rule for one of them without a `command` is refused rather than
    /// kept to allow nothing. By default, there are none. Tools only some
    /// of whose calls run commands do not belong here: rule 4 judges those
    /// calls by their effects.
    pub fn command_tools<I, S>(&mut self, names: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.command_tools.extend(names.into_iter().map(Into::into));
        self
    }

    /// Checks and compiles the rules.
    ///
    /// # Errors
    ///
    /// [`RuleError`] for the first rule that is malformed or too broad.
    pub fn build(&self) -> Result<ConfirmationRules, RuleError> {
        let rules = self
            .rules
            .iter()
            .enumerate()
            .map(|(i, rule)| compile(i + 1, rule, &self.command_tools))
            .collect::<Result<_, _>>()?;
        Ok(ConfirmationRules {
            rules,
            root: self.root.clone().filter(|root| !root.is_empty()),
        })
    }
}

impl ConfirmationRules {
    /// A builder with no rules.
    pub fn builder() -> ConfirmationRulesBuilder {
        ConfirmationRulesBuilder::default()
    }

    /// Checks and compiles `rules`, with no workspace root and no
    /// [`command_tools`](ConfirmationRulesBuilder::command_tools).
    ///
    /// # Errors
    ///
    /// [`RuleError`] for the first rule that is malformed or too broad.
    pub fn new<I>(rules: I) -> Result<Self, RuleError>
    where
        I: IntoIterator<Item = ConfirmationRule>,
    {
        Self::builder().rules(rules).build()
    }

    /// The rules, in order.
    pub fn rules(&self) -> impl ExactSizeIterator<Item = &ConfirmationRule> {
        self.rules.iter().map(|c| &c.rule)
    }

    /// Whether some rule decides `decision`.
    pub fn contains(&self, decision: RuleDecision) -> bool {
        self.rules.iter().any(|c| c.rule.decision == decision)
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rule that decides a call of `tool` with these declared `effects`
    /// (see the [rules](Self)), or `None` when no rule matches. The
    /// environment a call sets for its commands is read from its command
    /// effects ([`Effect::Command`]'s `env`), like everything else.
    pub fn evaluate(&self, tool: &str, effects: &Effects) -> Option<RuleMatch<'_>> {
        let mut best: Option<RuleMatch<'_>> = None;
        for (i, compiled) in self.rules.iter().enumerate() {
            let rule = &compiled.rule;
            if rule.tool != ANY_TOOL && rule.tool != tool {
                continue;
            }
            if !self.matches(compiled, effects) {
                continue;
            }
            // Strictly greater: the first rule wins a tie.
            if best.is_none_or(|b| rule.decision > b.rule.decision) {
                best = Some(RuleMatch {
                    number: i + 1,
                    rule,
                });
            }
        }
        best
    }

    fn matches(&self, compiled: &Compiled, effects: &Effects) -> bool {
        let allow = compiled.rule.decision == RuleDecision::Allow;
        match &compiled.matcher {
            Matcher::Tool => !(allow && runs_commands(effects)),
            Matcher::Command(prefix) => {
                if effects.is_opaque() {
                    return false;
                }
                let mut lines = effects.list().iter().filter_map(|effect| match effect {
                    Effect::Command { command, .. } => Some(command.as_str()),
                    _ => None,
                });
                if allow {
                    let only_commands = effects
                        .list()
                        .iter()
                        .all(|e| matches!(e, Effect::Command { .. }));
                    let mut any = false;
                    only_commands
                        && effects.env_names().is_empty()
                        && lines.all(|line| {
                            any = true;
                            allows_line(line, prefix)
                        })
                        && any
                } else {
                    lines.any(|line| names_line(line, prefix))
                }
            }
            Matcher::Path(globs) => {
                if effects.is_opaque() {
                    return false;
                }
                let list = effects.list();
                if allow {
                    let only_files = list.iter().all(|e| {
                        matches!(
                            e,
                            Effect::Read { .. }
                                | Effect::Write { .. }
                                | Effect::Delete { .. }
                                | Effect::Move { .. }
                        )
                    });
                    only_files
                        && !list.is_empty()
                        && list.iter().all(|effect| match effect {
                            // Everything beneath the directory is read: the
                            // glob must cover any path below it.
                            Effect::Read { path, tree: true } => {
                                let below = format!("{}/{TREE_PROBE}", self.relative(path));
                                globs.placed(&below) == Some(true)
                            }
                            other => other
                                .paths()
                                .iter()
                                .all(|p| globs.placed(self.relative(p)) == Some(true)),
                        })
                } else {
                    let placed = |p: &str| globs.placed(self.relative(p)) != Some(false);
                    list.iter().any(|effect| match effect {
                        Effect::Read { path, tree: true } => {
                            placed(path) || placed(&format!("{path}/{TREE_PROBE}"))
                        }
                        other => other.paths().into_iter().any(placed),
                    })
                }
            }
        }
    }

    /// `path` relative to the root when it is an absolute path beneath it.
    fn relative<'p>(&self, path: &'p str) -> &'p str {
        let Some(root) = &self.root else { return path };
        match path.strip_prefix(root.as_str()) {
            Some("") => ".",
            Some(rest) if rest.starts_with('/') => rest.trim_start_matches('/'),
            _ => path,
        }
    }
}

fn compile(
    number: usize,
    rule: &ConfirmationRule,
    command_tools: &[String],
) -> Result<Compiled, RuleError> {
    if rule.tool.trim().is_empty() {
        return Err(RuleError::NoTool { number });
    }
    let allow = rule.decision == RuleDecision::Allow;
    if allow && rule.tool == ANY_TOOL {
        return Err(RuleError::TooBroad {
            number,
            reason: "an allow rule must name one tool, not `*`",
        });
    }
    let matcher = match (&rule.command, &rule.path) {
        (Some(_), Some(_)) => return Err(RuleError::CommandAndPath { number }),
        (Some(prefix), None) => Matcher::Command(prefix_words(number, prefix)?),
        (None, Some(glob)) => Matcher::Path(
            FileGlobs::new([glob.as_str()]).map_err(|source| RuleError::Glob { number, source })?,
        ),
        (None, None) => {
            if allow && command_tools.contains(&rule.tool) {
                return Err(RuleError::NoCommandPrefix {
                    number,
                    tool: rule.tool.clone(),
                });
            }
            Matcher::Tool
        }
    };
    Ok(Compiled {
        rule: rule.clone(),
        matcher,
    })
}

/// The words of a command prefix, which must be plain: one simple command
/// of literal words, without wrappers, assignments or redirections.
fn prefix_words(number: usize, prefix: &str) -> Result<Vec<String>, RuleError> {
    let fail = |reason| RuleError::Command {
        number,
        prefix: prefix.to_owned(),
        reason,
    };
    let parsed = parse_command(prefix).map_err(|_| fail("it is not valid shell"))?;
    let [command] = parsed.simple_commands() else {
        return Err(fail("it must be one simple command"));
    };
    if !command.wrappers().is_empty() {
        return Err(fail(
            "it starts with a wrapper (`env`, `nice`, `xargs`, …), which rules see through; name the program",
        ));
    }
    if !is_plain_line(&parsed) || !is_plain(command) {
        return Err(fail(
            "it must be plain words, without operators, redirections, assignments or expansions",
        ));
    }
    Ok(command.argv().iter().map(|w| w.text().to_owned()).collect())
}

/// Whether a line uses no shell feature at all: one command, nothing else.
fn is_plain_line(parsed: &ParsedCommand) -> bool {
    parsed.features() == crate::ShellFeatures::default()
}

/// Whether a simple command is plain: a program and literal arguments,
/// nothing the shell rewrites or adds.
fn is_plain(command: &SimpleCommand) -> bool {
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

/// Rule 5, `allow`: the line is exactly one plain command starting with
/// `prefix`.
fn allows_line(line: &str, prefix: &[String]) -> bool {
    plain_words(line).is_some_and(|words| words.starts_with(prefix))
}

/// Rule 5, `ask` and `deny`: some command of the line may start with
/// `prefix`.
fn names_line(line: &str, prefix: &[String]) -> bool {
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
        let Some((first, rest)) = prefix.split_first() else {
            return true;
        };
        // An expansion or a glob may become any number of words, so from
        // there on the command may be anything.
        if !program.is_literal() {
            return true;
        }
        if program.text() != first && command.program_name() != first {
            return false;
        }
        names_words(args, rest)
    })
}

/// Whether `args` (after the program) begin with the prefix's `words`,
/// options between them allowed: `git -C dir push` and `git
/// --git-dir=x push` name `git push`, `git log --grep push` does not. An
/// option may take the next word as its value (`-C dir`), so one plain
/// word after an option without `=` is passed over too. Fails closed: a
/// word that is not literal may be anything, so it names the rest.
fn names_words(args: &[Word], words: &[String]) -> bool {
    let mut want = words.iter().peekable();
    let mut after_option = false;
    for word in args {
        let Some(next) = want.peek() else { break };
        if !word.is_literal() {
            return true;
        }
        let text = word.text();
        if text == next.as_str() {
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

/// Whether the call declares a command line to run.
fn runs_commands(effects: &Effects) -> bool {
    effects
        .list()
        .iter()
        .any(|e| matches!(e, Effect::Command { .. }))
}
