//! What became of a tool call of a step: the gate's [`Decision`], or what
//! the loop decided before the gate.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use toolgate_engine::Decision;

/// Why the loop did not hand a call of the model's to the gate.
///
/// These are the loop's own checks, which the gate cannot make: whether the
/// model's call could be read at all, whether the agent may use the tool,
/// and whether the arguments the model wrote are a JSON object. A tool the
/// registry does not have is the gate's to refuse
/// ([`Decision::NotFound`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LoopDecision {
    /// A call the model wrote as text could not be read
    /// (`malformed_tool_call`).
    UnreadableCall,
    /// The agent may not use the tool (`not_allowed`).
    NotAllowed,
    /// The arguments are not a JSON object (`malformed_arguments`).
    MalformedArguments,
    /// Not run: an earlier call of the same step aborted the run
    /// (`aborted`, as sessions have always spelled it).
    NotRun,
    /// Not run: the same call (tool and arguments) came earlier in the
    /// same reply, and runs once (`duplicate_call`).
    Duplicate,
    /// Not run: the reply made more calls than `max_calls_per_step`
    /// (`over_call_limit`).
    OverCallLimit,
    /// Not run again: a call that changes something (a tool that is not
    /// read-only) repeated with nothing changed in between; the earlier
    /// result is returned (`repeated_change`).
    RepeatedChange,
    /// Not run: in the small profile, a call that would replace the whole
    /// of an existing file the run has not read (`unread_overwrite`).
    UnreadOverwrite,
    /// Not run: a call that would change a file the task says not to
    /// change (`kept_file`, rule 7 of `checks`).
    KeptFile,
    /// Not run: in the small profile, a whole-file write that drops lines
    /// of the file for a task that only adds (`dropped_lines`, rule 8 of
    /// `checks`).
    DroppedLines,
    /// Not run: in the small profile, for a task that asks for a change, a
    /// whole-file write of what the file holds but for white space and
    /// quotes (`no_change`).
    NoChange,
}

impl LoopDecision {
    /// The name sessions, reports and `--json` use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UnreadableCall => "malformed_tool_call",
            Self::NotAllowed => "not_allowed",
            Self::MalformedArguments => "malformed_arguments",
            Self::NotRun => "aborted",
            Self::Duplicate => "duplicate_call",
            Self::OverCallLimit => "over_call_limit",
            Self::RepeatedChange => "repeated_change",
            Self::UnreadOverwrite => "unread_overwrite",
            Self::KeptFile => "kept_file",
            Self::DroppedLines => "dropped_lines",
            Self::NoChange => "no_change",
        }
    }
}

/// What became of one tool call ([`ToolCallRecord::decision`](super::ToolCallRecord::decision)).
///
/// # Rules
///
/// 1. Serialised as one `snake_case` string: the gate's
///    [`Decision::as_str`], or the loop's [`LoopDecision::as_str`] — the
///    strings stored sessions and `--json` output have always carried.
/// 2. Read back, a string the gate uses is the gate's decision, so the
///    loop's `aborted` ([`LoopDecision::NotRun`]) reads back as
///    [`Decision::Aborted`]: both mean the call did not run because the
///    run was aborted. Any other string is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CallDecision {
    /// The call went through the gate, which ended it at this step.
    Gate(Decision),
    /// The loop refused the call before the gate.
    Loop(LoopDecision),
}

impl CallDecision {
    /// The name sessions, reports and `--json` use (rule 1).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Gate(d) => d.as_str(),
            Self::Loop(d) => d.as_str(),
        }
    }

    /// Whether the tool ran ([`Decision::Executed`]; it may still have
    /// failed).
    pub fn executed(self) -> bool {
        self == Self::Gate(Decision::Executed)
    }
}

impl From<Decision> for CallDecision {
    fn from(d: Decision) -> Self {
        Self::Gate(d)
    }
}

impl From<LoopDecision> for CallDecision {
    fn from(d: LoopDecision) -> Self {
        Self::Loop(d)
    }
}

impl fmt::Display for CallDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for CallDecision {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for CallDecision {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        let gate = serde::de::value::StrDeserializer::<serde::de::value::Error>::new(&name);
        if let Ok(d) = Decision::deserialize(gate) {
            return Ok(Self::Gate(d));
        }
        [
            LoopDecision::UnreadableCall,
            LoopDecision::NotAllowed,
            LoopDecision::MalformedArguments,
            LoopDecision::Duplicate,
            LoopDecision::OverCallLimit,
            LoopDecision::RepeatedChange,
            LoopDecision::UnreadOverwrite,
            LoopDecision::KeptFile,
            LoopDecision::DroppedLines,
            LoopDecision::NoChange,
        ]
        .into_iter()
        .find(|d| d.as_str() == name)
        .map(Self::Loop)
        .ok_or_else(|| {
            serde::de::Error::custom(format!("`{name}` is not a decision of a tool call"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_serialise_as_sessions_spell_them_and_read_back() {
        let cases: &[(CallDecision, &str, CallDecision)] = &[
            (
                Decision::Executed.into(),
                "executed",
                Decision::Executed.into(),
            ),
            (
                Decision::NotFound.into(),
                "not_found",
                Decision::NotFound.into(),
            ),
            (
                Decision::NoApprover.into(),
                "no_approver",
                Decision::NoApprover.into(),
            ),
            (
                LoopDecision::UnreadableCall.into(),
                "malformed_tool_call",
                LoopDecision::UnreadableCall.into(),
            ),
            (
                LoopDecision::NotAllowed.into(),
                "not_allowed",
                LoopDecision::NotAllowed.into(),
            ),
            (
                LoopDecision::MalformedArguments.into(),
                "malformed_arguments",
                LoopDecision::MalformedArguments.into(),
            ),
            (
                LoopDecision::Duplicate.into(),
                "duplicate_call",
                LoopDecision::Duplicate.into(),
            ),
            (
                LoopDecision::OverCallLimit.into(),
                "over_call_limit",
                LoopDecision::OverCallLimit.into(),
            ),
            (
                LoopDecision::RepeatedChange.into(),
                "repeated_change",
                LoopDecision::RepeatedChange.into(),
            ),
            (
                LoopDecision::UnreadOverwrite.into(),
                "unread_overwrite",
                LoopDecision::UnreadOverwrite.into(),
            ),
            (
                LoopDecision::KeptFile.into(),
                "kept_file",
                LoopDecision::KeptFile.into(),
            ),
            (
                LoopDecision::DroppedLines.into(),
                "dropped_lines",
                LoopDecision::DroppedLines.into(),
            ),
            (
                LoopDecision::NoChange.into(),
                "no_change",
                LoopDecision::NoChange.into(),
            ),
            (
                LoopDecision::NotRun.into(),
                "aborted",
                Decision::Aborted.into(),
            ),
        ];
        for &(decision, name, back) in cases {
            let json = serde_json::to_value(decision).unwrap();
            assert_eq!(json, serde_json::json!(name));
            assert_eq!(decision.to_string(), name);
            let read: CallDecision = serde_json::from_value(json).unwrap();
            assert_eq!(read, back, "{name}");
        }
        assert!(serde_json::from_str::<CallDecision>("\"maybe\"").is_err());
    }
}
