//! Local names for remote tools.

use std::collections::HashSet;

use sha2::{Digest, Sha256};
use toolgate_core::MAX_TOOL_NAME_LEN;

/// Replaces every character outside `[a-zA-Z0-9_-]` with `_`.
pub(crate) fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Eight hex digits of SHA-256: stable across runs and machines.
fn short_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().take(4).fold(String::new(), |mut s, b| {
        use std::fmt::Write as _;
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The local name of `tool` on `server`: `mcp_{server}_{tool}`, sanitised,
/// at most 64 characters. A name that is too long, or that collides with one
/// in `taken`, is cut and given a hash of the original `server/tool`, so the
/// same remote tool always gets the same name.
pub(crate) fn local_name(server: &str, tool: &str, taken: &HashSet<String>) -> String {
    let plain = sanitize(&format!("mcp_{server}_{tool}"));
    if plain.len() <= MAX_TOOL_NAME_LEN && !taken.contains(&plain) {
        return plain;
    }
    let hash = short_hash(&format!("{server}/{tool}"));
    let keep = MAX_TOOL_NAME_LEN - hash.len() - 1;
    let mut cut: String = plain.chars().take(keep).collect();
    cut.push('_');
    cut.push_str(&hash);
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let none = HashSet::new();
        let cases: &[(&str, &str, &str)] = &[
            ("everything", "echo", "mcp_everything_echo"),
            ("time", "get_current_time", "mcp_time_get_current_time"),
            ("my server", "a.b/c", "mcp_my_server_a_b_c"),
            ("fs", "read-file", "mcp_fs_read-file"),
        ];
        for (server, tool, expected) in cases {
            assert_eq!(local_name(server, tool, &none), *expected);
        }
    }

    #[test]
    fn long_and_colliding_names_get_a_stable_hash() {
        let none = HashSet::new();
        let long = "x".repeat(100);
        let name = local_name("s", &long, &none);
        assert_eq!(name.len(), MAX_TOOL_NAME_LEN);
        assert_eq!(name, local_name("s", &long, &none));
        toolgate_core::check_tool_name(&name).unwrap();

        // `a.b` and `a_b` sanitise to the same name: the second gets a hash.
        let mut taken = HashSet::new();
        taken.insert(local_name("s", "a.b", &none));
        let second = local_name("s", "a_b", &taken);
        assert_ne!(second, "mcp_s_a_b");
        assert!(second.starts_with("mcp_s_a_b_"), "{second}");
    }
}
