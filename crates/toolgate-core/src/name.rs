//! Tool name rules.

/// The longest tool name accepted, in bytes (OpenAI's function-name limit).
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// Checks that `name` matches `^[a-zA-Z0-9_-]{1,64}$`.
///
/// These are the names every provider accepts for function calling; the
/// registry refuses anything else at registration, so a bad name is found when
/// the tool is added rather than when a model call fails.
pub fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a tool name cannot be empty".to_owned());
    }
    if name.len() > MAX_TOOL_NAME_LEN {
        return Err(format!(
            "a tool name has at most {MAX_TOOL_NAME_LEN} characters, this one has {}",
            name.len()
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(format!(
            "a tool name may only use ASCII letters, digits, `_` and `-`, found {bad:?}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_rules() {
        let cases: &[(&str, bool)] = &[
            ("read_file", true),
            ("mcp_github-create_pr", true),
            ("A9", true),
            (&"x".repeat(64), true),
            (&"x".repeat(65), false),
            ("", false),
            ("read file", false),
            ("read.file", false),
            ("ñandú", false),
            ("tool\0", false),
            ("a/b", false),
        ];
        for (name, ok) in cases {
            assert_eq!(check_tool_name(name).is_ok(), *ok, "{name:?}");
        }
    }
}
