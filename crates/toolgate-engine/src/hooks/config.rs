//! The `hooks:` section of the configuration.

use serde::{Deserialize, Serialize};

/// The `hooks:` configuration section: one list of hooks per lifecycle
/// event, plus the legacy `post_edit` list.
///
/// ```yaml
/// hooks:
///   pre_tool_use:
///     - name: no-secrets
///       command: ./hooks/check.sh
///       matcher: write_file|edit_file
///       file_patterns: ["src/**/*.rs"]
///       timeout: 10
///       on_failure: block
/// ```
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HooksConfig {
    /// Before a tool runs; may block or rewrite the call.
    pub pre_tool_use: Vec<HookSpec>,
    /// After a tool ran; may add context to the result.
    pub post_tool_use: Vec<HookSpec>,
    /// Before each LLM request (agent loop).
    pub pre_llm_call: Vec<HookSpec>,
    /// After each LLM response (agent loop).
    pub post_llm_call: Vec<HookSpec>,
    /// When an agent session starts.
    pub session_start: Vec<HookSpec>,
    /// When an agent session ends.
    pub session_end: Vec<HookSpec>,
    /// When a run fails.
    pub on_error: Vec<HookSpec>,
    /// When a budget (steps, tokens, time) is nearly spent.
    pub budget_warning: Vec<HookSpec>,
    /// When the conversation is compressed.
    pub context_compress: Vec<HookSpec>,
    /// When the agent says it is done.
    pub agent_complete: Vec<HookSpec>,
    /// Legacy: hooks after an edit. Each runs as a `post_tool_use` hook with
    /// matcher `edit_file|write_file|apply_patch` (unless it sets its own).
    pub post_edit: Vec<HookSpec>,
}

/// One configured hook.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HookSpec {
    /// The name shown in results and logs.
    pub name: String,
    /// A command run by `sh -c`; `{file}` is replaced by the shell-quoted
    /// path of the file the call is about.
    #[serde(default)]
    pub command: Option<String>,
    /// A program and its arguments, run without a shell; `{file}` in an
    /// argument is replaced by the path as it is.
    #[serde(default)]
    pub argv: Option<Vec<String>>,
    /// A regex over tool names, anchored at both ends; `*` or absent = all.
    #[serde(default)]
    pub matcher: Option<String>,
    /// Globs over the workspace-relative file path the call is about (`*`
    /// does not cross `/`, `**` does). Absent = every call, with or without
    /// a file.
    #[serde(default)]
    pub file_patterns: Vec<String>,
    /// Seconds before the hook's process group is killed. By default, 30.
    #[serde(default)]
    pub timeout: Option<f64>,
    /// What a crash, a timeout or a missing program means.
    #[serde(default)]
    pub on_failure: OnFailure,
}

/// What a failing hook (exit other than 0 and 2, timeout, missing program)
/// means for the call.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OnFailure {
    /// A warning; the call goes on (the default).
    #[default]
    Allow,
    /// The call is refused.
    Block,
}
