//! A request to run a tool.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One tool call: which tool, with which arguments, under which id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The id that ties the result back to the request (a model's tool-call
    /// id, or one made up by the caller).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, normally a JSON object. `null` is read as `{}`.
    pub arguments: Value,
}

impl ToolCall {
    /// A call of `name` with `arguments`.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
        }
    }
}
