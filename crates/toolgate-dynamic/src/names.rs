//! The names a dynamic tool may take.

use std::collections::BTreeSet;
use std::sync::{Arc, Weak};

use toolgate_core::Registry;

use super::tool::TITLE_PREFIX;

/// The longest name of a dynamic tool, in bytes.
pub const MAX_NAME_LEN: usize = 64;

/// Names a dynamic tool can never take: every tool toolgate builds in,
/// offered in this configuration or not, and those of the agent loop (so
/// that enabling a group later cannot find its name taken by an agent's
/// tool, and a model cannot shadow one it knows).
///
/// The host fills it from its catalog of groups (every group's tool
/// names); empty by default, when only the form rules and the registry's
/// [`NameCheck`] apply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReservedNames(Arc<BTreeSet<String>>);

impl ReservedNames {
    /// These names.
    pub fn new<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self(Arc::new(names.into_iter().map(Into::into).collect()))
    }

    /// Whether `name` is reserved.
    pub fn contains(&self, name: &str) -> bool {
        self.0.contains(name)
    }

    /// The names, sorted.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }
}

/// Name prefixes a dynamic tool can never take: MCP tools are named
/// `mcp_{server}_{tool}`.
pub const RESERVED_PREFIXES: &[&str] = &["mcp_"];

/// Whether a name is taken by some other tool (a registry's, an MCP
/// server's): [`CreateTool`](super::CreateTool) refuses it.
pub type NameCheck = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// A [`NameCheck`] over the tools registered in `registry` when the check
/// runs, dynamic tools aside: whether a dynamic tool's name is free is the
/// store's to say (a rejected tool still loaded in a running registry
/// gives its name back). It holds the registry weakly (`create_tool`
/// usually lives in the registry it checks); once the registry is gone, no
/// name is taken.
pub fn registry_names(registry: &Arc<Registry>) -> NameCheck {
    let weak: Weak<Registry> = Arc::downgrade(registry);
    Arc::new(move |name: &str| {
        let Some(registry) = weak.upgrade() else {
            return false;
        };
        registry.get(name).is_ok_and(|entry| {
            !entry
                .spec()
                .annotations
                .title
                .as_deref()
                .is_some_and(|title| title.starts_with(TITLE_PREFIX))
        })
    })
}

/// Checks the form of a dynamic tool's name.
///
/// # Rules
///
/// 1. `^[a-z][a-z0-9_]{0,63}$`: `snake_case` ASCII, starting with a
///    letter, at most [`MAX_NAME_LEN`] bytes.
/// 2. Not one of `reserved`, and not starting with one of
///    [`RESERVED_PREFIXES`].
///
/// Whether another tool has the name is checked apart: against the
/// registry ([`NameCheck`]) and, under the store's lock, against the other
/// dynamic tools.
pub fn check_name(name: &str, reserved: &ReservedNames) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name is empty; use snake_case, like `git_recent`".to_owned());
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "the name has {} characters; at most {MAX_NAME_LEN} are allowed",
            name.len()
        ));
    }
    let first_is_letter = name.starts_with(|c: char| c.is_ascii_lowercase());
    let snake = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !first_is_letter || !snake {
        let suggestion = suggest(name);
        let hint = if suggestion.is_empty() {
            String::new()
        } else {
            format!(", like `{suggestion}`")
        };
        return Err(format!(
            "`{name}` is not snake_case: use lower-case letters, digits and `_`, starting with a letter{hint}"
        ));
    }
    if reserved.contains(name) {
        return Err(format!(
            "`{name}` is the name of a built-in tool; choose another name"
        ));
    }
    if let Some(prefix) = RESERVED_PREFIXES.iter().find(|p| name.starts_with(*p)) {
        return Err(format!(
            "names starting with `{prefix}` are kept for MCP tools; choose another name"
        ));
    }
    Ok(())
}

/// `name` in `snake_case`, as far as it can be (for the error message).
fn suggest(name: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
            prev_lower = true;
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
            prev_lower = false;
        }
    }
    let out = out
        .trim_matches('_')
        .trim_start_matches(|c: char| c.is_ascii_digit());
    out.trim_start_matches('_')
        .chars()
        .take(MAX_NAME_LEN)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Some of the names the host's catalog reserves.
    fn reserved() -> ReservedNames {
        ReservedNames::new(["read_file", "run_command", "create_tool", "delegate"])
    }

    #[test]
    fn name_rules() {
        // (name, Ok or the start of the error)
        let cases: &[(&str, Result<(), &str>)] = &[
            ("git_recent", Ok(())),
            ("a", Ok(())),
            ("x2", Ok(())),
            ("count_lines_v2", Ok(())),
            ("a_", Ok(())),
            (&"a".repeat(64), Ok(())),
            (&"a".repeat(65), Err("the name has 65 characters")),
            ("", Err("the name is empty")),
            ("GitRecent", Err("`GitRecent` is not snake_case")),
            ("git-recent", Err("`git-recent` is not snake_case")),
            ("git recent", Err("`git recent` is not snake_case")),
            ("git.recent", Err("`git.recent` is not snake_case")),
            ("_private", Err("`_private` is not snake_case")),
            ("2fast", Err("`2fast` is not snake_case")),
            ("naïve", Err("`naïve` is not snake_case")),
            ("tool\n", Err("`tool\n` is not snake_case")),
            (
                "read_file",
                Err("`read_file` is the name of a built-in tool"),
            ),
            ("run_command", Err("`run_command` is the name")),
            ("create_tool", Err("`create_tool` is the name")),
            ("delegate", Err("`delegate` is the name")),
            ("mcp_github_pr", Err("names starting with `mcp_`")),
            ("mcp", Ok(())),
        ];
        for (name, expected) in cases {
            match (check_name(name, &reserved()), expected) {
                (Ok(()), Ok(())) => {}
                (Err(message), Err(start)) => {
                    assert!(message.starts_with(start), "{name:?}: {message}");
                }
                (got, want) => panic!("{name:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn a_bad_name_suggests_a_good_one() {
        let cases: &[(&str, &str)] = &[
            ("GitRecent", ", like `git_recent`"),
            ("git-recent", ", like `git_recent`"),
            ("count lines!", ", like `count_lines`"),
            ("2fast", ", like `fast`"),
            ("!!!", "starting with a letter"),
        ];
        for (name, end) in cases {
            let message = check_name(name, &reserved()).unwrap_err();
            assert!(message.ends_with(end), "{name:?}: {message}");
            if end.starts_with(", like") {
                let suggested = message.rsplit('`').nth(1).unwrap();
                assert!(check_name(suggested, &reserved()).is_ok(), "{suggested}");
            }
        }
    }

    #[test]
    fn a_registry_check_sees_later_registrations_and_outlives_the_registry() {
        let registry = Arc::new(Registry::new());
        let taken = registry_names(&registry);
        assert!(!taken("echo"));
        registry.register(toolgate_tools::diag::Echo).unwrap();
        assert!(taken("echo"));
        drop(registry);
        assert!(!taken("echo"));
    }
}
