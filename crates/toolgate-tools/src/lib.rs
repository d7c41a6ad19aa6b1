//! The built-in tools of toolgate, grouped by area.
//!
//! Each tool is a [`TypedTool`](toolgate_core::TypedTool): a `serde` +
//! `schemars` argument struct that refuses unknown fields, a static or
//! per-call sensitivity, and a `run` that turns every failure into a
//! [`ToolResult`](toolgate_core::ToolResult) the model can read.
//!
//! | module | tools |
//! |---|---|
//! | [`time`] | `get_datetime` |
//! | [`diag`] | `echo` |
//!
//! [`builtin_tools`] lists them, configured, for a registry.
//!
//! # Example
//!
//! ```
//! use toolgate_core::Registry;
//! use toolgate_tools::{BuiltinOptions, builtin_tools};
//!
//! # fn main() -> Result<(), toolgate_core::Error> {
//! let registry = Registry::new();
//! for tool in builtin_tools(&BuiltinOptions::default()) {
//!     registry.register_arc(tool)?;
//! }
//! assert!(registry.has("get_datetime"));
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use toolgate_core::Tool;

pub mod diag;
pub mod time;

/// Options for the built-in tools.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct BuiltinOptions {
    /// The IANA time zone `get_datetime` uses when the call names none.
    /// By default, the system's zone.
    pub default_timezone: Option<String>,
}

impl BuiltinOptions {
    /// Sets the default time zone of `get_datetime`.
    #[must_use]
    pub fn default_timezone(mut self, zone: Option<String>) -> Self {
        self.default_timezone = zone;
        self
    }
}

/// Every built-in tool, configured by `options`.
pub fn builtin_tools(options: &BuiltinOptions) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(time::GetDateTime::new(options.default_timezone.clone())),
        Arc::new(diag::Echo),
    ]
}
