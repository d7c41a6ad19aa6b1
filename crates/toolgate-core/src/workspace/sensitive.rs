//! Path patterns: which workspace paths hold secrets (sensitive) and which
//! hold toolgate's own policy (protected).

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use globset::{Candidate, Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use super::WorkspaceError;

/// The default sensitive-file patterns (DESIGN.md §7, from seed 002), plus
/// the credential files of common tools.
///
/// - `.env*`: dotenv files, including `.env.local` and `.envrc`. This also
///   covers `.env.example`; replace the set if your agents must read it.
/// - `*.pem`, `*.key`, `*.p12`, `*.pfx`: private keys and certificate bundles.
/// - `id_rsa*`, `id_ed25519*`, `id_ecdsa*`, `id_dsa*`: SSH keys (the public
///   halves too, which is harmless and keeps the rule simple).
/// - `.ssh/**`: everything under any `.ssh` directory.
/// - `*shadow*`: `/etc/shadow` and copies of it. This is broad (it also
///   matches `shadow.rs`); it is the seed's rule and errs on the safe side.
/// - `*.secret`, `token.json`.
/// - `credentials`, `credentials.json`: AWS and Google Cloud credentials.
/// - `.netrc`, `_netrc`, `.git-credentials`: HTTP and git passwords.
/// - `.npmrc`, `.pypirc`: package-registry tokens. These files also hold
///   harmless settings; they are refused because a token is often among them.
///
/// See [`WorkspaceBuilder::sensitive_patterns`](super::WorkspaceBuilder::sensitive_patterns)
/// for how the patterns match.
pub const DEFAULT_SENSITIVE_PATTERNS: &[&str] = &[
    ".env*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_ed25519*",
    "id_ecdsa*",
    "id_dsa*",
    ".ssh/**",
    "*shadow*",
    "*.secret",
    "token.json",
    "credentials",
    "credentials.json",
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
];

/// The built-in protected paths: toolgate's own policy files and git's
/// configuration, which can make the user's own `git` run programs
/// (`core.fsmonitor`, hooks). Anchored at the workspace root: they are the
/// files toolgate and git read there.
///
/// - `/toolgate.yaml`, `/.toolgate`: toolgate's configuration, trust-relevant
///   state, audit log and sessions.
/// - `/.git/config`, `/.git/config.worktree`, `/.git/commondir`: git reads
///   its configuration (and where to find more of it) from these.
/// - `/.git/hooks`: programs git runs on commit, checkout, push….
/// - `/.git/modules/**/config`, `/.git/modules/**/hooks`: the same for
///   submodules.
///
/// Protected paths may be read but not written, created, renamed or deleted:
/// by the file tools (the workspace refuses them) and by every process
/// toolgate starts (the sandbox mounts them read-only). Configured
/// `guardrails.protected_files` add to this set; nothing removes from it.
pub const DEFAULT_PROTECTED_PATTERNS: &[&str] = &[
    "/toolgate.yaml",
    "/.toolgate",
    "/.git/config",
    "/.git/config.worktree",
    "/.git/commondir",
    "/.git/hooks",
    "/.git/modules/**/config",
    "/.git/modules/**/hooks",
];

/// A compiled set of path patterns, matched against workspace-relative
/// paths. See
/// [`WorkspaceBuilder::sensitive_patterns`](super::WorkspaceBuilder::sensitive_patterns)
/// for the rules; sensitive and protected patterns follow the same ones.
///
/// # Example
///
/// ```
/// use std::path::Path;
/// use toolgate_core::PathPatterns;
///
/// # fn main() -> Result<(), toolgate_core::WorkspaceError> {
/// let set = PathPatterns::new(["*.pem", "/toolgate.yaml"])?;
/// assert_eq!(set.matches(Path::new("keys/a.pem")), Some("*.pem"));
/// assert_eq!(set.matches(Path::new("toolgate.yaml")), Some("/toolgate.yaml"));
/// assert_eq!(set.matches(Path::new("sub/toolgate.yaml")), None);
/// # Ok(())
/// # }
/// ```
///
/// # Rules
///
/// 1. Every pattern is checked by [`new`](Self::new), so a malformed one is
///    an error there — except the patterns of
///    [`DEFAULT_SENSITIVE_PATTERNS`] and [`DEFAULT_PROTECTED_PATTERNS`],
///    constants whose parsing a test checks.
/// 2. The matcher (a `GlobSet`: regular expressions) is parsed and compiled
///    on the first [`matches`](Self::matches), once for all clones: most
///    commands (`toolgate call get_datetime`) never look a path up.
/// 3. Should that compilation fail although every pattern parsed (a set too
///    large for the regex engine's limits), every path matches the first
///    pattern: a set that cannot say "no" says "yes", and the failure is
///    logged.
/// 4. The same list given again in the process (the workspace view, the
///    sandbox and the guardrails each take the sensitive and protected
///    lists) is the earlier result, matcher included: checking is the
///    costliest part of a one-off command's start, and a list's globs
///    depend on its text alone. The last few lists are remembered.
#[derive(Debug, Clone)]
pub struct PathPatterns {
    /// Made on first use (rule 2); shared by clones and by the same list
    /// given again (rule 4).
    compiled: Arc<OnceLock<Compiled>>,
    patterns: Vec<String>,
}

/// The matcher of a list of patterns.
#[derive(Debug)]
struct Compiled {
    /// `None` when compiling failed (rule 3).
    set: Option<GlobSet>,
    /// For each glob of `set`, the index of the pattern it came from.
    origin: Vec<usize>,
}

/// The two globs of `pattern`: the path itself, and everything beneath it
/// (a match on a directory covers its contents, as in `.gitignore`:
/// `credentials` refuses `credentials/prod.json` too). The error says why
/// the pattern is malformed.
fn globs_of(pattern: &str) -> Result<[Glob; 2], String> {
    // File names are case-insensitive on macOS and Windows by default, so
    // `.ENV` opens `.env` there: match the way the file system does.
    let case_insensitive = cfg!(any(target_os = "macos", windows));
    let (anchored, body) = match pattern.strip_prefix('/') {
        Some(rest) => (true, rest),
        None => (false, pattern),
    };
    let body = body.trim_end_matches('/');
    if body.is_empty() {
        return Err("the pattern is empty".to_owned());
    }
    let base = if anchored {
        body.to_owned()
    } else {
        format!("**/{body}")
    };
    let glob = |text: &str| {
        GlobBuilder::new(text)
            .literal_separator(true)
            .backslash_escape(true)
            .case_insensitive(case_insensitive)
            .build()
            .map_err(|err| err.kind().to_string())
    };
    Ok([glob(&format!("{base}/**"))?, glob(&base)?])
}

/// The lists [`PathPatterns::new`] parsed last, newest first (rule 4): at
/// most this many.
const REMEMBERED: usize = 8;

fn parsed_lists() -> &'static Mutex<Vec<PathPatterns>> {
    static PARSED: OnceLock<Mutex<Vec<PathPatterns>>> = OnceLock::new();
    PARSED.get_or_init(Mutex::default)
}

/// A clone of the patterns parsed from this very list before, if any.
fn recently_parsed(patterns: &[String]) -> Option<PathPatterns> {
    let parsed = parsed_lists().lock().ok()?;
    parsed.iter().find(|p| p.patterns == patterns).cloned()
}

fn remember(patterns: &PathPatterns) {
    if let Ok(mut parsed) = parsed_lists().lock() {
        parsed.insert(0, patterns.clone());
        parsed.truncate(REMEMBERED);
    }
}

impl PathPatterns {
    /// Parses `patterns`; the matcher is compiled on first use (rule 2).
    ///
    /// # Errors
    ///
    /// [`WorkspaceError::InvalidPattern`] for an empty or malformed pattern.
    pub fn new<I, S>(patterns: I) -> Result<Self, WorkspaceError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let patterns: Vec<String> = patterns.into_iter().map(Into::into).collect();
        if let Some(parsed) = recently_parsed(&patterns) {
            return Ok(parsed);
        }
        for pattern in &patterns {
            let known = DEFAULT_SENSITIVE_PATTERNS
                .iter()
                .chain(DEFAULT_PROTECTED_PATTERNS)
                .any(|p| p == pattern);
            if !known {
                globs_of(pattern).map_err(|reason| WorkspaceError::InvalidPattern {
                    pattern: pattern.clone(),
                    reason,
                })?;
            }
        }
        let parsed = Self {
            compiled: Arc::default(),
            patterns,
        };
        remember(&parsed);
        Ok(parsed)
    }

    /// The matcher (rules 2 and 3).
    fn compiled(&self) -> &Compiled {
        self.compiled.get_or_init(|| {
            let mut builder = GlobSetBuilder::new();
            let mut origin = Vec::new();
            for (index, pattern) in self.patterns.iter().enumerate() {
                // Checked by `new` (rule 1): a failure here is rule 3's.
                let Ok(globs) = globs_of(pattern) else {
                    return Compiled { set: None, origin };
                };
                for glob in globs {
                    builder.add(glob);
                    origin.push(index);
                }
            }
            let set = builder
                .build()
                .inspect_err(|err| {
                    tracing::error!(
                        patterns = %self.patterns.join(", "),
                        "the path patterns could not be compiled ({err}); every path is \
                         treated as matching them"
                    );
                })
                .ok();
            Compiled { set, origin }
        })
    }

    /// The patterns, as given.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Whether the set has no pattern at all.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The first pattern that `rel` (workspace-relative, `/`-separated)
    /// matches, or `None`. The empty path (the root) matches nothing.
    pub fn matches(&self, rel: &Path) -> Option<&str> {
        if rel.as_os_str().is_empty() {
            return None;
        }
        // Almost every path matches nothing: answer that with the cheaper
        // `is_match`, and only look for the first pattern on a hit.
        let compiled = self.compiled();
        let Some(set) = &compiled.set else {
            return self.patterns.first().map(String::as_str);
        };
        let candidate = Candidate::new(rel);
        if !set.is_match_candidate(&candidate) {
            return None;
        }
        let first = set.matches_candidate(&candidate).into_iter().min()?;
        let index = *compiled.origin.get(first)?;
        self.patterns.get(index).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> PathPatterns {
        PathPatterns::new(DEFAULT_SENSITIVE_PATTERNS.iter().copied()).unwrap()
    }

    /// Rule 4: a list parsed again is the earlier result, its matcher
    /// shared; a list that differs in any way is parsed on its own.
    #[test]
    fn a_list_parsed_again_shares_the_earlier_result() {
        let list = ["*.rule4-a", "/rule4/b"];
        let first = PathPatterns::new(list).unwrap();
        let again = PathPatterns::new(list).unwrap();
        assert!(Arc::ptr_eq(&first.compiled, &again.compiled));
        assert_eq!(again.matches(Path::new("x.rule4-a")), Some("*.rule4-a"));
        let other = PathPatterns::new(["/rule4/b", "*.rule4-a"]).unwrap();
        assert!(!Arc::ptr_eq(&first.compiled, &other.compiled));
        assert_eq!(other.matches(Path::new("rule4/b")), Some("/rule4/b"));
        // A malformed list is refused every time, never remembered.
        assert!(PathPatterns::new(["a[", "*.rule4-a"]).is_err());
        assert!(PathPatterns::new(["a[", "*.rule4-a"]).is_err());
    }

    /// Rule 1: the default patterns are not checked when given, so they
    /// must all parse.
    #[test]
    fn every_default_pattern_parses() {
        for pattern in DEFAULT_SENSITIVE_PATTERNS
            .iter()
            .chain(DEFAULT_PROTECTED_PATTERNS)
        {
            assert!(globs_of(pattern).is_ok(), "{pattern}");
        }
    }

    #[test]
    fn default_patterns_match_where_they_should() {
        let set = defaults();
        let cases: &[(&str, Option<&str>)] = &[
            (".env", Some(".env*")),
            (".env.local", Some(".env*")),
            ("config/.env.production", Some(".env*")),
            ("keys/server.pem", Some("*.pem")),
            ("tls/server.key", Some("*.key")),
            ("certs/bundle.p12", Some("*.p12")),
            ("certs/bundle.pfx", Some("*.pfx")),
            ("id_rsa", Some("id_rsa*")),
            ("home/.ssh/id_ed25519.pub", Some("id_ed25519*")),
            (".ssh/config", Some(".ssh/**")),
            ("backup/.ssh/known_hosts", Some(".ssh/**")),
            ("etc/shadow", Some("*shadow*")),
            ("app.secret", Some("*.secret")),
            ("token.json", Some("token.json")),
            ("deep/er/token.json", Some("token.json")),
            (".aws/credentials", Some("credentials")),
            ("credentials/prod.yaml", Some("credentials")),
            ("gcloud/credentials.json", Some("credentials.json")),
            (".netrc", Some(".netrc")),
            (".git-credentials", Some(".git-credentials")),
            (".npmrc", Some(".npmrc")),
            (".pypirc", Some(".pypirc")),
            // Not sensitive.
            ("src/main.rs", None),
            ("environment.md", None),
            ("docs/env.md", None),
            ("keys/README.md", None),
            ("token.json.md", None),
            ("my_credentials.txt", None),
            (".ssh", None),
            ("pem", None),
        ];
        for (path, expected) in cases {
            assert_eq!(set.matches(Path::new(path)), *expected, "path {path}");
        }
    }

    #[test]
    fn star_does_not_cross_slash_but_double_star_does() {
        let patterns = vec![
            "/build/*.log".to_owned(),
            "/vault/**/*.txt".to_owned(),
            "secret*".to_owned(),
        ];
        let set = PathPatterns::new(patterns).unwrap();
        let cases: &[(&str, Option<&str>)] = &[
            ("build/a.log", Some("/build/*.log")),
            ("build/sub/a.log", None),
            ("other/build/a.log", None),
            ("vault/a.txt", Some("/vault/**/*.txt")),
            ("vault/x/y/a.txt", Some("/vault/**/*.txt")),
            ("vault/a.md", None),
            ("secrets/x", Some("secret*")),
            ("a/secret.txt", Some("secret*")),
            ("a/not-secret", None),
        ];
        for (path, expected) in cases {
            assert_eq!(set.matches(Path::new(path)), *expected, "path {path}");
        }
    }

    #[test]
    fn protected_defaults_are_anchored_at_the_root() {
        let set = PathPatterns::new(DEFAULT_PROTECTED_PATTERNS.iter().copied()).unwrap();
        let cases: &[(&str, bool)] = &[
            ("toolgate.yaml", true),
            (".toolgate", true),
            (".toolgate/audit.jsonl", true),
            (".git/config", true),
            (".git/config.worktree", true),
            (".git/commondir", true),
            (".git/hooks", true),
            (".git/hooks/pre-commit", true),
            (".git/modules/lib/config", true),
            (".git/modules/a/b/hooks/post-checkout", true),
            // Not protected.
            ("sub/toolgate.yaml", false),
            ("toolgate.yml", false),
            (".git", false),
            (".git/HEAD", false),
            (".git/index", false),
            (".git/objects/ab/cdef", false),
            (".git/refs/heads/main", false),
            ("sub/.git/config", false),
            ("src/config", false),
        ];
        for (path, protected) in cases {
            assert_eq!(
                set.matches(Path::new(path)).is_some(),
                *protected,
                "path {path}"
            );
        }
    }

    #[test]
    fn invalid_and_empty_patterns_are_refused() {
        for bad in ["", "/", "[abc"] {
            let err = PathPatterns::new([bad]).unwrap_err();
            assert!(
                matches!(&err, WorkspaceError::InvalidPattern { pattern, .. } if pattern == bad),
                "{err:?}"
            );
        }
    }
}
