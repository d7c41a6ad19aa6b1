//! Profiles: how much of the runtime a model is given at once.
//!
//! A small local model (a few billion parameters, a window of a few
//! thousand tokens) does better with less: fewer tools, shorter schemas,
//! one call at a time, shorter outputs, and an explicit way to end. The
//! [`Profile::Small`] profile gives it that; [`Profile::Standard`] is the
//! full runtime.
//!
//! # Rules
//!
//! 1. `agents.NAME.profile` is `standard`, `small` or `auto` (the
//!    default). `auto` is decided by what the model server reports
//!    ([`ModelFacts`]), never guessed from a model's name: a reported
//!    parameter count decides alone (at most [`SMALL_PARAMETERS`]: small);
//!    without one, a reported context window of at most
//!    [`SMALL_WINDOW`] tokens is small; a server that reports neither gets
//!    the standard profile.
//! 2. The small profile offers the handful of tools the agent may use that
//!    declare a compact form ([`Tool::compact`](toolgate_core::Tool::compact):
//!    read, list, search, write a whole file, run a command), each with its
//!    one-line description and only the arguments a small model needs, plus
//!    the loop's own [`FINISH`] tool; the other arguments keep their
//!    defaults. The calls go to the same tools
//!    through the same gate.
//! 3. One call runs per step (`max_calls_per_step` is 1).
//! 4. Tool outputs are cut to [`SMALL_OUTPUT_CHARS`] characters, whole
//!    lines from the head and the tail, saying how many lines were cut
//!    ([`trim_lines`]).
//! 5. A run ends by a call of `finish(answer)`, which the loop checks
//!    before it ends the run (see the runner's rules); a plain answer
//!    still ends it too.
//! 6. A reply may take at most [`SMALL_REPLY_TOKENS`] tokens (less when
//!    the window leaves less): a small model's whole-file write of a
//!    small file fits, and a reply that runs away inside one JSON string
//!    (where no repeated lines can be seen) stops there.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use toolgate_core::{Compact, Registry};

pub use toolgate_llm::FINISH;
pub use toolgate_llm::probe::ModelFacts;

/// A parameter count at or under which `auto` picks the small profile.
pub const SMALL_PARAMETERS: u64 = 8_000_000_000;

/// A context window (tokens) at or under which `auto` picks the small
/// profile when the server does not report a parameter count.
pub const SMALL_WINDOW: u64 = 32_768;

/// The longest tool output a small-profile model sees, in characters.
pub const SMALL_OUTPUT_CHARS: usize = 4_000;

/// The most tokens one reply of a small-profile model may take (rule 6).
pub const SMALL_REPLY_TOKENS: u32 = 1024;

/// How much of the runtime an agent's model is given (see the module's
/// rules).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Every tool of the agent, full schemas and prompt.
    Standard,
    /// A handful of tools, one call a step, short outputs, `finish`.
    Small,
    /// Small when the server reports a small model or window (rule 1).
    #[default]
    Auto,
}

impl Profile {
    /// The profile a run uses: this one, or for `auto` the one `facts`
    /// decide (rule 1). Never [`Profile::Auto`].
    #[must_use]
    pub fn resolve(self, facts: &ModelFacts) -> Self {
        match self {
            Self::Auto => match (facts.parameters, facts.window) {
                (Some(p), _) if p <= SMALL_PARAMETERS => Self::Small,
                (None, Some(w)) if w <= SMALL_WINDOW => Self::Small,
                // A large model, or nothing reported.
                _ => Self::Standard,
            },
            other => other,
        }
    }

    /// The profile's name, as configuration spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Standard => "standard",
            Self::Small => "small",
            Self::Auto => "auto",
        }
    }
}

/// The schema of [`FINISH`], in OpenAI form.
pub(crate) fn finish_schema() -> Value {
    json!({"type": "function", "function": {
        "name": FINISH,
        "description": "End the task with your final answer.",
        "parameters": {"type": "object",
                       "properties": {"answer": {"type": "string"}},
                       "required": ["answer"]}}})
}

/// The small profile's offer (rule 2) of the tools in `allowed` (the
/// agent's, in its order) that declare a compact form
/// ([`Tool::compact`](toolgate_core::Tool::compact)): their names and
/// compact schemas, [`FINISH`] last.
pub fn small_offer(registry: &Registry, allowed: &[String]) -> (Vec<String>, Vec<Value>) {
    let mut names = Vec::new();
    let mut schemas = Vec::new();
    for name in allowed {
        let Ok(tool) = registry.get(name) else {
            continue;
        };
        let Some(compact) = tool.tool().compact() else {
            continue;
        };
        schemas.push(compact_schema(name, &compact, &tool.spec().parameters));
        names.push(name.clone());
    }
    names.push(FINISH.to_owned());
    schemas.push(finish_schema());
    (names, schemas)
}

/// A tool's schema cut to its compact form's arguments, each with its type
/// only.
fn compact_schema(name: &str, compact: &Compact, parameters: &Value) -> Value {
    let mut properties = Map::new();
    for argument in compact.arguments {
        if let Some(p) = parameters["properties"].get(*argument) {
            let mut kept = Map::new();
            for key in ["type", "enum"] {
                if let Some(v) = p.get(key) {
                    kept.insert(key.to_owned(), v.clone());
                }
            }
            properties.insert((*argument).to_owned(), Value::Object(kept));
        }
    }
    let required: Vec<Value> = parameters["required"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter(|n| n.as_str().is_some_and(|n| compact.arguments.contains(&n)))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    json!({"type": "function", "function": {
        "name": name,
        "description": compact.description,
        "parameters": {"type": "object", "properties": properties, "required": required}}})
}

/// Keeps whole lines from the head and the tail of `text` when it is over
/// `max` characters, saying how many lines were cut between them
/// (`[… 812 lines cut …]`); a text of few, long lines is cut by
/// characters instead (`[… 5000 characters cut …]`).
pub fn trim_lines(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_owned();
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let half = max / 2;
    let mut head = 0;
    let mut used = 0;
    for line in &lines {
        let n = line.chars().count();
        if used + n > half {
            break;
        }
        used += n;
        head += 1;
    }
    let mut tail = 0;
    used = 0;
    for line in lines[head..].iter().rev() {
        let n = line.chars().count();
        if used + n > half {
            break;
        }
        used += n;
        tail += 1;
    }
    let cut = lines.len() - head - tail;
    if head + tail == 0 || cut == 0 {
        let keep = half;
        let start: String = text.chars().take(keep).collect();
        let end: String = text.chars().skip(total - keep).collect();
        return format!("{start}\n[… {} characters cut …]\n{end}", total - 2 * keep);
    }
    let start: String = lines[..head].concat();
    let end: String = lines[lines.len() - tail..].concat();
    let newline = if start.ends_with('\n') || start.is_empty() {
        ""
    } else {
        "\n"
    };
    format!("{start}{newline}[… {cut} lines cut …]\n{end}")
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    #[test]
    fn auto_is_decided_by_what_the_server_reports() {
        let b = 1_000_000_000;
        // (parameters, window) → profile
        let cases: &[(Option<u64>, Option<u64>, Profile)] = &[
            (None, None, Profile::Standard),
            (Some(1_543_714_304), None, Profile::Small),
            (Some(8 * b), Some(131_072), Profile::Small),
            (Some(8 * b + 1), Some(4096), Profile::Standard),
            (Some(70 * b), None, Profile::Standard),
            (None, Some(16_384), Profile::Small),
            (None, Some(32_768), Profile::Small),
            (None, Some(32_769), Profile::Standard),
            (None, Some(200_000), Profile::Standard),
        ];
        for &(parameters, window, expected) in cases {
            let facts = ModelFacts::new(window, parameters);
            assert_eq!(
                Profile::Auto.resolve(&facts),
                expected,
                "{parameters:?} {window:?}"
            );
            assert_eq!(Profile::Small.resolve(&facts), Profile::Small);
            assert_eq!(Profile::Standard.resolve(&facts), Profile::Standard);
        }
    }

    #[test]
    fn trim_lines_keeps_whole_lines_and_says_how_many_were_cut() {
        let text = (1..=1000).fold(String::new(), |mut s, i| {
            let _ = writeln!(s, "line {i}");
            s
        });
        let cut = trim_lines(&text, 400);
        assert!(cut.starts_with("line 1\nline 2\n"), "{cut}");
        assert!(cut.ends_with("line 1000\n"), "{cut}");
        let kept = cut.lines().filter(|l| l.starts_with("line ")).count();
        assert!(
            cut.contains(&format!("[… {} lines cut …]", 1000 - kept)),
            "{cut}"
        );
        assert!(cut.chars().count() < 460, "{}", cut.chars().count());
        // Short text is left alone; one long line is cut by characters.
        assert_eq!(trim_lines("short\n", 400), "short\n");
        let one = "x".repeat(5000);
        let cut = trim_lines(&one, 400);
        assert!(cut.contains("[… 4600 characters cut …]"), "{cut}");
    }
}
