//! Code rules: regexes over the content a write would leave
//! (`guardrails.code_rules`).

use std::fmt;

use regex::Regex;
use serde::{Deserialize, Serialize};
use toolgate_core::{Effect, Effects};

use super::EffectsPolicyError;
use super::allow::FileGlobs;

/// What a broken code rule does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// A note appended to the call's result; the write happens. The default.
    #[default]
    Warn,
    /// The call is refused before anything is written.
    Block,
}

/// One code rule, as configured; [`CodeRules::new`] compiles it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeRule {
    pattern: String,
    name: Option<String>,
    severity: Severity,
    files: Vec<String>,
    message: Option<String>,
}

impl CodeRule {
    /// A rule refusing (or noting) content that `pattern`, a regex,
    /// matches anywhere.
    pub fn new(pattern: impl Into<String>) -> Self {
        Self {
            pattern: pattern.into(),
            name: None,
            severity: Severity::Warn,
            files: Vec::new(),
            message: None,
        }
    }

    /// The rule's name, for messages. By default, its pattern.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// What breaking it does. By default, [`Severity::Warn`].
    #[must_use]
    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// The files it applies to, as [`FileGlobs`] (`*` does not cross `/`).
    /// By default, every file.
    #[must_use]
    pub fn files<I, S>(mut self, globs: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.files = globs.into_iter().map(Into::into).collect();
        self
    }

    /// What to tell the model when content matches. By default, "the
    /// content matches it".
    #[must_use]
    pub fn message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }

    fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.pattern)
    }
}

/// A compiled rule.
#[derive(Debug, Clone)]
struct Compiled {
    rule: CodeRule,
    regex: Regex,
    /// `None`: every file.
    files: Option<FileGlobs>,
}

impl Compiled {
    /// Whether the rule applies to `path`. A path the globs cannot place
    /// (absolute, climbing out) is one they may cover, so the rule applies.
    fn applies_to(&self, path: &str) -> bool {
        self.files
            .as_ref()
            .is_none_or(|globs| globs.placed(path).unwrap_or(true))
    }
}

/// The code rules of DESIGN.md §7, judged on the content a call's writes
/// would leave.
///
/// # Rules
///
/// 1. An opaque call breaks no rule: toolgate cannot see what it writes
///    (and asks a person before it runs).
/// 2. Each [`Effect::Write`] is judged, in the order declared, by each rule
///    in the order configured whose file globs match its path (a rule
///    without globs applies to every file; a path the globs cannot place,
///    absolute or climbing out of the workspace, counts as matching).
/// 3. When the write's whole content is known, the rule is broken if its
///    regex matches anywhere in it.
/// 4. When the content is not known ([`Change::content`] is `None`), it
///    cannot be checked: every rule that applies is reported as
///    [unchecked](BrokenRule::is_unchecked) — a `block` rule refuses the
///    write, a `warn` rule notes it.
/// 5. A [`Effect::Move`] brings content the rules have not seen under a new
///    name: when no write in the same call gives the destination's
///    content, each rule that applies to the destination and not to the
///    source is reported as unchecked for the destination.
/// 6. Every broken rule is returned with its severity; the caller refuses
///    the call when one is `block` (adding "; nothing was written") and
///    appends the `warn` ones to the result (as `[guardrail warning] …`).
///
/// [`Change::content`]: toolgate_core::Change::content
///
/// # Example
///
/// ```
/// use toolgate_core::{Change, Effect, Effects};
/// use toolgate_policy::{CodeRule, CodeRules, Severity};
///
/// # fn main() -> Result<(), toolgate_policy::EffectsPolicyError> {
/// let rules = CodeRules::new([CodeRule::new(r"\.unwrap\(\)")
///     .name("no-unwrap")
///     .severity(Severity::Block)
///     .files(["src/**/*.rs"])
///     .message("handle the error")])?;
/// let write = Effects::known([Effect::write("src/a.rs", Change::from_texts(None, "x.unwrap()\n"))]);
/// let broken = rules.check(&write);
/// assert_eq!(broken[0].to_string(), "code rule `no-unwrap` (src/a.rs): handle the error");
/// assert_eq!(broken[0].severity(), Severity::Block);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct CodeRules {
    rules: Vec<Compiled>,
}

impl CodeRules {
    /// Compiles `rules`.
    ///
    /// # Errors
    ///
    /// [`EffectsPolicyError::Regex`] for a rule whose pattern is not a
    /// regex, [`EffectsPolicyError::Glob`] for a malformed file glob.
    pub fn new(rules: impl IntoIterator<Item = CodeRule>) -> Result<Self, EffectsPolicyError> {
        let mut compiled = Vec::new();
        for rule in rules {
            let regex = Regex::new(&rule.pattern).map_err(|source| EffectsPolicyError::Regex {
                rule: rule.display_name().to_owned(),
                source,
            })?;
            let files = if rule.files.is_empty() {
                None
            } else {
                Some(FileGlobs::new(rule.files.iter().cloned())?)
            };
            compiled.push(Compiled { rule, regex, files });
        }
        Ok(Self { rules: compiled })
    }

    /// Whether there is no rule.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rules `effects` break (see the [rules](Self)), in order.
    pub fn check(&self, effects: &Effects) -> Vec<BrokenRule> {
        let list = effects.list();
        let mut out = Vec::new();
        for effect in list {
            match effect {
                Effect::Write { path, change } => {
                    for rule in self.rules.iter().filter(|r| r.applies_to(path)) {
                        let matched = match &change.content {
                            Some(text) => rule.regex.is_match(text),
                            None => true,
                        };
                        if matched {
                            out.push(BrokenRule::new(rule, path, change.content.is_none()));
                        }
                    }
                }
                Effect::Move { from, to } => {
                    let written = list
                        .iter()
                        .any(|e| matches!(e, Effect::Write { path, .. } if path == to));
                    if written {
                        continue;
                    }
                    for rule in self
                        .rules
                        .iter()
                        .filter(|r| r.applies_to(to) && !r.applies_to(from))
                    {
                        out.push(BrokenRule::new(rule, to, true));
                    }
                }
                _ => {}
            }
        }
        out
    }
}

/// A code rule a call breaks. Its [`Display`](fmt::Display) is the reason
/// the model reads: `code rule `NAME` (FILE): MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenRule {
    name: String,
    path: String,
    severity: Severity,
    message: String,
    unchecked: bool,
}

impl BrokenRule {
    fn new(rule: &Compiled, path: &str, unchecked: bool) -> Self {
        let message = if unchecked {
            "the content cannot be checked before writing"
        } else {
            rule.rule
                .message
                .as_deref()
                .unwrap_or("the content matches it")
        };
        Self {
            name: rule.rule.display_name().to_owned(),
            path: path.to_owned(),
            severity: rule.rule.severity,
            message: message.to_owned(),
            unchecked,
        }
    }

    /// The rule's name (its pattern when it has none).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file written.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What the rule does.
    pub fn severity(&self) -> Severity {
        self.severity
    }

    /// Whether the rule applies but the content could not be checked
    /// (rules 4 and 5), rather than matched.
    pub fn is_unchecked(&self) -> bool {
        self.unchecked
    }
}

impl fmt::Display for BrokenRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "code rule `{}` ({}): {}",
            self.name, self.path, self.message
        )
    }
}
