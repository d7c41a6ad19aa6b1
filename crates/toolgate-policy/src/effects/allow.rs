//! Globs over workspace paths, and the one way a path rule may allow a call.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use toolgate_core::{Effect, Effects};

use super::EffectsPolicyError;
use super::lexical::fold_relative;

/// A compiled set of globs over workspace-relative paths, as hooks'
/// `file_patterns`, code rules' `file_patterns` and path allow rules write
/// them.
///
/// # Rules
///
/// 1. A glob is anchored at the workspace root: `src/*.rs` matches
///    `src/main.rs`, not `lib/src/main.rs`. A leading `/` or `./` is the
///    same as none.
/// 2. `*`, `?` and `[…]` never match `/`; `**` matches any number of
///    directories (`src/**/*.rs`, `**/*.md`).
/// 3. A path is matched with `.` and `..` folded by their text
///    (`./src/a.rs` is `src/a.rs`). A path that is absolute or climbs above
///    the root matches nothing: the set cannot tell where it lies.
///
/// # Example
///
/// ```
/// use toolgate_policy::FileGlobs;
///
/// # fn main() -> Result<(), toolgate_policy::EffectsPolicyError> {
/// let globs = FileGlobs::new(["src/*.rs", "docs/**"])?;
/// assert!(globs.matches("./src/main.rs"));
/// assert!(!globs.matches("src/bin/main.rs"));
/// assert!(globs.matches("docs/a/b.md"));
/// assert!(!globs.matches("/ws/src/main.rs"));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct FileGlobs {
    set: GlobSet,
    patterns: Vec<String>,
}

impl FileGlobs {
    /// Compiles `patterns`.
    ///
    /// # Errors
    ///
    /// [`EffectsPolicyError::Glob`] for a malformed glob.
    pub fn new<I, S>(patterns: I) -> Result<Self, EffectsPolicyError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let patterns: Vec<String> = patterns.into_iter().map(Into::into).collect();
        let mut builder = GlobSetBuilder::new();
        for pattern in &patterns {
            let body = pattern
                .strip_prefix("./")
                .or_else(|| pattern.strip_prefix('/'))
                .unwrap_or(pattern);
            let glob = GlobBuilder::new(body)
                .literal_separator(true)
                .build()
                .map_err(|source| EffectsPolicyError::Glob {
                    pattern: pattern.clone(),
                    source,
                })?;
            builder.add(glob);
        }
        let set = builder.build().map_err(|source| EffectsPolicyError::Glob {
            pattern: patterns.join(", "),
            source,
        })?;
        Ok(Self { set, patterns })
    }

    /// The globs, as given.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Whether the set has no glob (and so matches nothing).
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether `path` matches a glob of the set (see the [rules](Self)).
    pub fn matches(&self, path: &str) -> bool {
        self.placed(path).unwrap_or(false)
    }

    /// Whether `path` matches, or `None` when it cannot be placed in the
    /// workspace by its text (rule 3).
    pub(crate) fn placed(&self, path: &str) -> Option<bool> {
        if path.starts_with('/') {
            return None;
        }
        let rel = fold_relative(path)?;
        Some(self.set.is_match(rel))
    }
}

/// Whether a path-based allow rule with `globs` covers a call: whether the
/// call may skip confirmation because of where it writes.
///
/// # Rules
///
/// 1. An opaque call ([`Effects::Opaque`]) never matches: toolgate cannot
///    know what it changes, so no path can allow it. (The deny rules, in
///    turn, cannot see into it: it passes [`PathRules`](crate::PathRules),
///    and is confirmed as a sensitive call.)
/// 2. A call with a command or network effect (or an effect of a kind this
///    version does not know) never matches: what a process or a server
///    does is not a path.
/// 3. A call that changes no file never matches: there is nothing for the
///    rule to allow, and an empty "every path matches" is how allow rules
///    leak.
/// 4. Otherwise it matches when every path it changes — written, deleted,
///    either end of a move — matches `globs` ([`FileGlobs::matches`]: a path
///    outside the workspace or absolute never does). Reads do not count.
///
/// An allow rule only skips asking: the deny rules
/// ([`PathRules`](crate::PathRules), edit limits, code rules) are applied
/// before it and still refuse.
pub fn allows_paths(effects: &Effects, globs: &FileGlobs) -> bool {
    if effects.is_opaque() {
        return false;
    }
    let list = effects.list();
    let only_files = list.iter().all(|effect| {
        matches!(
            effect,
            Effect::Read { .. }
                | Effect::Write { .. }
                | Effect::Delete { .. }
                | Effect::Move { .. }
        )
    });
    let changed = effects.changed_paths();
    only_files && !changed.is_empty() && changed.iter().all(|path| globs.matches(path))
}

/// `text` with glob metacharacters (`* ? [ ] { } \\`) escaped, so a
/// [`FileGlobs`] pattern built from it matches that path literally.
pub fn escape_glob(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod escape_tests {
    use super::*;

    #[test]
    fn an_escaped_path_matches_itself_only() {
        for path in [
            "src/[a].rs",
            "a*b?.txt",
            "x{1,2}",
            "back\\slash",
            "plain.rs",
        ] {
            let globs = FileGlobs::new(&[escape_glob(path)]).unwrap();
            assert!(globs.matches(path), "{path}");
        }
        let globs = FileGlobs::new(&[escape_glob("a*.txt")]).unwrap();
        assert!(!globs.matches("abc.txt"));
    }
}
