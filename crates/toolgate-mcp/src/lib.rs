//! MCP for toolgate, both ways, over the official [`rmcp`] crate.
//!
//! - **Client**: [`McpManager`] connects to the servers of an [`McpConfig`]
//!   (stdio or streamable HTTP) and registers each remote tool as a local
//!   tool named `mcp_{server}_{tool}`. Those tools go through the gate like
//!   any other: sensitive by default, arguments validated against the remote
//!   `inputSchema`; [`McpManager::tool_names`] lists them for an agent's
//!   tool list. [`AddServerTool`] connects a server at run time.
//! - **Server**: [`McpServer`] serves a registry to MCP clients, over stdio or
//!   streamable HTTP; every call goes through the
//!   [`ExecutionEngine`](toolgate_engine::ExecutionEngine), and a call that
//!   needs confirmation is put to the client by elicitation.
//!
//! `rmcp` types stay inside this crate, so its churn stays local.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use toolgate_core::Registry;
//! use toolgate_mcp::{McpConfig, McpManager, McpServerConfig};
//! use toolgate_sandbox::Sandbox;
//!
//! let registry = Arc::new(Registry::new());
//! // Servers run like every process toolgate starts: sandboxed.
//! let sandbox = Sandbox::builder(".").build()?;
//! let mut config = McpConfig::default();
//! config.servers.insert(
//!     "time".into(),
//!     McpServerConfig::stdio("mcp-server-time", []),
//! );
//! let manager = McpManager::new(Arc::clone(&registry), sandbox);
//! for status in manager.start(&config).await {
//!     println!("{}: {:?}", status.name, status.state);
//! }
//! manager.shutdown().await;
//! # Ok(())
//! # }
//! ```

pub use add_server::{AddServerTool, ServerRecorder};
pub use client::{McpManager, ServerState, ServerStatus};
pub use config::{McpConfig, McpHttpClientConfig, McpHttpConfig, McpServerConfig};
pub use error::Error;
pub use gateway::{HttpClient, HttpOptions, Readiness, SharedRate};
pub use once::retryable;
pub use server::{ElicitationApprover, McpServer};

mod add_server;
mod client;
mod config;
mod error;
mod gateway;
mod http_guard;
mod names;
mod once;
mod server;
mod stdio;

#[doc(hidden)]
pub use stdio::check_line as fuzz_stdio_line;
