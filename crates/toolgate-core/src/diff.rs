//! Unified diffs: how a change to a file is shown to people and models.

use std::time::Duration;

use similar::TextDiff;

/// A unified diff of `old` to `new` with `--- a/PATH` / `+++ b/PATH` headers
/// and 3 lines of context; `""` when the texts are equal.
///
/// `\ No newline at end of file` marks unterminated last lines, so the diff
/// is one a patch tool can apply. Line endings are left in the lines as
/// they are. A pathological diff gives up refining after two seconds (the
/// result is still a correct, if larger, diff).
///
/// ```
/// let diff = toolgate_core::unified_diff("a.txt", "old\n", "new\n");
/// assert!(diff.contains("-old\n+new"));
/// ```
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    let diff = TextDiff::configure()
        .timeout(Duration::from_secs(2))
        .diff_lines(old, new);
    diff.unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}
