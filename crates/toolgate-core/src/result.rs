//! The result of a tool call, as the model and the UIs see it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What a tool call produced.
///
/// A tool never fails by returning `Err` or panicking: every failure is a
/// `ToolResult` with `success: false`, so the model can read what went wrong
/// and try something else.
///
/// # Wire format
///
/// Serialized as `{"success": bool, "output": str, "error": str|null,
/// "metadata": {…}}`. This is what `toolgate call --json` prints, so scripts
/// rely on these four field names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// Whether the call did what was asked.
    pub success: bool,
    /// Text for the model: the tool's output, or on failure any partial
    /// output worth showing next to the error.
    pub output: String,
    /// On failure, a message the model can act on.
    pub error: Option<String>,
    /// Structured facts for UIs and reports (diff, exit code, truncation, …).
    /// Never sent to the model.
    pub metadata: Map<String, Value>,
}

impl ToolResult {
    /// A successful result with `output` as its text.
    pub fn success(output: impl Into<String>) -> Self {
        Self {
            success: true,
            output: output.into(),
            error: None,
            metadata: Map::new(),
        }
    }

    /// A failed result whose error message is `error`.
    pub fn failure(error: impl Into<String>) -> Self {
        Self {
            success: false,
            output: String::new(),
            error: Some(error.into()),
            metadata: Map::new(),
        }
    }

    /// Adds one metadata entry, replacing any entry with the same key.
    #[must_use]
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// Sets the output text, keeping everything else.
    #[must_use]
    pub fn with_output(mut self, output: impl Into<String>) -> Self {
        self.output = output.into();
        self
    }

    /// The text the model sees for this result.
    ///
    /// A success is its output. A failure is `Error: <error>`, followed by the
    /// output on the next lines when there is any (a failing command's stderr,
    /// say), so the model always gets both the reason and the evidence.
    pub fn to_model_text(&self) -> String {
        if self.success {
            return self.output.clone();
        }
        let error = self
            .error
            .as_deref()
            .unwrap_or("the tool failed without a message");
        if self.output.is_empty() {
            format!("Error: {error}")
        } else {
            format!("Error: {error}\n{}", self.output)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_the_four_documented_fields() {
        let result = ToolResult::failure("nope").with_metadata("exit_code", 3);
        let json = serde_json::to_value(&result).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"success": false, "output": "", "error": "nope", "metadata": {"exit_code": 3}})
        );
    }

    #[test]
    fn model_text_carries_error_and_output() {
        assert_eq!(ToolResult::success("hi").to_model_text(), "hi");
        assert_eq!(ToolResult::failure("bad").to_model_text(), "Error: bad");
        assert_eq!(
            ToolResult::failure("exit 1")
                .with_output("stderr text")
                .to_model_text(),
            "Error: exit 1\nstderr text"
        );
    }
}
