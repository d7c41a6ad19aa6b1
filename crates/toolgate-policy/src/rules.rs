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

use crate::effects::{EffectsPolicyError, FileGlobs};

pub use patterns::plain_words;

use matching::{
    covers_commands, covers_hosts, names_commands, names_hosts, runs_commands, tool_matches,
};
use patterns::{DomainPattern, Matcher, command_pattern};

mod matching;
mod patterns;

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
/// A YAML (or JSON) mapping with the keys `tool`, `decision` and at most
/// one of `command`, `path` and `domain`; `exact` goes with `command`,
/// `access` with `path`, `except` with any of the three; any other key is
/// an error:
///
/// ```yaml
/// confirmation:
///   rules:
///     - { tool: run_command, command: "git status", decision: allow }
///     - { tool: run_command, command: "git diff", exact: true, decision: allow }
///     - { tool: write_file, path: "docs/**", decision: allow }
///     - { tool: "*", path: "secrets/**", decision: deny }
///     - { tool: "*", path: ".env", access: read, decision: deny }
///     - { tool: "*", domain: "docs.rs", decision: allow }
///     - tool: "*"
///       command: "git push"
///       except: ["git push origin HEAD:refs/for/*"]
///       decision: deny
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
    /// With `path`: only reads (`read`) or only changes (`write`) count;
    /// by default, both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<Access>,
    /// A host the call declares it reaches (`example.com`, or
    /// `*.example.com` for its subdomains).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// With `command`: the command must be the words, not start with them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exact: bool,
    /// Patterns in the form of the rule's own (`command`, `path` or
    /// `domain`) that the rule does not apply to: the call falls through
    /// to the other rules and the mode.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub except: Vec<String>,
    /// What the rule decides when it matches.
    pub decision: RuleDecision,
}

impl Default for ConfirmationRule {
    /// An `ask` rule naming no tool (invalid until given one): the base of
    /// `ConfirmationRule { tool, command, decision, ..Default::default() }`.
    fn default() -> Self {
        Self {
            tool: String::new(),
            command: None,
            path: None,
            access: None,
            domain: None,
            exact: false,
            except: Vec::new(),
            decision: RuleDecision::Ask,
        }
    }
}

/// Which file effects a `path` rule looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Reads: a file read, a listing, a search.
    Read,
    /// Changes: writes, and for `ask` and `deny` deletes and renames too
    /// (an `allow` rule covers writes only).
    Write,
}

impl Access {
    /// The spelling used in config files.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
        }
    }
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
        if let Some(access) = self.access {
            write!(f, " ({} only)", access.as_str())?;
        }
        if let Some(domain) = &self.domain {
            write!(f, " domain `{domain}`")?;
        }
        if self.exact {
            f.write_str(" (exact)")?;
        }
        for (i, pattern) in self.except.iter().enumerate() {
            let lead = if i == 0 { " except" } else { "," };
            write!(f, "{lead} `{pattern}`")?;
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
    /// A rule with more than one of a command prefix, a path glob and a
    /// domain.
    #[error("rule {number} has more than one of command, path and domain; give one")]
    CommandAndPath {
        /// The rule's number, from 1.
        number: usize,
    },
    /// A key that needs another one: `exact` a `command`, `access` a
    /// `path`, `except` one of the three.
    #[error("rule {number} has `{key}` without {needs}")]
    Needs {
        /// The rule's number, from 1.
        number: usize,
        /// The key given.
        key: &'static str,
        /// What it needs.
        needs: &'static str,
    },
    /// A domain that is not a host name.
    #[error(
        "rule {number} has an unusable domain `{domain}`: give a host name such as `example.com` or `*.example.com`"
    )]
    Domain {
        /// The rule's number, from 1.
        number: usize,
        /// The domain as written.
        domain: String,
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
struct Compiled {
    rule: ConfirmationRule,
    matcher: Matcher,
}

/// A checked list of [`ConfirmationRule`]s, evaluated over a call's
/// declared effects.
///
/// # Rules
///
/// 1. A rule applies to a call when its `tool` is the call's tool name,
///    `*`, or a name ending in `*` the call's tool name starts with
///    (`mcp_github_*`), and its narrowing (none, `command`, `path` or
///    `domain`) matches as below, and none of its exceptions (rule 9)
///    lets the call through.
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
///    ([`parse_command`](super::parse_command)) — never as a raw string prefix, so `git status`
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
///      "$x"`) and a line the parser refuses match too. Options may stand
///      between the words: `git -C dir push` names `git push`. A
///      `deny` rule is a policy line, not a sandbox; the kernel is.
///    - `exact: true`: the command is the words and nothing more (`git
///      diff` matches `git diff`, not `git diff HEAD`; for `deny`, not
///      `git diff HEAD` either).
///    - In the words, an unquoted `*` stands for any characters within
///      one word (`HEAD:refs/for/*`), and a last word `*` alone for any
///      further words (so `git diff *` is a prefix even with `exact`).
/// 6. A `path` glob ([`FileGlobs`]: anchored at the workspace root, `*`
///    not crossing `/`) is compared with the paths of the call's file
///    effects (read, write, delete, both ends of a move). An absolute path
///    beneath the [root](ConfirmationRulesBuilder::root) is taken relative
///    to it. With `access: read` only reads count, with `access: write` only
///    changes: for `ask` and `deny` writes, deletes and both ends of a
///    move; for `allow` writes alone.
///    - `allow`: the call has file effects (of that access) only, at least
///      one, and every path matches; for a directory read as a tree (a listing, a search)
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
/// 8. A `domain` (`example.com`, or `*.example.com` for the names below
///    it, not itself) is compared with the hosts of the call's network
///    effects ([`Effect::Network`]).
///    - `allow`: the call has network effects only, at least one, and
///      each one's host matches.
///    - `ask` and `deny`: some network effect's host matches, or its host
///      cannot be told for sure (user info, an odd port, a bracketed
///      address).
/// 9. `except` lists patterns in the form of the rule's own. An exception
///    never widens what a rule lets run: an `allow` rule does not apply to
///    a call an exception may name (judged as `deny` judges; a command
///    exception is a prefix), and an `ask` or `deny` rule does not apply
///    to a call its exceptions cover entirely (judged as `allow` judges; a
///    command exception is exact unless it ends with `*`). A call let
///    through by an exception falls through to the other rules and the
///    mode. So `deny git push except git push origin HEAD:refs/for/*`
///    refuses `git push origin HEAD:refs/for/main; rm -rf /` and `git
///    push origin HEAD:refs/for/main HEAD:main`.
///
/// Building the list refuses, besides malformed globs and prefixes, the
/// `allow` rules that would skip asking for too much (`tool: "*"`, or a
/// name ending in `*`, without a `path` or `domain`, or with a `path` but
/// no `access`: files and hosts are judged by the effects whichever tool
/// declares them) or could
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
///         decision: RuleDecision::Allow,
///         ..ConfirmationRule::default()
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
            if !tool_matches(&rule.tool, tool) {
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
            // An exception never widens what a rule lets run: an allow
            // rule's exceptions withhold whatever they may name, a deny or
            // ask rule's exceptions let through only calls they cover
            // entirely.
            Matcher::Command { pattern, except } => {
                if allow {
                    covers_commands(effects, std::slice::from_ref(pattern))
                        && !except.iter().any(|e| names_commands(effects, e))
                } else {
                    names_commands(effects, pattern)
                        && (except.is_empty() || !covers_commands(effects, except))
                }
            }
            Matcher::Path {
                globs,
                access,
                except,
            } => {
                if allow {
                    self.covers_paths(effects, globs, *access)
                        && !except
                            .as_ref()
                            .is_some_and(|e| self.names_paths(effects, e, *access))
                } else {
                    self.names_paths(effects, globs, *access)
                        && !except
                            .as_ref()
                            .is_some_and(|e| self.covers_paths(effects, e, *access))
                }
            }
            Matcher::Domain { domains, except } => {
                if allow {
                    covers_hosts(effects, domains)
                        && (except.is_empty() || !names_hosts(effects, except))
                } else {
                    names_hosts(effects, domains)
                        && (except.is_empty() || !covers_hosts(effects, except))
                }
            }
        }
    }

    /// Rule 6, `allow`: the call has file effects of the rule's kind only,
    /// at least one, and every path matches.
    fn covers_paths(&self, effects: &Effects, globs: &FileGlobs, access: Option<Access>) -> bool {
        if effects.is_opaque() {
            return false;
        }
        let list = effects.list();
        let kind = |effect: &Effect| {
            matches!(
                (access, effect),
                (None | Some(Access::Read), Effect::Read { .. })
                    | (None | Some(Access::Write), Effect::Write { .. })
                    | (None, Effect::Delete { .. } | Effect::Move { .. })
            )
        };
        !list.is_empty()
            && list.iter().all(kind)
            && list.iter().all(|effect| match effect {
                // Everything beneath the directory is read: the glob must
                // cover any path below it.
                Effect::Read { path, tree: true } => {
                    let below = format!("{}/{TREE_PROBE}", self.relative(path));
                    globs.placed(&below) == Some(true)
                }
                other => other
                    .paths()
                    .iter()
                    .all(|p| globs.placed(self.relative(p)) == Some(true)),
            })
    }

    /// Rule 6, `ask` and `deny`: some file effect of the rule's kind may be
    /// at a path that matches.
    fn names_paths(&self, effects: &Effects, globs: &FileGlobs, access: Option<Access>) -> bool {
        if effects.is_opaque() {
            return false;
        }
        let kind = |effect: &Effect| {
            matches!(
                (access, effect),
                (None | Some(Access::Read), Effect::Read { .. })
                    | (
                        None | Some(Access::Write),
                        Effect::Write { .. } | Effect::Delete { .. } | Effect::Move { .. },
                    )
            )
        };
        let placed = |p: &str| globs.placed(self.relative(p)) != Some(false);
        effects
            .list()
            .iter()
            .filter(|effect| kind(effect))
            .any(|effect| match effect {
                Effect::Read { path, tree: true } => {
                    placed(path) || placed(&format!("{path}/{TREE_PROBE}"))
                }
                other => other.paths().into_iter().any(placed),
            })
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
    let any_tool = rule.tool == ANY_TOOL || rule.tool.ends_with('*');
    let narrowings = [
        rule.command.is_some(),
        rule.path.is_some(),
        rule.domain.is_some(),
    ];
    if narrowings.iter().filter(|n| **n).count() > 1 {
        return Err(RuleError::CommandAndPath { number });
    }
    let needs = |key, needs| RuleError::Needs { number, key, needs };
    if rule.exact && rule.command.is_none() {
        return Err(needs("exact", "a `command`"));
    }
    if rule.access.is_some() && rule.path.is_none() {
        return Err(needs("access", "a `path`"));
    }
    // Files and hosts are judged by the call's effects, whichever tool
    // declares them; anything else must name its tool.
    if allow && any_tool && rule.path.is_none() && rule.domain.is_none() {
        return Err(RuleError::TooBroad {
            number,
            reason: "an allow rule must name one tool, not `*`, unless it has a path or a domain",
        });
    }
    if allow && any_tool && rule.path.is_some() && rule.access.is_none() {
        return Err(RuleError::TooBroad {
            number,
            reason: "an allow rule for `*` with a path must say `access: read` or `access: write`",
        });
    }
    let matcher = if let Some(prefix) = &rule.command {
        let pattern = command_pattern(number, prefix, !rule.exact)?;
        // An exception of an allow rule withholds anything starting with
        // it; one of a deny or ask rule lets through exactly what it says,
        // unless it ends with `*`.
        let except = rule
            .except
            .iter()
            .map(|e| command_pattern(number, e, allow))
            .collect::<Result<_, _>>()?;
        Matcher::Command { pattern, except }
    } else if let Some(glob) = &rule.path {
        let globs = |patterns: &[&str]| {
            FileGlobs::new(patterns.iter().copied())
                .map_err(|source| RuleError::Glob { number, source })
        };
        let except: Vec<&str> = rule.except.iter().map(String::as_str).collect();
        Matcher::Path {
            globs: globs(&[glob.as_str()])?,
            access: rule.access,
            except: if except.is_empty() {
                None
            } else {
                Some(globs(&except)?)
            },
        }
    } else if let Some(domain) = &rule.domain {
        let parse = |text: &String| {
            DomainPattern::parse(text).ok_or_else(|| RuleError::Domain {
                number,
                domain: text.clone(),
            })
        };
        Matcher::Domain {
            domains: vec![parse(domain)?],
            except: rule.except.iter().map(parse).collect::<Result<_, _>>()?,
        }
    } else {
        if !rule.except.is_empty() {
            return Err(needs(
                "except",
                "a `command`, `path` or `domain` to except from",
            ));
        }
        if allow && command_tools.contains(&rule.tool) {
            return Err(RuleError::NoCommandPrefix {
                number,
                tool: rule.tool.clone(),
            });
        }
        Matcher::Tool
    };
    Ok(Compiled {
        rule: rule.clone(),
        matcher,
    })
}
