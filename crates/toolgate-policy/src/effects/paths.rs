//! The sensitive-file and protected-file rules over a call's effects.

use std::fmt;
use std::path::{Path, PathBuf};

use toolgate_core::{
    DEFAULT_PROTECTED_PATTERNS, DEFAULT_SENSITIVE_PATTERNS, Effect, Effects, PathPatterns,
};

use super::EffectsPolicyError;
use super::lexical::{Place, Roots, join, outside_forms};
use super::words::{
    BraceBudget, MAX_BRACE_NAMES, MAX_BRACE_WORD, brace_expand, candidates, command_words,
    has_pattern, literal_pieces,
};

/// Why a call's effects are refused by the [`PathRules`]. Its
/// [`Display`](fmt::Display) is the message the model reads.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathRefusal {
    /// A path matches a sensitive-file pattern: it may not be read,
    /// searched or written.
    #[non_exhaustive]
    Sensitive {
        /// The path as the call names it (for a command run in a `cwd`, the
        /// word joined to it).
        path: String,
        /// The pattern it matches, as configured.
        pattern: String,
        /// How the path reaches the file that matches.
        via: Via,
    },
    /// A path a call would change matches a protected-file pattern.
    #[non_exhaustive]
    Protected {
        /// The path as the call names it.
        path: String,
        /// The pattern it matches, as configured.
        pattern: String,
        /// How the path reaches the file that matches.
        via: Via,
    },
    /// A command word whose brace expansion is too large to judge name by
    /// name (more than 256 names, or a word over 4096 bytes).
    #[non_exhaustive]
    Unexpandable {
        /// The word.
        word: String,
    },
}

/// How a refused path reaches the file whose name matches.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Via {
    /// The path as written matches.
    Written,
    /// The path resolves (through symlinks) to this workspace-relative
    /// path, which matches.
    Resolved(String),
    /// The command word can expand (a glob, a brace expansion) to this
    /// name, which matches as written or as it resolves.
    Expanded(String),
}

impl PathRefusal {
    /// The path, or the command word, refused.
    pub fn path(&self) -> &str {
        match self {
            Self::Sensitive { path, .. } | Self::Protected { path, .. } => path,
            Self::Unexpandable { word } => word,
        }
    }

    /// The pattern that refuses it, if a pattern does.
    pub fn pattern(&self) -> Option<&str> {
        match self {
            Self::Sensitive { pattern, .. } | Self::Protected { pattern, .. } => Some(pattern),
            Self::Unexpandable { .. } => None,
        }
    }

    /// How the path reaches the file that matches, if a pattern does.
    pub fn via(&self) -> Option<&Via> {
        match self {
            Self::Sensitive { via, .. } | Self::Protected { via, .. } => Some(via),
            Self::Unexpandable { .. } => None,
        }
    }
}

impl std::error::Error for PathRefusal {}

impl fmt::Display for PathRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sensitive {
                path,
                pattern,
                via: Via::Expanded(name),
            } => write!(
                f,
                "`{path}` can expand to the sensitive file `{name}` (pattern `{pattern}`); name the files you need explicitly"
            ),
            Self::Sensitive { path, pattern, .. } => write!(
                f,
                "`{path}` is a sensitive file (pattern `{pattern}`); it may not be read, searched or written. To allow it, set `workspace.allow_sensitive: true`"
            ),
            Self::Protected { path, pattern, .. }
                if DEFAULT_PROTECTED_PATTERNS.contains(&pattern.as_str()) =>
            {
                write!(
                    f,
                    "`{path}` is a protected file (pattern `{pattern}`, protected by default); it may be read but not changed"
                )
            }
            Self::Protected { path, pattern, .. } => write!(
                f,
                "`{path}` is a protected file (pattern `{pattern}` in `guardrails.protected_files`); it may be read but not changed"
            ),
            Self::Unexpandable { word } => {
                let shown: String = word.chars().take(80).collect();
                let more = if shown.len() < word.len() { "…" } else { "" };
                write!(
                    f,
                    "`{shown}{more}` expands to more names than toolgate checks (at most {MAX_BRACE_NAMES}, from a word of at most {MAX_BRACE_WORD} bytes); name the files you need explicitly"
                )
            }
        }
    }
}

/// Builds [`PathRules`].
#[derive(Debug, Clone)]
pub struct PathRulesBuilder {
    roots: Vec<PathBuf>,
    sensitive: Option<PathPatterns>,
    protected: Option<PathPatterns>,
    allow_sensitive: bool,
}

impl PathRulesBuilder {
    /// Adds another spelling of the workspace root (the canonical one, say,
    /// when the root was given through a symlink such as macOS's `/tmp`):
    /// absolute paths under it are inside the workspace too. By default,
    /// only the root given to [`PathRules::builder`].
    #[must_use]
    pub fn root_alias(mut self, root: impl Into<PathBuf>) -> Self {
        self.roots.push(root.into());
        self
    }

    /// The sensitive-file patterns, replacing the current ones. By default,
    /// [`DEFAULT_SENSITIVE_PATTERNS`]; `guardrails.sensitive_files` add to
    /// them.
    #[must_use]
    pub fn sensitive(mut self, patterns: PathPatterns) -> Self {
        self.sensitive = Some(patterns);
        self
    }

    /// The protected-file patterns, replacing the current ones. By default,
    /// [`DEFAULT_PROTECTED_PATTERNS`]; `guardrails.protected_files` add to
    /// them.
    #[must_use]
    pub fn protected(mut self, patterns: PathPatterns) -> Self {
        self.protected = Some(patterns);
        self
    }

    /// Lets sensitive paths through (`workspace.allow_sensitive`); protected
    /// paths stay protected. By default, `false`.
    #[must_use]
    pub fn allow_sensitive(mut self, yes: bool) -> Self {
        self.allow_sensitive = yes;
        self
    }

    /// Checks the roots and compiles the default patterns where none were
    /// given.
    ///
    /// # Errors
    ///
    /// [`EffectsPolicyError::Root`] for a root that is not absolute or not
    /// UTF-8.
    pub fn build(self) -> Result<PathRules, EffectsPolicyError> {
        let mut roots = Vec::new();
        for root in &self.roots {
            match root.to_str() {
                Some(text) if root.has_root() => roots.push(text.to_owned()),
                _ => return Err(EffectsPolicyError::Root { root: root.clone() }),
            }
        }
        let sensitive = match self.sensitive {
            Some(set) => set,
            None => PathPatterns::new(DEFAULT_SENSITIVE_PATTERNS.iter().copied())
                .map_err(EffectsPolicyError::Patterns)?,
        };
        let protected = match self.protected {
            Some(set) => set,
            None => PathPatterns::new(DEFAULT_PROTECTED_PATTERNS.iter().copied())
                .map_err(EffectsPolicyError::Patterns)?,
        };
        Ok(PathRules {
            roots: Roots::new(roots.iter().map(String::as_str)),
            sensitive,
            protected,
            allow_sensitive: self.allow_sensitive,
        })
    }
}

/// The sensitive-file and protected-file rules of DESIGN.md §7, judged on a
/// call's declared [`Effects`] before it runs.
///
/// Judging is pure: what needs the file system is asked of two callbacks.
/// `resolve` gets a path as the call names it (relative to the workspace
/// root, or absolute) and returns the workspace-relative path it resolves
/// to after symlinks, or `None` when it does not resolve inside the
/// workspace (missing, outside, a loop). `expand` gets a command word with
/// pattern characters (`.e*`, relative to the root) and returns the paths
/// it can expand to on disk.
///
/// # Rules
///
/// Applied in this order; the first refusal wins.
///
/// 1. An opaque call ([`Effects::Opaque`], an MCP or dynamic script tool) passes:
///    these deny rules cannot see into it. It is sensitive, so the caller
///    asks a person before it runs, and no path-based allow rule ever
///    matches it ([`allows_paths`](crate::allows_paths)).
/// 2. The effects are judged in the order declared, each path of an effect
///    as below.
/// 3. A path is judged as written; with `.` and `..` folded by their text;
///    and as `resolve` says it resolves. An absolute path under the root
///    (or a [root alias](PathRulesBuilder::root_alias)) is judged relative
///    to it. A path outside the workspace (absolute elsewhere, or whose
///    `..` climb above the root) is judged by each of its names on its own
///    and by the whole path, so `/home/u/.ssh/id_rsa` matches `id_rsa*`.
/// 4. Sensitive paths, unless sensitive files are
///    [allowed](PathRulesBuilder::allow_sensitive): a path that matches a
///    sensitive pattern is refused in every effect — a read of a file or a
///    tree, a write, a delete, either end of a move.
/// 5. Protected paths: a path that matches a protected pattern is refused
///    in a write, a delete and at either end of a move (renaming a
///    protected file away and renaming a file onto one are both changes to
///    it). Reads are allowed. Allowing sensitive files does not lift this.
/// 6. Commands (the line of [`Effect::Command`], or text sent to a running
///    shell), unless sensitive files are allowed: every operand,
///    redirection target and here-string
///    ([`command_operands`](crate::command_operands)) is judged as a
///    sensitive path; when the parser refuses the line, every piece of it
///    between blanks and shell punctuation is, so an unparsable line is
///    judged crudely, never let through. The directory the command runs
///    in (`cwd`) is judged too, and a relative word is judged as the path
///    it names from there (`cat prod.yaml` in `config` is
///    `config/prod.yaml`).
/// 7. A word is judged in each form that can name a file: itself, the value
///    of `--opt=VALUE` (and any `NAME=VALUE`), a short option's glued value
///    (`-f.env`), `@FILE`, `REV:PATH`.
/// 8. A word the shell expands is judged by what it expands to: its brace
///    expansion is worked out here (`{a,.env}`, `.{e..e}nv`), and a word
///    that expands to more than 256 names (or is longer than 4096 bytes)
///    is refused ([`PathRefusal::Unexpandable`]); a word with pattern
///    characters (`.e*`) is judged by each name `expand` returns for it,
///    and by its literal pieces (`@(.env)` names `.env`).
/// 9. Network effects name no path and pass.
///
/// Protected paths are not looked for in commands: every process toolgate
/// starts sees them read-only (the kernel sandbox, DESIGN.md §9), and a
/// command that only reads one is fine.
///
/// # Example
///
/// ```
/// use toolgate_core::{Change, Effect, Effects};
/// use toolgate_policy::{PathRefusal, PathRules};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let rules = PathRules::builder("/ws").build()?;
/// let no_links = |_: &str| None;
/// let no_files = |_: &str| Vec::new();
///
/// let read = Effects::known([Effect::read("src/main.rs")]);
/// assert!(rules.check(&read, &no_links, &no_files).is_ok());
///
/// let cat = Effects::known([Effect::command("cat ./.env", None)]);
/// let refusal = rules.check(&cat, &no_links, &no_files).unwrap_err();
/// assert_eq!(refusal.pattern(), Some(".env*"));
///
/// let config = Effects::known([Effect::write("toolgate.yaml", Change::counted(1, 0, false))]);
/// let refusal = rules.check(&config, &no_links, &no_files).unwrap_err();
/// assert!(matches!(refusal, PathRefusal::Protected { .. }));
/// assert!(rules.check(&Effects::Opaque, &no_links, &no_files).is_ok());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct PathRules {
    roots: Roots,
    sensitive: PathPatterns,
    protected: PathPatterns,
    allow_sensitive: bool,
}

/// Which set of patterns a path is judged against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    Sensitive,
    Protected,
}

impl PathRules {
    /// A builder for the workspace at `root` (an absolute path).
    pub fn builder(root: impl Into<PathBuf>) -> PathRulesBuilder {
        PathRulesBuilder {
            roots: vec![root.into()],
            sensitive: None,
            protected: None,
            allow_sensitive: false,
        }
    }

    /// Whether sensitive files are let through.
    pub fn allows_sensitive(&self) -> bool {
        self.allow_sensitive
    }

    /// Judges `effects` (see the [rules](Self)).
    ///
    /// # Errors
    ///
    /// The first [`PathRefusal`].
    pub fn check(
        &self,
        effects: &Effects,
        resolve: &dyn Fn(&str) -> Option<String>,
        expand: &dyn Fn(&str) -> Vec<String>,
    ) -> Result<(), PathRefusal> {
        // Rule 1: `list` is empty for an opaque call.
        for effect in effects.list() {
            match effect {
                Effect::Read { path, .. } => self.judge(path, &[Rule::Sensitive], resolve)?,
                Effect::Command { command, cwd, .. } => {
                    self.check_command(command, cwd.as_deref(), resolve, expand)?;
                }
                Effect::Network { .. } => {}
                // Writes, deletes, both ends of a move, and any kind of
                // effect this version does not know yet: a change.
                other => {
                    for path in other.paths() {
                        self.judge(path, &[Rule::Sensitive, Rule::Protected], resolve)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Judges one path against `rules`, in order (rules 3 to 5).
    fn judge(
        &self,
        path: &str,
        rules: &[Rule],
        resolve: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(), PathRefusal> {
        let mut resolved: Option<Option<String>> = None;
        for &rule in rules {
            let set = match rule {
                Rule::Sensitive if self.allow_sensitive => continue,
                Rule::Sensitive => &self.sensitive,
                Rule::Protected => &self.protected,
            };
            let found = self.written_match(set, path).map(|p| (p, Via::Written));
            let found = found.or_else(|| {
                let target = resolved.get_or_insert_with(|| resolve(path)).as_deref()?;
                let pattern = self.written_match(set, target)?;
                Some((pattern, Via::Resolved(target.to_owned())))
            });
            if let Some((pattern, via)) = found {
                let path = path.to_owned();
                let pattern = pattern.to_owned();
                return Err(match rule {
                    Rule::Sensitive => PathRefusal::Sensitive { path, pattern, via },
                    Rule::Protected => PathRefusal::Protected { path, pattern, via },
                });
            }
        }
        Ok(())
    }

    /// The first pattern of `set` that `path`, as written, matches (rule 3).
    fn written_match<'s>(&self, set: &'s PathPatterns, path: &str) -> Option<&'s str> {
        if let Some(pattern) = set.matches(Path::new(path)) {
            return Some(pattern);
        }
        match self.roots.place(path) {
            Place::Inside(rel) => set.matches(Path::new(&rel)),
            Place::Outside(outside) => {
                outside_forms(&outside).find_map(|form| set.matches(Path::new(form)))
            }
        }
    }

    /// Rules 6 to 8.
    fn check_command(
        &self,
        command: &str,
        cwd: Option<&str>,
        resolve: &dyn Fn(&str) -> Option<String>,
        expand: &dyn Fn(&str) -> Vec<String>,
    ) -> Result<(), PathRefusal> {
        if self.allow_sensitive {
            return Ok(());
        }
        let sensitive = [Rule::Sensitive];
        if let Some(cwd) = cwd {
            self.judge(cwd, &sensitive, resolve)?;
        }
        let mut budget = BraceBudget::new();
        for word in command_words(command) {
            let names = if word.expands {
                brace_expand(&word.text, &mut budget).ok_or_else(|| PathRefusal::Unexpandable {
                    word: word.text.clone(),
                })?
            } else {
                vec![word.text.clone()]
            };
            // A name the shell makes out of the word (not the word itself)
            // is reported as an expansion of the word.
            let from_braces = names.len() > 1 || names.first() != Some(&word.text);
            let shown = from_braces.then_some(word.text.as_str());
            for name in &names {
                for candidate in candidates(name) {
                    // A relative word names a file in the directory the
                    // command runs in, not at the root.
                    let form = match cwd {
                        Some(cwd) => join(cwd, candidate),
                        None => candidate.to_owned(),
                    };
                    self.judge_word(shown, &form, word.expands, resolve, expand)?;
                }
            }
        }
        Ok(())
    }

    /// Judges one form of a command word: the name itself, then what the
    /// shell may expand it to. `brace_word` is the word as written when the
    /// name came out of its brace expansion.
    fn judge_word(
        &self,
        brace_word: Option<&str>,
        name: &str,
        expands: bool,
        resolve: &dyn Fn(&str) -> Option<String>,
        expand: &dyn Fn(&str) -> Vec<String>,
    ) -> Result<(), PathRefusal> {
        let sensitive = [Rule::Sensitive];
        let direct = self.judge(name, &sensitive, resolve);
        match brace_word {
            Some(word) => direct.map_err(|r| as_expansion(word, r))?,
            None => direct?,
        }
        if !(expands && has_pattern(name)) {
            return Ok(());
        }
        let shown = brace_word.unwrap_or(name);
        for piece in literal_pieces(name) {
            self.judge(piece, &sensitive, resolve)
                .map_err(|r| as_expansion(shown, r))?;
        }
        for path in expand(name) {
            self.judge(&path, &sensitive, resolve)
                .map_err(|r| as_expansion(shown, r))?;
        }
        Ok(())
    }
}

/// A refusal of a name the shell makes out of `word`, reported against the
/// word.
fn as_expansion(word: &str, refusal: PathRefusal) -> PathRefusal {
    match refusal {
        PathRefusal::Sensitive { path, pattern, .. } => PathRefusal::Sensitive {
            path: word.to_owned(),
            pattern,
            via: Via::Expanded(path),
        },
        other => other,
    }
}
