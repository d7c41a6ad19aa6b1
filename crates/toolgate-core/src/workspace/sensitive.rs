//! Sensitive-file patterns: which workspace paths hold secrets.

use std::path::Path;

use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};

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

/// A compiled set of sensitive-file patterns.
#[derive(Debug)]
pub(super) struct SensitiveSet {
    set: GlobSet,
    /// For each glob in `set`, the index of the pattern it came from.
    origin: Vec<usize>,
    patterns: Vec<String>,
}

impl SensitiveSet {
    /// Compiles `patterns`; see `WorkspaceBuilder::sensitive_patterns` for
    /// the rules.
    pub(super) fn new(patterns: &[String]) -> Result<Self, WorkspaceError> {
        // File names are case-insensitive on macOS and Windows by default, so
        // `.ENV` opens `.env` there: match the way the file system does.
        let case_insensitive = cfg!(any(target_os = "macos", windows));
        let mut builder = GlobSetBuilder::new();
        let mut origin = Vec::new();
        for (index, pattern) in patterns.iter().enumerate() {
            let invalid = |reason: String| WorkspaceError::InvalidPattern {
                pattern: pattern.clone(),
                reason,
            };
            let (anchored, body) = match pattern.strip_prefix('/') {
                Some(rest) => (true, rest),
                None => (false, pattern.as_str()),
            };
            let body = body.trim_end_matches('/');
            if body.is_empty() {
                return Err(invalid("the pattern is empty".to_owned()));
            }
            let base = if anchored {
                body.to_owned()
            } else {
                format!("**/{body}")
            };
            // The second glob makes a match on a directory cover everything
            // beneath it, as in `.gitignore`: `credentials` refuses
            // `credentials/prod.json` too.
            for glob in [format!("{base}/**"), base] {
                let glob = GlobBuilder::new(&glob)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .case_insensitive(case_insensitive)
                    .build()
                    .map_err(|err| invalid(err.kind().to_string()))?;
                builder.add(glob);
                origin.push(index);
            }
        }
        let set = builder
            .build()
            .map_err(|err| WorkspaceError::InvalidPattern {
                pattern: patterns.join(", "),
                reason: err.kind().to_string(),
            })?;
        Ok(Self {
            set,
            origin,
            patterns: patterns.to_vec(),
        })
    }

    /// The first configured pattern that `rel` (workspace-relative) matches.
    pub(super) fn matches(&self, rel: &Path) -> Option<&str> {
        if rel.as_os_str().is_empty() {
            return None;
        }
        // Almost every path matches nothing: answer that with the cheaper
        // `is_match`, and only look for the first pattern on a hit.
        let candidate = Candidate::new(rel);
        if !self.set.is_match_candidate(&candidate) {
            return None;
        }
        let first = self.set.matches_candidate(&candidate).into_iter().min()?;
        let index = *self.origin.get(first)?;
        self.patterns.get(index).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> SensitiveSet {
        let patterns: Vec<String> = DEFAULT_SENSITIVE_PATTERNS
            .iter()
            .map(|p| (*p).to_owned())
            .collect();
        SensitiveSet::new(&patterns).unwrap()
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
        let set = SensitiveSet::new(&patterns).unwrap();
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
    fn invalid_and_empty_patterns_are_refused() {
        for bad in ["", "/", "[abc"] {
            let err = SensitiveSet::new(&[bad.to_owned()]).unwrap_err();
            assert!(
                matches!(&err, WorkspaceError::InvalidPattern { pattern, .. } if pattern == bad),
                "{err:?}"
            );
        }
    }
}
