//! `mcp_add_server`: connect an MCP server at run time (seed 003).

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use toolgate_core::{
    Effect, Effects, EffectsError, Sensitivity, ToolContext, ToolResult, TypedTool,
};

use crate::client::{McpManager, ServerState};
use crate::config::McpServerConfig;

/// The arguments of `mcp_add_server`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddServerArgs {
    /// The server's name: letters, digits, `_` and `-`. Its tools are named
    /// `mcp_{name}_{tool}`.
    pub name: String,
    /// The program to run (stdio). Give this or `url`.
    pub command: Option<String>,
    /// The program's arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// An `http://` streamable HTTP endpoint. Give this or `command`.
    pub url: Option<String>,
    /// The environment variable holding a bearer token for `url`.
    pub token_env: Option<String>,
}

/// Where `mcp_add_server` records a server it connected, so that it is
/// there next time too (the host writes `mcp.servers.NAME` into the
/// workspace configuration file).
pub trait ServerRecorder: Send + Sync + std::fmt::Debug {
    /// Where servers are recorded, for the tool's answer.
    fn location(&self) -> String;

    /// Records `server` under `name`; the error is shown to the model.
    fn record(&self, name: &str, server: &McpServerConfig) -> Result<(), String>;
}

/// Connects an MCP server without a restart and records it (see
/// [`ServerRecorder`]).
///
/// Sensitive: it runs a program of the model's choosing. Registered only
/// when `mcp.add_server_tool: true`. Its effects are the command it starts
/// (or the URL it connects to). The record is written by toolgate, not by
/// the model: an `mcp.servers.NAME` entry built from the checked arguments.
/// It changes the workspace configuration file, which is therefore no
/// longer trusted: the server starts again in a later run only after the
/// user trusts the file again.
pub struct AddServerTool {
    manager: Arc<McpManager>,
    recorder: Arc<dyn ServerRecorder>,
}

impl std::fmt::Debug for AddServerTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddServerTool")
            .field("recorder", &self.recorder)
            .finish_non_exhaustive()
    }
}

impl AddServerTool {
    /// A tool that connects through `manager` and records with `recorder`.
    pub fn new(manager: Arc<McpManager>, recorder: Arc<dyn ServerRecorder>) -> Self {
        Self { manager, recorder }
    }
}

#[async_trait]
impl TypedTool for AddServerTool {
    type Args = AddServerArgs;
    const NAME: &'static str = "mcp_add_server";
    const DESCRIPTION: &'static str = "Connects an MCP server now (a stdio `command` or an \
        `http://` `url`), registers its tools as `mcp_{name}_{tool}` and saves it in the \
        configuration file.";
    const SENSITIVITY: Sensitivity = Sensitivity::Sensitive;

    fn effects(&self, args: &AddServerArgs) -> Result<Effects, EffectsError> {
        match (&args.command, &args.url) {
            (Some(command), None) => {
                let mut line = vec![command.clone()];
                line.extend(args.args.iter().cloned());
                Ok(Effects::known([Effect::command(line.join(" "), None)]))
            }
            (None, Some(url)) => Ok(Effects::known([Effect::Network { url: url.clone() }])),
            _ => Err(EffectsError::new(
                "give exactly one of `command` (stdio) or `url` (http)",
            )),
        }
    }

    async fn run(&self, args: AddServerArgs, _ctx: &ToolContext) -> ToolResult {
        if args.name.is_empty()
            || !args
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return ToolResult::failure(
                "the server name must be letters, digits, `_` or `-`, such as `time`",
            );
        }
        if self.manager.has_server(&args.name) {
            return ToolResult::failure(format!(
                "an MCP server called `{}` is already connected; pick another name",
                args.name
            ));
        }
        let mut server = match (args.command, args.url) {
            (Some(command), None) => McpServerConfig::stdio(command, args.args),
            (None, Some(url)) => McpServerConfig::http(url),
            _ => {
                return ToolResult::failure(
                    "give exactly one of `command` (stdio) or `url` (http)",
                );
            }
        };
        server.token_env = args.token_env;
        let status = self.manager.add(&args.name, server.clone()).await;
        if let ServerState::Failed(reason) = &status.state {
            return ToolResult::failure(format!("could not connect: {reason}"));
        }
        if let Err(reason) = self.recorder.record(&args.name, &server) {
            return ToolResult::failure(format!(
                "connected, but the configuration was not saved: {reason}"
            ));
        }
        let names: Vec<&str> = status.tools.iter().map(|(l, _)| l.as_str()).collect();
        ToolResult::success(format!(
            "connected `{}` with {} tools: {}; saved in {}",
            args.name,
            names.len(),
            names.join(", "),
            self.recorder.location()
        ))
    }
}
